"""Collectives in PyTorch traces: the bytes a ``c10d`` / NCCL / symmetric-memory op moves on the interconnect.

A collective's kernel does (almost) no math; what bounds it is the link. Its cost is the message size ``S`` and
the group size ``n`` read from the op's arguments, turned into bytes on the link with NCCL's bus-bandwidth
factors (nccl-tests ``doc/PERFORMANCE.md``: the bus bandwidth of an operation is its algorithm bandwidth ``S/t``
times a factor that makes it comparable to the hardware's link bandwidth):

=================  =================  ===============================================================
collective         bytes on the link  ``S`` (NCCL's "size")
=================  =================  ===============================================================
all-reduce         ``2(n−1)/n · S``   the buffer reduced
all-gather         ``(n−1)/n · S``    the gathered *output* (``n`` × each rank's input)
reduce-scatter     ``(n−1)/n · S``    the *input* (``n`` × each rank's output)
all-to-all         ``(n−1)/n · S``    the send buffer
broadcast, send,   ``S``              the buffer
recv
=================  =================  ===============================================================

The link bytes, off-chip (``hbm``) bytes and reduction FLOPs are :mod:`roofcore.ops`'s collectives (ring
algorithm: the same factors), on the device's scale-up link: ``nvlink`` on NVIDIA GPUs, ``xgmi`` on AMD
(Infinity Fabric); broadcast and point-to-point move ``S`` on the link and ``S`` at HBM, 0 FLOPs.

Where the trace records them:

* ``record_param_comms`` (PyTorch ≥ 2.1; older traces name the event ``nccl:<collective>``): ``Collective name``,
  ``In msg nelems`` / ``Out msg nelems``, ``dtype`` and ``Group size`` among its args. It is the innermost op
  around the NCCL kernel's launch, so it is the one costed. Without those args (an older ``nccl:*`` event): its
  first tensor (an all-gather's input, × ``n``) and the group size as below.
* ``_c10d_functional::*`` (torch.compile's functional collectives) and vLLM's ``vllm::all_gather`` /
  ``vllm::reduce_scatter``: the tensor's shape, and the group size as a ``Concrete Inputs`` scalar.
* ``symm_mem::*`` (symmetric-memory all-reduce / all-gather), ``vllm::all_reduce`` (vLLM's PyNccl path launches
  NCCL without ``record_param_comms``), ``_C_custom_ar::all_reduce`` and the ``c10d::`` ops with plain tensors
  (``_allgather_base_``: the output first; ``_reduce_scatter_base_``, ``alltoall_base_``: the input second):
  the tensor's shape; the group is an object or a name the profiler does not record. Its size is then taken from the trace's
  ``distributedInfo.pg_config`` when every process group there with more than one rank has the same size
  (a collective over a group of one launches no communication kernel), and the warning says so; otherwise the
  bytes are unknown, never guessed.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .. import ops
from ..models import OFFCHIP
from .kineto_args import CostFn, Result, TensorArg, arg_at, concrete_at

#: args of ``record_param_comms`` events kept beside Input Dims (kineto_events' signature ``extra``)
EXTRA_ARGS = ("Collective name", "Group size", "In msg nelems", "Out msg nelems", "dtype")

#: c10 ``dtype`` names in record_param_comms → (bytes per element, precision)
_COMM_DTYPES = {"float": (4, "fp32"), "double": (8, "fp64"), "half": (2, "fp16"), "bfloat16": (2, "bf16"),
                "float8_e4m3fn": (1, "fp8"), "float8_e5m2": (1, "fp8"), "float8_e4m3fnuz": (1, "fp8"),
                "float8_e5m2fnuz": (1, "fp8"), "byte": (1, None), "char": (1, None), "int": (4, None),
                "long": (8, None), "short": (2, None), "bool": (1, None)}


def collective_kind(name: str) -> str | None:
    """``all_reduce``, ``all_gather``, ``reduce_scatter``, ``all_to_all``, ``broadcast``, ``p2p`` or None, from a
    collective's name as c10d, NCCL and the functional API spell it (``allreduce``, ``_allgather_base``, ...)."""
    low = re.sub(r"[^a-z0-9]", "", name.lower().rsplit("::", 1)[-1].split(":")[-1])
    if "reducescatter" in low:
        return "reduce_scatter"
    if "allreduce" in low:
        return "all_reduce"
    if "allgather" in low:
        return "all_gather"
    if "alltoall" in low:
        return "all_to_all"
    if "broadcast" in low:
        return "broadcast"
    if low in ("send", "recv", "sendrecv") or low.startswith(("send", "recv")):
        return "p2p"
    return None


def _link_cost(kind: str, size: float, n: int, prec: str | None, link: str, note: bool | str = False
               ) -> Result | None:
    """The result of moving ``size`` bytes (NCCL's size) in a ``kind`` collective over ``n`` ranks."""
    if n < 1 or size < 0 or not math.isfinite(size):
        return None
    dtype = prec or "fp32"  # the reduction FLOPs' precision; 0 FLOPs where there is no reduction
    if kind in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        k = getattr(ops, kind)(size, n, dtype, link=link)
        link_bytes, hbm, flops = k.bytes[link], k.bytes[OFFCHIP], k.flops
    else:  # broadcast, send / recv: the buffer crosses the link once
        link_bytes, hbm, flops = (size if n > 1 else 0.0), size, 0.0
    return float(flops), float(hbm), prec, "vector", note, {"link": float(link_bytes)}


def _group(ctx: dict[str, Any] | None, text: str | None = None) -> tuple[int | None, bool | str]:
    """The group size: a recorded number (``text``), else the trace's one multi-rank group size (with the
    warning that says so), else unknown."""
    if text is not None and re.fullmatch(r"\d+", text):
        return int(text), False
    ctx = ctx or {}
    groups = ctx.get("groups") or {}
    if text is not None and text.strip("'\"") in groups:
        return groups[text.strip("'\"")], False
    n = ctx.get("group_size")
    if n:
        return n, (f"a collective's group size is not among its op's arguments: taken as {n}, the size of every "
                   "process group of more than one rank in the trace's distributedInfo.")
    return None, False


def _tensor_bytes(ts: list[TensorArg | None], at: int = 0) -> tuple[float, str | None] | None:
    t = arg_at(ts, at)
    return (t.bytes, t.prec) if t is not None else None


def _record_param_comms(ts: list[TensorArg | None], concrete: object, name: str,
                        extra: tuple[tuple[str, Any], ...] = (), ctx: dict[str, Any] | None = None
                        ) -> Result | None:
    """``record_param_comms`` / ``nccl:*``: size from In/Out msg nelems × dtype, group from ``Group size``."""
    args = dict(extra or ())
    coll = args.get("Collective name")
    kind = collective_kind(coll if isinstance(coll, str) else name)
    dt = args.get("dtype")
    spec = _COMM_DTYPES.get(dt.lower()) if isinstance(dt, str) else None
    n_in, n_out = args.get("In msg nelems"), args.get("Out msg nelems")
    if kind is not None and (spec is None or type(n_in) is not int or type(n_out) is not int):
        # an older trace's nccl:<collective> without the message args: its first tensor, the group from the trace
        return _tensor_collective(kind, scale_gather=kind == "all_gather")(ts, concrete, name, extra, ctx)
    if kind is None or spec is None or type(n_in) is not int or type(n_out) is not int:
        return None
    size, prec = spec
    msg = {"all_gather": n_out, "all_to_all": max(n_in, n_out)}.get(kind, n_in) * size
    gs = args.get("Group size")
    n, note = (gs, False) if type(gs) is int and gs > 0 else _group(ctx)
    return _link_cost(kind, msg, n, prec, (ctx or {}).get("link", "nvlink"), note) if n else None


def _tensor_collective(kind: str, group_at: int | None = None, scale_gather: bool = False, at: int = 0
                       ) -> CostFn:
    """An op whose argument ``at`` is the tensor reduced / sent (``scale_gather``: the op's input is one rank's
    share of an all-gather, so the gathered size is ``n`` × it); ``group_at``: position of a recorded group size."""

    def cost(ts: list[TensorArg | None], concrete: object, name: str, extra: tuple[tuple[str, Any], ...] = (),
             ctx: dict[str, Any] | None = None) -> Result | None:
        tb = _tensor_bytes(ts, at)
        if tb is None:
            return None
        text = concrete_at(concrete, group_at) if group_at is not None else None
        n, note = _group(ctx, text)
        if not n:
            return None
        size = tb[0] * n if scale_gather else tb[0]
        return _link_cost(kind, size, n, tb[1], (ctx or {}).get("link", "nvlink"), note)

    cost.wants_context = True  # type: ignore[attr-defined]  # a marker op_cost reads
    return cost


_record_param_comms.wants_context = True  # type: ignore[attr-defined]  # a marker op_cost reads

OPS: dict[str, CostFn] = {
    "record_param_comms": _record_param_comms,
    **{f"nccl:{c}": _record_param_comms for c in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                   "broadcast", "_allgather_base", "_reduce_scatter_base",
                                                   "allreduce_coalesced", "all_gather_into_tensor_coalesced")},
    "symm_mem::multimem_all_reduce_": _tensor_collective("all_reduce"),
    "symm_mem::one_shot_all_reduce": _tensor_collective("all_reduce"),
    "symm_mem::one_shot_all_reduce_out": _tensor_collective("all_reduce"),
    "symm_mem::multimem_one_shot_all_reduce": _tensor_collective("all_reduce"),
    "symm_mem::multimem_one_shot_all_reduce_out": _tensor_collective("all_reduce"),
    "symm_mem::two_shot_all_reduce_": _tensor_collective("all_reduce"),
    "symm_mem::two_shot_all_reduce_out": _tensor_collective("all_reduce"),
    "symm_mem::multimem_all_gather_out": _tensor_collective("all_gather", scale_gather=True),
    "vllm::all_reduce": _tensor_collective("all_reduce"),
    "_C_custom_ar::all_reduce": _tensor_collective("all_reduce"),
    "vllm::all_gather": _tensor_collective("all_gather", group_at=2, scale_gather=True),
    "vllm::reduce_scatter": _tensor_collective("reduce_scatter", group_at=2),
    "_c10d_functional::all_reduce": _tensor_collective("all_reduce", group_at=2),
    "_c10d_functional::all_reduce_": _tensor_collective("all_reduce", group_at=2),
    "_c10d_functional::all_gather_into_tensor": _tensor_collective("all_gather", group_at=1, scale_gather=True),
    "_c10d_functional::reduce_scatter_tensor": _tensor_collective("reduce_scatter", group_at=2),
    "_c10d_functional::all_to_all_single": _tensor_collective("all_to_all", group_at=3),
    "_c10d_functional::broadcast": _tensor_collective("broadcast", group_at=2),
    # c10d ops with plain tensors (their NCCL kernel's innermost op where no record_param_comms is nested):
    # _allgather_base_(output, input, ...), _reduce_scatter_base_(output, input, ...), alltoall_base_(output, input)
    "c10d::_allgather_base_": _tensor_collective("all_gather"),
    "c10d::_reduce_scatter_base_": _tensor_collective("reduce_scatter", at=1),
    "c10d::alltoall_base_": _tensor_collective("all_to_all", at=1),
}

#: op names that are communication (their kernels' time is the Overview's communication line)
COMM_OPS = frozenset(OPS) | {"c10d::allreduce_", "c10d::allgather_", "c10d::_allgather_base_",
                             "c10d::reduce_scatter_", "c10d::_reduce_scatter_base_", "c10d::alltoall_",
                             "c10d::alltoall_base_", "c10d::broadcast_", "c10d::send", "c10d::recv_"}


def group_context(dist: object, device_is_rocm: bool) -> dict[str, Any]:
    """The per-trace context of the collectives: the link name, process-group sizes by name and the one size of
    every multi-rank group (``distributedInfo.pg_config``; or ``world_size`` when the job has one group)."""
    ctx: dict[str, object] = {"link": "xgmi" if device_is_rocm else "nvlink", "groups": {}, "group_size": None}
    if not isinstance(dist, dict):
        return ctx
    groups: dict[str, int] = {}
    pgs = dist.get("pg_config")
    rank = dist.get("rank")
    for pg in pgs if isinstance(pgs, list) else (pgs.values() if isinstance(pgs, dict) else ()):
        if not isinstance(pg, dict) or type(pg.get("pg_size")) is not int:
            continue
        ranks = pg.get("ranks")
        if type(rank) is int and isinstance(ranks, list) and ranks and rank not in ranks:
            continue
        groups[str(pg.get("pg_name"))] = pg["pg_size"]
    ctx["groups"] = groups
    multi = {n for n in groups.values() if n > 1}
    if len(multi) == 1:
        ctx["group_size"] = multi.pop()
    elif not groups and dist.get("pg_count") == 1 and type(dist.get("world_size")) is int:
        ctx["group_size"] = dist["world_size"] if dist["world_size"] > 1 else None
    return ctx
