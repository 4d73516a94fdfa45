"""Advice as people read it: plain text for the CLI, cards for the app's page (plain strings, escaped by the
page), and a table of the recommendations."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ..models import Hardware
from ..units import fmt_pct, fmt_time
from .model import Advice, Lever, Recommendation, short


def advice_text(advice: Advice, top: int = 10, *, hardware: Hardware | None = None,
                where: Callable[[tuple[str, ...]], str] | None = None) -> str:
    """Plain text for the CLI: the summary, then the top items with gain, reason and kernels (and, with ``where``,
    the module and op they run in: :func:`roofcore.hierarchy.views.where_text`)."""
    head = f"== Recommendations on {hardware.name} ({hardware.id}) ==" if hardware else \
        f"== Recommendations on {advice.hardware} =="
    lines = [head, advice.summary()]
    items = advice.items if top <= 0 else advice.items[:top]
    for i, r in enumerate(items, 1):
        gain = gain_text(r, advice.workload_time_s)
        lines.append("")
        lines.append(f"{i:>2}. {r.title}")
        lines.append(f"    {r.lever.value} · {r.confidence.value} confidence · {gain} · rule {r.rule}")
        lines.append(f"    {r.reason}")
        lines.append(f"    kernels: {kernels_text(r)}")
        if where is not None and (place := where(tuple(r.kernels))):
            lines.append(f"    {place}")
    if len(items) < len(advice.items):
        lines.append("")
        lines.append(f"({len(items)} of {len(advice.items)} recommendations shown; --top 0 shows all)")
    return "\n".join(lines)


def kernels_text(r: Recommendation, shown: int = 5, width: int = 40) -> str:
    """'a, b, c (+12 more names; 40 rows)': the first names, how many more, and the rows when names repeat."""
    text = ", ".join(short(k, width) for k in r.kernels[:shown])
    more = r.name_count - min(len(r.kernels), shown)
    notes = ([f"+{more:,} more names"] if more > 0 else []) + (
        [f"{r.kernel_count:,} rows"] if r.kernel_count > r.name_count else [])
    return text + (f" ({'; '.join(notes)})" if notes else "")


def gain_text(r: Recommendation, workload_time_s: float) -> str:
    """'saves 8.16 ms (20%)', 'nothing beyond the actions above (alone 1.2 ms)', or why there is no number."""
    if r.gain_s > 0:
        share = f" ({fmt_pct(r.gain_s / workload_time_s)})" if workload_time_s > 0 else ""
        return f"saves {fmt_time(r.gain_s)}{share}"
    if r.standalone_gain_s > 0:
        return f"nothing beyond the actions above (alone {fmt_time(r.standalone_gain_s)})"
    if r.lever is Lever.DATA_CHECK:
        return "a data check: no gain claimed"
    return "gain not bounded by the roofline"


#: how each lever reads on a card
LEVER_LABELS = {
    Lever.FUSION: "Fusion", Lever.TILING: "Tiling", Lever.PRECISION: "Precision", Lever.BATCH: "Batch",
    Lever.OVERLAP: "Overlap", Lever.RESHARDING: "Resharding", Lever.ALGORITHM: "Algorithm",
    Lever.MORE_HARDWARE: "More hardware", Lever.LAUNCH_OVERHEAD: "Launch overhead", Lever.LATENCY: "Latency",
    Lever.MATRIX_UNITS: "Matrix units", Lever.VECTORISATION: "Vectorisation", Lever.STALLS: "Stalls",
    Lever.MEMORY_ACCESS: "Memory access", Lever.DATA_CHECK: "Data check",
}


@dataclass(frozen=True)
class Card:
    """A recommendation as the app shows it: plain strings (the page escapes them), built here to keep it thin."""

    rank: int
    title: str
    meta: str  #: "Fusion · medium confidence · rule fusion"
    gain: str  #: "8.01 ms (19.6% of the workload)" or why there is no number
    reason: str
    kernels: tuple[str, ...]  #: the names to list
    more: str  #: "+12 more names; 40 rows" or ""


def cards(advice: Advice, limit: int | None = None) -> list[Card]:
    """The first ``limit`` recommendations as :class:`Card`s, in rank order."""
    out = []
    w = advice.workload_time_s
    for i, r in enumerate(advice.items[:limit] if limit else advice.items, 1):
        if r.gain_s > 0:
            gain = f"{fmt_time(r.gain_s)}" + (f" ({fmt_pct(r.gain_s / w)} of the workload)" if w > 0 else "")
        else:
            gain = gain_text(r, w)
        shown = r.kernels[:10]
        more = r.name_count - len(shown)
        notes = ([f"+{more:,} more names"] if more > 0 else []) + (
            [f"{r.kernel_count:,} rows"] if r.kernel_count > r.name_count else [])
        out.append(Card(rank=i, title=r.title, gain=gain, reason=r.reason, kernels=tuple(shown),
                        meta=f"{LEVER_LABELS[r.lever]} · {r.confidence.value} confidence · rule {r.rule}",
                        more="; ".join(notes)))
    return out


def advice_frame(advice: Advice) -> pd.DataFrame:
    """One row per recommendation (rank, title, lever, gain in s and share, confidence, kernels) for tables."""
    w = advice.workload_time_s
    return pd.DataFrame({
        "rank": range(1, len(advice.items) + 1),
        "title": [r.title for r in advice.items],
        "lever": [r.lever.value for r in advice.items],
        "gain_s": [r.gain_s for r in advice.items],
        "gain_share": [r.gain_s / w if w > 0 else math.nan for r in advice.items],
        "confidence": [r.confidence.value for r in advice.items],
        "kernels": [r.kernel_count for r in advice.items],
        "rule": [r.rule for r in advice.items],
    })
