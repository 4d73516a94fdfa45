"""Nsight Systems kernel summaries (``cuda_gpu_kern_sum``): time per kernel name, no FLOPs (docs/formats.md).

Reads the CSV of ``nsys stats --report cuda_gpu_kern_sum --format csv`` (header ``Time (%),Total Time (ns),
Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name``), the older ``gpukernsum`` report
(``Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,Name``), ``--timeunit`` suffixes (``(us)``,
``(ms)``, ``(s)``), stdout holding several reports, and — best effort — the console tables of
``nsys profile --stats=true`` (the ``cuda_gpu_kern_sum`` block; column boundaries from the dash runs of the
rule under the header; thousands separators stripped), also inside a whole batch-job log (program output, then
every report one after another, docs/formats.md): only the kernel table is read, wherever it sits. Names nsys
cut to the column width (ending ``…``) are kept as printed. Another report given alone (``nvtx_sum``,
``cuda_api_sum``, ``osrt_sum``, ``cuda_gpu_mem_time_sum``, ...) is refused by name.

One row per kernel name: ``count`` = Instances, ``time_s`` = Total Time (seconds, all instances),
FLOPs and bytes unknown (NaN), ``meta["time_only"] = "true"``; ``device`` = the GPU a console log names
(``GPU 0: General Metrics for NVIDIA GA100``, printed with ``--gpu-metrics-device``), else unknown. :func:`join_times` gives those times the
FLOPs and bytes of a model (an inventory or analytic ops); ``read_many`` calls it when a time-only
profile is read together with one. Names are joined exactly, else by the model's ``match`` glob — a weak
key (docs/formats.md): instances of one name may have run different shapes.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

import numpy as np
import pandas as pd

from .. import limits
from ..errors import InputError
from ..models import Skipped, Workload
from . import COUNT_LIMIT, check_text, make_frame, register_format, skip
from .columns import cut_short, last_line_cut
from .readers import is_quantity, refit, table_lines

#: seconds per unit of a ``Total Time (<unit>)`` column (``--timeunit``)
TIME_UNITS = {"ns": 1e9, "nsec": 1e9, "us": 1e6, "usec": 1e6, "μs": 1e6, "µs": 1e6, "ms": 1e3, "msec": 1e3,
              "s": 1.0, "sec": 1.0}
#: a stats CSV header: ``Time (%)`` and ``Total Time (<unit>)`` columns, in any order (a spreadsheet may move them)
_CSV_HEADER = re.compile(r'^(?=(?:[^\n]*,)?[ \t]*"?Time ?\(%\)"?[ \t]*(?:,|$))(?=(?:[^\n]*,)?[ \t]*"?Total Time)', re.M)
_CONSOLE_HEADER = re.compile(r"^\s*Time ?\(%\)\s+Total Time", re.M)
_RULE = re.compile(r"^\s*-+(\s+-+)*\s*$")
_REPORT = re.compile(r"Executing '([\w:-]+)' stats report|Running \[[^\]]*?(\w+)\.py[^\]]*\]|"
                     r"Processing \[[^\]]*\] with \[[^\]]*?(\w+)\.py\]")
_KERNEL_REPORTS = ("cuda_gpu_kern_sum", "gpukernsum")


#: lines only nsys writes: report banners, and near the top of a batch log the capture's own progress lines
_NSYS_MARKERS = re.compile(r"Executing '[\w:-]+' stats report|with \[[^\]\n]*/reports/\w+\.py\]|"
                           r"^Generating '[^'\n]*\.qdstrm'|^Generating SQLite file [^\n]*\.nsys-rep|"
                           r"^Collecting data\.\.\.$|"
                           r"^ \*\* [^\n]*\((?:cuda_gpu_kern_sum|nvtx_sum|osrt_sum|cuda_api_sum)\):", re.M)
#: first lines of the other reports' CSV exports (sizes in MB, traces with start times)
_OTHER_CSV = re.compile(r'^"?(?:Total \((?:MB|KiB|MiB|B)\),"?Count|Start \((?:ns|us|ms|s)\),"?Duration|'
                        r'NVTX Range,"?Style|Range,"?Style)', re.M)


def _sniff(head: str, name: str) -> bool:
    """A stats CSV header (``Time (%),Total Time ...``), a console table header, or nsys's own lines."""
    return bool(_CSV_HEADER.search(head) or _CONSOLE_HEADER.search(head) or _NSYS_MARKERS.search(head)
                or _OTHER_CSV.match(head.lstrip("\ufeff")))


# ------------------------------------------------------------------------------------------ parsing


def _columns(header: list[str]) -> dict[str, int]:
    """Column positions by role: total (time), unit, instances, name."""
    cols: dict[str, int] = {}
    for i, h in enumerate(c.strip() for c in header):
        low = h.lower()
        if low.startswith("total time") and "total" not in cols:
            cols["total"] = i
        elif low == "instances":
            cols["instances"] = i
        elif low == "name":
            cols["name"] = i
    return cols


def _unit(header: list[str], i: int) -> str | None:
    m = re.search(r"\(([^)]*)\)\s*$", header[i].strip())
    return m.group(1).strip() if m else "ns"


def _is_kernel_header(header: list[str]) -> bool:
    cols = _columns(header)
    low = {h.strip().lower() for h in header}
    return {"total", "instances", "name"} <= set(cols) and not low & {"range", "style", "operation"}


def _reports(text: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _REPORT.finditer(text)]


def _csv_cells(line: str) -> list[str]:
    try:
        return next(csv.reader((line,)))
    except (csv.Error, StopIteration):
        return [line]


def _csv_ends(line: str) -> bool:
    """Whether a CSV table's line is no row of it: another header, or nsys's own lines between reports."""
    return bool(_CSV_HEADER.match(line)) or line.startswith(("Processing ", "[", "SKIPPED", "**"))


def _kernel_row(header: list[str], cut: Callable[[str], list[str]],
                ends: Callable[[str], bool]) -> Callable[[str], bool]:
    """Whether a line past a blank one is a row of this kernel table (:func:`.readers.table_lines`): as wide as the
    header, with a name and numbers in its time and count; never where the header is no kernel table's."""
    cols = _columns(header)
    if not {"total", "instances", "name"} <= set(cols):
        return lambda line: False

    def is_row(line: str) -> bool:
        row = [] if ends(line) else cut(line)
        return (len(row) == len(header) and bool(row[cols["name"]].strip())
                and all(c.strip() and is_quantity(c) for c in (row[cols["total"]], row[cols["instances"]])))

    return is_row


def _rows_csv(lines: list[str], start: int) -> tuple[list[str], list[tuple[int, list[str]]]]:
    header = _csv_cells(lines[start])
    rows = []
    for i, line in table_lines(lines, _kernel_row(header, _csv_cells, _csv_ends), start + 1):
        if _csv_ends(line):
            break
        rows.append((i + 1, _csv_cells(line)))
    return header, rows


def _console_cut(rule: str) -> Callable[[str], list[str]]:
    """A fixed-width line's cells: the dash runs of the ``rule`` line under the header give the column boundaries."""
    spans = [m.start() for m in re.finditer(r"-+", rule)]
    bounds = [*spans[1:], None]
    return lambda line: [line[a:b].strip() for a, b in zip(spans, bounds, strict=True)]


def _rows_console(lines: list[str], start: int) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Fixed-width table (:func:`_console_cut`); blank lines as in :func:`_rows_csv`."""
    cut = _console_cut(lines[start + 1])
    header = cut(lines[start])
    rows = []
    is_row = _kernel_row(header, cut, lambda ln: bool(_REPORT.search(ln) or _CONSOLE_HEADER.match(ln)))
    for i, line in table_lines(lines, is_row, start + 2):
        if _REPORT.search(line):
            break
        rows.append((i + 1, cut(line)))
    return header, rows


def _find_table(text: str, source: str) -> tuple[list[str], list[tuple[int, list[str]]], str, int | None]:
    """Header, rows and layout of the kernel summary, and the line (from 1) where another kernel summary starts
    below it (:func:`_second_table`), else None; a specific error when there is none."""
    lines = text.split("\n")
    # where the kernel report starts, when the output names its reports
    begin = 0
    reports = _reports(text)
    for i, line in enumerate(lines):
        m = _REPORT.search(line)
        if m and next(g for g in m.groups() if g) in _KERNEL_REPORTS:
            begin = i
            for follow in lines[i + 1: i + 4]:
                if "SKIPPED" in follow or "does not contain" in follow:
                    raise InputError(where=source, text="the cuda_gpu_kern_sum report was skipped: the profile has no "
                                     "CUDA kernel data.", hint="profile with CUDA tracing on (nsys profile -t cuda "
                                     "...) and check that kernels ran.")
            break
    first_other: tuple[list[str], list[str]] | None = None  # the first table that is not the kernel summary
    for i in range(begin, len(lines)):
        found = _header_at(lines, i, other_csv=first_other is None)
        if found is None:
            continue
        header, layout = found
        kernel = _is_kernel_header(header)
        if not kernel and first_other is not None:
            continue
        rows = (_rows_csv if layout == "csv" else _rows_console)(lines, i)[1]
        if kernel:
            return header, rows, layout, _second_table(lines, rows[-1][0]) if rows else None
        first_other = header, [r[-1] for _, r in rows[:20] if r]
    others = [r for r in reports if r not in _KERNEL_REPORTS]
    if others:
        raise InputError(where=source, text=f"no cuda_gpu_kern_sum table among the Nsight Systems reports here "
                         f"({', '.join(dict.fromkeys(others))}).", hint=KERNEL_HINT)
    if first_other is not None:
        report = _which_report(*first_other, source)
        if report:
            raise InputError(where=source, text=f"this is an Nsight Systems {OTHER_REPORTS[report]} ({report}), not "
                             "a kernel summary.", hint=KERNEL_HINT)
        cols = ", ".join(h.strip() for h in first_other[0][:6])
        raise InputError(where=source, text=f"this Nsight Systems table ({cols}, ...) is not a kernel summary.",
                         hint=KERNEL_HINT)
    raise InputError(where=source, expected="an Nsight Systems cuda_gpu_kern_sum table (Time (%), Total Time (ns), "
                     "Instances, ..., Name)", found="none",
                     hint="export it with: nsys stats --report cuda_gpu_kern_sum --format csv -o out report.nsys-rep")


def _header_at(lines: list[str], i: int, other_csv: bool = False) -> tuple[list[str], str] | None:
    """``(header, layout)`` where line ``i`` starts a table: a CSV summary's header (``other_csv``: another CSV
    report's as well), or a console table's, with the rule of dashes under it; None elsewhere."""
    line = lines[i]
    if _CSV_HEADER.match(line) or (other_csv and _OTHER_CSV.match(line)):
        try:
            return next(csv.reader((line,))), "csv"
        except (csv.Error, StopIteration):
            return None
    if _CONSOLE_HEADER.match(line) and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
        return _console_cut(lines[i + 1])(line), "console"
    return None


def _second_table(lines: list[str], after: int) -> int | None:
    """The line (from 1) of another kernel summary's header after line index ``after`` (two exports joined), or
    None."""
    for i in range(after, len(lines)):
        found = _header_at(lines, i)
        if found is not None and _is_kernel_header(found[0]):
            return i + 1
    return None


KERNEL_HINT = "export the kernel summary: nsys stats --report cuda_gpu_kern_sum --format csv -o out report.nsys-rep"
#: the other ``nsys stats`` reports, as their documentation names them
OTHER_REPORTS = {
    "nvtx_sum": "NVTX range summary", "nvtx_kern_sum": "NVTX range kernel summary",
    "nvtx_gpu_proj_sum": "NVTX GPU projection summary", "osrt_sum": "OS runtime summary",
    "cuda_api_sum": "CUDA API summary", "cuda_gpu_mem_time_sum": "GPU memory-operation time summary",
    "cuda_gpu_mem_size_sum": "GPU memory-operation size summary",
    "cuda_gpu_sum": "GPU summary (kernels and memory operations together)", "cuda_gpu_trace": "GPU trace",
    "cuda_api_trace": "CUDA API trace", "cuda_kern_exec_sum": "kernel launch and execution summary",
    "cuda_kern_exec_trace": "kernel launch and execution trace", "cuda_api_gpu_sum": "CUDA API and GPU summary",
    "um_sum": "unified memory summary", "openmp_sum": "OpenMP summary", "mpi_event_sum": "MPI event summary",
}


def _which_report(header: list[str], names: list[str], source: str) -> str | None:
    """Which ``nsys stats`` report a table is, from its columns (and the ``_<report>.csv`` file name nsys writes)."""
    m = re.search(r"_([a-z_]+_(?:sum|trace))\.csv$", source)
    if m and m.group(1) in OTHER_REPORTS:
        return m.group(1)
    cols = {re.sub(r"\s*\([^)]*\)\s*$", "", h).strip().lower() for h in header}
    if "range" in cols or "nvtx range" in cols:
        return "nvtx_kern_sum" if {"kernel name", "kern inst"} & cols else "nvtx_sum"
    if "num calls" in cols:
        # both list calls by Name: CUDA API names begin with cuda / cu (cudaMalloc, cuLaunchKernel)
        api = sum(bool(re.match(r"(cuda|cu[A-Z]|nccl|cublas|cudnn)", n.strip())) for n in names)
        return "cuda_api_sum" if names and api * 2 >= len(names) else "osrt_sum"
    if "operation" in cols:
        if "category" in cols:
            return "cuda_gpu_sum"
        return "cuda_gpu_mem_time_sum" if "total time" in cols else "cuda_gpu_mem_size_sum"
    if {"start", "duration"} <= cols:
        return "cuda_api_trace" if "result" in cols else "cuda_gpu_trace"
    return None


def _number(cell: str) -> float:
    return float(cell.strip().replace(",", ""))


def _numeric(cell: str) -> bool:
    """A cell of a numeric column: a number (a unit written after it allowed), or empty."""
    return not cell.strip() or is_quantity(cell)


@register_format("nsys-kern-sum", "Nsight Systems cuda_gpu_kern_sum (CSV or console table): time per kernel name, "
                 "no FLOPs", _sniff, priority=15, role="timeline")
def parse(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Read an Nsight Systems kernel summary into time-only rows (one per kernel name)."""
    text = check_text(data, source)
    header, rows, layout, again = _find_table(text, source)
    cols = _columns(header)
    per_s = TIME_UNITS.get((_unit(header, cols["total"]) or "ns").lower())
    if per_s is None:
        raise InputError(where=f"{source}: header", expected="a Total Time unit (ns, us, ms or s)",
                         found=repr(header[cols["total"]].strip()), hint="export with --timeunit ns (the default).")
    names, counts, totals, lines, skipped = _kernel_rows(text, source, header, cols, rows, per_s)
    if not names:
        if skipped:
            first = skipped[0]
            raise InputError(where=f"{source}: {first.row}", text=f"no usable kernel rows; the first problem: "
                             f"{first.reason}.", hint="export again with nsys stats --report cuda_gpu_kern_sum "
                             "--format csv.")
        raise InputError(where=source, expected="at least one kernel row under the cuda_gpu_kern_sum header",
                         found="none", hint="the profile has no kernels; profile with CUDA tracing (-t cuda).")
    n = len(names)
    if any(c > COUNT_LIMIT for c in counts):  # found by the fuzz test: a damaged Instances cell overflowed int64
        raise InputError(where=source, expected="launch counts a 64-bit integer holds",
                         found=f"a {len(str(max(counts)))}-digit number of instances", hint="the Instances column is damaged; export again.")
    frame = make_frame({"name": names, "count": np.asarray(counts, dtype=np.int64),
                        "time_s": np.asarray(totals, dtype=np.float64), "source": [source] * n, "row": lines}, n)
    meta = {"time_only": "true", "profiler": "Nsight Systems", "nsys_layout": layout}
    gpus = dict.fromkeys(m.group(1).strip() for m in _GPU_LINE.finditer(text))
    device = next(iter(gpus), None)
    if len(gpus) > 1:
        meta["devices"] = ", ".join(gpus)
    warnings = _summary_warnings(names)
    if again is not None:
        warnings.append(f"another kernel summary starts at line {again:,} (two exports joined?) and was not read: "
                        "load each export as its own file.")
    return Workload(frame=frame, name=source, sources=(source,), formats=("nsys-kern-sum",), skipped=tuple(skipped),
                    warnings=tuple(warnings), device=device, meta=meta)


def _kernel_rows(text: str, source: str, header: list[str], cols: dict[str, int],
                 rows: list[tuple[int, list[str]]], per_s: float
                 ) -> tuple[list[str], list[int], list[float], list[str], list[Skipped]]:
    """The summary's usable rows (name, instances, total seconds, line) and the rows left out, each with why."""
    names: list[str] = []
    counts: list[int] = []
    totals: list[float] = []
    lines: list[str] = []
    skipped: list[Skipped] = []
    need = max(cols.values()) + 1
    # a name holding unquoted commas spills over several fields: the name is the part between the numbers
    kinds = [None if i == cols["name"] else _numeric for i in range(len(header))]
    cut = last_line_cut(text)  # a copy cut short ends inside its last row
    for line_no, fields in rows:
        if not line_no & 0xFFF:
            limits.tick()
        if len(fields) > len(header):
            fields = refit(fields, kinds) or fields
        if cut and line_no == cut[0] and cut_short(cut[1], fields[cols["name"]] if len(fields) > cols["name"] else ""):
            skipped.append(skip(source, f"line {line_no}", "the file ends inside this row (a truncated copy?)"))
            continue
        if len(fields) < need:
            skipped.append(skip(source, f"line {line_no}", f"expected {len(header)} fields, found {len(fields)}"))
            continue
        name = fields[cols["name"]].strip()
        try:
            total = _number(fields[cols["total"]])
            count = _number(fields[cols["instances"]])
        except ValueError:
            skipped.append(skip(source, f"line {line_no}", "Total Time and Instances must be numbers, found "
                                f"{fields[cols['total']].strip()!r} and {fields[cols['instances']].strip()!r}"))
            continue
        if not name:
            skipped.append(skip(source, f"line {line_no}", "empty kernel Name"))
        elif not (np.isfinite(total) and total >= 0):
            skipped.append(skip(source, f"line {line_no}", f"Total Time must be ≥ 0, found {total:g}"))
        elif not (np.isfinite(count) and count >= 1 and count == int(count)):
            skipped.append(skip(source, f"line {line_no}", f"Instances must be a whole number ≥ 1, found {count:g}"))
        else:
            names.append(name)
            counts.append(int(count))
            totals.append(total / per_s)
            lines.append(str(line_no))
    return names, counts, totals, lines, skipped


def _summary_warnings(names: list[str]) -> list[str]:
    """Names nsys cut to fit its column, and what a time-only summary lacks."""
    warnings = []
    cut = [nm for nm in names if nm.endswith("…")]
    if cut:
        shared = pd.Series(cut).value_counts()
        shared = shared[shared > 1]
        warnings.append(f"{_plural(len(cut), 'kernel name')} {'was' if len(cut) == 1 else 'were'} cut by nsys to fit "
                        "its column (ending in …), kept as printed"
                        + (f"; {_plural(len(shared), 'cut name')} {'is' if len(shared) == 1 else 'are'} shared by "
                           f"{int(shared.sum())} different kernels, which a join by name cannot tell apart"
                           if len(shared) else "")
                        + ". Hint: nsys stats --report cuda_gpu_kern_sum --format csv prints whole names.")
    # no count here: the sidebar's ("18 kernels (98 launches)", roofcore.counting) is the one every page gives
    warnings.append(f"{_TIMES_ONLY}: FLOPs and bytes of {'its kernel' if len(names) == 1 else 'its kernels'} "
                    "are unknown (left empty, not zero), so no kernel has a roofline yet. Hint: load it together with "
                    "a kernel inventory (joined by name), or profile the kernels with Nsight Compute: ncu --csv "
                    "--print-units base --metrics gpu__time_duration.sum,dram__bytes.sum,"
                    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum,... (see `roofline formats`).")
    return warnings


#: a kernel's ancestry columns (roofcore.hierarchy.ANCESTRY), kept through :func:`join_times`
ANCESTRY = ("step", "module", "op", "nvtx", "phase", "start_s")
#: the GPU ``nsys profile --gpu-metrics-device`` samples, printed before the run (the chip: ``NVIDIA GA100``)
_GPU_LINE = re.compile(r"^GPU \d+: General Metrics for (.+?)(?: \([^)\n]*\))?$", re.M)


# ------------------------------------------------------------------------------------------ joining


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else ("es" if word.endswith("ch") else "s"))


def _short_list(items: list[str], k: int = 5) -> str:
    shown = ", ".join(items[:k])
    return shown + (f" (+{len(items) - k} more)" if len(items) > k else "")


_TIMES_ONLY = "an Nsight Systems kernel summary gives times only"


def join_times(times: Workload, model: Workload) -> Workload:
    """Give a time-only profile the FLOPs and bytes of a model, kernel by kernel.

    Each timed kernel is matched to the model's kernels by exact name, else by the first model row whose
    ``match`` glob (``fnmatch``, case-sensitive) accepts the name. Model rows are totals over their own
    ``count``: FLOPs and bytes are scaled by ``profile instances / model count`` (per-launch work × the
    launches that ran), with a warning when that changes them. Output rows: the profile's name, count and
    time with the model's FLOPs, bytes, precision, unit and group (column ``model`` names the model row);
    unmatched timed kernels stay time-only (FLOPs NaN); model rows that match nothing are kept with their own
    numbers. Both lists are in ``warnings`` ("unmatched kernels: ...").
    """
    tf, mf = times.frame, model.frame
    t_names = tf["name"].astype(object).to_numpy()
    m_names = mf["name"].astype(object).to_numpy()
    exact: dict[str, int] = {}
    for k, nm in enumerate(m_names):
        exact.setdefault(str(nm), k)
    patterns: list[tuple[int, str]] = []
    if "match" in mf.columns:
        patterns = [(i, p) for i, p in enumerate(mf["match"].astype(object).to_numpy()) if isinstance(p, str) and p]
    idx = np.full(len(tf), -1, dtype=np.int64)
    for j, nm in enumerate(t_names):
        i = exact.get(str(nm))
        if i is None:
            i = next((i for i, p in patterns if fnmatchcase(str(nm), p)), None)
        if i is not None:
            idx[j] = i
    hit = idx >= 0
    safe = np.where(hit, idx, 0)
    t_count = tf["count"].to_numpy(dtype=np.int64)
    m_count = np.maximum(mf["count"].to_numpy(dtype=np.int64), 1)
    ratio = np.where(hit, t_count / m_count[safe], np.nan)

    def take(col: str) -> np.ndarray:
        v = mf[col].to_numpy(dtype=np.float64) if col in mf.columns else np.full(len(mf), np.nan)
        return np.where(hit, v[safe] * ratio, np.nan)

    def take_obj(col: str) -> list[object]:
        v = mf[col].astype(object).to_numpy() if col in mf.columns else np.full(len(mf), None, dtype=object)
        return [v[i] if ok and not pd.isna(v[i]) else None for i, ok in zip(safe, hit, strict=True)]

    cols: dict[str, object] = {
        "name": t_names, "count": t_count, "time_s": tf["time_s"].to_numpy(dtype=np.float64),
        "flops": take("flops"), "precision": take_obj("precision"), "unit": take_obj("unit"), "group": take_obj("group"),
        "source": tf["source"].astype(object).to_numpy(), "row": tf["row"].astype(object).to_numpy(),
        "model": [m_names[i] if ok else None for i, ok in zip(safe, hit, strict=True)],
    }
    cols.update({c: take(c) for c in model.byte_columns} | {c: tf[c].to_numpy() for c in ANCESTRY if c in tf.columns})
    joined = make_frame(cols, len(tf))
    unused = np.ones(len(mf), dtype=bool)
    unused[idx[hit]] = False
    frame = joined
    if unused.any():
        rest = mf[unused].copy()
        rest["model"] = rest["name"].astype(object)
        frame = pd.concat([joined, rest[[c for c in rest.columns if c != "match"]]], ignore_index=True, sort=False)

    # joined, the summary's own "times only" note no longer holds
    warnings = [*(x for x in times.warnings if not x.startswith(_TIMES_ONLY)), *model.warnings]
    scaled = np.flatnonzero(hit & (ratio != 1))
    if len(scaled):
        ex = scaled[0]
        warnings.append(f"FLOPs and bytes of {_plural(len(scaled), 'kernel')} scaled from the model's count to the "
                        f"profile's instances (model totals ÷ model count × instances), e.g. {t_names[ex]}: model "
                        f"{_plural(int(m_count[idx[ex]]), 'launch')}, profile {t_count[ex]:,}.")
    if (~hit).any():
        warnings.append("unmatched kernels: " + _short_list([str(x) for x in t_names[~hit]])
                        + " (time only; add them to the model, or a `match` glob).")
    if unused.any():
        warnings.append("model kernels with no timed match (kept with the model's own numbers): "
                        + _short_list([str(x) for x in m_names[unused]]) + ".")
    meta = {**model.meta, **times.meta}
    meta.pop("time_only", None)
    meta["time_join"] = f"{int(hit.sum())} of {len(tf)} timed kernels matched"
    return replace(
        times, frame=frame, name=f"{times.name} + {model.name}", sources=(*times.sources, *model.sources),
        formats=tuple(dict.fromkeys((*times.formats, *model.formats))), skipped=(*times.skipped, *model.skipped),
        warnings=tuple(warnings), device=times.device or model.device, meta=meta,
    )

