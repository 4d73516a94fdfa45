"""An Nsight Compute CSV as some other program wrote it back, rewritten as ncu writes it, so that one reader (fast on
ncu's own form) reads both.

A spreadsheet saves the table with quotes only where a field needs them, may move columns, and a script may leave
kernel names unquoted, so that a name holding commas spills over several fields. The header is found by its column
names (``ID``, ``Process ID``, ``Kernel Name``) in any order and quoting; every row is split with a CSV parser, a
spilled name or ``(256, 1, 1)`` is put back together by what it must look like (:func:`~.columns.unspill`: brackets
that balance, a space after each comma inside), a metric value split at its thousands separators is joined again,
``ID`` and ``Process ID`` are moved to the front and every field is quoted. A line that is no row (program output,
ncu's own ``==PROF==`` lines) stays as it was, a row that cannot be put back is left out and said, and every line
keeps its number.
"""

from __future__ import annotations

import csv
import io
import re

import pyarrow as pa
import pyarrow.csv as pcsv

from .. import filemap
from .columns import header_with, unspill

#: an ncu header line in any order and quoting
ANY_HEADER = header_with("ID", "Process ID", "Kernel Name")
_LEAD = ("ID", "Process ID")
_WHOLE = re.compile(r"^\s*\d{1,3}(?:,?\d{3})*\s*$")  # a launch id (a spreadsheet may group its digits)


#: a separator with a quote on one side only: a field of this line is not quoted (ncu quotes every one)
_HALF_QUOTED = re.compile(r'(?:",(?!")|(?<!"),")')


def _quoted(fields: list[str]) -> str:
    return '"' + '","'.join(f.replace('"', '""') if '"' in f else f for f in fields) + '"'


def canonical(data: bytes) -> tuple[bytes, list[tuple[int, str]]] | None:
    """``(data with its ncu table rewritten as ncu writes it, [(line, why) of rows that cannot be put back]``; None
    where no ncu header is found by name or the rewrite changes nothing. A row that cannot be put back (a name or a
    value whose commas leave its end unknown) becomes a blank line, said in the list."""
    text = data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    m = ANY_HEADER.search(text)
    if m is None:
        return None
    lines = text[m.start():].split("\n")
    header = [h.strip() for h in _split(lines[0]) or []]
    if not all(c in header for c in (*_LEAD, "Kernel Name")):
        return None
    first = text.count("\n", 0, m.start()) + 1
    order = [header.index(c) for c in _LEAD] + [i for i, c in enumerate(header) if c not in _LEAD]
    keep = order == list(range(len(header)))  # ID and Process ID lead already
    lay = _Layout(header)
    ids = header.index("ID")
    out: list[str] = []
    problems: list[tuple[int, str]] = []
    after_header = True  # the raw page's units row follows its header
    for n, line in enumerate(lines, start=first):
        fields = _split(line) if line.strip() else None
        if fields is None:
            out.append(line)
            continue
        if len(fields) == len(header) and fields[0].strip() == header[0] and [f.strip() for f in fields] == header:
            out.append(_quoted([header[i] for i in order]))
            after_header = True
            continue
        fixed, why = _row(fields, lay, line.startswith('"') and not _HALF_QUOTED.search(line))
        if fixed is None or not (after_header or _WHOLE.match(fixed[ids])):
            if why and _WHOLE.match(fields[0] if fields else ""):
                problems.append((n, why))
                line = ""  # a row that cannot be read right: left out, said
            out.append(line)  # else not a row: program output, ncu's own lines
            after_header = False
            continue
        after_header = False
        out.append(_quoted(fixed if keep else [fixed[i] for i in order if i < len(fixed)] + fixed[len(header):]))
    new = (text[:m.start()] + "\n".join(out)).encode("utf-8")
    return None if new == data else (new, problems)


def requoted(data: bytes) -> bytes | None:
    """What :func:`canonical` makes of a table that another program saved as plain CSV (quotes only where needed,
    columns in any order, CRLF, a BOM) when nothing in it needs putting back: every line from the header to the end
    a row as wide as the header, but for ncu's own lines after it (``==PROF==``, kept as they are). pyarrow's
    multi-threaded reader reads it, its writer quotes every field, ``ID`` and ``Process ID`` first: ~3x less CPU and
    half the memory of the line-by-line rewrite (~13 µs a line). None where the table is not that simple (a row
    wider or narrower than the header: a name that spilled over its commas, program output, a row cut short; bytes
    that are not UTF-8): :func:`canonical` then rewrites it line by line. The caller still checks what was read for
    names cut inside their brackets (a spill that kept the width)."""
    bom = 3 if data[:3] == b"\xef\xbb\xbf" else 0
    head = bytes(data[bom: bom + (4 << 20)]).decode("utf-8", errors="replace")
    m = ANY_HEADER.search(head)
    if m is None:
        return None
    start = bom + len(head[:m.start()].encode("utf-8"))
    header = [h.strip() for h in _split(m.group(0).rstrip("\r")) or []]
    line = m.group(0).encode("utf-8")
    if data[start: start + len(line)] != line or not all(c in header for c in (*_LEAD, "Kernel Name")):
        return None  # the head held bytes that are not UTF-8 before the header: the line-by-line rewrite decides
    order = [header.index(c) for c in _LEAD] + [i for i, c in enumerate(header) if c not in _LEAD]
    names = [f"c{i}" for i in range(len(header))]
    end = _rows_end(data, start)
    try:
        table = pcsv.read_csv(pa.BufferReader(pa.py_buffer(data)[start:end]), read_options=pcsv.ReadOptions(
            column_names=names, skip_rows=1, block_size=4 << 20), convert_options=pcsv.ConvertOptions(
            column_types={n: pa.string() for n in names}, quoted_strings_can_be_null=False))
    except pa.ArrowException:
        return None  # a row of another width, not UTF-8, nothing after the header
    filemap.release(data, start, len(data))  # a mapped file: its pages, all read
    table = pa.Table.from_arrays([table.column(i) for i in order], names=[header[i] for i in order])
    out = io.BytesIO()
    out.write(_text(data[bom:start]).encode("utf-8"))
    pcsv.write_csv(table, out, pcsv.WriteOptions(quoting_style="all_valid"))
    del table
    pa.default_memory_pool().release_unused()
    out.write(_text(data[end:]).encode("utf-8"))
    return out.getvalue()


def _text(raw: bytes) -> str:
    return bytes(raw).decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _rows_end(data: bytes, start: int, most: int = 1000) -> int:
    """Where the rows end: before ncu's own lines after the table (up to ``most``: ``==PROF== Disconnected``,
    ``==WARNING==``). Other text there is left in: the row count then differs and the line-by-line rewrite decides
    (a row cut short must be said, not dropped)."""
    end = len(data)
    for _ in range(most):
        stop = end
        while stop > start and data[stop - 1: stop] in (b"\n", b"\r", b" ", b"\t"):
            stop -= 1
        nl = data.rfind(b"\n", start, stop)
        if nl < 0 or data[nl + 1: nl + 3] != b"==":
            return end
        end = nl + 1
    return end


#: columns whose values hold commas between brackets: a kernel name, ``(256, 1, 1)``
_BRACKETED = ("Kernel Name", "Block Size", "Grid Size")
_GROUP = re.compile(r"^\d{3}(?:\.\d*)?$")  # the rest of a number after a thousands separator
_LEADING = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})*$")


class _Layout:
    """Where a header's columns are, for :func:`_row`."""

    def __init__(self, header: list[str]):
        self.width = len(header)
        self.id = header.index("ID")
        #: the columns whose values may spill, left to right (each put back shifts the ones after it into place):
        #: bracketed ones, and the details page's Metric Value (a number with thousands separators)
        self.spilling = sorted((header.index(c), c) for c in (*_BRACKETED, "Metric Value") if c in header)
        self.details = "Metric Value" in header


def _row(fields: list[str], lay: _Layout, quoted: bool = False) -> tuple[list[str] | None, str]:
    """A row's fields put back into the header's columns (None where that cannot be done, and why): bracketed
    values that spilled over several fields joined (:func:`~.columns.unspill`), and on the details page a metric
    value whose thousands separators split it (``13`` ``883.09``) joined back. A row whose every field is quoted
    (``quoted``) has nothing spilled, whatever its name looks like (a name ncu cut short may leave a bracket open)."""
    for at, col in () if quoted else lay.spilling:
        if col == "Metric Value":
            while at + 1 < len(fields) and _LEADING.match(fields[at]) and _GROUP.match(fields[at + 1]):
                fields = [*fields[:at], fields[at] + "," + fields[at + 1], *fields[at + 2:]]
            continue
        got = unspill(fields, at)
        if got is None:
            return None, (f"the {col} holds commas that are not quoted, and where it ends cannot be told; export "
                          "with ncu --csv, which quotes every field")
        fields = got
    if not lay.details and len(fields) > lay.width and any(f.strip() for f in fields[lay.width:]):
        return None, (f"{len(fields)} fields where the header has {lay.width}: a value holding a comma that is "
                      "not quoted; export with ncu --csv, which quotes every field")
    if lay.id >= len(fields):
        return None, ""
    return fields, ""


def _split(line: str) -> list[str] | None:
    try:
        return next(csv.reader((line,)))
    except (csv.Error, StopIteration):
        return None
