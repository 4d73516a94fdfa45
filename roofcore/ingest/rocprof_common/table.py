"""CSV tables as the AMD profilers write them: a header found under any preamble, the needed columns as text,
ragged records skipped with their line; cell text to numbers; header matching and the no-header message; one
JSON document within the depth limit."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ... import limits
from ...errors import InputError
from ...models import Skipped
from .. import check_text, skip
from ..columns import HeaderPattern, is_open, rejoin

if TYPE_CHECKING:
    from _csv import Reader

DIGITS = r"\s*[0-9]{1,18}\s*"  # a timestamp or id as rocprof writes it (fits int64)

NA = {"", "n/a", "na", "nan", "none", "null"}

MAX_NAMED = 10  #: dispatches named one by one in a warning before the rest are counted



@dataclass
class Table:
    """The needed columns of a CSV table as text, one entry per data record."""

    header: list[str]
    columns: dict[int, np.ndarray]  #: header position -> object array of cell text
    lines: np.ndarray  #: file line number of each record
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.lines)


def find_header(text: str, pattern: HeaderPattern) -> tuple[int, int] | None:
    """(offset, 1-based line number) of the first line matching ``pattern``."""
    m = pattern.search(text)
    if not m:
        return None
    return m.start(), text.count("\n", 0, m.start()) + 1


def read_table(text: str, at: tuple[int, int], source: str, pick: Callable[[list[str]], list[int]],
               name: tuple[str, ...] = ()) -> Table:
    """Parse the CSV from the header at ``at``; ``pick(header)`` names the positions to keep.

    Records whose field count differs from the header's (beyond trailing empty fields) are skipped with their
    line: a truncated line or program output mixed into the file would misalign every column. A record longer than
    the header whose kernel name (the column ``name`` names) held unquoted commas is put back into its columns
    (:func:`rejoin`: the name is the fields between the columns before and after it).
    pandas' C reader takes the columns and a csv field-count pass checks every record; where the two cannot be
    matched record for record (quoted newlines, a CSV error part-way, a name to put back) the file is read record
    by record.
    """
    offset, first_line = at
    body = text[offset:]
    try:
        header = [h.strip() for h in next(csv.reader([body.partition("\n")[0]]))]
    except csv.Error as e:
        raise InputError(where=f"{source}: line {first_line}", text=f"the header is not readable CSV ({e}).",
                         hint="load the CSV as the profiler wrote it.") from None
    idx = pick(header)
    if not idx:
        return Table(header, {}, np.zeros(0, dtype=np.int64))
    text_col = position(header, name) if name else None
    fast = read_fast(body, header, idx, first_line, source, text_col)
    if fast is not None:
        return fast
    reader = csv.reader(io.StringIO(body))
    next(reader)
    return read_records(reader, header, idx, first_line, source, text_col)


def _bad_fields(n: int, ncol: int) -> str:
    return (f"{n} fields where the header has {ncol} (a truncated or garbled line, or program output mixed into "
            "the CSV)")


def read_fast(body: str, header: list[str], idx: list[int], first_line: int, source: str,
              text_col: int | None = None) -> Table | None:
    lines_text = body.split("\n")
    if lines_text and lines_text[-1] == "":
        lines_text.pop()
    try:
        counts = np.fromiter(map(len, csv.reader(lines_text)), dtype=np.int64)
    except csv.Error:
        return None
    if len(counts) != len(lines_text):  # a quoted field holds a newline: records and lines differ
        return None
    counts = counts[1:]
    for i in np.flatnonzero(counts == 1):
        if not lines_text[i + 1].strip():
            counts[i] = 0  # a whitespace-only line is blank (pandas skips it too)
    del lines_text
    ncol = len(header)
    width = max(ncol, int(counts.max()) if len(counts) else 0)
    use = sorted({0, *idx, *range(ncol, width)})
    try:
        frame = pd.read_csv(io.BytesIO(body.encode("utf-8")), header=None, skiprows=1, names=list(range(width)),
                            usecols=use, dtype=object, keep_default_na=False, na_filter=False, skip_blank_lines=True,
                            index_col=False, engine="c", encoding="utf-8")
    except (ValueError, csv.Error):
        return None
    rows = np.flatnonzero(counts > 0)
    if len(frame) != len(rows):
        return None
    n = counts[rows]
    lines = first_line + 1 + rows
    ok = n == ncol
    longer = np.flatnonzero(n > ncol)
    if len(longer):
        tail = frame[list(range(ncol, width))].to_numpy(dtype=object)[longer]
        ok[longer] = [not "".join(map(str, t)).strip() for t in tail]  # trailing empty fields are tolerated
        if text_col is not None and not ok[longer].all():
            return None  # a kernel name with unquoted commas, maybe: record by record
    skipped = [skip(source, f"line {lines[i]}", _bad_fields(int(n[i]), ncol)) for i in np.flatnonzero(~ok)]
    columns = {i: frame[i].to_numpy(dtype=object)[ok] for i in idx}
    return Table(header, columns, lines[ok], skipped)


def read_records(reader: Reader, header: list[str], idx: list[int], first_line: int, source: str,
                 text_col: int | None = None) -> Table:
    """Record by record, for a file with a CSV error part-way (what precedes the error is kept) or a kernel name
    (column ``text_col``) holding unquoted commas, put back into its column."""
    ncol = len(header)
    get = itemgetter(*idx) if len(idx) > 1 else (lambda r, i=idx[0]: (r[i],))
    recs: list[tuple[str, ...]] = []
    lines: list[int] = []
    skipped: list[Skipped] = []
    while True:
        try:
            r = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            skipped.append(skip(source, f"line {first_line + reader.line_num - 1}",
                                f"unreadable CSV from here on ({e}); the rest of the file is left out"))
            break
        n = len(r)
        if n > ncol and text_col is not None and "".join(r[ncol:]).strip():
            r = rejoin(r, text_col, ncol)
            n = len(r)
            if is_open(r[text_col]):  # a field missing as well: the name's end cannot be told
                skipped.append(skip(source, f"line {first_line + reader.line_num - 1}", f"{header[text_col]} holds "
                                    f"commas that are not quoted, and with {len(r) + len(r[text_col].split(',')) - 1} "
                                    f"fields where the header has {ncol}, where it ends cannot be told"))
                continue
        if n == ncol or (n > ncol and not "".join(r[ncol:]).strip()):
            recs.append(get(r))
            lines.append(first_line + reader.line_num - 1)
        elif n and not (n == 1 and not r[0].strip()):
            skipped.append(skip(source, f"line {first_line + reader.line_num - 1}", _bad_fields(n, ncol)))
    arr = np.array(recs, dtype=object).reshape(len(recs), len(idx))
    return Table(header, {i: arr[:, j] for j, i in enumerate(idx)}, np.asarray(lines, dtype=np.int64), skipped)


def cell_text(values: np.ndarray) -> pd.Series:
    return pd.Series(values, dtype=object).str.strip()


def factorize_text(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, stripped distinct values): text work done once per distinct cell."""
    codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
    return codes, np.array([str(u).strip() for u in uniq], dtype=object)


def whole_numbers(texts: np.ndarray) -> np.ndarray:
    """Which texts are whole numbers as rocprof writes ids and ns timestamps (fit in int64), also as a spreadsheet
    re-types them (:func:`plain_numbers`)."""
    pattern = re.compile(DIGITS)
    return np.array([bool(pattern.fullmatch(t)) for t in plain_numbers(texts)], dtype=bool)


_GROUPED = re.compile(r"^\s*([+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?)\s*$")
_SCIENTIFIC = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+\s*$")
#: significant digits a spreadsheet keeps: a number written with fewer than its integer digits beyond this has lost
#: its last ones (a ns timestamp since boot has 16)
SPREADSHEET_DIGITS = 15


def plain_number(text: str) -> str:
    """A number cell as the profiler wrote it, from a spreadsheet's re-typing: English thousands separators dropped
    (``1,234,567`` → ``1234567``) and scientific notation written out where it is exact (``1.5e+06`` → ``1500000``;
    a whole number beyond :data:`SPREADSHEET_DIGITS` digits written with fewer mantissa digits than it has lost its
    last ones, and stays as it is: unusable). Any other text comes back as it is."""
    m = _GROUPED.match(text)
    if m:
        return m.group(1).replace(",", "")
    if _SCIENTIFIC.match(text):
        d = Decimal(text.strip())
        if d.adjusted() >= SPREADSHEET_DIGITS and len(d.as_tuple().digits) < d.adjusted() + 1:
            return text
        out = format(d, "f")
        return out.rstrip("0").rstrip(".") if "." in out else out
    return text


def plain_numbers(texts: np.ndarray) -> np.ndarray:
    """:func:`plain_number` of each text (object array); only texts with a comma or an exponent are looked at."""
    texts = np.asarray(texts, dtype=object)
    if not len(texts):
        return texts
    s = pd.Series(texts, dtype=object).astype(str)
    maybe = s.str.contains(r"[,eE]", regex=True).to_numpy(dtype=bool)
    if not maybe.any():
        return texts
    out = texts.copy()
    out[maybe] = [plain_number(t) for t in s[maybe]]
    return out


def to_floats(values: np.ndarray) -> np.ndarray:
    """Cells to float64 (NaN where not a number); thousands separators from a spreadsheet are removed."""
    try:
        return np.array(values, dtype=np.float64)  # the common case: every cell a plain number
    except (ValueError, TypeError, OverflowError):
        pass
    text = cell_text(values)
    has_comma = text.str.contains(",", regex=False).to_numpy(dtype=bool)
    if has_comma.any():
        text = text.where(~has_comma, text.str.replace(",", "", regex=False))
    floats: np.ndarray = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    return floats


def quoted(*names: str) -> str:
    return ",".join(f'"?{re.escape(n)}"?' for n in names)


def read_roles(text: str, at: tuple[int, int], source: str, roles: Mapping[str, tuple[str, ...]]
               ) -> tuple[Table, dict[str, int | None]]:
    """:func:`read_table` keeping the columns ``roles`` name (per role, the header names it accepts, first found
    wins, any case), and each role's position (None: the file has no such column)."""
    pos: dict[str, int | None] = {}

    def pick(header: list[str]) -> list[int]:
        pos.update({role: position(header, names) for role, names in roles.items()})
        return sorted({p for p in pos.values() if p is not None})

    return read_table(text, at, source, pick, roles.get("name", ())), pos


def position(header: list[str], names: tuple[str, ...]) -> int | None:
    low: dict[str, int] = {}
    for i, h in enumerate(header):
        low.setdefault(h.lower(), i)
    return next((low[n.lower()] for n in names if n.lower() in low), None)


def no_header(text: str, source: str, expected: str, hint: str) -> InputError:
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    shown = repr(first if len(first) <= 60 else first[:57] + "...")
    return InputError(where=source, expected=expected, found=f"first line {shown}", hint=hint)


def by_line(skipped: list[Skipped]) -> list[Skipped]:
    return sorted(skipped, key=lambda s: int(s.row.split()[-1]))


def header_sniffer(*patterns: HeaderPattern) -> Callable[[str, str], bool]:
    """A sniffer accepting content where every pattern matches (``re.M``: a header line anywhere in the head)."""

    def sniff(head: str, filename: str) -> bool:
        return all(p.search(head) for p in patterns)

    return sniff


def load_json(data: bytes, source: str, hint: str) -> object:
    """One JSON document, within the depth limit; a syntax error names its line and column."""
    text = check_text(data, source)
    limits.check_json_depth(text.encode("utf-8", "surrogatepass"), source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if not text[e.pos:].strip() or e.msg.startswith("Unterminated string"):  # the text stops inside a value
            raise InputError(where=f"{source}: line {e.lineno}, column {e.colno}", text="the file ends early "
                             f"(truncated?): the JSON stops inside a value ({e.msg}).",
                             hint="copy the whole file again.") from None
        raise InputError(where=f"{source}: line {e.lineno}, column {e.colno}", text=f"not valid JSON: {e.msg}.",
                         hint=hint) from None

