"""Workload frames: built with every standard column (:func:`make_frame`), combined across files
(:func:`combine`), launches summed (:func:`aggregate`), ranks told from the trace or file name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..measured import merge_measured
from ..models import KERNEL_COLUMNS, RuntimeEntries, Skipped, Workload, canonical_level

#: the largest launch count a reader keeps: the count column is int64, and a damaged cell ("9" × 40, inf) past this
#: bound is no launch count (the fuzz tests found such cells overflowing int64 in four readers)
COUNT_LIMIT = 2**62

_RANK_IN_NAME = re.compile(r"(?<![a-z])rank[-_.]?(\d+)(?!\d)", re.IGNORECASE)


def rank_of(name: str) -> int | None:
    """The rank a trace's file name gives (``rank3.json``, ``trace_rank_03.pt.trace.json``), or None."""
    m = _RANK_IN_NAME.search(Path(name).name)
    return int(m.group(1)) if m else None


def with_rank(w: Workload, label: str) -> Workload:
    """``w`` with a ``rank`` column (and ``meta["rank"]``) where its trace (``distributedInfo``) or its file name
    says which rank of a job it is; unchanged otherwise."""
    rank = int(w.meta["rank"]) if str(w.meta.get("rank", "")).isdigit() else rank_of(label)
    if rank is None or "rank" in w.frame.columns:
        return w
    return replace(w, frame=w.frame.assign(rank=np.full(len(w.frame), rank, dtype=np.int64)),
                   meta={**w.meta, "rank": str(rank)})


def combine(workloads: list[Workload], name: str | None = None) -> Workload:
    if len(workloads) == 1 and name is None:
        return workloads[0]
    frame = pd.concat([w.frame for w in workloads], ignore_index=True, sort=False)
    return Workload(
        frame=frame,
        name=name or " + ".join(w.name for w in workloads),
        sources=tuple(s for w in workloads for s in w.sources),
        formats=tuple(dict.fromkeys(f for w in workloads for f in w.formats)),
        skipped=tuple(s for w in workloads for s in w.skipped),
        warnings=tuple(dict.fromkeys(x for w in workloads for x in w.warnings)),  # a job's ranks warn alike
        device=next((w.device for w in workloads if w.device), None),
        meta={k: v for w in workloads for k, v in w.meta.items()},
        measured=merge_measured(h for w in workloads for h in w.measured),  # one device per GPU model
        runtime=_runtime(workloads),
    )


def _runtime(workloads: list[Workload]) -> RuntimeEntries | None:
    """The runtime/queue entries of every file, one per name (roofcore.ingest.pseudo)."""
    found = [w.runtime for w in workloads if w.runtime is not None]
    return found[0].merged(RuntimeEntries(tuple(e for r in found[1:] for e in r.entries))) if found else None


def make_frame(columns: Mapping[str, object], n: int) -> pd.DataFrame:
    """A workload frame with every standard column, right dtypes, and canonical ``bytes_<name>`` columns."""
    out: dict[str, object] = {}
    for key in KERNEL_COLUMNS:
        if key in columns and isinstance(columns[key], pd.Categorical):
            out[key] = columns[key]  # precision / unit from a large CSV: a closed set, kept compact
        elif key in columns and key in ("name", "precision", "unit", "group", "source", "row"):
            # object dtype keeps None as None (pandas 3 would infer a str dtype with NaN)
            out[key] = pd.Series(np.asarray(columns[key], dtype=object), dtype=object)
        elif key in columns:
            out[key] = columns[key]
        elif key in ("flops", "time_s"):
            out[key] = np.full(n, np.nan)
        elif key == "count":
            out[key] = np.ones(n, dtype=np.int64)
        else:
            out[key] = pd.Series([None] * n, dtype=object)
    for key, value in columns.items():
        if key not in out and not key.startswith("bytes"):  # e.g. match, launch, weight_bytes
            arr = np.asarray(value)
            out[key] = (arr.astype(np.float64) if arr.dtype.kind in "biuf"
                        else pd.Series(np.asarray(value, dtype=object), dtype=object))
        if key.startswith("bytes"):
            level = canonical_level(key[len("bytes_"):] if key.startswith("bytes_") else "")
            col = f"bytes_{level}"
            if col in out:
                raise InputError(text=f"two columns give the same bytes: {key!r} and another name of {col!r}.",
                                 hint="bytes, bytes_hbm and bytes_dram all mean off-chip bytes; keep one.")
            out[col] = np.asarray(value, dtype=np.float64)
    frame = pd.DataFrame(out)
    frame["flops"] = frame["flops"].astype(np.float64)
    frame["time_s"] = frame["time_s"].astype(np.float64)
    frame["count"] = frame["count"].astype(np.int64)
    return frame


def launch_sums(f: pd.DataFrame, g: Any, sums: list[str]) -> tuple[pd.DataFrame, str | None]:
    """The groups' sums of ``sums`` (launches of one kernel added up), and the warning they owe, if any.

    A sum is known only where every launch's value is: a launch whose FLOPs, bytes or time is unknown makes its
    kernel's sum unknown, never the sum of the other launches (a bound, and one that mixes launches: the FLOPs of
    six launches over the time of five overstate the rate). The warning says how many kernels lost which sum."""
    agg = g[sums].sum(min_count=1)
    counted = [c for c in sums if c != "count" and f[c].isna().any()]  # a column with no gap cannot mix
    if not counted:
        return agg, None
    known, size = g[counted].count(), g.size()
    lost: list[str] = []
    for c in counted:
        mixed = ((known[c] > 0) & (known[c] < size)).to_numpy()
        if mixed.any():
            agg[c] = agg[c].where(~mixed)
            what = {"flops": "FLOPs", "time_s": "time"}.get(c, f"{c.removeprefix('bytes_')} bytes")
            lost.append(f"{int(mixed.sum()):,} with {what}")
    if not lost:
        return agg, None
    return agg, ("combining repeated launches: kernels whose launches are known only in part are unknown in that "
                 f"part ({'; '.join(lost)} unknown for some launches): a sum with an unknown term is unknown, not "
                 "the sum of the known launches; each launch alone keeps its numbers")


def aggregate(workload: Workload, by: tuple[str, ...] = ("name", "precision", "unit", "group")) -> Workload:
    """Launches of the same kernel summed into one row: FLOPs, bytes and time added, launches counted (rates
    without a duration, ``flops_rate`` and ``bandwidth_<level>``, averaged over the launches).

    Launches whose FLOPs, time or bytes are unknown stay apart from the launches of the same kernel that have
    them (one row each, and a warning): summed together, the kernel's sum would be unknown, or a bound if the
    unknown terms were left out. So a kernel with two launches of 18 untimed keeps the 18 launches' time.
    """
    f = workload.frame
    if f.empty:
        return workload
    keys = [k for k in by if k in f.columns]
    # every byte count adds up over launches, the plan's read/written/weight split too (roofcore.plan.SPLIT)
    extra = [c for c in f.columns if c.endswith("_bytes") and not c.startswith("bytes_") and f[c].dtype.kind == "f"]
    sums = ["count", "flops", "time_s", *workload.byte_columns, *extra]
    # a column known for some launches only: the known and the unknown launches grouped apart
    split = [f[c].isna().rename(f"unknown {c}") for c in sums if c != "count" and f[c].isna().any()]
    g = f.groupby([*(f[k].astype(object).fillna("") for k in keys), *split], sort=False, dropna=False)
    agg = g[sums].sum(min_count=1)  # no group mixes known and unknown launches (split): every sum is whole
    rates = [c for c in f.columns if (c == "flops_rate" or c.startswith("bandwidth_")) and f[c].dtype.kind == "f"]
    if rates:  # rates without a duration (roofcore.ingest.ncu_rates): no time to weight them by, the mean
        agg = pd.concat([agg, g[rates].mean()], axis=1)
    first = g[[*keys, "source", "row"]].first() if "source" in f.columns else g[keys].first()
    out = pd.concat([first.reset_index(drop=True), agg.reset_index(drop=True)], axis=1)
    for k in keys:
        out[k] = out[k].replace("", None)
    out["row"] = g.size().astype(str).radd("launches: ").to_numpy() if len(out) else out["row"]
    out["count"] = out["count"].fillna(0).astype(np.int64)
    out = out[[c for c in f.columns if c in out.columns]]
    ident = out[keys].astype(object).fillna("")
    apart = ident.duplicated(keep=False) if split else None
    if apart is None or not apart.any():
        return replace(workload, frame=out)
    kernels = len(ident[apart].drop_duplicates())
    note = (f"combining repeated launches: {kernels:,} kernel(s) keep more than one row, their launches whose FLOPs, "
            "bytes or time are unknown apart from those that have them (summed together the kernel's total would be "
            "unknown, or a bound without them)")
    return replace(workload, frame=out, warnings=(*workload.warnings, note))


def skip(source: str, row: object, reason: str) -> Skipped:
    return Skipped(source=source, row=str(row), reason=reason)
