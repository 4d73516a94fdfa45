"""History: a project's saved runs over time, how each kernel's measured time and fraction of its roof moved
(biggest movers first, a chart per kernel), two runs opened in Compare with one click, share links and deleting."""

import pandas as pd
import streamlit as st

from app import page, state, tables
from app import runs as app_runs
from app.history import runs_page, window_history
from app.messages import message
from app.search_pick import search_multiselect
from roofcore import RoofcoreError, views
from roofcore.units import fmt_pct, fmt_time

page.start("pages/history.py", "History")
if not app_runs.available():
    st.info("Saved runs need the database support on this server: `pip install 'roofcore[team]'`.",
            icon=":material/database:")
    st.stop()
store, viewer = app_runs.store(), app_runs.viewer()
st.caption("Runs saved with **Save this run** in the sidebar, or by a pipeline with `roofline save`. Every run is "
           "read again from its files and analysed with the current catalog and the device chosen here: nothing "
           "is frozen at save time."
           + ("" if viewer.login else " No login on this server: everyone who can reach the app sees every run."))

for note in state.HISTORY_NOTES.pop([]):
    st.success(note, icon=":material/check_circle:")
projects = store.projects(viewer)
if not projects:
    st.info("No saved runs yet: open a profile, then **Save this run** in the sidebar.", icon=":material/history:")
    st.stop()
project = st.selectbox("Project", list(projects), key="hist_project",
                       format_func=lambda p: f"{app_runs.run_name(p)} · {projects[p]} "
                                             f"{'run' if projects[p] == 1 else 'runs'}")
st.subheader("Runs")
runs, total = runs_page(store, viewer, project)
if not runs:  # deleted meanwhile
    st.stop()
labels = {r.id: f"{r.created_at:%Y-%m-%d %H:%M} · {app_runs.run_name(r.name)}" for r in runs}
st.dataframe(pd.DataFrame({
    "Saved (UTC)": [r.created_at.strftime("%Y-%m-%d %H:%M:%S") for r in runs],
    "Name": [app_runs.run_name(r.name) for r in runs], "Tags": [app_runs.run_name(", ".join(r.tags)) for r in runs],
    "Owner": [app_runs.who(r.owner) for r in runs],
    "Who can open it": ["everyone in the app" if r.visibility == "project" else "only the owner" for r in runs],
    "Kernels": [r.kernels for r in runs], "Files": [", ".join(f.name for f in r.files) for r in runs],
    "Devices": [", ".join(r.devices) for r in runs], "Link": [f"?{app_runs.RUN_PARAM}={r.id}" for r in runs]}),
    hide_index=True, width="stretch", placeholder="–", key="hist_runs",
    column_config={"Link": st.column_config.LinkColumn("Link", display_text="Open",
                                                       help="Opens the run's workload, devices and page")})

# --------------------------------------------------------------------------------------------- kernels over time

hw_ids = state.hw_ids()
if not hw_ids:
    st.info("Select at least one device in the sidebar to see how the kernels moved.", icon=":material/memory:")
    st.stop()
catalog = state.catalog()
st.subheader("Kernels over time")
left, right = st.columns([2, 1])
hw_id = left.selectbox("Device", hw_ids, key="hist_hw", format_func=lambda h: views.device_label(catalog.get(h)))
last = right.slider("Last runs", 2, min(app_runs.HISTORY_WINDOW, total), value=min(10, total), key="hist_last") \
    if total > 2 else total
window = store.list(viewer, project=project, limit=last)  # the newest, whatever page the table shows
try:
    h = window_history(window, catalog.get(hw_id), state.achievable())
except RoofcoreError as e:
    message("error", e)
    st.stop()
m = h.movers
if m.empty:
    st.info("Save at least two runs with the same kernels to see them move.", icon=":material/timeline:")
else:
    top = m.head(tables.TABLE_ROW_LIMIT)  # formatted row by row: only what the table shows
    st.caption(f"{len(m):,} kernels in two or more of the last {len(window)} runs, biggest change first "
               "(measured time where the runs have it, else roofline time; launches summed by name)"
               + (f"; the table shows the first {len(top):,}." if len(top) < len(m) else "."))
    st.dataframe(pd.DataFrame({
        "Kernel": top["kernel"], "Runs": top["runs"], "Basis": top["basis"], "First": top["first_s"].map(fmt_time),
        "Last": top["last_s"].map(fmt_time), "Time change (%)": top["time_change"] * 100,
        "Of roof, first": top["first_efficiency"].map(fmt_pct), "Of roof, last": top["last_efficiency"].map(fmt_pct),
        "Bound (last)": top["bound"].fillna("unknown")}),
        hide_index=True, width="stretch", placeholder="–", key="hist_movers",
        column_config={"Time change (%)": st.column_config.NumberColumn(format="%+.1f%%")})
    shown = search_multiselect("Kernels charted", m["kernel"], key=state.HISTORY_KERNELS, what="kernels",
                               default=list(m["kernel"][:6]), max_selections=24,
                               help="The biggest movers first; one chart per kernel.")
    k = h.kernels[h.kernels["kernel"].isin(shown)]
    if not k.empty:
        data = pd.DataFrame({"kernel": k["kernel"], "run": k["run"],
                             "saved": k["created_at"].map(lambda t: t.strftime("%Y-%m-%dT%H:%M:%S")),
                             "time_ms": k["time_s"].fillna(k["t_roof_s"]) * 1e3,
                             "basis": k["time_s"].notna().map({True: "measured", False: "roofline"}),
                             "of_roof_pct": k["efficiency"] * 100, "bound": k["bound"].fillna("unknown")})

        def facets(y: str, title: str, key: str) -> None:
            spec = {"facet": {"field": "kernel", "type": "nominal", "title": None, "sort": shown,
                              "header": {"labelLimit": 320, "labelAlign": "left", "labelAnchor": "start"}},
                    "columns": 3, "resolve": {"scale": {"y": "independent"}},
                    "spec": {"width": 260, "height": 140, "mark": {"type": "line", "point": True},
                             "encoding": {"x": {"field": "saved", "type": "temporal", "title": None},
                                          "y": {"field": y, "type": "quantitative", "title": title,
                                                "scale": {"zero": False}},
                                          "tooltip": [{"field": "run"}, {"field": "saved", "type": "temporal",
                                                                         "format": "%Y-%m-%d %H:%M"},
                                                      {"field": y, "title": title, "format": ".3~g"},
                                                      {"field": "basis"}, {"field": "bound"}]}}}
            st.vega_lite_chart(data.dropna(subset=[y]), spec=spec, theme=None, key=key)

        tab_time, tab_roof = st.tabs(["Time per run", "% of roof per run"])
        with tab_time:
            facets("time_ms", "time (ms)", "hist_chart_time")
        with tab_roof:
            if data["of_roof_pct"].notna().any():
                facets("of_roof_pct", "% of roof", "hist_chart_roof")
            else:
                st.caption("No kernel here has both a measured time and a known roofline.")

# ----------------------------------------------------------------------------------------------- compare, delete

st.subheader("Compare two runs")
ids = [r.id for r in runs]
c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
pick_help = "The runs on the page of the table above." if total > len(runs) else None
before = c1.selectbox("Before", ids, index=min(1, len(ids) - 1), key="hist_before", format_func=labels.get,
                      help=pick_help)
after = c2.selectbox("After", ids, index=0, key="hist_after", format_func=labels.get, help=pick_help)
if c3.button("Open in Compare", key="hist_compare", icon=":material/compare_arrows:", disabled=before == after):
    sides = []
    for rid in (before, after):
        info, _files, w, key = app_runs.load_run(rid)
        sides.append((w, key, labels[rid]))
    state.COMPARE_RUNS.set(tuple(sides))
    state.COMPARE_FROM.set("saved")
    state.COMPARE_HW.set(hw_id if hw_id in hw_ids else hw_ids[0])
    st.switch_page("pages/compare.py")


def _delete(run_id: str) -> None:
    try:
        store.delete(run_id, viewer)
        state.HISTORY_NOTES.set([f"Deleted {labels.get(run_id, run_id)} and its files."])
    except RoofcoreError as e:
        state.HISTORY_NOTES.set([])
        state.HISTORY_DELETE_ERROR.set(str(e))
    state.HISTORY_DELETE_CONFIRM.set(False)


mine = [r.id for r in runs if viewer.can_delete(r.owner, r.visibility)]
with st.expander("Delete a run", icon=":material/delete:"):
    if err := state.HISTORY_DELETE_ERROR.pop():
        message("error", err)
    if not mine:
        st.caption("None of these runs is yours to delete.")
    else:
        pick = st.selectbox("Run", mine, key="hist_delete_pick", format_func=labels.get)
        confirm = st.checkbox("Delete it and its files, for everyone", key=state.HISTORY_DELETE_CONFIRM.name)
        st.button("Delete", key="hist_delete", disabled=not confirm, on_click=_delete, args=(pick,),
                  icon=":material/delete_forever:")
