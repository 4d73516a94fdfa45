"""The page around the sections: the HTML document (inline CSS for the paper size), and the appendix, as an
HTML table or, for the PDF, as empty blocks that reserve the pages :mod:`.appendix` draws on."""

from __future__ import annotations

import datetime as _dt
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import appendix as _draw
from . import levels as _levels
from .model import Report, kernel_columns
from .sections import assumptions, inputs, planning, recommendations, rooflines, summary_html, top_kernels
from .text import default_title, esc, escape_col

if TYPE_CHECKING:
    from ..analyze import Analysis
    from ..plan import ScenarioResult

#: the default appendix lists every kernel up to this many, else the top kernels (the CSV has them all)
APPENDIX_ALL_MAX = 2000


#: @page overrides for paper sizes other than style.css's A4
PAPER_CSS = {"a4": "", "letter": "@page { size: letter; } @page appendix { size: letter landscape; }"}



def _css() -> str:
    return resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")


def appendix_rows(r: Report, mode: str) -> np.ndarray:
    return r.order if mode == "all" else r.top


def _appendix_note(r: Report, mode: str, rows: int) -> str:
    n = len(r.a.workload)
    if mode == "all":
        text = f"Every kernel ({n:,}), by time (measured, else roofline); # is its number in the top-kernels table."
    else:
        why = f"The workload has {n:,} kernels: " if n > APPENDIX_ALL_MAX else ""
        text = (f"{why}the {rows:,} kernels of the top-kernels table with their full names; every kernel is in the "
                "CSV (roofline report INPUT --csv, or the Report page's CSV download).")
    return f'<p class="muted">{esc(text)}</p>'


def appendix_block(r: Report, mode: str) -> str:
    rows = appendix_rows(r, mode)
    headers, cols, _ = kernel_columns(r, rows, short=False)
    kinds = [("n" if num is True else "k" if num is False else num) for _, num in headers]
    kinds[1] = "name"
    head = "".join(f'<th class="{k}">{esc(h)}</th>' for (h, _), k in zip(headers, kinds, strict=True))
    if not len(rows):
        body = f'<tr><td colspan="{len(headers)}">none</td></tr>'
    else:
        row = pd.Series(["<tr>"] * len(rows), dtype=object)
        for k, c in zip(kinds, cols, strict=True):
            row = row + f'<td class="{k}">' + escape_col(c).to_numpy(dtype=object) + "</td>"
        body = "\n".join(row + "</tr>")
    return (_appendix_note(r, mode, len(rows))
            + f'<table class="appendix"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>')



#: ids of the blocks that reserve the PDF's appendix pages (the first, then one per further page)
ROWS_ID, PAGE_ID = "rc-appendix-rows", "rc-appendix-page-"



def appendix_layout(r: Report, mode: str, paper: str) -> _draw.Layout:
    headers, cols, _ = kernel_columns(r, appendix_rows(r, mode), short=False)
    return _draw.layout(headers, [c.tolist() for c in cols], _draw.PAPERS[paper], flex=1, mono=(1,), hang=True)


def appendix_pages(r: Report, mode: str, rows: int, pages: int) -> str:
    """The PDF's appendix section without its rows: the note, then an empty block on each page to draw on."""
    return (_appendix_note(r, mode, rows) + f'<div id="{ROWS_ID}"></div>'
            + "".join(f'<div class="appendix-page" id="{PAGE_ID}{i}"></div>' for i in range(1, pages)))


def page_html(r: Report, *, title: str | None, scenario: ScenarioResult | None, date: str | _dt.date | None,
          charts: bool, paper: str, mode: str, appendix_html: str, appendix_cls: str = "",
          levels: Analysis | None = None) -> str:
    """The HTML page with ``appendix_html`` as the appendix's content (``appendix_cls``: its section's class);
    ``levels``: the analysis whose hierarchy the "By module / By step" section draws (default: the report's own)."""
    la = levels if levels is not None else r.a
    title = title or default_title(r.a)
    if date is None:
        date = _dt.date.today().isoformat()
    elif isinstance(date, _dt.date):
        date = date.isoformat()
    sections = [
        ("Executive summary", summary_html(r), "summary-section"),
        ("Roofline", rooflines(r, charts), "rooflines"),
        *(((heading, _levels.section(la, charts), "levels"),) if (heading := _levels.title(la)) else ()),
        ("Top kernels", top_kernels(r), "top-kernels"),
        ("Recommendations", recommendations(r), "recommendations"),
    ]
    if scenario is not None:
        sections.append(("Planning results", planning(scenario), "planning"))
    sections.append(("Assumptions and sources", assumptions(r, scenario), "assumptions"))
    if mode != "none":
        sections.append(("Appendix: every kernel" if mode == "all" else "Appendix: top kernels", appendix_html,
                         f"appendix {appendix_cls}".strip()))
    parts = [f'<header class="head"><h1>{esc(title)}</h1>\n<p class="date">{esc(str(date))}</p>\n'
             f'<h2 class="inputs-head">Inputs</h2>{inputs(r, scenario)}</header>']
    for i, (name, content, cls) in enumerate(sections):
        parts.append(f'<section id="s{i}" class="{cls}"><h2>{esc(name)}</h2>\n{content}\n</section>')
    body = "\n".join(parts)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>\n{_css()}\n{PAPER_CSS[paper]}\n</style></head><body>\n{body}\n</body></html>\n")

