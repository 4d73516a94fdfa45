"""A timeline read with counters of some launches (roofcore.ingest.join): the share of the time with counters, the
timeline kernels left without, and pairs fixed by hand (a timeline kernel with a counter kernel, as Compare pairs
kernels of two runs). The sidebar's uploads are read again with the pairs (``read_many(..., pairs=...)``)."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

import roofcore
from roofcore.ingest.join import counter_headline, kernel_times, role_of
from roofcore.names import short_name
from roofcore.units import fmt_pct, fmt_time

from . import state, tables
from .keys import content_key
from .markdown import escape_message
from .memo import remember
from .workload import parse_uploads

Pairs = tuple[tuple[str, str], ...]


def pairs_for(entry: state.WorkloadEntry) -> Pairs:
    """The pairs made by hand for the files of this workload (none for other files)."""
    p = state.KERNEL_PAIRS.get()
    return tuple(tuple(x) for x in p["pairs"]) if p and p["base"] == entry.get("base_key") else ()


def keyed(base: str, pairs: Pairs) -> str:
    """The content key of files read with these pairs (the files' own key without)."""
    if not pairs:
        return base
    return f"{base}|pairs:{hashlib.sha256(repr(pairs).encode()).hexdigest()[:16]}"


def _counter_names(files: tuple[tuple[bytes, str], ...], fmt: str | None) -> list[str]:
    """The kernel names of the counter files among ``files`` (the files that are no timeline, read together)."""
    rest = []
    for one in files:
        w, _ = parse_uploads(content_key((one,), fmt), fmt, (one,))
        if w is None or role_of(w) != "timeline":
            rest.append(one)
    if not rest:
        return []
    w, _ = parse_uploads(content_key(tuple(rest), fmt), fmt, tuple(rest))
    if w is None:
        return []
    return list(dict.fromkeys(w.frame["name"].astype(object).map(str)))


def _pair(entry: state.WorkloadEntry, timeline: str, counter: str) -> None:
    state.KERNEL_PAIRS.set({"base": entry["base_key"], "pairs": [*pairs_for(entry), (timeline, counter)]})


def _clear() -> None:
    state.KERNEL_PAIRS.pop()


def _without(w: roofcore.Workload) -> pd.DataFrame:
    """The timeline kernels without counters, longest first: kernel, launches, time, share."""
    k = kernel_times(w)
    total = float(k["time"].sum())
    rest = k[~k["known"]]
    return pd.DataFrame({"Kernel": list(rest.index), "Launches": rest["count"].to_numpy(),
                         "Time": [fmt_time(t) for t in rest["time"]],
                         "Share": [fmt_pct(t / total, 2) if total > 0 else "–" for t in rest["time"]]})


def counter_pairs() -> None:
    """The expander on the Kernels page (nothing unless the sidebar's workload is a timeline joined with counters)."""
    entry = state.workload()
    w = entry["workload"]
    if "counter_coverage" not in w.meta:
        return
    pairs = pairs_for(entry)
    without = remember("pairing.without", entry["key"], lambda: _without(w), keep=1)
    with st.expander(f"Timeline + counters: {fmt_pct(float(w.meta['counter_coverage']), 2)} of the time has "
                     "counters", icon=":material/link:", expanded=bool(pairs)):
        st.markdown(escape_message(counter_headline(w)))
        if len(without):
            st.caption(f"Timeline kernels without counters ({len(without):,}), longest first:")
            st.dataframe(without, hide_index=True, width="stretch", placeholder="–", key="pair_without",
                         height=tables.height(len(without), 240))
        files = entry.get("files")
        if len(without) and files and "base_key" in entry:
            names = remember("pairing.counters", entry["base_key"], lambda: _counter_names(files, entry.get("format")),
                             keep=1)
            used = set(w.frame["counter_kernel"].dropna().astype(str)) if "counter_kernel" in w.frame else set()
            offered = [c for c in names if c not in used] + [c for c in names if c in used]
            if offered:
                with st.form("pair_counters", border=True):
                    st.markdown("**Pair a timeline kernel with its counters** (the same kernel under another "
                                "tool's name)")
                    p1, p2 = st.columns(2)
                    t = p1.selectbox("Timeline kernel", list(without["Kernel"])[:1000], key="pair_timeline",
                                     format_func=short_name)
                    c = p2.selectbox("Counter kernel", offered[:1000], key="pair_counter",
                                     format_func=lambda n: short_name(n) + (" (matched)" if n in used else ""),
                                     help="Kernels no timeline kernel took come first.")
                    if st.form_submit_button("Pair them", icon=":material/link:", key="pair_submit"):
                        _pair(entry, t, c)
                        st.rerun()  # the sidebar reads the files again with the pairs
        if pairs:
            st.caption("Paired by hand: " + escape_message("; ".join(f"{short_name(a)} → {short_name(b)}"
                                                                     for a, b in pairs)))
            st.button("Clear the pairs", key="pair_clear", icon=":material/link_off:", on_click=_clear)


__all__ = ["counter_pairs", "keyed", "pairs_for"]
