"""rocprofv3 ROCTx ranges (``--marker-trace``) as each kernel's ``nvtx`` ancestry (roofcore.hierarchy),
docs/formats.md.

``rocprof-v3-markers`` (companion): ``<pid>_marker_api_trace.csv`` (``Domain,Function,Process_Id,Thread_Id,
Correlation_Id,Start_Timestamp,End_Timestamp``; the domain ``MARKER_CORE_API`` or ``MARKER_CORE_RANGE_API``). A
range's row names it in ``Function`` (the message of ``roctxRangePush`` / ``roctxRangeStart``) with its start and end;
marks (start = end), control calls (``MARKER_CONTROL_API``: pause, resume) and ROCTx API calls (``roctx…``) are not
ranges. Read with the ``kernel_trace.csv`` of the same run, each kernel gets the innermost range on its launching
thread (``Thread_Id``; without that column, on any thread, the shortest) that holds its start on the GPU as its
``nvtx`` path, outermost first. The kernel trace has no launch time, so a kernel that starts after its range closed
(asynchronous work queued late in the range) falls in the next range holding it, or "outside".
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..models import Workload
from . import check_text, register_format
from .nvtx_ranges import innermost_paths

if TYPE_CHECKING:
    from .rocprof_common import Layout

_HEADER = re.compile(r'^[ \t]*"?Domain"?,"?Function"?,(?=[^\n]*\bThread_Id\b)(?=[^\n]*\bStart_Timestamp\b)'
                     r'(?=[^\n]*\bEnd_Timestamp\b)[^\n]*\n[ \t]*"?(?:MARKER|ROCTX)', re.M | re.I)
HINT = ("profile with `rocprofv3 --kernel-trace --marker-trace --output-format csv -- app` and load "
        "<pid>_marker_api_trace.csv together with <pid>_kernel_trace.csv")


@register_format("rocprof-v3-markers", "a rocprofv3 ROCTx marker trace (--marker-trace CSV): ranges, context for the "
                 "kernel_trace.csv of the same run (each kernel's ROCTx range)",
                 lambda head, name: bool(_HEADER.search(head)), priority=21, companion=True)
def parse_markers(data: bytes, source: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"roctx_ranges": {thread, start, end, depth, name, source}}``, times in seconds; ``{}`` without ranges."""
    text = check_text(data, source)
    lines = [ln for ln in text.split("\n") if ln.strip()]
    rows = list(csv.reader(lines))
    if not rows:
        raise InputError(where=source, expected="a rocprofv3 marker_api_trace.csv", found="an empty table", hint=HINT)
    col = {h.strip().lower(): i for i, h in enumerate(rows[0])}
    if not {"domain", "function", "start_timestamp", "end_timestamp"} <= set(col):
        raise InputError(where=f"{source}: header", expected="Domain, Function, Start_Timestamp and End_Timestamp "
                         "columns", found=", ".join(rows[0])[:200], hint=HINT)
    out: dict[str, list[Any]] = {"thread": [], "start": [], "end": [], "depth": [], "name": []}
    for r in rows[1:]:
        if len(r) != len(rows[0]):
            continue
        domain, name = r[col["domain"]].strip().upper(), r[col["function"]].strip()
        try:
            s, e = float(r[col["start_timestamp"]]) / 1e9, float(r[col["end_timestamp"]]) / 1e9
        except ValueError:
            continue
        if "CONTROL" in domain or not name or re.match(r"roctx[A-Z]", name) or not e > s:
            continue  # control calls, ROCTx API calls, marks
        out["thread"].append(r[col["thread_id"]].strip() if "thread_id" in col else "")
        out["start"].append(s)
        out["end"].append(e)
        out["depth"].append(0.0)
        out["name"].append(name)
    # marks and API calls only: nothing to give (a folder of a run's files still reads; its kernels have no nvtx)
    return {"roctx_ranges": {**out, "source": source}} if out["name"] else {}


def attach(w: Workload, threads: np.ndarray | None, starts: np.ndarray, context: dict[str, Any] | None
           ) -> Workload:
    """``w`` (a kernel trace, one row per dispatch: launching thread or None, GPU start in seconds) with ``nvtx``
    and ``start_s`` from the ROCTx ranges a companion read (unchanged without one)."""
    ranges = (context or {}).get("roctx_ranges")
    if not ranges:
        return w
    f = w.frame.copy()
    q = None if threads is None else [str(x).strip() for x in threads]
    paths, several = innermost_paths(ranges["thread"], np.asarray(ranges["start"]), np.asarray(ranges["end"]),
                                     np.asarray(ranges["depth"], dtype=np.float64), ranges["name"], q, starts, starts)
    f["nvtx"] = pd.Series(paths, dtype=object, index=f.index)  # None stays None (outside)
    f["start_s"] = starts
    out = sum(p is None for p in paths)
    warn = [f"ROCTx ranges from {ranges['source']}: {len(paths) - out:,} of {len(paths):,} dispatches start inside a "
            f"range on their thread (the innermost holding the start), {out:,} outside every range."]
    if several:
        warn.append(f"{several:,} dispatches start inside ranges of more than one thread (the kernel trace names no "
                    "launching thread): each was given the shortest.")
    return replace(w, frame=f, warnings=(*w.warnings, *warn), sources=(*w.sources, ranges["source"]))


def from_trace(w: Workload, text: str, at: tuple[int, int], source: str, context: dict[str, Any] | None,
               lay: Layout) -> Workload:
    """:func:`attach` for a rocprofv3 kernel trace (``lay``: its layout): each dispatch's launching thread and GPU
    start, from the rows the trace reader kept (the same filter: a dispatch number and a kernel name); unchanged
    without a marker trace."""
    if not (context or {}).get("roctx_ranges"):
        return w
    from .rocprof_common import ids_and_names, read_roles, to_floats

    spec = {"ids": lay.ids, "name": lay.name, "thread": ("Thread_Id",), "start": lay.start}
    table, roles = read_roles(text, at, source, spec)
    ids, name = roles["ids"], roles["name"]
    if ids is None or name is None:  # the trace reader found both columns (the same layout)
        return w
    keep = ids_and_names(table, ids, name, table.header[ids], source).keep
    if int(keep.sum()) != len(w.frame) or roles["start"] is None:
        return w
    starts = to_floats(table.columns[roles["start"]][keep]) / 1e9
    threads = table.columns[roles["thread"]][keep] if roles["thread"] is not None else None
    return attach(w, threads, starts, context)
