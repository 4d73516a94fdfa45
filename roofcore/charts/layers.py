"""The layers of one roofline panel (one device, or several overlaid): shaded regions, roofs and ridges, the
kernel marks, and the labels, each layer a Vega-Lite dict whose data is a named DataFrame (:mod:`.spec`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..models import Hardware, Link, MemoryLevel
from ..units import fmt_bandwidth, fmt_intensity, fmt_rate
from .labels import (
    ceiling_groups,
    ceiling_labels,
    distinct_roofs,
    halo_labels,
    label_key,
    label_key_below,
    number_labels,
    roof_labels,
)
from .look import (
    BINDING_COLOR,
    GROUP_SCHEME,
    HIGHLIGHT_COLOR,
    HIGHLIGHT_FADE,
    LINK_COLOR,
    REGION_FILL,
    ROOF_COLOR,
    SIZE_RANGE,
    ColorBy,
)
from .placer import Placer, annotation_height
from .points import legend_times, radius_px
from .roofs import main_ceiling, ridge_points, roof_segments, shown_ceilings
from .spec import (
    ANGLE,
    BUILD,
    LEGEND_PARAM,
    TEXT,
    X2,
    Y2,
    device_colour,
    fmt_expr,
    intensity_expr,
    js,
    nominal,
    opacity_by_legend,
    pct_expr,
    scales,
    src,
    tooltip_field,
    view_name,
)

#: the label placer avoids at most this many marks (the largest)
LABEL_AVOID_MARKS = 600
#: region and ridge annotations and the keys' titles: small grey text
_MUTED = {"fontSize": 11, "color": "#475569"}


def panel_title(text: str, hws: Sequence[Hardware], points: pd.DataFrame) -> str | dict[str, Any]:
    """The panel's title; with highlighted kernels, a subtitle naming the roof or ceiling that binds them, so a
    small chart says it even where its line has no room for a label."""
    if not len(points) or "hl" not in points.columns or not points["hl"].any():
        return text
    hl = points[points["hl"]]
    said = []
    for h in hws:
        bounds = hl.loc[hl["device_id"] == h.id, "bound"].unique().tolist()
        for b in bounds:
            kind, _, name = str(b).partition(":")
            if kind == "compute" and name in h.ceiling_map:
                c = h.ceiling_map[name]
                said.append(f"{c.precision.value} {c.unit.value} · {fmt_rate(c.peak)}")
            elif kind in ("memory", "link") and name in (h.level_map if kind == "memory" else h.link_map):
                res = (h.level_map if kind == "memory" else h.link_map)[name]
                said.append(f"{res.display} {fmt_bandwidth(res.bandwidth)}")
    if not said:
        return text
    return {"text": text, "subtitle": "Ringed kernels bound by " + ", ".join(dict.fromkeys(said)),
            "subtitleColor": HIGHLIGHT_COLOR, "subtitleFontSize": 12}


def layers_for(analysis: Analysis, hws: Sequence[Hardware], points: pd.DataFrame, *,
                x_dom: tuple[float, float], y_dom: tuple[float, float], width: int, height: int,
                color_by: ColorBy, all_ceilings: bool, achievable: bool, hierarchical: bool, shade: Hardware | None,
                color_domain: tuple[list[str], list[str]], multi: bool, size_dom: tuple[float, float],
                orient: str = "right", shade_ceiling: str | None = None) -> list[dict[str, Any]]:
    """The layers of one roofline panel (one device, or several overlaid): regions, roofs, ridges, kernels, labels.

    ``shade``: the device whose memory-/compute-bound regions are shaded (None: no regions), split at the ridge
    of ``shade_ceiling`` (default: the ceiling most of its kernels' time runs on); see :func:`.roofs.shading`.
    Layers are built in drawing order, and each layer's data is named in that order (:func:`.spec._src`)."""
    x, y = scales(x_dom, y_dom)
    names = [h.name for h in hws]
    layers: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    placer = Placer(x_dom, y_dom, width, height)
    if len(points):
        # labels steer clear of the largest marks; thousands of small ones cost more than they would change
        size = points["size_s"].to_numpy(dtype=np.float64)
        big = np.argsort(-size, kind="stable")  # the largest first, ties in order (as nlargest keeps them)
        big = big[~np.isnan(size[big])][:LABEL_AVOID_MARKS]
        placer.add_points(points["intensity"].to_numpy()[big], points["perf"].to_numpy()[big],
                          radius_px(size[big], size_dom))
    seg, rid, mains = _roofs(hws, points, x_dom, y_dom, all_ceilings=all_ceilings, achievable=achievable)
    if len(rid):
        placer.add_points(rid["x"], rid["y"], np.full(len(rid), 5.0))
    placer.add_segments(seg)
    if shade is not None:
        regions, notes = _regions(shade, shade_ceiling or mains[shade.id], placer, x, y, x_dom=x_dom, y_dom=y_dom,
                                  height=height, achievable=analysis.achievable)
        layers += regions
        labels += notes
    layers += _roof_layers(seg, rid, x, y, names, multi)
    if len(points):
        levels: dict[str, str] = {}
        for h in hws:
            resources: tuple[MemoryLevel | Link, ...] = (*h.levels, *h.links)
            for res in resources:
                levels.setdefault(res.name, res.display)
        layers.extend(_kernel_layers(points, x, y, color_by=color_by, color_domain=color_domain, multi=multi,
                                     hierarchical=hierarchical, names=names, size_dom=size_dom, orient=orient,
                                     levels=levels))

    if len(points) and "number" in points.columns:  # before the roof labels, which then steer clear of them
        labels += number_labels(points, placer, size_dom, x, y)
    labels += _line_labels(seg, points, placer, x, y, names, multi)
    return layers + labels


def _roofs(hws: Sequence[Hardware], points: pd.DataFrame, x_dom: tuple[float, float],
           y_dom: tuple[float, float], *, all_ceilings: bool, achievable: bool
           ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """Every device's roof and ceiling segments, its ridges against the ceiling most of its kernels' time runs
    on, and that ceiling's key by device id."""
    segs, ridges, mains = [], [], {}
    for h in hws:
        # every mark is on this device when it is the only one (no filtered copy of the points)
        t = None if not len(points) else points if len(hws) == 1 else points[points["device_id"] == h.id]
        used = [] if t is None or t.empty else [c for c in t["ceiling"].unique() if c]
        ceilings = shown_ceilings(h, used, all_ceilings=all_ceilings)
        segs.append(roof_segments(h, ceilings, x_dom, y_dom, achievable=achievable))
        mains[h.id] = main = main_ceiling(h, None if t is None else t.drop_duplicates("kid"))
        ridges.append(ridge_points(h, main, x_dom, y_dom))
    return pd.concat(segs, ignore_index=True), pd.concat(ridges, ignore_index=True), mains


def _regions(shade: Hardware, key: str, placer: Placer, x: dict[str, Any], y: dict[str, Any], *,
             x_dom: tuple[float, float], y_dom: tuple[float, float], height: int,
             achievable: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The memory- and compute-bound regions of ``shade``, split at its off-chip ridge against ceiling ``key``,
    and their annotations (the sides' names and the ridge's figure): (region layers, annotation layers)."""
    layers: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    r = min(max(shade.ridge(key, achievable=achievable)[shade.offchip.name], x_dom[0]), x_dom[1])
    ceil = shade.ceiling_map[key]
    ridge_text = f"ridge {fmt_intensity(r)} ({ceil.precision.value} {ceil.unit.value})"
    regions = pd.DataFrame({"region": list(REGION_FILL), "x": [x_dom[0], r], "x2": [r, x_dom[1]],
                            "y": [y_dom[0]] * 2, "y2": [y_dom[1]] * 2})
    for region, fill in REGION_FILL.items():
        layers.append({"data": src(regions[regions["region"] == region]),
                       "mark": {"type": "rect", "fill": fill, "opacity": 0.5}, "description": f"region_{region}",
                       "encoding": {"x": x, "x2": X2, "y": y, "y2": Y2}})
    line_px = math.log10(y_dom[1] / y_dom[0]) / height  # decades per pixel
    sides = (("← memory-bound", r / 1.12, "right", 0), ("compute-bound →", r * 1.12, "left", 0))
    # the ridge's figure centred over the boundary, else over the compute side, else left out (the diamonds
    # and the shading's edge still show it): at the lowest height where no roof or label crosses them
    base: float | None = None
    texts: tuple[tuple[str, float, str, int], ...] = sides
    for texts in ((*sides, (ridge_text, r, "center", 16)), (*sides, (ridge_text, r * 1.12, "left", 16)), sides):
        base = annotation_height(placer, texts)
        if base is not None:
            break
    if base is None:
        return layers, labels
    for text, tx, align, up in texts:
        ty = y_dom[0] * 10 ** ((base + up) * line_px)
        placer.block(tx, ty, text, align)
        role = "ridge_label" if up else f"region_label_{align}"
        labels += halo_labels(pd.DataFrame({"x": [tx], "y": [ty], "text": [text]}), {"x": x, "y": y, "text": TEXT},
                          role, align=align, baseline="bottom", **({} if up else {"fontStyle": "italic"}), **_MUTED)
    return layers, labels


def _one_device_roof() -> dict[str, Any]:
    """The colour of one device's roof lines and their keys: fixed (links purple), no scale."""
    return {"condition": {"test": "(datum.kind === 'link')", "value": LINK_COLOR}, "value": ROOF_COLOR}


def _roof_layers(seg: pd.DataFrame, rid: pd.DataFrame, x: dict[str, Any], y: dict[str, Any], names: list[str],
                 multi: bool) -> list[dict[str, Any]]:
    """The roof and ceiling lines (theoretical solid, achievable dashed) and the ridge diamonds."""
    if multi:
        line_color, quiet = device_colour(names, legend=True), device_colour(names)
    else:  # one device: fixed colours, so the only colour scale is the kernels'
        line_color = quiet = _one_device_roof()
    tip = [tooltip_field("device", "Device"), tooltip_field("name", "Roof"), tooltip_field("value", "Value"), tooltip_field("source", "Source")]
    if len(seg) and (seg["derivation"] != "–").any():  # how a figure was worked out: a median's spread over GPUs
        tip.append(tooltip_field("derivation", "Derivation"))
    layers: list[dict[str, Any]] = [
        {"data": src(seg[~seg["achievable"]]), "mark": {"type": "rule", "strokeWidth": 2, "clip": True},
         "description": "roofs",
         "encoding": {"x": x, "y": y, "x2": X2, "y2": Y2, "color": line_color, "tooltip": tip}}]
    ach = seg[seg["achievable"]]
    if len(ach):
        layers.append({"data": src(ach), "mark": {"type": "rule", "strokeWidth": 1.5, "strokeDash": [6, 4],
                                                   "clip": True, "opacity": 0.8},
                       "description": "achievable_roofs",
                       "encoding": {"x": x, "y": y, "x2": X2, "y2": Y2, "color": quiet, "tooltip": tip}})
    if len(rid):
        layers.append({"data": src(rid), "mark": {"type": "point", "shape": "diamond", "size": 80, "filled": True,
                                                   "fill": "white", "strokeWidth": 1.6, "opacity": 1},
                       "description": "ridges",
                       "encoding": {"x": x, "y": y,
                                    "stroke": device_colour(names) if multi else {"value": ROOF_COLOR},
                                    "tooltip": [tooltip_field("device", "Device"), tooltip_field("text", "Ridge")]}})
    return layers


def _line_labels(seg: pd.DataFrame, points: pd.DataFrame, placer: Placer, x: dict[str, Any],
                 y: dict[str, Any], names: list[str], multi: bool) -> list[dict[str, Any]]:
    """The ceiling and roof labels, along their lines where every one has room, else as keys (text layers)."""
    labels: list[dict[str, Any]] = []
    # several devices: each label in its device's colour; one said for devices whose lines coincide, neutral
    text_color = {**device_colour(names), "condition": {"test": "datum.shared", "value": ROOF_COLOR}} if multi \
        else {"value": ROOF_COLOR}
    # the roofs binding the highlighted kernels get their labels first (a small chart has room for few)
    first = frozenset(points.loc[points["hl"], "bound"]) if len(points) and "hl" in points.columns else frozenset()
    build = BUILD.get()
    keys: list[tuple[str, pd.DataFrame]] = []

    def inline_or_key(place: Callable[[], pd.DataFrame], expected: int, entries: pd.DataFrame, role: str,
                      title: str) -> pd.DataFrame:
        """Labels along their lines when every one has room; else all of them in a key, top to bottom (lines too
        close to label one by one); else (no room for a key either) the inline ones, the rest named below."""
        before, said = placer.labels.copy(), len(build.unlabelled) if build else 0
        placed = place()
        if len(placed) >= expected or not expected:
            return placed
        placer.labels = before
        key = label_key(entries, title, placer)
        if key is None:  # no room in the plot: under the x axis (the chart grows by the key's height)
            key = label_key_below(entries, title, placer)
        if build is not None:
            del build.unlabelled[said:]
        keys.append((role, key))
        return placed.iloc[0:0]

    found = ceiling_groups(seg, first)
    groups = found.sort_values("y", ascending=False)  # the key's order, top to bottom
    cl = inline_or_key(lambda: ceiling_labels(seg, placer, first, found), len(groups), groups.assign(kind="compute"),
                       "ceiling_key", "Ceilings, top to bottom")
    for below, base, dy in ((False, "bottom", -3), (True, "top", 3)):
        part = cl[cl["below"] == below]
        if len(part):
            labels += halo_labels(part, {"x": x, "y": y, "text": TEXT, "color": text_color},
                              "ceiling_labels" + ("_below" if below else ""), align="left", baseline=base, dy=dy, dx=2,
                              fontSize=12)
    diag = distinct_roofs(seg)  # one label per roof text: devices whose roofs coincide share it
    rl = inline_or_key(lambda: roof_labels(seg, placer, first, diag), len(diag), diag, "roof_key",
                       "Roofs, top to bottom")
    for below, base, dy in ((False, "bottom", -3), (True, "top", 3)):
        part = rl[rl["below"] == below]
        if len(part):
            labels += halo_labels(part, {"x": x, "y": y, "text": TEXT, "angle": ANGLE, "color": text_color},
                              "roof_labels" + ("_below" if below else ""), align="left", baseline=base, dy=dy,
                              fontSize=12)
    key_color = text_color if multi else _one_device_roof()
    for role, key in keys:
        head, body = key[key["title"]], key[~key["title"]]
        labels += halo_labels(head, {"x": x, "y": y, "text": TEXT}, role + "_title", align="left", baseline="middle",
                          fontStyle="italic", **_MUTED)
        labels += halo_labels(body, {"x": x, "y": y, "text": TEXT, "color": key_color}, role, align="left",
                          baseline="middle", fontSize=12)
    return labels


def _kernel_layers(points: pd.DataFrame, x: dict[str, Any], y: dict[str, Any], *, color_by: ColorBy,
                   color_domain: tuple[list[str], list[str]], multi: bool, hierarchical: bool,
                   names: list[str], size_dom: tuple[float, float], orient: str = "right",
                   levels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The kernel marks (and, in the hierarchical view, the rules joining a kernel's marks and a ring on the mark
    of the level that binds it). ``levels``: level or link name -> display name, in hierarchy order, for the
    legend's order and one tooltip line per level ("Intensity at L2")."""
    levels = {k: v for k, v in (levels or {}).items() if f"i_{k}" in points.columns}
    field = "bound" if color_by == "bound" else "group"
    dom, rng = color_domain
    cscale = {"domain": dom, "range": rng} if field == "bound" else {"domain": dom, "scheme": GROUP_SCHEME}
    color = nominal(field, "Bound" if field == "bound" else "Group", scale=cscale,
                     legend={"orient": orient, "symbolLimit": 40, "labelLimit": 220})
    shape = _shape(points, multi=multi, hierarchical=hierarchical, names=names, orient=orient, levels=levels)
    t_min, t_max = size_dom
    size_scale = {"type": "log", "domain": [float(t_min), float(t_max)], "range": list(SIZE_RANGE)}
    size = {"field": "size_s", "type": "quantitative", "title": "Time", "scale": size_scale,
            "legend": {"orient": orient, "values": legend_times(size_dom), "labelExpr": fmt_expr("value", "s"),
                       "symbolFillColor": "#94a3b8", "symbolStrokeWidth": 0}}
    tooltip, calc = _kernel_tooltip(levels)
    data = _kernel_data(points, levels, hierarchical)
    highlight = "hl" in data.columns  # roofline(highlight=...): named kernels emphasised, the rest faded
    layers: list[dict[str, Any]] = []
    if hierarchical:
        span = data.groupby(["device_id", "kid"], sort=False).agg(
            x=("x", "min"), x2=("x", "max"), y=("y", "first"), device=("device", "first"),
            bound=("bound", "first"), group=("group", "first")).reset_index()
        span = span[span["x2"] > span["x"]]
        if len(span):
            layers.append({"data": src(span), "mark": {"type": "rule", "strokeWidth": 1, "opacity": 0.5},
                           "description": "kernel_links",
                           "encoding": {"x": x, "x2": X2, "y": y,
                                        "color": nominal(field, scale=cscale, legend=None),
                                        "opacity": opacity_by_legend(0.55, 0.06)}})
    style: dict[str, Any] = {}
    if multi:  # the first device's marks filled, the others hollow: coinciding marks stay visible
        style = {"stroke": nominal(field, scale=cscale, legend=None),
                 "fillOpacity": {"condition": {"test": f"(datum.device === {js(names[0])})", "value": 0.85},
                                 "value": 0.0}}
    binding = hierarchical and "binding" in data.columns and bool(data["binding"].any())
    quiet_shape = {**shape, "legend": None} if "field" in shape else shape  # rings: no second shape legend
    if highlight:
        opacity = {"condition": {"test": "datum.hl", "value": 0.95}, "value": HIGHLIGHT_FADE}
    elif binding:  # the level that binds each kernel stands out; its other levels' marks recede
        opacity = {"condition": [{"test": {"not": {"param": LEGEND_PARAM}}, "value": 0.1},
                                 {"test": "datum.binding", "value": 0.95}], "value": 0.4}
    else:
        opacity = opacity_by_legend(0.85 if not multi else 1.0, 0.1)
    kernel_data = src(data)
    layers.append({"data": kernel_data, "mark": {"type": "point", "filled": True, "stroke": "white",
                                                "strokeWidth": 1.2 if multi else 0.6, "clip": True},
                   "description": "kernels", "name": view_name(),
                   "transform": [{"calculate": expr, "as": name} for name, expr in calc.items()],
                   "encoding": {"x": x, "y": y, "color": color, "shape": shape, "size": size, "opacity": opacity,
                                "tooltip": tooltip, **style}})
    ring = {"x": x, "y": y, "shape": quiet_shape}
    ring_size = {"field": "size_s", "type": "quantitative", "scale": size_scale, "legend": None}
    if binding and not highlight:  # a dark ring on the mark of the binding level, as for highlighted kernels
        # the same rows (no copy), and the kernels' tooltip: the ring is on top, so it is what a hover finds
        layers.append({"data": kernel_data, "transform": [{"filter": "datum.binding"},
                                                          *({"calculate": e, "as": n} for n, e in calc.items())],
                       "mark": {"type": "point", "filled": False, "stroke": BINDING_COLOR, "strokeWidth": 1.6,
                                "clip": True},
                       "description": "binding_marks",
                       "encoding": {**ring, "opacity": opacity_by_legend(0.9, 0.08), "tooltip": tooltip,
                                    "size": ring_size}})
    if highlight and data["hl"].any():  # a dark ring around each highlighted mark, drawn over the others
        layers.append({"data": src(data[data["hl"]]),
                       "mark": {"type": "point", "filled": False, "stroke": HIGHLIGHT_COLOR, "strokeWidth": 2.2,
                                "opacity": 1, "clip": True},
                       "description": "highlighted",
                       "encoding": {**ring, "tooltip": [tooltip_field("name", "Kernel")], "size": ring_size}})
    return layers


def _shape(points: pd.DataFrame, *, multi: bool, hierarchical: bool, names: Sequence[str], orient: str,
           levels: dict[str, str]) -> dict[str, Any]:
    """The marks' shape: by device when several are overlaid, by level in the hierarchical view, else circles."""
    if multi:
        return nominal("device", "Device", legend={"orient": "right"}, scale={"domain": list(names)})
    if hierarchical:  # the legend lists the levels off-chip first, as the device does
        shown = set(points["level"]) if len(points) else set()
        order = [d for d in dict.fromkeys(levels.values()) if d in shown]
        return nominal("level", "Level", legend={"orient": orient},
                        scale={"domain": order + sorted(shown - set(order))})
    return {"value": "circle"}


def _kernel_tooltip(levels: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The kernel marks' tooltip lines and the Vega expressions that format their fields (``t_*``)."""
    tooltip = [
        tooltip_field("name", "Kernel"), tooltip_field("device", "Device"), tooltip_field("count", "Launches", "quantitative", ","),
        tooltip_field("t_flops", "FLOPs"), tooltip_field("t_bytes", "Bytes"), tooltip_field("level", "Level"), tooltip_field("t_int", "Intensity"),
        *(tooltip_field(f"t_i_{k}", f"Intensity at {d}") for k, d in levels.items()),
        tooltip_field("t_ach", "Achieved"), tooltip_field("t_att", "Attainable"), tooltip_field("t_eff", "Efficiency (of roof)"),
        tooltip_field("bound", "Bound"), tooltip_field("t_time", "Measured time"), tooltip_field("t_roof", "Roofline time"),
        tooltip_field("t_head", "Headroom"), tooltip_field("group", "Group"), tooltip_field("placed", "Placed by"),
    ]
    calc = {"t_flops": fmt_expr("flops", "FLOP"), "t_bytes": fmt_expr("bytes", "B"),
            "t_int": intensity_expr("x"), "t_ach": fmt_expr("achieved", "FLOP/s"),
            "t_att": fmt_expr("attainable", "FLOP/s"), "t_eff": pct_expr("efficiency"),
            "t_time": fmt_expr("time_s", "s"), "t_roof": fmt_expr("t_roof_s", "s"),
            "t_head": fmt_expr("headroom_s", "s"),
            **{f"t_i_{k}": intensity_expr(f"i_{k}") for k in levels}}  # the mark's own is x, renamed below
    return tooltip, calc


def _kernel_data(points: pd.DataFrame, levels: dict[str, str], hierarchical: bool) -> pd.DataFrame:
    """The columns of the points the kernel layers read, the position as x and y."""
    data = points.rename(columns={"intensity": "x", "perf": "y"})
    keep = ["kid", "device", "device_id", "name", "count", "group", "bound", "flops", "bytes", "level", "x", "y",
            "achieved", "attainable", "efficiency", "time_s", "t_roof_s", "headroom_s", "size_s", "placed",
            *(f"i_{k}" for k in levels), *(["hl"] if "hl" in data.columns else []),
            *(["binding"] if hierarchical and "binding" in data.columns else [])]
    return data[keep]
