"""Compare: two runs of a workload (before and after an optimisation, or two exports) on one device: total and
per-kernel speedups (kernels matched by name, or paired by hand when a kernel was renamed), the share of the time
the matched kernels cover, and the roofline with an arrow from each old dot to its new one."""

import streamlit as st

import roofcore
from app import page, state, tables
from app.keys import content_key
from app.markdown import escape_message
from app.memo import remember
from app.messages import message
from app.workload import UPLOAD_TYPES, parse_uploads
from roofcore import RoofcoreError, charts, plan, views
from roofcore.units import fmt_pct, fmt_time

page.start("pages/compare.py", "Compare")
hw_ids = page.devices_or_stop()
catalog = state.catalog()


st.caption("Upload the run before and the run after (any format the sidebar reads; the files of one run together), "
           "or compare the current workload with a new run. Kernels are matched by name after summing their "
           "launches, and renamed ones can be paired by hand; times are measured where a run has them, else "
           "roofline times.")
use_current = st.toggle("Before = the current workload", key="cmp_current",
                        help=f"The sidebar's workload: {state.workload()['label']}.")
left, right = st.columns(2, gap="medium")
with left:
    if use_current:
        st.info(f"Before: **{escape_message(state.workload()['label'])}**", icon=":material/dataset:")
    before_files = [] if use_current else st.file_uploader("Before", type=UPLOAD_TYPES, key="cmp_before",
                                                           accept_multiple_files=True)
with right:
    after_files = st.file_uploader("After", type=UPLOAD_TYPES, key="cmp_after", accept_multiple_files=True)
labels = {h: views.device_label(catalog.get(h)) for h in hw_ids}
hw_id = st.selectbox("Device", hw_ids, key=state.COMPARE_HW.name, format_func=labels.__getitem__)


def side(files, where) -> tuple[roofcore.Workload | None, str]:
    if not files:
        return None, ""
    data = tuple((f.getvalue(), f.name) for f in files)
    key = content_key(data)
    w, errors = parse_uploads(key, None, data)  # cached per content, as the sidebar's uploads
    for err in errors:
        message("error", err, where=where)
    return w, key


old, old_key = (state.workload()["workload"], state.workload()["key"]) if use_current else side(before_files, left)
new, new_key = side(after_files, right)
if state.COMPARE_RUNS.get():  # two saved runs opened from History, or an upload from another GPU (the sidebar)
    (old, old_key, old_label), (new, new_key, new_label) = state.COMPARE_RUNS.read()
    if state.COMPARE_FROM.get() == "upload":
        st.info(f"The sidebar's workload **{escape_message(old_label)}** → the new upload "
                f"**{escape_message(new_label)}**, profiled on another GPU: times are each run's own, the roofline "
                "is the one of the Device above.", icon=":material/compare_arrows:")
    else:
        st.info(f"Saved runs: **{escape_message(old_label)}** → **{escape_message(new_label)}**",
                icon=":material/history:")
    st.button("Compare uploads instead", on_click=state.COMPARE_RUNS.pop, key="cmp_runs_clear")
if old is None or new is None:
    st.info("Give both runs to compare them.", icon=":material/compare_arrows:")
    st.stop()

achievable = state.achievable()
all_pairs = state.COMPARE_PAIRS.setdefault({})  # (before, after) -> [(old name, new name)], made by hand
pair_key = (old_key, new_key)
pairs = all_pairs.get(pair_key, [])


def compared() -> tuple[plan.Comparison, object]:
    c = plan.compare(old, new, catalog.get(hw_id), achievable=achievable, pairs=pairs)
    return c, charts.roofline_compare(c.old, c.new, hw_id, width=760, height=420) if c.totals["matched"] else None


try:
    c, fig = remember("compare", (old_key, new_key, hw_id, achievable, tuple(pairs)), compared, keep=8)
except RoofcoreError as e:
    message("error", e)
    if pairs:  # a pair that no longer fits these files: drop them all and start over
        all_pairs.pop(pair_key, None)
        st.button("Start over without the pairs", key="cmp_pairs_reset", icon=":material/refresh:")
    st.stop()

t = c.totals
m1, m2, m3, m4 = st.columns(4)
m1.metric("Before", fmt_time(t["old_time_s"]), help=f"{t['basis_old']} times, every kernel of the run")
m2.metric("After", fmt_time(t["new_time_s"]), help=f"{t['basis_new']} times, every kernel of the run")
m3.metric("Speedup", f"{t['speedup']:.2f}×" if t["speedup"] else "unknown",
          help="Σ before ÷ Σ after, all kernels." if t["speedup"] else
          "Unknown: no kernel matched, so the totals would compare different kernels.")
m4.metric("Matched kernels", f"{t['matched']:,}" + (f" ({t['paired']:,} by hand)" if t["paired"] else ""),
          help=f"matched speedup {t['matched_speedup']:.2f}×" if t["matched_speedup"] else None)
if t["matched"]:
    st.caption(f"The matched kernels hold {fmt_pct(t['matched_share_old'], 2)} of the time before and "
               f"{fmt_pct(t['matched_share_new'], 2)} after"
               + (f"; over them alone the speedup is {t['matched_speedup']:.2f}×." if t["matched_speedup"] else "."))
    st.dataframe(views.comparison_frame(c), hide_index=True, width="stretch", placeholder="–", key="cmp_table")
else:
    message("warning", "No kernel of the two runs has the same name, so there is no speedup to show: "
                      "the totals would compare different kernels. Pair the kernels that correspond below (a naive "
                      "and a tiled GEMM have different names).")

if c.only_old or c.only_new:
    st.subheader("Unmatched kernels")
    before_only, after_only = views.unmatched_frames(c)
    o, n = st.columns(2)
    o.markdown(f"**Only before** ({len(c.only_old):,})")
    o.dataframe(before_only, hide_index=True, width="stretch", placeholder="–", key="cmp_only_old",
                height=tables.height(len(before_only), 320))
    n.markdown(f"**Only after** ({len(c.only_new):,})")
    n.dataframe(after_only, hide_index=True, width="stretch", placeholder="–", key="cmp_only_new",
                height=tables.height(len(after_only), 320))
    if c.only_old and c.only_new:
        with st.form("cmp_pair", border=True):
            st.markdown("**Pair two kernels by hand** (the same work under another name)")
            p1, p2 = st.columns(2)
            a_pick = p1.selectbox("Before", c.only_old[:views.CHOICE_LIMIT], key="cmp_pair_old")
            b_pick = p2.selectbox("After", c.only_new[:views.CHOICE_LIMIT], key="cmp_pair_new")
            if st.form_submit_button("Pair them", icon=":material/link:", key="cmp_pair_submit"):
                all_pairs[pair_key] = [*pairs, (a_pick, b_pick)]
                st.rerun()
if pairs:
    st.caption("Paired by hand: " + escape_message("; ".join(f"{a} → {b}" for a, b in pairs)))
    if st.button("Clear the pairs", key="cmp_pairs_clear", icon=":material/link_off:"):
        all_pairs.pop(pair_key, None)
        st.rerun()

if fig is not None:
    st.vega_lite_chart(spec=fig.spec(arrow=True), theme=None, width="content", key="cmp_chart")
    st.caption(fig.caption)
for note in c.notes:
    st.caption(f"Note: {escape_message(note)}")
