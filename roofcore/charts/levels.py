"""Charts above the kernel: a roofline of groups (modules, ops, steps), the steps' trajectory on the roofline, and
achieved FLOP/s and bandwidth over time with the roofs as rules (roofcore.hierarchy)."""

from __future__ import annotations

import math
from dataclasses import replace

import altair as alt
import numpy as np
import pandas as pd

from ..analyze import Analysis, analyze
from ..hierarchy import OUTSIDE, flag_steps, group
from ..hierarchy.points import group_workload, unplaced_workload
from ..units import fmt_bandwidth, fmt_rate
from .look import ROOF_COLOR
from .points import base_domains
from .roofline_chart import roofline
from .roofs import roof_segments
from .spec import RooflineFigure, finish

#: what one group of a level is called in a sentence
_GROUP_NAMES = {"nvtx": "range", "module": "module", "class": "module class", "op": "op", "step": "step",
                "window": "window"}
#: phases in a fixed colour order (the rest take the scheme's next colours)
PHASE_ORDER = ("forward", "forward (inferred)", "backward", "optimizer", "prefill", "decode", "no phase")


def level_roofline(a: Analysis, by: str, *, hw_id: str | None = None, top: int = 12, window: float | None = None,
                   width: int = 760, height: int = 440) -> RooflineFigure:
    """The ``top`` groups with the most time at level ``by`` as points on ``hw_id``'s roofline, coloured by their
    parent (or phase), the caption saying how many groups have no known roofline."""
    hw = a.result(hw_id or a.hardware[0].id).hardware
    rows = group(a, by, window=window, hw_id=hw.id)
    rows = rows[rows["depth"] > 0] if (rows["group"] != OUTSIDE).any() else rows
    rows = rows.sort_values("time_s", ascending=False, na_position="last", kind="stable")
    shown = rows.head(top) if top else rows
    gw = group_workload(shown, a.workload.byte_names, name=f"by {by}")
    if not len(gw):
        gw = group_workload(rows, a.workload.byte_names, name=f"by {by}")
    what = _GROUP_NAMES.get(by.split(":")[0], by.split(":")[0])
    unplaced = not len(gw)  # no group has a kernel with a known roofline (a time-only trace with ranges)
    fig = roofline(analyze(unplaced_workload(shown) if unplaced else gw, hw), [hw.id], color_by="group", width=width,
                   height=height)
    if unplaced:  # the roofs alone, without the placeholder rows' notes
        note = (f"No {what} has a kernel with a known roofline (their FLOPs or bytes are unknown): none of the "
                f"{len(rows)} is drawn, and the table gives their times.")
        return replace(fig, notes=(note, *(n for n in fig.notes if "kernel" not in n)))
    unknown = int((shown["covered_time_s"].fillna(0) <= 0).sum())
    extra = f"One point per {what} (the {len(shown)} with the most time of {len(rows)}): its kernels with a known " \
            "roofline summed, at their off-chip intensity and achieved FLOP/s."
    if unknown:
        extra += f" {unknown} of them have no kernel with a known roofline and are not drawn."
    return _with_note(fig, extra)


def _with_note(fig: RooflineFigure, note: str) -> RooflineFigure:
    return replace(fig, notes=(note, *fig.notes))


def _steps(a: Analysis, hw_id: str, by: str, window: float | None) -> pd.DataFrame:
    rows = group(a, by, window=window, hw_id=hw_id)
    level = rows["level"].iloc[0] if len(rows) else by
    rows = flag_steps(rows, a.workload.frame, level, window)
    return rows[rows["group"] != OUTSIDE].reset_index(drop=True)


def trajectory_chart(a: Analysis, *, hw_id: str | None = None, by: str = "step", window: float | None = None,
                     width: int = 620, height: int = 400) -> alt.LayerChart | alt.FacetChart:
    """Steps (or windows) in time order on the roofline, joined, the first and last labelled, coloured by phase;
    a step whose roofline is known for under half its time is left off the path and listed under the chart."""
    hw = a.result(hw_id or a.hardware[0].id).hardware
    rows = _steps(a, hw.id, by, window)
    rows["order"] = np.arange(len(rows))
    rows["x"] = rows.get("intensity_hbm", pd.Series(np.nan, index=rows.index))
    rows["y"] = rows["achieved_flops_per_s"]
    rows["phase"] = rows["phase"].fillna("no phase") if "phase" in rows.columns else "no phase"
    keep = ["order", "name", "x", "y", "phase", "time_s", "coverage", "outlier", "differs", "ceiling"]
    pts = rows.loc[rows["point"] & rows["x"].gt(0) & rows["y"].gt(0), [c for c in keep if c in rows]].copy()
    pts["label"] = ""
    if len(pts):
        pts.loc[pts.index[0], "label"] = f"first: {pts['name'].iloc[0]}"
        pts.loc[pts.index[-1], "label"] = f"last: {pts['name'].iloc[-1]}" if len(pts) > 1 else pts.loc[pts.index[0],
                                                                                                      "label"]
    x_dom, y_dom = base_domains([hw])
    if len(pts):  # a decade around the points and the ridge
        ridge = hw.ridge()[hw.offchip.name]
        x_dom = (10.0 ** (math.floor(math.log10(min(pts["x"].min(), ridge))) - 1),
                 10.0 ** (math.ceil(math.log10(max(pts["x"].max(), ridge))) + 1))
        y_dom = (10.0 ** (math.floor(math.log10(pts["y"].min())) - 1), y_dom[1])
    used = [hw.ceiling_map[c] for c in dict.fromkeys(pts.get("ceiling", pd.Series(dtype=object)).dropna())
            if c in hw.ceiling_map] or [hw.default]  # the ceilings the steps run against, else the default
    segs = roof_segments(hw, used, x_dom, y_dom, achievable=False)
    segs = segs[(segs["kind"] != "link") & ((segs["kind"] != "memory") | (segs["name"] == hw.offchip.name))]
    xs = alt.Scale(type="log", domain=list(x_dom))
    ys = alt.Scale(type="log", domain=list(y_dom))
    roofs = alt.Chart(segs).mark_rule(color=ROOF_COLOR, strokeWidth=2).encode(
        x=alt.X("x:Q", scale=xs, title="Off-chip arithmetic intensity (FLOP/byte)",
                axis=alt.Axis(format="~g", values=_decades(x_dom))),
        y=alt.Y("y:Q", scale=ys, title="Achieved FLOP/s", axis=alt.Axis(format="~s", values=_decades(y_dom))),
        x2="x2:Q", y2="y2:Q", tooltip=[alt.Tooltip("label:N", title="Roof")])
    diag = segs["kind"] == "memory"
    segs = segs.assign(tx=np.where(diag, np.sqrt(segs["x"] * segs["x2"]), segs["x2"]),
                       ty=np.where(diag, np.sqrt(segs["y"] * segs["y2"]), segs["y2"]),
                       label=np.where(diag, segs["label"], segs["label"] + " " + segs["value"].astype(str)))
    roof_text = alt.Chart(segs).mark_text(
        align="right", dy=-8, fontSize=12, color=ROOF_COLOR).encode(
        x=alt.X("tx:Q", scale=xs), y=alt.Y("ty:Q", scale=ys), text="label:N")
    path = alt.Chart(pts).mark_line(color="#64748b", strokeDash=[3, 2], point=False).encode(
        x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), order="order:Q")
    phases = [p for p in PHASE_ORDER if p in set(pts["phase"])] + sorted(set(pts["phase"]) - set(PHASE_ORDER))
    dots = alt.Chart(pts).mark_circle(size=90, opacity=0.9, stroke="#0f172a", strokeWidth=0.5).encode(
        x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys),
        color=alt.Color("phase:N", title="Phase", scale=alt.Scale(domain=phases or ["no phase"])),
        tooltip=[alt.Tooltip("name:N", title="Step"), alt.Tooltip("phase:N", title="Phase"),
                 alt.Tooltip("time_s:Q", title="Time (s)", format=".3g"),
                 alt.Tooltip("coverage:Q", title="Known", format=".0%"),
                 alt.Tooltip("y:Q", title="FLOP/s", format=".3s"), alt.Tooltip("x:Q", title="FLOP/B", format=".3g"),
                 alt.Tooltip("differs:N", title="Outlier")])
    rings = alt.Chart(pts[pts["outlier"]]).mark_circle(size=260, fillOpacity=0, stroke="#dc2626", strokeWidth=2
                                                       ).encode(x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys))
    ends = pts[pts["label"] != ""].copy()
    ends["dy"] = np.where(ends["label"].str.startswith("first"), -12, 14)
    labels = alt.layer(*(alt.Chart(ends[ends["dy"] == d]).mark_text(align="left", dx=9, dy=int(d), fontSize=12).encode(
        x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), text="label:N") for d in (-12, 14)))
    missing = rows[~rows["point"]]
    sub = (f"{len(missing)} of {len(rows)} {'steps' if by == 'step' else 'windows'} mostly unknown (known "
           + ", ".join(f"{n} {c:.0%}" for n, c in zip(missing["name"].head(6), missing["coverage"].fillna(0).head(6),
                                                       strict=True)) + "): not on the path") if len(missing) else ""
    title = {"text": f"{'Steps' if by == 'step' else 'Time windows'} on the {hw.name} roofline, in order",
             **({"subtitle": sub} if sub else {})}
    chart = alt.layer(roofs, roof_text, path, rings, dots, labels).properties(width=width, height=height, title=title)
    return finish(chart)


def _decades(dom: tuple[float, float]) -> list[float]:
    lo, hi = math.floor(math.log10(dom[0])), math.ceil(math.log10(dom[1]))
    return [10.0 ** k for k in range(lo, hi + 1)]


def over_time_chart(a: Analysis, *, hw_id: str | None = None, by: str = "step", window: float | None = None,
                    width: int = 620, height: int = 180) -> alt.VConcatChart:
    """Achieved FLOP/s (top) and each memory level's achieved bandwidth (bottom) per step or window against its
    start, with the peak compute and the levels' bandwidths as dashed rules; outliers ringed."""
    hw = a.result(hw_id or a.hardware[0].id).hardware
    rows = _steps(a, hw.id, by, window)
    t0 = rows["start_s"].min() if len(rows) else 0.0
    rows["t_ms"] = (rows["start_s"] - t0) * 1e3
    xs = alt.X("t_ms:Q", title="Start (ms from the first)")
    flops = rows[["t_ms", "name", "achieved_flops_per_s", "outlier"]].rename(columns={"achieved_flops_per_s": "v"})
    top = alt.Chart(flops).mark_line(point=True).encode(
        x=xs, y=alt.Y("v:Q", title="Achieved FLOP/s", axis=alt.Axis(format="~s")),
        tooltip=[alt.Tooltip("name:N", title="Step"), alt.Tooltip("v:Q", title="FLOP/s", format=".3s")])
    peak = pd.DataFrame({"v": [hw.default.peak], "label": [f"{hw.default.key} {fmt_rate(hw.default.peak)}"]})
    top_rule = alt.Chart(peak).mark_rule(strokeDash=[6, 3], color=ROOF_COLOR).encode(y="v:Q", tooltip="label:N")
    bw = []
    for lv in hw.levels:
        if f"bandwidth_{lv.name}" in rows.columns:
            bw.append(pd.DataFrame({"t_ms": rows["t_ms"], "name": rows["name"], "level": lv.display,
                                    "v": rows[f"bandwidth_{lv.name}"]}))
    bw_df = pd.concat(bw, ignore_index=True) if bw else pd.DataFrame({"t_ms": [], "name": [], "level": [], "v": []})
    bottom = alt.Chart(bw_df).mark_line(point=True).encode(
        x=xs, y=alt.Y("v:Q", title="Achieved bandwidth (B/s)", axis=alt.Axis(format="~s")),
        color=alt.Color("level:N", title="Level"),
        tooltip=[alt.Tooltip("name:N", title="Step"), alt.Tooltip("level:N"), alt.Tooltip("v:Q", format=".3s")])
    levels = pd.DataFrame({"v": [lv.bandwidth for lv in hw.levels if f"bandwidth_{lv.name}" in rows.columns],
                           "level": [lv.display for lv in hw.levels if f"bandwidth_{lv.name}" in rows.columns]})
    levels["label"] = [f"{d} {fmt_bandwidth(v)}" for d, v in zip(levels["level"], levels["v"], strict=True)]
    bottom_rule = alt.Chart(levels).mark_rule(strokeDash=[6, 3]).encode(y="v:Q", color="level:N", tooltip="label:N")
    out = alt.vconcat(alt.layer(top, top_rule).properties(width=width, height=height, title="Achieved FLOP/s over time "
                                                          "(dashed: the peak)"),
                      alt.layer(bottom, bottom_rule).properties(width=width, height=height,
                                                                title="Achieved bandwidth over time (dashed: each "
                                                                      "level's roof)"))
    return finish(out)
