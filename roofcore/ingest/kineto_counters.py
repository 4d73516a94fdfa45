"""CUPTI range-profiler counters in a Kineto trace (``cat: cuda_profiler_range``): FLOPs, bytes and time of one
range by the Nsight Compute / NERSC formulas (docs/formats.md).

CUDA-core FLOPs = 2·fma + mul + add per precision from ``smsp__sass_thread_inst_executed_op_<d|f|h><add|mul|fma>
_pred_on.sum``; tensor FLOPs from ``sm__ops_path_tensor_*.sum``, else 512 × ``sm__inst_executed_pipe_tensor.sum``
(flagged ``estimated``); bytes from ``dram__bytes*`` (hbm), ``lts__t_bytes.sum`` (l2), ``l1tex__t_bytes.sum`` (l1);
time only from ``gpu__time_duration.sum`` (ns) or ``sm__cycles_elapsed.avg / .avg.per_second`` — a range's own
``ts``/``dur`` are synthetic.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

_FLOP_INSTS = {f"{p}{op}": (prec, 2 if op == "fma" else 1)
               for p, prec in (("d", "fp64"), ("f", "fp32"), ("h", "fp16")) for op in ("add", "mul", "fma")}
#: FLOPs per tensor-pipe instruction when only ``sm__inst_executed_pipe_tensor.sum`` is given (NVIDIA's
#: ``derived__sm__inst_executed_pipe_tensor_x512``, NERSC; architecture dependent)
TENSOR_FLOPS_PER_INST = 512


def _counter(vals: dict[str, float], *names: str) -> float | None:
    for name in names:
        for prefix in ("", "smsp__", "sm__"):
            v = vals.get(prefix + name)
            if v is not None:
                return v
    return None


#: tensor-core precision guessed from a kernel name when the counters do not say (cuBLAS / CUTLASS / cuDNN names)
_NAME_PRECISION = (("bf16", "bf16"), ("tf32", "tf32"), ("s1688", "tf32"), ("s16816", "tf32"), ("e4m3", "fp8"),
                   ("e5m2", "fp8"), ("fp8", "fp8"), ("f16", "fp16"), ("h1688", "fp16"), ("h16816", "fp16"),
                   ("hmma", "fp16"), ("int8", "int8"), ("i8i8", "int8"), ("imma", "int8"))


def name_precision(name: str) -> str | None:
    """The tensor-core precision a kernel name announces (``..._bf16bf16_...`` → bf16), or None."""
    low = name.lower()
    return next((prec for key, prec in _NAME_PRECISION if key in low), None)


def counter_point(args: dict[str, Any], name: str = "", tensor_factor: float = TENSOR_FLOPS_PER_INST
                  ) -> dict[str, object]:
    """FLOPs, bytes, time, precision and unit of one CUPTI range from its counters (docs/formats.md).

    Tensor precision from ``sm__ops_path_tensor_src_<p>_*`` counter names, else from the kernel name.
    """
    vals = {k: float(v) for k, v in args.items()
            if isinstance(k, str) and type(v) in (int, float) and math.isfinite(v) and v >= 0}
    by_prec: dict[str, float] = {}
    for op, (prec, weight) in _FLOP_INSTS.items():
        v = _counter(vals, f"sass_thread_inst_executed_op_{op}_pred_on.sum")
        if v is not None:
            by_prec[prec] = by_prec.get(prec, 0.0) + weight * v
    paths = {k: v for k, v in vals.items() if re.match(r"^(sm|smsp)__ops_path_tensor\w*\.sum$", k)}
    tensor, tensor_prec, estimated = None, None, False
    if paths:
        tensor = sum(paths.values())
        srcs = {m.group(1) for k in paths if (m := re.search(r"src_([a-z0-9]+)", k))}
        tensor_prec = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp64": "fp64", "fp8": "fp8",
                       "int8": "int8", "fp4": "fp4"}.get(next(iter(srcs))) if len(srcs) == 1 else None
    else:
        inst = _counter(vals, "inst_executed_pipe_tensor.sum")
        if inst is not None:
            tensor, estimated = tensor_factor * inst, True
    flops = (sum(by_prec.values()) + (tensor or 0.0)) if (by_prec or tensor is not None) else np.nan
    if tensor is not None and tensor > sum(by_prec.values()):
        precision, unit = tensor_prec or name_precision(name), "matrix"
    elif by_prec and max(by_prec.values()) > 0:
        precision, unit = max(by_prec, key=lambda p: by_prec[p]), "vector"
    else:
        precision, unit = None, None
    hbm = vals.get("dram__bytes.sum")
    if hbm is None:
        for rd, wr in (("dram__bytes_read.sum", "dram__bytes_write.sum"),
                       ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum")):
            if rd in vals and wr in vals:
                hbm = vals[rd] + vals[wr]
                break
    t_ns = vals.get("gpu__time_duration.sum")
    cycles, hz = vals.get("sm__cycles_elapsed.avg"), vals.get("sm__cycles_elapsed.avg.per_second")
    time_s = t_ns / 1e9 if t_ns is not None else (cycles / hz if cycles is not None and hz else np.nan)
    return {"flops": flops, "bytes_hbm": np.nan if hbm is None else hbm,
            "bytes_l2": vals.get("lts__t_bytes.sum", np.nan), "bytes_l1": vals.get("l1tex__t_bytes.sum", np.nan),
            "time_s": time_s, "precision": precision, "unit": unit, "estimated": estimated}
