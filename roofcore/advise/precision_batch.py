"""Rules that change the work's numbers: one precision step down (every byte count and the ceiling), and a larger
batch for matrix-unit kernels bound by off-chip memory below the ridge."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..models import DTYPE_SIZE
from ..units import fmt_bytes, fmt_intensity, fmt_pct, fmt_rate, fmt_time
from .model import Confidence, Lever, Recommendation, times_text
from .rule_context import (
    MIN_ROOF_CUT,
    Context,
    Subject,
    distinct,
    ends_with,
    gain_time,
    recommendation,
    roof_time,
    rule,
    subjects,
)

#: precisions from widest to narrowest; one step down is the next smaller element size
_LADDER = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4")


def _precision_step(precision: str) -> tuple[str, ...]:
    """The precisions one element-size step below ``precision`` (fp32 → bf16, fp16; bf16 → fp8, int8 ...)."""
    size = DTYPE_SIZE.get(precision)
    if size is None:
        return ()
    smaller = sorted({DTYPE_SIZE[p] for p in _LADDER if DTYPE_SIZE[p] < size}, reverse=True)
    return tuple(p for p in _LADDER if smaller and DTYPE_SIZE[p] == smaller[0])


@rule
def lower_precision(ctx: Context) -> list[Recommendation]:
    """Kernels at their roof (measured ≥ 80% of it, or untimed) whose bytes or FLOPs bind can move the roof by
    one precision step down where numerics allow (fp32 → bf16, bf16 → fp8/int8, …): every byte count scales by
    the element-size ratio and the FLOPs run on that precision's ceiling (the engine's ceiling resolution).
    The step with the lowest new roof is proposed; compute-bound FP64 is left to weak_fp64. Gain: time ×
    (1 − new roof / roof), at most time − new roof."""
    prec, ceil = ctx.precision, ctx.ceiling
    n = len(prec)
    mask = ctx.near & ((ctx.kind == "memory") | (ctx.kind == "compute")) & pd.notna(prec)
    mask &= ~((prec == "fp64") & (ctx.kind == "compute"))
    factor = np.ones(n)
    target = np.full(n, None, dtype=object)
    for p, c in {(p, c) for p, c in zip(prec[mask], ceil[mask], strict=True)}:
        sel = mask & (prec == p) & (ceil == c)
        unit = str(c).rsplit("-", 1)[-1] if c else None
        best = None
        for q in _precision_step(str(p)):
            cq = ctx.hw.resolve_ceiling(q, unit)
            if cq is None:
                continue
            ratio = DTYPE_SIZE[q] / DTYPE_SIZE[str(p)]
            parts = {k: (v * ratio if k != "compute" else
                         ctx.tab["flops"].to_numpy(dtype=np.float64) / ctx.peak(cq.key)) for k, v in ctx.t_res.items()}
            new = roof_time(parts, n)
            total = np.nansum(new[sel])
            if best is None or total < best[0] * (1 - 1e-12):
                best = (total, q, cq.key, new)
        if best is None:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            factor[sel] = best[3][sel] / ctx.t_roof[sel]
        target[sel] = f"{p}>{best[1]}>{best[2]}"
    mask &= factor <= 1 - MIN_ROOF_CUT
    target[mask] = target[mask] + ">" + ctx.kind[mask]
    target[~mask] = None
    out = []
    for key in distinct(target[mask]):
        p, q, cq, kind = key.split(">")
        idx = np.flatnonzero(mask & (target == key))
        ratio = DTYPE_SIZE[q] / DTYPE_SIZE[p]
        for s in subjects(ctx, idx, gain_time(ctx, factor)[idx]):
            new_s = float(np.nansum(ctx.t_roof[s.idx] * factor[s.idx]))
            side = f"{kind}-bound"
            at = "on its roof (no measured time)"
            if s.measured and kind == "memory":
                lvl = str(ctx.level[int(s.idx[0])])
                at = f"at {fmt_pct(s.pct_bw(lvl))} of {ctx.display(lvl)} bandwidth"
            elif s.measured:
                at = f"at {fmt_pct(s.eff)} of its roof"
            cut = f"cuts {'its' if s.name is not None else 'their'} bytes {times_text(1 / ratio)}"
            if s.name is not None:
                cut += f" ({fmt_bytes(_bytes_total(s))} → {fmt_bytes(_bytes_total(s) * ratio)})"
            if kind == "compute":
                cut = f"runs on the {fmt_rate(ctx.peak(cq))} {cq} ceiling and {cut}"
            title = f"Move {s.who()} from {p} to {q} where numerics allow"
            if s.name is not None:
                reason = (f"{s.who()} is {side} {at} in {p}: {q} {cut}, so its roof falls from {fmt_time(s.roof_s)} "
                          f"to {fmt_time(new_s)}.")
            else:
                reason = (f"{s.names:,} {side} kernels ({s.stake()}) are at their roof in {p}: {q} {cut}, so their "
                          f"roofs fall from {fmt_time(s.roof_s)} to {fmt_time(new_s)} in all.")
            out.append(recommendation(ctx, "lower_precision", s, title=title, reason=reason, lever=Lever.PRECISION,
                            confidence=Confidence.MEDIUM, factor=factor))
    return out


def _bytes_total(s: Subject) -> float:
    return s.total(f"bytes_{s.ctx.hw.offchip.name}") if f"bytes_{s.ctx.hw.offchip.name}" in s.ctx.tab else math.nan


@rule
def larger_batch(ctx: Context) -> list[Recommendation]:
    """A matrix-unit kernel (its unit says so, or, without one, its name looks like a matrix product) at its
    roof, bound by off-chip memory below the ridge, is usually a matmul whose batch (rows, tokens) is too
    small to reuse its weights: intensity ≈ batch when a weight operand dominates the bytes (seed §4.2).
    Doubling the batch (or less, where the ridge is nearer) halves the off-chip time per unit of work at
    best. Elementwise and vector kernels are left out (batch does not raise their intensity). The gain is
    for the same work and assumes every byte is a weight shared across the batch: an upper bound, hence low
    confidence."""
    off = ctx.hw.offchip.name
    ceil, unit = ctx.ceiling, ctx.unit
    declared = unit != None  # noqa: E711 (elementwise on an object array)
    on_matrix = np.where(declared, unit == "matrix", ctx.matmul_named) & ends_with(ceil, "-matrix")
    flops = ctx.tab["flops"].to_numpy(dtype=np.float64)
    mask = ctx.near & (ctx.kind == "memory") & (ctx.level == off) & on_matrix & (flops > 0)
    if not mask.any() or f"intensity_{off}" not in ctx.tab:  # e.g. a time-only profile: no bytes at all
        return []
    n = len(mask)
    peak = ctx.tab["peak_flops_per_s"].to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.clip((peak / ctx.bandwidth(off)) / ctx.tab[f"intensity_{off}"].to_numpy(dtype=np.float64), 1.0, 2.0)
        parts = dict(ctx.t_res)
        parts[off] = ctx.t_res[off] / step
        new = roof_time(parts, n)
        factor = new / ctx.t_roof
    mask &= factor <= 1 - MIN_ROOF_CUT
    out = []
    lv = ctx.display(off)
    for c in distinct(ceil[mask]):
        idx = np.flatnonzero(mask & (ceil == c))
        ridge = ctx.ridge(c, off)
        for s in subjects(ctx, idx, gain_time(ctx, factor)[idx]):
            new_s = float(np.nansum(new[s.idx]))
            if s.name is not None:
                i = s.intensity(off)
                k = min(2.0, ridge / i)
                title = (f"Double the batch of {s.who()}" if k == 2 else
                         f"Raise the batch of {s.who()} {times_text(k)}, to the {lv} ridge")
                reason = (f"{s.who()} is memory-bound on {lv} at {fmt_intensity(i)} on {c}, under the ridge "
                          f"{fmt_intensity(ridge)}: when a weight operand shared across the batch dominates its "
                          f"bytes, a {times_text(k)} larger batch cuts its time per unit of work from "
                          f"{fmt_time(s.roof_s)} to {fmt_time(new_s)} at best (the ridge needs {times_text(ridge / i)}).")
            else:
                inten = ctx.tab[f"intensity_{off}"].to_numpy(dtype=np.float64)
                title = f"Double the batch of {s.who()} (up to the {lv} ridge)"
                reason = (f"{s.names:,} matrix-unit kernels ({s.stake()}) are memory-bound on {lv} at "
                          f"{s.range(inten, fmt_intensity)}, under the ridge {fmt_intensity(ridge)}: when weight "
                          f"operands shared across the batch dominate their bytes, doubling the batch (up to the ridge) "
                          f"cuts their time per unit of work from {fmt_time(s.roof_s)} to {fmt_time(new_s)} at best.")
            out.append(recommendation(ctx, "larger_batch", s, title=title, reason=reason, lever=Lever.BATCH,
                            confidence=Confidence.LOW, factor=factor))
    return out
