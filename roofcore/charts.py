"""``Analysis`` -> charts: the log-log roofline and the supporting charts. The only module importing altair.

Everything a chart shows comes from the engine: roofs and ridges from :class:`~roofcore.models.Hardware`,
kernel positions from :meth:`Analysis.table` (x = arithmetic intensity in FLOP/byte, y = FLOP/s). Chart
data are built with vectorised pandas; at most :data:`MAX_MARKS` kernel marks ever reach the browser
(the rest are left out, top by time kept, and the caption says so).

The rooflines (:func:`roofline`, :func:`roofline_compare`) are written as Vega-Lite dicts directly: building
them with Altair objects cost more than the engine's whole analysis of 100,000 kernels (every layer copied
and validated again when layered). The small supporting charts still use Altair.

Axes are fixed by the devices' figures (x from 0.01 FLOP/B to a decade past the largest ridge, y from
about 1e-4 × the highest peak to 2 × it), so two charts of the same device line up; they grow by whole
decades only when a kernel would otherwise fall off the chart.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cache

import altair as alt
import numpy as np
import pandas as pd

from .analyze import Analysis, analyze
from .models import Hardware
from .units import fmt_bandwidth, fmt_intensity, fmt_rate

#: most kernel marks one chart sends to the browser (all devices and levels together)
MAX_MARKS = 5000
#: the label placer avoids at most this many marks (the largest)
LABEL_AVOID_MARKS = 600
#: x axis starts here (FLOP/byte)
X_MIN = 0.01
#: y axis starts this fraction of the highest peak below it (rounded down to a decade)
Y_SPAN = 1e-4
#: y axis ends this factor above the highest peak
Y_HEADROOM = 2.0

AXIS_X = "Arithmetic intensity (FLOP/byte)"
AXIS_Y = "Performance (FLOP/s)"

#: neutral roof colours for one device; per-device colours when several are overlaid (none reuse point hues)
ROOF_COLOR = "#334155"
LINK_COLOR = "#7c3aed"
DEVICE_COLORS = ("#1e293b", "#0f766e", "#be185d", "#4d7c0f", "#92400e", "#1d4ed8", "#6b21a8", "#9f1239")
#: kernel point colours by bound kind: memory blues, compute oranges, links purples, unknown grey
_BOUND_PALETTES = {
    "memory": ("#1f77b4", "#6baed6", "#08519c", "#9ecae1", "#3182bd"),
    "compute": ("#e6550d", "#fdae6b", "#a63603", "#fd8d3c", "#d94801"),
    "link": ("#756bb1", "#bcbddc", "#54278f", "#9e9ac8"),
    "unknown": ("#9ca3af",),
}
GROUP_SCHEME = "tableau10"
#: kernel mark area in px² for the shortest and the longest time
SIZE_RANGE = (25, 650)
REGION_FILL = {"memory-bound": "#dbeafe", "compute-bound": "#ffedd5"}
#: roofline(highlight=...): opacity of the kernels not named, and the ring drawn around those named
HIGHLIGHT_FADE = 0.12
HIGHLIGHT_COLOR = "#0f172a"
#: hierarchical view: the ring around the mark of the level that binds a kernel
BINDING_COLOR = "#0f172a"
#: roofline(numbers=...): the frame column that carries each kernel's number through the selection, and the
#: numbers' font size and advance per digit (px, bold)
_NUMBER_COL = "_roofcore_number"
NUMBER_FONT_PX = 11
_DIGIT_PX = 7.7

_PREFIX_EXPR = "['p','n','µ','m','','k','M','G','T','P','E']"


class VegaLiteSpec:
    """A Vega-Lite spec as plain dicts, its data by name only (what :attr:`RooflineFigure.chart` holds).

    Has the ``to_dict`` of an Altair chart, so code written for one keeps working."""

    __slots__ = ("_spec",)

    def __init__(self, spec: dict) -> None:
        self._spec = spec

    def to_dict(self, validate: bool = True) -> dict:
        """A copy of the spec; ``validate`` checks it against the Vega-Lite schema (raises if it is invalid)."""
        out = copy.deepcopy(self._spec)
        if validate:
            _validate(out)
        return out


@cache
def _vega_lite_schema() -> dict:
    """The Vega-Lite JSON schema of the installed Altair (the version :data:`alt.SCHEMA_URL` names)."""
    from altair.vegalite.schema import load_schema

    return load_schema()


def _validate(spec: dict) -> None:
    """Check a spec (without its datasets) against the Vega-Lite schema Altair ships."""
    from altair.utils.schemapi import validate_jsonschema

    validate_jsonschema({k: v for k, v in spec.items() if k != "datasets"}, _vega_lite_schema())


@dataclass(frozen=True)
class RooflineFigure:
    """A roofline chart, its data (DataFrames, by the names the chart refers to) and what its caption must say."""

    chart: VegaLiteSpec  #: data by name only; see :meth:`spec` and :meth:`to_dict`
    notes: tuple[str, ...]  #: sentences for the caption (capping, placement, left-out kernels)
    points: int  #: kernel marks drawn (all devices, all levels)
    kernels: int  #: distinct kernels drawn
    total_kernels: int  #: kernels in the analysis
    capped: bool  #: True when MAX_MARKS (not the user's top-N) left kernels out
    devices: tuple[str, ...]
    x_domain: tuple[float, float]  #: FLOP/byte
    y_domain: tuple[float, float]  #: FLOP/s
    datasets: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def caption(self) -> str:
        return " ".join(self.notes)

    def spec(self, *, arrow: bool = False) -> dict:
        """The Vega-Lite spec with its datasets as DataFrames, or as Arrow IPC stream bytes with ``arrow``
        (what ``st.vega_lite_chart`` sends to the browser: converting once lets every rerun reuse it).

        A copy (the caller may change it), not validated: :meth:`to_dict`, which the exports and the tests
        use, validates the same spec."""
        data: dict = dict(self.datasets)
        if arrow:
            import pyarrow as pa

            for name, frame in data.items():
                table = pa.Table.from_pandas(frame, preserve_index=False)
                sink = pa.BufferOutputStream()
                with pa.ipc.new_stream(sink, table.schema) as writer:
                    writer.write_table(table)
                data[name] = sink.getvalue().to_pybytes()
        return {**self.chart.to_dict(validate=False), "datasets": data}

    def to_dict(self) -> dict:
        """The Vega-Lite spec as plain JSON values (for export and inspection); NaN and ±inf become null."""
        return {**self.chart.to_dict(), "datasets": {k: json.loads(v.to_json(orient="records", double_precision=15))
                                                     for k, v in self.datasets.items()}}


@dataclass
class _Build:
    """While a figure is being built: the frames its layers refer to by name, and the views that hold the
    legend selection (Vega-Lite wants a layered or concatenated chart's selection told its views)."""

    datasets: dict[str, pd.DataFrame] = field(default_factory=dict)
    views: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)  #: roofs and ceilings with no room for a label


_BUILD: ContextVar[_Build | None] = ContextVar("roofcore_chart_build", default=None)


def _src(df: pd.DataFrame) -> dict:
    """A layer's data by name: the frame stays a DataFrame until the spec is exported or sent."""
    build = _BUILD.get()
    if build is None:
        return {"values": json.loads(df.to_json(orient="records", double_precision=15))}
    name = f"roofcore_{len(build.datasets)}"  # not data_N: Vega-Lite names its own data sources so
    build.datasets[name] = df.reset_index(drop=True)
    return {"name": name}


def _view_name() -> str:
    """A name for a view holding the legend selection (``view_N``, the form Streamlit keeps stable)."""
    build = _BUILD.get()
    if build is None:
        return "view_1"
    build.views.append(f"view_{len(build.views) + 1}")
    return build.views[-1]


# ----------------------------------------------------------------------------------------------- colours


def bound_colors(bounds: Sequence[str]) -> tuple[list[str], list[str]]:
    """Colour domain and range for bound labels (``memory:hbm`` ...): memory blue, compute orange, link purple."""
    order = {"memory": 0, "compute": 1, "link": 2, "unknown": 3}
    uniq = sorted(set(bounds), key=lambda b: (order.get(b.split(":")[0], 3), b))
    used: dict[str, int] = {}
    rng = []
    for b in uniq:
        kind = b.split(":")[0] if b.split(":")[0] in _BOUND_PALETTES else "unknown"
        pal = _BOUND_PALETTES[kind]
        rng.append(pal[used.get(kind, 0) % len(pal)])
        used[kind] = used.get(kind, 0) + 1
    return uniq, rng


def _fmt_expr(field: str, unit: str) -> str:
    """A Vega expression formatting ``datum[field]`` with an SI prefix and ``unit`` ("3.35 TB/s"); "–" if unknown."""
    v = f"datum[{field!r}]"
    exp = f"clamp(floor(log(abs({v}))/LN10/3), -4, 6)"
    return (f"isValid({v}) && isFinite({v}) ? ({v} == 0 ? '0 {unit}' : "
            f"format({v}/pow(1000, {exp}), '.3~r') + ' ' + {_PREFIX_EXPR}[{exp}+4] + '{unit}') : '–'")


def _pct_expr(field: str) -> str:
    v = f"datum[{field!r}]"
    return f"isValid({v}) && isFinite({v}) ? format({v}, '.3~%') : '–'"


def _intensity_expr(field: str) -> str:
    v = f"datum[{field!r}]"
    return (f"isValid({v}) ? (isFinite({v}) ? ({v} < 10000 ? format({v}, '.3~r') : format({v}, '.3~s')) "
            f"+ ' FLOP/B' : '∞ FLOP/B') : '–'")


# ----------------------------------------------------------------------------------------------- domains


def base_domains(hws: Sequence[Hardware]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Axes fixed by the devices alone: x 0.01 .. a decade past the largest ridge, y ~1e-4·peak .. 2·peak."""
    peak = max(c.peak for h in hws for c in h.ceilings)
    slowest = min(lv.bandwidth for h in hws for lv in h.levels)
    x_max = 10.0 ** math.ceil(math.log10(peak / slowest * 10))
    y_min = 10.0 ** math.floor(math.log10(peak * Y_SPAN))
    return (X_MIN, x_max), (y_min, peak * Y_HEADROOM)


def _extend(dom: tuple[float, float], values: np.ndarray) -> tuple[float, float]:
    """Grow a log domain by whole decades so every finite positive value fits."""
    v = values[np.isfinite(values) & (values > 0)]
    if not len(v):
        return dom
    lo, hi = dom
    if v.min() < lo:
        lo = 10.0 ** math.floor(math.log10(v.min()))
    if v.max() > hi:
        hi = 10.0 ** math.ceil(math.log10(v.max()))
    return lo, hi


# ----------------------------------------------------------------------------------------------- kernels


def _time_key(frame: pd.DataFrame, results) -> np.ndarray:
    """Seconds to rank kernels by: measured time where known, else the mean roofline time over devices."""
    t = frame["time_s"].to_numpy(dtype=np.float64)
    roof = np.nanmean(np.vstack([r.t_roof for r in results]), axis=0) if results else np.full(len(t), np.nan)
    key = np.where(np.isnan(t), roof, t)
    return np.nan_to_num(key, nan=0.0)


def _levels_per_kernel(analysis: Analysis, hws: Sequence[Hardware]) -> int:
    names = set(analysis.workload.byte_names)
    return max(1, max(len(names & {*h.level_map, *h.link_map}) for h in hws))


def select_kernels(analysis: Analysis, hw_ids: Sequence[str], *, top_n: int | None = None, hierarchical: bool = False,
                   max_marks: int = MAX_MARKS) -> tuple[Analysis, bool]:
    """The kernels to draw, as an analysis of just them (same engine, fewer rows): top by time, capped.

    Returns ``(analysis_of_drawn_kernels, capped)``; ``capped`` is True when ``max_marks`` (not ``top_n``)
    left kernels out. Marks = kernels × devices (× levels in the hierarchical view).
    """
    results = [analysis.result(h) for h in hw_ids]
    hws = [r.hardware for r in results]
    per_kernel = len(hws) * (_levels_per_kernel(analysis, hws) if hierarchical else 1)
    limit = max(1, max_marks // per_kernel)
    n = len(analysis.workload)
    want = n if not top_n else min(top_n, n)
    capped = want > limit
    keep = min(want, limit)
    if keep >= n and [h.id for h in analysis.hardware] == list(hw_ids):
        return analysis, False
    frame = analysis.workload.frame
    if keep >= n:
        idx = np.arange(n)
    else:
        key = _time_key(frame, results)
        idx = np.argpartition(-key, keep - 1)[:keep]
        idx = idx[np.argsort(-key[idx], kind="stable")]
    sub = replace(analysis.workload, frame=frame.iloc[idx].reset_index(drop=True))
    return analyze(sub, hws, achievable=analysis.achievable), capped


def kernel_points(analysis: Analysis, hw_ids: Sequence[str], *, hierarchical: bool = False) -> pd.DataFrame:
    """One row per kernel mark: device, intensity (x, FLOP/B), FLOP/s (y), time for size, and tooltip fields.

    y is the achieved FLOP/s where a measured time exists, else the attainable FLOP/s (the kernel sits on its
    roof). x is the off-chip intensity (the binding level's where off-chip bytes are unknown); in the
    hierarchical view there is one mark per memory level or link the kernel has bytes for, at that level's
    intensity, off-chip first, and ``binding`` is True on the mark of the level or link that bounds the kernel.
    Every row carries the kernel's intensity at each level and link as ``i_<name>`` (FLOP/B; for the tooltip).
    """
    frames = []
    for hw_id in hw_ids:
        hw = analysis.result(hw_id).hardware
        tab = analysis.table(hw_id, messages=False)
        timed = tab["time_s"].gt(0).to_numpy()
        y = np.where(timed, tab["achieved_flops_per_s"], tab["attainable_flops_per_s"])
        base = pd.DataFrame({
            "kid": np.arange(len(tab)), "device": hw.name, "device_id": hw.id, "name": tab["name"].astype(str),
            "count": tab["count"], "group": tab["group"].fillna("(none)").astype(str),
            "bound": tab["bound"].fillna("unknown").astype(str), "ceiling": tab["ceiling"].fillna("").astype(str),
            "flops": tab["flops"], "time_s": tab["time_s"], "t_roof_s": tab["t_roof_s"],
            "attainable": tab["attainable_flops_per_s"], "achieved": tab["achieved_flops_per_s"],
            "efficiency": tab["efficiency"], "headroom_s": tab["headroom_s"], "perf": y,
            "size_s": np.where(timed, tab["time_s"], tab["t_roof_s"]),
            "placed": np.where(timed, "measured time", "on its roof (no measured time)"),
        })
        have = set(analysis.workload.byte_names)
        names = [r.name for r in (*hw.levels, *hw.links) if r.name in have]  # the device's order, off-chip first
        display = {**{lv.name: lv.display for lv in hw.levels}, **{lk.name: lk.display for lk in hw.links}}
        for name in names:
            base[f"i_{name}"] = tab[f"intensity_{name}"].to_numpy(dtype=np.float64)
        if hierarchical:
            bound = base["bound"].to_numpy(dtype=object)
            for name in names:
                b = tab[f"bytes_{name}"].to_numpy(dtype=np.float64)
                sel = b > 0
                part = base[sel].copy()
                part["level"] = display[name]
                part["bytes"] = b[sel]
                part["intensity"] = tab[f"intensity_{name}"].to_numpy()[sel]
                kind = "memory" if name in hw.level_map else "link"
                part["binding"] = bound[sel] == f"{kind}:{name}"
                frames.append(part)
        else:
            off = hw.offchip.name
            if f"intensity_{off}" in tab:
                x = tab[f"intensity_{off}"].to_numpy(dtype=np.float64, copy=True)  # written below
                b = tab[f"bytes_{off}"].to_numpy(dtype=np.float64, copy=True)
            else:
                x, b = np.full(len(tab), np.nan), np.full(len(tab), np.nan)
            lvl = np.full(len(tab), display[off], dtype=object)
            # off-chip bytes unknown: use the binding level, the roof that set the kernel's bound
            missing = np.isnan(x) & tab["binding_level"].notna().to_numpy()
            for name in names:
                sel = missing & (tab["binding_level"] == name).to_numpy()
                if sel.any():
                    x[sel] = tab[f"intensity_{name}"].to_numpy()[sel]
                    b[sel] = tab[f"bytes_{name}"].to_numpy()[sel]
                    lvl[sel] = display[name]
            base["level"], base["bytes"], base["intensity"] = lvl, b, x
            frames.append(base)
    if not frames:
        return pd.DataFrame(columns=["kid", "device", "intensity", "perf"])
    out = pd.concat(frames, ignore_index=True)
    return out


# ----------------------------------------------------------------------------------------------- roofs


def shown_ceilings(hw: Hardware, used: Sequence[str] = (), *, all_ceilings: bool = False) -> list:
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


def roof_segments(hw: Hardware, ceilings: Sequence, x_dom: tuple[float, float], y_dom: tuple[float, float],
                  *, achievable: bool = True) -> pd.DataFrame:
    """Line segments of every memory-level and link roof and of the given compute ceilings (log-space ends).

    Diagonal roofs ``y = β·x`` run from the bottom/left edge up to the highest drawn ceiling; ceilings run
    from the fastest memory roof to the right edge. Achievable (measured) figures give extra dashed rows.
    """
    rows = []
    top = max(c.peak for c in ceilings)
    top_ach = max((c.achievable or c.peak) for c in ceilings)
    fastest = max(lv.bandwidth for lv in hw.levels)
    fastest_ach = max((lv.achievable or lv.bandwidth) for lv in hw.levels)
    x0, x1 = x_dom
    y0 = y_dom[0]

    def diag(res, kind: str, beta: float, pi: float, ach: bool):
        xs = max(x0, y0 / beta)
        xe = min(x1, pi / beta)
        if xe <= xs:
            return
        src = (res.achievable_figure.source if ach and res.achievable_figure else res.figure.source)
        rows.append({"device": hw.name, "device_id": hw.id, "kind": kind, "name": res.name,
                     "label": f"{res.display} {fmt_bandwidth(beta)}" + (" (achievable)" if ach else ""),
                     "value": fmt_bandwidth(beta), "achievable": ach, "x": xs, "y": beta * xs, "x2": xe, "y2": beta * xe,
                     "beta": beta, "source": src})

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
            src = c.achievable_figure.source if ach and c.achievable_figure else c.figure.source
            rows.append({"device": hw.name, "device_id": hw.id, "kind": "compute", "name": c.key,
                         "label": f"{c.precision.value} {c.unit.value}", "value": fmt_rate(pi), "achievable": ach,
                         "x": xs, "y": pi, "x2": x1, "y2": pi, "beta": np.nan, "source": src})
    return pd.DataFrame(rows)


#: label geometry in pixels (12 px text): average glyph width, line height, gap to the line
_CHAR_PX, _LINE_PX, _GAP_PX = 6.7, 14.0, 3.0


class _Placer:
    """Places labels along lines so they overlap neither each other nor kernel marks (pixel space, y up).

    Obstacles are circles (x, y, r); a placed label adds circles along its box. A label goes at the first
    free spot scanning along its line from the preferred end; with none free it takes the spot that hides
    the fewest kernel marks (but never another label), or is left out.
    """

    def __init__(self, x_dom, y_dom, width: int, height: int) -> None:
        self.lx0, self.ly0 = math.log10(x_dom[0]), math.log10(y_dom[0])
        self.px = width / math.log10(x_dom[1] / x_dom[0])
        self.py = height / math.log10(y_dom[1] / y_dom[0])
        self.width, self.height = width, height
        self.points = np.empty((0, 3))
        self.labels = np.empty((0, 3))
        self.lines = np.empty((0, 3))  # roof and ceiling lines alone: a roof's label never strikes through one
        self.below = 0.0  # px of keys set under the x axis so far (label_key_below)

    def xy(self, x, y) -> tuple[np.ndarray, np.ndarray]:
        return ((np.log10(np.asarray(x, dtype=np.float64)) - self.lx0) * self.px,
                (np.log10(np.asarray(y, dtype=np.float64)) - self.ly0) * self.py)

    def add_segments(self, segs: pd.DataFrame) -> None:
        """Roof and ceiling lines as obstacles too (thin circles every few pixels), so no label crosses one."""
        if segs.empty:
            return
        (x0, y0), (x1, y1) = self.xy(segs["x"], segs["y"]), self.xy(segs["x2"], segs["y2"])
        n = np.maximum(2, (np.hypot(x1 - x0, y1 - y0) / 4).astype(int))
        t = np.concatenate([np.linspace(0, 1, k) for k in n])
        i = np.repeat(np.arange(len(n)), n)
        pts = np.column_stack([x0[i] + t * (x1 - x0)[i], y0[i] + t * (y1 - y0)[i], np.full(len(t), 1.5)])
        pts = pts[np.isfinite(pts).all(axis=1)]
        self.points = np.vstack([self.points, pts])
        self.lines = np.vstack([self.lines, pts])

    def add_points(self, x, y, r) -> None:
        px, py = self.xy(x, y)
        ok = np.isfinite(px) & np.isfinite(py)
        self.points = np.vstack([self.points, np.column_stack([px[ok], py[ok], np.asarray(r, dtype=np.float64)[ok]])])

    def _box_circles(self, s0: float, s1: float, n_mid: float, theta: float) -> np.ndarray:
        ss = np.arange(s0, s1 + 1, _LINE_PX / 2)
        c, sn = math.cos(theta), math.sin(theta)
        return np.column_stack([ss * c - n_mid * sn, ss * sn + n_mid * c, np.full(len(ss), _LINE_PX / 2)])

    def _hit_counts(self, obs: np.ndarray, theta: float, ts: np.ndarray, length: float, n_lo: float,
                    n_hi: float) -> np.ndarray:
        """Per candidate start ``t`` along direction ``theta``: how many obstacles the box [t, t + length] ×
        [n_lo, n_hi] overlaps. Sorted ends and binary search: every candidate at once, no loop."""
        if not len(obs):
            return np.zeros(len(ts), dtype=np.int64)
        c, sn = math.cos(theta), math.sin(theta)
        s = obs[:, 0] * c + obs[:, 1] * sn
        n = -obs[:, 0] * sn + obs[:, 1] * c
        r = obs[:, 2]
        band = (n + r > n_lo) & (n - r < n_hi)
        lo, hi = np.sort((s - r)[band]), np.sort((s + r)[band])
        # overlap: s - r < t + length and s + r > t; as s - r <= s + r, the obstacles with s + r <= t are a
        # subset of those with s - r < t + length, so count the first set and take the second away
        return np.searchsorted(lo, ts + length, side="left") - np.searchsorted(hi, ts, side="right")

    def place(self, x0, y0, x1, y1, text: str, *, above: bool = True, start: float = 0.0, reverse: bool = False,
              strict: bool = True, avoid_lines: bool = False) -> tuple[float, float] | None:
        """Anchor (data coordinates, the label's left end on the line) of ``text`` along the segment
        (x0, y0)-(x1, y1), scanning from ``start`` (a fraction of the way; from the far end if ``reverse``).

        ``strict``: only a spot that hides no kernel mark, else None; otherwise the spot hiding the fewest
        (the first such in scanning order). A spot overlapping another label or leaving the plot is never taken,
        nor, with ``avoid_lines``, one across a roof or ceiling line (with three devices overlaid the fewest-marks
        spot was often across another device's roof).
        """
        (X0, X1), (Y0, Y1) = self.xy([x0, x1], [y0, y1])
        theta = math.atan2(Y1 - Y0, X1 - X0)
        c, sn = math.cos(theta), math.sin(theta)
        s0, s1 = X0 * c + Y0 * sn, X1 * c + Y1 * sn
        n0 = -X0 * sn + Y0 * c
        length = len(text) * _CHAR_PX + 4
        n_lo, n_hi = (n0 + _GAP_PX, n0 + _GAP_PX + _LINE_PX) if above else (n0 - _GAP_PX - _LINE_PX, n0 - _GAP_PX)
        first, last = s0 + start * (s1 - s0), s1 - length
        if last < first:
            return None
        cands = np.arange(first, last + 1, 6.0)
        if reverse:
            cands = cands[::-1]
        inside = np.ones(len(cands), dtype=bool)  # all four corners of the box within the plot (2 px slack)
        for t in (cands, cands + length):
            for n in (n_lo, n_hi):
                cx, cy = t * c - n * sn, t * sn + n * c
                inside &= (cx >= -2) & (cx <= self.width + 2) & (cy >= -2) & (cy <= self.height + 2)
        free = np.flatnonzero(inside)
        free = free[self._hit_counts(self.labels, theta, cands[free], length, n_lo, n_hi) == 0]
        if avoid_lines and len(free):
            free = free[self._hit_counts(self.lines, theta, cands[free], length, n_lo, n_hi) == 0]
        if not len(free):
            return None
        hits = self._hit_counts(self.points, theta, cands[free], length, n_lo, n_hi)
        k = int(np.argmin(hits))  # the first free spot hiding nothing, else the first hiding the fewest
        if strict and hits[k]:
            return None
        best = cands[free[k]]
        self.labels = np.vstack([self.labels, self._box_circles(best, best + length, (n_lo + n_hi) / 2, theta)])
        ax, ay = best * c - n0 * sn, best * sn + n0 * c  # on the line; the mark's dy lifts the text off it
        return 10 ** (ax / self.px + self.lx0), 10 ** (ay / self.py + self.ly0)

    def block(self, x, y, text: str, align: str) -> None:
        """Reserve the box of a fixed horizontal label (region and ridge annotations)."""
        (X,), (Y,) = self.xy([x], [y])
        length = len(text) * _CHAR_PX
        s0 = X - length if align == "right" else X - length / 2 if align == "center" else X
        self.labels = np.vstack([self.labels, self._box_circles(s0, s0 + length, Y + _LINE_PX / 2, 0.0)])

    def place_box(self, w: float, h: float) -> tuple[float, float] | None:
        """Top-left corner (px, y up) of a free ``w`` × ``h`` box, the highest then leftmost: first one that covers
        no line, label or kernel mark, else one that covers no line or label (hiding the fewest marks rather than
        striking through a roof); None when there is none (a chart too small)."""
        xs = np.arange(4.0, self.width - w - 4 + 1e-9, 6.0)
        ys = np.arange(self.height - 4.0, h + 4 - 1e-9, -6.0)
        if not len(xs) or not len(ys):
            return None
        hard = np.vstack([self.lines, self.labels])
        best: tuple[int, float, float] | None = None
        for yt in ys:  # one row of candidates at a time: the first row with a free box wins
            hard_hits = _box_hits(hard, xs, xs + w, yt - h, yt)
            mark_hits = _box_hits(self.points, xs, xs + w, yt - h, yt)
            ok = np.flatnonzero(hard_hits == 0)
            if not len(ok):
                continue
            k = ok[np.argmin(mark_hits[ok])]
            if mark_hits[k] == 0:
                return float(xs[k]), float(yt)
            if best is None or mark_hits[k] < best[0]:
                best = (int(mark_hits[k]), float(xs[k]), float(yt))
        return None if best is None else (best[1], best[2])


def _box_hits(obs: np.ndarray, x0: np.ndarray, x1: np.ndarray, y0: float, y1: float) -> np.ndarray:
    """Per box [x0, x1] × [y0, y1] (px, one row of boxes): how many obstacle circles (x, y, r) it overlaps."""
    if not len(obs):
        return np.zeros(len(x0), dtype=np.int64)
    ox, oy, r = obs[:, 0][None, :], obs[:, 1][None, :], obs[:, 2][None, :]
    dx = np.maximum(np.maximum(x0[:, None] - ox, ox - x1[:, None]), 0.0)
    dy = np.maximum(np.maximum(y0 - oy, oy - y1), 0.0)
    return (dx * dx + dy * dy < r * r).sum(axis=1)


#: key rows: a dash for the line, then its label
_KEY_DASH = "— "


def label_key(entries: pd.DataFrame, title: str, placer: _Placer) -> pd.DataFrame | None:
    """A key of line labels (``entries``: device, kind, text, in the order the lines run top to bottom) set as a
    block of rows at a free spot of the plot, for lines too close together to carry a label each: one row per
    line, the first row the title. Rows: x, y (data; the row's left end and middle), text, device, kind, title.
    None when the chart has no room for it."""
    texts = [title, *(_KEY_DASH + t for t in entries["text"])]
    w = max(len(t) for t in texts) * _CHAR_PX + 6
    h = len(texts) * _LINE_PX + 4
    at = placer.place_box(w, h)
    if at is None:
        return None
    x0, yt = at
    rows = []
    for i, text in enumerate(texts):
        cy = yt - 2 - (i + 0.5) * _LINE_PX
        placer.labels = np.vstack([placer.labels, placer._box_circles(x0, x0 + len(text) * _CHAR_PX + 4, cy, 0.0)])
        e = entries.iloc[i - 1] if i else None
        rows.append({"x": 10 ** ((x0 + 2) / placer.px + placer.lx0), "y": 10 ** (cy / placer.py + placer.ly0),
                     "text": text, "device": "" if e is None else e["device"], "kind": "" if e is None else e["kind"],
                     "title": e is None})
    return pd.DataFrame(rows)


#: px from the plot's bottom edge to the first key row set under the x axis (below its labels and title)
_BELOW_AXIS_PX = 52.0


def label_key_below(entries: pd.DataFrame, title: str, placer: _Placer) -> pd.DataFrame:
    """The key of :func:`label_key` set under the x axis, where there is always room: the title on a row of its
    own, then the entries in as many columns as fit the plot's width, read down each column (top to bottom of the
    chart's lines). Keys set here before stack downwards. Same rows as :func:`label_key`."""
    texts = [_KEY_DASH + t for t in entries["text"]]
    col_w = max(len(t) for t in texts) * _CHAR_PX + 14
    cols = max(1, min(len(texts), int(placer.width // col_w)))
    per = math.ceil(len(texts) / cols)
    top = -_BELOW_AXIS_PX - placer.below

    def data(px: float, py: float) -> tuple[float, float]:
        return 10 ** (px / placer.px + placer.lx0), 10 ** (py / placer.py + placer.ly0)

    x0, y0 = data(2.0, top - _LINE_PX / 2)
    rows = [{"x": x0, "y": y0, "text": title, "device": "", "kind": "", "title": True}]
    for i, (text, (_, e)) in enumerate(zip(texts, entries.iterrows(), strict=True)):
        xd, yd = data(2.0 + (i // per) * col_w, top - (i % per + 1.5) * _LINE_PX)
        rows.append({"x": xd, "y": yd, "text": text, "device": e["device"], "kind": e["kind"], "title": False})
    placer.below += (per + 1) * _LINE_PX + 6
    return pd.DataFrame(rows)


def ceiling_labels(segs: pd.DataFrame, placer: _Placer, first: frozenset[str] = frozenset()) -> pd.DataFrame:
    """One label per distinct theoretical ceiling value (ceilings with the same peak share it) where it hides
    no kernel mark and no other label. ``first``: bounds ("compute:bf16-matrix") whose ceilings are placed
    before the others (those binding the highlighted kernels: they must get a label)."""
    cols = ["device", "device_id", "x", "y", "text", "below"]
    g = ceiling_groups(segs, first)
    if g.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    x_left = 10 ** placer.lx0
    for r in g.sort_values(["first", "y"], ascending=False).itertuples():
        # first choice: left of where the ceiling meets the roofs, above it, where no kernel can be (it would
        # be above its roof); then along the ceiling, then below it; last, the spot hiding the fewest kernels
        tries = [dict(x0=x_left, x1=r.x, reverse=True), dict(x0=r.x, x1=r.x2), dict(x0=r.x, x1=r.x2, above=False),
                 dict(x0=x_left, x1=r.x, reverse=True, above=False),
                 dict(x0=x_left, x1=r.x, reverse=True, strict=False), dict(x0=r.x, x1=r.x2, strict=False)]
        for kw in tries:
            x0, x1 = kw.pop("x0"), kw.pop("x1")
            at = placer.place(x0, r.y, x1, r.y, r.text, avoid_lines=True, **kw)
            if at:
                rows.append({"device": r.device, "device_id": r.device_id, "x": at[0], "y": r.y, "text": r.text,
                             "below": not kw.get("above", True)})
                break
        else:
            _unlabelled(r.device, r.text)
    return pd.DataFrame(rows, columns=cols)


def ceiling_groups(segs: pd.DataFrame, first: frozenset[str] = frozenset()) -> pd.DataFrame:
    """The ceiling labels to place: one per device and distinct theoretical peak (ceilings with the same peak
    share it, "bf16 matrix / fp16 matrix · 989 TFLOP/s"); ``first`` marks those of the given bounds."""
    c = segs[(segs["kind"] == "compute") & ~segs["achievable"]] if len(segs) else segs
    cols = ["device_id", "y", "device", "x", "x2", "text", "first"]
    if c.empty:
        return pd.DataFrame(columns=cols)
    groups: dict[tuple, dict] = {}  # by device and peak, in order of appearance (a few rows: no groupby)
    for dev, dev_id, x, x2, y, label, value in zip(*(c[k].tolist() for k in (
            "device", "device_id", "x", "x2", "y", "label", "value")), strict=True):
        g = groups.setdefault((dev_id, y), {"device_id": dev_id, "y": y, "device": dev, "x": x, "x2": x2,
                                            "labels": [], "value": value, "first": False})
        if label not in g["labels"]:
            g["labels"].append(label)
    for (_dev_id, _y), v in groups.items():
        v["first"] = any(f"compute:{k}" in first for k in c.loc[(c["device_id"] == _dev_id) & (c["y"] == _y), "name"])
    return pd.DataFrame([{"device_id": v["device_id"], "y": v["y"], "device": v["device"], "x": v["x"],
                          "x2": v["x2"], "text": " / ".join(v["labels"]) + " · " + v["value"], "first": v["first"]}
                         for v in groups.values()], columns=cols)


def _title(text: str, hws: Sequence[Hardware], points: pd.DataFrame) -> str | dict:
    """The panel's title; with highlighted kernels, a subtitle naming the roof or ceiling that binds them, so a
    small chart says it even where its line has no room for a label."""
    if not len(points) or "hl" not in points.columns or not points["hl"].any():
        return text
    hl = points[points["hl"]]
    said = []
    for h in hws:
        bounds = hl.loc[hl["device_id"] == h.id, "bound"].unique().tolist()
        for b in bounds:
            kind, _, name = str(b).partition(":")
            if kind == "compute" and name in h.ceiling_map:
                c = h.ceiling_map[name]
                said.append(f"{c.precision.value} {c.unit.value} · {fmt_rate(c.peak)}")
            elif kind in ("memory", "link") and name in (h.level_map if kind == "memory" else h.link_map):
                res = (h.level_map if kind == "memory" else h.link_map)[name]
                said.append(f"{res.display} {fmt_bandwidth(res.bandwidth)}")
    if not said:
        return text
    return {"text": text, "subtitle": "Ringed kernels bound by " + ", ".join(dict.fromkeys(said)),
            "subtitleColor": HIGHLIGHT_COLOR, "subtitleFontSize": 12}


def _unlabelled(device: str, text: str) -> None:
    """Note a roof or ceiling left without a label (no room that crosses no line): the caption names it."""
    build = _BUILD.get()
    if build is not None:
        build.unlabelled.append(f"{device}: {text}")


def roof_labels(segs: pd.DataFrame, placer: _Placer, first: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Labels along each theoretical diagonal roof, rotated to its slope, where they hide nothing; the roofs
    of the bounds in ``first`` ("memory:hbm") placed before the others."""
    d = segs[(segs["kind"] != "compute") & ~segs["achievable"]]
    d = d.assign(_first=(d["kind"] + ":" + d["name"]).isin(first)).sort_values(["_first", "beta"], ascending=False)
    cols = ["device", "device_id", "x", "y", "text", "angle"]
    if d.empty:
        return pd.DataFrame(columns=cols)
    angle = -math.degrees(math.atan(placer.py / placer.px))
    rows = []
    for r in d.itertuples():
        # above the line, else below it; only then a spot that hides the fewest kernel marks and lines
        for kw in ({}, {"above": False}, {"strict": False}, {"strict": False, "above": False}):
            at = placer.place(r.x, r.y, r.x2, r.y2, r.label, start=0.04, avoid_lines=True, **kw)
            if at:
                rows.append({"device": r.device, "device_id": r.device_id, "x": at[0], "y": at[1], "text": r.label,
                             "angle": angle, "below": kw.get("above") is False})
                break
        else:
            _unlabelled(r.device, r.label)
    return pd.DataFrame(rows, columns=[*cols, "below"])


def ridge_points(hw: Hardware, ceiling: str, x_dom, y_dom) -> pd.DataFrame:
    """Where each memory-level and link roof meets ``ceiling`` (FLOP/byte), inside the axes."""
    c = hw.ceiling_map[ceiling]
    rows = []
    for res, kind in [*((lv, "memory") for lv in hw.levels), *((lk, "link") for lk in hw.links)]:
        x = c.peak / res.bandwidth
        if x_dom[0] <= x <= x_dom[1]:
            rows.append({"device": hw.name, "device_id": hw.id, "x": x, "y": c.peak, "kind": kind,
                         "offchip": res.name == hw.offchip.name,
                         "text": f"ridge {res.display} × {c.key}: {fmt_intensity(x)}",
                         "short": f"ridge {fmt_intensity(x)}"})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------- chart


def _decades(dom: tuple[float, float]) -> list[float]:
    lo, hi = math.ceil(math.log10(dom[0]) - 1e-9), math.floor(math.log10(dom[1]) + 1e-9)
    return [10.0 ** e for e in range(lo, hi + 1)]


#: the legend selection's parameter name (clicking a legend entry highlights its kernels)
LEGEND_PARAM = "legend_pick"


def _scales(x_dom, y_dom) -> tuple[dict, dict]:
    """Log axes with a tick and grid line per decade; x below 1 reads 0.01, 0.1 (not 10m, 100m)."""
    x = {"field": "x", "type": "quantitative",
         "scale": {"type": "log", "domain": [float(v) for v in x_dom], "nice": False},
         "axis": {"title": AXIS_X, "format": "~s", "values": _decades(x_dom), "gridOpacity": 0.5,
                  "labelExpr": "datum.value < 1 ? format(datum.value, '~g') : format(datum.value, '~s')"}}
    y = {"field": "y", "type": "quantitative",
         "scale": {"type": "log", "domain": [float(v) for v in y_dom], "nice": False},
         "axis": {"title": AXIS_Y, "format": "~s", "values": _decades(y_dom), "gridOpacity": 0.5}}
    return x, y


def _nominal(name: str, title: str | None = None, **props) -> dict:
    """A nominal field channel (``title`` and any other channel properties as given)."""
    return {"field": name, "type": "nominal", **({"title": title} if title is not None else {}), **props}


def _tip(name: str, title: str, kind: str = "nominal", fmt: str | None = None) -> dict:
    return {"field": name, "type": kind, "title": title, **({"format": fmt} if fmt else {})}


def _js(value: str) -> str:
    """A string literal in a Vega expression, quoted as Altair's ``alt.datum.f == value`` quotes it."""
    return repr(value)


def _device_colour(device_names: Sequence[str], *, legend: bool = False) -> dict:
    """Roof colour per device when several are overlaid (only the roof lines carry the legend)."""
    return _nominal("device", "Roofs", scale={"domain": list(device_names),
                                              "range": list(DEVICE_COLORS[:len(device_names)])},
                    legend={"orient": "right", "symbolType": "stroke", "labelLimit": 220} if legend else None)


_TEXT = {"field": "text", "type": "nominal"}
_ANGLE = {"field": "angle", "type": "quantitative", "scale": None}
_X2, _Y2 = {"field": "x2"}, {"field": "y2"}


def _labels(data: pd.DataFrame, enc: dict, role: str, **mark) -> list[dict]:
    """Text drawn twice: a white halo underneath keeps it readable over lines and kernel marks."""
    data = _src(data)
    halo = {"data": data, "mark": {"type": "text", "stroke": "white", "strokeWidth": 3, "strokeJoin": "round",
                                   "opacity": 0.9, **mark},
            "encoding": {k: v for k, v in enc.items() if k != "color"}}
    return [halo, {"data": data, "mark": {"type": "text", **mark}, "description": role, "encoding": enc}]


def _layers_for(analysis: Analysis, hws: Sequence[Hardware], points: pd.DataFrame, *, x_dom, y_dom, width, height,
                color_by: str, all_ceilings: bool, achievable: bool, hierarchical: bool, shade: Hardware | None,
                color_domain: tuple[list[str], list[str]], multi: bool, size_dom: tuple[float, float],
                orient: str = "right", shade_ceiling: str | None = None) -> list[dict]:
    """The layers of one roofline panel (one device, or several overlaid): regions, roofs, ridges, kernels, labels.

    ``shade``: the device whose memory-/compute-bound regions are shaded (None: no regions), split at the ridge
    of ``shade_ceiling`` (default: the ceiling most of its kernels' time runs on); see :func:`shading`."""
    x, y = _scales(x_dom, y_dom)
    names = [h.name for h in hws]
    layers: list[dict] = []
    labels: list[dict] = []
    placer = _Placer(x_dom, y_dom, width, height)
    if len(points):
        # labels steer clear of the largest marks; thousands of small ones cost more than they would change
        size = points["size_s"].to_numpy(dtype=np.float64)
        big = np.argsort(-size, kind="stable")  # the largest first, ties in order (as nlargest keeps them)
        big = big[~np.isnan(size[big])][:LABEL_AVOID_MARKS]
        placer.add_points(points["intensity"].to_numpy()[big], points["perf"].to_numpy()[big],
                          _radius_px(size[big], size_dom))
    segs, ridges, mains = [], [], {}
    for h in hws:
        # every mark is on this device when it is the only one (no filtered copy of the points)
        t = None if not len(points) else points if len(hws) == 1 else points[points["device_id"] == h.id]
        used = [] if t is None or t.empty else [c for c in t["ceiling"].unique() if c]
        ceilings = shown_ceilings(h, used, all_ceilings=all_ceilings)
        segs.append(roof_segments(h, ceilings, x_dom, y_dom, achievable=achievable))
        mains[h.id] = main = main_ceiling(h, None if t is None else t.drop_duplicates("kid"))
        ridges.append(ridge_points(h, main, x_dom, y_dom))
    seg = pd.concat(segs, ignore_index=True)
    rid = pd.concat(ridges, ignore_index=True)
    if len(rid):
        placer.add_points(rid["x"], rid["y"], np.full(len(rid), 5.0))
    placer.add_segments(seg)
    muted = {"fontSize": 11, "color": "#475569"}

    if shade is not None:
        key = shade_ceiling or mains[shade.id]
        r = min(max(shade.ridge(key, achievable=analysis.achievable)[shade.offchip.name], x_dom[0]), x_dom[1])
        ceil = shade.ceiling_map[key]
        ridge_text = f"ridge {fmt_intensity(r)} ({ceil.precision.value} {ceil.unit.value})"
        regions = pd.DataFrame({"region": list(REGION_FILL), "x": [x_dom[0], r], "x2": [r, x_dom[1]],
                                "y": [y_dom[0]] * 2, "y2": [y_dom[1]] * 2})
        for region, fill in REGION_FILL.items():
            layers.append({"data": _src(regions[regions["region"] == region]),
                           "mark": {"type": "rect", "fill": fill, "opacity": 0.5}, "description": f"region_{region}",
                           "encoding": {"x": x, "x2": _X2, "y": y, "y2": _Y2}})
        line_px = math.log10(y_dom[1] / y_dom[0]) / height  # decades per pixel
        sides = (("← memory-bound", r / 1.12, "right", 0), ("compute-bound →", r * 1.12, "left", 0))
        # the ridge's figure centred over the boundary, else over the compute side, else left out (the diamonds
        # and the shading's edge still show it): at the lowest height where no roof or label crosses them
        base, texts = None, sides
        for texts in ((*sides, (ridge_text, r, "center", 16)), (*sides, (ridge_text, r * 1.12, "left", 16)), sides):
            base = _annotation_height(placer, texts)
            if base is not None:
                break
        for text, tx, align, up in texts if base is not None else ():
            ty = y_dom[0] * 10 ** ((base + up) * line_px)
            placer.block(tx, ty, text, align)
            role = "ridge_label" if up else f"region_label_{align}"
            labels += _labels(pd.DataFrame({"x": [tx], "y": [ty], "text": [text]}), {"x": x, "y": y, "text": _TEXT},
                              role, align=align, baseline="bottom", **({} if up else {"fontStyle": "italic"}), **muted)

    if multi:
        line_color, quiet = _device_colour(names, legend=True), _device_colour(names)
    else:  # one device: fixed colours, so the only colour scale is the kernels'
        line_color = quiet = {"condition": {"test": "(datum.kind === 'link')", "value": LINK_COLOR}, "value": ROOF_COLOR}
    tip = [_tip("device", "Device"), _tip("name", "Roof"), _tip("value", "Value"), _tip("source", "Source")]
    layers.append({"data": _src(seg[~seg["achievable"]]), "mark": {"type": "rule", "strokeWidth": 2, "clip": True},
                   "description": "roofs",
                   "encoding": {"x": x, "y": y, "x2": _X2, "y2": _Y2, "color": line_color, "tooltip": tip}})
    ach = seg[seg["achievable"]]
    if len(ach):
        layers.append({"data": _src(ach), "mark": {"type": "rule", "strokeWidth": 1.5, "strokeDash": [6, 4],
                                                   "clip": True, "opacity": 0.8},
                       "description": "achievable_roofs",
                       "encoding": {"x": x, "y": y, "x2": _X2, "y2": _Y2, "color": quiet, "tooltip": tip}})
    if len(rid):
        layers.append({"data": _src(rid), "mark": {"type": "point", "shape": "diamond", "size": 80, "filled": True,
                                                   "fill": "white", "strokeWidth": 1.6, "opacity": 1},
                       "description": "ridges",
                       "encoding": {"x": x, "y": y,
                                    "stroke": _device_colour(names) if multi else {"value": ROOF_COLOR},
                                    "tooltip": [_tip("device", "Device"), _tip("text", "Ridge")]}})
    if len(points):
        levels: dict[str, str] = {}
        for h in hws:
            for res in (*h.levels, *h.links):
                levels.setdefault(res.name, res.display)
        layers.extend(_kernel_layers(points, x, y, color_by=color_by, color_domain=color_domain, multi=multi,
                                     hierarchical=hierarchical, names=names, size_dom=size_dom, orient=orient,
                                     levels=levels))

    if len(points) and "number" in points.columns:  # before the roof labels, which then steer clear of them
        labels += number_labels(points, placer, size_dom, x, y)

    text_color = _device_colour(names) if multi else {"value": ROOF_COLOR}
    # the roofs binding the highlighted kernels get their labels first (a small chart has room for few)
    first = frozenset(points.loc[points["hl"], "bound"]) if len(points) and "hl" in points.columns else frozenset()
    build = _BUILD.get()
    keys: list[tuple[str, pd.DataFrame]] = []

    def inline_or_key(place, expected: int, entries: pd.DataFrame, role: str, title: str) -> pd.DataFrame:
        """Labels along their lines when every one has room; else all of them in a key, top to bottom (lines too
        close to label one by one); else (no room for a key either) the inline ones, the rest named below."""
        before, said = placer.labels.copy(), len(build.unlabelled) if build else 0
        placed = place()
        if len(placed) >= expected or not expected:
            return placed
        placer.labels = before
        key = label_key(entries, title, placer)
        if key is None:  # no room in the plot: under the x axis (the chart grows by the key's height)
            key = label_key_below(entries, title, placer)
        if build is not None:
            del build.unlabelled[said:]
        keys.append((role, key))
        return placed.iloc[0:0]

    groups = ceiling_groups(seg, first).sort_values("y", ascending=False)
    cl = inline_or_key(lambda: ceiling_labels(seg, placer, first), len(groups), groups.assign(kind="compute"),
                       "ceiling_key", "Ceilings, top to bottom")
    for below, base, dy in ((False, "bottom", -3), (True, "top", 3)):
        part = cl[cl["below"] == below]
        if len(part):
            labels += _labels(part, {"x": x, "y": y, "text": _TEXT, "color": text_color},
                              "ceiling_labels" + ("_below" if below else ""), align="left", baseline=base, dy=dy, dx=2,
                              fontSize=12)
    diag = seg[(seg["kind"] != "compute") & ~seg["achievable"]].sort_values("beta", ascending=False, kind="stable")
    rl = inline_or_key(lambda: roof_labels(seg, placer, first), len(diag), diag.rename(columns={"label": "text"}),
                       "roof_key", "Roofs, top to bottom")
    for below, base, dy in ((False, "bottom", -3), (True, "top", 3)):
        part = rl[rl["below"] == below]
        if len(part):
            labels += _labels(part, {"x": x, "y": y, "text": _TEXT, "angle": _ANGLE, "color": text_color},
                              "roof_labels" + ("_below" if below else ""), align="left", baseline=base, dy=dy,
                              fontSize=12)
    key_color = text_color if multi else {"condition": {"test": "(datum.kind === 'link')", "value": LINK_COLOR},
                                          "value": ROOF_COLOR}
    for role, key in keys:
        head, body = key[key["title"]], key[~key["title"]]
        labels += _labels(head, {"x": x, "y": y, "text": _TEXT}, role + "_title", align="left", baseline="middle",
                          fontStyle="italic", **muted)
        labels += _labels(body, {"x": x, "y": y, "text": _TEXT, "color": key_color}, role, align="left",
                          baseline="middle", fontSize=12)
    return layers + labels


def _annotation_height(placer: _Placer, texts) -> float | None:
    """The lowest height (px above the x axis, from 8 px up to mid-chart) where the region and ridge annotations
    (text, x, align, px above the others) cross no roof or ceiling line and no label; None when there is none."""
    boxes = []
    for text, tx, align, up in texts:
        (X,), _ = placer.xy([tx], [1.0])
        length = len(text) * _CHAR_PX
        s0 = X - length if align == "right" else X - length / 2 if align == "center" else X
        boxes.append((s0, s0 + length, up))
    hard = np.vstack([placer.lines, placer.labels])
    for base in np.arange(8.0, placer.height / 2, 4.0):
        if all(_box_hits(hard, np.array([a]), np.array([b]), base + up, base + up + _LINE_PX)[0] == 0
               for a, b, up in boxes):
            return float(base)
    return None


def number_labels(points: pd.DataFrame, placer: _Placer, size_dom: tuple[float, float], x: dict, y: dict) -> list[dict]:
    """Layers that print each numbered kernel's number (``points["number"] > 0``) beside its mark, as "#n".

    Each number takes the first spot around its mark, nearest first, that overlaps no other number and
    stays inside the plot, preferring one that hides no mark, line or label; a number set further out
    than touching its mark gets a thin leader line. The spots join the placer's labels, so roof and
    ceiling labels placed afterwards avoid them."""
    sel = points[points["number"].to_numpy(dtype=np.float64) > 0].sort_values("number", kind="stable")
    if sel.empty:
        return []
    px, py = placer.xy(sel["intensity"], sel["perf"])
    radius = _radius_px(sel["size_s"].to_numpy(dtype=np.float64), size_dom)
    h = NUMBER_FONT_PX + 1.0
    dirs = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)]
    taken: list[tuple[float, float, float, float]] = []
    rows, leaders = [], []
    for X, Y, r, n in zip(px, py, radius, sel["number"].astype(int), strict=True):
        text = f"#{n}"
        w = (len(text) + 0.2) * _DIGIT_PX + 2  # "#" is a little wider than a digit
        best, best_cost = None, math.inf
        for ring, gap in enumerate((1.5, 8.0, 16.0, 28.0)):
            for ux, uy in dirs:
                d = r + gap
                cx = X + ux * (d + w / 2) / (math.sqrt(2) if ux and uy else 1)
                cy = Y + uy * (d + h / 2) / (math.sqrt(2) if ux and uy else 1)
                box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                if box[0] < 0 or box[1] < 0 or box[2] > placer.width or box[3] > placer.height:
                    continue
                clash = sum(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken)
                cost = 1000 * clash + _hits(placer, box) + 0.5 * ring
                if cost < best_cost:
                    best, best_cost = (cx, cy, ring), cost
            if best is not None and best_cost < 1:  # a clean spot on this ring: nearer beats cleaner further out
                break
        if best is None:  # a mark in a corner of a tiny plot: on the mark itself
            best = (X, Y, 0)
        cx, cy, ring = best
        taken.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
        placer.labels = np.vstack([placer.labels, placer._box_circles(cx - w / 2, cx + w / 2, cy, 0.0)])
        rows.append((10 ** (cx / placer.px + placer.lx0), 10 ** (cy / placer.py + placer.ly0), text))
        if ring:
            leaders.append((10 ** (X / placer.px + placer.lx0), 10 ** (Y / placer.py + placer.ly0), *rows[-1][:2]))
    out: list[dict] = []
    if leaders:
        lines = pd.DataFrame(leaders, columns=["x", "y", "x2", "y2"])
        out.append({"data": _src(lines), "mark": {"type": "rule", "strokeWidth": 0.8, "color": "#475569"},
                    "description": "kernel_number_leaders", "encoding": {"x": x, "y": y, "x2": _X2, "y2": _Y2}})
    labels = pd.DataFrame(rows, columns=["x", "y", "text"])
    out += _labels(labels, {"x": x, "y": y, "text": _TEXT}, "kernel_numbers", align="center", baseline="middle",
                   fontSize=NUMBER_FONT_PX, fontWeight="bold", color="#0f172a")
    return out


def _hits(placer: _Placer, box: tuple[float, float, float, float]) -> int:
    """How many of the placer's obstacles (marks, lines, labels: circles in px) overlap ``box``."""
    obs = np.vstack([placer.points, placer.labels])
    if not len(obs):
        return 0
    dx = np.maximum(np.maximum(box[0] - obs[:, 0], obs[:, 0] - box[2]), 0)
    dy = np.maximum(np.maximum(box[1] - obs[:, 1], obs[:, 1] - box[3]), 0)
    return int((dx * dx + dy * dy < obs[:, 2] ** 2).sum())


def _size_domain(points: pd.DataFrame) -> tuple[float, float]:
    """Seconds mapped to the smallest and largest mark (log scale)."""
    t = points["size_s"].to_numpy(dtype=np.float64)
    t = t[np.isfinite(t) & (t > 0)]
    if not len(t):
        return 0.1, 1.0
    lo, hi = float(t.min()), float(t.max())
    return (hi / 10, hi) if lo >= hi else (lo, hi)


def _legend_times(dom: tuple[float, float]) -> list[float]:
    """Three round times (seconds) spanning the size scale, for its legend."""
    lo, hi = dom
    picks = [lo, math.sqrt(lo * hi), hi] if hi > lo * 1.5 else [hi]
    out = []
    for t in picks:
        e = math.floor(math.log10(t))
        r = round(t / 10 ** e) * 10 ** e
        r = min(max(r, lo), hi)
        if not out or r > out[-1] * 1.2:
            out.append(float(f"{r:.2g}"))
    return out


def _radius_px(t: np.ndarray | pd.Series, dom: tuple[float, float]) -> np.ndarray:
    """Mark radius in pixels for time ``t`` under the size scale (area ``SIZE_RANGE`` over log ``dom``)."""
    lt = np.log(np.clip(np.asarray(t, dtype=np.float64), dom[0], dom[1]))
    frac = (lt - math.log(dom[0])) / max(math.log(dom[1] / dom[0]), 1e-12)
    area = SIZE_RANGE[0] + np.nan_to_num(frac, nan=0.0) * (SIZE_RANGE[1] - SIZE_RANGE[0])
    return np.sqrt(area / math.pi)


def _opacity_by_legend(selected: float, other: float) -> dict:
    """Opacity ``selected`` for marks the legend selection picks (all, before any click), else ``other``."""
    return {"condition": {"param": LEGEND_PARAM, "value": selected}, "value": other}


def _kernel_layers(points: pd.DataFrame, x: dict, y: dict, *, color_by, color_domain, multi, hierarchical, names,
                   size_dom, orient: str = "right", levels: dict[str, str] | None = None) -> list[dict]:
    """The kernel marks (and, in the hierarchical view, the rules joining a kernel's marks and a ring on the mark
    of the level that binds it). ``levels``: level or link name -> display name, in hierarchy order, for the
    legend's order and one tooltip line per level ("Intensity at L2")."""
    levels = {k: v for k, v in (levels or {}).items() if f"i_{k}" in points.columns}
    field = "bound" if color_by == "bound" else "group"
    dom, rng = color_domain
    cscale = {"domain": dom, "range": rng} if field == "bound" else {"domain": dom, "scheme": GROUP_SCHEME}
    color = _nominal(field, "Bound" if field == "bound" else "Group", scale=cscale,
                     legend={"orient": orient, "symbolLimit": 40, "labelLimit": 220})
    if multi:
        shape = _nominal("device", "Device", legend={"orient": "right"}, scale={"domain": list(names)})
    elif hierarchical:  # the legend lists the levels off-chip first, as the device does
        shown = set(points["level"]) if len(points) else set()
        order = [d for d in dict.fromkeys(levels.values()) if d in shown]
        shape = _nominal("level", "Level", legend={"orient": orient},
                         scale={"domain": order + sorted(shown - set(order))})
    else:
        shape = {"value": "circle"}
    t_min, t_max = size_dom
    size_scale = {"type": "log", "domain": [float(t_min), float(t_max)], "range": list(SIZE_RANGE)}
    size = {"field": "size_s", "type": "quantitative", "title": "Time", "scale": size_scale,
            "legend": {"orient": orient, "values": _legend_times(size_dom), "labelExpr": _fmt_expr("value", "s"),
                       "symbolFillColor": "#94a3b8", "symbolStrokeWidth": 0}}
    tooltip = [
        _tip("name", "Kernel"), _tip("device", "Device"), _tip("count", "Launches", "quantitative", ","),
        _tip("t_flops", "FLOPs"), _tip("t_bytes", "Bytes"), _tip("level", "Level"), _tip("t_int", "Intensity"),
        *(_tip(f"t_i_{k}", f"Intensity at {d}") for k, d in levels.items()),
        _tip("t_ach", "Achieved"), _tip("t_att", "Attainable"), _tip("t_eff", "Efficiency (of roof)"),
        _tip("bound", "Bound"), _tip("t_time", "Measured time"), _tip("t_roof", "Roofline time"),
        _tip("t_head", "Headroom"), _tip("group", "Group"), _tip("placed", "Placed by"),
    ]
    calc = {"t_flops": _fmt_expr("flops", "FLOP"), "t_bytes": _fmt_expr("bytes", "B"),
            "t_int": _intensity_expr("x"), "t_ach": _fmt_expr("achieved", "FLOP/s"),
            "t_att": _fmt_expr("attainable", "FLOP/s"), "t_eff": _pct_expr("efficiency"),
            "t_time": _fmt_expr("time_s", "s"), "t_roof": _fmt_expr("t_roof_s", "s"),
            "t_head": _fmt_expr("headroom_s", "s"),
            **{f"t_i_{k}": _intensity_expr(f"i_{k}") for k in levels}}  # the mark's own is x, renamed below
    data = points.rename(columns={"intensity": "x", "perf": "y"})
    highlight = "hl" in data.columns  # roofline(highlight=...): named kernels emphasised, the rest faded
    keep = ["kid", "device", "device_id", "name", "count", "group", "bound", "flops", "bytes", "level", "x", "y",
            "achieved", "attainable", "efficiency", "time_s", "t_roof_s", "headroom_s", "size_s", "placed",
            *(f"i_{k}" for k in levels), *(["hl"] if highlight else []),
            *(["binding"] if hierarchical and "binding" in data.columns else [])]
    data = data[keep]
    layers: list[dict] = []
    if hierarchical:
        span = data.groupby(["device_id", "kid"], sort=False).agg(
            x=("x", "min"), x2=("x", "max"), y=("y", "first"), device=("device", "first"),
            bound=("bound", "first"), group=("group", "first")).reset_index()
        span = span[span["x2"] > span["x"]]
        if len(span):
            layers.append({"data": _src(span), "mark": {"type": "rule", "strokeWidth": 1, "opacity": 0.5},
                           "description": "kernel_links",
                           "encoding": {"x": x, "x2": _X2, "y": y,
                                        "color": _nominal(field, scale=cscale, legend=None),
                                        "opacity": _opacity_by_legend(0.55, 0.06)}})
    style: dict = {}
    if multi:  # the first device's marks filled, the others hollow: coinciding marks stay visible
        style = {"stroke": _nominal(field, scale=cscale, legend=None),
                 "fillOpacity": {"condition": {"test": f"(datum.device === {_js(names[0])})", "value": 0.85},
                                 "value": 0.0}}
    binding = hierarchical and "binding" in data.columns and bool(data["binding"].any())
    quiet_shape = {**shape, "legend": None} if "field" in shape else shape  # rings: no second shape legend
    if highlight:
        opacity = {"condition": {"test": "datum.hl", "value": 0.95}, "value": HIGHLIGHT_FADE}
    elif binding:  # the level that binds each kernel stands out; its other levels' marks recede
        opacity = {"condition": [{"test": {"not": {"param": LEGEND_PARAM}}, "value": 0.1},
                                 {"test": "datum.binding", "value": 0.95}], "value": 0.4}
    else:
        opacity = _opacity_by_legend(0.85 if not multi else 1.0, 0.1)
    kernel_data = _src(data)
    layers.append({"data": kernel_data, "mark": {"type": "point", "filled": True, "stroke": "white",
                                                "strokeWidth": 1.2 if multi else 0.6, "clip": True},
                   "description": "kernels", "name": _view_name(),
                   "transform": [{"calculate": expr, "as": name} for name, expr in calc.items()],
                   "encoding": {"x": x, "y": y, "color": color, "shape": shape, "size": size, "opacity": opacity,
                                "tooltip": tooltip, **style}})
    if binding and not highlight:  # a dark ring on the mark of the binding level, as for highlighted kernels
        # the same rows (no copy), and the kernels' tooltip: the ring is on top, so it is what a hover finds
        layers.append({"data": kernel_data, "transform": [{"filter": "datum.binding"},
                                                          *({"calculate": e, "as": n} for n, e in calc.items())],
                       "mark": {"type": "point", "filled": False, "stroke": BINDING_COLOR, "strokeWidth": 1.6,
                                "clip": True},
                       "description": "binding_marks",
                       "encoding": {"x": x, "y": y, "shape": quiet_shape, "opacity": _opacity_by_legend(0.9, 0.08),
                                    "tooltip": tooltip,
                                    "size": {"field": "size_s", "type": "quantitative", "scale": size_scale,
                                             "legend": None}}})
    if highlight and data["hl"].any():  # a dark ring around each highlighted mark, drawn over the others
        layers.append({"data": _src(data[data["hl"]]),
                       "mark": {"type": "point", "filled": False, "stroke": HIGHLIGHT_COLOR, "strokeWidth": 2.2,
                                "opacity": 1, "clip": True},
                       "description": "highlighted",
                       "encoding": {"x": x, "y": y, "shape": quiet_shape, "tooltip": [_tip("name", "Kernel")],
                                    "size": {"field": "size_s", "type": "quantitative", "scale": size_scale,
                                             "legend": None}}})
    return layers


def _legend_param(field: str, views: Sequence[str]) -> dict:
    """The legend selection: click an entry (a bound or a group) to highlight its kernels in ``views``."""
    return {"name": LEGEND_PARAM, "select": {"type": "point", "fields": [field]}, "bind": "legend",
            "views": list(views)}


def roofline(analysis: Analysis, hw_ids: Sequence[str] | None = None, *, color_by: str = "bound",
             top_n: int | None = None, hierarchical: bool = False, all_ceilings: bool = False,
             achievable: bool = True, layout: str = "overlay", max_marks: int = MAX_MARKS,
             width: int = 760, height: int = 440, highlight: Sequence[str] | None = None,
             numbers: Sequence[int] | np.ndarray | None = None) -> RooflineFigure:
    """The log-log roofline of ``analysis`` on ``hw_ids`` (default: every device in it).

    ``color_by``: "bound" or "group". ``top_n``: only the N kernels with the most time. ``hierarchical``: one
    mark per memory level, joined by a rule. ``layout``: "overlay" (one chart, devices by colour and shape)
    or "facet" (one panel per device, same axes, concatenated). Never more than ``max_marks`` kernel marks.
    ``highlight``: kernel names to emphasise (ringed, opaque); the other kernels are faded, and the legend
    click then selects nothing (the highlight sets the opacity instead).
    ``numbers``: one integer per workload row (0: none); each drawn kernel with a number has it printed
    beside its mark as "#n" (a report keys them to its table).
    """
    if numbers is not None:
        # carried through the selection as a frame column, so each number follows its row
        num = np.asarray(numbers, dtype=np.int64)
        if num.shape != (len(analysis.workload),):
            raise ValueError(f"numbers: one per kernel ({len(analysis.workload)}), got shape {num.shape}")
        analysis = replace(analysis, workload=replace(analysis.workload,
                                                      frame=analysis.workload.frame.assign(**{_NUMBER_COL: num})))
    hw_ids = list(hw_ids or [h.id for h in analysis.hardware])
    hws = [analysis.result(h).hardware for h in hw_ids]
    total = len(analysis.workload)
    sub, capped = select_kernels(analysis, hw_ids, top_n=top_n, hierarchical=hierarchical, max_marks=max_marks)
    points = kernel_points(sub, hw_ids, hierarchical=hierarchical)
    if numbers is not None and len(points):
        points["number"] = sub.workload.frame[_NUMBER_COL].to_numpy()[points["kid"].to_numpy(dtype=np.int64)]
    notes: list[str] = []
    drawn = len(sub.workload)
    if capped:
        notes.append(f"Capped at {max_marks:,} marks: showing the top {drawn:,} of {total:,} kernels by time.")
    elif drawn < total:
        notes.append(f"Showing the top {drawn:,} of {total:,} kernels by time.")
    ok = np.isfinite(points["intensity"].to_numpy(dtype=np.float64)) & (points["intensity"] > 0).to_numpy() & \
        np.isfinite(points["perf"].to_numpy(dtype=np.float64)) & (points["perf"] > 0).to_numpy()
    if (~ok).any():
        # a kernel is left out when none of its marks can be drawn (the hierarchical view may lose one level only)
        gone = points[~points["kid"].isin(points.loc[ok, "kid"])].drop_duplicates("kid")
        moves = int((gone["flops"] == 0).sum())
        if moves:
            notes.append(f"{moves:,} kernel(s) not drawn: 0 FLOP (data movement: copies, memsets), so there is no point "
                         "on a log-log chart.")
        if len(gone) > moves:
            notes.append(f"{len(gone) - moves:,} kernel(s) not drawn: FLOPs or bytes unknown or zero, so there is no "
                         "point on a log-log chart.")
    points = points[ok].reset_index(drop=True)
    if highlight is not None:
        wanted = set(map(str, highlight))
        points["hl"] = points["name"].isin(wanted).to_numpy()
        missing = len(wanted - set(points.loc[points["hl"], "name"]))
        if missing:
            notes.append(f"{missing:,} highlighted kernel(s) not drawn (left out above, or not in this analysis).")
    untimed = int((points["placed"] != "measured time").sum())
    if untimed:
        notes.append("Kernels without a measured time are placed on their roof (attainable FLOP/s)"
                     + (f": {points.loc[points['placed'] != 'measured time', 'kid'].nunique():,} of them." if
                        untimed < len(points) else ", which is all of them here."))
    if hierarchical:
        notes.append("Each kernel has one mark per memory level it has bytes for, at its intensity there (FLOPs ÷ that "
                     "level's bytes), joined by a line; the ringed mark is the level or link that bounds it; marks are "
                     "sized by time.")
    else:
        notes.append("x is each kernel's off-chip intensity; marks are sized by time.")
    x_dom, y_dom = base_domains(hws)
    nx, ny = _extend(x_dom, points["intensity"].to_numpy()), _extend(y_dom, points["perf"].to_numpy())
    if (nx, ny) != (x_dom, y_dom):
        notes.append("Axes extended by whole decades to fit kernels beyond the devices' usual range.")
    x_dom, y_dom = nx, ny
    if achievable and (any(lv.achievable for h in hws for lv in h.levels) or
                       any(c.achievable for h in hws for c in h.ceilings)):
        notes.append("Dashed lines: achievable (measured) roofs from the catalog.")

    field = "bound" if color_by == "bound" else "group"
    values = points[field].unique().tolist() if len(points) else []
    color_domain = bound_colors(values) if field == "bound" else (sorted(values), [])
    size_dom = _size_domain(points)
    if len(hws) > 1 and (points["placed"] == "measured time").any():
        notes.append("A measured kernel has the same intensity and achieved rate on every device (measured where it "
                     "ran), so read it against each device's roofs: above a roof means that device could not have "
                     "been the one.")
    build = _Build()
    token = _BUILD.set(build)
    try:
        overlay = layout != "facet" or len(hws) == 1
        if overlay:
            multi = len(hws) > 1
            key, why = shading(sub, hws[0], points)
            layers = _layers_for(sub, hws, points, x_dom=x_dom, y_dom=y_dom, width=width, height=height,
                                 color_by=color_by, all_ceilings=all_ceilings, achievable=achievable,
                                 hierarchical=hierarchical, shade=hws[0] if key else None, shade_ceiling=key,
                                 color_domain=color_domain, multi=multi, size_dom=size_dom)
            if not key:
                notes.append(f"No memory/compute shading: {why}.")
            chart: dict = {"layer": layers, "width": width, "height": height,
                           "title": _title(hws[0].name if not multi else " vs ".join(h.name for h in hws),
                                           hws, points)}
            if multi:
                # roofs coloured by device and marks by bound: two colour scales; the device legend shows shapes
                chart["resolve"] = {"scale": {"color": "independent", "stroke": "independent"},
                                    "legend": {"shape": "independent"}}
                notes.append((f"Shading shows where kernels are memory- or compute-bound on {hws[0].name}; marks on "
                              if key else "Marks on ") + f"{hws[0].name} are filled, on the others hollow.")
        else:
            panels = []
            pw = max(320, int(width * 0.5))  # two panels a row, legends below: as wide as one overlaid chart
            ph = max(260, int(height * 0.7))
            for h in hws:
                p = points[points["device_id"] == h.id]
                key, why = shading(sub, h, p)
                layers = _layers_for(sub, [h], p, x_dom=x_dom, y_dom=y_dom, width=pw, height=ph, color_by=color_by,
                                     all_ceilings=all_ceilings, achievable=achievable, hierarchical=hierarchical,
                                     shade=h if key else None, shade_ceiling=key, color_domain=color_domain,
                                     multi=False, size_dom=size_dom, orient="bottom")
                if not key:
                    notes.append(f"No memory/compute shading on {h.name}: {why}.")
                panels.append({"layer": layers, "width": pw, "height": ph, "title": _title(h.name, [h], p)})
            chart = {"concat": panels, "columns": 2}  # one legend selection, shared by every panel
        if build.views:
            chart["params"] = [_legend_param(field, build.views)]
    finally:
        _BUILD.reset(token)
    if build.unlabelled:
        names = list(dict.fromkeys(build.unlabelled if len(hws) > 1 else (u.split(": ", 1)[1] for u in build.unlabelled)))
        notes.append(f"No room for a label that crosses no line: {'; '.join(names)} (hover a line for its figures).")
    chart = _finish(chart, usermeta={"roofcore": {"kernel_points": len(points), "kernels": int(points["kid"].nunique())
                                                  if len(points) else 0, "capped": bool(capped), "devices": hw_ids}})
    return RooflineFigure(chart=VegaLiteSpec(chart), notes=tuple(notes), points=len(points),
                          kernels=int(points["kid"].nunique()) if len(points) else 0, total_kernels=total,
                          capped=capped, devices=tuple(hw_ids), x_domain=x_dom, y_domain=y_dom,
                          datasets=build.datasets)


#: roofline_compare: colour of the old marks and of the arrows from old to new
COMPARE_OLD_COLOR = "#94a3b8"
COMPARE_ARROW_COLOR = "#475569"


def compare_points(old: Analysis, new: Analysis, hw_id: str) -> pd.DataFrame:
    """One row per kernel name present in both runs: its old and new point (x = off-chip intensity, y = FLOP/s).

    Each run's launches should already be summed by name (``roofcore.plan.by_name``); otherwise the first row
    of each name is used. y is the achieved FLOP/s where measured, else the attainable FLOP/s."""
    po = kernel_points(old, [hw_id]).drop_duplicates("name")
    pn = kernel_points(new, [hw_id]).drop_duplicates("name")
    m = po[["name", "intensity", "perf", "size_s", "bound"]].merge(
        pn[["name", "intensity", "perf", "size_s", "bound"]], on="name", suffixes=("_old", "_new"), how="inner")
    with np.errstate(divide="ignore", invalid="ignore"):
        m["speedup"] = m["size_s_old"] / m["size_s_new"]
    return m


def roofline_compare(old: Analysis, new: Analysis, hw_id: str, *, width: int = 760, height: int = 440,
                     max_pairs: int = MAX_MARKS // 2, achievable: bool = True) -> RooflineFigure:
    """The roofline of ``new`` on one device with an arrow (a rule, old end hollow, new end filled) from each
    kernel's old point to its new one; kernels are matched by name (aggregate launches by name first).

    Old points are grey rings; new points are coloured by bound as in :func:`roofline`. At most ``max_pairs``
    pairs are drawn (those with the most old time first)."""
    hw = new.result(hw_id).hardware
    pairs = compare_points(old, new, hw_id)
    ok = np.ones(len(pairs), dtype=bool)
    for c in ("intensity_old", "perf_old", "intensity_new", "perf_new"):
        v = pairs[c].to_numpy(dtype=np.float64)
        ok &= np.isfinite(v) & (v > 0)
    notes: list[str] = []
    lost = int((~ok).sum())
    pairs = pairs[ok].sort_values("size_s_old", ascending=False, na_position="last")
    if len(pairs) > max_pairs:
        notes.append(f"Showing the {max_pairs:,} kernels with the most old time of {len(pairs):,} matched.")
        pairs = pairs.head(max_pairs)
    if lost:
        notes.append(f"{lost:,} matched kernel(s) not drawn: FLOPs or bytes unknown or zero in one of the runs.")
    n_old, n_new = len(old.workload), len(new.workload)
    notes.append(f"Arrows go from each kernel's old point (grey ring) to its new one (filled), matched by name: "
                 f"{len(pairs):,} drawn; {n_old:,} kernels before, {n_new:,} after.")
    sub = new
    points = kernel_points(sub, [hw_id])
    points = points[points["name"].isin(set(pairs["name"]))].drop_duplicates("name").reset_index(drop=True)
    x_dom, y_dom = base_domains([hw])
    for col in ("intensity_old", "intensity_new"):
        x_dom = _extend(x_dom, pairs[col].to_numpy(dtype=np.float64))
    for col in ("perf_old", "perf_new"):
        y_dom = _extend(y_dom, pairs[col].to_numpy(dtype=np.float64))
    values = points["bound"].unique().tolist() if len(points) else []
    color_domain = bound_colors(values)
    size_dom = _size_domain(points) if len(points) else (0.1, 1.0)
    build = _Build()
    token = _BUILD.set(build)
    key, why = shading(sub, hw, points)
    if not key:
        notes.append(f"No memory/compute shading: {why}.")
    try:
        layers = _layers_for(sub, [hw], points, x_dom=x_dom, y_dom=y_dom, width=width, height=height,
                             color_by="bound", all_ceilings=False, achievable=achievable, hierarchical=False,
                             shade=hw if key else None, shade_ceiling=key, color_domain=color_domain, multi=False,
                             size_dom=size_dom)
        x, y = _scales(x_dom, y_dom)
        arrows = pairs.rename(columns={"intensity_old": "x", "perf_old": "y", "intensity_new": "x2",
                                       "perf_new": "y2"})[["name", "x", "y", "x2", "y2", "speedup"]]
        tip = [_tip("name", "Kernel"), _tip("speedup", "Speedup", "quantitative", ".2f")]
        layers.append({"data": _src(arrows), "mark": {"type": "rule", "strokeWidth": 1.4, "color": COMPARE_ARROW_COLOR,
                                                      "opacity": 0.8, "clip": True},
                       "description": "compare_arrows",
                       "encoding": {"x": x, "y": y, "x2": _X2, "y2": _Y2, "tooltip": tip}})
        # an arrowhead at each segment's middle (log space), turned to the segment's direction on screen
        ok = (arrows[["x", "y", "x2", "y2"]] > 0).all(axis=1)
        heads = arrows[ok].copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            dx = np.log10(heads["x2"] / heads["x"]) * width / np.log10(x_dom[1] / x_dom[0])
            dy = np.log10(heads["y2"] / heads["y"]) * height / np.log10(y_dom[1] / y_dom[0])
        heads["angle"] = np.degrees(np.arctan2(dx, dy))  # Vega turns marks clockwise from pointing up
        heads["x"], heads["y"] = np.sqrt(heads["x"] * heads["x2"]), np.sqrt(heads["y"] * heads["y2"])
        heads = heads[np.hypot(dx, dy) > 12][["name", "x", "y", "angle", "speedup"]]  # too short to point
        if len(heads):
            layers.append({"data": _src(heads), "mark": {"type": "point", "shape": "triangle", "filled": True,
                                                         "size": 70, "color": COMPARE_ARROW_COLOR, "opacity": 0.9,
                                                         "clip": True},
                           "description": "compare_arrowheads",
                           "encoding": {"x": x, "y": y, "angle": _ANGLE, "tooltip": tip}})
        olds = arrows[["name", "x", "y", "speedup"]]
        layers.append({"data": _src(olds), "mark": {"type": "point", "filled": False, "stroke": COMPARE_OLD_COLOR,
                                                    "strokeWidth": 1.6, "size": 60, "opacity": 0.95, "clip": True},
                       "description": "compare_old", "encoding": {"x": x, "y": y, "tooltip": tip}})
        chart: dict = {"layer": layers, "width": width, "height": height, "title": f"{hw.name}: before → after"}
        if build.views:
            chart["params"] = [_legend_param("bound", build.views)]
    finally:
        _BUILD.reset(token)
    chart = _finish(chart, usermeta={"roofcore": {"compare_pairs": len(pairs), "devices": [hw_id]}})
    return RooflineFigure(chart=VegaLiteSpec(chart), notes=tuple(notes), points=len(points) + len(pairs),
                          kernels=len(pairs), total_kernels=n_new, capped=False, devices=(hw_id,),
                          x_domain=x_dom, y_domain=y_dom, datasets=build.datasets)


#: the shared look: readable fonts, a light frame (as Vega-Lite config; :data:`CONFIG` is the same for Altair)
LOOK = {
    "axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal", "labelColor": "#334155",
             "titleColor": "#1e293b"},
    "legend": {"labelFontSize": 12, "titleFontSize": 12},
    "title": {"fontSize": 15, "anchor": "start", "color": "#0f172a"},
    "view": {"stroke": "#cbd5e1"},
}
CONFIG = alt.Config.from_dict(copy.deepcopy(LOOK))
#: what Altair's default theme adds to every chart's config (kept, so both kinds of chart look the same)
_THEME_VIEW = {"continuousWidth": 300, "continuousHeight": 300}
_AUTOSIZE = {"type": "pad", "contains": "padding"}


def _finish(chart, **props):
    """Keep the size the chart was given (autosize pad) and apply :data:`LOOK`: to a Vega-Lite dict (a new dict
    with the schema URL) or to an Altair chart (in one copy of it)."""
    if isinstance(chart, dict):
        config = {**copy.deepcopy(LOOK), "view": {**_THEME_VIEW, **LOOK["view"]}}
        return {"$schema": alt.SCHEMA_URL, "config": config, "autosize": dict(_AUTOSIZE), **chart, **props}
    return chart.properties(autosize=alt.AutoSizeParams(**_AUTOSIZE), config=CONFIG, **props)


# ----------------------------------------------------------------------------------------------- supporting


def bound_share_chart(share: dict[str, float], *, width: int = 320, height: int | None = None) -> alt.Chart:
    """Horizontal bars: fraction of time per bound (``Analysis.summary()['time_share_by_bound']``)."""
    df = pd.DataFrame({"bound": list(share), "share": [float(v) for v in share.values()]})
    dom, rng = bound_colors(df["bound"].tolist())
    df["label"] = df["share"].map(lambda v: f"{v:.0%}" if v >= 0.01 else "<1%")
    h = height or max(56, 30 * len(df))
    base = alt.Chart(df).encode(
        y=alt.Y("bound:N", title=None, sort="-x", axis=alt.Axis(labelLimit=200)),
        x=alt.X("share:Q", title="Share of time", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])))
    bars = base.mark_bar(cornerRadiusEnd=3).encode(
        color=alt.Color("bound:N", scale=alt.Scale(domain=dom, range=rng), legend=None),
        tooltip=[alt.Tooltip("bound:N", title="Bound"), alt.Tooltip("share:Q", title="Share", format=".1%")])
    text = base.mark_text(align="left", dx=4, fontSize=12).encode(text=alt.Text("label:N"))
    return _finish(alt.layer(bars, text).properties(width=width, height=h))


# ----------------------------------------------------------------------------------------------- export


def _json(chart: RooflineFigure | alt.TopLevelMixin) -> dict:
    return chart.to_dict()


def to_svg(chart: RooflineFigure | alt.TopLevelMixin) -> str:
    """The chart as a standalone SVG document, rendered offline by vl-convert."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(_json(chart))


def to_png(chart: RooflineFigure | alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """The chart as PNG bytes (``scale`` × its size), rendered offline by vl-convert."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(_json(chart), scale=scale)


__all__ = [
    "AXIS_X", "AXIS_Y", "MAX_MARKS", "RooflineFigure", "base_domains", "bound_colors", "bound_share_chart",
    "compare_points", "kernel_points", "ridge_points", "roof_segments", "roofline", "roofline_compare",
    "select_kernels", "to_png", "to_svg",
]


# ----------------------------------------------------------------------------------------------- planning

#: matmul_intensity_chart: the default square sizes (N from 16 to 65,536, powers of two)
MATMUL_SIZES = tuple(2 ** i for i in range(4, 17))


def matmul_intensity_chart(hws: Sequence[Hardware], sizes: Sequence[float] | None = None,
                           dtypes: Sequence[str] = ("fp32", "bf16", "fp8"), *, ridge_dtype: str = "bf16",
                           width: int = 640, height: int = 360) -> alt.Chart:
    """Off-chip intensity of an ``N×N×N`` matmul against ``N`` (log–log), one line per dtype, with each
    device's ridge point (``ridge_dtype`` matrix ceiling ÷ off-chip bandwidth) as a labelled horizontal rule.

    FLOPs ``2N³``, bytes ``3N²·|dtype|`` (A and B read once, C written once: the ideal tiling), so the
    intensity is ``2N / (3·|dtype|)``: ``N/3`` in bf16. Where a line crosses a device's rule the matmul
    becomes compute-bound there (``N = 1.5·|dtype|·π/β``, :func:`roofcore.plan.square_matmul_crossover`).
    A device without a ``ridge_dtype`` matrix ceiling has no rule."""
    from .models import DTYPE_SIZE, canonical_dtype

    ns = np.asarray(sizes if sizes is not None else MATMUL_SIZES, dtype=np.float64)
    rows = []
    for dt in dtypes:
        size = DTYPE_SIZE[canonical_dtype(dt)]
        rows += [{"n": float(n), "intensity": 2.0 * n / (3.0 * size), "dtype": canonical_dtype(dt)} for n in ns]
    lines = pd.DataFrame(rows, columns=["n", "intensity", "dtype"])
    ridges = []
    for hw in hws:
        c = hw.resolve_ceiling(canonical_dtype(ridge_dtype), "matrix")
        if c is not None and hw.offchip.bandwidth:
            ridges.append({"device": hw.id, "ridge": c.peak / hw.offchip.bandwidth,
                           "label": f"{hw.id} ridge {c.peak / hw.offchip.bandwidth:,.0f}"})
    ridge = pd.DataFrame(ridges, columns=["device", "ridge", "label"]).sort_values("ridge", ignore_index=True)
    # labels of ridges closer than 1.4x sit one after another along the rule, right to left, not on top of each other
    slot, prev = [], None
    for r in ridge["ridge"]:
        slot.append(slot[-1] + 1 if prev is not None and r / prev < 1.4 else 0)
        prev = r
    ridge["lx"] = [float(ns.max()) / 16.0 ** k for k in slot]
    ys = np.concatenate([lines["intensity"].to_numpy(), ridge["ridge"].to_numpy()])
    y_dom = [10 ** math.floor(math.log10(max(ys.min(), 1e-3))), 10 ** math.ceil(math.log10(ys.max()))]
    x = alt.X("n:Q", title="Square matmul size N (M = N = K)", scale=alt.Scale(type="log", base=2, nice=False,
              domain=[float(ns.min()), float(ns.max())]), axis=alt.Axis(values=[float(n) for n in ns],
                                                   labelExpr="datum.value >= 1024 ? datum.value / 1024 + 'K' : datum.value"))
    y = alt.Y("intensity:Q", title="Off-chip intensity (FLOP/byte)", scale=alt.Scale(type="log", domain=y_dom),
              axis=alt.Axis(format="~s"))
    dtype_line = alt.Chart(lines).mark_line(point=True, strokeWidth=2).encode(
        x=x, y=y, color=alt.Color("dtype:N", title="dtype", scale=alt.Scale(scheme="tableau10", domain=list(dict.fromkeys(lines["dtype"]))),
                                  legend=alt.Legend(orient="top-left")),
        tooltip=[alt.Tooltip("dtype:N"), alt.Tooltip("n:Q", title="N", format=","),
                 alt.Tooltip("intensity:Q", title="FLOP/byte", format=",.1f")])
    layers: list = [dtype_line]
    if len(ridge):
        dev = alt.Color("device:N", scale=alt.Scale(domain=ridge["device"].tolist(),
                                                    range=list(DEVICE_COLORS[:len(ridge)]) or ["#334155"]),
                        legend=None)
        rules = alt.Chart(ridge, description="ridge_rules").mark_rule(strokeDash=[6, 4], strokeWidth=1.5).encode(
            y=alt.Y("ridge:Q", scale=alt.Scale(type="log", domain=y_dom)), color=dev,
            tooltip=[alt.Tooltip("device:N"), alt.Tooltip("ridge:Q", title=f"Ridge ({ridge_dtype}, FLOP/byte)",
                                                          format=",.0f")])
        text = alt.Chart(ridge, description="ridge_labels").mark_text(
            align="right", baseline="bottom", dx=-4, dy=-3, fontSize=12).encode(
            x=alt.X("lx:Q", scale=alt.Scale(type="log", base=2, nice=False, domain=[float(ns.min()), float(ns.max())])),
            y=alt.Y("ridge:Q", scale=alt.Scale(type="log", domain=y_dom)), text="label:N",
            color=dev)
        layers += [rules, text]
    chart = alt.layer(*layers).resolve_scale(color="independent").properties(
        width=width, height=height, title=f"Square matmul intensity vs size; dashed: each device's {ridge_dtype} ridge")
    return _finish(chart)


__all__ += ["MATMUL_SIZES", "matmul_intensity_chart"]


def projection_chart(totals: pd.DataFrame, *, width: int = 520, height: int | None = None) -> alt.Chart:
    """Horizontal bars of a projection's per-device estimate (``device``, ``t_roof_s``, ``estimate_s`` columns, as
    :func:`roofcore.app_support.projection_totals` gives), labelled with the time; Σ t_roof as a tick."""
    from .units import fmt_time

    df = totals.copy()
    df["label"] = df["estimate_s"].map(fmt_time)
    top = float(np.nanmax(df["estimate_s"].to_numpy(dtype=np.float64), initial=0.0))
    unit, scale = next(((u, f) for u, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)) if top >= f), ("ns", 1e-9))
    df["value"] = df["estimate_s"] / scale
    h = height or max(60, 34 * len(df))
    y = alt.Y("device:N", title=None, sort=None, axis=alt.Axis(labelLimit=220))
    x = alt.X("value:Q", title=f"Estimated time per run ({unit})", scale=alt.Scale(zero=True),
              axis=alt.Axis(format=",~f"))
    tip = [alt.Tooltip("device:N", title="Device"), alt.Tooltip("label:N", title="Estimate"),
           alt.Tooltip("t_roof_s:Q", title="Σ t_roof (s)", format=".4~s")]
    bars = alt.Chart(df, description="projection_bars").mark_bar(cornerRadiusEnd=3, color="#0f766e").encode(
        y=y, x=x, tooltip=tip)
    text = alt.Chart(df).mark_text(align="left", dx=4, fontSize=12).encode(y=y, x=x, text="label:N")
    return _finish(alt.layer(bars, text).properties(width=width, height=h))


__all__ += ["projection_chart"]
