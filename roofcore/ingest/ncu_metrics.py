"""Nsight Compute metric names: the ones read (current, 2019.x legacy, details-page labels) and the dimension
each unit must have, sniffing the two CSV pages, the messages for exports that hold no metrics, and the launches
table (:class:`_Launches`) that both pages are read into."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .columns import header_with
from .readers import unit_factor

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

#: per-cycle thread-instruction rates (NVIDIA's roofline sections, ``--section SpeedOfLight_RooflineChart`` and the
#: hierarchical ones; their details-page labels in :data:`LABELS`) -> (op, thread instructions per unit of value).
#: The sections' ``derived__…_x2`` / ``_x4`` metrics are a rate already multiplied by 2 or 4 (FMA = 2 FLOP, packed
#: half = 2 lanes): read back as instructions, so that FLOPs count as §3.6a counts them (an FMA 2, add/mul 1).
PER_CYCLE: dict[str, tuple[str, float]] = {
    **{f"{p}__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed": (op, 1.0)
       for p in ("sm", "smsp") for op in OPS},
    **{f"derived__{p}__sass_thread_inst_executed_op_{op}_pred_on_x{k}": (op, 1.0 / k)
       for p in ("sm", "smsp") for op in OPS for k in (2, 4)},
}

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
    **{m: "per_cycle" for m in PER_CYCLE},
}
#: details-page labels (``--print-metric-name label``, the default) -> {unit dimension: the metric shown}; a label
#: whose unit has another dimension (``Memory Throughput`` in %) is not used
LABELS: dict[str, dict[str, str]] = {
    "Duration": {"time": "Duration"},
    "Memory Throughput": {"bandwidth": "dram__bytes.sum.per_second"},  # Memory Workload Analysis, byte/s
    "DRAM Throughput": {"bandwidth": "dram__bytes.sum.per_second"},
    # the roofline sections' achieved values (``Body Item Label`` "Single Precision Achieved Value" …): the SM clock,
    # DRAM bandwidth and per-cycle rates. In the sections' bodies the FMA rates are "Operations Per Cycle" (the
    # derived ×2, ×4 for packed half), and the half add/mul rates keep the instruction label on a derived ×2
    # (SpeedOfLight_HierarchicalHalfRooflineChart.section); the others are plain instruction rates
    "SM Frequency": {"frequency": "smsp__cycles_elapsed.avg.per_second"},
    "DRAM Bandwidth": {"bandwidth": "dram__bytes.sum.per_second"},
    **{f"Predicated-On {op.upper()} Thread Instructions Executed Per Cycle": dict.fromkeys(
        ("per_cycle", "count"), f"derived__smsp__sass_thread_inst_executed_op_{op}_pred_on_x2" if op in ("hadd", "hmul")
        else f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed") for op in OPS},
    **{f"Predicated-On {op.upper()} Operations Per Cycle": dict.fromkeys(
        ("per_cycle", "count"), f"derived__smsp__sass_thread_inst_executed_op_{op}_pred_on_x{4 if op == 'hfma' else 2}")
       for op in ("dfma", "ffma", "hfma")},
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
TENSOR_OPS = re.compile(r"^(sm|smsp)__ops_path_tensor_(\w+?)(_sparsity_(on|off))?\.sum$")
TEXT = ("device__attribute_display_name",)  # text-valued metrics kept as text


# ------------------------------------------------------------------------------------------ sniffing

HEADER = b'"ID","Process ID",'
HEADER_RE = re.compile(r'^"ID","Process ID",(.*)$', re.M)
_NOISE_RE = re.compile(r"^==(PROF|ERROR|ERR|WARNING)==", re.M)


#: the header as another program may write it back: the columns in any order and quoting (.ncu_canon)
_ANY_HEADER = header_with("ID", "Process ID", "Kernel Name")
_METRIC_NAME = re.compile(r'(?:^|,)[ \t]*"?Metric Name"?[ \t]*(?:,|$)')


def _header_line(head: str) -> str | None:
    m = HEADER_RE.search(head) or _ANY_HEADER.search(head)
    return m.group(0) if m else None


def sniff_details(head: str, name: str) -> bool:
    line = _header_line(head)
    if line is not None:
        return bool(_METRIC_NAME.search(line))
    return bool(_NOISE_RE.search(head))  # a failed run: no header, only ncu's own lines (explained by parse)


def sniff_raw(head: str, name: str) -> bool:
    line = _header_line(head)
    return line is not None and not _METRIC_NAME.search(line)


# ------------------------------------------------------------------------------------------ messages


def failure(text: str, source: str) -> InputError:
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


def rule_only(source: str, rules: list[str]) -> InputError:
    names = ", ".join(dict.fromkeys(r.split(" (", 1)[0] for r in rules))
    return InputError(where=source, text=f"this export holds only rule text ({names}), no metric values: roofline "
                      "sections print just their rules on the details page.",
                      hint="re-export the report with the raw page (ncu -i report.ncu-rep --csv --page raw "
                      f"--print-units base > raw.csv) or profile with --metrics {','.join(ROOFLINE_METRICS)}.")


def locale_error(source: str, example: str) -> InputError:
    return InputError(where=source, text=f"metric values are in a European number format (e.g. {example!r}: decimal "
                      "comma, dots between thousands), as ncu writes them under such a locale; they cannot be read "
                      "unambiguously.",
                      hint="profile (or re-export with ncu -i report.ncu-rep --csv) with LC_ALL=C, e.g. "
                      "LC_ALL=C ncu --csv --print-units base ...")


# ------------------------------------------------------------------------------------------ launches


@dataclass
class Launches:
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
    pids: np.ndarray | None = None  #: float64 process id per launch (NaN: not a number), to merge exports


_PER_CYCLE_UNIT = re.compile(r"^([KMGT]?)(?:inst|op|ops|flop|)/cycle$")
_SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def _dimension(unit: str) -> tuple[str, float] | None:
    """``(dimension, factor to base units)`` of a unit: the ncu unit table, or a rate per cycle (``inst/cycle``)."""
    found = unit_factor(unit)
    if found is not None:
        return found
    m = _PER_CYCLE_UNIT.match(unit.strip())
    return ("per_cycle", _SI[m.group(1)]) if m else None


def factor_for(metric: str, unit: str) -> float:
    """Scale to base units, or NaN where the unit does not fit the metric's dimension (a rate per cycle may have
    a count's unit, ``inst`` or none, as the sections' derived rates do)."""
    dim = WANTED.get(metric, "count")
    found = _dimension(unit)
    if found is None or (found[0] != dim and not (dim == "per_cycle" and found[0] == "count")):
        return np.nan
    return found[1]


def scale(values: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """``values × factor``, dividing by ``1/factor`` for sub-units so that 7,488 ns is exactly 7.488e-6 s."""
    out: np.ndarray = values * factor
    small = np.flatnonzero(factor < 1)
    if len(small):
        out[small] = values[small] / np.round(1.0 / factor[small])
    return out


def wanted(name: str) -> bool:
    return name in WANTED or bool(TENSOR_OPS.match(name)) or name in TEXT


_LABEL_NAME = re.compile(r"^.+?\s[(\[]([a-z0-9]+__[\w.]+)[)\]]$")


def canonical(name: str) -> str:
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
        return new if wanted(new) else name
    return name


def metric_keys(m_names: list[str], u_names: list[str]) -> np.ndarray:
    """``keys[metric code, unit code]``: the metric a (name, unit) pair gives, or "" where it is not used.

    Metric names are renamed to their current names; a details-page label counts only with a unit of the
    dimension it is read for (``Memory Throughput`` in byte/s is DRAM bandwidth, in % it is not used)."""
    keys = np.full((max(len(m_names), 1), max(len(u_names), 1)), "", dtype=object)
    dims = [(_dimension(u) or ("?", 1.0))[0] for u in u_names]
    for i, m in enumerate(m_names):
        if m in LABELS:
            for j, d in enumerate(dims):
                keys[i, j] = LABELS[m].get(d, "")
        else:
            c = canonical(m)
            if wanted(c):
                keys[i, :] = c
    return keys
