"""What every page of the app does first (Streamlit only: the engine, roofcore, never imports Streamlit)."""

from __future__ import annotations

import streamlit as st

from roofcore import Analysis


def start(page: str, title: str) -> None:
    """Title the page; a deep link on a fresh server runs a page without the app, so start the app first."""
    if "catalog" not in st.session_state:
        st.session_state["start_page"] = page
        st.switch_page("streamlit_app.py")
    st.title(title)


def analysis() -> Analysis:
    """The sidebar's analysis, or stop the page: no device chosen, or the analysis failed (its error is shown)."""
    a = st.session_state.get("analysis")
    if a is None:
        if not st.session_state.get("hw_ids"):
            st.info("Select at least one device in the sidebar.", icon=":material/memory:")
        st.stop()
    return a
