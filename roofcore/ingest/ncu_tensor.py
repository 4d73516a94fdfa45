"""FLOPs per tensor-core instruction for ``sm__inst_executed_pipe_tensor.sum`` (FORMATS.md §3.6b, §11).

The pipe counter counts warp-level MMA instructions; the work of one depends on the instruction's shape.
An MMA of shape M×N×K multiplies an M×K tile by a K×N tile into M×N: M·N·K multiply-adds, so
**2·M·N·K FLOP per warp-level instruction** (16·8·16·2 = 4,096 for Ampere's HMMA.16816; 16·8·8·2 = 2,048 for
Turing's HMMA.1688; 8·8·4·2 = 512 for Volta's HMMA.884, as the pipe counter counts Volta's instructions;
16·8·32·2 = 8,192 ops for IMMA.16832). The shape comes, in order, from:

1. the kernel name, where it carries it: cuBLAS ``s884``/``h1688``/``s16816``/``i8816``, ``hmma16816``, xmma
   ``tensor16x8x16``, CUTLASS ``cutlass::arch::Mma<cutlass::gemm::GemmShape<16, 8, 8>, ...>`` (the instruction
   shape; a CUTLASS template lists threadblock, warp and instruction shapes, in that order);
2. else the architecture's default instruction for the input precision named in the kernel (fp16 when none
   is named), from the compute capability in the export or, failing that, the device name.

Hopper ``wgmma`` and Blackwell ``tcgen05`` instructions do N-dependent work per instruction: kernels that name
them get *unknown* tensor FLOPs (only ``sm__ops_path_tensor_*`` counts them exactly).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: shape tokens as kernel names print them -> (M, N, K)
SHAPES: dict[str, tuple[int, int, int]] = {
    "884": (8, 8, 4), "1684": (16, 8, 4), "1688": (16, 8, 8), "16816": (16, 8, 16), "16832": (16, 8, 32),
    "16864": (16, 8, 64), "8816": (8, 8, 16), "8832": (8, 8, 32), "88128": (8, 8, 128), "168256": (16, 8, 256),
}
_KNOWN = set(SHAPES.values())
#: default instruction per architecture family and input precision (the one cuBLAS / CUTLASS use for it)
DEFAULTS: dict[str, dict[str, tuple[int, int, int]]] = {
    "volta": {"fp16": (8, 8, 4)},  # HMMA.884, fp16 only
    "turing": {"fp16": (16, 8, 8), "int8": (8, 8, 16), "int4": (8, 8, 32)},
    # Ampere and later through mma.sync (Hopper and Blackwell keep it beside wgmma / tcgen05)
    "ampere": {"fp16": (16, 8, 16), "bf16": (16, 8, 16), "tf32": (16, 8, 8), "int8": (16, 8, 32),
               "int4": (16, 8, 64), "fp64": (8, 8, 4), "fp8": (16, 8, 32)},
}


def flops_per_instruction(shape: tuple[int, int, int]) -> float:
    """2·M·N·K: one multiply-add (2 FLOP) per element of the M×N×K product."""
    m, n, k = shape
    return 2.0 * m * n * k


# ------------------------------------------------------------------------------------------- kernel names

# a shape token right after a letter or a dot ("s16816gemm", "h884", "HMMA.16816", "i8816"), longest first
_TOKEN = re.compile(r"(?<=[A-Za-z.])(" + "|".join(sorted(SHAPES, key=len, reverse=True)) + r")(?![0-9])")
_TENSOR_XYZ = re.compile(r"tensor(\d{1,2})x(\d{1,2})x(\d{1,3})(?![0-9])", re.I)
_NUM = r"\s*(?:\(int\)\s*)?(\d+)\s*"
_GEMM_SHAPE = re.compile(rf"GemmShape<{_NUM},{_NUM},{_NUM}>")
_ARCH_MMA = re.compile(rf"arch::Mma<\s*(?:cutlass::)?(?:gemm::)?GemmShape<{_NUM},{_NUM},{_NUM}>")
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


def name_shape(name: str) -> tuple[int, int, int] | None:
    """The MMA instruction shape a kernel name carries, or None."""
    m = _ARCH_MMA.search(name)
    if m:
        return int(m.group(1)), int(m.group(2)), int(m.group(3))
    m = _TOKEN.search(name)
    if m:
        return SHAPES[m.group(1)]
    m = _TENSOR_XYZ.search(name)
    if m:
        shape = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if shape in _KNOWN:
            return shape
    shapes = list(dict.fromkeys((int(a), int(b), int(c)) for a, b, c in _GEMM_SHAPE.findall(name)))
    if len(shapes) >= 3 and shapes[2] in _KNOWN:  # threadblock, warp, instruction
        return shapes[2]
    known = [s for s in shapes if s in _KNOWN]
    return known[0] if len(known) == 1 else None


def name_precision(name: str) -> str | None:
    """Input precision a kernel name states (``bf16``, ``tf32``, ``cutlass::half_t`` ...), or None."""
    for prec, rx in _PRECISION_RE:
        if rx.search(name):
            return prec
    m = _TOKEN.search(name)
    if m:
        return _PREFIX_PRECISION.get(name[m.start() - 1].lower())
    return None


def is_warpgroup(name: str) -> bool:
    return bool(_WARPGROUP.search(name))


# ------------------------------------------------------------------------------------------- architectures

#: device-name patterns -> compute capability, used only when the export has no CC
_DEVICE_CC = (
    (r"Xavier", "7.2"), (r"V100|TITAN V\b|GV100", "7.0"),
    (r"\bT4\b|RTX 20\d0|TITAN RTX|Quadro RTX|GTX 16\d0", "7.5"),
    (r"\bL4\b|\bL40|RTX 40\d0|\bAda\b", "8.9"), (r"A100|A800|\bA30\b", "8.0"),
    (r"\bA(?:10|16|40|2)\b|RTX A\d{4}|RTX 30\d0", "8.6"), (r"GH200|H100|H200|H800|\bH20\b", "9.0"),
    (r"GB[23]00|\bB[123]00\b", "10.0"), (r"RTX 50\d0|RTX PRO \d{4}", "12.0"),
)


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
    for rx, cc in _DEVICE_CC:
        if device and re.search(rx, device):
            return cc
    return None


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


def factor_for(name: str, cc: str | None, cc_from: str) -> Factor:
    """The factor for one kernel; ``cc_from`` says where ``cc`` came from (for the basis text)."""
    prec = name_precision(name)
    shape = name_shape(name)
    if shape is not None:
        return Factor(flops_per_instruction(shape), f"{_shape_text(shape)}, from the kernel name", prec)
    if is_warpgroup(name):
        return Factor(np.nan, "a Hopper/Blackwell warpgroup MMA (wgmma / tcgen05), whose work per instruction "
                      "depends on its N", prec)
    fam = family(cc)
    if fam is None:
        return Factor(np.nan, "no instruction shape in the kernel name and no compute capability or known device "
                      "name in the export", prec)
    if fam == "none":
        return Factor(np.nan, f"compute capability {cc} has no tensor cores", prec)
    table = DEFAULTS[fam]
    shape = table.get(prec or "fp16", table["fp16"])
    later = " (a kernel using wgmma or tcgen05 does more per instruction)" if int(cc.split(".")[0]) >= 9 else ""
    return Factor(flops_per_instruction(shape), f"{_shape_text(shape)}, the sm_{cc.replace('.', '')} default for "
                  f"{prec or 'fp16'}{' (' + cc_from + ')' if cc_from else ''}: no shape in the kernel name{later}",
                  prec, assumed_fp16=prec is None)


def per_launch(names: np.ndarray, cc: str | None, device: str | None) -> tuple[np.ndarray, list[Factor]]:
    """``(codes, factors)``: each launch's index into ``factors``, one :class:`Factor` per distinct kernel name."""
    cc_from = ""
    if not cc:
        cc = device_cc(device)
        cc_from = f"compute capability from the device name {device!r}" if cc else ""
    codes, uniques = pd.factorize(pd.Series(names, dtype=object).astype(str))
    return codes, [factor_for(str(u), cc, cc_from) for u in uniques]
