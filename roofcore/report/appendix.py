"""The PDF's appendix table, drawn directly as PDF text instead of laid out by WeasyPrint.

WeasyPrint lays a table out cell by cell (about 12 ms a row, two minutes for 10,000 kernels); this module
places the same rows in one pass. The report's HTML reserves the pages (one empty block per page, so
WeasyPrint's margin boxes — title, date, "Page N of M" — count and mark them like every other page), and
:func:`finisher` adds each page's rows to its content stream before WeasyPrint writes the file.

Text is Helvetica, and Courier for the kernel names (monospaced, so a reader can compare two long names
column by column), two of the PDF standard 14 fonts (not embedded), in WinAnsiEncoding (cp1252): a character
outside that encoding, or a control character, is drawn as "?". Widths come from the fonts' metrics, so
every cell is wrapped to fit its column; nothing is cut off. The pages are landscape (``@page appendix`` in
style.css), A4 or Letter. Lengths are PDF points (1/72 in), measured from the page's top-left corner until
:func:`page_stream` turns them into PDF coordinates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pydyf

#: points per millimetre
MM = 72 / 25.4

#: the rows' font size and line height, pt (the HTML appendix uses 7 pt)
SIZE = 7.0
LEADING = 8.0
#: the kernel names' size, pt: Courier at 6.5 pt is as tall as Helvetica at 7 and fits 8% more characters
MONO_SIZE = 6.5
#: cell padding, pt (about as ``td`` in style.css, 0.3 mm by 1.5 mm: numbers side by side need the gap)
HPAD = 1.5 * MM
VPAD = 0.3 * MM
#: room left for the heading and the row-count line on the first appendix page, pt
HEAD = 17 * MM
#: the kernel column keeps at least this share of the table's width; other text columns wrap to allow it
KERNEL_SHARE = 0.3
#: no column is narrower than this, pt (wider than any glyph plus padding)
MIN_COLUMN = 14.0

#: break a long cell after one of these bytes where possible (else anywhere)
_BREAK_AFTER = frozenset(b" ,;:(<[{/_-|&+=")

# Advance widths of Helvetica and Helvetica-Bold in 1/1000 em for WinAnsiEncoding codes 32-255 (0 where the
# encoding has no character). They are Adobe's published metrics; generated from Liberation Sans, whose
# advances match Helvetica's, with Helvetica's own mu, plusminus, divide and macron.
_REGULAR_32 = """
278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 556 556
556 278 278 584 584 584 556 1015 667 667 722 722 667 611 778 722 278 500 667 556 833 722 778 667 778
722 667 611 722 667 944 667 667 611 278 278 278 469 556 333 556 556 500 556 556 278 556 556 222 222
500 222 833 556 556 556 556 333 500 278 556 500 722 500 500 500 334 260 334 584 0 556 0 222 556 333
1000 556 556 333 1000 667 333 1000 0 611 0 0 222 222 333 333 350 556 1000 333 1000 500 333 944 0 500
667 278 333 556 556 556 556 260 556 333 737 370 556 584 333 737 333 400 584 333 333 333 556 537 278
333 333 365 556 834 834 834 611 667 667 667 667 667 667 1000 722 667 667 667 667 278 278 278 278 722
722 778 778 778 778 778 584 778 722 722 722 722 667 667 611 556 556 556 556 556 556 889 500 556 556
556 556 278 278 278 278 556 556 556 556 556 556 556 584 611 556 556 556 556 500 556 500
"""
_BOLD_32 = """
278 333 474 556 556 889 722 238 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 556 556
556 333 333 584 584 584 611 975 722 722 722 722 667 611 778 722 278 556 722 611 833 722 778 667 778
722 667 611 722 667 944 667 667 611 333 278 333 584 556 333 556 611 556 611 556 333 611 611 278 278
556 278 889 611 611 611 611 389 556 333 611 556 778 556 556 500 389 280 389 584 0 556 0 278 556 500
1000 556 556 333 1000 667 333 1000 0 611 0 0 278 278 500 500 350 556 1000 333 1000 556 333 944 0 500
667 278 333 556 556 556 556 280 556 333 737 370 556 584 333 737 333 400 584 333 333 333 611 556 278
333 333 365 556 834 834 834 611 722 722 722 722 722 722 1000 722 667 667 667 667 278 278 278 278 722
722 778 778 778 778 778 584 778 722 722 722 722 667 667 611 556 556 556 556 556 556 889 556 556 556
556 556 278 278 278 278 611 611 611 611 611 611 611 584 611 611 611 611 611 556 611 556
"""
#: widths indexed by byte value (codes below 32 never occur: :func:`encode` replaces them); Courier's are all 600
_WIDTHS = {bold: [0] * 32 + [int(x) for x in table.split()] for bold, table in ((False, _REGULAR_32),
                                                                              (True, _BOLD_32))}
_MONO_WIDTHS = [0] * 32 + [600] * 224
#: control characters (C0, DEL and C1) become "?", as does anything cp1252 cannot encode
_CONTROLS = str.maketrans({i: "?" for i in (*range(32), *range(127, 160))})

#: resource names of the three fonts on the appendix pages
_FONT, _FONT_BOLD, _FONT_MONO = "RcHelvetica", "RcHelveticaBold", "RcCourier"


@dataclass(frozen=True)
class Geometry:
    """The page and its margins, pt: A4 landscape with the margins of ``@page appendix`` in style.css (a test
    checks they agree); :data:`PAPERS` has Letter too."""

    width: float = 297 * MM
    height: float = 210 * MM
    top: float = 14 * MM
    right: float = 12 * MM
    bottom: float = 14 * MM
    left: float = 12 * MM


#: the appendix's landscape page for each paper size the report offers
PAPERS = {"a4": Geometry(), "letter": Geometry(width=11 * 72.0, height=8.5 * 72.0)}


@dataclass(frozen=True)
class Column:
    """One column: left edge and width in pt (padding included), numbers aligned right."""

    x: float
    width: float
    right: bool


@dataclass
class Page:
    """What one appendix page draws below its column header."""

    #: (x, baseline y, text) in the regular font; x and y in pt from the page's top-left corner
    texts: list[tuple[float, float, bytes]] = field(default_factory=list)
    #: (x, baseline y, text) in the monospaced font (the kernel names)
    mono: list[tuple[float, float, bytes]] = field(default_factory=list)
    #: y of the light rule under each row, pt from the top
    rules: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Layout:
    """Every appendix page, ready to draw: the columns, the header (repeated on each page) and the rows."""

    geometry: Geometry
    columns: tuple[Column, ...]
    #: (x, baseline y below the header's top, text) in the bold font
    header: tuple[tuple[float, float, bytes], ...]
    #: the header's height, pt
    header_height: float
    pages: list[Page]

    def top(self, i: int) -> float:
        """Where page ``i``'s column header starts, pt from the top (below the heading on the first page)."""
        return self.geometry.top + (HEAD if i == 0 else 0.0)


def encode(text: str) -> bytes:
    """``text`` in WinAnsiEncoding; control characters and characters outside the encoding become "?"."""
    return text.translate(_CONTROLS).encode("cp1252", errors="replace")


def _widths(bold: bool, mono: bool) -> list[int]:
    return _MONO_WIDTHS if mono else _WIDTHS[bold]


def text_width(text: bytes, *, bold: bool = False, size: float | None = None, mono: bool = False) -> float:
    """The advance width of encoded ``text`` in pt (Helvetica at ``SIZE``, or Courier at ``MONO_SIZE`` with
    ``mono``)."""
    size = size or (MONO_SIZE if mono else SIZE)
    return (len(text) * 600 if mono else sum(map(_WIDTHS[bold].__getitem__, text))) * size / 1000


def wrap(text: bytes, width: float, *, bold: bool = False, size: float | None = None,
         mono: bool = False) -> list[bytes]:
    """``text`` broken into lines no wider than ``width`` pt (trailing spaces aside); joined, the lines are ``text``.

    A line breaks after the last space or punctuation that fits (see ``_BREAK_AFTER``), else between any two
    characters, so a name with no separator is wrapped too, never cut.
    """
    w = _widths(bold, mono)
    limit = width * 1000 / (size or (MONO_SIZE if mono else SIZE)) + 1e-6  # a cell exactly as wide as its column fits despite rounding
    if sum(map(w.__getitem__, text)) <= limit:
        return [text]
    lines: list[bytes] = []
    start, used, brk = 0, 0, -1
    for i, c in enumerate(text):
        cw = w[c]
        if used + cw > limit and i > start and c != 32:  # a space may hang past the edge: it draws nothing
            cut = brk + 1 if brk >= start else i
            lines.append(text[start:cut])
            start, brk = cut, -1  # no break opportunity lies between cut and i
            used = sum(map(w.__getitem__, text[start:i]))
        used += cw
        if c in _BREAK_AFTER:
            brk = i
    lines.append(text[start:])
    return lines


def _baseline(line_top: float) -> float:
    """The baseline of a line whose box starts at ``line_top``: the glyphs centred in the line height."""
    return line_top + LEADING / 2 + SIZE * 0.35


def _column_widths(natural: list[float], floor: list[float], text: list[bool], total: float,
                   flex: int = 0) -> list[float]:
    """Widths for columns that want ``natural`` pt: column ``flex`` (the kernel's) gets the rest, at least
    ``KERNEL_SHARE`` of ``total`` where the others can shrink (text columns first) to their ``floor``."""
    widths = list(natural)
    room = total * (1 - KERNEL_SHARE)
    others = [i for i in range(len(widths)) if i != flex]
    for group in ([i for i in others if text[i]], others):
        excess = sum(widths[i] for i in others) - room
        slack = sum(widths[i] - floor[i] for i in group if widths[i] > floor[i])
        if excess <= 0 or slack <= 0:
            continue
        k = min(1.0, excess / slack)
        for i in group:
            if widths[i] > floor[i]:
                widths[i] -= (widths[i] - floor[i]) * k
    widths[flex] = max(total - sum(widths[i] for i in others), MIN_COLUMN)
    return widths


def layout(headers: Sequence[tuple[str, bool | str]], cols: Sequence[Sequence[str]],
           geometry: Geometry | None = None, *, flex: int = 0, mono: Sequence[int] = (),
           hang: bool = False) -> Layout:
    """Place every row of the appendix on pages.

    ``headers``: (label, kind) as in the HTML tables, kind ``True`` for numbers (aligned right); column
    ``flex`` (the kernel name) takes the width the others leave; the columns in ``mono`` are set in Courier.
    ``hang``: a name longer than its column continues, below the row's other cells, across the whole width
    from its column to the right edge (a hanging indent), so a 200-character C++ name takes two lines, not
    four. ``cols``: the cells as plain (unescaped) text, one sequence per column. A row moves to the next
    page when it does not fit; a row taller than a whole page continues on the next.
    """
    g = geometry or Geometry()
    encoded = _encoded(cols, len(headers), flex)
    is_mono = [i in mono for i in range(len(headers))]
    head = [encode(label) for label, _ in headers]
    columns = _columns(headers, head, encoded, is_mono, g, flex)
    placer = _Placer()
    header: list[tuple[float, float, bytes]] = []
    head_lines = [wrap(h, c.width - 2 * HPAD, bold=True) for h, c in zip(head, columns, strict=True)]
    for c, lines in zip(columns, head_lines, strict=True):
        for k, line in enumerate(lines):
            placer(c, line, VPAD + k * LEADING, header, bold=True)
    header_height = 2 * VPAD + max(map(len, head_lines)) * LEADING
    pages = _pages(encoded, columns, is_mono, g, header_height, flex, hang, placer)
    return Layout(g, tuple(columns), tuple(header), header_height, pages)


def _encoded(cols: Sequence[Sequence[str]], ncol: int, flex: int) -> list[list[bytes]]:
    """Every cell encoded once per distinct value; no rows: one row that says "none" in column ``flex``."""
    encoded = []
    for col in cols:
        table = {v: encode(v) for v in dict.fromkeys(col)}
        encoded.append([table[v] for v in col])
    if not encoded or not encoded[0]:
        encoded = [[b"none" if i == flex else b""] for i in range(ncol)]
    return encoded


def _columns(headers: Sequence[tuple[str, bool | str]], head: list[bytes], encoded: list[list[bytes]],
             is_mono: list[bool], g: Geometry, flex: int) -> list[Column]:
    """The columns across the page: each wants its widest cell (or header word); the kernel column takes the rest."""
    head_word = [max(text_width(word, bold=True) for word in h.split(b" ")) for h in head]
    natural, floor = [], []
    for i in range(len(headers)):
        widest = max((text_width(v, mono=is_mono[i]) for v in dict.fromkeys(encoded[i])), default=0.0)
        natural.append(max(widest, head_word[i]) + 2 * HPAD)
        floor.append(max(head_word[i] + 2 * HPAD, MIN_COLUMN))
    total = g.width - g.left - g.right
    widths = _column_widths(natural, floor, [kind is not True for _, kind in headers], total, flex)
    columns, x = [], g.left
    for (_, kind), w in zip(headers, widths, strict=True):
        columns.append(Column(x, w, kind is True))
        x += w
    return columns


class _Placer:
    """Places one line of a cell: left in its column, or right for numbers (their widths cached: a column of
    numbers repeats the same few)."""

    def __init__(self) -> None:
        self.width_of: dict[bytes, float] = {}

    def __call__(self, col: Column, line: bytes, top: float, out: list[tuple[float, float, bytes]],
                 bold: bool = False) -> None:
        line = line.rstrip(b" ")
        if not line:
            return
        if col.right:  # numbers: never monospaced
            w = self.width_of.get(line) if not bold else None
            if w is None:
                w = text_width(line, bold=bold)
                if not bold:
                    self.width_of[line] = w
            xx = col.x + col.width - HPAD - w
        else:
            xx = col.x + HPAD
        out.append((xx, _baseline(top), line))


def _pages(encoded: list[list[bytes]], columns: list[Column], is_mono: list[bool], g: Geometry,
           header_height: float, flex: int, hang: bool, place: _Placer) -> list[Page]:
    """The rows wrapped in their columns and laid on pages, a new page where the next row does not fit."""
    ncol, nrow = len(columns), len(encoded[0])
    bottom = g.height - g.bottom
    full = int((bottom - g.top - header_height - 2 * VPAD) // LEADING)  # lines on a page without heading
    if full < 1 or bottom - g.top - HEAD - header_height - 2 * VPAD < LEADING:
        raise ValueError("the appendix's page has no room for a row below its header")
    pages = [Page()]
    body_top = g.top + HEAD + header_height
    y = body_top
    inner = [c.width - 2 * HPAD for c in columns]
    wide = g.width - g.right - columns[flex].x - 2 * HPAD  # a hanging name's lines below the other cells
    for r in range(nrow):
        cells = [wrap(encoded[i][r], inner[i], mono=is_mono[i]) for i in range(ncol)]
        if hang:
            beside = max((len(cells[i]) for i in range(ncol) if i != flex), default=1)
            if len(cells[flex]) > beside:
                cells[flex] = cells[flex][:beside] + wrap(b"".join(cells[flex][beside:]), wide, mono=is_mono[flex])
        nlines = max(map(len, cells))
        done = 0
        while done < nlines:
            fit = int((bottom - y - 2 * VPAD) // LEADING)
            rest = nlines - done
            if fit < 1 or (fit < rest and y > body_top and rest <= full):
                pages.append(Page())
                y = body_top = g.top + header_height
                continue
            take = min(fit, rest)
            page = pages[-1]
            for c, lines, m in zip(columns, cells, is_mono, strict=True):
                for k, line in enumerate(lines[done:done + take]):
                    place(c, line, y + VPAD + k * LEADING, page.mono if m else page.texts)
            y += 2 * VPAD + take * LEADING
            page.rules.append(y)
            done += take
    return pages


def pdf_string(text: bytes) -> bytes:
    """A PDF literal string: backslashes and parentheses escaped (the bytes are printable cp1252)."""
    return b"(" + text.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def page_stream(lay: Layout, i: int) -> bytes:
    """PDF content-stream operators that draw page ``i``: header band, rules, header and row text."""
    g, page = lay.geometry, lay.pages[i]
    top, h = lay.top(i), g.height
    x0, x1 = g.left, g.width - g.right
    band = h - top - lay.header_height
    out = [b"q",
           # the header's band and rule, as ``th`` in style.css (#e8ebef, #888)
           f"0.910 0.922 0.937 rg {x0:.2f} {band:.2f} {x1 - x0:.2f} {lay.header_height:.2f} re f".encode(),
           f"0.533 G 0.75 w {x0:.2f} {band:.2f} m {x1:.2f} {band:.2f} l S".encode(),
           b"0.867 G 0.5 w"]  # rules between rows, as ``td`` (#ddd)
    out += [f"{x0:.2f} {h - y:.2f} m {x1:.2f} {h - y:.2f} l".encode() for y in page.rules]
    out += [b"S", f"BT 0.067 g /{_FONT_BOLD} {SIZE:g} Tf".encode()]
    out += [f"1 0 0 1 {x:.2f} {h - top - y:.2f} Tm ".encode() + pdf_string(t) + b" Tj" for x, y, t in lay.header]
    out.append(f"/{_FONT} {SIZE:g} Tf".encode())
    out += [f"1 0 0 1 {x:.2f} {h - y:.2f} Tm ".encode() + pdf_string(t) + b" Tj" for x, y, t in page.texts]
    if page.mono:
        out.append(f"/{_FONT_MONO} {MONO_SIZE:g} Tf".encode())
        out += [f"1 0 0 1 {x:.2f} {h - y:.2f} Tm ".encode() + pdf_string(t) + b" Tj" for x, y, t in page.mono]
    out += [b"ET", b"Q"]
    return b"\n".join(out)


def _deref(pdf: pydyf.PDF, value: Any) -> Any:
    """The object behind an indirect reference (b"12 0 R") of a :class:`pydyf.PDF`, or ``value`` itself."""
    if isinstance(value, bytes | str):
        return pdf.objects[int(value.split()[0])]
    return value


def finisher(lay: Layout) -> Callable[[object, object], None]:
    """A WeasyPrint ``write_pdf`` finisher that draws ``lay`` on the document's last ``len(lay.pages)`` pages.

    Each page's own drawing is wrapped in q/Q so the appendix starts from the default coordinates; the two
    fonts join the pages' font resources.
    """
    import pydyf

    def finish(document: object, pdf: pydyf.PDF) -> None:
        kids = list(pdf.pages["Kids"][::3])
        targets = kids[len(kids) - len(lay.pages):]
        fonts = {}
        for name, base, widths in ((_FONT, "Helvetica", _WIDTHS[False]), (_FONT_BOLD, "Helvetica-Bold", _WIDTHS[True]),
                                   (_FONT_MONO, "Courier", _MONO_WIDTHS)):
            font = pydyf.Dictionary({"Type": "/Font", "Subtype": "/Type1", "BaseFont": f"/{base}",
                                     "Encoding": "/WinAnsiEncoding", "FirstChar": 32, "LastChar": 255,
                                     "Widths": pydyf.Array(widths[32:])})
            pdf.add_object(font)
            fonts[name] = font.reference
        for i, number in enumerate(targets):
            page = pdf.objects[number]
            stream = _deref(pdf, page["Contents"])
            stream.stream.insert(0, b"q")
            stream.stream += [b"Q", page_stream(lay, i)]
            _deref(pdf, _deref(pdf, page["Resources"])["Font"]).update(fonts)

    return finish


__all__ = ["HEAD", "PAPERS", "Column", "Geometry", "Layout", "Page", "encode", "finisher", "layout", "page_stream",
           "text_width", "wrap"]
