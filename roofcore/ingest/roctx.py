"""rocprofv3 ROCTx ranges (``--marker-trace``) as each kernel's ``nvtx`` ancestry (roofcore.hierarchy),
docs/formats.md.

``rocprof-v3-markers`` (companion): ``<pid>_marker_api_trace.csv`` (``Domain,Function,Process_Id,Thread_Id,
Correlation_Id,Start_Timestamp,End_Timestamp``; the domain ``MARKER_CORE_API`` or ``MARKER_CORE_RANGE_API``). A
range's row names it in ``Function`` (the message of ``roctxRangePush`` / ``roctxRangeStart``) with its start and end;
marks (start = end), control calls (``MARKER_CONTROL_API``: pause, resume) and ROCTx API calls (``roctx…``) are not
ranges. Read with the ``kernel_trace.csv`` of the same run, each kernel gets the innermost range on its launching
thread (``Thread_Id``; without that column, on any thread, the shortest) that holds its start on the GPU as its
``nvtx`` path, outermost first. The kernel trace has no launch time, so a kernel that starts after its range closed
(asynchronous work queued late in the range) falls in the next range holding it, or "outside" — unless the run's
HIP or HSA API trace is read with them (a folder, an archive, an app upload: :func:`launch_calls`), whose call with
the kernel's ``Correlation_Id`` places it instead.

The placement itself (:func:`with_ranges`: the innermost range around the call that enqueued each dispatch or copy,
else around its GPU start) also serves the ranges rocprofv3 keeps with the kernels, in its JSON (:func:`json_marks`)
and its rocpd database (:mod:`.rocpd_roctx`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

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
        if "CONTROL" in domain or not is_range_text(name) or not e > s:
            continue  # control calls, ROCTx API calls, marks
        out["thread"].append(r[col["thread_id"]].strip() if "thread_id" in col else "")
        out["start"].append(s)
        out["end"].append(e)
        out["depth"].append(0.0)
        out["name"].append(name)
    # marks and API calls only: nothing to give (a folder of a run's files still reads; its kernels have no nvtx)
    return {"roctx_ranges": {**out, "source": source}} if out["name"] else {}


def attach(w: Workload, threads: np.ndarray | None, starts: np.ndarray, context: dict[str, Any] | None,
           calls: np.ndarray | None = None) -> Workload:
    """``w`` (a kernel trace, one row per dispatch: launching thread or None, GPU start in seconds, the correlation
    id of the call that enqueued it or None) with ``nvtx`` and ``start_s`` from the ROCTx ranges a companion read
    (unchanged without one), placed by their launch calls where the folder's API traces hold them
    (:func:`launch_calls`)."""
    ranges = (context or {}).get("roctx_ranges")
    if not ranges:
        return w
    marks = Marks(list(zip(ranges["thread"], ranges["start"], ranges["end"], ranges["name"], strict=True)), {})
    n = len(starts)
    ids = [None] * n if calls is None else [str(c).strip() or None for c in calls]
    rows = [{"thread": None if threads is None else str(t).strip(), "call": None if c is None else ("", c),
             "start": s * 1e9} for t, s, c in zip(threads if threads is not None else [None] * n, starts, ids,
                                                  strict=True)]
    known = (context or {}).get("roctx_calls") or {}
    if known:  # the calls of these dispatches only (the traces may hold millions)
        at = np.flatnonzero(np.isin(known["corr"], np.array([c for c in ids if c is not None], dtype=object)))
        marks.calls.update({("", known["corr"][i]): (known["thread"][i], float(known["start"][i]),
                                                     float(known["end"][i])) for i in at.tolist()})
    where = ranges["source"] + (f" (launch calls from {', '.join(known['sources'])})" if marks.calls else "")
    out = with_ranges(w, rows, marks, where)
    if out is not w:
        out.frame["start_s"] = starts  # the trace's own seconds (not their round trip through ns)
    return replace(out, sources=(*out.sources, ranges["source"], *(known.get("sources", ()) if marks.calls else ())))


def from_trace(w: Workload, text: str, at: tuple[int, int], source: str, context: dict[str, Any] | None,
               lay: Layout) -> Workload:
    """:func:`attach` for a rocprofv3 kernel trace (``lay``: its layout): each dispatch's launching thread and GPU
    start, from the rows the trace reader kept (the same filter: a dispatch number and a kernel name); unchanged
    without a marker trace."""
    if not (context or {}).get("roctx_ranges"):
        return w
    from .rocprof_common import ids_and_names, read_roles, to_floats

    spec = {"ids": lay.ids, "name": lay.name, "thread": ("Thread_Id",), "start": lay.start,
            "corr": ("Correlation_Id",)}
    table, roles = read_roles(text, at, source, spec)
    ids, name = roles["ids"], roles["name"]
    if ids is None or name is None:  # the trace reader found both columns (the same layout)
        return w
    keep = ids_and_names(table, ids, name, table.header[ids], source).keep
    if int(keep.sum()) != len(w.frame) or roles["start"] is None:
        return w
    starts = to_floats(table.columns[roles["start"]][keep]) / 1e9
    threads = table.columns[roles["thread"]][keep] if roles["thread"] is not None else None
    calls = table.columns[roles["corr"]][keep] if roles["corr"] is not None else None
    return attach(w, threads, starts, context, calls)


def launch_calls(context: dict[str, Any], traces: list[tuple[Callable[[], bytes], str]]) -> dict[str, Any]:
    """``{"roctx_calls": …}``: the HIP and HSA calls of a run folder's API traces (``<pid>_hip_api_trace.csv``,
    ``_hsa_api_trace.csv``: correlation id, thread, start and end in seconds, as arrays), where a marker trace gave
    ROCTx ranges, so that a kernel trace places each dispatch by the call that enqueued it (its ``Correlation_Id``);
    ``{}`` otherwise. ``traces``: each file's bytes (read only then) and name. Read by pyarrow's CSV reader (a
    million calls in about a second), row by row where it refuses the file (a damaged cell)."""
    if not context.get("roctx_ranges") or not traces:
        return {}
    parts, used = [], []
    for data, label in traces:
        text = check_text(data(), label)
        head = {h.strip().lower(): h for h in next(csv.reader([text.split("\n", 1)[0]]), [])}
        names = [n for k in ("domain", "correlation_id", "thread_id", "start_timestamp", "end_timestamp")
                 if (n := head.get(k)) is not None]
        if len(names) < 5:
            continue
        got = _calls_arrow(text, names) or _calls_rows(text, names)
        if len(got[0]):
            parts.append(got)
            used.append(label)
    if not used:
        return {}
    corr, thread, start, end = (np.concatenate([g[k] for g in parts]) for k in range(4))
    return {"roctx_calls": {"corr": corr, "thread": thread, "start": start, "end": end, "sources": used}}


_Calls = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  #: correlation ids, threads (text), starts, ends (s)


def _calls_arrow(text: str, names: list[str]) -> _Calls | None:
    """The HIP and HSA calls of an API trace by pyarrow; None where it cannot read the file as written."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    kinds = dict(zip(names, (pa.string(), pa.string(), pa.string(), pa.float64(), pa.float64()), strict=True))
    try:
        t = pacsv.read_csv(pa.py_buffer(text.encode()), convert_options=pacsv.ConvertOptions(
            include_columns=names, column_types=kinds), parse_options=pacsv.ParseOptions(
            invalid_row_handler=lambda row: "skip"))  # a row of another width, as the row-by-row reader
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    domain, corr, thread, start, end = (t.column(n) for n in names)
    keep = pc.and_(pc.match_substring_regex(pc.utf8_upper(pc.utf8_trim_whitespace(domain)), "^(HIP|HSA)"),
                   pc.less_equal(start, end))
    keep = pc.fill_null(keep, False)
    return (np.asarray(pc.utf8_trim_whitespace(corr.filter(keep)).to_numpy(zero_copy_only=False), dtype=object),
            np.asarray(pc.utf8_trim_whitespace(thread.filter(keep)).to_numpy(zero_copy_only=False), dtype=object),
            start.filter(keep).to_numpy() * 1e-9, end.filter(keep).to_numpy() * 1e-9)


def _calls_rows(text: str, names: list[str]) -> _Calls:
    """:func:`_calls_arrow` row by row: a cell that is no number leaves its call out."""
    rows = csv.reader(line for line in text.split("\n") if line.strip())
    header = [h.strip() for h in next(rows, [])]
    d, c, t, s, e = (header.index(n.strip()) for n in names)
    out: list[list[Any]] = [[], [], [], []]
    for r in rows:
        if len(r) == len(header) and r[d].strip().upper().startswith(("HIP", "HSA")):
            start, end = nanos(r[s]) * 1e-9, nanos(r[e]) * 1e-9
            if start <= end:
                for col, v in zip(out, (r[c].strip(), r[t].strip(), start, end), strict=True):
                    col.append(v)
    return (np.array(out[0], dtype=object), np.array(out[1], dtype=object), np.array(out[2], dtype=np.float64),
            np.array(out[3], dtype=np.float64))


# --------------------------------------------------------------------- ranges held with the kernels (JSON, database)

class Marks(NamedTuple):
    """ROCTx ranges (thread, start s, end s, text) and the API calls that enqueued work, by (process, correlation
    id): (thread, start s, end s); threads are :func:`launched`'s keys."""

    ranges: list[tuple[str, float, float, str]]
    calls: dict[tuple[str, object], tuple[str, float, float]]


def launched(run: str, pid: object, tid: object, call: object) -> dict[str, Any]:
    """A dispatch's or copy's thread and the correlation id of the call that enqueued it, both within its run or
    process record (ids that are not an integer or text are none)."""
    return {"thread": f"{run}/{pid if type(pid) in _IDS else ''}/{tid}" if type(tid) in _IDS else None,
            "call": (run, call) if type(call) in _IDS else None}


_IDS = (int, str)  #: the types an id may have (exactly: a JSON true is no id)


def calls_of(rows: Iterable[dict[str, Any]]) -> set[object]:
    """The calls (:func:`launched`'s ``call``) that enqueued these dispatches and copies: the ones to look up."""
    return {r["call"] for r in rows if r.get("call") is not None}


def is_range_text(text: object) -> bool:
    """A range's text, not a ROCTx call's name (``roctxGetThreadId`` is recorded with its own name)."""
    return isinstance(text, str) and bool(text.strip()) and not re.match(r"roctx[A-Z]", text.strip())


def ranges_kind(kind: str) -> bool:
    """A record kind or event category whose records may be ranges: ROCTx's (``MARKER_CORE_API``,
    ``MARKER_CORE_RANGE_API``), not its control (pause, resume) or naming calls."""
    k = kind.upper()
    return "MARKER" in k and "CONTROL" not in k and "NAME" not in k


def nanos(v: object) -> float:
    """A timestamp (ns) as a float; NaN where it is none."""
    if isinstance(v, bool):
        return float("nan")
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return float("nan")


#: an API call as (correlation id, thread, start, end), the ids and times as the JSON has them
Call = tuple[object, object, object, object]


def json_marks(p: str, buffers: object, strings: object, wanted: set[object], marks: Marks,
               calls: Callable[[], Iterable[Call]] | None = None) -> None:
    """One process record of rocprofv3's JSON: its ROCTx ranges (``buffer_records.marker_api`` records of a MARKER
    kind, ``strings.buffer_records`` naming the kinds, whose text ``strings.marker_api`` holds by correlation id)
    and, where there are ranges, the HIP and HSA calls (``hip_api``, ``hsa_api`` of ``buffers``, or ``calls()``
    where a typed decoder reads them) that enqueued a dispatch or copy of ``wanted``, into ``marks``."""
    if not isinstance(buffers, dict) or not isinstance(buffers.get("marker_api"), list):
        return
    strings = strings if isinstance(strings, dict) else {}
    texts = {k: e.get("value") for e in _records(strings.get("marker_api"))
             if isinstance(k := e.get("key"), int | str) and not isinstance(k, bool)}
    kinds = strings.get("buffer_records")

    def kind(k: object) -> str:
        entry = (kinds[k] if isinstance(kinds, list) and isinstance(k, int) and 0 <= k < len(kinds) else
                 kinds.get(str(k)) if isinstance(kinds, dict) else None)
        return str(entry.get("kind") or "") if isinstance(entry, dict) else ""

    before = len(marks.ranges)
    for m in _records(buffers["marker_api"]):
        name = kind(m.get("kind")).upper()
        at = launched(p, None, m.get("thread_id"), internal(m))
        text = texts.get(at["call"][1]) if at["call"] else None
        s, e = nanos(m.get("start_timestamp")) * 1e-9, nanos(m.get("end_timestamp")) * 1e-9
        if (not name or ranges_kind(name)) and is_range_text(text) and e > s:
            marks.ranges.append((at["thread"] or "", s, e, str(text).strip()))
    if len(marks.ranges) == before:
        return
    found = calls() if calls is not None else (
        (internal(c), c.get("thread_id"), c.get("start_timestamp"), c.get("end_timestamp"))
        for key in ("hip_api", "hsa_api") for c in _records(buffers.get(key)))
    for corr, tid, t0, t1 in found:
        at = launched(p, None, tid, corr)
        if at["call"] in wanted and at["call"] not in marks.calls:
            s, e = nanos(t0) * 1e-9, nanos(t1) * 1e-9
            if s <= e:
                marks.calls[at["call"]] = (at["thread"] or "", s, e)


def _records(v: object) -> list[dict[str, Any]]:
    return [r for r in v if isinstance(r, dict)] if isinstance(v, list) else []


def internal(record: dict[str, Any]) -> object:
    """A record's ``correlation_id.internal`` (the id of the API call it belongs to), or None."""
    corr = record.get("correlation_id")
    return corr.get("internal") if isinstance(corr, dict) else None


def with_ranges(w: Workload, rows: list[dict[str, Any]], marks: Marks, where: str) -> Workload:
    """``w`` (``rows``: its frame's rows, dispatches then copies, each with :func:`launched`'s keys and its GPU
    ``start`` in ns) with ``nvtx`` and ``start_s``: the innermost range around the call that enqueued each, or
    without that call the innermost on its thread holding its GPU start; unchanged without ranges."""
    if not marks.ranges or len(rows) != len(w.frame):
        return w
    gpu = np.array([nanos(r.get("start")) for r in rows], dtype=np.float64) * 1e-9
    threads: list[str] = []
    q_start, q_end = gpu.copy(), gpu.copy()
    by_call = 0  # placed by the call that enqueued them
    for i, r in enumerate(rows):
        call = marks.calls.get(r["call"]) if r.get("call") is not None else None
        if call is not None:
            threads.append(call[0])
            q_start[i], q_end[i] = call[1], call[2]
            by_call += 1
        else:
            threads.append(r.get("thread") or "")
    ranges = marks.ranges
    paths, several = innermost_paths([x[0] for x in ranges], np.array([x[1] for x in ranges]),
                                     np.array([x[2] for x in ranges]), np.zeros(len(ranges)), [x[3] for x in ranges],
                                     threads if any(threads) else None, q_start, q_end)
    f = w.frame.copy()
    f["nvtx"] = pd.Series(paths, dtype=object, index=f.index)  # None stays None (outside)
    f["start_s"] = gpu
    inside = sum(p is not None for p in paths)
    n = len(paths)
    how = ("the innermost around the call that launched it names it" if by_call == n else
           "the innermost around the call that launched it names it, or, for the "
           f"{n - by_call:,} whose call was not traced, the innermost holding its start on the GPU" if by_call else
           "no launch call is recorded: the innermost range on the launching thread holding its start on the GPU "
           "names it")
    noun = "dispatches and copies" if "group" in f and (f["group"] == "memcpy").any() else "dispatches"
    warn = [f"ROCTx ranges from {where}: {inside:,} of {n:,} {noun} ran inside a range ({how}), "
            f"{n - inside:,} outside every range."]
    if several:
        warn.append(f"{several:,} dispatches start inside ranges of more than one thread (no launching thread is "
                    "recorded): each was given the shortest.")
    return replace(w, frame=f, warnings=(*w.warnings, *warn))
