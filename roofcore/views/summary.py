"""A workload and its analysis in a few numbers: kernels and launches counted one way everywhere, the headline
metrics of one device, the share of time per kind of bound, and the caveat for a gain held by micro-kernels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import counting
from ..analyze import Analysis
from ..counting import plural
from ..ingest import aggregate
from ..models import Workload
from ..roofline import Flag
from ..units import fmt_factor, fmt_pct, fmt_time


def combine_launches(workload: Workload) -> Workload:
    """Repeated launches of one kernel (same name, precision, unit, group) summed into one row.

    A workload without repeats is returned unchanged, keeping each row's provenance.
    """
    f = workload.frame
    keys = [k for k in ("name", "precision", "unit", "group") if k in f.columns]
    if f.empty or f["name"].is_unique or not f.duplicated(subset=keys).any():  # unique names: no repeats
        return workload
    return aggregate(workload)


@dataclass(frozen=True)
class Metric:
    label: str
    value: str
    help: str


def kernel_counts(w: Workload, rows: np.ndarray | None = None) -> tuple[int, int]:
    """Distinct kernels (what combining repeated launches leaves) and launches among ``rows`` (a mask or row
    positions; None: all): :func:`roofcore.counting.kernel_counts`, the one count every page gives."""
    return counting.kernel_counts(w.frame, rows)


def count_text(w: Workload, rows: np.ndarray | None = None) -> str:
    """``"18 kernels (98 launches)"``, ``"1 kernel"``: the one way every page counts a workload (or some of its rows),
    whether or not its launches are combined."""
    return counting.count_text(w.frame, rows)


def count_of(w: Workload, rows: np.ndarray, of: np.ndarray | None = None) -> str:
    """``"21 of 38 kernels"``: kernels among ``rows`` of those among ``of`` (None: all), counted as the sidebar."""
    return counting.count_of(w.frame, rows, of)


def bound_kind_shares(summary: dict[str, Any]) -> dict[str, float]:
    """Time share per bound kind (``memory``, ``compute``, ``link``, ``unknown``), fractions summing to 1."""
    out: dict[str, float] = {}
    for bound, share in summary["time_share_by_bound"].items():
        kind = bound.split(":")[0] if bound.split(":")[0] in ("memory", "compute", "link") else "unknown"
        out[kind] = out.get(kind, 0.0) + share
    return out


def coverage_counts(a: Analysis, hw_id: str) -> dict[str, str]:
    """The kernels behind :func:`roofcore.analyze.coverage_text` on ``hw_id``, counted as the sidebar counts
    (kernels and their launches, whether or not launches are combined): ``known`` ("21 of 38 kernels"),
    ``missing_flops``, ``missing_bytes`` and ``rates_only`` ("17 kernels (48 launches)")."""
    r = a.result(hw_id)
    w = a.workload
    flags = r.flags.astype(np.int64)
    rated = r.rated if r.rated is not None else np.zeros(len(w), dtype=bool)
    said = counting.rows_are_launches(w.frame)  # launches apart: say them

    def some(rows: np.ndarray) -> str:
        return counting.count_text(w.frame, rows, launches=said)

    return {"known": count_of(w, ~np.isnan(r.t_roof)),
            "missing_flops": some(np.isnan(w.frame["flops"].to_numpy(dtype=np.float64)) & ~rated),
            "missing_bytes": some((flags & int(Flag.MISSING_BYTES)) != 0), "rates_only": some(rated)}


def overview_metrics(summary: dict[str, Any], counts: dict[str, str] | None = None) -> list[Metric]:
    """The Overview's headline numbers for one device, formatted with units; ``counts`` (:func:`coverage_counts`)
    says how many kernels the headline covers as the sidebar counts them."""
    basis = "measured time" if summary["share_basis"] == "measured" else "roofline time"
    kinds = bound_kind_shares(summary)
    cov = summary["coverage"]
    partial = cov["kernels_known"] < cov["kernels"]
    known = (counts or {}).get("known") or f"{cov['kernels_known']:,} of {cov['kernels']:,} kernels"
    scope = (f" Over the {known} whose roofline is known (FLOPs and bytes known); the others are left out, not "
             "counted as zero." if partial else "")
    out = [Metric("Roofline time", fmt_time(summary["t_roof_s"]),
                  "Σ t_roof: every kernel at its roof, perfect overlap of compute and memory (the lower bound)." + scope)]
    if summary["time_s"] is not None:
        out.append(Metric("Measured time", fmt_time(summary["time_s"]), "Σ measured time over the kernels that have one."))
        sp = summary["speedup_if_at_roof"]
        out.append(Metric("Speedup if at roof", fmt_factor(sp) if sp else "–",
                          "Measured ÷ time if every timed kernel reached its roof (Amdahl over the workload)." + scope))
    if partial:
        share = cov["time_share_known"]
        out.append(Metric("Roofline known", fmt_pct(share, 2) if share is not None else known,
                          "Share of the measured time (else of the kernels) whose FLOPs and bytes are known, which "
                          "the headline numbers cover."))
    none = cov["kernels_known"] == 0  # no kernel has a bound: a 0% would read as a finding
    out.append(Metric("Memory-bound", "–" if none else fmt_pct(kinds.get("memory", 0.0) + kinds.get("link", 0.0)),
                      f"Share of {basis} in kernels bound by a memory level or a link."))
    out.append(Metric("Compute-bound", "–" if none else fmt_pct(kinds.get("compute", 0.0)),
                      f"Share of {basis} in kernels bound by a compute ceiling."))
    return out


#: per-launch time under which a kernel is "a few microseconds": launch overhead (a few µs) and a profiler's
#: replay (flushed caches, base clocks) weigh as much as its work, so no roof promises its speedup
MICRO_KERNEL_S = 10e-6


def micro_kernel_note(analysis: Analysis, hw_id: str) -> str:
    """A caveat for a "× faster" headline whose gain comes mostly (half or more of the headroom) from kernels
    of under :data:`MICRO_KERNEL_S` per launch; empty otherwise. ``"2 kernels of a few µs per launch (11.7 µs
    in all) hold 100% of that gain: …"``."""
    r = analysis.result(hw_id)
    f = analysis.workload.frame
    t = f["time_s"].to_numpy(dtype=np.float64)
    count = np.maximum(f["count"].to_numpy(dtype=np.float64), 1.0)
    ok = analysis.timed & ~np.isnan(r.t_roof)
    head = np.where(ok, np.maximum(t - r.t_roof, 0.0), 0.0)
    total = head.sum()
    small = ok & (t / count < MICRO_KERNEL_S)
    if total <= 0 or head[small].sum() < 0.5 * total:
        return ""
    n = kernel_counts(analysis.workload, small)[0]  # kernels, as every page counts them
    return (f"{plural(n, 'kernel')} of a few microseconds per launch ({fmt_time(float(t[small].sum()))} in all) "
            f"{'holds' if n == 1 else 'hold'} {fmt_pct(head[small].sum() / total, 2)} of that gain: at that size "
            "launch overhead and the profiler's replay weigh as much as the work, so the speedup is what the roofs "
            "allow, not a promise; batch or fuse such kernels before tuning them.")
