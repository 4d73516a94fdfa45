"""Reading a Kineto trace's events with a compiled, typed decoder (msgspec), piece by piece (docs/formats.md, "PyTorch profiler traces").

The fast path of :func:`.kineto_events.scan`, filling the same :class:`.kineto_events.Scan`. The events array is
cut into pieces of half a MB at ``}, {`` between two events and each piece is decoded by ``msgspec.json`` into
:class:`_Event` structs holding only the fields the analysis reads (``ph``, ``cat``, ``name``, ``ts``, ``dur``,
``pid``, ``tid`` and a few ``args``; an op's recorded inputs kept as raw JSON and decoded once per distinct
signature), then bucketed by category and let go: memory stays near the events kept, a mapped file's pages are
released once read and a ``.gz`` input is decompressed as a stream.

A cut is right when its piece decodes: a ``}, {`` inside a string leaves the piece's last string open and one
inside an event leaves an object open, so a piece that decodes ends after a whole event. Input this path does
not read exactly as the stdlib scanner would (damaged or truncated JSON, values of unexpected JSON types, entries
that are no objects, NaN literals, numbers beyond a float) raises :class:`Fallback`: the caller reads it again
with the scanner, whose messages and partial reads stay the reference. Values nested beyond
``ROOFCORE_MAX_JSON_DEPTH`` are refused where the analysis reads them (the top-level keys, an op's recorded
inputs, a CUPTI range's counters) and skipped by the decoder elsewhere (it stops at Python's recursion limit).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Container, Iterator
from typing import TYPE_CHECKING, Any, cast

import msgspec

from .. import limits
from ..errors import LimitError
from .kineto_events import (
    CATS,
    COMM_ARGS,
    K_CPUOP,
    K_MEMSET,
    K_RUNTIME,
    MARKS,
    MODULE_PREFIX,
    SCAN,
    Scan,
    signature,
)

if TYPE_CHECKING:
    import numpy as np

#: the bytes of one decoded piece: per-call costs amortised, and few structs alive at once (a 1M-event trace's peak
#: memory: 4 MB pieces 476 MB, 512 kB 401 MB; its time the same)
PIECE = 1 << 19
#: gzip input: decompressed bytes asked for before the first cut is looked for
_HEAD_MAX = 1 << 26

_Scalar = int | float | str | None
_SIG_KEYS = ("Input Dims", "Input type", "Concrete Inputs", *COMM_ARGS)
#: the arrays a decoded scan carries (Scan.arrays): ops' and launches' pid, tid (int64, where every one is an
#: integer), ts, ops' dur (float64) and launches' correlation (int64)
ARRAYS = ("ops_pid", "ops_tid", "ops_ts", "ops_dur", "rt_pid", "rt_tid", "rt_ts", "rt_corr")
_SPLIT = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")
_END = re.compile(rb"\}[ \t\r\n]*\]")
_WS = re.compile(r"[ \t\r\n]*")
_BLANK = re.compile(rb"[ \t\r\n]*")


class Fallback(Exception):
    """The input is not one this path reads exactly; read it with the stdlib scanner."""


_Args = msgspec.defstruct(
    "_Args",
    [("corr", _Scalar, None), ("ext", _Scalar | msgspec.UnsetType, msgspec.UNSET), ("ext_lc", _Scalar, None),
     ("device", _Scalar, None), ("nbytes", _Scalar, None),
     *((f"s{k}", msgspec.Raw, None) for k in range(len(_SIG_KEYS)))],
    rename={"corr": "correlation", "ext": "External id", "ext_lc": "external id", "device": "device",
            "nbytes": "bytes", **{f"s{k}": key for k, key in enumerate(_SIG_KEYS)}},
    gc=False)


def _raws(a: object) -> tuple[msgspec.Raw | None, ...]:
    """An op's raw recorded inputs (and a collective's extra args), in :data:`_SIG_KEYS`' order."""
    return tuple(getattr(a, f"s{k}") for k in range(len(_SIG_KEYS)))


class _Event(msgspec.Struct, gc=False):
    """The fields of a trace event the analysis reads."""

    ph: _Scalar = None
    cat: _Scalar = None
    name: _Scalar = None
    ts: _Scalar = None
    dur: _Scalar = None
    pid: _Scalar = None
    tid: _Scalar = None
    args: _Args | None = None  # type: ignore[valid-type]  # made by defstruct: no static type


class _RawArgs(msgspec.Struct, gc=False):
    """An event's category and raw ``args`` (CUPTI ranges keep all their counters)."""

    cat: _Scalar = None
    args: msgspec.Raw = None  # type: ignore[assignment]  # msgspec: Raw | None is no decodable type


_EVENTS = msgspec.json.Decoder(list[_Event])
_RAW_EVENTS = msgspec.json.Decoder(list[_RawArgs])
_ANY = msgspec.json.Decoder()


class Input:
    """The input as one growing buffer: a whole file (bytes or a map, pages released as read) or decompressed
    pieces appended as needed and dropped once decoded."""

    def __init__(self, data: bytes, chunks: Iterator[bytes | memoryview] | None) -> None:
        self.chunks = chunks
        self.buf: bytes | bytearray = data if chunks is None else bytearray()
        self.final = chunks is None
        self.base = 0  # bytes dropped before buf[0] (gzip)

    def more(self) -> bool:
        """Append the next piece; False at the end."""
        if self.final or self.chunks is None:  # no chunks: final from the start
            return False
        piece = next(self.chunks, None)
        if piece is None:
            self.final = True
            return False
        limits.tick()
        self.buf += piece
        return True

    def drop(self, upto: int) -> int:
        """Let go of ``buf[:upto]``; returns the new position of ``upto``."""
        if self.chunks is None:
            from .. import filemap

            filemap.release(self.buf, 0, upto)
            return upto
        assert isinstance(self.buf, bytearray)  # chunks: the buffer grows (__init__)
        del self.buf[:upto]
        self.base += upto
        return 0


def scan(data: bytes, chunks: Iterator[bytes | memoryview] | None, source: str, costed: Container[str] = ()
         ) -> Scan:
    """The events of a trace (:class:`.kineto_events.Scan`) from ``data`` (bytes or a map) or, where ``chunks``
    is given, from its decompressed pieces; :class:`Fallback` where the scanner must read it."""
    src = Input(data, chunks)
    out = Scan()
    i, bare = _head(src, out)
    out.seen_events = True
    b = _Bucket(out, costed)
    i = _events(src, i, b)
    _tail(src, i, bare, out)
    b.finish()
    return out


def _value(text: bytes) -> Any:
    """A raw value the events' decode skipped over, decoded now; :class:`Fallback` where msgspec reads it otherwise
    than the stdlib would (a number beyond a float: the stdlib reads ``1e999`` as infinity)."""
    try:
        return _ANY.decode(text)
    except (msgspec.DecodeError, RecursionError):
        raise Fallback from None


def _depth(text: bytes) -> None:
    """Nesting beyond ``ROOFCORE_MAX_JSON_DEPTH`` in a value the analysis reads: the scanner says so."""
    try:
        limits.check_json_depth(text, "")
    except LimitError:
        raise Fallback from None


# --------------------------------------------------------------------------------------------- head and tail


def _ws(s: str, i: int) -> int:
    """The position after the blanks at ``i`` (:data:`_WS` matches everywhere)."""
    m = _WS.match(s, i)
    return m.end() if m else i


def _text(raw: bytes, final: bool) -> str:
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(raw, final=final)
    except UnicodeDecodeError:
        raise Fallback from None


def _head(src: Input, out: Scan) -> tuple[int, bool]:
    """The top-level keys before ``traceEvents`` into ``out.top``; returns the byte position just after the
    events array's ``[`` and whether the trace is a bare array."""
    want = 1 << 12
    while True:
        while len(src.buf) < want and src.more():
            pass
        raw = bytes(src.buf[:want])
        final = src.final and len(raw) >= len(src.buf)
        bom = 3 if raw.startswith(codecs.BOM_UTF8) else 0
        try:
            found = _parse_head(_text(raw[bom:], final), out)
        except (StopIteration, json.JSONDecodeError, IndexError, RecursionError):
            found = None
        if found is not None:
            text, at, bare = found
            _depth(raw[bom:bom + len(text[:at].encode())])
            return bom + len(text[:at].encode()), bare
        if final or want >= _HEAD_MAX:
            raise Fallback
        want *= 4


def _parse_head(s: str, out: Scan) -> tuple[str, int, bool] | None:
    """``(s, position after "[", bare)``, or None where ``s`` ends first; :class:`Fallback` for anything but an
    object holding ``traceEvents`` (or a bare array)."""
    i = _ws(s, 0)
    if i < len(s) and s[i] == "[":
        return s, i + 1, True
    if i >= len(s) or s[i] != "{":
        raise Fallback
    top: dict[str, object] = {}
    i = _ws(s, i + 1)
    while True:
        if i >= len(s):
            return None
        if s[i] != '"':
            raise Fallback
        key, i = SCAN(s, i)
        i = _ws(s, i)
        if s[i] != ":":
            raise Fallback
        i = _ws(s, i + 1)
        if key == "traceEvents":
            if s[i] != "[":
                raise Fallback
            out.top.update(top)
            return s, i + 1, False
        top[key], i = SCAN(s, i)
        if i >= len(s):
            return None
        i = _ws(s, i)
        if i >= len(s):
            return None
        if s[i] != ",":
            raise Fallback
        i = _ws(s, i + 1)


def _tail(src: Input, i: int, bare: bool, out: Scan) -> None:
    """What follows the events array: nothing (a bare array) or the object's other keys, then its end."""
    while src.more():
        pass
    raw = bytes(src.buf[i:])
    _depth(raw)
    s = _text(raw, True)
    j = _ws(s, 0)
    try:
        if not bare:
            while s[j] == ",":
                j = _ws(s, j + 1)
                key, j = SCAN(s, j)
                j = _ws(s, j)
                if s[j] != ":" or key == "traceEvents" or key in out.top:
                    raise Fallback
                out.top[key], j = SCAN(s, _ws(s, j + 1))
                j = _ws(s, j)
            if s[j] != "}":
                raise Fallback
            j = _ws(s, j + 1)
    except (StopIteration, json.JSONDecodeError, IndexError, RecursionError):
        raise Fallback from None
    if j < len(s):
        raise Fallback


# --------------------------------------------------------------------------------------------- events


def _events(src: Input, i: int, b: _Bucket) -> int:
    """Decode the events from byte ``i`` (just after ``[``) piece by piece; returns the position after ``]``."""
    while True:
        while len(src.buf) - i < 64 and src.more():
            pass
        blank = _BLANK.match(src.buf, i)
        j = blank.end() if blank else i
        if j < len(src.buf):
            break
        if src.final:
            raise Fallback
    if src.buf[j:j + 1] == b"]":
        return j + 1
    i = j
    while True:
        m = _SPLIT.search(src.buf, i + PIECE)
        while m is None and src.more():
            m = _SPLIT.search(src.buf, i + PIECE)
        if m is None:
            return _last(src, i, b)
        for _ in range(4):  # a cut inside an event (a list of objects in its args): take the next one as well
            if b.decode(src.buf, i, m.start() + 1):
                break
            nxt = _SPLIT.search(src.buf, m.end())
            while nxt is None and src.more():
                nxt = _SPLIT.search(src.buf, m.end())
            if nxt is None:
                return _last(src, i, b)
            m = nxt
        else:
            raise Fallback
        i = src.drop(m.end() - 1)


def _last(src: Input, i: int, b: _Bucket) -> int:
    """The last piece: up to the ``}`` before the array's ``]`` (the first such end whose piece decodes)."""
    for tries, m in enumerate(_END.finditer(src.buf, i)):
        if tries >= 8:
            break
        if b.decode(src.buf, i, m.start() + 1):
            return m.end()
    raise Fallback


class _Bucket:
    """Decoded pieces into the scan's flat lists (the same tuples :func:`.kineto_events.scan` makes)."""

    def __init__(self, out: Scan, costed: Container[str]) -> None:
        self.out = out
        self.costed = costed
        self.is_costed: dict[object, bool] = {}
        self.names: dict[str, str] = {}
        self.memo: dict[str, int] = {}
        self.raw_memo: dict[tuple[object, ...], int] = {}
        self.cols: dict[str, list[np.ndarray] | None] = {k: [] for k in ARRAYS}

    def finish(self) -> None:
        """The arrays of every piece joined (:data:`ARRAYS`; one whose values were not all numbers is left out)."""
        import numpy as np

        self.out.arrays = {k: np.concatenate(v) for k, v in self.cols.items() if v}

    def _arrays(self, o0: int, r0: int) -> None:
        """The numbers of this piece's ops and launches as arrays, made while their values are in the cache (the
        same values :mod:`.kineto_build` would make of the tuples: :func:`.kineto_link._numbers`, ``_ints``)."""
        from .kineto_link import as_int64, numbers, transpose

        out, cols = self.out, self.cols
        for rows, first, names in ((out.ops, o0, ("ops_pid", "ops_tid", "ops_ts", "ops_dur")),
                                   (out.runtime, r0, ("rt_pid", "rt_tid", "rt_ts", "rt_corr"))):
            if len(rows) == first:
                continue
            pid, tid, ts, last = transpose(rows[first:], 4)
            got = (as_int64(pid), as_int64(tid), numbers(ts, "ts", None, negative_ok=True),
                   as_int64(last) if names[3] == "rt_corr" else numbers(last, "dur", None))
            for name, arr in zip(names, got, strict=True):
                col = cols[name]
                if arr is None:
                    cols[name] = None
                elif col is not None:
                    col.append(arr)

    def decode(self, buf: bytes | bytearray, a: int, z: int) -> bool:
        """Bucket the events in ``buf[a:z]`` (whole events); False where that text does not decode."""
        piece = b"".join((b"[", buf[a:z], b"]"))
        try:
            evs = _EVENTS.decode(piece)
        except UnicodeDecodeError:  # msgspec 0.18 raises it for invalid UTF-8 in a field it reads: the scanner says it
            raise Fallback from None
        except (msgspec.DecodeError, RecursionError):
            return False
        if not piece.isascii():  # the decoder skips the strings it does not read without checking them
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError:
                raise Fallback from None
        limits.tick()
        self._bucket(evs, piece)
        return True

    def _bucket(self, evs: list[_Event], piece: bytes) -> None:
        out, cats, names = self.out, CATS, self.names
        intern = names.setdefault
        gpu, runtime, ops, marks = out.gpu.append, out.runtime.append, out.ops.append, out.marks.append
        idx = out.events
        o0, r0 = len(out.ops), len(out.runtime)
        ranges = []
        string_times = 0
        for e in evs:
            c = cats.get(e.cat)
            nm = e.name
            if nm.__class__ is str and (c is not None or e.cat in MARKS):  # one string per distinct name kept
                nm = intern(nm, nm)
            if c is None:
                cat = e.cat
                if cat in MARKS and e.ph == "X":
                    kind = MARKS[cat]
                    if kind != "module" or (nm.__class__ is str and nm.startswith(MODULE_PREFIX)):
                        marks((kind, e.pid, e.tid, e.ts, e.dur, nm))
                if e.ts.__class__ is str:
                    string_times += 1
            elif c == K_CPUOP:
                a = e.args
                if a is None:
                    ops((e.pid, e.tid, e.ts, e.dur, nm, None, -1, False))
                else:
                    ext = a.ext
                    shapes = a.s0 is not None
                    ops((e.pid, e.tid, e.ts, e.dur, nm, None if ext is msgspec.UNSET else ext,
                         self._signature(nm, a) if shapes else -1, shapes))
            elif c == K_RUNTIME:
                a = e.args
                if a is not None and a.corr is not None:
                    runtime((e.pid, e.tid, e.ts, a.corr, nm))
            elif c <= K_MEMSET:
                if e.ph == "X":
                    a = e.args
                    if a is None:
                        gpu((idx, c, nm, e.ts, e.dur, None, None, None, None))
                    else:
                        ext = a.ext
                        gpu((idx, c, nm, e.ts, e.dur, a.corr, a.ext_lc if ext is msgspec.UNSET else ext, a.device,
                             a.nbytes if c else None))
            else:
                ranges.append((idx, nm))
            idx += 1
        out.events = idx
        out.string_times += string_times
        self._arrays(o0, r0)
        if ranges:
            self._ranges(ranges, piece, idx - len(evs))

    def _signature(self, nm: object, a: Any) -> int:
        """The op's signature index (:func:`.kineto_events._signature`), decoded once per distinct raw text;
        ``a``: an ``_Args`` struct (made by ``msgspec.defstruct``: no static type)."""
        costed = self.is_costed.get(nm)
        if costed is None:
            costed = self.is_costed[nm] = nm.__class__ is str and nm in self.costed
        if not costed:
            return -1
        t, c = a.s1, a.s2
        key: tuple[object, ...] = (nm, bytes(a.s0), None if t is None else bytes(t),
                                   None if c is None else bytes(c))
        if a.s3 is not None:  # a collective: its extra args too
            key += tuple(None if r is None else bytes(r) for r in _raws(a)[3:])
        res = self.raw_memo.get(key)
        if res is None:
            raws = _raws(a)
            args: dict[str, Any] = {}
            for k, r in zip(_SIG_KEYS, raws, strict=True):
                if r is not None:
                    text = bytes(r)
                    _depth(text)
                    args[k] = _value(text)
            name = cast(str, nm)  # costed: a string (is_costed above)
            res = self.raw_memo[key] = signature(name, args, self.memo, self.out.signatures)
        return res

    def _ranges(self, ranges: list[tuple[int, _Scalar]], piece: bytes, first: int) -> None:
        """CUPTI ranges keep every counter of their ``args``: the piece decoded again for those."""
        raw = _RAW_EVENTS.decode(piece)
        for idx, nm in ranges:
            r = raw[idx - first].args
            a = {}
            if r is not None:
                text = bytes(r)
                _depth(text)
                a = _value(text)
            self.out.ranges.append((idx, nm, a if type(a) is dict else {}))
