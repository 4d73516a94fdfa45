"""Results the pages keep so that a rerun or a page change costs nothing: :func:`remember` keeps one per session
(what depends on the session's own inputs: a scenario upload, two compared runs, a report's title), :func:`shared`
one per server for every session with the same analysis (what depends on the analysis alone: a chart, a table).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

from . import state

T = TypeVar("T")


def remember(space: str, key: Hashable, build: Callable[[], T], *, keep: int = 32) -> T:
    """``build()`` once per session for ``key`` in the page's ``space`` (its name); at most ``keep`` results are
    kept per space (a new key past that starts the space afresh: ``keep=1`` holds only the latest)."""
    memo = state.MEMOS.setdefault({}).setdefault(space, {})
    if key not in memo:
        value = build()  # computed first: an error leaves the memo as it was
        if len(memo) >= keep:
            memo.clear()
        memo[key] = value
    return memo[key]


@st.cache_resource(show_spinner=False, max_entries=256, ttl=3600)
def _shared(kind: str, token: str, arg: object, _compute) -> object:
    return _compute()


def shared(kind: str, arg: object, compute: Callable[[], T]) -> T:
    """``compute()`` for this page's analysis, computed once per server for every session with the same
    analysis (its token names the content, see app.workload.analysis_for) and kept an hour at most. The
    result is shared, never copied: callers must not modify it."""
    return _shared(kind, state.token(), arg, compute)


__all__ = ["remember", "shared"]
