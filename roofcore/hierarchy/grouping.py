"""A roofline at any level: the kernels of an analysis summed per op, module, step, NVTX range or time window.

Every kernel lands in exactly one group (``outside`` when the export gives it no ancestor at that level), so the
sums over a level's groups equal the kernel totals. Unknown stays unknown, per value: a group's FLOPs, bytes and
time are the sums of its kernels' *known* values (NaN only when none is known), and ``coverage`` says which share of
its measured time lies on kernels whose roofline is known (FLOPs, bytes and time known). The group's point on the
roofline (achieved FLOP/s, intensity, achieved bandwidth), roof time, headroom and efficiency are computed over
those covered kernels only, so a group never mixes known FLOPs with unknown ones; its bound is the bound holding
most of its covered time.

Tree levels (``module``, ``nvtx`` without a depth) give one row per node of the tree: ``self_*`` sums its own
kernels (those whose innermost range it is), the other columns its whole subtree (``total``). Flat levels
(``kernel``, ``op``, ``step``, ``window``, ``module:DEPTH``) give self = total.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pandas as pd

from ..errors import RoofcoreError
from ..ingest.ancestry import SEP, truncate

if TYPE_CHECKING:
    from ..analyze import Analysis

_T = TypeVar("_T")
#: the values the sums read, each with its known mask; the byte level names; per kernel the bound index; the bound
#: labels; per kernel the bound's weight (:func:`_values`)
_PerKernel = tuple[dict[str, tuple[np.ndarray, np.ndarray]], list[str], np.ndarray, list[str], np.ndarray]

#: the group of kernels without an ancestor at the level asked for
OUTSIDE = "outside"
#: the levels ``by`` accepts (``module`` and ``nvtx`` also as ``module:DEPTH``)
LEVELS = ("kernel", "op", "module", "class", "step", "nvtx", "window")
#: frame columns holding each level's key (``op`` falls back to ``group`` where a reader gives no ``op``, ``step`` to
#: the outermost NVTX range where it gives no ``step``)
COLUMNS = {"kernel": "name", "op": "op", "module": "module", "class": "module", "step": "step", "nvtx": "nvtx"}
#: ``class``: the module path with instance numbers dropped (``TransformerBlock_3`` -> ``TransformerBlock``), so
#: the layers of one kind are one group ("the GEMMs of BertSelfAttention in every layer")
_TREES = ("module", "class", "nvtx")
_INSTANCE = re.compile(r"_\d+$")
_TIMED = ("step", "window")


def parse_by(by: str) -> tuple[str, int | None]:
    """``"module:2"`` -> ``("module", 2)``; a level not in :data:`LEVELS` or a bad depth is an error."""
    level, _, depth = str(by).strip().lower().partition(":")
    if level not in LEVELS:
        raise RoofcoreError(f"--by {by!r}: expected one of kernel, op, module, module:DEPTH, class, class:DEPTH, step, "
                            "nvtx, nvtx:DEPTH")
    if depth:
        if level not in _TREES or not depth.isdigit() or int(depth) < 1:
            raise RoofcoreError(f"--by {by!r}: a depth (a whole number from 1) is for module, class and nvtx only, "
                                "e.g. module:2")
        return level, int(depth)
    return level, None


def factor(frame: pd.DataFrame, col: str) -> tuple[np.ndarray, list[Any]]:
    """A text column's codes (-1: missing) and distinct values, computed once per frame (frames are read-only)."""
    def build() -> tuple[np.ndarray, list[Any]]:
        codes, uniq = pd.factorize(frame[col].to_numpy(dtype=object), use_na_sentinel=True)
        return codes.astype(np.int64), list(uniq)

    return _memo(frame, ("factor", col), build)


def codes_of(frame: pd.DataFrame, level: str, depth: int | None = None, window: float | None = None
             ) -> tuple[np.ndarray, list[Any]]:
    """Per kernel the index of its group at ``level`` in the returned keys (-1: outside): a text column's values
    (paths for tree levels), or window numbers."""
    n = len(frame)
    if level == "window":
        if not window or not window > 0:
            raise RoofcoreError("a time window must be a positive duration, e.g. --window 10ms")
        start = frame["start_s"].to_numpy(dtype=np.float64) if "start_s" in frame.columns else np.full(n, np.nan)
        ok = ~np.isnan(start)
        codes = np.full(n, -1, dtype=np.int64)
        if not ok.any():
            return codes, []
        idx = np.floor((start[ok] - start[ok].min()) / window).astype(np.int64)
        windows, inv = np.unique(idx, return_inverse=True)
        codes[ok] = inv
        return codes, windows.tolist()
    col = COLUMNS[level]
    if level == "op" and col not in frame.columns:
        col = "group"
    if level == "step" and col not in frame.columns and "nvtx" in frame.columns:
        level, col, depth = "nvtx", "nvtx", 1  # no steps recorded: the outermost NVTX range is the step
    if col not in frame.columns:
        return np.full(n, -1, dtype=np.int64), []
    codes, uniq = factor(frame, col)
    if level == "class":
        uniq = [SEP.join(_INSTANCE.sub("", p) for p in str(u).split(SEP)) for u in uniq]
    if depth or level == "class":  # cut each distinct path once, then merge the codes of paths that became one
        cut = truncate(np.array(uniq, dtype=object), depth) if depth else np.array(uniq, dtype=object)
        merged, new = pd.factorize(pd.Series(cut, dtype=object), use_na_sentinel=True)
        return np.where(codes >= 0, merged[np.maximum(codes, 0)], -1), list(new)
    return codes, uniq


def keys_of(frame: pd.DataFrame, level: str, depth: int | None = None, window: float | None = None) -> np.ndarray:
    """Per kernel its group key at ``level`` (None: outside)."""
    codes, uniq = codes_of(frame, level, depth, window)
    keys: np.ndarray = np.array([*uniq, None], dtype=object)[codes]
    return keys


def _per_kernel(a: Analysis, hw_id: str | None) -> _PerKernel:
    """The per-kernel values the sums read, each with the mask of the kernels where it is known (masks shared
    between values, counted once), the byte level names, the bound index per kernel and its labels; once per
    analysis and device."""
    hw = hw_id or a.hardware[0].id
    return _memo(a, ("per_kernel", hw), lambda: _values(a, hw))


def _values(a: Analysis, hw_id: str) -> _PerKernel:
    r = a.result(hw_id)
    f = a.workload.frame
    t = f["time_s"].to_numpy(dtype=np.float64)
    fl = f["flops"].to_numpy(dtype=np.float64)
    troof = np.asarray(r.t_roof, dtype=np.float64)
    timed = a.timed
    covered = timed & ~np.isnan(troof) & ~np.isnan(fl)
    levels = [c[len("bytes_"):] for c in a.workload.byte_columns]
    every = np.ones(len(t), dtype=bool)
    v: dict[str, tuple[np.ndarray, np.ndarray]] = {
        "launches": (f["count"].to_numpy(dtype=np.float64), every), "time_s": (t, ~np.isnan(t)),
        "flops": (fl, ~np.isnan(fl)), "t_roof_s": (troof, ~np.isnan(troof)),
        "cov_time": (t, covered), "cov_flops": (fl, covered), "cov_roof": (troof, covered)}
    for lv in levels:
        b = f[f"bytes_{lv}"].to_numpy(dtype=np.float64)
        ok = ~np.isnan(b)
        v[f"bytes_{lv}"] = (b, ok)
        both = covered & ok
        v[f"cov_b_{lv}"], v[f"cov_bt_{lv}"], v[f"cov_bf_{lv}"] = (b, both), (t, both), (fl, both)
    idx, labels = a.bound_labels(hw_id)
    weight = t if timed.any() else troof
    mask = covered if timed.any() else ~np.isnan(troof)
    bound_w = np.where(mask, weight, 0.0)
    return v, levels, idx, labels, bound_w


_MEMO: dict[int, tuple[weakref.ref[object], dict[object, object]]] = {}


def _memo(obj: object, key: object, build: Callable[[], _T]) -> _T:
    """``build()`` once per live object (by identity; the entry goes with the object) and key."""
    k = id(obj)
    entry = _MEMO.get(k)
    if entry is None or entry[0]() is not obj:
        try:
            ref = weakref.ref(obj, lambda _r: _MEMO.pop(k, None))
        except TypeError:
            return build()
        entry = _MEMO[k] = (ref, {})
    if key not in entry[1]:
        entry[1][key] = build()
    return cast(_T, entry[1][key])  # one key, one build: the value build() made


def _sums(codes: np.ndarray, g: int, v: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per group (codes 0..g-1) the sum of each value's known entries, and the count of known entries."""
    out: dict[str, np.ndarray] = {}
    counts: dict[int, np.ndarray] = {}
    for k, (x, known) in v.items():
        out[k] = np.bincount(codes, weights=x if known.all() else np.where(known, x, 0.0), minlength=g)
        if id(known) not in counts:
            counts[id(known)] = np.bincount(codes, weights=known.astype(np.float64), minlength=g)
        out["#" + k] = counts[id(known)]
    return out


def group(a: Analysis, by: str = "op", window: float | None = None, hw_id: str | None = None) -> pd.DataFrame:
    """One row per group of ``a``'s kernels at level ``by`` on device ``hw_id`` (default the first); see the module
    docstring. ``window`` (seconds) groups by time windows of the kernels' start instead."""
    level, depth = ("window", None) if window is not None else parse_by(by)
    f = a.workload.frame
    codes, uniq = codes_of(f, level, depth, window)
    outside = codes < 0
    if outside.any():
        uniq = [*uniq, OUTSIDE]
        codes = np.where(outside, len(uniq) - 1, codes)
    v, levels, bidx, labels, w = _per_kernel(a, hw_id)
    leaf = _sums(codes, len(uniq), v)
    r = a.result(hw_id or a.hardware[0].id)
    ceilings = [c or "" for c in r.ceilings] or [""]
    bmat = np.hstack([_weights(codes, bidx, len(labels), len(uniq), w),
                      _weights(codes, np.asarray(r.ceiling_code, dtype=np.int64), len(ceilings), len(uniq), w)])
    tree = level in _TREES and depth is None
    if tree:
        nodes, self_rows, sums, bmat = _tree(uniq, leaf, bmat)
    else:
        nodes, self_rows, sums = uniq, np.arange(len(uniq)), leaf
    out = _frame(level, nodes, sums, leaf, self_rows, levels, bmat[:, :len(labels)], labels, tree)
    cmat = bmat[:, len(labels):]
    out.insert(out.columns.get_loc("bound") + 1, "ceiling", pd.Series(
        np.where(cmat.sum(axis=1) > 0, np.array(ceilings, dtype=object)[cmat.argmax(axis=1)], None), dtype=object))
    if level in _TIMED:
        out = _timing(out, f, codes, uniq, level, window)
    return out


def _weights(codes: np.ndarray, idx: np.ndarray, k: int, g: int, w: np.ndarray) -> np.ndarray:
    """A (group × k) matrix: per group the weight ``w`` of its kernels with each value of ``idx`` (0..k-1)."""
    return np.bincount(codes * k + idx, weights=w, minlength=g * k).reshape(g, k)


def _tree(uniq: list[str], leaf: dict[str, np.ndarray], bmat: np.ndarray
          ) -> tuple[list[str], np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Every prefix of every path as a node; each node's sums over its subtree; each node's leaf row (-1: none)."""
    node_of: dict[str, int] = {}
    pairs_leaf, pairs_node = [], []
    for li, p in enumerate(uniq):
        parts = [p] if p == OUTSIDE else p.split(SEP)
        for d in range(1, len(parts) + 1):
            key = SEP.join(parts[:d])
            ni = node_of.setdefault(key, len(node_of))
            pairs_leaf.append(li)
            pairs_node.append(ni)
    pl, pn = np.array(pairs_leaf, dtype=np.int64), np.array(pairs_node, dtype=np.int64)
    g = len(node_of)
    sums = {k: np.bincount(pn, weights=x[pl], minlength=g) for k, x in leaf.items()}
    tb = np.zeros((g, bmat.shape[1]))
    np.add.at(tb, pn, bmat[pl])
    self_rows = np.full(g, -1, dtype=np.int64)
    for li, p in enumerate(uniq):
        self_rows[node_of[p]] = li
    return list(node_of), self_rows, sums, tb


def _known(s: dict[str, np.ndarray], k: str) -> np.ndarray:
    return np.where(s["#" + k] > 0, s[k], np.nan)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((den > 0) & ~np.isnan(num), num / den, np.nan)


def _frame(level: str, nodes: list[Any], s: dict[str, np.ndarray], leaf: dict[str, np.ndarray],
           self_rows: np.ndarray, levels: list[str],
           bmat: np.ndarray, labels: list[str], tree: bool) -> pd.DataFrame:
    """The rows: sums (known values), the covered kernels' point, bound and headroom, and the self columns."""
    names = [str(n).split(SEP)[-1] if isinstance(n, str) else str(n) for n in nodes]
    cols: dict[str, object] = {
        "level": level, "group": pd.Series(nodes, dtype=object), "name": names,
        "depth": [0 if n == OUTSIDE else (str(n).count(SEP) + 1 if level in _TREES else 1) for n in nodes],
        "parent": pd.Series([SEP.join(str(n).split(SEP)[:-1]) or None if level in _TREES and n != OUTSIDE else None
                   for n in nodes], dtype=object),
        "launches": s["launches"].astype(np.int64),
        "time_s": (time_s := _known(s, "time_s")), "flops": _known(s, "flops"),
    }
    for lv in levels:
        cols[f"bytes_{lv}"] = _known(s, f"bytes_{lv}")
    cov_t, cov_roof = _known(s, "cov_time"), _known(s, "cov_roof")
    cols["t_roof_s"] = _known(s, "t_roof_s")
    cols["covered_time_s"], cols["covered_flops"] = cov_t, _known(s, "cov_flops")
    for lv in levels:
        cols[f"covered_bytes_{lv}"] = _known(s, f"cov_b_{lv}")
    cols["coverage"] = _ratio(np.nan_to_num(cov_t), time_s)
    cols["achieved_flops_per_s"] = _ratio(_known(s, "cov_flops"), cov_t)
    cols["attainable_flops_per_s"] = _ratio(_known(s, "cov_flops"), cov_roof)
    cols["efficiency"] = _ratio(cov_roof, cov_t)
    cols["headroom_s"] = np.where(np.isnan(cov_t), np.nan, np.nan_to_num(cov_t) - np.nan_to_num(cov_roof))
    for lv in levels:
        cols[f"intensity_{lv}"] = _ratio(_known(s, f"cov_bf_{lv}"), _known(s, f"cov_b_{lv}"))
        cols[f"bandwidth_{lv}"] = _ratio(_known(s, f"cov_b_{lv}"), _known(s, f"cov_bt_{lv}"))
    lab = np.array(labels, dtype=object)
    has = bmat.sum(axis=1) > 0
    cols["bound"] = pd.Series(np.where(has, lab[bmat.argmax(axis=1)], None), dtype=object)
    own = self_rows >= 0
    src = np.maximum(self_rows, 0)
    cols["self_launches"] = np.where(own, leaf["launches"][src], 0).astype(np.int64)
    for k in ("time_s", "flops", "t_roof_s"):
        val = _known(leaf, k)[src]
        cols[f"self_{k}"] = np.where(own, val, 0.0)  # a node without kernels of its own: none, 0
    cols["self_headroom_s"] = np.where(own, np.where(np.isnan(_known(leaf, "cov_time")), np.nan, np.nan_to_num(
        _known(leaf, "cov_time")) - np.nan_to_num(_known(leaf, "cov_roof")))[src], 0.0)
    out = pd.DataFrame(cols)
    if not tree:
        return out.sort_values("time_s", ascending=False, na_position="last", kind="stable").reset_index(drop=True)
    return out


def _timing(out: pd.DataFrame, f: pd.DataFrame, codes: np.ndarray, uniq: list[Any], level: str,
            window: float | None) -> pd.DataFrame:
    """Steps and windows in time order, with their start, end (GPU span of their kernels) and phase."""
    n = len(f)
    start = f["start_s"].to_numpy(dtype=np.float64) if "start_s" in f.columns else np.full(n, np.nan)
    t = np.nan_to_num(f["time_s"].to_numpy(dtype=np.float64))
    g = len(uniq)
    ok = ~np.isnan(start)
    by = pd.DataFrame({"c": codes[ok], "s": start[ok], "e": start[ok] + t[ok]}).groupby("c", sort=False)
    first = by["s"].min().reindex(range(g)).to_numpy(dtype=np.float64)
    last = by["e"].max().reindex(range(g)).to_numpy(dtype=np.float64)
    span = pd.DataFrame({"group": uniq, "start_s": first, "end_s": last})
    if "phase" in f.columns:  # the phase holding most of each group's time
        pc, names = factor(f, "phase")
        if names:
            has = pc >= 0
            m = _weights(codes[has], pc[has], len(names), g, t[has])
            span["phase"] = pd.Series(np.where(m.sum(axis=1) > 0, np.array(names, dtype=object)[m.argmax(axis=1)],
                                               None), dtype=object)
    out = out.merge(span, on="group", how="left")
    if level == "window" and window is not None:  # (codes_of refused a window level without one)
        t0 = np.nanmin(start) if ok.any() else 0.0
        idx = out["group"].where(out["group"] != OUTSIDE)
        out["start_s"] = np.where(idx.notna(), t0 + idx.astype(float) * float(window), out["start_s"])
        out["name"] = [OUTSIDE if k == OUTSIDE else f"{_ms(float(s) - t0)}" for k, s in zip(out["group"],
                                                                                           out["start_s"], strict=True)]
    key = out["start_s"].where(out["group"] != OUTSIDE, np.inf)
    return out.assign(_k=key).sort_values("_k", kind="stable").drop(columns="_k").reset_index(drop=True)


def _ms(x: float) -> str:
    return f"+{x * 1e3:.6g} ms" if math.isfinite(x) else "?"
