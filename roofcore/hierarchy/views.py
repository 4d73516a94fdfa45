"""Hierarchy views for the app and the report: a tree in reading order, the children of one node, and where a set
of kernels sits ("in OAIAttention, one per TransformerBlock (36), op aten::addmm")."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..ingest.ancestry import SEP
from ..models import Workload
from .grouping import OUTSIDE

if TYPE_CHECKING:
    from ..analyze import Analysis

_INSTANCE = re.compile(r"_\d+$")


def class_of(name: str) -> str:
    """A module instance's class: ``TransformerBlock_3`` -> ``TransformerBlock``."""
    return _INSTANCE.sub("", name)


def preorder(rows: pd.DataFrame, max_depth: int | None = None) -> pd.DataFrame:
    """A tree level's rows (:func:`roofcore.hierarchy.group` at ``module`` / ``nvtx``) in reading order: each node
    followed by its children, siblings by time (most first), ``outside`` last; ``label`` indented by depth."""
    if not len(rows):
        return rows.assign(label=[])
    t = rows["time_s"].fillna(0.0).to_numpy()
    by_parent: dict[object, list[int]] = {}
    for i, p in enumerate(rows["parent"].tolist()):
        by_parent.setdefault(p, []).append(i)
    order: list[int] = []
    roots = [i for i in by_parent.get(None, []) if rows["group"].iat[i] != OUTSIDE]
    stack = sorted(roots, key=lambda i: t[i])  # popped most time first
    while stack:
        i = stack.pop()
        order.append(i)
        if max_depth is None or rows["depth"].iat[i] < max_depth:
            stack.extend(sorted(by_parent.get(rows["group"].iat[i], []), key=lambda k: t[k]))
    order += [i for i in range(len(rows)) if rows["group"].iat[i] == OUTSIDE]
    out = rows.iloc[order].reset_index(drop=True)
    out["label"] = ["\u2003" * max(int(d) - 1, 0) + str(n) for d, n in zip(out["depth"], out["name"], strict=True)]
    return out


def members(w: Workload, node: str, level: str = "module") -> np.ndarray:
    """Which kernels lie in ``node`` or below it (``outside``: those with no ancestor at ``level``)."""
    col = w.frame[level] if level in w.frame.columns else pd.Series([None] * len(w.frame))
    vals = col.to_numpy(dtype=object)
    if node == OUTSIDE:
        missing: np.ndarray = pd.isna(vals)
        return missing
    s = pd.Series(vals, dtype=object)
    inside: np.ndarray = ((s == node) | s.str.startswith(node + SEP, na=False)).to_numpy(dtype=bool)
    return inside


def where_text(w: Workload, names: tuple[str, ...] | list[str]) -> str:
    """Where the kernels ``names`` run, by their time: the module class holding most of it (with how many
    instances, and of which parent class, e.g. one per TransformerBlock) and the op; "" without a hierarchy."""
    f = w.frame
    if not ({"module", "op"} & set(f.columns)) or not len(names):
        return ""
    sel = f["name"].isin(list(names)).to_numpy()
    if not sel.any():
        return ""
    t = np.nan_to_num(f["time_s"].to_numpy(dtype=np.float64)[sel]) + 1e-30
    parts = []
    if "module" in f.columns:
        paths = f["module"].to_numpy(dtype=object)[sel]
        known = pd.notna(paths)
        if known.any():
            cls = pd.Series([class_of(str(p).split(SEP)[-1]) for p in paths[known]])
            share = pd.Series(t[known]).groupby(cls.to_numpy()).sum().sort_values(ascending=False)
            top = str(share.index[0])
            mine = pd.Series(paths[known])[cls.to_numpy() == top].unique()
            text = f"in {top}"
            if len(mine) > 1:  # "one per TransformerBlock" where each instance has a parent of its own
                owners = {SEP.join(str(p).split(SEP)[:-1]) for p in mine}
                parents = {class_of(o.split(SEP)[-1]) for o in owners if o}
                one = len(owners) == len(mine) and len(parents) == 1 and "" not in owners
                text += f", one per {next(iter(parents))} ({len(mine)})" if one else f" ({len(mine)} instances)"
            parts.append(f"{text}: {share.iloc[0] / t.sum():.0%} of their time")
    if "op" in f.columns:
        ops = f["op"].to_numpy(dtype=object)[sel]
        known = pd.notna(ops)
        if known.any():
            share = pd.Series(t[known]).groupby(ops[known]).sum().sort_values(ascending=False)
            parts.append(f"op {share.index[0]}")
    return "Where: " + "; ".join(parts) + "." if parts else ""


def group_table(rows: pd.DataFrame, tree: bool = False) -> pd.DataFrame:
    """Group rows (:func:`roofcore.hierarchy.group`) as a grid: numbers in one display unit per column, a tree
    indented in reading order."""
    r = preorder(rows) if tree else rows.assign(label=rows["name"].astype(str))
    total = r["self_time_s"].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        out = pd.DataFrame({
            "Group": r["label"].to_numpy(dtype=object),
            "Launches": r["launches"].to_numpy(dtype=np.int64),
            "Time (ms)": r["time_s"].to_numpy(dtype=np.float64) * 1e3,
            "Share (%)": r["time_s"].to_numpy(dtype=np.float64) / total * 100 if total else np.nan,
            "Known (%)": r["coverage"].to_numpy(dtype=np.float64) * 100,
            "GFLOP": r["flops"].to_numpy(dtype=np.float64) / 1e9,
            "Off-chip (MB)": r.get("bytes_hbm", pd.Series(np.nan, index=r.index)).to_numpy(dtype=np.float64) / 1e6,
            "Achieved (TFLOP/s)": r["achieved_flops_per_s"].to_numpy(dtype=np.float64) / 1e12,
            "Of roof (%)": r["efficiency"].to_numpy(dtype=np.float64) * 100,
            "Bound": r["bound"].astype(object).where(r["bound"].notna(), "unknown").to_numpy(dtype=object),
            "Headroom (ms)": r["headroom_s"].to_numpy(dtype=np.float64) * 1e3,
            "Self time (ms)": r["self_time_s"].to_numpy(dtype=np.float64) * 1e3,
            "Path": r["group"].astype(str).to_numpy(dtype=object),
        })
    if "outlier" in r.columns:
        out["Outlier"] = r["differs"].where(r["outlier"], "").to_numpy(dtype=object)
    return out


def node_contents(a: Analysis, node: str, level: str = "module", hw_id: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ops and the kernels under ``node`` (itself and below): launches, time, known FLOPs and roof time summed,
    most time first."""
    hw_id = hw_id or a.hardware[0].id
    f = a.workload.frame
    sel = members(a.workload, node, level)
    t_roof = np.asarray(a.result(hw_id).t_roof, dtype=np.float64)
    d = pd.DataFrame({"op": (f["op"] if "op" in f.columns else f["group"]).astype(object).fillna(OUTSIDE)[sel],
                      "Kernel": f["name"][sel], "Launches": f["count"][sel],
                      "Time (ms)": f["time_s"][sel] * 1e3, "GFLOP": f["flops"][sel] / 1e9,
                      "Roof time (ms)": t_roof[sel] * 1e3})
    agg = {"Launches": "sum", "Time (ms)": lambda s: s.sum(min_count=1), "GFLOP": lambda s: s.sum(min_count=1),
           "Roof time (ms)": lambda s: s.sum(min_count=1)}
    ops = d.groupby("op", sort=False).agg(agg).reset_index().rename(columns={"op": "Op"})
    kernels = d.groupby(["Kernel", "op"], sort=False).agg(agg).reset_index().rename(columns={"op": "Op"})
    key = "Time (ms)"
    return (ops.sort_values(key, ascending=False, na_position="last").reset_index(drop=True),
            kernels.sort_values(key, ascending=False, na_position="last").reset_index(drop=True))
