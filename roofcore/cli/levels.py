"""``roofline analyze --by op|module|module:DEPTH|step|nvtx`` and ``--window 10ms``: one row per group, as text,
JSON (the analysis document with a ``groups`` key, through the one JSON writer) or CSV (one row per group ×
device)."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..analyze import Analysis
from ..errors import RoofcoreError
from ..hierarchy.grouping import OUTSIDE
from ..units import Dimension, fmt_bytes, fmt_flops, fmt_intensity, fmt_pct, fmt_rate, fmt_time
from ..units import parse as parse_quantity
from .common import short, text_table

if TYPE_CHECKING:
    from ..charts.spec import AnyChart
    from ..models import Workload

#: the group columns every JSON row and CSV line carries, in order (bytes, intensity and bandwidth per level follow)
FIELDS = ("hardware", "level", "group", "name", "depth", "parent", "launches", "time_s", "coverage", "flops",
          "t_roof_s", "attainable_flops_per_s", "achieved_flops_per_s", "efficiency", "bound", "headroom_s",
          "self_launches", "self_time_s", "self_flops", "self_t_roof_s", "self_headroom_s")
_TIMED = ("start_s", "end_s", "phase", "point", "outlier", "differs")


#: what to record where no kernel has an ancestor at a level
_NONE_HINT = {
    "module": "profile with torch.profiler.profile(..., with_modules=True) (or with_stack=True) for nn.Module ranges.",
    "class": "profile with torch.profiler.profile(..., with_modules=True) (or with_stack=True) for nn.Module ranges.",
    "step": "call prof.step() once per iteration (ProfilerStep#N ranges), or wrap each in record_function / an NVTX "
            "range.",
    "nvtx": "wrap regions in torch.profiler.record_function or NVTX ranges (ncu --nvtx, nsys -t nvtx).",
    "op": "profile the CPU too (activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) so launches link to ops.",
}


def wanted(args: argparse.Namespace) -> tuple[str, float | None] | None:
    """The level asked for (``--by``, ``--window``), or None for the per-kernel output."""
    by, window = getattr(args, "by", None) or "kernel", getattr(args, "window", None)
    if getattr(args, "aggregate", False) and (window is not None or by != "kernel"):
        raise RoofcoreError("--aggregate sums each kernel's launches into one row, which loses the step, module and "
                            "op each launch ran in: drop it to use --by or --window.")
    if window is not None:
        if by not in ("kernel", "window", "step"):
            raise RoofcoreError(f"--window groups by time; it does not combine with --by {by}.")
        return "window", parse_quantity(window, Dimension.TIME, where="--window", allow_zero=False)
    if by == "kernel":
        return None
    from ..hierarchy import parse_by

    parse_by(by)
    return by, None


def level_rows(a: Analysis, by: str, window: float | None) -> pd.DataFrame:
    """Every device's groups, one frame (``hardware`` first); steps and windows flagged (mostly unknown, outliers)."""
    from ..hierarchy import flag_steps, group

    frames = []
    for hw in a.hardware:
        rows = group(a, by, window=window, hw_id=hw.id)
        if rows["level"].iloc[0] in ("step", "window") if len(rows) else False:
            rows = flag_steps(rows, a.workload.frame, rows["level"].iloc[0], window)
        rows.insert(0, "hardware", hw.id)
        frames.append(rows)
    return pd.concat(frames, ignore_index=True)


def _columns(rows: pd.DataFrame, byte_names: list[str]) -> list[str]:
    per_level = [f"{k}_{b}" for b in byte_names for k in ("bytes", "intensity", "bandwidth") if f"{k}_{b}" in rows]
    return [*FIELDS, *per_level, *(c for c in _TIMED if c in rows.columns)]


def _plain(v: object) -> object:
    """A JSON value: NaN and infinities are null, numpy scalars plain Python."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def groups_json(rows: pd.DataFrame, byte_names: list[str]) -> list[dict[str, Any]]:
    cols = _columns(rows, byte_names)
    return [{c: _plain(v) for c, v in zip(cols, rec, strict=True)} for rec in rows[cols].itertuples(index=False)]


def groups_csv(rows: pd.DataFrame, byte_names: list[str]) -> str:
    from ..output.csv_out import neutralise

    out = rows[_columns(rows, byte_names)].copy()
    for c in ("group", "name", "parent", "differs", "phase"):
        if c in out.columns:
            out[c] = neutralise(out[c])
    text: str = out.to_csv(index=False, lineterminator="\n").rstrip("\n")
    return text


def levels_text(a: Analysis, rows: pd.DataFrame, top: int = 25) -> str:
    """The groups of each device as a table: the tree indented, steps in time order with outliers said."""
    out = []
    for hw in a.hardware:
        sub = rows[rows["hardware"] == hw.id]
        level = sub["level"].iloc[0] if len(sub) else "?"
        total = sub["self_time_s"].sum()
        out.append(f"== {hw.name} ({hw.id}) — by {level}: {len(sub):,} groups ==")
        shown = sub if top <= 0 or level in ("step", "window") else sub.head(top)
        table = []
        for r in shown.itertuples(index=False):
            label = ("· " * max(int(r.depth) - 1, 0) + str(r.name)) if level in ("module", "class", "nvtx") \
                else str(r.group)
            share = r.time_s / total if total and not math.isnan(r.time_s) else math.nan
            table.append([short(label, 56), f"{int(r.launches):,}", fmt_time(r.time_s), fmt_pct(share),
                          fmt_pct(r.coverage), fmt_flops(r.flops), fmt_bytes(getattr(r, "bytes_hbm", math.nan)),
                          fmt_intensity(getattr(r, "intensity_hbm", math.nan)), fmt_rate(r.achieved_flops_per_s),
                          fmt_pct(r.efficiency), r.bound if isinstance(r.bound, str) else "–", fmt_time(r.headroom_s),
                          ("outlier" if getattr(r, "outlier", False) else "") if level in ("step", "window") else
                          fmt_time(r.self_time_s)])
        last = "flag" if level in ("step", "window") else "self time"
        out.append(text_table([level, "launches", "time", "share", "known", "FLOPs", "off-chip", "intensity", "achieved",
                           "of roof", "bound", "headroom", last], table, right=set(range(1, 12))))
        if len(shown) < len(sub):
            out.append(f"(showing {len(shown)} of {len(sub)} groups by time; --top 0 shows all)")
        out.append("time: the group's known kernel time (with its descendants); known: the share of it with a known "
                   "roofline, over which FLOPs rate, bound and headroom are computed.")
        if len(sub) and (sub["group"] == OUTSIDE).all() and level in _NONE_HINT:
            out.append(f"No kernel has a {level} here: every one is outside. Hint: {_NONE_HINT[level]}")
        if "outlier" in sub.columns:
            for r in sub[sub["outlier"]].itertuples(index=False):
                out.append(f"Outlier {r.group}: {fmt_time(r.time_s)}, beyond 1.5× the median — {r.differs}.")
        out.append("")
    return "\n".join(out).rstrip()


def sources_json(w: Workload) -> dict[str, Any]:
    """``{"counters_vs_formulas": [...]}`` per op and quantity where kernels have both (else empty)."""
    from ..hierarchy.sources import compare

    cmp = compare(w)
    if cmp is None:
        return {}
    cols = ["op", "quantity", "launches", "formula", "counter", "ratio", "flagged", "causes"]
    return {"flops_from": w.meta.get("flops_from", "counters"),
            "counters_vs_formulas": [{c: _plain(v) for c, v in zip(cols, rec, strict=True)}
                                     for rec in cmp[cols].itertuples(index=False)]}


def sources_text(w: Workload, top: int = 15) -> str:
    """Counters beside formulas, per op: both sums, the ratio, and the likely causes of a ratio beyond the band."""
    from ..hierarchy.sources import HIGH, LOW, compare

    cmp = compare(w)
    if cmp is None:
        return ""
    fmt = {"flops": fmt_flops}
    rows = [[short(r.op, 44), r.quantity, f"{int(r.launches):,}", fmt.get(r.quantity, fmt_bytes)(r.formula),
             fmt.get(r.quantity, fmt_bytes)(r.counter), "–" if math.isnan(r.ratio) else f"{r.ratio:.2f}",
             "beyond" if r.flagged else ""] for r in cmp.head(top).itertuples(index=False)]
    used = w.meta.get("flops_from", "counters")
    out = [f"Counters beside formulas (the analysis uses the {used}; --flops-from "
           f"{'formulas' if used == 'counters' else 'counters'} switches):",
           text_table(["op", "quantity", "launches", "formula", "counter", "ratio", f"[{LOW}, {HIGH}]"], rows,
                  right={2, 3, 4, 5})]
    for r in cmp[cmp["flagged"]].head(top).itertuples(index=False):
        out.append(f"  {short(r.op, 44)} {r.quantity} ×{r.ratio:.2f}: likely {r.causes}.")
    return "\n".join(out)


def write_charts(a: Analysis, by: str, window: float | None, path: str) -> list[str]:
    """The level's chart to ``path`` (.png or .svg, by its suffix): the groups on the first device's roofline, or for
    steps and windows their trajectory, with their rates over time beside it (``NAME-over-time.EXT``)."""
    from pathlib import Path

    from ..charts import levels as level_charts
    from ..charts import to_png, to_svg

    out = Path(path)
    ext = out.suffix.lower()
    if ext not in (".png", ".svg"):
        raise RoofcoreError(f"--chart {path}: expected a .png or .svg file name.")
    render = to_png if ext == ".png" else to_svg
    hw = a.hardware[0].id
    if by in ("step", "window"):
        figures: list[tuple[Path, AnyChart]] = [
            (out, level_charts.trajectory_chart(a, hw_id=hw, by=by, window=window)),
            (out.with_name(f"{out.stem}-over-time{ext}"), level_charts.over_time_chart(a, hw_id=hw, by=by, window=window))]
    else:
        figures = [(out, level_charts.level_roofline(a, by, hw_id=hw))]
    written = []
    for dest, fig in figures:
        data = render(fig)
        dest.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        written.append(str(dest))
    return written
