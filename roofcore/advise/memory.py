"""Rules for memory-bound kernels: reach the bandwidth roof, tile for reuse one level further in (on-chip or
off-chip), and fuse chains of kernels that hand their results over through off-chip memory."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..models import Hardware
from ..units import fmt_bandwidth, fmt_bytes, fmt_intensity, fmt_pct, fmt_time
from .model import Confidence, Lever, Recommendation, short, times_text
from .rule_context import (
    FAR_BELOW,
    MIN_ROOF_CUT,
    NEAR_ROOF,
    Context,
    Subject,
    distinct,
    gain_time,
    recommendation,
    roof_time,
    rule,
    subjects,
)


@rule
def memory_far(ctx: Context) -> list[Recommendation]:
    """Memory-bound and measured well below the bandwidth roof (10–80% of it): the bytes move inefficiently.
    Uncoalesced or strided accesses, a poor layout, or data read more than once keep the kernel under the
    roof; fixing them moves it up to the roof. Judged by % of peak bandwidth, never % of peak FLOP/s. Gain:
    at most the headroom (time − t_roof)."""
    mask = ctx.trusted & ctx.timed & (ctx.kind == "memory") & (ctx.eff >= FAR_BELOW) & (ctx.eff < NEAR_ROOF)
    out = []
    for level in distinct(ctx.level[mask]):
        idx = np.flatnonzero(mask & (ctx.level == level))
        lv = ctx.display(level)
        for s in subjects(ctx, idx, gain_time(ctx, ctx.eff)[idx]):
            if s.name is not None:
                title = f"Reach the {lv} roof in {s.who()}: coalesce accesses, fix the layout, cut re-reads"
                reason = (f"{s.who()} is memory-bound on {lv} at {fmt_intensity(s.intensity(level))}, "
                          f"{fmt_pct(s.pct_bw(level))} of {lv} bandwidth {s.timing()}: uncoalesced or strided "
                          "accesses, a poor layout or repeated reads keep it below the roof.")
            else:
                title = f"Reach the {lv} roof in {s.who()}: coalesce accesses, fix the layout, cut re-reads"
                pct = ctx.tab["pct_peak_bandwidth"].to_numpy(dtype=np.float64)
                reason = (f"{s.names:,} kernels ({s.stake()}) are memory-bound on {lv} at {s.range(pct, fmt_pct)} of "
                          f"{lv} bandwidth: uncoalesced or strided accesses, poor layouts or repeated reads keep them "
                          "below the roof.")
            out.append(recommendation(ctx, "memory_far", s, title=title, reason=reason, lever=Lever.MEMORY_ACCESS,
                            confidence=Confidence.MEDIUM, factor=ctx.eff, kind="efficiency"))
    return out


#: how deep each memory level sits (off-chip 0, inward up to the scratchpads): a level's bytes are cut by reuse in
#: the next one inward; levels not named here are treated as the innermost
_DEPTH = {"hbm": 0, "mall": 1, "l3": 1, "l2": 2, "l1": 3, "lds": 4, "smem": 4, "shared": 4}


def _reuse_in(hw: Hardware, level: str) -> str | None:
    """Where reuse cuts ``level``'s bytes: the next level inward on ``hw`` (its display name), or None for registers.

    Off-chip: the first on-chip cache (MALL / Infinity Cache where there is one, else L2). L2: the scratchpad a
    kernel stages tiles in (LDS on AMD, L1/shared memory on NVIDIA), named so even where the catalog has no
    figure for it. L1, LDS and any level not in :data:`_DEPTH`: registers."""
    depth = _DEPTH.get(level)
    if depth is None or depth >= 3:
        return None
    have = {lv.name: lv.display for lv in hw.levels}
    if level == "l2":
        return have.get("lds") or have.get("l1") or "L1/shared memory"
    inner = sorted((d, name) for name in have if (d := _DEPTH.get(name, 9)) > depth)
    return have[inner[0][1]] if inner else None


def _next_roof(ctx: Context, rest_parts: dict[str, np.ndarray], i: int) -> str:
    """The resource that binds kernel ``i`` once ``rest_parts``' missing one is gone: "L2", or "the fp32-vector
    compute" for a ceiling."""
    best = max(((v[i], k) for k, v in rest_parts.items() if v[i] == v[i]), default=(math.nan, ""))[1]
    return f"the {ctx.ceiling[i] or 'compute'} compute" if best == "compute" else ctx.display(best)


@rule
def onchip_tiling(ctx: Context) -> list[Recommendation]:
    """Bound by an on-chip level (L2, L1, LDS, VMEM…) rather than off-chip memory: the kernel is at that level's
    roof, under the off-chip one. Reuse one level further in cuts that level's bytes: at the L2 roof, tiles
    staged in shared memory (LDS on AMD) and reused there; at the L1 or LDS roof, register blocking (several
    outputs per thread, operands kept in registers); at the MALL (Infinity Cache) roof, tiles sized for L2
    (larger tiles, seed §4.4: I ≈ b_m·b_n/(b_m+b_n)). Gain: down to the next roof at most (the roof without
    that level), keeping the measured efficiency."""
    off = ctx.hw.offchip.name
    mask = ctx.movable & (ctx.kind == "memory") & (ctx.level != off) & pd.notna(ctx.level)
    out = []
    n = len(ctx.base_s)
    for level in distinct(ctx.level[mask]):
        idx = np.flatnonzero(mask & (ctx.level == level))
        parts = {k: v for k, v in ctx.t_res.items() if k != level}
        rest = roof_time(parts, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = rest / ctx.t_roof
        idx = idx[factor[idx] <= 1 - MIN_ROOF_CUT]
        lv = ctx.display(level)
        inner = _reuse_in(ctx.hw, level)
        if inner is None:
            verb, how = "Block {} in registers", "register blocking (several outputs per thread, operands kept in " \
                "registers) cuts"
        else:
            verb, how = f"Tile {{}} for {inner} reuse", f"tiles staged in {inner} and reused there (larger tiles) cut"
        bw = fmt_bandwidth(ctx.bandwidth(level))
        for s in subjects(ctx, idx, gain_time(ctx, factor)[idx]):
            new = float(np.nansum(rest[s.idx]))
            first = int(s.idx[np.argmax(ctx.base_s[s.idx])])
            nxt = _next_roof(ctx, parts, first)
            if s.name is not None:
                title = verb.format(s.who()) + f": it is at the {lv} roof"
                where = f"{fmt_pct(s.pct_bw(level))} of its {bw}" if s.measured else f"its {bw}; no measured time"
                reason = (f"{s.who()} is bound by {lv} at {fmt_intensity(s.intensity(level))} ({where}), under the "
                          f"{ctx.display(off)} roof at {fmt_intensity(s.intensity(off))}: {how} {lv} bytes until "
                          f"the next roof, {nxt}'s, {fmt_time(new)} instead of {fmt_time(s.roof_s)}.")
            else:
                title = verb.format(s.who()) + f": they are at the {lv} roof"
                reason = (f"{s.names:,} kernels ({s.stake()}) are bound by {lv} ({bw}), not by {ctx.display(off)}: "
                          f"{how} {lv} bytes until the next roof, {fmt_time(new)} instead of "
                          f"{fmt_time(s.roof_s)}.")
            out.append(recommendation(ctx, "onchip_tiling", s, title=title, reason=reason, lever=Lever.TILING,
                            confidence=Confidence.MEDIUM, factor=factor))
    return out


#: offchip_reuse: the innermost level's bytes must be at least this many times the off-chip bytes for the
#: kernel to count as re-reading its data (a stream reads each byte once: counting granularity alone gives 1–2×)
REUSE_MIN = 4.0


@rule
def offchip_reuse(ctx: Context) -> list[Recommendation]:
    """Bound by off-chip memory while the first on-chip cache (L2, or MALL / Infinity Cache) has room: the kernel
    sits between that cache's roof and the off-chip one. Where it re-reads its data (a matrix product by its name,
    or its busiest on-chip level moves at least REUSE_MIN× its off-chip bytes; a stream reads each byte once and
    is left to fusion and precision), blocking the work so each tile's working set stays in that cache (tile
    rasterisation or swizzling, smaller working sets per wave) cuts off-chip bytes. The off-chip bytes a perfect tiling still needs are unknown, so
    the gain is an upper bound, down to the next roof (the roof without off-chip memory): low confidence."""
    off = ctx.hw.offchip.name
    cache = next((lv.name for lv in sorted(ctx.hw.levels[1:], key=lambda lv: _DEPTH.get(lv.name, 9))
                  if f"bytes_{lv.name}" in ctx.tab and _DEPTH.get(lv.name, 9) < 3), None)
    if cache is None or f"bytes_{off}" not in ctx.tab:
        return []
    n = len(ctx.base_s)
    flops = ctx.tab["flops"].to_numpy(dtype=np.float64)
    b_off = ctx.tab[f"bytes_{off}"].to_numpy(dtype=np.float64)
    inner = np.zeros(n)
    most = np.full(n, None, dtype=object)  # the on-chip level that moves the most bytes
    for level in ctx.hw.levels[1:]:
        if f"bytes_{level.name}" in ctx.tab:
            b = ctx.tab[f"bytes_{level.name}"].to_numpy(dtype=np.float64)
            most = np.where(b > inner, level.name, most)
            inner = np.fmax(inner, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        reuse = inner / b_off
    cache_b = ctx.tab[f"bytes_{cache}"].to_numpy(dtype=np.float64)
    mask = (ctx.movable & (ctx.kind == "memory") & (ctx.level == off) & (flops > 0) & (cache_b > 0)
            & ((reuse >= REUSE_MIN) | ctx.matmul_named))
    if not mask.any():
        return []
    parts = {k: v for k, v in ctx.t_res.items() if k != off}
    rest = roof_time(parts, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = rest / ctx.t_roof
    idx = np.flatnonzero(mask & (factor <= 1 - MIN_ROOF_CUT))
    lv, cv = ctx.display(off), ctx.display(cache)
    size = ctx.hw.level_map[cache].capacity
    fit = f"the {fmt_bytes(size)} {cv}" if size else cv
    out = []
    for s in subjects(ctx, idx, gain_time(ctx, factor)[idx]):
        new = float(np.nansum(rest[s.idx]))
        if s.name is not None:
            i = int(s.idx[np.argmax(ctx.base_s[s.idx])])
            where = (f"{fmt_pct(s.pct_bw(off))} of its {fmt_bandwidth(ctx.bandwidth(off))}" if s.measured
                     else f"its {fmt_bandwidth(ctx.bandwidth(off))}; no measured time")
            ratio = float(np.nansum(inner[s.idx])) / s.total(f"bytes_{off}")
            title = f"Tile {s.who()} for {cv} reuse: it sits between the {cv} and the {lv} roof"
            reason = (f"{s.who()} is bound by {lv} at {fmt_intensity(s.intensity(off))} ({where}), while {cv} at "
                      f"{fmt_intensity(s.intensity(cache))} leaves room ({fmt_bandwidth(ctx.bandwidth(cache))}); "
                      + (f"{ctx.display(most[i])} moves {times_text(ratio)} its {lv} bytes, so it re-reads data"
                         if ratio >= REUSE_MIN else
                         f"a matrix product re-reads its operands ({ctx.display(most[i])} moves {times_text(ratio)} its "
                         f"{lv} bytes)")
                      + f": blocking each tile's working "
                      f"set to fit {fit} (tile rasterisation or swizzling) cuts {lv} bytes, at best until the next "
                      f"roof, {_next_roof(ctx, parts, i)}'s, {fmt_time(new)} instead of {fmt_time(s.roof_s)}.")
        else:
            title = f"Tile {s.who()} for {cv} reuse: they sit between the {cv} and the {lv} roof"
            reason = (f"{s.names:,} kernels ({s.stake()}) are bound by {lv} with room under the {cv} roof and re-read "
                      f"their data: blocking each tile's working set to fit {fit} cuts {lv} bytes, at best until "
                      f"the next roofs, {fmt_time(new)} instead of {fmt_time(s.roof_s)}.")
        out.append(recommendation(ctx, "offchip_reuse", s, title=title, reason=reason, lever=Lever.TILING,
                        confidence=Confidence.LOW, factor=factor))
    return out


@rule
def fusion(ctx: Context) -> list[Recommendation]:
    """Adjacent memory-bound kernels (consecutive rows of the workload, the same source and launch count, each
    bound by off-chip memory; a name seen again starts the next chain, so a loop A B A B is two A → B) each write their result off-chip for the next to read back. Fused, the chain
    reads its first input and writes its last output once: fused bytes ≈ half the first kernel's bytes plus
    half the last's (each kernel's traffic split evenly between reads and writes; a chain of four one-in,
    one-out elementwise ops falls 4×). FLOPs and on-chip traffic stay. Gain: the chain's time × (1 − fused
    roof / Σ roofs), i.e. at most time − new roof."""
    off = ctx.hw.offchip.name
    col = f"bytes_{off}"
    if col not in ctx.tab:
        return []
    ok = ctx.movable & (ctx.kind == "memory") & (ctx.level == off)
    count = ctx.tab["count"].to_numpy()
    src = ctx.tab["source"].astype(str).to_numpy()
    names = ctx.names
    link = np.zeros(len(ok), dtype=bool)  # link[i]: row i continues the chain of row i-1
    if len(ok) > 1:  # a repeated launch of the same kernel is a loop, not a producer and its consumer
        link[1:] = (ok[1:] & ok[:-1] & (count[1:] == count[:-1]) & (src[1:] == src[:-1])
                    & (names[1:] != names[:-1]))
    starts = np.flatnonzero(ok & ~link)
    chain_id = np.cumsum(ok & ~link) - 1
    lengths = np.bincount(chain_id[ok], minlength=len(starts))
    b = ctx.tab[col].to_numpy(dtype=np.float64)
    beta = ctx.bandwidth(off)
    roof = ctx.t_roof
    chains: dict[tuple[str, ...], list[np.ndarray]] = {}
    for start, length in zip(starts[lengths >= 2], lengths[lengths >= 2], strict=True):
        # a name seen again starts a new chain: A B A B is a loop of (A → B), not one kernel of four
        seen: set[str] = set()
        first = start
        for i in range(start, start + length + 1):
            if i == start + length or names[i] in seen:
                if i - first >= 2:
                    rows = np.arange(first, i)
                    chains.setdefault(tuple(names[rows]), []).append(rows)
                seen, first = set(), i
            if i < start + length:
                seen.add(names[i])
    factor = np.ones(len(ok))
    found = []
    for key, occurrences in chains.items():
        rows = np.concatenate(occurrences)
        sums = []
        for r in occurrences:
            fused_bytes = (b[r[0]] + b[r[-1]]) / 2
            parts = {"compute": np.nansum(ctx.t_res["compute"][r]), off: fused_bytes / beta}
            for k, v in ctx.t_res.items():
                if k not in ("compute", off):
                    parts[k] = np.nansum(v[r])
            new = max(v for v in parts.values() if v == v)
            f = new / roof[r].sum()
            factor[r] = f
            sums.append((b[r].sum(), fused_bytes, roof[r].sum(), new))
        if factor[rows[0]] > 1 - MIN_ROOF_CUT:
            continue
        found.append((key, rows, sums))
    out = []
    for key, rows, sums in found:
        s = Subject(ctx, rows, None)
        total_b, fused_b = sum(x[0] for x in sums), sum(x[1] for x in sums)
        old, new = sum(x[2] for x in sums), sum(x[3] for x in sums)
        shown = [short(k, 28) for k in key]
        chain = " → ".join(shown) if len(shown) <= 4 else f"{shown[0]} → {shown[1]} → … → {shown[-1]}"
        lv = ctx.display(off)
        times = f" occurs {len(sums):,} times and" if len(sums) > 1 else ""
        title = f"Fuse {chain}" + (f" ({len(key)} kernels)" if len(key) > 4 else "")
        reason = (f"This chain of {len(key)} adjacent memory-bound kernels{times} takes {s.stake()}: each writes its "
                  f"result to {lv} for the next to read back. Fused, it moves about {fmt_bytes(fused_b)} instead of "
                  f"{fmt_bytes(total_b)} ({total_b / fused_b:.2g}× less traffic), so its roof falls from "
                  f"{fmt_time(old)} to {fmt_time(new)}"
                  + (f"; at its measured {fmt_pct(old / s.time_s)} of the roof, {fmt_time(s.time_s)} becomes "
                     f"{fmt_time(s.time_s * new / old)}." if s.measured else "."))
        out.append(recommendation(ctx, "fusion", s, title=title, reason=reason, lever=Lever.FUSION,
                        confidence=Confidence.MEDIUM, factor=factor, keep_order=True))
    return out
