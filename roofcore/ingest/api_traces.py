"""Host API traces and other non-kernel AMD traces: recognised and refused by name, with the kernel trace to export.

A host API trace times the calls a program made on the CPU (``hipMalloc``, ``hipLaunchKernel``, ``hsa_signal_wait``),
not the kernels on the GPU: nothing in it can go on a roofline, and a call's time is not its kernel's. Refused here:

- rocprofv3 ``--hip-trace``, ``--hsa-trace``, ``--marker-trace``, ``--rccl-trace``, ``--rocdecode-trace`` CSVs
  (``<pid>_hip_api_trace.csv`` …): ``Domain,Function,Process_Id,Thread_Id,Correlation_Id,Start_Timestamp,
  End_Timestamp``, the domain (``HIP_RUNTIME_API``, ``HSA_CORE_API``, ``MARKER_CORE_API``, ``RCCL_API``) in each row;
- rocprofv3's memory copy, memory allocation and scratch memory traces (``Kind,Direction,…`` /
  ``Kind,Operation,…``; ``MEMORY_COPY``, ``MEMORY_ALLOCATION``, ``SCRATCH_MEMORY`` rows): data movement and
  allocations, not kernels;
- rocprofv2's file-plugin records (``Record(1), Domain(HIP_API_DOMAIN), Function(hipMalloc), Begin(…), …``).

The same class is refused where other formats meet it: rocprof's ``hip_stats.csv`` / rocprofv3's
``hip_api_stats.csv`` (:mod:`.rocprof_v1`), a rocprofv3 JSON with API records only (:mod:`.rocprofv3`), Nsight
Systems' ``cuda_api_sum`` / ``cuda_api_trace`` (:mod:`.nsys`), nvprof's API trace and API summary (:mod:`.nvprof`).
"""

from __future__ import annotations

import csv
import re
from typing import Any

from ..errors import InputError
from ..models import Workload
from . import check_text, register_format

#: the export that gives kernels, for every refusal of an AMD trace
V3_KERNELS = ("export the kernel trace of the same run: rocprofv3 --kernel-trace --output-format csv -- ./app, and "
              "load <pid>_kernel_trace.csv (with --stats, also <pid>_kernel_stats.csv)")

_API_HEADER = re.compile(r'^[ \t]*"?Domain"?,"?Function"?,(?=[^\n]*\bCorrelation_Id\b)(?=[^\n]*\bStart_Timestamp\b)'
                         r"[^\n]*$", re.M | re.I)
_KIND_HEADER = re.compile(r'^[ \t]*"?Kind"?,"?(?:Direction|Operation)"?,(?![^\n]*\bKernel_Name\b)[^\n]*$', re.M | re.I)
_V2_RECORD = re.compile(r"^Record\(\d+\), Domain\(([A-Z_]+?)_DOMAIN\)", re.M)

#: a domain as rocprofv3 or rocprofv2 writes it (prefix) → what its calls are
_DOMAINS = (("HIP_OPS", "HIP activity records (queue operations without kernel names)"),
            ("HSA_OPS", "HSA activity records (asynchronous copies)"),
            ("HIP", "HIP API trace"), ("HSA", "HSA API trace"), ("MARKER", "ROCTx marker trace"),
            ("ROCTX", "ROCTx marker trace"), ("RCCL", "RCCL API trace"), ("ROCDECODE", "rocDecode API trace"),
            ("ROCJPEG", "rocJPEG API trace"), ("KOKKOS", "Kokkos marker trace"), ("OMPT", "OpenMP tools trace"))
_KINDS = {"MEMORY_COPY": "memory copy trace (copies, not kernels)",
          "MEMORY_ALLOCATION": "memory allocation trace (allocations, not kernels)",
          "SCRATCH_MEMORY": "scratch memory trace (allocations, not kernels)"}


def _sniff(head: str, name: str) -> bool:
    return bool(_API_HEADER.search(head) or _V2_RECORD.search(head) or (_KIND_HEADER.search(head)
                                                                         and _kind(head) is not None))


def _domain(text: str) -> str:
    """What a domain name (``HIP_RUNTIME_API``, ``HSA_API``) says the trace is."""
    up = text.strip().strip('"').upper()
    return next((what for prefix, what in _DOMAINS if up.startswith(prefix)), "host API trace")


def _first_row(text: str, header: re.Pattern[str]) -> tuple[list[str], list[str]]:
    """The header and first data row of the CSV table ``header`` finds (empty lists where absent)."""
    m = header.search(text)
    if not m:
        return [], []
    rows = csv.reader(text[m.start():].split("\n", 2)[:2])
    head = next(rows, [])
    return head, next(rows, [])


def _kind(text: str) -> str | None:
    """What a ``Kind,…`` trace is, from its first row's Kind (None: a kernel dispatch or unknown)."""
    head, row = _first_row(text, _KIND_HEADER)
    return _KINDS.get(row[0].strip().upper()) if row and head else None


@register_format("host-api-trace", "Host API traces and other non-kernel traces (rocprofv3 --hip-trace/--hsa-trace/"
                 "--marker-trace CSV, memory copy/allocation traces, rocprofv2 API records): recognised and refused, "
                 "naming the kernel trace to export", _sniff, priority=20)
def parse(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Always refuses, saying what the file is and which kernel trace to export."""
    text = check_text(data, source)
    m = _V2_RECORD.search(text)
    if m and not _API_HEADER.search(text):
        raise InputError(where=source, text=f"this is a rocprofv2 {_domain(m.group(1))} (host-side records), not a "
                         "kernel trace.", hint="export the kernels: rocprofv2 --kernel-trace --plugin file -d DIR ./app "
                         "and load the results CSV it writes (rocprofv3: rocprofv3 --kernel-trace --output-format csv "
                         "-- ./app, then <pid>_kernel_trace.csv).")
    head, row = _first_row(text, _API_HEADER)
    if head:
        domain = _domain(row[0]) if row else _domain(re.sub(r".*_(\w+?)_api_trace\.csv$", r"\1", source))
        calls = "" if len(row) < 2 else f": {row[1].strip()}, …"
        raise InputError(where=source, text=f"this is a rocprofv3 {domain} (host-side calls{calls}), not a kernel "
                         "trace.", hint=V3_KERNELS + ".")
    what = _kind(text) or "trace that holds no kernel dispatch"
    raise InputError(where=source, text=f"this is a rocprofv3 {what}.", hint=V3_KERNELS + ".")


def refuse_api_json(tools: list[Any], source: str) -> None:
    """A rocprofv3 JSON whose records are host API calls only (``buffer_records.hip_api``, ``hsa_api``,
    ``marker_api``, …; no dispatch, counter or copy): refused by name. Returns when it holds none."""
    apis = sorted({k for t in tools if isinstance(t, dict) and isinstance(t.get("buffer_records"), dict)
                   for k, v in t["buffer_records"].items() if k.endswith("_api") and isinstance(v, list) and v})
    if apis:
        raise InputError(where=source, text="this is a rocprofv3 API trace (host-side calls: buffer_records."
                         + ", buffer_records.".join(apis) + "), not a kernel trace.",
                         hint="export the kernel trace of the same run: rocprofv3 --kernel-trace --output-format json "
                              "-- ./app, and load the results.json it writes.")
