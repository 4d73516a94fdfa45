"""Reading an Nsight Compute CSV: its values (thousands separators, ``n/a``, a European decimal comma refused) and
its table (the header found by pattern, noise lines and repeated headers cut out, ragged rows padded), with
pyarrow where it can and the ``csv`` module where rows are ragged."""

from __future__ import annotations

import csv
import re
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from .. import filemap, limits
from ..models import Skipped
from . import skip
from .columns import cut_short
from .ncu_metrics import HEADER, HEADER_RE, locale_error

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

# ----------------------------------------------------------------------------------- value parsing

_NUM_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
#: English thousands separators: groups of exactly 3 digits before any decimal point
_ENGLISH_RE = r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$"
#: digits, dots and commas only, with a comma (decimal comma or English separators), or two decimal points
_COMMA_RE = r"^[+-]?[\d.]*,[\d.,]*$"
_TWO_DOTS_RE = r"^[+-]?\d+\.\d+\.\d"
_EURO_INT_RE = r"^\d{1,3}(\.\d{3})+$"
INTEGRAL_UNITS = {"byte", "inst", "nsecond", "ns", "sector", "request"}
EURO_SAMPLE = 20_000


def to_float(values: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Strings → float64: thousands separators stripped; anything but a finite number ≥ 0 → NaN."""
    clean = pc.replace_substring(values, ",", "")
    try:
        out = pc.cast(clean, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        ok = pc.match_substring_regex(clean, _NUM_RE)
        out = pc.cast(pc.if_else(ok, clean, pa.scalar(None, pa.string())), pa.float64())
    arr = out.to_numpy(zero_copy_only=False) if isinstance(out, pa.Array) else _chunked_numpy(out, np.float64)
    arr = np.asarray(arr, dtype=np.float64)
    arr[~(np.isfinite(arr) & (arr >= 0))] = np.nan  # counters, bytes and times are never negative
    return arr


def _chunked_numpy(col: pa.ChunkedArray, dtype: DTypeLike) -> np.ndarray:
    if col.num_chunks == 0:
        return np.empty(0, dtype=dtype)
    return np.concatenate([c.to_numpy(zero_copy_only=False) for c in col.chunks]).astype(dtype, copy=False)


def check_locale(values: pa.ChunkedArray | pa.Array, integral: np.ndarray | bool, source: str) -> None:
    """Refuse decimal-comma exports (docs/formats.md). The locale is file-wide, so a sample of values suffices.

    ``integral`` marks values whose unit is integral in an English export (bytes, instructions, ns), where
    ``65.536`` can only be a European 65,536.
    """
    sample = values.slice(0, EURO_SAMPLE)
    comma = pc.and_(pc.match_substring_regex(sample, _COMMA_RE), pc.invert(pc.match_substring_regex(sample, _ENGLISH_RE)))
    dots = pc.match_substring_regex(sample, _TWO_DOTS_RE)
    flags = np.asarray(integral, dtype=bool)
    mask = np.full(len(sample), bool(flags)) if flags.ndim == 0 else flags[: len(sample)]
    if mask.any():
        dots = pc.or_(dots, pc.and_(pa.array(mask), pc.match_substring_regex(sample, _EURO_INT_RE)))
    for hit in (comma, dots):  # prefer a decimal comma as the example
        idx = pc.index(hit, True).as_py()
        if idx is not None and idx >= 0:
            raise locale_error(source, sample[idx].as_py())


def _ids(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, bool]:
    """Launch ids → float64 (NaN where the cell is not a whole number), and whether all were."""
    try:
        return np.asarray(_as_numpy(pc.cast(col, pa.int64())), dtype=np.float64), True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        col = pc.replace_substring(col, ",", "")  # "1,024" if the id was printed with a thousands separator
        # "3.0": pandas writes a column of whole numbers as floats where one cell is empty (a raw page's units row)
        ok = pc.match_substring_regex(col, r"^\d{1,15}(\.0*)?$")
        return np.asarray(_as_numpy(pc.cast(pc.if_else(ok, col, pa.scalar(None, pa.string())), pa.float64())),
                          dtype=np.float64), False


def _as_numpy(a: pa.ChunkedArray | pa.Array) -> np.ndarray:
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks() if a.num_chunks != 1 else a.chunk(0)
    arr: np.ndarray = a.to_numpy(zero_copy_only=False)
    return arr


def dict_codes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """Dictionary-encoded strings → (int codes, distinct values)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    return (col.indices.to_numpy(zero_copy_only=False), [str(x) for x in col.dictionary.to_pylist()])


# ------------------------------------------------------------------------------------------- reading

DICT = pa.dictionary(pa.int32(), pa.string())
STRING = pa.string()
BLOCK_SIZE = 4 << 20  #: pyarrow's parallel unit
PIECE_SIZE = 16 << 20  #: bytes read per read_csv call (bounds pyarrow's memory to a few pieces' worth)


def arrow_read(data: bytes, start: int, end: int, names: list[str], include: list[str], dict_cols: set[str],
                skip_rows: int, id_type: pa.DataType = STRING, parse: pcsv.ParseOptions | None = None) -> pa.Table:
    """pyarrow's CSV reader on ``data[start:end]``: only the ``include`` columns, repeated strings
    dictionary-encoded.

    Read in pieces of ~16 MB cut at line ends (values hold no newlines): one ``read_csv`` over a whole
    136 MB export holds about the file's size in parsed blocks, pieces keep pyarrow near 50 MB, and both are
    faster than the streaming reader. A mapped file's piece is copied out and its pages let go once read
    (:mod:`roofcore.filemap`). UTF-8 is checked once on the result (the distinct strings of the dictionary
    columns, the values), not cell by cell while reading.
    """
    types = {c: id_type if c == "ID" else DICT if c in dict_cols else STRING for c in include}
    for _ in range(skip_rows):
        nl = data.find(b"\n", start, end)
        start = end if nl < 0 else nl + 1
    buf = pa.py_buffer(data)  # a map's too: the tables read hold copies, no view of it outlives the read
    # an invalid-row handler is called in file order only when one thread reads
    ro = pcsv.ReadOptions(column_names=names, use_threads=parse is None, block_size=BLOCK_SIZE)
    co = pcsv.ConvertOptions(include_columns=include, check_utf8=False, column_types=types)
    tables = []
    while start < end:
        limits.tick()
        stop = min(end, start + PIECE_SIZE)
        if stop < end:
            nl = data.find(b"\n", stop, end)
            stop = end if nl < 0 else nl + 1
        tables.append(pcsv.read_csv(pa.BufferReader(buf.slice(start, stop - start)), read_options=ro,
                                    parse_options=parse, convert_options=co))
        filemap.release(data, start, stop)
        start = stop
    if not tables:
        return pa.table({c: pa.array([], type=t) for c, t in types.items()})
    table = pa.concat_tables(tables)
    del tables
    release_arrow_memory()
    table.validate(full=True)  # ArrowInvalid on bad UTF-8: the line reader then decodes with replacement
    return table


def release_arrow_memory() -> None:
    """Hand the memory pyarrow's pool keeps for reuse back to the system (tens of MB after reading pieces)."""
    pa.default_memory_pool().release_unused()


def python_read(block: bytes, names: list[str], include: list[str], dict_cols: set[str], skip_rows: int,
                 first_line: int, source: str, cut: bool = False) -> tuple[pa.Table, np.ndarray, list[Skipped]]:
    """The robust reader: the csv module line by line. Noise lines are dropped, a repeated header switches the
    columns (several tables in one output), ragged rows are skipped with a reason; ``cut``: the file ends inside
    the block's last line, skipped where it is a row cut short (an open quote; on the raw page, fewer fields than
    the header)."""
    text = block.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    last = first_line + len(lines) - 1 if cut else -1
    raw_page = skip_rows == 2

    required = include if raw_page else [c for c in include if c in _REQUIRED]

    def layout(cols: list[str]) -> tuple[list[int], int, int]:
        """Column positions, the header's width, and the fields a row needs: on a details page the trailing
        rule columns may be absent from metric rows (docs/formats.md)."""
        idx = [cols.index(c) if c in cols else -1 for c in include]
        need = max([cols.index(c) for c in required if c in cols] or [0]) + 1
        return idx, len(cols), need

    idx, width, need = layout(names)
    out: list[list[str]] = [[] for _ in include]
    line_no: list[int] = []
    skipped: list[Skipped] = []
    units_next = False
    for i, line in enumerate(lines[skip_rows:], start=first_line + skip_rows):
        if not i & 0xFFF:
            limits.tick()
        if not line.startswith('"'):
            continue  # application stdout or ==PROF== lines
        try:
            fields = next(csv.reader((line,)))
        except (csv.Error, StopIteration):
            skipped.append(skip(source, f"line {i}", "not a CSV row"))
            continue
        if HEADER_RE.match(line):
            idx, width, need = layout(fields)
            units_next = raw_page
            continue
        if units_next and fields and not fields[0].strip():
            units_next = False
            continue  # the raw page's units row under a repeated header
        units_next = False
        if i == last and (cut_short(line) or (raw_page and len(fields) < width)):
            skipped.append(skip(source, f"line {i}", "the file ends inside this row (a truncated copy?)"))
            continue
        if len(fields) < need or (len(fields) > width and any(f.strip() for f in fields[width:])):
            skipped.append(skip(source, f"line {i}", f"expected {width} fields, found {len(fields)}"))
            continue
        n_fields = len(fields)
        for col, j in zip(out, idx, strict=True):
            col.append(fields[j] if 0 <= j < n_fields else "")  # a missing trailing field is empty
        line_no.append(i)
    arrays = [pa.array(c, type=pa.string()) for c in out]
    arrays = [a.dictionary_encode() if name in dict_cols else a for a, name in zip(arrays, include, strict=True)]
    return pa.table(arrays, names=include), np.asarray(line_no, dtype=np.int64), skipped


#: details-page columns a metric row must have; the rule columns after them may be missing
_REQUIRED = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")


def required_width(names: list[str]) -> int:
    """Fields a details-page metric row needs: up to its last required column."""
    return max([names.index(c) for c in _REQUIRED if c in names] or [0]) + 1
_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowKeyError, pa.ArrowTypeError)


def _try_arrow(data: bytes, start: int, end: int, names: list[str], include: list[str], dict_cols: set[str],
               skip_rows: int) -> tuple[pa.Table, np.ndarray] | None:
    """pyarrow on the table, or None where it cannot read it as one table (ragged rows, noise, a header again)."""
    for id_type in (pa.int64(), STRING):  # integer ids parse fastest; text ids (stray rows) need strings
        try:
            table = arrow_read(data, start, end, names, include, dict_cols, skip_rows, id_type)
        except _ARROW_ERRORS:
            continue
        ids, clean = _ids(table.column("ID"))
        if clean or not pc.any(pc.equal(table.column("ID"), "ID")).as_py():
            return table, ids
        return None
    return None


_NON_ASCII = re.compile(rb"[\x80-\xff]")


def utf8(data: bytes, start: int, end: int) -> bool:
    """Whether ``data[start:end]`` is valid UTF-8 (decoded only where a byte is not ASCII: rare in exports)."""
    if _NON_ASCII.search(data, start, end) is None:
        return True
    try:
        str(memoryview(data)[start:end], "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _arrow_ragged(data: bytes, start: int, end: int, names: list[str], width: int, include: list[str],
                  dict_cols: set[str]) -> tuple[pa.Table, np.ndarray] | None:
    """pyarrow on a details page whose metric rows stop short of the header's trailing rule columns (docs/formats.md):
    read at the metric rows' ``width``, the longer rows (rule rows, a few per launch) handed over by pyarrow's
    invalid-row handler and read with the csv module. None where that does not fit (a row shorter still, a noise
    line, an ID that is not a number): the other readers take over."""
    if not utf8(data, start, end):
        return None  # pyarrow hands the handler decoded text: it cannot, and the row is lost in a warning
    longer: list[str] = []

    def handler(row: pcsv.InvalidRow) -> str:
        if row.actual_columns > row.expected_columns:
            longer.append(row.text)
            return "skip"
        return "error"

    short = names[:width]
    try:
        table = arrow_read(data, start, end, short, [c for c in include if c in short], dict_cols, 1, pa.int64(),
                            pcsv.ParseOptions(invalid_row_handler=handler))
    except _ARROW_ERRORS:
        return None
    rows = list(csv.reader(longer))
    n = table.num_rows
    parts: dict[str, list[pa.Array]] = {}
    for c in include:
        j = names.index(c)
        cells = [r[j] if j < len(r) else "" for r in rows]
        head = table.column(c).combine_chunks() if c in short else pc.fill_null(pa.nulls(n, STRING), "")
        if c == "ID":
            try:
                tail = pa.array(cells, STRING).cast(pa.int64())
            except _ARROW_ERRORS:
                return None
        else:
            tail = pa.array(cells, STRING)
            if c in dict_cols:
                head = head if pa.types.is_dictionary(head.type) else head.dictionary_encode()
                tail = tail.dictionary_encode()
        parts[c] = [head, tail]
    out = pa.table({c: pa.chunked_array(v) for c, v in parts.items()})
    return out, _ids(out.column("ID"))[0]


def _line_starts(data: bytes, start: int, end: int) -> np.ndarray:
    """Offsets (in ``data``) of every line's first byte in ``data[start:end]``, vectorised in 16 MB chunks."""
    a = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
    step = 16 << 20
    parts = [np.flatnonzero(a[i: i + step] == 10) + (start + i + 1) for i in range(0, len(a), step)]
    starts = np.concatenate([np.full(1, start, dtype=np.int64), *parts])
    return starts[starts < end]


def _without_noise(data: bytes, start: int, end: int, skip_rows: int) -> tuple[bytes, np.ndarray] | None:
    """The table without noise lines (not starting with a quote) and repeats of its header (and units row),
    with each kept data row's line offset from the header; None if a different header follows."""
    starts = _line_starts(data, start, end)
    a = np.frombuffer(data, dtype=np.uint8)
    first = a[starts]
    drop = first != ord('"')
    drop[:skip_rows] = False
    nl = data.find(b"\n", start, end)
    header = data[start: nl if nl >= 0 else end].rstrip(b"\r")
    maybe = np.flatnonzero(~drop)
    maybe = maybe[(maybe >= skip_rows) & (starts[maybe] + 1 < end)]
    for i in maybe[a[starts[maybe] + 1] == ord("I")]:  # candidates for a repeated "ID",... header
        s = int(starts[i])
        if data[s: s + len(HEADER)] != HEADER:
            continue
        e = data.find(b"\n", s, end)
        if data[s: e if e >= 0 else end].rstrip(b"\r") != header:
            return None
        drop[i] = True
        if skip_rows == 2 and i + 1 < len(starts) and data[int(starts[i + 1]): int(starts[i + 1]) + 3] == b'"",':
            drop[i + 1] = True  # the raw page's units row under the repeated header
    keep = ~drop
    ends = np.append(starts[1:], end)
    runs = np.flatnonzero(np.diff(np.concatenate(([0], keep.astype(np.int8), [0])))).reshape(-1, 2)
    view = memoryview(data)
    pieces: list[bytes | memoryview] = []
    for r0, r1 in runs:
        pieces.append(view[int(starts[r0]): int(ends[r1 - 1])])
        if data[int(ends[r1 - 1]) - 1: int(ends[r1 - 1])] != b"\n":
            pieces.append(b"\n")
    return b"".join(pieces), np.flatnonzero(keep)[skip_rows:]


def read_block(data: bytes, block: tuple[int, int, int], names: list[str], include: list[str], dict_cols: set[str],
                skip_rows: int, source: str, width: int | None = None
                ) -> tuple[pa.Table, np.ndarray, np.ndarray, list[Skipped]]:
    """``(table, launch ids, line numbers, skipped)``: pyarrow's reader on the table (at the metric rows' ``width``
    where they are shorter than the header); on the table without its noise lines and repeated headers when that
    fails; the csv-module reader where rows are ragged otherwise or a different header follows."""
    start, end, line = block
    got = _try_arrow(data, start, end, names, include, dict_cols, skip_rows)
    if got is None and width:
        got = _arrow_ragged(data, start, end, names, width, include, dict_cols)
    if got is not None:
        return got[0], got[1], np.arange(got[0].num_rows) + line + skip_rows, []
    cleaned = _without_noise(data, start, end, skip_rows)
    filemap.release(data, start, end)  # a mapped file: its pages, all read for the cleaned copy
    if cleaned is not None:
        got = _try_arrow(cleaned[0], 0, len(cleaned[0]), names, include, dict_cols, skip_rows)
        if got is None and width:
            got = _arrow_ragged(cleaned[0], 0, len(cleaned[0]), names, width, include, dict_cols)
        if got is not None and got[0].num_rows == len(cleaned[1]):
            return got[0], got[1], cleaned[1] + line, []
    del cleaned
    cut = end == len(data) and not data[end - 1:end].isspace()  # the file ends inside the table's last line
    table, lines, skipped = python_read(data[start:end], names, include, dict_cols, skip_rows, line, source, cut)
    return table, _ids(table.column("ID"))[0], lines, skipped


def split_header(line: bytes) -> list[str]:
    try:
        return next(csv.reader((line.decode("utf-8", errors="replace").rstrip("\r\n"),)))
    except (csv.Error, StopIteration):
        return []


def table_span(data: bytes) -> tuple[int, int, int] | None:
    """``(start, end, line number)`` of the table: from the first header line to the last row (noise after it
    trimmed). Later headers (several tables in one output) are handled by the line reader."""
    pos = data.find(HEADER)
    while pos >= 0 and not (pos == 0 or data[pos - 1] in b"\n\r" or (pos == 3 and data[:3] == b"\xef\xbb\xbf")):
        pos = data.find(HEADER, pos + 1)
    if pos < 0:
        return None
    return pos, _trim_tail(data, pos, len(data)), 1 + filemap.count(data, b"\n", 0, pos)


def cut_row(data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """``(end without it, its line number)`` of the table's last line where the file ends inside it, in an open
    quote (a copy cut short: pyarrow would read the cut field as a value); None otherwise."""
    if end != len(data) or data[end - 1:end].isspace():
        return None
    nl = data.rfind(b"\n", start, end)
    if nl < 0 or filemap.count(data, b'"', nl + 1, end) % 2 == 0:  # a map has no count
        return None
    return nl, 1 + filemap.count(data, b"\n", 0, nl + 1)


def _trim_tail(data: bytes, start: int, end: int, max_lines: int = 10_000) -> int:
    """End of a block without the noise lines after its table (``==PROF==``, application output)."""
    for _ in range(max_lines):
        while end > start and data[end - 1] in b"\n\r \t":
            end -= 1
        nl = data.rfind(b"\n", start, end)
        if nl < 0 or data[nl + 1:nl + 2] == b'"':
            return end
        end = nl
    return end


def first_row(data: bytes, start: int, end: int, names: list[str], skip_rows: int) -> dict[str, str]:
    """The first data row of a block as a dict (device, CC and trailing-comma detection)."""
    pos = start
    for _ in range(skip_rows):
        nl = data.find(b"\n", pos, end)
        if nl < 0:
            return {}
        pos = nl + 1
    stop = min(end, pos + (1 << 20))
    nl = data.find(b"\n", pos, stop)
    fields = split_header(data[pos: nl if nl >= 0 else stop])
    return {"__fields__": str(len(fields)), **dict(zip(names, fields, strict=False))}
