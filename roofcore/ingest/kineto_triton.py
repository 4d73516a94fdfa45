"""Triton kernels launched by torch.compile (Inductor) in PyTorch traces.

With ``record_shapes=True`` the profiler records each Triton launch as a ``cpu_op`` named after the kernel
(``triton_poi_fused_add_mul_0``) whose ``Input Dims`` / ``Input type`` are the kernel's arguments: its tensors
(Inductor's ``in_ptr*``, ``out_ptr*``, ``in_out_ptr*``) followed by scalars (symbolic sizes, then the iteration
space's ``xnumel`` and, for reductions, ``r0_numel``) whose values are in ``Concrete Inputs``; ``kernel_backend``,
``kernel_name``, ``kernel_kwargs`` (block sizes) and ``num_warps`` sit beside them. The kernel's name says its class
and, with Inductor's default ``descriptive_names="original_aten"``, the aten ops fused into it:

* ``poi`` (pointwise), ``red`` (reduction), ``per`` (persistent reduction): bytes = every tensor argument's size
  once (each input read once, each output written once). An ``in_out_ptr`` (a buffer updated in place) is read
  *and* written but the trace does not say which argument is one, so the bytes are a lower bound there. FLOPs =
  the kernel's elements × the FLOPs per element of the fused ops its name lists: 1 per elementwise or reduction
  op (add, mul, exp, rsqrt, mean, sum, ... as PyTorch's own FLOP counter counts elementwise ops), 0 for views,
  copies, indexing and type conversions, and :mod:`roofcore.ops`' per-element counts for softmax, layer norm and
  RMS norm. Elements = the product of the trailing ``Concrete Inputs`` (``xnumel``, and ``r0_numel`` for a
  reduction), else the largest tensor argument's size. A name listing an op with no count here leaves the
  FLOPs unknown (the bytes stay known) and the warning says why. Vector unit, at the largest floating-point
  argument's precision.
* ``tem`` (template: an Inductor GEMM): the ``A[.., M, K]``, ``B[.., K, N]`` and ``C[.., M, N]`` among its
  arguments: FLOPs ``2·batch·M·N·K``, bytes every argument once (A, B, C, and a bias or epilogue input);
  matrix unit. No such triple: unknown.

Other Triton kernels (user ``@triton.jit`` kernels launched outside Inductor) are not ``cpu_op`` events and
keep the cost of the op that launched them, if any.
"""

from __future__ import annotations

import math
import re
from typing import TypeVar, overload

from .. import ops
from .kineto_args import CostFn, Result, TensorArg

_D = TypeVar("_D")

#: FLOPs per element of the kernel's iteration space per fused aten op; 0: views, copies, indexing, conversion
_PER_ELEMENT: dict[str, float] = {
    **dict.fromkeys((
        "add", "sub", "rsub", "mul", "div", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt",
        "pow", "tanh", "sigmoid", "relu", "gelu", "silu", "erf", "abs", "sin", "cos", "maximum", "minimum", "clamp",
        "clamp_min", "clamp_max", "reciprocal", "sign", "floor", "ceil", "round", "trunc", "lt", "gt", "le", "ge",
        "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_not", "bitwise_xor", "logical_and", "logical_or",
        "logical_not", "where", "mean", "sum", "amax", "amin", "max", "min", "prod", "argmax", "argmin", "var",
        "var_mean", "std", "hardtanh", "leaky_relu", "elu", "mish", "softplus", "hardswish", "hardsigmoid",
        "threshold_backward", "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward",
        "masked_fill", "addcmul", "addcdiv", "lerp", "fmod", "remainder", "isnan", "isinf", "logsumexp",
        "cumsum", "mm", "bmm", "addmm"), 1.0),
    **dict.fromkeys((
        "_unsafe_view", "view", "clone", "permute", "transpose", "expand", "slice", "select", "cat", "stack", "copy",
        "_to_copy", "convert_element_type", "constant_pad_nd", "index", "index_select", "gather", "scatter",
        "embedding", "unsqueeze", "squeeze", "reshape", "full", "zeros", "ones", "empty", "new_zeros", "fill",
        "arange", "iota", "split", "split_with_sizes", "unbind", "alias", "t", "as_strided", "scalar_tensor",
        "lift_fresh", "detach", "slice_scatter", "select_scatter", "index_put", "full_like", "zeros_like",
        "ones_like", "empty_like", "repeat", "roll", "flip", "diagonal", "narrow", "pad", "rand", "randn",
        "bernoulli", "native_dropout", "_reshape_alias", "_softmax_backward_data",
        "embedding_dense_backward"), 0.0),
    "_softmax": ops.softmax(1, 1, "fp32").flops, "_log_softmax": ops.softmax(1, 1, "fp32").flops,
    "native_layer_norm": ops.layernorm(1, 1, "fp32").flops, "rms_norm": ops.rmsnorm(1, 1, "fp32").flops,
    "_fused_rms_norm": ops.rmsnorm(1, 1, "fp32").flops,
}
_VOCAB = sorted(_PER_ELEMENT, key=len, reverse=True)
_NAME = re.compile(r"^triton_(poi|red|per|tem)_(?:fused_)?(.*?)(?:_\d+)?$")

UNCOUNTED = ("a Triton kernel's name lists a fused op with no FLOP count here: its FLOPs are unknown, its bytes "
             "are its tensor arguments' (each once).")


def fused_ops(text: str) -> list[str] | None:
    """The aten ops a fused kernel's name lists (``add_mean_mul_pow_rsqrt`` → add, mean, mul, pow, rsqrt), longest
    names first; None when a part matches no op known here."""
    out: list[str] = []
    rest = text
    while rest:
        hit = next((v for v in _VOCAB if rest == v or rest.startswith(v + "_")), None)
        if hit is None:
            return None
        out.append(hit)
        rest = rest[len(hit) + 1:]
    return out


def _scalars(concrete: object, n: int) -> list[int]:
    """The trailing ``n`` integer Concrete Inputs (the kernel's numels)."""
    if not isinstance(concrete, list):
        return []
    vals = [c.strip() for c in concrete if isinstance(c, str) and c.strip()]
    tail = vals[-n:] if len(vals) >= n else []
    return [int(v) for v in tail] if tail and all(re.fullmatch(r"\d+", v) for v in tail) else []


def _gemm(tensors: list[TensorArg]) -> tuple[float, float, float, float] | None:
    """``(batch, M, N, K)`` of an ``A @ B = C`` among a template kernel's tensor arguments."""
    for a in tensors:
        for b in tensors:
            if a is b or len(a.shape) != len(b.shape) or len(a.shape) not in (2, 3):
                continue
            if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
                continue
            m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
            if any(c is not a and c is not b and c.shape == (*a.shape[:-2], m, n) for c in tensors):
                return float(math.prod(a.shape[:-2])), float(m), float(n), float(k)
    return None


def triton_cost(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """FLOPs and bytes of one Triton launch of torch.compile (see the module docstring)."""
    m = _NAME.match(name)
    tensors = [t for t in ts if t is not None]
    if m is None or not tensors:
        return None
    kind, body = m.groups()
    nbytes = float(sum(t.bytes for t in tensors))
    floats = [t for t in tensors if t.prec is not None]
    prec = max(floats, key=lambda t: t.numel).prec if floats else None
    if kind == "tem":
        g = _gemm(floats)
        if g is None:
            return None
        batch, mm, nn, kk = g
        return 2.0 * batch * mm * nn * kk, nbytes, prec, "matrix", False
    numels = _scalars(concrete, 1 if kind == "poi" else 2)
    elements = math.prod(numels) if numels else max(t.numel for t in tensors)
    names = fused_ops(body) if body else None  # a name without its ops (descriptive_names off): unknown
    if names is None:
        return math.nan, nbytes, prec, "vector", UNCOUNTED
    return float(elements * sum(_PER_ELEMENT[n] for n in names)), nbytes, prec, "vector", False


def is_triton(name: str) -> bool:
    return name.startswith("triton_") and _NAME.match(name) is not None


class OpTable(dict[str, CostFn]):
    """Op name → cost function, where Triton launches (``triton_poi_...``: names made per kernel) match by their
    prefix: ``name in table`` and ``table.get(name)`` see them (the scan keeps such ops' shapes)."""

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or (type(name) is str and name.startswith("triton_"))

    @overload
    def get(self, name: str, default: None = None, /) -> CostFn | None: ...
    @overload
    def get(self, name: str, default: CostFn, /) -> CostFn: ...
    @overload
    def get(self, name: str, default: _D, /) -> CostFn | _D: ...

    def get(self, name: str, default: object = None, /) -> object:
        fn = dict.get(self, name)
        if fn is None and type(name) is str and is_triton(name):
            return triton_cost
        return default if fn is None else fn
