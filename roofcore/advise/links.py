"""Rules for link-bound kernels (PCIe, NVLink, ICI, xGMI…): faster transfers below the link roof; at it, less
traffic or traffic hidden behind compute."""

from __future__ import annotations

import numpy as np

from ..units import fmt_bandwidth, fmt_bytes, fmt_intensity, fmt_pct, fmt_time
from .model import Confidence, Lever, Recommendation
from .rule_context import (
    FAR_BELOW,
    MIN_ROOF_CUT,
    NEAR_ROOF,
    Context,
    distinct,
    gain_time,
    recommendation,
    roof_time,
    rule,
    subjects,
)


def _link_advice(link: str) -> str:
    if link == "pcie":
        return "pinned (page-locked) host memory, fewer and larger copies, and copies overlapped with compute"
    return "larger messages, a better collective algorithm or topology, and communication overlapped with compute"


@rule
def link_far(ctx: Context) -> list[Recommendation]:
    """Link-bound (PCIe, NVLink, ICI, xGMI…) and measured at 10–80% of the link's bandwidth: transfers are
    small, synchronous or from pageable memory. Larger, pinned, asynchronous transfers overlapped with
    compute move them up to the link roof. Gain: at most the headroom (time − t_roof)."""
    mask = ctx.trusted & ctx.timed & (ctx.kind == "link") & (ctx.eff >= FAR_BELOW) & (ctx.eff < NEAR_ROOF)
    out = []
    for link in distinct(ctx.level[mask]):
        idx = np.flatnonzero(mask & (ctx.level == link))
        lk = ctx.display(link)
        for s in subjects(ctx, idx, gain_time(ctx, ctx.eff)[idx]):
            pageable = link == "pcie" and s.name is not None and "pageable" in s.name.lower()
            if s.name is not None:
                title = f"Speed up the {lk} transfers of {s.who()}"
                reason = (f"{s.who()} is link-bound on {lk}: {fmt_bytes(s.total(f'bytes_{link}'))} at "
                          f"{fmt_pct(s.pct_bw(link))} of its {fmt_bandwidth(ctx.bandwidth(link))} {s.timing()}"
                          + (", from pageable host memory" if pageable else "")
                          + f"; use {_link_advice(link)}.")
            else:
                pct = ctx.tab["pct_peak_bandwidth"].to_numpy(dtype=np.float64)
                title = f"Speed up the {lk} transfers of {s.who()}"
                reason = (f"{s.names:,} kernels ({s.stake()}) are link-bound on {lk} at {s.range(pct, fmt_pct)} of its "
                          f"{fmt_bandwidth(ctx.bandwidth(link))}; use {_link_advice(link)}.")
            out.append(recommendation(ctx, "link_far", s, title=title, reason=reason, lever=Lever.OVERLAP,
                            confidence=Confidence.HIGH if pageable else Confidence.MEDIUM, factor=ctx.eff,
                            kind="efficiency"))
    return out


@rule
def link_near(ctx: Context) -> list[Recommendation]:
    """Link-bound at the link roof (≥ 80% of it, or untimed): only less traffic or hiding it helps — a
    sharding that communicates less (seed §4.3: the compute/communication flip depends on the sharded
    dimension), compressed or lower-precision messages, or communication overlapped with compute. Gain: down
    to the kernel's next roof (its time without the link) at most."""
    mask = ctx.near & (ctx.kind == "link")
    n = len(mask)
    out = []
    for link in distinct(ctx.level[mask]):
        rest = roof_time({k: v for k, v in ctx.t_res.items() if k != link}, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.nan_to_num(rest, nan=0.0) / ctx.t_roof
        idx = np.flatnonzero(mask & (ctx.level == link) & (factor <= 1 - MIN_ROOF_CUT))
        lk = ctx.display(link)
        for s in subjects(ctx, idx, gain_time(ctx, factor)[idx]):
            new = float(np.nansum(np.nan_to_num(rest, nan=0.0)[s.idx]))
            first = ctx.ceiling[int(s.idx[0])]
            ridge = ctx.ridge(first if first else ctx.hw.default_ceiling, link)
            if s.name is not None:
                title = f"Cut or hide the {lk} traffic of {s.who()}: reshard, compress, overlap"
                reason = (f"{s.who()} is link-bound on {lk} at {fmt_intensity(s.intensity(link))}, under the ridge "
                          f"{fmt_intensity(ridge)} {s.timing()}: a sharding that communicates less, compressed or "
                          f"lower-precision messages, or overlap with compute; hidden completely it would take "
                          f"{fmt_time(new)}, its next roof.")
            else:
                title = f"Cut or hide the {lk} traffic of {s.who()}: reshard, compress, overlap"
                reason = (f"{s.names:,} kernels ({s.stake()}) are link-bound on {lk} at their roof: a sharding that "
                          "communicates less, compressed or lower-precision messages, or overlap with compute; hidden "
                          f"completely they would take {fmt_time(new)}, their next roofs.")
            out.append(recommendation(ctx, "link_near", s, title=title, reason=reason, lever=Lever.RESHARDING,
                            confidence=Confidence.LOW, factor=factor))
    return out
