"""Steps and windows over time: which are mostly unknown, which are outliers, and what differs in them.

A step whose measured time is mostly on kernels without a known roofline (coverage under :data:`MIN_COVERAGE`)
is drawn as its coverage, not as a point. An outlier step takes longer than :data:`OUTLIER_FACTOR` × the median
step; what differs is said from its kernels against the median step: more launches, one kernel slower than its
median time per step, or an idle gap (the step's GPU span minus its busy time).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..units import fmt_time
from .grouping import OUTSIDE, codes_of, factor

#: a step or window whose roofline is known for less of its time than this shows its coverage instead of a point
MIN_COVERAGE = 0.5
#: a step longer than this × the median step is an outlier
OUTLIER_FACTOR = 1.5


def flag_steps(rows: pd.DataFrame, frame: pd.DataFrame, level: str = "step", window: float | None = None
               ) -> pd.DataFrame:
    """``rows`` (:func:`roofcore.hierarchy.group` at ``step`` or ``window``) with ``point`` (enough coverage to
    place it), ``outlier`` and ``differs`` (what differs, for outliers)."""
    out = rows.copy()
    cov = out["coverage"].to_numpy(dtype=np.float64)
    out["point"] = ~np.isnan(cov) & (cov >= MIN_COVERAGE)
    inside = (out["group"] != OUTSIDE).to_numpy()
    t = out["time_s"].to_numpy(dtype=np.float64)
    out["outlier"] = False
    out["differs"] = None
    if inside.sum() < 3:  # a median of two says nothing
        return out
    med = float(np.nanmedian(t[inside])) if (~np.isnan(t[inside])).any() else np.nan
    if not med > 0:
        return out
    slow = inside & (t > OUTLIER_FACTOR * med)
    out.loc[slow, "outlier"] = True
    if slow.any():
        per, names = _per_step_kernel(frame, level, window, out["group"].tolist())
        median = np.median(per[inside], axis=0)  # the median step's time per kernel name
        out.loc[slow, "differs"] = [_differs(int(i), out, per, median, names, inside) for i in np.flatnonzero(slow)]
    return out


def _per_step_kernel(frame: pd.DataFrame, level: str, window: float | None, groups: list[Any]
                     ) -> tuple[np.ndarray, list[Any]]:
    """A (group × kernel name) matrix of measured time, rows in the order of ``groups`` (computed once)."""
    codes, uniq = codes_of(frame, level, None, window)
    ncodes, names = factor(frame, "name")
    pos = {g: i for i, g in enumerate(groups)}
    row_of = np.array([pos.get(u, -1) for u in uniq] + [-1], dtype=np.int64)[codes]
    ok = (row_of >= 0) & (ncodes >= 0)
    t = np.nan_to_num(frame["time_s"].to_numpy(dtype=np.float64))
    k = len(names)
    mat = np.bincount(row_of[ok] * k + ncodes[ok], weights=t[ok], minlength=len(groups) * k)
    return mat.reshape(len(groups), k), names


def _differs(i: int, rows: pd.DataFrame, per: np.ndarray, median: np.ndarray, names: list[Any], inside: np.ndarray
             ) -> str:
    """What sets step ``i`` apart from the median step: launches, the kernel slower by the most, the idle gap."""
    said = []
    launches = rows.loc[inside, "launches"].to_numpy(dtype=np.float64)
    mine = rows.iloc[i]
    med_l = float(np.median(launches))
    if mine["launches"] > 1.1 * med_l:
        said.append(f"more kernels ({int(mine['launches']):,} launches against a median of {med_l:,.0f})")
    if per.shape[1]:
        extra = per[i] - median
        j = int(np.argmax(extra))
        if extra[j] > 0:
            said.append(f"a slower kernel: {_short(str(names[j]))} {fmt_time(per[i, j])} against a median of "
                        f"{fmt_time(median[j])}")
    span = (rows["end_s"] - rows["start_s"]).to_numpy(dtype=np.float64)
    gap = span - rows["time_s"].to_numpy(dtype=np.float64)
    row = i
    med_gap = float(np.nanmedian(gap[inside])) if (~np.isnan(gap[inside])).any() else np.nan
    if not np.isnan(gap[row]) and gap[row] > max(2 * med_gap, 0) + 0.1 * float(rows["time_s"].iloc[row] or 0):
        said.append(f"a gap: the GPU idle {fmt_time(gap[row])} of the step against a median of {fmt_time(med_gap)}")
    return "; ".join(said) or "no single cause: its kernels are each a little slower"


def _short(name: str, n: int = 60) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"
