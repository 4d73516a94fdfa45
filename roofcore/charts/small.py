"""The small supporting charts, written with Altair: time per bound, a square matmul's intensity against its size
with each device's ridge, and a projection's estimate per device."""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ..models import DTYPE_SIZE, Hardware, canonical_dtype
from ..units import fmt_time
from .look import DEVICE_COLORS, bound_colors
from .spec import finish


def bound_share_chart(share: dict[str, float], *, width: int = 320, height: int | None = None
                      ) -> alt.LayerChart | alt.FacetChart:
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
    return finish(alt.layer(bars, text).properties(width=width, height=h))


#: matmul_intensity_chart: the default square sizes (N from 16 to 65,536, powers of two)
MATMUL_SIZES = tuple(2 ** i for i in range(4, 17))


def matmul_intensity_chart(hws: Sequence[Hardware], sizes: Sequence[float] | None = None,
                           dtypes: Sequence[str] = ("fp32", "bf16", "fp8"), *, ridge_dtype: str = "bf16",
                           width: int = 640, height: int = 360) -> alt.LayerChart | alt.FacetChart:
    """Off-chip intensity of an ``N×N×N`` matmul against ``N`` (log–log), one line per dtype, with each
    device's ridge point (``ridge_dtype`` matrix ceiling ÷ off-chip bandwidth) as a labelled horizontal rule.

    FLOPs ``2N³``, bytes ``3N²·|dtype|`` (A and B read once, C written once: the ideal tiling), so the
    intensity is ``2N / (3·|dtype|)``: ``N/3`` in bf16. Where a line crosses a device's rule the matmul
    becomes compute-bound there (``N = 1.5·|dtype|·π/β``, :func:`roofcore.plan.square_matmul_crossover`).
    A device without a ``ridge_dtype`` matrix ceiling has no rule."""
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
            at = hw.ridge(c.key)[hw.offchip.name]  # FLOP/byte
            ridges.append({"device": hw.id, "ridge": at, "label": f"{hw.id} ridge {at:,.0f}"})
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
    layers: list[alt.Chart] = [dtype_line]
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
    # typed: Altair's resolve_scale returns Any to a checker
    chart: alt.LayerChart | alt.FacetChart = alt.layer(*layers).resolve_scale(color="independent").properties(
        width=width, height=height, title=f"Square matmul intensity vs size; dashed: each device's {ridge_dtype} ridge")
    return finish(chart)


def projection_chart(totals: pd.DataFrame, *, width: int = 520, height: int | None = None
                     ) -> alt.LayerChart | alt.FacetChart:
    """Horizontal bars of a projection's per-device estimate (``device``, ``t_roof_s``, ``estimate_s`` columns, as
    :func:`roofcore.views.projection_totals` gives), labelled with the time; Σ t_roof as a tick."""
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
    return finish(alt.layer(bars, text).properties(width=width, height=h))
