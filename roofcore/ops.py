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
- ``layernorm`` over ``rows × hidden``: FLOPs ``7·elements`` with ``affine`` (default), ``5·elements``
  without: the normalisation 5 (sum for the mean, subtract, square, sum for the variance, multiply by
  ``rstd``; the per-row ``rsqrt`` not counted, as fvcore's and DeepSpeed's flop counters count 5 per
  element) + the affine ``γ·x̂ + β`` 2 (a multiply and an add); bytes ``(2·elements + 2·hidden)·|dtype|``
  (without ``affine``: ``2·elements·|dtype|``): the input read once (a row stays on chip for both the
  statistics and the normalising pass, as PyTorch's ``vectorized_layer_norm_kernel`` keeps it in
  registers), the output written once, γ and β read once; the per-row mean and ``rstd`` it saves (8 B a
  row, under 1% from ``hidden`` 256 in bf16) are not counted; vector unit.
- ``dot`` of two ``n``-vectors: FLOPs ``2n − 1`` (n multiplies, n − 1 adds); bytes ``(2n + 1)·|dtype|``
  (both vectors read, one scalar written); intensity → 1/2 FLOP/B in bf16 (§4.1); vector unit.
- ``batched_matmul``: ``batch`` independent ``A[m,k] @ B[k,n]``: ``batch ×`` the matmul FLOPs and bytes
  (every operand is per batch entry; a shared operand is a plain ``matmul`` with ``m·batch`` rows);
  ``a_dtype``/``b_dtype``/``out_dtype`` as for ``matmul``; matrix unit.
- ``softmax`` over ``rows × cols`` (along ``cols``): FLOPs ``5·elements`` (max, subtract, exp, sum,
  divide); bytes ``2·elements·|dtype|`` (read once, write once: the row stays on chip); vector unit.
- ``rmsnorm`` over ``rows × hidden``: FLOPs ``4·elements`` (square, sum, scale by ``rsqrt`` of the
  mean, multiply by γ; the per-row ``rsqrt`` is not counted); bytes ``(2·elements + hidden)·|dtype|``
  (``x`` read once, a row kept on chip for both passes, ``y`` written once, γ read once); vector unit.
- ``flash_attention`` (``batch B, heads H, kv_heads Hkv`` (default ``H``), ``q_len q, kv_len s,
  head_dim d``): FLOPs ``4·B·H·d·P`` (``QKᵀ`` and ``PV``, 2 FLOPs per multiply-add each) where ``P``
  is the number of (query, key) pairs: ``q·s``, or with ``causal`` (queries are the last ``q``
  positions of the ``s`` keys) ``q·s − q(q−1)/2`` for ``q ≤ s`` (≈ halved for ``q = s``; a single
  decode query sees all ``s`` keys) and ``s(s+1)/2`` for ``q > s``; softmax FLOPs are not counted
  (they are ``O(B·H·P)``, small against ``4·d`` per pair). Bytes: the flash-fused traffic, every
  tensor moved once: ``Q`` and ``O`` (``B·H·q·d`` each at ``dtype``) plus ``K`` and ``V`` (``B·Hkv·s·d``
  each at ``kv_dtype``, default ``dtype``; GQA/MQA share them over ``H/Hkv`` heads). The score
  matrix never leaves the chip. This is a lower bound: a real kernel re-reads ``K``/``V`` once per
  query tile that does not fit on chip. Causal masking does not reduce the bytes. Matrix unit.
- ``conv2d`` (``n, c, h, w`` input NCHW, ``k`` filters of ``c × r × s``, ``stride`` default 1,
  ``padding`` default 0, no dilation, no groups): output ``P = ⌊(h + 2·padding − r)/stride⌋ + 1``,
  ``Q = ⌊(w + 2·padding − s)/stride⌋ + 1``; FLOPs ``2·n·k·c·r·s·P·Q``; bytes
  ``(n·c·h·w + k·c·r·s + n·k·P·Q)·|dtype|`` (input, weights, output each moved once); matrix unit
  (implicit GEMM).
- ``embedding`` gather of ``tokens`` rows of a ``vocab × hidden`` table: FLOPs 0; bytes
  ``tokens·hidden·|dtype|`` read (one row per token; repeated tokens are not deduplicated) +
  ``8·tokens`` (int64 indices) + ``tokens·hidden·|out|`` written (``out_dtype`` default ``dtype``).
  ``vocab`` only bounds the table (``vocab·hidden·|dtype|`` bytes, not all read); vector unit.
- ``per_example_matmul`` ``X[B,D] · Y[B,D,F] → Z[B,F]`` (a weight matrix per example): FLOPs
  ``2·B·D·F``; bytes ``(B·D + B·D·F + B·F)·|dtype|``; intensity in bf16 ``DF/(D + DF + F)`` → 1
  FLOP/B for large ``D, F`` (seed §12.1): bandwidth-bound at any batch; matrix unit.
- Collectives ``all_reduce``, ``all_gather``, ``reduce_scatter``, ``all_to_all`` over ``chips N``.
  ``message_bytes S`` is the full buffer per chip: the all-reduce buffer, the all-gather *output*,
  the reduce-scatter *input*, the all-to-all send buffer (NCCL's "size" convention). The link bytes
  are the bytes each chip sends over its busiest link direction (= the bytes it receives; link
  bandwidths in the catalog are per direction), on the link named by ``link`` (default ``nvlink``):

  ===============  ======================================  ===========================================
  collective       ``ring``                                ``tree``
  ===============  ======================================  ===========================================
  all_reduce       ``2·(N−1)/N·S`` (reduce-scatter then    ``2·⌈log2 N⌉·S``: an unpipelined binary tree,
                   all-gather, ``N−1`` steps each)         reduce to a root then broadcast, the whole
                                                           buffer over one link per step (latency-
                                                           optimal, bandwidth-poor for large ``S``)
  all_gather       ``(N−1)/N·S``                           ``(N−1)/N·S`` (recursive doubling: same
                                                           bytes in ``⌈log2 N⌉`` steps)
  reduce_scatter   ``(N−1)/N·S``                           ``(N−1)/N·S`` (recursive halving)
  all_to_all       ``(N−1)/N·S`` (``S/N`` to each peer)    same bytes (pairwise exchange)
  ===============  ======================================  ===========================================

  Off-chip (``hbm``) bytes: the buffers read and written once, staging copies ignored: all-reduce
  ``2·S``; all-gather ``S/N + S``; reduce-scatter ``S + S/N``; all-to-all ``2·S``. Reduction FLOPs
  (one add per received element, at ``dtype``): all-reduce and reduce-scatter ``(N−1)/N·S/|dtype|``
  (ring, and reduce-scatter's recursive halving), tree all-reduce ``⌈log2 N⌉·S/|dtype|`` (the adds on
  the critical path); all-gather and all-to-all 0. ``N = 1`` moves nothing over the link. Vector unit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .errors import InputError, UnitError
from .models import DTYPE_SIZE, OFFCHIP, Kernel, canonical_dtype, canonical_level
from .units import Dimension, parse

OpBuilder = Callable[..., Kernel]
_Builder = TypeVar("_Builder", bound=OpBuilder)
OPS: dict[str, OpBuilder] = {}
#: required and optional parameters per op, for messages and docs
OP_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def register_op(name: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
                ) -> Callable[[_Builder], _Builder]:
    """Add an op builder to :data:`OPS` (a duplicate name is an error)."""

    def deco(fn: _Builder) -> _Builder:
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


@register_op("layernorm", ("rows", "hidden", "dtype"), ("affine",))
def layernorm(rows: float, hidden: float, dtype: str = "bf16", *, affine: bool = True,
              name: str = "layernorm") -> Kernel:
    """FLOPs ``7·rows·hidden`` (``5·`` without ``affine``); bytes ``(2·rows·hidden + 2·hidden)·|dtype|`` (no γ, β
    without ``affine``): one read of the input, one write of the output, the parameters."""
    elements = rows * hidden
    s = _size(dtype)
    params = 2.0 * hidden if affine else 0.0
    return Kernel(name=name, flops=(7.0 if affine else 5.0) * elements, bytes={OFFCHIP: (2.0 * elements + params) * s},
                  precision=canonical_dtype(dtype), unit="vector")


@register_op("dot", ("n", "dtype"))
def dot(n: float, dtype: str = "bf16", *, name: str = "dot") -> Kernel:
    """FLOPs ``2n − 1``; bytes ``(2n + 1)·|dtype|``."""
    s = _size(dtype)
    return Kernel(name=name, flops=2.0 * n - 1.0, bytes={OFFCHIP: (2.0 * n + 1.0) * s},
                  precision=canonical_dtype(dtype), unit="vector")


@register_op("batched_matmul", ("batch", "m", "n", "k", "dtype"), ("a_dtype", "b_dtype", "out_dtype", "acc_dtype"))
def batched_matmul(batch: float, m: float, n: float, k: float, dtype: str = "bf16", *, a_dtype: str | None = None,
                   b_dtype: str | None = None, out_dtype: str | None = None, acc_dtype: str | None = None,
                   name: str = "batched_matmul") -> Kernel:
    """``batch`` independent ``A[m,k] @ B[k,n]``: FLOPs ``2·batch·mnk``, bytes ``batch·(mk·|a| + kn·|b| + mn·|out|)``."""
    one = matmul(m, n, k, dtype, a_dtype=a_dtype, b_dtype=b_dtype, out_dtype=out_dtype, acc_dtype=acc_dtype, name=name)
    return Kernel(name=name, flops=batch * one.flops, bytes={OFFCHIP: batch * one.bytes[OFFCHIP]},
                  precision=one.precision, unit="matrix")


@register_op("softmax", ("rows", "cols", "dtype"))
def softmax(rows: float, cols: float, dtype: str = "bf16", *, name: str = "softmax") -> Kernel:
    """FLOPs ``5·rows·cols`` (max, subtract, exp, sum, divide); bytes ``2·rows·cols·|dtype|``."""
    elements = rows * cols
    return Kernel(name=name, flops=5.0 * elements, bytes={OFFCHIP: 2.0 * elements * _size(dtype)},
                  precision=canonical_dtype(dtype), unit="vector")


@register_op("rmsnorm", ("rows", "hidden", "dtype"))
def rmsnorm(rows: float, hidden: float, dtype: str = "bf16", *, name: str = "rmsnorm") -> Kernel:
    """FLOPs ``4·rows·hidden``; bytes ``(2·rows·hidden + hidden)·|dtype|``."""
    elements = rows * hidden
    return Kernel(name=name, flops=4.0 * elements, bytes={OFFCHIP: (2.0 * elements + hidden) * _size(dtype)},
                  precision=canonical_dtype(dtype), unit="vector")


def attention_pairs(q_len: float, kv_len: float, causal: bool) -> float:
    """(query, key) pairs attention computes: ``q·s``, or causal ``q·s − q(q−1)/2`` (``q ≤ s``), ``s(s+1)/2`` (``q > s``)."""
    if not causal:
        return q_len * kv_len
    if q_len <= kv_len:
        return q_len * kv_len - q_len * (q_len - 1) / 2.0
    return kv_len * (kv_len + 1) / 2.0


@register_op("flash_attention", ("batch", "heads", "q_len", "kv_len", "head_dim", "dtype"),
             ("kv_heads", "causal", "kv_dtype"))
def flash_attention(batch: float, heads: float, q_len: float, kv_len: float, head_dim: float, dtype: str = "bf16", *,
                    kv_heads: float | None = None, causal: bool = False, kv_dtype: str | None = None,
                    name: str = "flash_attention") -> Kernel:
    """FLOPs ``4·B·H·d·pairs``; bytes ``2·B·H·q·d·|dtype| + 2·B·Hkv·s·d·|kv_dtype|`` (Q, O, K, V moved once)."""
    kvh = heads if kv_heads is None else kv_heads
    if kvh <= 0 or heads % kvh:
        raise InputError(where="kv_heads", expected=f"a positive divisor of heads ({heads:g})", found=f"{kvh:g}",
                         hint="grouped-query attention shares each K/V head over heads/kv_heads query heads.")
    flops = 4.0 * batch * heads * head_dim * attention_pairs(q_len, kv_len, causal)
    nbytes = 2.0 * batch * heads * q_len * head_dim * _size(dtype) + 2.0 * batch * kvh * kv_len * head_dim * _size(
        kv_dtype or dtype)
    return Kernel(name=name, flops=flops, bytes={OFFCHIP: nbytes}, precision=canonical_dtype(dtype), unit="matrix")


def conv_output(size: float, kernel: float, stride: float, padding: float, param: str = "r") -> int:
    """Output extent of a convolution: ``⌊(size + 2·padding − kernel)/stride⌋ + 1``."""
    if stride <= 0:
        raise InputError(where="stride", expected="a stride ≥ 1", found=f"{stride:g}")
    out = math.floor((size + 2 * padding - kernel) / stride) + 1
    if out < 1:
        raise InputError(where=param, expected=f"a filter that fits the padded input ({size:g} + 2·{padding:g})",
                         found=f"filter {kernel:g}", hint="use a smaller filter or more padding.")
    return out


@register_op("conv2d", ("n", "c", "h", "w", "k", "r", "s", "dtype"), ("stride", "padding"))
def conv2d(n: float, c: float, h: float, w: float, k: float, r: float, s: float, dtype: str = "bf16", *,
           stride: float = 1, padding: float = 0, name: str = "conv2d") -> Kernel:
    """FLOPs ``2·n·k·c·r·s·P·Q``; bytes ``(n·c·h·w + k·c·r·s + n·k·P·Q)·|dtype|``."""
    p, q = conv_output(h, r, stride, padding, "r"), conv_output(w, s, stride, padding, "s")
    flops = 2.0 * n * k * c * r * s * p * q
    nbytes = (n * c * h * w + k * c * r * s + n * k * p * q) * _size(dtype)
    return Kernel(name=name, flops=flops, bytes={OFFCHIP: nbytes}, precision=canonical_dtype(dtype), unit="matrix")


#: bytes per gather index (int64)
INDEX_BYTES = 8


@register_op("embedding", ("tokens", "hidden", "vocab", "dtype"), ("out_dtype",))
def embedding(tokens: float, hidden: float, vocab: float, dtype: str = "bf16", *, out_dtype: str | None = None,
              name: str = "embedding") -> Kernel:
    """FLOPs 0; bytes ``tokens·hidden·|dtype| + 8·tokens + tokens·hidden·|out|``."""
    if vocab < 1:
        raise InputError(where="vocab", expected="a vocabulary of at least one row", found=f"{vocab:g}")
    nbytes = tokens * hidden * _size(dtype) + INDEX_BYTES * tokens + tokens * hidden * _size(out_dtype or dtype)
    return Kernel(name=name, flops=0.0, bytes={OFFCHIP: nbytes}, precision=canonical_dtype(dtype), unit="vector")


@register_op("per_example_matmul", ("batch", "d", "f", "dtype"))
def per_example_matmul(batch: float, d: float, f: float, dtype: str = "bf16", *,
                       name: str = "per_example_matmul") -> Kernel:
    """``X[B,D]·Y[B,D,F]``: FLOPs ``2·B·D·F``; bytes ``(B·D + B·D·F + B·F)·|dtype|`` (intensity → 1 in bf16)."""
    flops = 2.0 * batch * d * f
    nbytes = (batch * d + batch * d * f + batch * f) * _size(dtype)
    return Kernel(name=name, flops=flops, bytes={OFFCHIP: nbytes}, precision=canonical_dtype(dtype), unit="matrix")


ALGORITHMS = ("ring", "tree")
DEFAULT_LINK = "nvlink"
_LINK_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _link_name(link: str) -> str:
    text = str(link).strip().lower()
    if not _LINK_NAME.match(text) or canonical_level(text) == OFFCHIP:
        raise InputError(where="link", expected="an interconnect name such as nvlink, ici, xgmi or pcie",
                         found=repr(link), hint="collective bytes go on a link roof, not on the off-chip memory.")
    return text


def _collective(kind: str, message_bytes: float, chips: float, algorithm: str, dtype: str, link: str,
                name: str) -> Kernel:
    if chips < 1 or chips != int(chips):
        raise InputError(where="chips", expected="a whole number of chips ≥ 1", found=f"{chips:g}")
    if algorithm not in ALGORITHMS:
        raise InputError(where="algorithm", expected=" or ".join(ALGORITHMS), found=repr(algorithm))
    n, s = int(chips), float(message_bytes)
    frac = (n - 1) / n
    steps = math.ceil(math.log2(n)) if n > 1 else 0
    elements = s / _size(dtype)
    if kind == "all_reduce":
        link_bytes = 2.0 * frac * s if algorithm == "ring" else 2.0 * steps * s
        flops = frac * elements if algorithm == "ring" else steps * elements
        hbm = 2.0 * s
    elif kind == "all_gather":
        link_bytes, flops, hbm = frac * s, 0.0, s / n + s
    elif kind == "reduce_scatter":
        link_bytes, flops, hbm = frac * s, frac * elements, s + s / n
    else:  # all_to_all
        link_bytes, flops, hbm = frac * s, 0.0, 2.0 * s
    return Kernel(name=name, flops=flops, bytes={OFFCHIP: hbm, _link_name(link): link_bytes},
                  precision=canonical_dtype(dtype), unit="vector")


_COLLECTIVE_OPTIONAL = ("algorithm", "link")


@register_op("all_reduce", ("message_bytes", "chips", "dtype"), _COLLECTIVE_OPTIONAL)
def all_reduce(message_bytes: float, chips: float, dtype: str = "bf16", *, algorithm: str = "ring",
               link: str = DEFAULT_LINK, name: str = "all_reduce") -> Kernel:
    """Link bytes ring ``2·(N−1)/N·S``, tree ``2·⌈log2 N⌉·S``; hbm ``2·S``; FLOPs ring ``(N−1)/N·S/|dtype|``."""
    return _collective("all_reduce", message_bytes, chips, algorithm, dtype, link, name)


@register_op("all_gather", ("message_bytes", "chips", "dtype"), _COLLECTIVE_OPTIONAL)
def all_gather(message_bytes: float, chips: float, dtype: str = "bf16", *, algorithm: str = "ring",
               link: str = DEFAULT_LINK, name: str = "all_gather") -> Kernel:
    """Link bytes ``(N−1)/N·S`` (``S`` = gathered output); hbm ``S/N + S``; FLOPs 0."""
    return _collective("all_gather", message_bytes, chips, algorithm, dtype, link, name)


@register_op("reduce_scatter", ("message_bytes", "chips", "dtype"), _COLLECTIVE_OPTIONAL)
def reduce_scatter(message_bytes: float, chips: float, dtype: str = "bf16", *, algorithm: str = "ring",
                   link: str = DEFAULT_LINK, name: str = "reduce_scatter") -> Kernel:
    """Link bytes ``(N−1)/N·S`` (``S`` = input); hbm ``S + S/N``; FLOPs ``(N−1)/N·S/|dtype|``."""
    return _collective("reduce_scatter", message_bytes, chips, algorithm, dtype, link, name)


@register_op("all_to_all", ("message_bytes", "chips", "dtype"), _COLLECTIVE_OPTIONAL)
def all_to_all(message_bytes: float, chips: float, dtype: str = "bf16", *, algorithm: str = "ring",
               link: str = DEFAULT_LINK, name: str = "all_to_all") -> Kernel:
    """Link bytes ``(N−1)/N·S`` (``S/N`` to each peer); hbm ``2·S``; FLOPs 0."""
    return _collective("all_to_all", message_bytes, chips, algorithm, dtype, link, name)


_INT_PARAMS = {"inputs", "outputs"}
_DTYPE_PARAMS = {"dtype", "a_dtype", "b_dtype", "out_dtype", "acc_dtype", "kv_dtype"}
#: text parameters and their allowed values (None: checked by the op)
_TEXT_PARAMS: dict[str, tuple[str, ...] | None] = {"algorithm": ALGORITHMS, "link": None}
_BOOL_PARAMS = {"causal", "affine"}
#: numeric parameters that may carry a byte unit ("64 MiB")
_BYTE_PARAMS = {"message_bytes"}


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
        if key in _TEXT_PARAMS:
            allowed = _TEXT_PARAMS[key]
            text = str(value).strip().lower()
            if not isinstance(value, str) or (allowed is not None and text not in allowed):
                raise InputError(where=f"{where}.{key}", expected=" or ".join(allowed) if allowed else "a name",
                                 found=repr(value))
            kwargs[key] = text
            continue
        if key in _BOOL_PARAMS:
            if not isinstance(value, bool):
                raise InputError(where=f"{where}.{key}", expected="true or false", found=repr(value))
            kwargs[key] = value
            continue
        if key in _BYTE_PARAMS and isinstance(value, str) and re.search(r"[A-Za-z]", value):
            try:
                kwargs[key] = parse(value, Dimension.BYTES, where=f"{where}.{key}")
            except UnitError as e:
                raise InputError(where=e.where, expected=e.expected, found=e.found, hint=e.hint) from None
            continue
        try:
            number = float(str(value).replace(",", "").replace("_", "")) if not isinstance(value, bool) else None
        except ValueError:
            number = None
        if number is None or number != number or number < 0 or number in (float("inf"),):
            raise InputError(where=f"{where}.{key}", expected="a non-negative number", found=repr(value))
        kwargs[key] = int(number) if key in _INT_PARAMS else number
    try:
        return OPS[op](name=name, **kwargs)
    except InputError as e:  # an op's own check names the parameter; place it in the input
        at = f"{where}.{e.where}" if e.where else where
        raise InputError(where=at, expected=e.expected, found=e.found, hint=e.hint, text=e.text) from None
