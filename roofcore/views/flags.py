"""Flags grouped by code for one device: how many kernels carry each, what it means, and the engine's message for
the longest-running few."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analyze import Analysis
from ..counting import kernel_codes, kernel_counts
from ..roofline import FLAG_CODES
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


def flag_groups(analysis: Analysis, hw_id: str, examples: int = 3) -> list[FlagGroup]:
    """Flags on one device grouped by code, with counts and the engine's messages for a few kernels each."""
    r = analysis.result(hw_id)
    key = time_key(analysis, hw_id)
    picks: dict[str, np.ndarray] = {}
    kid = kernel_codes(analysis.workload.frame)
    for bit, code in FLAG_CODES.items():
        rows = np.flatnonzero((r.flags & int(bit)) != 0)
        if len(rows):
            rows = rows[np.argsort(-key[rows], kind="stable")]
            _, first = np.unique(kid[rows], return_index=True)  # one example per kernel, its longest launch
            picks[code] = rows[np.sort(first)][:examples]
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
        ex = []
        for row in picks[code]:
            rec = tab.iloc[pos[int(row)]]
            msg = next((f["message"] for f in rec["flags"] if f["code"] == code), "")
            ex.append((str(rec["name"]), msg))
        out.append(FlagGroup(code, count, FLAG_HELP.get(code, ""), tuple(ex)))
    # attention first: wrong inputs, then performance problems, then missing data
    rank = {c: i for i, c in enumerate(["above-roof", "far-below-roofs", "tiny-kernel", "no-ceiling",
                                        "level-not-on-device", "missing-bytes", "missing-flops", "zero-time",
                                        "missing-time"])}
    return sorted(out, key=lambda g: rank.get(g.code, 99))
