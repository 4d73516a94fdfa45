"""``Analysis`` -> charts: the log-log roofline and the supporting charts. The only package importing altair.

Everything a chart shows comes from the engine: roofs and ridges from :class:`~roofcore.models.Hardware`,
kernel positions from :meth:`Analysis.table` (x = arithmetic intensity in FLOP/byte, y = FLOP/s). Chart
data are built with vectorised pandas; at most :data:`MAX_MARKS` kernel marks ever reach the browser
(the rest are left out, top by time kept, and the caption says so).

The package, in the order a roofline is built: :mod:`.points` picks the kernels and places their marks (and
fixes the axes), :mod:`.roofs` the roof and ceiling lines and the ridges, :mod:`.placer` and :mod:`.labels` set
the text clear of lines and marks, :mod:`.layers` turns them into one panel's Vega-Lite layers, and
:mod:`.roofline_chart` (:func:`roofline`) and :mod:`.compare` (:func:`roofline_compare`) make the figure.
:mod:`.spec` holds the figure type, the shared look and the export; :mod:`.look` the colours;
:mod:`.small` the small Altair charts (time per bound, matmul intensity, projection).
"""

from __future__ import annotations

import importlib
from typing import Any

# The names below are imported from their modules when first used (PEP 562): the Overview's bars
# (:mod:`.bars`) need no Altair, and `from roofcore.charts import ...` of one name imports only its module.
_LAZY = {
    **dict.fromkeys(("compare_points", "roofline_compare"), "compare"),
    **dict.fromkeys(("KEY_DASH", "ceiling_groups", "ceiling_labels", "label_key", "label_key_below", "number_labels", "roof_labels"), "labels"),
    **dict.fromkeys(("LABEL_AVOID_MARKS",), "layers"),
    **dict.fromkeys(("BINDING_COLOR", "COLOR_BY", "COMPARE_ARROW_COLOR", "COMPARE_OLD_COLOR", "DEVICE_COLORS", "GROUP_SCHEME", "HIGHLIGHT_COLOR", "HIGHLIGHT_FADE", "LAYOUTS", "LINK_COLOR", "NUMBER_FONT_PX", "REGION_FILL", "ROOF_COLOR", "SIZE_RANGE", "ColorBy", "Layout", "bound_colors"), "look"),
    **dict.fromkeys(("Placer",), "placer"),
    **dict.fromkeys(("MAX_MARKS", "X_MIN", "Y_HEADROOM", "Y_SPAN", "base_domains", "kernel_points", "select_kernels"), "points"),
    **dict.fromkeys(("roofline",), "roofline_chart"),
    **dict.fromkeys(("main_ceiling", "ridge_points", "roof_segments", "shading", "shown_ceilings"), "roofs"),
    **dict.fromkeys(("MATMUL_SIZES", "bound_share_chart", "matmul_intensity_chart", "projection_chart"), "small"),
    **dict.fromkeys(("AXIS_X", "AXIS_Y", "CONFIG", "LEGEND_PARAM", "LOOK", "RooflineFigure", "VegaLiteSpec", "to_png", "to_svg"), "spec"),
    **dict.fromkeys(("bound_share_spec",), "bars"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AXIS_X",
    "AXIS_Y",
    "BINDING_COLOR",
    "COLOR_BY",
    "COMPARE_ARROW_COLOR",
    "COMPARE_OLD_COLOR",
    "CONFIG",
    "DEVICE_COLORS",
    "GROUP_SCHEME",
    "HIGHLIGHT_COLOR",
    "HIGHLIGHT_FADE",
    "LABEL_AVOID_MARKS",
    "LAYOUTS",
    "LEGEND_PARAM",
    "LINK_COLOR",
    "LOOK",
    "MATMUL_SIZES",
    "MAX_MARKS",
    "NUMBER_FONT_PX",
    "REGION_FILL",
    "ROOF_COLOR",
    "SIZE_RANGE",
    "X_MIN",
    "Y_HEADROOM",
    "Y_SPAN",
    "ColorBy",
    "Layout",
    "RooflineFigure",
    "VegaLiteSpec",
    "base_domains",
    "bound_colors",
    "bound_share_chart",
    "bound_share_spec",
    "ceiling_groups",
    "ceiling_labels",
    "compare_points",
    "kernel_points",
    "label_key",
    "label_key_below",
    "main_ceiling",
    "matmul_intensity_chart",
    "number_labels",
    "projection_chart",
    "ridge_points",
    "roof_labels",
    "roof_segments",
    "roofline",
    "roofline_compare",
    "select_kernels",
    "shading",
    "shown_ceilings",
    "to_png",
    "to_svg",
]
