"""CSV tables read by what their columns hold, not by where a tool put them or how it quoted them: header lines found
by column names in any order and quoting (:func:`header_with`), and kernel names that held unquoted commas put
back into their column (:func:`rejoin` where the row's width is fixed, :func:`unspill` where it is not), by what a
demangled name must look like: brackets that balance, and a space after each comma inside it."""

from __future__ import annotations

import functools
import re


def _column(name: str) -> str:
    """``name`` as a whole field somewhere on the line, quoted or not."""
    return rf'(?:[^\n]*,)?[ \t]*"?{re.escape(name)}"?[ \t]*(?:,|$)'


class Header:
    """A header line found by its column names (:func:`header_with`, :func:`either`): ``search``, ``match`` and
    ``pattern`` as a compiled pattern's. Sniffing tries every format on the first 64 kB of every file, and a line
    pattern that looks for names anywhere on each line costs time on each line; a text whose first 64 kB hold
    one of the names nowhere is answered at once."""

    _QUICK = 65536

    def __init__(self, regex: re.Pattern[str], names: tuple[str, ...]) -> None:
        self.regex, self.pattern, self._names = regex, regex.pattern, tuple(n.lower() for n in names)

    def _absent(self, text: str) -> bool:
        head = text[:self._QUICK].lower()
        return len(text) <= self._QUICK and any(n not in head for n in self._names)

    def search(self, text: str, *pos: int) -> re.Match[str] | None:
        return None if not pos and self._absent(text) else self.regex.search(text, *pos)

    def match(self, text: str, *pos: int) -> re.Match[str] | None:
        return self.regex.match(text, *pos)


def header_with(*names: str, without: tuple[str, ...] = (), most: int | None = None) -> Header:
    """A header line (any case, any quoting) with each of ``names`` as a column, in any order, none of ``without``,
    and at most ``most`` columns: columns are found by name, so a spreadsheet's reordering or a column a newer
    version adds does not hide the file."""
    look = "".join(f"(?={_column(n)})" for n in names) + "".join(f"(?!{_column(n)})" for n in without)
    if most:
        look += rf"(?!(?:[^\n]*,){{{most}}})"
    return Header(re.compile(rf"^{look}[^\n]*$", re.M | re.I), names)


class Either:
    """The first header line any of several :class:`Header` (or patterns) finds (a format with more than one
    layout)."""

    def __init__(self, *headers: HeaderPattern) -> None:
        self.headers = headers
        self.pattern: str = "|".join(h.pattern for h in headers)

    def search(self, text: str, *pos: int) -> re.Match[str] | None:
        found = [m for h in self.headers if (m := h.search(text, *pos)) is not None]
        return min(found, key=lambda m: m.start(), default=None)

    def match(self, text: str, *pos: int) -> re.Match[str] | None:
        return next((m for h in self.headers if (m := h.match(text, *pos)) is not None), None)


_PAIRS = (("(", ")"), ("<", ">"), ("[", "]"), ("{", "}"))


@functools.lru_cache(maxsize=1 << 14)  # names repeat on every row of their launches
def is_open(name: str) -> bool:
    """Whether a kernel name stops inside its brackets (``void f<float`` of ``void f<float, 2>(float*)``): a demangled
    name closes every bracket it opens (``<``/``>`` not counted where the name holds an ``operator`` or ``->``)."""
    angle = "operator" not in name and "->" not in name
    return any(name.count(a) > name.count(b) for a, b in _PAIRS if angle or a != "<")


def rejoin(fields: list[str], at: int, ncol: int) -> list[str]:
    """A record of ``ncol`` columns whose text field ``at`` (a kernel name) held unquoted commas and spilled over the
    fields after it: the name is the fields between the columns before it and the columns after it, joined with
    their commas (one text column: the split is fixed by the count). The name takes as few fields as leave nothing
    but empty fields beyond the header (a trailing comma), preferring a split that looks like a demangled name's:
    each piece after the first begins with the space of ", ", the field after the name does not."""
    n = len(fields)
    fits = [e for e in range(1, n - ncol + 1) if not "".join(fields[n - (n - ncol - e):]).strip()]
    if not fits:
        return fields

    def named(e: int) -> bool:
        after = fields[at + e + 1] if at + e + 1 < n else ""
        return all(p[:1].isspace() for p in fields[at + 1:at + e + 1]) and not after[:1].isspace()

    e = next((e for e in fits if named(e)), fits[0])
    return [*fields[:at], ",".join(fields[at:at + e + 1]), *fields[at + e + 1:]]


def unspill(fields: list[str], at: int) -> list[str] | None:
    """A row of a table whose width varies (ncu's details page: rule columns present on some rows only) with the
    kernel name at ``at`` put back together where it held unquoted commas: while the name is open (:func:`is_open`)
    it takes the next field, which must begin with the space of ", ". The row as it is where the name is whole;
    None where the name stays open (where it ends cannot be told)."""
    if at >= len(fields) or not is_open(fields[at]):
        return fields
    end = at + 1
    name = fields[at]
    while is_open(name):
        if end >= len(fields) or not fields[end][:1].isspace():
            return None
        name += "," + fields[end]
        end += 1
    return [*fields[:at], name, *fields[end:]]


def last_line_cut(text: str) -> tuple[int, str] | None:
    """``(line number, text)`` of the last line of ``text`` where the text ends inside it with no newline after it
    (a copy cut short, or only a missing final newline: the caller tells them apart by what the row must look like,
    :func:`cut_short`); None where the text ends with a newline."""
    if not text or text.endswith("\n"):
        return None
    at = text.rfind("\n") + 1
    return text.count("\n") + 1, text[at:]


def cut_short(line: str, name: str = "") -> bool:
    """Whether a file's unterminated last line is a row cut short: it stops inside a quoted field (an odd number of
    quotes), or its kernel name stops inside its brackets (:func:`is_open`)."""
    return line.count('"') % 2 == 1 or (bool(name) and is_open(name))


#: what finds a header line: a compiled pattern, or one found by column names
HeaderPattern = re.Pattern[str] | Header | Either
