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
from typing import TYPE_CHECKING, NoReturn

from ..analyze import Analysis
from ..errors import RoofcoreError
from . import appendix as _draw

# the parts marked F401 are imported only so that they stay importable from roofcore.report, as before the
# package was split (tests read some private ones)
from .model import (
    build_report,
    offchip_column,  # noqa: F401
)
from .page import (
    APPENDIX_ALL_MAX,
    PAGE_ID,
    PAPER_CSS,  # noqa: F401
    ROWS_ID,
    appendix_block,
    appendix_layout,
    appendix_pages,
    appendix_rows,
    page_html,
)
from .sections import CHART_KERNELS, RECS_SHOWN, WARNINGS_SHOWN  # noqa: F401
from .text import default_title, no_paths

if TYPE_CHECKING:
    from weasyprint import Page

    from ..advise import Advice
    from ..plan import ScenarioResult

#: what to install when WeasyPrint or its system libraries are missing
PDF_INSTALL_HINT = ('install WeasyPrint with `pip install "roofcore[pdf]"` and its libraries with '
                    "`apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core`")

#: section headings, in order (tests look for each in the PDF's text); the appendix's depends on its mode
SECTIONS = ("Inputs", "Executive summary", "Roofline", "Top kernels", "Recommendations", "Planning results",
            "Assumptions and sources", "Appendix")

#: appendix modes: every kernel, the top-kernels table's only, or no appendix
APPENDIX_MODES = ("all", "top", "none")

#: paper sizes (the body is portrait, the appendix landscape)
PAPERS = tuple(_draw.PAPERS)

#: kernels in the top-kernels table by default
TOP = 10



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


def build_html(analysis: Analysis, *, title: str | None = None, scenario: ScenarioResult | None = None,
               date: str | _dt.date | None = None, top: int = TOP, charts: bool = True,
               advice: dict[str, Advice] | None = None, appendix: str | None = None, paper: str = "a4",
               levels: Analysis | None = None) -> str:
    """The report as one self-contained HTML page (no external URL; charts are inline SVG).

    ``scenario``: a :class:`roofcore.plan.ScenarioResult` whose variants are tabled. ``date``: shown under
    the title (default: today). ``top``: kernels in the top-kernels table (numbered in the charts; 0: all).
    ``advice``: the output of :func:`roofcore.advise.advise_all` if already computed. ``charts=False`` leaves
    the charts out. ``appendix``: "all", "top" or "none" (default: see :func:`appendix_mode`). ``paper``:
    "a4" or "letter", for printing. ``levels``: the same workload's analysis launch by launch, when ``analysis``
    combined repeated launches (which sums their modules and steps away): its hierarchy makes the "By module /
    By step" section.
    """
    _check(paper, top)
    mode = appendix_mode(analysis, appendix)
    r = build_report(analysis, advice, top)
    return page_html(r, title=title, scenario=scenario, date=date, charts=charts, paper=paper, mode=mode,
                 appendix_html=appendix_block(r, mode) if mode != "none" else "", levels=levels)


def _no_fetch(url: str, *args: object, **kwargs: object) -> NoReturn:
    raise ValueError(f"the report fetches nothing ({url[:60]})")


def pdf_available() -> str | None:
    """``None`` when WeasyPrint and its libraries load, else what to install."""
    try:
        import weasyprint  # noqa: F401
    except (ImportError, OSError) as e:
        return f"The PDF needs WeasyPrint: {PDF_INSTALL_HINT} ({type(e).__name__}: {' '.join(str(e).split())[:200]})."
    return None


def build_pdf(analysis: Analysis, *, title: str | None = None, scenario: ScenarioResult | None = None,
              date: str | _dt.date | None = None, top: int = TOP, charts: bool = True,
              advice: dict[str, Advice] | None = None, appendix: str | None = None, paper: str = "a4",
              levels: Analysis | None = None) -> bytes:
    """The report as PDF bytes: the page of :func:`build_html` (same arguments) rendered by WeasyPrint, with
    the appendix's rows drawn directly on pages the page reserves for them (no network: nothing is fetched).
    """
    _check(paper, top)
    missing = pdf_available()
    if missing:
        raise RoofcoreError(missing)
    from weasyprint import HTML

    mode = appendix_mode(analysis, appendix)
    r = build_report(analysis, advice, top)
    lay = appendix_layout(r, mode, paper) if mode != "none" else None
    rows = len(appendix_rows(r, mode)) if lay is not None else 0
    page = page_html(r, title=title, scenario=scenario, date=date, charts=charts, paper=paper, mode=mode,
                 appendix_html=appendix_pages(r, mode, rows, len(lay.pages)) if lay is not None else "",
                 appendix_cls="appendix-pdf", levels=levels)
    doc = HTML(string=page, url_fetcher=_no_fetch).render()
    if lay is None:
        pdf: bytes = doc.write_pdf()
        return pdf
    _check_reserved(doc.pages, lay)
    pdf = doc.write_pdf(finisher=_draw.finisher(lay))
    return pdf


def _check_reserved(pages: list[Page], lay: _draw.Layout) -> None:
    """The appendix's reserved pages are the last ones, each starting where the layout expects (else the
    drawn rows would overlap the page's own text): a mismatch between style.css and :mod:`.appendix`."""
    g, px = lay.geometry, 0.75  # a CSS px is 0.75 pt
    expected = [(ROWS_ID, g.left, None)] + [(f"{PAGE_ID}{i}", g.left, g.top) for i in range(1, len(lay.pages))]
    reserved = pages[-len(expected):]
    for i, (anchor, x, y) in enumerate(expected):
        page = reserved[i] if len(reserved) == len(expected) else None
        at = page.anchors.get(anchor) if page is not None else None
        ok = (page is not None and at is not None and abs(page.width * px - g.width) < 1
              and abs(page.height * px - g.height) < 1
              and abs(at[0] * px - x) < 1 and (at[1] * px <= lay.top(0) if y is None else abs(at[1] * px - y) < 1))
        if not ok:
            raise RoofcoreError(f"The PDF's appendix pages are not where they were laid out ({anchor} at {at}); "
                                "style.css and roofcore/report/appendix.py disagree on the page or its margins.")



__all__ = ["APPENDIX_ALL_MAX", "APPENDIX_MODES", "PAPERS", "PDF_INSTALL_HINT", "SECTIONS", "TOP", "appendix_mode",
           "build_html", "build_pdf", "default_title", "no_paths", "pdf_available"]

