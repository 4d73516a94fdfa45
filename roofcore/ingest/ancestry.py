"""Ancestry from a timeline's nesting: which ranges (modules, annotations, NVTX / roctx ranges, steps) hold each
kernel's launch, as a path of names, outermost first.

Format-free: a reader hands over its ranges as columns (thread code, start, end, name) and, per kernel, where it
was launched (thread code, time); :func:`paths` gives each kernel the path of the innermost range holding its
launch on that thread, :func:`containing` the index of the one range (steps: disjoint) holding a time. Ranges on
one thread are properly nested, as profiler ranges are; a range that overlaps its neighbour without nesting is
treated as closed where the next one opens.
"""

from __future__ import annotations

import numpy as np

#: the separator of a path's names, outermost first (``BertModel › BertEncoder › BertLayer_3``)
SEP = " › "


def _innermost(r_thread: np.ndarray, r_start: np.ndarray, r_end: np.ndarray, q_thread: np.ndarray,
               q_time: np.ndarray) -> np.ndarray:
    # the same vectorised containment that links a kernel to its op
    from ..ingest.kineto_link import innermost

    return innermost(r_thread, r_start, r_end, q_thread, q_time)


def range_paths(r_thread: np.ndarray, r_start: np.ndarray, r_end: np.ndarray, names: list[str]) -> list[str]:
    """Per range, its path: the names of the ranges holding it on its thread, outermost first, then its own.

    One walk over the ranges sorted by (thread, start, longest first) with a stack of the open ones."""
    n = len(names)
    out = [""] * n
    if not n:
        return out
    start = np.nan_to_num(r_start, nan=np.inf)
    order = np.lexsort((np.arange(n), -np.nan_to_num(r_end, nan=-np.inf), start, r_thread)).tolist()
    th, st, en = r_thread.tolist(), start.tolist(), r_end.tolist()
    stack: list[int] = []
    cur = None
    for i in order:
        if th[i] != cur:
            stack.clear()
            cur = th[i]
        s = st[i]
        while stack and en[stack[-1]] < s:
            stack.pop()
        out[i] = f"{out[stack[-1]]}{SEP}{names[i]}" if stack else names[i]
        stack.append(i)
    return out


def paths(r_thread: np.ndarray, r_start: np.ndarray, r_end: np.ndarray, names: list[str], q_thread: np.ndarray,
          q_time: np.ndarray) -> np.ndarray:
    """Per query (a kernel's launch: thread, time), the path of the innermost range holding it, or None."""
    res = np.full(len(q_time), None, dtype=object)
    if not len(names) or not len(q_time):
        return res
    at = _innermost(r_thread, r_start, r_end, q_thread, q_time)
    hit = at >= 0
    if hit.any():
        used = np.unique(at[hit])
        table = np.full(len(names), None, dtype=object)
        table[used] = np.array(range_paths(r_thread, r_start, r_end, names), dtype=object)[used]
        res[hit] = table[at[hit]]
    return res


def containing(r_start: np.ndarray, r_end: np.ndarray, q_time: np.ndarray) -> np.ndarray:
    """Per time, the index of the range (ranges disjoint, as steps are) holding it, or -1."""
    at = np.full(len(q_time), -1, dtype=np.int64)
    ok = ~np.isnan(r_start) & ~np.isnan(r_end)
    if not ok.any() or not len(q_time):
        return at
    idx = np.flatnonzero(ok)
    idx = idx[np.argsort(r_start[idx], kind="stable")]
    s, e = r_start[idx], r_end[idx]
    pos = np.searchsorted(s, np.nan_to_num(q_time, nan=-np.inf), side="right") - 1
    inside = (pos >= 0) & ~np.isnan(q_time)
    inside[inside] = q_time[inside] <= e[pos[inside]]
    at[inside] = idx[pos[inside]]
    return at


def depth_of(path: str | None) -> int:
    return 0 if not path else path.count(SEP) + 1


def truncate(values: np.ndarray, depth: int) -> np.ndarray:
    """Paths cut to their first ``depth`` names (None stays None); computed once per distinct path."""
    import pandas as pd

    codes, uniq = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    cut = np.array([SEP.join(p.split(SEP)[:depth]) for p in uniq] + [None], dtype=object)
    res: np.ndarray = cut[codes]
    return res


def nvtx_path(values: np.ndarray | None, sep: str) -> np.ndarray | None:
    """Range names a reader joined with ``sep`` (outermost first) as a path joined with :data:`SEP`; once per
    distinct value."""
    if values is None:
        return None
    import pandas as pd

    codes, uniq = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    joined = np.array([SEP.join(x for x in str(p).split(sep) if x) or None for p in uniq] + [None], dtype=object)
    res: np.ndarray = joined[codes]
    return res
