"""rocprofv3 rocpd databases for the tests, written from dispatch records with our own DDL: the columns roofcore
reads, laid out as rocprofiler-sdk's rocpd schema lays them out (docs/formats.md). Two layouts: ``inline`` (times,
agent and process in the dispatch row, ROCm 7.0's schema) and ``stamped`` (times in a timestamp table, agent and
process through a track), each under a per-run table suffix as rocprofv3 writes them, with unsuffixed views."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

SUFFIX = "_00000000_0000_0000_0000_00000000002a"  #: a run's table suffix (rocprofv3 uses the run's uuid)
TABLES = ("rocpd_info_agent", "rocpd_info_kernel_symbol", "rocpd_kernel_dispatch", "rocpd_info_pmc",
          "rocpd_pmc_event", "rocpd_memory_copy", "rocpd_timestamp", "rocpd_track", "rocpd_string", "rocpd_event",
          "rocpd_region")


@dataclass
class Dispatch:
    dispatch_id: int
    kernel: str
    start: int | None
    end: int | None
    agent: int = 0  #: index of the GPU among the agents
    pid: int = 4242
    counters: dict[str, float | str | None] = field(default_factory=dict)
    tid: int | None = None  #: the dispatching thread
    call: int | None = None  #: the correlation id of the API call that enqueued it (its event's stack_id)


@dataclass
class Copy:
    size: int
    start: int
    end: int
    src: str  #: "CPU" or "GPU"
    dst: str
    tid: int | None = None
    call: int | None = None


@dataclass
class Region:
    """A ROCTx range (``message``, a MARKER category) or an API call (``message`` None, e.g. HIP_RUNTIME_API) on a
    thread, as rocprofv3 writes them to ``rocpd_region`` with their event."""

    start: int
    end: int
    tid: int
    message: str | None = None
    category: str = "MARKER_CORE_RANGE_API"
    call: int | None = None  #: the call's correlation id (its event's stack_id)
    operation: str = "roctxRangePushA"
    pid: int = 4242


def build(dispatches: list[Dispatch], copies: list[Copy] = (), *, regions: list[Region] = (), layout: str = "inline",
          suffix: str = SUFFIX,
          product: str = "AMD Instinct MI300X", arch: str = "gfx942", gpus: int = 1,
          con: sqlite3.Connection | None = None) -> bytes:
    """The database's bytes (``con``: add this run to an open database instead)."""
    own = con is None
    con = con or sqlite3.connect(":memory:")
    t = {name: f'"{name}{suffix}"' for name in TABLES}
    inline = layout == "inline"
    place = '"start" INTEGER, "end" INTEGER, agent_id INTEGER, pid INTEGER, tid INTEGER' if inline else \
        "track_id INTEGER, start_id INTEGER, end_id INTEGER"
    con.executescript(f"""
        CREATE TABLE {t['rocpd_string']} (id INTEGER PRIMARY KEY, guid TEXT, string TEXT);
        CREATE TABLE {t['rocpd_info_agent']} (id INTEGER PRIMARY KEY, guid TEXT, type TEXT, absolute_index INTEGER,
            logical_index INTEGER, type_index INTEGER, name TEXT, product_name TEXT);
        CREATE TABLE {t['rocpd_info_kernel_symbol']} (id INTEGER PRIMARY KEY, guid TEXT, kernel_name TEXT,
            display_name TEXT);
        CREATE TABLE {t['rocpd_track']} (id INTEGER PRIMARY KEY, guid TEXT, pid INTEGER, tid INTEGER,
            agent_id INTEGER);
        CREATE TABLE {t['rocpd_event']} (id INTEGER PRIMARY KEY, guid TEXT, category_id INTEGER, stack_id INTEGER,
            parent_stack_id INTEGER, correlation_id INTEGER, extdata JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE {t['rocpd_region']} (id INTEGER PRIMARY KEY, guid TEXT,
            {place.replace(', agent_id INTEGER', '')}, name_id INTEGER, event_id INTEGER);
        CREATE TABLE {t['rocpd_timestamp']} (id INTEGER PRIMARY KEY, guid TEXT, value BIGINT, track_id INTEGER);
        CREATE TABLE {t['rocpd_kernel_dispatch']} (id INTEGER PRIMARY KEY, guid TEXT, kernel_id INTEGER,
            dispatch_id INTEGER, {place}, workgroup_size_x INTEGER, grid_size_x INTEGER, event_id INTEGER);
        CREATE TABLE {t['rocpd_info_pmc']} (id INTEGER PRIMARY KEY, guid TEXT, agent_id INTEGER, name TEXT,
            symbol TEXT);
        CREATE TABLE {t['rocpd_pmc_event']} (id INTEGER PRIMARY KEY, guid TEXT, event_id INTEGER, pmc_id INTEGER,
            value REAL DEFAULT 0.0);
        CREATE TABLE {t['rocpd_memory_copy']} (id INTEGER PRIMARY KEY, guid TEXT, {place.replace('agent_id', 'queue_id')},
            name_id INTEGER, dst_agent_id INTEGER, src_agent_id INTEGER, size INTEGER, event_id INTEGER);
    """)
    for base in TABLES:  # rocprofv3's unsuffixed views (never run by the reader)
        con.execute(f'CREATE VIEW IF NOT EXISTS "{base}" AS SELECT * FROM {t[base]}')
    con.execute(f"INSERT INTO {t['rocpd_info_agent']} VALUES (1, 'g', 'CPU', 0, 0, 0, 'EPYC', 'AMD EPYC 9654')")
    for i in range(gpus):
        con.execute(f"INSERT INTO {t['rocpd_info_agent']} VALUES (?, 'g', 'GPU', ?, ?, ?, ?, ?)",
                    (i + 2, i + 1, i + 1, i, arch, product))
    symbols: dict[str, int] = {}
    pmcs: dict[str, int] = {}
    stamps = [0]

    def stamp(v: int | None, track: int) -> int | None:
        if v is None:
            return None
        stamps[0] += 1
        con.execute(f"INSERT INTO {t['rocpd_timestamp']} VALUES (?, 'g', ?, ?)", (stamps[0], v, track))
        return stamps[0]

    def track(pid: int, agent_id: int | None, tid: int | None = None) -> int:
        row = con.execute(f"SELECT id FROM {t['rocpd_track']} WHERE pid = ? AND agent_id IS ? AND tid IS ?",
                          (pid, agent_id, tid)).fetchone()
        if row:
            return int(row[0])
        return int(con.execute(f"INSERT INTO {t['rocpd_track']} (guid, pid, tid, agent_id) VALUES ('g', ?, ?, ?)",
                               (pid, tid, agent_id)).lastrowid)

    def string(text: str) -> int:
        row = con.execute(f"SELECT id FROM {t['rocpd_string']} WHERE string = ?", (text,)).fetchone()
        if row:
            return int(row[0])
        return int(con.execute(f"INSERT INTO {t['rocpd_string']} (guid, string) VALUES ('g', ?)", (text,)).lastrowid)

    def event(category: str, stack: int | None, extdata: str = "{}", at: int | None = None) -> int:
        return int(con.execute(f"INSERT INTO {t['rocpd_event']} (id, guid, category_id, stack_id, parent_stack_id, "
                               "correlation_id, extdata) VALUES (?, 'g', ?, ?, ?, 0, ?)",
                               (at, string(category), stack, stack, extdata)).lastrowid)

    def placed(start: int | None, end: int | None, agent_id: int | None, pid: int, tid: int | None
               ) -> tuple[object, ...]:
        if inline:
            return (start, end, agent_id, pid, tid) if agent_id is not None else (start, end, pid, tid)
        tr = track(pid, agent_id, tid)
        return tr, stamp(start, tr), stamp(end, tr)

    for r in regions:
        extdata = "{}" if r.message is None else json.dumps({"message": r.message})
        ev = event(r.category, r.call, extdata)
        values = placed(r.start, r.end, None, r.pid, r.tid)
        con.execute(f"INSERT INTO {t['rocpd_region']} VALUES (NULL, 'g', {', '.join('?' * len(values))}, ?, ?)",
                    (*values, string(r.operation), ev))
    for n, d in enumerate(dispatches, 1):
        kid = symbols.setdefault(d.kernel, len(symbols) + 1)
        if kid == len(symbols):
            con.execute(f"INSERT OR IGNORE INTO {t['rocpd_info_kernel_symbol']} VALUES (?, 'g', ?, ?)",
                        (kid, "_Z" + d.kernel.split("(")[0].replace(" ", ""), d.kernel))
        agent_id = d.agent + 2
        place_values = placed(d.start, d.end, agent_id, d.pid, d.tid)
        event("KERNEL_DISPATCH", d.call, at=1_000_000 + n)
        con.execute(f"INSERT INTO {t['rocpd_kernel_dispatch']} VALUES (?, 'g', ?, ?, {', '.join('?' * len(place_values))}, "
                    "64, 1024, ?)", (n, kid, d.dispatch_id, *place_values, 1_000_000 + n))
        for cname, value in d.counters.items():
            pid_ = pmcs.setdefault(cname, len(pmcs) + 1)
            con.execute(f"INSERT OR IGNORE INTO {t['rocpd_info_pmc']} VALUES (?, 'g', ?, ?, ?)",
                        (pid_, agent_id, cname, cname))
            con.execute(f"INSERT INTO {t['rocpd_pmc_event']} (guid, event_id, pmc_id, value) VALUES ('g', ?, ?, ?)",
                        (1_000_000 + n, pid_, value))
    for c in copies:
        src, dst = (1 if side == "CPU" else 2 for side in (c.src, c.dst))
        values = placed(c.start, c.end, 1, 4242, c.tid) if inline else placed(c.start, c.end, dst, 4242, c.tid)
        ev = event("MEMORY_COPY", c.call)
        con.execute(f"INSERT INTO {t['rocpd_memory_copy']} VALUES (NULL, 'g', {', '.join('?' * len(values))}, 0, ?, ?, ?, ?)",
                    (*values, dst, src, c.size, ev))
    con.commit()
    data = con.serialize() if own else b""
    if own:
        con.close()
    return data


def from_csvs(trace: Path, counters: Path | None = None) -> list[Dispatch]:
    """The dispatches of a rocprofv3 kernel_trace.csv, with the counters of its counter_collection.csv (by dispatch
    id): the same run as a rocpd database holds it."""
    found: dict[int, Dispatch] = {}
    for r in csv.DictReader(io.StringIO(trace.read_text())):
        thread = int(r.get("Thread_Id") or 4242)
        found[int(r["Dispatch_Id"])] = Dispatch(int(r["Dispatch_Id"]), r["Kernel_Name"], int(r["Start_Timestamp"]),
                                                int(r["End_Timestamp"]), pid=thread, tid=thread)
    if counters is not None:
        for r in csv.DictReader(io.StringIO(counters.read_text())):
            d = found.get(int(r["Dispatch_Id"]))
            if d is not None:
                d.counters[r["Counter_Name"]] = float(r["Counter_Value"])
    return list(found.values())


def regions_from_csv(markers: Path) -> list[Region]:
    """The regions of a rocprofv3 marker_api_trace.csv as rocprofv3 writes them to the database: a range's text
    (``Function``) in its event's message; ``roctxGetThreadId`` named by itself; marks (start = end) are samples, not
    regions."""
    out = []
    for r in csv.DictReader(io.StringIO(markers.read_text())):
        start, end = int(r["Start_Timestamp"]), int(r["End_Timestamp"])
        if start == end:
            continue
        control = "CONTROL" in r["Domain"]
        out.append(Region(start, end, int(r["Thread_Id"]), None if control else r["Function"],
                          "MARKER_CONTROL_API" if control else "MARKER_CORE_RANGE_API",
                          operation=r["Function"] if r["Function"].startswith("roctx") else "roctxRangePushA",
                          pid=int(r["Process_Id"])))
    return out


def from_json(doc: dict) -> tuple[list[Dispatch], list[Copy]]:
    """The dispatches and copies of a rocprofv3 JSON document (its first process), as its rocpd database holds
    them."""
    tool = doc["rocprofiler-sdk-tool"][0]
    names = {s["kernel_id"]: s["formatted_kernel_name"] for s in tool["kernel_symbols"]}
    counters = {c["id"]["handle"]: c["name"] for c in tool["counters"]}
    kinds = {a["id"]["handle"]: "GPU" if a["type"] == 2 else "CPU" for a in tool["agents"]}
    out = {}
    for d in tool["buffer_records"]["kernel_dispatch"]:
        info = d["dispatch_info"]
        out[info["dispatch_id"]] = Dispatch(info["dispatch_id"], names[info["kernel_id"]], d["start_timestamp"],
                                            d["end_timestamp"])
    for cc in tool["callback_records"]["counter_collection"]:
        d = out[cc["dispatch_data"]["dispatch_info"]["dispatch_id"]]
        for r in cc["records"]:
            name = counters[r["counter_id"]["handle"]]
            d.counters[name] = d.counters.get(name, 0.0) + r["value"]
    copies = [Copy(m["bytes"], m["start_timestamp"], m["end_timestamp"], kinds[m["src_agent_id"]["handle"]],
                   kinds[m["dst_agent_id"]["handle"]]) for m in tool["buffer_records"]["memory_copy"]]
    return list(out.values()), copies
