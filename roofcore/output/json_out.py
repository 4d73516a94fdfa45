"""The analysis as JSON (the README's contract): the same keys and nulls as ``Analysis.to_json()``, ASCII-escaped
as ``json.dumps`` writes it, the kernels one per line, encoded column-wise and streamed in pieces."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from json.encoder import encode_basestring_ascii as _enc

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..roofline import FLAG_CODES, DeviceResult
from .cells import _STR, Col, Part, _esc_json, _join, _raw, _text_of
from .columns import CHUNK_ROWS, _ahead, _distinct, _jnum, _pieces, _values
from .messages import _flag_cells


def _jdict(values, *, empty_is_null: bool = False) -> pa.Array:
    """JSON strings of a column with few distinct values (devices, precisions, bounds), each encoded once; None,
    NaN and other non-strings are null."""
    codes, uniq = _distinct(values)
    enc = [(_enc(x) if isinstance(x, str) and (x or not empty_is_null) else "null") for x in uniq]
    return Col([*enc, "null"], np.where(codes < 0, len(enc), codes)).arrow()


#: printable ASCII but the quote and the backslash: text that needs no JSON escape
_NEEDS_ESCAPE = '[^ !#-\\[\\]-~]'


def _jdistinct(values) -> pa.Array:
    """JSON strings of a column of mostly distinct values (names, rows): quoted in Arrow, and only the strings
    that need an escape go through ``json``'s encoder; non-strings are null."""
    try:
        arr = values if isinstance(values, pa.Array) else pa.array(values, _STR, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([_enc(x) if isinstance(x, str) else "null" for x in values], _STR)
    out = pc.fill_null(_join(['"', arr, '"'], len(arr)), "null")
    bad = np.asarray(pc.fill_null(pc.match_substring_regex(arr, _NEEDS_ESCAPE), False).to_numpy(zero_copy_only=False))
    if bad.any():
        fixed = pa.array([_enc(x) for x in arr.filter(pa.array(bad)).to_pylist()], _STR)
        out = pc.replace_with_mask(out, pa.array(bad), fixed)
    return out


def _jflags(tab: pd.DataFrame, r: DeviceResult) -> list[Part]:
    """The ``flags`` value of each row: ``[{"code": …, "message": …}, …]``."""
    pieces, _ = _flag_cells(tab, r, _esc_json, lambda bit: _raw('{"code": ' + _enc(FLAG_CODES[bit]) + ', "message": "'),
                            '"}', ", ")
    return [_raw("["), *pieces, _raw("]")]


def _jobj(names: list[str], cols: list[pa.Array], n: int) -> list[Part]:
    if not names:
        return [_raw("{}")]
    parts: list[Part] = []
    for k, (name, c) in enumerate(zip(names, cols, strict=True)):
        parts += [_raw(("{" if k == 0 else ", ") + _enc(name) + ": "), c]
    return [*parts, _raw("}")]


#: the kernel record's keys in the JSON contract's order (README "JSON output")
KERNEL_KEYS = ("name", "hardware", "group", "count", "precision", "unit", "ceiling", "flops", "bytes", "time_s",
               "intensity", "t_roof_s", "t_serial_s", "attainable_flops_per_s", "bound", "binding_level",
               "achieved_flops_per_s", "efficiency", "pct_peak_compute", "pct_peak_bandwidth", "headroom_s", "flags",
               "source", "row")


def _kernels_json(tab: pd.DataFrame, r: DeviceResult, byte_names: list[str], end: str = "") -> pa.Array:
    """One JSON object per row (each followed by ``end``), keys and nulls as ``Analysis.to_json()``'s kernels."""
    n = len(tab)

    def num(c: str) -> pa.Array:
        return _jnum(tab[c].to_numpy(dtype=np.float64))

    def text(c: str) -> pa.Array | np.ndarray:
        return _values(tab[c])

    values: dict[str, pa.Array | list[Part]] = {
        "name": _jdistinct(text("name")), "hardware": _jdict(text("hardware")),
        "group": _jdict(text("group")), "count": _jnum(tab["count"].to_numpy(dtype=np.int64)),
        "precision": _jdict(text("precision")), "unit": _jdict(text("unit")),
        "ceiling": _jdict(text("ceiling"), empty_is_null=True), "flops": num("flops"),
        "bytes": _jobj(byte_names, [num(f"bytes_{b}") for b in byte_names], n), "time_s": num("time_s"),
        "intensity": _jobj(byte_names, [num(f"intensity_{b}") for b in byte_names], n),
        "t_roof_s": num("t_roof_s"), "t_serial_s": num("t_serial_s"),
        "attainable_flops_per_s": num("attainable_flops_per_s"), "bound": _jdict(text("bound")),
        "binding_level": _jdict(text("binding_level")), "achieved_flops_per_s": num("achieved_flops_per_s"),
        "efficiency": num("efficiency"), "pct_peak_compute": num("pct_peak_compute"),
        "pct_peak_bandwidth": num("pct_peak_bandwidth"), "headroom_s": num("headroom_s"),
        "flags": _jflags(tab, r), "source": _jdict(text("source")), "row": _jdistinct(text("row")),
    }
    parts: list[Part] = []
    for k, key in enumerate(KERNEL_KEYS):
        v = values[key]
        parts += [_raw(("{" if k == 0 else ", ") + _enc(key) + ": "), *(v if isinstance(v, list) else [v])]
    return _join([*parts, _raw("}" + end)], n)


def kernels_json(tab: pd.DataFrame, r: DeviceResult, byte_names: list[str]) -> list[str]:
    """One JSON object per row of one device's table, keys and nulls as ``Analysis.to_json()``'s kernels.

    Each column is encoded once (numbers by orjson in C, repeated strings once per distinct value) and Arrow joins
    the columns into rows: no Python-level work per field and row."""
    return _kernels_json(tab, r, byte_names).to_pylist()


def analysis_json_chunks(analysis, extra: dict | None = None, *, binary: bool = False
                         ) -> Iterator[str | bytes | memoryview]:
    """``Analysis.to_json()`` as JSON text in pieces, written column-wise: one kernel per line, the other keys
    indented as ``json.dumps(indent=1)`` does. Streamed so a million kernels never sit in memory as one string;
    ``binary`` gives the pieces as ASCII bytes (the kernels as Arrow's buffers, not copied)."""
    return _pieces(_json_text(analysis, extra), binary, "ascii")


def _json_text(analysis, extra: dict | None) -> Iterator[str | memoryview]:
    doc = analysis.to_json(kernels=False)
    if extra:
        doc.update(extra)
    byte_names = analysis.workload.byte_names
    yield "{"
    first_key = True
    for k, v in doc.items():
        yield ("\n " if first_key else ",\n ") + _enc(k) + ": "
        first_key = False
        if k != "kernels":
            yield json.dumps(v, indent=1, allow_nan=False).replace("\n", "\n ")
            continue
        def pieces() -> Iterator[Callable[[], pa.Array]]:
            for r in analysis.results:
                tab = analysis._device_table(r, messages=False)
                for lo in range(0, len(tab), CHUNK_ROWS):
                    yield partial(_kernels_json, tab.iloc[lo:lo + CHUNK_ROWS], r, byte_names, ",\n")

        started = False
        for rows in _ahead(pieces()):
            yield "[\n" if not started else ",\n"
            yield _text_of(rows)[:-2]  # each row ends ",\n": not the last
            started = True
        yield "\n ]" if started else "[]"
    yield "\n}"


def analysis_json(analysis, extra: dict | None = None) -> str:
    """:func:`analysis_json_chunks` joined into one string."""
    return "".join(analysis_json_chunks(analysis, extra))
