"""Roofline: every kernel on the log-log roofline of each selected device, with SVG/PNG downloads."""

import contextlib

import streamlit as st

from app import combined, levels, page, tables
from app.markdown import escape_message
from app.memo import shared
from app.messages import message
from app.trace import mark
from roofcore import RoofcoreError, charts, views

mark("roofline page")
page.start("pages/roofline.py", "Roofline")
a = page.analysis()
by, window = levels.choose(a)  # a workload with steps, modules or ops: one point per group (app.levels)
if by != "kernel":
    levels.draw(a, by, window)
    st.stop()

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

opts = (color_by or "bound", layout or "overlay", top_n, hierarchical, all_ceilings, achievable)
try:  # built once per analysis and options for every session (app.memo.shared), then free on reruns
    fig = shared("roofline.figure", opts, lambda: charts.roofline(
        a, ids, color_by=color_by or "bound", top_n=top_n if top_n < total else None, hierarchical=hierarchical,
        all_ceilings=all_ceilings, achievable=achievable, layout="facet" if layout == "facets" else "overlay"))
except RoofcoreError as e:
    message("error", e)
    st.stop()

gaps = shared("roofline.gaps", opts, lambda: views.chart_gaps(a, fig.rows))  # kernels, as the sidebar counts
with st.container(border=True, key="roofline_area"):  # the chart area: the chart says what it leaves out
    if hidden := combined.note(a):  # an above-roof launch inside a combined mark: drawn under the roof
        message("warning", hidden)
    if gaps.text:
        message("info" if gaps.drawn else "warning", gaps.text, icon=":material/info:")
        # in a popover: Chromium draws a popover's content when it opens, and the page's first code block costs
        # ~0.5-1.5 s of the browser's time (Streamlit's syntax highlighter starting), before the chart below
        with st.popover("Commands to collect what is missing", icon=":material/terminal:") if gaps.commands \
                else contextlib.nullcontext():
            for command in gaps.commands:
                prose, script = views.note_and_script(command)  # a sentence, then a script of several commands
                if script:
                    st.caption(escape_message(prose))
                    st.code(script, language="bash")
                else:
                    st.code(command, language=None, wrap_lines=True)
    spec = shared("roofline.spec", opts, lambda: fig.spec(arrow=True))  # Arrow tables: Streamlit's
    st.vega_lite_chart(spec=dict(spec), theme=None, width="content", key="roofline_chart")
    mark("chart sent")
    st.caption(fig.caption + " Click a legend entry to highlight its kernels; hover a mark for its numbers.")

stem = "roofline-" + "-".join(ids)
row = st.container(horizontal=True)
row.download_button("Download SVG", lambda: charts.to_svg(fig), file_name=f"{stem}.svg",
                   mime="image/svg+xml", icon=":material/download:", on_click="ignore")
row.download_button("Download PNG", lambda: charts.to_png(fig), file_name=f"{stem}.png", mime="image/png",
                   icon=":material/download:", on_click="ignore")

moves = shared("roofline.moves", None, lambda: views.data_movement(a, ids))
if len(moves):
    st.subheader("Data movement (0 FLOP)")
    st.caption("Copies, memsets and copy kernels do no arithmetic, so the roofline has no place for them: here is "
               "each one's achieved bandwidth (bytes ÷ measured time) against the roof that binds it, a link (PCIe, "
               "NVLink) for a host copy or off-chip memory for a device copy. Total over launches.")
    shown = moves.head(tables.TABLE_ROW_LIMIT)
    if len(ids) == 1:  # one device: its column says nothing
        shown = shown.drop(columns="Device")
    st.dataframe(shown, hide_index=True, width="stretch", key="moves_table", placeholder="–",
                 height=tables.height(len(shown), 420), column_config=tables.movement_columns(a.achievable))
    if len(moves) > len(shown):
        st.caption(f"The {len(shown):,} longest of {len(moves):,}; the Kernels page's CSV has all.")
