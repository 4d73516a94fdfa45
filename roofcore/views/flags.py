"""Flags grouped by code for one device: how many kernels carry each, what it means, and the engine's message for
the longest-running few."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..counting import KERNEL_KEYS, kernel_codes, kernel_counts
from ..roofline import FLAG_CODES, Flag
from .kernels import subset, time_key

#: one sentence per flag code, for the Overview's grouping
FLAG_HELP = {
    "above-roof": "Faster than the roofline allows: an input (FLOPs, bytes, units, precision, scope) is wrong.",
    "far-below-roofs": "Under 10% of the roof: latency, launch overhead or occupancy dominate.",
    "tiny-kernel": "Under 1 µs per launch: launch-bound; batch or fuse rather than tune.",
    "missing-time": "No measured time: only the roofline bound is known.",
    "zero-time": "A measured time of zero or less: achieved rate left unknown.",
    "missing-flops": "FLOPs unknown (not zero): no roofline time or bound for these kernels.",
    "missing-bytes": "Off-chip bytes unknown (not zero): no roofline time or bound for these kernels.",
    "level-not-on-device": "Bytes at a level or link the device does not have.",
    "no-ceiling": "The device has no ceiling for the kernel's precision.",
}


@dataclass(frozen=True)
class FlagGroup:
    code: str
    count: int
    help: str
    examples: tuple[tuple[str, str], ...]  #: (kernel name, the engine's message), the longest-running first
    combined_away: bool = False  #: seen in single launches only: combining them with the kernel's others hides it


def _longest_each(rows: np.ndarray, key: np.ndarray, kid: np.ndarray, n: int) -> np.ndarray:
    """Up to ``n`` of ``rows``, one per kernel (``kid``), each kernel's longest by ``key``, the longest first."""
    rows = rows[np.argsort(-key[rows], kind="stable")]
    _, first = np.unique(kid[rows], return_index=True)
    return rows[np.sort(first)][:n]


def _message(rec: pd.Series, code: str) -> tuple[str, str]:
    """A table record's kernel name and the engine's message for flag ``code``."""
    return str(rec["name"]), next((f["message"] for f in rec["flags"] if f["code"] == code), "")


def flag_groups(analysis: Analysis, hw_id: str, examples: int = 3) -> list[FlagGroup]:
    """Flags on one device grouped by code, with counts and the engine's messages for a few kernels each."""
    r = analysis.result(hw_id)
    key = time_key(analysis, hw_id)
    picks: dict[str, np.ndarray] = {}
    kid = kernel_codes(analysis.workload.frame)
    for bit, code in FLAG_CODES.items():
        rows = np.flatnonzero((r.flags & int(bit)) != 0)
        if len(rows):
            picks[code] = _longest_each(rows, key, kid, examples)  # one example per kernel, its longest launch
    if not picks:
        return []
    order = np.unique(np.concatenate(list(picks.values())))
    tab = subset(analysis, order).table(hw_id, messages=True)
    pos = {int(row): i for i, row in enumerate(order)}
    out = []
    for bit, code in FLAG_CODES.items():
        if code not in picks:
            continue
        count = kernel_counts(analysis.workload.frame, (r.flags & int(bit)) != 0)[0]  # kernels, as every page counts
        ex = tuple(_message(tab.iloc[pos[int(row)]], code) for row in picks[code])
        out.append(FlagGroup(code, count, FLAG_HELP.get(code, ""), ex))
    # attention first: wrong inputs, then performance problems, then missing data
    rank = {c: i for i, c in enumerate(["above-roof", "far-below-roofs", "tiny-kernel", "no-ceiling",
                                        "level-not-on-device", "missing-bytes", "missing-flops", "zero-time",
                                        "missing-time"])}
    return sorted(out, key=lambda g: rank.get(g.code, 99))


def _identities(frame: pd.DataFrame, rows: np.ndarray) -> list[tuple[str, ...]]:
    """Each row's kernel (:data:`roofcore.counting.KERNEL_KEYS`, a missing value as ``""``), comparable across
    frames: a combined workload's rows and the launches they sum."""
    keys = [k for k in KERNEL_KEYS if k in frame.columns]
    cols = [frame[k].to_numpy(dtype=object)[rows] for k in keys]
    return [tuple("" if v is None or v != v else str(v) for v in vals) for vals in zip(*cols, strict=True)]


def combined_away(launches: Analysis, combined: Analysis, hw_id: str, examples: int = 3) -> FlagGroup | None:
    """Launches above their roof on ``hw_id`` whose kernel's combined row is not: summed with the kernel's other
    launches they fall under the roof, and the contradiction (an input is wrong) would go unseen. ``launches``:
    the workload as read; ``combined``: the same with repeated launches combined, on the same devices. None where
    combining hides nothing."""
    above = np.flatnonzero((launches.result(hw_id).flags & int(Flag.ABOVE_ROOF)) != 0)
    if not len(above):
        return None
    rows = np.flatnonzero((combined.result(hw_id).flags & int(Flag.ABOVE_ROOF)) != 0)
    flagged = set(_identities(combined.workload.frame, rows))
    # one identity per kernel, not per launch (a million launches can be above their roofs, of a few kernels)
    kid = kernel_codes(launches.workload.frame)
    codes, first = np.unique(kid[above], return_index=True)
    shown = np.isin(kid[above], codes[[ident in flagged for ident in _identities(launches.workload.frame,
                                                                                   above[first])]])
    hidden = above[~shown]
    if not len(hidden):
        return None
    picks = _longest_each(hidden, time_key(launches, hw_id), kid, examples)
    tab = subset(launches, picks).table(hw_id, messages=True)
    ex = tuple(_message(rec, "above-roof") for _, rec in tab.iterrows())
    mask = np.zeros(len(launches.workload), dtype=bool)
    mask[hidden] = True
    kernels, count = kernel_counts(launches.workload.frame, mask)
    return FlagGroup("above-roof", kernels, f"{count:,} single launch(es) faster than the roofline allows: an input "
                     "is wrong. Combined with the kernel's other launches they fall under the roof, so the combined "
                     "rows carry no flag.", ex, combined_away=True)
