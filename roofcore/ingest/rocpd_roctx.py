"""Where rocprofv3's rocpd database places a row (time, agent, process, thread: every table of :mod:`.rocpd` is
read through :func:`placed`), and its ROCTx ranges as each dispatch's ``nvtx`` path (roofcore.hierarchy),
docs/formats.md.

rocprofv3 writes each ROCTx range (``roctxRangePush``/``Pop``, ``roctxRangeStart``/``Stop``) as a row of
``rocpd_region`` whose event (``rocpd_event``) has a ``MARKER`` category and the range's text in its ``extdata``
(``{"message": …}``). Every traced API call (HIP, HSA) is a region too, and its event's ``stack_id`` (the call's
correlation id) is the ``stack_id`` of the event of each dispatch and copy the call enqueued. So a dispatch gets the
innermost range around its launch call on the calling thread; where the call was not traced (``--marker-trace
--kernel-trace`` alone), the innermost range on the dispatching thread that holds its start on the GPU, as the CSV
pair gives (:mod:`.roctx`). A database without ranges leaves the rows as they were.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .roctx import Marks, calls_of, is_range_text, launched, nanos, ranges_kind
from .sqlite_db import q


class Placed(NamedTuple):
    """SQL expressions placing a table's rows in time and on an agent, process and thread."""

    joins: str
    start: str
    end: str
    agent: str
    pid: str
    tid: str


def placed(alias: str, cols: set[str], stamps: tuple[str, set[str]], tracks: tuple[str, set[str]]) -> Placed:
    """Where a table's rows are placed: by their own columns (``start``, ``end``, ``agent_id``, ``pid``, ``tid``), or
    through the timestamp table (``start_id``/``end_id``) and the track (``track_id``)."""
    joins = []
    if {"start", "end"} <= cols:
        start, end = f'{alias}."start"', f'{alias}."end"'
    elif {"start_id", "end_id"} <= cols and {"id", "value"} <= stamps[1]:
        joins.append(f"LEFT JOIN {q(stamps[0])} TS{alias} ON TS{alias}.id = {alias}.start_id "
                     f"LEFT JOIN {q(stamps[0])} TE{alias} ON TE{alias}.id = {alias}.end_id")
        start, end = f"TS{alias}.value", f"TE{alias}.value"
    else:
        start = end = "NULL"
    via_track = "track_id" in cols and "id" in tracks[1]
    if via_track:
        joins.append(f"LEFT JOIN {q(tracks[0])} TR{alias} ON TR{alias}.id = {alias}.track_id")

    def column(name: str) -> str:
        if name in cols:
            return f"{alias}.{name}"
        return f"TR{alias}.{name}" if via_track and name in tracks[1] else "NULL"

    return Placed(" ".join(joins), start, end, column("agent_id"), column("pid"), column("tid"))


def event_of(alias: str, cols: set[str], events: tuple[str, set[str]]) -> tuple[str, str, str]:
    """(event id, the event's ``stack_id``, the join) expressions for a table with an ``event_id``."""
    if "event_id" not in cols:
        return "NULL", "NULL", ""
    if not {"id", "stack_id"} <= events[1]:
        return f"{alias}.event_id", "NULL", ""
    return (f"{alias}.event_id", f"EV{alias}.stack_id",
            f"LEFT JOIN {q(events[0])} EV{alias} ON EV{alias}.id = {alias}.event_id")


def db_marks(con: Any, tables: dict[str, set[str]], runs: list[str], rows: list[dict[str, Any]]) -> Marks:
    """The ROCTx ranges of every run and, where there are ranges, the API calls that enqueued a dispatch or copy of
    ``rows`` (:func:`.roctx.launched`'s keys)."""
    marks = Marks([], {})
    wanted = calls_of(rows)
    for run in runs:
        _regions(con, tables, run, wanted, marks)
    return marks


def _regions(con: Any, tables: dict[str, set[str]], run: str, wanted: set[object], marks: Marks) -> None:
    """One run's ROCTx ranges and the API calls that enqueued a dispatch or copy (by stack id) into ``marks``;
    nothing where the run holds no marker event."""
    region, events = f"rocpd_region{run}", f"rocpd_event{run}"
    r_cols, e_cols = tables.get(region, set()), tables.get(events, set())
    if not {"event_id"} <= r_cols or not {"id", "category_id", "extdata"} <= e_cols:
        return
    markers = [i for i, name in _categories(con, tables, run).items() if ranges_kind(name)]
    if not markers or con.execute(f"SELECT 1 FROM {q(events)} WHERE category_id IN ({', '.join('?' * len(markers))}) "
                                  "LIMIT 1", markers).fetchone() is None:
        return
    at = placed("R", r_cols, (f"rocpd_timestamp{run}", tables.get(f"rocpd_timestamp{run}", set())),
                (f"rocpd_track{run}", tables.get(f"rocpd_track{run}", set())))
    stack = "E.stack_id" if "stack_id" in e_cols else "NULL"
    marked = set(markers)
    for p, tid, t0, t1, category, call, extdata in con.execute(
            f"SELECT {at.pid}, {at.tid}, {at.start}, {at.end}, E.category_id, {stack}, E.extdata FROM {q(region)} R "
            f"{at.joins} JOIN {q(events)} E ON E.id = R.event_id"):
        s, e = nanos(t0) * 1e-9, nanos(t1) * 1e-9
        if not s <= e:  # NaN or reversed
            continue
        thread = launched(run, p, tid, None)["thread"] or ""
        if category in marked:
            text = _message(extdata)
            if is_range_text(text) and e > s:
                marks.ranges.append((thread, s, e, str(text).strip()))
        elif call is not None and (run, call) in wanted:
            marks.calls.setdefault((run, call), (thread, s, e))


def _categories(con: Any, tables: dict[str, set[str]], run: str) -> dict[object, str]:
    """category id → name: ``rocpd_info_category`` where the schema has it, else ``rocpd_string``."""
    for table, cols in ((f"rocpd_info_category{run}", ("id", "name")), (f"rocpd_string{run}", ("id", "string"))):
        if set(cols) <= tables.get(table, set()):
            return {i: str(n) for i, n in con.execute(f"SELECT {cols[0]}, {cols[1]} FROM {q(table)}")
                    if isinstance(n, str)}
    return {}


def _message(extdata: object) -> str | None:
    """The ``message`` of an event's ``extdata`` JSON (a ROCTx range's text), or None."""
    if isinstance(extdata, bytes):
        extdata = extdata.decode("utf-8", "replace")
    if not isinstance(extdata, str) or '"message"' not in extdata:
        return None
    try:
        doc = json.loads(extdata)
    except ValueError:
        return None
    text = doc.get("message") if isinstance(doc, dict) else None
    return text.strip() or None if isinstance(text, str) else None
