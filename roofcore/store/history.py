"""How each kernel moved over a project's saved runs on one device: measured time and fraction of its roof per
run, and the biggest movers first. Every run is analysed again from its files with today's catalog (nothing is
frozen at save time), launches of a kernel summed by name as in :func:`roofcore.plan.compare`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..models import Hardware, Workload
from ..plan import by_name, evaluate
from .identity import EVERYONE, Viewer
from .repository import RunStore
from .values import RunInfo


@dataclass(frozen=True)
class History:
    """``runs``: one row per run, oldest first (``run_id, run, created_at, kernels, time_s, t_roof_s``).
    ``kernels``: one row per run × kernel (``run_id, run, created_at, kernel, time_s, t_roof_s, efficiency,
    bound``; seconds, efficiency = t_roof / measured time, NaN where unknown). ``movers``: one row per kernel
    seen in at least two runs, biggest change first (``kernel, runs, first/last time and efficiency, changes``)."""

    hardware: str
    runs: pd.DataFrame
    kernels: pd.DataFrame
    movers: pd.DataFrame


def kernel_history(items: Sequence[tuple[RunInfo, Workload]], hw: Hardware, *, achievable: bool = False) -> History:
    """The history of ``items`` (runs with their workloads, any order) on ``hw``."""
    return assemble(hw.id, [run_rows(info, w, hw, achievable=achievable) for info, w in items])


def run_rows(info: RunInfo, w: Workload, hw: Hardware, *, achievable: bool = False) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One run's part of a :class:`History` on ``hw``: its rows of ``kernels`` and its row of ``runs``. A run never
    changes, so a caller may keep this per run id, device and options and :func:`assemble` any window of runs."""
    tab = evaluate(by_name(w), hw, achievable=achievable).table(hw.id, messages=False)
    t = tab["time_s"].to_numpy(dtype=np.float64)
    t = np.where(t > 0, t, np.nan)  # a zero or negative time is no measurement
    frame = pd.DataFrame({
        "run_id": info.id, "run": info.name, "created_at": info.created_at, "kernel": tab["name"].astype(str),
        "time_s": t, "t_roof_s": tab["t_roof_s"].to_numpy(dtype=np.float64),
        "efficiency": tab["efficiency"].to_numpy(dtype=np.float64), "bound": tab["bound"].astype(object)})
    row = {"run_id": info.id, "run": info.name, "created_at": info.created_at, "kernels": len(tab),
           "time_s": _known_sum(t),
           "t_roof_s": _known_sum(tab["t_roof_s"].to_numpy(dtype=np.float64))}
    return frame, row


def _known_sum(x: np.ndarray) -> float:
    """Σ of the known values; NaN (unknown, never 0) where none is known."""
    return float(np.nansum(x)) if np.isfinite(x).any() else np.nan


def assemble(hw_id: str, parts: Sequence[tuple[pd.DataFrame, dict[str, Any]]]) -> History:
    """The :class:`History` of runs given as :func:`run_rows` parts (any order: oldest first by time, then id)."""
    parts = sorted(parts, key=lambda p: (p[1]["created_at"], p[1]["run_id"]))
    cols = ["run_id", "run", "created_at", "kernel", "time_s", "t_roof_s", "efficiency", "bound"]
    kernels = pd.concat([f for f, _ in parts], ignore_index=True) if parts else pd.DataFrame(columns=cols)
    runs = pd.DataFrame([r for _, r in parts], columns=["run_id", "run", "created_at", "kernels", "time_s",
                                                         "t_roof_s"])
    return History(hardware=hw_id, runs=runs, kernels=kernels, movers=movers(kernels))


def movers(kernels: pd.DataFrame) -> pd.DataFrame:
    """Per kernel, its first and last measured time (else roofline time) across the runs and the change; sorted
    by the size of the change in time, on a log scale (halving and doubling move as much), then by the change
    in its fraction of the roof."""
    cols = ["kernel", "runs", "basis", "first_s", "last_s", "time_change", "first_efficiency", "last_efficiency",
            "efficiency_change", "bound"]
    if kernels.empty:
        return pd.DataFrame(columns=cols)
    g = kernels.groupby("kernel", sort=False)  # rows are in run order: first()/last() skip NaN
    t, r, e = g["time_s"], g["t_roof_s"], g["efficiency"]
    measured = (t.count() >= 2).to_numpy()
    out = pd.DataFrame({
        "kernel": g.size().index.astype(str), "runs": g.size().to_numpy(),
        "basis": np.where(measured, "measured", "roofline"),
        "first_s": np.where(measured, t.first(), r.first()), "last_s": np.where(measured, t.last(), r.last()),
        "first_efficiency": np.where(e.count() >= 2, e.first(), np.nan),
        "last_efficiency": np.where(e.count() >= 2, e.last(), np.nan), "bound": g["bound"].last().to_numpy()})
    out = out[measured | (r.count() >= 2).to_numpy()].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["time_change"] = np.where(out["first_s"] > 0, out["last_s"] / out["first_s"] - 1, np.nan)
        out["efficiency_change"] = np.where(out["first_efficiency"] > 0,
                                            out["last_efficiency"] / out["first_efficiency"] - 1, np.nan)
    out = out[cols]
    if out.empty:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.abs(np.log(out["last_s"] / out["first_s"]))
        escore = np.abs(np.log((out["last_efficiency"] / out["first_efficiency"]).to_numpy(dtype=np.float64)))
    out = out.assign(_s=np.nan_to_num(score, nan=0.0), _e=np.nan_to_num(escore, nan=0.0))
    return out.sort_values(["_s", "_e", "kernel"], ascending=[False, False, True], kind="stable").drop(
        columns=["_s", "_e"]).reset_index(drop=True)


def project_history(store: RunStore, project: str, hw: Hardware, viewer: Viewer = EVERYONE, *, last: int = 10,
                    achievable: bool = False) -> History:
    """The last ``last`` runs of ``project`` that ``viewer`` may see, read again and analysed on ``hw``."""
    runs = store.list(viewer, project=project, limit=last)
    return kernel_history([(r, store.workload(r.id, viewer)[1]) for r in runs], hw, achievable=achievable)
