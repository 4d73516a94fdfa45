"""rocprofv3 (rocprofiler-sdk) exports (docs/formats.md): counter collection, kernel trace, JSON.

- ``rocprof-v3``: ``<pid>_counter_collection.csv``, long (one row per dispatch × counter): pivoted by dispatch
  (process, agent, dispatch id); a counter listed several times for one dispatch (per-instance rows) is summed.
  Early versions (0.x) have no timestamps: the time stays unknown unless the kernel trace of the same run is read
  with it (:func:`.rocprof.join_traces`).
- ``rocprof-v3-trace``: ``<pid>_kernel_trace.csv`` (``Kind,Agent_Id,Queue_Id,…,Dispatch_Id,Kernel_Id,Kernel_Name,
  Correlation_Id,Start_Timestamp,End_Timestamp,…``; later versions add ``Stream_Id``, ``Thread_Id`` and write
  ``Agent_Id`` as ``Agent 1`` or ``GPU 0``): one time-only row per dispatch, columns found by name.
- ``rocprof-v3-json``: ``--output-format json`` (``{"rocprofiler-sdk-tool": [{agents, counters, kernel_symbols,
  buffer_records, callback_records, …}]}``): one row per ``buffer_records.kernel_dispatch`` (times in ns), named
  through ``kernel_symbols`` (``formatted_kernel_name``, else ``demangled_kernel_name``, ``kernel_name``), counters
  from ``callback_records.counter_collection`` (``records[].counter_id`` → ``counters[].name``, summed per dispatch)
  joined by dispatch id, the GPU from ``agents`` (``product_name``, ``name`` = gfx arch). ``buffer_records.memory_copy``
  become copy rows (FLOPs 0, ``bytes`` over PCIe and HBM for host↔device, 2 × bytes at HBM device-to-device).
  ROCTx ranges (``buffer_records.marker_api``) give each its ``nvtx`` path (:func:`.roctx.json_marks`).
- ``rocprof-v3-agent-info`` (companion): ``<pid>_agent_info.csv``; its GPU (``Product_Name``, ``Name`` = gfx arch,
  ``Cu_Count``) names the device of the files read with it.
- ``rocprof-v3-db``: the SQLite database (``--output-format rocpd``, ROCm 7's default) is read by :mod:`.rocpd`
  into the JSON's rows (:func:`of_records`).

Counters become FLOPs and bytes as in :mod:`.rocprof_common` (calc_ai).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..errors import InputError
from ..models import Skipped, Workload
from . import check_binary, check_text, make_frame, register_format, skip
from .api_traces import refuse_api_json
from .rocprof_common import (
    NA,
    Counters,
    Ids,
    Layout,
    Problems,
    Table,
    by_line,
    durations,
    factorize_text,
    find_header,
    finish,
    header_sniffer,
    ids_and_names,
    load_json,
    no_header,
    parse_wide,
    read_roles,
    to_floats,
    with_rows,
)
from .roctx import Marks, calls_of, from_trace, internal, json_marks, launched, with_ranges

# --------------------------------------------------------------------------------------------- counter_collection.csv

V3_HEADER = re.compile(r"^(?=[^\n]*\bCorrelation_Id\b)(?=[^\n]*\bCounter_Name\b)(?=[^\n]*\bCounter_Value\b)"
                       r"(?=[^\n]*\bKernel_Name\b)[^\n]*$", re.M | re.I)
V3_EXPECTED = ("a rocprofv3 counter_collection.csv header (Correlation_Id,Dispatch_Id,…,Kernel_Name,…,Counter_Name,"
               "Counter_Value,…)")
V3_HINT = "profile with `rocprofv3 --pmc … --output-format csv -- app` and load <pid>_counter_collection.csv."
#: counter_collection.csv of rocprofv3 0.x has no timestamps: the kernel trace of the same run gives them
V3_NO_TIME = ("load the kernel_trace.csv of the same run (rocprofv3 --kernel-trace --pmc … -- app) together with this "
              "file: its times are joined by dispatch id.")


@register_format("rocprof-v3", "rocprofv3 *_counter_collection.csv (long: one row per dispatch × counter)",
                 header_sniffer(V3_HEADER), priority=20, role="counters")
def parse_v3(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Pivot by dispatch (process, agent, dispatch id); repeated counters of a dispatch are summed."""
    text = check_text(data, source)
    at = find_header(text, V3_HEADER)
    if at is None:
        raise no_header(text, source, V3_EXPECTED, V3_HINT)
    spec = {"ids": ("Dispatch_Id", "Correlation_Id"), "name": ("Kernel_Name",), "gpu": ("Agent_Id",),
            "pid": ("Process_Id",), "start": ("Start_Timestamp",), "end": ("End_Timestamp",),
            "cname": ("Counter_Name",), "cvalue": ("Counter_Value",), "wave": ("Wave_Front_Size",)}
    table, roles = read_roles(text, at, source, spec)
    if roles["ids"] is None or roles["name"] is None or roles["cname"] is None or roles["cvalue"] is None:
        raise no_header(text, source, V3_EXPECTED, V3_HINT)
    found, c_codes, c_uniq, skipped = _v3_rows(table, roles, source)
    keep = found.keep
    codes, first = _dispatches(table, roles, found.id_codes[keep], keep)
    ids, names = found.ids[first], found.names[first]
    gpus = None
    if roles["gpu"] is not None:
        g_codes, g_uniq = factorize_text(table.columns[roles["gpu"]][first])
        gpus = g_uniq[g_codes]
    counters = Counters(list(c_uniq))
    problems = Problems()
    mats = _pivot(table.columns[roles["cvalue"]][keep], c_codes[keep], c_uniq, counters.needed(), codes,
                  found.ids[keep], problems)

    def get(name: str) -> np.ndarray | None:
        plan = counters.plan(name)
        if plan is None:
            return None
        return np.sum([mats[i] for i in plan], axis=0) if len(plan) > 1 else mats[plan[0]]

    times = tuple(None if (p := roles[r]) is None else table.columns[p][first] for r in ("start", "end"))
    waves = table.columns[roles["wave"]][first] if roles["wave"] is not None else None
    w = finish("rocprof-v3", source, context, ids, names, gpus, get, times, ("Start_Timestamp", "End_Timestamp"),
               skipped, problems, waves, no_time=V3_NO_TIME)
    return replace(w, meta={**w.meta, "row_id": table.header[roles["ids"]]})


def _v3_rows(table: Table, roles: dict[str, int | None], source: str) -> tuple[Ids, np.ndarray, np.ndarray,
                                                                               list[Skipped]]:
    """The usable counter rows (``found.keep``: a dispatch id, a kernel name and a counter name), the counter
    names factorised, and the skipped rows by line; no usable row is an error."""
    if table.n == 0:
        if table.skipped:
            first = table.skipped[0]
            raise InputError(where=f"{source}: {first.row}", text=f"no usable rows; the first problem: {first.reason}.",
                             hint="load the CSV as rocprofv3 wrote it.")
        raise InputError(where=source, expected="at least one counter row", found="a header only",
                         hint="the profiled program launched no kernels, or no counter could be collected; "
                              "check rocprofv3's output and the --pmc names (rocprofv3 --list-avail).")
    id_at, name_at, cname_at = roles["ids"], roles["name"], roles["cname"]
    assert id_at is not None and name_at is not None and cname_at is not None  # parse_v3 refused the file else
    found = ids_and_names(table, id_at, name_at, table.header[id_at], source)
    keep, bad_rows = found.keep, found.skipped
    c_codes, c_uniq = factorize_text(table.columns[cname_at])
    no_name = np.array([u == "" or u.lower() in NA for u in c_uniq], dtype=bool)[c_codes] & keep
    for i in np.flatnonzero(no_name):
        bad_rows.append(skip(source, f"line {table.lines[i]}", "the counter name is empty"))
    keep &= ~no_name
    skipped = by_line(table.skipped + bad_rows)
    if not keep.any():
        first = skipped[0]
        raise InputError(where=f"{source}: {first.row}", text=f"no usable rows; the first problem: {first.reason}.",
                         hint="load the CSV as rocprofv3 wrote it.")
    return found, c_codes, c_uniq, skipped


def _dispatches(table: Table, roles: dict[str, int | None], codes: np.ndarray,
                keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dispatch code per kept row, first row of each dispatch): one dispatch = (process, agent, dispatch id), the
    codes combined pairwise so they cannot overflow."""
    for role in ("gpu", "pid"):
        if (p := roles[role]) is not None:
            other = factorize_text(table.columns[p][keep])[0]
            codes = pd.factorize(other.astype(np.int64) * (int(codes.max()) + 1) + codes)[0]
    codes = pd.factorize(codes)[0]
    return codes, np.flatnonzero(keep)[np.unique(codes, return_index=True)[1]]


def _pivot(raw_values: np.ndarray, cname_rows: np.ndarray, c_uniq: np.ndarray, wanted: list[int], codes: np.ndarray,
           row_ids: np.ndarray, problems: Problems) -> dict[int, np.ndarray]:
    """Per wanted counter (by its code), its value per dispatch: repeated rows summed, NaN where the dispatch has
    no row of it; unusable values recorded in ``problems``."""
    mats: dict[int, np.ndarray] = {}
    if not wanted:
        return mats
    nd = int(codes.max()) + 1
    rows = np.isin(cname_rows, wanted)
    values = np.full(len(codes), np.nan)
    values[rows] = to_floats(raw_values[rows])
    values[~np.isfinite(values) | (values < 0)] = np.nan
    for c in wanted:
        m = cname_rows == c
        mat = np.zeros(nd)
        present = np.zeros(nd, dtype=bool)
        with np.errstate(over="ignore", invalid="ignore"):
            np.add.at(mat, codes[m], values[m])
        present[codes[m]] = True
        mat[~present] = np.nan
        problems.add(str(c_uniq[c]), m & np.isnan(values), row_ids, raw_values)
        mats[c] = mat
    return mats


# --------------------------------------------------------------------------------------------- kernel_trace.csv

TRACE = Layout(
    "rocprof-v3-trace",
    # rocprofv3 spells ids "_Id" (rocprof-compute and rocprofv2 write "_ID"); a counter file is rocprof-v3
    re.compile(r'^(?=[^\n]*"?\bDispatch_Id\b)(?=[^\n]*\bKernel_Name\b)(?=[^\n]*\bStart_Timestamp\b)'
               r"(?=[^\n]*\bEnd_Timestamp\b)(?![^\n]*\bCounter_Name\b)[^\n]*$", re.M),
    ("Dispatch_Id", "Correlation_Id"), ("Kernel_Name",), ("Agent_Id",), ("Start_Timestamp",), ("End_Timestamp",),
    "a rocprofv3 kernel_trace.csv header (Kind,Agent_Id,…,Dispatch_Id,…,Kernel_Name,…,Start_Timestamp,End_Timestamp,…)",
    "profile with `rocprofv3 --kernel-trace --output-format csv -- app` and load <pid>_kernel_trace.csv.",
    bare="a kernel trace holds times only: collect counters in the same run (rocprofv3 --kernel-trace --pmc "
         "SQ_INSTS_VALU_FMA_F32 … -- app) and load counter_collection.csv together with this file.")


@register_format("rocprof-v3-trace", "rocprofv3 kernel_trace.csv (--kernel-trace): time per dispatch, no counters",
                 header_sniffer(TRACE.header), priority=20, role="timeline")
def parse_trace(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    w = parse_wide(data, source, context, TRACE)
    text = check_text(data, source)
    at = find_header(text, TRACE.header)
    assert at is not None  # parse_wide refused a file without the header
    line = text[at[0]:text.find("\n", at[0]) if "\n" in text[at[0]:] else len(text)]
    row_id = "Dispatch_Id" if re.search(r"\bDispatch_Id\b", line) else "Correlation_Id"
    # a marker trace read beside it gives each dispatch its ROCTx range (.roctx)
    return from_trace(replace(w, meta={**w.meta, "row_id": row_id}), text, at, source, context, TRACE)


# --------------------------------------------------------------------------------------------- agent_info.csv

AGENT_HEADER = re.compile(r'^(?=[^\n]*"?\bNode_Id\b)(?=[^\n]*\bAgent_Type\b)(?=[^\n]*\bLogical_Node_Id\b)[^\n]*$',
                          re.M)


@register_format("rocprof-v3-agent-info", "rocprofv3's agent_info.csv (the CPUs and GPUs of the run: name, arch, CUs), "
                 "context for its kernel trace or counters", header_sniffer(AGENT_HEADER), priority=20, companion=True)
def parse_agent_info(data: bytes, source: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"rocprof_agents": {"gpus": [{node_id, logical_node_id, name, product_name, cu_count}], "source": …}}``."""
    text = check_text(data, source)
    at = find_header(text, AGENT_HEADER)
    if at is None:
        raise no_header(text, source, "a rocprofv3 agent_info.csv header (Node_Id,Logical_Node_Id,Agent_Type,…)",
                        "load the <pid>_agent_info.csv rocprofv3 wrote beside the trace.")
    keys = {"type": ("Agent_Type",), "node_id": ("Node_Id",), "logical_node_id": ("Logical_Node_Id",),
            "name": ("Name",), "product_name": ("Product_Name",), "cu_count": ("Cu_Count",)}
    table, pos = read_roles(text, at, source, keys)
    cells = {k: [str(v).strip() for v in table.columns[p]] for k, p in pos.items() if p is not None}
    gpus = [{k: cells[k][i] for k in cells if k != "type"} for i in range(table.n)
            if cells.get("type", [""] * table.n)[i].upper() == "GPU"]
    return {"rocprof_agents": {"gpus": gpus, "source": source}}


# --------------------------------------------------------------------------------------------- JSON

JSON_HINT = "load the results.json that `rocprofv3 --output-format json` wrote."
JSON_BARE = ("the JSON holds kernel times only: collect counters in the same run (rocprofv3 --kernel-trace --pmc "
             "SQ_INSTS_VALU_FMA_F32 … --output-format json -- app).")


def listed(v: object) -> Iterable[object]:
    """A table's records (a list, or a mapping's keys); nothing for null or a scalar."""
    return v if isinstance(v, list | dict) else ()


def handle_text(v: object) -> str:
    """An id as text: ``{"handle": 7}`` or ``7``."""
    if isinstance(v, dict):
        v = v.get("handle")
    return "" if v is None or isinstance(v, (dict, list, bool)) else str(v)


def int_text(v: object) -> str:
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else (v.strip() if isinstance(v, str) else "")


def symbol_names(raw: object) -> dict[str, str]:
    """kernel id → name from ``kernel_symbols`` (a list of records, or a mapping by id)."""
    items = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, list) else ()
    out: dict[str, str] = {}
    for key, s in items:
        if not isinstance(s, dict):
            continue
        kid = handle_text(s.get("kernel_id", key))
        name = next((s[k] for k in ("formatted_kernel_name", "demangled_kernel_name", "kernel_name",
                                    "truncated_kernel_name") if isinstance(s.get(k), str) and s[k].strip()), None)
        if name is not None:
            out.setdefault(kid, name.strip())
    return out


class Store(NamedTuple):
    """Where rocprofv3 stored a run's records, as :func:`of_records` speaks of it."""

    times: tuple[str, str]  #: the start and end timestamps' names (warnings name them)
    where_empty: str  #: after "no kernel dispatch, counter or copy records": where they would be
    hint: str  #: what to do where there is none
    bare: str  #: what to do where no dispatch has a counter


@register_format("rocprof-v3-json", "rocprofv3 --output-format json (rocprofiler-sdk-tool): kernel dispatches with "
                 "their times and counters, copies", lambda head, name: '"rocprofiler-sdk-tool"' in head, priority=25,
                 role="either")
def parse_json(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """One row per kernel dispatch (and per copy); see the module docstring."""
    from .rocprofv3_decode import records

    check_binary(data, source)
    marks = Marks([], {})  # ROCTx ranges, filled by the reader that reads the file
    got = records(data, marks)  # the compiled decoder; None: read with the stdlib (its messages are the reference)
    got = got if got is not None else json_records(data, source, marks)
    w = of_records("rocprof-v3-json", got, source, context, JSON_STORE)
    return with_ranges(w, [*got[0].values(), *got[1]], marks, source)


#: how rocprofv3's JSON stores the records (:class:`Store`)
JSON_STORE = Store(("start_timestamp", "end_timestamp"), " (buffer_records.kernel_dispatch, callback_records."
                   "counter_collection, buffer_records.memory_copy are empty or absent)",
                   "profile with `rocprofv3 --kernel-trace --output-format json -- app`.", JSON_BARE)


def of_records(fmt: str, got: Records, source: str, context: dict[str, Any] | None, store: Store) -> Workload:
    """The workload of rocprofv3's dispatches and copies however they were stored (JSON, the rocpd database)."""
    rows, copies, gpu_names = got
    if not rows and not copies:
        raise InputError(where=source, text=f"no kernel dispatch, counter or copy records{store.where_empty}.",
                         hint=store.hint)
    keys = list(rows)
    ids = np.array([k[1] for k in keys], dtype=object)
    names = np.array([rows[k]["name"] for k in keys], dtype=object)
    gpus = np.array([rows[k]["gpu"] for k in keys], dtype=object)
    plan, mats, problems = _json_counters([rows[k]["counters"] for k in keys], ids)

    def get(name: str) -> np.ndarray | None:
        where = plan.plan(name)
        if where is None:
            return None
        return np.sum([mats[i] for i in where], axis=0) if len(where) > 1 else mats[where[0]]

    times = tuple(np.array([rows[k].get(r, "") for k in keys], dtype=object) for r in ("start", "end"))
    w = finish(fmt, source, context, ids, names, gpus, get, times, store.times, [], problems, bare=store.bare)
    products = {v for g, v in gpu_names.items() if g in set(gpus)}
    meta = {**w.meta, "profiler": "rocprofv3"}
    device = w.device
    if len(products) == 1:
        product, arch = next(iter(products))
        device = device or product or None
        if arch:
            meta["arch"] = arch
    w = replace(w, device=device, meta=meta)
    frame, warn = _json_copies(copies, source, store.times)
    return with_rows(w, frame, warn)


#: one dispatch of the JSON: ``name``, ``gpu``, ``start``, ``end`` (text), ``counters`` (name -> value summed)
Row = dict[str, Any]
#: ``(rows by (process, dispatch id), copies, GPU names by agent label)``
Records = tuple[dict[tuple[str, str], Row], list[dict[str, Any]], dict[str, tuple[str, str]]]


def json_records(data: bytes, source: str, marks: Marks) -> Records:
    """Rows by (process, dispatch id), copies and GPU names of every process record, read with the stdlib; their
    ROCTx ranges into ``marks``."""
    doc = load_json(data, source, JSON_HINT)
    tools = doc.get("rocprofiler-sdk-tool") if isinstance(doc, dict) else None
    tools = [tools] if isinstance(tools, dict) else tools
    if not isinstance(tools, list) or not any(isinstance(t, dict) for t in tools):
        raise InputError(where=source, expected='a "rocprofiler-sdk-tool" list of process records',
                         found=type(tools).__name__, hint=JSON_HINT)
    rows: dict[tuple[str, str], Row] = {}  # (process, dispatch id) -> row
    copies: list[dict[str, Any]] = []
    gpu_names: dict[str, tuple[str, str]] = {}
    for p, tool in enumerate(t for t in tools if isinstance(t, dict)):
        _tool_records(str(p), tool, rows, copies, gpu_names)
    wanted = calls_of((*rows.values(), *copies))
    for p, tool in enumerate(t for t in tools if isinstance(t, dict)):
        json_marks(str(p), tool.get("buffer_records"), tool.get("strings"), wanted, marks)
    if not rows and not copies:
        refuse_api_json(tools, source)  # host API records only: refused by name
    return rows, copies, gpu_names


def _tool_records(p: str, tool: dict[str, Any], rows: dict[tuple[str, str], Row], copies: list[dict[str, Any]],
                  gpu_names: dict[str, tuple[str, str]]) -> None:
    """One process record's dispatches (into ``rows`` by (process, dispatch id): name, agent, times, counters
    summed), copies and GPU names."""
    agents = {handle_text(a.get("id")): a for a in listed(tool.get("agents")) if isinstance(a, dict)}
    symbols = symbol_names(tool.get("kernel_symbols"))
    counters = {handle_text(c.get("id")): str(c.get("name", "")).strip() for c in listed(tool.get("counters"))
                if isinstance(c, dict)}
    buffers = b if isinstance(b := tool.get("buffer_records"), dict) else {}
    callbacks = c if isinstance(c := tool.get("callback_records"), dict) else {}
    marked = buffers.get("marker_api") not in (None, [])  # as the compiled reader: marker records are present
    labels: dict[str, str] = {}  # agent handle -> label, worked out once per agent

    def row(info: object) -> Row | None:
        if not isinstance(info, dict) or not int_text(info.get("dispatch_id")):
            return None
        key = (p, int_text(info["dispatch_id"]))
        r = rows.get(key)
        if r is None:
            handle = handle_text(info.get("agent_id"))
            if handle not in labels:
                agent = agents.get(handle, {})
                labels[handle] = agent_label(agent, handle)
                if agent.get("product_name") or agent.get("name"):
                    gpu_names[labels[handle]] = (str(agent.get("product_name") or "").strip(),
                                                 str(agent.get("name") or ""))
            kid = handle_text(info.get("kernel_id"))
            r = rows[key] = {"counters": {}, "gpu": labels[handle],
                             "name": symbols.get(kid) or (f"kernel {kid}" if kid else "unnamed kernel")}
        return r

    for d in buffers.get("kernel_dispatch", ()) if isinstance(buffers.get("kernel_dispatch"), list) else ():
        r = row(d.get("dispatch_info")) if isinstance(d, dict) else None
        if r is not None:
            r["start"], r["end"] = int_text(d.get("start_timestamp")), int_text(d.get("end_timestamp"))
            if marked:  # launching threads and calls are kept only where ROCTx ranges may use them
                r.update(launched(p, None, d.get("thread_id"), internal(d)))
    for cc in callbacks.get("counter_collection", ()) if isinstance(callbacks.get("counter_collection"), list) else ():
        data_ = cc.get("dispatch_data") if isinstance(cc, dict) else None
        r = row(data_.get("dispatch_info") if isinstance(data_, dict) else None)
        if r is None:
            continue
        for rec in cc.get("records", ()) if isinstance(cc.get("records"), list) else ():
            if isinstance(rec, dict):
                name = counters.get(handle_text(rec.get("counter_id")), "")
                v = rec.get("value")
                if name and isinstance(v, int | float) and not isinstance(v, bool):
                    r["counters"][name] = r["counters"].get(name, 0.0) + float(v)
                elif name:  # present but not a number: -inf marks it bad (NaN means absent)
                    r["counters"][name] = float("-inf")
    for m in buffers.get("memory_copy", ()) if isinstance(buffers.get("memory_copy"), list) else ():
        if isinstance(m, dict):
            src, dst = agents.get(handle_text(m.get("src_agent_id")), {}), agents.get(handle_text(m.get("dst_agent_id")), {})
            copies.append({"src": agent_type(src), "dst": agent_type(dst), "bytes": m.get("bytes"),
                           "start": int_text(m.get("start_timestamp")), "end": int_text(m.get("end_timestamp")),
                           "gpu": agent_label(dst if agent_type(dst) == "gpu" else src, ""),
                           **(launched(p, None, m.get("thread_id"), internal(m)) if marked else {})})


def _json_counters(dicts: list[dict[str, float]], ids: np.ndarray) -> tuple[Counters, dict[int, np.ndarray], Problems]:
    """The dispatches' counters as one column each (NaN where absent); a value that is not a count (the -inf
    mark, negative, infinite) becomes NaN and is recorded."""
    cnames = sorted({c for d in dicts for c in d})
    plan = Counters(cnames)
    mats = {j: np.fromiter((d.get(c, np.nan) for d in dicts), dtype=np.float64, count=len(dicts))
            for j, c in enumerate(cnames)}
    problems = Problems()
    for j, c in enumerate(cnames):
        bad = ~np.isnan(mats[j]) & (~np.isfinite(mats[j]) | (mats[j] < 0))  # present, and not a count
        if bad.any():
            problems.add(c, bad, ids, np.where(np.isneginf(mats[j]), "not a number", mats[j].astype(str)))
        mats[j][bad] = np.nan
    return plan, mats, problems


def agent_type(agent: dict[str, Any]) -> str:
    t = agent.get("type")
    return {1: "cpu", 2: "gpu", "1": "cpu", "2": "gpu"}.get(t, str(t or "").lower().removeprefix("rocprofiler_agent_type_"))


def agent_label(agent: dict[str, Any], handle: str) -> str:
    """``GPU <n>`` by the agent's logical node id (as rocprofv3's CSV names agents), else its handle."""
    for key in ("logical_node_type_id", "logical_node_id", "node_id"):
        v = agent.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return f"{'GPU' if agent_type(agent) == 'gpu' else 'Agent'} {v}"
    return handle


def _json_copies(copies: list[dict[str, Any]], source: str, cols: tuple[str, str]) -> tuple[pd.DataFrame, list[str]]:
    m = len(copies)
    if not m:
        return make_frame({}, 0), []
    size = np.array([float(c["bytes"]) if isinstance(c["bytes"], int | float) and not isinstance(c["bytes"], bool)
                     and 0 <= c["bytes"] < float("inf") else np.nan for c in copies])  # 1e999 decodes to inf
    kind = [(c["src"], c["dst"]) for c in copies]
    host = np.array([set(k) == {"cpu", "gpu"} for k in kind])
    d2d = np.array([k == ("gpu", "gpu") for k in kind])
    names = np.array(["CopyHostToDevice" if k == ("cpu", "gpu") else "CopyDeviceToHost" if k == ("gpu", "cpu")
                      else "CopyDeviceToDevice" if k == ("gpu", "gpu") else "Copy" for k in kind], dtype=object)
    ids = np.array([f"copy {i}" for i in range(m)], dtype=object)
    time_s, warn = durations(np.array([c["start"] for c in copies], dtype=object),
                             np.array([c["end"] for c in copies], dtype=object), ids, names, source, cols)
    with np.errstate(over="ignore"):
        hbm = np.where(d2d, 2 * size, np.where(host, size, np.nan))
    hbm[~np.isfinite(hbm)] = np.nan  # twice a byte count near the float limit is no count either
    unknown = int(np.isnan(hbm).sum())
    if unknown:
        warn.append(f"{source}: {unknown} of {m} copies have no byte count or no known direction: their bytes are "
                    "unknown.")
    columns = {"name": names, "flops": np.zeros(m), "time_s": time_s, "group": np.full(m, "memcpy", dtype=object),
               "source": np.full(m, source, dtype=object), "row": ids, "bytes_hbm": hbm,
               "bytes_pcie": np.where(host, size, np.nan), "gpu": np.array([c["gpu"] for c in copies], dtype=object)}
    return make_frame(columns, m), warn
