"""What the JSON and CSV writers share: numbers as text in one C pass per column (orjson), a column's values as
Arrow or numpy, and the streaming of pieces (computed ahead in threads, handed over without a copy)."""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, SupportsFloat, TypeAlias, TypeVar

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import settings
from ..roofline import DeviceResult, Flag
from ..wording.cells import STR, Col, Esc, Part, raw_cell
from ..wording.messages import Recipe, Segment, flag_recipes, flag_segments

_T = TypeVar("_T")
#: an item of a writer's row template (:meth:`Rows.parts`): constant text, a whole-table :class:`Col`, or what a
#: piece computes: ``("num", column, dtype, empty_unknown, comma)``, ``("raw", column)``, ``("text", column)``,
#: ``("flags",)``
Item: TypeAlias = "str | Col | tuple[Any, ...]"


def jnum(values: np.ndarray, *, empty_unknown: bool = False, comma: bool = False) -> pa.Array:
    """JSON numbers, shortest round-trip form (orjson's, one C pass per column); NaN and ±inf are null (as CSV cells,
    ``empty_unknown``: NaN empty, ±inf written ``inf``/``-inf`` as pandas writes them). ``comma``: each followed by
    the comma that ends it in its row (orjson's text is then the array's data, not copied)."""
    v = np.ascontiguousarray(values)
    if not len(v):
        return pa.array([], STR)
    if comma:
        return _with_commas(v, empty_unknown)
    empty = np.isnan(v) if empty_unknown and v.dtype.kind == "f" else None
    out = _split_commas(orjson.dumps(v, option=orjson.OPT_SERIALIZE_NUMPY), len(v),
                        empty if empty is not None and empty.any() else None)
    inf = np.isinf(v) if empty is not None else None
    if inf is not None and inf.any():
        out = pc.replace_with_mask(out, pa.array(inf), pa.array(np.where(v[inf] > 0, "inf", "-inf").tolist(), STR))
    return out


def _with_commas(v: np.ndarray, empty_unknown: bool) -> pa.Array:
    """``n`` numbers each with its trailing comma: orjson writes ``[a,b,…,0]`` (one number more, so the last has its
    comma too) and the commas' positions are the offsets into that text."""
    n = len(v)
    text = orjson.dumps(np.append(v, np.zeros(1, dtype=v.dtype)), option=orjson.OPT_SERIALIZE_NUMPY)
    comma = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == ord(","))
    if len(comma) != n:
        raise ValueError(f"expected {n + 1} numbers, found {len(comma) + 1}")
    offsets = np.empty(n + 1, dtype=np.int32)
    offsets[0] = 1
    offsets[1:] = comma + 1
    out = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text))
    if empty_unknown and v.dtype.kind == "f":
        odd = ~np.isfinite(v)
        if odd.any():
            cells = np.where(np.isnan(v[odd]), ",", np.where(v[odd] > 0, "inf,", "-inf,")).tolist()
            out = pc.replace_with_mask(out, pa.array(odd), pa.array(cells, STR))
    return out


def _split_commas(text: bytes, n: int, empty: np.ndarray | None = None) -> pa.Array:
    """orjson's ``[a,b,…]`` of ``n`` numbers as a string array, cut at the commas in numpy (no Python string per
    number): the bytes without the commas are the data, the commas' positions the offsets; ``empty`` rows left
    without text."""
    raw = np.frombuffer(text, dtype=np.uint8)[1:-1]
    comma = np.flatnonzero(raw == ord(","))
    if len(comma) != n - 1:
        raise ValueError(f"expected {n} numbers, found {len(comma) + 1}")
    start = np.concatenate(([0], comma + 1))
    end = np.append(comma, len(raw))
    keep = np.ones(len(raw) + 1, dtype=np.int8)
    keep[comma] = 0
    lengths = end - start
    if empty is not None:  # drop the bytes of those rows: +1/-1 marks at their ends, summed
        mark = np.zeros(len(raw) + 1, dtype=np.int64)
        np.add.at(mark, start[empty], 1)
        np.add.at(mark, end[empty], -1)
        keep[np.cumsum(mark) > 0] = 0
        lengths[empty] = 0
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw[keep[:-1].astype(bool)]))


def _values(col: pd.Series) -> pa.Array | np.ndarray:
    """A column's values: Arrow strings where pandas holds them so (its ``str`` dtype, no copy), else numpy."""
    if isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "pyarrow":
        a = pa.array(col.array)
        a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
        return a if a.type == STR else a.cast(STR)
    return col.to_numpy(dtype=object) if col.dtype == object or not isinstance(col.dtype, np.dtype) else col.to_numpy()


def distinct(values: pa.Array | np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Codes (-1 missing) and the distinct values of a column with few of them."""
    if isinstance(values, pa.Array):
        d = values.dictionary_encode()
        uniq = d.dictionary.to_pylist()
        return np.asarray(pc.fill_null(d.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64), uniq
    codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), uniq.tolist()


#: kernels encoded per piece of the writers: bounds the text held at once (a few MB per piece, a few pieces in
#: flight) and keeps a piece's columns in cache while they are joined
CHUNK_ROWS = 4096


class Rows:
    """One device's table readied for writing in pieces: its columns as arrays (Arrow strings, numpy otherwise, not
    copied); what a writer derives from whole columns (its template, the flag messages formatted once for the whole
    table) is made once, by the first piece that needs it, and kept (:meth:`whole`; the pieces run in threads)."""

    def __init__(self, tab: pd.DataFrame, r: DeviceResult) -> None:
        self.n, self.r = len(tab), r
        self.columns = list(tab.columns)
        self.cols = {c: _values(tab[c]) for c in tab.columns}
        self._tab: pd.DataFrame | None = tab
        self._whole: dict[tuple[object, ...], Any] = {}
        self._lock = threading.RLock()

    def num(self, c: str, lo: int, hi: int, dtype: type = np.float64) -> np.ndarray:
        return np.asarray(self.cols[c][lo:hi], dtype=dtype)

    def text(self, c: str, lo: int, hi: int) -> pa.Array | np.ndarray:
        return self.cols[c][lo:hi]

    def whole(self, key: tuple[object, ...], build: Callable[[], _T]) -> _T:
        """``build()``, made once per ``key`` (another piece waits for it rather than making it again)."""
        with self._lock:
            if key not in self._whole:
                self._whole[key] = build()
            made: _T = self._whole[key]
            return made

    @property
    def recipes(self) -> dict[Flag, list[Recipe]]:
        """The flag-message recipes of the whole table (:func:`~.messages._recipes`)."""
        return self.whole(("recipes",), lambda: flag_recipes(self._tab, self.r))

    def flags(self, esc: Esc, before: Callable[[Flag], str], after: str, sep: str) -> list[Segment]:
        """The flag messages readied for one destination (:func:`flag_segments`)."""
        return self.whole(("flags", esc, after, sep), lambda: flag_segments(self.recipes, self.n, esc, before, after, sep))

    def parts(self, template: Sequence[Item], lo: int, hi: int, flags: Callable[[int, int], list[Part]],
              text: Callable[[pa.Array | np.ndarray], Part]) -> list[Part]:
        """Rows ``lo:hi`` of a writer's row template (its items: constant text, a whole-table :class:`Col`,
        ``("num", column, dtype, empty_unknown, comma)``, ``("raw", column)`` written as it is, ``("text",
        column)`` encoded by ``text``, ``("flags",)`` made by ``flags``) as the parts of their text."""
        out: list[Part] = []
        for it in template:
            if isinstance(it, str):
                out.append(raw_cell(it))
            elif isinstance(it, Col):
                out.append(it.slice(lo, hi))
            elif it[0] == "flags":
                out += flags(lo, hi)
            elif it[0] == "num":
                out.append(jnum(self.num(it[1], lo, hi, it[2]), empty_unknown=it[3], comma=it[4]))
            elif it[0] == "raw":
                out.append(self.text(it[1], lo, hi))
            else:
                out.append(text(self.text(it[1], lo, hi)))
        return out

    def pieces(self, rows: int | None = None) -> Iterator[tuple[int, int]]:
        """``(lo, hi)`` of each piece of :data:`CHUNK_ROWS` rows."""
        rows = rows or CHUNK_ROWS
        return ((lo, min(lo + rows, self.n)) for lo in range(0, self.n, rows))


def encoded_pieces(pieces: Iterator[str | memoryview], binary: bool, encoding: str) -> Iterator[str | bytes | memoryview]:
    """Text pieces as text, or (``binary``) as bytes: the large ones are Arrow buffers, written without a copy."""
    for p in pieces:
        if binary:
            yield p.encode(encoding) if isinstance(p, str) else p
        else:
            yield p if isinstance(p, str) else str(p, encoding)


def ahead(jobs: Iterator[Callable[[], pa.Array]], depth: int = 2) -> Iterator[pa.Array]:
    """The jobs' results in order, the next ``depth`` computed in threads meanwhile: Arrow's string kernels,
    orjson and numpy release the GIL, so a second core writes the next piece while this one is handed over."""
    if _cores() < 2:
        yield from (job() for job in jobs)
        return
    with ThreadPoolExecutor(depth, thread_name_prefix="roofcore-output") as pool:
        pending: deque[Future[pa.Array]] = deque()
        for job in jobs:
            pending.append(pool.submit(job))
            if len(pending) > depth:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _cores() -> int:
    """The cores this process may use (``ROOFCORE_WORKERS`` if set: 1 writes the pieces one after the other)."""
    return settings.cores()


def finite_or_none(v: SupportsFloat | None) -> float | None:
    if v is None:
        return None
    x = float(v)
    return x if math.isfinite(x) else None
