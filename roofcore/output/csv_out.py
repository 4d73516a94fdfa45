"""The per-kernel table as CSV: one row per kernel × device, cells quoted where CSV needs it and text a spreadsheet
would run as a formula neutralised; written column-wise and streamed like the JSON."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..roofline import FLAG_CODES, Flag
from ..wording import flag_cells
from ..wording.cells import STR, Col, Part, csv_esc, join_parts, merge_runs, strs, text_of
from .columns import Item, Rows, ahead, encoded_pieces
from .json_out import plain

if TYPE_CHECKING:
    from ..analyze import Analysis

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def neutralise(col: pd.Series) -> pd.Series:
    """Text a spreadsheet would run as a formula (``= + - @``, tab, CR) prefixed with a quote, over a column."""
    s = col.astype(object)
    text = s.map(lambda v: isinstance(v, str) and v[:1] in _FORMULA) if len(s) < 64 else \
        s.where(s.map(type) == str, None).str[:1].isin(_FORMULA)  # noqa: E721
    if not text.any():
        return col
    out = s.copy()
    out[text] = "'" + s[text].astype(str)
    return out


def _csv_quote(v: str) -> str:
    return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n\r') else v


def _csv_text(values: pa.Array | np.ndarray) -> pa.Array:
    """Text cells: a leading formula character neutralised with a quote, quoted where needed; empty when missing.
    In Arrow for strings; other objects are written as ``str()`` once per distinct value."""
    try:
        arr = values if isinstance(values, pa.Array) else pa.array(values, STR, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
        cells = []
        for x in uniq.tolist():
            text = x if isinstance(x, str) else str(x)
            cells.append(_csv_quote("'" + text if text[:1] in _FORMULA else text))
        return Col([*cells, ""], np.where(codes < 0, len(cells), codes).astype(np.int64)).arrow()
    n = len(arr)
    d = arr.dictionary_encode()
    if len(d.dictionary) * 4 < n:  # few distinct texts (devices, precisions, sources): each written once
        codes = np.asarray(pc.fill_null(d.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
        cells = [_csv_quote("'" + x if x[:1] in _FORMULA else x) for x in d.dictionary.to_pylist()]
        return Col([*cells, ""], np.where(codes < 0, len(cells), codes)).arrow()
    formula = pc.match_substring_regex(arr, "^[=+\\-@\t\r]")
    if pc.any(formula).as_py():
        arr = pc.if_else(formula, join_parts(["'", arr], n), arr)
    special = pc.match_substring_regex(arr, '[,"\n\r]')
    if pc.any(special).as_py():
        arr = pc.if_else(special, join_parts(['"', pc.replace_substring(arr, '"', '""'), '"'], n), arr)
    return pc.fill_null(arr, "")


def _csv_few(values: pa.Array | np.ndarray) -> Col | None:
    """The text cells of a whole column as a :class:`Col` when it has few distinct values (devices, precisions,
    sources: each cell written once), else None (written piece by piece by :func:`_csv_text`)."""
    if isinstance(values, pa.Array):
        if len(values.slice(0, 4096).unique()) * 4 >= min(len(values), 4096):
            return None  # many distinct values already in the first rows (names, row numbers)
        d = values.dictionary_encode()
        if len(d.dictionary) * 4 >= len(values):
            return None
        codes = np.asarray(pc.fill_null(d.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
        uniq = d.dictionary.to_pylist()
    else:
        try:
            return _csv_few(pa.array(values, STR, from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
            uniq = [x if isinstance(x, str) else str(x) for x in uniq.tolist()]
    cells = [_csv_quote("'" + x if x[:1] in _FORMULA else x) for x in uniq]
    return Col([*cells, ""], np.where(codes < 0, len(cells), codes).astype(np.int64))


def _template(rows: Rows, header: list[str]) -> list[Item]:
    """A CSV line as items: separators and whole-table :class:`Col` s (columns with few distinct values) merged into
    runs, and for the other cells what :func:`_csv_lines` computes per piece (:meth:`Rows.parts`): ``("num", column, dtype, empty,
    comma)`` (numbers carry the comma that ends them), ``("text", column)`` (quoted per piece), ``("raw", column)``
    (text that needs no quotes and is no formula), ``("flags",)``."""
    items: list[Item] = []
    for k, c in enumerate(header):
        last = k == len(header) - 1
        v = rows.cols.get(c)
        kind = v.dtype.kind if isinstance(v, np.ndarray) else "O"
        if c == "flags":
            items.append(("flags",))
        elif v is None:
            pass  # a column this device's table lacks: empty cells
        elif kind in "fiu":
            items.append(("num", c, np.float64 if kind == "f" else np.int64, kind == "f", not last))
            if not last:
                continue  # the number carries its comma
        elif kind == "b":
            items.append(strs(v))
        elif (few := _csv_few(v)) is not None:
            items.append(few)
        else:
            items.append(("raw", c) if plain(v, b',"\n\r', "".join(_FORMULA).encode()) else ("text", c))
        items.append("\n" if last else ",")
    return merge_runs(items, rows.n)


def _csv_lines(rows: Rows, header: list[str], lo: int, hi: int) -> pa.Array:
    """Rows ``lo:hi`` as CSV lines: numbers in shortest round-trip form (empty when unknown), text as
    :func:`_csv_text`, the flags as :func:`_csv_flags`."""
    template = rows.whole(("csv", tuple(header)), partial(_template, rows, header))
    return join_parts(rows.parts(template, lo, hi, partial(_csv_flags, rows), _csv_text), hi - lo)


def _csv_flags(rows: Rows, lo: int, hi: int) -> list[Part]:
    """The flags cell of rows ``lo:hi``: ``code: message; …``, quoted (its quotes doubled) where CSV needs it."""
    pieces, special = flag_cells(rows.flags(csv_esc, _csv_code, "", "; "), lo, hi, csv=True)
    quote = Col(["", '"'], special.astype(np.int64))
    return [quote, *pieces, quote]


def _csv_code(bit: Flag) -> str:
    return f"{FLAG_CODES[bit]}: "


def analysis_csv_chunks(analysis: Analysis, *, binary: bool = False) -> Iterator[str | bytes | memoryview]:
    """The per-kernel table as CSV pieces (one row per kernel × device, the columns of ``Analysis.table`` less the
    bitmask, flags as ``code: message; …``), written column-wise like the JSON (``binary``: as UTF-8 bytes)."""
    return encoded_pieces(_csv_text_pieces(analysis), binary, "utf-8")


def _csv_text_pieces(analysis: Analysis) -> Iterator[str | memoryview]:
    header: list[str] = []

    def pieces() -> Iterator[Callable[[], pa.Array]]:
        for r in analysis.results:
            rows = Rows(analysis._device_table(r, messages=False), r)
            if not header:
                header.extend([*(c for c in rows.columns if c != "flags_mask"), "flags"])
            for lo, hi in rows.pieces():
                yield partial(_csv_lines, rows, header, lo, hi)

    jobs = pieces()
    first = next(jobs, None)  # the header is known once the first table is
    if header:
        yield ",".join(_csv_quote(c) for c in header) + "\n"
    if first is not None:
        for rows in ahead(itertools.chain([first], jobs)):
            yield text_of(rows)


def analysis_csv(analysis: Analysis) -> str:
    """:func:`analysis_csv_chunks` joined into one string."""
    return "".join(x if isinstance(x, str) else str(x, "utf-8") for x in analysis_csv_chunks(analysis))
