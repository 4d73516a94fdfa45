"""Perturbations: the changes real files go through on their way to a user, written for CSV text in general (each
row's cells with their quoting, re-emitted), never for one file; JSON and console text get the ones that apply to
them (a shell's UTF-16 and a classic Mac's lone ``\r`` reach console text too). Used by tests/test_perturb.py.

A file is a :class:`Doc`: its lines, line endings, BOM and compression kept apart, and where its CSV table is (the
first line of three or more column names followed by a row). Each perturbation takes a Doc and returns the changed
Doc, or None where it does not apply to that file (no number to re-type, no name with a comma, ...).
"""

from __future__ import annotations

import bz2
import functools
import gzip
import lzma
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

# --------------------------------------------------------------------------------------- a file as lines

#: JSON traces larger than this are not perturbed: the same code reads every trace of a format, and the smaller
#: traces of each JSON format (samples and fixtures) cover it; each read of a large one costs seconds
BIG_JSON = 4_000_000

_FIELD = re.compile(r'"((?:[^"]|"")*)"|([^,]*)')
_NUMBER = re.compile(r"^[+-]?(\d+)(\.\d+)?$")
_SEPARATED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
#: a cell: (text, quoting) — True: quoted, None: quoted where it must be (a comma, quote or newline), False: never
Cell = tuple[str, "bool | None"]


def cells(line: str) -> list[Cell]:
    """A CSV line's fields, each with whether it was quoted (the csv module forgets that)."""
    return list(_cells(line))


@functools.lru_cache(maxsize=1 << 16)  # the same lines are perturbed many ways
def _cells(line: str) -> tuple[Cell, ...]:
    if '"' not in line:
        return tuple((v, None) for v in line.split(","))
    out: list[Cell] = []
    pos = 0
    while True:
        m = _FIELD.match(line, pos)
        quoted = m.group(1) is not None
        value, end = (m.group(1).replace('""', '"'), m.end()) if quoted else (m.group(2), m.end())
        if end < len(line) and line[end] != ",":  # a stray quote: the rest of the field as it is
            nxt = line.find(",", end)
            end = len(line) if nxt < 0 else nxt
            value, quoted = line[m.start():end], False
        out.append((value, True if quoted else None))
        if end >= len(line):
            return tuple(out)
        pos = end + 1


_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def emit(row: list[Cell]) -> str:
    return ",".join('"' + v.replace('"', '""') + '"' if q or (q is None and _NEEDS_QUOTES.search(v)) else v
                    for v, q in row)


def _looks_like_header(row: list[Cell]) -> bool:
    """Three or more column names: each holds a letter, no number alone, no run of spaces (a console table) and no
    space at either end (a log line with commas)."""
    vals = [v for v, _ in row]
    return (len(vals) >= 3 and all(re.search(r"[A-Za-z]", v) and "  " not in v and v == v.strip() for v in vals)
            and not any(_NUMBER.match(v) for v in vals) and not vals[0].startswith("=="))


@dataclass(frozen=True)
class Doc:
    """One input file as lines (endings, BOM and compression kept apart), and where its CSV table is."""

    name: str
    kind: str  #: csv | json | text
    lines: tuple[str, ...]
    ends: tuple[str, ...]  #: each line's ending ("\n", "\r\n", "" for the last without one)
    bom: bool
    gz: bool
    header: int | None = None  #: the table's header line (csv)
    last: int | None = None  #: the table's last row (csv)
    size: int = 0  #: bytes, decompressed
    utf16: bool = False  #: written as UTF-16 (little-endian, with its byte-order mark) instead of UTF-8
    cp1252: bool = False  #: written in Windows-1252 (a spreadsheet's "CSV" on Windows) instead of UTF-8
    mac_roman: bool = False  #: written in Mac OS Roman (a classic Mac spreadsheet's "CSV (Macintosh)")
    cp1251: bool = False  #: written in Windows-1251 (a spreadsheet's "CSV" on a Russian or Ukrainian Windows)
    page: str = ""  #: written in this double-byte code page (gbk, cp932: a Chinese or Japanese Windows' "CSV")
    packed: str = ""  #: compressed with this codec of :data:`CODECS` (bzip2, xz, Zstandard) instead of gzip
    zeros: int = 0  #: zero bytes at the end of the file (after a compressed stream: the file on disk)

    @classmethod
    def of(cls, name: str, data: bytes) -> Doc:
        gz = data[:2] == b"\x1f\x8b"
        if gz:
            data = gzip.decompress(data)
            name = name.removesuffix(".gz")
        text = data.decode("utf-8", errors="surrogateescape")
        bom = text.startswith("\ufeff")
        text = text.removeprefix("\ufeff")
        if text.lstrip()[:1] in "[{" and len(data) > BIG_JSON:  # only its size is used
            return cls(name, "json", (text,), ("",), bom, gz, size=len(data))
        parts = text.split("\n")
        lines = tuple(p.removesuffix("\r") for p in parts)
        ends = (*("\r\n" if p.endswith("\r") else "\n" for p in parts[:-1]), "")
        if lines[-1] == "":  # the final newline
            lines, ends = lines[:-1], ends[:-1]
        kind, header, last = "text", None, None
        if text.lstrip()[:1] in "[{":
            kind = "json"
        else:
            for i in range(len(lines) - 1):
                if _looks_like_header(cells(lines[i])) and len(cells(lines[i + 1])) >= 3:
                    kind, header = "csv", i
                    last = max(j for j in range(i, len(lines)) if len(cells(lines[j])) >= 2)
                    break
        return cls(name, kind, lines, ends, bom, gz, header, last, len(data))

    def data(self) -> tuple[bytes, str]:
        if len(set(self.ends[:-1])) <= 1:  # one kind of line ending (fast for large files)
            sep = self.ends[0] if len(self.ends) > 1 else "\n"
            text = sep.join(self.lines) + self.ends[-1]
        else:
            text = "".join(a + b for a, b in zip(self.lines, self.ends, strict=True))
        text = ("\ufeff" if self.bom else "") + text
        raw = (b"\xff\xfe" + text.encode("utf-16-le") if self.utf16 else text.encode("cp1252") if self.cp1252
               else text.encode("mac_roman") if self.mac_roman else text.encode("cp1251") if self.cp1251
               else text.encode(self.page) if self.page
               else text.encode("utf-8", errors="surrogateescape"))
        zeros = b"\x00" * self.zeros
        if self.packed:
            return CODECS[self.packed](raw) + zeros, f"{self.name}.{self.packed}"
        return (gzip.compress(raw, mtime=0) + zeros, self.name + ".gz") if self.gz else (raw + zeros, self.name)

    @property
    def rows(self) -> range:
        return range(self.header, self.last + 1)

    def map_rows(self, fn: Callable[[int, list[Cell]], list[Cell]]) -> Doc:
        """Each table row (header included) through ``fn(index, cells)``; lines with fewer than two fields
        (noise inside the table) stay as they are."""
        lines = list(self.lines)
        for i in self.rows:
            row = cells(lines[i])
            if len(row) >= 2:
                lines[i] = emit(fn(i, row))
        return replace(self, lines=tuple(lines))

    def width(self) -> int:
        return len(cells(self.lines[self.header]))


# ------------------------------------------------------------------------------------------ perturbations
# Each takes a Doc and returns the perturbed Doc, or None where it does not apply to that file.



def is_big(d: Doc) -> bool:
    return d.kind == "json" and d.size > BIG_JSON


def crlf(d: Doc) -> Doc | None:
    if is_big(d):
        return None
    windows = sum(e == "\r\n" for e in d.ends) > len(d.ends) / 2
    return replace(d, ends=tuple(("\n" if windows else "\r\n") if e else e for e in d.ends))


def bom(d: Doc) -> Doc | None:
    if is_big(d):
        return None
    return replace(d, bom=not d.bom)


def no_final_newline(d: Doc) -> Doc | None:
    if not d.ends[-1] or is_big(d):
        return None
    return replace(d, ends=(*d.ends[:-1], ""))


def _minimal(d: Doc) -> Doc | None:
    return d.map_rows(lambda i, row: [(v, None) for v, _ in row]) if d.kind == "csv" else None


def spreadsheet(d: Doc) -> Doc | None:
    """A spreadsheet round-trip all at once: minimal quoting, CRLF, a BOM, no final newline."""
    if d.kind != "csv":
        return None
    out = _minimal(d)
    return replace(out, ends=(*("\r\n",) * (len(d.ends) - 1), ""), bom=True)


def _retype(d: Doc, fn: Callable[[str], str | None]) -> Doc | None:
    if d.kind != "csv":
        return None
    changed = False

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        nonlocal changed
        if i == d.header:
            return row
        out = []
        for v, q in row:
            new = fn(v)
            changed |= new is not None
            out.append((v, q) if new is None else (new, q))
        return out

    out = d.map_rows(row_fn)
    return out if changed else None


def with_separators(v: str) -> str | None:
    m = _NUMBER.match(v)
    if not m or len(m.group(1)) < 4:
        return None
    sign = "-" if v.startswith("-") else ""
    return f"{sign}{int(m.group(1)):,}{m.group(2) or ''}"


def thousands(d: Doc) -> Doc | None:
    """Numbers of four or more digits re-typed with thousands separators (1234567 → "1,234,567", quoted)."""
    return _retype(d, with_separators)


def no_thousands(d: Doc) -> Doc | None:
    """Numbers printed with thousands separators re-typed without them."""
    return _retype(d, lambda v: v.replace(",", "") if _SEPARATED.match(v) else None)


def as_scientific(v: str) -> str | None:
    m = _NUMBER.match(v)
    if not m or len((m.group(1) + (m.group(2) or "")[1:]).lstrip("0")) > 15:
        return None  # a spreadsheet keeps 15 digits: it would lose the rest (a ns timestamp's last ones)
    x = float(v)
    if not (abs(x) >= 1e6 or 0 < abs(x) < 1e-3):
        return None
    text = np.format_float_scientific(x, unique=True, exp_digits=2)
    return text.replace(".e", ".0e")


def scientific(d: Doc) -> Doc | None:
    """Large and small numbers re-typed as a spreadsheet shows them: 1234567 → 1.234567e+06 (the same value)."""
    return _retype(d, as_scientific)


_NAME_COLUMN = re.compile(r"^(kernel[ _]?name|name|kernel)$", re.I)


def _name_columns(d: Doc) -> list[int]:
    """The header's kernel-name columns (``Kernel Name``, ``Name``, ``kernel``), in order."""
    return [j for j, (v, _) in enumerate(cells(d.lines[d.header])) if _NAME_COLUMN.match(v.strip())]


def names_unquoted(d: Doc) -> Doc | None:
    """Kernel names left unquoted: a name holding commas spills over several fields."""
    if d.kind != "csv":
        return None
    cols = _name_columns(d)
    hit = False

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        nonlocal hit
        if i == d.header:
            return row
        for j in cols:
            if j < len(row) and "," in row[j][0]:
                hit = True
                row[j] = (row[j][0], False)
        return row

    out = d.map_rows(row_fn)
    return out if hit else None


PREAMBLE = ("Loading model from ./checkpoints (3 shards)", "batch 8, seq 128, warm-up: 3 iterations, timed: 10", "")
TRAILER = ("", "Done: 10 iterations, 3.21 ms/iter, 311.5 samples/s", "exit status 0")


def program_output(d: Doc) -> Doc | None:
    """The program's own output printed before and after the table (a tee'd log)."""
    if d.kind == "json":
        return None
    n0, n1 = len(PREAMBLE), len(TRAILER)
    ends = (*("\r\n" if d.ends[0] == "\r\n" else "\n",) * n0, *d.ends[:-1], d.ends[-1] or "\n",
            *("\r\n" if d.ends[0] == "\r\n" else "\n",) * (n1 - 1), d.ends[-1])
    shift = {"header": d.header + n0, "last": d.last + n0} if d.kind == "csv" else {}
    return replace(d, lines=(*PREAMBLE, *d.lines, *TRAILER), ends=ends, **shift)


def _spilled(d: Doc) -> bool:
    """Whether some row holds more fields than the header (a name with unquoted commas): where its columns are
    cannot be told here, so the columns are not moved."""
    width = d.width()
    return any(len(r) > width and any(v.strip() for v, _ in r[width:]) for r in map(cells, d.lines[d.header:d.last + 1]))


def _reshape(d: Doc, fn: Callable[[list[Cell]], list[Cell]]) -> Doc | None:
    if d.kind != "csv" or _spilled(d):
        return None
    width = d.width()

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        if len(row) < width:
            row = row + [("", None)] * (width - len(row))
        return fn(row[:width]) + row[width:]

    return d.map_rows(row_fn)


def reorder(d: Doc) -> Doc | None:
    """The columns in the reverse order."""
    return _reshape(d, lambda row: row[::-1])


def insert_column(d: Doc) -> Doc | None:
    """An unknown column in the middle (newer ncu versions add ``Body Item Label``); a repeated header gets it too."""
    if d.kind != "csv" or _spilled(d):
        return None
    at = d.width() // 2
    header = cells(d.lines[d.header])

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        label = "Body Item Label" if row == header else "item 1"
        row = row + [("", None)] * (at - len(row))
        return [*row[:at], (label, row[0][1]), *row[at:]]

    return d.map_rows(row_fn)


def mac_cr(d: Doc) -> Doc | None:
    """Lines ended by a carriage return alone, as classic Mac spreadsheets save "CSV (Macintosh)"."""
    if d.kind == "json":
        return None
    return replace(d, ends=tuple("\r" if e else e for e in d.ends))


def double_cr(d: Doc) -> Doc | None:
    """CRLF text written again through a CRLF conversion: lines end ``\\r\\r\\n`` (Python's csv module on Windows
    into a file opened without ``newline=""``), which shows as a blank line after each row."""
    if d.kind == "json":
        return None
    return replace(d, ends=tuple("\r\r\n" if e else e for e in d.ends))


def _readable(d: Doc) -> bool:
    """Text a re-encoding keeps (no byte that is not UTF-8 in it)."""
    return not any(re.search("[\udc80-\udcff]", line) for line in d.lines)


def utf16(d: Doc) -> Doc | None:
    """A profiler's output redirected by Windows PowerShell (``ncu --csv ... > out.csv``): UTF-16 with its
    byte-order mark, CRLF."""
    if d.kind == "json" or not _readable(d):
        return None
    return replace(d, utf16=True, bom=False, ends=tuple("\r\n" for _ in d.ends))


#: letters outside ASCII that Windows-1252 holds, added to kernel names by :func:`accented`
ACCENTS = " µs·é"


#: words in a Cyrillic script, as a user names a range or a kernel on a Russian Windows (Windows-1251 holds them)
CYRILLIC = " внимание слой"
#: words in Chinese and in Japanese, as a user names a range or a kernel on a Chinese or Japanese Windows
CHINESE = " 注意力 输出层"
JAPANESE = " 注意層 データ"


def accented(d: Doc, letters: str = ACCENTS, page: str = "cp1252") -> Doc | None:
    """Every kernel name with ``letters`` outside ASCII that the code page ``page`` holds (a user's note, a
    spreadsheet's autocorrect), as UTF-8 without a BOM; with ``cp1252=True`` (``cp1251=True``) it is the same table
    saved by a spreadsheet on Windows as "CSV"."""
    cols = _name_columns(d) if d.kind == "csv" else []
    if not cols or not _readable(d):
        return None
    try:
        "".join(d.lines).encode(page)
    except UnicodeEncodeError:  # letters that code page lacks (a console's ✓): no spreadsheet saved it so
        return None

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        if not _looks_like_header(row):  # the table's header, or another table's further down
            for j in cols:
                if j < len(row) and row[j][0].strip():
                    row[j] = (row[j][0] + letters, row[j][1])
        return row

    return replace(d.map_rows(row_fn), bom=False)


def _quoted_for(sep: str) -> Callable[[str], str]:
    """A spreadsheet's quoting of a field between ``sep``: only where it holds ``sep``, a quote or a line break."""
    must = re.compile(f'[{re.escape(sep)}"\r\n]')
    return lambda v: '"' + v.replace('"', '""') + '"' if must.search(v) else v


def _separated(d: Doc, sep: str, number: Callable[[str], str]) -> Doc:
    """The table's rows with ``sep`` between fields, each cell after the header through ``number``; other lines
    (program output) as they were."""
    quote = _quoted_for(sep)
    lines = list(d.lines)
    for i in d.rows:
        row = cells(lines[i])
        if len(row) >= 2:
            lines[i] = sep.join(quote(v if i == d.header else number(v)) for v, _ in row)
    return replace(d, lines=tuple(lines))


def tabs_utf16(d: Doc) -> Doc | None:
    """A spreadsheet's "Unicode text": tabs between fields, UTF-16 with its byte-order mark, CRLF."""
    if d.kind != "csv" or not _readable(d):
        return None
    out = _separated(d, "\t", lambda v: v)
    return replace(out, utf16=True, bom=False, ends=tuple("\r\n" for _ in d.ends))


_SCIENTIFIC = re.compile(r"^[+-]?\d+\.\d+[eE][+-]?\d+$")


def decimal_comma(v: str) -> str:
    """A number as a spreadsheet in a decimal-comma locale writes it: 0.25 → 0,25, "1,234.5" → 1234,5,
    1.5e+06 → 1,5e+06; any other cell as it is."""
    if _SEPARATED.match(v):
        v = v.replace(",", "")
    if _NUMBER.match(v) or _SCIENTIFIC.match(v):
        return v.replace(".", ",")
    return v


def semicolons(d: Doc) -> Doc | None:
    """A spreadsheet's CSV in a decimal-comma locale (German, French, ...): semicolons between fields, decimal
    commas, CRLF, a BOM."""
    if d.kind != "csv":
        return None
    out = _separated(d, ";", decimal_comma)
    return replace(out, bom=True, ends=(*("\r\n",) * (len(d.ends) - 1), d.ends[-1] and "\r\n"))


def _pad(d: Doc, header: bool) -> Doc | None:
    if d.kind != "csv":
        return None
    lines = list(d.lines)
    for i in d.rows:
        if len(cells(lines[i])) >= 2 and (header or i != d.header):
            lines[i] += ",,"
    return replace(d, lines=tuple(lines))


def padded_columns(d: Doc) -> Doc | None:
    """Two empty columns right of the table, on every row and the header: a spreadsheet pads each row to the widest
    one (a note typed beside the table, or a cell once used there)."""
    return _pad(d, header=True)


def trailing_commas(d: Doc) -> Doc | None:
    """Every row but the header ended by two more commas, as a script that writes ``field,`` for each field does."""
    return _pad(d, header=False)


def sorted_by_name(d: Doc) -> Doc | None:
    """The table's rows sorted by kernel name as a spreadsheet sorts them: text ascending, case ignored, empty
    cells last, so a units row under the header moves to the bottom. The table ends at its first line of fewer
    than two fields (another report below it stays where it is)."""
    if d.kind != "csv":
        return None
    name = next(iter(_name_columns(d)), None)
    end = _table_end(d)
    if name is None or end - d.header < 3:
        return None

    def key(line: str) -> tuple[bool, str]:
        row = cells(line)
        v = row[name][0].strip() if name < len(row) else ""
        return (not v, v.casefold())

    rows = sorted(d.lines[d.header + 1:end], key=key)
    if rows == list(d.lines[d.header + 1:end]):
        return None
    return replace(d, lines=(*d.lines[:d.header + 1], *rows, *d.lines[end:]))


def sep_hint(d: Doc) -> Doc | None:
    """``sep=,`` on a line of its own above everything: the hint that makes a spreadsheet in a semicolon locale
    split a comma file, written by scripts that prepare a file for one."""
    if d.kind != "csv":
        return None
    return replace(d, lines=("sep=,", *d.lines), ends=(d.ends[0] or "\n", *d.ends), header=d.header + 1,
                   last=d.last + 1)


def pandas_index(d: Doc) -> Doc | None:
    """pandas' index as the first column: a table read with ``pd.read_csv`` and saved with ``df.to_csv(path)``,
    which writes the index unless told ``index=False``: an empty first name, each row numbered from 0 (a units row
    under the header is a row to pandas)."""
    if d.kind != "csv":
        return None
    counter = iter(range(len(d.lines)))
    return d.map_rows(lambda i, row: [("" if i == d.header else str(next(counter)), None), *row])


_WHOLE = re.compile(r"^[+-]?\d{1,15}$")


def pandas_floats(d: Doc) -> Doc | None:
    """Whole numbers written as floats (``3`` → ``3.0``) in each column that also has an empty cell, as pandas
    writes a column it read with a gap (a raw page's units row leaves the ``ID`` column one): ``pd.read_csv`` then
    ``df.to_csv``."""
    if d.kind != "csv":
        return None
    width = d.width()
    rows = [v for v in (cells(d.lines[i]) for i in range(d.header + 1, d.last + 1)) if len(v) == width]
    gaps = {j for j in range(width) if any(not r[j][0].strip() for r in rows)
            and any(_WHOLE.match(r[j][0].strip()) for r in rows)
            and all(not r[j][0].strip() or _WHOLE.match(r[j][0].strip()) or r[j][0].strip()[:1].isalpha() for r in rows)}
    if not gaps:
        return None
    return d.map_rows(lambda i, row: row if i == d.header or len(row) != width else [
        (v.strip() + ".0" if j in gaps and _WHOLE.match(v.strip()) else v, q) for j, (v, q) in enumerate(row)])


def _fifteen(v: str) -> str | None:
    s = v.strip()
    if not (len(s) > 15 and s.isdigit()):
        return None
    kept = str(round(int(s), 15 - len(s)))
    return kept if kept != s else None


def fifteen_digits(d: Doc) -> Doc | None:
    """Whole numbers of more than 15 digits kept to 15 significant digits and written out with zeros after (a
    spreadsheet holds a double's 15 digits; a column formatted as a number shows them so): ns timestamps since boot
    or the epoch lose their last digits. Not in :data:`PERTURBATIONS`: the times change, by design (see
    test_perturb)."""
    if d.kind != "csv":
        return None
    lines, changed = list(d.lines), False
    for i in d.rows:
        row = cells(lines[i])
        kept = [_fifteen(v) for v, _ in row]
        if any(kept):
            changed = True
            lines[i] = emit([(k or v, q) for (v, q), k in zip(row, kept, strict=True)])
    return replace(d, lines=tuple(lines)) if changed else None


def _table_end(d: Doc) -> int:
    """The line after the table's first run of rows: its first line of fewer than two fields (another report below
    it stays where it is)."""
    return next((i for i in range(d.header + 1, d.last + 1) if len(cells(d.lines[i])) < 2), d.last + 1)


def _between_rows(d: Doc, line: Callable[[Doc], str]) -> Doc | None:
    """``line(d)`` inserted half-way down the table, between two of its rows."""
    if d.kind != "csv":
        return None
    end = _table_end(d)
    if end - d.header < 3:
        return None
    at = (d.header + 1 + end) // 2
    lines, ends = list(d.lines), list(d.ends)
    lines.insert(at, line(d))
    ends.insert(at, d.ends[at - 1] or "\n")
    return replace(d, lines=tuple(lines), ends=tuple(ends), last=d.last + 1)


def blank_line(d: Doc) -> Doc | None:
    """An empty line between two rows of the table: an editor's stray Return, or rows pasted from two places."""
    return _between_rows(d, lambda d: "")


def empty_row(d: Doc) -> Doc | None:
    """A row of empty fields between two rows of the table: a spreadsheet's blank row (a row whose content was
    deleted) saved as commas."""
    return _between_rows(d, lambda d: "," * (d.width() - 1))


_FIGURE = re.compile(r"^[+-]?[\d,]*\.?\d+([eE][+-]?\d+)?$")


def totals_row(d: Doc) -> Doc | None:
    """A totals row under the table, as a spreadsheet user adds one: "Total" in the name column and, in each column
    whose cells are mostly numbers, their sum (``=SUM(...)``: text cells such as a units row skipped)."""
    if d.kind != "csv":
        return None
    head = [v for v, _ in cells(d.lines[d.header])]
    name = next(iter(_name_columns(d)), None)
    rows = [r for r in ([v for v, _ in cells(d.lines[i])] for i in range(d.header + 1, d.last + 1))
            if len(r) == len(head) and r != head]
    if name is None or not rows:
        return None
    out = []
    for j in range(len(head)):
        col = [r[j].strip() for r in rows]
        figures = [float(v.replace(",", "")) for v in col if _FIGURE.match(v)]
        out.append("Total" if j == name else repr(sum(figures)) if figures and 2 * len(figures) >= len(col) else "")
    lines, ends = list(d.lines), list(d.ends)
    lines.insert(d.last + 1, emit([(v, None) for v in out]))
    ends.insert(d.last + 1, d.ends[d.last] or "\n")
    return replace(d, lines=tuple(lines), ends=tuple(ends), last=d.last + 1)


def gzipped(d: Doc) -> Doc | None:
    """Compressed (or, where the sample is compressed, decompressed)."""
    if is_big(d):
        return None
    return replace(d, gz=not d.gz)


def _zstd(raw: bytes) -> bytes:
    import pyarrow as pa

    return pa.compress(raw, codec="zstd", asbytes=True)


#: the other compressions files are shared in (``xz -k``, ``bzip2``, ``zstd``), by the ending each tool gives
CODECS: dict[str, Callable[[bytes], bytes]] = {"bz2": bz2.compress, "xz": lzma.compress, "zst": _zstd}


def recompressed(d: Doc) -> Doc | None:
    """Compressed with bzip2, xz or Zstandard instead (one codec per file, chosen by its name), as a file is
    shared to save space."""
    if is_big(d):
        return None
    return replace(d, gz=False, packed=list(CODECS)[zlib.crc32(d.name.encode()) % len(CODECS)])


def zero_tail(d: Doc) -> Doc | None:
    """Zero bytes after the content: what a crash (a file system that had allocated the blocks but not written
    them) or an interrupted copy leaves at a file's end."""
    if is_big(d) or d.utf16:
        return None
    return replace(d, zeros=4096)


def truncated(d: Doc) -> Doc | None:
    """A partial copy: the file ends half-way through its table's last row (a CSV) or at 60% (a JSON trace)."""
    if is_big(d):
        return None
    if d.kind == "json":
        text = "\n".join(d.lines)
        cut = text[: int(len(text) * 0.6)]
        lines = tuple(cut.split("\n"))
        return replace(d, lines=lines, ends=(*("\n",) * (len(lines) - 1), ""))
    if d.kind != "csv" or d.last == d.header:
        return None
    line = d.lines[d.last]
    return replace(d, lines=(*d.lines[: d.last], line[: len(line) // 2]), ends=(*d.ends[: d.last], ""))


def without_last_row(d: Doc) -> Doc:
    """What a truncated copy can still give: the file without its table's last row."""
    return replace(d, lines=d.lines[: d.last] + d.lines[d.last + 1:], ends=d.ends[: d.last] + d.ends[d.last + 1:])


#: the changes each file goes through (minimal quoting alone is not run: ``spreadsheet`` is minimal quoting with the
#: line endings, BOM and final newline that are also run alone; each read costs time on a 2-core machine)
PERTURBATIONS: dict[str, Callable[[Doc], Doc | None]] = {
    f.__name__: f for f in (crlf, bom, no_final_newline, spreadsheet, thousands, no_thousands, scientific,
                            names_unquoted, program_output, truncated, reorder, insert_column, gzipped, recompressed, mac_cr,
                            double_cr, utf16, tabs_utf16, semicolons, totals_row, sorted_by_name, padded_columns,
                            trailing_commas, blank_line, empty_row, sep_hint, zero_tail,
                            pandas_index, pandas_floats)}
