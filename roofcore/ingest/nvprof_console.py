"""nvprof's console summary (``nvprof ./app``, ``--print-gpu-summary``, ``--print-api-summary``: no ``--csv``), read as
the CSV summary's rows (:func:`table`), so :mod:`.nvprof` takes both the same way.

The table is fixed-width text with the unit inside every cell and the kernel name unquoted, commas and all::

    ==4242== Profiling result:
                Type  Time(%)      Time     Calls       Avg       Min       Max  Name
     GPU activities:   47.79%  542.36ms         1  542.36ms  542.36ms  542.36ms  matmul(float*, float*, float*, int)
                       30.12%  1.2340us         2  617.00ns  600.00ns  634.00ns  [CUDA memcpy HtoD]
          API calls:   80.00%  1.00000s         3  333.33ms  4.5670us  999.00ms  cudaMalloc

Each row is split by what its numeric fields must look like (a percentage, then six numbers with units, a count in
the middle): the name is the rest of the line. A row without a ``Type:`` label belongs to the last label above it;
CUDA 8's layout has no Type column and puts the API calls under their own ``==<pid>== API calls:`` line. Other
sections (``Unified Memory profiling result``, ``OpenACC``, ``OpenMP``) are not kernel rows and are left out.
"""

from __future__ import annotations

import re

HEADER = re.compile(r"^\s*(Type\s+)?Time\(%\)\s+Time\s+Calls\s+Avg\s+Min\s+Max\s+Name\s*$", re.M)
COLUMNS = ["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
_QTY = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[A-Za-zµμ]*"
_ROW = re.compile(rf"^\s*(?:(?P<type>[A-Za-z][A-Za-z ()/]*?):)?\s*(?P<pct>[+-]?[\d.]+%)\s+(?P<time>{_QTY})\s+"
                  rf"(?P<calls>\d+)\s+(?P<avg>{_QTY})\s+(?P<min>{_QTY})\s+(?P<max>{_QTY})\s+(?P<name>\S.*?)\s*$")
_API_SECTION = re.compile(r"^==\d+== API calls:\s*$")
_OTHER_SECTION = re.compile(r"^==\d+== ")


def table(text: str) -> tuple[list[str], list[list[str]], list[int]]:
    """``(header, rows, line numbers)`` of every console summary table in ``text``, rows in the CSV summary's
    columns (:data:`COLUMNS`, the Type filled in); empty rows where there is no such table."""
    rows: list[list[str]] = []
    lines: list[int] = []
    kind: str | None = None  # the section the next unlabelled row belongs to (None: not in a table)
    api = False  # under CUDA 8's "==<pid>== API calls:" line
    for no, line in enumerate(text.split("\n"), start=1):
        head = HEADER.match(line)
        if head:  # "": a labelled row comes first
            kind = "" if head.group(1) else "API calls" if api else "GPU activities"
            continue
        if _OTHER_SECTION.match(line):  # a section's own line: the rows of its table follow its header
            api, kind = bool(_API_SECTION.match(line)), None
            continue
        if kind is None:
            continue
        m = _ROW.match(line)
        if m is None:
            continue
        if m.group("type"):
            kind = m.group("type").strip()
        rows.append([kind, *(m.group(k) for k in ("pct", "time", "calls", "avg", "min", "max", "name"))])
        lines.append(no)
    return COLUMNS, rows, lines
