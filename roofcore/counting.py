"""How many kernels: the one count every page, sentence and table of the tool gives (``"18 kernels (98 launches)"``).

A kernel is the rows alike in :data:`KERNEL_KEYS` (name, precision, unit, group): what "Combine repeated launches"
(:func:`roofcore.ingest.aggregate`) sums into one row. Its launches are the rows' ``count`` summed. So a workload
counts the same whether its launches are combined or not, and a subset of its rows (the kernels with a known
roofline, those drawn on a chart, those a recommendation names) counts its kernels, not its rows. Runtime and queue
entries (``<barrier packet>``, ``hipMemcpy``) are not in the frame (:mod:`roofcore.ingest.pseudo`), so they never
count.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np
import pandas as pd

#: the columns that make rows one kernel (roofcore.ingest.aggregate sums rows alike in them)
KERNEL_KEYS = ("name", "precision", "unit", "group")
#: the codes of the last frames counted (id → (the frame, weakly; its codes)): pages count one frame many times
_CODES: dict[int, tuple[weakref.ref[pd.DataFrame], np.ndarray]] = {}
_KEEP = 8


def kernel_codes(frame: pd.DataFrame) -> np.ndarray:
    """Per row of ``frame``, a number naming its kernel (rows alike in :data:`KERNEL_KEYS` share it; a missing
    value and ``""`` are alike, as when launches are combined). Cached per frame: a frame is never changed."""
    hit = _CODES.get(id(frame))
    if hit is not None and hit[0]() is frame:
        return hit[1]
    code = np.zeros(len(frame), dtype=np.int64)
    for key in (k for k in KERNEL_KEYS if k in frame.columns):
        col, uniques = pd.factorize(frame[key], use_na_sentinel=True)
        col = col.astype(np.int64) + 1  # 0: missing
        blank = np.flatnonzero(np.asarray(uniques, dtype=object) == "")
        if len(blank):
            col[col == blank[0] + 1] = 0  # "" is no value, as a missing one
        code = pd.factorize(code * (len(uniques) + 1) + col)[0].astype(np.int64)  # stays below the row count
    while len(_CODES) >= _KEEP:
        _CODES.pop(next(iter(_CODES)))
    with contextlib.suppress(TypeError):  # a frame that cannot be referenced weakly is not cached
        _CODES[id(frame)] = (weakref.ref(frame), code)
    return code


def kernel_counts(frame: pd.DataFrame, rows: np.ndarray | None = None) -> tuple[int, int]:
    """Kernels and launches among ``rows`` of ``frame`` (a boolean mask or row positions; None: every row)."""
    codes = kernel_codes(frame)
    count = frame["count"].to_numpy() if "count" in frame.columns else np.ones(len(frame), dtype=np.int64)
    if rows is not None:
        rows = np.asarray(rows)
        codes, count = codes[rows], count[rows]
    return int(np.unique(codes).size), int(np.nansum(count))


def rows_are_launches(frame: pd.DataFrame) -> bool:
    """Some kernel has several rows (launches not combined): a sentence about some of the rows then says their
    launches too ("17 kernels (48 launches)"); where each row is one kernel its launch count is in its row."""
    return kernel_counts(frame)[0] != len(frame)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 kernel"``, ``"1,545 kernels"``."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def count_text(frame: pd.DataFrame, rows: np.ndarray | None = None, *, launches: bool = True) -> str:
    """``"18 kernels (98 launches)"``, ``"1 kernel"``: kernels among ``rows``, with their launches where they differ
    (and ``launches``)."""
    kernels, n = kernel_counts(frame, rows)
    return plural(kernels, "kernel") + (f" ({plural(n, 'launch', 'launches')})" if launches and n != kernels else "")


def count_of(frame: pd.DataFrame, rows: np.ndarray, of: np.ndarray | None = None) -> str:
    """``"21 of 38 kernels"``: the kernels among ``rows`` of those among ``of`` (None: every row)."""
    part, _ = kernel_counts(frame, rows)
    whole, _ = kernel_counts(frame, of)
    return f"{part:,} of {plural(whole, 'kernel')}"


__all__ = ["KERNEL_KEYS", "count_of", "count_text", "kernel_codes", "kernel_counts", "plural", "rows_are_launches"]
