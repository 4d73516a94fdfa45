"""What every rule reads: a :class:`Context` (one device's results, as arrays aligned with the workload rows),
the kernels a recommendation is about (:class:`_Subject`), how a recommendation is made from a time factor per
kernel (:func:`_rec`), and the registry of rules (:data:`RULES`, :func:`rule`).

Per-resource times, the bound and the roofs are the engine's (:class:`~roofcore.roofline.DeviceResult`'s
``times``, ``rate(achievable)`` of each roof); a rule changes one input of the same formulas, never works
them out again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..counting import kernel_counts
from ..models import Hardware, Link, MemoryLevel
from ..roofline import FAR_BELOW_EFFICIENCY, Flag
from ..units import fmt_pct, fmt_time
from .model import Confidence, Lever, Recommendation, short

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
        # once per distinct name: a trace launches the same few hundred kernels (long template names) thousands
        # of times
        hit = {x: bool(_MATMUL_NAME.search(x)) for x in dict.fromkeys(self.names)}
        return np.array([hit[x] for x in self.names], dtype=bool)

    @property
    def t_roof(self) -> np.ndarray:
        roof: np.ndarray = self.tab["t_roof_s"].to_numpy(dtype=np.float64)
        return roof

    @property
    def movable(self) -> np.ndarray:
        """Kernels a roof-moving action can help: trusted and not latency-bound (untimed, or ≥ FAR_BELOW)."""
        return self.trusted & (~self.timed | (self.eff >= FAR_BELOW))

    @property
    def near(self) -> np.ndarray:
        """Trusted kernels at their roof: measured at ≥ NEAR_ROOF of it, or untimed (placed on it)."""
        return self.trusted & (~self.timed | (self.eff >= NEAR_ROOF))

    def display(self, name: str) -> str:
        paths: dict[str, MemoryLevel | Link] = {**self.hw.level_map, **self.hw.link_map}
        res = paths.get(name)
        return res.display if res else name

    def bandwidth(self, name: str) -> float:
        """B/s of level or link ``name``: the roof the analysis used (measured where it asked for achievable)."""
        paths: dict[str, MemoryLevel | Link] = {**self.hw.level_map, **self.hw.link_map}
        return paths[name].rate(self.analysis.achievable)

    def peak(self, key: str) -> float:
        """FLOP/s of ceiling ``key``: the roof the analysis used (measured where it asked for achievable)."""
        return self.hw.ceiling_map[key].rate(self.analysis.achievable)

    def ridge(self, key: str, name: str) -> float:
        """FLOP/byte where ceiling ``key`` meets level or link ``name``, with the roofs the analysis used."""
        return self.hw.ridge(key, achievable=self.analysis.achievable)[name]


def context(analysis: Analysis, hw_id: str) -> Context:
    """The arrays every rule reads for ``hw_id``, built once per :func:`advise` call (vectorised)."""
    r = analysis.result(hw_id)
    tab = analysis.table(hw_id, messages=False)
    t = tab["time_s"].to_numpy(dtype=np.float64)
    roof = tab["t_roof_s"].to_numpy(dtype=np.float64)
    flags = r.flags.astype(np.int64)
    timed = analysis.timed
    eff = np.where(timed, analysis.derived(hw_id).efficiency, np.nan)  # kernels placed by rates: untimed here
    above = (flags & int(Flag.ABOVE_ROOF)) != 0
    partial = (flags & int(Flag.MISSING_FLOPS | Flag.MISSING_BYTES | Flag.NO_CEILING | Flag.ZERO_TIME)) != 0
    trusted = ~np.isnan(roof) & (roof > 0) & ~above & ~partial
    base = np.where(timed, t, np.where(np.isnan(t) & ~np.isnan(roof), roof, 0.0))
    kinds = np.array(["", *r.resource_kinds], dtype=object)
    kind = kinds[r.bound_idx.astype(np.int64) + 1]
    names = np.array([None, *r.resources], dtype=object)
    level = np.where(r.mem_idx > 0, names[r.mem_idx.astype(np.int64) + 1], np.array(None, dtype=object))
    t_res = dict(zip(r.resources, r.times, strict=True))  # the engine's own per-resource times
    basis = "measured" if timed.all() else "roofline" if not timed.any() else "mixed"

    def obj(col: str) -> np.ndarray:
        return np.array([None if v is None or v != v else v for v in tab[col].to_numpy(dtype=object)], dtype=object)

    return Context(analysis=analysis, hw=r.hardware, tab=tab, base_s=base, timed=timed, eff=eff, trusted=trusted,
                   above=above, kind=kind, level=level, t_res=t_res, workload_time_s=float(base.sum()), basis=basis,
                   names=tab["name"].astype(str).to_numpy(dtype=object),
                   ceiling=tab["ceiling"].fillna("").astype(str).to_numpy(dtype=object),
                   precision=obj("precision"), unit=obj("unit"))


def roof_time(parts: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The roofline time from per-resource times (NaN unknown drops out; all unknown → NaN)."""
    out = np.full(n, -np.inf)
    for v in parts.values():
        out = np.fmax(out, v)
    return np.where(np.isfinite(out), out, np.nan)


# --------------------------------------------------------------------------------------------- subjects


@dataclass(frozen=True)
class Subject:
    """The kernels one recommendation is about: one kernel name (all its rows), or several names."""

    ctx: Context
    idx: np.ndarray  #: row positions
    name: str | None  #: the one kernel name, or None for several

    def total(self, col: str) -> float:
        return float(np.nansum(self.ctx.tab[col].to_numpy(dtype=np.float64)[self.idx]))

    @cached_property
    def names(self) -> int:
        """Kernels among the rows, as every page counts them (roofcore.counting: launches of one kernel are one)."""
        return kernel_counts(self.ctx.analysis.workload.frame, self.idx)[0]

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
        return short(self.name) if self.name is not None else f"{self.names:,} kernels"

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


def subjects(ctx: Context, idx: np.ndarray, gain: np.ndarray) -> list[Subject]:
    """One subject per kernel name for the MAX_SPLIT names with the largest gain, the rest as one subject."""
    if not len(idx):
        return []
    names = ctx.names[idx]
    per = pd.Series(gain, index=names).groupby(level=0, sort=False).sum().sort_values(ascending=False, kind="stable")
    if len(per) <= MAX_SPLIT + 1:
        top, rest = list(per.index), []
    else:
        top, rest = list(per.index[:MAX_SPLIT]), list(per.index[MAX_SPLIT:])
    out = [Subject(ctx, idx[names == n], n) for n in top]
    if rest:
        out.append(Subject(ctx, idx[pd.Series(names).isin(rest).to_numpy()], None))
    return out


def recommendation(ctx: Context, rule: str, subj: Subject, *, title: str, reason: str, lever: Lever,
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


def gain_time(ctx: Context, factor: np.ndarray) -> np.ndarray:
    gain: np.ndarray = ctx.base_s * (1.0 - np.clip(np.nan_to_num(factor, nan=1.0), 0.0, 1.0))
    return gain


def ends_with(values: np.ndarray, suffix: str) -> np.ndarray:
    return np.array([str(v).endswith(suffix) for v in values], dtype=bool) if len(values) else np.zeros(0, dtype=bool)


def distinct(values: np.ndarray) -> list[Any]:
    return list(dict.fromkeys(v for v in values if v is not None and v == v))


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
