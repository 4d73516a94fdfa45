"""The roofs a chart draws: which compute ceilings, the line segments of every roof and ceiling, the ridge
points, and whether memory-/compute-bound regions can be shaded without contradicting a kernel's bound.

Roofs and ridges are the devices' own (:class:`~roofcore.models.Hardware`: its figures, ``ridge()`` and
each roof's ``rate(achievable)``), never worked out again here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..models import Ceiling, Hardware, Link, MemoryLevel
from ..units import fmt_bandwidth, fmt_intensity, fmt_rate


def shown_ceilings(hw: Hardware, used: Sequence[str] = (), *, all_ceilings: bool = False) -> list[Ceiling]:
    """The compute ceilings to draw: all of them, or the default and those the kernels run on."""
    if all_ceilings:
        return list(hw.ceilings)
    keys = {hw.default_ceiling, *used}
    return [c for c in hw.ceilings if c.key in keys]


def main_ceiling(hw: Hardware, table: pd.DataFrame | None) -> str:
    """The ceiling most of the kernels' time runs against (the default when unknown): it sets shading and ridges."""
    if table is None or table.empty:
        return hw.default_ceiling
    w = table["time_s"].fillna(table["t_roof_s"]).fillna(0)
    by = w.groupby(table["ceiling"].fillna("")).sum()
    by = by[by.index.isin(list(hw.ceiling_map))]
    return str(by.idxmax()) if len(by) and by.max() > 0 else hw.default_ceiling


def shading(analysis: Analysis, hw: Hardware, points: pd.DataFrame) -> tuple[str | None, str]:
    """The ceiling whose off-chip ridge splits ``hw``'s chart into memory- and compute-bound regions, or None and
    why not: regions are drawn only where they agree with every mark of ``hw`` in ``points``.

    They split at one ridge, so kernels judged against different ceilings (fp32 vector beside bf16 matrix) get
    none; and a mark left of the ridge must be memory- or link-bound, one right of it compute-bound: a kernel
    bound by an on-chip level past the off-chip ridge, or the on-chip marks of the hierarchical view, would
    contradict them. Without marks: the device's default ceiling."""
    pts = points[(points["device_id"] == hw.id) & (points["bound"] != "unknown")] if len(points) else points
    if not len(pts):
        return hw.default_ceiling, ""
    used = sorted({c for c in pts["ceiling"].unique() if c})
    if len(used) > 1:
        return None, (f"the kernels run against different compute ceilings ({', '.join(used)}), each with its own "
                      "ridge")
    key = used[0] if used else hw.default_ceiling
    if key not in hw.ceiling_map:
        return None, f"the kernels' ceiling {key} is not one of {hw.id}'s"
    r = hw.ridge(key, achievable=analysis.achievable)[hw.offchip.name]
    kind = pts["bound"].str.partition(":")[0].to_numpy(dtype=object)
    x = pts["intensity"].to_numpy(dtype=np.float64)
    wrong = (((kind == "memory") | (kind == "link")) & (x > r * (1 + 1e-9))) | ((kind == "compute") & (x < r * (1 - 1e-9)))
    if not wrong.any():
        return key, ""
    n = pts.loc[wrong, "kid"].nunique()
    kernels = f"{n:,} kernel{'' if n == 1 else 's'}"
    if "binding" in pts.columns:  # the hierarchical view: a mark per level, each level with its own ridge
        return None, (f"each level has its own ridge, and regions split at the off-chip one would put marks of "
                      f"{kernels} on the side that contradicts {'its' if n == 1 else 'their'} bound")
    display = {**{lv.name: lv.display for lv in hw.levels}, **{lk.name: lk.display for lk in hw.links}}
    by = sorted({display.get(b.partition(":")[2], b) for b in pts.loc[wrong, "bound"]})
    return None, (f"{kernels} past the off-chip ridge {'is' if n == 1 else 'are'} bound by {', '.join(by)}, which "
                  "regions split at that ridge would contradict")


def roof_segments(hw: Hardware, ceilings: Sequence[Ceiling], x_dom: tuple[float, float],
                  y_dom: tuple[float, float], *, achievable: bool = True) -> pd.DataFrame:
    """Line segments of every memory-level and link roof and of the given compute ceilings (log-space ends), each
    with its figure's source and derivation ("–" when none; a device of several GPUs: their median and spread).

    Diagonal roofs ``y = β·x`` run from the bottom/left edge up to the highest drawn ceiling; ceilings run
    from the fastest memory roof to the right edge. Achievable (measured) figures give extra dashed rows.
    """
    rows: list[dict[str, Any]] = []
    top = max(c.peak for c in ceilings)
    top_ach = max(c.rate(achievable=True) for c in ceilings)
    fastest = max(lv.bandwidth for lv in hw.levels)
    fastest_ach = max(lv.rate(achievable=True) for lv in hw.levels)
    x0, x1 = x_dom
    y0 = y_dom[0]

    def diag(res: MemoryLevel | Link, kind: str, beta: float, pi: float, ach: bool) -> None:
        xs = max(x0, y0 / beta)
        xe = min(x1, pi / beta)
        if xe <= xs:
            return
        fig = res.achievable_figure if ach and res.achievable_figure else res.figure
        rows.append({"device": hw.name, "device_id": hw.id, "kind": kind, "name": res.name,
                     "label": f"{res.display} {fmt_bandwidth(beta)}" + (" (achievable)" if ach else ""),
                     "value": fmt_bandwidth(beta), "achievable": ach, "x": xs, "y": beta * xs, "x2": xe, "y2": beta * xe,
                     "beta": beta, "source": fig.source, "derivation": fig.derivation or "–"})

    for lv in hw.levels:
        diag(lv, "memory", lv.bandwidth, top, False)
        if achievable and lv.achievable:
            diag(lv, "memory", lv.achievable, top_ach, True)
    for lk in hw.links:
        diag(lk, "link", lk.bandwidth, top, False)
        if achievable and lk.achievable:
            diag(lk, "link", lk.achievable, top_ach, True)
    for c in ceilings:
        for pi, ach in ((c.peak, False), (c.achievable, True)):
            if pi is None or (ach and not achievable):
                continue
            xs = max(x0, pi / (fastest_ach if ach else fastest))
            fig = c.achievable_figure if ach and c.achievable_figure else c.figure
            rows.append({"device": hw.name, "device_id": hw.id, "kind": "compute", "name": c.key,
                         "label": f"{c.precision.value} {c.unit.value}", "value": fmt_rate(pi), "achievable": ach,
                         "x": xs, "y": pi, "x2": x1, "y2": pi, "beta": np.nan, "source": fig.source,
                         "derivation": fig.derivation or "–"})
    return pd.DataFrame(rows)


def ridge_points(hw: Hardware, ceiling: str, x_dom: tuple[float, float], y_dom: tuple[float, float]
                 ) -> pd.DataFrame:
    """Where each memory-level and link roof meets ``ceiling`` (FLOP/byte), inside the axes."""
    c = hw.ceiling_map[ceiling]
    ridges = hw.ridge(ceiling)
    rows = []
    resources: list[tuple[MemoryLevel | Link, str]] = [*((lv, "memory") for lv in hw.levels),
                                                       *((lk, "link") for lk in hw.links)]
    for res, kind in resources:
        x = ridges[res.name]
        if x_dom[0] <= x <= x_dom[1]:
            rows.append({"device": hw.name, "device_id": hw.id, "x": x, "y": c.peak, "kind": kind,
                         "offchip": res.name == hw.offchip.name,
                         "text": f"ridge {res.display} × {c.key}: {fmt_intensity(x)}",
                         "short": f"ridge {fmt_intensity(x)}"})
    return pd.DataFrame(rows)
