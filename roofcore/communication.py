"""Communication's share of a workload: the time its collectives (NCCL, RCCL, symmetric-memory all-reduces, vLLM's
custom all-reduce) take, and how close their bytes on the interconnect come to the device's link roof.

A kernel is communication when its launching op is a collective (:data:`roofcore.ingest.kineto_comm.COMM_OPS`,
or any op whose name a collective's parse recognises: ``c10d::``, ``nccl:``, ``record_param_comms``), or its name
is a communication kernel's (``ncclDevKernel_*``, ``ncclKernel_*``, RCCL's, symmetric memory's
``multimem_all_reduce`` / ``one_shot_all_reduce`` / ``two_shot_all_reduce``, vLLM's ``cross_device_reduce``,
DeepEP's), or it has bytes on a scale-up link (any link but the host's ``pcie`` / ``c2c``).

The line (:func:`communication_text`): "Communication: 19.5% of the measured time (73 kernels), at 34% of the
NVLink 5 roof (900 GB/s per direction)" — the roof share is Σ link bytes ÷ Σ time over the communication
kernels whose link bytes and time are known, ÷ the link's bandwidth (per direction, as the link bytes are
NCCL's bus bytes per rank and direction). Without link bytes it says they are unknown, never 0%.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from .models import Hardware
from .units import fmt_bandwidth, fmt_pct

#: host links: a copy to or from the host is data movement, not communication between devices
_HOST_LINKS = ("pcie", "c2c")
#: communication kernels by name: NCCL's and RCCL's, PyTorch's symmetric-memory kernels, vLLM's custom all-reduce,
#: DeepEP's all-to-all (a compute kernel's name that merely says "reduce" is not one)
COMM_KERNEL = re.compile(r"nccl|rccl|multimem_all_reduce|multimem_all_gather|one_shot_all_reduce|"
                          r"two_shot_all_reduce|cross_device_reduce|deep_ep::", re.IGNORECASE)
COMM_GROUP = re.compile(r"^(?:c10d::|nccl:|record_param_comms|_c10d_functional::|symm_mem::|_C_custom_ar::)|"
                         r"^vllm::(?:all_reduce|all_gather|reduce_scatter)$")


def comm_rows(frame: pd.DataFrame) -> np.ndarray:
    """Which rows of a workload frame are communication (see the module docstring)."""
    rows = _found(frame["name"], COMM_KERNEL)
    if "group" in frame.columns:
        rows = rows | _found(frame["group"], COMM_GROUP)
    for col in link_columns(frame):
        rows = rows | (frame[col].to_numpy(dtype=np.float64) > 0)
    return rows


def _found(values: pd.Series, pattern: re.Pattern[str]) -> np.ndarray:
    """Where ``pattern`` is found in a value's text (missing: nowhere), searched once per distinct value: names
    repeat, a workload of a million launches has a few thousand."""
    codes, uniq = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=True)
    hit = np.array([pattern.search(str(u)) is not None for u in uniq.tolist()] + [False], dtype=bool)
    found: np.ndarray = hit[codes]  # code -1 (missing): the False appended
    return found


def link_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith("bytes_") and c[6:] not in _HOST_LINKS
            and c[6:] != "hbm" and c[6:] in _LINK_NAMES]


#: device-to-device link names (roofcore.models' link names less the host's)
_LINK_NAMES = {"nvlink", "ici", "xgmi", "dcn", "roce", "ethernet", "infiniband", "ib", "network", "upi", "cxl"}


def communication(frame: pd.DataFrame, hw: Hardware, achievable: bool = False) -> dict[str, Any] | None:
    """Communication's time and its link roof share on ``hw`` (None when the workload has no communication):
    ``time_s``, ``time_share`` (of the measured time), ``rows``, ``link`` (name), ``link_label``,
    ``link_bandwidth`` (B/s), ``link_bytes`` (Σ over rows with them), ``roof_share`` (None when unknown)."""
    rows = comm_rows(frame)
    if not rows.any():
        return None
    t = frame["time_s"].to_numpy(dtype=np.float64)
    total = float(np.nansum(t))
    comm_t = float(np.nansum(t[rows]))
    links = link_columns(frame)
    link = hw.link_map.get(links[0]) if links else None
    if link is None:  # the device has none of the workload's links: its first scale-up link, for the label
        link = next((lk for lk in hw.links if lk.name not in _HOST_LINKS), None)
    out: dict[str, Any] = {"time_s": comm_t, "time_share": comm_t / total if total > 0 else None, "rows": int(rows.sum()),
                 "link": link.name if link else None, "link_label": link.display if link else None,
                 "link_bandwidth": link.rate(achievable) if link else None, "link_bytes": None, "roof_share": None}
    if link is not None and f"bytes_{link.name}" in frame.columns:
        b = frame[f"bytes_{link.name}"].to_numpy(dtype=np.float64)
        ok = rows & ~np.isnan(b) & ~np.isnan(t) & (t > 0)
        if ok.any():
            out["link_bytes"] = float(b[ok].sum())
            out["roof_share"] = float(b[ok].sum() / t[ok].sum() / link.rate(achievable))
            out["time_share_with_bytes"] = float(t[ok].sum() / comm_t) if comm_t > 0 else None
    return out


def communication_text(summary: dict[str, Any]) -> str:
    """``"Communication: 19.5% of the measured time (73 kernels), at 34% of the NVLink 5 roof (900 GB/s per
    direction)."``; empty when the summary has no communication."""
    c = summary.get("communication")
    if not c or c.get("time_share") is None:
        return ""
    head = (f"Communication: {fmt_pct(c['time_share'])} of the measured time "
            f"({c['rows']:,} {'kernel' if c['rows'] == 1 else 'kernels'})")
    if c.get("roof_share") is None:
        where = f" on {c['link_label']}" if c.get("link_label") else ""
        return head + f"; its bytes{where} are unknown (no message or group size recorded)."
    part = c.get("time_share_with_bytes")
    over = f" over the {fmt_pct(part, 2)} of it whose link bytes are known" if part is not None and part < 0.995 else ""
    return (head + f", at {fmt_pct(c['roof_share'])} of the {c['link_label']} roof "
            f"({fmt_bandwidth(c['link_bandwidth'])} per direction){over}.")
