"""Picking a few names out of very many (a run of a million kernels): a search box and a multiselect that never
offers more than :data:`PICK_LIMIT` names, so the browser never receives a million options. What is already
picked stays offered whatever the search; a caption says how many more match."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from .state import Key

#: the most names one picker offers besides those already picked
PICK_LIMIT = 200


def matches(names: pd.Series, query: str) -> pd.Series:
    """The names containing ``query`` (case-insensitive, as typed: no pattern), in their order; all for none."""
    query = query.strip()
    if not query:
        return names
    return names[names.str.contains(query, case=False, regex=False, na=False)]


def offered(names: pd.Series, query: str, picked: Sequence[str], limit: int = PICK_LIMIT) -> tuple[list[str], int]:
    """What the picker offers: ``picked`` (those still among ``names``), then the first ``limit`` other matches of
    ``query``; and how many more match beyond those."""
    picked = list(dict.fromkeys(picked))
    present = set(names[names.isin(picked)]) if picked else set()
    still = [p for p in picked if p in present]
    found = matches(names, query)
    rest = found[~found.isin(still)] if still else found
    return still + rest.iloc[:limit].tolist(), max(0, len(rest) - limit)


def search_multiselect(label: str, names: Sequence[str] | pd.Series, *, key: Key, what: str = "names",
                       default: Sequence[str] = (), limit: int = PICK_LIMIT, max_selections: int | None = None,
                       help: str | None = None) -> list[str]:
    """A multiselect of ``names`` (in their order) behind a search box: at most ``limit`` matches are offered
    besides what is picked. ``default`` is picked at first, and again when none of the picks is among ``names``
    any more (another project or device); the widget's value is ``key``."""
    names = names.reset_index(drop=True) if isinstance(names, pd.Series) else pd.Series(list(names), dtype=object)
    query = st.text_input(f"Find {what}", key=f"{key.name}_find", placeholder="part of a name",
                          help=f"Offers the first {limit:,} {what} that contain this text (any case).")
    picked = key.get(None)
    if picked is None or (picked and not names.isin(list(picked)).any()):
        picked = list(default)
        key.set(picked)  # before the widget: its value, without a default that would fight it
    options, more = offered(names, query, picked, limit)
    chosen = st.multiselect(label, options, key=key.name, max_selections=max_selections, help=help)
    if more:
        st.caption(f"{more:,} more {what} match: refine the search to pick among them.")
    elif query.strip() and len(options) == len(chosen):
        st.caption(f"No other {what} contain “{query.strip()}”.")
    return chosen


__all__ = ["PICK_LIMIT", "matches", "offered", "search_multiselect"]
