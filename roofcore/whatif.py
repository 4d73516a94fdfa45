"""What-if steps as a front end gathers them (the Planner, a notebook): scenario steps applied in order, how many
units of work one run of the result does, and the scenario document they make with their base."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from .models import Workload

if TYPE_CHECKING:
    import pandas as pd

#: the What-if steps in the order the Planner applies them
WHATIF_KINDS = ("fuse", "precision", "batch", "shard", "comm_fraction")


def apply_steps(workload: Workload, steps: Sequence[dict[str, Any]]) -> Workload:
    """``workload`` through What-if ``steps`` in order; each step is a scenario step (``{"name": ..., KIND: value}``
    with KIND one of :data:`WHATIF_KINDS`), parsed exactly as :func:`roofcore.plan.run_scenario` parses it."""
    from . import plan

    w = workload
    for i, step in enumerate(steps):
        kind = next(k for k in WHATIF_KINDS if k in step)
        w = plan.apply(kind, step[kind], w, f"steps[{i}].{kind}")
    return w


#: the most launches the What-if tab fuses into one (a chain a kernel could become, not the whole workload)
FUSE_MAX = 32


def _named(frame: pd.DataFrame, rows: Sequence[int], shown: int = 4) -> str:
    names = [f"{i}: {frame['name'].iat[i]}" for i in rows[:shown]]
    return ", ".join(names) + (f" and {len(rows) - shown} more" if len(rows) > shown else "")


def fuse_problem(workload: Workload, picks: Sequence[int]) -> str | None:
    """Why fusing the launches ``picks`` (0-based rows, in workload order) gives no result to compare, as a
    sentence; ``None`` when it does. A chain is two to :data:`FUSE_MAX` consecutive launches, each with its FLOPs
    and off-chip bytes: the fused kernel's work is their sum, unknown when any part is unknown (and a total
    without it would compare the base's known parts with nothing)."""
    from .plan.transforms import HBM

    idx = sorted({int(i) for i in picks})
    f = workload.frame
    if len(idx) < 2:
        return "Fusing needs a chain: pick its first and its last launch."
    if idx[0] < 0 or idx[-1] >= len(f):
        return f"The workload has launches 0 to {len(f) - 1}; the chain names {idx[0]} to {idx[-1]}."
    gaps = [i for i in range(idx[0], idx[-1] + 1) if i not in set(idx)]
    if gaps:
        return (f"A chain is consecutive launches: {_named(f, gaps)} between {idx[0]} and {idx[-1]} "
                "would run in between.")
    if len(idx) > FUSE_MAX:
        return (f"{len(idx)} launches is not a chain one kernel could become: fuse at most {FUSE_MAX} at once "
                "(one step per chain).")
    out = []
    for col, what in (("flops", "FLOP count"), (HBM, "off-chip byte count")):
        vals = f[col].to_numpy(dtype=np.float64)[idx] if col in f else np.full(len(idx), np.nan)
        missing = [i for i, v in zip(idx, vals, strict=True) if v != v]
        if missing:
            out.append(f"{_named(f, missing)} {'has' if len(missing) == 1 else 'have'} no {what}")
    if out:
        return ("The fused kernel cannot be computed: " + "; ".join(out) + ", so its work would be unknown. "
                "Pick a chain whose launches all have FLOPs and bytes.")
    return None


def batch_units(steps: Sequence[dict[str, Any]]) -> float:
    """How many times the base's work a run of the What-if ``steps`` does: the product of their whole-workload
    batch factors (a batch step limited to some kernels changes no unit)."""
    units = 1.0
    for step in steps:
        b = step.get("batch")
        if isinstance(b, int | float) and not isinstance(b, bool):
            units *= float(b)
        elif isinstance(b, dict) and not b.get("kernels") and isinstance(b.get("factor"), int | float):
            units *= float(b["factor"])
    return units


def _clean_value(v: object) -> object:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(v) else None
    return v


def inline_kernels(workload: Workload) -> list[dict[str, Any]]:
    """The workload's kernels as inventory YAML entries (totals over launches; unknown values left out)."""
    f = workload.frame
    cols = ["name", "count", "flops", *workload.byte_columns,
            *(c for c in ("read_bytes", "written_bytes", "weight_bytes", "time_s") if c in f),
            "precision", "unit", "group"]
    out = []
    for rec in f[[c for c in cols if c in f]].to_dict("records"):
        k: dict[str, Any] = {}
        for c, v in rec.items():
            v = _clean_value(v)
            if v is None or (isinstance(v, float) and v != v):
                continue
            k[c] = v
        out.append(k)
    return out


def scenario_yaml(name: str, base: dict[str, Any], hardware: Sequence[str], steps: Sequence[dict[str, Any]], *,
                  measured_on: str | None = None, price_per_hour: dict[str, float] | None = None) -> str:
    """A scenario document (``roofline plan`` and the Planner's Scenario tab read it back)."""
    doc: dict[str, Any] = {"name": name, "base": base, "hardware": list(hardware)}
    if measured_on:
        doc["measured_on"] = measured_on
    if price_per_hour:
        doc["price_per_hour"] = {k: float(v) for k, v in price_per_hour.items()}
    doc["steps"] = [dict(s) for s in steps]
    text: str = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)
    return text
