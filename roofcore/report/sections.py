"""The body's sections as HTML fragments: inputs, executive summary, rooflines, top kernels, recommendations,
planning results, assumptions and sources. Everything from the user is escaped here."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from ..analyze import coverage_text, speedup_note
from ..communication import communication_text
from ..ingest.pseudo import runtime_line
from ..models import Hardware
from ..units import fmt_bandwidth, fmt_factor, fmt_intensity, fmt_rate, fmt_time
from ..views.summary import count_text, coverage_counts
from .model import Report, bound_words, kernel_columns
from .text import clip, esc, escape_col, money, no_paths, pct, quotable

if TYPE_CHECKING:
    from ..charts.spec import RooflineFigure
    from ..plan import ScenarioResult

#: recommendations listed per device (the rest are counted)
RECS_SHOWN = 5

#: kernels drawn in each report roofline (the top ones by time; the numbered ones always): a static chart
#: shows the cloud's shape with a few hundred marks, and every mark costs the PDF renderer time
CHART_KERNELS = 600

#: workload warnings listed in the small print (the rest are counted)
WARNINGS_SHOWN = 6


#: the one font of the report (Debian's fonts-dejavu-core), named in the CSS and the charts
FONT = "DejaVu Sans"



def svg(chart: RooflineFigure, n: int) -> str:
    """A chart as inline SVG: no XML prolog, ids made unique per chart, fonts named explicitly."""
    import vl_convert as vlc

    # the figure's spec with its data as JSON values, as RooflineFigure.to_dict gives it but not validated
    # again against the Vega-Lite schema (a second per chart; the chart tests validate these specs)
    spec = {**chart.chart.to_dict(validate=False),
            "datasets": {k: json.loads(v.to_json(orient="records", double_precision=15))
                         for k, v in chart.datasets.items()}}
    config = dict(spec.get("config") or {})
    config["font"] = FONT  # vl-convert measures labels with the font the PDF draws them in
    s = vlc.vegalite_to_svg({**spec, "config": config})
    s = re.sub(r"^\s*<\?xml[^>]*>\s*", "", s)
    s = re.sub(r'\bid="([^"]+)"', rf'id="c{n}-\1"', s)
    s = re.sub(r"url\(#([^)]+)\)", rf"url(#c{n}-\1)", s)
    s = re.sub(r'href="#([^"]+)"', rf'href="#c{n}-\1"', s)
    return s


def inputs(r: Report, scenario: ScenarioResult | None) -> str:
    w = r.a.workload
    files = ", ".join(no_paths(s) for s in w.sources) or "– (built in memory)"
    rows = [["Workload", esc(no_paths(w.name))],
            ["Files", esc(files) + (f" ({esc(', '.join(w.formats))})" if w.formats else "")],
            ["Kernels", count_text(w) + (f"; {len(w.skipped):,} rows skipped" if w.skipped else "")],
            ["Devices", "; ".join(f"{esc(h.name)} (<code>{esc(h.id)}</code>)" for h in r.a.hardware)],
            ["Roofs", "achievable (measured) ceilings where the catalog has them, else theoretical peaks"
             if r.a.achievable else "theoretical peaks (catalog figures)"]]
    said = str(w.meta.get("device_evidence") or "").strip()
    if w.device or any(not f.startswith("inventory") for f in w.formats):  # a profile naming no GPU says so
        rows.append(["Profiled on", esc(w.device) if w.device else f"not named; the file says: {esc(said)}" if said
                     else "not named by the file"])
    if w.runtime is not None:  # queue packets and API rows: not kernels, counted once here
        rows.append(["Runtime/queue entries", esc(runtime_line(w.runtime).split(": ", 1)[1])])
    if scenario is not None:
        rows.append(["Scenario", esc(scenario.name) + (f" ({esc(no_paths(scenario.source))})" if scenario.source else "")])
    return ('<table class="inputs"><tbody>' + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
            + "</tbody></table>")


def _renamed(r: Report, text: str, kernels: Sequence[str]) -> str:
    """Advice text with each kernel name (whole, or cut as the advice cut it) replaced by its body label."""
    for k in kernels:
        flat = " ".join(str(k).split())
        for cand in sorted({flat, *(flat[:w - 1] + "…" for w in (48, 28) if len(flat) > w)}, key=len, reverse=True):
            if cand in text:
                text = text.replace(cand, r.label(k), 1)
                break
    return text


def summary_html(r: Report) -> str:
    a = r.a
    out = []
    summaries = {h.id: a.summary(h.id) for h in a.hardware}
    # the coverage sentence is the workload's (which FLOPs and bytes are missing): said once when every
    # device has the same, after their paragraphs
    notes = {h: coverage_text(s, coverage_counts(a, h)) for h, s in summaries.items()}  # kernels, as counted
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
            what = "; ".join(f"{bound_words(h, k)} bounds {pct(v)}" for k, v in known[:2])
            sent.append(f"Mostly {kind}-bound: {what} of the {basis} time"
                        + (f"; {pct(share['unknown'])} has no known bound (FLOPs or bytes missing)."
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
        sent += [n for n in (notes[h.id] if shared is None else "", speedup_note(s), communication_text(s)) if n]
        body = f"<p><strong>{esc(h.name)}.</strong> " + esc(quotable(" ".join(sent))) + "</p>"
        adv = r.advice.get(h.id)
        acts = [x for x in (adv.items if adv else ()) if x.gain_s > 0][:3]
        if acts and adv is not None:  # acts imply an adv
            body += '<ol class="actions">' + "".join(
                f"<li>{esc(quotable(_renamed(r, x.title, x.kernels)))}: saves {fmt_time(x.gain_s)}"
                f" ({pct(x.gain_s / adv.workload_time_s) if adv.workload_time_s > 0 else '–'} of the time)</li>"
                for x in acts) + "</ol>"
        elif adv is not None:
            body += f'<p class="muted">{esc(quotable(adv.summary()))}</p>'
        out.append(body)
    if shared:
        out.append(f"<p>{esc(quotable(shared))} (On every device.)</p>")
    return '<div class="summary">' + "\n".join(out) + "</div>"


def rooflines(r: Report, charts_on: bool) -> str:
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
        out.append(f'<figure class="roofline{" half" if len(a.hardware) > 2 else ""}">{svg(fig, i)}'
                   f"<figcaption>{esc(cap)}</figcaption></figure>")
    return "\n".join(out)


def top_kernels(r: Report) -> str:
    a = r.a
    if not len(r.top):
        return "<p>No kernels.</p>"
    headers, cols, owner = kernel_columns(r, r.top, short=True)
    full = a.workload.frame["name"].astype(str).to_numpy()[r.top]
    kinds = [("n" if num is True else "k" if num is False else num) for _, num in headers]
    cells = [escape_col(c) for c in cols]
    cells[1] = pd.Series([f'<span title="{esc(n, quote=True)}">{s}</span>' for n, s in zip(full, cells[1], strict=True)],
                         dtype=object)
    head = ""
    if len(a.hardware) > 1:
        spans, i = [], 0
        while i < len(owner):
            j = i
            while j < len(owner) and owner[j] == owner[i]:
                j += 1
            name = next((h.name for h in a.hardware if h.id == owner[i]), "")
            spans.append(f'<th colspan="{j - i}" class="dev">{esc(name)}</th>' if owner[i] else
                         f'<th colspan="{j - i}" class="blank"></th>')
            i = j
        head = "<tr>" + "".join(spans) + "</tr>"
    head += "<tr>" + "".join(f'<th class="{k}">{esc(h)}</th>' for (h, _), k in zip(headers, kinds, strict=True)) + "</tr>"
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
    out.append(f'<p class="muted">{esc(note)}</p>')
    return "\n".join(out)


def recommendations(r: Report) -> str:
    out = []
    for h in r.a.hardware:
        adv = r.advice.get(h.id)
        if adv is None:
            continue
        out.append(f'<div class="device"><h3>{esc(h.name)}</h3><p class="muted">{esc(quotable(adv.summary()))}</p>')
        items = []
        shown_n = RECS_SHOWN if len(r.a.hardware) == 1 else RECS_SHOWN - 2  # several devices: the body stays short
        for x in adv.items[:shown_n]:
            gain = f"saves {fmt_time(x.gain_s)}" if x.gain_s > 0 else "no time claimed"
            names = ""
            if x.name_count > 1:
                shown = [r.label(k) for k in x.kernels[:4]]
                more = x.name_count - len(shown)
                names = "Kernels: " + "; ".join(shown) + (f"; and {more:,} more (appendix)" if more > 0 else "") + "."
            items.append(f"<li><strong>{esc(quotable(_renamed(r, x.title, x.kernels)))}</strong> — {gain} "
                         f'<span class="muted">({esc(x.lever.value)}, {esc(x.confidence.value)} confidence)</span><br>'
                         f'<span class="reason">{esc(quotable(_renamed(r, x.reason, x.kernels)))}'
                         + (f" {esc(names)}" if names else "") + "</span></li>")
        if items:
            out.append('<ol class="recs">' + "".join(items) + "</ol>")
        if len(adv.items) > shown_n:
            out.append(f'<p class="muted">… and {len(adv.items) - shown_n:,} more with smaller gains '
                       "(<code>roofline advise --top 0</code> lists them all).</p>")
        out.append("</div>")
    return "\n".join(out)


def planning(scenario: ScenarioResult) -> str:
    out = [f"<p>Scenario <strong>{esc(scenario.name)}</strong>"
           + (f": {esc(scenario.description)}" if scenario.description else "") + "</p>"]
    rows = []
    for v in scenario.variants:
        for t in v.projection.totals:
            vs = v.speedup_vs_base.get(t.hardware)
            rows.append([esc(v.name), esc(v.kind), esc(t.hardware),
                         fmt_time(t.t_roof_s) if t.t_roof_s is not None else "–",
                         fmt_time(t.estimate_s) if t.estimate_s is not None else "–",
                         fmt_factor(vs) if vs else "–",
                         money(t.cost_per_run),
                         esc(next(iter(t.bound_share), "–"))])
    heads = [("variant", "k"), ("step", "k"), ("device", "k"), ("t_roof", "n"), ("estimate", "n"),
             ("vs base", "n"), ("cost/run", "n"), ("mostly bound by", "k")]
    out.append("<table><thead><tr>" + "".join(f'<th class="{k}">{h}</th>' for h, k in heads) + "</tr></thead><tbody>"
               + "".join("<tr>" + "".join(f'<td class="{k}">{c}</td>' for c, (_, k) in zip(row, heads, strict=True))
                         + "</tr>" for row in rows) + "</tbody></table>")
    out += [f'<p class="muted">Note: {esc(no_paths(n))}</p>' for n in scenario.notes[:8]]
    out.append('<p class="muted">vs base: the base variant\'s Σ t_roof (same device, else its first device) / '
               "this variant's Σ t_roof. Estimate: of a measured run, the kernels' projected times (one with no "
               "measured time is left out: its t_roof alone is a lower bound); of a run with no measured times, "
               "Σ t_roof.</p>")
    return "\n".join(out)


def _source_id(h: Hardware, source: str) -> str:
    sid = source.split(":", 1)[0].strip()
    return sid if sid in h.sources else source


def assumptions(r: Report, scenario: ScenarioResult | None) -> str:
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
        srcs = "; ".join(f"[{sid}] {clip(text)}" for sid, text in h.sources.items() if sid in figs)
        out.append(f"<p><strong>{esc(h.name)}</strong> (<code>{esc(h.id)}</code>): {esc('; '.join(roofs))}; ridge "
                   f"{esc(fmt_intensity(ridge))} ({esc(h.default_ceiling)} over {esc(h.offchip.display)})."
                   + (f" {esc(meta)}." if meta else "") + f" Sources: {esc(no_paths(srcs))}.</p>")
    w = a.workload
    if w.warnings:
        shown = [f"<li>{esc(quotable(no_paths(x)))}" + (f'<pre class="script">{esc(cmds)}</pre>' if cmds else "")
                 + "</li>" for x, _, cmds in (text.partition("\n") for text in w.warnings[:WARNINGS_SHOWN])]
        more = len(w.warnings) - WARNINGS_SHOWN
        out.append("<p>Warnings from reading the inputs:</p><ul>" + "".join(shown)
                   + (f"<li>… and {more:,} more (<code>roofline analyze --json</code>).</li>" if more > 0 else "")
                   + "</ul>")
    return '<div class="small">' + "\n".join(out) + "</div>"

