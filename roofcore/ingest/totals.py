"""A totals row a spreadsheet added under a table ("Total", "Sum", "Grand total"): not a kernel (docs/formats.md,
"Every format goes through the same door").

Read as a kernel it would count every other row a second time: the workload's time doubled, every share halved.
A row is a totals row when its name says so and each of its launch count, FLOPs, seconds and bytes that is known
on both sides equals the sum of the other rows (to a part in a thousand: a spreadsheet shows rounded sums), or,
for a row named "Total", is at least that sum (the spreadsheet also added rows the parser does not keep as
kernels: copies, memsets, API calls); it is left out with a warning. A row so named whose figures are below the
sums is kept as a kernel, with a warning too.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ..models import Workload

_NAMES = re.compile(r"^(grand[ _-]?)?(total|sum)s?( of all| all)?$|^all( kernels)?$|^overall$", re.I)
_TOTAL = re.compile(r"^(grand[ _-]?)?totals?( of all| all)?$", re.I)  #: no kernel is named so: at least the sums
#: how near a totals row's figures must be to the sums of the other rows
REL = 1e-3


def _columns(w: Workload, named: np.ndarray) -> list[str]:
    """The figures compared; not the launch count of a table of single launches (each row's 1, not a figure the
    file gave)."""
    f = w.frame
    cols = [c for c in ("count", "flops", "time_s", *w.byte_columns) if c in f.columns and f[c].dtype.kind in "fiu"]
    if "count" in cols and bool((f["count"].to_numpy()[~named] == 1).all()):
        cols.remove("count")
    return cols


def drop_totals(w: Workload, label: str) -> Workload:
    """``w`` without the totals rows a spreadsheet added (each said in a warning); ``w`` itself when it has none."""
    f = w.frame
    if len(f) < 2 or "name" not in f.columns:
        return w
    names = f["name"]
    named = np.fromiter((isinstance(n, str) and _NAMES.match(n.strip()) is not None for n in names), bool, len(f))
    if not named.any():
        return w
    cols = _columns(w, named)
    values = f[cols].to_numpy(dtype=np.float64)
    rest = values[~named]
    sums = np.where(np.isnan(rest).all(axis=0), np.nan, np.nansum(rest, axis=0))
    drop = np.zeros(len(f), bool)
    notes = []
    for i in np.flatnonzero(named):
        row = values[i]
        both = ~np.isnan(row) & ~np.isnan(sums)
        near = np.abs(row[both] - sums[both]) <= REL * np.abs(sums[both])
        name = str(names.iloc[i]).strip()
        if both.any() and near.all():
            drop[i] = True
            notes.append(f"{label}: the row {name!r} is the sum of the other rows (a spreadsheet's totals row): left "
                         "out, so that no kernel counts twice.")
        elif both.any() and _TOTAL.match(name) and bool(np.all(near | (row[both] > sums[both]))):
            drop[i] = True
            notes.append(f"{label}: the row {name!r} is at least the sum of the other rows (a spreadsheet's totals "
                         "row, over rows that are not kernels too): left out, so that no kernel counts twice.")
        else:
            notes.append(f"{label}: a row named {name!r} is kept as a kernel: its figures are not the sums of the "
                         "other rows.")
    out = replace(w, warnings=(*w.warnings, *notes))
    return replace(out, frame=f[~drop].reset_index(drop=True)) if drop.any() else out


__all__ = ["REL", "drop_totals"]
