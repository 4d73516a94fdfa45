"""The roofline chart: every kernel of an analysis on its devices' roofs (:func:`roofline`), one chart with the
devices overlaid or one panel per device, at most :data:`.points.MAX_MARKS` marks, and a caption that says what
was left out and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypedDict, Unpack

import numpy as np
import pandas as pd

from .. import counting
from ..analyze import Analysis
from ..models import Hardware
from .layers import layers_for, panel_title
from .look import COLOR_BY, LAYOUTS, ColorBy, Layout, bound_colors
from .points import MAX_MARKS, base_domains, extend, kernel_points, selected, size_domain
from .roofs import shading
from .spec import BUILD, Build, RooflineFigure, VegaLiteSpec, finish, legend_param

#: roofline(numbers=...): the frame column that carries each kernel's number through the selection
_NUMBER_COL = "_roofcore_number"


class _Panel(TypedDict):
    """What the panels of one roofline share (keywords of :func:`.layers._layers_for`)."""

    color_by: ColorBy
    all_ceilings: bool
    achievable: bool
    hierarchical: bool
    color_domain: tuple[list[str], list[str]]
    size_dom: tuple[float, float]
    x_dom: tuple[float, float]
    y_dom: tuple[float, float]


def roofline(analysis: Analysis, hw_ids: Sequence[str] | None = None, *, color_by: ColorBy = "bound",
             top_n: int | None = None, hierarchical: bool = False, all_ceilings: bool = False,
             achievable: bool = True, layout: Layout = "overlay", max_marks: int = MAX_MARKS,
             width: int = 760, height: int = 440, highlight: Sequence[str] | None = None,
             numbers: Sequence[int] | np.ndarray | None = None) -> RooflineFigure:
    """The log-log roofline of ``analysis`` on ``hw_ids`` (default: every device in it).

    ``color_by``: "bound" or "group". ``top_n``: only the N kernels with the most time. ``hierarchical``: one
    mark per memory level, joined by a rule. ``layout``: "overlay" (one chart, devices by colour and shape)
    or "facet" (one panel per device, same axes, concatenated). Never more than ``max_marks`` kernel marks.
    ``highlight``: kernel names to emphasise (ringed, opaque); the other kernels are faded, and the legend
    click then selects nothing (the highlight sets the opacity instead).
    ``numbers``: one integer per workload row (0: none); each drawn kernel with a number has it printed
    beside its mark as "#n" (a report keys them to its table).
    """
    if color_by not in COLOR_BY or layout not in LAYOUTS:
        raise ValueError(f"roofline(color_by={color_by!r}, layout={layout!r}): color_by is one of {COLOR_BY}, "
                         f"layout one of {LAYOUTS}")
    if numbers is not None:
        analysis = _numbered(analysis, numbers)
    hw_ids = list(hw_ids or [h.id for h in analysis.hardware])
    hws = [analysis.result(h).hardware for h in hw_ids]
    total = len(analysis.workload)
    sub, capped, idx = selected(analysis, hw_ids, top_n=top_n, hierarchical=hierarchical, max_marks=max_marks)
    points = kernel_points(sub, hw_ids, hierarchical=hierarchical)
    if numbers is not None and len(points):
        points["number"] = sub.workload.frame[_NUMBER_COL].to_numpy()[points["kid"].to_numpy(dtype=np.int64)]
    notes: list[str] = []
    points = _drawable(points, notes, flops=sub.workload.frame["flops"].to_numpy(dtype=np.float64), total=total,
                       capped=capped, max_marks=max_marks, highlight=highlight,
                       count=_Counter(analysis.workload.frame, idx))
    if hierarchical:
        notes.append("Each kernel has one mark per memory level it has bytes for, at its intensity there (FLOPs ÷ that "
                     "level's bytes), joined by a line; the ringed mark is the level or link that bounds it; marks are "
                     "sized by time.")
    else:
        notes.append("x is each kernel's off-chip intensity; marks are sized by time.")
    x_dom, y_dom = base_domains(hws)
    nx, ny = extend(x_dom, points["intensity"].to_numpy()), extend(y_dom, points["perf"].to_numpy())
    if (nx, ny) != (x_dom, y_dom):
        notes.append("Axes extended by whole decades to fit kernels beyond the devices' usual range.")
    x_dom, y_dom = nx, ny
    if achievable and (any(lv.achievable for h in hws for lv in h.levels) or
                       any(c.achievable for h in hws for c in h.ceilings)):
        notes.append("Dashed lines: achievable (measured) roofs from the catalog.")

    field = "bound" if color_by == "bound" else "group"
    values = points[field].unique().tolist() if len(points) else []
    color_domain = bound_colors(values) if field == "bound" else (sorted(values), [])
    size_dom = size_domain(points)
    if len(hws) > 1 and (points["placed"] == "measured time").any():
        notes.append("A measured kernel has the same intensity and achieved rate on every device (measured where it "
                     "ran), so read it against each device's roofs: above a roof means that device could not have "
                     "been the one.")
    panel: _Panel = {"color_by": color_by, "all_ceilings": all_ceilings, "achievable": achievable,
                     "hierarchical": hierarchical, "color_domain": color_domain, "size_dom": size_dom,
                     "x_dom": x_dom, "y_dom": y_dom}
    build = Build()
    token = BUILD.set(build)
    try:
        if layout != "facet" or len(hws) == 1:
            chart = _overlay(sub, hws, points, notes, width=width, height=height, **panel)
        else:
            chart = _facets(sub, hws, points, notes, width=width, height=height, **panel)
        if build.views:
            chart["params"] = [legend_param(field, build.views)]
    finally:
        BUILD.reset(token)
    if build.unlabelled:
        names = list(dict.fromkeys(build.unlabelled if len(hws) > 1 else (u.split(": ", 1)[1] for u in build.unlabelled)))
        notes.append(f"No room for a label that crosses no line: {'; '.join(names)} (hover a line for its figures).")
    chart = finish(chart, usermeta={"roofcore": {"kernel_points": len(points), "kernels": int(points["kid"].nunique())
                                                  if len(points) else 0, "capped": bool(capped), "devices": hw_ids}})
    return RooflineFigure(chart=VegaLiteSpec(chart), notes=tuple(notes), points=len(points),
                          kernels=int(points["kid"].nunique()) if len(points) else 0, total_kernels=total,
                          capped=capped, devices=tuple(hw_ids), x_domain=x_dom, y_domain=y_dom,
                          datasets=build.datasets,
                          rows=idx[np.unique(points["kid"].to_numpy(dtype=np.int64))] if len(points) else idx[:0])


def _numbered(analysis: Analysis, numbers: Sequence[int] | np.ndarray) -> Analysis:
    """The analysis with the kernels' numbers as a frame column, so each number follows its row through the
    selection."""
    num = np.asarray(numbers, dtype=np.int64)
    if num.shape != (len(analysis.workload),):
        raise ValueError(f"numbers: one per kernel ({len(analysis.workload)}), got shape {num.shape}")
    return replace(analysis, workload=replace(analysis.workload,
                                              frame=analysis.workload.frame.assign(**{_NUMBER_COL: num})))


class _Counter:
    """Kernels among the selected rows (the points' ``kid``), counted as every page counts them
    (:mod:`roofcore.counting`: rows alike in name, precision, unit and group are one kernel, launches apart)."""

    def __init__(self, frame: pd.DataFrame, idx: np.ndarray) -> None:
        self.frame, self.idx = frame, idx
        self.launches = counting.rows_are_launches(frame)  # launches apart: notes say them too

    def counts(self, kids: np.ndarray | None = None, *, of: bool = False) -> tuple[int, int]:
        """Kernels and launches among ``kids`` (None: every selected row; ``of``: every row of the analysis)."""
        rows = None if of else self.idx if kids is None else self.idx[np.asarray(kids, dtype=np.int64)]
        return counting.kernel_counts(self.frame, rows)

    def __call__(self, kids: np.ndarray, word: str = "kernel(s)") -> str:
        """``"3 kernel(s)"``, or ``"3 kernel(s) (12 launches)"`` where the rows hold more launches than kernels."""
        kernels, launches = self.counts(kids)
        return (f"{kernels:,}{' ' + word if word else ''}"
                + (f" ({counting.plural(launches, 'launch', 'launches')})" if self.launches and launches != kernels
                   else ""))


def _drawable(points: pd.DataFrame, notes: list[str], *, flops: np.ndarray, total: int, capped: bool,
              max_marks: int, highlight: Sequence[str] | None, count: _Counter) -> pd.DataFrame:
    """The marks a log-log chart can draw (finite, positive intensity and FLOP/s), the highlighted ones marked
    (``hl``); ``notes`` gets what was left out and how the rest are placed, kernels counted by ``count``.
    ``flops``: per kernel selected (the points' ``kid``)."""
    drawn = len(flops)
    if capped or drawn < total:
        (k_top, l_top), (k_all, l_all) = count.counts(), count.counts(of=True)
        head = f"Capped at {max_marks:,} marks: showing" if capped else "Showing"
        notes.append(f"{head} the top {k_top:,} of {k_all:,} kernels"
                     + (f" ({l_top:,} of {l_all:,} launches)" if count.launches else "") + " by time.")
    ok = np.isfinite(points["intensity"].to_numpy(dtype=np.float64)) & (points["intensity"] > 0).to_numpy() & \
        np.isfinite(points["perf"].to_numpy(dtype=np.float64)) & (points["perf"] > 0).to_numpy()
    # a kernel is left out when none of its marks can be drawn (the hierarchical view may lose one level only, or
    # have no mark at all for a kernel without bytes at any level)
    gone = np.setdiff1d(np.arange(len(flops)), points.loc[ok, "kid"].to_numpy(dtype=np.int64))
    if len(gone):
        moves = flops[gone] == 0
        if moves.any():
            notes.append(f"{count(gone[moves])} not drawn: 0 FLOP (data movement: copies, memsets), so there "
                         "is no point on a log-log chart.")
        if not moves.all():
            notes.append(f"{count(gone[~moves])} not drawn: FLOPs or bytes unknown or zero, so there is no "
                         "point on a log-log chart.")
    points = points[ok].reset_index(drop=True)
    if highlight is not None:
        wanted = set(map(str, highlight))
        points["hl"] = points["name"].isin(wanted).to_numpy()
        missing = len(wanted - set(points.loc[points["hl"], "name"]))
        if missing:
            notes.append(f"{missing:,} highlighted kernel(s) not drawn (left out above, or not in this analysis).")
    placed = points["placed"].astype(str)
    on_roof = placed.str.startswith("on its roof").to_numpy()
    if on_roof.any():
        notes.append("Kernels without a measured time are placed on their roof (attainable FLOP/s)"
                     + (f": {count(points.loc[on_roof, 'kid'].unique(), '')} of them." if
                        on_roof.sum() < len(points) else ", which is all of them here."))
    rated = placed.str.startswith("achieved rate").to_numpy()
    if rated.any():
        notes.append(f"{count(points.loc[rated, 'kid'].unique())} placed by achieved rates alone (FLOP/s and "
                     "byte/s from the profiler, no duration): drawn at the smallest size, their time unknown.")
    return points


def _overlay(sub: Analysis, hws: list[Hardware], points: pd.DataFrame, notes: list[str], *, width: int,
             height: int, **panel: Unpack[_Panel]) -> dict[str, Any]:
    """One chart with every device's roofs, the first device's regions shaded (where they agree with its marks)."""
    multi = len(hws) > 1
    key, why = shading(sub, hws[0], points)
    layers = layers_for(sub, hws, points, width=width, height=height, shade=hws[0] if key else None,
                         shade_ceiling=key, multi=multi, **panel)
    if not key:
        notes.append(f"No memory/compute shading: {why}.")
    title = panel_title(hws[0].name if not multi else " vs ".join(h.name for h in hws), hws, points)
    chart: dict[str, Any] = {"layer": layers, "width": width, "height": height, "title": title}
    if multi:
        # roofs coloured by device and marks by bound: two colour scales; the device legend shows shapes
        chart["resolve"] = {"scale": {"color": "independent", "stroke": "independent"},
                            "legend": {"shape": "independent"}}
        notes.append((f"Shading shows where kernels are memory- or compute-bound on {hws[0].name}; marks on "
                      if key else "Marks on ") + f"{hws[0].name} are filled, on the others hollow.")
    return chart


def _facets(sub: Analysis, hws: list[Hardware], points: pd.DataFrame, notes: list[str], *, width: int,
            height: int, **panel: Unpack[_Panel]) -> dict[str, Any]:
    """One panel per device, same axes, two a row (as wide as one overlaid chart), legends below."""
    panels = []
    pw = max(320, int(width * 0.5))  # two panels a row, legends below: as wide as one overlaid chart
    ph = max(260, int(height * 0.7))
    for h in hws:
        p = points[points["device_id"] == h.id]
        key, why = shading(sub, h, p)
        layers = layers_for(sub, [h], p, width=pw, height=ph, shade=h if key else None, shade_ceiling=key,
                             multi=False, orient="bottom", **panel)
        if not key:
            notes.append(f"No memory/compute shading on {h.name}: {why}.")
        panels.append({"layer": layers, "width": pw, "height": ph, "title": panel_title(h.name, [h], p)})
    return {"concat": panels, "columns": 2}  # one legend selection, shared by every panel
