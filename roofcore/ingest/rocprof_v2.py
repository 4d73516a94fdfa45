"""rocprofv2 file-plugin CSV, version 2 (docs/formats.md): ``Dispatch_ID,GPU_ID,Queue_ID,…,Kernel_Name,
Start_Timestamp,End_Timestamp,Correlation_ID,<counters>``, one row per dispatch (numbers as in :mod:`.rocprof_common`).
"""

from __future__ import annotations

from typing import Any

from ..models import Workload
from . import register_format
from .rocprof_common import Layout, header_sniffer, header_with, parse_wide

V2 = Layout(
    "rocprof-v2",
    header_with("Dispatch_ID", "GPU_ID", "Queue_ID", "Kernel_Name"),
    ("Dispatch_ID",), ("Kernel_Name",), ("GPU_ID",), ("Start_Timestamp",), ("End_Timestamp",),
    "a rocprofv2 file-plugin header (Dispatch_ID,GPU_ID,Queue_ID,…,Kernel_Name,Start_Timestamp,End_Timestamp,…)",
    "profile with `rocprofv2 --plugin file --pmc … app` and load the results CSV it writes.",
    bare="profile with counters: `rocprofv2 --plugin file --pmc SQ_INSTS_VALU_FMA_F32 … FETCH_SIZE WRITE_SIZE app`.")


@register_format("rocprof-v2", "rocprofv2 file-plugin CSV (Dispatch_ID,GPU_ID,Queue_ID,…,Kernel_Name,"
                 "Start_Timestamp,End_Timestamp,…): counters per dispatch", header_sniffer(V2.header), priority=20, role="either")
def parse_v2(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    return parse_wide(data, source, context, V2)
