"""Nsight Systems GPU traces (``cuda_gpu_trace``): one row per kernel launch, its time, no FLOPs (docs/formats.md).

Reads the CSV of ``nsys stats --report cuda_gpu_trace --format csv`` (header ``Start (ns),Duration (ns),CorrId,GrdX,
GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,
Ctx,GreenCtx,Strm,Name``; older versions lack ``GreenCtx`` and write ``Throughput (MBps)``), wherever the header
sits in stdout (nsys's ``Processing [...] with [cuda_gpu_trace.py]`` lines before it). Columns are found by name;
a ``--timeunit`` other than ns is read from the header. Name is the last column: a name whose commas were left
unquoted keeps the fields after the others as its own.

One row per kernel launch: ``count`` 1, ``time_s`` = Duration, FLOPs and bytes unknown (NaN),
``meta["time_only"] = "true"``; ``device`` = the Device column (``NVIDIA H100 80GB HBM3 (0)`` → the name). Memory
operations (``[CUDA memcpy Host-to-Device]``, ``[CUDA memset]``) are not kernels: left out with a note of their
count and time. Read with an Nsight Compute export of some launches it is the timeline they join
(:mod:`roofcore.ingest.join`).
"""

from __future__ import annotations

import csv
import re
from functools import partial
from typing import Any

import numpy as np

from .. import limits
from ..errors import InputError
from ..models import Skipped, Workload
from . import check_text, make_frame, register_format, skip
from .nsys import TIME_UNITS
from .nvtx_ranges import attach_projection
from .readers import table_lines


def _column(name: str, unit: bool = False) -> str:
    """A lookahead for ``name`` as a whole field anywhere on the line (quoted or not), with its ``(unit)``
    captured where ``unit``: the columns in any order, as a spreadsheet may have moved them."""
    field = re.escape(name) + (r" \((\w+)\)" if unit else "")
    return rf'(?=(?:[^\n]*,)?[ \t]*"?{field}"?[ \t\r]*(?:,|$))'


#: the header: Start (unit), Duration (unit), CorrId, GrdX and Name columns, in any order (groups: the two units)
_HEADER = re.compile(r"^\ufeff?" + _column("Start", True) + _column("Duration", True) + _column("CorrId")
                     + _column("GrdX") + _column("Name") + r"[^\n]*$", re.M)
_MEMORY = re.compile(r"^\[CUDA (?:memcpy|memset|memory)", re.IGNORECASE)
_DEVICE_INDEX = re.compile(r"\s*\(\d+\)\s*$")
_HINT = ("load it together with an Nsight Compute export of some launches (joined by kernel name) or a kernel "
         "inventory")


def _sniff(head: str, name: str) -> bool:
    return "CorrId" in head and "GrdX" in head and bool(_HEADER.search(head))


def _number(cell: str) -> float:
    return float(cell.strip().replace(",", "") or "nan")


def _start(fields: list[str], col: dict[str, int], per_s: float) -> float:
    """A launch's Start in seconds (NaN where absent or not a number): for the NVTX ranges read beside it."""
    try:
        return _number(fields[col["start"]]) / per_s if "start" in col else float("nan")
    except ValueError:
        return float("nan")


def _is_row(width: int, duration: int, line: str) -> bool:
    """Whether a line past a blank one is a row of the trace (:func:`.readers.table_lines`): as wide as the header,
    a duration, not another header."""
    try:
        fields = next(csv.reader([line]), [])
        return len(fields) == width and _number(fields[duration]) >= 0 and not _HEADER.match(line)
    except (csv.Error, ValueError):
        return False


@register_format("nsys-gpu-trace", "Nsight Systems cuda_gpu_trace (CSV): time per kernel launch, no FLOPs", _sniff,
                 priority=16, role="timeline")
def parse(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Read an Nsight Systems GPU trace into time-only rows (one per kernel launch)."""
    text = check_text(data, source)
    m = _HEADER.search(text)
    if m is None:
        raise InputError(where=source, expected="an Nsight Systems cuda_gpu_trace header (Start (ns),Duration (ns),"
                         "CorrId,GrdX,…,Name)", found="none",
                         hint="export it with: nsys stats --report cuda_gpu_trace --format csv -o out report.nsys-rep")
    per_s = TIME_UNITS.get(m.group(2).lower())
    if per_s is None:
        raise InputError(where=f"{source}: header", expected="a Duration unit (ns, us, ms or s)",
                         found=repr(m.group(2)), hint="export with --timeunit ns (the default).")
    header = [h.strip() for h in next(csv.reader([m.group(0).lstrip("\ufeff")]))]
    col = {h.split(" (")[0].lower(): i for i, h in enumerate(header)}
    if "name" not in col or "duration" not in col:  # quotes that do not pair up hide a column from the CSV reader
        raise InputError(where=f"{source}: header", expected="Duration and Name columns",
                         found=", ".join(header)[:200],
                         hint="export it again with: nsys stats --report cuda_gpu_trace --format csv -o out report.nsys-rep")
    first_line = text.count("\n", 0, m.start()) + 2
    names, times, lines, devices, starts = [], [], [], [], []
    skipped: list[Skipped] = []
    memory = [0, 0.0]
    rows = text[m.end() + 1:].split("\n")
    for k, line in table_lines(rows, partial(_is_row, len(header), col["duration"])):
        line_no = first_line + k
        if not line_no & 0xFFF:
            limits.tick()
        try:
            fields = next(csv.reader([line]), [])
        except csv.Error as e:  # a NUL byte past the head, an unclosed quote spanning the line
            skipped.append(skip(source, f"line {line_no}", f"not a CSV row ({e})"))
            continue
        if len(fields) > len(header) and col["name"] == len(header) - 1:  # a name whose commas were left unquoted
            fields = [*fields[:col["name"]], ",".join(fields[col["name"]:])]
        if len(fields) != len(header):
            skipped.append(skip(source, f"line {line_no}", f"expected {len(header)} fields, found {len(fields)}"))
            continue
        name = fields[col["name"]].strip()
        try:
            t = _number(fields[col["duration"]]) / per_s
        except ValueError:
            t = float("nan")
        if not (np.isfinite(t) and t >= 0) or not name:
            skipped.append(skip(source, f"line {line_no}", f"Duration must be a time ≥ 0 and Name given, found "
                                f"{fields[col['duration']].strip()!r} and {name!r}"))
            continue
        if _MEMORY.match(name):
            memory[0] += 1
            memory[1] += t
            continue
        names.append(name)
        times.append(t)
        starts.append(_start(fields, col, per_s))
        lines.append(str(line_no))
        if "device" in col:
            devices.append(_DEVICE_INDEX.sub("", fields[col["device"]]).strip())
    if not names:
        raise InputError(where=source, expected="at least one kernel launch under the cuda_gpu_trace header",
                         found=f"{memory[0]:,} memory operations only" if memory[0] else "none",
                         hint="profile with CUDA tracing (nsys profile -t cuda) and check that kernels ran.")
    w = launches("nsys-gpu-trace", source, names, times, lines, devices, (int(memory[0]), memory[1]), skipped)
    return attach_projection(w, np.asarray(starts, dtype=np.float64), context, text)  # NVTX ranges beside it


def launches(fmt: str, source: str, names: list[str], times: list[float], rows: list[str], devices: list[str],
             memory: tuple[int, float], skipped: list[Skipped]) -> Workload:
    """The time-only workload of kernel launches (one row each) however nsys stored them: ``devices`` the GPU of
    each (empty: unknown), ``memory`` the count and seconds of the copies and memsets left out."""
    n = len(names)
    frame = make_frame({"name": names, "count": np.ones(n, dtype=np.int64), "time_s": np.asarray(times),
                        "source": [source] * n, "row": rows}, n)
    warnings = []
    if memory[0]:
        warnings.append(f"{memory[0]:,} memory operations (copies, memsets; {memory[1] * 1e3:.3g} ms) left out: they "
                        "are not kernels.")
    warnings.append(f"an Nsight Systems GPU trace gives times only: FLOPs and bytes of the {n:,} kernel launches are "
                    f"unknown (left empty, not zero). Hint: {_HINT}.")
    named = [d for d in dict.fromkeys(devices) if d and not d.isdigit() and d.upper() != "GPU"]
    meta = {"time_only": "true", "profiler": "Nsight Systems", "nsys_layout": "gpu trace"}
    if len(named) > 1:
        meta["devices"] = ", ".join(named)
    return Workload(frame=frame, name=source, sources=(source,), formats=(fmt,), skipped=tuple(skipped),
                    warnings=tuple(warnings), device=named[0] if named else None, meta=meta)
