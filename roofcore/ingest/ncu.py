"""Nsight Compute (ncu) CSV exports → one row per profiled launch (FORMATS.md §0–§3).

Two formats: ``ncu-details`` (``ncu --csv``, long: one row per launch × metric, the 12-, 14-, 15- and
20-column headers and the ``--nvtx`` variant) and ``ncu-raw`` (``ncu --csv --page raw``, wide: a header, a
units row, one row per launch), whatever the file is called (``--log-file x.log`` output included). Noise
(``==PROF==`` lines, application stdout, a BOM, CRLF) is stripped, the header is found by pattern
(``^"ID","Process ID",``) and columns are read by name with a real CSV parser (pyarrow's, multi-threaded,
reading only the columns needed; noise lines inside the table and repeated headers are cut out first when
pyarrow stumbles on them; the ``csv`` module line by line when rows are ragged or a second table has other
columns). Details-page metric rows shorter than the header (the trailing rule columns absent, FORMATS §11)
are padded with empty fields. Values lose their thousands separators; ``n/a``, empty, ``inf``, ``nan``,
negative and text values are unknown (NaN, with a warning), never zero; a European decimal comma is refused
with a message. Units go through one table (:func:`unit_factor`, FORMATS §9), per row: time → s, bytes → B
(``Kbyte``/``Mbyte``/``Gbyte`` taken as SI powers of 1000 — what NVIDIA appears to use, unverified;
``--print-units base`` avoids the question), byte/s → B/s, frequencies → Hz. Rule rows (empty metric) are kept
aside in ``meta["ncu_rules"]``. Nsight Compute 2019.x names (``gpu__time_duration``, ``dram__read_bytes``,
``sm__elapsed_cycles_avg``, ``..._sum``) are read as their current names; details-page labels count only with a
unit of the right dimension (``Memory Throughput`` in byte/s is DRAM bandwidth, in % it is not used).

Per launch (FORMATS §3.6a, the NERSC method):

* CUDA-core FLOPs = 2·dfma + dmul + dadd + 2·ffma + fmul + fadd + 2·hfma + hmul + hadd, from
  ``sm__sass_thread_inst_executed_op_<op>_pred_on.sum`` (the ``smsp__`` totals are accepted instead).
  Counters absent from the export are left out of the sum (with a warning); a counter present but
  ``n/a`` makes that launch's FLOPs unknown.
* Tensor FLOPs: the ``sm__ops_path_tensor_*.sum`` op counters when present (already FLOPs; per counter
  family the plain total, else ``_sparsity_off`` + ``_sparsity_on``, so on/off pairs are not counted
  twice; distinct families are assumed disjoint), else ``sm__inst_executed_pipe_tensor.sum`` × the FLOPs of
  one MMA instruction, 2·M·N·K, from the shape the kernel name carries or the architecture's default
  (:mod:`.ncu_tensor`), unknown where neither says — with a warning naming the factor used for how many
  launches. Without CUDA-core counters, a launch's FLOPs are its tensor FLOPs where it ran tensor
  instructions, else unknown.
* Precision: tensor FLOPs dominate → unit ``matrix``, precision from the counter name (``src_bf16`` …) or
  the kernel name, fp16 with a warning when neither says; otherwise unit ``vector`` and the precision of
  the largest of the fp64/fp32/fp16 FLOPs. No FLOPs at all → precision unknown.
* Bytes: ``bytes_hbm`` = ``dram__bytes.sum``, else ``dram__bytes_read.sum + dram__bytes_write.sum``, else
  the ``_op_`` names (sm_120), else DRAM throughput (``dram__bytes.sum.per_second``, the details page's
  ``Memory Throughput`` in byte/s) × duration — a derived figure, said so in a warning; a throughput given only
  as a % of peak leaves bytes unknown. ``bytes_l2`` = ``lts__t_bytes.sum``; ``bytes_l1`` = ``l1tex__t_bytes.sum``
  (or their ``.per_second`` × duration).
* Time: ``gpu__time_duration.sum``, else ``sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second``
  (or ``smsp__``; 2019.x: ``sm__elapsed_cycles_avg / gpc__frequency``), else the details-page label "Duration".
* Group: the NVTX range the launch ran in (``--nvtx`` columns; nested push/pop ranges joined with "/").

Launches under 1 µs or 1 MB of DRAM traffic are counted in a warning: ncu replays them with flushed caches
at base clocks, so their DRAM intensity is unreliable (FORMATS §3.5).

An export with a time but no FLOP or byte counter at all (e.g. ``../shared/samples/ncu_raw_b200_torch_sdpa_flash.csv``)
is read as *time only* (``meta["time_only"] = "true"``, FLOPs/bytes NaN, a warning naming the ``--metrics``
to collect), so it can still be joined to an inventory like an Nsight Systems profile; an export with no
time, FLOP or byte metric at all is an error naming that list.

``workload.device`` is the device name when the export carries it (``device__attribute_display_name``;
the ``Device`` column is only an index in current versions; program output is never read),
``meta["compute_capability"]`` the ``CC`` column (or the ``device__attribute_compute_capability_*``
metrics) and ``meta["arch"]`` ``sm_<major><minor>``, all from the first launch (an export spanning several
GPUs keeps the first). No hardware id is suggested here (that needs the catalog): callers use
``roofcore.load_catalogs().closest(workload.device)``.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from .. import limits
from ..errors import InputError
from ..models import Skipped, Workload
from . import check_binary, make_frame, ncu_tensor, register_format, skip

# ------------------------------------------------------------------------------------------ metrics

OPS = ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma")
#: metrics to ask ncu for (named in messages): the NERSC set plus gpu__time_duration.sum
ROOFLINE_METRICS = (
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
    *(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in OPS),
    "sm__inst_executed_pipe_tensor.sum", "dram__bytes.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
)
PROFILE_COMMAND = f"ncu --csv --print-units base --metrics {','.join(ROOFLINE_METRICS)} ./app > profile.csv"
#: the CUDA-core FLOP counters, to name in messages
FLOP_METRICS = ",".join(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in OPS)

#: metric name -> the dimension its unit must have
WANTED: dict[str, str] = {
    "gpu__time_duration.sum": "time", "Duration": "time",
    "sm__cycles_elapsed.avg": "count", "sm__cycles_elapsed.avg.per_second": "frequency",
    "smsp__cycles_elapsed.avg": "count", "smsp__cycles_elapsed.avg.per_second": "frequency",
    "sm__inst_executed_pipe_tensor.sum": "count", "smsp__inst_executed_pipe_tensor.sum": "count",
    "device__attribute_compute_capability_major": "count", "device__attribute_compute_capability_minor": "count",
    **{f"{p}__sass_thread_inst_executed_op_{op}_pred_on.sum": "count" for p in ("sm", "smsp") for op in OPS},
    **{m: "bytes" for m in ("dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                            "dram__bytes_op_read.sum", "dram__bytes_op_write.sum", "lts__t_bytes.sum",
                            "l1tex__t_bytes.sum")},
    # rates: bytes = rate × duration where the byte counter itself is absent (a derived figure, said so)
    **{m: "bandwidth" for m in ("dram__bytes.sum.per_second", "dram__bytes_read.sum.per_second",
                                "dram__bytes_write.sum.per_second", "lts__t_bytes.sum.per_second",
                                "l1tex__t_bytes.sum.per_second")},
    "gpc__cycles_elapsed.avg.per_second": "frequency",
}
#: details-page labels (``--print-metric-name label``, the default) -> {unit dimension: the metric shown}; a label
#: whose unit has another dimension (``Memory Throughput`` in %) is not used
LABELS: dict[str, dict[str, str]] = {
    "Duration": {"time": "Duration"},
    "Memory Throughput": {"bandwidth": "dram__bytes.sum.per_second"},  # Memory Workload Analysis, byte/s
    "DRAM Throughput": {"bandwidth": "dram__bytes.sum.per_second"},
}
#: Nsight Compute 2019.x names (the pre-Volta metric set, no .sum/.avg rollups) -> current names
LEGACY = {
    "gpu__time_duration": "gpu__time_duration.sum", "dram__read_bytes": "dram__bytes_read.sum",
    "dram__write_bytes": "dram__bytes_write.sum", "sm__elapsed_cycles_avg": "sm__cycles_elapsed.avg",
    "gpc__frequency": "gpc__cycles_elapsed.avg.per_second", "dram__bytes_per_sec": "dram__bytes.sum.per_second",
    "dram__read_bytes_per_sec": "dram__bytes_read.sum.per_second",
    "dram__write_bytes_per_sec": "dram__bytes_write.sum.per_second",
}
_ROLLUP = re.compile(r"^([a-z0-9]+__\w+?)_(sum|avg|max|min)$")
_TENSOR_OPS = re.compile(r"^(sm|smsp)__ops_path_tensor_(\w+?)(_sparsity_(on|off))?\.sum$")
_TEXT = ("device__attribute_display_name",)  # text-valued metrics kept as text

# -------------------------------------------------------------------------------------------- units

_COUNT_BASES = ("", "inst", "cycle", "sector", "request", "warp", "thread", "block", "op", "flop")
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
#: time units per second
_TIME = {"nsecond": 1e9, "ns": 1e9, "usecond": 1e6, "us": 1e6, "µs": 1e6, "msecond": 1e3, "ms": 1e3,
         "second": 1.0, "s": 1.0, "sec": 1.0}


def _unit_table() -> dict[str, tuple[str, float]]:
    t: dict[str, tuple[str, float]] = {u: ("time", 1.0 / per_s) for u, per_s in _TIME.items()}
    for p, f in _PREFIX.items():
        for base in _COUNT_BASES:
            if base or not p:
                t[p + base] = ("count", f)
        t[p + "byte"] = ("bytes", f)  # SI powers of 1000 as far as seen (unverified; prefer --print-units base)
        t[p + "B"] = ("bytes", f)
        t[p + "hz"] = ("frequency", f)
        for tu, per_s in _TIME.items():
            t[f"{p}cycle/{tu}"] = ("frequency", f * per_s)
            t[f"{p}byte/{tu}"] = t[f"{p}B/{tu}"] = ("bandwidth", f * per_s)
    for p, f in {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30}.items():
        t[p + "B"] = t[p + "byte"] = ("bytes", f)
    return t


UNITS = _unit_table()
_UNITS_LOWER = {k.lower(): v for k, v in UNITS.items()}  # "MHz", "GHz": lower-cased keys do not collide


def unit_factor(unit: str) -> tuple[str, float] | None:
    """``(dimension, factor to base units)`` of an ncu unit string, or None if unknown (FORMATS §9)."""
    u = unit.strip()
    return UNITS.get(u) or _UNITS_LOWER.get(u.lower())


# ------------------------------------------------------------------------------------------ sniffing

_HEADER = b'"ID","Process ID",'
_HEADER_RE = re.compile(r'^"ID","Process ID",(.*)$', re.M)
_NOISE_RE = re.compile(r"^==(PROF|ERROR|ERR|WARNING)==", re.M)


def _header_line(head: str) -> str | None:
    m = _HEADER_RE.search(head)
    return m.group(0) if m else None


def _sniff_details(head: str, name: str) -> bool:
    line = _header_line(head)
    if line is not None:
        return '"Metric Name"' in line
    return bool(_NOISE_RE.search(head))  # a failed run: no header, only ncu's own lines (explained by parse)


def _sniff_raw(head: str, name: str) -> bool:
    line = _header_line(head)
    return line is not None and '"Metric Name"' not in line


# ------------------------------------------------------------------------------------------ messages


def _failure(text: str, source: str) -> InputError:
    """Why an ncu output has no table: permissions, no kernels, another error, or not an ncu export."""
    if "ERR_NVGPUCTRPERM" in text:
        return InputError(where=source, text="no permission to read GPU performance counters (ERR_NVGPUCTRPERM), "
                          "so Nsight Compute measured no kernel.",
                          hint="run as admin/root or enable access (NVreg_RestrictProfilingToAdminUsers=0 for the "
                          "nvidia kernel module on Linux; NVIDIA Control Panel > Developer > Manage GPU Performance "
                          "Counters on Windows), then profile again; see https://developer.nvidia.com/ERR_NVGPUCTRPERM.")
    if re.search(r"^==WARNING== No kernels were profiled", text, re.M):
        return InputError(where=source, text="Nsight Compute profiled no kernels (\"No kernels were profiled\"), so "
                          "the output has no table.",
                          hint="if the application launches its kernels from a child process (Python launchers, "
                          "mpirun, torchrun), profile with --target-processes all; also check the --kernel-name, "
                          "--launch-skip and --launch-count filters.")
    err = re.search(r"^==(?:ERROR|ERR)==\s*(.*)$", text, re.M)
    if err:
        return InputError(where=source, text=f"Nsight Compute reported an error and wrote no table: {err.group(1)[:200]}",
                          hint=f"fix that and profile again, e.g. {PROFILE_COMMAND}")
    return InputError(where=source, expected='an Nsight Compute CSV table (a header starting "ID","Process ID",)',
                      found="no such header",
                      hint="export with ncu --csv (details page, best with --print-units base) or ncu --csv --page raw, "
                      "without --print-summary; ncu -i report.ncu-rep --csv --page raw re-exports a saved report.")


def _rule_only(source: str, rules: list[str]) -> InputError:
    names = ", ".join(dict.fromkeys(r.split(" (", 1)[0] for r in rules))
    return InputError(where=source, text=f"this export holds only rule text ({names}), no metric values: roofline "
                      "sections print just their rules on the details page.",
                      hint="re-export the report with the raw page (ncu -i report.ncu-rep --csv --page raw "
                      f"--print-units base > raw.csv) or profile with --metrics {','.join(ROOFLINE_METRICS)}.")


def _locale_error(source: str, example: str) -> InputError:
    return InputError(where=source, text=f"metric values are in a European number format (e.g. {example!r}: decimal "
                      "comma, dots between thousands), as ncu writes them under such a locale; they cannot be read "
                      "unambiguously.",
                      hint="profile (or re-export with ncu -i report.ncu-rep --csv) with LC_ALL=C, e.g. "
                      "LC_ALL=C ncu --csv --print-units base ...")


# ----------------------------------------------------------------------------------- value parsing

_NUM_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
#: English thousands separators: groups of exactly 3 digits before any decimal point
_ENGLISH_RE = r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$"
#: digits, dots and commas only, with a comma (decimal comma or English separators), or two decimal points
_COMMA_RE = r"^[+-]?[\d.]*,[\d.,]*$"
_TWO_DOTS_RE = r"^[+-]?\d+\.\d+\.\d"
_EURO_INT_RE = r"^\d{1,3}(\.\d{3})+$"
_INTEGRAL_UNITS = {"byte", "inst", "nsecond", "ns", "sector", "request"}
_EURO_SAMPLE = 20_000


def _to_float(values: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Strings → float64: thousands separators stripped; anything but a finite number ≥ 0 → NaN."""
    clean = pc.replace_substring(values, ",", "")
    try:
        out = pc.cast(clean, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        ok = pc.match_substring_regex(clean, _NUM_RE)
        out = pc.cast(pc.if_else(ok, clean, pa.scalar(None, pa.string())), pa.float64())
    arr = out.to_numpy(zero_copy_only=False) if isinstance(out, pa.Array) else _chunked_numpy(out, np.float64)
    arr = np.asarray(arr, dtype=np.float64)
    arr[~(np.isfinite(arr) & (arr >= 0))] = np.nan  # counters, bytes and times are never negative
    return arr


def _chunked_numpy(col: pa.ChunkedArray, dtype) -> np.ndarray:
    if col.num_chunks == 0:
        return np.empty(0, dtype=dtype)
    return np.concatenate([c.to_numpy(zero_copy_only=False) for c in col.chunks]).astype(dtype, copy=False)


def _check_locale(values: pa.ChunkedArray | pa.Array, integral: np.ndarray | bool, source: str) -> None:
    """Refuse decimal-comma exports (FORMATS §0.4). The locale is file-wide, so a sample of values suffices.

    ``integral`` marks values whose unit is integral in an English export (bytes, instructions, ns), where
    ``65.536`` can only be a European 65,536.
    """
    sample = values.slice(0, _EURO_SAMPLE)
    comma = pc.and_(pc.match_substring_regex(sample, _COMMA_RE), pc.invert(pc.match_substring_regex(sample, _ENGLISH_RE)))
    dots = pc.match_substring_regex(sample, _TWO_DOTS_RE)
    flags = np.asarray(integral, dtype=bool)
    mask = np.full(len(sample), bool(flags)) if flags.ndim == 0 else flags[: len(sample)]
    if mask.any():
        dots = pc.or_(dots, pc.and_(pa.array(mask), pc.match_substring_regex(sample, _EURO_INT_RE)))
    for hit in (comma, dots):  # prefer a decimal comma as the example
        idx = pc.index(hit, True).as_py()
        if idx is not None and idx >= 0:
            raise _locale_error(source, sample[idx].as_py())


def _ids(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, bool]:
    """Launch ids → float64 (NaN where the cell is not a whole number), and whether all were."""
    try:
        return np.asarray(_as_numpy(pc.cast(col, pa.int64())), dtype=np.float64), True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        col = pc.replace_substring(col, ",", "")  # "1,024" if the id was printed with a thousands separator
        ok = pc.match_substring_regex(col, r"^\d{1,15}$")
        return np.asarray(_as_numpy(pc.cast(pc.if_else(ok, col, pa.scalar(None, pa.string())), pa.float64())),
                          dtype=np.float64), False


def _as_numpy(a: pa.ChunkedArray | pa.Array) -> np.ndarray:
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks() if a.num_chunks != 1 else a.chunk(0)
    return a.to_numpy(zero_copy_only=False)


def _codes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """Dictionary-encoded strings → (int codes, distinct values)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    return (col.indices.to_numpy(zero_copy_only=False), [str(x) for x in col.dictionary.to_pylist()])


# ------------------------------------------------------------------------------------------- reading

DICT = pa.dictionary(pa.int32(), pa.string())
STRING = pa.string()
_BLOCK_SIZE = 4 << 20  #: pyarrow's parallel unit
_PIECE_SIZE = 16 << 20  #: bytes read per read_csv call (bounds pyarrow's memory to a few pieces' worth)


def _arrow_read(data: bytes, start: int, end: int, names: list[str], include: list[str], dict_cols: set[str],
                skip_rows: int, id_type: pa.DataType = STRING, parse: pcsv.ParseOptions | None = None) -> pa.Table:
    """pyarrow's CSV reader on ``data[start:end]``: only the ``include`` columns, repeated strings
    dictionary-encoded.

    Read in pieces of ~16 MB cut at line ends (values hold no newlines): one ``read_csv`` over a whole
    136 MB export holds about the file's size in parsed blocks, pieces keep pyarrow near 50 MB, and both are
    faster than the streaming reader. UTF-8 is checked once on the result (the distinct strings of the
    dictionary columns, the values), not cell by cell while reading.
    """
    types = {c: id_type if c == "ID" else DICT if c in dict_cols else STRING for c in include}
    for _ in range(skip_rows):
        nl = data.find(b"\n", start, end)
        start = end if nl < 0 else nl + 1
    buf = pa.py_buffer(data)
    # an invalid-row handler is called in file order only when one thread reads
    ro = pcsv.ReadOptions(column_names=names, use_threads=parse is None, block_size=_BLOCK_SIZE)
    co = pcsv.ConvertOptions(include_columns=include, check_utf8=False, column_types=types)
    tables = []
    while start < end:
        limits.tick()
        stop = min(end, start + _PIECE_SIZE)
        if stop < end:
            nl = data.find(b"\n", stop, end)
            stop = end if nl < 0 else nl + 1
        tables.append(pcsv.read_csv(pa.BufferReader(buf.slice(start, stop - start)), read_options=ro,
                                    parse_options=parse, convert_options=co))
        start = stop
    if not tables:
        return pa.table({c: pa.array([], type=t) for c, t in types.items()})
    table = pa.concat_tables(tables)
    table.validate(full=True)  # ArrowInvalid on bad UTF-8: the line reader then decodes with replacement
    return table


def _python_read(block: bytes, names: list[str], include: list[str], dict_cols: set[str], skip_rows: int,
                 first_line: int, source: str) -> tuple[pa.Table, np.ndarray, list[Skipped]]:
    """The robust reader: the csv module line by line. Noise lines are dropped, a repeated header switches the
    columns (several tables in one output), ragged rows are skipped with a reason."""
    text = block.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    raw_page = skip_rows == 2

    required = include if raw_page else [c for c in include if c in _REQUIRED]

    def layout(cols: list[str]) -> tuple[list[int], int, int]:
        """Column positions, the header's width, and the fields a row needs: on a details page the trailing
        rule columns may be absent from metric rows (FORMATS §11)."""
        idx = [cols.index(c) if c in cols else -1 for c in include]
        need = max([cols.index(c) for c in required if c in cols] or [0]) + 1
        return idx, len(cols), need

    idx, width, need = layout(names)
    out: list[list[str]] = [[] for _ in include]
    line_no: list[int] = []
    skipped: list[Skipped] = []
    units_next = False
    for i, line in enumerate(lines[skip_rows:], start=first_line + skip_rows):
        if not i & 0xFFF:
            limits.tick()
        if not line.startswith('"'):
            continue  # application stdout or ==PROF== lines
        try:
            fields = next(csv.reader((line,)))
        except (csv.Error, StopIteration):
            skipped.append(skip(source, f"line {i}", "not a CSV row"))
            continue
        if _HEADER_RE.match(line):
            idx, width, need = layout(fields)
            units_next = raw_page
            continue
        if units_next and fields and not fields[0].strip():
            units_next = False
            continue  # the raw page's units row under a repeated header
        units_next = False
        if len(fields) < need or (len(fields) > width and any(f.strip() for f in fields[width:])):
            skipped.append(skip(source, f"line {i}", f"expected {width} fields, found {len(fields)}"))
            continue
        n_fields = len(fields)
        for col, j in zip(out, idx, strict=True):
            col.append(fields[j] if 0 <= j < n_fields else "")  # a missing trailing field is empty
        line_no.append(i)
    arrays = [pa.array(c, type=pa.string()) for c in out]
    arrays = [a.dictionary_encode() if name in dict_cols else a for a, name in zip(arrays, include, strict=True)]
    return pa.table(arrays, names=include), np.asarray(line_no, dtype=np.int64), skipped


#: details-page columns a metric row must have; the rule columns after them may be missing
_REQUIRED = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")


def _required_width(names: list[str]) -> int:
    """Fields a details-page metric row needs: up to its last required column."""
    return max([names.index(c) for c in _REQUIRED if c in names] or [0]) + 1
_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowKeyError, pa.ArrowTypeError)


def _try_arrow(data: bytes, start: int, end: int, names: list[str], include: list[str], dict_cols: set[str],
               skip_rows: int) -> tuple[pa.Table, np.ndarray] | None:
    """pyarrow on the table, or None where it cannot read it as one table (ragged rows, noise, a header again)."""
    for id_type in (pa.int64(), STRING):  # integer ids parse fastest; text ids (stray rows) need strings
        try:
            table = _arrow_read(data, start, end, names, include, dict_cols, skip_rows, id_type)
        except _ARROW_ERRORS:
            continue
        ids, clean = _ids(table.column("ID"))
        if clean or not pc.any(pc.equal(table.column("ID"), "ID")).as_py():
            return table, ids
        return None
    return None


def _arrow_ragged(data: bytes, start: int, end: int, names: list[str], width: int, include: list[str],
                  dict_cols: set[str]) -> tuple[pa.Table, np.ndarray] | None:
    """pyarrow on a details page whose metric rows stop short of the header's trailing rule columns (FORMATS §11):
    read at the metric rows' ``width``, the longer rows (rule rows, a few per launch) handed over by pyarrow's
    invalid-row handler and read with the csv module. None where that does not fit (a row shorter still, a noise
    line, an ID that is not a number): the other readers take over."""
    longer: list[str] = []

    def handler(row: pcsv.InvalidRow) -> str:
        if row.actual_columns > row.expected_columns:
            longer.append(row.text)
            return "skip"
        return "error"

    short = names[:width]
    try:
        table = _arrow_read(data, start, end, short, [c for c in include if c in short], dict_cols, 1, pa.int64(),
                            pcsv.ParseOptions(invalid_row_handler=handler))
    except _ARROW_ERRORS:
        return None
    rows = list(csv.reader(longer))
    n = table.num_rows
    parts: dict[str, list[pa.Array]] = {}
    for c in include:
        j = names.index(c)
        cells = [r[j] if j < len(r) else "" for r in rows]
        head = table.column(c).combine_chunks() if c in short else pc.fill_null(pa.nulls(n, STRING), "")
        if c == "ID":
            try:
                tail = pa.array(cells, STRING).cast(pa.int64())
            except _ARROW_ERRORS:
                return None
        else:
            tail = pa.array(cells, STRING)
            if c in dict_cols:
                head = head if pa.types.is_dictionary(head.type) else head.dictionary_encode()
                tail = tail.dictionary_encode()
        parts[c] = [head, tail]
    out = pa.table({c: pa.chunked_array(v) for c, v in parts.items()})
    return out, _ids(out.column("ID"))[0]


def _line_starts(data: bytes, start: int, end: int) -> np.ndarray:
    """Offsets (in ``data``) of every line's first byte in ``data[start:end]``, vectorised in 16 MB chunks."""
    a = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
    step = 16 << 20
    parts = [np.flatnonzero(a[i: i + step] == 10) + (start + i + 1) for i in range(0, len(a), step)]
    starts = np.concatenate([np.full(1, start, dtype=np.int64), *parts])
    return starts[starts < end]


def _without_noise(data: bytes, start: int, end: int, skip_rows: int) -> tuple[bytes, np.ndarray] | None:
    """The table without noise lines (not starting with a quote) and repeats of its header (and units row),
    with each kept data row's line offset from the header; None if a different header follows."""
    starts = _line_starts(data, start, end)
    a = np.frombuffer(data, dtype=np.uint8)
    first = a[starts]
    drop = first != ord('"')
    drop[:skip_rows] = False
    nl = data.find(b"\n", start, end)
    header = data[start: nl if nl >= 0 else end].rstrip(b"\r")
    maybe = np.flatnonzero(~drop)
    maybe = maybe[(maybe >= skip_rows) & (starts[maybe] + 1 < end)]
    for i in maybe[a[starts[maybe] + 1] == ord("I")]:  # candidates for a repeated "ID",... header
        s = int(starts[i])
        if not data.startswith(_HEADER, s):
            continue
        e = data.find(b"\n", s, end)
        if data[s: e if e >= 0 else end].rstrip(b"\r") != header:
            return None
        drop[i] = True
        if skip_rows == 2 and i + 1 < len(starts) and data.startswith(b'"",', int(starts[i + 1])):
            drop[i + 1] = True  # the raw page's units row under the repeated header
    keep = ~drop
    ends = np.append(starts[1:], end)
    runs = np.flatnonzero(np.diff(np.concatenate(([0], keep.astype(np.int8), [0])))).reshape(-1, 2)
    view = memoryview(data)
    pieces = []
    for r0, r1 in runs:
        pieces.append(view[int(starts[r0]): int(ends[r1 - 1])])
        if data[int(ends[r1 - 1]) - 1: int(ends[r1 - 1])] != b"\n":
            pieces.append(b"\n")
    return b"".join(pieces), np.flatnonzero(keep)[skip_rows:]


def _read_block(data: bytes, block: tuple[int, int, int], names: list[str], include: list[str], dict_cols: set[str],
                skip_rows: int, source: str, width: int | None = None
                ) -> tuple[pa.Table, np.ndarray, np.ndarray, list[Skipped]]:
    """``(table, launch ids, line numbers, skipped)``: pyarrow's reader on the table (at the metric rows' ``width``
    where they are shorter than the header); on the table without its noise lines and repeated headers when that
    fails; the csv-module reader where rows are ragged otherwise or a different header follows."""
    start, end, line = block
    got = _try_arrow(data, start, end, names, include, dict_cols, skip_rows)
    if got is None and width:
        got = _arrow_ragged(data, start, end, names, width, include, dict_cols)
    if got is not None:
        return got[0], got[1], np.arange(got[0].num_rows) + line + skip_rows, []
    cleaned = _without_noise(data, start, end, skip_rows)
    if cleaned is not None:
        got = _try_arrow(cleaned[0], 0, len(cleaned[0]), names, include, dict_cols, skip_rows)
        if got is None and width:
            got = _arrow_ragged(cleaned[0], 0, len(cleaned[0]), names, width, include, dict_cols)
        if got is not None and got[0].num_rows == len(cleaned[1]):
            return got[0], got[1], cleaned[1] + line, []
    del cleaned
    table, lines, skipped = _python_read(data[start:end], names, include, dict_cols, skip_rows, line, source)
    return table, _ids(table.column("ID"))[0], lines, skipped


def _split_header(line: bytes) -> list[str]:
    try:
        return next(csv.reader((line.decode("utf-8", errors="replace").rstrip("\r\n"),)))
    except (csv.Error, StopIteration):
        return []


def _table(data: bytes) -> tuple[int, int, int] | None:
    """``(start, end, line number)`` of the table: from the first header line to the last row (noise after it
    trimmed). Later headers (several tables in one output) are handled by the line reader."""
    pos = data.find(_HEADER)
    while pos >= 0 and not (pos == 0 or data[pos - 1] in b"\n\r" or (pos == 3 and data.startswith(b"\xef\xbb\xbf"))):
        pos = data.find(_HEADER, pos + 1)
    if pos < 0:
        return None
    return pos, _trim_tail(data, pos, len(data)), 1 + data.count(b"\n", 0, pos)


def _trim_tail(data: bytes, start: int, end: int, max_lines: int = 10_000) -> int:
    """End of a block without the noise lines after its table (``==PROF==``, application output)."""
    for _ in range(max_lines):
        while end > start and data[end - 1] in b"\n\r \t":
            end -= 1
        nl = data.rfind(b"\n", start, end)
        if nl < 0 or data[nl + 1:nl + 2] == b'"':
            return end
        end = nl
    return end


def _first_row(data: bytes, start: int, end: int, names: list[str], skip_rows: int) -> dict[str, str]:
    """The first data row of a block as a dict (device, CC and trailing-comma detection)."""
    pos = start
    for _ in range(skip_rows):
        nl = data.find(b"\n", pos, end)
        if nl < 0:
            return {}
        pos = nl + 1
    stop = min(end, pos + (1 << 20))
    nl = data.find(b"\n", pos, stop)
    fields = _split_header(data[pos: nl if nl >= 0 else stop])
    return {"__fields__": str(len(fields)), **dict(zip(names, fields, strict=False))}


# ------------------------------------------------------------------------------------------ launches


@dataclass
class _Launches:
    """Per-launch metrics read from the table, base units."""

    ids: np.ndarray  #: float64 launch ids
    names: np.ndarray  #: object kernel names
    metrics: dict[str, np.ndarray]  #: metric -> float64 per launch (NaN unknown)
    missing: dict[str, int] = field(default_factory=dict)  #: metric -> launches with an unusable value
    text: dict[str, str] = field(default_factory=dict)  #: text metrics (device name)
    other: list[str] = field(default_factory=list)  #: metric names present but not used (for messages)
    bad_units: dict[str, str] = field(default_factory=dict)  #: metric -> unit that does not fit
    rules: list[str] = field(default_factory=list)
    duplicates: int = 0
    first: dict[str, str] = field(default_factory=dict)
    groups: np.ndarray | None = None  #: object NVTX range per launch (None where the launch is in none)


def _factor_for(metric: str, unit: str) -> float:
    """Scale to base units, or NaN where the unit does not fit the metric's dimension."""
    dim = WANTED.get(metric, "count")
    found = unit_factor(unit)
    if found is None or found[0] != dim:
        return np.nan
    return found[1]


def _scale(values: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """``values × factor``, dividing by ``1/factor`` for sub-units so that 7,488 ns is exactly 7.488e-6 s."""
    out = values * factor
    small = np.flatnonzero(factor < 1)
    if len(small):
        out[small] = values[small] / np.round(1.0 / factor[small])
    return out


def _wanted(name: str) -> bool:
    return name in WANTED or bool(_TENSOR_OPS.match(name)) or name in _TEXT


_LABEL_NAME = re.compile(r"^.+?\s[(\[]([a-z0-9]+__[\w.]+)[)\]]$")


def _canonical(name: str) -> str:
    """The current name of a metric: 2019.x names (``gpu__time_duration``, ``..._pred_on_sum``) renamed, and the
    metric inside a ``--print-metric-name label-name`` cell (``Duration (gpu__time_duration.sum)``)."""
    m = _LABEL_NAME.match(name)
    if m:
        name = m.group(1)
    if name in LEGACY:
        return LEGACY[name]
    m = _ROLLUP.match(name)
    if m and "." not in name:
        new = f"{m.group(1)}.{m.group(2)}"
        return new if _wanted(new) else name
    return name


def _metric_keys(m_names: list[str], u_names: list[str]) -> np.ndarray:
    """``keys[metric code, unit code]``: the metric a (name, unit) pair gives, or "" where it is not used.

    Metric names are renamed to their current names; a details-page label counts only with a unit of the
    dimension it is read for (``Memory Throughput`` in byte/s is DRAM bandwidth, in % it is not used)."""
    keys = np.full((max(len(m_names), 1), max(len(u_names), 1)), "", dtype=object)
    dims = [(unit_factor(u) or ("?", 1.0))[0] for u in u_names]
    for i, m in enumerate(m_names):
        if m in LABELS:
            for j, d in enumerate(dims):
                keys[i, j] = LABELS[m].get(d, "")
        else:
            c = _canonical(m)
            if _wanted(c):
                keys[i, :] = c
    return keys


def _details(data: bytes, block: tuple[int, int, int], names: list[str], source: str,
             skipped: list[Skipped]) -> _Launches:
    """Pivot the long table: launches from the ``ID`` runs, metrics scattered into a launch × metric matrix."""
    start, end, _ = block
    first = _first_row(data, start, end, names, 1)
    if first and int(first["__fields__"]) > len(names):  # trailing comma on data rows
        names = names + [f"__extra{i}" for i in range(int(first["__fields__"]) - len(names))]
    rule_cols = [c for c in ("Rule Name", "Rule Type", "Rule Description") if c in names]
    nvtx_cols = _nvtx_columns(names)
    include = ["ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value", *rule_cols, *nvtx_cols]
    dict_cols = {"Kernel Name", "Metric Name", "Metric Unit", *rule_cols, *nvtx_cols}
    fields = int(first.get("__fields__", 0) or 0)
    width = fields if _required_width(names) <= fields < len(names) else None  # metric rows without rule columns
    table, ids, lines, bad = _read_block(data, block, names, include, dict_cols, 1, source, width)
    skipped.extend(bad)
    m_codes, m_names = _codes(table.column("Metric Name"))
    is_metric = np.array([bool(m.strip()) for m in m_names] or [False], dtype=bool)[m_codes]
    rules = _rules(table, rule_cols, ~is_metric) if "Rule Name" in rule_cols else []
    ok_id = ~np.isnan(ids)
    for i in np.flatnonzero(is_metric & ~ok_id)[:1000]:
        skipped.append(skip(source, f"line {lines[i]}", "ID is not a launch number"))
    keep = is_metric & ok_id
    if not keep.any():
        if rules:
            raise _rule_only(source, rules)
        return _Launches(ids=np.empty(0), names=np.empty(0, dtype=object), metrics={}, rules=rules, first=first)
    k_codes, k_names = _codes(table.column("Kernel Name"))
    u_codes, u_names = _codes(table.column("Metric Unit"))
    values = table.column("Metric Value")
    if not keep.all():
        sel = np.flatnonzero(keep)
        ids, k_codes, m_codes, u_codes = ids[sel], k_codes[sel], m_codes[sel], u_codes[sel]
        values = values.take(pa.array(sel))
    integral = np.array([u in _INTEGRAL_UNITS for u in u_names] or [False], dtype=bool)
    _check_locale(values, integral[u_codes[:_EURO_SAMPLE]], source)

    # launches: ncu writes each launch's rows together, ids ascending; sort otherwise
    if len(ids) < 2 or (ids[1:] >= ids[:-1]).all():
        change = np.ones(len(ids), dtype=bool)
        np.not_equal(ids[1:], ids[:-1], out=change[1:])
        launch = np.cumsum(change) - 1
        starts = np.flatnonzero(change)
    else:
        _, starts, launch = np.unique(ids, return_index=True, return_inverse=True)
    n_launch = len(starts)

    keys = _metric_keys(m_names, u_names)  # (metric, unit) -> metric read, "" = not used
    used = sorted({k for k in keys.ravel() if k})
    n_slot = max(len(used), 1)
    slot_of_key = {k: i for i, k in enumerate(used)}
    pair_slot = np.vectorize(lambda k: slot_of_key.get(k, -1), otypes=[np.int64])(keys)
    factor = np.array([[_factor_for(k, u) for u in u_names] or [np.nan] for k in used] or [[np.nan]])
    slot = pair_slot[m_codes, u_codes]
    numeric = np.array([k not in _TEXT for k in used] + [False], dtype=bool)  # [-1]: not used
    sel = numeric[slot]
    slot_s, unit_s = slot[sel], u_codes[sel]
    vals_s = _to_float(values if sel.all() else values.filter(pa.array(sel)))  # only the metrics used
    scaled = _scale(vals_s, factor[slot_s, unit_s])
    flat = launch[sel] * n_slot + slot_s
    mat = np.full(n_launch * n_slot, np.nan)
    mat[flat] = scaled
    mat = mat.reshape(n_launch, n_slot)
    per_cell = np.bincount(flat, minlength=n_launch * n_slot).reshape(n_launch, n_slot)
    missing_rows = np.bincount(slot_s[np.isnan(scaled)], minlength=n_slot)

    metrics: dict[str, np.ndarray] = {}
    missing: dict[str, int] = {}
    bad_units: dict[str, str] = {}
    text: dict[str, str] = {}
    for s, name in enumerate(used):
        if name in _TEXT:
            rows = np.flatnonzero(slot == s)
            if len(rows):
                text[name] = str(values[int(rows[0])].as_py() or "")
            continue
        metrics[name] = mat[:, s]
        if missing_rows[s]:
            missing[name] = int(((per_cell[:, s] > 0) & np.isnan(mat[:, s])).sum())
            units_seen = {u_names[int(u)] for u in np.unique(unit_s[slot_s == s])}
            wrong = sorted(u for u in units_seen if np.isnan(_factor_for(name, u)))
            if wrong:
                bad_units[name] = wrong[0]
    other = [m for i, m in enumerate(m_names) if not any(keys[i]) and m.strip()]
    kernel = np.asarray(k_names, dtype=object)[k_codes[starts]]
    groups = _nvtx_groups(table, nvtx_cols, np.flatnonzero(keep)[starts] if not keep.all() else starts)
    return _Launches(ids=ids[starts], names=kernel, metrics=metrics, missing=missing, text=text, other=other,
                     bad_units=bad_units, rules=rules, duplicates=int((per_cell > 1).any()), first=first,
                     groups=groups)


# ------------------------------------------------------------------------------------------ NVTX

_QUOTED = re.compile(r'"([^"]*)"')


def _nvtx_columns(names: list[str]) -> list[str]:
    """``--nvtx`` columns: ``thread Domain:Push/Pop_Range:...`` and ``Id:Domain:Start/Stop_Range:...``."""
    return [c for c in names if any(f.endswith("_Range") for f in c.split(":")[1:])]


def nvtx_range(header: str, cell: str) -> str | None:
    """The range names in one NVTX cell, outermost first, joined with "/" (None when the launch is in none).

    A cell is ``<thread>  "<domain>:<range>:<PL_Type>:...:<Msg>"  "..."`` (push/pop, nested ranges each
    quoted) or ``"<id>:<domain>:<range>:..."`` (start/stop), laid out as the column header says; a range name
    may itself hold ":", so it is everything between the fields before and after it."""
    fields = header.split(":")
    at = next((i for i, f in enumerate(fields) if f.endswith("_Range")), None)
    text = cell.strip()
    if at is None or not text:
        return None
    ranges = _QUOTED.findall(text) or [re.sub(r"^\d+\s+", "", text)]
    out = []
    for r in ranges:
        parts = r.strip().split(":")
        if len(parts) >= len(fields):
            name = ":".join(parts[at: len(parts) - (len(fields) - at - 1)])
        else:
            name = parts[at] if len(parts) > at else r
        if name.strip():
            out.append(name.strip())
    return "/".join(out) or None


def _nvtx_groups(table: pa.Table, cols: list[str], rows: np.ndarray) -> np.ndarray | None:
    """Per launch (the given table rows), the push/pop range path, else the start/stop ranges; None if no column."""
    if not cols or not len(rows):
        return None
    out = np.full(len(rows), None, dtype=object)
    for c in sorted(cols, key=lambda c: "Start/Stop" in c):  # push/pop first
        codes, values = _codes(table.column(c))
        parsed = np.array([nvtx_range(c, v) for v in values] or [None], dtype=object)[codes[rows]]
        out = np.where(pd.isna(out), parsed, out)
    return out


def _rules(table: pa.Table, rule_cols: list[str], candidates: np.ndarray) -> list[str]:
    """Rule rows (empty metric, a rule name): ``"Name (Type): description"``, distinct, descriptions shortened."""
    r_codes, r_names = _codes(table.column("Rule Name"))
    has_rule = np.array([bool(r.strip()) for r in r_names] or [False], dtype=bool)[r_codes] & candidates
    out: list[str] = []
    if not has_rule.any():
        return out
    kind = _codes(table.column("Rule Type")) if "Rule Type" in rule_cols else None
    desc = _codes(table.column("Rule Description")) if "Rule Description" in rule_cols else None
    for i in np.flatnonzero(has_rule)[:200]:
        k = kind[1][kind[0][i]] if kind else ""
        d = " ".join(desc[1][desc[0][i]].split())[:160] if desc else ""
        out.append(f"{r_names[r_codes[i]]} ({k}): {d}")
    return list(dict.fromkeys(out))


_IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
             "Block Size", "Grid Size", "Device", "CC")


def _raw(data: bytes, block: tuple[int, int, int], names: list[str], source: str,
         skipped: list[Skipped]) -> _Launches:
    start, end, _ = block
    second = _first_row(data, start, end, names, 1)
    has_units = bool(second) and second.get("ID", "x") == "" and second.get("Kernel Name", "x") == ""
    units = {k: v for k, v in second.items() if k != "__fields__"} if has_units else {}
    skip_rows = 2 if has_units else 1
    first = _first_row(data, start, end, names, skip_rows)
    if first and int(first["__fields__"]) > len(names):
        names = names + [f"__extra{i}" for i in range(int(first["__fields__"]) - len(names))]
    seen_names: set[str] = set()
    key_of: dict[str, str] = {}  # column -> the metric it gives (2019.x names renamed); the first column wins
    for c in names:
        key = _canonical(c)
        if c not in seen_names and c not in _IDENTITY and _wanted(key) and key not in key_of.values():
            key_of[c] = key
        seen_names.add(c)
    metric_cols = list(key_of)
    nvtx_cols = _nvtx_columns(names)
    include = ["ID", "Kernel Name", *metric_cols, *nvtx_cols]
    table, ids, lines, bad = _read_block(data, block, names, include, {"Kernel Name", *nvtx_cols}, skip_rows,
                                         source)
    skipped.extend(bad)
    n = table.num_rows
    for i in np.flatnonzero(np.isnan(ids))[:1000]:
        skipped.append(skip(source, f"line {lines[i]}", "ID is not a launch number"))
    keep = np.flatnonzero(~np.isnan(ids))
    if len(keep) < n:
        table = table.take(pa.array(keep))
        ids = ids[keep]
    k_codes, k_names = _codes(table.column("Kernel Name"))
    metrics: dict[str, np.ndarray] = {}
    missing: dict[str, int] = {}
    bad_units: dict[str, str] = {}
    text: dict[str, str] = {}
    for c, key in key_of.items():
        col = table.column(c)
        if key in _TEXT:
            if len(col):
                text[key] = str(col[0].as_py() or "")
            continue
        unit = units.get(c, "")
        _check_locale(col, unit in _INTEGRAL_UNITS, source)
        f = _factor_for(key, unit) if has_units else 1.0  # no units row: base units assumed
        vals = _scale(_to_float(col), np.full(len(col), f))
        metrics[key] = vals
        if np.isnan(vals).any():
            missing[key] = int(np.isnan(vals).sum())
            if np.isnan(f):
                bad_units[key] = unit
    other = [c for c in names if c not in _IDENTITY and c not in key_of and c not in nvtx_cols
             and not c.startswith("__extra")]
    names_out = np.asarray(k_names, dtype=object)[k_codes] if k_names else np.empty(0, dtype=object)
    return _Launches(ids=ids, names=names_out, metrics=metrics, missing=missing, text=text, other=other,
                     bad_units=bad_units, first=first, groups=_nvtx_groups(table, nvtx_cols, np.arange(len(ids))))


# ------------------------------------------------------------------------------------------ deriving


#: bytes column -> rate metrics (byte/s) whose product with the duration gives its bytes
_RATES = {"bytes_hbm": (("dram__bytes.sum.per_second",), ("dram__bytes_read.sum.per_second",
                                                           "dram__bytes_write.sum.per_second")),
          "bytes_l2": (("lts__t_bytes.sum.per_second",),), "bytes_l1": (("l1tex__t_bytes.sum.per_second",),)}
_LEVEL_WORDS = {"bytes_hbm": "DRAM bytes", "bytes_l2": "L2 bytes", "bytes_l1": "L1 bytes"}


def _chain(m: dict[str, np.ndarray], *alternatives: tuple[str, ...]) -> np.ndarray | None:
    """Per launch, the first alternative whose metrics are all known (each alternative is summed)."""
    out = None
    for alt in alternatives:
        if not all(a in m for a in alt):
            continue
        v = m[alt[0]].copy()
        for a in alt[1:]:
            v = v + m[a]
        out = v if out is None else np.where(np.isnan(out), v, out)
    return out


def _tensor_precision(family: str) -> str | None:
    """Input precision named in an ``sm__ops_path_tensor_*`` counter (``src_bf16_dst_fp32`` → bf16)."""
    m = re.search(r"src_([a-z0-9_]+?)(_dst|$)", family)
    src = m.group(1) if m else family
    for key, prec in (("fp4_fp6_fp8", "fp8"), ("bf16", "bf16"), ("tf32", "tf32"), ("fp16", "fp16"), ("fp64", "fp64"),
                      ("fp8", "fp8"), ("e4m3", "fp8"), ("e5m2", "fp8"), ("int8", "int8"), ("s8", "int8"),
                      ("u8", "int8"), ("int4", "int4"), ("s4", "int4"), ("fp4", "fp4"), ("fp32", "tf32")):
        if key in src:
            return prec
    return None


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else ("es" if word.endswith("ch") else "s"))


_PCT_NOTE = " (DRAM throughput only as a % of peak, which is not bytes)"


def _pct_only(other: list[str]) -> bool:
    """Whether the export gives DRAM throughput only as a percentage of the device's peak."""
    return any(re.search(r"dram_throughput|dram__throughput|^DRAM Throughput$", o) for o in other)


def _pipe_tensor(pipe: np.ndarray, names: np.ndarray, cc: str | None, device: str | None
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Tensor FLOPs from warp-level tensor instructions × FLOP per instruction (:mod:`.ncu_tensor`): per launch
    FLOPs (NaN where the factor is unknown), input precision (None: not stated) and warnings."""
    codes, factors = ncu_tensor.per_launch(names, cc, device)
    per = np.array([f.flops for f in factors] or [np.nan])[codes]
    with np.errstate(invalid="ignore"):
        tensor = np.where(pipe == 0, 0.0, pipe * per)  # no tensor instruction: no tensor FLOPs, whatever the factor
    prec = np.array([f.precision for f in factors] or [None], dtype=object)[codes]
    used = np.nan_to_num(pipe) > 0
    n_used = np.bincount(codes[used], minlength=len(factors))
    known: dict[tuple[float, str], int] = {}
    unknown: dict[str, int] = {}
    assumed = 0
    for f, k in zip(factors, n_used, strict=True):
        if not k:
            continue
        if np.isnan(f.flops):
            unknown[f.basis] = unknown.get(f.basis, 0) + int(k)
        else:
            known[(f.flops, f.basis)] = known.get((f.flops, f.basis), 0) + int(k)
        assumed += int(k) if f.precision is None else 0
    notes = []
    exact = "collect sm__ops_path_tensor_* counters (e.g. sm__ops_path_tensor_src_fp16_dst_fp32.sum) for exact tensor FLOPs"
    if known:
        parts = "; ".join(f"× {fl:,.0f} ({basis}) for {_plural(k, 'launch')}" for (fl, basis), k in known.items())
        notes.append("tensor-core FLOPs = sm__inst_executed_pipe_tensor.sum × the FLOPs of one MMA instruction "
                     f"(2·M·N·K for shape M×N×K): {parts}; {exact}.")
    if unknown:
        parts = "; ".join(f"{basis} ({_plural(k, 'launch')})" if len(unknown) > 1 else basis
                          for basis, k in unknown.items())
        notes.append(f"tensor-core FLOPs unknown for {_plural(sum(unknown.values()), 'launch')}: {parts}; {exact}.")
    if assumed:
        notes.append(f"{_plural(assumed, 'launch')} with tensor instructions: the kernel name states no input "
                     "precision; fp16 assumed.")
    return tensor, prec, notes


def _derive(la: _Launches, source: str, cc_text: str | None = None, device: str | None = None
            ) -> tuple[dict[str, object], list[str], dict[str, str]]:
    """Per-launch FLOPs, precision, unit, bytes and time (FORMATS §3.6a), with warnings.

    ``cc_text`` and ``device`` (compute capability and device name from the export) pick the FLOPs of one
    tensor instruction where the kernel name does not say."""
    m = la.metrics
    n = len(la.ids)
    warnings: list[str] = []
    meta: dict[str, str] = {}

    # CUDA-core FLOPs: sm__ counters, smsp__ per launch where the sm__ one is unknown
    ops: dict[str, np.ndarray] = {}
    for op in OPS:
        v = _chain(m, (f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum",),
                   (f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum",))
        if v is not None:
            ops[op] = v
    by_prec: dict[str, np.ndarray] = {}
    for p, prec in (("d", "fp64"), ("f", "fp32"), ("h", "fp16")):
        parts = [(2.0 if op.endswith("fma") else 1.0) * ops[op] for op in (f"{p}add", f"{p}mul", f"{p}fma") if op in ops]
        if parts:
            by_prec[prec] = np.sum(parts, axis=0)
    cuda = np.sum(list(by_prec.values()), axis=0) if by_prec else None
    absent = [op for op in OPS if op not in ops]
    if ops and absent:
        warnings.append(f"CUDA-core FLOPs leave out {', '.join(absent)}: their sm__sass_thread_inst_executed_op_"
                        "*_pred_on.sum counters are not in the export.")

    # tensor FLOPs: op counters (already FLOPs), else pipe instructions × FLOPs per instruction
    families: dict[str, dict[str, np.ndarray]] = {}
    for name, v in m.items():
        t = _TENSOR_OPS.match(name)
        if t:
            fam = families.setdefault(t.group(2), {})
            key = (t.group(4) or "all") + ("" if t.group(1) == "sm" else "_smsp")
            fam[key] = v
    tensor = None
    tensor_prec = None
    tensor_used = np.zeros(n, dtype=bool)  # launches known to have run tensor-core work (FLOPs known or not)
    if families:
        fam_vals = {}
        for fam, parts_ in families.items():
            v = parts_.get("all", parts_.get("all_smsp"))
            if v is None:
                on = parts_.get("on", parts_.get("on_smsp"))
                off = parts_.get("off", parts_.get("off_smsp"))
                v = off if on is None else (on if off is None else on + off)
                if on is not None and np.nansum(on) > 0:
                    warnings.append(f"2:4-sparse tensor ops counted as executed (sm__ops_path_tensor_{fam}_sparsity_on): "
                                    "compare them with dense roofs with care.")
            fam_vals[fam] = v
        stack = np.vstack(list(fam_vals.values()))
        tensor = stack.sum(axis=0)
        precs = np.array([_tensor_precision(f) for f in fam_vals], dtype=object)
        dominant = np.nan_to_num(stack, nan=-1.0).argmax(axis=0)
        tensor_prec = precs[dominant]
        tensor_used = np.nan_to_num(tensor) > 0
    else:
        pipe = _chain(m, ("sm__inst_executed_pipe_tensor.sum",), ("smsp__inst_executed_pipe_tensor.sum",))
        if pipe is not None:
            tensor, tensor_prec, notes = _pipe_tensor(pipe, la.names, cc_text, device)
            tensor_used = np.nan_to_num(pipe) > 0
            warnings.extend(notes)
        elif cuda is not None:
            warnings.append("no tensor-core counter (sm__inst_executed_pipe_tensor.sum or sm__ops_path_tensor_*): "
                            "FLOPs count CUDA cores only.")

    if cuda is None and tensor is None:
        flops = np.full(n, np.nan)
    elif tensor is None:
        flops = cuda
    elif cuda is None:
        # tensor FLOPs alone: the total for a launch that used tensor cores (its CUDA-core FLOPs, left out, are
        # small beside them), unknown for one that did not (zero would claim it did no work)
        flops = np.where(np.nan_to_num(tensor) > 0, tensor, np.nan)
        only = int((np.nan_to_num(tensor) > 0).sum())
        warnings.append(f"no CUDA-core FLOP counters (sm__sass_thread_inst_executed_op_*): FLOPs are tensor-core "
                        f"FLOPs alone ({_plural(only, 'launch')}), unknown for the other {n - only:,}; add them with "
                        f"--metrics {FLOP_METRICS}.")
    else:
        flops = cuda + tensor
    # precision and unit
    precision = np.full(n, None, dtype=object)
    unit = np.full(n, None, dtype=object)
    cc0 = np.nan_to_num(cuda) if cuda is not None else np.zeros(n)
    tc0 = np.nan_to_num(tensor) if tensor is not None else np.zeros(n)
    unknown_tc = tensor_used & np.isnan(tensor) if tensor is not None else np.zeros(n, dtype=bool)
    if by_prec:
        names_p = np.array(list(by_prec), dtype=object)
        stack = np.nan_to_num(np.vstack(list(by_prec.values())), nan=-1.0)
        vec = (cc0 > 0) & (cc0 >= tc0) & ~unknown_tc
        precision[vec] = names_p[stack.argmax(axis=0)][vec]
        unit[vec] = "vector"
    if tensor is not None:
        mat = tensor_used & ((tc0 > cc0) | unknown_tc)  # unknown tensor FLOPs: still tensor-core work
        prec_t = np.where(pd.isna(tensor_prec), "fp16", tensor_prec) if tensor_prec is not None else "fp16"
        precision[mat] = np.broadcast_to(prec_t, (n,))[mat]
        unit[mat] = "matrix"
        unknown_t = mat & pd.isna(tensor_prec) if families else np.zeros(n, dtype=bool)
        if unknown_t.any():
            warnings.append(f"{_plural(int(unknown_t.sum()), 'launch')}: tensor-op counter names give no input precision; "
                            "fp16 assumed.")

    # time
    time_s = None
    for alt in (("gpu__time_duration.sum",), ("sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"),
                ("smsp__cycles_elapsed.avg", "smsp__cycles_elapsed.avg.per_second"),
                ("sm__cycles_elapsed.avg", "gpc__cycles_elapsed.avg.per_second"), ("Duration",)):
        if not all(a in m for a in alt):
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            v = m[alt[0]] / m[alt[1]] if len(alt) == 2 else m[alt[0]]
        v = np.where(np.isfinite(v), v, np.nan)
        time_s = v if time_s is None else np.where(np.isnan(time_s), v, time_s)
    if time_s is None:
        time_s = np.full(n, np.nan)

    # bytes: counters, else rate × duration (the details page prints DRAM traffic only as a rate)
    cols: dict[str, object] = {}
    hbm = _chain(m, ("dram__bytes.sum",), ("dram__bytes_read.sum", "dram__bytes_write.sum"),
                 ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum"))
    if hbm is None:
        half = _chain(m, ("dram__bytes_read.sum",), ("dram__bytes_op_read.sum",), ("dram__bytes_write.sum",),
                      ("dram__bytes_op_write.sum",))
        if half is not None:
            hbm = half
            warnings.append("DRAM bytes are reads or writes only (the other direction is not in the export).")
    found = {"bytes_hbm": hbm, "bytes_l2": m.get("lts__t_bytes.sum"), "bytes_l1": m.get("l1tex__t_bytes.sum")}
    derived = []
    for col, alts in _RATES.items():
        rate = _chain(m, *alts)
        if rate is None:
            continue
        v = rate * time_s
        fill = np.isfinite(v) & (np.isnan(found[col]) if found[col] is not None else True)
        if fill.any():
            found[col] = np.where(fill, v, np.nan if found[col] is None else found[col])
            derived.append(f"{_LEVEL_WORDS[col]} of {_plural(int(fill.sum()), 'launch')}")
    if derived:
        warnings.append(f"derived figures: {', '.join(derived)} = throughput (byte/s: dram__bytes.sum.per_second, "
                        "the details page's \"Memory Throughput\") × duration, rounded as the export rounds them; "
                        "collect dram__bytes.sum (lts__t_bytes.sum, l1tex__t_bytes.sum) for counted bytes.")
    hbm = found["bytes_hbm"]
    cols["bytes_hbm"] = hbm if hbm is not None else np.full(n, np.nan)
    for col in ("bytes_l2", "bytes_l1"):
        if found[col] is not None:
            cols[col] = found[col]

    has_flops = cuda is not None or tensor is not None
    has_bytes = hbm is not None or "bytes_l2" in cols or "bytes_l1" in cols
    has_time = not np.isnan(time_s).all()
    if not (has_flops or has_bytes or has_time):
        found_other = la.other[:3]
        more = f"e.g. {', '.join(found_other)}" if found_other else "none"
        raise InputError(where=source, text=f"no duration, FLOP or byte metric for a roofline in this export "
                         f"({len(la.other)} other metrics, {more}).", hint=f"profile with: {PROFILE_COMMAND}")
    if not has_flops and not has_bytes:
        meta["time_only"] = "true"
        warnings.append(f"no FLOP or byte counters in this export{_PCT_NOTE if _pct_only(la.other) else ''}: only "
                        "launch times are read (time only; join it with an inventory, or profile with: "
                        f"{PROFILE_COMMAND}).")
    else:
        if not has_flops:
            why = " (a roofline section prints no numbers on the details page)" if la.rules else ""
            if ncu_tensor.family(cc_text) == "none":  # no tensor cores; nvprof also profiles these GPUs
                what = (f"{FLOP_METRICS} (on this pre-Volta GPU, CC {cc_text}, nvprof --metrics flop_count_sp,"
                        "flop_count_dp,flop_count_hp counts them too)")
            else:
                what = f"{FLOP_METRICS},sm__inst_executed_pipe_tensor.sum"
            warnings.append(f"no FLOP counters in this export{why}: FLOPs unknown; add --metrics {what}.")
        if hbm is None:
            warnings.append("no DRAM byte counter (dram__bytes.sum, or dram__bytes_read.sum + dram__bytes_write.sum)"
                            f"{_PCT_NOTE if _pct_only(la.other) else ''}: off-chip bytes unknown.")
        if not has_time:
            warnings.append("no duration (gpu__time_duration.sum or sm__cycles_elapsed.avg[.per_second]): measured "
                            "time unknown.")
    if la.missing:
        items = sorted(la.missing.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{k} ({_plural(v, 'launch')}" + (f", unit {la.bad_units[k]!r}" if k in la.bad_units
                                                                 else "") + ")" for k, v in items[:6])
        warnings.append(f"n/a, empty, negative, non-numeric or wrong-unit values read as unknown: {shown}"
                        + (f" and {len(items) - 6} more metrics" if len(items) > 6 else "") + ".")
    if la.duplicates:
        warnings.append("a metric appears more than once for one launch ID; the last value was used.")
    if n and hbm is not None:
        t_ok = np.where(np.isnan(time_s), np.inf, time_s)
        tiny = int(((t_ok < 1e-6) | (np.nan_to_num(hbm, nan=np.inf) < 1e6)).sum())
        if tiny:
            warnings.append(f"{tiny:,} of {n:,} launches ran under 1 µs or moved under 1 MB of DRAM traffic: ncu replays "
                            "them with flushed caches at base clocks, so their DRAM bytes and intensity are unreliable.")
    cols.update(flops=flops, time_s=time_s, precision=pd.Categorical(precision), unit=pd.Categorical(unit))
    return cols, warnings, meta


# ------------------------------------------------------------------------------------------ parsing


def _parse(data: bytes, source: str) -> Workload:
    check_binary(data, source)
    block = _table(data)
    if block is None:
        raise _failure(data[: 4 << 20].decode("utf-8", errors="replace"), source)
    start, end, line = block
    nl = data.find(b"\n", start, end)
    names = _split_header(data[start: nl if nl >= 0 else end])
    skipped: list[Skipped] = []
    details = "Metric Name" in names and "Metric Value" in names
    need = ("Kernel Name", "Metric Unit") if details else ("Kernel Name",)
    for col in need:
        if col not in names:
            raise InputError(where=f"{source}: line {line}", expected=f"column {col!r} in the ncu header", found="none",
                             hint="export again with ncu --csv (details page) or ncu --csv --page raw; columns are "
                             "read by name: ID, Kernel Name, Metric Name, Metric Unit, Metric Value.")
    la = (_details if details else _raw)(data, block, names, source, skipped)
    outside = data[:start] + b"\n" + data[max(end, len(data) - 65536):]
    notes = list(dict.fromkeys(ln[:200] for ln in re.findall(r"^==(?:ERROR|ERR|WARNING)==.*$",
                                                             outside.decode("utf-8", "replace"), re.M)))
    if len(la.ids) == 0:
        if la.rules:
            raise _rule_only(source, la.rules)
        raise InputError(where=source, expected="at least one launch row under the ncu header", found="a header only",
                         hint="the run measured no kernel: check the ncu output for ==WARNING== or ==ERROR== lines "
                         "and the --kernel-name / --launch-skip / --launch-count filters.")
    device = la.text.get("device__attribute_display_name") or None
    dev_col = la.first.get("Device", "").strip()
    if not device and dev_col and not dev_col.isdigit():
        device = dev_col
    cc = la.first.get("CC", "").strip()
    major, minor = (la.metrics.get(f"device__attribute_compute_capability_{k}") for k in ("major", "minor"))
    if not cc and major is not None and minor is not None and len(major) and np.isfinite([major[0], minor[0]]).all():
        cc = f"{int(major[0])}.{int(minor[0])}"  # 12-column exports have no CC column
    cc = cc if re.fullmatch(r"\d{1,2}\.\d", cc) else ""
    cols, warnings, meta = _derive(la, source, cc or None, device)
    n = len(la.ids)
    cols.update(name=la.names, source=np.full(n, source, dtype=object),
                row=la.ids.astype(np.int64).astype(str).astype(object), count=np.ones(n, dtype=np.int64))
    if la.groups is not None:
        cols["group"] = la.groups  # the NVTX range the launch ran in
    frame = make_frame(cols, n)
    meta.update(profiler="Nsight Compute", ncu_page="details" if details else "raw")
    if cc:
        major, minor = cc.split(".")
        meta["compute_capability"] = cc
        meta["arch"] = f"sm_{major}{minor}"
    if la.rules:
        meta["ncu_rules"] = "; ".join(la.rules)[:1000]
    warnings = [*(f"ncu reported: {x}" for x in notes[:3]), *warnings]
    return Workload(frame=frame, name=source, sources=(source,), formats=("ncu-details" if details else "ncu-raw",),
                    skipped=tuple(skipped[:1000]), warnings=tuple(warnings), device=device, meta=meta,
                    measured=_export_devices(data, source, device, cc or None))


def _export_devices(data: bytes, source: str, device: str | None, cc: str | None) -> tuple:
    """The device the export describes itself (its per-cycle peaks × clocks, a raw page's device attributes), as
    :func:`roofcore.ingest.ceilings.ncu_export_devices` builds it; reads only the first launch, and nothing past the
    header when the export carries none of those metrics."""
    from .ceilings import ncu_export_devices  # ceilings reads ncu's unit table: imported here, not at the top

    at = data.find(_HEADER)
    window = slice(at, at + (16 << 20)) if at >= 0 else slice(0, 0)
    if all(data.find(marker, window.start, window.stop) < 0 for marker in _SELF_ROOF_MARKERS):
        return ()  # most exports: no per-cycle peak or device attribute (a find is ~20x faster than a regex here)
    return tuple(ncu_export_devices(data, source, device, cc))


#: names (as quoted in the CSV) of the metrics an export describes its own device with
_SELF_ROOF_MARKERS = (b'.peak_sustained"', b'"device__attribute_clock_rate"')


@register_format("ncu-details", "Nsight Compute CSV, details page (ncu --csv): one row per launch × metric",
                 _sniff_details, priority=20)
def parse_details(data: bytes, source: str, context: dict | None = None) -> Workload:
    """Read an ``ncu --csv`` details export (or explain a failed run); one row per launch."""
    return _parse(data, source)


@register_format("ncu-raw", "Nsight Compute CSV, raw page (ncu --csv --page raw): one row per launch, units row",
                 _sniff_raw, priority=20)
def parse_raw(data: bytes, source: str, context: dict | None = None) -> Workload:
    """Read an ``ncu --csv --page raw`` export; one row per launch."""
    return _parse(data, source)
