"""Rooflines above the kernel: per op, module, step, NVTX range and time window.

Readers that know a kernel's ancestry put it in the workload frame as optional columns (absent: the export has
none; None in a row: that kernel has none, it is "outside"):

* ``step`` — the profiler step (``ProfilerStep#N``) or, without steps, the outermost annotation / NVTX range;
* ``module`` — the ``nn.Module`` path, outermost first, names joined by " › " (``GptOss_0 › TransformerBlock_3``);
  the ``class`` level reads it without instance numbers (every ``TransformerBlock`` one group);
* ``op`` — the launching op (``aten::addmm``);
* ``nvtx`` — the annotation (``record_function``), NVTX or roctx path, joined by " › ";
* ``phase`` — a phase the annotations name (``forward``, ``backward``, ``optimizer``, ``prefill``, ``decode``);
* ``start_s`` — the kernel's start on the GPU timeline (seconds; for time windows).

:func:`group` sums an analysis at any of those levels (:mod:`.grouping`); :func:`flag_steps` marks steps that are
mostly unknown or outliers (:mod:`.timeline`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ingest.ancestry import SEP
from .grouping import COLUMNS, LEVELS, OUTSIDE, group, parse_by
from .timeline import MIN_COVERAGE, OUTLIER_FACTOR, flag_steps

if TYPE_CHECKING:
    from ..models import Workload

#: the frame columns that carry ancestry
ANCESTRY = ("step", "module", "op", "nvtx", "phase", "start_s")


def levels_of(workload: Workload) -> list[str]:
    """The levels this workload has data for (``kernel`` always; ``op`` where a reader linked ops; the others where
    at least one kernel has an ancestor at that level)."""
    f = workload.frame
    out = ["kernel"]
    for level in ("op", "module", "class", "step", "nvtx"):
        col = COLUMNS[level]
        if col in f.columns and f[col].notna().any():
            out.append(level)
    if "start_s" in f.columns and f["start_s"].notna().any():
        out.append("window")
    return out


__all__ = ["ANCESTRY", "COLUMNS", "LEVELS", "MIN_COVERAGE", "OUTLIER_FACTOR", "OUTSIDE", "SEP", "flag_steps", "group",
           "levels_of", "parse_by"]
