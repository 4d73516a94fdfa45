"""A regression gate for CI (``roofline check``): did any kernel of the current run get slower, or run further
from its roof, than the baseline allows?

Kernels are matched by name after summing their launches (:func:`roofcore.plan.compare`). A matched kernel
**regressed** when its measured time grew by more than ``max_regression`` (relative: 10% allows 10% and fails
10.1%) or its efficiency — the fraction of its roof it reaches, roofline time / measured time — fell by more than
``max_regression`` of its value. Only kernels measured in both runs are judged (a bound is not a measurement);
the efficiency test needs the roofline on both sides (FLOPs and bytes known). Changes are rounded to 0.01%
before they are compared with the limit. A gate that can judge nothing
(no kernel matched, none measured in both runs) is an error, never a pass.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError
from .models import Hardware, Workload
from .plan import Comparison, compare
from .units import fmt_pct, fmt_time

#: default --max-regression: 10% of the baseline's time or efficiency
DEFAULT_MAX_REGRESSION = 0.10
#: changes are judged rounded to 0.01% (profilers print times to 3 or 4 digits): 10.004% passes a 10% limit
_DIGITS = 4


def parse_threshold(text: str) -> float:
    """``"10%"``, ``"10"`` or ``"2.5%"`` -> a fraction (0.10, 0.10, 0.025): a number is always percent."""
    raw = str(text).strip()
    try:
        v = float(raw[:-1] if raw.endswith("%") else raw)
    except ValueError:
        v = float("nan")
    if not (0 <= v < 1000) or not math.isfinite(v):
        raise InputError(where="--max-regression", expected="a percentage such as 10% or 2.5 (0 to 1000)",
                         found=repr(raw))
    return v / 100


@dataclass(frozen=True)
class Verdict:
    """One matched kernel's judgement (times in seconds; efficiency as a fraction of the roof; NaN: unknown)."""

    name: str
    judged: bool  #: measured in both runs
    regressed: bool
    time_before_s: float
    time_after_s: float
    time_change: float  #: after / before - 1 (measured times)
    efficiency_before: float
    efficiency_after: float
    efficiency_change: float  #: after / before - 1
    t_roof_before_s: float
    t_roof_after_s: float
    bound_before: str
    bound_after: str
    reasons: tuple[str, ...]  #: which test failed: "time", "efficiency"
    roofline: str  #: the roofline reading of the change (see :func:`roofline_reason`)

    def to_json(self) -> dict[str, Any]:
        def num(v: float) -> float | None:
            return float(v) if v == v and math.isfinite(v) else None

        return {"name": self.name, "judged": self.judged, "regressed": self.regressed, "failed": list(self.reasons),
                "time_before_s": num(self.time_before_s), "time_after_s": num(self.time_after_s),
                "time_change": num(self.time_change), "efficiency_before": num(self.efficiency_before),
                "efficiency_after": num(self.efficiency_after), "efficiency_change": num(self.efficiency_change),
                "t_roof_before_s": num(self.t_roof_before_s), "t_roof_after_s": num(self.t_roof_after_s),
                "bound_before": self.bound_before, "bound_after": self.bound_after, "roofline": self.roofline}


@dataclass(frozen=True)
class GateResult:
    """The gate's judgement of every matched kernel, kept as columns (``table``): a :class:`Verdict` is built only
    for the kernels asked for (the regressions a report shows; every kernel for JSON), so judging a million
    kernels costs array operations, not a million objects."""

    hardware: Hardware
    baseline: str
    current: str
    max_regression: float
    table: pd.DataFrame  #: one row per matched kernel (columns: :data:`_COLUMNS`), in no particular order
    only_baseline: tuple[str, ...]
    only_current: tuple[str, ...]

    @property
    def matched(self) -> int:
        return len(self.table)

    @cached_property
    def judged(self) -> int:
        return int(self.table["judged"].sum())

    @cached_property
    def regressions(self) -> tuple[Verdict, ...]:
        """The kernels that regressed, largest time change first."""
        return self._verdicts(np.flatnonzero(self.table["regressed"].to_numpy()))

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        """Every matched kernel: regressions first, then the judged ones by time change (largest first), then the
        others; ties by name."""
        return self._verdicts(np.arange(len(self.table)))

    @property
    def exit_code(self) -> int:
        return 1 if self.table["regressed"].any() else 0

    def not_judged(self, limit: int) -> tuple[list[str], int]:
        """The first ``limit`` names (in name order) of the kernels not measured in both runs, and how many."""
        names = self.table["name"][~self.table["judged"].to_numpy()].tolist()
        return heapq.nsmallest(limit, names), len(names)

    def largest_change(self) -> tuple[str, float]:
        """The judged kernel whose time grew most (ties: the first name) and its change."""
        t = self.table
        judged = t["judged"].to_numpy()
        change = np.nan_to_num(t["time_change"].to_numpy(np.float64), nan=-np.inf)
        top = judged & (change == change[judged].max())
        name = min(t["name"][top].tolist())
        return name, float(t["time_change"].to_numpy()[top][0])

    def _verdicts(self, rows: np.ndarray) -> tuple[Verdict, ...]:
        t = self.table.iloc[rows]  # only these rows: the names of a million kernels cost a second to convert
        change = -np.round(t["time_change"].to_numpy(np.float64), _DIGITS)
        by_name = pd.factorize(t["name"].to_numpy(object), sort=True)[0]
        order = np.lexsort((by_name, np.where(np.isnan(change), np.inf, change), ~t["judged"].to_numpy(),
                            ~t["regressed"].to_numpy()))
        cols = {c: t[c].to_numpy()[order].tolist() for c in _COLUMNS}
        return tuple(_verdict(dict(zip(cols, values, strict=True))) for values in zip(*cols.values(), strict=True))

    def to_json(self) -> dict[str, Any]:
        regressed = bool(self.exit_code)
        return {"schema_version": 1, "status": "fail" if regressed else "pass", "exit_code": self.exit_code,
                "hardware": self.hardware.id, "baseline": self.baseline, "current": self.current,
                "max_regression": self.max_regression, "matched": self.matched, "judged": self.judged,
                "regressions": [v.to_json() for v in self.regressions],
                "kernels": [v.to_json() for v in self.verdicts],
                "only_baseline": list(self.only_baseline), "only_current": list(self.only_current)}


#: the columns of :attr:`GateResult.table` (before / after: baseline / current)
_COLUMNS = ("name", "judged", "regressed", "slower", "further", "time_before_s", "time_after_s", "time_change",
            "efficiency_before", "efficiency_after", "efficiency_change", "t_roof_before_s", "t_roof_after_s",
            "bound_before", "bound_after", "flops_before", "flops_after", "bytes_hbm_before", "bytes_hbm_after")


def _verdict(r: dict[str, Any]) -> Verdict:
    """One row of :attr:`GateResult.table` as a :class:`Verdict` (its roofline reading written here)."""
    reasons = tuple(x for x, on in (("time", r["slower"]), ("efficiency", r["further"])) if on)
    b_before, b_after = _bound(r["bound_before"]), _bound(r["bound_after"])
    num = {k: float(r[k]) for k in ("time_before_s", "time_after_s", "time_change", "efficiency_before",
                                    "efficiency_after", "efficiency_change", "t_roof_before_s", "t_roof_after_s")}
    return Verdict(name=str(r["name"]), judged=bool(r["judged"]), regressed=bool(reasons), **num,
                   bound_before=b_before, bound_after=b_after, reasons=reasons,
                   roofline=roofline_reason(b_before, b_after, num["t_roof_before_s"], num["t_roof_after_s"],
                                            num["efficiency_before"], num["efficiency_after"],
                                            (float(r["flops_before"]), float(r["flops_after"])),
                                            (float(r["bytes_hbm_before"]), float(r["bytes_hbm_after"]))))


def _pct_change(x: float) -> str:
    return f"{x * 100:+.1f}%" if x == x and math.isfinite(x) else "–"


def _ratio(after: float, before: float) -> float:
    return after / before - 1 if before > 0 and after == after and math.isfinite(after) else float("nan")


def roofline_reason(bound_before: str, bound_after: str, t_roof_before: float, t_roof_after: float,
                    eff_before: float, eff_after: float, flops: tuple[float, float], hbm: tuple[float, float]) -> str:
    """What the roofline says about a change: which roof binds, whether the work (roofline time: FLOPs, bytes)
    changed, and whether the kernel moved away from its roof."""
    known = t_roof_before > 0 and t_roof_after > 0
    if not known:
        missing = "FLOPs" if not (flops[0] == flops[0] and flops[1] == flops[1]) else "off-chip bytes"
        return f"roofline unknown ({missing} unknown): only the measured time is judged"
    b = bound_before if bound_before == bound_after else f"bound moved from {bound_before} to {bound_after}"
    parts = [f"{b}-bound" if bound_before == bound_after else b]
    work = t_roof_after / t_roof_before - 1
    if abs(work) < 0.005:
        parts.append(f"same work (roofline time {fmt_time(t_roof_after)})")
    else:
        detail = [f"{what} {_pct_change(_ratio(a, bf))}" for what, (bf, a) in (("FLOPs", flops),
                                                                                ("off-chip bytes", hbm))
                  if bf == bf and a == a and bf > 0 and abs(a / bf - 1) >= 0.005]
        parts.append(f"{'more' if work > 0 else 'less'} work: roofline time {fmt_time(t_roof_before)} -> "
                     f"{fmt_time(t_roof_after)} ({_pct_change(work)}" + (f"; {', '.join(detail)})" if detail else ")"))
    if eff_before == eff_before and eff_after == eff_after and eff_before > 0:
        e = eff_after / eff_before - 1
        where = "further from" if e < -0.005 else "closer to" if e > 0.005 else "as close to"
        parts.append(f"{where} its roof ({fmt_pct(eff_before)} -> {fmt_pct(eff_after)} of it)")
    return "; ".join(parts)


def check(current: Workload, baseline: Workload, hw: Hardware, *, max_regression: float = DEFAULT_MAX_REGRESSION,
          achievable: bool = False) -> GateResult:
    """Judge ``current`` against ``baseline`` on ``hw`` (see the module's docstring). Raises :class:`InputError`
    when nothing can be judged."""
    c: Comparison = compare(baseline, current, hw, achievable=achievable)
    t = c.table
    if t.empty:
        raise InputError(where="roofline check", text=f"no kernel of the current run ({current.name}) matches one "
                         f"of the baseline ({baseline.name}) by name: nothing to judge.",
                         hint="compare runs of the same program; `roofline compare` lists both sides' kernels.")
    measured = (t["basis"] == "measured").to_numpy()
    before, after = t["time_old"].to_numpy(np.float64), t["time_new"].to_numpy(np.float64)
    troof_b, troof_a = t["t_roof_s_old"].to_numpy(np.float64), t["t_roof_s_new"].to_numpy(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tchange = np.where(measured & (before > 0), after / before - 1, np.nan)
        eff_b = np.where(measured & (troof_b > 0), troof_b / before, np.nan)
        eff_a = np.where(measured & (troof_a > 0), troof_a / after, np.nan)
        echange = np.where(eff_b > 0, eff_a / eff_b - 1, np.nan)
    slower = measured & (np.round(tchange, _DIGITS) > max_regression + 1e-12)
    further = measured & (np.round(echange, _DIGITS) < -(max_regression + 1e-12))
    if not measured.any():
        raise InputError(where="roofline check", text=f"none of the {len(t)} matched kernel(s) has a measured time "
                         "in both runs: nothing to judge (a roofline bound is not a measurement).",
                         hint="give profiles with kernel times (Nsight Compute, nsys, rocprof, a PyTorch trace).")
    table = pd.DataFrame({
        "name": t["name"], "judged": measured, "regressed": slower | further, "slower": slower, "further": further,
        "time_before_s": before, "time_after_s": after, "time_change": tchange, "efficiency_before": eff_b,
        "efficiency_after": eff_a, "efficiency_change": echange, "t_roof_before_s": troof_b, "t_roof_after_s": troof_a,
        "bound_before": t["bound_old"], "bound_after": t["bound_new"], "flops_before": t["flops_old"],
        "flops_after": t["flops_new"], "bytes_hbm_before": t["bytes_hbm_old"], "bytes_hbm_after": t["bytes_hbm_new"]},
        copy=False)  # column by column: stacking a million rows of 19 columns into blocks copies them all
    return GateResult(hardware=hw, baseline=baseline.name, current=current.name, max_regression=max_regression,
                      table=table, only_baseline=c.only_old, only_current=c.only_new)


def _bound(b: object) -> str:
    return b if isinstance(b, str) and b else "unknown"


def _names(names: tuple[str, ...], limit: int = 10, total: int | None = None) -> str:
    total = len(names) if total is None else total
    return ", ".join(names[:limit]) + (f" and {total - limit} more" if total > limit else "")


def gate_text(g: GateResult) -> str:
    """The gate's report for a CI log: every regression with before/after and its roofline reading, then the
    verdict on the last line."""
    thr = f"{g.max_regression * 100:g}%"
    n = g.matched
    lines = [f"roofline check on {g.hardware.id} ({g.hardware.name}), max regression {thr}",
             f"baseline: {g.baseline}", f"current:  {g.current}",
             f"{n} matched {'kernel' if n == 1 else 'kernels'}, {g.judged} judged (measured in both runs)"]
    if g.judged < n:
        first, count = g.not_judged(10)
        lines.append(f"Not judged (no measured time in both runs): {_names(tuple(first), total=count)}")
    if g.only_baseline:
        lines.append(f"Only in the baseline ({len(g.only_baseline)}): {_names(g.only_baseline)}")
    if g.only_current:
        lines.append(f"Only in the current run ({len(g.only_current)}): {_names(g.only_current)}")
    for v in g.regressions:
        lines += ["", f"REGRESSED {v.name}",
                  f"  time:     {fmt_time(v.time_before_s)} -> {fmt_time(v.time_after_s)} ({_pct_change(v.time_change)})"
                  + ("  past the limit" if "time" in v.reasons else ""),
                  *([f"  of roof:  {fmt_pct(v.efficiency_before)} -> {fmt_pct(v.efficiency_after)} "
                     f"({_pct_change(v.efficiency_change)})" + ("  past the limit" if "efficiency" in v.reasons else "")]
                    if v.efficiency_before == v.efficiency_before or v.efficiency_after == v.efficiency_after else []),
                  f"  roofline: {v.roofline}"]
    lines.append("")
    if g.regressions:
        lines.append(f"FAIL: {len(g.regressions)} of {g.judged} judged {'kernel' if g.judged == 1 else 'kernels'} "
                     f"regressed past {thr} (slower, or further from the roof).")
    else:
        name, change = g.largest_change()
        lines.append(f"PASS: no judged kernel regressed past {thr} (largest time change {_pct_change(change)}: "
                     f"{name}).")
    return "\n".join(lines)
