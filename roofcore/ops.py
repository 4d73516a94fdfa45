"""Analytic FLOP and byte counts for ops, per launch, following the seeds' conventions.

Each builder returns a :class:`Kernel` whose ``bytes`` are off-chip (``hbm``) traffic assuming every
input is read once and every output written once (no cache reuse across kernels). Sizes come from
:data:`roofcore.models.DTYPE_SIZE` (bf16 = 2 B, int8 = 1 B, int4 = 0.5 B, ...).

Formulas (document, test and cite them; change none without changing the docs):

- ``matmul``  ``A[m,k] @ B[k,n] -> C[m,n]``: FLOPs ``2·m·n·k``; bytes ``m·k·|a| + k·n·|b| + m·n·|out|``
  (seed "Roofline Analysis: A Comprehensive Guide" §4.2; square ``N``: intensity ``N/3`` in bf16).
  ``dtype`` sets both inputs; ``a_dtype``/``b_dtype`` override one side (int8 weights with bf16
  activations, §6.2); ``out_dtype`` defaults to ``dtype``. The compute ceiling is ``dtype``'s on
  the matrix unit; ``acc_dtype`` (accumulator) is recorded in the kernel name only — it does not
  move bytes, and catalogs quote the FP32-accumulate rate.
- ``elementwise``: FLOPs ``elements·flops_per_element``; bytes ``(inputs + outputs)·elements·|dtype|``
  (each input read once, each output written once); vector unit.
- ``layernorm`` over ``rows × hidden``: FLOPs ``10·elements`` (mean, variance, normalise, scale,
  shift); bytes ``(3·elements + 2·hidden)·|dtype|``: the input read twice (statistics pass, then the
  normalising pass), the output written once, and γ and β read once; vector unit.
- ``dot`` of two ``n``-vectors: FLOPs ``2n − 1`` (n multiplies, n − 1 adds); bytes ``(2n + 1)·|dtype|``
  (both vectors read, one scalar written); intensity → 1/2 FLOP/B in bf16 (§4.1); vector unit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .errors import InputError
from .models import DTYPE_SIZE, OFFCHIP, Kernel, canonical_dtype

OpBuilder = Callable[..., Kernel]
OPS: dict[str, OpBuilder] = {}
#: required and optional parameters per op, for messages and docs
OP_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def register_op(name: str, required: tuple[str, ...], optional: tuple[str, ...] = ()):
    """Add an op builder to :data:`OPS` (a duplicate name is an error)."""

    def deco(fn: OpBuilder) -> OpBuilder:
        if name in OPS:
            raise ValueError(f"op {name!r} is already registered")
        OPS[name] = fn
        OP_PARAMS[name] = (required, optional)
        return fn

    return deco


def _size(dtype: str) -> float:
    return DTYPE_SIZE[canonical_dtype(dtype)]


@register_op("matmul", ("m", "n", "k", "dtype"), ("a_dtype", "b_dtype", "out_dtype", "acc_dtype"))
def matmul(m: float, n: float, k: float, dtype: str = "bf16", *, a_dtype: str | None = None,
           b_dtype: str | None = None, out_dtype: str | None = None, acc_dtype: str | None = None,
           name: str = "matmul") -> Kernel:
    """``A[m,k] @ B[k,n]``: FLOPs ``2mnk``, bytes ``mk·|a| + kn·|b| + mn·|out|``."""
    dtype = canonical_dtype(dtype)
    a, b, out = _size(a_dtype or dtype), _size(b_dtype or dtype), _size(out_dtype or dtype)
    flops = 2.0 * m * n * k
    nbytes = m * k * a + k * n * b + m * n * out
    return Kernel(name=name, flops=flops, bytes={OFFCHIP: nbytes}, precision=dtype, unit="matrix")


@register_op("elementwise", ("elements", "dtype"), ("flops_per_element", "inputs", "outputs"))
def elementwise(elements: float, dtype: str = "bf16", *, flops_per_element: float = 1.0, inputs: int = 1,
                outputs: int = 1, name: str = "elementwise") -> Kernel:
    """FLOPs ``elements·flops_per_element``; bytes ``(inputs + outputs)·elements·|dtype|``."""
    s = _size(dtype)
    return Kernel(name=name, flops=elements * flops_per_element, bytes={OFFCHIP: (inputs + outputs) * elements * s},
                  precision=canonical_dtype(dtype), unit="vector")


@register_op("layernorm", ("rows", "hidden", "dtype"))
def layernorm(rows: float, hidden: float, dtype: str = "bf16", *, name: str = "layernorm") -> Kernel:
    """FLOPs ``10·rows·hidden``; bytes ``(3·rows·hidden + 2·hidden)·|dtype|``."""
    elements = rows * hidden
    s = _size(dtype)
    return Kernel(name=name, flops=10.0 * elements, bytes={OFFCHIP: (3.0 * elements + 2.0 * hidden) * s},
                  precision=canonical_dtype(dtype), unit="vector")


@register_op("dot", ("n", "dtype"))
def dot(n: float, dtype: str = "bf16", *, name: str = "dot") -> Kernel:
    """FLOPs ``2n − 1``; bytes ``(2n + 1)·|dtype|``."""
    s = _size(dtype)
    return Kernel(name=name, flops=2.0 * n - 1.0, bytes={OFFCHIP: (2.0 * n + 1.0) * s},
                  precision=canonical_dtype(dtype), unit="vector")


_INT_PARAMS = {"inputs", "outputs"}
_DTYPE_PARAMS = {"dtype", "a_dtype", "b_dtype", "out_dtype", "acc_dtype"}


def build(op: str, params: Mapping[str, Any], *, name: str, where: str) -> Kernel:
    """Build one launch of ``op`` from YAML parameters, checking names, types and signs."""
    if op not in OPS:
        import difflib

        close = difflib.get_close_matches(op, list(OPS), n=1)
        raise InputError(where=f"{where}.op", expected="one of " + ", ".join(sorted(OPS)), found=repr(op),
                         hint=f"did you mean {close[0]!r}?" if close else "or give flops and bytes as numbers.")
    required, optional = OP_PARAMS[op]
    missing = [p for p in required if p not in params and p != "dtype"]
    if missing:
        raise InputError(where=where, expected=f"parameter '{missing[0]}' for op {op}", found="none",
                         hint=f"{op} takes {', '.join(required)}" + (f"; optional {', '.join(optional)}" if optional else "") + ".")
    unknown = [p for p in params if p not in required and p not in optional]
    if unknown:
        raise InputError(where=f"{where}.{unknown[0]}", expected=f"a parameter of {op}: {', '.join(required + optional)}",
                         found=f"unknown parameter {unknown[0]!r}")
    kwargs: dict[str, Any] = {}
    for key, value in params.items():
        if key in _DTYPE_PARAMS:
            kwargs[key] = canonical_dtype(value, where=f"{where}.{key}")
            continue
        try:
            number = float(str(value).replace(",", "").replace("_", "")) if not isinstance(value, bool) else None
        except ValueError:
            number = None
        if number is None or number != number or number < 0 or number in (float("inf"),):
            raise InputError(where=f"{where}.{key}", expected="a non-negative number", found=repr(value))
        kwargs[key] = int(number) if key in _INT_PARAMS else number
    return OPS[op](name=name, **kwargs)
