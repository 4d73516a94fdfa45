"""Time per bound as a plain Vega-Lite spec, built without Altair: the Overview's chart is the app's first, and
building it with Altair imported Altair (with jsonschema, jinja2 and narwhals) into the first page's run, about a
third of the import time of opening the app. The spec is the one :func:`.small.bound_share_chart` makes, less
the ``$schema`` URL (tests/test_charts_bars.py compares them)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from .look import AUTOSIZE, LOOK, THEME_VIEW, bound_colors


def _dataset_name(rows: list[dict[str, Any]]) -> str:
    """The name Altair gives an inline dataset (so both specs are the same)."""
    return "data-" + hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()[:32]


def bound_share_spec(share: dict[str, float], *, width: int = 320, height: int | None = None
                     ) -> dict[str, Any]:
    """Horizontal bars: fraction of time per bound (``Analysis.summary()['time_share_by_bound']``)."""
    rows: list[dict[str, Any]] = [
        {"bound": b, "share": float(v), "label": f"{float(v):.0%}" if float(v) >= 0.01 else "<1%"}
        for b, v in share.items()]
    dom, rng = bound_colors([r["bound"] for r in rows])
    x = {"axis": {"format": "%"}, "field": "share", "scale": {"domain": [0, 1]}, "title": "Share of time",
         "type": "quantitative"}
    y = {"axis": {"labelLimit": 200}, "field": "bound", "sort": "-x", "title": None, "type": "nominal"}
    bars = {"mark": {"type": "bar", "cornerRadiusEnd": 3}, "encoding": {
        "color": {"field": "bound", "legend": None, "scale": {"domain": dom, "range": rng}, "type": "nominal"},
        "tooltip": [{"field": "bound", "title": "Bound", "type": "nominal"},
                    {"field": "share", "format": ".1%", "title": "Share", "type": "quantitative"}],
        "x": x, "y": y}}
    text = {"mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 12},
            "encoding": {"text": {"field": "label", "type": "nominal"}, "x": copy.deepcopy(x), "y": copy.deepcopy(y)}}
    name = _dataset_name(rows)
    return {"config": {**copy.deepcopy(LOOK), "view": {**THEME_VIEW, **LOOK["view"]}}, "layer": [bars, text],
            "autosize": dict(AUTOSIZE), "data": {"name": name}, "height": height or max(56, 30 * len(rows)),
            "width": width, "datasets": {name: rows}}


__all__ = ["bound_share_spec"]
