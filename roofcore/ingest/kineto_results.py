"""PyTorch traces: what an op's cost result carries beyond FLOPs and bytes (:mod:`.kineto_build` applies it), and
the ops costed per instance rather than per signature.

* A result's 5th field as a text: the assumption (or the reason for an unknown) behind it, one warning per
  distinct text counting the ops it covers (``{ops}`` in the text becomes "3 ops", else "3 ops: " leads).
* A 6th field ``{"link": bytes}``: a collective's bytes on the device's scale-up link (:mod:`.kineto_comm`),
  a ``bytes_nvlink`` (NVIDIA) or ``bytes_xgmi`` (ROCm) column, shared among the op's kernels as its other bytes.
* MoE ops sized by their own allocations and kernels (:func:`.kineto_serve.instance_results`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .kineto_args import Result, tensor_args
from .kineto_events import Signature
from .kineto_serve import instance_results


def is_rocm(top: dict[str, Any]) -> bool:
    """A ROCm trace: HIP / roctracer versions at the top, or an AMD ``gcnArchName`` among the devices."""
    props = top.get("deviceProperties")
    return any(k in top for k in ("hip_runtime_version", "roctracer_version", "hip_driver_version")) or (
        isinstance(props, list) and any(isinstance(p, dict) and "gcnArchName" in p for p in props))


def per_instance(op_rows: list[tuple[Any, ...]], signatures: list[Signature], op_of: np.ndarray,
                 names: list[str], res_of_op: np.ndarray, results: list[Result | None]) -> np.ndarray:
    """Ops costed per instance: their results appended to ``results``, their ops pointed at them."""
    found = instance_results(op_rows, signatures, op_of, names, tensor_args)
    if not found:
        return res_of_op
    res_of_op = res_of_op.copy()
    for o, r in found.items():
        res_of_op[o] = len(results)
        results.append(r)
    return res_of_op


def links_and_notes(results: list[Result | None], rk: np.ndarray, ops_k: np.ndarray, share: np.ndarray,
                    costed: np.ndarray, extra: dict[str, np.ndarray], n: int, link: str,
                    warnings: list[str]) -> None:
    """The link bytes of the costed kernels (``rk``: their result index, ``ops_k``: their op, ``share``: their
    share of it) into ``extra["bytes_<link>"]``; one warning per distinct text among their results."""
    r_link = np.array([r[5].get("link", np.nan) if r and len(r) > 5 else np.nan for r in results] + [np.nan])
    if not np.isnan(r_link[rk]).all():
        col = extra.setdefault(f"bytes_{link}", np.full(n, np.nan))
        col[costed] = r_link[rk] * share
    r_note = np.array([r[4] if r and isinstance(r[4], str) else None for r in results] + [None], dtype=object)
    noted = r_note[rk] != None  # noqa: E711 - elementwise on an object array
    if noted.any():
        _, first = np.unique(ops_k[noted], return_index=True)
        for text, k in pd.Series(r_note[rk[noted][first]], dtype=object).value_counts(sort=False).items():
            ops = f"{int(k):,} op{'' if k == 1 else 's'}"
            warnings.append(text.format(ops=ops) if "{ops}" in text else f"{ops}: {text}")
