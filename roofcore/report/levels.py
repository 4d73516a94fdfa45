"""The report's "By module" / "By range" / "By step" section, where the workload has a hierarchy (roofcore.hierarchy):
the module classes and the NVTX / ROCTx ranges with the most time (a table and their points on one roofline each) and
the steps in order (a table, outliers said, and their trajectory). One page at most: a few rows and small charts."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from ..analyze import Analysis
from ..units import fmt_pct, fmt_rate, fmt_time
from .sections import FONT, svg
from .text import esc

if TYPE_CHECKING:
    import pandas as pd

#: rows of each table
ROWS = 8


class _Chart(Protocol):
    """An Altair chart, as far as this section uses one (only :mod:`roofcore.charts` imports Altair)."""

    def to_dict(self, *, validate: bool = ...) -> dict[str, Any]: ...


def title(a: Analysis) -> str | None:
    """The section's heading, or None without modules, ranges or steps."""
    from ..hierarchy import levels_of

    lv = levels_of(a.workload)
    has = [w for w, key in (("module", "class"), ("range", "nvtx"), ("step", "step")) if key in lv]
    return ("By " + " and ".join(has)) if has else None


def _depth(a: Analysis, level: str) -> str:
    """``LEVEL:D``: the shallowest depth with at least three module classes or ranges (else the deepest)."""
    from ..hierarchy import OUTSIDE, group

    rows = group(a, level, hw_id=a.hardware[0].id)
    nodes = rows[rows["group"] != OUTSIDE]
    top = int(nodes["depth"].max()) if len(nodes) else 1
    return f"{level}:{next((d for d in range(1, top + 1) if (nodes['depth'] == d).sum() >= 3), top)}"


def _table(rows: pd.DataFrame, label: str, names: str = "name") -> str:
    total = rows["self_time_s"].sum()
    head = "".join(f"<th>{h}</th>" for h in (label, "launches", "time", "share", "known", "achieved", "of roof",
                                             "bound"))
    body = []
    for r in rows.itertuples(index=False):
        share = r.time_s / total if total else float("nan")
        cells = [esc(str(getattr(r, names))), f"{int(r.launches):,}", fmt_time(r.time_s), fmt_pct(share), fmt_pct(r.coverage),
                 fmt_rate(r.achieved_flops_per_s), fmt_pct(r.efficiency), esc(r.bound if isinstance(r.bound, str)
                                                                               else "–")]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f'<table class="levels"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _altair_svg(chart: _Chart, n: int) -> str:
    """An Altair chart as inline SVG, ids made unique, in the report's font (as :func:`.sections._svg`)."""
    import vl_convert as vlc

    spec = chart.to_dict(validate=False)  # validated by the chart tests (tests/test_levels.py), not per report
    spec["config"] = {**(spec.get("config") or {}), "font": FONT}
    s = vlc.vegalite_to_svg(spec)
    s = re.sub(r"^\s*<\?xml[^>]*>\s*", "", s)
    s = re.sub(r'\bid="([^"]+)"', rf'id="c{n}-\1"', s)
    s = re.sub(r"url\(#([^)]+)\)", rf"url(#c{n}-\1)", s)
    return re.sub(r'href="#([^"]+)"', rf'href="#c{n}-\1"', s)


def _most_time(a: Analysis, level: str, heading: str, label: str, names: str, charts_on: bool, n: int,
               kind: str = "quicksort") -> list[str]:
    """The groups of a tree level (module classes, ranges) with the most time at :func:`_depth`: a table (each
    named by its ``names`` column), and their points on one roofline (SVG ids numbered ``n``)."""
    from ..charts import levels as level_charts
    from ..hierarchy import OUTSIDE, group

    hw = a.hardware[0]
    by = _depth(a, level)
    rows = group(a, by, hw_id=hw.id)
    rows = rows[rows["group"] != OUTSIDE].sort_values("time_s", ascending=False, kind=kind).head(ROWS)
    out = [f"<h3>{heading} with the most time ({esc(by.replace(level + ':', 'depth '))})</h3>",
           _table(rows, label, names=names)]
    if charts_on:
        fig = level_charts.level_roofline(a, by, hw_id=hw.id, top=ROWS, width=560, height=250)
        out.append(f'<figure class="roofline">{svg(fig, n)}<figcaption>{esc(fig.caption)}</figcaption></figure>')
    return out


def section(a: Analysis, charts_on: bool) -> str:
    """The section's HTML (empty without modules, ranges or steps)."""
    from ..charts import levels as level_charts
    from ..hierarchy import OUTSIDE, flag_steps, group, levels_of

    lv = levels_of(a.workload)
    hw = a.hardware[0]
    out = []
    if "class" in lv:
        out += _most_time(a, "class", "Module classes", "module", "name", charts_on, 900)
    if "nvtx" in lv:  # ranges: by their path, the names alone repeat under each parent
        out += _most_time(a, "nvtx", "NVTX / ROCTx ranges", "range", "group", charts_on, 902, kind="stable")
    if "step" in lv:
        rows = group(a, "step", hw_id=hw.id)
        rows = flag_steps(rows, a.workload.frame)
        rows = rows[rows["group"] != OUTSIDE]
        out.append("<h3>Steps in order</h3>")
        out.append(_table(rows.head(ROWS * 2), "step"))
        notes = [f"{esc(str(r.group))}: {fmt_time(r.time_s)}, beyond 1.5× the median — {esc(str(r.differs))}."
                 for r in rows[rows["outlier"]].itertuples(index=False)]
        out.append(f'<p class="muted">{" ".join(notes) or "No step beyond 1.5× the median step."}</p>')
        if charts_on and len(rows) > 1:
            chart = level_charts.trajectory_chart(a, hw_id=hw.id, width=520, height=240)
            out.append(f'<figure class="roofline">{_altair_svg(chart, 901)}<figcaption>The steps at their off-chip '
                       "intensity and achieved FLOP/s, joined in order.</figcaption></figure>")
    return "\n".join(out)
