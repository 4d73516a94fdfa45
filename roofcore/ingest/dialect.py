"""Text that a spreadsheet or a shell saved in another dialect, put back into the one the parsers read: UTF-8,
``\\n`` line ends, commas between fields, decimal points (docs/formats.md, "Every format goes through the same
door").

The classes, each seen in files users hand in, each handled for every text format at once:

* UTF-16 with a byte-order mark: Windows PowerShell's ``>`` (``ncu --csv ... > out.csv``) and a spreadsheet's
  "Unicode text";
* ``\\r`` alone ending lines: classic Mac spreadsheets' "CSV (Macintosh)";
* ``\\r\\r\\n`` ending lines: CRLF text sent through a CRLF conversion again (Python's ``csv`` module on Windows
  writing to a file opened without ``newline=""``, an FTP transfer in ASCII mode), which every reader would
  otherwise take for a blank line after each row;
* tabs between fields: a spreadsheet's "Text (tab delimited)" and its "Unicode text";
* semicolons between fields, numbers with decimal commas (``1,5``) and grouping points (``1.234,5``): a
  spreadsheet's CSV in a locale that writes decimal commas (German, French, ...);
* empty fields right of the table: a spreadsheet pads every row, the header's included, to its widest one (a note
  typed beside the table, or a cell once used there, adds ``,,`` to each line), and some scripts end each row with
  a comma; columns without a name were refused, or glued to the kernel name;
* a first line ``sep=;`` (or ``sep=,``, ``sep=\t``): the hint that tells a spreadsheet which character separates
  the fields, written by scripts that prepare a file for one; the line holds no data and becomes a blank one (line
  numbers stay the file's), and the separator is found as in any other table;
* pandas' index as the first column: a profile read into pandas, filtered or sorted, and saved with
  ``df.to_csv(path)`` (an empty or ``Unnamed: 0`` first name over rows that start with a whole number);
* a legacy single-byte code page: a spreadsheet on Windows saves "CSV" in Windows-1252 (``µ`` is the byte 0xB5,
  ``é`` 0xE9), and so does an editor saving "ANSI"; a name or a path with such a letter made the file "not UTF-8".
  Text that is not UTF-8, holds no UTF-8 character at all (only ASCII and stray high bytes) and is not JSON (which
  is UTF-8 by definition) is read as Windows-1252 and labelled (:data:`LEGACY_NOTE`), or as Mac OS Roman where its
  lines end in ``\r`` alone, a classic Mac's "CSV (Macintosh)" (:data:`MAC_NOTE`), or in an East Asian double-byte
  page where its bytes stand as one's characters do (:mod:`.dbcs`: GBK, Shift_JIS, Korean, Big5;
  :data:`DBCS_NOTE`); text with UTF-8 characters and bad bytes both, or cut inside its last character, is left for
  the parser's message.

Files in the parsers' own dialect pass through untouched, after a look at their first 64 kB (a memory map stays a
map). A table is tab- or semicolon-separated when its first line of three or more column names is split by that
character and not by commas. Its numbers are taken to have decimal commas only where the file says so: some number
can only be written that way (``0,25``, ``3,14159``, ``1.234,5``, ``1.234.567``) and none can only have a decimal
point (``0.25``, ``1,234.5``, ``1,234,567``); the caller labels a workload read that way
(:data:`DECIMAL_COMMA_NOTE`). Where every such number could be either (``7,488``: 7.488, or 7488 with a thousands
separator), the file is refused with one line rather than guessed.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from typing import NamedTuple

from .. import filemap
from ..errors import InputError
from .dbcs import UNTOLD, double_byte

#: bytes looked at to tell the dialect (the same quick look the format detection takes)
HEAD = 65536
#: the warning a workload read with decimal commas carries (the caller adds where)
DECIMAL_COMMA_NOTE = ("numbers read with decimal commas (0,25 = 0.25; 1.234,5 = 1234.5), as a spreadsheet in a "
                      "decimal-comma locale saves them")

#: the warning a workload read from Windows-1252 carries, before what was found (the caller adds where)
LEGACY_NOTE = "not UTF-8: read as Windows-1252, the code page a spreadsheet on Windows saves \"CSV\" in"
#: the same for a file with classic Mac line ends (``\r`` alone): a Mac spreadsheet's "CSV (Macintosh)"
MAC_NOTE = "not UTF-8: read as Mac OS Roman, the code page a Mac spreadsheet saves \"CSV (Macintosh)\" in"
#: the same for Chinese, Japanese or Korean text in a double-byte code page (:mod:`.dbcs`), ``{page}`` named
DBCS_NOTE = ("not UTF-8: read as {page}, the code page a spreadsheet on a Windows in that language saves \"CSV\" "
             "in")
CYRILLIC_NOTE = ("not UTF-8: read as Windows-1251, the code page a spreadsheet on a Windows in a Cyrillic-script "
                 "language saves \"CSV\" in")
#: a run of three or more bytes of Windows-1251's letters (0xC0-0xFF: А-я): a word in a Cyrillic script
_CYRILLIC_RUN = re.compile(rb"[\xc0-\xff]{3,}")
_HIGH_LETTER = re.compile(rb"[\xc0-\xff]")

_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
_LETTER = re.compile(r"[A-Za-z]")
_ALONE_NUMBER = re.compile(r"^[+-]?\d+([.,]\d+)?$")
_LINES = 200  #: lines of the head searched for a table's header
_SEP_NAMES = {"\t": "tab", ";": "semicolon"}
#: a spreadsheet's separator hint on the first line (after a byte-order mark): ``sep=;``
_SEP_HINT = re.compile(r"^(\ufeff?)sep=[^\r\n]?(?=[\r\n])", re.I)


_COMMA_NUMBER = re.compile(r"^([+-]?)(\d{1,3}(?:\.\d{3})+|\d+),(\d+)([eE][+-]?\d+)?$")
_GROUPED = re.compile(r"^([+-]?)(\d{1,3}(?:\.\d{3})+)$")


def _numbers(sep: str) -> re.Pattern[str]:
    """A cell between ``sep`` (or a line's ends) that is a number written with a comma or a point in it."""
    s = re.escape(sep)
    return re.compile(rf"(?:^|(?<={s}))[+-]?\d[\d.,]*[.,]\d+(?:[eE][+-]?\d+)?(?=$|{s}|\r)", re.M)


def mark_of(token: str) -> str:
    """What one number says of the file's decimal mark: ``","`` (``0,25``, ``1.234,5``, ``1.234.567``), ``"."``
    (``0.25``, ``1,234.5``, ``1,234,567``), ``"?"`` (``7,488`` or ``7.488``: a decimal or a thousands separator)
    or ``""`` (neither: ``1.2.3``)."""
    t = token.lstrip("+-")
    exp = re.search(r"[eE][+-]?\d+$", t)
    if exp:
        t = t[: exp.start()]
    commas, points = t.count(","), t.count(".")
    if commas and points:
        return "," if t.rfind(",") > t.rfind(".") else "."
    mark, other = (",", ".") if commas else (".", ",")
    n = commas or points
    if n > 1:  # groups of a thousand: the other mark is the decimal one
        return other if all(len(g) == 3 for g in t.split(mark)[1:]) else ""
    before, after = t.split(mark)
    if exp or len(after) != 3 or before.startswith("0") or len(before) > 3:
        return mark  # no thousands separator looks like this
    return "?"


def _header_like(fields: list[str]) -> bool:
    """Three or more column names: each holds a letter, none is a number alone, none has a space at either end or
    a run of spaces (a log line with commas, a console table), and the first is no ``==PROF==`` mark."""
    return (len(fields) >= 3 and not fields[0].startswith("==")
            and all(_LETTER.search(f) and not _ALONE_NUMBER.match(f) and f == f.strip() and "  " not in f
                    for f in fields))


def _fields(line: str, sep: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=sep))
    except (csv.Error, StopIteration):
        return []


class _Table(NamedTuple):
    sep: str  #: between fields
    line: int  #: the header's line (from 0)
    names: int  #: column names, the empty ones right of the last name left out
    fields: int  #: fields in the header (more where empty ones end it)
    indexed: bool  #: the first column is pandas' index (:func:`_unindexed`)


#: the name pandas' ``to_csv`` gives its index column: none, or ``Unnamed: 0`` where the file was read back into
#: pandas and written again
_INDEX_NAMES = ("", "Unnamed: 0")
_COUNT_FIELD = re.compile(r'^"?\d+"?(?:[,;\t]|$)')


def _counted(lines: list[str], n: int) -> bool:
    """Whether the first line below line ``n`` that holds anything starts with a whole number (an index's)."""
    below = next((ln for ln in lines[n + 1: n + 4] if ln.strip()), "")
    return bool(_COUNT_FIELD.match(below))


def _table_head(head: str) -> _Table | None:
    """The head's first table header: three or more column names split by a comma, a tab or a semicolon, tried in
    that order, with a spreadsheet's padding (empty fields after the last name) or pandas' index column (an empty
    first name, and rows that start with a whole number) around them. None for JSON, YAML, console text."""
    if head.lstrip("\ufeff \t\r\n")[:1] in "[{":
        return None
    lines = head.split("\n")
    for n, line in enumerate(lines[:_LINES]):
        line = line.rstrip("\r").lstrip("\ufeff")
        for sep in (",", "\t", ";"):
            if sep not in line:
                continue
            fields = _fields(line, sep)
            named = len(fields)
            while named and not fields[named - 1].strip():
                named -= 1
            index = (bool(fields) and fields[0] in _INDEX_NAMES and _header_like(fields[1:named])
                     and _counted(lines, n))
            if index or _header_like(fields[:named]):
                return _Table(sep, n, named, len(fields), index)
    return None


_INDEX_HEADER = re.compile(r'^(\ufeff?)(?:"(?:Unnamed: 0)?"|(?:Unnamed: 0)?),')
_INDEX_FIELD = re.compile(r'^"?\d+"?,', re.M)


def _unindexed(text: str, header: int) -> str:
    """The comma table from line ``header`` on without its first column, pandas' index: ``df.to_csv(path)`` writes
    it unless told ``index=False``, so a profile filtered or sorted in pandas and saved comes with one. Its header
    field goes, and the whole number that starts each row below (lines that start otherwise stay)."""
    start = 0
    for _ in range(header):
        start = text.index("\n", start) + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    return (text[:start] + _INDEX_HEADER.sub(r"\1", text[start:end], count=1)
            + _INDEX_FIELD.sub("", text[end:]))


def _padded(head: str, first: int, names: int) -> bool:
    """Whether some row in the head, from the header on, has empty fields beyond the header's names at its end."""
    for line in head.split("\n")[first:first + _LINES]:
        line = line.rstrip("\r")
        if line.endswith(",") and len(_fields(line, ",")) > names:
            return True
    return False


def separator(head: str) -> str | None:
    """``"\\t"`` or ``";"`` where the head's first table header is split by it (and not by commas); None for a
    comma table, JSON, YAML or console text."""
    table = _table_head(head)
    return table.sep if table is not None and table.sep != "," else None


def _unpadded(text: str, first: int, names: int, pad: int | None) -> str:
    """From line ``first`` (the header) on, each line without the empty fields at its end beyond the header's
    ``names`` columns, at most ``pad`` of them where the header shows how many were added (None: a script's trailing
    commas, as many as there are): the columns a spreadsheet or a script added right of the table. A row wider than
    the header because a kernel name held unquoted commas keeps those pieces (they are not empty)."""
    lines = text.split("\n")
    for i in range(first, len(lines)):
        line = lines[i]
        cr = line.endswith("\r")
        bare = line[:-1] if cr else line
        if not bare.endswith(","):
            continue
        fields = _fields(bare, ",")
        drop = 0
        while len(fields) - drop > names and not fields[len(fields) - drop - 1]:
            drop += 1
        drop = min(drop, len(bare) - len(bare.rstrip(",")), drop if pad is None else pad)  # bare commas only
        if drop:
            lines[i] = bare[:-drop] + ("\r" if cr else "")
    return "\n".join(lines)


def _to_text(data: bytes, label: str, partial: bool) -> str | None:
    """UTF-16 with a byte-order mark as text (``partial``: its head, cut anywhere); None for any other data."""
    encoding = _BOMS.get(bytes(data[:2]))
    if encoding is None:
        return None
    raw = bytes(data[2: 2 + 4 * HEAD] if partial else data[2:])
    if partial:
        raw = raw[: len(raw) - len(raw) % 2]
    try:
        return raw.decode(encoding, errors="ignore" if partial else "strict")
    except UnicodeDecodeError as e:
        raise InputError(where=label, expected="UTF-16 text (the file starts with its byte-order mark)",
                         found=f"bytes that do not decode at offset {e.start + 2}",
                         hint="save the file again as UTF-8.") from None


_CHUNK = 1 << 22  #: bytes checked at a time for characters outside ASCII (a map's pages released after each)


def _ascii(data: bytes) -> bool:
    """Whether ``data`` (bytes or a map) is ASCII, in pieces: no copy of the whole, a map's pages let go."""
    if isinstance(data, bytes):
        return data.isascii()
    for start in range(0, len(data), _CHUNK):
        ascii_only = bytes(data[start: start + _CHUNK]).isascii()
        filemap.release(data, start, start + _CHUNK)
        if not ascii_only:
            return False
    return True


def _bad_utf8(data: bytes) -> bool:
    """Whether ``data`` is not UTF-8 for a reason other than its last character being cut (a truncated file, or
    the head a detection takes); checked in pieces, never the whole decoded at once."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(data), _CHUNK):
            decoder.decode(bytes(data[start: start + _CHUNK]))
    except UnicodeDecodeError:
        return True
    return False  # what is left in the decoder is a last character cut short (or the head's cut)


def _legacy(data: bytes, partial: bool) -> tuple[str, str] | None:
    """Text in Windows-1252 (see the module's notes) as text, with what the warning says of it; else None. Lines
    ended by ``\\r`` alone are a classic Mac's, whose "CSV (Macintosh)" is in Mac OS Roman (``é`` is 0x8E there,
    ``Ž`` in Windows-1252); text whose bytes outside ASCII stand in words is in Windows-1251 (:func:`_cyrillic`:
    a Russian or Ukrainian Windows' "CSV", ``внимание`` read as ``âíèìàíèå`` in Windows-1252)."""
    first_bytes = bytes(data[:HEAD])
    mac = b"\r" in first_bytes and b"\n" not in first_bytes
    head = first_bytes.lstrip(b" \t\r\n")
    if head[:1] in (b"{", b"[") or head[:3] == b"\xef\xbb\xbf":  # JSON, or a UTF-8 BOM: UTF-8 meant
        return None
    data = data[: 2 * HEAD] if partial else data
    if _ascii(data) or not _bad_utf8(data):
        return None
    raw = bytes(data)
    found = double_byte(raw, partial)  # Chinese, Japanese or Korean text (.dbcs): before any single-byte page
    if found == UNTOLD:
        return None  # which of those pages cannot be told: the parser's "not UTF-8"
    if found is not None:
        text, note = found[0], DBCS_NOTE.format(page=found[1])
    elif any(c > "\x7f" and c != "\ufffd" for c in raw.decode("utf-8", errors="replace")):
        return None  # UTF-8 characters beside the bad bytes: damaged, not another code page
    else:
        page, note = ("mac_roman", MAC_NOTE) if mac else ("cp1251", CYRILLIC_NOTE) if _cyrillic(raw) else \
            ("cp1252", LEGACY_NOTE)
        try:
            text = raw.decode(page)  # Mac OS Roman defines every byte
        except UnicodeDecodeError:  # a byte the code page leaves undefined: not that code page either
            return None
    first = next(i for i, c in enumerate(text) if c > "\x7f")
    line = text.count("\r" if mac else "\n", 0, first) + 1
    outside = sum(1 for c in text if c > "\x7f")
    return text, (f"{note} ({outside:,} character{'s' if outside != 1 else ''} outside "
                  f"ASCII, the first {text[first]!r} on line {line:,}); if a name shows wrong letters, save the file "
                  "again as UTF-8")


def _cyrillic(raw: bytes) -> bool:
    """Whether the bytes outside ASCII read as words of a Cyrillic script in Windows-1251, where every letter is a
    byte 0xC0-0xFF: most such bytes stand in runs of three or more. In Western European text (Windows-1252) the same
    bytes are accented letters, mostly alone between ASCII ones (café, Größe, ação)."""
    letters = len(_HIGH_LETTER.findall(raw))
    in_runs = sum(map(len, _CYRILLIC_RUN.findall(raw)))
    return letters >= 4 and in_runs >= 0.6 * letters


def _decimal(cell: str) -> str:
    m = _COMMA_NUMBER.match(cell)
    if m:
        sign, whole, frac, exp = m.groups()
        return f"{sign}{whole.replace('.', '')}.{frac}{exp or ''}"
    m = _GROUPED.match(cell)
    return f"{m.group(1)}{m.group(2).replace('.', '')}" if m else cell


def _decimal_commas(text: str, sep: str, label: str) -> bool:
    """Whether the table's numbers have decimal commas: some number can only mean that and none can only mean
    decimal points. Numbers that could mean either (``7,488``), with nothing else to tell, are refused."""
    numbers = _numbers(sep).findall(text)
    marks = {mark_of(t) for t in set(numbers)}
    if "," in marks:
        return "." not in marks
    if "." not in marks and "?" in marks:
        example = next(t for t in numbers if mark_of(t) == "?")
        raise InputError(where=label, text=f"numbers such as {example!r} in this {_SEP_NAMES[sep]}-separated table "
                         "could hold a decimal comma or a thousands separator, and no other number tells which.",
                         hint="save the file again as CSV with commas between fields and decimal points.")
    return False


def _commas(text: str, sep: str, label: str, partial: bool) -> tuple[str, bool]:
    """The table's fields joined by commas (quoted where they must be), decimal commas made points where the file
    has them; and whether it had."""
    decimal_commas = not partial and _decimal_commas(text, sep, label)  # detection reads no number
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        for row in rows:
            writer.writerow([_decimal(c) for c in row] if decimal_commas else row)
    except csv.Error as e:
        if not partial:
            raise InputError(where=label, text=f"line {rows.line_num}: the table's fields cannot be told apart "
                             f"({e}).", hint="save the file again as CSV with commas between fields.") from None
    return out.getvalue(), decimal_commas


def canonical(data: bytes, label: str, partial: bool = False) -> tuple[bytes, tuple[str, ...]]:
    """``data`` in the parsers' dialect, and what the workload read from it must say of the conversion (decimal
    commas, a legacy code page). ``partial``: only the format is being detected; a converted input is its head
    (the first ``2 * HEAD`` bytes, cut anywhere).

    ``data`` comes back itself (a map stays a map) unless it is UTF-16 or Windows-1252, ends lines with ``\\r``
    alone or with ``\\r\\r\\n``, starts with a ``sep=`` hint, is a tab- or semicolon-separated table, one whose
    rows end in empty fields beyond its header's names, or one with pandas' index as its first column. Other bytes
    that are not UTF-8 stay as they were, for the parser's message. Zero bytes that end a text file (what a crash
    or an interrupted copy leaves where data should be) are dropped, and the workload says so."""
    data, zeros = _zero_tail(data)
    if zeros:
        more = canonical(data, label, partial)
        return more[0], (ZERO_TAIL_NOTE.format(n=zeros), *more[1])
    text = _to_text(data, label, partial)
    if text is None and b"\x00" in bytes(data[:8192]):
        return data, ()  # binary: the registry refuses it with its own message
    notes: list[str] = []
    legacy = _legacy(data, partial) if text is None else None
    if legacy is not None:
        text = legacy[0]
        notes.append(legacy[1])
    head = text[:HEAD] if text is not None else bytes(data[:HEAD]).decode("utf-8", errors="surrogateescape")
    head, hint = _SEP_HINT.subn(r"\1", head, count=1)
    lone_cr = "\r" in head and "\n" not in head
    double_cr = "\r\r\n" in head
    lines_of = head.replace("\r", "\n") if lone_cr else head
    table = _table_head(lines_of)
    sep = table.sep if table is not None and table.sep != "," else None
    pad = table is not None and (table.fields > table.names
                                 or (sep is None and _padded(lines_of, table.line, table.names)))
    index = table is not None and table.indexed
    if text is None and not lone_cr and not double_cr and sep is None and not pad and not hint and not index:
        return data, ()
    if text is None:
        text = bytes(data[: 2 * HEAD] if partial else data).decode("utf-8", errors="surrogateescape")
    if hint:
        text = _SEP_HINT.sub(r"\1", text, count=1)
    if lone_cr:
        text = text.replace("\r", "\n")
    elif double_cr:
        text = text.replace("\r\r\n", "\n")
    decimal_commas = False
    if sep is not None:
        text, decimal_commas = _commas(text, sep, label, partial)
    if pad and table is not None:
        text = _unpadded(text, table.line, table.names, table.fields - table.names or None)
    if index and table is not None:
        text = _unindexed(text, table.line)
    if decimal_commas:
        notes.append(DECIMAL_COMMA_NOTE)
    return text.encode("utf-8", errors="surrogateescape"), tuple(notes)


ZERO_TAIL_NOTE = ("the file ends in {n:,} zero bytes, what a crash or an interrupted copy leaves where data should "
                  "be: read without them, and whatever the file held past that point is missing")


def _zero_tail(data: bytes) -> tuple[bytes, int]:
    """``data`` without the zero bytes that end it, and how many there were (0: ``data`` itself). UTF-8 text only:
    a UTF-16 file (a byte-order mark) ends in a zero byte of its own, and a file of zero bytes alone, one with a
    zero byte in its head or one that is not UTF-8 (an image ending in zeros) is binary (the registry's message)."""
    if data[-1:] != b"\x00" or bytes(data[:2]) in _BOMS:
        return data, 0
    text = bytes(data).rstrip(b"\x00")
    if not text or b"\x00" in text[:8192]:
        return data, 0
    try:  # the head: a letter its end cuts in two is no error
        codecs.getincrementaldecoder("utf-8")().decode(text[:HEAD], final=len(text) <= HEAD)
    except UnicodeDecodeError:
        return data, 0
    return text, len(data) - len(text)


#: the most rows a spreadsheet keeps: Excel and LibreOffice Calc since 2007 (1,048,576), Excel 97-2003 (65,536);
#: a table saved from one with exactly that many lines was most likely cut there
SPREADSHEET_ROWS = (1_048_576, 65_536)


def is_json(data: bytes) -> bool:
    """Whether the text starts as JSON does (an object or an array, after a BOM and blanks)."""
    return bytes(data[:HEAD]).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")


def spreadsheet_cut(data: bytes, lines: int | None = None) -> int | None:
    """The spreadsheet row limit a text table's line count equals (it was most likely cut there), else None.
    ``lines``: the count where the caller has it (:func:`roofcore.limits.check_rows`), else counted here, only for
    text large enough to hold that many lines; JSON is never a spreadsheet's."""
    if len(data) < 2 * SPREADSHEET_ROWS[-1] or is_json(data):
        return None
    if lines is None:
        lines = filemap.count(data, b"\n") + (data[-1:] != b"\n")
    return lines if lines in SPREADSHEET_ROWS else None


__all__ = ["CYRILLIC_NOTE", "DBCS_NOTE", "DECIMAL_COMMA_NOTE", "HEAD", "LEGACY_NOTE", "SPREADSHEET_ROWS", "ZERO_TAIL_NOTE", "canonical", "is_json", "mark_of",
           "separator", "spreadsheet_cut"]
