"""Text columns built once per distinct value (:class:`Col`) and joined row-wise in Arrow: the pieces the flag
messages, the JSON and the CSV are written with. Escaping is per destination (:data:`Esc`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from json.encoder import encode_basestring_ascii as _enc
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from numpy.typing import NDArray

STR = pa.string()
_T = TypeVar("_T")
Esc = Callable[[str], str] | None  #: how text is escaped for its destination (None: plain text)


def esc_json(text: str) -> str:
    """The inside of a JSON string literal (``json.dumps``'s ASCII escapes); escaping pieces one by one and joining
    them gives the escape of the whole, as every character is escaped on its own."""
    return _enc(text)[1:-1]


def csv_esc(text: str) -> str:
    return text.replace('"', '""')


# ------------------------------------------------------------------------------------ text by distinct value


class Col:
    """A text column held as its distinct texts and one code per row: formatting and escaping are done once per
    distinct text, and Arrow expands the codes. The distinct texts, escaped for a destination, are kept in Arrow
    and shared by every :meth:`take` and :meth:`slice` of the column (a writer cuts one column into pieces)."""

    __slots__ = ("_arrow", "codes", "texts")

    def __init__(self, texts: list[str], codes: np.ndarray,
                 _arrow: dict[tuple[Esc | str, int], pa.Array | NDArray[np.bool_]] | None = None) -> None:
        self.texts, self.codes = texts, codes
        self._arrow = {} if _arrow is None else _arrow

    def __len__(self) -> int:
        return len(self.codes)

    def take(self, idx: np.ndarray) -> Col:
        return Col(self.texts, self.codes[idx], self._arrow)

    def slice(self, lo: int, hi: int) -> Col:
        """Rows ``lo:hi`` (a view of the codes)."""
        return Col(self.texts, self.codes[lo:hi], self._arrow)

    def map(self, f: Callable[[str], str]) -> Col:
        return Col([f(t) for t in self.texts], self.codes)

    def arrow(self, esc: Esc = None) -> pa.Array:
        key = (esc, len(self.texts))  # the length: a text appended after a first use is not missed
        texts = self._arrow.get(key)
        if texts is None:
            texts = self._arrow[key] = pa.array(self.texts if esc is None else escape_all(self.texts, esc), STR)
        return texts.take(pa.array(np.asarray(self.codes, dtype=np.int64)))

    def special(self) -> np.ndarray:
        """Per distinct text, whether it holds a character that makes a CSV cell need quotes (kept like
        :meth:`arrow`'s texts)."""
        key = ("special", len(self.texts))
        out = self._arrow.get(key)
        if out is None:
            out = self._arrow[key] = _has_special(pa.array(self.texts, STR))
        return out

    def tolist(self) -> list[str]:
        out: list[str] = np.asarray([*self.texts, ""], dtype=object)[self.codes].tolist()
        return out


def escape_all(texts: list[str], esc: Callable[[str], str]) -> list[str]:
    """``esc`` of every text. The escapes here work character by character, so the texts are escaped in one call,
    joined by NUL, and split again where the NUL (or its JSON escape) is; one by one if a text holds its own."""
    if len(texts) > 8 and (esc is esc_json or esc is csv_esc):
        joined = "\x00".join(texts)
        parts = _enc(joined)[1:-1].split("\\u0000") if esc is esc_json else csv_esc(joined).split("\x00")
        if len(parts) == len(texts):
            return parts
    return [esc(t) for t in texts]


def unique_codes(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for integer keys; by a presence table where their range is small
    (no sort)."""
    if len(key) and int(key.max()) - int(key.min()) < 1 << 20:
        lo = int(key.min())
        k = key - lo
        present = np.zeros(int(k.max()) + 1, dtype=bool)
        present[k] = True
        return np.flatnonzero(present) + lo, (np.cumsum(present) - 1)[k]
    uniq, inv = np.unique(key, return_inverse=True)
    return uniq, inv.reshape(-1)


def by_bits(values: np.ndarray, fmt: Callable[[float], str]) -> Col:
    """``fmt`` once per distinct float (by bit pattern, so 0.0 and -0.0 stay apart)."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    uniq, inv = np.unique(v.view(np.int64), return_inverse=True)
    return Col([fmt(x) for x in uniq.view(np.float64).tolist()], inv.reshape(-1).astype(np.int64))


def strs(values: np.ndarray) -> Col:
    """``str(v)`` of every value (as an f-string writes it: None is "None"), once per distinct value."""
    arr = np.asarray(values, dtype=object)
    codes, uniq = pd.factorize(arr, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64).copy()
    texts = [str(u) for u in uniq]
    seen: dict[str, int] = {}
    for k in np.flatnonzero(codes < 0).tolist():  # None and NaN, each written as itself
        codes[k] = seen.setdefault(str(arr[k]), len(texts) + len(seen))
    return Col(texts + list(seen), codes)


def merge_runs(items: Sequence[_T | str | Col], n: int, limit: int | None = None) -> list[_T | str | Col]:
    """``items`` with every run of constant texts and :class:`Col` s of the same ``n`` rows (already escaped for
    their destination) joined into one item: a text, or a :class:`Col` of the run's distinct combinations (a row's
    template, written once per combination; Arrow then joins fewer, longer pieces). Two columns are merged only
    where that makes at most ``limit`` distinct texts (a text is always merged). Other items are kept."""
    out: list[_T | str | Col] = []
    texts: list[str] | None = None  # the run so far: its distinct texts, and their codes (None: constant)
    codes: np.ndarray | None = None
    for it in [*items, None]:
        if isinstance(it, str):
            texts = [t + it for t in texts] if texts is not None else [it]
        elif isinstance(it, Col) and (codes is None or texts is None or len(it.texts) == 1 or limit is None
                                      or len(it.texts) * len(texts) <= limit):
            base = texts if texts is not None else [""]
            key = (codes if codes is not None else np.zeros(n, dtype=np.int64)) * len(it.texts) + it.codes
            uniq, codes = unique_codes(np.asarray(key, dtype=np.int64))
            m = len(it.texts)
            texts = [base[u // m] + it.texts[u % m] for u in uniq.tolist()]
        elif isinstance(it, Col):  # too many combinations: the run ends here and a new one starts with it
            assert texts is not None and codes is not None  # a run of columns (else the branch above took it)
            out.append(Col(texts, codes))
            texts, codes = list(it.texts), it.codes
        else:
            if texts is not None:
                out.append(texts[0] if codes is None else Col(texts, codes))
            texts, codes = None, None
            if it is not None:
                out.append(it)
    return out


# ------------------------------------------------------------------------------------------ Arrow helpers

#: a part of a row's text: text the same on every row (escaped for its destination), a :class:`Col` (escaped),
#: an Arrow scalar or array (taken as it is), or a function of the escape that builds such an array
Part: TypeAlias = str | Col | pa.Scalar | pa.Array | Callable[[Esc], pa.Array]


def join_parts(parts: Sequence[Part], n: int, esc: Esc = None) -> pa.Array:
    """Row-wise concatenation of ``parts`` (one pass of Arrow's string kernel)."""
    if n == 0:
        return pa.array([], STR)
    args: list[pa.Scalar | pa.Array] = []
    arrays = False
    for p in parts:
        if isinstance(p, str):
            args.append(pa.scalar(esc(p) if esc else p, STR))
        elif isinstance(p, pa.Scalar):
            args.append(p)
        else:
            args.append(p.arrow(esc) if isinstance(p, Col) else p if isinstance(p, pa.Array) else p(esc))
            arrays = True
    if not arrays:
        return const("".join(a.as_py() for a in args), n)
    if len(args) == 1:
        return args[0]
    return pc.binary_join_element_wise(*args, "")


def raw_cell(text: str) -> pa.Scalar:
    """Text that is already escaped for its destination (JSON syntax around a message)."""
    return pa.scalar(text, STR)


def const(text: str, n: int) -> pa.Array:
    return pa.array([text], STR).take(pa.array(np.zeros(n, dtype=np.int64)))


def scatter(items: pa.Array, idx: np.ndarray, n: int) -> pa.Array:
    """An ``n``-row array holding ``items`` at rows ``idx`` (ascending) and "" elsewhere: the items' characters in
    the same order, so their data buffer is kept as it is and only the offsets are new."""
    if len(idx) == n:
        return items
    if items.null_count or items.type != STR:
        mask = np.zeros(n, dtype=bool)
        mask[idx] = True
        return pc.replace_with_mask(const("", n), pa.array(mask), items)
    before = np.zeros(n + 1, dtype=np.int64)  # per row, how many items lie before it
    before[np.asarray(idx, dtype=np.int64) + 1] = 1
    np.cumsum(before, out=before)
    offsets = np.frombuffer(items.buffers()[1], dtype=np.int32, count=len(items) + 1, offset=items.offset * 4)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets[before]), items.buffers()[2])


def text_of(arr: pa.Array) -> memoryview:
    """The characters of a string array's rows, back to back (its data buffer, not copied)."""
    if len(arr) == 0:
        return memoryview(b"")
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4)
    return memoryview(arr.buffers()[2])[int(offsets[0]):int(offsets[-1])]


_CSV_SPECIAL = ',"\n\r'


def needs_quotes(parts: Sequence[Part], n: int) -> np.ndarray:
    """Per row, whether the joined text holds a character that makes a CSV cell need quotes."""
    out = np.zeros(n, dtype=bool)
    for p in parts:
        if isinstance(p, str):
            if any(c in p for c in _CSV_SPECIAL):
                return np.ones(n, dtype=bool)
        elif isinstance(p, Col):
            out |= p.special()[p.codes]
        else:
            out |= _has_special(p if isinstance(p, pa.Array) else p(None))
    return out


def _has_special(arr: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.match_substring_regex(arr, '[,"\n\r]'), False).to_numpy(zero_copy_only=False),
                      dtype=bool)
