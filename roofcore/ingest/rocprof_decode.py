"""rocprof ``--hip-trace`` results.json: its events decoded by a compiled, typed decoder (msgspec).

The fast path of :func:`.rocprof_v1.parse_hiptrace`: ``traceEvents`` decoded in one C pass into structs of the keys
the reader looks at (``ph``, ``name``, ``pid``, ``ts``, ``dur``; in ``args`` ``Name``, ``name``, ``BeginNs``,
``EndNs``, ``dev-id`` and a call's ``args``), everything else skipped, then handed on as the dicts the reader
walks, with the keys the file has (a key's presence is kept: the reader asks for it). Input it does not read
exactly (damaged JSON, values of unexpected JSON types, non-UTF-8 text, no ``traceEvents`` list) returns None: the
caller reads it with the stdlib, whose messages stay the reference.
"""

from __future__ import annotations

import codecs
from typing import Any, TypeVar

import msgspec

_Scalar = int | float | str | None
_Maybe = _Scalar | msgspec.UnsetType
_UNSET = msgspec.UNSET
_T = TypeVar("_T")


class _Args(msgspec.Struct, rename={"dev_id": "dev-id"}, gc=False):
    Name: _Maybe = _UNSET
    name: _Maybe = _UNSET
    BeginNs: _Maybe = _UNSET
    EndNs: _Maybe = _UNSET
    dev_id: _Maybe = _UNSET
    args: _Maybe = _UNSET


class _Event(msgspec.Struct, gc=False):
    ph: _Maybe = _UNSET
    name: _Maybe = _UNSET
    pid: _Maybe = _UNSET
    ts: _Maybe = _UNSET
    dur: _Maybe = _UNSET
    args: _Args | msgspec.UnsetType | None = _UNSET


class _Trace(msgspec.Struct, gc=False):
    traceEvents: list[_Event] | None = None


_DECODER = msgspec.json.Decoder(_Trace)


def decode_whole(decoder: msgspec.json.Decoder[_T], data: bytes) -> _T | None:
    """``data`` (a leading BOM dropped) decoded by ``decoder``, or None where the stdlib reader must read it: text
    that is not UTF-8 (msgspec does not check the strings it skips) or that does not decode to the typed form."""
    body = data[3:] if data[:3] == codecs.BOM_UTF8 else data
    if not body.isascii():
        try:
            bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        return decoder.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None


def hiptrace_events(data: bytes) -> list[dict[str, Any]] | None:
    """The trace's events as dicts of the keys the reader uses, or None where the stdlib must read the file."""
    doc = decode_whole(_DECODER, data)
    events = None if doc is None else doc.traceEvents
    if events is None:
        return None
    out: list[dict[str, Any]] = msgspec.to_builtins(events)
    return out
