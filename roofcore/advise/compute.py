"""Rules for compute-bound kernels: reach the compute roof, run on matrix units, leave weak FP64, or (at the
roof) cut FLOPs or add hardware."""

from __future__ import annotations

import numpy as np

from ..units import fmt_intensity, fmt_pct, fmt_rate, fmt_time
from .model import Confidence, Lever, Recommendation
from .rule_context import (
    FAR_BELOW,
    MIN_ROOF_CUT,
    NEAR_ROOF,
    WEAK_FP64_RATIO,
    Context,
    distinct,
    ends_with,
    gain_time,
    recommendation,
    roof_time,
    rule,
    subjects,
)


@rule
def compute_far(ctx: Context) -> list[Recommendation]:
    """Compute-bound and measured at 10–80% of the compute roof: the units idle part of the time. On vector
    units, missing vectorisation (scalar code, no FMA) or low occupancy; on matrix units, pipeline stalls,
    shapes that do not fill the units, or a poor instruction mix. Fixing them moves the kernel up to its
    roof. Gain: at most the headroom (time − t_roof)."""
    ceil = ctx.ceiling
    mask = ctx.trusted & ctx.timed & (ctx.kind == "compute") & (ctx.eff >= FAR_BELOW) & (ctx.eff < NEAR_ROOF)
    out = []
    for c in distinct(ceil[mask]):
        idx = np.flatnonzero(mask & (ceil == c))
        vector = c.endswith("-vector")
        for s in subjects(ctx, idx, gain_time(ctx, ctx.eff)[idx]):
            cause = ("scalar code, no FMA, low occupancy or pipeline stalls" if vector else
                     "pipeline stalls, shapes that do not fill the matrix units, low occupancy or the instruction mix")
            verb = "Vectorise" if vector else "Find the stalls in"
            if s.name is not None:
                title = f"{verb} {s.who()}: it reaches {fmt_pct(s.eff)} of its compute roof"
                reason = (f"{s.who()} is compute-bound at {fmt_intensity(s.intensity(ctx.hw.offchip.name))} and "
                          f"reaches {fmt_pct(s.eff)} of the {fmt_rate(ctx.peak(c))} {c} peak {s.timing()}: {cause} "
                          "hold it below the roof.")
            else:
                title = f"{verb} {s.who()} below their compute roof"
                reason = (f"{s.names:,} kernels ({s.stake()}) are compute-bound at {s.range(ctx.eff, fmt_pct)} of the "
                          f"{fmt_rate(ctx.peak(c))} {c} peak: {cause} hold them below the roof.")
            out.append(recommendation(ctx, "compute_far", s, title=title, reason=reason,
                            lever=Lever.VECTORISATION if vector else Lever.STALLS, confidence=Confidence.MEDIUM,
                            factor=ctx.eff, kind="efficiency"))
    return out


@rule
def matrix_units(ctx: Context) -> list[Recommendation]:
    """Compute-bound on vector units (CUDA cores, VALU, VPU) on a device whose matrix units run the same
    precision faster (fp32 → TF32 tensor cores, which keep fp32 storage; bf16/fp16 vector → matrix): a
    matrix-unit kernel (cuBLAS/cuDNN with TF32 allowed, autocast, an MFMA/MXU path) moves the compute roof.
    Only matrix products can use them: confidence is medium when the name looks like one (gemm, conv,
    matmul…), low otherwise. Gain: time × (1 − new roof / roof), bytes unchanged."""
    ceil = ctx.ceiling
    mask = ctx.movable & (ctx.kind == "compute") & ends_with(ceil, "-vector")
    cm = ctx.hw.ceiling_map
    n = len(mask)
    factor = np.ones(n)
    target = np.full(n, None, dtype=object)
    for c in distinct(ceil[mask]):
        p = c.rsplit("-", 1)[0]
        options = [k for k in (f"{p}-matrix", "tf32-matrix" if p == "fp32" else "") if k in cm]
        options = [k for k in options if ctx.peak(k) > ctx.peak(c)]
        if not options:
            continue
        best = max(options, key=ctx.peak)
        sel = mask & (ceil == c)
        parts = dict(ctx.t_res)
        parts["compute"] = ctx.tab["flops"].to_numpy(dtype=np.float64) / ctx.peak(best)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor[sel] = (roof_time(parts, n) / ctx.t_roof)[sel]
        target[sel] = f"{c}>{best}"
    mask &= factor <= 1 - MIN_ROOF_CUT
    looks = ctx.matmul_named if mask.any() else np.zeros(n, dtype=bool)
    out = []
    for key in distinct(target[mask]):
        c, m = key.split(">")
        for like in (True, False):
            idx = np.flatnonzero(mask & (target == key) & (looks == like))
            for s in subjects(ctx, idx, gain_time(ctx, factor)[idx]):
                new = float(np.nansum(ctx.t_roof[s.idx] * factor[s.idx]))
                how = "TF32 keeps fp32 storage" if m.startswith("tf32") else "the same precision"
                if s.name is not None:
                    title = f"Run {s.who()} on matrix units ({m})"
                    reason = (f"{s.who()} is compute-bound on vector units ({fmt_rate(ctx.peak(c))} {c}); "
                              f"{ctx.hw.id} has {fmt_rate(ctx.peak(m))} {m} ({how}), so a matrix-unit kernel would "
                              f"take its roof from {fmt_time(s.roof_s)} to {fmt_time(new)}"
                              + ("." if like else " — if it is a matrix product."))
                else:
                    title = f"Run {s.who()} on matrix units ({m})"
                    reason = (f"{s.names:,} kernels ({s.stake()}) are compute-bound on vector units "
                              f"({fmt_rate(ctx.peak(c))} {c}); {ctx.hw.id} has {fmt_rate(ctx.peak(m))} {m} ({how}), "
                              f"so matrix-unit kernels would take their roofs from {fmt_time(s.roof_s)} to "
                              f"{fmt_time(new)}" + ("." if like else " — where they are matrix products."))
                out.append(recommendation(ctx, "matrix_units", s, title=title, reason=reason, lever=Lever.MATRIX_UNITS,
                                confidence=Confidence.MEDIUM if like else Confidence.LOW, factor=factor))
    return out


@rule
def weak_fp64(ctx: Context) -> list[Recommendation]:
    """Compute-bound FP64 on a device whose FP64 is weak (best fp64 ceiling ≤ 1/8 of its best fp32 one, as
    on consumer and inference GPUs): where numerics allow (mixed precision, iterative refinement), FP32
    moves the roof — its ceiling, and half the bytes. Gain: time × (1 − new roof / roof); low confidence,
    since only the user knows whether FP32 is accurate enough."""
    cm = ctx.hw.ceiling_map
    p64 = [k for k in cm if k.startswith("fp64-")]
    p32 = [k for k in cm if k.startswith("fp32-")]
    if not p64 or not p32:
        return []
    best64, best32 = max(p64, key=ctx.peak), max(p32, key=ctx.peak)
    ratio = ctx.peak(best64) / ctx.peak(best32)
    if ratio > WEAK_FP64_RATIO:
        return []
    prec = ctx.precision
    mask = ctx.movable & (ctx.kind == "compute") & (prec == "fp64")
    n = len(mask)
    parts = {k: (v / 2 if k != "compute" else ctx.tab["flops"].to_numpy(dtype=np.float64) / ctx.peak(best32))
             for k, v in ctx.t_res.items()}
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = roof_time(parts, n) / ctx.t_roof
    mask &= factor <= 1 - MIN_ROOF_CUT
    idx = np.flatnonzero(mask)
    out = []
    for s in subjects(ctx, idx, gain_time(ctx, factor)[idx]):
        new = float(np.nansum(ctx.t_roof[s.idx] * factor[s.idx]))
        weak = (f"{ctx.hw.id}'s FP64 ({fmt_rate(ctx.peak(best64))} {best64}) is 1/{1 / ratio:.0f} of its FP32 "
                f"({fmt_rate(ctx.peak(best32))} {best32})")
        if s.name is not None:
            title = f"Move {s.who()} from FP64 to FP32 where numerics allow"
            reason = (f"{s.who()} is compute-bound in FP64 and {weak}: with mixed precision or iterative refinement "
                      f"its roof falls from {fmt_time(s.roof_s)} to {fmt_time(new)}.")
        else:
            title = f"Move {s.who()} from FP64 to FP32 where numerics allow"
            reason = (f"{s.names:,} kernels ({s.stake()}) are compute-bound in FP64 and {weak}: with mixed precision "
                      f"or iterative refinement their roofs fall from {fmt_time(s.roof_s)} to {fmt_time(new)}.")
        out.append(recommendation(ctx, "weak_fp64", s, title=title, reason=reason, lever=Lever.PRECISION,
                        confidence=Confidence.LOW, factor=factor))
    return out


@rule
def compute_near(ctx: Context) -> list[Recommendation]:
    """Compute-bound at the roof (≥ 80% of it, or untimed): memory work does nothing here. Only fewer FLOPs (a
    cheaper algorithm, sparsity, low rank, smaller dimensions) or more or faster hardware help, and the
    roofline bounds neither — the gain is left at zero and the time at stake is stated instead."""
    ceil = ctx.ceiling
    mask = ctx.near & (ctx.kind == "compute")
    off = ctx.hw.offchip.name
    out = []
    for c in distinct(ceil[mask]):
        idx = np.flatnonzero(mask & (ceil == c))
        ridge = ctx.ridge(c, off)
        for s in subjects(ctx, idx, ctx.base_s[idx]):
            at = (f"at {fmt_pct(s.eff)} of the {fmt_rate(ctx.peak(c))} {c} peak" if s.measured else
                  f"on its {fmt_rate(ctx.peak(c))} {c} roof (no measured time)")
            if s.name is not None:
                title = f"Cut the FLOPs of {s.who()} or add hardware: it is at its compute roof"
                reason = (f"{s.who()} ({s.stake()}) is compute-bound at "
                          f"{fmt_intensity(s.intensity(off))}, above the ridge {fmt_intensity(ridge)}, {at}: only "
                          "fewer FLOPs (a cheaper algorithm, sparsity, low rank) or more or faster hardware help.")
            else:
                at = at.replace("its", "their")
                title = f"Cut the FLOPs of {s.who()} or add hardware: they are at their compute roof"
                reason = (f"{s.names:,} kernels ({s.stake()}) are compute-bound above the ridge "
                          f"{fmt_intensity(ridge)}, {at}: only fewer FLOPs (a cheaper algorithm, sparsity, low rank) "
                          "or more or faster hardware help.")
            out.append(recommendation(ctx, "compute_near", s, title=title, reason=reason, lever=Lever.ALGORITHM,
                            confidence=Confidence.HIGH, factor=None))
    return out
