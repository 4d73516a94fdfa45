"""Reading a Kineto trace's events in one pass, without building the whole JSON tree (docs/formats.md).

The text is decoded one window at a time; each event is decoded alone by the stdlib's C scanner and bucketed by
``cat`` into flat lists of tuples (GPU activities, runtime launches, CPU ops, CUPTI ranges), so memory stays near
the file size. Both schemas are read: 2021's capitalised categories (``Kernel``, ``Runtime``, ``Operator``,
``Memcpy``, ``Memset``; ``external id`` in lower case on GPU events) and today's (``kernel``, ``cuda_runtime``,
``cpu_op``, ``gpu_memcpy``, ...). The top-level keys other than ``traceEvents`` are kept as decoded.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Container, Iterator
from typing import TYPE_CHECKING, Any, cast

from .. import limits
from ..errors import InputError

if TYPE_CHECKING:
    import numpy as np

EXPORT_HINT = "export the trace again with prof.export_chrome_trace(path)."

_DECODER = json.JSONDecoder()
#: the stdlib's C scanner (made by JSONDecoder.__init__; typeshed has no stub for it): ``(value, end)`` of the
#: JSON value at a position (StopIteration where none starts)
SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]  # no stub
_WS = re.compile(r"[ \t\n\r]*")
_COMMA = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")

K_KERNEL, K_MEMCPY, K_MEMSET, K_RUNTIME, K_CPUOP, K_RANGE = range(6)
CATS: dict[object, int] = {  # any JSON value looked up (a string that is no category, a number: None)
    "kernel": K_KERNEL, "Kernel": K_KERNEL, "gpu_memcpy": K_MEMCPY, "Memcpy": K_MEMCPY,
    "gpu_memset": K_MEMSET, "Memset": K_MEMSET,
    "cuda_runtime": K_RUNTIME, "Runtime": K_RUNTIME, "cuda_driver": K_RUNTIME, "xpu_runtime": K_RUNTIME,
    "privateuse1_runtime": K_RUNTIME, "privateuse1_driver": K_RUNTIME,
    "cpu_op": K_CPUOP, "Operator": K_CPUOP, "operator": K_CPUOP,
    "cuda_profiler_range": K_RANGE,
}
#: the CPU- and GPU-side ranges kept for kernels' ancestry (roofcore.hierarchy), by category: record_function
#: annotations (ProfilerStep#N), their GPU-side copies, and nn.Module ranges (python_function events named
#: ``nn.Module: ...``, profiled with_modules / with_stack)
MARKS = {"user_annotation": "annotation", "gpu_user_annotation": "gpu_annotation", "python_function": "module"}
MODULE_PREFIX = "nn.Module: "
#: an op's signature (:attr:`Scan.signatures`): name, Input Dims, Input type, Concrete Inputs (as decoded)
#: and a collective's extra args ((key, value) pairs)
Signature = tuple[str, Any, Any, Any, tuple[tuple[str, Any], ...]]


class _Truncated(Exception):  # internal control flow: the text ends inside a value
    def __init__(self, pos: int) -> None:
        self.pos = pos


class _Text:
    """The input decoded to text one window at a time, so the whole file never exists as one string.

    ``s`` is the current window; :meth:`more` drops what was consumed and appends the next decoded piece.
    ``offset`` / ``lines`` count the characters and newlines dropped so far (for error positions).
    """

    def __init__(self, chunks: Iterator[bytes | memoryview], source: str) -> None:
        self.chunks = chunks
        self.source = source
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self.s = ""
        self.final = False
        self.offset = 0
        self.lines = 0
        self.col0 = 0  # column (0-based) of s[0] on its line
        self.bytes_read = 0
        self.depth = limits.JsonDepth(source)  # ROOFCORE_MAX_JSON_DEPTH, checked on each piece before decoding

    def more(self, i: int) -> int:
        """Drop ``s[:i]``, decode the next piece; returns the new position of old ``i`` (0). No-op when final."""
        if self.final:
            return i
        limits.tick()
        piece = next(self.chunks, None)
        if piece is not None:
            self.depth.feed(piece)
        try:
            if piece is None:
                self.final = True
                new = self.decoder.decode(b"", final=True)
            else:
                new = self.decoder.decode(piece)
        except UnicodeDecodeError as e:
            at = self.bytes_read + e.start
            raise InputError(where=self.source, expected="UTF-8 text", found=f"byte 0x{piece[e.start]:02x} at "
                             f"offset {at}" if piece is not None and e.start < len(piece) else "a cut UTF-8 "
                             "character at the end", hint="save the file as UTF-8.") from None
        self.bytes_read += len(piece) if piece is not None else 0
        if i:
            dropped = self.s.count("\n", 0, i)
            self.lines += dropped
            self.col0 = i - (self.s.rfind("\n", 0, i) + 1) if dropped else self.col0 + i
            self.offset += i
        self.s = self.s[i:] + new
        return 0

    def error(self, pos: int, msg: str) -> InputError:
        s = self.s
        line = self.lines + s.count("\n", 0, pos) + 1
        nl = s.rfind("\n", 0, pos)
        col = pos - (nl + 1) + 1 if nl >= 0 else self.col0 + pos + 1
        where = f"{self.source}: line {line}, column {col}"
        return InputError(where=where, text=f"not valid JSON: {msg}.", hint=EXPORT_HINT)


class Scan:
    """Flat lists of the events the parser needs, filled in one pass over the text."""

    def __init__(self) -> None:
        #: (index, kind, name, ts, dur, correlation, external id, device, bytes)
        self.gpu: list[tuple[Any, ...]] = []
        self.runtime: list[tuple[Any, ...]] = []  # (pid, tid, ts, correlation, name)
        #: (pid, tid, ts, dur, name, external id, signature index, has shapes)
        self.ops: list[tuple[Any, ...]] = []
        self.ranges: list[tuple[Any, ...]] = []  # (index, name, args)
        #: duration (ph X) ranges of :data:`MARKS`' categories: (kind, pid, tid, ts, dur, name), in file order
        self.marks: list[tuple[Any, ...]] = []
        #: numbers of ``ops`` and ``runtime`` as arrays, where the decoder made them (names: kineto_decode.ARRAYS)
        self.arrays: dict[str, np.ndarray] = {}
        #: distinct (op name, Input Dims, Input type, Concrete Inputs, extra args) of ops with a cost formula, costed once
        self.signatures: list[Signature] = []
        self.top: dict[str, Any] = {}  # JSON values
        self.events = 0
        self.not_objects = 0
        self.truncated_at: int | None = None
        self.seen_events = False
        self.string_times = 0  #: uncategorised events whose ts is a JSON string (rocprof's hip-trace, not Kineto)


def _kind(v: object) -> str:
    return {dict: "a JSON object", list: "a JSON array", str: "a JSON string", bool: "a JSON boolean",
            type(None): "JSON null"}.get(type(v), "a JSON number")


def _value(tx: _Text, i: int) -> tuple[object, int]:
    """One JSON value at ``i`` (reading further windows while it is cut off by the window's end)."""
    scan = SCAN
    while True:
        try:
            value, j = scan(tx.s, i)
            if j < len(tx.s) or tx.final:
                return value, j
            i = tx.more(i)
            continue
        except StopIteration as e:
            pos, msg = e.value, "Expecting value"
        except json.JSONDecodeError as e:
            pos, msg = e.pos, e.msg
        if not tx.final:
            i = tx.more(i)
            continue
        if pos >= len(tx.s.rstrip()) or msg.startswith("Unterminated string"):
            raise _Truncated(tx.offset + pos)
        raise tx.error(pos, msg)


def _blank_end(s: str, i: int) -> int:
    """The position after the blanks at ``i`` (:data:`_WS` matches everywhere)."""
    m = _WS.match(s, i)
    return m.end() if m else i


def _skip_ws(tx: _Text, i: int) -> int:
    """Position of the next non-blank character (reading further windows); ``len(tx.s)`` at the very end."""
    while True:
        i = _blank_end(tx.s, i)
        if i < len(tx.s) or tx.final:
            return i
        i = tx.more(i)


def scan(chunks: Iterator[bytes | memoryview], source: str, costed: Container[str] = ()) -> Scan:
    """The events of a trace (see :class:`Scan`), read from text pieces; ``costed``: CPU op names whose
    recorded inputs are kept (those with a cost formula)."""
    out = Scan()
    tx = _Text(chunks, source)
    i = _skip_ws(tx, 0)
    if i >= len(tx.s):
        raise InputError(where=source, expected="a PyTorch profiler trace (JSON)", found="an empty file",
                         hint=EXPORT_HINT)
    try:
        if tx.s[i] == "[":  # Chrome "JSON Array Format": the events alone
            out.seen_events = True
            i = _scan_events(tx, i + 1, out, costed)
        elif tx.s[i] == "{":
            i = _scan_object(tx, i + 1, out, costed)
        else:
            value, i = _value(tx, i)
            raise InputError(where=f"{source}: $", expected='a JSON object with "traceEvents" (a PyTorch profiler '
                             "trace)", found=_kind(value), hint=EXPORT_HINT)
        i = _skip_ws(tx, i)
        if i < len(tx.s):
            raise tx.error(i, "Extra data")
    except _Truncated as t:
        if not out.events:
            raise InputError(where=source, text=f"the file ends early, at character {t.pos}, before any trace event "
                             "(truncated?).", hint=EXPORT_HINT) from None
        out.truncated_at = t.pos
    return out


def _scan_object(tx: _Text, i: int, out: Scan, costed: Container[str]) -> int:
    """Top-level ``{...}`` after the brace: small values decoded whole, ``traceEvents`` event by event."""
    i = _skip_ws(tx, i)
    if i < len(tx.s) and tx.s[i] == "}":
        return i + 1
    while True:
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if tx.s[i] != '"':
            raise tx.error(i, "Expecting property name enclosed in double quotes")
        key, i = _value(tx, i)
        i = _skip_ws(tx, i)
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if tx.s[i] != ":":
            raise tx.error(i, "Expecting ':' delimiter")
        i = _skip_ws(tx, i + 1)
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if key == "traceEvents" and tx.s[i] == "[":
            out.seen_events = True
            i = _scan_events(tx, i + 1, out, costed)
        else:
            value, i = _value(tx, i)
            if key == "traceEvents":
                raise InputError(where=f"{tx.source}: $.traceEvents", expected="a list of trace events",
                                 found=_kind(value), hint=EXPORT_HINT)
            out.top[cast(str, key)] = value  # a property name: the value at '"' is a string
        i = _skip_ws(tx, i)
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if tx.s[i] == ",":
            i = _skip_ws(tx, i + 1)
            continue
        if tx.s[i] == "}":
            return i + 1
        raise tx.error(i, "Expecting ',' delimiter")


def _scan_events(tx: _Text, i: int, out: Scan, costed: Container[str]) -> int:
    """The events of ``traceEvents`` (``i`` just after ``[``), each decoded alone and bucketed by category.

    The hot loop of the parser: one C-scanner call per event, a few dict look-ups, one tuple appended to a
    flat list; an event cut by the end of the window is decoded again once the next window is read. The rare
    counts (entries that are no object, string times, empty objects) go to ``out`` directly.
    """
    scan, comma, cats = SCAN, _COMMA.match, CATS
    intern = dict[str, str]().setdefault  # one string object per distinct name
    gpu, runtime, ops, ranges = out.gpu.append, out.runtime.append, out.ops.append, out.ranges.append
    signatures = out.signatures
    memo: dict[str, int] = {}
    empty: dict[str, Any] = {}
    idx = out.events
    i = _skip_ws(tx, i)
    s, n = tx.s, len(tx.s)
    if i < n and s[i] == "]":
        return i + 1
    want_value = True
    try:
        while True:
            if want_value:
                try:
                    e, j = scan(s, i)
                    if j >= n and not tx.final:  # may be cut by the window's end (a number): read on, decode again
                        i = tx.more(i)
                        s, n = tx.s, len(tx.s)
                        continue
                    i = j
                except (StopIteration, json.JSONDecodeError) as ex:
                    i = _read_on(tx, i, ex)
                    s, n = tx.s, len(tx.s)
                    continue
                want_value = False
                if type(e) is dict:
                    cat = e.get("cat")
                    c = cats.get(cat) if type(cat) is str else None
                    if c is not None:
                        a = e.get("args")
                        if type(a) is not dict:
                            a = empty
                        nm = e.get("name")
                        if type(nm) is str:
                            nm = intern(nm, nm)
                        if c <= K_MEMSET:
                            if e.get("ph") == "X":
                                gpu((idx, c, nm, e.get("ts"), e.get("dur"), a.get("correlation"),
                                     a.get("External id", a.get("external id")), a.get("device"),
                                     a.get("bytes") if c else None))
                        elif c == K_RUNTIME:
                            corr = a.get("correlation")
                            if corr is not None:
                                runtime((e.get("pid"), e.get("tid"), e.get("ts"), corr, nm))
                        elif c == K_CPUOP:
                            shapes = "Input Dims" in a
                            res = signature(nm, a, memo, signatures) if shapes and type(nm) is str and nm in costed \
                                else -1
                            ops((e.get("pid"), e.get("tid"), e.get("ts"), e.get("dur"), nm, a.get("External id"), res,
                                 shapes))
                        else:
                            ranges((idx, nm, a))
                    else:
                        if type(cat) is str and cat in MARKS and e.get("ph") == "X":
                            _mark(e, cat, out.marks)
                        if type(e.get("ts")) is str:
                            out.string_times += 1
                else:
                    out.not_objects += 1
                idx += 1
            m = comma(s, i)
            if m is not None:
                i = m.end()
                want_value = True
                continue
            i, done = _close(tx, i)
            if done:
                return i
            s, n = tx.s, len(tx.s)
    finally:
        out.events = idx


def _mark(e: dict[str, Any], cat: str, marks: list[tuple[Any, ...]]) -> None:
    """A range of :data:`MARKS` (python_function ones only for nn.Modules) onto ``marks``."""
    kind, nm = MARKS[cat], e.get("name")
    if kind != "module" or (type(nm) is str and nm.startswith(MODULE_PREFIX)):
        marks.append((kind, e.get("pid"), e.get("tid"), e.get("ts"), e.get("dur"), nm))


def _read_on(tx: _Text, i: int, ex: StopIteration | json.JSONDecodeError) -> int:
    """After an event that did not decode: where to decode again once more text is read, or the error (the text
    ends inside the event: truncated)."""
    if not tx.final:
        i = tx.more(i)
        return _blank_end(tx.s, i)
    pos, msg = (ex.value, "Expecting value") if isinstance(ex, StopIteration) else (ex.pos, ex.msg)
    if pos >= len(tx.s.rstrip()) or msg.startswith("Unterminated string"):
        raise _Truncated(tx.offset + pos) from None
    raise tx.error(pos, msg) from None


#: a collective's args kept beside its inputs (roofcore.ingest.kineto_comm.EXTRA_ARGS)
COMM_ARGS = ("Collective name", "Group size", "In msg nelems", "Out msg nelems", "dtype")


def signature(nm: str, a: dict[str, Any], memo: dict[str, int], signatures: list[Signature]) -> int:
    """The index of a CPU op's (name, input dims, types, concrete inputs, extra) in ``signatures``, added once;
    ``extra``: a collective's args beside its inputs (``record_param_comms``: :data:`_COMM_ARGS`), else ()."""
    dims, types, conc = a.get("Input Dims"), a.get("Input type"), a.get("Concrete Inputs")
    extra = tuple((k, a[k]) for k in COMM_ARGS if k in a) if "Collective name" in a else ()
    key = repr((nm, dims, types, conc, extra))
    res = memo.get(key, -2)
    if res == -2:
        signatures.append((nm, dims, types, conc, extra))
        res = memo[key] = len(signatures) - 1
    return res


def _close(tx: _Text, i: int) -> tuple[int, bool]:
    """After an event not followed by a comma: ``(after "]", True)`` at the array's end, ``(i, False)`` once more
    text is read; anything else is an error."""
    i = _blank_end(tx.s, i)
    if i >= len(tx.s):
        if tx.final:
            raise _Truncated(tx.offset + i)
        return tx.more(i), False
    if tx.s[i] == "]":
        return i + 1, True
    raise tx.error(i, "Expecting ',' delimiter")
