"""Groups as points: each group of :func:`roofcore.hierarchy.group` as one row of a workload (its covered kernels'
FLOPs, bytes and time summed), so the ordinary roofline chart and analysis place it like a kernel."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..ingest.frames import make_frame
from ..models import Workload
from .grouping import OUTSIDE

#: a module instance's number (``TransformerBlock_3``): modules of one class share a colour
_INSTANCE = r"_\d+$"


def group_workload(rows: pd.DataFrame, byte_names: list[str], *, name: str = "groups",
                   keep_outside: bool = True) -> Workload:
    """One row per group with a known roofline for part of its time: FLOPs, bytes and time of its covered kernels,
    the precision and unit of the ceiling holding most of its time; ``group`` is its class (a tree's node name
    without its instance number), its phase (steps and windows) or its level. Groups without a covered kernel are left out (they have no point)."""
    sel = rows["covered_time_s"].to_numpy(dtype=np.float64) > 0
    if not keep_outside:
        sel &= (rows["group"] != OUTSIDE).to_numpy()
    r = rows[sel]
    n = len(r)
    ceil = r["ceiling"].astype(object).fillna("").to_numpy(dtype=object)
    prec = np.array([c.split("-", 1)[0] or None if c else None for c in ceil], dtype=object)
    unit = np.array([c.split("-", 1)[1] if "-" in c else None for c in ceil], dtype=object)
    if "phase" in r.columns and r["phase"].notna().any():
        grp = r["phase"].astype(object).where(r["phase"].notna(), "no phase")
    elif "parent" in r.columns and r["parent"].notna().any():  # a tree: by class (the layers of a kind alike)
        grp = r["name"].astype(str).str.replace(_INSTANCE, "", regex=True)
    else:
        grp = r["level"]
    cols: dict[str, object] = {
        "name": r["name"].astype(str).to_numpy(dtype=object), "flops": r["covered_flops"].to_numpy(dtype=np.float64),
        "time_s": r["covered_time_s"].to_numpy(dtype=np.float64), "precision": prec, "unit": unit,
        "group": grp.to_numpy(dtype=object), "count": r["launches"].to_numpy(dtype=np.int64),
        "row": r["group"].astype(str).to_numpy(dtype=object), "source": np.full(n, name, dtype=object),
    }
    for b in byte_names:
        if f"covered_bytes_{b}" in r.columns:
            cols[f"bytes_{b}"] = r[f"covered_bytes_{b}"].to_numpy(dtype=np.float64)
    return Workload(frame=make_frame(cols, n), name=name, sources=(name,), formats=("groups",))


def unplaced_workload(rows: pd.DataFrame, name: str = "groups") -> Workload:
    """The groups of ``rows`` as rows whose FLOPs, bytes and time are unknown (at least one row): a roofline of them
    draws the roofs and no point, where no group has a kernel with a known roofline."""
    n = max(len(rows), 1)
    names = rows["name"].astype(str).to_numpy(dtype=object) if len(rows) else np.array(["none"], dtype=object)
    frame = make_frame({"name": names, "flops": np.full(n, np.nan), "time_s": np.full(n, np.nan), "row": names,
                        "source": np.full(n, name, dtype=object)}, n)
    return Workload(frame=frame, name=name, sources=(name,), formats=("groups",))
