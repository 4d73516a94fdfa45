"""The efficiency the planner applies to each roof: per op class (matrix, attention, elementwise/normalisation,
communication) the fraction of the roof a kernel reaches and a per-launch overhead, ``t = t_roof / e + n·o``.

:data:`DEFAULTS` are documented figures, each with its source (none is taken from the validation rows of
``benchmarks/data/llm_published.yaml``, which only judge the planner). :func:`fit` replaces them with what a
profile shows: for each class with timed kernels whose roofline time is known, the least-squares line
``time = t_roof / e + o`` over its launches (``e`` in (0, 1], ``o ≥ 0``; with too few distinct kernels, or a line
outside those bounds, ``o = 0`` and ``e = Σ t_roof / Σ time``; ``t_roof`` against compute and off-chip memory only,
the planner's own roofs, and the link for collectives), reported with the kernels it came from and the
spread (10th–90th percentile) of their own ``t_roof / time``. Fractions of the roof carry over to another device,
as :func:`roofcore.plan.project` keeps a kernel's efficiency.

Not a calibration constant: how the engine's attention reads a grouped-query cache (``costing.KV_READS``; default
``grouped``, once per KV head; ``per_query_head`` for decode kernels without GQA sharing, with its sources there) is an
option the user states for the engine, never fitted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .costing import CLASSES

if TYPE_CHECKING:
    from ..analyze import Analysis
    from ..catalog import Catalog


@dataclass(frozen=True)
class ClassFit:
    """One op class's efficiency and per-launch overhead, where they came from, and the spread behind them."""

    efficiency: float
    overhead_s: float
    source: str
    kernels: tuple[str, ...] = ()  #: the profiled kernels (most time first) the fit used
    launches: int = 0
    spread: tuple[float, float] | None = None  #: p10, p90 of the kernels' own t_roof / time

    def to_json(self) -> dict[str, Any]:
        return {"efficiency": self.efficiency, "overhead_s": self.overhead_s, "source": self.source,
                "kernels": list(self.kernels), "launches": self.launches,
                "spread": list(self.spread) if self.spread else None}


_ESTIMATE = ("estimate, no published source: a launch in a captured graph or engine costs a microsecond or two of "
             "gaps and tails")

#: documented defaults: efficiency and per-launch overhead of each class, each with its source
DEFAULTS: dict[str, ClassFit] = {
    "matrix": ClassFit(0.80, 2e-6, "0.80 = H100 BF16 maximum achievable matmul FLOPS 794.5 / 989 TFLOP/s (stas00/"
                       "ml-engineering, compute/accelerator/README.md, the catalog's source S1); a device whose catalog "
                       "entry has an achievable figure for the ceiling uses its own ratio. Overhead: " + _ESTIMATE),
    "attention": ClassFit(0.60, 2e-6, "0.60, inside FlashAttention-2's forward pass at 50–73% of A100 peak (Dao, "
                          "'FlashAttention-2', arXiv:2307.08691, abstract). Overhead: " + _ESTIMATE),
    "elementwise": ClassFit(0.92, 2e-6, "0.92 of the memory roof: 7.35 TB/s of HBM measured on GB200, '92% efficiency' "
                            "(Microsoft Azure HPC blog, ND GB200 v6 inference record, 2025). Overhead: " + _ESTIMATE),
    "communication": ClassFit(0.80, 8e-6, "0.80 of the link: nccl-tests all_reduce bus bandwidth 230–250 GB/s on 8×A100 "
                              "NVLink (300 GB/s) (Alaya New tech blog 'NCCL-tests in practice', reference table). "
                              "Overhead 8 µs per collective: estimate, no published source (small all-reduces are "
                              "latency-bound)"),
}


@dataclass(frozen=True)
class Calibration:
    """Per class :class:`ClassFit`; ``origin`` says whether it is the defaults or a profile (and which)."""

    fits: Mapping[str, ClassFit] = field(default_factory=lambda: dict(DEFAULTS))
    origin: str = "defaults"
    device: str | None = None  #: the device the profile ran on

    def efficiency(self) -> np.ndarray:
        return np.array([self.fits[c].efficiency for c in CLASSES])

    def overhead(self) -> np.ndarray:
        return np.array([self.fits[c].overhead_s for c in CLASSES])

    @property
    def calibrated(self) -> bool:
        return self.origin != "defaults"

    def to_json(self) -> dict[str, Any]:
        return {"origin": self.origin, "device": self.device, "classes": {c: self.fits[c].to_json() for c in CLASSES}}


# ----------------------------------------------------------------------------------------- kernel classes
_COMM = re.compile(r"(?i)nccl|rccl|all_?reduce|allgather|all_?gather|reduce_?scatter|all_?to_?all|alltoall|sendrecv|"
                   r"custom_ar|cross_device|c10d")
_ATTN = re.compile(r"(?i)flash|fmha|attention|attn|sdpa|paged|mha_|mla_|decode_kernel|xqa|softmax_?gemm")
_MATRIX = re.compile(r"(?i)gemm|gemv|matmul|cublas|cutlass|xmma|hgemm|sgemm|wgmma|mma_|nvjet|ampere_.*_tn|sm\d+_xmma|"
                     r"_linear|\bmm\b|addmm|bmm|marlin|gptq|awq|fp8_gemm|scaled_mm|triton_.*mm|ck_.*gemm|"
                     r"Cijk_|tensorop|hipblaslt")


#: elementwise work whose names carry an attention or matmul word (a cache write named after flash attention, a
#: quantisation kernel templated on a flash-attention type): checked before attention and matrix
_ELEMENTWISE = re.compile(r"(?i)reshape_and_cache|cache_kernel|quantize|rotary|\brope|rms_?norm|layer_?norm|"
                          r"act_and_mul|memcpy|memset")


def op_class(name: str, unit: str | None = None) -> str:
    """The class of a profiled kernel, by its name (communication, attention, matrix), else by its unit, else
    elementwise/normalisation."""
    if _COMM.search(name):
        return "communication"
    if _ELEMENTWISE.search(name):
        return "elementwise"
    if _ATTN.search(name):
        return "attention"
    if _MATRIX.search(name) or unit == "matrix":
        return "matrix"
    return "elementwise"


def _fit_class(t_roof: np.ndarray, time: np.ndarray, launches: np.ndarray) -> tuple[float, float]:
    """``(e, o)`` of ``time/launch = t_roof/launch / e + o`` (least squares), else ``(Σt_roof/Σtime, 0)``."""
    x, y = t_roof / launches, time / launches
    ratio = float(min(1.0, t_roof.sum() / time.sum()))
    if len(x) >= 3 and np.ptp(x) > 0:
        slope, icpt = np.polyfit(x, y, 1, w=np.sqrt(launches))
        if slope >= 1.0 and icpt >= 0 and np.isfinite(slope):
            return float(1.0 / slope), float(icpt)
    return ratio, 0.0


def fit(analysis: Analysis, hw_id: str | None = None, *, label: str = "profile") -> Calibration:
    """A :class:`Calibration` from an :class:`~roofcore.analyze.Analysis` of a measured workload on the device it ran
    on (``hw_id``; default the analysis's first device). Classes without usable kernels keep their default, and
    the source says so."""
    hw = hw_id or analysis.hardware[0].id
    tab = analysis.table(hw, messages=False)
    t = tab["time_s"].to_numpy(dtype=float)
    names = tab["name"].astype(str).to_numpy()
    units = tab["unit"].to_numpy()
    cls = np.array([op_class(nm, u if isinstance(u, str) else None) for nm, u in zip(names, units, strict=True)])
    # the planner's roofs are compute and off-chip memory (and the link for collectives): measure against the same
    flops = tab["flops"].to_numpy(dtype=float)
    off = tab["bytes_hbm"].to_numpy(dtype=float) if "bytes_hbm" in tab.columns else np.full(len(tab), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        offchip = np.fmax(flops / tab["peak_flops_per_s"].to_numpy(dtype=float),
                          off / analysis.result(hw).hardware.offchip.bandwidth)
    offchip[np.isnan(flops) | np.isnan(off)] = np.nan
    roof = np.where(cls == "communication", tab["t_roof_s"].to_numpy(dtype=float), offchip)
    n = np.maximum(tab["count"].to_numpy(dtype=float), 1.0)
    ok = np.isfinite(t) & (t > 0) & np.isfinite(roof) & (roof > 0)
    fits = dict(DEFAULTS)
    timed_total = float(t[np.isfinite(t) & (t > 0)].sum())
    for c in CLASSES:
        sel = ok & (cls == c)
        if not sel.any():
            fits[c] = replace(DEFAULTS[c], source=f"default (the {label} has no timed {c} kernels with a known "
                                                  f"roofline): {DEFAULTS[c].source}")
            continue
        e, o = _fit_class(roof[sel], t[sel], n[sel])
        own = np.clip(roof[sel] / t[sel], 0, None)
        order = np.argsort(-t[sel])
        share = f" ({float(t[sel].sum()) / timed_total:.1%} of its measured time)" if timed_total > 0 else ""
        fits[c] = ClassFit(efficiency=max(e, 1e-3), overhead_s=o,
                           source=f"fitted on {int(sel.sum())} kernels of the {label} on {hw}{share}",
                           kernels=tuple(dict.fromkeys(names[sel][order]))[:8], launches=int(n[sel].sum()),
                           spread=(float(np.percentile(own, 10)), float(np.percentile(own, 90))))
    return Calibration(fits=fits, origin=label, device=hw)


def calibrate_file(paths: Iterable[str], catalog: Catalog, hw_ids: Iterable[str] = (), *, fmt: str | None = None) -> Calibration:
    """Read a profile (any supported export), analyse it on the device it ran on (else the first of ``hw_ids``), fit."""
    from ..analyze import analyze
    from ..errors import InputError
    from ..ingest import read_many

    paths = list(paths)
    w = read_many(paths, fmt=fmt)
    match = catalog.resolve(w.device, w.meta) if w.device else None
    hw_id = match.ids[0] if match and match.ids else next(iter(hw_ids), None)
    if hw_id is None:
        raise InputError(where="--calibrate", expected="a profile that names its device, or --hardware",
                         found=f"no device for {', '.join(paths)}")
    return fit(analyze(w, catalog.get(hw_id)), hw_id, label=f"profile {', '.join(p.rsplit('/', 1)[-1] for p in paths)}")
