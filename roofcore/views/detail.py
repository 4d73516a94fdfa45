"""One kernel in detail on every device of an analysis: headline numbers, the time each resource needs, flags."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..analyze import Analysis
from ..models import Link, MemoryLevel
from ..units import fmt_bandwidth, fmt_bytes, fmt_flops, fmt_intensity, fmt_pct, fmt_rate, fmt_time
from .kernels import subset
from .summary import Metric


def kernel_detail(analysis: Analysis, row: int) -> dict[str, dict[str, Any]]:
    """Everything about one kernel on each device: headline numbers, per-resource times and its flags.

    Per resource: the bytes (or FLOPs) it moves, the kernel's intensity against it, its rate, and the time it
    needs (``bytes / β``, ``FLOPs / π``); the largest is the roofline time and names the bound.
    """
    sub = subset(analysis, [row])
    out: dict[str, dict[str, Any]] = {}
    for r in sub.results:
        hw = r.hardware
        rec = sub.table(hw.id, messages=True).iloc[0]
        flops = rec["flops"]
        peak = rec["peak_flops_per_s"]
        rows = [{"Resource": f"compute ({rec['ceiling'] or 'no ceiling'})", "Amount": fmt_flops(flops),
                 "Intensity": "", "Rate": fmt_rate(peak),
                 "Time": fmt_time(flops / peak if peak and not math.isnan(peak) else float("nan"))}]
        resources: tuple[MemoryLevel | Link, ...] = (*hw.levels, *hw.links)
        for res in resources:
            col = f"bytes_{res.name}"
            if col not in rec.index:
                continue
            b = rec[col]
            beta = res.rate(sub.achievable)
            rows.append({"Resource": f"{res.display} ({res.name})", "Amount": fmt_bytes(b),
                         "Intensity": fmt_intensity(rec.get(f"intensity_{res.name}")),
                         "Rate": fmt_bandwidth(beta), "Time": fmt_time(b / beta if not math.isnan(b) else float("nan"))})
        lacking = [n for n in sub.workload.byte_names if n not in hw.level_map and n not in hw.link_map]
        for n in lacking:
            rows.append({"Resource": f"{n} (not on this device)", "Amount": fmt_bytes(rec[f"bytes_{n}"]),
                         "Intensity": fmt_intensity(rec.get(f"intensity_{n}")), "Rate": "–", "Time": "–"})
        headline = [
            Metric("Roofline time", fmt_time(rec["t_roof_s"]), "the largest of the per-resource times"),
            Metric("Measured time", fmt_time(rec["time_s"]), "total over launches"),
            Metric("Of roof", fmt_pct(rec["efficiency"]), "roofline time ÷ measured time"),
            Metric("Attainable", fmt_rate(rec["attainable_flops_per_s"]), "FLOPs ÷ roofline time"),
            Metric("Achieved", fmt_rate(rec["achieved_flops_per_s"]), "FLOPs ÷ measured time"),
            Metric("No-overlap time", fmt_time(rec["t_serial_s"]),
                   "the sum of the per-resource times: compute and memory traffic never overlapping"),
        ]
        bound = rec["bound"] if isinstance(rec["bound"], str) else "unknown"  # None or NaN: no bound
        kind, _, res_name = bound.partition(":")
        if flops == 0 and kind in ("memory", "link") and f"bytes_{res_name}" in rec.index:
            # data movement: FLOP/s are zero by definition; its bandwidth against the roof is the measure
            res = (hw.level_map if kind == "memory" else hw.link_map)[res_name]
            beta = res.rate(sub.achievable)
            moved, t = rec[f"bytes_{res_name}"], rec["time_s"]
            headline[3] = Metric("Roof", fmt_bandwidth(beta), f"{res.display} bandwidth: the roof that binds it")
            headline[4] = Metric("Achieved", fmt_bandwidth(moved / t if t and t == t and t > 0 else float("nan")),
                                 f"{res.display} bytes ÷ measured time (0 FLOP: data movement)")
        out[hw.id] = {"hardware": hw, "metrics": headline, "bound": bound, "resources": pd.DataFrame(rows),
                      "flags": list(rec["flags"]),
                      "source": f"{rec['source']}: {rec['row']}"}
    return out
