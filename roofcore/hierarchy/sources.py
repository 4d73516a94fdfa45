"""Counters beside formulas: where one kernel has FLOPs or bytes from two sources (a timeline's op formulas from
recorded shapes, and counters of the same launches: :func:`roofcore.ingest.join.join_counters` keeps both as
``formula_<col>`` and ``counter_<col>``), both per op with their ratio (counter ÷ formula), a ratio outside
[:data:`LOW`, :data:`HIGH`] flagged with its likely causes. The analysis uses the counters by default
(``flops``/``bytes_*`` hold them) and says so; :func:`prefer` switches to the formulas.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..models import Workload
from .grouping import OUTSIDE

LOW, HIGH = 0.8, 1.25
#: likely causes of a ratio beyond the band, per quantity and direction
CAUSES = {
    ("flops", "high"): "padding and tile quantisation (whole tiles computed past the matrix edge), recomputation, "
                       "or a formula that misses an epilogue (bias, activation, scaling)",
    ("flops", "low"): "work the kernel skips (causal masking, sparsity, early exit), or counters that miss a pipe "
                      "(tensor-core instructions not collected)",
    ("bytes", "high"): "cache misses re-reading operands (tiles evicted before reuse), or a formula that assumes "
                       "each operand is read once",
    ("bytes", "low"): "operands already in cache from the previous kernel, or fused intermediates that never reach "
                      "memory",
}


def pairs_in(w: Workload) -> list[str]:
    """The columns with both a formula and a counter value (``flops``, ``bytes_hbm``, ...)."""
    return [c[len("formula_"):] for c in w.frame.columns
            if c.startswith("formula_") and f"counter_{c[len('formula_'):]}" in w.frame.columns]


def compare(w: Workload) -> pd.DataFrame | None:
    """Per op (the ``op`` column, else ``group``, else the kernel name): launches with both values, the formula's
    and the counters' sums over them, their ratio, whether it is flagged and why. None without two sources."""
    cols = pairs_in(w)
    if not cols:
        return None
    f = w.frame
    key_col = "op" if "op" in f.columns else "group" if "group" in f.columns else "name"
    keys = f[key_col].astype(object).where(f[key_col].notna(), OUTSIDE)
    rows = []
    for c in cols:
        a, b = f[f"formula_{c}"].to_numpy(dtype=np.float64), f[f"counter_{c}"].to_numpy(dtype=np.float64)
        both = ~np.isnan(a) & ~np.isnan(b)
        d = pd.DataFrame({"op": keys[both].to_numpy(), "formula": a[both], "counter": b[both]})
        g = d.groupby("op", sort=False).agg(launches=("formula", "size"), formula=("formula", "sum"),
                                            counter=("counter", "sum")).reset_index()
        g.insert(1, "quantity", c)
        rows.append(g)
    out = pd.concat(rows, ignore_index=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["ratio"] = np.where(out["formula"] > 0, out["counter"] / out["formula"], np.nan)
    high, low = out["ratio"] > HIGH, out["ratio"] < LOW
    out["flagged"] = high | low
    kind = np.where(out["quantity"] == "flops", "flops", "bytes")
    out["causes"] = [CAUSES[(k, "high")] if h else CAUSES[(k, "low")] if lo else None
                     for k, h, lo in zip(kind, high, low, strict=True)]
    return out.sort_values(["quantity", "counter"], ascending=[True, False], kind="stable").reset_index(drop=True)


def prefer(w: Workload, source: str = "counters") -> Workload:
    """``w`` with FLOPs and bytes from ``source`` ("counters", the default and what the frame holds, or
    "formulas") where that source has a value; a note in the warnings says which is used."""
    cols = pairs_in(w)
    if not cols:
        return w
    if source not in ("counters", "formulas"):
        raise ValueError(f"source must be 'counters' or 'formulas', not {source!r}")
    f = w.frame.copy()
    src = "formula" if source == "formulas" else "counter"
    for c in cols:
        v = f[f"{src}_{c}"].to_numpy(dtype=np.float64)
        f[c] = np.where(np.isnan(v), f[c].to_numpy(dtype=np.float64), v)
    other = "op formulas (from recorded shapes)" if source == "counters" else "counters"
    note = (f"FLOPs and bytes from {'counters' if source == 'counters' else 'op formulas (from recorded shapes)'} "
            f"where a kernel has both; the {other} are kept beside them (roofline analyze --flops-from "
            f"{'formulas' if source == 'counters' else 'counters'} switches).")
    return replace(w, frame=f, warnings=(*w.warnings, note), meta={**w.meta, "flops_from": source})
