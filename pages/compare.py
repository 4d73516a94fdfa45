"""Compare: two runs of a workload (before and after an optimisation, or two exports) on one device: total and
per-kernel speedups (kernels matched by name) and the roofline with an arrow from each old dot to its new one."""

import streamlit as st

import app_pages
import roofcore
from roofcore import RoofcoreError, charts, plan
from roofcore import app_support as app
from roofcore.units import fmt_time

app_pages.start("pages/compare.py", "Compare")
ss = st.session_state
hw_ids = ss.get("hw_ids") or []
if not hw_ids:
    st.info("Select at least one device in the sidebar.", icon=":material/memory:")
    st.stop()
catalog = ss["catalog"]
FILE_TYPES = ["csv", "yaml", "yml", "json", "gz", "txt"]


@st.cache_resource(show_spinner=False, max_entries=8, ttl=3600)
def read_upload(file_id: str, _data: bytes, name: str) -> tuple[roofcore.Workload | None, str | None]:
    """One uploaded run read (any format roofcore reads), cached per upload like the sidebar's uploads."""
    try:
        return roofcore.read(_data, name=name), None
    except RoofcoreError as e:
        return None, str(e)


st.caption("Upload the run before and the run after (any format the sidebar reads), or compare the current "
           "workload with a new run. Kernels are matched by name after summing their launches; times are measured "
           "where a run has them, else roofline times.")
use_current = st.toggle("Before = the current workload", key="cmp_current",
                        help=f"The sidebar's workload: {ss['workload']['label']}.")
left, right = st.columns(2, gap="medium")
with left:
    if use_current:
        st.info(f"Before: **{app.escape_markdown(ss['workload']['label'])}**", icon=":material/dataset:")
    before_file = None if use_current else st.file_uploader("Before", type=FILE_TYPES, key="cmp_before")
with right:
    after_file = st.file_uploader("After", type=FILE_TYPES, key="cmp_after")
labels = {h: app.device_label(catalog.get(h)) for h in hw_ids}
hw_id = st.selectbox("Device", hw_ids, key="cmp_hw", format_func=labels.__getitem__)


def side(f) -> tuple[roofcore.Workload | None, str]:
    if f is None:
        return None, ""
    w, err = read_upload(f.file_id, f.getvalue(), f.name)
    if err:
        app_pages.message("error", err)
    return w, f.file_id


old, old_key = (ss["workload"]["workload"], ss["workload"]["key"]) if use_current else side(before_file)
new, new_key = side(after_file)
if ss.get("compare_runs"):  # two saved runs, opened from the History page
    (old, old_key, old_label), (new, new_key, new_label) = ss["compare_runs"]
    st.info(f"Saved runs: **{app.escape_markdown(old_label)}** → **{app.escape_markdown(new_label)}**",
            icon=":material/history:")
    st.button("Compare uploads instead", on_click=ss.pop, args=("compare_runs", None), key="cmp_runs_clear")
if old is None or new is None:
    st.info("Give both runs to compare them.", icon=":material/compare_arrows:")
    st.stop()

achievable = bool(ss.get("achievable"))
memo = ss.setdefault("compare_memo", {})
key = (old_key, new_key, hw_id, achievable)
try:
    if key not in memo:
        if len(memo) > 8:
            memo.clear()
        c = plan.compare(old, new, catalog.get(hw_id), achievable=achievable)
        memo[key] = (c, charts.roofline_compare(c.old, c.new, hw_id, width=760, height=420))
    c, fig = memo[key]
    t = c.totals
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Before", fmt_time(t["old_time_s"]), help=f"{t['basis_old']} times")
    m2.metric("After", fmt_time(t["new_time_s"]), help=f"{t['basis_new']} times")
    m3.metric("Speedup", f"{t['speedup']:.2f}×" if t["speedup"] else "–", help="Σ before ÷ Σ after, all kernels.")
    m4.metric("Matched kernels", f"{t['matched']:,}",
              help=f"matched speedup {t['matched_speedup']:.2f}×" if t["matched_speedup"] else None)
    st.dataframe(app.comparison_frame(c), hide_index=True, width="stretch", key="cmp_table")
    if c.only_old or c.only_new:
        o, n = st.columns(2)
        with o.expander(f"Only before ({len(c.only_old):,})"):
            st.markdown("\n".join(f"- {app.escape_markdown(k)}" for k in c.only_old[:200]) or "none")
        with n.expander(f"Only after ({len(c.only_new):,})"):
            st.markdown("\n".join(f"- {app.escape_markdown(k)}" for k in c.only_new[:200]) or "none")
    st.vega_lite_chart(spec=fig.spec(arrow=True), theme=None, width="content", key="cmp_chart")
    st.caption(fig.caption)
    for note in c.notes:
        st.caption(f"Note: {app.escape_markdown(note)}")
except RoofcoreError as e:
    app_pages.message("error", e)
