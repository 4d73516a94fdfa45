"""What every page does first: start the app when a deep link opens a page on a fresh server, title the page, and
take the sidebar's analysis (or stop with what is missing)."""

from __future__ import annotations

import gc

import streamlit as st

from roofcore import Analysis

from . import state

# Everything imported so far (Streamlit, pandas, the engine, the catalog) lives as long as the server: move it out
# of the garbage collector's sight, so the full collections that large uploads trigger do not scan it each time
# (about 65 ms per 100,000-kernel upload otherwise). Once per process: this module is imported once.
gc.freeze()


def start(page: str, title: str) -> None:
    """Title the page; a deep link on a fresh server runs a page without the app, so start the app first."""
    if not state.CATALOG.present():
        state.START_PAGE.set(page)
        st.switch_page("streamlit_app.py")
    st.title(title)


def analysis() -> Analysis:
    """The sidebar's analysis, or stop the page: no device chosen, or the analysis failed (its error is shown)."""
    a = state.ANALYSIS.get()
    if a is None:
        if not state.hw_ids():
            st.info("Select at least one device in the sidebar.", icon=":material/memory:")
        st.stop()
    return a


def devices_or_stop() -> list[str]:
    """The chosen device ids, or stop the page with the call to choose one (pages that need no analysis)."""
    ids = state.hw_ids()
    if not ids:
        st.info("Select at least one device in the sidebar.", icon=":material/memory:")
        st.stop()
    return ids


__all__ = ["analysis", "devices_or_stop", "start"]
