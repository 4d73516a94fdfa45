"""FLOPs per tensor-core SASS instruction for ``sm__inst_executed_pipe_tensor.sum`` (docs/formats.md;
docs/formats-tensor.md).

The pipe counter counts **warp-level SASS instructions** issued to the tensor pipe. What one does depends on the
instruction the architecture executes, not on a CUTLASS template's warp tile (``GemmShape<64, 64, 32>``):

=================================  ===========  ============  ==========================================================
SASS instruction (PTX)             GPUs         FLOP / instr  why (sources: docs/formats-tensor.md)
=================================  ===========  ============  ==========================================================
HMMA.884.F32.F32.STEP0..3          sm_7x        512           a warp's ``mma.sync.m8n8k4`` is four 8×8×4 MMAs, one per
(``mma.m8n8k4``, fp32 accumulate)                             quad-pair [PTX ISA], 2,048 FLOP, lowered to 4 STEP
                                                              instructions [ptxas/cuobjdump]; CUTLASS's Volta
                                                              ``arch::Mma<GemmShape<16, 16, 4>, 32, …>`` is that PTX
                                                              instruction [CUTLASS mma_sm70.h], so 4 HMMA.884 of 512
HMMA.884.F16.F16.STEP0..1          sm_7x        1,024         the same MMA lowered to 2 STEPs with fp16 accumulate
HMMA.1688 (``m16n8k8``)            sm_75+       2,048         2·16·8·8, one instruction [CUTLASS mma_sm75.h]
HMMA.16816 (``m16n8k16``)          sm_80+       4,096         2·16·8·16 (fp16, bf16) [CUTLASS mma_sm80.h]
HMMA.1684 / .1688 .TF32            sm_80+       1,024 / 2,048 tf32 ``m16n8k4`` / ``m16n8k8``
IMMA.8816 / .8832                  sm_75+       2,048 / 4,096 int8 ``m8n8k16`` / int4 ``m8n8k32`` (ops)
IMMA.16832 / .16864                sm_80+       8,192/16,384  int8 ``m16n8k32`` / int4 ``m16n8k64`` (ops)
DMMA.884 (``m8n8k4.f64``)          sm_80+       512           2·8·8·4, one instruction
QMMA.16832 (``m16n8k32`` fp8)      sm_89+       8,192         2·16·8·32
wmma ``m16n16k16`` …               any          the default   lowered to the architecture's own instruction (below)
HGMMA (``wgmma.mma_async``),       sm_90a,      unknown       issued by a warpgroup of 4 warps with N from 8 to 256:
UTC*MMA (``tcgen05.mma``)          sm_100a                    the work of one counted instruction depends on N, which
                                                              no kernel name gives reliably; ``sm__ops_path_tensor_*``
                                                              counts it exactly
=================================  ===========  ============  ==========================================================

Checked on real exports: an A100 PCIe CUTLASS 20480³ HGEMM (``arch::Mma<GemmShape<16, 8, 8>>``) counts
8,388,608,000 instructions × 2,048 = 2·20480³, cuBLAS's ``ampere_s16816gemm`` 4,194,304,000 × 4,096; the same
program's V100 export counts 33,554,432,000 × 512 (``arch::Mma<GemmShape<16, 16, 4>>``, fp32 accumulate).

The instruction comes, in order, from:

1. the kernel name, where it names it: cuBLAS ``s884`` / ``h1688`` / ``s16816`` / ``i8816`` (the letter before is the
   accumulate type: ``h884`` accumulates in fp16), ``hmma16816``, xmma ``tensor16x8x16``, CUTLASS
   ``cutlass::arch::Mma<cutlass::gemm::GemmShape<16, 8, 8>, …>`` (its sixth type is the accumulator), the third
   ``GemmShape`` of a CUTLASS device template (threadblock, warp, instruction); wmma shapes (``s161616gemm``,
   ``arch::Wmma``) name no SASS instruction and take the default;
2. else the architecture's default instruction for the input precision the name states (fp16 when none): one
   factor per precision and file, so the same count on the same device gives the same FLOPs. The architecture is the
   export's compute capability, else the device name's, else (sm_80 and later only, whose default is the same on every
   later GPU) the kernel names' build tags (:mod:`.arch`).

A factor that puts a launch above its own device's peak for that precision on matrix units (the catalog device the
export names; without one, the fastest catalog device of its compute capability) is a contradiction:
:func:`contradictions` makes that launch's tensor FLOPs unknown and names the kernel, the factor and the rate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import arch

if TYPE_CHECKING:
    from ..models import Hardware

#: shape tokens as kernel names print them -> (M, N, K)
SHAPES: dict[str, tuple[int, int, int]] = {
    "884": (8, 8, 4), "1684": (16, 8, 4), "1688": (16, 8, 8), "16816": (16, 8, 16), "16832": (16, 8, 32),
    "16864": (16, 8, 64), "8816": (8, 8, 16), "8832": (8, 8, 32), "88128": (8, 8, 128), "168256": (16, 8, 256),
}
#: wmma fragment shapes (``s161616gemm``): a warp-level API op lowered to the architecture's own instructions
WMMA = {"161616": (16, 16, 16), "32816": (32, 8, 16), "83216": (8, 32, 16)}
_KNOWN = set(SHAPES.values()) | {(16, 16, 4)}
#: default instruction per architecture family and input precision (the one cuBLAS / CUTLASS use for it)
DEFAULTS: dict[str, dict[str, tuple[int, int, int]]] = {
    "volta": {"fp16": (8, 8, 4)},  # HMMA.884, fp16 only
    "turing": {"fp16": (16, 8, 8), "int8": (8, 8, 16), "int4": (8, 8, 32)},
    # Ampere and later through mma.sync (Hopper and Blackwell keep it beside wgmma / tcgen05)
    "ampere": {"fp16": (16, 8, 16), "bf16": (16, 8, 16), "tf32": (16, 8, 8), "int8": (16, 8, 32),
               "int4": (16, 8, 64), "fp64": (8, 8, 4), "fp8": (16, 8, 32)},
}


def flops_per_instruction(shape: tuple[int, int, int], precision: str | None = None, acc: str | None = None) -> float:
    """FLOP of one counted SASS instruction of an MMA of this shape: 2·M·N·K, except Volta's ``m8n8k4`` (``8×8×4``
    or CUTLASS's warp-wide ``16×16×4``), whose warp instruction is four 8×8×4 MMAs lowered to 4 HMMA.884 STEPs with
    fp32 accumulation (512 FLOP each) or 2 with fp16 accumulation (1,024 each); fp64 ``8×8×4`` is one DMMA.884."""
    if shape in ((8, 8, 4), (16, 16, 4)) and precision != "fp64":
        return 1024.0 if acc == "fp16" else 512.0
    m, n, k = shape
    return 2.0 * m * n * k


# ------------------------------------------------------------------------------------------- kernel names

# a shape token right after a letter or a dot ("s16816gemm", "h884", "HMMA.16816", "i8816"), longest first
_TOKEN = re.compile(r"(?<=[A-Za-z.])(" + "|".join(sorted(SHAPES, key=len, reverse=True)) + r")(?![0-9])")
_WMMA_TOKEN = re.compile(r"(?<=[A-Za-z.])(" + "|".join(WMMA) + r")(?![0-9])|arch::Wmma<|\bwmma", re.I)
_TENSOR_XYZ = re.compile(r"tensor(\d{1,2})x(\d{1,2})x(\d{1,3})(?![0-9])", re.I)
_NUM = r"\s*(?:\(int\))?\s*(\d+)\s*"
_GEMM_SHAPE = re.compile(rf"GemmShape<{_NUM},{_NUM},{_NUM}>")
_TYPE = r"\s*([\w:]+)\s*"
_ARCH_MMA = re.compile(rf"arch::Mma<\s*(?:cutlass::)?(?:gemm::)?GemmShape<{_NUM},{_NUM},{_NUM}>"
                       rf"(?:\s*,{_NUM},{_TYPE},{_TYPE},{_TYPE},{_TYPE},{_TYPE}[,>])?")
#: warpgroup (Hopper) and tcgen05 (Blackwell) MMAs: work per instruction depends on N
_WARPGROUP = re.compile(r"wgmma|gmma|warpgroup|tcgen05|umma|utc[a-z]*mma|nvjet|cutlass3x_sm(?:9|1\d)|sm(?:90|10\d)a?_xmma",
                        re.I)
_PRECISION = (  # input precision named in a kernel name; short tokens may not run on into digits ("s884" is not s8)
    ("tf32", r"tf32|tfloat32"), ("bf16", r"bf16|bfloat16"), ("fp8", r"fp8|f8(?![0-9])|e4m3|e5m2"),
    ("int4", r"u?int4|[isu]4(?![0-9])"), ("int8", r"u?int8|imma|[isu]8(?![0-9])|(?:un)?signed char"),
    ("fp64", r"fp64|f64|double|dmma|dgemm"), ("fp16", r"fp16|f16|half|hmma|hgemm"),
)
_PRECISION_RE = [(p, re.compile(rf"(?<![A-Za-z0-9])(?:{rx})", re.I)) for p, rx in _PRECISION]
_PREFIX_PRECISION = {"h": "fp16", "i": "int8", "d": "fp64"}  # letter before a cuBLAS shape token
_PREFIX_ACC = {"h": "fp16", "s": "fp32"}  # cuBLAS: the compute (accumulate) type ("h884gemm", "s884gemm_fp16")


def _c_type(text: str) -> str | None:
    t = text.lower()
    return "fp16" if re.search(r"half", t) else "fp32" if re.fullmatch(r"(?:\w+::)*float", t) else None


def name_instruction(name: str) -> tuple[tuple[int, int, int], str | None] | None:
    """``(shape, accumulate type or None)`` of the MMA instruction a kernel name carries, or None."""
    m = _ARCH_MMA.search(name)
    if m:
        return (int(m.group(1)), int(m.group(2)), int(m.group(3))), _c_type(m.group(9)) if m.group(9) else None
    m = _TOKEN.search(name)
    if m:
        return SHAPES[m.group(1)], _PREFIX_ACC.get(name[m.start() - 1].lower())
    m = _TENSOR_XYZ.search(name)
    if m:
        shape = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if shape in _KNOWN:
            return shape, None
    shapes = list(dict.fromkeys((int(a), int(b), int(c)) for a, b, c in _GEMM_SHAPE.findall(name)))
    if len(shapes) == 3 and shapes[2] in _KNOWN:  # a device template: threadblock, warp, instruction
        return shapes[2], None
    return None


def name_shape(name: str) -> tuple[int, int, int] | None:
    """The MMA instruction shape a kernel name carries, or None."""
    found = name_instruction(name)
    return found[0] if found else None


def name_precision(name: str) -> str | None:
    """Input precision a kernel name states (``bf16``, ``tf32``, ``cutlass::half_t`` ...), or None."""
    for prec, rx in _PRECISION_RE:
        if rx.search(name):
            return prec
    m = _TOKEN.search(name)
    if m:
        return _PREFIX_PRECISION.get(name[m.start() - 1].lower())
    return None


def name_accumulate(name: str) -> str | None:
    """The accumulate type a kernel name states: ``h884gemm`` / ``hgemm`` fp16, ``s884gemm`` / ``s161616gemm`` fp32."""
    found = name_instruction(name)
    if found and found[1]:
        return found[1]
    m = re.search(r"(?<![A-Za-z0-9])(?:[a-z]+_)?([hs])(?:\d{3,6})?(?:gemm|cudnn)", name)
    return _PREFIX_ACC.get(m.group(1)) if m else None


def is_warpgroup(name: str) -> bool:
    return bool(_WARPGROUP.search(name))


# ------------------------------------------------------------------------------------------- architectures


def family(cc: str | None) -> str | None:
    """Architecture family for the default instruction: volta, turing, ampere (8.x and later); ``none`` before
    Volta (no tensor cores); None if unknown."""
    if not cc or not re.fullmatch(r"\d{1,2}\.\d", cc):
        return None
    major, minor = (int(x) for x in cc.split("."))
    if major < 7:
        return "none"
    if major == 7:
        return "turing" if minor >= 5 else "volta"
    return "ampere"


def device_cc(device: str | None) -> str | None:
    """Compute capability guessed from a device name ("NVIDIA A100-SXM4-40GB" -> 8.0), or None."""
    return arch.cc_of_device(device)


# ------------------------------------------------------------------------------------------- per launch


@dataclass(frozen=True)
class Factor:
    """FLOP per tensor instruction for one kernel name, and why."""

    flops: float  #: FLOP per warp-level instruction; NaN when unknown
    basis: str  #: e.g. "16×8×8, from the kernel name"
    precision: str | None  #: input precision (None: not stated)
    assumed_fp16: bool = False


def _shape_text(shape: tuple[int, int, int]) -> str:
    return "×".join(str(x) for x in shape)


def _volta_note(shape: tuple[int, int, int], precision: str | None, acc: str | None) -> str:
    if shape not in ((8, 8, 4), (16, 16, 4)) or precision == "fp64":
        return ""
    steps = 2 if acc == "fp16" else 4
    return f"; HMMA.884 in {steps} STEPs, {acc or 'fp32'} accumulate{'' if acc else ' assumed'}"


def factor_for(name: str, cc: str | None, cc_from: str) -> Factor:
    """The factor for one kernel; ``cc_from`` says where ``cc`` came from (for the basis text)."""
    prec = name_precision(name)
    found = name_instruction(name)
    if found is not None:
        shape, acc = found
        acc = acc or name_accumulate(name)
        return Factor(flops_per_instruction(shape, prec, acc),
                      f"{_shape_text(shape)}, from the kernel name{_volta_note(shape, prec, acc)}", prec)
    if is_warpgroup(name):
        return Factor(np.nan, "a Hopper/Blackwell warpgroup MMA (wgmma / tcgen05), whose work per instruction "
                      "depends on its N", prec)
    fam = family(cc)
    if fam is None:
        return Factor(np.nan, "no instruction shape in the kernel name and no compute capability or known device "
                      "name in the export", prec)
    if fam == "none":
        return Factor(np.nan, f"compute capability {cc} has no tensor cores", prec)
    assert cc is not None  # family() knew it
    table = DEFAULTS[fam]
    shape = table.get(prec or "fp16", table["fp16"])
    acc = name_accumulate(name) if fam == "volta" else None
    wmma = " (a wmma shape: lowered to this instruction)" if _WMMA_TOKEN.search(name) else ""
    later = " (a kernel using wgmma or tcgen05 does more per instruction)" if int(cc.split(".")[0]) >= 9 else ""
    return Factor(flops_per_instruction(shape, prec, acc),
                  f"{_shape_text(shape)}, the sm_{cc.replace('.', '')} default for {prec or 'fp16'}"
                  f"{' (' + cc_from + ')' if cc_from else ''}{_volta_note(shape, prec, acc)}: no shape in the kernel "
                  f"name{wmma}{later}", prec, assumed_fp16=prec is None)


def _architecture(names: np.ndarray, cc: str | None, device: str | None) -> tuple[str | None, str]:
    """The compute capability that fixes the default instruction, and where it came from."""
    if cc:
        return cc, ""
    cc = arch.cc_of_device(device)
    if cc:
        return cc, f"compute capability from the device name {device!r}"
    low = arch.from_names(names).meta.get("arch_min")
    if low and int(low[3:]) >= 80:  # sm_80 and later GPUs share the default (mma.sync m16n8k16 ...)
        return "8.0", f"kernel names built for {low} or later"
    return None, ""


def per_launch(names: np.ndarray, cc: str | None, device: str | None) -> tuple[np.ndarray, list[Factor]]:
    """``(codes, factors)``: each launch's index into ``factors``, one :class:`Factor` per distinct kernel name."""
    codes, uniques = pd.factorize(pd.Series(names, dtype=object).astype(str))
    cc, cc_from = _architecture(np.asarray(uniques, dtype=object), cc, device)
    return codes, [factor_for(str(u), cc, cc_from) for u in uniques]


# ------------------------------------------------------------------------------------------- contradictions


class _Peaks:
    """``precision -> FLOP/s`` on matrix units: the catalog device the export names (exactly), else the fastest catalog
    device of its compute capability (an upper bound for any GPU of that architecture); None where the catalog knows
    neither. ``what`` says which. The catalog is loaded on the first call only."""

    def __init__(self, cc: str | None, device: str | None) -> None:
        self.cc, self.device, self.what = cc, device, ""
        self.devices: list[Hardware] | None = None
        self.cache: dict[str, float | None] = {}

    def _load(self) -> list[Hardware]:
        from ..catalog import load_catalogs
        from ..errors import RoofcoreError

        try:
            cat = load_catalogs()
        except RoofcoreError:  # a broken user catalog: no peak to check against, the parse goes on
            return []
        found = cat.resolve(self.device, {"compute_capability": self.cc} if self.cc else {}) if self.device else None
        if found is not None and found.exact and found.ids:
            hw = cat.get(found.ids[0])
            self.what = f"its device, {hw.name}"
            return [hw]
        want = self.cc or arch.cc_of_device(self.device)
        self.what = f"any sm_{want.replace('.', '')} device in the catalog" if want else ""
        return [hw for hw in cat if want and arch.cc_of_device(hw.name) == want]

    def __call__(self, precision: str) -> float | None:
        if precision not in self.cache:
            if self.devices is None:
                self.devices = self._load()
            rates = [c.peak for hw in self.devices for c in hw.ceilings
                     if c.unit.value == "matrix" and c.precision.value == precision]
            self.cache[precision] = max(rates) if rates else None
        return self.cache[precision]


def peak_lookup(cc: str | None, device: str | None) -> _Peaks:
    """The matrix peaks a launch of this export cannot exceed (:class:`_Peaks`)."""
    return _Peaks(cc, device)


def contradictions(tensor: np.ndarray, time_s: np.ndarray, precision: np.ndarray, names: np.ndarray,
                   codes: np.ndarray, factors: list[Factor], peak: _Peaks
                   ) -> tuple[np.ndarray, list[str]]:
    """Launches whose tensor FLOPs ÷ duration exceed their device's matrix peak for their precision: their tensor
    FLOPs become NaN (the factor cannot be right for them); one warning per kernel name naming the factor."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = tensor / time_s
    prec_of = pd.Series(precision, dtype=object).fillna("fp16").astype(str).to_numpy()
    over = np.zeros(len(tensor), dtype=bool)
    for prec in pd.unique(prec_of[np.isfinite(rate) & (rate > 0)]):
        limit = peak(prec)
        if limit is not None:
            over |= (prec_of == prec) & np.isfinite(rate) & (rate > limit * 1.02)  # 2 %: the export's rounding
    out = tensor.copy()
    notes: list[str] = []
    for code in pd.unique(codes[over]):
        rows = over & (codes == code)
        f, n = factors[code], int(rows.sum())
        prec = prec_of[rows][0]
        limit = peak(prec)
        assert limit is not None  # over: launches above a known peak
        name = str(names[np.flatnonzero(rows)[0]])
        short = name if len(name) <= 80 else name[:77] + "…"
        notes.append(f"contradiction: {short!r} ({n:,} launch{'es' if n != 1 else ''}) would run at "
                     f"{np.nanmax(rate[rows]) / 1e12:,.1f} TFLOP/s with × {f.flops:,.0f} FLOP per tensor instruction "
                     f"({f.basis}), above the {prec} matrix peak of {peak.what} ({limit / 1e12:,.1f} TFLOP/s): "
                     "that factor cannot be right for it, so its tensor FLOPs are unknown.")
        out[rows] = np.nan
    return out, notes
