"""What to say about the kernels of a PyTorch trace whose FLOPs are unknown, true to the file.

The import records in the workload's meta whether the trace has input shapes (``record_shapes``: ``"true"``
when any ``cpu_op`` carries ``Input Dims``, or the trace says it was recorded with them) and whether it has CPU
ops at all (``cpu_ops``). Advice follows that evidence (:func:`unknown_flops_hint`):

* no CPU ops: nothing links a kernel to the op that launched it, so record CPU activity (and shapes, where the
  trace has none);
* no shapes: record them (``record_shapes=True``);
* shapes recorded: asking for them again would not help, so say which ops have no FLOP formula (longest first,
  with their launches and time), which have one their recorded inputs do not fit, and how many launches have no
  launching op in the trace.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..models import Workload
from ..units import fmt_time
from .kineto_build import CPU_OPS_HINT, SHAPES_HINT
from .kineto_ops import OPS
from .kineto_serve import LACKING

#: ops named in the hint (longest first); the rest are counted
SHOWN = 3
#: a kernel's group that is no op: the memory events' (their FLOPs are 0, never unknown)
_NOT_OPS = frozenset({"memcpy", "memset"})


def shapes_recorded(w: Workload) -> bool:
    """The trace was recorded with input shapes (the import's evidence: ``meta["record_shapes"]``)."""
    return w.meta.get("record_shapes") == "true"


def _launches(n: int) -> str:
    return f"{n:,} launch{'' if n == 1 else 'es'}"


def _ops(per: pd.DataFrame) -> str:
    """``"aten::sum (9 launches, 253 µs), aten::nll_loss_forward (3 launches, 72 µs) and 4 more ops"``."""
    top = per.head(SHOWN)
    shown = [f"{op} ({_launches(int(n))}, {fmt_time(float(t))})"
             for op, n, t in zip(top.index, top["count"], top["time_s"], strict=True)]
    more = len(per) - SHOWN
    if more > 0:
        return ", ".join(shown) + f" and {more:,} more op{'' if more == 1 else 's'}"
    return " and ".join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else shown[0]


def unknown_flops_hint(w: Workload) -> str:
    """How to get the FLOPs and bytes the workload's PyTorch kernels lack, in one clause (no final period), as the
    file's evidence allows; ``""`` when no FLOP count is unknown."""
    f = w.frame
    miss = f["flops"].isna().to_numpy()
    if not miss.any():
        return ""
    if w.meta.get("cpu_ops") == "false":
        if shapes_recorded(w):
            return ("the trace has no CPU ops (cpu_op events) to link the kernels to: profile with activities="
                    "[ProfilerActivity.CPU, ProfilerActivity.CUDA] (record_shapes=True is on already)")
        return CPU_OPS_HINT.rstrip(".")
    if not shapes_recorded(w):
        return SHAPES_HINT.rstrip(".")
    groups = f["group"].to_numpy(dtype=object)[miss]
    has_op = np.array([isinstance(g, str) and g not in _NOT_OPS for g in groups], dtype=bool)
    rows = pd.DataFrame({"op": groups, "count": f["count"].to_numpy()[miss],
                         "time_s": np.nan_to_num(f["time_s"].to_numpy(dtype=np.float64)[miss])})
    per = rows[has_op].groupby("op", sort=False)[["count", "time_s"]].sum()
    per = per.sort_values(["time_s", "count"], ascending=False, kind="stable")
    lacking = per.index.isin(list(LACKING))  # ops whose formula needs what their events never record
    formula = per.index.isin(list(OPS)) & ~lacking
    parts = []
    if lacking.any():
        parts.append("the FLOPs of " + _ops(per[lacking]) + " depend on what the trace does not record (the "
                     "warnings say what)")
        per, formula = per[~lacking], formula[~lacking]
    if (~formula).any():
        parts.append("the trace has input shapes, but roofcore has no FLOP formula for the ops that launched them: "
                     + _ops(per[~formula]))
    if formula.any():
        parts.append(("the trace has input shapes, but " if not parts else "")
                     + "the recorded inputs do not fit the FLOP formula of " + _ops(per[formula]))
    orphans = int(rows["count"].to_numpy()[~has_op].sum())
    if orphans:
        parts.append(f"{_launches(orphans)} {'has' if orphans == 1 else 'have'} no launching op in the trace")
    return "; ".join(parts)


__all__ = ["SHOWN", "shapes_recorded", "unknown_flops_hint"]
