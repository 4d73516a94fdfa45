"""Legacy ``nvprof --csv`` output (CUDA ≤ 11, GPUs up to Volta/Turing; docs/formats.md): three layouts.

* **Metrics** (``nvprof --csv --metrics a,b,...``, format ``nvprof``): ``"Device","Kernel","Invocations",
  "Metric Name","Metric Description","Min","Max","Avg"``, one row per kernel × metric, aggregated over the
  kernel's invocations. Values may carry a unit or ``%`` inside the cell (``1.469597GB/s``, ``92.14%``).
  One row per (device, kernel): ``count`` = Invocations and totals = Avg × Invocations.
  FLOPs = ``flop_count_dp + flop_count_sp + flop_count_hp`` (each counts a fused multiply-add as 2; else the
  ``_add + _mul + 2·_fma`` parts), CUDA cores only (nvprof counts no tensor-core work); DRAM bytes =
  ``dram_read_bytes + dram_write_bytes``, else ``dram_read_transactions + dram_write_transactions`` × 32 B;
  L2 bytes = ``l2_read_transactions + l2_write_transactions`` × 32 B. nvprof's metric mode has no kernel time:
  ``time_s`` is unknown. An export with neither FLOP nor byte counts (only rates, ratios and percentages) is
  refused with the metrics to collect; ``--events`` output likewise.
* **GPU trace** (``nvprof --csv --print-gpu-trace``, format ``nvprof-trace``): ``"Start","Duration",
  "Grid X",...,"Name"`` with a units row (``ms,us,...``): one row per kernel launch, time only.
* **Summary** (``nvprof --csv``, the default, also ``nvprof-trace``): ``"Type","Time(%)","Time","Calls",
  "Avg","Min","Max","Name"`` with a units row: the ``GPU activities`` kernels, total time and calls, time only.
  Without ``--csv`` the same summary is a console table with the unit inside every cell (``542.36ms``) and names
  unquoted (:mod:`.nvprof_console`); a summary of API calls only is refused by name.

A unit written inside a cell wins over the units row, and a row whose kernel name (or metric description) held
commas and was left unquoted is put back into its columns by what the other cells must look like
(:func:`.readers.refit`): headers are found quoted or not.

Copies and memsets (``[CUDA memcpy HtoD]``, ``[CUDA memset]``) and API rows are left out with a note. A time-only
trace or summary read together with a metrics export gets its FLOPs and bytes by kernel name (``read_many``).
``==<pid>==`` lines and program output around the table are ignored. Byte units in cells are binary
(nvprof's ``KB`` is 1,024 B: a 1,028-byte memset prints as ``1.003906 KB``). ``workload.device`` is the Device
column without its ``(index)``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..models import Workload
from . import COUNT_LIMIT, check_text, make_frame, nvprof_console, register_format
from .columns import Header, header_with
from .readers import is_quantity, refit, seconds


def _header(*names: str) -> Header:
    """A header line with the columns ``names``, in any order, quoted as nvprof writes them or not (a spreadsheet's
    round-trip may move columns too; they are read by name)."""
    return header_with(*names)


_METRICS_HEADER = _header("Device", "Kernel", "Invocations", "Metric Name")
_EVENTS_HEADER = _header("Device", "Kernel", "Invocations", "Event Name")
_TRACE_HEADER = _header("Start", "Duration", "Grid X")
_SUMMARY_HEADER = _header("Type", "Time(%)", "Time", "Calls", "Avg")
_API_TRACE = _header("Start", "Duration", "Name", "Correlation_ID")
_NOISE = re.compile(r"^==\d+==|^======== ")
#: columns each layout is read by
_NEEDED = {_METRICS_HEADER.pattern: ("Device", "Kernel", "Invocations", "Metric Name", "Avg"),
           _TRACE_HEADER.pattern: ("Duration", "Grid X", "Name"),
           _SUMMARY_HEADER.pattern: ("Type", "Time", "Calls", "Name")}

#: the counts a roofline needs, to name in messages
METRICS = "flop_count_sp,flop_count_dp,flop_count_hp,dram_read_bytes,dram_write_bytes"
PROFILE_HINT = (f"profile with nvprof --csv --metrics {METRICS} ./app > metrics.csv (dram_read_transactions,"
                "dram_write_transactions where the byte metrics are missing) and nvprof --csv --print-gpu-trace ./app "
                "> trace.csv for kernel times; load both files together.")
#: seconds per time unit in a units row or a cell
_TIME = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
#: bytes per byte unit (binary prefixes: nvprof's KB is 1,024 B)
_BYTES = {"B": 1.0, "KB": 2.0**10, "MB": 2.0**20, "GB": 2.0**30, "TB": 2.0**40}
_CELL = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z%/µ]*)\s*$")
_NOT_KERNELS = re.compile(r"^\[CUDA (?:memcpy|memset)|^\[CUDA ")


def _sniff_metrics(head: str, name: str) -> bool:
    return bool(_METRICS_HEADER.search(head) or _EVENTS_HEADER.search(head))


def _sniff_trace(head: str, name: str) -> bool:
    return bool(_TRACE_HEADER.search(head) or _SUMMARY_HEADER.search(head) or _API_TRACE.search(head)
                or nvprof_console.HEADER.search(head))


def _any(cell: str) -> bool:
    return True


def _count(cell: str) -> bool:
    return cell.strip().replace(",", "").isdigit()


#: per layout, what each column's cell must look like (None: text that may hold unquoted commas; absent: anything),
#: to put a row whose kernel name held unquoted commas back into its columns (:func:`.readers.refit`)
_KINDS: dict[str, dict[str, Callable[[str], bool] | None]] = {
    _METRICS_HEADER.pattern: {"Kernel": None, "Metric Description": None, "Invocations": _count,
                              "Metric Name": lambda c: bool(re.fullmatch(r"\s*\w+\s*", c))},
    _TRACE_HEADER.pattern: {"Name": None},
    _SUMMARY_HEADER.pattern: {"Name": None, **dict.fromkeys(("Time(%)", "Time", "Calls", "Avg", "Min", "Max"),
                                                            lambda c: not c.strip() or is_quantity(c))}}


# ------------------------------------------------------------------------------------------ reading


def _table(text: str, header: Header, source: str) -> tuple[list[str], list[list[str]], list[int]]:
    """``(header fields, data rows, their line numbers)``: the table from its header on, ``==<pid>==`` lines (also
    as a row's first field), program output (lines of another width) and rows of empty fields left out."""
    m = header.search(text)
    if m is None:
        raise InputError(where=source, expected="an nvprof --csv table", found="no nvprof header",
                         hint=PROFILE_HINT)
    first = text.count("\n", 0, m.start()) + 1
    numbered = [(first + i, ln) for i, ln in enumerate(text[m.start():].split("\n"))
                if ln.strip() and not _NOISE.match(ln)]
    rows = list(csv.reader(ln for _, ln in numbered))
    head = rows[0]
    missing = [c for c in _NEEDED[header.pattern] if c not in head]
    if missing or len(set(head)) < len(head):
        raise InputError(where=f"{source}: line {first}", expected=f"nvprof's columns ({', '.join(_NEEDED[header.pattern])})",
                         found=f"no {missing[0]!r}" if missing else "a column name twice",
                         hint="export again with nvprof --csv; the columns are read by name.")
    kinds = [_KINDS[header.pattern].get(c, _any) for c in head]
    rows = [refit(r, kinds) or r if len(r) > len(head) else r for r in rows]  # names holding unquoted commas
    # a row of empty fields is a spreadsheet's blank row, and one whose first field is nvprof's ``==<pid>==`` line
    # is that line as pandas writes it back (a field, the others empty): neither is a kernel
    keep = [i for i, r in enumerate(rows) if i and len(r) == len(head) and r != head and any(c.strip() for c in r)
            and not _NOISE.match(r[0])]
    return head, [rows[i] for i in keep], [numbered[i][0] for i in keep]


def _repeated_header(text: str, header: Header) -> int | None:
    """The line where the table's header appears a second time (two exports joined, or one pasted twice); None
    where it does not."""
    first = header.search(text)
    again = header.search(text, first.end()) if first is not None else None
    return text.count("\n", 0, again.start()) + 1 if again is not None else None


def _device(values: pd.Series) -> str | None:
    """The first device name without nvprof's ``(index)`` suffix."""
    for v in values:
        name = re.sub(r"\s*\(\d+\)\s*$", "", str(v)).strip()
        if name:
            return name
    return None


def _cells(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Cells → (numbers, unit strings); a cell that is not a number (``Idle (0)``, ``n/a``) is NaN."""
    parts = values.astype(str).str.replace(",", "", regex=False).str.extract(_CELL)
    v = np.array(pd.to_numeric(parts[0], errors="coerce"), dtype=np.float64)
    v[~(np.isfinite(v) & (v >= 0))] = np.nan  # counts and sizes are never negative or infinite
    return v, parts[1].fillna("").to_numpy()


# ------------------------------------------------------------------------------------------ metrics


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")

_PRECISIONS = (("dp", "fp64"), ("sp", "fp32"), ("hp", "fp16"))


def _flop_counts(total: Callable[[str], np.ndarray | None], warnings: list[str]) -> dict[str, np.ndarray]:
    """FLOPs per kernel by precision: ``flop_count_<tag>``, else the sum of its parts (warned where some are
    missing); a precision none of whose counts is in the export is left out."""
    by_prec: dict[str, np.ndarray] = {}
    for tag, prec in _PRECISIONS:
        v = total(f"flop_count_{tag}")
        if v is None:  # the parts: a multiply-add counts 2 FLOPs, as in flop_count_<tag> itself
            add, mul, fma = (total(f"flop_count_{tag}_{p}") for p in ("add", "mul", "fma"))
            if any(x is not None for x in (add, mul, fma)):
                v = np.sum([x * w for x, w in ((add, 1), (mul, 1), (fma, 2)) if x is not None], axis=0)
                missing = [f"flop_count_{tag}_{p}" for p, x in (("add", add), ("mul", mul), ("fma", fma)) if x is None]
                if missing:
                    warnings.append(f"{prec} FLOPs leave out {', '.join(missing)} (not in the export).")
        if v is not None:
            by_prec[prec] = v
    return by_prec


def _precisions(by_prec: dict[str, np.ndarray], df: pd.DataFrame, metric: np.ndarray, codes: np.ndarray,
                flops: np.ndarray, precision: np.ndarray, unit: np.ndarray, warnings: list[str]) -> None:
    """Each kernel's precision (the one with most FLOPs) and unit; ``flops`` unknown where tensor cores were busy."""
    stack = np.nan_to_num(np.vstack(list(by_prec.values())), nan=-1.0)
    has = stack.max(axis=0) > 0
    precision[has] = np.array(list(by_prec), dtype=object)[stack.argmax(axis=0)][has]
    unit[has] = "vector"
    absent = [p for _, p in _PRECISIONS if p not in by_prec]
    if absent:
        warnings.append(f"FLOPs leave out {', '.join(absent)} (flop_count_"
                        f"{', flop_count_'.join(t for t, p in _PRECISIONS if p in absent)} not in the export).")
    # nvprof counts no tensor-core FLOPs: a kernel that kept the tensor units busy did most of its work
    # uncounted, so its CUDA-core count would be a gross undercount, not its FLOPs
    level = pd.to_numeric(df["Avg"].str.extract(r"\((\d+)\)\s*$")[0], errors="coerce").to_numpy()
    busy = np.isin(metric, ["tensor_precision_fu_utilization", "tensor_int_fu_utilization"]) & (level > 0)
    tensor = np.zeros(len(flops), dtype=bool)
    tensor[codes[busy]] = True
    if tensor.any():
        flops[tensor] = np.nan
        unit[tensor] = "matrix"
        warnings.append(f"FLOPs unknown for {_plural(int(tensor.sum()), 'kernel')} that used tensor cores "
                        "(tensor_*_fu_utilization above Idle): nvprof counts no tensor-core FLOPs; Nsight Compute's "
                        "sm__inst_executed_pipe_tensor.sum or sm__ops_path_tensor_* counts them.")


def _metrics(text: str, source: str) -> Workload:
    if _EVENTS_HEADER.search(text) and not _METRICS_HEADER.search(text):
        raise InputError(where=source, text="this is nvprof --events output (raw hardware events, per kernel): no "
                         "FLOP or byte counts a roofline can use and no kernel time.", hint=PROFILE_HINT)
    head, rows, _lines = _table(text, _METRICS_HEADER, source)
    if not rows:
        raise InputError(where=source, expected="metric rows under the nvprof header", found="a header only",
                         hint="the run profiled no kernel; " + PROFILE_HINT)
    df = pd.DataFrame(rows, columns=head)
    avg, units = _cells(df["Avg"])
    inv = pd.to_numeric(df["Invocations"].str.replace(",", "", regex=False), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(inv) & (inv >= 0) & (inv == np.round(inv)))
    if bad.any():
        raise InputError(where=f"{source}: line {_lines[int(np.argmax(bad))]}", expected="a whole number of "
                         "invocations", found=repr(df["Invocations"].iloc[int(np.argmax(bad))]),
                         hint="export again with nvprof --csv.")
    metric = df["Metric Name"].str.strip().to_numpy()
    key = df["Device"] + "\x1f" + df["Kernel"]  # not NUL: pandas < 2.2 cuts hashed strings there
    codes, kernels = pd.factorize(key, sort=False)
    n = len(kernels)
    names = [k.split("\x1f", 1)[1] for k in kernels]
    count = np.zeros(n)
    count[codes] = inv  # one Invocations per kernel row (nvprof repeats it on every metric row)

    def total(name: str, scale: dict[str, float] | None = None) -> np.ndarray | None:
        """Avg × Invocations of one metric per kernel (NaN where absent for a kernel), None if never present."""
        sel = metric == name
        if not sel.any():
            return None
        # a count has no unit; a byte count may carry one (binary prefixes); anything else is not a count
        f = np.array([1.0 if not u else (scale or {}).get(u, np.nan) for u in units[sel]])
        out = np.full(n, np.nan)
        out[codes[sel]] = avg[sel] * f * inv[sel]
        return out

    def plus(*parts: np.ndarray | None) -> np.ndarray | None:
        got = [p for p in parts if p is not None]
        return None if len(got) < len(parts) else np.sum(got, axis=0)

    warnings: list[str] = []
    by_prec = _flop_counts(total, warnings)
    flops = np.sum(list(by_prec.values()), axis=0) if by_prec else np.full(n, np.nan)
    hbm = plus(total("dram_read_bytes", _BYTES), total("dram_write_bytes", _BYTES))
    if hbm is None:
        tx = plus(total("dram_read_transactions"), total("dram_write_transactions"))
        hbm = None if tx is None else tx * 32.0  # 32-byte DRAM transactions
    l2 = plus(total("l2_read_transactions"), total("l2_write_transactions"))
    if not by_prec and hbm is None and l2 is None:
        have = list(dict.fromkeys(metric))
        shown = ", ".join(have[:4]) + (f" and {len(have) - 4} more" if len(have) > 4 else "")
        raise InputError(where=source, text=f"this nvprof --metrics export holds no FLOP or byte counts ({shown}: "
                         "rates, ratios and percentages), and nvprof's metric mode records no kernel time, so "
                         "there is nothing to place on a roofline.", hint=PROFILE_HINT)

    precision = np.full(n, None, dtype=object)
    unit = np.full(n, None, dtype=object)
    if by_prec:
        _precisions(by_prec, df, metric, codes, flops, precision, unit, warnings)
    else:
        warnings.append(f"no FLOP counts (flop_count_sp, flop_count_dp, flop_count_hp): FLOPs unknown; {PROFILE_HINT}")
    if hbm is None:
        warnings.append("no DRAM counts (dram_read_bytes/dram_write_bytes or dram_*_transactions): off-chip bytes "
                        "unknown.")
    warnings.append("nvprof's metric mode records no kernel time: time unknown; load an nvprof --csv "
                    "--print-gpu-trace export of the same run with it for the times.")
    cols: dict[str, object] = {
        "name": np.asarray(names, dtype=object), "count": count.astype(np.int64), "flops": flops,
        "time_s": np.full(n, np.nan), "precision": precision, "unit": unit,
        "source": np.full(n, source, dtype=object), "row": np.asarray([str(k) for k in range(n)], dtype=object),
        "bytes_hbm": hbm if hbm is not None else np.full(n, np.nan),
    }
    if l2 is not None:
        cols["bytes_l2"] = l2 * 32.0  # 32-byte L2 transactions
    return Workload(frame=make_frame(cols, n), name=source, sources=(source,), formats=("nvprof",),
                    warnings=tuple(warnings), device=_device(df["Device"]), meta={"profiler": "nvprof"})


# ------------------------------------------------------------------------------------------ times


def _unit_row(rows: list[list[str]], lines: list[int]) -> tuple[list[str] | None, list[list[str]], list[int]]:
    """The units row (``ms,us,,,...``: no cell a number), and the other rows with their line numbers. It is found
    under the header, or among the rows where a spreadsheet's sort moved it; None where there is none."""
    for row in rows:
        if any(c.strip() for c in row) and all(not c or not re.match(r"^[+-]?\d", c) for c in row):
            keep = [j for j, r in enumerate(rows) if r != row]  # and its repeats under a repeated header
            return row, [rows[j] for j in keep], [lines[j] for j in keep]
    return None, rows, lines


def _seconds(values: pd.Series, unit: str | None, source: str, column: str) -> np.ndarray:
    """Durations in seconds: in the units row's unit (none written: seconds), a unit inside a cell (542.36ms)
    winning; without a units row a plain number's unit is unknown (NaN). Never negative."""
    if unit and unit not in _TIME:
        raise InputError(where=f"{source}: column {column!r}", expected="a time unit (ns, us, ms, s)",
                         found=repr(unit), hint="export again with nvprof --csv.")
    return seconds(values.to_numpy(), "" if unit is None else unit or "s")


def _times(text: str, source: str) -> Workload:
    if _API_TRACE.search(text) and not (_TRACE_HEADER.search(text) or _SUMMARY_HEADER.search(text)):
        raise InputError(where=source, text="this is an nvprof API trace (host-side CUDA calls), not GPU kernels.",
                         hint="export the kernels with nvprof --csv --print-gpu-trace ./app.")
    trace = _TRACE_HEADER.search(text) is not None
    console = not trace and not _SUMMARY_HEADER.search(text)  # nvprof without --csv: the console summary
    head, rows, lines = (nvprof_console.table(text) if console
                         else _table(text, _TRACE_HEADER if trace else _SUMMARY_HEADER, source))
    units, rows, lines = _unit_row(rows, lines)
    df = pd.DataFrame(rows, columns=head)
    unit: dict[str, str | None] = (dict(zip(head, units, strict=False)) if units is not None
                                   else dict.fromkeys(head, None if not console else ""))
    if trace:
        keep = ~df["Name"].str.match(_NOT_KERNELS) & df["Grid X"].str.strip().astype(bool)
        time = _seconds(df["Duration"], unit.get("Duration"), source, "Duration")
        count = np.ones(len(df), dtype=np.int64)
        row = np.asarray([f"line {i}" for i in lines], dtype=object)
    else:
        keep = (df["Type"] == "GPU activities") & ~df["Name"].str.match(_NOT_KERNELS)
        time = _seconds(df["Time"], unit.get("Time"), source, "Time")
        calls = pd.to_numeric(df["Calls"].str.replace(",", "", regex=False), errors="coerce").to_numpy(dtype=np.float64)
        keep &= np.isfinite(calls) & (calls >= 1) & (calls < COUNT_LIMIT)  # a kernel row without a call count is noise
        count = np.where(keep, calls, 1).astype(np.int64)
        row = df["Name"].to_numpy()
    left_out = int((~keep).sum())
    sel = keep.to_numpy()
    n = int(sel.sum())
    if not n and not trace and len(df) and (df["Type"] == "API calls").all():
        raise InputError(where=source, text="this is an nvprof API summary (host-side CUDA calls), not GPU kernels.",
                         hint="export the kernels: nvprof --print-gpu-summary ./app (or nvprof --csv "
                              "--print-gpu-trace ./app for every launch).")
    if not n:
        raise InputError(where=source, expected="GPU kernel rows in the nvprof table", found="none (copies, memsets "
                         "or API calls only)" if len(df) else "a header only", hint=PROFILE_HINT)
    warnings = [f"{left_out:,} copy, memset or API rows left out (not kernels)."] if left_out else []
    again = None if console else _repeated_header(text, _TRACE_HEADER if trace else _SUMMARY_HEADER)
    if again is not None:
        warnings.append(f"the table's header appears again at line {again:,} (two exports joined, or one pasted "
                        "twice?): the rows under both are read, so a kernel listed in both counts twice.")
    if units is None and not console and np.isnan(time[sel]).any():
        warnings.append("no units row under the header: durations written without a unit are unknown; export "
                        "again with nvprof --csv.")
    warnings.append("nvprof times only: FLOPs and bytes unknown; load an nvprof --csv --metrics export "
                    f"({METRICS}) of the same run with it to join them by kernel name.")
    cols = {"name": df["Name"].to_numpy()[sel], "count": count[sel], "time_s": time[sel],
            "source": np.full(n, source, dtype=object), "row": np.asarray(row, dtype=object)[sel]}
    device = _device(df["Device"]) if "Device" in df.columns else None
    return Workload(frame=make_frame(cols, n), name=source, sources=(source,), formats=("nvprof-trace",),
                    warnings=tuple(warnings), device=device,
                    meta={"profiler": "nvprof", "time_only": "true",
                          "nvprof_layout": "gpu-trace" if trace else "console summary" if console else "summary"})


@register_format("nvprof", "nvprof --csv --metrics (legacy CUDA profiler): FLOP and DRAM counts per kernel, no time",
                 _sniff_metrics, priority=20, role="counters")
def parse_metrics(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Read an ``nvprof --csv --metrics`` export (or refuse one without counts); one row per kernel."""
    return _metrics(check_text(data, source), source)


@register_format("nvprof-trace", "nvprof --csv --print-gpu-trace or the default summary: kernel times, no counters",
                 _sniff_trace, priority=20, role="timeline")
def parse_times(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Read an ``nvprof --csv --print-gpu-trace`` (one row per launch) or summary (per kernel) export; time only."""
    return _times(check_text(data, source), source)
