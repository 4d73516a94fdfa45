"""rocprofv3's rocpd database (``--output-format rocpd``, ROCm 7's default: ``<host>/<pid>_results.db``), an SQLite
file opened by :mod:`.sqlite_db` (docs/formats.md).

The tables carry a per-run suffix (``rocpd_kernel_dispatch<uuid>``; the unsuffixed names are views over them, never
run here: a database's own SQL is not trusted). Each run's tables are read by name, columns found by name:

- dispatches: ``rocpd_kernel_dispatch`` (``dispatch_id``, ``kernel_id``, ``agent_id``, ``pid``), with times in
  ``start``/``end`` (ns) or, in the layout with a timestamp table, ``start_id``/``end_id`` → ``rocpd_timestamp.value``
  (agent and process then through ``track_id`` → ``rocpd_track``);
- names: ``rocpd_info_kernel_symbol`` (``display_name``, else ``kernel_name``) by ``kernel_id``;
- GPUs: ``rocpd_info_agent`` (``type`` GPU, ``type_index`` as ``GPU <n>``, ``product_name``, ``name`` = gfx arch);
- counters: ``rocpd_pmc_event`` (``event_id``, ``pmc_id``, ``value``) → ``rocpd_info_pmc.name``, summed per dispatch
  and counter, joined to the dispatch by ``event_id``;
- copies: ``rocpd_memory_copy`` (``size``, ``src_agent_id``, ``dst_agent_id``, times as above).

From there the rows are rocprofv3's JSON rows (:func:`.rocprofv3.of_records`): the same FLOP and byte formulas, the
same warnings; ROCTx ranges give each dispatch and copy its ``nvtx`` path (:mod:`.rocpd_roctx`). A database of
counters without a kernel trace (rocpd then keeps no kernel name or time) is named.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InputError
from ..models import Workload
from . import register_format
from .rocpd_roctx import db_marks, event_of, placed
from .rocprofv3 import Records, Row, Store, agent_label, of_records
from .roctx import launched, with_ranges
from .sqlite_db import SQLITE_MAGIC, parse_any, probe, q, text

HINT = "profile with `rocprofv3 --kernel-trace --output-format rocpd -- app` (ROCm 7's default) and load the .db file."
BARE = ("the database holds kernel times only: collect counters in the same run (rocprofv3 --kernel-trace --pmc "
        "SQ_INSTS_VALU_FMA_F32 … -- app).")
STORE = Store(("start", "end"), "", HINT, BARE)  #: how the database stores the records (:class:`.rocprofv3.Store`)


@register_format("rocprof-v3-db", "rocprofv3's rocpd SQLite database (--output-format rocpd, ROCm 7's default "
                 "results.db): kernel dispatches with their times and counters, copies", lambda head, name: False,
                 priority=25, role="either", magic=SQLITE_MAGIC, probe=probe(b"rocpd_kernel_dispatch"))
def parse_db(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """A profiler's SQLite database, read by the reader its tables call for (:func:`.sqlite_db.parse_any`)."""
    return parse_any(data, source, context)


def read(con: Any, tables: dict[str, set[str]], source: str, context: dict[str, Any] | None) -> Workload:
    """One row per kernel dispatch (and per copy) of every run in the database, each with its ROCTx range where the
    database holds ranges; see the module docstring."""
    runs = sorted({m.group(1) for t in tables if (m := re.fullmatch(r"rocpd_kernel_dispatch(.*)", t))})
    rows, copies, gpu_names = _records(con, tables, runs, source)
    w = of_records("rocprof-v3-db", (rows, copies, gpu_names), source, context, STORE)
    held = [*rows.values(), *copies]
    return with_ranges(w, held, db_marks(con, tables, runs, held), source)


def _records(con: Any, tables: dict[str, set[str]], runs: list[str], source: str) -> Records:
    """Rows by (run, dispatch id), copies and GPU names of every run's tables."""
    rows: dict[tuple[str, str], Row] = {}
    copies: list[dict[str, Any]] = []
    gpu_names: dict[str, tuple[str, str]] = {}
    for run in runs:
        _run(con, run, tables, rows, copies, gpu_names)
    if not rows and not copies:
        counted = sum(con.execute(f"SELECT count(*) FROM {q(t)}").fetchone()[0] for t in tables
                      if re.fullmatch(r"rocpd_pmc_event(.*)", t) and t.removeprefix("rocpd_pmc_event") in runs)
        if counted:  # rocpd keeps a dispatch's name and times only in its kernel trace
            raise InputError(where=source, text=f"the database holds {counted:,} counter values but no kernel "
                             "dispatch: rocprofv3 ran with --pmc and without --kernel-trace, and rocpd then keeps no "
                             "kernel name or time.", hint="profile with `rocprofv3 --kernel-trace --pmc … -- app`.")
    return rows, copies, gpu_names


def _run(con: Any, run: str, tables: dict[str, set[str]], rows: dict[tuple[str, str], Row],
         copies: list[dict[str, Any]], gpu_names: dict[str, tuple[str, str]]) -> None:
    """One run's dispatches (into ``rows``), copies and GPU names."""
    def table(base: str) -> tuple[str, set[str]]:
        name = base + run
        return (name, tables[name]) if name in tables else ("", set())

    kd, k_cols = table("rocpd_kernel_dispatch")
    agents = _agents(con, *table("rocpd_info_agent"), gpu_names)
    names = _names(con, *table("rocpd_info_kernel_symbol"))
    at = placed("K", k_cols, table("rocpd_timestamp"), table("rocpd_track"))
    did = "K.dispatch_id" if "dispatch_id" in k_cols else "K.id"
    kid = "K.kernel_id" if "kernel_id" in k_cols else "NULL"
    eid, stack, e_join = event_of("K", k_cols, table("rocpd_event"))
    by_event: dict[object, Row] = {}
    for rid, dispatch, kernel, ag, p, tid, t0, t1, event, call in con.execute(
            f"SELECT K.id, {did}, {kid}, {at.agent}, {at.pid}, {at.tid}, {at.start}, {at.end}, {eid}, {stack} "
            f"FROM {q(kd)} K {at.joins} {e_join} ORDER BY K.id"):
        key = (f"{run}/{p if p is not None else ''}", text(dispatch) or f"row {rid}")
        r = rows.get(key)
        if r is None:
            r = rows[key] = {"counters": {}, "gpu": agents.get(ag, (text(ag), ""))[0],
                             "name": names.get(kernel) or (f"kernel {kernel}" if kernel is not None else
                                                           "unnamed kernel"), "start": text(t0), "end": text(t1),
                             **launched(run, p, tid, call)}
        if event is not None:
            by_event[event] = r
    _counters(con, table("rocpd_pmc_event"), table("rocpd_info_pmc"), by_event)
    _copies(con, run, table("rocpd_memory_copy"), table("rocpd_timestamp"), table("rocpd_track"), table("rocpd_event"),
            agents, copies)


def _agents(con: Any, name: str, cols: set[str], gpu_names: dict[str, tuple[str, str]]
            ) -> dict[object, tuple[str, str]]:
    """agent id → (label, type): ``GPU <n>`` as rocprofv3's CSV and JSON name GPUs; GPU names into ``gpu_names``."""
    if not name or "id" not in cols:
        return {}
    wanted = [c for c in ("type", "type_index", "logical_index", "absolute_index", "product_name", "name")
              if c in cols]
    out: dict[object, tuple[str, str]] = {}
    for row in con.execute(f"SELECT id, {', '.join(wanted) or 'NULL'} FROM {q(name)}"):
        a = dict(zip(wanted, row[1:], strict=True))
        kind = str(a.get("type") or "").strip().lower()
        index = next((a[k] for k in ("type_index", "logical_index", "absolute_index")
                      if isinstance(a.get(k), int)), None)
        label = agent_label({"type": kind, "logical_node_type_id": index}, str(row[0]))
        out[row[0]] = (label, kind)
        if kind == "gpu" and (a.get("product_name") or a.get("name")):
            gpu_names[label] = (str(a.get("product_name") or "").strip(), str(a.get("name") or ""))
    return out


def _names(con: Any, name: str, cols: set[str]) -> dict[object, str]:
    """kernel id → name (``display_name``, else ``kernel_name``)."""
    if not name or "id" not in cols:
        return {}
    picks = [c for c in ("display_name", "kernel_name") if c in cols]
    if not picks:
        return {}
    out: dict[object, str] = {}
    for kid, *texts in con.execute(f"SELECT id, {', '.join(picks)} FROM {q(name)}"):
        text = next((t.strip() for t in texts if isinstance(t, str) and t.strip()), None)
        if text is not None:
            out[kid] = text
    return out


def _counters(con: Any, events: tuple[str, set[str]], infos: tuple[str, set[str]], by_event: dict[object, Row]
              ) -> None:
    """Each dispatch's counters (by its ``event_id``), summed by name; a value that is not a number marks the
    counter bad for that dispatch. Read row by row and summed here: SQLite's join and grouping over a table with no
    index on ``event_id`` took most of the reading."""
    if not by_event or not {"event_id", "pmc_id", "value"} <= events[1] or not {"id", "name"} <= infos[1]:
        return
    names = {i: str(n).strip() for i, n in con.execute(f"SELECT id, name FROM {q(infos[0])}") if n is not None}
    for event, pmc, value in con.execute(f"SELECT event_id, pmc_id, value FROM {q(events[0])}"):
        r = by_event.get(event)
        name = names.get(pmc)
        if r is None or not name:
            continue
        counters = r["counters"]
        if type(value) is float or type(value) is int:  # SQLite gives no bool
            counters[name] = counters.get(name, 0.0) + value
        else:  # NULL, text or a blob: -inf marks it bad (NaN means absent)
            counters[name] = float("-inf")


def _copies(con: Any, run: str, copies_table: tuple[str, set[str]], stamps: tuple[str, set[str]],
            tracks: tuple[str, set[str]], events: tuple[str, set[str]], agents: dict[object, tuple[str, str]],
            copies: list[dict[str, Any]]) -> None:
    name, cols = copies_table
    if not name or "size" not in cols:
        return
    at = placed("M", cols, stamps, tracks)
    _, stack, e_join = event_of("M", cols, events)
    src, dst = ("M." + c if c in cols else "NULL" for c in ("src_agent_id", "dst_agent_id"))
    for s, d, size, t0, t1, p, tid, call in con.execute(
            f"SELECT {src}, {dst}, M.size, {at.start}, {at.end}, {at.pid}, {at.tid}, {stack} FROM {q(name)} M "
            f"{at.joins} {e_join} ORDER BY M.id"):
        s_label, s_kind = agents.get(s, ("", ""))
        d_label, d_kind = agents.get(d, ("", ""))
        copies.append({"src": s_kind, "dst": d_kind, "bytes": size if isinstance(size, int | float) else None,
                       "start": text(t0), "end": text(t1), "gpu": d_label if d_kind == "gpu" else s_label,
                       **launched(run, p, tid, call)})
