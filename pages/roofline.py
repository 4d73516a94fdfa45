"""Roofline: every kernel on the log-log roofline of each selected device, with SVG/PNG downloads."""

import numpy as np
import streamlit as st

import app_pages
from roofcore import RoofcoreError, charts
from roofcore import app_support as app

app_pages.start("pages/roofline.py", "Roofline")
a = app_pages.analysis()

ids = [h.id for h in a.hardware]
total = len(a.workload)
has_groups = a.workload.frame["group"].notna().any()

c1, c2, c3 = st.columns([2, 2, 3], vertical_alignment="bottom")
color_by = c1.segmented_control("Colour by", ["bound", "group"], default="bound", key="rl_color",
                                disabled=not has_groups, help="Group comes from the inventory's group column.")
layout = c2.segmented_control("Devices", ["overlay", "facets"], default="overlay", key="rl_layout",
                              disabled=len(ids) < 2, help="One chart with every device, or one panel each.")
limit = min(total, charts.MAX_MARKS)
top_n = limit if limit < 2 else c3.slider(
    "Top kernels by time", 1, limit, limit, key="rl_top",
    help=f"Only the N kernels with the most time (measured, else roofline). At most {charts.MAX_MARKS:,} marks "
         "are ever drawn.")
t1, t2, t3 = st.columns(3)
hierarchical = t1.toggle("Hierarchical view", key="rl_hier",
                         help="One mark per memory level the kernel has bytes for, at that level's intensity.")
all_ceilings = t2.toggle("All compute ceilings", key="rl_all",
                         help="Otherwise the default ceiling and those the kernels run on.")
achievable = t3.toggle("Draw achievable roofs", value=True, key="rl_ach",
                       help="Dashed lines at the measured sustained figures from the catalog, where it has them.")

opts = (st.session_state["analysis_token"], color_by or "bound", layout or "overlay", top_n, hierarchical,
        all_ceilings, achievable)
try:  # built once per analysis and options for every session (app_pages.shared), then free on reruns
    fig = app_pages.shared("roofline.figure", opts[1:], lambda: charts.roofline(
        a, ids, color_by=color_by or "bound", top_n=top_n if top_n < total else None, hierarchical=hierarchical,
        all_ceilings=all_ceilings, achievable=achievable, layout="facet" if layout == "facets" else "overlay"))
except RoofcoreError as e:
    st.error(str(e))
    st.stop()

flops = a.workload.frame["flops"].to_numpy(dtype=float)
known = ~np.isnan(a.results[0].t_roof)  # FLOPs and bytes known (the same on every device)
unknown = int((~known).sum())
moves = int((known & (flops == 0)).sum())
if unknown or moves:  # say on the page, above the chart, why kernels are missing from it
    parts = []
    if unknown:
        parts.append(f"{unknown:,} of {total:,} {'kernel has' if unknown == 1 else 'kernels have'} unknown FLOPs or "
                     "off-chip bytes (not zero), so no point" + (": the import notes above say what to collect"
                                                                 if a.workload.warnings else ""))
    if moves:
        parts.append(f"{moves:,} move data without arithmetic (0 FLOP), which a log-log roofline cannot place: their "
                     "achieved bandwidth against the memory or link roof is on the Kernels page")
    st.info(app.escape_markdown("Not drawn: " + "; ".join(parts) + "."), icon=":material/info:")

spec = app_pages.shared("roofline.spec", opts[1:], lambda: fig.spec(arrow=True))  # Arrow tables: Streamlit's
st.vega_lite_chart(spec=dict(spec), theme=None, width="content", key="roofline_chart")
st.caption(fig.caption + " Click a legend entry to highlight its kernels; hover a mark for its numbers.")

stem = "roofline-" + "-".join(ids)
row = st.container(horizontal=True)
row.download_button("Download SVG", lambda: charts.to_svg(fig), file_name=f"{stem}.svg",
                   mime="image/svg+xml", icon=":material/download:", on_click="ignore")
row.download_button("Download PNG", lambda: charts.to_png(fig), file_name=f"{stem}.png", mime="image/png",
                   icon=":material/download:", on_click="ignore")
