"""Recommendations: per device, the ranked actions with their gain, reason and kernels, and where those kernels sit."""

import streamlit as st

from app import levels, page, state
from app.device_pick import heading_note
from app.markdown import escape_markdown, escape_message
from app.memo import remember
from app.messages import message
from roofcore import RoofcoreError, charts, views
from roofcore import advise as adv
from roofcore.analyze import speedup_note
from roofcore.names import short_names

page.start("pages/recommendations.py", "Recommendations")
a = page.analysis()

#: cards shown per device (the rest are counted below them)
SHOWN = 15
st.caption("Ranked by the seconds each action would save over the whole workload, bounded by the roofline. A "
           "kernel's seconds are counted once: an action ranked lower counts only what it adds to those above it. "
           "Data checks come first: until they are fixed, the other advice rests on wrong or missing numbers.")

token = state.token()


def cached(kind: str, hw_id: str, build):
    """``build()`` memoised per session and analysis (reruns and page changes cost nothing)."""
    return remember("recommendations", (token, kind, hw_id), build)


def chart_spec(hw_id: str, names: tuple[str, ...]) -> dict:
    fig = charts.roofline(a, [hw_id], highlight=list(names), width=330, height=260)
    return {"spec": fig.spec(arrow=True), "caption": fig.caption}


try:
    for hw in a.hardware:
        advice = cached("advice", hw.id, lambda hw_id=hw.id: adv.advise(a, hw_id))
        st.subheader(views.device_label(hw))
        if stand_in := heading_note(state.catalog(), state.workload(), hw.id):  # as on the Overview
            st.caption(f":orange[{escape_message(stand_in)}]")
        st.markdown(f"**{escape_markdown(advice.summary())}**")
        caveat = speedup_note(a.summary(hw.id)) or cached("micro", hw.id, lambda hw_id=hw.id: views.micro_kernel_note(
            a, hw_id))
        if caveat and advice.items:
            message("info", caveat)
        if not advice.items:
            continue
        cards = adv.cards(advice, SHOWN)
        left, right = st.columns([1, 1], gap="medium")
        with right:
            pick = st.selectbox("Highlight on the chart", range(len(cards)), key=f"rec_pick_{hw.id}",
                                format_func=lambda i, cs=cards: f"{cs[i].rank}. {cs[i].title}",
                                help="The kernels of this recommendation are ringed; the others are faded.")
            names = advice.items[pick].kernels
            shown = cached(f"chart-{pick}", hw.id, lambda hw_id=hw.id, ks=names: chart_spec(hw_id, ks))
            st.vega_lite_chart(spec=dict(shown["spec"]), theme=None, width="content", key=f"rec_chart_{hw.id}")
            st.caption(shown["caption"])
        with left:
            for c in cards:
                with st.container(border=True):
                    head, gain = st.columns([4, 2], vertical_alignment="top")
                    head.markdown(f"**{c.rank}. {escape_markdown(c.title)}**")
                    gain.markdown(f"**{escape_markdown(c.gain)}**")
                    st.caption(escape_markdown(c.meta))
                    st.markdown(escape_markdown(c.reason))
                    short = short_names(c.kernels)  # a templated name runs to a paragraph: the Kernels page has it
                    st.markdown("Kernels: " + " · ".join(escape_markdown(short[k]) for k in c.kernels)
                                + (f" ({escape_markdown(c.more)})" if c.more else ""))
                    if place := levels.where(a, tuple(c.kernels)):  # the module and op they run in
                        st.caption(escape_markdown(place))
            if len(advice.items) > len(cards):
                st.caption(f"… and {len(advice.items) - len(cards):,} more recommendations with smaller gains "
                           "(`roofline advise --top 0` lists them all).")
except RoofcoreError as e:
    message("error", e)
