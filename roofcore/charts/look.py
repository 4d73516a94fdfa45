"""How the charts look: roof, device and bound colours, mark sizes, highlight and number styles.

Constants (and :func:`bound_colors`) only, so that every chart reads the same palette."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict, get_args

#: neutral roof colours for one device; per-device colours when several are overlaid (none reuse point hues)
#: what colours a roofline's kernel marks: the resource that bounds each, or its group
ColorBy = Literal["bound", "group"]
#: several devices in one roofline: overlaid in one chart, or one panel per device
Layout = Literal["overlay", "facet"]
COLOR_BY: tuple[str, ...] = get_args(ColorBy)
LAYOUTS: tuple[str, ...] = get_args(Layout)

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
#: roofline(numbers=...): the numbers' font size and advance per digit (px, bold)
NUMBER_FONT_PX = 11
DIGIT_PX = 7.7
#: roofline_compare: colour of the old marks and of the arrows from old to new
COMPARE_OLD_COLOR = "#94a3b8"
COMPARE_ARROW_COLOR = "#475569"


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


#: the shared look of every chart (Vega-Lite config): axis, legend and title fonts and colours, the view's frame
LOOK: dict[str, dict[str, Any]] = {
    "axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal", "labelColor": "#334155",
             "titleColor": "#1e293b"},
    "legend": {"labelFontSize": 12, "titleFontSize": 12},
    "title": {"fontSize": 15, "anchor": "start", "color": "#0f172a"},
    "view": {"stroke": "#cbd5e1"},
}
#: what Altair's default theme adds to every chart's config (kept, so both kinds of chart look the same)
THEME_VIEW = {"continuousWidth": 300, "continuousHeight": 300}


class _AutoSize(TypedDict):
    """Vega-Lite's autosize, as its Literal values (so Altair's ``AutoSizeParams`` takes it as keywords)."""

    type: Literal["pad"]
    contains: Literal["padding"]


AUTOSIZE: _AutoSize = {"type": "pad", "contains": "padding"}
