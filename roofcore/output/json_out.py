"""The analysis as JSON (the README's contract), the one writer of that document: ASCII-escaped as ``json.dumps``
writes it, the kernels one per line, encoded column-wise and streamed in pieces; as Python values,
:func:`analysis_document` decodes the same text."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from json.encoder import encode_basestring_ascii as _enc
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ..roofline import FLAG_CODES, Flag
from ..wording import flag_cells
from ..wording.cells import STR, Col, Part, esc_json, join_parts, merge_runs, text_of
from .columns import Item, Rows, ahead, distinct, encoded_pieces

if TYPE_CHECKING:
    from ..analyze import Analysis


def _jdict(values: pa.Array | np.ndarray, *, empty_is_null: bool = False) -> Col:
    """JSON strings of a column with few distinct values (devices, precisions, bounds), each encoded once; None,
    NaN and other non-strings are null."""
    codes, uniq = distinct(values)
    enc = [(_enc(x) if isinstance(x, str) and (x or not empty_is_null) else "null") for x in uniq]
    return Col([*enc, "null"], np.where(codes < 0, len(enc), codes))


#: printable ASCII but the quote and the backslash: text that needs no JSON escape
_NEEDS_ESCAPE = '[^ !#-\\[\\]-~]'


def plain(values: pa.Array | np.ndarray, bad: bytes, bad_first: bytes = b"") -> bool:
    """Whether a whole column is Arrow text without nulls, without a byte of ``bad`` and without a value starting
    with one of ``bad_first``: its text is then written as it is (the pieces take it without a copy). Checked on
    the column's bytes in numpy (a UTF-8 byte of a multi-byte character is never ASCII)."""
    if not (isinstance(values, pa.Array) and values.type == STR and not values.null_count):
        return False
    if not len(values):
        return True
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32, count=len(values) + 1, offset=values.offset * 4)
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)[int(offsets[0]):int(offsets[-1])]
    table = np.zeros(256, dtype=bool)
    table[list(bad)] = True
    if table[data].any():
        return False
    starts = offsets[:-1][offsets[:-1] < offsets[1:]] - offsets[0]
    table[:] = False
    table[list(bad_first)] = True
    return not table[data[starts]].any()


#: the bytes a JSON string cannot hold as they are (``json.dumps``'s ASCII escapes): controls, quote, backslash and
#: every byte of a non-ASCII character
_JSON_ESCAPED = bytes([*range(0x20), ord('"'), ord("\\"), *range(0x7F, 0x100)])


def _jdistinct(values: pa.Array | np.ndarray) -> pa.Array:
    """JSON strings of a column of mostly distinct values (names, rows): quoted in Arrow, and only the strings
    that need an escape go through ``json``'s encoder; non-strings are null."""
    try:
        arr = values if isinstance(values, pa.Array) else pa.array(values, STR, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([_enc(x) if isinstance(x, str) else "null" for x in values], STR)
    out = pc.fill_null(join_parts(['"', arr, '"'], len(arr)), "null")
    bad = np.asarray(pc.fill_null(pc.match_substring_regex(arr, _NEEDS_ESCAPE), False).to_numpy(zero_copy_only=False))
    if bad.any():
        fixed = pa.array([_enc(x) for x in arr.filter(pa.array(bad)).to_pylist()], STR)
        out = pc.replace_with_mask(out, pa.array(bad), fixed)
    return out


def _jcode(bit: Flag) -> str:
    return '{"code": ' + _enc(FLAG_CODES[bit]) + ', "message": "'


#: the kernel record's keys in the JSON contract's order (README "JSON output")
KERNEL_KEYS = ("name", "hardware", "group", "count", "precision", "unit", "ceiling", "flops", "bytes", "time_s",
               "intensity", "t_roof_s", "t_serial_s", "attainable_flops_per_s", "bound", "binding_level",
               "achieved_flops_per_s", "efficiency", "pct_peak_compute", "pct_peak_bandwidth", "headroom_s", "flags",
               "source", "row")


#: the keys whose values have few distinct strings (a :class:`Col` of the whole table, encoded once)
_DICT_KEYS = ("hardware", "group", "precision", "unit", "ceiling", "bound", "binding_level", "source")


def _template(rows: Rows, byte_names: list[str], end: str) -> list[Item]:
    """A row's JSON as items: JSON syntax and whole-table :class:`Col` s merged into runs, and for the other values
    what :func:`_rows_json` computes per piece (:meth:`Rows.parts`): ``("num", column, dtype, False, comma)``, ``("text", column)`` (escaped
    per piece), ``("raw", column)`` (text that needs no escape, quoted by the template), ``("flags",)``.
    Numbers followed by a comma carry it (orjson's text is their data), so the next key's separator lacks it."""
    items: list[Item] = []
    comma = False  # whether the previous value carries the comma that ends it

    def key(k: str, first: bool = False) -> None:
        items.append(("{" if first else " " if comma else ", ") + _enc(k) + ": ")

    for k, name in enumerate(KERNEL_KEYS):
        key(name, k == 0)
        comma = False
        if name in _DICT_KEYS:
            items.append(_jdict(rows.cols[name], empty_is_null=name == "ceiling"))
        elif name in ("name", "row"):
            items += ['"', ("raw", name), '"'] if plain(rows.cols[name], _JSON_ESCAPED) else [("text", name)]
        elif name == "flags":
            items += ["[", ("flags",), "]"]
        elif name in ("bytes", "intensity"):  # {"hbm": 1.0, "l2": 2.0}: the last number has no comma
            for j, b in enumerate(byte_names):
                key(b, j == 0)
                comma = j < len(byte_names) - 1
                items.append(("num", f"{name}_{b}", np.float64, False, comma))
            items.append("}" if byte_names else "{}")
            comma = False
        else:
            items.append(("num", name, np.int64 if name == "count" else np.float64, False, True))
            comma = True
    items.append("}" + end)
    return merge_runs(items, rows.n)


def _rows_json(rows: Rows, byte_names: list[str], lo: int, hi: int, end: str = "") -> pa.Array:
    """Rows ``lo:hi`` as JSON objects (each followed by ``end``), keys and nulls of the JSON contract's kernels."""
    template = rows.whole(("json", tuple(byte_names), end), partial(_template, rows, byte_names, end))
    return join_parts(rows.parts(template, lo, hi, partial(_jflags, rows), _jdistinct), hi - lo)


def _jflags(rows: Rows, lo: int, hi: int) -> list[Part]:
    """The flags of rows ``lo:hi``, inside their ``[…]``: ``{"code": …, "message": …}, …``."""
    return flag_cells(rows.flags(esc_json, _jcode, '"}', ", "), lo, hi)[0]


def analysis_json_chunks(analysis: Analysis, extra: Mapping[str, Any] | None = None, *, binary: bool = False,
                         kernels: bool = True) -> Iterator[str | bytes | memoryview]:
    """The analysis JSON (README "JSON output"), in pieces: the one writer of that document, which the command
    line, the app's downloads, the report and the planner all use. Written column-wise, one kernel per line, the
    other keys (:meth:`Analysis.json_fields`, then ``extra``'s) indented as ``json.dumps(indent=1)`` does. Streamed
    so a million kernels never sit in memory as one string; ``binary`` gives the pieces as ASCII bytes (the kernels
    as Arrow's buffers, not copied). ``kernels=False`` leaves the kernel list empty."""
    return encoded_pieces(_json_text(analysis, extra, kernels), binary, "ascii")


def _json_text(analysis: Analysis, extra: Mapping[str, Any] | None, kernels: bool) -> Iterator[str | memoryview]:
    doc = analysis.json_fields()
    if extra:
        doc.update(extra)
    keys = list(doc)
    keys.insert(keys.index("hardware") + 1, "kernels")  # the contract's order: ..., hardware, kernels, summary, ...
    yield "{"
    for i, k in enumerate(keys):
        yield ("\n " if i == 0 else ",\n ") + _enc(k) + ": "
        if k == "kernels":
            yield from _kernel_list(analysis) if kernels else ["[]"]
        else:
            yield json.dumps(doc[k], indent=1, allow_nan=False).replace("\n", "\n ")
    yield "\n}"


def _kernel_list(analysis: Analysis) -> Iterator[str | memoryview]:
    """``[`` the kernel records, one a line, device after device ``]``: the only code that writes them."""
    byte_names = analysis.workload.byte_names

    def pieces() -> Iterator[Callable[[], pa.Array]]:
        for r in analysis.results:
            rows = Rows(analysis._device_table(r, messages=False), r)
            for lo, hi in rows.pieces():
                yield partial(_rows_json, rows, byte_names, lo, hi, ",\n")

    started = False
    for rows in ahead(pieces()):
        yield "[\n" if not started else ",\n"
        yield text_of(rows)[:-2]  # each row ends ",\n": not the last
        started = True
    yield "\n ]" if started else "[]"


def analysis_json(analysis: Analysis, extra: Mapping[str, Any] | None = None) -> str:
    """:func:`analysis_json_chunks` joined into one string."""
    return "".join(str(x, "ascii") if not isinstance(x, str) else x for x in analysis_json_chunks(analysis, extra))


def analysis_document(analysis: Analysis, extra: Mapping[str, Any] | None = None, *,
                      kernels: bool = True) -> dict[str, Any]:
    """The analysis JSON as Python values: :func:`analysis_json_chunks`'s text decoded, so the dict and the file
    are one document (nulls for unknown numbers, the same keys in the same order)."""
    text = b"".join(x for x in analysis_json_chunks(analysis, extra, binary=True, kernels=kernels)
                    if not isinstance(x, str))  # binary: bytes and memoryviews only
    doc: dict[str, Any] = orjson.loads(text)
    return doc
