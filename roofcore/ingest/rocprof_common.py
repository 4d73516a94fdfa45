"""Shared pieces of the AMD profiler readers (FORMATS.md §5): CSV tables, counters, the calc_ai derivation, times.

Every rocprof format module (:mod:`.rocprof_v1`, :mod:`.rocprof_v2`, :mod:`.rocprofv3`, :mod:`.rocprof_compute`)
builds its rows here, so the same counters give the same numbers whatever file they come from.

One row per dispatch: ``count`` 1, ``row`` = the dispatch id, ``gpu`` = the GPU / agent id as exported; kernel
names are kept as exported (only surrounding whitespace is removed). Quantities follow rocprof-compute's
``calc_ai`` (FORMATS §5.2) from whichever counters the file holds:

- FLOP = 64 × (ADD + MUL + 2·FMA + TRANS) per VALU precision (``SQ_INSTS_VALU_<op>_F16|F32|F64``, per-wavefront
  counts × 64 lanes) + 512 × ``SQ_INSTS_VALU_MFMA_MOPS_F16|BF16|F32|F64`` (and ``_F8`` where the GPU has it).
  ``MFMA_MOPS_I8`` (× 512) are integer ops: counted only for a kernel whose precision is int8 (its largest matrix
  work), else left out with a warning. No FLOP counter at all: FLOPs unknown (NaN), never 0; some missing: a lower
  bound, with a warning. The 64 lanes assume CDNA wave64; wave32 dispatches (RDNA) are warned about.
- unit / precision: ``matrix`` when MFMA ops ≥ VALU FLOPs (precision of the largest MOPS type), else ``vector``
  (largest VALU precision); no work at all leaves both unset.
- bytes_l1 = 64 × ``TCP_TOTAL_CACHE_ACCESSES_sum``; bytes_l2 = 64 × (``TCP_TCC_{READ,WRITE,ATOMIC_WITH_RET,
  ATOMIC_WITHOUT_RET}_REQ_sum``); bytes_lds = (``SQ_LDS_IDX_ACTIVE`` − ``SQ_LDS_BANK_CONFLICT``) × 4 ×
  ``lds_banks_per_cu`` (from sysinfo.csv; without it unknown).
- bytes_hbm, MI200 (gfx90a, gfx908): ``TCC_EA_RDREQ_32B``·32 + (``TCC_EA_RDREQ`` − ``_32B``)·64 +
  ``TCC_EA_WRREQ_64B``·64 + (``TCC_EA_WRREQ`` − ``_64B``)·32 (all ``_sum``); MI300 (gfx94x, gfx95x):
  ``TCC_BUBBLE``·128 + ``TCC_EA0_RDREQ_32B``·32 + (``TCC_EA0_RDREQ`` − BUBBLE − ``_32B``)·64 +
  (``TCC_EA0_WRREQ`` − ``_64B``)·32 + ``TCC_EA0_WRREQ_64B``·64. The formula follows the GPU architecture
  (sysinfo) or else the counters present. Without TCC counters, the legacy derived metrics ``FETCH_SIZE`` +
  ``WRITE_SIZE`` (kilobytes, KiB per their metrics.xml expression: × 1024; FORMATS §5.2, §9).
- A ``X_sum`` counter absent from the file is taken from ``X`` (rocprofv3 reduces instances itself) or summed
  from its per-instance columns ``X[0]``, ``X[1]``, ….
- time_s = (End − Start) ns × 1e-9 (``EndNs``/``BeginNs`` in v1). Whole or decimal nanoseconds are read exactly
  (rocprof-compute 3.x averages passes into fractional ns). A zero, negative, missing or scientific-notation
  timestamp (a spreadsheet round-trip writes them so, losing digits) leaves the time unknown (NaN) with a warning
  naming the dispatch; it is never divided by (FORMATS §0.11).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from operator import itemgetter

import numpy as np
import pandas as pd

from .. import limits
from ..errors import InputError
from ..models import Skipped, Workload
from . import check_text, make_frame, skip

# --------------------------------------------------------------------------------------------- counters

VALU_PRECISIONS = (("F16", "fp16"), ("F32", "fp32"), ("F64", "fp64"))
VALU_OPS = (("ADD", 1), ("MUL", 1), ("FMA", 2), ("TRANS", 1))  # FLOPs per lane per instruction
#: MFMA MOPS types; int8 last (integer ops, see :func:`derive`). ``F8`` exists on MI300 and later only: it is
#: counted where the file has it and never reported missing on older GPUs.
MFMA_TYPES = (("F16", "fp16"), ("BF16", "bf16"), ("F32", "fp32"), ("F64", "fp64"), ("F8", "fp8"), ("I8", "int8"))
MFMA_OPTIONAL = ("F8",)
#: matrix counters whose ops per count are not documented for calc_ai (gfx950): reported when non-zero, not counted
MFMA_UNCOUNTED = ("SQ_INSTS_VALU_MFMA_MOPS_F6F4", "SQ_INSTS_VALU_MFMA_MOPS_XF32")
LANES = 64  #: calc_ai's lanes per wavefront instruction (wave64, CDNA)
MOPS = 512  #: ops per SQ_INSTS_VALU_MFMA_MOPS_* count

L1_COUNTERS = ("TCP_TOTAL_CACHE_ACCESSES_sum",)
L2_COUNTERS = ("TCP_TCC_READ_REQ_sum", "TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum",
               "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum")
LDS_COUNTERS = ("SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT")
MI200_COUNTERS = ("TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum", "TCC_EA_WRREQ_sum", "TCC_EA_WRREQ_64B_sum")
MI300_COUNTERS = ("TCC_BUBBLE_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_EA0_WRREQ_sum",
                  "TCC_EA0_WRREQ_64B_sum")
#: legacy derived metrics in kilobytes; FetchSize/WriteSize are the rocprofv3 / GPUPerfAPI spellings (unverified)
LEGACY_COUNTERS = (("FETCH_SIZE", "FetchSize"), ("WRITE_SIZE", "WriteSize"))
#: the FLOP counters every CDNA GPU has (a file lacking some gives a lower bound, with a warning)
FLOP_COUNTERS = tuple(f"SQ_INSTS_VALU_{op}_{p}" for p, _ in VALU_PRECISIONS for op, _ in VALU_OPS) + tuple(
    f"SQ_INSTS_VALU_MFMA_MOPS_{t}" for t, _ in MFMA_TYPES if t not in MFMA_OPTIONAL)
ALL_COUNTERS = (FLOP_COUNTERS + tuple(f"SQ_INSTS_VALU_MFMA_MOPS_{t}" for t in MFMA_OPTIONAL) + MFMA_UNCOUNTED
                + L1_COUNTERS + L2_COUNTERS + LDS_COUNTERS + MI200_COUNTERS + MI300_COUNTERS
                + tuple(n for pair in LEGACY_COUNTERS for n in pair) + ("SQ_INSTS_VALU",))

_INSTANCE = re.compile(r"^(.+)\[(\d+)\]$")
DIGITS = r"\s*[0-9]{1,18}\s*"  # a timestamp or id as rocprof writes it (fits int64)
NA = {"", "n/a", "na", "nan", "none", "null"}
MAX_NAMED = 10  #: dispatches named one by one in a warning before the rest are counted


def gpu_family(arch: str | None, series: str | None = None) -> str | None:
    """``MI200`` (gfx90a, gfx908: TCC_EA_* counters) or ``MI300`` (gfx94x, gfx95x: TCC_EA0_*, TCC_BUBBLE)."""
    a = (arch or "").strip().lower()
    if a.startswith(("gfx94", "gfx95")):
        return "MI300"
    if a.startswith(("gfx90a", "gfx908")):
        return "MI200"
    s = (series or "").strip().upper()
    if s.startswith(("MI300", "MI350", "MI355")):
        return "MI300"
    if s.startswith(("MI200", "MI210", "MI250", "MI100")):
        return "MI200"
    return None


class Counters:
    """Counter columns by name; ``get(name)`` resolves ``X_sum`` from ``X`` or from ``X[0]``, ``X[1]`` …"""

    def __init__(self, names: list[str]) -> None:
        self.index: dict[str, int] = {}
        self.instances: dict[str, list[int]] = {}
        for i, n in enumerate(names):
            self.index.setdefault(n, i)
            m = _INSTANCE.match(n)
            if m:
                self.instances.setdefault(m.group(1), []).append(i)

    def plan(self, name: str) -> list[int] | None:
        """Column positions whose sum is counter ``name``, or None where the file lacks it."""
        if name in self.index:
            return [self.index[name]]
        base = name[:-4] if name.endswith("_sum") else name
        if base != name and base in self.index:
            return [self.index[base]]
        if base == name and f"{name}_sum" in self.index:
            return [self.index[f"{name}_sum"]]
        return self.instances.get(base)

    def needed(self) -> list[int]:
        out: set[int] = set()
        for n in ALL_COUNTERS:
            out.update(self.plan(n) or ())
        return sorted(out)


# --------------------------------------------------------------------------------------------- reading


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


def find_header(text: str, pattern: re.Pattern) -> tuple[int, int] | None:
    """(offset, 1-based line number) of the first line matching ``pattern``."""
    m = pattern.search(text)
    if not m:
        return None
    return m.start(), text.count("\n", 0, m.start()) + 1


def read_table(text: str, at: tuple[int, int], source: str, pick: Callable[[list[str]], list[int]]) -> Table:
    """Parse the CSV from the header at ``at``; ``pick(header)`` names the positions to keep.

    Records whose field count differs from the header's (beyond trailing empty fields) are skipped with their
    line: a truncated line, an unquoted comma or program output mixed into the file would misalign every column.
    pandas' C reader takes the columns and a csv field-count pass checks every record; where the two cannot be
    matched record for record (quoted newlines, a CSV error part-way) the file is read record by record.
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
    fast = read_fast(body, header, idx, first_line, source)
    if fast is not None:
        return fast
    reader = csv.reader(io.StringIO(body))
    next(reader)
    return read_records(reader, header, idx, first_line, source)


def _bad_fields(n: int, ncol: int) -> str:
    return (f"{n} fields where the header has {ncol} (a truncated or garbled line, or program output mixed into "
            "the CSV)")


def read_fast(body: str, header: list[str], idx: list[int], first_line: int, source: str) -> Table | None:
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
    skipped = [skip(source, f"line {lines[i]}", _bad_fields(int(n[i]), ncol)) for i in np.flatnonzero(~ok)]
    columns = {i: frame[i].to_numpy(dtype=object)[ok] for i in idx}
    return Table(header, columns, lines[ok], skipped)


def read_records(reader, header: list[str], idx: list[int], first_line: int, source: str) -> Table:
    """Record by record, for a file with a CSV error part-way: what precedes the error is kept."""
    ncol = len(header)
    get = itemgetter(*idx) if len(idx) > 1 else (lambda r, i=idx[0]: (r[i],))
    recs: list = []
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
    """Which texts are whole numbers as rocprof writes ids and ns timestamps (fit in int64)."""
    pattern = re.compile(DIGITS)
    return np.array([bool(pattern.fullmatch(t)) for t in texts], dtype=bool)


@dataclass
class Problems:
    """Cells that are not usable numbers, per counter: (count, first dispatch, first text)."""

    by_counter: dict[str, list] = field(default_factory=dict)

    def add(self, counter: str, bad: np.ndarray, ids: np.ndarray, text: np.ndarray) -> None:
        where = np.flatnonzero(bad)
        if len(where):
            entry = self.by_counter.setdefault(counter, [0, ids[where[0]], str(text[where[0]]).strip()])
            entry[0] += len(where)

    def warnings(self, source: str) -> list[str]:
        return [f"{source}: {c}: {k} value(s) missing or not a non-negative number (first: dispatch {d}, {t!r}); "
                "what needs it is unknown for those dispatches." for c, (k, d, t) in self.by_counter.items()]


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
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan, copy=True)


def _numbers(values: np.ndarray, counter: str, ids: np.ndarray, problems: Problems) -> np.ndarray:
    """Counter cells to float64; missing, non-numeric, infinite or negative cells become NaN (recorded)."""
    num = to_floats(values)
    bad = ~np.isfinite(num) | (num < 0)
    problems.add(counter, bad, ids, values)
    num[bad] = np.nan
    return num


# --------------------------------------------------------------------------------------------- derivation


@dataclass
class Result:
    columns: dict[str, object]
    warnings: list[str]
    meta: dict[str, str]


def _brace(names: list[str]) -> str:
    """``SQ_INSTS_VALU_{ADD,MUL}_F16, SQ_INSTS_VALU_MFMA_MOPS_{F16,I8}``: counter names grouped for a message."""
    groups: dict[tuple[str, str], list[str]] = {}
    for n in names:
        m = re.fullmatch(r"(SQ_INSTS_VALU_MFMA_MOPS_)(\w+)", n) or re.fullmatch(r"(SQ_INSTS_VALU_)(\w+?)(_\w+)", n)
        if m is None:
            groups.setdefault((n, ""), [])
            continue
        prefix, middle = m.group(1), m.group(2)
        suffix = m.group(3) if m.re.groups == 3 else ""
        groups.setdefault((prefix, suffix), []).append(middle)
    out = []
    for (prefix, suffix), middles in groups.items():
        if not middles:
            out.append(prefix)
        elif len(middles) == 1:
            out.append(f"{prefix}{middles[0]}{suffix}")
        else:
            out.append(f"{prefix}{{{','.join(middles)}}}{suffix}")
    return ", ".join(out)


def _sum_counters(get: Callable[[str], np.ndarray | None], names: tuple[str, ...]) -> tuple[list, list[str]]:
    got = [get(n) for n in names]
    return got, [n for n, g in zip(names, got, strict=True) if g is None]


def derive(get: Callable[[str], np.ndarray | None], n: int, source: str, family: str | None,
           lds_banks: float | None, sysinfo_given: bool, quiet_lds: bool = False, bare: str | None = None) -> Result:
    """FLOPs, precision/unit and bytes per level by rocprof-compute's ``calc_ai`` (FORMATS §5.2).

    ``bare``: the hint for a file with no FLOP or byte counter at all (a trace, a per-pass file); it replaces the
    per-quantity warnings with one sentence.
    """
    cols: dict[str, object] = {}
    warn: list[str] = []
    meta: dict[str, str] = {}
    # ---- FLOPs
    valu = np.zeros((n, len(VALU_PRECISIONS)))
    mfma = np.zeros((n, len(MFMA_TYPES)))
    missing: list[str] = []
    for j, (p, _) in enumerate(VALU_PRECISIONS):
        for op, weight in VALU_OPS:
            a = get(f"SQ_INSTS_VALU_{op}_{p}")
            if a is None:
                missing.append(f"SQ_INSTS_VALU_{op}_{p}")
            else:
                valu[:, j] += LANES * weight * a
    found_optional = False
    for j, (t, _) in enumerate(MFMA_TYPES):
        a = get(f"SQ_INSTS_VALU_MFMA_MOPS_{t}")
        if a is None:
            if t not in MFMA_OPTIONAL:
                missing.append(f"SQ_INSTS_VALU_MFMA_MOPS_{t}")
        else:
            mfma[:, j] = MOPS * a
            found_optional |= t in MFMA_OPTIONAL
    precision = np.full(n, None, dtype=object)
    unit = np.full(n, None, dtype=object)
    no_flops = len(missing) == len(FLOP_COUNTERS) and not found_optional
    if no_flops:
        flops = np.full(n, np.nan)
        total = get("SQ_INSTS_VALU")
        note = (" The file has SQ_INSTS_VALU, which counts every vector instruction (integer, moves and "
                "conversions too), not FLOPs." if total is not None else "")
        warn.append(f"{source}: no FLOP counters (SQ_INSTS_VALU_ADD|MUL|FMA|TRANS_F16|F32|F64, "
                    f"SQ_INSTS_VALU_MFMA_MOPS_*): FLOPs are unknown.{note} Hint: collect them (rocprof-compute "
                    "profiles them; with rocprof add them to --pmc), or load rocprof-compute's pmc_perf.csv.")
    else:
        if missing:
            warn.append(f"{source}: FLOPs count only the counters present (a lower bound if the kernels ran the "
                        f"other instructions); missing: {_brace(missing)}. Hint: collect every SQ_INSTS_VALU_* counter "
                        "above for complete FLOPs.")
        v_tot = valu.sum(axis=1)
        m_float = mfma[:, :-1].sum(axis=1)
        i8 = mfma[:, -1]
        m_tot = m_float + i8
        known = np.isfinite(v_tot) & np.isfinite(m_tot)
        matrix = known & (m_tot > 0) & (m_tot >= v_tot)
        vector = known & (v_tot > 0) & ~matrix
        m_prec = np.array([p for _, p in MFMA_TYPES], dtype=object)[np.argmax(np.nan_to_num(mfma), axis=1)]
        v_prec = np.array([p for _, p in VALU_PRECISIONS], dtype=object)[np.argmax(np.nan_to_num(valu), axis=1)]
        precision[matrix] = m_prec[matrix]
        precision[vector] = v_prec[vector]
        unit[matrix] = "matrix"
        unit[vector] = "vector"
        int8 = matrix & (m_prec == "int8")
        flops = v_tot + m_float + np.where(int8, i8, 0.0)
        left_out = ~int8 & (np.nan_to_num(i8) > 0)
        if left_out.any():
            warn.append(f"{source}: {int(left_out.sum())} dispatch(es) also ran int8 MFMA ops (512 × "
                        "SQ_INSTS_VALU_MFMA_MOPS_I8), not counted in their FLOPs: they are integer ops, counted only "
                        "for kernels whose main work is int8.")
        for name in MFMA_UNCOUNTED:
            a = get(name)
            if a is not None and (np.nan_to_num(a) > 0).any():
                warn.append(f"{source}: {int((np.nan_to_num(a) > 0).sum())} dispatch(es) ran {name} matrix ops, not "
                            "counted in their FLOPs (the ops per count of this type are not documented for "
                            "rocprof-compute's roofline): their FLOPs are a lower bound.")
    cols["flops"], cols["precision"], cols["unit"] = flops, precision, unit
    # ---- HBM (off-chip)
    mi200, miss200 = _sum_counters(get, MI200_COUNTERS)
    mi300, miss300 = _sum_counters(get, MI300_COUNTERS)
    use = family
    if use == "MI300" and miss300 and not miss200:
        warn.append(f"{source}: the GPU is MI300-class but the file has the MI200 counters (TCC_EA_*), not "
                    "TCC_EA0_*/TCC_BUBBLE; off-chip bytes use the MI200 formula.")
        use = "MI200"
    elif use == "MI200" and miss200 and not miss300:
        warn.append(f"{source}: the GPU is MI200-class but the file has the MI300 counters (TCC_EA0_*, "
                    "TCC_BUBBLE); off-chip bytes use the MI300 formula.")
        use = "MI300"
    elif use is None:
        use = "MI300" if not miss300 else "MI200" if not miss200 else None
        if use and not sysinfo_given:
            meta["hbm_formula_from"] = "counters present"
    legacy = [next((a for a in (get(x) for x in pair) if a is not None), None) for pair in LEGACY_COUNTERS]
    no_hbm = False
    if use == "MI200" and not miss200:
        rd, rd32, wr, wr64 = mi200
        hbm = rd32 * 32 + (rd - rd32) * 64 + wr64 * 64 + (wr - wr64) * 32
        meta["hbm_formula"] = "MI200 (TCC_EA_RDREQ/WRREQ, calc_ai)"
    elif use == "MI300" and not miss300:
        bubble, rd, rd32, wr, wr64 = mi300
        hbm = bubble * 128 + rd32 * 32 + (rd - bubble - rd32) * 64 + (wr - wr64) * 32 + wr64 * 64
        meta["hbm_formula"] = "MI300 (TCC_BUBBLE, TCC_EA0_RDREQ/WRREQ, calc_ai)"
    elif legacy[0] is not None and legacy[1] is not None:
        hbm = (legacy[0] + legacy[1]) * 1024.0
        meta["hbm_formula"] = "FETCH_SIZE + WRITE_SIZE (KiB × 1024)"
    else:
        hbm = np.full(n, np.nan)
        if legacy[0] is not None or legacy[1] is not None:
            have, lack = ("FETCH_SIZE", "WRITE_SIZE") if legacy[0] is not None else ("WRITE_SIZE", "FETCH_SIZE")
            warn.append(f"{source}: {have} without {lack}: off-chip bytes are unknown (one direction only). "
                        f"Hint: collect {lack} as well.")
        else:
            no_hbm = True
            partial = [m for m, got in ((miss200, mi200), (miss300, mi300)) if len(m) < len(got)]
            lack = f" (missing {', '.join(min(partial, key=len))})" if partial else ""
            warn.append(f"{source}: no off-chip counters{lack}: HBM bytes are unknown. Hint: collect "
                        "TCC_EA_RDREQ(_32B)_sum and TCC_EA_WRREQ(_64B)_sum (MI200; TCC_EA0_* and TCC_BUBBLE_sum on "
                        "MI300), or FETCH_SIZE and WRITE_SIZE.")
    cols["bytes_hbm"] = _non_negative(hbm, "HBM", source, warn)
    # ---- L2, L1
    got, lack = _sum_counters(get, L2_COUNTERS)
    if len(lack) < len(L2_COUNTERS):
        if lack:
            warn.append(f"{source}: L2 bytes need {', '.join(L2_COUNTERS)}; missing {', '.join(lack)}: L2 bytes are "
                        "unknown.")
            cols["bytes_l2"] = np.full(n, np.nan)
        else:
            cols["bytes_l2"] = 64.0 * (got[0] + got[1] + got[2] + got[3])
    l1 = get(L1_COUNTERS[0])
    if l1 is not None:
        cols["bytes_l1"] = 64.0 * l1
    # ---- LDS
    got, lack = _sum_counters(get, LDS_COUNTERS)
    if len(lack) < len(LDS_COUNTERS):
        if lack:
            warn.append(f"{source}: LDS bytes need SQ_LDS_IDX_ACTIVE and SQ_LDS_BANK_CONFLICT; missing "
                        f"{', '.join(lack)}: LDS bytes are unknown.")
            cols["bytes_lds"] = np.full(n, np.nan)
        elif lds_banks is None:
            if sysinfo_given:
                warn.append(f"{source}: LDS bytes need lds_banks_per_cu, which the sysinfo.csv read with it does not "
                            "give (Omniperf 1.x does not record it): LDS bytes are unknown.")
            elif not quiet_lds:
                warn.append(f"{source}: LDS bytes need lds_banks_per_cu from rocprof-compute's sysinfo.csv: LDS "
                            "bytes are unknown. Hint: load sysinfo.csv from the same workload folder together with "
                            "this file.")
            cols["bytes_lds"] = np.full(n, np.nan)
        else:
            cols["bytes_lds"] = _non_negative((got[0] - got[1]) * 4.0 * lds_banks, "LDS", source, warn)
    for key in ("flops", *(k for k in cols if k.startswith("bytes_"))):
        huge = np.isinf(cols[key])  # counters near the float limit times 64 or 512: not a measurement
        if huge.any():
            warn.append(f"{source}: {int(huge.sum())} dispatch(es) have counters too large to be real for "
                        f"{key}: left unknown.")
            cols[key] = np.where(huge, np.nan, cols[key])
    if bare is not None and no_flops and no_hbm and not any(k in cols for k in ("bytes_l2", "bytes_l1", "bytes_lds")):
        warn = [f"{source}: no FLOP or byte counters in this file: the kernels' FLOPs and bytes are unknown, only "
                f"their times are read. Hint: {bare}"]
    return Result(cols, warn, meta)


def _non_negative(values: np.ndarray, what: str, source: str, warn: list[str]) -> np.ndarray:
    neg = values < 0
    if neg.any():
        warn.append(f"{source}: {int(neg.sum())} dispatch(es) give negative {what} bytes from their counters "
                    "(counter noise or a garbled file): left unknown.")
        values = np.where(neg, np.nan, values)
    return values


def no_time_warning(source: str, cols: tuple[str, str], hint: str | None = None) -> str:
    return (f"{source}: no {cols[0]}/{cols[1]} columns: kernel times are unknown. Hint: "
            f"{hint or 'profile with timestamps on (rocprof --timestamp on).'}")


def _ns(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ok, whole ns, fraction of a ns) of timestamp texts: whole ns, or decimal ns as rocprof-compute 3.x averages
    passes; the whole part stays an exact int64 (ns since boot need 16+ digits, beyond a float's exact range)."""
    m = pd.Series(texts, dtype=object).str.extract(r"^([0-9]{1,18})(\.[0-9]*)?$")
    ok = m[0].notna().to_numpy(dtype=bool)
    whole = np.zeros(len(texts), dtype=np.int64)
    whole[ok] = m[0][ok].astype(np.int64).to_numpy()
    frac = pd.to_numeric(m[1].where(m[1].notna() & (m[1] != "."), "0").radd("0"), errors="coerce")
    return ok, whole, frac.fillna(0.0).to_numpy(dtype=np.float64)


def durations(start: np.ndarray | None, end: np.ndarray | None, ids: np.ndarray, names: np.ndarray,
              source: str, cols: tuple[str, str], no_time: str | None = None) -> tuple[np.ndarray, list[str]]:
    """Seconds from ns timestamps; unusable ones give NaN and a warning per dispatch (FORMATS §0.11).
    ``no_time``: the hint when the file has no timestamp columns."""
    n = len(ids)
    if start is None or end is None:
        return np.full(n, np.nan), [no_time_warning(source, cols, no_time)]
    s_txt = np.array([str(v).strip() for v in start], dtype=object)
    e_txt = np.array([str(v).strip() for v in end], dtype=object)
    (s_ok, s, s_frac), (e_ok, e, e_frac) = _ns(s_txt), _ns(e_txt)
    ok = s_ok & e_ok
    d = np.where(ok, (e - s).astype(np.float64) + (e_frac - s_frac), 0.0)
    good = ok & (d > 0)
    time_s = np.where(good, d * 1e-9, np.nan)
    bad = np.flatnonzero(~good)
    warn: list[str] = []
    for i in bad[:MAX_NAMED]:
        if ok[i]:
            why = f"{cols[1]} − {cols[0]} = {int(d[i]) if float(d[i]).is_integer() else round(float(d[i]), 3)} ns"
            hint = ("the profiler recorded the end before the start (a timestamp glitch); the other dispatches are "
                    "kept" if d[i] < 0 else "the profiler recorded no positive duration; profile again")
        else:
            shown = ", ".join(f"{c} {t!r}" for c, t, g in ((cols[0], s_txt[i], s_ok[i]),
                                                           (cols[1], e_txt[i], e_ok[i])) if not g)
            sci = any(re.search(r"\d[eE][+-]?\d", t) for t in (s_txt[i], e_txt[i]))
            why = f"{'timestamp in scientific notation' if sci else 'not a timestamp in ns'}: {shown}"
            hint = ("use the CSV as the profiler wrote it; a spreadsheet rewrites long timestamps in scientific "
                    "notation and loses their last digits")
        warn.append(f"{source}: dispatch {ids[i]} ({names[i]}): {why}; its time is left unknown. Hint: {hint}.")
    if len(bad) > MAX_NAMED:
        warn.append(f"{source}: … and {len(bad) - MAX_NAMED} more dispatch(es) with unusable timestamps; their "
                    "times are left unknown.")
    return time_s, warn


# --------------------------------------------------------------------------------------------- context


#: roofline.csv columns given to the workload's meta (the device its dispatches ran on), in B/s and FLOP/s
ROOFLINE_META = {
    "HBMBw": "measured_hbm_bytes_per_s", "L2Bw": "measured_l2_bytes_per_s", "L1Bw": "measured_l1_bytes_per_s",
    "LDSBw": "measured_lds_bytes_per_s", "FP32Flops": "measured_fp32_vector_flops_per_s",
    "FP64Flops": "measured_fp64_vector_flops_per_s", "MFMABF16Flops": "measured_bf16_matrix_flops_per_s",
    "MFMAF16Flops": "measured_fp16_matrix_flops_per_s", "MFMAF32Flops": "measured_fp32_matrix_flops_per_s",
    "MFMAF64Flops": "measured_fp64_matrix_flops_per_s", "MFMAI8Ops": "measured_int8_matrix_ops_per_s",
}


def context_dict(context: Mapping | None, key: str) -> dict | None:
    v = context.get(key) if isinstance(context, Mapping) else None
    return v if isinstance(v, dict) else None


def context_meta(context: Mapping | None, gpus: np.ndarray, meta: dict[str, str], warn: list[str]) -> str | None:
    """Device name and meta from sysinfo / roofline companions; returns the device name."""
    device = None
    info = context_dict(context, "rocprof_sysinfo")
    if info:
        for key in ("gpu_model", "gpu_arch", "gpu_series", "cu_per_gpu", "num_xcd", "lds_banks_per_cu",
                    "compute_partition", "rocm_version"):
            if info.get(key) not in (None, ""):
                meta[key] = str(info[key])
        if info.get("gpu_arch"):
            meta["arch"] = str(info["gpu_arch"])
        # rocprof-compute appends the silicon stepping to the model (MI300X_A1); the device is the model
        device = re.sub(r"_[AB]\d$", "", str(info["gpu_model"])) if info.get("gpu_model") else None
        warn.extend(str(w) for w in info.get("warnings", ()) if isinstance(w, str))
    agents = context_dict(context, "rocprof_agents")
    gpus_seen = agents.get("gpus") if agents else None
    if not info and isinstance(gpus_seen, list):  # rocprofv3 agent_info.csv: one kind of GPU names the device
        kinds = {(str(g.get("product_name") or ""), str(g.get("name") or ""), str(g.get("cu_count") or ""))
                 for g in gpus_seen if isinstance(g, dict)}
        if len(kinds) == 1:
            product, arch, cus = next(iter(kinds))
            device = product or None
            meta.update({k: v for k, v in (("arch", arch), ("gpu_arch", arch), ("cu_per_gpu", cus)) if v})
    roof = context_dict(context, "rocprof_roofline")
    if roof:
        ids = sorted(k for k in roof if isinstance(k, int) and isinstance(roof[k], dict))
        here = sorted({int(g) for g in gpus if isinstance(g, str) and re.fullmatch(r"\s*[0-9]{1,9}\s*", g)})
        pickd = here[0] if len(here) == 1 and here[0] in ids else (ids[0] if ids else None)
        if pickd is not None:
            meta["measured_device"] = str(pickd)
            for col, key in ROOFLINE_META.items():
                v = roof[pickd].get(col)
                if isinstance(v, float) and np.isfinite(v):
                    meta[key] = repr(v)
    return device


# --------------------------------------------------------------------------------------------- wide formats


@dataclass(frozen=True)
class Layout:
    fmt: str
    header: re.Pattern
    ids: tuple[str, ...]
    name: tuple[str, ...]
    gpu: tuple[str, ...]
    start: tuple[str, ...]
    end: tuple[str, ...]
    expected: str  #: what the header should look like, for the no-header message
    hint: str  #: how to get the file, for the no-header message
    bare: str | None = None  #: the hint when the file holds no FLOP or byte counter at all
    empty: str | None = None  #: the hint when the file has a header and no row


def quoted(*names: str) -> str:
    return ",".join(f'"?{re.escape(n)}"?' for n in names)


def position(header: list[str], names: tuple[str, ...]) -> int | None:
    low = {}
    for i, h in enumerate(header):
        low.setdefault(h.lower(), i)
    return next((low[n.lower()] for n in names if n.lower() in low), None)


def no_header(text: str, source: str, expected: str, hint: str) -> InputError:
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    shown = repr(first if len(first) <= 60 else first[:57] + "...")
    return InputError(where=source, expected=expected, found=f"first line {shown}", hint=hint)


@dataclass
class Ids:
    keep: np.ndarray  #: rows with a whole-number dispatch id and a kernel name
    ids: np.ndarray  #: stripped id text per row
    names: np.ndarray  #: stripped kernel name per row
    id_codes: np.ndarray  #: factorised ids (same code = same id text)
    skipped: list[Skipped]


def ids_and_names(table: Table, id_col: int, name_col: int, id_label: str, source: str) -> Ids:
    """Rows with a whole-number dispatch id and a kernel name; the others become skipped entries."""
    id_codes, id_uniq = factorize_text(table.columns[id_col])
    name_codes, name_uniq = factorize_text(table.columns[name_col])
    ids, names = id_uniq[id_codes], name_uniq[name_codes]
    id_ok = whole_numbers(id_uniq)[id_codes]
    name_ok = (name_uniq != "")[name_codes]
    skipped = []
    for i in np.flatnonzero(~(id_ok & name_ok)):
        reason = (f"{id_label} {ids[i]!r} is not a dispatch number (a second header, or program output)"
                  if not id_ok[i] else f"dispatch {ids[i]}: the kernel name is empty")
        skipped.append(skip(source, f"line {table.lines[i]}", reason))
    return Ids(id_ok & name_ok, ids, names, id_codes, skipped)


def by_line(skipped: list[Skipped]) -> list[Skipped]:
    return sorted(skipped, key=lambda s: int(s.row.split()[-1]))


def parse_wide(data: bytes, source: str, context: dict | None, lay: Layout) -> Workload:
    text = check_text(data, source)
    at = find_header(text, lay.header)
    if at is None:
        raise no_header(text, source, lay.expected, lay.hint)
    roles: dict[str, int | None] = {}
    counters: Counters | None = None

    def pick(header: list[str]) -> list[int]:
        nonlocal counters
        for role in ("ids", "name", "gpu", "start", "end"):
            roles[role] = position(header, getattr(lay, role))
        roles["wave"] = position(header, ("wave_size",))
        counters = Counters(header)
        return sorted({p for p in roles.values() if p is not None} | set(counters.needed()))

    table = read_table(text, at, source, pick)
    assert counters is not None
    if roles["ids"] is None or roles["name"] is None:
        raise no_header(text, source, lay.expected, lay.hint)
    if table.n == 0:
        if table.skipped:
            first = table.skipped[0]
            raise InputError(where=f"{source}: {first.row}", text=f"no usable dispatches; the first problem: {first.reason}.",
                             hint="load the CSV as the profiler wrote it.")
        raise InputError(where=source, expected="at least one dispatch row", found="a header only",
                         hint=lay.empty or "the profiled program launched no kernels, or the profiler stopped early; "
                                           "profile again.")
    found = ids_and_names(table, roles["ids"], roles["name"], table.header[roles["ids"]], source)
    keep = found.keep
    skipped = by_line(table.skipped + found.skipped)
    if not keep.any():
        first = skipped[0]
        raise InputError(where=f"{source}: {first.row}", text=f"no usable dispatches; the first problem: {first.reason}.",
                         hint="load the CSV as the profiler wrote it.")
    sel = {i: col[keep] for i, col in table.columns.items()}
    ids, names = found.ids[keep], found.names[keep]
    gpus = None
    if roles["gpu"] is not None:
        codes, uniq = factorize_text(sel[roles["gpu"]])
        gpus = uniq[codes]
    problems = Problems()
    cache: dict[str, np.ndarray | None] = {}

    def get(name: str) -> np.ndarray | None:
        if name not in cache:
            plan = counters.plan(name)
            if plan is None:
                cache[name] = None
            else:
                parts = [_numbers(sel[i], table.header[i], ids, problems) for i in plan]
                cache[name] = np.sum(parts, axis=0) if len(parts) > 1 else parts[0]
        return cache[name]

    time_cols = (table.header[roles["start"]] if roles["start"] is not None else lay.start[-1],
                 table.header[roles["end"]] if roles["end"] is not None else lay.end[-1])
    times = (sel.get(roles["start"]) if roles["start"] is not None else None,
             sel.get(roles["end"]) if roles["end"] is not None else None)
    waves = sel[roles["wave"]] if roles["wave"] is not None else None
    return finish(lay.fmt, source, context, ids, names, gpus, get, times, time_cols, skipped, problems, waves,
                  bare=lay.bare)


def finish(fmt: str, source: str, context: dict | None, ids: np.ndarray, names: np.ndarray, gpus: np.ndarray | None,
           get: Callable[[str], np.ndarray | None], times: tuple, time_cols: tuple[str, str],
           skipped: list[Skipped], problems: Problems, waves: np.ndarray | None = None, *,
           bare: str | None = None, no_time: str | None = None) -> Workload:
    """The workload of ``n`` dispatches: counters by ``get(name)``, times from the ``times`` texts, context from the
    companions (sysinfo.csv, roofline.csv)."""
    n = len(ids)
    info = context_dict(context, "rocprof_sysinfo")
    banks = info.get("lds_banks_per_cu") if info else None
    banks = float(banks) if isinstance(banks, int | float) and not isinstance(banks, bool) and banks > 0 else None
    family = gpu_family(str(info.get("gpu_arch") or ""), str(info.get("gpu_series") or "")) if info else None
    no_sysinfo = fmt == "rocprof-compute" and info is None
    with np.errstate(over="ignore", invalid="ignore"):  # absurd counters give inf, turned to unknown
        res = derive(get, n, source, family, banks, info is not None, quiet_lds=no_sysinfo, bare=bare)
    time_s, time_warn = durations(times[0], times[1], ids, names, source, time_cols, no_time)
    warn: list[str] = []
    meta = {"profiler": fmt, **res.meta}
    device = context_meta(context, gpus if gpus is not None else np.zeros(0, dtype=object), meta, warn)
    if no_sysinfo:
        lds = ", LDS bytes are unknown (they need lds_banks_per_cu)" if "bytes_lds" in res.columns else ""
        formula = meta.get("hbm_formula", "none usable").split(" (")[0]
        warn.append(f"{source}: no sysinfo.csv read with it: the GPU model is unknown{lds}, and the off-chip "
                    f"formula follows the counters present ({formula}). Hint: load sysinfo.csv from the same "
                    "workload folder together with pmc_perf.csv.")
    wave32 = np.zeros(n, dtype=bool) if waves is None else np.array([str(v).strip() == "32" for v in waves])
    if info and info.get("wave_size") == 32:
        wave32[:] = True
    if wave32.any() and np.nan_to_num(res.columns["flops"][wave32]).any():
        warn.append(f"{source}: {int(wave32.sum())} dispatch(es) ran as wave32 (RDNA); rocprof-compute's FLOP rule "
                    "counts 64 lanes per VALU instruction (CDNA wave64), so their VALU FLOPs may be up to 2× too high.")
    if meta.get("hbm_formula", "").startswith("MI300") and "bytes_l2" in res.columns:
        warn.append(f"{source}: L2 bytes use rocprof-compute's 64 B per request; MI300 has 128 B cache lines, so "
                    "L2 bytes may be undercounted.")
    dup = pd.Series(ids).duplicated(keep=False).to_numpy(dtype=bool) if n else np.zeros(0, dtype=bool)
    if gpus is not None and dup.any():
        dup = pd.DataFrame({"i": ids, "g": gpus}).duplicated(keep=False).to_numpy(dtype=bool)
    if dup.any():
        shown = ", ".join(dict.fromkeys(str(x) for x in ids[dup][:MAX_NAMED]))
        warn.append(f"{source}: dispatch id(s) {shown} appear on more than one line; every line is kept (a file "
                    "joined from several runs, or a duplicated line?).")
    columns: dict[str, object] = {
        "name": names, "time_s": time_s, "source": np.full(n, source, dtype=object), "row": ids,
        **res.columns,
    }
    if gpus is not None:
        columns["gpu"] = gpus
    frame = make_frame(columns, n)
    warnings = [*warn, *time_warn, *res.warnings, *problems.warnings(source)]
    return Workload(frame=frame, name=source, sources=(source,), formats=(fmt,), skipped=tuple(skipped),
                    warnings=tuple(warnings), device=device, meta=meta)


def header_sniffer(*patterns: re.Pattern) -> Callable[[str, str], bool]:
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
        raise InputError(where=f"{source}: line {e.lineno}, column {e.colno}", text=f"not valid JSON: {e.msg}.",
                         hint=hint) from None


def with_rows(w: Workload, frame: pd.DataFrame, warnings: list[str]) -> Workload:
    """``w`` with more rows (copies next to kernels) and warnings; an empty ``w`` is replaced by them."""
    if len(frame) == 0:
        return replace(w, warnings=(*w.warnings, *warnings))
    merged = frame if len(w.frame) == 0 else pd.concat([w.frame, frame], ignore_index=True, sort=False)
    return replace(w, frame=merged, warnings=(*w.warnings, *warnings))


def summary(fmt: str, source: str, names: np.ndarray, counts: np.ndarray, total_ns: np.ndarray, rows: np.ndarray,
            hint: str, meta: dict[str, str], skipped: list[Skipped]) -> Workload:
    """Time-only rows, one per kernel name (``--stats``, ``pmc_kernel_top.csv``): ``count`` launches, ``time_s``
    their total; FLOPs and bytes unknown. ``meta["time_only"]`` lets :func:`roofcore.ingest.read_many` join them by
    name to an inventory read with them."""
    n = len(names)
    time_s = np.where(np.isfinite(total_ns) & (total_ns > 0), total_ns * 1e-9, np.nan)
    warn = [f"{source}: a time per kernel name only (no counters): FLOPs and bytes are unknown. Hint: {hint}"]
    bad = np.flatnonzero(np.isnan(time_s))
    for i in bad[:MAX_NAMED]:
        warn.append(f"{source}: {names[i]}: total time {float(total_ns[i]):g} ns is not a positive number; its time "
                    "is left unknown.")
    if len(bad) > MAX_NAMED:
        warn.append(f"{source}: … and {len(bad) - MAX_NAMED} more kernels without a usable time.")
    frame = make_frame({"name": names, "count": counts.astype(np.int64), "time_s": time_s,
                        "source": np.full(n, source, dtype=object), "row": rows}, n)
    return Workload(frame=frame, name=source, sources=(source,), formats=(fmt,), skipped=tuple(skipped),
                    warnings=tuple(warn), meta={"time_only": "true", "profiler": fmt, **meta})


def parse_summary(data: bytes, source: str, fmt: str, header: re.Pattern, roles: dict[str, tuple[str, ...]],
                  expected: str, how: str, hint: str, meta: dict[str, str],
                  check: Callable[[np.ndarray, str], None] | None = None) -> Workload:
    """A per-kernel-name summary table (``roles``: ``name``, ``count``, ``total`` ns) as time-only rows; rows whose
    count is not a whole number ≥ 1 are skipped; ``check(names, source)`` may refuse what the names show it is."""
    text = check_text(data, source)
    at = find_header(text, header)
    if at is None:
        raise no_header(text, source, expected, how)
    pos: dict[str, int | None] = {}

    def pick(cols: list[str]) -> list[int]:
        for role, names in roles.items():
            pos[role] = position(cols, names)
        return sorted(p for p in pos.values() if p is not None)

    table = read_table(text, at, source, pick)
    if any(pos[r] is None for r in ("name", "count", "total")):
        raise no_header(text, source, expected, how)
    if table.n == 0:
        raise InputError(where=source, expected="a row per kernel under the header", found="a header only",
                         hint="the profiled program launched no kernels; profile again.")
    codes, uniq = factorize_text(table.columns[pos["name"]])
    names = uniq[codes]
    counts, total = (to_floats(table.columns[pos[r]]) for r in ("count", "total"))
    ok = (names != "") & np.isfinite(counts) & (counts >= 1) & (counts == np.floor(counts)) & (counts < 2**53)
    skipped = list(table.skipped)
    for i in np.flatnonzero(~ok):
        why = ("the name is empty" if names[i] == "" else
               f"{table.header[pos['count']]} {str(table.columns[pos['count']][i]).strip()!r} is not a count")
        skipped.append(skip(source, f"line {table.lines[i]}", why))
    skipped = by_line(skipped)
    if not ok.any():
        first = skipped[0]
        raise InputError(where=f"{source}: {first.row}", text=f"no usable rows; the first problem: {first.reason}.",
                         hint="load the file as the profiler wrote it.")
    if check is not None:
        check(names[ok], source)
    rows = np.array([f"line {x}" for x in table.lines[ok]], dtype=object)
    return summary(fmt, source, names[ok], counts[ok], total[ok], rows, hint, meta, skipped)
