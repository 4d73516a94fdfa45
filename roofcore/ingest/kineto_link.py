"""PyTorch traces: event values as numbers and ids, and the links from kernels to the ops that launched them
(threads, time containment)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, Protocol, TypeAlias, cast, overload

import numpy as np
import pandas as pd

#: a column of event values: the decoder's array, or the values as read
Values: TypeAlias = np.ndarray | Sequence[object]

# --------------------------------------------------------------------------------------------- numbers


def numbers(values: Values, what: str, reasons: dict[int, str] | None, *, negative_ok: bool = False
             ) -> np.ndarray:
    """Floats (NaN for missing); a present but non-numeric, non-finite or negative value records a reason."""
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        arr = None
    if arr is not None and arr.shape == (len(values),):
        with np.errstate(invalid="ignore"):
            if not np.isinf(arr).any() and (negative_ok or not (arr < 0).any()):
                return arr
    arr = np.full(len(values), np.nan)
    want = "a number" if negative_ok else "a non-negative number"
    for k, v in enumerate(values):
        if v is None:
            continue
        x = _as_float(v)
        if x is not None and math.isnan(x):
            continue
        if x is not None and math.isfinite(x) and (negative_ok or x >= 0):
            arr[k] = x
        elif reasons is not None and k not in reasons:
            shown = json.dumps(v)[:40] if isinstance(v, (str, list, dict, bool)) else repr(v)[:40]
            reasons[k] = f"{what}: expected {want}, found {shown}"
    return arr


def _as_float(v: object) -> float | None:
    """A JSON number or numeric string as a float (None: anything else, or too large for a float)."""
    if type(v) not in (int, float, str):
        return None
    try:
        return float(cast("int | float | str", v))  # its type checked above
    except (ValueError, OverflowError):
        return None


def transpose(rows: Sequence[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """The columns of a list of equal-length tuples: ``zip(*rows)`` without handing every row over as an argument
    (on 250,000 rows one C-level map per column takes ~0.1 s where ``zip(*rows)`` takes ~1 s)."""
    return [list(map(itemgetter(k), rows)) for k in range(width)]


def as_int64(values: Values) -> np.ndarray | None:
    """The values as int64 when every one is a JSON integer that fits (the usual case, read at C speed), else
    None. An int64 array (the decoder's columns) is returned as it is."""
    if isinstance(values, np.ndarray):
        return values if values.dtype == np.int64 and len(values) else None
    if not len(values) or set(map(type, values)) != {int}:
        return None
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return None


def id_index(values: Values) -> pd.Index:
    """Correlation / External ids as an index (ints stay ints; anything unhashable becomes missing)."""
    ints = as_int64(values)
    if ints is not None:
        return pd.Index(ints)
    clean = [v if type(v) in (int, str) else None for v in values]
    try:
        return pd.Index(np.array(clean, dtype=np.int64))
    except (TypeError, ValueError, OverflowError):
        return pd.Index(pd.array(clean, dtype=object))


# --------------------------------------------------------------------------------------------- linking


def innermost(op_group: np.ndarray, op_start: np.ndarray, op_end: np.ndarray, q_group: np.ndarray,
              q_time: np.ndarray) -> np.ndarray:
    """Per query (thread, time), the index of the innermost op on that thread whose [start, end] holds it, or -1.

    Ops sorted by (thread, start, longest first); each op's parent (the innermost op holding its start) found by
    pointer jumping, vectorised; a query starts at the last op starting at or before it and climbs parents
    until one ends at or after it. Properly nested intervals assumed (as profiler ranges on one thread are).
    """
    res = np.full(len(q_time), -1, dtype=np.int64)
    usable = np.flatnonzero(~np.isnan(op_start) & ~np.isnan(op_end))
    n = len(usable)
    if n == 0 or len(q_time) == 0:
        return res
    op_group, op_start, op_end = op_group[usable], op_start[usable], op_end[usable]
    sort = np.lexsort((np.arange(n), -op_end, op_start, op_group))
    order = usable[sort]
    g, s, e = op_group[sort], op_start[sort], op_end[sort]
    par = np.arange(-1, n - 1, dtype=np.int64)
    par[np.r_[True, g[1:] != g[:-1]]] = -1
    _climb(par, par, e, s)
    valid = ~np.isnan(q_time)
    groups, lo = np.unique(g, return_index=True)
    hi = np.r_[lo[1:], n]
    qpos = np.searchsorted(groups, q_group)
    qpos_c = np.minimum(qpos, len(groups) - 1)
    known = valid & (qpos < len(groups)) & (groups[qpos_c] == q_group)
    cand = np.full(len(q_time), -1, dtype=np.int64)
    qi = np.flatnonzero(known)
    qi = qi[np.argsort(qpos_c[qi], kind="stable")]
    ks = qpos_c[qi]
    cuts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1], True]) if len(qi) else np.zeros(1, dtype=np.int64)
    for a, b in itertools.pairwise(cuts):  # one searchsorted per thread
        k, sel = ks[a], qi[a:b]
        pos = lo[k] + np.searchsorted(s[lo[k]:hi[k]], q_time[sel], side="right") - 1
        cand[sel] = np.where(pos >= lo[k], pos, -1)
    _climb(cand, par, e, q_time)
    hit = cand >= 0
    res[hit] = order[cand[hit]]
    return res


def _climb(ptr: np.ndarray, parent: np.ndarray, end: np.ndarray, at: np.ndarray) -> None:
    """In place: each ``ptr[i] >= 0`` moved up ``parent`` links until ``end[ptr[i]] >= at[i]`` (or -1, none left),
    all together, one level a step. With ``ptr`` the ``parent`` array itself, the steps jump pointers."""
    active = np.flatnonzero(ptr >= 0)
    while active.size:
        active = active[end[ptr[active]] < at[active]]
        ptr[active] = parent[ptr[active]]
        active = active[ptr[active] >= 0]


def valid_ids(values: Values) -> np.ndarray:
    """Which ids are usable for linking (JSON integers or strings)."""
    if set(map(type, values)) <= {int, str}:
        return np.ones(len(values), dtype=bool)
    return np.array([type(v) in (int, str) for v in values], dtype=bool)


def thread_codes(pids: Values, tids: Values) -> np.ndarray:
    def codes(vals: Values) -> np.ndarray:
        ints = as_int64(vals)  # codes in order of first appearance either way
        clean = ints if ints is not None else np.array([v if type(v) in (int, str) else None for v in vals],
                                                       dtype=object)
        c, _ = pd.factorize(clean, use_na_sentinel=False)
        res: np.ndarray = c.astype(np.int64)
        return res

    pc, tc = codes(pids), codes(tids)
    res: np.ndarray = pc * (int(tc.max(initial=0)) + 1) + tc
    return res


# --------------------------------------------------------------------------------------------- columns


class _Col(Protocol):
    """:func:`_column`'s ``col``: an array where ``convert`` is given, else an array or a list."""

    @overload
    def __call__(self, name: str, k: int, convert: Callable[[list[Any]], np.ndarray]) -> np.ndarray: ...
    @overload
    def __call__(self, name: str, k: int) -> np.ndarray | list[Any]: ...


def column(arrays: dict[str, np.ndarray], rows: list[tuple[Any, ...]]) -> _Col:
    """``col(name, k, convert)``: the decoder's array ``name`` where it made one, else column ``k`` of ``rows``
    (through ``convert``)."""
    def col(name: str, k: int, convert: Callable[[list[Any]], np.ndarray] | None = None
            ) -> np.ndarray | list[Any]:
        got = arrays.get(name)
        if got is not None:
            return got
        values = list(map(itemgetter(k), rows))
        return convert(values) if convert else values
    return cast(_Col, col)  # the overloads: with ``convert``, an array either way


def joined(a: Values, b: Values) -> np.ndarray | list[object]:
    """Two columns one after the other (arrays joined as arrays)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.concatenate([a, b])
    return list(a) + list(b)


def differ(a: Values, b: Values) -> np.ndarray:
    """``a[i] != b[i]`` per position (vectorised where both are integers)."""
    ia, ib = as_int64(a), as_int64(b)
    if ia is not None and ib is not None:
        res: np.ndarray = ia != ib
        return res
    return np.array([x != y for x, y in zip(a, b, strict=True)], dtype=bool)


def texts(values: Values) -> np.ndarray:
    """Names as an object array, None where a value is no string."""
    if set(map(type, values)) == {str}:
        return np.array(values, dtype=object)
    return np.array([nm if type(nm) is str else None for nm in values], dtype=object)
