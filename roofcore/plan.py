"""Planning (PRODUCT.md "Planning (what-if)"): projection to other devices, transformations, solvers,
scenarios and the comparison of two runs.

Every transformation returns a **new** :class:`~roofcore.models.Workload` (a copied frame, through
``dataclasses.replace``); nothing here mutates its input (ARCHITECTURE.md principle 9). Results are
frozen dataclasses with ``to_json()``.

Choices and formulas (the tests in ``tests/test_plan.py`` pin each one):

**Read/written split of the off-chip bytes.** A kernel's ``bytes_hbm`` is split into bytes read and
bytes written from the frame columns ``read_bytes`` / ``written_bytes`` (inventory ``bytes_read`` /
``bytes_written``; YAML ops derive them) where known, scaled so the two add up to ``bytes_hbm``; with
one of them known the other is the rest; with neither, the weights are reads and the rest is split
**half and half** (activation inputs : outputs = 1 : 1, right for a kernel that reads one tensor and
writes one of the same size): ``read = weight + (hbm − weight)/2``. ``weight_bytes`` is the part of
the reads that is weights (unknown: 0).

**fuse** (a chain, in the order given): FLOPs add up. Off-chip bytes = the chain's external reads +
its final writes: ``read₁ + Σᵢ₌₂ max(readᵢ − writtenᵢ₋₁, 0) + written_last`` — each kernel is
assumed to read its predecessor's whole output from on-chip memory, and whatever it reads beyond
that (a residual, weights) still comes from off-chip; intermediate outputs are assumed not to be
needed outside the chain. Bytes at on-chip levels and on links are kept (summed): fusion removes the
off-chip round trip, not the on-chip traffic (conservative). Precision and unit are the
largest-FLOPs kernel's, ``count`` the largest count, the group the common one (else the first's).

**change_precision** to ``dtype`` (``what`` = ``both`` | ``weights`` | ``activations``): with
``r = |new| / |old|`` per part, weights ``weight_bytes·r_w``; activations (reads other than weights,
all writes, on-chip levels and links) ``·r_a``. The compute ceiling follows the activations: the
``precision`` column changes for ``both`` and ``activations``, not for ``weights`` (int8 weights
with bf16 math run on the bf16 ceiling, seed §6.2); a ``weight_dtype`` column records the weights'
format. A kernel whose precision is unknown is left unchanged (and a note says so) unless
``from_dtype`` is given. Reducing precision never increases bytes.

**scale_batch** by ``factor``: FLOPs ``× factor``; off-chip ``(read − weight)·factor + weight +
written·factor``; on-chip levels and links ``× factor`` (activation traffic). ``weight_bytes`` fixed.

**shard** over ``N`` chips, per chip (the workload becomes one chip's view): FLOPs ``÷ N``; on-chip
levels ``÷ N``; off-chip by ``dim``: ``k`` (the contraction dimension, row-parallel; seed §4.3):
reads ``÷ N``, the output is a full-size partial sum (written bytes unchanged) and is all-reduced
over ``link``; ``m`` (rows / batch, data-parallel): activation reads and writes ``÷ N``, weights
read whole, no collective; ``n`` (output columns, column-parallel): weights and writes ``÷ N``,
activation reads whole, no collective. All-reduce bytes per chip for a buffer of ``S`` bytes (the
kernel's written bytes), on its busiest link direction: ring ``2·(N−1)/N·S``; tree
``2·⌈log₂N⌉·S`` (unpipelined binary tree: reduce, then broadcast). They are added to the kernel's
``bytes_<link>`` column, so compute and communication overlap in one kernel (the roofline's max),
as in §4.3: for 2 chips and bf16 the kernel flips from link- to compute-bound at ``D = 2·π/β``.

**comm_fraction** ``f``: a fraction of every kernel's time is communication that does not overlap,
so ``t_roof' = t_roof / (1 − f)``: equivalently every roof (ceilings, levels, links) is lowered to
``(1 − f)`` of its value — :func:`effective_hardware` — which is how :func:`evaluate` (and so
projections, scenarios and comparisons) applies it; the workload carries the fraction in
``meta["comm_fraction"]`` (two fractions combine as ``1 − (1 − f₁)(1 − f₂)``).

Transformed kernels have no measured time (``time_s`` NaN): a measurement does not survive a change
of the work; the workload's ``warnings`` say so.

**Projection**: per kernel ``t_roof`` on each device; a measured kernel keeps its efficiency from
the device it ran on (``e = t_roof_source / time``; projected ``= t_roof_target / e``, never below
``t_roof_target``). The estimate of a run is the projected time where measured, else ``t_roof``.
Speedups are against the source device (else the first device); cost per run
``= price_per_hour × estimate_s / 3600``. To another vendor only FLOPs, off-chip and link bytes
are used (on-chip levels are dropped: cache sizes and names do not carry over), and a note says so.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .analyze import Analysis, analyze
from .errors import InputError, RoofcoreError
from .limits import load_yaml, yaml_input_error
from .models import DTYPE_SIZE, KNOWN_LINKS, OFFCHIP, Hardware, Workload, canonical_dtype

SPLIT = ("read_bytes", "written_bytes", "weight_bytes")
HBM = f"bytes_{OFFCHIP}"
ALGORITHMS = ("ring", "tree")
WHAT = ("both", "weights", "activations")
DIMS = {"k": "k", "contraction": "k", "reduction": "k", "d": "k", "m": "m", "batch": "m", "rows": "m",
        "data": "m", "n": "n", "columns": "n", "cols": "n", "f": "n"}
#: the note every transformation adds: measured times do not survive a change of the work
TIME_NOTE = "times of transformed kernels are unknown (a measurement does not survive a change of the work)"


# =============================================================================================== helpers


def _frame(w: Workload) -> pd.DataFrame:
    """A deep copy of the frame with object (not categorical) text columns, ready to edit."""
    f = w.frame.copy(deep=True)
    for col in ("precision", "unit"):
        if col in f and isinstance(f[col].dtype, pd.CategoricalDtype):
            f[col] = pd.Series(f[col].astype(object).where(f[col].notna(), None), dtype=object, index=f.index)
    return f


def _new(w: Workload, frame: pd.DataFrame, note: str | None = None, *, meta: Mapping[str, str] | None = None,
         name: str | None = None) -> Workload:
    notes = tuple(w.warnings)
    if note and note not in notes:
        notes += (note,)
    return replace(w, frame=frame.reset_index(drop=True), warnings=notes, meta={**w.meta, **(meta or {})},
                   name=name or w.name)


def _col(f: pd.DataFrame, name: str) -> np.ndarray:
    return f[name].to_numpy(dtype=np.float64) if name in f else np.full(len(f), np.nan)


def split_bytes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Off-chip ``(read, written, weight)`` bytes per kernel, by the documented split (module docstring)."""
    hbm = _col(frame, HBM)
    r, w = _col(frame, "read_bytes"), _col(frame, "written_bytes")
    with np.errstate(divide="ignore", invalid="ignore"):
        tot = r + w
        both = ~np.isnan(r) & ~np.isnan(w) & (tot > 0)
        read = np.where(both, hbm * r / tot, np.nan)
        only_r = np.isnan(read) & ~np.isnan(r)
        read = np.where(only_r, np.minimum(r, hbm), read)
        only_w = np.isnan(read) & ~np.isnan(w)
        read = np.where(only_w, hbm - np.minimum(w, hbm), read)
        weight = np.clip(np.nan_to_num(_col(frame, "weight_bytes")), 0.0, np.where(np.isnan(hbm), np.inf, hbm))
        read = np.where(np.isnan(read), weight + (hbm - weight) / 2.0, read)
    written = hbm - read
    weight = np.minimum(weight, np.where(np.isnan(read), np.inf, read))
    return read, written, weight


def _set_split(f: pd.DataFrame, read: np.ndarray, written: np.ndarray, weight: np.ndarray | None = None) -> None:
    f[HBM] = read + written
    f["read_bytes"] = read
    f["written_bytes"] = written
    if weight is not None and "weight_bytes" in f:
        f["weight_bytes"] = weight


def _other_bytes(f: pd.DataFrame) -> list[str]:
    """Byte columns other than the off-chip one (on-chip levels and links)."""
    return [c for c in f.columns if c.startswith("bytes_") and c != HBM]


def _is_link(name: str, hws: Iterable[Hardware] = ()) -> bool:
    return name in KNOWN_LINKS or any(name in h.link_map for h in hws)


def _select(f: pd.DataFrame, kernels: Sequence[str | int] | str | int | None, where: str) -> np.ndarray:
    """Row positions named by kernel names or 0-based indices, in the order given (all rows for None)."""
    if kernels is None:
        return np.arange(len(f))
    if isinstance(kernels, str | int):
        kernels = [kernels]
    names = f["name"].astype(str).to_numpy()
    out: list[int] = []
    for i, k in enumerate(kernels):
        if isinstance(k, bool):
            raise InputError(where=f"{where}[{i}]", expected="a kernel name or index", found=repr(k))
        if isinstance(k, int | np.integer):
            if not 0 <= int(k) < len(f):
                raise InputError(where=f"{where}[{i}]", expected=f"a kernel index from 0 to {len(f) - 1}", found=str(k))
            hits = [int(k)]
        else:
            hits = np.flatnonzero(names == str(k)).tolist()
            if not hits:
                close = difflib.get_close_matches(str(k), list(dict.fromkeys(names)), n=1)
                raise InputError(where=f"{where}[{i}]", expected="the name of a kernel in the workload",
                                 found=repr(k), hint=f"did you mean {close[0]!r}?" if close else
                                 "kernel names are matched exactly; indices (0-based) work too.")
        out.extend(h for h in hits if h not in out)
    return np.array(out, dtype=np.int64)


def _mask(f: pd.DataFrame, kernels, where: str) -> np.ndarray:
    m = np.zeros(len(f), dtype=bool)
    m[_select(f, kernels, where)] = True
    return m


def _size(dtype: object) -> float:
    return float(DTYPE_SIZE[str(dtype)]) if dtype in DTYPE_SIZE else math.nan


def _check_workload(w: Workload, what: str) -> None:
    if not isinstance(w, Workload):
        raise RoofcoreError(f"{what} needs a Workload, got {type(w).__name__}")
    if len(w) == 0:
        raise RoofcoreError(f"{what}: the workload has no kernels")


# =============================================================================================== transformations


def fuse(workload: Workload, kernels: Sequence[str | int], *, name: str | None = None) -> Workload:
    """A new workload where the chain ``kernels`` (names or 0-based indices, in chain order) is one kernel."""
    _check_workload(workload, "fuse")
    f = _frame(workload)
    idx = _select(f, kernels, "fuse")
    if len(idx) < 2:
        raise InputError(where="fuse", expected="at least two kernels to fuse", found=f"{len(idx)}",
                         hint="name the chain's kernels in order, e.g. [gelu, residual_add_mlp].")
    read, written, weight = split_bytes(f)
    r, w = read[idx], written[idx]
    fused_read = r[0] + np.sum(np.maximum(r[1:] - w[:-1], 0.0))
    fused_written = w[-1]
    flops = f["flops"].to_numpy(dtype=np.float64)[idx]
    rows = f.iloc[idx]
    lead = int(idx[int(np.nanargmax(flops))]) if not np.isnan(flops).all() else int(idx[0])
    groups = [g for g in rows["group"].tolist() if g is not None and g == g]
    new = f.iloc[[int(idx[0])]].copy()
    label = name or "fused(" + " + ".join(map(str, rows["name"])) + ")"
    new["name"] = label
    new["flops"] = float(flops.sum())  # NaN if any part is unknown: unknown work is not zero work
    new["time_s"] = np.nan
    new["count"] = int(rows["count"].max())
    new["precision"] = f.at[f.index[lead], "precision"]
    new["unit"] = f.at[f.index[lead], "unit"]
    new["group"] = groups[0] if groups and len(set(groups)) == 1 else (groups[0] if groups else None)
    new["source"] = "plan:fuse"
    new["row"] = "fused rows " + ", ".join(str(x) for x in rows["row"])
    new[HBM] = fused_read + fused_written
    new["read_bytes"] = fused_read
    new["written_bytes"] = fused_written
    for c in _other_bytes(f):
        vals = f[c].to_numpy(dtype=np.float64)[idx]
        new[c] = np.nan if np.isnan(vals).all() else float(np.nansum(vals))
    if "weight_bytes" in f:
        new["weight_bytes"] = float(np.sum(weight[idx]))
    keep = np.ones(len(f), dtype=bool)
    keep[idx] = False
    _set_split(f, read, written)
    first = int(idx.min())
    out = pd.concat([f.iloc[:first][keep[:first]], new.astype(f.dtypes.to_dict(), errors="ignore"),
                     f.iloc[first:][keep[first:]]], ignore_index=True)
    return _new(workload, out, TIME_NOTE)


def change_precision(workload: Workload, dtype: str, *, what: str = "both",
                     kernels: Sequence[str | int] | None = None, from_dtype: str | None = None) -> Workload:
    """A new workload with ``dtype`` for the weights, the activations or both (bytes and compute ceiling)."""
    _check_workload(workload, "change_precision")
    new = canonical_dtype(dtype, where="precision.dtype")
    if what not in WHAT:
        raise InputError(where="precision.what", expected=" or ".join(WHAT), found=repr(what))
    f = _frame(workload)
    sel = _mask(f, kernels, "precision.kernels")
    prec = f["precision"].to_numpy(dtype=object)
    if from_dtype is not None:
        prec = np.array([canonical_dtype(from_dtype, where="precision.from_dtype")] * len(f), dtype=object)
    old_a = np.array([_size(p) for p in prec])
    wd = f["weight_dtype"].to_numpy(dtype=object) if "weight_dtype" in f else prec
    old_w = np.array([_size(p) if p is not None and p == p else math.nan for p in wd])
    old_w = np.where(np.isnan(old_w), old_a, old_w)
    unknown = sel & np.isnan(old_a)
    sel &= ~np.isnan(old_a)
    s = DTYPE_SIZE[new]
    ra = np.where(sel & (what != "weights"), s / old_a, 1.0)
    rw = np.where(sel & (what != "activations"), s / old_w, 1.0)
    read, written, weight = split_bytes(f)
    _set_split(f, (read - weight) * ra + weight * rw, written * ra, weight * rw)
    for c in _other_bytes(f):
        f[c] = f[c].to_numpy(dtype=np.float64) * ra
    if what != "weights":
        f.loc[sel, "precision"] = new
    if what != "activations":
        if "weight_dtype" not in f:
            f["weight_dtype"] = pd.Series([None] * len(f), dtype=object, index=f.index)
        f.loc[sel, "weight_dtype"] = new
    f.loc[sel, "time_s"] = np.nan
    out = _new(workload, f, TIME_NOTE)
    notes = []
    if unknown.any():
        notes.append(f"{int(unknown.sum())} kernel(s) without a known precision left unchanged by the precision "
                     "change (give from_dtype to convert them).")
    if what != "activations" and "weight_bytes" not in workload.frame:
        notes.append("no weight_bytes known: a weights-only change moves no bytes (give weight_bytes per kernel).")
    return replace(out, warnings=out.warnings + tuple(n for n in notes if n not in out.warnings))


def scale_batch(workload: Workload, factor: float, *, kernels: Sequence[str | int] | None = None) -> Workload:
    """A new workload with the batch × ``factor``: FLOPs and activation bytes scale, weight bytes do not."""
    _check_workload(workload, "scale_batch")
    factor = float(factor)
    if not (factor > 0 and math.isfinite(factor)):
        raise InputError(where="batch", expected="a positive factor", found=repr(factor))
    f = _frame(workload)
    sel = _mask(f, kernels, "batch.kernels")
    k = np.where(sel, factor, 1.0)
    read, written, weight = split_bytes(f)
    _set_split(f, (read - weight) * k + weight, written * k, weight)
    f["flops"] = f["flops"].to_numpy(dtype=np.float64) * k
    for c in _other_bytes(f):
        f[c] = f[c].to_numpy(dtype=np.float64) * k
    f.loc[sel, "time_s"] = np.nan
    return _new(workload, f, TIME_NOTE)


def collective_bytes(kind: str, message_bytes: float, chips: int, algorithm: str = "ring") -> float:
    """Bytes one chip moves over its busiest link direction (same formulas as the ops' collectives).

    all_reduce ring ``2·(N−1)/N·S``, tree ``2·⌈log₂N⌉·S``; all_gather, reduce_scatter, all_to_all ``(N−1)/N·S``.
    """
    n = int(chips)
    if n <= 1:
        return 0.0
    if kind == "all_reduce":
        return 2.0 * (n - 1) / n * message_bytes if algorithm == "ring" else 2.0 * math.ceil(math.log2(n)) * message_bytes
    return (n - 1) / n * message_bytes


def shard(workload: Workload, chips: int, *, dim: str = "k", link: str = "ici", algorithm: str = "ring",
          kernels: Sequence[str | int] | None = None) -> Workload:
    """One chip's view of the workload sharded over ``chips`` along ``dim`` (module docstring)."""
    _check_workload(workload, "shard")
    if isinstance(chips, bool) or not isinstance(chips, int | float) or chips < 1 or int(chips) != chips:
        raise InputError(where="shard.chips", expected="a whole number of chips ≥ 1", found=repr(chips))
    n = int(chips)
    d = DIMS.get(str(dim).strip().lower())
    if d is None:
        raise InputError(where="shard.dim", expected="k (contraction), m (rows/batch) or n (output columns)",
                         found=repr(dim))
    if algorithm not in ALGORITHMS:
        raise InputError(where="shard.algorithm", expected=" or ".join(ALGORITHMS), found=repr(algorithm))
    link = str(link).strip().lower()
    if not link or link in ("hbm", "dram") or not link.replace("_", "").isalnum():
        raise InputError(where="shard.link", expected="an interconnect name such as ici, nvlink or xgmi",
                         found=repr(link))
    f = _frame(workload)
    sel = _mask(f, kernels, "shard.kernels")
    k = np.where(sel, 1.0 / n, 1.0)
    read, written, weight = split_bytes(f)
    act = read - weight
    if d == "k":
        new_r, new_w, new_wt = read * k, written, weight * k
    elif d == "m":
        new_r, new_w, new_wt = act * k + weight, written * k, weight
    else:
        new_r, new_w, new_wt = act + weight * k, written * k, weight * k
    f["flops"] = f["flops"].to_numpy(dtype=np.float64) * k
    for c in _other_bytes(f):
        if not _is_link(c[len("bytes_"):]):
            f[c] = f[c].to_numpy(dtype=np.float64) * k
    _set_split(f, new_r, new_w, new_wt)
    if d == "k" and n > 1:
        coll = np.array([collective_bytes("all_reduce", s, n, algorithm) for s in written])
        col = f"bytes_{link}"
        prev = _col(f, col)
        f[col] = np.where(sel, np.nan_to_num(prev) + coll, prev)
    f.loc[sel, "time_s"] = np.nan
    note = (f"per-chip view of {n} chips sharded on {d}" + (f" ({algorithm} all-reduce of each output on {link})"
                                                            if d == "k" else "") + ": totals are per chip")
    out = _new(workload, f, TIME_NOTE, meta={"chips": str(n * int(workload.meta.get("chips", "1") or 1))})
    return replace(out, warnings=(*out.warnings, note))


def comm_fraction(workload: Workload, fraction: float) -> Workload:
    """A new workload whose every roof is lowered by ``fraction`` of communication: ``t_roof' = t_roof / (1 − f)``."""
    _check_workload(workload, "comm_fraction")
    fr = float(fraction)
    if not (0 <= fr < 1):
        raise InputError(where="comm_fraction", expected="a fraction from 0 up to (not including) 1", found=repr(fraction))
    prev = float(workload.meta.get("comm_fraction", 0) or 0)
    total = 1.0 - (1.0 - prev) * (1.0 - fr)
    note = f"{total:.0%} of each kernel's time is non-overlapped communication: roofs lowered to {1 - total:.0%}"
    out = _new(workload, workload.frame.copy(deep=True), meta={"comm_fraction": repr(total)})
    return replace(out, warnings=(*tuple(x for x in out.warnings if "non-overlapped communication" not in x), note))


def effective_hardware(hw: Hardware, fraction: float) -> Hardware:
    """``hw`` with every ceiling, memory level and link at ``(1 − fraction)`` of its rate (same id)."""
    if not fraction:
        return hw
    k = 1.0 - float(fraction)

    def sc(x: float | None) -> float | None:
        return None if x is None else x * k

    return replace(
        hw, name=f"{hw.name} (roofs × {k:.2f})",
        ceilings=tuple(replace(c, peak=c.peak * k, achievable=sc(c.achievable), sparse=sc(c.sparse)) for c in hw.ceilings),
        levels=tuple(replace(lv, bandwidth=lv.bandwidth * k, achievable=sc(lv.achievable)) for lv in hw.levels),
        links=tuple(replace(lk, bandwidth=lk.bandwidth * k, achievable=sc(lk.achievable)) for lk in hw.links))


def evaluate(workload: Workload, hardware: Hardware | Iterable[Hardware], *, achievable: bool = False) -> Analysis:
    """:func:`~roofcore.analyze.analyze`, with the workload's communication fraction applied to the roofs."""
    hws = [hardware] if isinstance(hardware, Hardware) else list(hardware)
    fr = float(workload.meta.get("comm_fraction", 0) or 0)
    return analyze(workload, [effective_hardware(h, fr) for h in hws], achievable=achievable)


# =============================================================================================== projection


@dataclass(frozen=True)
class DeviceTotal:
    """A workload's totals on one device of a projection (seconds; ``None`` where unknown)."""

    hardware: str
    name: str
    vendor: str
    t_roof_s: float | None  #: Σ roofline time
    projected_time_s: float | None  #: Σ projected time of the measured kernels (kept efficiency)
    estimate_s: float | None  #: Σ (projected where measured, else t_roof): the run's estimate
    speedup_roof: float | None  #: reference t_roof / this t_roof
    speedup: float | None  #: reference estimate / this estimate
    price_per_hour: float | None
    cost_per_run: float | None  #: price_per_hour × estimate_s / 3600
    cross_vendor: bool
    bound_share: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Projection:
    """A workload projected onto devices: per kernel (:attr:`table`) and per device (:attr:`totals`)."""

    workload: Workload
    source: str | None  #: the device the measured times come from
    reference: str  #: speedups are against this device
    totals: tuple[DeviceTotal, ...]
    table: pd.DataFrame  #: one row per kernel × device
    notes: tuple[str, ...]
    analyses: tuple[Analysis, ...] = ()  #: per device, the analysis the projection used

    def total(self, hw_id: str) -> DeviceTotal:
        for t in self.totals:
            if t.hardware == hw_id:
                return t
        raise RoofcoreError(f"hardware {hw_id!r} is not in this projection")

    def to_json(self) -> dict:
        cols = ["name", "hardware", "count", "flops", "bytes_hbm", "t_roof_s", "bound", "time_s", "efficiency",
                "projected_time_s", "estimate_s"]
        recs = []
        for row in self.table[[c for c in cols if c in self.table]].itertuples(index=False):
            recs.append({k: _clean(v) for k, v in zip(cols, row, strict=False)})
        return {"schema_version": 1, "workload": self.workload.name, "source": self.source,
                "reference": self.reference, "totals": [t.to_json() for t in self.totals], "kernels": recs,
                "notes": list(self.notes)}


def _clean(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        x = float(v)
        return x if math.isfinite(x) else None
    if v is None or (isinstance(v, float) and v != v):
        return None
    return v


def _nsum(a: np.ndarray) -> float | None:
    return float(np.nansum(a)) if (~np.isnan(a)).any() else None


def offchip_only(workload: Workload, hws: Iterable[Hardware] = ()) -> Workload:
    """The workload with on-chip level bytes dropped (FLOPs, off-chip and link bytes kept)."""
    drop = [c for c in workload.byte_columns if c != HBM and not _is_link(c[len("bytes_"):], hws)]
    if not drop:
        return workload
    return replace(workload, frame=workload.frame.drop(columns=drop))


def project(workload: Workload, source: str | Hardware | None, targets: Sequence[Hardware], *,
            price_per_hour: Mapping[str, float] | None = None, achievable: bool = False) -> Projection:
    """Project ``workload`` (measured on ``source``, or built) onto ``targets`` (module docstring)."""
    _check_workload(workload, "project")
    targets = list(targets)
    if not targets:
        raise RoofcoreError("project needs at least one target device")
    src: Hardware | None = None
    if isinstance(source, Hardware):
        src = source
        if all(t.id != src.id for t in targets):
            targets.insert(0, src)
    elif source:
        src = next((t for t in targets if t.id == source), None)
        if src is None:
            raise InputError(where="source", expected="one of the target devices: " + ", ".join(t.id for t in targets),
                             found=repr(source), hint="add the device the profile ran on to the devices.")
    ref = src or targets[0]
    prices = dict(price_per_hour or {})
    times = workload.frame["time_s"].to_numpy(dtype=np.float64)
    timed = ~np.isnan(times) & (times > 0)
    notes: list[str] = []
    eff = np.full(len(workload), np.nan)
    if src is not None and timed.any():
        t_src = evaluate(workload, src, achievable=achievable).results[0].t_roof
        with np.errstate(divide="ignore", invalid="ignore"):
            eff = np.where(timed & (t_src > 0), t_src / times, np.nan)
    elif timed.any():
        notes.append("Measured times are not projected: name the device they were measured on (source).")
    reduced = offchip_only(workload, targets)
    frames, analyses, per = [], [], []
    for hw in targets:
        cross = hw.vendor.strip().lower() != ref.vendor.strip().lower()
        wl = reduced if cross else workload
        if cross and wl is not workload:
            msg = (f"{hw.id}: another vendor than {ref.id}, so only FLOPs, off-chip and link bytes are used "
                   "(on-chip level bytes dropped).")
            notes.append(msg)
        a = evaluate(wl, hw, achievable=achievable)
        analyses.append(a)
        r = a.results[0]
        t_roof = r.t_roof
        with np.errstate(divide="ignore", invalid="ignore"):
            proj = np.where(~np.isnan(eff) & (eff > 0), t_roof / eff, np.nan)
        above = ~np.isnan(proj) & (proj < t_roof)
        if above.any():
            notes.append(f"{hw.id}: {int(above.sum())} kernel(s) measured above their roof: projected at the roof.")
            proj = np.where(above, t_roof, proj)
        est = np.where(np.isnan(proj), t_roof, proj)
        tab = a.table(hw.id, messages=False)
        frames.append(pd.DataFrame({
            "kid": np.arange(len(tab)), "name": tab["name"], "hardware": hw.id, "count": tab["count"],
            "flops": tab["flops"], "bytes_hbm": tab.get(HBM, np.nan), "t_roof_s": t_roof,
            "bound": tab["bound"], "time_s": times if src is not None and hw.id == src.id else np.nan,
            "efficiency": eff, "projected_time_s": proj, "estimate_s": est}))
        share = a.summary(hw.id)["time_share_by_bound"]
        per.append((hw, cross, _nsum(t_roof), _nsum(proj), _nsum(est), share))
    ref_row = next(p for p in per if p[0].id == ref.id)
    totals = []
    for hw, cross, tr, pr, es, share in per:
        price = prices.get(hw.id)
        totals.append(DeviceTotal(
            hardware=hw.id, name=hw.name, vendor=hw.vendor, t_roof_s=tr, projected_time_s=pr, estimate_s=es,
            speedup_roof=(ref_row[2] / tr) if tr and ref_row[2] else None,
            speedup=(ref_row[4] / es) if es and ref_row[4] else None,
            price_per_hour=float(price) if price is not None else None,
            cost_per_run=float(price) * es / 3600.0 if price is not None and es is not None else None,
            cross_vendor=cross, bound_share=share))
    return Projection(workload=workload, source=src.id if src else None, reference=ref.id, totals=tuple(totals),
                      table=pd.concat(frames, ignore_index=True), notes=tuple(dict.fromkeys(notes)),
                      analyses=tuple(analyses))


# =============================================================================================== solvers


def _ceiling(hw: Hardware, dtype: str, achievable: bool = False) -> float:
    c = hw.resolve_ceiling(dtype, "matrix")
    if c is None:
        raise InputError(where=hw.id, expected=f"a {dtype} compute ceiling", found="none",
                         hint=f"{hw.id} publishes: {', '.join(hw.ceiling_map)}.")
    return c.rate(achievable)


def matmul_crossover(hw: Hardware, *, dtype: str = "bf16", weight_dtype: str | None = None, d: float,
                     f: float, achievable: bool = False) -> float:
    """Batch ``B`` at which ``X[B,d] @ W[d,f]`` becomes compute-bound on ``hw`` (``inf``: never).

    FLOPs ``2BDF``; bytes ``BD·|a| + DF·|w| + BF·|a|`` (activations and output in ``dtype``, weights in
    ``weight_dtype``); the ceiling is ``dtype``'s. With ``r = π/β``: ``2BDF ≥ r·bytes`` ⇔
    ``B ≥ r·D·F·|w| / (2DF − r·(D + F)·|a|)`` → ``r·|w|/2`` for large D, F (bf16 ≈ r, int8 weights ≈ r/2).
    """
    a = DTYPE_SIZE[canonical_dtype(dtype)]
    w = DTYPE_SIZE[canonical_dtype(weight_dtype or dtype)]
    r = _ceiling(hw, canonical_dtype(dtype), achievable) / hw.offchip.rate(achievable)
    denom = 2.0 * d * f - r * (d * a + f * a)
    return r * d * f * w / denom if denom > 0 else math.inf


def square_matmul_crossover(hw: Hardware, dtype: str = "bf16", *, achievable: bool = False) -> float:
    """Size ``N`` at which an ``N×N×N`` matmul becomes compute-bound: ``2N³/π = 3N²·|dtype|/β`` ⇒ ``N = 1.5·|dtype|·π/β``."""
    dt = canonical_dtype(dtype)
    beta = hw.offchip.rate(achievable)
    return 1.5 * DTYPE_SIZE[dt] * _ceiling(hw, dt, achievable) / beta


def shard_crossover(flops_per_s: float, link_bytes_per_s: float, b: float, f: float, dtype: str = "bf16", *,
                    chips: int = 2, algorithm: str = "ring") -> float:
    """Sharded dimension ``D`` above which ``X[b,D] @ W[D,f]`` sharded on D over ``chips`` is compute-bound.

    Per chip FLOPs ``2bDf/N``, link bytes = all-reduce of the ``b×f`` output; 2 chips, ring:
    ``bDf/π = 2bf/β`` ⇒ ``D = |dtype|·π/β`` (seed §4.3: 8,755 for 1.97e14 FLOP/s and 4.5e10 B/s).
    """
    s = b * f * DTYPE_SIZE[canonical_dtype(dtype)]
    link = collective_bytes("all_reduce", s, chips, algorithm)
    if link == 0:
        return 0.0
    return chips * flops_per_s * link / (2.0 * b * f * link_bytes_per_s)


def tiled_intensity(bm: float, bn: float) -> float:
    """Approximate HBM intensity of a tiled matmul, writes ignored (seed §4.4): ``bm·bn / (bm + bn)``."""
    return bm * bn / (bm + bn)


def tile_for_intensity(target: float, *, ratio: float = 1.0, multiple: int = 1) -> tuple[int, int]:
    """The smallest tile ``(bm, bn)`` with ``bn ≈ ratio·bm`` (multiples of ``multiple``) and ``bm·bn/(bm+bn) ≥ target``."""
    if not (target > 0 and ratio > 0 and multiple >= 1):
        raise InputError(where="tile", expected="a positive target intensity and ratio", found=f"{target}, {ratio}")
    m = int(multiple)

    def up(x: float) -> int:
        return max(m, math.ceil(x / m - 1e-9) * m)

    bm = up(target * (1.0 + ratio) / ratio)
    while True:
        bn = up(ratio * bm)
        if tiled_intensity(bm, bn) >= target:
            return bm, bn
        bm += m


def crossover_table(hws: Iterable[Hardware], *, d: float = 8192, f: float = 8192) -> pd.DataFrame:
    """Per device: ridge, square-matmul N (bf16) and the batch thresholds (bf16, int8 weights, full int8)."""
    rows = []
    for hw in hws:
        def safe(fn, hw=hw, **kw):
            try:
                return fn(hw, **kw)
            except InputError:
                return math.nan
        rows.append({
            "hardware": hw.id, "ridge_bf16": safe(lambda h: _ceiling(h, "bf16") / h.offchip.bandwidth),
            "square_n_bf16": safe(square_matmul_crossover, dtype="bf16"),
            "batch_bf16": safe(matmul_crossover, dtype="bf16", d=d, f=f),
            "batch_int8_weights": safe(matmul_crossover, dtype="bf16", weight_dtype="int8", d=d, f=f),
            "batch_int8": safe(matmul_crossover, dtype="int8", d=d, f=f) if "int8-matrix" in hw.ceiling_map else math.nan,
        })
    return pd.DataFrame(rows)


# =============================================================================================== compare


def by_name(workload: Workload) -> Workload:
    """Launches of the same kernel name summed into one row (FLOPs, bytes, time; launches counted)."""
    f = workload.frame
    if not f["name"].duplicated().any():
        return workload
    sums = [c for c in ["count", "flops", "time_s", *workload.byte_columns, *SPLIT] if c in f]
    g = f.groupby(f["name"].astype(str), sort=False)
    agg = g[sums].sum(min_count=1)
    first = g[[c for c in f.columns if c not in sums and c != "name"]].first()
    out = pd.concat([first, agg], axis=1).reset_index().rename(columns={"index": "name"})
    out["row"] = g.size().astype(str).radd("launches: ").to_numpy()
    out["count"] = out["count"].fillna(1).astype(np.int64)
    for c in ("precision", "unit", "group"):
        out[c] = pd.Series(out[c].astype(object).where(out[c].notna(), None), dtype=object)
    return replace(workload, frame=out[[c for c in f.columns if c in out.columns]])


@dataclass(frozen=True)
class Comparison:
    """Two runs of a workload on one device, kernels matched by name."""

    hardware: str
    old: Analysis  #: launches aggregated by name
    new: Analysis
    table: pd.DataFrame  #: one row per matched kernel
    only_old: tuple[str, ...]
    only_new: tuple[str, ...]
    totals: Mapping[str, Any]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        cols = list(self.table.columns)
        return {"schema_version": 1, "hardware": self.hardware, "old": self.old.workload.name,
                "new": self.new.workload.name, "totals": {k: _clean(v) for k, v in self.totals.items()},
                "kernels": [{k: _clean(v) for k, v in zip(cols, row, strict=True)}
                            for row in self.table.itertuples(index=False)],
                "only_old": list(self.only_old), "only_new": list(self.only_new), "notes": list(self.notes)}


def _side(a: Analysis, hw_id: str) -> pd.DataFrame:
    tab = a.table(hw_id, messages=False)
    t = tab["time_s"].to_numpy(dtype=np.float64)
    timed = ~np.isnan(t) & (t > 0)
    off = f"intensity_{OFFCHIP}"
    return pd.DataFrame({
        "name": tab["name"].astype(str), "time": np.where(timed, t, tab["t_roof_s"]),
        "basis": np.where(timed, "measured", "roofline"), "t_roof_s": tab["t_roof_s"], "flops": tab["flops"],
        "bytes_hbm": tab.get(HBM, np.nan), "intensity": tab.get(off, np.nan),
        "perf": np.where(timed, tab["achieved_flops_per_s"], tab["attainable_flops_per_s"]), "bound": tab["bound"]})


def compare(old: Workload, new: Workload, hw: Hardware, *, achievable: bool = False,
            pairs: Mapping[str, str] | Sequence[tuple[str, str]] | None = None) -> Comparison:
    """Per-kernel and total speedups of ``new`` over ``old`` on ``hw`` (measured times where both have them,
    else roofline times); kernels matched by name after summing their launches.

    ``pairs``: (old name, new name) matched by hand, for kernels renamed between the runs (a naive and a tiled
    GEMM); each name must be one that matches nothing by name. The table's ``name`` is the old name and
    ``name_new`` the new one. With no kernel matched the total speedup is ``None``: the two sums would compare
    different kernels."""
    _check_workload(old, "compare (old)")
    _check_workload(new, "compare (new)")
    ao, an = evaluate(by_name(old), hw, achievable=achievable), evaluate(by_name(new), hw, achievable=achievable)
    so, sn = _side(ao, hw.id), _side(an, hw.id)
    sn["name_new"] = sn["name"]
    by_hand = _pairs(pairs, so["name"], sn["name"])
    if by_hand:
        sn["name"] = sn["name"].map(lambda n: by_hand.get(n, n))
    m = so.merge(sn, on="name", suffixes=("_old", "_new"), how="inner", sort=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        m["speedup"] = m["time_old"] / m["time_new"]
    m["basis"] = np.where(m["basis_old"] == m["basis_new"], m["basis_old"], "mixed")
    m = m.drop(columns=["basis_old", "basis_new"])
    matched_old, matched_new = set(m["name"]), set(m["name_new"])
    only_old = tuple(n for n in so["name"] if n not in matched_old)
    only_new = tuple(n for n in sn["name_new"] if n not in matched_new)
    old_total, new_total = float(np.nansum(so["time"])), float(np.nansum(sn["time"]))
    mo, mn = float(np.nansum(m["time_old"])), float(np.nansum(m["time_new"]))
    totals = {"old_time_s": old_total, "new_time_s": new_total,
              "speedup": old_total / new_total if new_total > 0 and len(m) else None,
              "matched_old_time_s": mo, "matched_new_time_s": mn,
              "matched_speedup": mo / mn if mn > 0 else None, "matched": len(m), "paired": len(by_hand),
              "matched_share_old": mo / old_total if old_total > 0 else None,
              "matched_share_new": mn / new_total if new_total > 0 else None,
              "basis_old": "measured" if (so["basis"] == "measured").all() else
              ("roofline" if (so["basis"] == "roofline").all() else "mixed"),
              "basis_new": "measured" if (sn["basis"] == "measured").all() else
              ("roofline" if (sn["basis"] == "roofline").all() else "mixed")}
    notes = []
    if "mixed" in (totals["basis_old"], totals["basis_new"]) or totals["basis_old"] != totals["basis_new"]:
        notes.append("Times are measured where a run has them, else roofline times: a speedup between a "
                     "measured and a roofline time compares a run with a bound.")
    if not len(m):
        notes.append("No kernel matched by name, so there is no speedup: the two totals would compare different "
                     "kernels. Pair renamed kernels by hand (a naive and a tiled GEMM have different names).")
    elif only_old or only_new:
        notes.append(f"{len(only_old)} kernel(s) only in the old run and {len(only_new)} only in the new one count "
                     "in the totals but have no per-kernel speedup.")
    return Comparison(hardware=hw.id, old=ao, new=an, table=m, only_old=only_old, only_new=only_new,
                      totals=totals, notes=tuple(notes))


def _pairs(pairs: Mapping[str, str] | Sequence[tuple[str, str]] | None, old: pd.Series, new: pd.Series
           ) -> dict[str, str]:
    """Hand-made pairs as new name -> old name, each checked: both names exist and match nothing by name."""
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs or ())
    if not items:
        return {}
    olds, news = set(old), set(new)
    out: dict[str, str] = {}
    for i, pair in enumerate(items):
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise InputError(where=f"pairs[{i}]", expected="an (old name, new name) pair", found=repr(pair))
        a, b = map(str, pair)
        for name, side, other, label in ((a, olds, news, "old"), (b, news, olds, "new")):
            if name not in side:
                raise InputError(where=f"pairs[{i}]", expected=f"a kernel of the {label} run",
                                 found=repr(name), hint="names are matched after summing launches by name.")
            if name in other:
                raise InputError(where=f"pairs[{i}]", expected="a kernel that matches nothing by name",
                                 found=f"{name!r}, in both runs", hint="it is matched by its name already.")
        if b in out or a in out.values():
            raise InputError(where=f"pairs[{i}]", expected="each kernel in one pair at most",
                             found=f"{a!r} -> {b!r}")
        out[b] = a
    return out


def comparison_text(c: Comparison, top: int = 25) -> str:
    """A plain-text report of a comparison (the CLI's `roofline compare`)."""
    from .units import fmt_time

    t = c.totals
    lines = [f"{c.old.workload.name} -> {c.new.workload.name} on {c.hardware}: "
             f"{fmt_time(t['old_time_s'])} -> {fmt_time(t['new_time_s'])}"
             + (f", speedup {t['speedup']:.2f}x" if t["speedup"] else "")
             + f" ({t['basis_old']} -> {t['basis_new']} times)", ""]
    tab = c.table.assign(delta=c.table["time_old"] - c.table["time_new"]).sort_values("delta", ascending=False,
                                                                                      key=lambda s: s.abs())
    rows = tab.head(top if top > 0 else len(tab))
    w = max([6, *(min(len(n), 44) for n in rows["name"])])
    lines.append(f"{'kernel':<{w}}  {'old':>10}  {'new':>10}  {'speedup':>8}  basis")
    for r in rows.itertuples(index=False):
        name = r.name if r.name_new == r.name else f"{r.name} → {r.name_new}"  # paired by hand
        name = name if len(name) <= 44 else name[:43] + "…"
        sp = f"{r.speedup:.2f}x" if r.speedup == r.speedup and math.isfinite(r.speedup) else "–"
        lines.append(f"{name:<{w}}  {fmt_time(r.time_old):>10}  {fmt_time(r.time_new):>10}  {sp:>8}  {r.basis}")
    if c.only_old:
        lines.append(f"\nOnly in old ({len(c.only_old)}): " + ", ".join(c.only_old[:10]) + (" …" if len(c.only_old) > 10 else ""))
    if c.only_new:
        lines.append(f"Only in new ({len(c.only_new)}): " + ", ".join(c.only_new[:10]) + (" …" if len(c.only_new) > 10 else ""))
    lines += [f"Note: {n}" for n in c.notes]
    return "\n".join(lines)


# =============================================================================================== scenarios

STEP_KINDS = ("fuse", "precision", "batch", "shard", "comm_fraction", "hardware")
_TOP_KEYS = {"name", "base", "hardware", "price_per_hour", "steps", "measured_on", "description"}


@dataclass(frozen=True)
class Variant:
    """One workload of a scenario (the base or a step's result) on its devices."""

    name: str
    kind: str  #: "base" or one of :data:`STEP_KINDS`
    params: Any
    parent: str | None
    workload: Workload
    hardware: tuple[str, ...]
    analysis: Analysis
    projection: Projection
    speedup_vs_base: Mapping[str, float | None]  #: per device: base t_roof (same device, else the base's first) / this t_roof
    speedup_vs_base_estimate: Mapping[str, float | None]  #: the same with the estimates (measured where known)

    def to_json(self) -> dict:
        a = self.analysis.to_json()
        totals = []
        for t in self.projection.totals:
            d = t.to_json()
            d["speedup_vs_base"] = _clean(self.speedup_vs_base.get(t.hardware))
            d["speedup_vs_base_estimate"] = _clean(self.speedup_vs_base_estimate.get(t.hardware))
            totals.append(d)
        return {"name": self.name, "step": self.kind, "params": self.params, "from": self.parent,
                "hardware": list(self.hardware), "workload": a["workload"], "kernels": a["kernels"],
                "summary": a["summary"], "totals": totals,
                "notes": list(dict.fromkeys([*self.workload.warnings, *self.projection.notes]))}


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    source: str
    variants: tuple[Variant, ...]
    hardware: tuple[Hardware, ...]  #: every device any variant uses
    description: str | None = None

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise RoofcoreError(f"no variant {name!r} in scenario {self.name!r}")

    def to_json(self) -> dict:
        from .catalog import hardware_to_json

        return {"schema_version": 1, "scenario": self.name, "source": self.source, "description": self.description,
                "roofs": "theoretical", "hardware": [hardware_to_json(h) for h in self.hardware],
                "base": self.variants[0].name, "variants": [v.to_json() for v in self.variants]}


def _err(where: str, expected: str, found: Any, hint: str | None = None) -> InputError:
    text = found if isinstance(found, str) and found.startswith("<") else repr(found)
    return InputError(where=where, expected=expected, found=text[:120], hint=hint)


def _kernel_list(v: Any, where: str) -> list[str | int]:
    if isinstance(v, str | int) and not isinstance(v, bool):
        return [v]
    if not isinstance(v, list) or not v or not all(isinstance(x, str | int) and not isinstance(x, bool) for x in v):
        raise _err(where, "a list of kernel names or 0-based indices", v)
    return v


def _number(v: Any, where: str, *, lo: float = 0.0, strict: bool = True, hi: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or (
            v <= lo if strict else v < lo) or (hi is not None and v >= hi):
        rng = f"> {lo:g}" if strict else f"≥ {lo:g}"
        raise _err(where, f"a number {rng}" + (f" and < {hi:g}" if hi is not None else ""), v)
    return float(v)


def _load_doc(source: str | Path | Mapping) -> tuple[dict, str, Path]:
    import yaml

    if isinstance(source, Mapping):
        return dict(source), str(source.get("name") or "scenario"), Path.cwd()
    path = Path(source)
    from .catalog import display_path

    label = display_path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise InputError(where=label, text=f"cannot read the scenario ({e.strerror}).") from None
    except UnicodeDecodeError:
        raise InputError(where=label, expected="a UTF-8 YAML scenario", found="binary or non-UTF-8 data") from None
    try:
        doc = load_yaml(text, label)
    except yaml.YAMLError as e:
        raise yaml_input_error(e, label) from None
    if not isinstance(doc, dict):
        raise _err(f"{label}: $", "a mapping with name, base, hardware and steps", f"<{type(doc).__name__}>")
    return doc, label, path.resolve().parent


def _base_workload(base: Any, label: str, base_dir: Path, allow_files: bool) -> Workload:
    from .ingest import aggregate, read

    where = f"{label}: $.base"
    if not isinstance(base, dict):
        raise _err(where, "a mapping: {file: PATH}, {builder: NAME, params: {...}} or {kernels: [...]}",
                   f"<{type(base).__name__}>")
    kinds = [k for k in ("file", "builder", "kernels") if k in base]
    if len(kinds) != 1:
        raise _err(where, "exactly one of file, builder or kernels", ", ".join(kinds) or "none",
                   "e.g. base: {file: ../transformer_block.yaml}")
    kind = kinds[0]
    extra = set(base) - {kind, "params", "aggregate", "name"}
    if extra:
        raise _err(f"{where}.{sorted(extra)[0]}", f"a key of a {kind} base", sorted(extra)[0])
    if kind == "file":
        if not allow_files:
            raise InputError(where=f"{where}.file", text="files cannot be named by an uploaded scenario.",
                             hint="use inline kernels (base: {kernels: [...]}) or a builder.")
        p = base["file"]
        if not isinstance(p, str) or not p.strip():
            raise _err(f"{where}.file", "a path to a workload file", p)
        cand = [Path(p)] if Path(p).is_absolute() else [base_dir / p, Path.cwd() / p]
        found = next((c for c in cand if c.is_file()), None)
        if found is None:
            raise _err(f"{where}.file", "an existing workload file (relative to the scenario)", p,
                       f"looked in {base_dir}" + (" and the current folder" if len(cand) > 1 else "") + ".")
        w = read(found)
    elif kind == "builder":
        try:
            from .builders import BUILDERS, build_workload
        except ImportError:
            raise InputError(where=f"{where}.builder", text="workload builders are not available in this version.",
                             hint="give the kernels inline or a file.") from None
        name = base["builder"]
        if name not in BUILDERS:
            raise _err(f"{where}.builder", "one of " + ", ".join(sorted(BUILDERS)), name)
        params = base.get("params") or {}
        if not isinstance(params, dict):
            raise _err(f"{where}.params", "a mapping of builder parameters", f"<{type(params).__name__}>")
        try:
            w = build_workload(name, params)
        except InputError as e:
            raise InputError(where=f"{where}.params" + (f" ({e.where})" if e.where else ""), text=e.text,
                             expected=e.expected, found=e.found, hint=e.hint) from None
    else:
        import yaml

        ks = base["kernels"]
        if not isinstance(ks, list) or not ks:
            raise _err(f"{where}.kernels", "a non-empty list of kernels", f"<{type(ks).__name__}>")
        doc = {"name": str(base.get("name") or "inline kernels"), "kernels": ks}
        w = read(yaml.safe_dump(doc, sort_keys=False).encode(), name=f"{label} $.base", fmt="inventory-yaml")
        if w.skipped:
            s = w.skipped[0]
            raise InputError(where=f"{label}: $.base.{s.row.lstrip('$.')}", text=s.reason)
    if base.get("aggregate"):
        w = aggregate(w)
    return w


def _apply(kind: str, value: Any, w: Workload, where: str) -> Workload:
    if kind == "fuse":
        if isinstance(value, dict):
            extra = set(value) - {"kernels", "name"}
            if extra or "kernels" not in value:
                raise _err(where, "{kernels: [...], name: NAME} or a list of kernel names", sorted(extra or {"none"})[0])
            return fuse(w, _kernel_list(value["kernels"], f"{where}.kernels"), name=value.get("name"))
        return fuse(w, _kernel_list(value, where))
    if kind == "precision":
        if isinstance(value, str):
            value = {"dtype": value}
        if not isinstance(value, dict) or "dtype" not in value:
            raise _err(where, "{dtype: fp8, what: both|weights|activations}", value)
        extra = set(value) - {"dtype", "what", "kernels", "from_dtype"}
        if extra:
            raise _err(f"{where}.{sorted(extra)[0]}", "dtype, what, kernels or from_dtype", sorted(extra)[0])
        if value.get("what", "both") not in WHAT:
            raise _err(f"{where}.what", " or ".join(WHAT), value.get("what"))
        ks = _kernel_list(value["kernels"], f"{where}.kernels") if "kernels" in value else None
        return change_precision(w, canonical_dtype(value["dtype"], where=f"{where}.dtype"),
                                what=value.get("what", "both"), kernels=ks, from_dtype=value.get("from_dtype"))
    if kind == "batch":
        if isinstance(value, dict):
            extra = set(value) - {"factor", "kernels"}
            if extra or "factor" not in value:
                raise _err(where, "a factor or {factor: F, kernels: [...]}", sorted(extra or {"none"})[0])
            ks = _kernel_list(value["kernels"], f"{where}.kernels") if "kernels" in value else None
            return scale_batch(w, _number(value["factor"], f"{where}.factor"), kernels=ks)
        return scale_batch(w, _number(value, where))
    if kind == "shard":
        if not isinstance(value, dict) or "chips" not in value:
            raise _err(where, "{chips: N, dim: k|m|n, link: ici, algorithm: ring|tree}", value)
        extra = set(value) - {"chips", "dim", "link", "algorithm", "kernels"}
        if extra:
            raise _err(f"{where}.{sorted(extra)[0]}", "chips, dim, link, algorithm or kernels", sorted(extra)[0])
        c = value["chips"]
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise _err(f"{where}.chips", "a whole number of chips ≥ 1", c)
        if value.get("algorithm", "ring") not in ALGORITHMS:
            raise _err(f"{where}.algorithm", " or ".join(ALGORITHMS), value.get("algorithm"))
        if str(value.get("dim", "k")).lower() not in DIMS:
            raise _err(f"{where}.dim", "k (contraction), m (rows/batch) or n (output columns)", value.get("dim"))
        ks = _kernel_list(value["kernels"], f"{where}.kernels") if "kernels" in value else None
        return shard(w, c, dim=str(value.get("dim", "k")), link=str(value.get("link", "ici")),
                     algorithm=value.get("algorithm", "ring"), kernels=ks)
    if kind == "comm_fraction":
        return comm_fraction(w, _number(value, where, strict=False, hi=1.0))
    return w


def _relocate(e: InputError, step_where: str, kind: str) -> InputError:
    """A transformation's error (``where`` like ``fuse[1]`` or ``shard.chips``) placed at its scenario step."""
    inner = e.where or ""
    if inner.startswith(step_where):
        return e
    at = f"{step_where}.{inner}" if inner.split(".")[0].split("[")[0] == kind else f"{step_where}.{kind}"
    return InputError(where=at, text=e.text, expected=e.expected, found=e.found, hint=e.hint)


def run_scenario(source: str | Path | Mapping, catalog, *, allow_files: bool = True,
                 base_dir: str | Path | None = None) -> ScenarioResult:
    """Run a scenario (a YAML path or its parsed dict) against ``catalog`` (a :class:`~roofcore.catalog.Catalog`).

    Each step makes a new variant from the previous one (chained), or from ``from: base`` / ``from: NAME``
    of an earlier step. ``allow_files=False`` refuses ``base: {file: ...}`` (for uploads).
    """
    doc, label, here = _load_doc(source)
    if base_dir is not None:
        here = Path(base_dir)
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        k = sorted(unknown)[0]
        close = difflib.get_close_matches(k, list(_TOP_KEYS), n=1)
        raise _err(f"{label}: $.{k}", "a scenario key: " + ", ".join(sorted(_TOP_KEYS)), k,
                   f"did you mean {close[0]!r}?" if close else None)
    if "base" not in doc:
        raise _err(f"{label}: $", "key 'base'", "none", "base: {file: PATH} | {builder: NAME, params: {...}} | "
                   "{kernels: [...]}")
    name = str(doc.get("name") or label)
    hw_ids = doc.get("hardware")
    if not isinstance(hw_ids, list) or not hw_ids or not all(isinstance(h, str) for h in hw_ids):
        raise _err(f"{label}: $.hardware", "a non-empty list of device ids", hw_ids if hw_ids is not None else "none",
                   "see `roofline hardware list`.")

    def devices(ids: list[str], where: str) -> tuple[Hardware, ...]:
        out = []
        for i, h in enumerate(ids):
            if h not in catalog:
                close = catalog.closest(h) if hasattr(catalog, "closest") else []
                raise _err(f"{where}[{i}]", "a device id from the catalog", h,
                           f"closest: {', '.join(close)}" if close else "see `roofline hardware list`.")
            out.append(catalog.get(h))
        return tuple(out)

    base_hw = devices(hw_ids, f"{label}: $.hardware")
    prices = doc.get("price_per_hour") or {}
    if not isinstance(prices, dict):
        raise _err(f"{label}: $.price_per_hour", "a mapping of device id to $/hour", f"<{type(prices).__name__}>")
    for k, v in prices.items():
        _number(v, f"{label}: $.price_per_hour.{k}", strict=False)
    measured = doc.get("measured_on")
    if measured is not None and measured not in [h.id for h in base_hw]:
        raise _err(f"{label}: $.measured_on", "one of the scenario's hardware ids", measured,
                   "the device the base's times were measured on must be among the devices.")
    steps = doc.get("steps") or []
    if not isinstance(steps, list):
        raise _err(f"{label}: $.steps", "a list of steps", f"<{type(steps).__name__}>")

    base = _base_workload(doc["base"], label, here, allow_files)
    variants: dict[str, Variant] = {}
    order: list[str] = []
    all_hw: dict[str, Hardware] = {h.id: h for h in base_hw}

    def make(vname: str, kind: str, params: Any, parent: str | None, w: Workload, hws: tuple[Hardware, ...]) -> Variant:
        has_time = bool((w.frame["time_s"].to_numpy(dtype=np.float64) > 0).any())
        src = catalog.get(measured) if measured and has_time else None
        proj = project(w, src, list(hws), price_per_hour=prices)
        sp, spe = {}, {}
        if parent is not None:
            b = variants[order[0]].projection
            for t in proj.totals:
                ref = b.total(t.hardware) if any(x.hardware == t.hardware for x in b.totals) else b.totals[0]
                sp[t.hardware] = ref.t_roof_s / t.t_roof_s if ref.t_roof_s and t.t_roof_s else None
                spe[t.hardware] = ref.estimate_s / t.estimate_s if ref.estimate_s and t.estimate_s else None
        else:
            sp = {t.hardware: 1.0 for t in proj.totals}
            spe = dict(sp)
        return Variant(name=vname, kind=kind, params=params, parent=parent, workload=w, hardware=tuple(h.id for h in hws),
                       analysis=evaluate(w, hws), projection=proj, speedup_vs_base=sp, speedup_vs_base_estimate=spe)

    hw_of: dict[str, tuple[Hardware, ...]] = {}
    variants["base"] = make("base", "base", None, None, base, base_hw)
    order.append("base")
    hw_of["base"] = base_hw
    prev = "base"
    for i, step in enumerate(steps):
        where = f"{label}: $.steps[{i}]"
        if not isinstance(step, dict):
            raise _err(where, "a mapping with a name and one action (" + ", ".join(STEP_KINDS) + ")",
                       f"<{type(step).__name__}>")
        kinds = [k for k in STEP_KINDS if k in step]
        extra = set(step) - {*STEP_KINDS, "name", "from"}
        if extra:
            k = sorted(extra)[0]
            close = difflib.get_close_matches(k, [*STEP_KINDS, "name", "from"], n=1)
            raise _err(f"{where}.{k}", "a step key: name, from, or one of " + ", ".join(STEP_KINDS), k,
                       f"did you mean {close[0]!r}?" if close else None)
        if len(kinds) != 1:
            raise _err(where, "exactly one action: " + ", ".join(STEP_KINDS), ", ".join(kinds) or "none")
        kind = kinds[0]
        vname = str(step.get("name") or f"step {i + 1}: {kind}")
        if vname in variants:
            raise _err(f"{where}.name", "a name no other step has", vname)
        parent = step.get("from", prev)
        if parent not in variants:
            raise _err(f"{where}.from", "base or the name of an earlier step: " + ", ".join(order), parent)
        w, hws = variants[parent].workload, hw_of[parent]
        if kind == "hardware":
            ids = step["hardware"]
            if isinstance(ids, str):
                ids = [ids]
            if not isinstance(ids, list) or not ids:
                raise _err(f"{where}.hardware", "a non-empty list of device ids", ids)
            hws = devices(ids, f"{where}.hardware")
            all_hw.update({h.id: h for h in hws})
        else:
            try:
                w = _apply(kind, step[kind], w, f"{where}.{kind}")
            except InputError as e:
                raise _relocate(e, where, kind) from None
            w = replace(w, name=f"{base.name} · {vname}")
        variants[vname] = make(vname, kind, step[kind], parent, w, hws)
        hw_of[vname] = hws
        order.append(vname)
        prev = vname
    return ScenarioResult(name=name, source=label, variants=tuple(variants[n] for n in order),
                          hardware=tuple(all_hw.values()), description=doc.get("description"))


def scenario_text(result: ScenarioResult) -> str:
    """A plain-text summary of a scenario (the CLI's `roofline plan`): one row per variant × device."""
    from .units import fmt_money, fmt_time

    rows = []
    for v in result.variants:
        for t in v.projection.totals:
            top = next(iter(t.bound_share), "–")
            rows.append([v.name, t.hardware, fmt_time(t.t_roof_s) if t.t_roof_s is not None else "–",
                         fmt_time(t.estimate_s) if t.estimate_s is not None else "–",
                         f"{v.speedup_vs_base[t.hardware]:.2f}x" if v.speedup_vs_base.get(t.hardware) else "–",
                         fmt_money(t.cost_per_run), top])
    head = ["variant", "device", "t_roof", "estimate", "vs base", "cost/run", "mostly bound by"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{w}}}" if i in (0, 1, 6) else f"{{:>{w}}}" for i, w in enumerate(widths))
    out = [f"Scenario: {result.name}", "", fmt.format(*head).rstrip(), fmt.format(*["-" * w for w in widths])]
    out += [fmt.format(*r).rstrip() for r in rows]
    notes = list(dict.fromkeys(n for v in result.variants for n in (*v.workload.warnings, *v.projection.notes)))
    if notes:
        out += ["", *[f"Note: {n}" for n in notes]]
    out += ["", "vs base: base t_roof (same device, else the base's first device) / this t_roof."]
    return "\n".join(out)


__all__ = [
    "Comparison", "DeviceTotal", "Projection", "ScenarioResult", "Variant", "by_name", "change_precision",
    "collective_bytes", "comm_fraction", "compare", "comparison_text", "crossover_table", "effective_hardware",
    "evaluate", "fuse", "matmul_crossover", "offchip_only", "project", "run_scenario", "scale_batch",
    "scenario_text", "shard", "shard_crossover", "split_bytes", "square_matmul_crossover", "tile_for_intensity",
    "tiled_intensity",
]
