"""The report: one self-contained HTML page (charts inline as SVG, CSS inline, print CSS) and a PDF of it.

A body of a few pages that an engineer can attach to a design review: title, date, inputs and devices in
one block; an executive summary in sentences; one roofline per device whose top kernels are numbered, the
numbers keyed to the top-kernels table (short names: :mod:`roofcore.names`); the recommendations; the
assumptions and sources in small print. Then the appendix: every kernel with its full name, one row each,
on landscape pages (``appendix="all"``, the default up to :data:`APPENDIX_ALL_MAX` kernels), only the top
kernels (``"top"``, the default beyond, with a sentence pointing to the CSV), or none.

``build_html(analysis, ...)`` returns the page; ``build_pdf(analysis, ...)`` renders the same page with
WeasyPrint (the ``[pdf]`` extra), except the appendix's rows, which :mod:`.appendix` draws directly on pages
the HTML reserves (WeasyPrint would lay a 10,000-row table out cell by cell for two minutes). Everything that
came from the user (kernel names, groups, file names, titles, scenario names) is escaped with
:func:`html.escape`; the page references no URL, so it views and prints offline. No path of the machine
reaches the page: file names are shown by their base name.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd

from ..analyze import Analysis, coverage_text, speedup_note
from ..errors import RoofcoreError
from ..models import Hardware
from ..names import short_names
from ..units import fmt_bandwidth, fmt_bytes, fmt_factor, fmt_flops, fmt_intensity, fmt_rate, fmt_time
from . import appendix as _draw

#: what to install when WeasyPrint or its system libraries are missing
PDF_INSTALL_HINT = ('install WeasyPrint with `pip install "roofcore[pdf]"` and its libraries with '
                    "`apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core`")

#: section headings, in order (tests look for each in the PDF's text); the appendix's depends on its mode
SECTIONS = ("Inputs", "Executive summary", "Roofline", "Top kernels", "Recommendations", "Planning results",
            "Assumptions and sources", "Appendix")
#: appendix modes: every kernel, the top-kernels table's only, or no appendix
APPENDIX_MODES = ("all", "top", "none")
#: the default appendix lists every kernel up to this many, else the top kernels (the CSV has them all)
APPENDIX_ALL_MAX = 2000
#: paper sizes (the body is portrait, the appendix landscape)
PAPERS = tuple(_draw.PAPERS)
#: kernels in the top-kernels table by default
TOP = 10
#: recommendations listed per device (the rest are counted)
RECS_SHOWN = 5
#: kernels drawn in each report roofline (the top ones by time; the numbered ones always): a static chart
#: shows the cloud's shape with a few hundred marks, and every mark costs the PDF renderer time
CHART_KERNELS = 600
#: workload warnings listed in the small print (the rest are counted)
WARNINGS_SHOWN = 6

_e = html.escape

#: the one font of the report (Debian's fonts-dejavu-core), named in the CSS and the charts
_FONT = "DejaVu Sans"

#: @page overrides for paper sizes other than style.css's A4
_PAPER_CSS = {"a4": "", "letter": "@page { size: letter; } @page appendix { size: letter landscape; }"}


def _css() -> str:
    return resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------ text


#: a path of the machine: absolute (/, ~/, C:\, \\server), relative through . or .., or folders ending
#: in a file with an extension (data/run.csv); "FLOP/s" and "TB/s" are not paths
_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:[\\/]|\\\\|~[\\/]|\.{1,2}[\\/]|[\\/](?=[\w.-]))(?:[^\s\\/,;:()\"'<>|]*[\\/])*"
                   r"([^\s\\/,;:()\"'<>|]+)"
                   r"|(?<![\w./\\])(?:[\w.-]+[\\/])+([\w.-]+\.[A-Za-z]\w{0,5})(?![\w/\\])")


def no_paths(text: str) -> str:
    """``text`` with each file path reduced to its base name (a report is shared; the machine's folders are not)."""
    return _PATH.sub(lambda m: m.group(1) or m.group(2) or "", str(text))


def default_title(a: Analysis) -> str:
    """``Roofline report: <workload name>``, the name without any folder."""
    return f"Roofline report: {no_paths(a.workload.name)}"


def _pct(x: float | None) -> str:
    """A fraction as a percentage with two significant figures ("41%", "5.3%", "0.12%"); above 100% whole."""
    if x is None or not np.isfinite(x):
        return "–"
    p = x * 100
    if p >= 100:
        return f"{p:,.0f}%"
    if p >= 99.5:
        return ">99%"  # never round a part up to the whole
    if p <= 0:
        return "0%"
    if p < 0.001:
        return "<0.001%"
    return f"{p:.2g}%" if p < 10 else f"{p:.0f}%"


_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)%")
_SCI = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([+-]?\d+)(?![\w.])")


def _quotable(text: str) -> str:
    """Text from elsewhere (advice, warnings) with its numbers as the report prints them: percentages with
    two significant figures, no scientific notation."""
    text = _PERCENT.sub(lambda m: _pct(float(m.group(1)) / 100), text)
    return _SCI.sub(lambda m: f"{float(m.group(0)):,.{max(0, 2 - int(m.group(2)))}f}"
                    if -6 <= int(m.group(2)) <= 15 else m.group(0), text)


def _svg(chart, n: int) -> str:
    """A chart as inline SVG: no XML prolog, ids made unique per chart, fonts named explicitly."""
    import vl_convert as vlc

    # the figure's spec with its data as JSON values, as RooflineFigure.to_dict gives it but not validated
    # again against the Vega-Lite schema (a second per chart; the chart tests validate these specs)
    spec = {**chart.chart.to_dict(validate=False),
            "datasets": {k: json.loads(v.to_json(orient="records", double_precision=15))
                         for k, v in chart.datasets.items()}}
    config = dict(spec.get("config") or {})
    config["font"] = _FONT  # vl-convert measures labels with the font the PDF draws them in
    s = vlc.vegalite_to_svg({**spec, "config": config})
    s = re.sub(r"^\s*<\?xml[^>]*>\s*", "", s)
    s = re.sub(r'\bid="([^"]+)"', rf'id="c{n}-\1"', s)
    s = re.sub(r"url\(#([^)]+)\)", rf"url(#c{n}-\1)", s)
    s = re.sub(r'href="#([^"]+)"', rf'href="#c{n}-\1"', s)
    return s


def _vfmt(values: Iterable, fn: Callable[[float], str]) -> pd.Series:
    """``fn`` over a column, called once per distinct value (NaN → "–")."""
    s = pd.Series(values, dtype="float64").reset_index(drop=True)
    uniq = pd.unique(s.dropna())
    table = {v: fn(float(v)) for v in uniq}
    out = s.map(table).astype(object)
    return out.where(out.notna(), "–")


def _escape_col(values: Iterable[str]) -> pd.Series:
    s = pd.Series(list(values), dtype=object)
    table = {v: _e(v) for v in pd.unique(s)}
    return s.map(table).astype(object)


# ------------------------------------------------------------------------------------------------ the model


@dataclass
class _Report:
    """What every section reads: the analysis, its advice, the ranking and numbering of kernels, short names."""

    a: Analysis
    advice: dict
    order: np.ndarray  #: workload rows by time (measured, else the mean roofline time over devices), largest first
    top: np.ndarray  #: the rows of the top-kernels table, in order (numbered 1, 2, ...)
    number: np.ndarray  #: per workload row, its number in the top-kernels table (0: not in it)
    short: dict[str, str]  #: full kernel name → unique short name
    tables: dict[str, pd.DataFrame]  #: per device id, Analysis.table (one row per workload row)

    @property
    def names(self) -> np.ndarray:
        return self.a.workload.frame["name"].astype(str).to_numpy()

    def label(self, name: str) -> str:
        """A kernel as the body names it: its numbers in the top table ("#2", "#1–#6", "#3, #7") and short name."""
        short = self.short.get(name, name)
        nums = [int(self.number[i]) for i in self.top[self.names[self.top] == name]] if len(self.top) else []
        if not nums:
            return short
        if len(nums) > 2 and nums == list(range(nums[0], nums[-1] + 1)):
            return f"#{nums[0]}–#{nums[-1]} {short}"
        return ", ".join(f"#{n}" for n in nums[:3]) + (", …" if len(nums) > 3 else "") + f" {short}"


def _model(a: Analysis, advice: dict, top: int) -> _Report:
    f = a.workload.frame
    t = f["time_s"].to_numpy(dtype=np.float64)
    tables = {h.id: a.table(h.id, messages=False) for h in a.hardware}
    roofs = np.vstack([tb["t_roof_s"].to_numpy(dtype=np.float64) for tb in tables.values()] or [np.full(len(t), np.nan)])
    known = (~np.isnan(roofs)).sum(axis=0)
    roof = np.where(known > 0, np.nansum(roofs, axis=0) / np.maximum(known, 1), np.nan)
    key = np.nan_to_num(np.where(np.isnan(t), roof, t), nan=0.0)  # as the charts rank them
    order = np.argsort(-key, kind="stable")
    shown = order[:top] if top > 0 else order
    number = np.zeros(len(f), dtype=np.int64)
    number[shown] = np.arange(1, len(shown) + 1)
    names = f["name"].astype(str).to_numpy()
    return _Report(a, advice, order, shown, number, short_names(names[order]), tables)


def _offchip_column(a: Analysis) -> str | None:
    cols = a.workload.byte_columns
    return "bytes_hbm" if "bytes_hbm" in cols else (cols[0] if cols else None)


def _bound_short(h: Hardware, label: object) -> str:
    """``compute:bf16-matrix`` → ``bf16-matrix``; ``memory:hbm`` → the level's label (``HBM3``); links too."""
    if not isinstance(label, str) or ":" not in label:
        return "–"
    kind, name = label.split(":", 1)
    if kind == "compute":
        return name
    lv = h.level_map.get(name) or h.link_map.get(name)
    return (lv.display if lv is not None else name) + (" link" if kind == "link" else "")


def _bound_words(h: Hardware, label: str) -> str:
    """A bound in words for a sentence: "the bf16-matrix peak", "HBM3 bandwidth", "the PCIe 5.0 x16 link"."""
    kind, _, name = label.partition(":")
    if kind == "compute":
        return f"the {name} peak"
    if kind == "memory":
        return f"{_bound_short(h, label)} bandwidth"
    if kind == "link":
        return f"the {_bound_short(h, label)}"
    return "unknown"


# ------------------------------------------------------------------------------------------------ columns


def _kernel_columns(r: _Report, rows: np.ndarray, *, short: bool) -> tuple[list[tuple[str, bool | str]],
                                                                            list[pd.Series], list[str]]:
    """The per-kernel columns for workload ``rows`` as plain text: #, kernel (short or full name), count,
    time, FLOPs, off-chip bytes, intensity, then per device t_roof, of roof and bound. Also returns, per
    column, the device it belongs to ("" for the kernel's own columns)."""
    a = r.a
    f = a.workload.frame.iloc[rows]
    off = _offchip_column(a)
    multi = len(a.hardware) > 1
    names = f["name"].astype(str)
    headers: list[tuple[str, bool | str]] = [("#", True), ("kernel", False), ("count", True), ("time", True),
                                             ("FLOPs", True)]
    cols = [pd.Series(np.where(r.number[rows] > 0, r.number[rows].astype(str), ""), dtype=object),
            names.map(r.short).astype(object) if short else names.astype(object),
            f["count"].map("{:,}".format).astype(object), _vfmt(f["time_s"], fmt_time), _vfmt(f["flops"], fmt_flops)]
    if not (short and multi):  # the body's table has no room for bytes beside two devices; intensity says it
        headers.append(("off-chip bytes", True))
        cols.append(_vfmt(f[off], fmt_bytes) if off else pd.Series(["–"] * len(rows), dtype=object))
    headers.append(("intensity", True))
    if off:
        with np.errstate(divide="ignore", invalid="ignore"):
            b = f[off].to_numpy(dtype=np.float64)
            fl = f["flops"].to_numpy(dtype=np.float64)
            inten = np.where(b > 0, fl / b, np.nan)
        cols.append(_vfmt(inten, fmt_intensity))
    else:
        cols.append(pd.Series(["–"] * len(rows), dtype=object))
    owner = [""] * len(headers)
    for h in a.hardware:
        tab = r.tables[h.id].iloc[rows]
        bounds = tab["bound"].to_numpy(dtype=object)
        uniq = {b: _bound_short(h, b) for b in pd.unique(pd.Series(bounds, dtype=object).dropna())}
        bound_col = pd.Series([uniq.get(b, "–") if isinstance(b, str) else "–" for b in bounds], dtype=object)
        suffix = f" {h.id}" if multi and not short else ""
        headers += [(f"t_roof{suffix}", True), (f"of roof{suffix}", True), (f"bound{suffix}", "t")]
        cols += [_vfmt(tab["t_roof_s"], fmt_time), _vfmt(tab["efficiency"], _pct), bound_col]
        owner += [h.id] * 3
    return headers, [c.reset_index(drop=True) for c in cols], owner


# ------------------------------------------------------------------------------------------------ sections


def _inputs(r: _Report, scenario) -> str:
    w = r.a.workload
    files = ", ".join(no_paths(s) for s in w.sources) or "– (built in memory)"
    rows = [["Workload", _e(no_paths(w.name))],
            ["Files", _e(files) + (f" ({_e(', '.join(w.formats))})" if w.formats else "")],
            ["Kernels", f"{len(w):,}" + (f"; {len(w.skipped):,} rows skipped" if w.skipped else "")],
            ["Devices", "; ".join(f"{_e(h.name)} (<code>{_e(h.id)}</code>)" for h in r.a.hardware)],
            ["Roofs", "achievable (measured) ceilings where the catalog has them, else theoretical peaks"
             if r.a.achievable else "theoretical peaks (catalog figures)"]]
    if w.device:
        rows.append(["Profiled on", _e(w.device)])
    if scenario is not None:
        rows.append(["Scenario", _e(scenario.name) + (f" ({_e(no_paths(scenario.source))})" if scenario.source else "")])
    return ('<table class="inputs"><tbody>' + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
            + "</tbody></table>")


def _renamed(r: _Report, text: str, kernels: Sequence[str]) -> str:
    """Advice text with each kernel name (whole, or cut as the advice cut it) replaced by its body label."""
    for k in kernels:
        flat = " ".join(str(k).split())
        for cand in sorted({flat, *(flat[:w - 1] + "…" for w in (48, 28) if len(flat) > w)}, key=len, reverse=True):
            if cand in text:
                text = text.replace(cand, r.label(k), 1)
                break
    return text


def _summary(r: _Report) -> str:
    a = r.a
    out = []
    summaries = {h.id: a.summary(h.id) for h in a.hardware}
    # the coverage sentence is the workload's (which FLOPs and bytes are missing): said once when every
    # device has the same, after their paragraphs
    notes = {h: coverage_text(s) for h, s in summaries.items()}
    shared = next(iter(notes.values())) if len(set(notes.values())) == 1 and len(notes) > 1 else None
    for h in a.hardware:
        s = summaries[h.id]
        share = s["time_share_by_bound"]
        basis = "measured" if s["share_basis"] == "measured" else "roofline"
        known = [(k, v) for k, v in share.items() if k != "unknown"]
        known = known[:1] + [(k, v) for k, v in known[1:2] if v >= 0.01]  # a second bound worth a mention
        sent = []
        if known:
            kind = known[0][0].split(":")[0]
            what = "; ".join(f"{_bound_words(h, k)} bounds {_pct(v)}" for k, v in known[:2])
            sent.append(f"Mostly {kind}-bound: {what} of the {basis} time"
                        + (f"; {_pct(share['unknown'])} has no known bound (FLOPs or bytes missing)."
                           if share.get("unknown") and not notes[h.id] else "."))
        elif share:
            sent.append("No kernel has a known bound: FLOPs or bytes are missing for all of them.")
        cov = s["coverage"]
        partial = cov["kernels_known"] < cov["kernels"]
        factor = f": {fmt_factor(s['speedup_if_at_roof'])} faster if each reached its roof" \
            if s["speedup_if_at_roof"] else ""
        if s["time_s"] is not None and s["t_roof_s"] is not None:
            if partial and cov.get("time_s_known") is not None:
                sent.append(f"It takes {fmt_time(s['time_s'])} measured; the {fmt_time(cov['time_s_known'])} of it in "
                            f"kernels with a known roofline would take {fmt_time(s['t_roof_s'])} at the roof "
                            f"(Σ t_roof){factor}.")
            else:
                sent.append(f"It takes {fmt_time(s['time_s'])} measured against {fmt_time(s['t_roof_s'])} at the roof "
                            f"(Σ t_roof){factor}.")
            measured = cov.get("time_s_known") if partial and cov.get("time_s_known") is not None else s["time_s"]
            if measured and s["t_roof_s"] > measured:
                above = int((r.tables[h.id]["efficiency"] > 1 + 1e-6).sum())
                sent.append(f"That is more than the measured time: {above:,} kernels ran faster than their roof "
                            "allows, so their FLOPs, bytes or device are wrong (flagged above-roof in the CSV).")
        elif s["t_roof_s"] is not None:
            sent.append(f"No measured times: the roofline bounds it at {fmt_time(s['t_roof_s'])} (Σ t_roof; "
                        f"{fmt_time(s['t_serial_s'])} with no overlap).")
        elif s["time_s"] is not None:
            sent.append(f"It takes {fmt_time(s['time_s'])} measured; no kernel has a known roofline.")
        sent += [n for n in (notes[h.id] if shared is None else "", speedup_note(s)) if n]
        body = f"<p><strong>{_e(h.name)}.</strong> " + _e(_quotable(" ".join(sent))) + "</p>"
        adv = r.advice.get(h.id)
        acts = [x for x in (adv.items if adv else ()) if x.gain_s > 0][:3]
        if acts:
            body += '<ol class="actions">' + "".join(
                f"<li>{_e(_quotable(_renamed(r, x.title, x.kernels)))}: saves {fmt_time(x.gain_s)}"
                f" ({_pct(x.gain_s / adv.workload_time_s) if adv.workload_time_s > 0 else '–'} of the time)</li>"
                for x in acts) + "</ol>"
        elif adv is not None:
            body += f'<p class="muted">{_e(_quotable(adv.summary()))}</p>'
        out.append(body)
    if shared:
        out.append(f"<p>{_e(_quotable(shared))} (On every device.)</p>")
    return '<div class="summary">' + "\n".join(out) + "</div>"


def _rooflines(r: _Report, charts_on: bool) -> str:
    from .. import charts

    a = r.a
    if not charts_on:
        return '<p class="muted">Charts left out.</p>'
    out = []
    width = 640 if len(a.hardware) <= 2 else 420
    for i, h in enumerate(a.hardware):
        fig = charts.roofline(a, hw_ids=[h.id], top_n=min(len(a.workload), max(CHART_KERNELS, len(r.top))), width=width,
                              height=270 if len(a.hardware) <= 2 else 250, numbers=r.number)
        numbered = any(lay.get("description") == "kernel_numbers" for lay in fig.chart.to_dict(validate=False)["layer"])
        cap = (f"{h.name}: each kernel at its measured FLOP/s (on its roof if untimed), sized by time; "
               + ("the numbers are the rows of the top-kernels table. " if numbered else
                  "none of the top-kernels table can be drawn. ") + fig.caption)
        out.append(f'<figure class="roofline{" half" if len(a.hardware) > 2 else ""}">{_svg(fig, i)}'
                   f"<figcaption>{_e(cap)}</figcaption></figure>")
    return "\n".join(out)


def _top_kernels(r: _Report) -> str:
    a = r.a
    if not len(r.top):
        return "<p>No kernels.</p>"
    headers, cols, owner = _kernel_columns(r, r.top, short=True)
    full = a.workload.frame["name"].astype(str).to_numpy()[r.top]
    kinds = [("n" if num is True else "k" if num is False else num) for _, num in headers]
    cells = [_escape_col(c) for c in cols]
    cells[1] = pd.Series([f'<span title="{_e(n, quote=True)}">{s}</span>' for n, s in zip(full, cells[1], strict=True)],
                         dtype=object)
    head = ""
    if len(a.hardware) > 1:
        spans, i = [], 0
        while i < len(owner):
            j = i
            while j < len(owner) and owner[j] == owner[i]:
                j += 1
            name = next((h.name for h in a.hardware if h.id == owner[i]), "")
            spans.append(f'<th colspan="{j - i}" class="dev">{_e(name)}</th>' if owner[i] else
                         f'<th colspan="{j - i}" class="blank"></th>')
            i = j
        head = "<tr>" + "".join(spans) + "</tr>"
    head += "<tr>" + "".join(f'<th class="{k}">{_e(h)}</th>' for (h, _), k in zip(headers, kinds, strict=True)) + "</tr>"
    row = pd.Series(["<tr>"] * len(r.top), dtype=object)
    for k, c in zip(kinds, cells, strict=True):
        row = row + f'<td class="{k}">' + c.to_numpy(dtype=object) + "</td>"
    out = [f'<table class="top"><thead>{head}</thead><tbody>\n' + "\n".join(row + "</tr>") + "\n</tbody></table>"]
    n = len(a.workload)
    note = (f"The {len(r.top):,} of {n:,} kernels with the most time (measured, else roofline), numbered as in the "
            "charts. " if len(r.top) < n else "Every kernel, by time (measured, else roofline), numbered as in the charts. ")
    note += ("Short names: template arguments and parameter lists elided (one telling token kept), [k] where two "
             "would read the same; the full names are in the appendix (and, in the HTML, on hover). "
             "of roof: t_roof / measured time; bound: the roof that sets t_roof.")
    out.append(f'<p class="muted">{_e(note)}</p>')
    return "\n".join(out)


def _recommendations(r: _Report) -> str:
    out = []
    for h in r.a.hardware:
        adv = r.advice.get(h.id)
        if adv is None:
            continue
        out.append(f'<div class="device"><h3>{_e(h.name)}</h3><p class="muted">{_e(_quotable(adv.summary()))}</p>')
        items = []
        shown_n = RECS_SHOWN if len(r.a.hardware) == 1 else RECS_SHOWN - 2  # several devices: the body stays short
        for x in adv.items[:shown_n]:
            gain = f"saves {fmt_time(x.gain_s)}" if x.gain_s > 0 else "no time claimed"
            names = ""
            if x.name_count > 1:
                shown = [r.label(k) for k in x.kernels[:4]]
                more = x.name_count - len(shown)
                names = "Kernels: " + "; ".join(shown) + (f"; and {more:,} more (appendix)" if more > 0 else "") + "."
            items.append(f"<li><strong>{_e(_quotable(_renamed(r, x.title, x.kernels)))}</strong> — {gain} "
                         f'<span class="muted">({_e(x.lever.value)}, {_e(x.confidence.value)} confidence)</span><br>'
                         f'<span class="reason">{_e(_quotable(_renamed(r, x.reason, x.kernels)))}'
                         + (f" {_e(names)}" if names else "") + "</span></li>")
        if items:
            out.append('<ol class="recs">' + "".join(items) + "</ol>")
        if len(adv.items) > shown_n:
            out.append(f'<p class="muted">… and {len(adv.items) - shown_n:,} more with smaller gains '
                       "(<code>roofline advise --top 0</code> lists them all).</p>")
        out.append("</div>")
    return "\n".join(out)


def _planning(scenario) -> str:
    out = [f"<p>Scenario <strong>{_e(scenario.name)}</strong>"
           + (f": {_e(scenario.description)}" if scenario.description else "") + "</p>"]
    rows = []
    for v in scenario.variants:
        for t in v.projection.totals:
            vs = v.speedup_vs_base.get(t.hardware)
            rows.append([_e(v.name), _e(v.kind), _e(t.hardware),
                         fmt_time(t.t_roof_s) if t.t_roof_s is not None else "–",
                         fmt_time(t.estimate_s) if t.estimate_s is not None else "–",
                         fmt_factor(vs) if vs else "–",
                         _money(t.cost_per_run),
                         _e(next(iter(t.bound_share), "–"))])
    heads = [("variant", "k"), ("step", "k"), ("device", "k"), ("t_roof", "n"), ("estimate", "n"),
             ("vs base", "n"), ("cost/run", "n"), ("mostly bound by", "k")]
    out.append("<table><thead><tr>" + "".join(f'<th class="{k}">{h}</th>' for h, k in heads) + "</tr></thead><tbody>"
               + "".join("<tr>" + "".join(f'<td class="{k}">{c}</td>' for c, (_, k) in zip(row, heads, strict=True))
                         + "</tr>" for row in rows) + "</tbody></table>")
    notes = list(dict.fromkeys(n for v in scenario.variants for n in (*v.workload.warnings, *v.projection.notes)))
    out += [f'<p class="muted">Note: {_e(no_paths(n))}</p>' for n in notes[:8]]
    out.append('<p class="muted">vs base: the base variant\'s Σ t_roof (same device, else its first device) / '
               "this variant's Σ t_roof. Estimate: projected time where measured, else t_roof.</p>")
    return "\n".join(out)


def _money(v: float | None) -> str:
    """Dollars as a reader quotes them: "$12.40", "$0.034", "$0.000034" (never "$3.4e-05")."""
    if v is None or not np.isfinite(v):
        return "–"
    if abs(v) >= 0.01 or v == 0:
        return f"${v:,.2f}"
    return f"${v:.{1 - int(np.floor(np.log10(abs(v))))}f}"


def _source_id(h: Hardware, source: str) -> str:
    sid = source.split(":", 1)[0].strip()
    return sid if sid in h.sources else source


def _assumptions(r: _Report, scenario) -> str:
    a = r.a
    hws = {h.id: h for h in a.hardware}
    if scenario is not None:
        for h in scenario.hardware:
            hws.setdefault(h.id, h)
    out = ["<p>A kernel's roofline time is t_roof = max(FLOPs / peak, bytes at each level / its bandwidth): compute "
           "and every memory level overlap perfectly; t_serial, their sum, assumes no overlap, and a real kernel lies "
           "between the two. "
           + ("Roofs are achievable (measured, sustained) figures where the catalog has them, else theoretical peaks. "
              if a.achievable else "Roofs are theoretical peaks (dense; sparse figures are never a roof); a kernel "
              "reaches only a fraction of them. ")
           + "A kernel without FLOPs or off-chip bytes has no roofline: it is counted as unknown, never as zero. "
           "Times are measured unless marked as roofline; percentages have two significant figures. Every figure of "
           "a device: <code>roofline hardware show ID</code>; every kernel: the CSV "
           "(<code>roofline report INPUT --csv</code>).</p>"]
    for h in hws.values():
        t = r.tables.get(h.id)
        used = set(t["ceiling"].dropna().unique()) - {""} if t is not None else set()
        ceilings = [c for c in h.ceilings if c.key == h.default_ceiling or c.key in used]
        roofs = [f"{c.key} {fmt_rate(c.peak)}" + (f" (achievable {fmt_rate(c.achievable)})" if c.achievable else "")
                 + f" [{_source_id(h, c.figure.source)}]" for c in ceilings]
        roofs += [f"{lv.display} {fmt_bandwidth(lv.bandwidth)}"
                  + (f" (achievable {fmt_bandwidth(lv.achievable)})" if lv.achievable else "")
                  + f" [{_source_id(h, lv.figure.source)}]" for lv in h.levels]
        roofs += [f"{lk.display} {fmt_bandwidth(lk.bandwidth)} per direction [{_source_id(h, lk.figure.source)}]"
                  for lk in h.links]
        ridge = h.ridge(h.default_ceiling)[h.offchip.name]
        meta = "; ".join(str(m) for m in (h.config and f"configuration: {h.config}",
                                          h.unverified and "UNVERIFIED figures") if m)
        figs = {_source_id(h, f.source) for f in h.figures}
        srcs = "; ".join(f"[{sid}] {_clip(text)}" for sid, text in h.sources.items() if sid in figs)
        out.append(f"<p><strong>{_e(h.name)}</strong> (<code>{_e(h.id)}</code>): {_e('; '.join(roofs))}; ridge "
                   f"{_e(fmt_intensity(ridge))} ({_e(h.default_ceiling)} over {_e(h.offchip.display)})."
                   + (f" {_e(meta)}." if meta else "") + f" Sources: {_e(no_paths(srcs))}.</p>")
    w = a.workload
    if w.warnings:
        shown = [f"<li>{_e(_quotable(no_paths(x)))}</li>" for x in w.warnings[:WARNINGS_SHOWN]]
        more = len(w.warnings) - WARNINGS_SHOWN
        out.append("<p>Warnings from reading the inputs:</p><ul>" + "".join(shown)
                   + (f"<li>… and {more:,} more (<code>roofline analyze --json</code>).</li>" if more > 0 else "")
                   + "</ul>")
    return '<div class="small">' + "\n".join(out) + "</div>"


def _clip(text: str, limit: int = 90) -> str:
    """A catalog source cut to its first ``limit`` characters (at a word), for the small print."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > limit // 2 else limit].rstrip(",;:") + " …"


def _appendix_rows(r: _Report, mode: str) -> np.ndarray:
    return r.order if mode == "all" else r.top


def _appendix_note(r: _Report, mode: str, rows: int) -> str:
    n = len(r.a.workload)
    if mode == "all":
        text = f"Every kernel ({n:,}), by time (measured, else roofline); # is its number in the top-kernels table."
    else:
        why = f"The workload has {n:,} kernels: " if n > APPENDIX_ALL_MAX else ""
        text = (f"{why}the {rows:,} kernels of the top-kernels table with their full names; every kernel is in the "
                "CSV (roofline report INPUT --csv, or the Report page's CSV download).")
    return f'<p class="muted">{_e(text)}</p>'


def _appendix_html(r: _Report, mode: str) -> str:
    rows = _appendix_rows(r, mode)
    headers, cols, _ = _kernel_columns(r, rows, short=False)
    kinds = [("n" if num is True else "k" if num is False else num) for _, num in headers]
    kinds[1] = "name"
    head = "".join(f'<th class="{k}">{_e(h)}</th>' for (h, _), k in zip(headers, kinds, strict=True))
    if not len(rows):
        body = f'<tr><td colspan="{len(headers)}">none</td></tr>'
    else:
        row = pd.Series(["<tr>"] * len(rows), dtype=object)
        for k, c in zip(kinds, cols, strict=True):
            row = row + f'<td class="{k}">' + _escape_col(c).to_numpy(dtype=object) + "</td>"
        body = "\n".join(row + "</tr>")
    return (_appendix_note(r, mode, len(rows))
            + f'<table class="appendix"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>')


#: ids of the blocks that reserve the PDF's appendix pages (the first, then one per further page)
_ROWS_ID, _PAGE_ID = "rc-appendix-rows", "rc-appendix-page-"


def _appendix_layout(r: _Report, mode: str, paper: str) -> _draw.Layout:
    headers, cols, _ = _kernel_columns(r, _appendix_rows(r, mode), short=False)
    return _draw.layout(headers, [c.tolist() for c in cols], _draw.PAPERS[paper], flex=1, mono=(1,), hang=True)


def _appendix_pages(r: _Report, mode: str, rows: int, pages: int) -> str:
    """The PDF's appendix section without its rows: the note, then an empty block on each page to draw on."""
    return (_appendix_note(r, mode, rows) + f'<div id="{_ROWS_ID}"></div>'
            + "".join(f'<div class="appendix-page" id="{_PAGE_ID}{i}"></div>' for i in range(1, pages)))


# ------------------------------------------------------------------------------------------------ public


def appendix_mode(analysis: Analysis, appendix: str | None = None) -> str:
    """The appendix mode a report uses: ``appendix`` as given, else "all" up to :data:`APPENDIX_ALL_MAX`
    kernels and "top" beyond."""
    if appendix is None:
        return "all" if len(analysis.workload) <= APPENDIX_ALL_MAX else "top"
    if appendix not in APPENDIX_MODES:
        raise RoofcoreError(f"appendix must be one of {', '.join(APPENDIX_MODES)}, not {appendix!r}.")
    return appendix


def _check(paper: str, top: int) -> None:
    if paper not in _draw.PAPERS:
        raise RoofcoreError(f"paper must be one of {', '.join(_draw.PAPERS)}, not {paper!r}.")
    if top < 0:
        raise RoofcoreError(f"top must be 0 (every kernel) or more, not {top}.")


def build_html(analysis: Analysis, *, title: str | None = None, scenario=None, date: str | _dt.date | None = None,
               top: int = TOP, charts: bool = True, advice: dict | None = None, appendix: str | None = None,
               paper: str = "a4") -> str:
    """The report as one self-contained HTML page (no external URL; charts are inline SVG).

    ``scenario``: a :class:`roofcore.plan.ScenarioResult` whose variants are tabled. ``date``: shown under
    the title (default: today). ``top``: kernels in the top-kernels table (numbered in the charts; 0: all).
    ``advice``: the output of :func:`roofcore.advise.advise_all` if already computed. ``charts=False`` leaves
    the charts out. ``appendix``: "all", "top" or "none" (default: see :func:`appendix_mode`). ``paper``:
    "a4" or "letter", for printing.
    """
    _check(paper, top)
    mode = appendix_mode(analysis, appendix)
    r = _report(analysis, advice, top)
    return _page(r, title=title, scenario=scenario, date=date, charts=charts, paper=paper, mode=mode,
                 appendix_html=_appendix_html(r, mode) if mode != "none" else "")


def _report(a: Analysis, advice: dict | None, top: int) -> _Report:
    from ..advise import advise_all

    return _model(a, advise_all(a) if advice is None else advice, top)


def _page(r: _Report, *, title: str | None, scenario, date: str | _dt.date | None, charts: bool, paper: str,
          mode: str, appendix_html: str, appendix_cls: str = "") -> str:
    """The HTML page with ``appendix_html`` as the appendix's content (``appendix_cls``: its section's class)."""
    title = title or default_title(r.a)
    if date is None:
        date = _dt.date.today().isoformat()
    elif isinstance(date, _dt.date):
        date = date.isoformat()
    sections = [
        ("Executive summary", _summary(r), "summary-section"),
        ("Roofline", _rooflines(r, charts), "rooflines"),
        ("Top kernels", _top_kernels(r), "top-kernels"),
        ("Recommendations", _recommendations(r), "recommendations"),
    ]
    if scenario is not None:
        sections.append(("Planning results", _planning(scenario), "planning"))
    sections.append(("Assumptions and sources", _assumptions(r, scenario), "assumptions"))
    if mode != "none":
        sections.append(("Appendix: every kernel" if mode == "all" else "Appendix: top kernels", appendix_html,
                         f"appendix {appendix_cls}".strip()))
    parts = [f'<header class="head"><h1>{_e(title)}</h1>\n<p class="date">{_e(str(date))}</p>\n'
             f'<h2 class="inputs-head">Inputs</h2>{_inputs(r, scenario)}</header>']
    for i, (name, content, cls) in enumerate(sections):
        parts.append(f'<section id="s{i}" class="{cls}"><h2>{_e(name)}</h2>\n{content}\n</section>')
    body = "\n".join(parts)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{_e(title)}</title>"
            f"<style>\n{_css()}\n{_PAPER_CSS[paper]}\n</style></head><body>\n{body}\n</body></html>\n")


def _no_fetch(url: str, *args, **kwargs):
    raise ValueError(f"the report fetches nothing ({url[:60]})")


def pdf_available() -> str | None:
    """``None`` when WeasyPrint and its libraries load, else what to install."""
    try:
        import weasyprint  # noqa: F401
    except (ImportError, OSError) as e:
        return f"The PDF needs WeasyPrint: {PDF_INSTALL_HINT} ({type(e).__name__}: {' '.join(str(e).split())[:200]})."
    return None


def build_pdf(analysis: Analysis, *, title: str | None = None, scenario=None, date: str | _dt.date | None = None,
              top: int = TOP, charts: bool = True, advice: dict | None = None, appendix: str | None = None,
              paper: str = "a4") -> bytes:
    """The report as PDF bytes: the page of :func:`build_html` (same arguments) rendered by WeasyPrint, with
    the appendix's rows drawn directly on pages the page reserves for them (no network: nothing is fetched).
    """
    _check(paper, top)
    missing = pdf_available()
    if missing:
        raise RoofcoreError(missing)
    from weasyprint import HTML

    mode = appendix_mode(analysis, appendix)
    r = _report(analysis, advice, top)
    lay = _appendix_layout(r, mode, paper) if mode != "none" else None
    rows = len(_appendix_rows(r, mode)) if lay is not None else 0
    page = _page(r, title=title, scenario=scenario, date=date, charts=charts, paper=paper, mode=mode,
                 appendix_html=_appendix_pages(r, mode, rows, len(lay.pages)) if lay is not None else "",
                 appendix_cls="appendix-pdf")
    doc = HTML(string=page, url_fetcher=_no_fetch).render()
    if lay is None:
        return doc.write_pdf()
    _check_reserved(doc.pages, lay)
    return doc.write_pdf(finisher=_draw.finisher(lay))


def _check_reserved(pages: list, lay: _draw.Layout) -> None:
    """The appendix's reserved pages are the last ones, each starting where the layout expects (else the
    drawn rows would overlap the page's own text): a mismatch between style.css and :mod:`.appendix`."""
    g, px = lay.geometry, 0.75  # a CSS px is 0.75 pt
    expected = [(_ROWS_ID, g.left, None)] + [(f"{_PAGE_ID}{i}", g.left, g.top) for i in range(1, len(lay.pages))]
    reserved = pages[-len(expected):]
    for i, (anchor, x, y) in enumerate(expected):
        page = reserved[i] if len(reserved) == len(expected) else None
        at = page.anchors.get(anchor) if page is not None else None
        ok = (at is not None and abs(page.width * px - g.width) < 1 and abs(page.height * px - g.height) < 1
              and abs(at[0] * px - x) < 1 and (at[1] * px <= lay.top(0) if y is None else abs(at[1] * px - y) < 1))
        if not ok:
            raise RoofcoreError(f"The PDF's appendix pages are not where they were laid out ({anchor} at {at}); "
                                "style.css and roofcore/report/appendix.py disagree on the page or its margins.")


__all__ = ["APPENDIX_ALL_MAX", "APPENDIX_MODES", "PAPERS", "PDF_INSTALL_HINT", "SECTIONS", "TOP", "appendix_mode",
           "build_html", "build_pdf", "default_title", "no_paths", "pdf_available"]
