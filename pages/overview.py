"""Overview: per device, the headline numbers, time by bound, the kernels to look at first, and flags."""

import streamlit as st

from app import combined, page, state
from app.device_pick import heading_note
from app.markdown import escape_markdown, escape_message
from app.memo import shared
from app.messages import message
from app.sidebar import counted
from roofcore import RoofcoreError, views
from roofcore.analyze import coverage_text, speedup_note
from roofcore.charts import bound_share_spec  # plain Vega-Lite: the app's first chart needs no Altair
from roofcore.communication import communication_text

page.start("pages/overview.py", "Overview")
a = page.analysis()

w = a.workload
timed = a.timed  # a measured time > 0, as the summary's "missing time" counts
# counted as the sidebar counts (kernels and launches, whether or not launches are combined for the analysis)
entry = state.workload()
with_time = views.count_of(w, timed)  # "1 of 38 kernels" has, "21 of 38 kernels" have
timing = ("no measured times: every number is a roofline bound" if not timed.any() else
          "every kernel has a measured time" if timed.all() else
          f"{with_time} {'has' if with_time.startswith('1 of ') else 'have'} a measured time")
st.caption(f"**{escape_message(w.name)}** · {counted(entry)} from "
           + (escape_message(", ".join(w.sources)) or "memory") + f" · {timing}"
           + (" · achievable roofs" if a.achievable else " · theoretical roofs"))
if w.runtime is not None:  # queue packets and API rows the files listed among their kernels: shown once, here
    st.caption(escape_message(views.runtime_line(w.runtime)))
for note in (x for x in w.warnings if x not in entry["workload"].warnings):  # what combining the launches says
    message("info", note[0].upper() + note[1:] + ".")


def cached(fn, hw_id: str):
    """``fn(hw_id)`` once per analysis for every session (app.memo.shared): reruns and page changes are free."""
    return shared(f"overview.{fn.__name__}", hw_id, lambda: fn(hw_id))


def top(hw_id: str):
    return views.top_kernels(a, hw_id, 10)


def flags(hw_id: str):
    groups = views.flag_groups(a, hw_id)
    hidden = combined.hidden(a, hw_id)  # launches combined: a launch above its roof must not vanish in its sum
    return groups if hidden is None else [hidden, *groups]


def micro(hw_id: str):
    return views.micro_kernel_note(a, hw_id)


def counts(hw_id: str):
    return views.coverage_counts(a, hw_id)  # kernels, as the sidebar counts them


try:
    for hw in a.hardware:
        s = cached(a.summary, hw.id)
        with st.container(border=True):
            st.subheader(views.device_label(hw))
            if stand_in := heading_note(state.catalog(), entry, hw.id):  # the sidebar's warning, where it is read
                st.caption(f":orange[{escape_message(stand_in)}]")
            said = cached(counts, hw.id)
            metrics = views.overview_metrics(s, said)
            for col, m in zip(st.columns(len(metrics)), metrics, strict=True):
                col.metric(m.label, m.value, help=m.help)
            covered = coverage_text(s, said)
            if covered:
                message("info", covered + (" The import notes above say what to collect." if w.warnings else ""))
            if communication_text(s):  # collectives' share of the time and of the link roof
                message("info", communication_text(s))
            caveat = speedup_note(s) or (cached(micro, hw.id) if s["time_s"] is not None else "")
            if caveat:
                message("info", caveat)
            left, right = st.columns([2, 3], gap="large")
            with left:
                basis = "measured time" if s["share_basis"] == "measured" else "roofline time"
                st.markdown(f"**Time by bound** ({basis})")
                if s["time_share_by_bound"]:
                    spec = shared("overview.bound_chart", hw.id, lambda s=s: bound_share_spec(
                        s["time_share_by_bound"], width=300))
                    st.vega_lite_chart(spec=dict(spec), theme=None, width="content")
            with right:
                st.markdown("**Flags needing attention**")
                groups = cached(flags, hw.id)
                for g in groups:
                    undo = " Turn off Combine repeated launches to see them." if g.combined_away else ""
                    with st.expander(f"`{g.code}` × {g.count:,} — {g.help}{undo}"):
                        for name, text in g.examples:
                            st.markdown(f"- **{escape_markdown(name)}**: {escape_markdown(text)}")
                        if g.count > len(g.examples):
                            st.caption(f"… and {g.count - len(g.examples):,} more: "
                                       + ("turn off Combine repeated launches, then filter by this flag on the "
                                          "Kernels page." if g.combined_away else
                                          "filter by this flag on the Kernels page."))
                if not groups:
                    st.caption("None: every kernel has its inputs and sits plausibly under its roof.")
            table, ranked = cached(top, hw.id)
            st.markdown(f"**Top kernels by {ranked}**" + (" (measured − roofline time: the most a fix can save)"
                                                         if ranked == "headroom" else ""))
            st.dataframe(table, hide_index=True, width="stretch", placeholder="–")
except RoofcoreError as e:
    message("error", e)
