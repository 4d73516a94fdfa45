"""The report: one self-contained HTML page (charts inline as SVG, CSS inline, print CSS) and a PDF of it.

``build_html(analysis, ...)`` returns the page; ``build_pdf(analysis, ...)`` renders the same page with
WeasyPrint (the ``[pdf]`` extra), except the appendix's rows, which :mod:`.appendix` draws directly on pages
the HTML reserves (WeasyPrint would lay a 10,000-row table out cell by cell for two minutes). Everything that
came from the user (kernel names, groups, file names, titles, scenario names) is escaped with
:func:`html.escape`; the page references no URL, so it views and prints offline.
"""

from __future__ import annotations

import datetime as _dt
import html
import re
from collections.abc import Callable, Iterable
from importlib import resources

import numpy as np
import pandas as pd

from ..analyze import Analysis, coverage_text, speedup_note
from ..errors import RoofcoreError
from ..models import Hardware
from ..units import fmt_bandwidth, fmt_bytes, fmt_factor, fmt_flops, fmt_intensity, fmt_pct, fmt_rate, fmt_time
from . import appendix

#: what to install when WeasyPrint or its system libraries are missing
PDF_INSTALL_HINT = ('install WeasyPrint with `pip install "roofcore[pdf]"` and its libraries with '
                    "`apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core`")

#: section headings, in order (tests look for each in the PDF's text)
SECTIONS = ("Inputs", "Executive summary", "Roofline", "Time by bound", "Top kernels", "Recommendations",
            "Planning results", "Assumptions", "Appendix: every kernel")

#: recommendations listed per device (the rest are counted)
RECS_SHOWN = 12

_e = html.escape

#: the one font of the report (Debian's fonts-dejavu-core), named in the CSS and the charts
_FONT = "DejaVu Sans"


def _css() -> str:
    return resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------ charts


def _svg(chart, n: int) -> str:
    """A chart as inline SVG: no XML prolog, ids made unique per chart, fonts named explicitly."""
    import vl_convert as vlc

    spec = chart.to_dict()
    config = dict(spec.get("config") or {})
    config["font"] = _FONT  # vl-convert measures labels with the font the PDF draws them in
    s = vlc.vegalite_to_svg({**spec, "config": config})
    s = re.sub(r"^\s*<\?xml[^>]*>\s*", "", s)
    s = re.sub(r'\bid="([^"]+)"', rf'id="c{n}-\1"', s)
    s = re.sub(r"url\(#([^)]+)\)", rf"url(#c{n}-\1)", s)
    s = re.sub(r'href="#([^"]+)"', rf'href="#c{n}-\1"', s)
    return s


# ------------------------------------------------------------------------------------------------ helpers


def _vfmt(values: Iterable, fn: Callable[[float | None], str]) -> pd.Series:
    """``fn`` over a column, called once per distinct value (NaN → "–")."""
    s = pd.Series(values, dtype="float64")
    uniq = pd.unique(s.dropna())
    table = {v: fn(float(v)) for v in uniq}
    out = s.map(table).astype(object)
    return out.where(out.notna(), "–")


def _text_col(values: Iterable, escape: bool = True) -> pd.Series:
    """Escaped (or, with ``escape=False``, plain) text for a column of user strings (None/NaN → "–")."""
    s = pd.Series(values, dtype=object)
    uniq = pd.unique(s.dropna().astype(str))
    table = {v: _e(v) if escape else v for v in uniq}
    return s.astype(str).map(table).where(s.notna(), "–").astype(object)


def _table(headers: list[tuple[str, bool]], cols: list[pd.Series], *, cls: str = "") -> str:
    """An HTML table from already-escaped string columns; ``headers`` are (label, numeric)."""
    kinds = [("n" if num is True else "k" if num is False else num) for _, num in headers]
    head = "".join(f'<th class="{k}">{_e(h)}</th>' for (h, _), k in zip(headers, kinds, strict=True))
    if not cols or len(cols[0]) == 0:
        body = f'<tr><td colspan="{len(headers)}">none</td></tr>'
    else:
        row = pd.Series(["<tr>"] * len(cols[0]), dtype=object)
        for k, c in zip(kinds, cols, strict=True):
            row = row + f'<td class="{k}">' + c.to_numpy(dtype=object) + "</td>"
        body = "\n".join(row + "</tr>")
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>'


def _rows(headers: list[tuple[str, bool]], rows: list[list[str]], cls: str = "") -> str:
    """A small table from already-escaped cell strings."""
    cols = [pd.Series([r[i] for r in rows], dtype=object) for i in range(len(headers))]
    return _table(headers, cols, cls=cls)


def _order(tab: pd.DataFrame) -> np.ndarray:
    key = tab["time_s"].fillna(tab["t_roof_s"]).fillna(0).to_numpy()
    return np.argsort(-key, kind="stable")


def _kernel_columns(tab: pd.DataFrame, *, with_hw: bool = False,
                    escape: bool = True) -> tuple[list[tuple[str, bool]], list[pd.Series]]:
    """The per-kernel columns of the top-kernels table and the appendix, formatted column by column
    (user text HTML-escaped unless ``escape=False``)."""
    off = "bytes_hbm" if "bytes_hbm" in tab else next((c for c in tab if c.startswith("bytes_")), None)
    inten = f"intensity_{off[len('bytes_'):]}" if off else None
    headers = [("kernel", False), ("count", True), ("FLOPs", True), ("off-chip bytes", True), ("intensity", True),
               ("t_roof", True), ("time", True), ("of roof", True), ("bound", "t")]
    bound = tab["bound"].where(tab["bound"].map(lambda v: isinstance(v, str)), None)
    cols = [_text_col(tab["name"], escape),
            tab["count"].map("{:,}".format).astype(object),
            _vfmt(tab["flops"], fmt_flops),
            _vfmt(tab[off], fmt_bytes) if off else pd.Series(["–"] * len(tab), dtype=object),
            _vfmt(tab[inten].replace([np.inf], np.nan), fmt_intensity) if inten else
            pd.Series(["–"] * len(tab), dtype=object),
            _vfmt(tab["t_roof_s"], fmt_time), _vfmt(tab["time_s"], fmt_time), _vfmt(tab["efficiency"], fmt_pct),
            _text_col(bound, escape)]
    if with_hw:
        headers.insert(1, ("device", False))
        cols.insert(1, _text_col(tab["hardware"], escape))
    return headers, [c.reset_index(drop=True) for c in cols]


def _source_id(h: Hardware, source: str) -> str:
    sid = source.split(":", 1)[0].strip()
    return sid if sid in h.sources else source


def _tags(f) -> str:
    return ", ".join(t for t, on in (("measured", f.measured), ("derived", bool(f.derivation)),
                                     ("unverified", f.unverified)) if on)


# ------------------------------------------------------------------------------------------------ sections


def _inputs(a: Analysis, scenario) -> str:
    w = a.workload
    rows = [["Workload", _e(w.name)],
            ["Files", _e(", ".join(w.sources)) or "– (built in memory)"],
            ["Formats", _e(", ".join(w.formats)) or "–"],
            ["Kernels", f"{len(w):,}"],
            ["Devices", "<br>".join(f"{_e(h.name)} (<code>{_e(h.id)}</code>)" for h in a.hardware)],
            ["Roofs", "achievable (measured) ceilings where the catalog has them, else theoretical peaks"
             if a.achievable else "theoretical peaks (catalog figures)"]]
    if w.device:
        rows.append(["Profiled on", _e(w.device)])
    if scenario is not None:
        rows.append(["Scenario", _e(scenario.name) + (f" ({_e(scenario.source)})" if scenario.source else "")])
    if w.skipped:
        rows.append(["Skipped rows", f"{len(w.skipped):,}"])
    out = '<table class="inputs"><tbody>' + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + \
        "</tbody></table>"
    if w.warnings:
        out += "".join(f'<p class="muted">Warning: {_e(x)}</p>' for x in w.warnings[:20])
    return out


def _bound_phrase(share: dict[str, float]) -> str:
    if not share:
        return "no kernel has a bound (FLOPs or bytes unknown)"
    items = list(share.items())[:2]
    text = f"{fmt_pct(items[0][1])} of the time is {_e(items[0][0])}-bound"
    if len(items) > 1:
        text += f", {fmt_pct(items[1][1])} {_e(items[1][0])}"
    return text


def _summary(a: Analysis, advice: dict) -> str:
    parts = []
    for h in a.hardware:
        s = a.summary(h.id)
        basis = "measured" if s["share_basis"] == "measured" else "roofline"
        txt = f"<strong>{_e(h.name)}</strong>: {_bound_phrase(s['time_share_by_bound'])} ({basis} time). "
        partial = s["coverage"]["kernels_known"] < s["coverage"]["kernels"]
        if s["time_s"] is not None and s["t_roof_s"] is not None:
            known = (f"the {fmt_time(s['coverage']['time_s_known'])} of it in kernels with a known roofline take "
                     if partial and s["coverage"]["time_s_known"] is not None else "")
            txt += (f"It takes {fmt_time(s['time_s'])} measured; {known or 'against '}{fmt_time(s['t_roof_s'])} at the "
                    "roof (Σ t_roof)"
                    + (f": {fmt_factor(s['speedup_if_at_roof'])} faster if every kernel "
                       f"{'with a known roofline ' if partial else ''}reached its roof. "
                       if s["speedup_if_at_roof"] else ". "))
        elif s["t_roof_s"] is not None:
            txt += (f"No measured times: the roofline bounds it at {fmt_time(s['t_roof_s'])} (Σ t_roof; "
                    f"{fmt_time(s['t_serial_s'])} with no overlap). ")
        for note in (coverage_text(s), speedup_note(s)):
            if note:
                txt += _e(note) + " "
        adv = advice.get(h.id)
        top = [r for r in (adv.items if adv else ()) if r.gain_s > 0][:3]
        if top:
            txt += "Top actions: " + "; ".join(f"{i}. {_e(r.title)} (saves {fmt_time(r.gain_s)})"
                                               for i, r in enumerate(top, 1)) + ". "
        elif adv is not None:
            txt += _e(adv.summary()) + " "
        parts.append(txt.strip())
    return '<div class="summary"><p>' + " ".join(parts) + "</p></div>"


def _rooflines(a: Analysis, charts_on: bool) -> str:
    from .. import charts

    out = []
    for i, h in enumerate(a.hardware):
        out.append(f"<h3>{_e(h.name)} ({_e(h.id)})</h3>")
        if not charts_on:
            out.append('<p class="muted">Chart left out.</p>')
            continue
        fig = charts.roofline(a, hw_ids=[h.id], top_n=min(len(a.workload), 2000), width=640, height=380)
        cap = ("Log-log roofline: attainable FLOP/s against arithmetic intensity (FLOP per off-chip byte); each "
               "kernel at its achieved rate (measured) or at its roof. " + fig.caption)
        out.append(f'<figure class="roofline">{_svg(fig, i)}<figcaption>{_e(cap)}</figcaption></figure>')
    return "\n".join(out)


def _shares(a: Analysis, charts_on: bool) -> str:
    from .. import charts

    out = []
    for i, h in enumerate(a.hardware):
        s = a.summary(h.id)
        share = s["time_share_by_bound"]
        out.append(f'<div class="keep"><h3>{_e(h.name)}</h3>')
        if share and charts_on:
            out.append(f'<figure class="share">{_svg(charts.bound_share_chart(share, width=360), 100 + i)}</figure>')
        rows = [[_e(k), fmt_pct(v)] for k, v in share.items()]
        out.append(_rows([("bound", False), (f"share of {s['share_basis']} time", True)], rows))
        out.append("</div>")
    return "\n".join(out)


def _top_kernels(a: Analysis, top: int) -> str:
    out = []
    for h in a.hardware:
        tab = a.table(h.id, messages=False)
        order = _order(tab)
        shown = order[:top] if top > 0 else order
        headers, cols = _kernel_columns(tab.iloc[shown].reset_index(drop=True))
        out.append(f"<h3>{_e(h.name)}</h3>")
        out.append(_table(headers, cols))
        if len(shown) < len(tab):
            out.append(f'<p class="muted">The {len(shown):,} of {len(tab):,} kernels with the most time '
                       "(measured, else roofline); the appendix lists every kernel.</p>")
    return "\n".join(out)


def _short(name: str, limit: int = 100) -> str:
    """A kernel name cut for a list (templated C++ names run to hundreds of characters); whole in the appendix."""
    return name if len(name) <= limit else name[:limit - 1] + "…"


def _recommendations(a: Analysis, advice: dict) -> str:
    out = []
    for h in a.hardware:
        adv = advice.get(h.id)
        out.append(f"<h3>{_e(h.name)}</h3>")
        if adv is None:
            continue
        out.append(f"<p>{_e(adv.summary())}</p>")
        rows = []
        for i, r in enumerate(adv.items[:RECS_SHOWN], 1):
            names = "; ".join(_short(k) for k in r.kernels[:5]) + (
                f" … ({r.name_count:,} names; every one is in the appendix)" if r.name_count > 5 else "")
            rows.append([str(i), f"<strong>{_e(r.title)}</strong><br><span class='muted'>{_e(r.reason)}</span>"
                         f"<br><span class='muted'>Kernels: {_e(names)}</span>",
                         _e(r.lever.value), fmt_time(r.gain_s) if r.gain_s > 0 else "–", _e(r.confidence.value)])
        if rows:
            out.append(_rows([("#", True), ("action", False), ("lever", "t"), ("gain", True),
                              ("confidence", "t")], rows, cls="recs"))
        if len(adv.items) > RECS_SHOWN:
            out.append(f'<p class="muted">… and {len(adv.items) - RECS_SHOWN:,} more with smaller gains '
                       "(`roofline advise --top 0` lists them all).</p>")
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
                         f"{vs:.2f}×" if vs else "–",
                         f"${t.cost_per_run:.3g}" if t.cost_per_run is not None else "–",
                         _e(next(iter(t.bound_share), "–"))])
    out.append(_rows([("variant", False), ("step", False), ("device", False), ("t_roof", True),
                      ("estimate", True), ("vs base", True), ("cost/run", True), ("mostly bound by", False)], rows))
    notes = list(dict.fromkeys(n for v in scenario.variants for n in (*v.workload.warnings, *v.projection.notes)))
    out += [f'<p class="muted">Note: {_e(n)}</p>' for n in notes[:20]]
    out.append('<p class="muted">vs base: the base variant\'s Σ t_roof (same device, else its first device) / '
               "this variant's Σ t_roof. Estimate: projected time where measured, else t_roof.</p>")
    return "\n".join(out)


def _assumptions(a: Analysis, scenario) -> str:
    hws = {h.id: h for h in a.hardware}
    if scenario is not None:
        for h in scenario.hardware:
            hws.setdefault(h.id, h)
    out = ["<p><strong>Overlap.</strong> A kernel's roofline time is t_roof = max(FLOPs / peak, bytes at each "
           "level / its bandwidth): compute and every memory level overlap perfectly. The other bound, "
           "t_serial = the sum of those times, assumes no overlap; a real kernel lies between the two.</p>",
           "<p><strong>Theoretical vs achievable.</strong> "
           + ("This report uses achievable (measured, sustained) ceilings and bandwidths where the catalog has "
              "them, else the theoretical peaks. " if a.achievable else
              "This report uses theoretical peaks (dense; sparse figures are never a roof). ")
           + "Achievable figures are listed beside them; a kernel can reach only a fraction of the peak.</p>"]
    for h in hws.values():
        out.append(f'<div class="keep"><h3>{_e(h.name)} (<code>{_e(h.id)}</code>)</h3>')
        meta = [x for x in (f"{h.vendor} {h.kind.value}, {h.scope.value} scope", h.config and f"Configuration: {h.config}",
                            h.origin and f"Catalog: {h.origin}", h.unverified and "UNVERIFIED") if x]
        out.append(f'<p class="muted">{_e("; ".join(str(m) for m in meta))}</p>')
        rows = [[_e(c.key + (" (default)" if c.key == h.default_ceiling else "")), fmt_rate(c.peak),
                 fmt_rate(c.achievable) if c.achievable else "–", _e(_tags(c.figure)),
                 _e(_source_id(h, c.figure.source))] for c in h.ceilings]
        out.append(_rows([("compute ceiling", False), ("peak", True), ("achievable", True), ("", False),
                          ("source", False)], rows))
        out.append("</div>")
        rows = [[_e(lv.name), _e(lv.display), fmt_bandwidth(lv.bandwidth),
                 fmt_bandwidth(lv.achievable) if lv.achievable else "–",
                 fmt_bytes(lv.capacity) if lv.capacity else "–", _e(_tags(lv.figure)),
                 _e(_source_id(h, lv.figure.source))] for lv in h.levels]
        rows += [[_e(lk.name), _e(lk.display) + " (link, per direction)", fmt_bandwidth(lk.bandwidth),
                  fmt_bandwidth(lk.achievable) if lk.achievable else "–", "–", _e(_tags(lk.figure)),
                  _e(_source_id(h, lk.figure.source))] for lk in h.links]
        out.append(_rows([("level / link", False), ("label", False), ("bandwidth", True), ("achievable", True),
                          ("capacity", True), ("", False), ("source", False)], rows))
        used = {_source_id(h, f.source) for f in h.figures}
        srcs = [f"<li><strong>{_e(sid)}</strong>: {_e(text)}</li>" for sid, text in h.sources.items() if sid in used]
        if srcs:
            out.append('<p class="muted">Sources:</p><ul class="muted">' + "".join(srcs) + "</ul>")
    return "\n".join(out)


def _appendix_columns(a: Analysis, escape: bool = True) -> tuple[list[tuple[str, bool]], list[pd.Series]]:
    """Every kernel × device, by device then time (measured, else roofline), formatted."""
    tab = a.table(messages=False)
    order = np.lexsort((-tab["time_s"].fillna(tab["t_roof_s"]).fillna(0).to_numpy(),
                        pd.factorize(tab["hardware"])[0]))
    return _kernel_columns(tab.iloc[order].reset_index(drop=True), with_hw=len(a.hardware) > 1, escape=escape)


def _appendix_note(rows: int) -> str:
    return f'<p class="muted">{rows:,} rows (kernel × device), by device then time.</p>'


def _appendix(a: Analysis) -> str:
    headers, cols = _appendix_columns(a)
    return _appendix_note(len(cols[0])) + _table(headers, cols, cls="appendix")


#: ids of the blocks that reserve the PDF's appendix pages (the first, then one per further page)
_ROWS_ID, _PAGE_ID = "rc-appendix-rows", "rc-appendix-page-"


def _appendix_pages(rows: int, pages: int) -> str:
    """The PDF's appendix section without its rows: the note, then an empty block on each page to draw on."""
    return (_appendix_note(rows) + f'<div id="{_ROWS_ID}"></div>'
            + "".join(f'<div class="appendix-page" id="{_PAGE_ID}{i}"></div>' for i in range(1, pages)))


# ------------------------------------------------------------------------------------------------ public


def build_html(analysis: Analysis, *, title: str | None = None, scenario=None, date: str | _dt.date | None = None,
               top: int = 25, charts: bool = True, advice: dict | None = None) -> str:
    """The report as one self-contained HTML page (no external URL; charts are inline SVG).

    ``scenario``: a :class:`roofcore.plan.ScenarioResult` whose variants are tabled. ``date``: shown under
    the title (default: today). ``top``: kernels per device in the top-kernels table. ``advice``: the
    output of :func:`roofcore.advise.advise_all` if already computed. ``charts=False`` leaves the charts out.
    """
    return _page(analysis, title=title, scenario=scenario, date=date, top=top, charts=charts, advice=advice,
                 appendix_html=_appendix(analysis))


def _page(a: Analysis, *, title: str | None, scenario, date: str | _dt.date | None, top: int, charts: bool,
          advice: dict | None, appendix_html: str, appendix_cls: str = "") -> str:
    """The HTML page with ``appendix_html`` as the last section's content (``appendix_cls``: its class)."""
    from ..advise import advise_all

    title = title or f"Roofline report: {a.workload.name}"
    if date is None:
        date = _dt.date.today().isoformat()
    elif isinstance(date, _dt.date):
        date = date.isoformat()
    advice = advise_all(a) if advice is None else advice
    sections = [
        ("Inputs", _inputs(a, scenario)),
        ("Executive summary", _summary(a, advice)),
        ("Roofline", _rooflines(a, charts)),
        ("Time by bound", _shares(a, charts)),
        ("Top kernels", _top_kernels(a, top)),
        ("Recommendations", _recommendations(a, advice)),
    ]
    if scenario is not None:
        sections.append(("Planning results", _planning(scenario)))
    sections += [("Assumptions", _assumptions(a, scenario)), ("Appendix: every kernel", appendix_html)]
    parts = []
    for i, (name, content) in enumerate(sections):
        cls = f' class="{appendix_cls}"' if appendix_cls and i == len(sections) - 1 else ""
        parts.append(f'<section id="s{i}"{cls}><h2>{_e(name)}</h2>\n{content}\n</section>')
    body = "\n".join(parts)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{_e(title)}</title>"
            f"<style>\n{_css()}\n</style></head><body>\n<h1>{_e(title)}</h1>\n<p class=\"date\">{_e(str(date))}</p>\n"
            f"{body}\n</body></html>\n")


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
              top: int = 25, charts: bool = True, advice: dict | None = None) -> bytes:
    """The report as PDF bytes: the page of :func:`build_html` (same arguments) rendered by WeasyPrint, with
    the appendix's rows drawn directly on pages the page reserves for them (no network: nothing is fetched).
    """
    missing = pdf_available()
    if missing:
        raise RoofcoreError(missing)
    from weasyprint import HTML

    headers, cols = _appendix_columns(analysis, escape=False)
    lay = appendix.layout(headers, [c.tolist() for c in cols])
    page = _page(analysis, title=title, scenario=scenario, date=date, top=top, charts=charts, advice=advice,
                 appendix_html=_appendix_pages(len(cols[0]), len(lay.pages)), appendix_cls="appendix-pdf")
    doc = HTML(string=page, url_fetcher=_no_fetch).render()
    _check_reserved(doc.pages, lay)
    return doc.write_pdf(finisher=appendix.finisher(lay))


def _check_reserved(pages: list, lay: appendix.Layout) -> None:
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


__all__ = ["PDF_INSTALL_HINT", "SECTIONS", "build_html", "build_pdf", "pdf_available"]
