"""The aten cost model of PyTorch profiler traces: FLOPs and bytes of one ``cpu_op`` from its recorded inputs.

``record_shapes=True`` records each op's ``Input Dims``, ``Input type`` (C++ type names: ``c10::Half`` under
autocast, not the model's fp32) and, from PyTorch 2.1, ``Concrete Inputs`` (scalars and int lists as text).
Bytes are off-chip traffic with every input read once and every output written once.

The formulas are :mod:`roofcore.ops`'s, applied to the recorded shapes with each operand's own dtype:

* ``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``matmul``, ``linear``: :func:`~roofcore.ops.matmul` (an operand
  shared across a batch is read once: ``m·batch`` rows) or :func:`~roofcore.ops.batched_matmul`; the bias of
  ``addmm`` / ``baddbmm`` / ``linear`` is read once more (its adds are not counted); unit ``matrix``.
* 2-D convolutions with one stride and padding, no dilation or groups: :func:`~roofcore.ops.conv2d` (+ bias
  read). Others (1-D/3-D, grouped, dilated, per-axis stride, transposed) by the same formula generalised here:
  2·N·K·(C/groups)·∏kernel·∏output, output ⌊(H + 2·pad − dil·(R−1) − 1)/stride⌋ + 1. Geometry comes from
  ``Concrete Inputs``; traces without them (PyTorch < 2.1) are read as size-preserving (output = input size,
  exact for the common stride-1 "same" layers) and flagged ``assumed``. ``convolution_backward``: forward FLOPs
  × (grad input + grad weight); PyTorch ≤ 1.10's ``cudnn_convolution_backward_input`` / ``_weight``: forward
  FLOPs each (the weight gradient only when its size is recorded, by the op or, sized from the enclosing
  ``cudnn_convolution_backward``, by :func:`.kineto_ops_grad.parent_context`).
* ``_softmax`` / ``_log_softmax``: :func:`~roofcore.ops.softmax`; ``native_layer_norm``:
  :func:`~roofcore.ops.layernorm`; ``rms_norm``: :func:`~roofcore.ops.rmsnorm`; ``embedding``:
  :func:`~roofcore.ops.embedding`; ``_scaled_dot_product_flash_attention`` / ``_efficient_attention`` /
  ``_flash_attention_forward``: :func:`~roofcore.ops.flash_attention` (causal from ``Concrete Inputs``, else
  unknown).
* elementwise (``add``, ``mul``, ``relu``, ``gelu``, ... and in-place ``_`` forms): 1 FLOP per output element
  whatever the function (as PyTorch's own counter); bytes = every input at its recorded (broadcast) size + the
  output; :func:`~roofcore.ops.elementwise` assumes same-size inputs, which a bias add is not. ``copy_`` /
  ``fill_`` / ``zero_``: 0 FLOPs, the bytes they move.

Training ops (the optimizer's tensor-list ops, AMP, reductions, losses, softmax backward, gathers and scatters,
RoPE; batch norm, norm, attention, pooling and embedding backward) are in :mod:`.kineto_ops_train` and
:mod:`.kineto_ops_grad`, called with the raw inputs (:data:`RAW_OPS`); docs/cost-model.md tabulates every family.

Anything else, integer matmuls and shapes that do not fit, is ``None``: unknown, never zero.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from .. import ops
from ..errors import InputError
from .kineto_args import (  # noqa: F401
    DTYPES,
    CostFn,
    Result,
    TensorArg,
    arg_at,
    broadcast,
    concrete_at,
    ints,
    result,
    tensor_args,
    truthy,
)


def _matmul_like(a: TensorArg | None, b: TensorArg | None, extra: Sequence[TensorArg | None] = ()) -> Result | None:
    """``a @ b`` with PyTorch's rules (1-D operands promoted, batch dims broadcast); ``extra`` (a bias) read too."""
    if a is None or b is None or not a.shape or not b.shape or a.prec is None or b.prec is None:
        return None  # integer matmuls: no precision to place them under
    sa, sb = list(a.shape), list(b.shape)
    if len(sa) == 1:
        sa = [1, *sa]
    if len(sb) == 1:
        sb = [*sb, 1]
    (m, k), (k2, n) = sa[-2:], sb[-2:]
    ba, bb = math.prod(sa[:-2]), math.prod(sb[:-2])
    batch = broadcast([tuple(sa[:-2]), tuple(sb[:-2])])
    if k != k2 or batch is None:
        return None
    bias = sum(t.bytes for t in extra if t is not None)
    dtypes = {"a_dtype": a.prec, "b_dtype": b.prec, "out_dtype": a.prec}
    if bb == 1:  # b shared by every batch entry of a: one matmul with m·batch rows
        return result(ops.matmul(ba * m, n, k, a.prec, **dtypes), bias)
    if ba == 1:  # a shared: (a @ b)ᵀ = bᵀ @ aᵀ, one matmul with n·batch rows
        return result(ops.matmul(bb * n, m, k, b.prec, a_dtype=b.prec, b_dtype=a.prec, out_dtype=a.prec), bias)
    if ba == bb == math.prod(batch):
        return result(ops.batched_matmul(ba, m, n, k, a.prec, **dtypes), bias)
    return None  # both batched but broadcast against each other ([2,1,..] @ [1,3,..]): not in ops' formulas


def _mm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    a, b = arg_at(ts, 0), arg_at(ts, 1)
    if a is None or b is None or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    return _matmul_like(a, b)


def _addmm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    a, b = arg_at(ts, 1), arg_at(ts, 2)
    if a is None or b is None or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    return _matmul_like(a, b, [arg_at(ts, 0)])


def _bmm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    a, b = arg_at(ts, 0), arg_at(ts, 1)
    if a is None or b is None or len(a.shape) != 3 or len(b.shape) != 3 or a.shape[0] != b.shape[0]:
        return None
    return _matmul_like(a, b)


def _baddbmm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    a, b = arg_at(ts, 1), arg_at(ts, 2)
    if a is None or b is None or len(a.shape) != 3 or len(b.shape) != 3 or a.shape[0] != b.shape[0]:
        return None
    return _matmul_like(a, b, [arg_at(ts, 0)])


def _matmul(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    return _matmul_like(arg_at(ts, 0), arg_at(ts, 1))


def _linear(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    x, w = arg_at(ts, 0), arg_at(ts, 1)
    if x is None or w is None or not x.shape or len(w.shape) not in (1, 2):
        return None
    wt = TensorArg(tuple(reversed(w.shape)), w.size, w.prec)  # y = x @ w.T
    return _matmul_like(x, wt, [arg_at(ts, 2)])


#: positions of (stride, padding, dilation, transposed, output_padding, groups) among an op's arguments
_CONV_ARGS = {
    "aten::conv1d": (3, 4, 5, None, None, 6), "aten::conv2d": (3, 4, 5, None, None, 6),
    "aten::conv3d": (3, 4, 5, None, None, 6),
    "aten::convolution": (3, 4, 5, 6, 7, 8), "aten::_convolution": (3, 4, 5, 6, 7, 8),
    "aten::cudnn_convolution": (3, 2, 4, None, None, 5),
    "aten::cudnn_convolution_transpose": (4, 2, 5, True, 3, 6),
    "aten::miopen_convolution": (4, 3, 5, None, None, 6),
    "aten::mkldnn_convolution": (4, 3, 5, None, None, 6),
}


def _conv(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    x, w = arg_at(ts, 0), arg_at(ts, 1)
    if x is None or w is None or len(w.shape) < 3:
        return None
    nsp = len(w.shape) - 2
    if len(x.shape) == nsp + 2:
        batch, cin, in_sp = x.shape[0], x.shape[1], x.shape[2:]
    elif len(x.shape) == nsp + 1:  # unbatched input
        batch, cin, in_sp = 1, x.shape[0], x.shape[1:]
    else:
        return None
    st, pa, di, tr, op, gr = _CONV_ARGS[name]
    bias = arg_at(ts, 2)
    if name == "aten::cudnn_convolution" and isinstance(bias, TensorArg):
        st, pa, di, gr = 4, 3, 5, 6  # PyTorch ≤ 1.7: (self, weight, bias, padding, stride, dilation, groups, ...)
    if name in ("aten::cudnn_convolution", "aten::cudnn_convolution_transpose"):
        bias = bias if isinstance(bias, TensorArg) and len(bias.shape) == 1 else None
    bias_bytes = bias.bytes if bias is not None else 0.0
    transposed = tr if isinstance(tr, bool) else (truthy(concrete_at(concrete, tr)) if tr is not None else False)
    kern = w.shape[2:]
    pad_text = concrete_at(concrete, pa)
    stride, dil = ints(concrete_at(concrete, st), nsp), ints(concrete_at(concrete, di), nsp)
    groups = ints(concrete_at(concrete, gr), 1) if gr is not None else None
    g = groups[0] if groups and groups[0] > 0 else 1
    if pad_text is not None and pad_text.strip("'\"").lower() in ("same", "valid"):
        same = pad_text.strip("'\"").lower() == "same"
        pad = None if same else [0] * nsp
    else:
        same = False
        pad = ints(pad_text, nsp)
    assumed = False
    if transposed:
        outpad = ints(concrete_at(concrete, op), nsp) if op is not None else None
        if transposed is None or stride is None or pad is None or dil is None:
            return None
        outpad = outpad or [0] * nsp
        cout = w.shape[1] * g
        out_sp = [(h - 1) * s - 2 * p + d * (k - 1) + o + 1
                  for h, s, p, d, k, o in zip(in_sp, stride, pad, dil, kern, outpad, strict=True)]
        flops = 2 * batch * math.prod(in_sp) * cin * w.shape[1] * math.prod(kern)
    else:
        cout = w.shape[0]
        if (nsp == 2 and x.prec is not None and g == 1 and not same and stride and pad and dil == [1, 1]
                and len(set(stride)) == 1 and len(set(pad)) == 1 and len(x.shape) == 4):
            n, c, h, wd = x.shape  # the plain 2-D case: ops.conv2d's formula
            try:
                k = ops.conv2d(n, c, h, wd, cout, kern[0], kern[1], x.prec, stride=stride[0], padding=pad[0])
            except InputError:
                return None  # a filter larger than the padded input
            return result(k, bias_bytes)
        if same:
            out_sp = list(in_sp)
        elif stride is not None and pad is not None and dil is not None:
            if any(s <= 0 for s in stride):
                return None
            out_sp = [(h + 2 * p - d * (k - 1) - 1) // s + 1
                      for h, s, p, d, k in zip(in_sp, stride, pad, dil, kern, strict=True)]
        else:
            out_sp, assumed = list(in_sp), True
        flops = 2 * batch * cout * math.prod(out_sp) * w.shape[1] * math.prod(kern)
    if any(v <= 0 for v in out_sp):
        return None
    out = batch * cout * math.prod(out_sp)
    nbytes = x.bytes + w.bytes + bias_bytes + out * x.size
    return float(flops), float(nbytes), x.prec, "matrix", assumed


def _conv_backward(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    gout, x, w = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 2)
    if gout is None or x is None or w is None or len(w.shape) < 3 or len(gout.shape) != len(x.shape):
        return None
    nsp = len(w.shape) - 2
    if len(x.shape) not in (nsp + 1, nsp + 2):
        return None
    transposed = truthy(concrete_at(concrete, 7))
    mask_text = concrete_at(concrete, 10)
    mask = [m.lower() == "true" for m in re.findall(r"[A-Za-z]+", mask_text)] if mask_text else [True, True, False]
    if len(mask) != 3:
        return None
    kern = math.prod(w.shape[2:])
    batch = x.shape[0] if len(x.shape) == nsp + 2 else 1
    if transposed:
        fwd = 2 * batch * math.prod(x.shape[-nsp:]) * x.shape[-nsp - 1] * w.shape[1] * kern
    else:
        fwd = 2 * batch * gout.shape[-nsp - 1] * math.prod(gout.shape[-nsp:]) * w.shape[1] * kern
    flops = fwd * (int(mask[0]) + int(mask[1]))
    nbytes = gout.bytes + x.bytes + w.bytes + mask[0] * x.bytes + mask[1] * w.bytes
    if mask[2]:
        nbytes += gout.shape[-nsp - 1] * gout.size
    return float(flops), float(nbytes), x.prec, "matrix", False


def _conv_backward_input(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """PyTorch ≤ 1.10: ``(self_size, grad_output, weight, padding, stride, dilation, groups, ...)``. FLOPs are
    the forward's, 2·numel(grad_output)·(C/groups)·∏kernel, whatever the stride; the grad input's size is
    ``self_size`` where recorded, else assumed equal to the grad output's spatial size (flagged)."""
    gout, w = arg_at(ts, 1), arg_at(ts, 2)
    if gout is None or w is None or len(w.shape) < 3 or len(gout.shape) != len(w.shape):
        return None
    flops = 2 * gout.numel * w.shape[1] * math.prod(w.shape[2:])
    size = ints(concrete_at(concrete, 0), len(gout.shape))
    assumed = size is None
    gin = math.prod(size) if size else gout.numel // gout.shape[1] * w.shape[1]
    return float(flops), float(gout.bytes + w.bytes + gin * gout.size), gout.prec, "matrix", assumed


def _conv_backward_weight(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """PyTorch ≤ 1.10: ``(weight_size, grad_output, self, ...)``: forward FLOPs, 2·numel(grad_output)·∏weight[1:];
    unknown when ``weight_size`` is not recorded (no ``Concrete Inputs``)."""
    gout, x = arg_at(ts, 1), arg_at(ts, 2)
    size = ints(concrete_at(concrete, 0), len(gout.shape)) if gout is not None else None
    if gout is None or x is None or size is None or len(x.shape) != len(gout.shape):
        return None
    flops = 2 * gout.numel * math.prod(size[1:])
    return float(flops), float(gout.bytes + x.bytes + math.prod(size) * gout.size), gout.prec, "matrix", False


def elementwise(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    tensors = [t for t in ts if t is not None]
    if not tensors:
        return None
    shape = broadcast([t.shape for t in tensors])
    if shape is None:
        return None
    out = math.prod(shape)
    size = max(t.size for t in tensors)
    nbytes = sum(t.bytes for t in tensors) + out * size
    return float(out), float(nbytes), tensors[0].prec, "vector", False


def _copy(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    dst, src = arg_at(ts, 0), arg_at(ts, 1)
    if dst is None or src is None:
        return None
    return 0.0, float(dst.bytes + src.bytes), None, "vector", False


def _fill(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    dst = arg_at(ts, 0)
    if dst is None:
        return None
    return 0.0, float(dst.bytes), None, "vector", False


def _softmax(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    x = arg_at(ts, 0)
    if x is None or x.prec is None or not x.numel:
        return None
    return result(ops.softmax(1, x.numel, x.prec))  # FLOPs and bytes depend on the element count only


def _layer_norm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """``(input, normalized_shape, weight, bias, eps)``: hidden = ∏normalized_shape (or the weight's size);
    without a weight (``elementwise_affine=False``) the normalisation alone."""
    x, wt = arg_at(ts, 0), arg_at(ts, 2)
    shape = ints(concrete_at(concrete, 1), len(re.findall(r"-?\d+", concrete_at(concrete, 1) or "")))
    hidden = math.prod(shape) if shape else (wt.numel if wt is not None else None)
    if x is None or x.prec is None or not hidden or x.numel % hidden:
        return None
    return result(ops.layernorm(x.numel // hidden, hidden, x.prec, affine=wt is not None))


def _rms_norm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    x, wt = arg_at(ts, 0), arg_at(ts, 2)
    shape = ints(concrete_at(concrete, 1), len(re.findall(r"-?\d+", concrete_at(concrete, 1) or "")))
    hidden = math.prod(shape) if shape else (wt.numel if wt is not None else (x.shape[-1] if x and x.shape else 0))
    if x is None or x.prec is None or not hidden or x.numel % hidden:
        return None
    return result(ops.rmsnorm(x.numel // hidden, hidden, x.prec))


def _embedding(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    table, idx = arg_at(ts, 0), arg_at(ts, 1)
    if table is None or idx is None or table.prec is None or len(table.shape) != 2 or not table.shape[0]:
        return None
    return result(ops.embedding(idx.numel, table.shape[1], table.shape[0], table.prec))


#: attention ops: (layout of q/k/v, position of is_causal among the arguments)
_ATTENTION = {
    "aten::_scaled_dot_product_flash_attention": ("bhsd", 4),
    "aten::_scaled_dot_product_efficient_attention": ("bhsd", 6),
    "aten::_scaled_dot_product_cudnn_attention": ("bhsd", 6),
    "aten::_flash_attention_forward": ("bshd", 8),
}


def _attention(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    q, k = arg_at(ts, 0), arg_at(ts, 1)
    layout, at = _ATTENTION[name]
    causal = truthy(concrete_at(concrete, at))
    if q is None or k is None or q.prec is None or len(q.shape) != 4 or len(k.shape) != 4 or causal is None:
        return None  # without is_causal the pairs computed are unknown (a causal mask halves them)
    if layout == "bhsd":
        (b, h, s, d), (_, hkv, skv, _) = q.shape, k.shape
    else:
        (b, s, h, d), (_, skv, hkv, _) = q.shape, k.shape
    try:
        kern = ops.flash_attention(b, h, s, skv, d, q.prec, kv_heads=hkv, causal=causal,
                                   kv_dtype=k.prec or q.prec)
    except InputError:
        return None  # heads not a multiple of the K/V heads
    return result(kern)


_ELEMENTWISE = (
    "add", "sub", "mul", "div", "relu", "gelu", "sigmoid", "tanh", "silu", "clamp", "clamp_min", "clamp_max",
    "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "pow", "abs", "sin", "cos", "erf", "leaky_relu",
    "hardtanh", "elu", "maximum", "minimum", "where", "threshold", "threshold_backward", "gelu_backward",
    "sigmoid_backward", "tanh_backward", "silu_backward", "mish",
)
OPS: dict[str, CostFn] = {
    "aten::mm": _mm, "aten::addmm": _addmm, "aten::bmm": _bmm, "aten::baddbmm": _baddbmm,
    "aten::matmul": _matmul, "aten::linear": _linear,
    **dict.fromkeys(_CONV_ARGS, _conv), "aten::convolution_backward": _conv_backward,
    "aten::cudnn_convolution_backward_input": _conv_backward_input,
    "aten::cudnn_convolution_backward_weight": _conv_backward_weight,
    **{f"aten::{n}": elementwise for n in _ELEMENTWISE}, **{f"aten::{n}_": elementwise for n in _ELEMENTWISE},
    "aten::copy_": _copy, "aten::fill_": _fill, "aten::zero_": _fill,
    "aten::_softmax": _softmax, "aten::_log_softmax": _softmax, "aten::native_layer_norm": _layer_norm,
    "aten::rms_norm": _rms_norm, "aten::_fused_rms_norm": _rms_norm, "aten::embedding": _embedding,
    **dict.fromkeys(_ATTENTION, _attention),
}


#: op families in their own modules, called with the raw ``(dims, types, concrete, name)`` (tensor lists need
#: them): one import and update per module
RAW_OPS: dict[str, CostFn] = {}
from .kineto_ops_grad import OPS as _GRAD  # noqa: E402
from .kineto_ops_train import OPS as _TRAIN  # noqa: E402

RAW_OPS.update(_TRAIN)
RAW_OPS.update(_GRAD)
OPS.update(RAW_OPS)


def op_cost(name: str, dims: object, types: object, concrete: object = None,
            extra: tuple[tuple[str, Any], ...] = (), ctx: dict[str, Any] | None = None) -> Result | None:
    """FLOPs, bytes, precision and unit of one ``cpu_op`` from its recorded inputs (None: no formula fits);
    ``extra``: other args of the event ((key, value) pairs, :data:`.kineto_comm.EXTRA_ARGS`) and ``ctx`` the
    trace's context (:func:`.kineto_comm.group_context`), for the formulas that want them (collectives)."""
    fn = OPS.get(name)
    if fn is None:
        return None
    try:
        raw = RAW_OPS.get(name)
        if raw is not None:
            return raw(dims, types, concrete, name)
        if getattr(fn, "wants_context", False):
            return fn(tensor_args(dims, types), concrete, name, extra, ctx)
        return fn(tensor_args(dims, types), concrete, name)
    except (ValueError, TypeError, OverflowError, IndexError, ZeroDivisionError):
        return None


# inference / vendor ops, collectives and torch.compile's Triton launches (H5, issue 26): their own modules
from .kineto_comm import OPS as _COMM  # noqa: E402
from .kineto_serve import ALLOCS as _ALLOCS  # noqa: E402
from .kineto_serve import OPS as _SERVE  # noqa: E402
from .kineto_te import OPS as _TE  # noqa: E402
from .kineto_triton import OpTable  # noqa: E402

OPS.update(_SERVE)
OPS.update(_TE)
OPS.update(_COMM)
OPS.update(dict.fromkeys(_ALLOCS, lambda ts, concrete, name: None))  # no kernel; MoE ops read their sizes
OPS = OpTable(OPS)  # Triton launches (triton_poi_...) match by prefix
