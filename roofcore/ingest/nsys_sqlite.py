"""Nsight Systems' SQLite export (``nsys export --type sqlite``, or the ``.sqlite`` that ``nsys stats`` writes beside a
report), opened by :mod:`.sqlite_db` (docs/formats.md): the kernel launches of a ``cuda_gpu_trace``, with each
launch's NVTX ranges, which the database holds on the CPU side.

- launches: ``CUPTI_ACTIVITY_KIND_KERNEL`` (``start``, ``end`` in ns, ``deviceId``, ``correlationId``,
  ``globalPid``), named by ``demangledName`` (else ``shortName``, ``mangledName``) through ``StringIds`` (``id``,
  ``value``), or by the text itself where a version stored it inline;
- GPUs: ``TARGET_INFO_GPU`` (``id``, ``name``), or ``TARGET_INFO_CUDA_GPU`` (``deviceId``, ``name``) in older
  versions;
- copies and memsets (``CUPTI_ACTIVITY_KIND_MEMCPY``, ``_MEMSET``): left out with their count and time, as from the
  CSV; CUDA graphs traced whole (``CUPTI_ACTIVITY_KIND_GRAPH_TRACE``, ``--cuda-graph-trace=graph``) are counted in a
  warning, their kernels being absent;
- NVTX: a launch's ranges are the push/pop and start/end ranges (``NVTX_EVENTS``, ``eventType`` 59 and 60, and NVTXT's
  70 and 71; the name in ``text`` or through ``textId``, as ``domain:name`` for a named domain, its name from the
  domain's creation event, 75) of the thread that called the launch (``CUPTI_ACTIVITY_KIND_RUNTIME``, by process and
  ``correlationId``) around that call: the path from the outermost to the innermost, as ``nvtx_gpu_proj_trace``
  projects them (which also leaves out a start/end range ended on another thread, ``endGlobalTid``).

The rows are those of the CSV reader (:func:`.nsys_trace.launches`): time only, one per launch, ``row`` the
correlation id. A launch with no end, or one before its start, is skipped and named.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..models import Skipped, Workload
from . import register_format, skip
from .nsys_trace import launches
from .nvtx_ranges import innermost_paths, range_name
from .sqlite_db import SQLITE_MAGIC, parse_any, probe

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
#: NVTX event types that are ranges: push/pop (59) and start/end (60), and the same from NVTXT (70, 71)
RANGES = (59, 60, 70, 71)
#: the NVTX event type that creates a domain (its name in ``text`` or ``textId``)
DOMAIN_CREATE = 75
#: nsys's global thread and process ids hold the process id in the 24 bits above the thread id
_PID_BITS = 1 << 24


@register_format("nsys-sqlite", "Nsight Systems SQLite export (nsys export --type sqlite, or the .sqlite nsys stats "
                 "writes): time per kernel launch with its NVTX ranges, no FLOPs", lambda head, name: False,
                 priority=24, role="timeline", magic=SQLITE_MAGIC, probe=probe(KERNELS.encode()))
def parse(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """A profiler's SQLite database, read by the reader its tables call for (:func:`.sqlite_db.parse_any`)."""
    return parse_any(data, source, context)


def read(con: Any, tables: dict[str, set[str]], source: str, context: dict[str, Any] | None) -> Workload:
    """One time-only row per kernel launch; see the module docstring."""
    cols = tables.get(KERNELS, set())
    if not {"start", "end"} <= cols:
        raise InputError(where=source, expected=f"start and end columns in {KERNELS}",
                         found=", ".join(sorted(cols))[:200] or "none", hint="export the report again with `nsys "
                         "export --type sqlite`.")
    strings = _strings(con, tables)
    devices = _devices(con, tables)
    picks = [c for c in ("demangledName", "shortName", "mangledName") if c in cols]
    extra = [c if c in cols else "NULL" for c in ("deviceId", "correlationId", "globalPid")]
    names, times, rows, where, starts, keys = [], [], [], [], [], []
    skipped: list[Skipped] = []
    for n, (t0, t1, device, corr, gpid, *named) in enumerate(con.execute(
            f"SELECT start, \"end\", {', '.join(extra)}{''.join(', ' + c for c in picks)} FROM {KERNELS} "
            "ORDER BY start, rowid"), 1):
        name = next((s for v in named if (s := _name(v, strings))), "")
        row = str(corr) if isinstance(corr, int) else f"launch {n}"
        if not (isinstance(t0, int | float) and isinstance(t1, int | float) and t1 >= t0) or not name:
            skipped.append(skip(source, f"launch {row}", f"start and end must be times with end ≥ start and a name "
                                f"given, found {t0!r}, {t1!r} and {name!r}"))
            continue
        names.append(name)
        times.append((t1 - t0) / 1e9)  # as the CSV reader divides by its unit
        rows.append(row)
        where.append(devices.get(device, ""))
        starts.append(float(t0))
        keys.append((_pid(gpid), corr))
    if not names:
        raise InputError(where=source, expected=f"at least one kernel launch in {KERNELS}",
                         found=f"{len(skipped):,} unusable rows" if skipped else "none",
                         hint="profile with CUDA tracing (nsys profile -t cuda) and check that kernels ran.")
    w = launches("nsys-sqlite", source, names, times, rows, where, _memory(con, tables), skipped)
    return _with_nvtx(con, tables, strings, _graphs(con, tables, w), keys, np.asarray(starts) / 1e9)


def _graphs(con: Any, tables: dict[str, set[str]], w: Workload) -> Workload:
    """``w`` with a warning where CUDA graphs were traced whole (nsys's ``--cuda-graph-trace=graph``): their kernels
    are not in the kernel table, so their time is missing from the workload, never guessed."""
    if not {"start", "end"} <= tables.get("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", set()):
        return w
    n, seconds = _counted(con, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    if not n:
        return w
    return replace(w, warnings=(*w.warnings, f"{n:,} CUDA graph launch(es) ({seconds * 1e3:.3g} ms) "
                                "were traced as whole graphs: their kernels are not in the trace, and their time is "
                                "not in this workload. Hint: profile with `nsys profile --cuda-graph-trace=node` to "
                                "trace each kernel of a graph."))


def _pid(global_id: object) -> int | None:
    """The process id of nsys's global thread or process id."""
    return global_id // _PID_BITS % _PID_BITS if isinstance(global_id, int) else None


def _name(v: object, strings: dict[int, str]) -> str:
    if isinstance(v, int):
        return strings.get(v, "").strip()
    return v.strip() if isinstance(v, str) else ""


def _strings(con: Any, tables: dict[str, set[str]]) -> dict[int, str]:
    if not {"id", "value"} <= tables.get("StringIds", set()):
        return {}
    return {i: v for i, v in con.execute("SELECT id, value FROM StringIds") if isinstance(v, str)}


def _devices(con: Any, tables: dict[str, set[str]]) -> dict[object, str]:
    """deviceId → the GPU's name."""
    for table, key in (("TARGET_INFO_GPU", "id"), ("TARGET_INFO_CUDA_GPU", "deviceId")):
        if {key, "name"} <= tables.get(table, set()):
            return {i: n.strip() for i, n in con.execute(f"SELECT {key}, name FROM {table}") if isinstance(n, str)}
    return {}


def _memory(con: Any, tables: dict[str, set[str]]) -> tuple[int, float]:
    """How many copies and memsets, and their seconds: left out (not kernels)."""
    found = [_counted(con, t) for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
             if {"start", "end"} <= tables.get(t, set())]
    return sum(n for n, _ in found), sum(s for _, s in found)


def _domains(con: Any, cols: set[str], strings: dict[int, str]) -> dict[tuple[object, object], str]:
    """(domain id, process) → the domain's name, from its creation event (``eventType`` 75, the first per process):
    nsys names a range of a named domain ``domain:range``."""
    if not {"eventType", "domainId", "globalTid", "start"} <= cols:
        return {}
    text = "text" if "text" in cols else "NULL"
    text_id = "textId" if "textId" in cols else "NULL"
    out: dict[tuple[object, object], str] = {}
    for dom, tid, inline, ref in con.execute(f"SELECT domainId, globalTid, {text}, {text_id} FROM NVTX_EVENTS "
                                             f"WHERE eventType = {DOMAIN_CREATE} ORDER BY start"):
        name = _name(ref, strings) or (inline.strip() if isinstance(inline, str) else "")
        key = (dom, _pid(tid))
        if name and key not in out:
            out[key] = name
    return out


def _counted(con: Any, table: str) -> tuple[int, float]:
    """How many rows ``table`` has, and the seconds they span in all (``end`` − ``start``, ns)."""
    n, ns = con.execute(f'SELECT count(*), total("end" - start) FROM {table}').fetchone()
    return int(n), float(ns or 0.0) * 1e-9


def _with_nvtx(con: Any, tables: dict[str, set[str]], strings: dict[int, str], w: Workload,
               keys: list[tuple[int | None, object]], starts: np.ndarray) -> Workload:
    """``w`` with each launch's NVTX path (``nvtx``) and start (``start_s``), where the database has ranges and the
    calls that launched the kernels; unchanged otherwise."""
    ranges, calls = tables.get("NVTX_EVENTS", set()), tables.get("CUPTI_ACTIVITY_KIND_RUNTIME", set())
    if not {"start", "end", "globalTid"} <= ranges:
        return w
    if not {"start", "end", "globalTid", "correlationId"} <= calls:  # ranges, but nothing ties them to a launch
        return replace(w, warnings=(*w.warnings, "the database holds NVTX ranges but no CUDA API calls to tie them to "
                                    "the kernel launches: the launches have no NVTX path. Hint: profile with "
                                    "`nsys profile -t cuda,nvtx` (CUDA API tracing on)."))
    text = "text" if "text" in ranges else "NULL"
    text_id = "textId" if "textId" in ranges else "NULL"
    domain = "domainId" if "domainId" in ranges else "NULL"
    kind = f" AND eventType IN {RANGES}" if "eventType" in ranges else ""
    # as nvtx_gpu_proj_trace: a start/end range ended on another thread holds no launch of either
    same = " AND (endGlobalTid IS NULL OR endGlobalTid = globalTid)" if "endGlobalTid" in ranges else ""
    domains = _domains(con, ranges, strings)

    def named(tid: object, inline: object, text_ref: object, dom: object) -> str | None:
        own = inline.strip() if isinstance(inline, str) else _name(text_ref, strings)
        prefix = domains.get((dom, _pid(tid)), "") if dom else ""
        return range_name(f"{prefix}:{own}" if prefix and own else own)

    found = [(tid, s, e, name) for tid, s, e, inline, text_ref, dom in con.execute(
        f'SELECT globalTid, start, "end", {text}, {text_id}, {domain} FROM NVTX_EVENTS WHERE "end" IS NOT NULL '
        f'AND "end" >= start{kind}{same}')
        if (name := named(tid, inline, text_ref, dom)) and isinstance(s, int | float) and isinstance(e, int | float)]
    if not found:
        return w
    launch = {(_pid(tid), corr): (tid, s, e) for corr, tid, s, e
              in con.execute('SELECT correlationId, globalTid, start, "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME')}
    at = [launch.get(k) for k in keys]
    thread = [str(a[0]) if a else "" for a in at]
    q_start = np.array([float(a[1]) if a else np.nan for a in at])
    q_end = np.array([float(a[2]) if a else np.nan for a in at])
    paths, _ = innermost_paths([str(r[0]) for r in found], np.array([float(r[1]) for r in found]),
                               np.array([float(r[2]) for r in found]), np.zeros(len(found)), [r[3] for r in found],
                               thread, q_start, q_end)
    f = w.frame.copy()
    f["nvtx"] = pd.Series(paths, dtype=object, index=f.index)  # None stays None (outside)
    f["start_s"] = starts
    inside = sum(p is not None for p in paths)
    unmatched = sum(a is None for a in at)
    note = (f"NVTX ranges from the database: {inside:,} of {len(paths):,} kernel launches were launched inside a range "
            f"(the innermost around the launch call names it), {len(paths) - inside:,} outside every range"
            + (f", {unmatched:,} of them with no launch call recorded" if unmatched else "") + ".")
    return replace(w, frame=f, warnings=(*w.warnings, note))
