"""An Nsight Compute CSV as some other program wrote it back, rewritten as ncu writes it, so that one reader (fast on
ncu's own form) reads both.

A spreadsheet saves the table with quotes only where a field needs them, may move columns, and a script may leave
kernel names unquoted, so that a name holding commas spills over several fields. The header is found by its column
names (``ID``, ``Process ID``, ``Kernel Name``) in any order and quoting; every row is split with a CSV parser, a
spilled name is put back together by what a demangled name must look like (:func:`~.columns.unspill`), ``ID`` and
``Process ID`` are moved to the front and every field is quoted. A line that is no row (program output, ncu's own
``==PROF==`` lines) stays as it was, and every line keeps its number.
"""

from __future__ import annotations

import csv
import re

from .columns import header_with, unspill

#: an ncu header line in any order and quoting
ANY_HEADER = header_with("ID", "Process ID", "Kernel Name")
_LEAD = ("ID", "Process ID")
_WHOLE = re.compile(r"^\s*\d{1,3}(?:,?\d{3})*\s*$")  # a launch id (a spreadsheet may group its digits)


def _quoted(fields: list[str]) -> str:
    return ",".join('"' + f.replace('"', '""') + '"' for f in fields)


def canonical(data: bytes) -> bytes | None:
    """``data`` with its ncu table rewritten as ncu writes it; None where no ncu header is found by name or the
    rewrite changes nothing."""
    text = data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    m = ANY_HEADER.search(text)
    if m is None:
        return None
    lines = text[m.start():].split("\n")
    header = [h.strip() for h in _split(lines[0]) or []]
    if not all(c in header for c in (*_LEAD, "Kernel Name")):
        return None
    order = [header.index(c) for c in _LEAD] + [i for i, c in enumerate(header) if c not in _LEAD]
    at, ids = header.index("Kernel Name"), header.index("ID")
    out: list[str] = []
    after_header = True  # the raw page's units row follows its header
    for line in lines:
        fields = _split(line) if line.strip() else None
        if fields is None:
            out.append(line)
            continue
        if [f.strip() for f in fields] == header:
            out.append(_quoted([header[i] for i in order]))
            after_header = True
            continue
        fixed = unspill(fields, at)
        launch = fixed is not None and ids < len(fixed) and bool(_WHOLE.match(fixed[ids]))
        if fixed is None or not (launch or after_header):
            out.append(line)  # not a row: program output, ncu's own lines
            after_header = False
            continue
        after_header = False
        out.append(_quoted([fixed[i] for i in order if i < len(fixed)] + fixed[len(header):]))
    new = (text[:m.start()] + "\n".join(out)).encode("utf-8")
    return None if new == data else new


def _split(line: str) -> list[str] | None:
    try:
        return next(csv.reader((line,)))
    except (csv.Error, StopIteration):
        return None
