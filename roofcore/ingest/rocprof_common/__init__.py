"""Shared pieces of the AMD profiler readers (docs/formats.md): CSV tables, counters, the calc_ai derivation, times.

Every rocprof format module (:mod:`.rocprof_v1`, :mod:`.rocprof_v2`, :mod:`.rocprofv3`, :mod:`.rocprof_compute`)
builds its rows here, so the same counters give the same numbers whatever file they come from.

One row per dispatch: ``count`` 1, ``row`` = the dispatch id, ``gpu`` = the GPU / agent id as exported; kernel
names are kept as exported (only surrounding whitespace is removed). Quantities follow rocprof-compute's
``calc_ai`` (docs/formats.md) from whichever counters the file holds:

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
  ``WRITE_SIZE`` (kilobytes, KiB per their metrics.xml expression: × 1024; docs/formats.md).
- A ``X_sum`` counter absent from the file is taken from ``X`` (rocprofv3 reduces instances itself) or summed
  from its per-instance columns ``X[0]``, ``X[1]``, ….
- time_s = (End − Start) ns × 1e-9 (``EndNs``/``BeginNs`` in v1). Whole or decimal nanoseconds are read exactly
  (rocprof-compute 3.x averages passes into fractional ns). A zero, negative, missing or scientific-notation
  timestamp (a spreadsheet round-trip writes them so, losing digits) leaves the time unknown (NaN) with a warning
  naming the dispatch; it is never divided by (docs/formats.md).

The package: :mod:`.table` reads CSV tables (and one JSON document), :mod:`.counters` holds the counters and
the calc_ai formulas, :mod:`.times` the timestamps, :mod:`.context` the companions (sysinfo.csv, agent_info.csv,
roofline.csv), :mod:`.wide` builds the workload of a wide counter file or a per-kernel summary.
"""

from __future__ import annotations

from ..columns import header_with
from .context import ROOFLINE_META, context_dict, context_meta
from .counters import (
    ALL_COUNTERS,
    FLOP_COUNTERS,
    L1_COUNTERS,
    L2_COUNTERS,
    LANES,
    LDS_COUNTERS,
    LEGACY_COUNTERS,
    MFMA_OPTIONAL,
    MFMA_TYPES,
    MFMA_UNCOUNTED,
    MI200_COUNTERS,
    MI300_COUNTERS,
    MOPS,
    VALU_OPS,
    VALU_PRECISIONS,
    Counters,
    Problems,
    Result,
    derive,
    gpu_family,
)
from .table import (
    DIGITS,
    MAX_NAMED,
    NA,
    Table,
    by_line,
    cell_text,
    factorize_text,
    find_header,
    header_sniffer,
    load_json,
    no_header,
    position,
    quoted,
    read_fast,
    read_records,
    read_roles,
    read_table,
    to_floats,
    whole_numbers,
)
from .times import durations, no_time_warning
from .wide import Ids, Layout, finish, ids_and_names, parse_summary, parse_wide, summary, with_rows

__all__ = ["ALL_COUNTERS", "DIGITS", "FLOP_COUNTERS", "L1_COUNTERS", "L2_COUNTERS", "LANES", "LDS_COUNTERS",
           "LEGACY_COUNTERS", "MAX_NAMED", "MFMA_OPTIONAL", "MFMA_TYPES", "MFMA_UNCOUNTED", "MI200_COUNTERS",
           "MI300_COUNTERS", "MOPS", "NA", "ROOFLINE_META", "VALU_OPS", "VALU_PRECISIONS", "Counters", "Ids",
           "Layout", "Problems", "Result", "Table", "by_line", "cell_text", "context_dict", "context_meta",
           "derive", "durations", "factorize_text", "find_header", "finish", "gpu_family", "header_sniffer", "header_with",
           "ids_and_names", "load_json", "no_header", "no_time_warning", "parse_summary", "parse_wide",
           "position", "quoted", "read_fast", "read_records", "read_roles", "read_table", "summary", "to_floats",
           "whole_numbers", "with_rows"]
