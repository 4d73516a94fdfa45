"""The kernels a chart draws and where: which kernels (top by time, at most :data:`MAX_MARKS` marks), one mark
per kernel (per level in the hierarchical view) at its intensity and FLOP/s, the axes' domains and mark sizes.

Everything comes from the engine: positions from :meth:`Analysis.table` (x = arithmetic intensity in FLOP/byte,
y = FLOP/s), built with vectorised pandas. Axes are fixed by the devices' figures (x from 0.01 FLOP/B to a
decade past the largest ridge, y from about 1e-4 × the highest peak to 2 × it), so two charts of the same device
line up; they grow by whole decades only when a kernel would otherwise fall off the chart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..models import Hardware
from ..roofline import DeviceResult
from .look import SIZE_RANGE

#: most kernel marks one chart sends to the browser (all devices and levels together)
MAX_MARKS = 5000
#: x axis starts here (FLOP/byte)
X_MIN = 0.01
#: y axis starts this fraction of the highest peak below it (rounded down to a decade)
Y_SPAN = 1e-4
#: y axis ends this factor above the highest peak
Y_HEADROOM = 2.0


# ----------------------------------------------------------------------------------------------- domains


def base_domains(hws: Sequence[Hardware]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Axes fixed by the devices alone: x 0.01 .. a decade past the largest ridge, y ~1e-4·peak .. 2·peak."""
    peak = max(c.peak for h in hws for c in h.ceilings)
    slowest = min(lv.bandwidth for h in hws for lv in h.levels)
    x_max = 10.0 ** math.ceil(math.log10(peak / slowest * 10))
    y_min = 10.0 ** math.floor(math.log10(peak * Y_SPAN))
    return (X_MIN, x_max), (y_min, peak * Y_HEADROOM)


def extend(dom: tuple[float, float], values: np.ndarray) -> tuple[float, float]:
    """Grow a log domain by whole decades so every finite positive value fits."""
    v = values[np.isfinite(values) & (values > 0)]
    if not len(v):
        return dom
    lo, hi = dom
    if v.min() < lo:
        lo = 10.0 ** math.floor(math.log10(v.min()))
    if v.max() > hi:
        hi = 10.0 ** math.ceil(math.log10(v.max()))
    return lo, hi


# ----------------------------------------------------------------------------------------------- kernels


def _time_key(frame: pd.DataFrame, results: Sequence[DeviceResult]) -> np.ndarray:
    """Seconds to rank kernels by: measured time where known, else the mean roofline time over devices."""
    t = frame["time_s"].to_numpy(dtype=np.float64)
    roof = np.full(len(t), np.nan)
    if results:  # the mean over the devices that give the kernel a roof time (none: unknown, no warning)
        stack = np.vstack([r.t_roof for r in results])
        known = (~np.isnan(stack)).sum(axis=0)
        np.divide(np.nansum(stack, axis=0), known, out=roof, where=known > 0)
    key = np.where(np.isnan(t), roof, t)
    return np.nan_to_num(key, nan=0.0)


def _levels_per_kernel(analysis: Analysis, hws: Sequence[Hardware]) -> int:
    names = set(analysis.workload.byte_names)
    return max(1, max(len(names & {*h.level_map, *h.link_map}) for h in hws))


def select_kernels(analysis: Analysis, hw_ids: Sequence[str], *, top_n: int | None = None, hierarchical: bool = False,
                   max_marks: int = MAX_MARKS) -> tuple[Analysis, bool]:
    """The kernels to draw, as an analysis of just them (its rows of the results, nothing re-run): top by time,
    capped.

    Returns ``(analysis_of_drawn_kernels, capped)``; ``capped`` is True when ``max_marks`` (not ``top_n``)
    left kernels out. Marks = kernels × devices (× levels in the hierarchical view).
    """
    sub, capped, _ = selected(analysis, hw_ids, top_n=top_n, hierarchical=hierarchical, max_marks=max_marks)
    return sub, capped


def selected(analysis: Analysis, hw_ids: Sequence[str], *, top_n: int | None = None, hierarchical: bool = False,
             max_marks: int = MAX_MARKS) -> tuple[Analysis, bool, np.ndarray]:
    """:func:`select_kernels`, and the row positions in ``analysis`` of the selected kernels (in the order of the
    returned analysis's rows)."""
    results = [analysis.result(h) for h in hw_ids]
    hws = [r.hardware for r in results]
    per_kernel = len(hws) * (_levels_per_kernel(analysis, hws) if hierarchical else 1)
    limit = max(1, max_marks // per_kernel)
    n = len(analysis.workload)
    want = n if not top_n else min(top_n, n)
    capped = want > limit
    keep = min(want, limit)
    if keep >= n and [h.id for h in analysis.hardware] == list(hw_ids):
        return analysis, False, np.arange(n)
    frame = analysis.workload.frame
    if keep >= n:
        idx = np.arange(n)
    else:
        key = _time_key(frame, results)
        idx = np.argpartition(-key, keep - 1)[:keep]
        idx = idx[np.argsort(-key[idx], kind="stable")]
    return analysis.take(idx, hw_ids), capped, idx  # its rows of the results: nothing evaluated again


def kernel_points(analysis: Analysis, hw_ids: Sequence[str], *, hierarchical: bool = False) -> pd.DataFrame:
    """One row per kernel mark: device, intensity (x, FLOP/B), FLOP/s (y), time for size, and tooltip fields.

    y is the achieved FLOP/s where a measured time exists, else the attainable FLOP/s (the kernel sits on its
    roof). x is the off-chip intensity (the binding level's where off-chip bytes are unknown); in the
    hierarchical view there is one mark per memory level or link the kernel has bytes for, at that level's
    intensity, off-chip first, and ``binding`` is True on the mark of the level or link that bounds the kernel.
    Every row carries the kernel's intensity at each level and link as ``i_<name>`` (FLOP/B; for the tooltip).
    """
    frames = []
    empty: pd.DataFrame | None = None
    for hw_id in hw_ids:
        hw = analysis.result(hw_id).hardware
        tab = analysis.table(hw_id, messages=False)
        timed = analysis.timed
        rated = ~timed & tab["achieved_flops_per_s"].notna().to_numpy()  # achieved FLOP/s without a duration
        y = np.where(timed | rated, tab["achieved_flops_per_s"], tab["attainable_flops_per_s"])
        size = np.where(timed, tab["time_s"], tab["t_roof_s"])
        if rated.any():  # no time to size the mark by: the smallest mark (its tooltip says why)
            known = size[np.isfinite(size) & (size > 0)]
            size = np.where(rated, known.min() if len(known) else 0.1, size)
        cols: dict[str, Any] = {
            "kid": np.arange(len(tab)), "device": hw.name, "device_id": hw.id, "name": tab["name"].astype(str),
            "count": tab["count"], "group": tab["group"].fillna("(none)").astype(str),
            "bound": tab["bound"].fillna("unknown").astype(str), "ceiling": tab["ceiling"].fillna("").astype(str),
            "flops": tab["flops"], "time_s": tab["time_s"], "t_roof_s": tab["t_roof_s"],
            "attainable": tab["attainable_flops_per_s"], "achieved": tab["achieved_flops_per_s"],
            "efficiency": tab["efficiency"], "headroom_s": tab["headroom_s"], "perf": y,
            "size_s": size,
            "placed": np.where(timed, "measured time", np.where(rated, "achieved rate (no duration: smallest mark)",
                                                                "on its roof (no measured time)")),
        }
        have = set(analysis.workload.byte_names)
        names = [lv.name for lv in hw.levels if lv.name in have] + [lk.name for lk in hw.links if lk.name in have]
        # (the device's order, off-chip first)
        display = {**{lv.name: lv.display for lv in hw.levels}, **{lk.name: lk.display for lk in hw.links}}
        for name in names:
            cols[f"i_{name}"] = tab[f"intensity_{name}"].to_numpy(dtype=np.float64)
        if hierarchical:
            base = pd.DataFrame(cols)
            # no kernel may have a mark (a time-only profile): then no rows, with a part's columns and types
            empty = base.iloc[0:0].assign(level="", bytes=0.0, intensity=0.0, binding=False)
            bound = base["bound"].to_numpy(dtype=object)
            for name in names:
                b = tab[f"bytes_{name}"].to_numpy(dtype=np.float64)
                sel = (b > 0) | (rated & (tab[f"intensity_{name}"].to_numpy(dtype=np.float64) > 0))  # by rates
                part = base[sel].copy()
                part["level"] = display[name]
                part["bytes"] = b[sel]
                part["intensity"] = tab[f"intensity_{name}"].to_numpy()[sel]
                kind = "memory" if name in hw.level_map else "link"
                part["binding"] = bound[sel] == f"{kind}:{name}"
                frames.append(part)
        else:
            off = hw.offchip.name
            if f"intensity_{off}" in tab:
                x = tab[f"intensity_{off}"].to_numpy(dtype=np.float64, copy=True)  # written below
                b = tab[f"bytes_{off}"].to_numpy(dtype=np.float64, copy=True)
            else:
                x, b = np.full(len(tab), np.nan), np.full(len(tab), np.nan)
            lvl = np.full(len(tab), display[off], dtype=object)
            # off-chip bytes unknown: use the binding level, the roof that set the kernel's bound
            missing = np.isnan(x) & tab["binding_level"].notna().to_numpy()
            for name in names:
                sel = missing & (tab["binding_level"] == name).to_numpy()
                if sel.any():
                    x[sel] = tab[f"intensity_{name}"].to_numpy()[sel]
                    b[sel] = tab[f"bytes_{name}"].to_numpy()[sel]
                    lvl[sel] = display[name]
            cols["level"], cols["bytes"], cols["intensity"] = lvl, b, x
            frames.append(pd.DataFrame(cols))  # framed once: a column set on a frame costs pandas ~50 µs
    if not frames:
        return empty if empty is not None else pd.DataFrame(columns=["kid", "device", "intensity", "perf"])
    out = pd.concat(frames, ignore_index=True)
    return out


# ----------------------------------------------------------------------------------------------- sizes


def size_domain(points: pd.DataFrame) -> tuple[float, float]:
    """Seconds mapped to the smallest and largest mark (log scale)."""
    t = points["size_s"].to_numpy(dtype=np.float64)
    t = t[np.isfinite(t) & (t > 0)]
    if not len(t):
        return 0.1, 1.0
    lo, hi = float(t.min()), float(t.max())
    return (hi / 10, hi) if lo >= hi else (lo, hi)


def legend_times(dom: tuple[float, float]) -> list[float]:
    """Three round times (seconds) spanning the size scale, for its legend."""
    lo, hi = dom
    picks = [lo, math.sqrt(lo * hi), hi] if hi > lo * 1.5 else [hi]
    out: list[float] = []
    for t in picks:
        e = math.floor(math.log10(t))
        r = round(t / 10 ** e) * 10 ** e
        r = min(max(r, lo), hi)
        if not out or r > out[-1] * 1.2:
            out.append(float(f"{r:.2g}"))
    return out


def radius_px(t: np.ndarray | pd.Series, dom: tuple[float, float]) -> np.ndarray:
    """Mark radius in pixels for time ``t`` under the size scale (area ``SIZE_RANGE`` over log ``dom``)."""
    lt = np.log(np.clip(np.asarray(t, dtype=np.float64), dom[0], dom[1]))
    frac = (lt - math.log(dom[0])) / max(math.log(dom[1] / dom[0]), 1e-12)
    area = SIZE_RANGE[0] + np.nan_to_num(frac, nan=0.0) * (SIZE_RANGE[1] - SIZE_RANGE[0])
    return np.sqrt(area / math.pi)
