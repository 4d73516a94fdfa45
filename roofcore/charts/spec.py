"""The Vega-Lite side of the charts: the figure a roofline returns (its datasets kept as DataFrames, by name),
the shared look, the expressions and encodings the layers are written with, and export to SVG and PNG.

The rooflines are written as Vega-Lite dicts directly: building them with Altair objects cost more than the
engine's whole analysis of 100,000 kernels (every layer copied and validated again when layered). Altair
supplies the schema they are validated against, and the look of the small charts (:mod:`.small`).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, overload

import altair as alt
import numpy as np
import pandas as pd

from .look import AUTOSIZE, DEVICE_COLORS, LOOK, THEME_VIEW

if TYPE_CHECKING:
    from numpy.typing import NDArray

AXIS_X = "Arithmetic intensity (FLOP/byte)"
AXIS_Y = "Performance (FLOP/s)"

_PREFIX_EXPR = "['p','n','µ','m','','k','M','G','T','P','E']"
#: the legend selection's parameter name (clicking a legend entry highlights its kernels)
LEGEND_PARAM = "legend_pick"


class VegaLiteSpec:
    """A Vega-Lite spec as plain dicts, its data by name only (what :attr:`RooflineFigure.chart` holds).

    Has the ``to_dict`` of an Altair chart, so code written for one keeps working."""

    __slots__ = ("_spec",)

    def __init__(self, spec: dict[str, Any]) -> None:
        self._spec = spec

    def to_dict(self, validate: bool = True) -> dict[str, Any]:
        """A copy of the spec; ``validate`` checks it against the Vega-Lite schema (raises if it is invalid)."""
        out = copy.deepcopy(self._spec)
        if validate:
            _validate(out)
        return out


@cache
def _vega_lite_schema() -> dict[str, Any]:
    """The Vega-Lite JSON schema of the installed Altair (the version :data:`alt.SCHEMA_URL` names)."""
    from altair.vegalite.schema import load_schema

    return load_schema()


def _validate(spec: dict[str, Any]) -> None:
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
    #: row positions (in the analysis drawn) of the kernels with a mark, for counting them as every page does
    #: (roofcore.counting); None where the figure does not say (a comparison)
    rows: NDArray[np.intp] | None = None

    @property
    def caption(self) -> str:
        return " ".join(self.notes)

    def spec(self, *, arrow: bool = False) -> dict[str, Any]:
        """The Vega-Lite spec with its datasets as DataFrames, or as Arrow IPC stream bytes with ``arrow``
        (what ``st.vega_lite_chart`` sends to the browser: converting once lets every rerun reuse it).

        A copy (the caller may change it), not validated: :meth:`to_dict`, which the exports and the tests
        use, validates the same spec."""
        data: dict[str, pd.DataFrame | bytes] = dict(self.datasets)
        if arrow:
            import pyarrow as pa

            for name, frame in data.items():
                table = pa.Table.from_pandas(frame, preserve_index=False)
                sink = pa.BufferOutputStream()
                with pa.ipc.new_stream(sink, table.schema) as writer:
                    writer.write_table(table)
                data[name] = sink.getvalue().to_pybytes()
        return {**self.chart.to_dict(validate=False), "datasets": data}

    def to_dict(self) -> dict[str, Any]:
        """The Vega-Lite spec as plain JSON values (for export and inspection); NaN and ±inf become null."""
        return {**self.chart.to_dict(), "datasets": {k: json.loads(v.to_json(orient="records", double_precision=15))
                                                     for k, v in self.datasets.items()}}


AnyChart = RooflineFigure | alt.TopLevelMixin  #: what to_svg and to_png draw (a type for modules without Altair)


@dataclass
class Build:
    """While a figure is being built: the frames its layers refer to by name, and the views that hold the
    legend selection (Vega-Lite wants a layered or concatenated chart's selection told its views)."""

    datasets: dict[str, pd.DataFrame] = field(default_factory=dict)
    views: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)  #: roofs and ceilings with no room for a label


BUILD: ContextVar[Build | None] = ContextVar("roofcore_chart_build", default=None)


def src(df: pd.DataFrame) -> dict[str, Any]:
    """A layer's data by name: the frame stays a DataFrame until the spec is exported or sent."""
    build = BUILD.get()
    if build is None:
        return {"values": json.loads(df.to_json(orient="records", double_precision=15))}
    name = f"roofcore_{len(build.datasets)}"  # not data_N: Vega-Lite names its own data sources so
    build.datasets[name] = df.reset_index(drop=True)
    return {"name": name}


def view_name() -> str:
    """A name for a view holding the legend selection (``view_N``, the form Streamlit keeps stable)."""
    build = BUILD.get()
    if build is None:
        return "view_1"
    build.views.append(f"view_{len(build.views) + 1}")
    return build.views[-1]


# ----------------------------------------------------------------------------------------------- expressions


def fmt_expr(field: str, unit: str) -> str:
    """A Vega expression formatting ``datum[field]`` with an SI prefix and ``unit`` ("3.35 TB/s"); "–" if unknown."""
    v = f"datum[{field!r}]"
    exp = f"clamp(floor(log(abs({v}))/LN10/3), -4, 6)"
    return (f"isValid({v}) && isFinite({v}) ? ({v} == 0 ? '0 {unit}' : "
            f"format({v}/pow(1000, {exp}), '.3~r') + ' ' + {_PREFIX_EXPR}[{exp}+4] + '{unit}') : '–'")


def pct_expr(field: str) -> str:
    v = f"datum[{field!r}]"
    return f"isValid({v}) && isFinite({v}) ? format({v}, '.3~%') : '–'"


def intensity_expr(field: str) -> str:
    v = f"datum[{field!r}]"
    return (f"isValid({v}) ? (isFinite({v}) ? ({v} < 10000 ? format({v}, '.3~r') : format({v}, '.3~s')) "
            f"+ ' FLOP/B' : '∞ FLOP/B') : '–'")


# ----------------------------------------------------------------------------------------------- encodings


def _decades(dom: tuple[float, float]) -> list[float]:
    lo, hi = math.ceil(math.log10(dom[0]) - 1e-9), math.floor(math.log10(dom[1]) + 1e-9)
    return [10.0 ** e for e in range(lo, hi + 1)]


def scales(x_dom: tuple[float, float], y_dom: tuple[float, float]
            ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Log axes with a tick and grid line per decade; x below 1 reads 0.01, 0.1 (not 10m, 100m)."""
    x = {"field": "x", "type": "quantitative",
         "scale": {"type": "log", "domain": [float(v) for v in x_dom], "nice": False},
         "axis": {"title": AXIS_X, "format": "~s", "values": _decades(x_dom), "gridOpacity": 0.5,
                  "labelExpr": "datum.value < 1 ? format(datum.value, '~g') : format(datum.value, '~s')"}}
    y = {"field": "y", "type": "quantitative",
         "scale": {"type": "log", "domain": [float(v) for v in y_dom], "nice": False},
         "axis": {"title": AXIS_Y, "format": "~s", "values": _decades(y_dom), "gridOpacity": 0.5}}
    return x, y


def nominal(name: str, title: str | None = None, **props: Any) -> dict[str, Any]:
    """A nominal field channel (``title`` and any other channel properties as given)."""
    return {"field": name, "type": "nominal", **({"title": title} if title is not None else {}), **props}


def tooltip_field(name: str, title: str, kind: str = "nominal", fmt: str | None = None) -> dict[str, Any]:
    return {"field": name, "type": kind, "title": title, **({"format": fmt} if fmt else {})}


def js(value: str) -> str:
    """A string literal in a Vega expression, quoted as Altair's ``alt.datum.f == value`` quotes it."""
    return repr(value)


def device_colour(device_names: Sequence[str], *, legend: bool = False) -> dict[str, Any]:
    """Roof colour per device when several are overlaid (only the roof lines carry the legend)."""
    return nominal("device", "Roofs", scale={"domain": list(device_names),
                                              "range": list(DEVICE_COLORS[:len(device_names)])},
                    legend={"orient": "right", "symbolType": "stroke", "labelLimit": 220} if legend else None)


TEXT = {"field": "text", "type": "nominal"}
ANGLE = {"field": "angle", "type": "quantitative", "scale": None}
X2, Y2 = {"field": "x2"}, {"field": "y2"}


def opacity_by_legend(selected: float, other: float) -> dict[str, Any]:
    """Opacity ``selected`` for marks the legend selection picks (all, before any click), else ``other``."""
    return {"condition": {"param": LEGEND_PARAM, "value": selected}, "value": other}


def legend_param(field: str, views: Sequence[str]) -> dict[str, Any]:
    """The legend selection: click an entry (a bound or a group) to highlight its kernels in ``views``."""
    return {"name": LEGEND_PARAM, "select": {"type": "point", "fields": [field]}, "bind": "legend",
            "views": list(views)}


# ----------------------------------------------------------------------------------------------- look


#: the shared look (:data:`.look.LOOK`: readable fonts, a light frame) as Altair config
CONFIG = alt.Config.from_dict(copy.deepcopy(LOOK))


_Chart = TypeVar("_Chart", bound=alt.TopLevelMixin)


@overload
def finish(chart: dict[str, Any], **props: Any) -> dict[str, Any]: ...


@overload
def finish(chart: _Chart, **props: Any) -> _Chart: ...


def finish(chart: dict[str, Any] | alt.TopLevelMixin, **props: Any) -> dict[str, Any] | alt.TopLevelMixin:
    """Keep the size the chart was given (autosize pad) and apply :data:`LOOK`: to a Vega-Lite dict (a new dict
    with the schema URL) or to an Altair chart (in one copy of it)."""
    if isinstance(chart, dict):
        config = {**copy.deepcopy(LOOK), "view": {**THEME_VIEW, **LOOK["view"]}}
        return {"$schema": alt.SCHEMA_URL, "config": config, "autosize": dict(AUTOSIZE), **chart, **props}
    return chart.properties(autosize=alt.AutoSizeParams(**AUTOSIZE), config=CONFIG, **props)


# ----------------------------------------------------------------------------------------------- export


def _json(chart: RooflineFigure | alt.TopLevelMixin) -> dict[str, Any]:
    return chart.to_dict()


def to_svg(chart: RooflineFigure | alt.TopLevelMixin) -> str:
    """The chart as a standalone SVG document, rendered offline by vl-convert."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(_json(chart))


def to_png(chart: RooflineFigure | alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """The chart as PNG bytes (``scale`` × its size), rendered offline by vl-convert."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(_json(chart), scale=scale)
