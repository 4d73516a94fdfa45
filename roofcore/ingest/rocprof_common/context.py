"""The companions read with a counter file: rocprof-compute's sysinfo.csv (the GPU model, architecture, CU
count, LDS banks), rocprofv3's agent_info.csv, roofline.csv's measured ceilings; they name the device and fill
the workload's meta."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

#: roofline.csv columns given to the workload's meta (the device its dispatches ran on), in B/s and FLOP/s
ROOFLINE_META = {
    "HBMBw": "measured_hbm_bytes_per_s", "L2Bw": "measured_l2_bytes_per_s", "L1Bw": "measured_l1_bytes_per_s",
    "LDSBw": "measured_lds_bytes_per_s", "FP32Flops": "measured_fp32_vector_flops_per_s",
    "FP64Flops": "measured_fp64_vector_flops_per_s", "MFMABF16Flops": "measured_bf16_matrix_flops_per_s",
    "MFMAF16Flops": "measured_fp16_matrix_flops_per_s", "MFMAF32Flops": "measured_fp32_matrix_flops_per_s",
    "MFMAF64Flops": "measured_fp64_matrix_flops_per_s", "MFMAI8Ops": "measured_int8_matrix_ops_per_s",
}



def context_dict(context: Mapping[str, Any] | None, key: str) -> dict[Any, Any] | None:
    v = context.get(key) if isinstance(context, Mapping) else None
    return v if isinstance(v, dict) else None


def context_meta(context: Mapping[str, Any] | None, gpus: np.ndarray, meta: dict[str, str], warn: list[str]) -> str | None:
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

