"""A reload of the browser page: what the user uploaded is gone, and the page says so.

Streamlit keeps an upload in the server's session of one browser tab; a reload opens a new session, empty. To tell
a reload from a first visit, the address carries ``?upload=<the workload's name>`` for as long as an upload is on
screen (set again on every run, as a click on another page drops it). A reload keeps the address, so the new
session's first run finds the name; :func:`remember` keeps it, before the app's first page switch drops the query
string, and :func:`notice` says that uploads live in the browser session and offers the saved runs, for as long as
the example stands in for the lost upload. The name is the only thing the address says of the upload (no bytes, no
content key); it is in the browser's own history, as the file names are in its file dialog.
"""

from __future__ import annotations

import streamlit as st

from . import runs, state
from .markdown import escape_markdown

#: the query parameter naming the upload on screen
PARAM = "upload"
#: the longest name the address carries (a workload of many files is named by them all)
LONGEST = 200
HISTORY_PAGE = "pages/history.py"


def remember() -> None:
    """On a session's first run: the upload the address names was on screen before a reload (or a restart of the
    server) ended the session that held it."""
    name = st.query_params.get(PARAM)
    if name and not state.ENTERED.present():
        state.RELOADED.set(name[:LONGEST])  # an address anyone can type: shown as text, on one line


def _uploaded(entry: state.WorkloadEntry) -> bool:
    """Whether the workload was read from the sidebar's uploader (not the example, a saved run or a builder)."""
    return "base_key" in entry and "run" not in entry


def keep(entry: state.WorkloadEntry) -> None:
    """The address names the upload on screen, and nothing else: set, changed or removed as the workload is."""
    name = entry["label"][:LONGEST] if _uploaded(entry) else None
    if st.query_params.get(PARAM) == name:
        return
    if name is None:
        del st.query_params[PARAM]
    else:
        st.query_params[PARAM] = name


def notice(entry: state.WorkloadEntry) -> None:
    """While the example stands in for an upload a reload cleared: one line saying why, and the saved runs."""
    lost = state.RELOADED.get()
    if not lost:
        return
    if entry["key"] != "bundled":  # something else is on screen now: an upload, a saved run, a builder
        state.RELOADED.pop()
        return
    st.info(f"Uploads live in this browser session, and reloading the page clears them: **{escape_markdown(lost)}** is "
            "no longer here. " + ("Open a saved run or upload it again." if runs.available() else "Upload it again."),
            icon=":material/info:")
    if runs.available():
        st.page_link(HISTORY_PAGE, label="Open a saved run", icon=":material/history:")


__all__ = ["PARAM", "keep", "notice", "remember"]
