"""Two runs on one roofline: each kernel's old point (a grey ring) joined to its new one by an arrow, kernels
matched by name (:func:`roofline_compare`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..analyze import Analysis
from .layers import layers_for
from .look import COMPARE_ARROW_COLOR, COMPARE_OLD_COLOR, bound_colors
from .points import MAX_MARKS, base_domains, extend, kernel_points, size_domain
from .roofs import shading
from .spec import (
    ANGLE,
    BUILD,
    X2,
    Y2,
    Build,
    RooflineFigure,
    VegaLiteSpec,
    finish,
    legend_param,
    scales,
    src,
    tooltip_field,
)


def compare_points(old: Analysis, new: Analysis, hw_id: str) -> pd.DataFrame:
    """One row per kernel name present in both runs: its old and new point (x = off-chip intensity, y = FLOP/s).

    Each run's launches should already be summed by name (``roofcore.plan.by_name``); otherwise the first row
    of each name is used. y is the achieved FLOP/s where measured, else the attainable FLOP/s."""
    po = kernel_points(old, [hw_id]).drop_duplicates("name")
    pn = kernel_points(new, [hw_id]).drop_duplicates("name")
    m = po[["name", "intensity", "perf", "size_s", "bound"]].merge(
        pn[["name", "intensity", "perf", "size_s", "bound"]], on="name", suffixes=("_old", "_new"), how="inner")
    with np.errstate(divide="ignore", invalid="ignore"):
        m["speedup"] = m["size_s_old"] / m["size_s_new"]
    return m


def roofline_compare(old: Analysis, new: Analysis, hw_id: str, *, width: int = 760, height: int = 440,
                     max_pairs: int = MAX_MARKS // 2, achievable: bool = True) -> RooflineFigure:
    """The roofline of ``new`` on one device with an arrow (a rule, old end hollow, new end filled) from each
    kernel's old point to its new one; kernels are matched by name (aggregate launches by name first).

    Old points are grey rings; new points are coloured by bound as in :func:`roofline`. At most ``max_pairs``
    pairs are drawn (those with the most old time first)."""
    hw = new.result(hw_id).hardware
    pairs = compare_points(old, new, hw_id)
    ok = np.ones(len(pairs), dtype=bool)
    for c in ("intensity_old", "perf_old", "intensity_new", "perf_new"):
        v = pairs[c].to_numpy(dtype=np.float64)
        ok &= np.isfinite(v) & (v > 0)
    notes: list[str] = []
    lost = int((~ok).sum())
    pairs = pairs[ok].sort_values("size_s_old", ascending=False, na_position="last")
    if len(pairs) > max_pairs:
        notes.append(f"Showing the {max_pairs:,} kernels with the most old time of {len(pairs):,} matched.")
        pairs = pairs.head(max_pairs)
    if lost:
        notes.append(f"{lost:,} matched kernel(s) not drawn: FLOPs or bytes unknown or zero in one of the runs.")
    n_old, n_new = len(old.workload), len(new.workload)
    notes.append(f"Arrows go from each kernel's old point (grey ring) to its new one (filled), matched by name: "
                 f"{len(pairs):,} drawn; {n_old:,} kernels before, {n_new:,} after.")
    sub = new
    points = kernel_points(sub, [hw_id])
    points = points[points["name"].isin(set(pairs["name"]))].drop_duplicates("name").reset_index(drop=True)
    x_dom, y_dom = base_domains([hw])
    for col in ("intensity_old", "intensity_new"):
        x_dom = extend(x_dom, pairs[col].to_numpy(dtype=np.float64))
    for col in ("perf_old", "perf_new"):
        y_dom = extend(y_dom, pairs[col].to_numpy(dtype=np.float64))
    values = points["bound"].unique().tolist() if len(points) else []
    color_domain = bound_colors(values)
    size_dom = size_domain(points) if len(points) else (0.1, 1.0)
    build = Build()
    token = BUILD.set(build)
    key, why = shading(sub, hw, points)
    if not key:
        notes.append(f"No memory/compute shading: {why}.")
    try:
        layers = layers_for(sub, [hw], points, x_dom=x_dom, y_dom=y_dom, width=width, height=height,
                             color_by="bound", all_ceilings=False, achievable=achievable, hierarchical=False,
                             shade=hw if key else None, shade_ceiling=key, color_domain=color_domain, multi=False,
                             size_dom=size_dom)
        layers += _arrow_layers(pairs, x_dom, y_dom, width=width, height=height)
        chart: dict[str, Any] = {"layer": layers, "width": width, "height": height,
                                 "title": f"{hw.name}: before → after"}
        if build.views:
            chart["params"] = [legend_param("bound", build.views)]
    finally:
        BUILD.reset(token)
    chart = finish(chart, usermeta={"roofcore": {"compare_pairs": len(pairs), "devices": [hw_id]}})
    return RooflineFigure(chart=VegaLiteSpec(chart), notes=tuple(notes), points=len(points) + len(pairs),
                          kernels=len(pairs), total_kernels=n_new, capped=False, devices=(hw_id,),
                          x_domain=x_dom, y_domain=y_dom, datasets=build.datasets)


def _arrow_layers(pairs: pd.DataFrame, x_dom: tuple[float, float], y_dom: tuple[float, float], *, width: int,
                  height: int) -> list[dict[str, Any]]:
    """An arrow per matched kernel (a rule, an arrowhead at its middle) and a grey ring on each old point."""
    layers: list[dict[str, Any]] = []
    x, y = scales(x_dom, y_dom)
    arrows = pairs.rename(columns={"intensity_old": "x", "perf_old": "y", "intensity_new": "x2",
                                   "perf_new": "y2"})[["name", "x", "y", "x2", "y2", "speedup"]]
    tip = [tooltip_field("name", "Kernel"), tooltip_field("speedup", "Speedup", "quantitative", ".2f")]
    layers.append({"data": src(arrows), "mark": {"type": "rule", "strokeWidth": 1.4, "color": COMPARE_ARROW_COLOR,
                                                  "opacity": 0.8, "clip": True},
                   "description": "compare_arrows",
                   "encoding": {"x": x, "y": y, "x2": X2, "y2": Y2, "tooltip": tip}})
    # an arrowhead at each segment's middle (log space), turned to the segment's direction on screen
    ok = (arrows[["x", "y", "x2", "y2"]] > 0).all(axis=1)
    heads = arrows[ok].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        dx = np.log10(heads["x2"] / heads["x"]) * width / np.log10(x_dom[1] / x_dom[0])
        dy = np.log10(heads["y2"] / heads["y"]) * height / np.log10(y_dom[1] / y_dom[0])
    heads["angle"] = np.degrees(np.arctan2(dx, dy))  # Vega turns marks clockwise from pointing up
    heads["x"], heads["y"] = np.sqrt(heads["x"] * heads["x2"]), np.sqrt(heads["y"] * heads["y2"])
    heads = heads[np.hypot(dx, dy) > 12][["name", "x", "y", "angle", "speedup"]]  # too short to point
    if len(heads):
        layers.append({"data": src(heads), "mark": {"type": "point", "shape": "triangle", "filled": True,
                                                     "size": 70, "color": COMPARE_ARROW_COLOR, "opacity": 0.9,
                                                     "clip": True},
                       "description": "compare_arrowheads",
                       "encoding": {"x": x, "y": y, "angle": ANGLE, "tooltip": tip}})
    olds = arrows[["name", "x", "y", "speedup"]]
    layers.append({"data": src(olds), "mark": {"type": "point", "filled": False, "stroke": COMPARE_OLD_COLOR,
                                                "strokeWidth": 1.6, "size": 60, "opacity": 0.95, "clip": True},
                   "description": "compare_old", "encoding": {"x": x, "y": y, "tooltip": tip}})
    return layers
