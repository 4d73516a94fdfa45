"""rocprofv3 ``--output-format json``: the records the reader needs, decoded by a compiled, typed decoder (msgspec).

The fast path of :func:`.rocprofv3.parse_json`: the document is decoded in one C pass into structs holding only
what the reader uses (per dispatch its times, agent, kernel and dispatch ids; per counter record its counter and
value; per copy its agents, bytes and times; per both their thread and launch call, kept where the process record
has marker records), everything else skipped; the small tables (``agents``, ``counters``, ``kernel_symbols``, and
where there are marker records those records and ``strings``) are decoded as the stdlib would, the API calls by a
typed struct of their own. It fills the same rows, copies and GPU names as
:func:`.rocprofv3._tool_records`, so the workload is the same. Input it does not read exactly (damaged JSON,
values of unexpected JSON types, non-UTF-8 text, nesting beyond ``ROOFCORE_MAX_JSON_DEPTH`` in the tables it
decodes, no dispatch or copy records at all) returns None: the caller reads it with the stdlib, whose messages
stay the reference.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from .. import limits
from ..errors import LimitError
from .rocprof_decode import decode_whole
from .roctx import Call, Marks, calls_of, json_marks, launched

if TYPE_CHECKING:
    from .rocprofv3 import Records, Row

    _RawOrNone = msgspec.Raw | None
else:
    _RawOrNone = msgspec.Raw  # msgspec refuses a union with Raw; an absent key leaves the field None
_Scalar = int | float | str | None


class _Handle(msgspec.Struct, gc=False):
    handle: _Scalar = None


_Id = _Handle | _Scalar


class _Info(msgspec.Struct, gc=False):
    agent_id: _Id = None
    kernel_id: _Id = None
    dispatch_id: _Scalar = None


class _Corr(msgspec.Struct, gc=False):
    internal: _Scalar = None


class _Dispatch(msgspec.Struct, gc=False):
    start_timestamp: _Scalar = None
    end_timestamp: _Scalar = None
    dispatch_info: _Info | None = None
    thread_id: _Scalar = None
    correlation_id: _Corr | None = None


class _Record(msgspec.Struct, gc=False):
    counter_id: _Id = None
    value: _Scalar = None


class _DispatchData(msgspec.Struct, gc=False):
    dispatch_info: _Info | None = None


class _Collection(msgspec.Struct, gc=False):
    dispatch_data: _DispatchData | None = None
    records: list[_Record] | None = None


class _Copy(msgspec.Struct, gc=False):
    src_agent_id: _Id = None
    dst_agent_id: _Id = None
    bytes: _Scalar = None
    start_timestamp: _Scalar = None
    end_timestamp: _Scalar = None
    thread_id: _Scalar = None
    correlation_id: _Corr | None = None


class _Buffers(msgspec.Struct, gc=False):
    kernel_dispatch: list[_Dispatch] | None = None
    memory_copy: list[_Copy] | None = None
    marker_api: _RawOrNone = None  # ROCTx ranges, and where there are some the API calls: decoded only then
    hip_api: _RawOrNone = None
    hsa_api: _RawOrNone = None


class _Callbacks(msgspec.Struct, gc=False):
    counter_collection: list[_Collection] | None = None


class _Tool(msgspec.Struct, gc=False):
    agents: _RawOrNone = None
    counters: _RawOrNone = None
    kernel_symbols: _RawOrNone = None
    buffer_records: _Buffers | None = None
    callback_records: _Callbacks | None = None
    strings: _RawOrNone = None


class _Doc(msgspec.Struct, rename={"tools": "rocprofiler-sdk-tool"}):
    tools: list[_Tool] | _Tool | None = None


_DECODER = msgspec.json.Decoder(_Doc)
_ANY = msgspec.json.Decoder()


class _Skip(Exception):
    """Read it with the stdlib instead."""


def records(data: bytes, marks: Marks | None = None) -> Records | None:
    """``(rows, copies, gpu_names)`` as :func:`.rocprofv3._tool_records` fills them for every process record (their
    ROCTx ranges into ``marks``), or None where the stdlib reader must read the file."""
    from .rocprofv3 import agent_label, handle_text, int_text, listed, symbol_names

    doc = decode_whole(_DECODER, data)
    if doc is None:
        return None
    tools = doc.tools
    tools = [tools] if isinstance(tools, _Tool) else tools
    if not tools:
        return None
    rows: dict[tuple[str, str], Row] = {}
    copies: list[dict[str, Any]] = []
    gpu_names: dict[str, tuple[str, str]] = {}
    try:
        for p, tool in enumerate(tools):
            agents = {handle_text(a.get("id")): a for a in listed(_table(tool.agents)) if isinstance(a, dict)}
            symbols = symbol_names(_table(tool.kernel_symbols))
            counters = {handle_text(c.get("id")): str(c.get("name", "")).strip() for c in listed(_table(tool.counters))
                        if isinstance(c, dict)}
            ids: _Ids = (agents, symbols, counters, {}, rows, gpu_names, str(p), handle_text, int_text, agent_label)
            _dispatches(tool, ids)
            _copies(str(p), tool, agents, copies, handle_text, int_text, agent_label)
        if not rows and not copies:
            return None
        _marks(tools, rows, copies, marks if marks is not None else Marks([], {}))
    except _Skip:
        return None
    return rows, copies, gpu_names


class _Api(msgspec.Struct, gc=False):
    thread_id: _Scalar = None
    correlation_id: _Corr | None = None
    start_timestamp: _Scalar = None
    end_timestamp: _Scalar = None


_API_DECODER = msgspec.json.Decoder(list[_Api] | None)


def _api_calls(b: _Buffers) -> list[Call]:
    """The HIP and HSA calls of a process record (read only where it has ROCTx ranges), typed: of a read of 44,000
    dispatches with as many calls, the ranges' work took 0.18 s so, 0.43 s with the calls decoded as dicts."""
    out: list[Call] = []
    for raw in (b.hip_api, b.hsa_api):
        try:
            calls = _API_DECODER.decode(raw) if raw is not None else None
        except msgspec.DecodeError:  # a call of an unexpected shape: the stdlib reader reads the file
            raise _Skip from None
        out.extend((c.correlation_id.internal if c.correlation_id else None, c.thread_id, c.start_timestamp,
                    c.end_timestamp) for c in calls or ())
    return out


def _marked(tool: _Tool) -> bool:
    """Whether a process record holds marker records (ROCTx): only then are launching threads and calls kept."""
    raw = tool.buffer_records.marker_api if tool.buffer_records else None
    return raw is not None and (len(raw) > 16 or bytes(raw).strip() not in (b"[]", b"null"))  # (no copy of a long one)


def _marks(tools: list[_Tool], rows: dict[tuple[str, str], Row], copies: list[dict[str, Any]], marks: Marks) -> None:
    """Every process record's ROCTx ranges (:func:`.roctx.json_marks`), the tables they need decoded as the stdlib
    would, and only where there are marker records."""
    wanted = calls_of((*rows.values(), *copies))
    found = Marks([], {})
    for p, tool in enumerate(tools):
        b = tool.buffer_records
        if b is None or b.marker_api is None:
            continue
        json_marks(str(p), {"marker_api": _table(b.marker_api)}, _table(tool.strings), wanted, found,
                   functools.partial(_api_calls, b))
    marks.ranges.extend(found.ranges)
    marks.calls.update(found.calls)


def _table(raw: msgspec.Raw | None) -> object:
    """A small table decoded as the stdlib would (nesting within the depth limit); None where missing."""
    if raw is None:
        return None
    text = bytes(raw)
    try:
        limits.check_json_depth(text, "")
    except LimitError:
        raise _Skip from None
    try:
        return _ANY.decode(text)
    except (msgspec.DecodeError, RecursionError):  # a number beyond a float (the stdlib reads 1e999 as infinity)
        raise _Skip from None


def _hid(v: object) -> str:
    """:func:`.rocprofv3._handle` of a decoded id."""
    h = v.handle if type(v) is _Handle else v
    return "" if h is None else str(h)


#: what a tool's dispatches are read with: its agents, kernel names and counter names by id, agent labels (filled
#: as found), the rows and GPU names filled, the process, and rocprofv3's handle_text, int_text and agent_label
_Ids = tuple[dict[str, dict[str, Any]], dict[str, str], dict[str, str], dict[str, str], dict[tuple[str, str], "Row"],
             dict[str, tuple[str, str]], str, Callable[[object], str], Callable[[object], str],
             Callable[[dict[str, Any], str], str]]


def _dispatches(tool: _Tool, ids: _Ids) -> None:
    """Rows by (process, dispatch id): name, agent label, times, counters summed (as the stdlib reader)."""
    agents, symbols, counters, labels, rows, gpu_names, p, _, int_text, agent_label = ids

    def row(info: _Info | None) -> Row | None:
        if info is None:
            return None
        did = info.dispatch_id
        did = str(did) if type(did) is int else int_text(did)
        if not did:
            return None
        key = (p, did)
        r = rows.get(key)
        if r is None:
            r = rows[key] = new(info)
        return r

    def new(info: _Info) -> Row:
        handle = _hid(info.agent_id)
        label = labels.get(handle)
        if label is None:
            agent = agents.get(handle, {})
            label = labels[handle] = agent_label(agent, handle)
            if agent.get("product_name") or agent.get("name"):
                gpu_names[label] = (str(agent.get("product_name") or "").strip(), str(agent.get("name") or ""))
        kid = _hid(info.kernel_id)
        name = names.get(kid)
        if name is None:
            name = names[kid] = symbols.get(kid) or (f"kernel {kid}" if kid else "unnamed kernel")
        return {"counters": {}, "gpu": label, "name": name}

    names: dict[str, str] = {}
    buffers, callbacks = tool.buffer_records, tool.callback_records
    marked = _marked(tool)
    for d in (buffers.kernel_dispatch or ()) if buffers else ():
        r = row(d.dispatch_info)
        if r is not None:
            s, e = d.start_timestamp, d.end_timestamp
            r["start"] = str(s) if type(s) is int else int_text(s)
            r["end"] = str(e) if type(e) is int else int_text(e)
            if marked:
                r.update(launched(p, None, d.thread_id, d.correlation_id.internal if d.correlation_id else None))
    for cc in (callbacks.counter_collection or ()) if callbacks else ():
        r = row(cc.dispatch_data.dispatch_info if cc.dispatch_data is not None else None)
        if r is None:
            continue
        into = r["counters"]
        for rec in cc.records or ():
            name = counters.get(_hid(rec.counter_id), "")
            v = rec.value
            if name and isinstance(v, int | float) and type(v) in (int, float):
                into[name] = into.get(name, 0.0) + float(v)
            elif name:  # present but not a number: -inf marks it bad (NaN means absent)
                into[name] = float("-inf")


def _copies(p: str, tool: _Tool, agents: dict[str, dict[str, Any]], copies: list[dict[str, Any]],
            _handle: Callable[[object], str], _int_text: Callable[[object], str],
            _agent_label: Callable[[dict[str, Any], str], str]) -> None:
    from .rocprofv3 import agent_type

    buffers = tool.buffer_records
    marked = _marked(tool)
    for m in (buffers.memory_copy or ()) if buffers else ():
        src, dst = agents.get(_hid(m.src_agent_id), {}), agents.get(_hid(m.dst_agent_id), {})
        copies.append({"src": agent_type(src), "dst": agent_type(dst), "bytes": m.bytes,
                       "start": _int_text(m.start_timestamp), "end": _int_text(m.end_timestamp),
                       "gpu": _agent_label(dst if agent_type(dst) == "gpu" else src, ""),
                       **(launched(p, None, m.thread_id, m.correlation_id.internal if m.correlation_id else None)
                          if marked else {})})
