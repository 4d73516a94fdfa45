"""Readers shared by the ingest formats: the unit table (docs/formats.md, Units) every CSV with a unit per value goes through
(time → s, bytes → B, byte/s → B/s, frequencies → Hz, counts with SI prefixes); cells with their unit written inside
(``542.36ms``, ``47.79%``: :func:`quantities`, :func:`seconds`), and rows whose kernel name held unquoted commas put
back into their columns by what the other columns must look like (:func:`refit`), and a table's lines read past
blank lines where its rows go on (:func:`table_lines`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pandas as pd

# -------------------------------------------------------------------------------------------- units

_COUNT_BASES = ("", "inst", "cycle", "sector", "request", "warp", "thread", "block", "op", "flop")
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
#: time units per second
_TIME = {"nsecond": 1e9, "ns": 1e9, "usecond": 1e6, "us": 1e6, "µs": 1e6, "msecond": 1e3, "ms": 1e3,
         "second": 1.0, "s": 1.0, "sec": 1.0}


def _unit_table() -> dict[str, tuple[str, float]]:
    t: dict[str, tuple[str, float]] = {u: ("time", 1.0 / per_s) for u, per_s in _TIME.items()}
    for p, f in _PREFIX.items():
        for base in _COUNT_BASES:
            if base or not p:
                t[p + base] = ("count", f)
        t[p + "byte"] = ("bytes", f)  # SI powers of 1000 as far as seen (unverified; prefer --print-units base)
        t[p + "B"] = ("bytes", f)
        t[p + "hz"] = ("frequency", f)
        for tu, per_s in _TIME.items():
            t[f"{p}cycle/{tu}"] = ("frequency", f * per_s)
            t[f"{p}byte/{tu}"] = t[f"{p}B/{tu}"] = ("bandwidth", f * per_s)
    for p, f in {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30}.items():
        t[p + "B"] = t[p + "byte"] = ("bytes", f)
    return t


UNITS = _unit_table()
_UNITS_LOWER = {k.lower(): v for k, v in UNITS.items()}  # "MHz", "GHz": lower-cased keys do not collide


def unit_factor(unit: str) -> tuple[str, float] | None:
    """``(dimension, factor to base units)`` of an ncu unit string, or None if unknown (docs/formats.md, Units)."""
    u = unit.strip()
    return UNITS.get(u) or _UNITS_LOWER.get(u.lower())


# -------------------------------------------------------------------------------------------- cells

#: a cell holding a number with the unit written after it, as legacy summaries print them (``542.36ms``, ``47.79%``,
#: ``1.2340us``, ``12.3KB``, ``1,234``): the number (thousands separators allowed) and the unit (may be empty)
_QUANTITY = re.compile(r"^\s*([+-]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµμ%/]*)\s*$")
#: seconds per time unit written in a cell or a units row
SECONDS = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "msec": 1e-3, "us": 1e-6, "usec": 1e-6, "µs": 1e-6, "μs": 1e-6,
           "ns": 1e-9, "nsec": 1e-9}


def quantities(cells: Sequence[object]) -> tuple[np.ndarray, np.ndarray]:
    """Cells → ``(numbers, units)``: each cell's number (NaN where the cell is not a number) and the unit written in
    it (``""`` where none): ``"542.36ms"`` → (542.36, "ms"), ``"47.79%"`` → (47.79, "%"), ``"1,234"`` → (1234, "")."""
    parts = pd.Series(cells, dtype=object).astype(str).str.extract(_QUANTITY)
    numbers = pd.to_numeric(parts[0].str.replace(",", "", regex=False), errors="coerce")
    return numbers.to_numpy(dtype=np.float64, na_value=np.nan), parts[1].fillna("").to_numpy(dtype=object)


def seconds(cells: Sequence[object], unit: str = "s") -> np.ndarray:
    """Durations in seconds: the unit inside a cell where it has one (``542.36ms``, ``1.2340us``), else ``unit`` (a
    units row's, a header's ``(ns)``). NaN for a cell that is not a duration (text, another unit, negative)."""
    try:  # the common case: every cell a plain number in the column's unit
        out = np.array(cells, dtype=np.float64) * SECONDS.get(unit, np.nan)
    except (ValueError, TypeError):
        value, units = quantities(cells)
        factor = {u: SECONDS.get(u or unit, np.nan) for u in set(units)}
        out = value * np.array([factor[u] for u in units], dtype=np.float64)
    out[~(np.isfinite(out) & (out >= 0))] = np.nan
    return out


def is_quantity(cell: str) -> bool:
    """Whether a cell is a number, with or without a unit written after it."""
    return bool(_QUANTITY.match(cell))


def refit(fields: list[str], kinds: Sequence[Callable[[str], bool] | None]) -> list[str] | None:
    """A row with more fields than columns because a text column (``None`` in ``kinds``: a kernel name, a description)
    held commas and was left unquoted, put back into its columns: each text column takes one or more fields, joined
    with their commas; every other column exactly one field that passes its check (a number, a count, an identifier,
    or anything). Where several splits fit, the text columns take as few fields as they can from the left. ``None``
    where no split fits; a row of the right width comes back as it is."""
    n = len(fields)
    if n == len(kinds):
        return fields
    if n < len(kinds):
        return None
    memo: dict[tuple[int, int], list[str] | None] = {}

    def fit(col: int, at: int) -> list[str] | None:
        if col == len(kinds):
            return [] if at == n else None
        if (col, at) in memo:
            return memo[(col, at)]
        kind, out = kinds[col], None
        if kind is not None:
            rest = fit(col + 1, at + 1) if at < n and kind(fields[at]) else None
            out = None if rest is None else [fields[at], *rest]
        else:
            for end in range(at + 1, n - (len(kinds) - col - 1) + 1):
                rest = fit(col + 1, end)
                if rest is not None:
                    out = [",".join(fields[at:end]), *rest]
                    break
        memo[(col, at)] = out
        return out

    return fit(0, 0)


# ------------------------------------------------------------------------------------------- blank lines


def goes_on(lines: Sequence[str], i: int, is_row: Callable[[str], bool]) -> int | None:
    """Where a table goes on after the blank lines from ``lines[i]``, else None (it ends there). A blank line ends
    a table where reports follow each other (``nsys stats`` of several reports), but an editor's stray Return or rows
    pasted from two places also leave one between rows: the table goes on where the next line that holds anything
    is a row of it (``is_row``: as wide as the header, numbers where it has numbers, no header or banner)."""
    j = i
    while j < len(lines) and not lines[j].strip():
        j += 1
    return j if j < len(lines) and is_row(lines[j]) else None


def table_lines(lines: Sequence[str], is_row: Callable[[str], bool], start: int = 0) -> Iterator[tuple[int, str]]:
    """Each line of a table from ``lines[start]`` on, with its index, up to the first blank line after which the
    table does not go on (:func:`goes_on`)."""
    k = start
    while k < len(lines):
        if not lines[k].strip():
            on = goes_on(lines, k, is_row)
            if on is None:
                return
            k = on
        yield k, lines[k]
        k += 1
