"""rocprof-compute (Omniperf) workload folders (docs/formats.md): ``pmc_perf.csv`` and the files beside it.

- ``rocprof-compute``: ``pmc_perf.csv``, the merged counter table, one row per dispatch. Columns are found by name,
  so every layout reads alike: Omniperf 1.x (``Dispatch_ID,Kernel_Name,GPU_ID,queue-id,…`` as rocprof v1 wrote
  it), 2.x (``Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size,…``) and 3.x with the rocprofv3 backend
  (``Dispatch_ID,GPU_ID,Grid_Size,…,Kernel_Name,Correlation_ID,…``, ~2,000 columns, counters written as floats,
  fractional-ns timestamps averaged over passes, repeated ``Kernel_ID_<n>`` columns). Numbers by
  :mod:`.rocprof_common` (calc_ai). A header with no row (a pass whose dispatch filter matched nothing) is refused
  as empty.
- ``rocprof-compute-kernel-top``: ``pmc_kernel_top.csv`` (``Kernel_Name,Count,Sum(ns),Mean(ns),Median(ns),Pct``):
  time-only rows per kernel name, for when pmc_perf.csv is not at hand.
- companions (context for pmc_perf.csv, read together by :func:`roofcore.ingest.read_many`):
  ``rocprof-compute-sysinfo`` (``sysinfo.csv``, every version: GPU model, arch, CUs, LDS banks) and
  ``rocprof-compute-dispatch-info`` (``pmc_dispatch_info.csv``: the dispatches of the run, used to say when
  pmc_perf.csv holds only some of them). ``roofline.csv`` is read by :mod:`.ceilings`.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..models import Workload
from . import check_text, register_format
from .columns import Either
from .rocprof_common import (
    NA,
    Layout,
    context_dict,
    find_header,
    header_sniffer,
    header_with,
    no_header,
    parse_summary,
    parse_wide,
    read_table,
)
from .rocprof_v1 import V1

# --------------------------------------------------------------------------------------------- pmc_perf.csv

#: columns in any order; rocprofv2's (Queue_ID) and rocprof v1's per-pass (queue-id) layouts and rocprofv3's files
#: (Agent_Id; counters one per row: Counter_Name) are their own formats
OWN_HEADER = header_with("Dispatch_ID", "Kernel_Name", without=("Queue_ID", "queue-id", "Agent_Id", "Counter_Name"))
COMPUTE = Layout(
    "rocprof-compute",
    Either(OWN_HEADER, V1.header),  # Omniperf 1.x: the v1 per-pass layout
    ("Dispatch_ID",), ("Kernel_Name",), ("GPU_ID",), ("Start_Timestamp",), ("End_Timestamp",),
    "a rocprof-compute pmc_perf.csv header (Dispatch_ID,Kernel_Name,GPU_ID,…)",
    "load pmc_perf.csv from the workload folder rocprof-compute wrote (workloads/<name>/<arch>/).",
    bare="this rocprof-compute file holds no counters; load pmc_perf.csv, which merges every pass.",
    empty="the file is empty (no dispatch was profiled): rocprof-compute writes such files when its dispatch or "
          "kernel filter (--dispatch, --kernel) matched nothing, or when the program launched no kernel; profile "
          "again with a filter that matches.")


def _compute_sniff(head: str, filename: str) -> bool:
    """pmc_perf.csv in any layout; Omniperf 1.x's begins like a rocprof v1 per-pass file, and is told by its name."""
    return bool(OWN_HEADER.search(head)) or ("pmc_perf" in filename.lower() and bool(V1.header.search(head)))


@register_format("rocprof-compute", "rocprof-compute (Omniperf) pmc_perf.csv: FLOPs, HBM/L2/L1/LDS bytes and time "
                 "per dispatch (load sysinfo.csv and roofline.csv with it)", _compute_sniff, priority=20, role="counters")
def parse_compute(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    w = parse_wide(data, source, context, COMPUTE)
    listed = context_dict(context, "rocprof_dispatch_info")
    total = listed.get("dispatches") if listed else None
    if listed and isinstance(total, int) and 0 < len(w) < total:
        w = replace(w, warnings=(*w.warnings, f"{source}: holds {len(w):,} of the {total:,} dispatches that "
                                 f"{listed.get('source', 'pmc_dispatch_info.csv')} lists (a subset, or a filtered "
                                 "run): totals cover only those."))
    return w


# --------------------------------------------------------------------------------------------- pmc_kernel_top.csv

KERNEL_TOP_HEADER = header_with("Kernel_Name", "Count", "Sum(ns)")


@register_format("rocprof-compute-kernel-top", "rocprof-compute pmc_kernel_top.csv: launches and total time per "
                 "kernel name, no counters", header_sniffer(KERNEL_TOP_HEADER), priority=20,
                 role="timeline")
def parse_kernel_top(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """One time-only row per kernel name: count = Count, time_s = Sum(ns) × 1e-9 (fractional ns kept)."""
    return parse_summary(data, source, "rocprof-compute-kernel-top", KERNEL_TOP_HEADER,
                         {"name": ("Kernel_Name",), "count": ("Count",), "total": ("Sum(ns)",)},
                         "a rocprof-compute pmc_kernel_top.csv header (Kernel_Name,Count,Sum(ns),…)",
                         "load pmc_kernel_top.csv from the workload folder rocprof-compute wrote.",
                         "load pmc_perf.csv from the same workload folder (with sysinfo.csv) for FLOPs and bytes per "
                         "dispatch.", {"profiler": "rocprof-compute"})


# --------------------------------------------------------------------------------------------- pmc_dispatch_info.csv

#: these three columns (and one more at most, a newer version's), none of a dispatch table's: no time, no counters
DISPATCH_INFO_HEADER = header_with("Dispatch_ID", "Kernel_Name", "GPU_ID", most=4,
                                   without=("Grid_Size", "Workgroup_Size", "Start_Timestamp", "End_Timestamp"))


@register_format("rocprof-compute-dispatch-info", "rocprof-compute's list of dispatches (pmc_dispatch_info.csv: "
                 "dispatch id, kernel name, GPU; no time or counters), context for pmc_perf.csv",
                 header_sniffer(DISPATCH_INFO_HEADER), priority=21, companion=True)
def parse_dispatch_info(data: bytes, source: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"rocprof_dispatch_info": {"dispatches": n, "source": name}}``: how many dispatches the run had."""
    text = check_text(data, source)
    at = find_header(text, DISPATCH_INFO_HEADER)
    if at is None:
        raise no_header(text, source, "a pmc_dispatch_info.csv header (Dispatch_ID,Kernel_Name,GPU_ID)",
                        "load pmc_dispatch_info.csv from the workload folder rocprof-compute wrote.")
    table = read_table(text, at, source, lambda header: [0])
    return {"rocprof_dispatch_info": {"dispatches": int(table.n), "source": source}}


# --------------------------------------------------------------------------------------------- sysinfo.csv

SYSINFO_HEADER = Either(*(header_with("workload_name", c) for c in ("gpu_arch", "gpu_model", "gpu_soc")))
#: Omniperf 1.x sysinfo column names (``omniperf1.x_mi100_sysinfo.csv``; ``LDSBanks`` unverified). ``gpu_soc`` holds
#: the architecture there (``gfx908``) and a series name in other files: see :func:`parse_sysinfo`.
SYSINFO_ALIASES = {"LDSBanks": "lds_banks_per_cu", "numCU": "cu_per_gpu", "hbmBW": "hbm_bw", "numSE": "se_per_gpu",
                   "numSIMD": "simd_per_cu", "waveSize": "wave_size", "name": "gpu_model", "host_rocmver": "rocm_version",
                   "sclk": "max_sclk", "mclk": "max_mclk", "L1": "gpu_l1", "L2": "gpu_l2", "L2Banks": "l2_banks",
                   "numSQC": "sqc_per_gpu", "maxWavesPerCU": "max_waves_per_cu",
                   "maxWorkgroupSize": "workgroup_max_size", "host_name": "hostname"}
#: GPU series by architecture, for files that do not name it
SERIES = (("gfx908", "MI100"), ("gfx90a", "MI200"), ("gfx940", "MI300"), ("gfx941", "MI300"), ("gfx942", "MI300"),
          ("gfx950", "MI350"))
SYSINFO_INTS = ("lds_banks_per_cu", "cu_per_gpu", "num_xcd", "simd_per_cu", "se_per_gpu", "wave_size",
                "workgroup_max_size", "max_waves_per_cu", "total_l2_chan", "sqc_per_gpu", "pipes_per_gpu")
SYSINFO_SCALED = {"hbm_bw": 1e9, "max_sclk": 1e6, "max_mclk": 1e6, "cur_sclk": 1e6, "cur_mclk": 1e6,
                  "gpu_l1": 1024.0, "gpu_l2": 1024.0}  # GB/s -> B/s, MHz -> Hz, KiB -> B


@register_format("rocprof-compute-sysinfo", "The system description rocprof-compute writes (sysinfo.csv: GPU model, "
                 "arch, CUs, LDS banks), context for pmc_perf.csv", header_sniffer(SYSINFO_HEADER), priority=20,
                 companion=True)
def parse_sysinfo(data: bytes, source: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"rocprof_sysinfo": {...}}``: every column as text, numbers in base units.

    Integers: lds_banks_per_cu, cu_per_gpu, num_xcd, simd_per_cu, se_per_gpu, wave_size, … (None when absent or
    not a positive whole number, with a note in ``warnings``). ``hbm_bw`` B/s (file: GB/s), clocks Hz (file: MHz),
    ``gpu_l1``/``gpu_l2`` bytes (file: KiB). ``gpu_series`` is inferred from ``gpu_arch`` when the file lacks it.
    """
    text = check_text(data, source)
    at = find_header(text, SYSINFO_HEADER)
    if at is None:
        raise no_header(text, source, "a rocprof-compute sysinfo.csv header (workload_name,command,…,gpu_model,"
                         "gpu_arch,…)", "load sysinfo.csv from the workload folder rocprof-compute wrote.")
    reader = csv.reader(io.StringIO(text[at[0]:]))
    try:
        header = [h.strip() for h in next(reader)]
        row = next((r for r in reader if any(c.strip() for c in r)), None)
    except csv.Error as e:
        raise InputError(where=source, text=f"not a readable CSV: {e}.", hint="load sysinfo.csv as rocprof-compute "
                         "wrote it.") from None
    if row is None:
        raise InputError(where=source, expected="a row of values under the sysinfo.csv header", found="a header only",
                         hint="profile again with rocprof-compute; it writes one row describing the system.")
    if len(row) < len(header):
        raise InputError(where=source, expected=f"{len(header)} values under the sysinfo.csv header",
                         found=f"{len(row)}", hint="load sysinfo.csv as rocprof-compute wrote it.")
    info: dict[str, object] = {}
    for h, v in zip(header, row, strict=False):
        key = SYSINFO_ALIASES.get(h, h)
        if h == "gpu_soc":
            key = "gpu_arch" if v.strip().lower().startswith("gfx") else "gpu_series"
        info.setdefault(key, v.strip())
    notes: list[str] = []
    for key in SYSINFO_INTS:
        if key in info:
            raw = str(info[key])
            info[key] = int(raw) if re.fullmatch(r"[0-9]{1,9}", raw) and int(raw) > 0 else None
            if info[key] is None and raw.lower() not in NA:
                notes.append(f"{source}: {key} {raw!r} is not a positive whole number; left unknown.")
    for key, scale in SYSINFO_SCALED.items():
        if key in info:
            raw = str(info[key])
            try:
                value = float(raw) * scale
            except ValueError:
                value = float("nan")
            info[key] = value if np.isfinite(value) and value > 0 else None
            if info[key] is None and raw.lower() not in NA:
                notes.append(f"{source}: {key} {raw!r} is not a positive number; left unknown.")
    if not info.get("gpu_series"):
        arch = str(info.get("gpu_arch") or "").strip().lower()
        series = next((s for a, s in SERIES if arch.startswith(a)), None)
        if series:
            info["gpu_series"] = series
    info["warnings"] = notes
    info["source"] = source
    return {"rocprof_sysinfo": info}
