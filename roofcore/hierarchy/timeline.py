"""Steps and windows over time: which are mostly unknown, which are outliers, and what differs in them.

A step whose measured time is mostly on kernels without a known roofline (coverage under :data:`MIN_COVERAGE`)
is drawn as its coverage, not as a point. An outlier step takes longer than :data:`OUTLIER_FACTOR` × the median
step; what differs is said from its kernels against the median step: more launches, one kernel slower than its
median time per step, or an idle gap (the step's GPU span minus its busy time).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..units import fmt_time
from .grouping import OUTSIDE, keys_of

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
        keys = keys_of(frame, level, None, window)
        out.loc[slow, "differs"] = [_differs(g, out, frame, keys, inside) for g in out.loc[slow, "group"]]
    return out


def _differs(g: object, rows: pd.DataFrame, frame: pd.DataFrame, keys: np.ndarray, inside: np.ndarray) -> str:
    """What sets step ``g`` apart from the median step: launches, the kernel slower by the most, the idle gap."""
    said = []
    launches = rows.loc[inside, "launches"].to_numpy(dtype=np.float64)
    mine = rows.loc[rows["group"] == g].iloc[0]
    med_l = float(np.median(launches))
    if mine["launches"] > 1.1 * med_l:
        said.append(f"more kernels ({int(mine['launches']):,} launches against a median of {med_l:,.0f})")
    t = frame["time_s"].to_numpy(dtype=np.float64)
    k = pd.DataFrame({"step": keys, "name": frame["name"].to_numpy(dtype=object), "t": np.nan_to_num(t)})
    k = k[pd.notna(k["step"])]
    per = k.groupby(["step", "name"], sort=False)["t"].sum().unstack(fill_value=0.0)
    if g in per.index:
        extra = per.loc[g] - per.drop(index=g).median()
        name = extra.idxmax()
        if extra[name] > 0:
            said.append(f"a slower kernel: {_short(str(name))} {fmt_time(per.loc[g, name])} against a median of "
                        f"{fmt_time(per.drop(index=g)[name].median())}")
    span = (rows["end_s"] - rows["start_s"]).to_numpy(dtype=np.float64)
    gap = span - rows["time_s"].to_numpy(dtype=np.float64)
    row = int(np.flatnonzero((rows["group"] == g).to_numpy())[0])
    med_gap = float(np.nanmedian(gap[inside])) if (~np.isnan(gap[inside])).any() else np.nan
    if not np.isnan(gap[row]) and gap[row] > max(2 * med_gap, 0) + 0.1 * float(rows["time_s"].iloc[row] or 0):
        said.append(f"a gap: the GPU idle {fmt_time(gap[row])} of the step against a median of {fmt_time(med_gap)}")
    return "; ".join(said) or "no single cause: its kernels are each a little slower"


def _short(name: str, n: int = 60) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"
