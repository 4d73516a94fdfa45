"""Bottleneck recommendations: :data:`RULES` turn an :class:`~roofcore.analyze.Analysis` into ranked actions.

Each rule is a small function ``rule(ctx) -> list[Recommendation]`` registered in :data:`RULES`, its docstring
the explanation shown to users. A rule reads the engine's numbers for one device (:class:`Context`: the
per-kernel table, roof times per resource, measured times) and never recomputes roofline math beyond
"the same formulas with one input changed" (fewer bytes, another ceiling).

**Gains** (seconds, over the workload). Each recommendation claims, per kernel, a time factor of one of two
kinds:

- *efficiency* — the action moves the kernel up to its roof (coalescing, vectorisation, latency): the factor
  is ``t_roof / time``, so the claim is at most the headroom ``time − t_roof``;
- *roof* — the action moves the roof (fusion, precision, batch, tiling, resharding): the factor is
  ``new_roof / t_roof`` and the kernel is assumed to keep its measured efficiency, so the claim is
  ``time·(1 − new_roof/t_roof)`` ≤ ``time − new_roof`` (untimed kernels: ``t_roof − new_roof``).

**De-duplication** (:func:`advise`): actions are taken greedily, largest standalone gain first. Per kernel
the efficiency part is claimed once, and roof actions do not compound: a kernel's time after several roof
actions is its time under the best one alone. Each recommendation counts only what it saves beyond the
actions ranked above it, so no second of any kernel is counted twice and the total never exceeds the
workload's time. Data checks (the numbers are wrong or missing) claim nothing and are listed first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

import numpy as np
import pandas as pd

from .analyze import Analysis
from .models import DTYPE_SIZE, Hardware
from .output import above_roof_messages
from .roofline import FAR_BELOW_EFFICIENCY, Flag
from .units import fmt_bandwidth, fmt_bytes, fmt_intensity, fmt_pct, fmt_rate, fmt_time

#: efficiency (t_roof / measured time) at or above which a kernel is "near its roof": sustained rates are
#: typically 80–85% of the advertised peak on GPUs (seed "Roofline Analysis: A Comprehensive Guide" §3.3)
NEAR_ROOF = 0.80
#: below this efficiency a kernel is "far below both roofs" (the engine's flag): latency, not the roofline
FAR_BELOW = FAR_BELOW_EFFICIENCY
#: a device's FP64 is "weak" when its best fp64 ceiling is at most this fraction of its best fp32 ceiling
#: (consumer and inference GPUs: 1/32–1/64; A100, H100, MI250X: 1/1). Compared with fp32, not bf16, so
#: data-centre GPUs whose fp64 matches their fp32 are not told to drop it.
WEAK_FP64_RATIO = 1 / 8
#: a roof-moving action must cut its kernels' roof time by at least this fraction to be recommended
MIN_ROOF_CUT = 0.05
#: "many tiny launches": at least this many launches of kernels shorter than 1 µs each
MIN_TINY_LAUNCHES = 10
#: one recommendation per kernel name for up to this many names per action; the rest share one
MAX_SPLIT = 3
#: kernel names a recommendation stores (largest gain first); ``kernel_count`` has them all
MAX_NAMES = 20
#: kernel names that say "matrix product": running them on matrix units is then likely possible
_MATMUL_NAME = re.compile(r"gemm|matmul|\bmm\b|bmm|addmm|conv|linear|dot|einsum|cublas|cutlass|xmma", re.I)

#: precisions from widest to narrowest; one step down is the next smaller element size
_LADDER = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4")


class Lever(StrEnum):
    """What an action changes."""

    FUSION = "fusion"
    TILING = "tiling"
    PRECISION = "precision"
    BATCH = "batch"
    OVERLAP = "overlap"
    RESHARDING = "resharding"
    ALGORITHM = "algorithm"
    MORE_HARDWARE = "more_hardware"  #: reserved for plan-level advice (compute_near names it in its title)
    LAUNCH_OVERHEAD = "launch_overhead"
    LATENCY = "latency"
    MATRIX_UNITS = "matrix_units"
    VECTORISATION = "vectorisation"
    STALLS = "stalls"
    MEMORY_ACCESS = "memory_access"
    DATA_CHECK = "data_check"


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True)
class Recommendation:
    """One action on one device, with the kernels it applies to and the seconds it would save."""

    rule: str  #: the rule function's name
    title: str  #: a short imperative action
    lever: Lever
    hardware: str  #: device id
    kernels: tuple[str, ...]  #: kernel names, largest gain first (at most MAX_NAMES)
    kernel_count: int  #: kernels (rows of the workload) it applies to
    name_count: int  #: distinct kernel names among them
    reason: str  #: one or two sentences with the numbers that triggered it
    gain_s: float  #: s saved over the workload, after the higher-ranked actions (see module docstring)
    standalone_gain_s: float  #: s saved if this were the only action
    at_stake_s: float  #: s its kernels take now (measured, else roofline)
    confidence: Confidence
    #: row positions in the workload frame (largest saving first)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False, compare=False)
    #: per row of ``rows``: the time factor the action applies; ``kind`` says whether it reaches the roof
    #: ("efficiency"), moves it ("roof"), or claims nothing ("none": data checks and diagnoses)
    factors: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    kind: str = field(default="roof", repr=False, compare=False)

    def to_json(self) -> dict:
        return {"rule": self.rule, "title": self.title, "lever": self.lever.value, "hardware": self.hardware,
                "kernels": list(self.kernels), "kernel_count": self.kernel_count, "name_count": self.name_count,
                "reason": self.reason, "gain_s": self.gain_s, "standalone_gain_s": self.standalone_gain_s,
                "at_stake_s": self.at_stake_s, "confidence": self.confidence.value}


@dataclass(frozen=True)
class Advice:
    """The ranked recommendations for one device, and what doing all of them would save."""

    hardware: str
    items: tuple[Recommendation, ...]
    total_gain_s: float  #: s, Σ gain_s (de-duplicated), never more than workload_time_s
    workload_time_s: float  #: s, Σ over kernels of the measured time, else the roofline time
    basis: str  #: "measured", "roofline" or "mixed" (some kernels timed)
    #: share of ``workload_time_s`` in kernels whose roofline is known (None: no time to share)
    known_share: float | None = None
    #: s per kernel (workload row) before and after every action: Σ(before − after) is total_gain_s
    before_s: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    after_s: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    @property
    def speedup(self) -> float | None:
        rest = self.workload_time_s - self.total_gain_s
        return self.workload_time_s / rest if rest > 0 else None

    def summary(self) -> str:
        """One sentence: the total achievable gain."""
        if not self.items:
            return "No recommendation: every kernel is at its roof or has no numbers a rule can judge."
        if self.total_gain_s <= 0:
            return (f"The roofline bounds no saving here ({fmt_time(self.workload_time_s)} of {self.basis} time): "
                    "see the checks and diagnoses below.")
        speed = self.speedup
        text = (f"Doing all of these saves up to {fmt_time(self.total_gain_s)} of {fmt_time(self.workload_time_s)} "
                f"({self.basis} time, {fmt_pct(self.total_gain_s / self.workload_time_s)})"
                + (f": {_times(speed)} faster" if speed else ""))
        sure = sum(r.gain_s for r in self.items if r.confidence is not Confidence.LOW)
        if fmt_time(sure) != fmt_time(self.total_gain_s):  # a low-confidence part that shows at 3 digits
            text += (f"; {fmt_time(sure)} of it from high- or medium-confidence actions" if sure > 0 else
                     "; all of it from low-confidence actions")
        if self.known_share is not None and self.known_share < 0.995:
            text += (f"; the roofline is known for {_pct2(self.known_share)} of that time, so the rest cannot be judged"
                     if self.known_share > 0 else "; no kernel's roofline is known")
        return text + "."

    def to_json(self) -> dict:
        return {"hardware": self.hardware, "workload_time_s": self.workload_time_s, "basis": self.basis,
                "known_share": self.known_share, "total_gain_s": self.total_gain_s, "summary": self.summary(),
                "items": [r.to_json() for r in self.items]}


# --------------------------------------------------------------------------------------------- context


@dataclass(frozen=True)
class Context:
    """What every rule reads: one device's results, with the arrays rules need, aligned with the workload rows."""

    analysis: Analysis
    hw: Hardware
    tab: pd.DataFrame  #: Analysis.table(hw_id, messages=False)
    base_s: np.ndarray  #: s per kernel gains come out of: measured time (> 0), else t_roof, else 0
    timed: np.ndarray  #: bool: a measured time > 0
    eff: np.ndarray  #: t_roof / time (NaN untimed)
    trusted: np.ndarray  #: bool: a complete roof (FLOPs, bytes, ceiling known), not above it, time not ≤ 0
    above: np.ndarray  #: bool: above the roof (an input is wrong)
    kind: np.ndarray  #: "compute" | "memory" | "link" | "" (no bound) per kernel
    level: np.ndarray  #: the memory level or link with the longest time (object; None without bytes)
    t_res: dict[str, np.ndarray]  #: s per resource: "compute" and every level and link of the device present
    workload_time_s: float
    basis: str
    names: np.ndarray  #: kernel names (str, object array)
    ceiling: np.ndarray  #: ceiling key per kernel ("" without one; str array)
    precision: np.ndarray  #: precision per kernel (object; None unknown)
    unit: np.ndarray  #: declared unit per kernel (object; None unknown)

    @cached_property
    def matmul_named(self) -> np.ndarray:
        """Kernels whose name looks like a matrix product (gemm, conv, matmul…)."""
        return np.array([bool(_MATMUL_NAME.search(x)) for x in self.names], dtype=bool)

    @property
    def t_roof(self) -> np.ndarray:
        return self.tab["t_roof_s"].to_numpy(dtype=np.float64)

    @property
    def movable(self) -> np.ndarray:
        """Kernels a roof-moving action can help: trusted and not latency-bound (untimed, or ≥ FAR_BELOW)."""
        return self.trusted & (~self.timed | (self.eff >= FAR_BELOW))

    @property
    def near(self) -> np.ndarray:
        """Trusted kernels at their roof: measured at ≥ NEAR_ROOF of it, or untimed (placed on it)."""
        return self.trusted & (~self.timed | (self.eff >= NEAR_ROOF))

    def display(self, name: str) -> str:
        res = {**self.hw.level_map, **self.hw.link_map}.get(name)
        return res.display if res else name

    def bandwidth(self, name: str) -> float:
        res = {**self.hw.level_map, **self.hw.link_map}[name]
        return (res.achievable or res.bandwidth) if self.analysis.achievable else res.bandwidth

    def peak(self, key: str) -> float:
        c = self.hw.ceiling_map[key]
        return (c.achievable or c.peak) if self.analysis.achievable else c.peak


def context(analysis: Analysis, hw_id: str) -> Context:
    """The arrays every rule reads for ``hw_id``, built once per :func:`advise` call (vectorised)."""
    r = analysis.result(hw_id)
    tab = analysis.table(hw_id, messages=False)
    t = tab["time_s"].to_numpy(dtype=np.float64)
    roof = tab["t_roof_s"].to_numpy(dtype=np.float64)
    flags = r.flags.astype(np.int64)
    timed = ~np.isnan(t) & (t > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        eff = np.where(timed, roof / t, np.nan)
    above = (flags & int(Flag.ABOVE_ROOF)) != 0
    partial = (flags & int(Flag.MISSING_FLOPS | Flag.MISSING_BYTES | Flag.NO_CEILING | Flag.ZERO_TIME)) != 0
    trusted = ~np.isnan(roof) & (roof > 0) & ~above & ~partial
    base = np.where(timed, t, np.where(np.isnan(t) & ~np.isnan(roof), roof, 0.0))
    kinds = np.array(["", *r.resource_kinds], dtype=object)
    kind = kinds[r.bound_idx.astype(np.int64) + 1]
    names = np.array([None, *r.resources], dtype=object)
    level = np.where(r.mem_idx > 0, names[r.mem_idx.astype(np.int64) + 1], None)
    flops = tab["flops"].to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_res = {"compute": flops / tab["peak_flops_per_s"].to_numpy(dtype=np.float64)}
        for i, name in enumerate(r.resources):
            if i:
                t_res[name] = tab[f"bytes_{name}"].to_numpy(dtype=np.float64) / r.bandwidths[i]
    basis = "measured" if timed.all() else "roofline" if not timed.any() else "mixed"

    def obj(col: str) -> np.ndarray:
        return np.array([None if v is None or v != v else v for v in tab[col].to_numpy(dtype=object)], dtype=object)

    return Context(analysis=analysis, hw=r.hardware, tab=tab, base_s=base, timed=timed, eff=eff, trusted=trusted,
                   above=above, kind=kind, level=level, t_res=t_res, workload_time_s=float(base.sum()), basis=basis,
                   names=tab["name"].astype(str).to_numpy(dtype=object),
                   ceiling=tab["ceiling"].fillna("").astype(str).to_numpy(dtype=object),
                   precision=obj("precision"), unit=obj("unit"))


def _roof(parts: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The roofline time from per-resource times (NaN unknown drops out; all unknown → NaN)."""
    out = np.full(n, -np.inf)
    for v in parts.values():
        out = np.fmax(out, v)
    return np.where(np.isfinite(out), out, np.nan)


# --------------------------------------------------------------------------------------------- subjects


@dataclass(frozen=True)
class _Subject:
    """The kernels one recommendation is about: one kernel name (all its rows), or several names."""

    ctx: Context
    idx: np.ndarray  #: row positions
    name: str | None  #: the one kernel name, or None for several

    def total(self, col: str) -> float:
        return float(np.nansum(self.ctx.tab[col].to_numpy(dtype=np.float64)[self.idx]))

    @cached_property
    def names(self) -> int:
        return len(pd.unique(self.ctx.names[self.idx]))

    @property
    def time_s(self) -> float:
        return float(self.ctx.base_s[self.idx].sum())

    @property
    def roof_s(self) -> float:
        return float(np.nansum(self.ctx.t_roof[self.idx]))

    @property
    def measured(self) -> bool:
        return bool(self.ctx.timed[self.idx].all())

    @property
    def eff(self) -> float:
        return self.roof_s / self.time_s if self.time_s > 0 else math.nan

    def intensity(self, level: str) -> float:
        b = self.total(f"bytes_{level}")
        return self.total("flops") / b if b > 0 else math.inf

    def pct_bw(self, level: str) -> float:
        return self.total(f"bytes_{level}") / self.time_s / self.ctx.bandwidth(level)

    def who(self) -> str:
        return _short(self.name) if self.name is not None else f"{self.names:,} kernels"

    def stake(self) -> str:
        w = self.ctx.workload_time_s
        return f"{fmt_time(self.time_s)}, {fmt_pct(self.time_s / w) if w > 0 else '–'} of the workload"

    def timing(self) -> str:
        """'(9.59 ms measured, 52 µs at the roof)' or '(no measured time: 52 µs at the roof)'."""
        if self.measured:
            return f"({fmt_time(self.time_s)} measured, {fmt_time(self.roof_s)} at the roof)"
        return f"(no measured time: {fmt_time(self.roof_s)} at the roof)"

    def range(self, values: np.ndarray, fmt: Callable[[float], str]) -> str:
        v = values[self.idx]
        v = v[np.isfinite(v)]
        if not len(v):
            return "–"
        lo, hi = fmt(float(v.min())), fmt(float(v.max()))
        if lo == hi:
            return lo
        lo_num, _, lo_unit = lo.partition(" ")
        hi_unit = hi.partition(" ")[2]
        return f"{lo_num}–{hi}" if lo_unit and lo_unit == hi_unit else f"{lo}–{hi}"


def _times(x: float) -> str:
    """A factor for text: '2.8×', '37×', '1,200×'."""
    return f"{x:.2g}×" if x < 10 else f"{x:,.0f}×"


def _pct2(x: float) -> str:
    """A share with two significant figures, never rounded up to the whole: '62%', '4.2%', '>99%'."""
    from .analyze import _share

    return _share(x)


def _short(text: object, width: int = 48) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _subjects(ctx: Context, idx: np.ndarray, gain: np.ndarray) -> list[_Subject]:
    """One subject per kernel name for the MAX_SPLIT names with the largest gain, the rest as one subject."""
    if not len(idx):
        return []
    names = ctx.names[idx]
    per = pd.Series(gain, index=names).groupby(level=0, sort=False).sum().sort_values(ascending=False, kind="stable")
    if len(per) <= MAX_SPLIT + 1:
        top, rest = list(per.index), []
    else:
        top, rest = list(per.index[:MAX_SPLIT]), list(per.index[MAX_SPLIT:])
    out = [_Subject(ctx, idx[names == n], n) for n in top]
    if rest:
        out.append(_Subject(ctx, idx[pd.Series(names).isin(rest).to_numpy()], None))
    return out


def _rec(ctx: Context, rule: str, subj: _Subject, *, title: str, reason: str, lever: Lever,
         confidence: Confidence, factor: np.ndarray | None, kind: str = "roof",
         keep_order: bool = False) -> Recommendation:
    """A recommendation for ``subj``; ``factor`` (aligned with the workload rows) is the time multiplier per kernel.
    Kernels are listed largest saving first, or in workload order with ``keep_order`` (a fusion chain)."""
    idx = subj.idx
    if factor is None:  # a diagnosis or a data check: it claims no time
        kind = "none"
    f = np.ones(len(idx)) if factor is None else np.clip(np.nan_to_num(factor[idx], nan=1.0), 0.0, 1.0)
    saved = ctx.base_s[idx] * (1.0 - f)
    order = np.arange(len(idx)) if keep_order else np.argsort(-saved, kind="stable")
    idx, f, saved = idx[order], f[order], saved[order]
    names = pd.unique(ctx.names[idx])
    gain = float(saved.sum())
    return Recommendation(rule=rule, title=title, lever=lever, hardware=ctx.hw.id,
                          kernels=tuple(str(x) for x in names[:MAX_NAMES]), kernel_count=len(idx),
                          name_count=len(names), reason=reason, gain_s=gain, standalone_gain_s=gain,
                          at_stake_s=subj.time_s, confidence=confidence, rows=idx.astype(np.int64), factors=f, kind=kind)


def _gain(ctx: Context, factor: np.ndarray) -> np.ndarray:
    return ctx.base_s * (1.0 - np.clip(np.nan_to_num(factor, nan=1.0), 0.0, 1.0))


# --------------------------------------------------------------------------------------------- registry

Rule = Callable[[Context], list[Recommendation]]
#: every rule, in the order ties are ranked; each function's docstring is its explanation
RULES: list[Rule] = []


def rule(fn: Rule) -> Rule:
    """Register ``fn`` in :data:`RULES` (a duplicate name is an error); its docstring becomes ``fn.explanation``."""
    if any(r.__name__ == fn.__name__ for r in RULES):
        raise ValueError(f"rule {fn.__name__!r} is already registered")
    fn.explanation = " ".join((fn.__doc__ or "").split())  # type: ignore[attr-defined]
    RULES.append(fn)
    return fn


def explain() -> dict[str, str]:
    """Rule name -> explanation, in rank order."""
    return {r.__name__: r.explanation for r in RULES}  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------- data checks


@rule
def above_roof(ctx: Context) -> list[Recommendation]:
    """A kernel measured faster than its roofline allows means an input is wrong (FLOPs, bytes, their unit,
    the precision, sparsity, or per-die scope). Nothing else about it can be trusted, so every other rule
    leaves it out; the engine's above-roof flag says which input is most likely wrong."""
    idx = np.flatnonzero(ctx.above)
    out = []
    for s in _subjects(ctx, idx, ctx.base_s[idx]):
        worst = int(s.idx[np.nanargmax(ctx.eff[s.idx])])
        msg = above_roof_messages(ctx.tab, np.array([worst]), ctx.hw)[0]
        if s.name is not None:
            title = f"Check the counts of {s.who()}: it beats its roofline"
            reason = msg
        else:
            title = f"Check the counts of {s.who()} that beat their roofline"
            reason = (f"{s.names:,} kernels ({s.stake()}) run faster than their roofline allows, up to "
                      f"{_times(float(np.nanmax(ctx.eff[s.idx])))} the roof. The worst, {_short(ctx.names[worst])}: "
                      + msg)
        out.append(_rec(ctx, "above_roof", s, title=title, reason=reason, lever=Lever.DATA_CHECK,
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
    s = _Subject(ctx, idx, None)
    miss_f = int(((flags[idx] & int(Flag.MISSING_FLOPS)) != 0).sum())
    miss_b = int(((flags[idx] & int(Flag.MISSING_BYTES)) != 0).sum())
    no_c = int(((flags[idx] & int(Flag.NO_CEILING)) != 0).sum())
    what = ", ".join(p for p in (f"{miss_f:,} without FLOPs" if miss_f else "",
                                 f"{miss_b:,} without off-chip bytes" if miss_b else "",
                                 f"{no_c:,} in a precision {ctx.hw.id} has no ceiling for" if no_c else "") if p)
    held = s.stake() if ctx.timed[idx].any() else "no measured time"
    n = len(idx)
    one = n == 1
    title = f"Collect FLOPs and bytes for {n:,} kernel{'' if one else 's'}"
    reason = (f"{n:,} kernel{'' if one else 's'} ({held}) cannot be placed on the roofline ({what}), so no rule "
              f"can judge {'it' if one else 'them'}; {_collect_hint(ctx.analysis.workload.formats)}.")
    return [_rec(ctx, "missing_data", s, title=title, reason=reason, lever=Lever.DATA_CHECK,
                 confidence=Confidence.HIGH, factor=None)]


#: how to get FLOPs and bytes, by the input format's family (the part of its name before the first '-')
_COLLECT_HINTS = {
    "pytorch": "profile with record_shapes=True and with_flops=True so each op's shapes give its FLOPs and bytes",
    "ncu": "profile with the SpeedOfLight_RooflineChart section, or the FLOP and dram__bytes metrics, on the raw page",
    "nsys": "nsys gives times only: load a kernel inventory or an Nsight Compute export with it",
    "rocprof": "profile with rocprof-compute (pmc_perf.csv with its sysinfo.csv) for FLOP and HBM counters",
    "jax": "add bytes accessed and flops from compiled.cost_analysis() for every program",
    "xprof": "export the Roofline Model tool's per-op FLOP rates and bandwidths",
    "inventory": "give flops and bytes (or an op with its shapes) for these rows",
}


def _collect_hint(formats: tuple[str, ...]) -> str:
    hints = list(dict.fromkeys(_COLLECT_HINTS[f.split("-")[0]] for f in formats if f.split("-")[0] in _COLLECT_HINTS))
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
    s = _Subject(ctx, idx, None)
    launches = int(ctx.tab["count"].to_numpy(dtype=np.int64)[idx].sum())
    graphs = {"NVIDIA": "CUDA graphs", "AMD": "HIP graphs"}.get(ctx.hw.vendor, "graph capture")
    one = s.names == 1
    who = f"{_short(ctx.names[int(idx[0])])} ({s.stake()}) launches" if one else \
        f"{s.names:,} kernels ({s.stake()}) launch"
    title = f"Batch {launches:,} tiny launches into fewer kernels ({graphs}, persistent kernels, fusion)"
    reason = (f"{who} {launches:,} times at {fmt_time(s.time_s / launches)} per launch on average, at "
              f"{fmt_pct(s.eff)} of {'its' if one else 'their'} roof: under 1 µs a launch costs more than its work, "
              "so only fewer launches help.")
    return [_rec(ctx, "tiny_launches", s, title=title, reason=reason, lever=Lever.LAUNCH_OVERHEAD,
                 confidence=Confidence.MEDIUM, factor=ctx.eff, kind="efficiency")]


@rule
def below_both_roofs(ctx: Context) -> list[Recommendation]:
    """Below both roofs (measured time over 10× the roofline time) the kernel is waiting on something the
    roofline does not model: launch overhead, synchronisation, low occupancy, cache thrashing or latency.
    Say so plainly and point to a timeline or stall profile. Gain: at most the headroom (time − t_roof)."""
    mask = ctx.trusted & ctx.timed & (ctx.eff < FAR_BELOW) & ~_tiny(ctx)
    idx = np.flatnonzero(mask)
    out = []
    for s in _subjects(ctx, idx, _gain(ctx, ctx.eff)[idx]):
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
        out.append(_rec(ctx, "below_both_roofs", s, title=title, reason=reason, lever=Lever.LATENCY,
                        confidence=Confidence.LOW, factor=ctx.eff, kind="efficiency"))
    return out


def _bound_text(ctx: Context, i: int) -> str:
    kind = ctx.kind[i]
    if kind == "compute":
        return f"the {ctx.tab['ceiling'].iat[i]} compute roof"
    return f"{ctx.display(ctx.level[i])} bandwidth"


# --------------------------------------------------------------------------------------------- memory-bound


@rule
def memory_far(ctx: Context) -> list[Recommendation]:
    """Memory-bound and measured well below the bandwidth roof (10–80% of it): the bytes move inefficiently.
    Uncoalesced or strided accesses, a poor layout, or data read more than once keep the kernel under the
    roof; fixing them moves it up to the roof. Judged by % of peak bandwidth, never % of peak FLOP/s. Gain:
    at most the headroom (time − t_roof)."""
    mask = ctx.trusted & ctx.timed & (ctx.kind == "memory") & (ctx.eff >= FAR_BELOW) & (ctx.eff < NEAR_ROOF)
    out = []
    for level in _keys(ctx.level[mask]):
        idx = np.flatnonzero(mask & (ctx.level == level))
        lv = ctx.display(level)
        for s in _subjects(ctx, idx, _gain(ctx, ctx.eff)[idx]):
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
            out.append(_rec(ctx, "memory_far", s, title=title, reason=reason, lever=Lever.MEMORY_ACCESS,
                            confidence=Confidence.MEDIUM, factor=ctx.eff, kind="efficiency"))
    return out


def _ends(values: np.ndarray, suffix: str) -> np.ndarray:
    return np.array([str(v).endswith(suffix) for v in values], dtype=bool) if len(values) else np.zeros(0, dtype=bool)


def _keys(values: np.ndarray) -> list:
    return list(dict.fromkeys(v for v in values if v is not None and v == v))


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
    for level in _keys(ctx.level[mask]):
        idx = np.flatnonzero(mask & (ctx.level == level))
        parts = {k: v for k, v in ctx.t_res.items() if k != level}
        rest = _roof(parts, n)
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
        for s in _subjects(ctx, idx, _gain(ctx, factor)[idx]):
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
            out.append(_rec(ctx, "onchip_tiling", s, title=title, reason=reason, lever=Lever.TILING,
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
    for lv in ctx.hw.levels[1:]:
        if f"bytes_{lv.name}" in ctx.tab:
            b = ctx.tab[f"bytes_{lv.name}"].to_numpy(dtype=np.float64)
            most = np.where(b > inner, lv.name, most)
            inner = np.fmax(inner, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        reuse = inner / b_off
    cache_b = ctx.tab[f"bytes_{cache}"].to_numpy(dtype=np.float64)
    mask = (ctx.movable & (ctx.kind == "memory") & (ctx.level == off) & (flops > 0) & (cache_b > 0)
            & ((reuse >= REUSE_MIN) | ctx.matmul_named))
    if not mask.any():
        return []
    parts = {k: v for k, v in ctx.t_res.items() if k != off}
    rest = _roof(parts, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = rest / ctx.t_roof
    idx = np.flatnonzero(mask & (factor <= 1 - MIN_ROOF_CUT))
    lv, cv = ctx.display(off), ctx.display(cache)
    size = ctx.hw.level_map[cache].capacity
    fit = f"the {fmt_bytes(size)} {cv}" if size else cv
    out = []
    for s in _subjects(ctx, idx, _gain(ctx, factor)[idx]):
        new = float(np.nansum(rest[s.idx]))
        if s.name is not None:
            i = int(s.idx[np.argmax(ctx.base_s[s.idx])])
            where = (f"{fmt_pct(s.pct_bw(off))} of its {fmt_bandwidth(ctx.bandwidth(off))}" if s.measured
                     else f"its {fmt_bandwidth(ctx.bandwidth(off))}; no measured time")
            ratio = float(np.nansum(inner[s.idx])) / s.total(f"bytes_{off}")
            title = f"Tile {s.who()} for {cv} reuse: it sits between the {cv} and the {lv} roof"
            reason = (f"{s.who()} is bound by {lv} at {fmt_intensity(s.intensity(off))} ({where}), while {cv} at "
                      f"{fmt_intensity(s.intensity(cache))} leaves room ({fmt_bandwidth(ctx.bandwidth(cache))}); "
                      + (f"{ctx.display(most[i])} moves {_times(ratio)} its {lv} bytes, so it re-reads data"
                         if ratio >= REUSE_MIN else
                         f"a matrix product re-reads its operands ({ctx.display(most[i])} moves {_times(ratio)} its "
                         f"{lv} bytes)")
                      + f": blocking each tile's working "
                      f"set to fit {fit} (tile rasterisation or swizzling) cuts {lv} bytes, at best until the next "
                      f"roof, {_next_roof(ctx, parts, i)}'s, {fmt_time(new)} instead of {fmt_time(s.roof_s)}.")
        else:
            title = f"Tile {s.who()} for {cv} reuse: they sit between the {cv} and the {lv} roof"
            reason = (f"{s.names:,} kernels ({s.stake()}) are bound by {lv} with room under the {cv} roof and re-read "
                      f"their data: blocking each tile's working set to fit {fit} cuts {lv} bytes, at best until "
                      f"the next roofs, {fmt_time(new)} instead of {fmt_time(s.roof_s)}.")
        out.append(_rec(ctx, "offchip_reuse", s, title=title, reason=reason, lever=Lever.TILING,
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
        s = _Subject(ctx, rows, None)
        total_b, fused_b = sum(x[0] for x in sums), sum(x[1] for x in sums)
        old, new = sum(x[2] for x in sums), sum(x[3] for x in sums)
        shown = [_short(k, 28) for k in key]
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
        out.append(_rec(ctx, "fusion", s, title=title, reason=reason, lever=Lever.FUSION,
                        confidence=Confidence.MEDIUM, factor=factor, keep_order=True))
    return out


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
            new = _roof(parts, n)
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
    for key in _keys(target[mask]):
        p, q, cq, kind = key.split(">")
        idx = np.flatnonzero(mask & (target == key))
        ratio = DTYPE_SIZE[q] / DTYPE_SIZE[p]
        for s in _subjects(ctx, idx, _gain(ctx, factor)[idx]):
            new = float(np.nansum(ctx.t_roof[s.idx] * factor[s.idx]))
            side = f"{kind}-bound"
            at = "on its roof (no measured time)"
            if s.measured and kind == "memory":
                lvl = str(ctx.level[int(s.idx[0])])
                at = f"at {fmt_pct(s.pct_bw(lvl))} of {ctx.display(lvl)} bandwidth"
            elif s.measured:
                at = f"at {fmt_pct(s.eff)} of its roof"
            cut = f"cuts {'its' if s.name is not None else 'their'} bytes {_times(1 / ratio)}"
            if s.name is not None:
                cut += f" ({fmt_bytes(_bytes_total(s))} → {fmt_bytes(_bytes_total(s) * ratio)})"
            if kind == "compute":
                cut = f"runs on the {fmt_rate(ctx.peak(cq))} {cq} ceiling and {cut}"
            title = f"Move {s.who()} from {p} to {q} where numerics allow"
            if s.name is not None:
                reason = (f"{s.who()} is {side} {at} in {p}: {q} {cut}, so its roof falls from {fmt_time(s.roof_s)} "
                          f"to {fmt_time(new)}.")
            else:
                reason = (f"{s.names:,} {side} kernels ({s.stake()}) are at their roof in {p}: {q} {cut}, so their "
                          f"roofs fall from {fmt_time(s.roof_s)} to {fmt_time(new)} in all.")
            out.append(_rec(ctx, "lower_precision", s, title=title, reason=reason, lever=Lever.PRECISION,
                            confidence=Confidence.MEDIUM, factor=factor))
    return out


def _bytes_total(s: _Subject) -> float:
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
    on_matrix = np.where(declared, unit == "matrix", ctx.matmul_named) & _ends(ceil, "-matrix")
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
        new = _roof(parts, n)
        factor = new / ctx.t_roof
    mask &= factor <= 1 - MIN_ROOF_CUT
    out = []
    lv = ctx.display(off)
    for c in _keys(ceil[mask]):
        idx = np.flatnonzero(mask & (ceil == c))
        ridge = ctx.peak(c) / ctx.bandwidth(off)
        for s in _subjects(ctx, idx, _gain(ctx, factor)[idx]):
            new_s = float(np.nansum(new[s.idx]))
            if s.name is not None:
                i = s.intensity(off)
                k = min(2.0, ridge / i)
                title = (f"Double the batch of {s.who()}" if k == 2 else
                         f"Raise the batch of {s.who()} {_times(k)}, to the {lv} ridge")
                reason = (f"{s.who()} is memory-bound on {lv} at {fmt_intensity(i)} on {c}, under the ridge "
                          f"{fmt_intensity(ridge)}: when a weight operand shared across the batch dominates its "
                          f"bytes, a {_times(k)} larger batch cuts its time per unit of work from "
                          f"{fmt_time(s.roof_s)} to {fmt_time(new_s)} at best (the ridge needs {_times(ridge / i)}).")
            else:
                inten = ctx.tab[f"intensity_{off}"].to_numpy(dtype=np.float64)
                title = f"Double the batch of {s.who()} (up to the {lv} ridge)"
                reason = (f"{s.names:,} matrix-unit kernels ({s.stake()}) are memory-bound on {lv} at "
                          f"{s.range(inten, fmt_intensity)}, under the ridge {fmt_intensity(ridge)}: when weight "
                          f"operands shared across the batch dominate their bytes, doubling the batch (up to the ridge) "
                          f"cuts their time per unit of work from {fmt_time(s.roof_s)} to {fmt_time(new_s)} at best.")
            out.append(_rec(ctx, "larger_batch", s, title=title, reason=reason, lever=Lever.BATCH,
                            confidence=Confidence.LOW, factor=factor))
    return out


# --------------------------------------------------------------------------------------------- compute-bound


@rule
def compute_far(ctx: Context) -> list[Recommendation]:
    """Compute-bound and measured at 10–80% of the compute roof: the units idle part of the time. On vector
    units, missing vectorisation (scalar code, no FMA) or low occupancy; on matrix units, pipeline stalls,
    shapes that do not fill the units, or a poor instruction mix. Fixing them moves the kernel up to its
    roof. Gain: at most the headroom (time − t_roof)."""
    ceil = ctx.ceiling
    mask = ctx.trusted & ctx.timed & (ctx.kind == "compute") & (ctx.eff >= FAR_BELOW) & (ctx.eff < NEAR_ROOF)
    out = []
    for c in _keys(ceil[mask]):
        idx = np.flatnonzero(mask & (ceil == c))
        vector = c.endswith("-vector")
        for s in _subjects(ctx, idx, _gain(ctx, ctx.eff)[idx]):
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
            out.append(_rec(ctx, "compute_far", s, title=title, reason=reason,
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
    mask = ctx.movable & (ctx.kind == "compute") & _ends(ceil, "-vector")
    cm = ctx.hw.ceiling_map
    n = len(mask)
    factor = np.ones(n)
    target = np.full(n, None, dtype=object)
    for c in _keys(ceil[mask]):
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
            factor[sel] = (_roof(parts, n) / ctx.t_roof)[sel]
        target[sel] = f"{c}>{best}"
    mask &= factor <= 1 - MIN_ROOF_CUT
    looks = ctx.matmul_named if mask.any() else np.zeros(n, dtype=bool)
    out = []
    for key in _keys(target[mask]):
        c, m = key.split(">")
        for like in (True, False):
            idx = np.flatnonzero(mask & (target == key) & (looks == like))
            for s in _subjects(ctx, idx, _gain(ctx, factor)[idx]):
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
                out.append(_rec(ctx, "matrix_units", s, title=title, reason=reason, lever=Lever.MATRIX_UNITS,
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
        factor = _roof(parts, n) / ctx.t_roof
    mask &= factor <= 1 - MIN_ROOF_CUT
    idx = np.flatnonzero(mask)
    out = []
    for s in _subjects(ctx, idx, _gain(ctx, factor)[idx]):
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
        out.append(_rec(ctx, "weak_fp64", s, title=title, reason=reason, lever=Lever.PRECISION,
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
    for c in _keys(ceil[mask]):
        idx = np.flatnonzero(mask & (ceil == c))
        ridge = ctx.peak(c) / ctx.bandwidth(off)
        for s in _subjects(ctx, idx, ctx.base_s[idx]):
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
            out.append(_rec(ctx, "compute_near", s, title=title, reason=reason, lever=Lever.ALGORITHM,
                            confidence=Confidence.HIGH, factor=None))
    return out


# --------------------------------------------------------------------------------------------- links


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
    for link in _keys(ctx.level[mask]):
        idx = np.flatnonzero(mask & (ctx.level == link))
        lk = ctx.display(link)
        for s in _subjects(ctx, idx, _gain(ctx, ctx.eff)[idx]):
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
            out.append(_rec(ctx, "link_far", s, title=title, reason=reason, lever=Lever.OVERLAP,
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
    for link in _keys(ctx.level[mask]):
        rest = _roof({k: v for k, v in ctx.t_res.items() if k != link}, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.nan_to_num(rest, nan=0.0) / ctx.t_roof
        idx = np.flatnonzero(mask & (ctx.level == link) & (factor <= 1 - MIN_ROOF_CUT))
        lk = ctx.display(link)
        for s in _subjects(ctx, idx, _gain(ctx, factor)[idx]):
            new = float(np.nansum(np.nan_to_num(rest, nan=0.0)[s.idx]))
            first = ctx.ceiling[int(s.idx[0])]
            ridge = ctx.peak(first if first else ctx.hw.default_ceiling) / ctx.bandwidth(link)
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
            out.append(_rec(ctx, "link_near", s, title=title, reason=reason, lever=Lever.RESHARDING,
                            confidence=Confidence.LOW, factor=factor))
    return out


# --------------------------------------------------------------------------------------------- ranking


def _dedupe(ctx: Context, recs: list[Recommendation]) -> tuple[list[Recommendation], np.ndarray]:
    """Count each action's gain after those ranked above it (see the module docstring); then rank by it."""
    from dataclasses import replace

    order = {r.__name__: i for i, r in enumerate(RULES)}
    greedy = sorted(recs, key=lambda r: (r.lever is not Lever.DATA_CHECK, -r.standalone_gain_s, order[r.rule]))
    n = len(ctx.base_s)
    roof_f = np.ones(n)  # best roof factor per kernel so far
    eff_f = np.ones(n)  # efficiency factor once claimed
    out = []
    for r in greedy:
        if not len(r.rows):
            out.append(r)
            continue
        idx, f = r.rows, r.factors
        before = ctx.base_s[idx] * roof_f[idx] * eff_f[idx]
        if r.kind == "efficiency":
            eff_f[idx] = f
        elif r.kind == "roof":
            roof_f[idx] = np.minimum(roof_f[idx], f)
        after = ctx.base_s[idx] * roof_f[idx] * eff_f[idx]
        out.append(replace(r, gain_s=float(np.maximum(before - after, 0.0).sum())))
    out.sort(key=lambda r: (r.lever is not Lever.DATA_CHECK, -r.gain_s, -r.at_stake_s, order[r.rule]))
    return out, ctx.base_s * roof_f * eff_f


def advise(analysis: Analysis, hw_id: str | None = None, *, rules: list[Rule] | None = None) -> Advice:
    """Every rule's recommendations for one device (default: the analysis's first), ranked and de-duplicated."""
    hw_id = hw_id or analysis.hardware[0].id
    ctx = context(analysis, hw_id)
    recs: list[Recommendation] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for fn in rules or RULES:
            recs.extend(fn(ctx))
    items, after = _dedupe(ctx, recs)
    total = float((ctx.base_s - after).sum())
    base = np.nan_to_num(np.asarray(ctx.base_s, dtype=np.float64))
    known = ~np.isnan(ctx.analysis.result(hw_id).t_roof)
    known_share = float(base[known].sum() / base.sum()) if base.sum() > 0 else None
    return Advice(hardware=hw_id, items=tuple(items), total_gain_s=total, workload_time_s=ctx.workload_time_s,
                  basis=ctx.basis, known_share=known_share, before_s=ctx.base_s, after_s=after)


def advise_all(analysis: Analysis) -> dict[str, Advice]:
    """:func:`advise` for every device of the analysis, by device id."""
    return {h.id: advise(analysis, h.id) for h in analysis.hardware}


# --------------------------------------------------------------------------------------------- output


def advice_text(advice: Advice, top: int = 10, *, hardware: Hardware | None = None) -> str:
    """Plain text for the CLI: the summary, then the top items with gain, reason and kernels."""
    head = f"== Recommendations on {hardware.name} ({hardware.id}) ==" if hardware else \
        f"== Recommendations on {advice.hardware} =="
    lines = [head, advice.summary()]
    items = advice.items if top <= 0 else advice.items[:top]
    for i, r in enumerate(items, 1):
        gain = gain_text(r, advice.workload_time_s)
        lines.append("")
        lines.append(f"{i:>2}. {r.title}")
        lines.append(f"    {r.lever.value} · {r.confidence.value} confidence · {gain} · rule {r.rule}")
        lines.append(f"    {r.reason}")
        lines.append(f"    kernels: {kernels_text(r)}")
    if len(items) < len(advice.items):
        lines.append("")
        lines.append(f"({len(items)} of {len(advice.items)} recommendations shown; --top 0 shows all)")
    return "\n".join(lines)


def kernels_text(r: Recommendation, shown: int = 5, width: int = 40) -> str:
    """'a, b, c (+12 more names; 40 rows)': the first names, how many more, and the rows when names repeat."""
    text = ", ".join(_short(k, width) for k in r.kernels[:shown])
    more = r.name_count - min(len(r.kernels), shown)
    notes = ([f"+{more:,} more names"] if more > 0 else []) + (
        [f"{r.kernel_count:,} rows"] if r.kernel_count > r.name_count else [])
    return text + (f" ({'; '.join(notes)})" if notes else "")


def gain_text(r: Recommendation, workload_time_s: float) -> str:
    """'saves 8.16 ms (20%)', 'nothing beyond the actions above (alone 1.2 ms)', or why there is no number."""
    if r.gain_s > 0:
        share = f" ({fmt_pct(r.gain_s / workload_time_s)})" if workload_time_s > 0 else ""
        return f"saves {fmt_time(r.gain_s)}{share}"
    if r.standalone_gain_s > 0:
        return f"nothing beyond the actions above (alone {fmt_time(r.standalone_gain_s)})"
    if r.lever is Lever.DATA_CHECK:
        return "a data check: no gain claimed"
    return "gain not bounded by the roofline"


#: how each lever reads on a card
LEVER_LABELS = {
    Lever.FUSION: "Fusion", Lever.TILING: "Tiling", Lever.PRECISION: "Precision", Lever.BATCH: "Batch",
    Lever.OVERLAP: "Overlap", Lever.RESHARDING: "Resharding", Lever.ALGORITHM: "Algorithm",
    Lever.MORE_HARDWARE: "More hardware", Lever.LAUNCH_OVERHEAD: "Launch overhead", Lever.LATENCY: "Latency",
    Lever.MATRIX_UNITS: "Matrix units", Lever.VECTORISATION: "Vectorisation", Lever.STALLS: "Stalls",
    Lever.MEMORY_ACCESS: "Memory access", Lever.DATA_CHECK: "Data check",
}


@dataclass(frozen=True)
class Card:
    """A recommendation as the app shows it: plain strings (the page escapes them), built here to keep it thin."""

    rank: int
    title: str
    meta: str  #: "Fusion · medium confidence · rule fusion"
    gain: str  #: "8.01 ms (19.6% of the workload)" or why there is no number
    reason: str
    kernels: tuple[str, ...]  #: the names to list
    more: str  #: "+12 more names; 40 rows" or ""


def cards(advice: Advice, limit: int | None = None) -> list[Card]:
    """The first ``limit`` recommendations as :class:`Card`s, in rank order."""
    out = []
    w = advice.workload_time_s
    for i, r in enumerate(advice.items[:limit] if limit else advice.items, 1):
        if r.gain_s > 0:
            gain = f"{fmt_time(r.gain_s)}" + (f" ({fmt_pct(r.gain_s / w)} of the workload)" if w > 0 else "")
        else:
            gain = gain_text(r, w)
        shown = r.kernels[:10]
        more = r.name_count - len(shown)
        notes = ([f"+{more:,} more names"] if more > 0 else []) + (
            [f"{r.kernel_count:,} rows"] if r.kernel_count > r.name_count else [])
        out.append(Card(rank=i, title=r.title, gain=gain, reason=r.reason, kernels=tuple(shown),
                        meta=f"{LEVER_LABELS[r.lever]} · {r.confidence.value} confidence · rule {r.rule}",
                        more="; ".join(notes)))
    return out


def advice_frame(advice: Advice) -> pd.DataFrame:
    """One row per recommendation (rank, title, lever, gain in s and share, confidence, kernels) for tables."""
    w = advice.workload_time_s
    return pd.DataFrame({
        "rank": range(1, len(advice.items) + 1),
        "title": [r.title for r in advice.items],
        "lever": [r.lever.value for r in advice.items],
        "gain_s": [r.gain_s for r in advice.items],
        "gain_share": [r.gain_s / w if w > 0 else math.nan for r in advice.items],
        "confidence": [r.confidence.value for r in advice.items],
        "kernels": [r.kernel_count for r in advice.items],
        "rule": [r.rule for r in advice.items],
    })


__all__ = [
    "FAR_BELOW", "LEVER_LABELS", "MAX_NAMES", "MAX_SPLIT", "MIN_ROOF_CUT", "MIN_TINY_LAUNCHES", "NEAR_ROOF", "RULES",
    "WEAK_FP64_RATIO", "Advice", "Card", "Confidence", "Context", "Lever", "Recommendation", "advice_frame",
    "advice_text", "advise", "advise_all", "cards", "context", "explain", "gain_text", "kernels_text", "rule",
]
