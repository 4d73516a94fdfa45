"""Inference and vendor ops in PyTorch traces: scaled (FP8/FP4) and grouped GEMMs, mixture-of-experts, paged and
variable-length attention, fused norms, activations, quantisation and KV-cache writes (vLLM ``_C::*``,
``_C_cache_ops::*``, ``vllm::*``; SGLang ``sgl_kernel::*``; ``flash_attn::*``).

Every formula counts each input read once and each output written once (off-chip bytes), as :mod:`.kineto_ops`
does; argument positions are those of the op's schema (vLLM ``csrc/torch_bindings.cpp``, PyTorch
``native_functions.yaml``). FLOPs per family:

* ``aten::_scaled_mm``, ``_C::cutlass_scaled_mm``, ``_C::cutlass_scaled_fp4_mm``: ``2·M·N·K``; bytes A + B +
  their scales (per-tensor, row-wise or block scales: the scale tensors' recorded sizes) + bias + the output at
  ``out_dtype`` (``Concrete Inputs``; else PyTorch's default: ``mat1``'s dtype). FP4 operands are packed two per byte
  (``Float4_e2m1fn_x2`` / ``uint8``): the logical ``K`` is twice the recorded one. Precision fp8 / fp4.
* ``aten::_grouped_mm``, ``aten::_scaled_grouped_mm`` (groups split by ``offs``): ``A[M,K] @ B[G,K,N]`` (each
  row of A in one group) ``2·M·N·K``; ``A[G,M,K] @ B[G,K,N]`` ``2·G·M·N·K``; ``A[M,K] @ B[K,N]`` split along
  ``K`` (a weight gradient, output ``[G,M,N]``) ``2·M·N·K``. Bytes A + B (every group's weights) + scales + out
  (at ``out_dtype``; else bf16 for the scaled op, ``mat_a``'s dtype for the plain one, PyTorch's defaults).
* Fused MoE (``vllm::inplace_fused_experts`` / ``outplace_fused_experts`` / ``rocm_aiter_fused_moe``: hidden
  ``[T,H]``, ``w1[E,(1+g)·I,H]``, ``w2[E,H,I]``, top-k ids ``[T,k]``; ``g`` = 1 when ``w1`` holds gate and up):
  FLOPs ``2·T·k·H·I·(2+g) + 2·T·k·H`` (the up/gate and down GEMMs of every routed token, and the weighted sum of
  its ``k`` expert outputs); bytes ``T·H·|a|`` (hidden) + ``E_act·(2+g)·H·I·|w|`` (the weights of the experts
  hit) + ``2·T·k·I·|a|`` (the intermediate written and read) + ``T·H·|a|`` (output) + the top-k ids and
  weights. Without per-expert token counts in the trace routing is taken as uniform: the expected number of
  experts hit by ``T`` tokens choosing ``k`` of ``E`` is ``E_act = E·(1 − (1 − k/E)^T)`` (TraceLens' MoE model
  uses the same estimate), and the warning says so. Packed 4-bit weights (``uint8``): ``I`` is twice ``w2``'s
  last dimension.
* ``vllm::moe_forward`` / ``moe_forward_shared`` (hidden ``[T,H]``, router logits ``[T,E]``): top-k and the
  intermediate size are not arguments; they are read from the buffers the op allocates while it runs (its
  ``aten::empty`` children: the top-k expert ids ``[T,k]`` of an integer type, the expert activations
  ``[R,I]`` with ``R ≥ T·k`` rows and ``I ≠ H``), unless a fused-experts op runs inside it (vLLM's Triton path:
  that child is costed, the MoE op's own kernels are not counted twice); the weights' precision from the names of the GEMM kernels it
  launches (``E2m1``/``fp4`` → FP4 with one 1-byte scale per 32 values, ``E4m3``/``fp8`` → FP8, else the
  hidden state's), the activations' from the same names; gated (SwiGLU) experts are assumed. Each of these is
  said in the warning. Missing any of them: unknown.
* ``_C::rms_norm`` (``out, input, weight``): :func:`roofcore.ops.rmsnorm`; ``_C::fused_add_rms_norm``
  (``input, residual, weight``, both updated in place): rmsnorm FLOPs + ``rows·hidden`` (the add); bytes
  ``4·rows·hidden·|x| + hidden·|w|`` (input and residual read and written). The ``*_static_fp8_quant`` variants
  add one FLOP per element (the scale) and write the output at its FP8 size.
* ``_C::silu_and_mul``, ``gelu_and_mul``, ``gelu_tanh_and_mul``, ``mul_and_silu``, ``swigluoai_and_mul``,
  ``fatrelu_and_mul`` (``out[T,d]``, ``input[T,2d]``): 2 FLOPs per output element (the activation and the
  product, counted 1 each as PyTorch's counter counts elementwise ops); bytes input + output.
* ``_C::static_scaled_fp8_quant`` (``out, input, scale``): 1 FLOP per element; bytes input + output + scale.
  ``_C::dynamic_scaled_fp8_quant``: 2 FLOPs per element (the absolute maximum, then the scale), the input read
  twice (a reduction pass over the whole tensor before the scaling pass). ``_C::dynamic_per_token_scaled_fp8_quant``
  and ``_C::scaled_fp4_quant``: 2 FLOPs per element, input read once (a row or block stays on chip) + outputs.
* ``_C_cache_ops::reshape_and_cache(_flash)`` (``key[T,Hkv,D], value, key_cache, value_cache, slot_mapping``):
  bytes ``key + value`` read, the same elements written at the cache's element size, and the int64 slots;
  FLOPs 1 per element when the cache has another element size (an FP8 cache: scaled), else 0.
* ``flash_attn::_flash_attn_varlen_forward`` (``q[Tq,H,d], k[Tk,Hkv,d], v, cu_seqlens_q, cu_seqlens_k,
  max_seqlen_q, max_seqlen_k, dropout, scale, causal``): :func:`roofcore.ops.flash_attention` per sequence.
  The sequence lengths (``cu_seqlens``' values) are not recorded, only their count ``b+1`` and the maxima: when
  ``Tq = b·max_q`` and ``Tk = b·max_k`` every sequence has the maximum length (exact); otherwise equal lengths
  ``Tq/b`` and ``Tk/b`` are assumed and the warning says so.
* Transformer Engine's GEMMs: :mod:`.kineto_te`.
* ``flash_attn::_flash_attn_forward`` (``q[B,S,H,d], k[B,Skv,Hkv,d], v, dropout, scale, causal,
  window_size_left, window_size_right``): :func:`roofcore.ops.flash_attention`. A local (sliding) window,
  here and in the varlen op (``window_size_left/right`` at 10, 11), counts only the pairs inside it: the query at
  position ``p`` sees keys ``[p − left, p + right]`` (``-1`` unbounded; causal caps at ``p``).
* ``vllm::unified_attention(_with_output)``: the KV lengths live in vLLM's forward context, not in the op's
  arguments (only this step's new ``q``, ``k``, ``v``): FLOPs and bytes unknown, and the warning says why.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import ops
from ..errors import InputError
from .kineto_args import CostFn, Result, TensorArg, arg_at, concrete_at, truthy

if TYPE_CHECKING:
    from .kineto_events import Signature

#: c10 ScalarType codes as ``Concrete Inputs`` print a dtype argument → bytes per element, precision
SCALAR_TYPES: dict[int, tuple[float, str | None]] = {
    0: (1, None), 1: (1, "int8"), 2: (2, None), 3: (4, None), 4: (8, None), 5: (2, "fp16"), 6: (4, "fp32"),
    7: (8, "fp64"), 11: (1, None), 15: (2, "bf16"), 23: (1, "fp8"), 24: (1, "fp8"), 25: (1, "fp8"), 26: (1, "fp8"),
}
_INT_CODES = {0, 1, 2, 3, 4}

UNIFORM = ("uniform MoE routing assumed (the trace has no tokens per expert): the experts hit estimated as "
           "E·(1 − (1 − k/E)^T).")
ATTENTION_UNKNOWN = ("vLLM's unified attention records only this step's new q, k and v, not the KV lengths "
                     "(they live in vLLM's forward context): its FLOPs and bytes are unknown.")
MOE_UNKNOWN = ("a MoE op's top-k and intermediate size are neither among its arguments nor found in the buffers "
               "it allocates (top-k ids [T, k], activations [≥ T·k, I]): its FLOPs and bytes are unknown.")
VARLEN_EQUAL = ("a variable-length attention's sequence lengths (cu_seqlens values) are not recorded: equal "
                "lengths (total tokens / sequences) assumed.")


def _packed(t: TensorArg) -> bool:
    """A 4-bit operand packed two per byte (``Float4_e2m1fn_x2``, or ``uint8`` beside FP8 data)."""
    return t.prec == "fp4" or (t.prec is None and t.size == 1)


def _out_dtype(concrete: object, at: int, default: float) -> float:
    """Bytes per output element: the ``out_dtype`` argument (a ScalarType code), else ``default``."""
    text = concrete_at(concrete, at)
    code = int(text) if text and re.fullmatch(r"\d+", text) else None
    spec = SCALAR_TYPES.get(code) if code is not None else None
    return spec[0] if spec else default


def _scaled_mm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``aten::_scaled_mm(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)``."""
    a, b = arg_at(ts, 0), arg_at(ts, 1)
    if a is None or b is None or len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
        return None
    m, k, n = a.shape[0], a.shape[1] * (2 if _packed(a) else 1), b.shape[1]
    extra = sum(t.bytes for t in (arg_at(ts, 2), arg_at(ts, 3), arg_at(ts, 4), arg_at(ts, 5)) if t is not None)
    out = m * n * _out_dtype(concrete, 6, a.size)  # PyTorch: out_dtype defaults to mat1's
    prec = "fp4" if _packed(a) else a.prec or "fp8"
    return 2.0 * m * n * k, float(a.bytes + b.bytes + extra + out), prec, "matrix", False


def _cutlass_scaled_mm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """vLLM ``_C::cutlass_scaled_mm(out[M,N], a[M,K], b[K,N], a_scales, b_scales, bias)`` and
    ``_C::cutlass_scaled_fp4_mm(out[M,N], a[M,K/2], b[N,K/2], a_sf, b_sf, alpha)``."""
    out, a, b = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 2)
    if out is None or a is None or b is None or len(a.shape) != 2 or len(b.shape) != 2 or len(out.shape) != 2:
        return None
    fp4 = "fp4" in name
    m, n = out.shape
    k = a.shape[1] * (2 if fp4 else 1)
    if (b.shape[1] if fp4 else b.shape[0]) * (2 if fp4 else 1) != k or a.shape[0] != m:
        return None
    extra = sum(t.bytes for t in ts[3:] if t is not None)
    return 2.0 * m * n * k, float(a.bytes + b.bytes + extra + out.bytes), "fp4" if fp4 else (a.prec or "int8"), \
        "matrix", False


def _grouped_mm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``aten::_grouped_mm(mat_a, mat_b, offs, bias, out_dtype)``; ``_scaled_grouped_mm(mat_a, mat_b, scale_a,
    scale_b, offs, bias, scale_result, out_dtype, use_fast_accum)``."""
    scaled = "scaled" in name
    a, b = arg_at(ts, 0), arg_at(ts, 1)
    offs = arg_at(ts, 4 if scaled else 2)
    if a is None or b is None or (a.prec is None and not scaled):
        return None
    out_size = _out_dtype(concrete, 7 if scaled else 4, 2.0 if scaled else a.size)  # PyTorch's defaults: bf16, mat_a's
    if len(a.shape) == 2 and len(b.shape) == 3 and a.shape[1] == b.shape[1]:
        (m, k), n = a.shape, b.shape[2]
        flops, out = 2.0 * m * n * k, m * n
    elif len(a.shape) == 3 and len(b.shape) == 3 and a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1]:
        g, m, k = a.shape
        n = b.shape[2]
        flops, out = 2.0 * g * m * n * k, g * m * n
    elif len(a.shape) == 2 and len(b.shape) == 2 and a.shape[1] == b.shape[0] and offs is not None:
        (m, k), n = a.shape, b.shape[1]
        flops, out = 2.0 * m * n * k, offs.numel * m * n
    else:
        return None
    extra = sum(t.bytes for t in ts[2:] if t is not None)
    return flops, float(a.bytes + b.bytes + extra + out * out_size), a.prec or "fp8", "matrix", False


def moe_cost(tokens: float, hidden: float, inter: float, experts: float, topk: float, gated: bool, a_size: float,
             w_size: float, out_size: float, prec: str | None, extra: float = 0.0, note: bool | str = UNIFORM
             ) -> Result | None:
    """FLOPs and bytes of a fused MoE layer (see the module docstring): ``w_size`` bytes per weight (with its
    scales); ``extra`` bytes read besides (router logits, top-k ids and weights)."""
    if min(tokens, hidden, inter, experts, topk) <= 0 or topk > experts:
        return None
    rows = tokens * topk
    up = 2.0 if gated else 1.0
    flops = 2.0 * rows * hidden * inter * (up + 1.0) + 2.0 * rows * hidden
    active = experts * (1.0 - (1.0 - topk / experts) ** tokens)
    nbytes = (tokens * hidden * a_size + active * (up + 1.0) * hidden * inter * w_size + 2.0 * rows * inter * a_size
              + tokens * hidden * out_size + extra)
    return flops, float(nbytes), prec, "matrix", note


def _fused_experts(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``(hidden_states[T,H], w1[E,(1+g)I,H'], w2[E,H,I'], topk_weights[T,k], topk_ids[T,k], ...)``."""
    x, w1, w2, tw, ti = (arg_at(ts, i) for i in range(5))
    if x is None or w1 is None or w2 is None or ti is None or len(x.shape) != 2 or len(w1.shape) != 3 \
            or len(w2.shape) != 3 or len(ti.shape) != 2 or x.prec is None:
        return None
    tokens, hidden = x.shape
    experts = w1.shape[0]
    pack = hidden // w1.shape[2] if w1.shape[2] and hidden % w1.shape[2] == 0 else 0
    if pack not in (1, 2) or w2.shape[0] != experts or w2.shape[1] != hidden:
        return None
    inter = w2.shape[2] * pack
    gated = w1.shape[1] == 2 * inter
    if not gated and w1.shape[1] != inter:
        return None
    w_size = w1.size / pack
    extra = ti.bytes + (tw.bytes if tw is not None else 0.0)
    return moe_cost(tokens, hidden, inter, experts, ti.shape[1], gated, x.size, w_size, x.size, x.prec, extra)


_KERNEL_WEIGHTS = (("e2m1", "fp4", 0.5 + 1 / 32), ("fp4", "fp4", 0.5 + 1 / 16), ("e4m3", "fp8", 1.0),
                   ("e5m2", "fp8", 1.0), ("fp8", "fp8", 1.0))


def moe_forward_cost(ts: list[TensorArg | None], allocs: Sequence[tuple[tuple[int, ...], int]],
                     kernels: Sequence[str]) -> Result | None:
    """``vllm::moe_forward(hidden[T,H], router_logits[T,E], layer_name)``: top-k and the intermediate size from the
    op's own allocations ``allocs`` (shape, ScalarType code), the weights' and activations' precision from the
    names of the ``kernels`` it launched (see the module docstring)."""
    x, logits = arg_at(ts, 0), arg_at(ts, 1)
    if x is None or logits is None or len(x.shape) != 2 or len(logits.shape) != 2 or x.prec is None:
        return None
    tokens, hidden = x.shape
    experts = logits.shape[1]
    ks = {s[1] for s, code in allocs if len(s) == 2 and s[0] == tokens and code in _INT_CODES and 0 < s[1] < experts}
    topk = ks.pop() if len(ks) == 1 else 0
    inters = {s[1] for s, _ in allocs if len(s) == 2 and topk and s[0] >= tokens * topk and s[1] not in (hidden, 0)}
    if len(inters) != 1:
        return math.nan, math.nan, x.prec, "matrix", MOE_UNKNOWN
    inter = inters.pop()
    names = " ".join(kernels).lower()
    gemm = " ".join(k for k in kernels if re.search(r"gemm|bmm|mma|moe", k, re.IGNORECASE)).lower()
    named = next(((p, size) for key, p, size in _KERNEL_WEIGHTS if key in gemm), None)
    w = named or (x.prec, x.size)
    a_prec = "fp8" if re.search(r"e4m3|e5m2|fp8", names) else x.prec
    a_size = 1.0 if a_prec == "fp8" else x.size
    prec = a_prec if w[0] == "fp4" else w[0] if w[0] == "fp8" else x.prec
    whence = "from its GEMM kernels' names" if named else "taken as the hidden state's (no kernel name says it)"
    note = (f"a MoE op's top-k ({topk}) and intermediate size ({inter}) are read from the buffers it allocates, "
            f"its weights' precision ({w[0]}) {whence}, SwiGLU (gated) experts assumed; " + UNIFORM)
    extra = logits.bytes + tokens * topk * (4 + x.size)
    return moe_cost(tokens, hidden, inter, experts, topk, True, a_size, w[1], x.size, prec, extra, note)


def _rows(x: TensorArg, w: TensorArg | None) -> tuple[int, int] | None:
    hidden = w.numel if w is not None and w.numel else (x.shape[-1] if x.shape else 0)
    if not hidden or x.numel % hidden:
        return None
    return x.numel // hidden, hidden


def _rms_norm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """vLLM ``_C::rms_norm(out, input, weight, eps)``; ``rms_norm_static_fp8_quant(out, input, weight, scale,
    eps)``; SGLang ``sgl_kernel::rmsnorm(output, input, weight, eps)``."""
    out, x, w = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 2)
    if out is None or x is None or x.prec is None or (rh := _rows(x, w)) is None:
        return None
    rows, hidden = rh
    flops = ops.rmsnorm(rows, hidden, x.prec).flops + (x.numel if "quant" in name else 0)
    nbytes = x.bytes + out.bytes + (w.bytes if w is not None else 0.0)
    return float(flops), float(nbytes), x.prec, "vector", False


def _fused_add_rms_norm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``_C::fused_add_rms_norm(input, residual, weight, eps)``; ``sgl_kernel::fused_add_rmsnorm``;
    ``_C::fused_add_rms_norm_static_fp8_quant(out, input, residual, weight, scale, eps)``."""
    quant = "quant" in name
    off = 1 if quant else 0
    x, res, w = arg_at(ts, off), arg_at(ts, off + 1), arg_at(ts, off + 2)
    if x is None or res is None or x.prec is None or x.numel != res.numel or (rh := _rows(x, w)) is None:
        return None
    rows, hidden = rh
    flops = ops.rmsnorm(rows, hidden, x.prec).flops + x.numel * (2 if quant else 1)
    first = arg_at(ts, 0)
    out = first.bytes if quant and first is not None else x.bytes
    nbytes = x.bytes + 2.0 * res.bytes + out + (w.bytes if w is not None else 0.0)
    return float(flops), float(nbytes), x.prec, "vector", False


def _act_and_mul(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``(out[..,d], input[..,2d], ...)``: 2 FLOPs per output element."""
    out, x = arg_at(ts, 0), arg_at(ts, 1)
    if out is None or x is None or x.prec is None or x.numel != 2 * out.numel:
        return None
    return 2.0 * out.numel, float(x.bytes + out.bytes), x.prec, "vector", False


def _quant(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``(out, input, scale(s), ...)``: static 1 FLOP per element, dynamic 2 (and a whole-tensor pass first)."""
    out, x = arg_at(ts, 0), arg_at(ts, 1)
    if out is None or x is None or x.prec is None:
        return None
    scales = sum(t.bytes for t in ts[2:] if t is not None)
    dynamic = "dynamic" in name or "fp4" in name
    reread = name.endswith("dynamic_scaled_fp8_quant")
    nbytes = x.bytes * (2 if reread else 1) + out.bytes + scales
    return float(x.numel * (2 if dynamic else 1)), float(nbytes), x.prec, "vector", False


def _reshape_and_cache(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``(key[T,Hkv,D], value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale)``."""
    k, v, kc, _, slots = (arg_at(ts, i) for i in range(5))
    if k is None or v is None or kc is None:
        return None
    moved = k.numel + v.numel
    nbytes = k.bytes + v.bytes + moved * kc.size + (slots.bytes if slots is not None else 0.0)
    flops = float(moved) if kc.size != k.size else 0.0
    return flops, float(nbytes), k.prec, "vector", False


def _unified_attention(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    q = arg_at(ts, 0)
    return math.nan, math.nan, (q.prec if q is not None else None), "matrix", ATTENTION_UNKNOWN


def window_pairs(q_len: int, kv_len: int, causal: bool, left: int, right: int) -> float:
    """(query, key) pairs of attention with a local window: the ``q_len`` queries are the last positions of the
    ``kv_len`` keys; query at position ``p`` sees keys ``[p − left, p + right]`` (``-1``: unbounded on that side;
    causal caps it at ``p``), within ``[0, kv_len)``. Without a window: :func:`roofcore.ops.attention_pairs`."""
    if left < 0 and (right < 0 or causal):
        return ops.attention_pairs(q_len, kv_len, causal)
    p = np.arange(kv_len - q_len, kv_len, dtype=np.int64)
    hi = p if causal else (np.full_like(p, kv_len - 1) if right < 0 else np.minimum(p + right, kv_len - 1))
    lo = np.zeros_like(p) if left < 0 else np.maximum(p - left, 0)
    return float(np.maximum(hi - lo + 1, 0).sum())


def _window(concrete: object, at: int) -> tuple[int, int]:
    left, right = concrete_at(concrete, at), concrete_at(concrete, at + 1)
    if (left is not None and right is not None and re.fullmatch(r"-?\d+", left)
            and re.fullmatch(r"-?\d+", right)):
        return int(left), int(right)
    return -1, -1


def _attend(b: int, h: int, q_len: float, kv_len: float, d: int, hkv: int, causal: bool,
            window: tuple[int, int], prec: str, kv_prec: str) -> tuple[float, float] | None:
    """FLOPs and bytes of ``b`` sequences of attention (:func:`roofcore.ops.flash_attention`, its pairs counted
    with the local window where one is set)."""
    try:
        kern = ops.flash_attention(b, h, q_len, kv_len, d, prec, kv_heads=hkv, causal=causal, kv_dtype=kv_prec)
    except InputError:  # heads not a multiple of the K/V heads
        return None
    if window == (-1, -1):
        return float(kern.flops), float(kern.bytes["hbm"])
    if q_len != int(q_len) or kv_len != int(kv_len):
        return None  # a window over lengths that are averages: no pair count
    flops = 4.0 * b * h * d * window_pairs(int(q_len), int(kv_len), causal, *window)
    return flops, float(kern.bytes["hbm"])


def _flash_forward(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``flash_attn::_flash_attn_forward(q[B,S,H,d], k[B,Skv,Hkv,d], v, dropout_p, softmax_scale, causal,
    window_size_left, window_size_right, ...)``."""
    q, k = arg_at(ts, 0), arg_at(ts, 1)
    causal = truthy(concrete_at(concrete, 5))
    if q is None or k is None or q.prec is None or len(q.shape) != 4 or len(k.shape) != 4 or causal is None:
        return None
    (b, s, h, d), (_, skv, hkv, _) = q.shape, k.shape
    got = _attend(b, h, s, skv, d, hkv, causal, _window(concrete, 6), q.prec, k.prec or q.prec)
    return (got[0], got[1], q.prec, "matrix", False) if got else None


def _varlen_attention(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``flash_attn::_flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
    dropout_p, softmax_scale, causal, ...)``."""
    q, k, cu = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 3)
    causal = truthy(concrete_at(concrete, 9))
    mq, mk = concrete_at(concrete, 5), concrete_at(concrete, 6)
    if q is None or k is None or cu is None or q.prec is None or len(q.shape) != 3 or len(k.shape) != 3 \
            or causal is None or cu.numel < 2 or not (mq and mk and mq.isdigit() and mk.isdigit()):
        return None
    b = cu.numel - 1
    (tq, h, d), (tk, hkv, _) = q.shape, k.shape
    exact = tq == b * int(mq) and tk == b * int(mk)
    got = _attend(b, h, tq / b, tk / b, d, hkv, causal, _window(concrete, 10), q.prec, k.prec or q.prec)
    if got is None:
        return None
    return got[0], got[1], q.prec, "matrix", (False if exact else VARLEN_EQUAL)


#: fused MoE ops that carry their weights and top-k ids as arguments
FUSED_EXPERTS = ("vllm::inplace_fused_experts", "vllm::outplace_fused_experts", "vllm::rocm_aiter_fused_moe")

OPS: dict[str, CostFn] = {
    "aten::_scaled_mm": _scaled_mm, "_C::cutlass_scaled_mm": _cutlass_scaled_mm,
    "_C::cutlass_scaled_fp4_mm": _cutlass_scaled_mm,
    "aten::_grouped_mm": _grouped_mm, "aten::_scaled_grouped_mm": _grouped_mm,
    **dict.fromkeys(FUSED_EXPERTS, _fused_experts),
    **dict.fromkeys(("_C::rms_norm", "_C::rms_norm_static_fp8_quant", "sgl_kernel::rmsnorm"), _rms_norm),
    **dict.fromkeys(("_C::fused_add_rms_norm", "_C::fused_add_rms_norm_static_fp8_quant",
                     "sgl_kernel::fused_add_rmsnorm"), _fused_add_rms_norm),
    **dict.fromkeys(("_C::silu_and_mul", "_C::gelu_and_mul", "_C::gelu_tanh_and_mul", "_C::mul_and_silu",
                     "_C::swigluoai_and_mul", "_C::fatrelu_and_mul", "sgl_kernel::silu_and_mul",
                     "sgl_kernel::gelu_and_mul", "sgl_kernel::gelu_tanh_and_mul"), _act_and_mul),
    **dict.fromkeys(("_C::static_scaled_fp8_quant", "_C::dynamic_scaled_fp8_quant",
                     "_C::dynamic_per_token_scaled_fp8_quant", "_C::scaled_fp4_quant"), _quant),
    **dict.fromkeys(("_C_cache_ops::reshape_and_cache", "_C_cache_ops::reshape_and_cache_flash"),
                    _reshape_and_cache),
    **dict.fromkeys(("vllm::unified_attention", "vllm::unified_attention_with_output"), _unified_attention),
    "flash_attn::_flash_attn_varlen_forward": _varlen_attention, "flash_attn::_flash_attn_forward": _flash_forward,
    # sized per instance (instance_results): per signature nothing; listed so the scan keeps their inputs
    **dict.fromkeys(("vllm::moe_forward", "vllm::moe_forward_shared"), lambda ts, concrete, name: None),
}

#: ops whose cost needs what their events never record (the unknown says why in the warnings), for the hint
LACKING = frozenset({"vllm::unified_attention", "vllm::unified_attention_with_output"})

#: ops costed per instance from their allocations and kernels (:func:`moe_forward_cost`), not per signature
MOE_FORWARD = frozenset({"vllm::moe_forward", "vllm::moe_forward_shared"})
#: allocation ops whose ``Concrete Inputs`` (size, dtype) the MoE ops read
ALLOCS = frozenset({"aten::empty", "aten::empty_strided"})


def _alloc(sig: Signature) -> tuple[tuple[int, ...], int] | None:
    """``aten::empty(size, dtype, ...)`` / ``empty_strided(size, stride, dtype, ...)``: (shape, ScalarType code)."""
    conc = sig[3] if len(sig) > 3 else None
    at = 2 if sig[0].endswith("empty_strided") else 1
    size, code = concrete_at(conc, 0), concrete_at(conc, at)
    if size is None or code is None or not re.fullmatch(r"\d+", code):
        return None
    dims = re.findall(r"-?\d+", size)
    return (tuple(int(d) for d in dims), int(code)) if dims and all(int(d) >= 0 for d in dims) else None


def instance_results(op_rows: Sequence[tuple[Any, ...]], signatures: Sequence[Signature],
                     op_of: np.ndarray | Sequence[int], kernel_names: Sequence[str],
                     tensors: Callable[[object, object], list[TensorArg | None]]) -> dict[int, Result | None]:
    """Per MoE op instance (an index into ``op_rows``, the scan's ``(pid, tid, ts, dur, name, ext, res, shapes)``),
    its result from :func:`moe_forward_cost`: allocations are the ``aten::empty`` ops on its thread within its
    time span, kernels those it launched (``op_of``). ``tensors``: dims, types → argument tensors."""
    if not any(sig[0] in MOE_FORWARD for sig in signatures):  # an op's signature carries its name: no MoE op
        return {}
    moe = [i for i, r in enumerate(op_rows) if type(r[4]) is str and r[4] in MOE_FORWARD and r[6] >= 0]
    if not moe:
        return {}
    allocs: dict[tuple[object, object], list[tuple[float, tuple[tuple[int, ...], int]]]] = {}
    # fused-experts ops: a MoE op around one has its GEMMs costed there
    fused: dict[tuple[object, object], list[float]] = {}
    for r in op_rows:
        if r[4] in ALLOCS and r[6] >= 0 and type(r[2]) in (int, float):
            a = _alloc(signatures[r[6]])
            if a is not None:
                allocs.setdefault((r[0], r[1]), []).append((float(r[2]), a))
        elif r[4] in FUSED_EXPERTS and type(r[2]) in (int, float):
            fused.setdefault((r[0], r[1]), []).append(float(r[2]))
    kernels: dict[int, list[str]] = {}
    of = np.asarray(op_of)
    # the MoE ops' kernels, without a loop over every kernel
    for k in np.flatnonzero(np.isin(of, moe)).tolist():
        kernels.setdefault(int(of[k]), []).append(kernel_names[k])
    out: dict[int, Result | None] = {}
    for i in moe:
        pid, tid, ts, dur = op_rows[i][:4]
        if type(ts) not in (int, float) or type(dur) not in (int, float):
            continue
        if any(ts <= t <= ts + dur for t in fused.get((pid, tid), ())):
            continue  # its experts are a costed child op (vLLM's Triton path): not counted twice
        inside = [a for t, a in allocs.get((pid, tid), ()) if ts <= t <= ts + dur]
        sig = signatures[op_rows[i][6]]
        try:
            out[i] = moe_forward_cost(tensors(sig[1], sig[2]), inside, kernels.get(i, ()))
        except (ValueError, TypeError, OverflowError, ZeroDivisionError):
            out[i] = None
    return out
