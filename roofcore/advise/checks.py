"""Rules that check the data and find latency: a kernel above its roof (an input is wrong), kernels the
roofline cannot place (FLOPs or bytes missing), many tiny launches, and kernels far below both roofs."""

from __future__ import annotations

import numpy as np

from ..counting import kernel_counts, rows_are_launches
from ..models import Workload
from ..roofline import Flag
from ..units import fmt_pct, fmt_time
from ..wording import above_roof_messages
from .model import Confidence, Lever, Recommendation, short, times_text
from .rule_context import (
    FAR_BELOW,
    MIN_TINY_LAUNCHES,
    NEAR_ROOF,
    Context,
    Subject,
    gain_time,
    recommendation,
    rule,
    subjects,
)


@rule
def above_roof(ctx: Context) -> list[Recommendation]:
    """A kernel measured faster than its roofline allows means an input is wrong (FLOPs, bytes, their unit,
    the precision, sparsity, or per-die scope). Nothing else about it can be trusted, so every other rule
    leaves it out; the engine's above-roof flag says which input is most likely wrong."""
    idx = np.flatnonzero(ctx.above)
    out = []
    for s in subjects(ctx, idx, ctx.base_s[idx]):
        worst = int(s.idx[np.nanargmax(ctx.eff[s.idx])])
        msg = above_roof_messages(ctx.tab, np.array([worst]), ctx.hw)[0]
        if s.name is not None:
            title = f"Check the counts of {s.who()}: it beats its roofline"
            reason = msg
        else:
            title = f"Check the counts of {s.who()} that beat their roofline"
            reason = (f"{s.names:,} kernels ({s.stake()}) run faster than their roofline allows, up to "
                      f"{times_text(float(np.nanmax(ctx.eff[s.idx])))} the roof. The worst, {short(ctx.names[worst])}: "
                      + msg)
        out.append(recommendation(ctx, "above_roof", s, title=title, reason=reason, lever=Lever.DATA_CHECK,
                        confidence=Confidence.HIGH, factor=None))
    return out


@rule
def missing_data(ctx: Context) -> list[Recommendation]:
    """Kernels with unknown FLOPs or off-chip bytes (or a precision the device has no ceiling for) have a
    partial roof or none: no rule can judge them or size a gain. Say how much time that leaves unexplained,
    so the user collects the counters before trusting the rest of the advice."""
    flags = ctx.analysis.result(ctx.hw.id).flags.astype(np.int64)
    idx = np.flatnonzero((flags & int(Flag.MISSING_FLOPS | Flag.MISSING_BYTES | Flag.NO_CEILING)) != 0)
    if not len(idx):
        return []
    s = Subject(ctx, idx, None)
    frame = ctx.analysis.workload.frame

    def kernels(bit: Flag) -> int:  # counted as every page counts kernels (launches of one kernel are one)
        return kernel_counts(frame, idx[(flags[idx] & int(bit)) != 0])[0]

    miss_f, miss_b, no_c = kernels(Flag.MISSING_FLOPS), kernels(Flag.MISSING_BYTES), kernels(Flag.NO_CEILING)
    what = ", ".join(p for p in (f"{miss_f:,} without FLOPs" if miss_f else "",
                                 f"{miss_b:,} without off-chip bytes" if miss_b else "",
                                 f"{no_c:,} in a precision {ctx.hw.id} has no ceiling for" if no_c else "") if p)
    held = s.stake() if ctx.timed[idx].any() else "no measured time"
    n, launches = kernel_counts(frame, idx)
    one = n == 1
    held = (f"{launches:,} launches; " if launches != n and rows_are_launches(frame) else "") + held
    title = f"Collect FLOPs and bytes for {n:,} kernel{'' if one else 's'}"
    reason = (f"{n:,} kernel{'' if one else 's'} ({held}) cannot be placed on the roofline ({what}), so no rule "
              f"can judge {'it' if one else 'them'}; {_collect_hint(ctx.analysis.workload)}.")
    return [recommendation(ctx, "missing_data", s, title=title, reason=reason, lever=Lever.DATA_CHECK,
                 confidence=Confidence.HIGH, factor=None)]


#: how to get FLOPs and bytes, by the input format's family (the part of its name before the first '-')
_COLLECT_HINTS = {
    "ncu": "profile with the SpeedOfLight_RooflineChart section, or the FLOP and dram__bytes metrics, on the raw page",
    "nsys": "nsys gives times only: load a kernel inventory or an Nsight Compute export with it",
    "rocprof": "profile with rocprof-compute (pmc_perf.csv with its sysinfo.csv) for FLOP and HBM counters",
    "jax": "add bytes accessed and flops from compiled.cost_analysis() for every program",
    "xprof": "export the Roofline Model tool's per-op FLOP rates and bandwidths",
    "inventory": "give flops and bytes (or an op with its shapes) for these rows",
}


def _collect_hint(workload: Workload) -> str:
    """How to collect what is missing, per input format family; a PyTorch trace's as its file allows (no
    record_shapes advice for a trace recorded with shapes: :mod:`roofcore.ingest.kineto_hint`)."""
    from ..ingest.kineto_hint import unknown_flops_hint

    fams = [f.split("-")[0] for f in workload.formats]
    hints = list(dict.fromkeys(unknown_flops_hint(workload) if fam == "pytorch" else _COLLECT_HINTS[fam]
                               for fam in fams if fam == "pytorch" or fam in _COLLECT_HINTS))
    hints = [h for h in hints if h]
    return "; ".join(hints) if hints else "collect FLOP and off-chip byte counters"


# --------------------------------------------------------------------------------------------- latency


def _tiny(ctx: Context) -> np.ndarray:
    """Timed, trusted kernels launched in under 1 µs each, when there are MIN_TINY_LAUNCHES or more launches."""
    count = np.maximum(ctx.tab["count"].to_numpy(dtype=np.int64), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per = ctx.base_s / count
    tiny = ctx.trusted & ctx.timed & (per < 1e-6) & (ctx.eff < NEAR_ROOF)
    return tiny if count[tiny].sum() >= MIN_TINY_LAUNCHES else np.zeros_like(tiny)


@rule
def tiny_launches(ctx: Context) -> list[Recommendation]:
    """Many launches shorter than a microsecond are launch-bound: the launch costs more than the work, and no
    kernel tuning helps. Batch them into fewer launches (graph capture, persistent kernels, fusion). Gain:
    at most each kernel's headroom (time − t_roof)."""
    mask = _tiny(ctx)
    idx = np.flatnonzero(mask)
    if not len(idx):
        return []
    s = Subject(ctx, idx, None)
    launches = int(ctx.tab["count"].to_numpy(dtype=np.int64)[idx].sum())
    graphs = {"NVIDIA": "CUDA graphs", "AMD": "HIP graphs"}.get(ctx.hw.vendor, "graph capture")
    one = s.names == 1
    who = f"{short(ctx.names[int(idx[0])])} ({s.stake()}) launches" if one else \
        f"{s.names:,} kernels ({s.stake()}) launch"
    title = f"Batch {launches:,} tiny launches into fewer kernels ({graphs}, persistent kernels, fusion)"
    reason = (f"{who} {launches:,} times at {fmt_time(s.time_s / launches)} per launch on average, at "
              f"{fmt_pct(s.eff)} of {'its' if one else 'their'} roof: under 1 µs a launch costs more than its work, "
              "so only fewer launches help.")
    return [recommendation(ctx, "tiny_launches", s, title=title, reason=reason, lever=Lever.LAUNCH_OVERHEAD,
                 confidence=Confidence.MEDIUM, factor=ctx.eff, kind="efficiency")]


@rule
def below_both_roofs(ctx: Context) -> list[Recommendation]:
    """Below both roofs (measured time over 10× the roofline time) the kernel is waiting on something the
    roofline does not model: launch overhead, synchronisation, low occupancy, cache thrashing or latency.
    Say so plainly and point to a timeline or stall profile. Gain: at most the headroom (time − t_roof)."""
    mask = ctx.trusted & ctx.timed & (ctx.eff < FAR_BELOW) & ~_tiny(ctx)
    idx = np.flatnonzero(mask)
    out = []
    for s in subjects(ctx, idx, gain_time(ctx, ctx.eff)[idx]):
        if s.name is not None:
            i = int(s.idx[0])
            title = f"Find the latency in {s.who()}: it runs at {fmt_pct(s.eff)} of its roof"
            reason = (f"{s.who()} takes {fmt_time(s.time_s)}, {s.time_s / s.roof_s:,.0f}× its roofline time "
                      f"{fmt_time(s.roof_s)} (bound by {_bound_text(ctx, i)}): launch overhead, synchronisation, low "
                      "occupancy or cache thrashing dominate, which the roofline cannot diagnose further; look at "
                      "its timeline and stall reasons.")
        else:
            title = f"Find the latency in {s.who()} that run under 10% of their roof"
            reason = (f"{s.names:,} kernels ({s.stake()}) run at {s.range(ctx.eff, fmt_pct)} of their roof: "
                      "launch overhead, synchronisation, low occupancy or cache thrashing dominate, which the "
                      "roofline cannot diagnose further; look at their timeline and stall reasons.")
        out.append(recommendation(ctx, "below_both_roofs", s, title=title, reason=reason, lever=Lever.LATENCY,
                        confidence=Confidence.LOW, factor=ctx.eff, kind="efficiency"))
    return out


def _bound_text(ctx: Context, i: int) -> str:
    kind = ctx.kind[i]
    if kind == "compute":
        return f"the {ctx.tab['ceiling'].iat[i]} compute roof"
    return f"{ctx.display(ctx.level[i])} bandwidth"
