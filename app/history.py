"""The History page's pieces (pages/history.py stays thin): a project's runs a page at a time, every one of them
reachable (no cap), and the kernels' history over the last runs, kept per run so that moving the "Last runs"
slider anywhere in its range re-reads, re-parses and re-analyses no run it has already seen."""

from __future__ import annotations

import streamlit as st

from roofcore import Hardware

from . import runs as app_runs
from . import state
from .keys import device_key

#: the page sizes of the runs table (the second is the default)
PAGE_SIZES = (25, 50, 100, 200)


def runs_page(store, viewer, project: str) -> tuple[list, int]:
    """The page of ``project``'s runs that the page controls choose (newest first), and how many runs the project
    has for ``viewer`` over all pages. A new project or page size starts at the first page."""
    total = store.count(viewer, project=project)
    left, mid, right = st.columns([1, 1, 3], vertical_alignment="bottom")
    size = left.selectbox("Runs per page", PAGE_SIZES, index=1, key="hist_page_size")
    pages = max(1, -(-total // size))
    if state.HISTORY_PAGE_OF.get() != (project, size) or int(state.HISTORY_PAGE.get(1)) > pages:
        state.HISTORY_PAGE.set(1 if state.HISTORY_PAGE_OF.get() != (project, size) else pages)
    state.HISTORY_PAGE_OF.set((project, size))
    number = int(mid.number_input("Page", min_value=1, max_value=pages, step=1, key=state.HISTORY_PAGE.name,
                                  disabled=pages == 1, help=f"{pages:,} pages of {size} runs"))
    runs = store.list(viewer, project=project, limit=size, offset=(number - 1) * size)
    first = (number - 1) * size + 1 if runs else 0
    right.caption(f"Runs {first:,}–{first + len(runs) - 1 if runs else 0:,} of {total:,}, newest first "
                  f"(page {number:,} of {pages:,}).")
    return runs, total


@st.cache_resource(show_spinner=False, max_entries=app_runs.RUN_CACHE_ENTRIES, ttl=3600)
def history_rows(run_id: str, device: str, achievable: bool, _hw: Hardware) -> tuple:
    """One run's rows of the history on one device (``device`` names its figures); a run never changes, so its id
    names its content."""
    from roofcore.store.history import run_rows

    info, _files, w, _key = app_runs.load_run(run_id)
    return run_rows(info, w, _hw, achievable=achievable)


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)
def history_window(token: str, _ids: tuple, _hw: Hardware, achievable: bool):
    """The window's history, shared by the sessions asking for the same runs and device (``token`` names them)."""
    from roofcore.store.history import assemble

    device = device_key(_hw)
    return assemble(_hw.id, [history_rows(rid, device, achievable, _hw) for rid in _ids])


def window_history(window: list, hw: Hardware, achievable: bool):
    """The :class:`roofcore.store.history.History` of the runs in ``window`` (which the viewer may see: they come
    from :meth:`RunStore.list`) on ``hw``. Raises :class:`roofcore.RoofcoreError` if a run cannot be read."""
    ids = tuple(r.id for r in window)
    return history_window("|".join([*ids, device_key(hw), f"achievable={achievable}"]), ids, hw, achievable)


__all__ = ["PAGE_SIZES", "runs_page", "window_history"]
