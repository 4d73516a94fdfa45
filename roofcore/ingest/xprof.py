"""xprof: the xprof / TensorBoard profile plugin's Roofline Model CSV (docs/formats.md, "JAX / XLA").

``xprof-roofline`` — the xprof / TensorBoard profile plugin Roofline Model tool's "Export as CSV" (header =
column labels, ``csv.QUOTE_ALL``, raw values). One row per HLO op of one record type: ``Step`` = ``Total`` if
present, else ``Total (HW)``, ``Average``, or each numbered step. xprof derives its rates from the op's total
time (``flat_op_metrics_to_record.h``), so: time = ``Total Time (us)`` × 1e-6 s; FLOPs = ``Normalized FLOP Rate
(GFLOP/s)`` × 1e9 × time (``TFLOP/s`` labels × 1e12); bytes = ``<level> BW (GiB/s)`` × 2³⁰ × time for HBM
(``bytes_hbm``), CMEM read + write (``bytes_cmem``), VMEM read + write (``bytes_vmem``), GPU ``SHM/L1``
(``bytes_l1``); ``count`` = ``# Occurrences``; group = ``Category``. Left out: the ``Program`` summary rows, the
``IDLE`` row, and ops that contain others (categories ``while``, ``conditional``, ``call``, ``megacore fusion``,
which xprof also leaves out of its totals); a row with no time is skipped. Precision ``bf16`` for TPU exports
(the normalised rate counts bf16-equivalent FLOPs), unknown for GPU exports; unit ``matrix`` for convolution /
dot categories. The CSV carries no device name: choose the hardware.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..models import Workload
from . import check_text, make_frame, register_format, skip
from .columns import cut_short, last_line_cut
from .xla import MAX_COUNT, show_value

XPROF = "xprof-roofline"
_XPROF_HEADER = re.compile(r'^\ufeff?"?Step"?\s*,\s*"?Rank"?\s*,\s*"?Category"?\s*,\s*"?Operation"?\s*,', re.M)
_TIME = re.compile(r"^Total Time \((us|ms|ns|s)\)$")
_RATE = re.compile(r"^Normalized FLOP Rate \(([GTPM]?)FLOP/s\)$")
_MODEL_RATE = re.compile(r"^Model FLOP Rate \(([GTPM]?)FLOP/s\)$")
_BW = re.compile(r"^(HBM|CMEM Read|CMEM Write|VMEM Read|VMEM Write|SHM/L1|Memory) BW \(([KMGT]i?B)/s\)$")
_TIME_SCALE = {"us": 1e-6, "ms": 1e-3, "ns": 1e-9, "s": 1.0}
_RATE_SCALE = {"": 1.0, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BYTE_SCALE = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30,
               "TiB": 2.0**40}
_LEVEL = {"HBM": "hbm", "CMEM Read": "cmem", "CMEM Write": "cmem", "VMEM Read": "vmem", "VMEM Write": "vmem",
          "SHM/L1": "l1"}
#: categories whose ops contain other ops (tsl ``MayHaveInnerOps``): xprof sums innermost ops only
CONTAINERS = ("while", "conditional", "call", "megacore fusion")
STEP_ORDER = ("Total", "Total (HW)", "Average")
#: categories / op names that run on the matrix units (MXU, tensor cores)
_MATRIX = r"convolution|\bdot\b|^dot|matmul|gemm|einsum|cublas|cudnn"
XPROF_HINT = "export the Roofline Model table again with its \"Export as CSV\" button."


def sniff_xprof(head: str, name: str) -> bool:
    first = next((ln for ln in head.split("\n") if ln.strip()), "")
    return bool(_XPROF_HEADER.match(first))


_GROUPED = r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?$"  #: 1,234,567.5: a spreadsheet's thousands separators


def _numbers(col: pd.Series, label: str, reasons: dict[int, str]) -> np.ndarray:
    text = col.astype("string").str.strip()
    grouped = text.str.match(_GROUPED).fillna(False)
    if grouped.any():
        text = text.where(~grouped, text.str.replace(",", "", regex=False))
    values: np.ndarray = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) & text.fillna("").ne("").to_numpy() & ~text.fillna("").str.lower().isin(["nan"]).to_numpy()
    for i in np.flatnonzero(bad | np.isinf(values) | (values < 0)):
        reasons.setdefault(int(i), f"{label}: expected a non-negative number, found {show_value(col.iloc[i])}")
    values[np.isinf(values) | (values < 0)] = np.nan
    return values


def _or_none(col: pd.Series) -> np.ndarray:
    """Text cells as an object array, empty cells as None."""
    values: np.ndarray = col.to_numpy(dtype=object)
    return np.where(col.eq("").to_numpy(bool), np.array(None, dtype=object), values).astype(object)


def _read_table(text: str, source: str, skipped_lines: int) -> pd.DataFrame:
    """The CSV as strings (csv module: quoted labels with commas); a short row is padded, a row with extra
    non-empty fields is an error, extra empty fields (a trailing comma) are dropped."""
    try:
        table = list(csv.reader(io.StringIO(text), skipinitialspace=True))
    except csv.Error as e:
        raise InputError(where=source, text=f"not a readable CSV: {e}.", hint=XPROF_HINT) from None
    header, body = [c.strip() for c in table[0]], [r for r in table[1:] if any(c.strip() for c in r)]
    width = len(header)
    dup = next((c for c in header if header.count(c) > 1), None)
    if dup is not None:
        raise InputError(where=f"{source}: header", expected="each column once", found=f"{dup!r} twice",
                         hint=XPROF_HINT)
    for i, r in enumerate(table[1:]):
        if len(r) > width and any(c.strip() for c in r[width:]):
            line = skipped_lines + i + 2
            raise InputError(where=f"{source}: line {line}", text=f"not a readable CSV: {len(r)} fields where the "
                             f"header has {width}.", hint="quote fields that contain commas; " + XPROF_HINT[0].lower()
                             + XPROF_HINT[1:])
    lines = [skipped_lines + i + 2 for i, r in enumerate(table[1:]) if any(c.strip() for c in r)]
    cut = None
    end = last_line_cut(text)  # a copy cut short ends inside its last row: that row is no op
    if end is not None and body and (len(body[-1]) < width or cut_short(end[1])):
        cut, body, lines = lines[-1], body[:-1], lines[:-1]
    rows = [(r + [""] * width)[:width] for r in body]
    frame = pd.DataFrame(rows, columns=header, dtype=object) if rows else pd.DataFrame(columns=header, dtype=object)
    frame.attrs["lines"] = lines
    frame.attrs["cut"] = cut
    return frame


@register_format(XPROF, "xprof Roofline Model tool CSV export: per-op time, FLOP rate and bandwidths (GiB/s)",
                 sniff_xprof, priority=20)
def parse_xprof(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """One row per HLO op of one step record; ``context["xprof_step"]`` picks another Step than the default."""
    context = context or {}
    text = check_text(data, source)
    m = _XPROF_HEADER.search(text)
    if m is None:
        raise InputError(where=f"{source}: header", expected='the Roofline Model columns "Step","Rank","Category",'
                         '"Operation",...', found="none", hint=XPROF_HINT)
    frame = _read_table(text[m.start():], source, text[: m.start()].count("\n"))
    cut = frame.attrs["cut"]
    frame.columns = [str(c).strip() for c in frame.columns]
    time_col, rate_col = _xprof_columns(list(frame.columns), source)
    if frame.empty:
        raise InputError(where=source, expected="op rows", found="a header only", hint=XPROF_HINT)
    n_all = len(frame)
    line = np.array(frame.attrs["lines"]).astype(str)  # file line of each row
    step = frame["Step"].astype(str).str.strip() if "Step" in frame.columns else pd.Series(["Total"] * n_all)
    category = (frame["Category"].astype(str).str.strip() if "Category" in frame.columns
                else pd.Series([""] * n_all))
    op = frame["Operation"].astype(str).str.strip()
    sel, label, chosen = _pick_step(step, context.get("xprof_step"), source)
    other = int((~sel).sum())
    idx = np.flatnonzero(sel)
    frame, category, op, line = (frame.iloc[idx].reset_index(drop=True), category.iloc[idx].reset_index(drop=True),
                                 op.iloc[idx].reset_index(drop=True), line[idx])
    n = len(frame)
    program, reasons = _not_ops(category, op)
    columns, warnings = _xprof_quantities(frame, op, category, time_col, rate_col, program, reasons)
    gpu = any(c.startswith("SHM/L1") for c in frame.columns)
    columns["precision"] = np.full(n, None if gpu else "bf16", dtype=object)
    matrix = (category.str.lower().str.contains(_MATRIX, regex=True)
              | op.str.lower().str.contains(_MATRIX, regex=True)).to_numpy()
    columns["unit"] = np.where(matrix, "matrix", np.array(None, dtype=object)).astype(object)
    if "Bound by" in frame.columns:
        columns["xprof_bound"] = _or_none(frame["Bound by"].astype(str).str.strip())
    columns["source"] = np.full(n, source, dtype=object)
    columns["row"] = line.astype(object)
    out = make_frame(columns, n)
    if "model_flops" in out.columns:
        out["model_flops"] = out["model_flops"].astype(np.float64)
    keep = ~program
    keep[list(reasons)] = False
    skipped = tuple(skip(source, line[i], reasons[i]) for i in sorted(reasons))
    if cut is not None:
        skipped = (*skipped, skip(source, f"line {cut}", "the file ends inside this row (a truncated copy?)"))
    if not keep.any():
        if skipped:
            first = skipped[0]
            raise InputError(where=f"{source}: line {first.row}", text=f"no usable op rows; the first problem: "
                             f"{first.reason}.", hint=XPROF_HINT)
        raise InputError(where=source, expected="op rows", found="only the Program summary row", hint=XPROF_HINT)
    out = out[keep].reset_index(drop=True)
    where = f"Step {label!r}" if chosen is not None else "every numbered step"
    note = f"; {other} rows of other steps left out" if other else ""
    warnings.insert(0, f"rows of {where} used{note}. FLOPs = FLOP rate × Total Time and bytes = bandwidth (GiB/s × "
                    "2^30) × Total Time, as xprof derives its rates; unless the rows are 'Total (HW)' they come from "
                    "XLA's cost model, not counters.")
    meta = {"profiler": "xprof Roofline Model", "xprof_step": label, "device_type": "GPU" if gpu else "TPU"}
    return Workload(frame=out, name=source, sources=(source,), formats=(XPROF,), skipped=skipped,
                    warnings=tuple(warnings), meta=meta)


def _xprof_columns(cols: list[str], source: str) -> tuple[str, str]:
    """The time and FLOP-rate columns (whatever their unit); without them, or without Operation, an error."""
    time_col = next((c for c in cols if _TIME.match(c)), None)
    rate_col = next((c for c in cols if _RATE.match(c)), None)
    if time_col is None or rate_col is None or "Operation" not in cols:
        missing = [lab for lab, c in (("Total Time (us)", time_col), ("Normalized FLOP Rate (GFLOP/s)", rate_col),
                                      ("Operation", "Operation" if "Operation" in cols else None)) if c is None]
        raise InputError(where=f"{source}: header", expected="columns " + ", ".join(missing),
                         found="columns " + ", ".join(cols[:12]) + (" ..." if len(cols) > 12 else ""),
                         hint=XPROF_HINT)
    return time_col, rate_col


def _pick_step(step: pd.Series, wanted: object, source: str) -> tuple[np.ndarray, str, str | None]:
    """(rows used, their label, the Step record chosen or None): the Step asked for, else the first of
    :data:`STEP_ORDER` present, else every numbered step."""
    steps = list(dict.fromkeys(step))
    chosen = wanted if isinstance(wanted, str) and wanted in steps else next((s for s in STEP_ORDER if s in steps), None)
    if chosen is not None:
        return (step == chosen).to_numpy(), chosen, chosen
    sel = step.str.fullmatch(r"\d+").to_numpy()
    if not sel.any():
        raise InputError(where=f"{source}: Step", expected="Total, Total (HW), Average or step numbers",
                         found=", ".join(steps[:5]), hint=XPROF_HINT)
    return sel, "per step", None


def _not_ops(category: pd.Series, op: pd.Series) -> tuple[np.ndarray, dict[int, str]]:
    """(the Program summary rows, left out silently; why each other row that is not an op is skipped): idle
    time, containers of other ops, an empty name."""
    reasons: dict[int, str] = {}
    low_cat = category.str.lower()
    program = (low_cat.eq("program") | op.eq("Program")).to_numpy()
    idle = (low_cat.eq("idle") | op.str.upper().eq("IDLE")).to_numpy()
    for i in np.flatnonzero(idle & ~program):
        reasons[int(i)] = "idle time, not an op"
    container = low_cat.isin(CONTAINERS).to_numpy()
    for i in np.flatnonzero(container & ~program & ~idle):
        reasons[int(i)] = (f"contains other ops (category {category.iloc[i]!r}): its work is that of the ops inside, "
                           "listed separately")
    for i in np.flatnonzero(op.eq("").to_numpy()):
        reasons.setdefault(int(i), "Operation: expected an op name, found an empty cell")
    return program, reasons


def _unit(pattern: re.Pattern[str], col: str) -> str:
    """The unit a column's name gives, read by the pattern that picked the column."""
    m = pattern.match(col)
    assert m is not None  # the column was picked by this pattern
    return m.group(1)


def _xprof_quantities(frame: pd.DataFrame, op: pd.Series, category: pd.Series, time_col: str, rate_col: str,
                      program: np.ndarray, reasons: dict[int, str]) -> tuple[dict[str, object], list[str]]:
    """Name, FLOPs, time, group, model FLOPs, bytes per level and count per row (FLOPs and bytes = rate × time,
    as xprof derives its rates), and the warnings; unusable cells add to ``reasons``."""
    scale_t = _TIME_SCALE[_unit(_TIME, time_col)]
    t = _numbers(frame[time_col], time_col, reasons) * scale_t
    for i in np.flatnonzero((t == 0) & ~program):
        reasons.setdefault(int(i), f"{time_col}: 0, so FLOPs and bytes cannot be derived from its rates")
    for i in np.flatnonzero(np.isnan(t) & ~program):
        reasons.setdefault(int(i), f"{time_col}: expected a number, found an empty cell")
    rate = _numbers(frame[rate_col], rate_col, reasons) * _RATE_SCALE[_unit(_RATE, rate_col)]
    columns: dict[str, object] = {"name": op.to_numpy(dtype=object), "flops": rate * t, "time_s": t,
                                  "group": _or_none(category)}
    model_col = next((c for c in frame.columns if _MODEL_RATE.match(c)), None)
    if model_col is not None:
        model = _numbers(frame[model_col], model_col, {}) * _RATE_SCALE[_unit(_MODEL_RATE, model_col)]
        columns["model_flops"] = model * t
    bytes_by: dict[str, np.ndarray] = {}
    memory_all = None
    for c in frame.columns:
        bm = _BW.match(c)
        if not bm:
            continue
        bw = _numbers(frame[c], c, reasons) * _BYTE_SCALE[bm.group(2)]
        if bm.group(1) == "Memory":
            memory_all = bw * t
            continue
        level = _LEVEL[bm.group(1)]
        bytes_by[level] = np.nansum([bytes_by[level], bw * t], axis=0) if level in bytes_by else bw * t
    warnings = []
    if "hbm" not in bytes_by and memory_all is not None:
        bytes_by["hbm"] = memory_all
        warnings.append("no 'HBM BW' column: off-chip bytes taken from 'Memory BW' (all memory spaces).")
    for level, b in bytes_by.items():
        columns[f"bytes_{level}"] = b
    if "# Occurrences" in frame.columns or "# of Occurrences" in frame.columns:
        occ_col = "# Occurrences" if "# Occurrences" in frame.columns else "# of Occurrences"
        occ = _numbers(frame[occ_col], occ_col, reasons)
        bad = ~np.isnan(occ) & ((occ < 1) | (occ > MAX_COUNT) | (occ != np.floor(occ)))
        for i in np.flatnonzero(bad & ~program):
            reasons.setdefault(int(i), f"{occ_col}: expected a whole number ≥ 1, found {show_value(frame[occ_col].iloc[i])}")
        columns["count"] = np.where(np.isnan(occ) | bad, 1, occ).astype(np.int64)
    return columns, warnings
