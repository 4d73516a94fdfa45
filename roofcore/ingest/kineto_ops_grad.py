"""Training ops of PyTorch traces (2 of 2): batch norm, the backward of layer and RMS norm, convolution backward
from the parent op's shapes, attention backward, pooling and embedding backward. Registered into
:data:`.kineto_ops.OPS`, called with the raw ``(Input Dims, Input type, Concrete Inputs, name)``; bytes are
off-chip traffic, each tensor moved once by each kernel that uses it (``n``: elements of the activation, ``C``:
channels or the normalised width, ``|x|``: element size).

* Batch norm, training (``cudnn_batch_norm``, ``native_batch_norm``, ``miopen_batch_norm``,
  ``_native_batch_norm_legit``; ``training`` from ``Concrete Inputs``): FLOPs ``7·n`` (the normalisation
  convention of :func:`roofcore.ops.layernorm`: 5 + the affine 2); bytes ``2·n·|x|``, the input read once and
  the output written once (the compulsory traffic: a kernel whose per-channel statistics over ``N·H·W`` do not
  fit on chip reads the input a second time, which shows as its distance from the roof, not as more bytes;
  V100 cuDNN kernels of the ResNet-50 sample reach at most 68% of HBM2's 900 GB/s on this count, 62% in the
  backward), + the per-channel vectors (γ, β, running mean and variance read; running stats and the saved mean and inverse std
  (fp32) written). Inference (``training`` false, or ``_native_batch_norm_legit_no_training``): FLOPs ``4·n``
  (subtract, two multiplies, add), bytes ``2·n·|x|`` + the vectors read. PyTorch < 2.1 records no
  ``training`` flag: training is assumed, said in a warning.
* Batch norm backward (``cudnn_batch_norm_backward``, ``native_batch_norm_backward``,
  ``miopen_batch_norm_backward``): FLOPs ``11·n`` (the per-channel sums ``Σg`` 1 and ``Σg·x̂`` 2 over ``x̂`` 2;
  then ``x̂`` 2, ``g − a − x̂·b`` 3 and the scale ``γ·invstd`` 1); bytes ``3·n·|x|`` (grad output and input
  read once, grad input written) + the per-channel vectors read and the grad weight and bias written.
* ``native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)``:
  grad input FLOPs ``10·n`` (``x̂`` 2, ``g·γ`` 1, two row sums 3, ``rstd·(gγ − a − x̂·b)`` 4), bytes grad
  output and input read, grad input written (``3·n``); grad γ and β (a second kernel over the columns):
  FLOPs ``5·n`` (``x̂`` 2, ``g·x̂`` 1, two sums 2), bytes grad output and input read again (``2·n``) and
  ``2·C`` written; + γ and the per-row mean and rstd (fp32) read. ``output_mask`` from ``Concrete Inputs``,
  else all three. ``_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, output_mask)``:
  grad input ``7·n`` FLOPs (``g·γ`` 1, ``Σgγ·x`` 2, ``rstd·gγ − x·rstd³·mean`` 4), grad γ ``3·n`` (``x·rstd``,
  ``·g``, sum), the same bytes with one parameter vector.
* Convolution backward, PyTorch ≤ 1.10: ``cudnn_convolution_backward_weight(weight_size, ...)`` and
  ``_input(self_size, ...)`` record their size argument as an untyped list with no value; the enclosing
  ``cudnn_convolution_backward(self, grad_output, weight, ...)`` records the weight and the input, so their
  shapes are taken from it (:func:`parent_context`). The parent itself: input and weight gradients, as
  ``convolution_backward`` (:mod:`.kineto_ops`), per ``output_mask`` where recorded, else both.
* Attention backward (``_scaled_dot_product_{flash,efficient,cudnn}_attention_backward``,
  ``_flash_attention_backward``, ``_efficient_attention_backward`` with ``custom_mask_type`` 0 or 1): FLOPs 2.5 × the forward's
  (:func:`roofcore.ops.flash_attention`): the backward recomputes ``S = QKᵀ`` and computes ``dV = PᵀdO``,
  ``dP = dO·Vᵀ``, ``dQ = dS·K``, ``dK = dSᵀQ``: five matmuls against the forward's two (FlashAttention-2,
  Dao 2023, §3.1.2; its benchmark counts the backward as 2.5 × the forward); bytes: ``Q``, ``K``, ``V``,
  ``O``, ``dO`` and the fp32 log-sum-exp read, ``dQ``, ``dK``, ``dV`` written, each once. Causal from
  ``Concrete Inputs``, else unknown.
* Pooling: ``max_pool{1,2,3}d_with_indices``, ``avg_pool{2,3}d`` (geometry from ``Concrete Inputs``: output
  ``⌊(H + 2p − d(k−1) − 1)/s⌋ + 1``, ``⌈⌉`` with ``ceil_mode``): FLOPs ``∏kernel`` per output element (one
  comparison or add per window element); bytes input read + output written (+ int64 indices for max).
  ``_adaptive_avg_pool2d``/``adaptive_avg_pool2d`` (output size from ``Concrete Inputs``): FLOPs one add per
  input element; ``adaptive_max_pool2d``: one comparison per input element, + indices. Backward:
  ``max_pool2d_with_indices_backward(grad_output, self, ..., indices)`` and ``adaptive_max_pool2d_backward``:
  FLOPs one add per grad output element; bytes grad output and indices read, grad input written (its size is
  ``self``'s: no geometry needed); ``avg_pool2d_backward``: FLOPs ``∏kernel`` per grad output element;
  ``_adaptive_avg_pool2d_backward``: one per grad input element; bytes grad output read, grad input written.
* ``embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)``: FLOPs one
  add per grad output element; bytes grad output and the int64 indices read, the whole grad weight
  (``num_weights × hidden``) written (the sort of the indices not counted).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import ops
from ..errors import InputError
from .kineto_args import CostFn, Result, TensorArg, arg_at, concrete_at, ints, tensor_args, truthy

if TYPE_CHECKING:
    from .kineto_events import Signature

#: the warning for batch norms costed as training without a recorded flag (kineto_build prefixes "318 ops: ")
BN_TRAINING_GUESS = ("batch norm with no 'training' flag recorded (no 'Concrete Inputs'; PyTorch < 2.1): costed "
                     "as training (7 FLOPs per element, running statistics written), which overcounts an inference "
                     "batch norm's FLOPs (4 per element).")


def _mask(concrete: object, at: int, n: int) -> list[bool] | None:
    text = concrete_at(concrete, at)
    if text is None:
        return None
    mask = [m.lower() == "true" for m in re.findall(r"[A-Za-z]+", text)]
    return mask if len(mask) == n else None


def _vectors(ts: list[TensorArg | None], first: int, last: int, channels: int) -> float:
    """Bytes of the per-channel vectors among arguments ``first..last`` (those of ``channels`` elements)."""
    return float(sum(t.bytes for t in ts[first:last + 1] if t is not None and t.numel == channels))


def _batch_norm(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(input, weight, bias, running_mean, running_var, training, momentum, eps)``."""
    ts = tensor_args(dims, types)
    x = arg_at(ts, 0)
    if x is None or x.prec is None or len(x.shape) < 2:
        return None
    n, c = x.numel, x.shape[1]
    vec = _vectors(ts, 1, 4, c)
    guess: bool | str = False
    training: bool | None = False
    if name.endswith("_no_training"):
        training = False
    else:
        at = 3 if name == "aten::_native_batch_norm_legit" and len(ts) == 6 else 5  # the overload without stats
        training = truthy(concrete_at(concrete, at))
        if training is None:
            training, guess = True, BN_TRAINING_GUESS
    if not training:
        return float(4 * n), float(2 * n * x.size + vec), x.prec, "vector", guess
    stats = _vectors(ts, 3, 4, c) + 2 * c * 4  # running stats written, saved mean and inverse std (fp32)
    return float(7 * n), float(2 * n * x.size + vec + stats), x.prec, "vector", guess


def _batch_norm_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """cudnn/miopen: ``(input, grad_output, weight, running_mean, running_var, save_mean, save_var, ...)``;
    native: ``(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, ...)``."""
    ts = tensor_args(dims, types)
    a, b = arg_at(ts, 0), arg_at(ts, 1)
    if a is None or b is None or a.prec is None or a.shape != b.shape or len(a.shape) < 2:
        return None
    n, c = a.numel, a.shape[1]
    vec = _vectors(ts, 2, 6, c) + 2 * c * a.size  # + grad weight and grad bias written
    return float(11 * n), float(3 * n * a.size + vec), a.prec, "vector", False


def _norm_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)``,
    ``_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, output_mask)``."""
    ts = tensor_args(dims, types)
    g, x = arg_at(ts, 0), arg_at(ts, 1)
    rms = "rms" in name
    w = arg_at(ts, 4 if rms else 5)
    if g is None or x is None or g.prec is None or g.shape != x.shape or not x.shape:
        return None
    shape = ints(concrete_at(concrete, 2), len(re.findall(r"-?\d+", concrete_at(concrete, 2) or "")))
    hidden = math.prod(shape) if shape else (w.numel if w is not None else None)
    if not hidden or x.numel % hidden:
        return None
    n, rows = x.numel, x.numel // hidden
    mask = _mask(concrete, 5 if rms else 7, 2 if rms else 3) or [True] * (2 if rms else 3)
    params = (1 if rms else 2) if any(mask[1:]) else 0
    stats = rows * 4 * (1 if rms else 2)  # rstd (and mean), fp32
    flops = mask[0] * (7 if rms else 10) * n + (params > 0) * (3 if rms else 5) * n
    nbytes = (mask[0] * 3 * n + (params > 0) * 2 * n) * x.size + params * hidden * x.size
    nbytes += (w.bytes if w is not None else 0) + stats
    return float(flops), float(nbytes), x.prec, "vector", False


def _cudnn_conv_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(self, grad_output, weight, padding, stride, dilation, groups, ..., output_mask)``: both gradients
    (or per the last argument's mask), FLOPs as the forward's each."""
    ts = tensor_args(dims, types)
    x, gout, w = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 2)
    if x is None or gout is None or w is None or len(w.shape) < 3 or len(gout.shape) != len(w.shape):
        return None
    last = len(types) - 1 if isinstance(types, list) else 0
    mask = _mask(concrete, last, 2) or [True, True]
    fwd = 2 * gout.numel * math.prod(w.shape[1:])
    flops = fwd * (mask[0] + mask[1])
    nbytes = gout.bytes + x.bytes + w.bytes + mask[0] * x.bytes + mask[1] * w.bytes
    return float(flops), float(nbytes), x.prec, "matrix", False


#: attention backward: (layout, position of is_causal, of grad_out/query/key/value/out/logsumexp)
_ATTN_BWD = {
    "aten::_scaled_dot_product_flash_attention_backward": ("bhsd", 11, (0, 1, 2, 3, 4, 5)),
    "aten::_scaled_dot_product_efficient_attention_backward": ("bhsd", 11, (0, 1, 2, 3, 5, 6)),
    "aten::_scaled_dot_product_cudnn_attention_backward": ("bhsd", 14, (0, 1, 2, 3, 4, 5)),
    "aten::_flash_attention_backward": ("bshd", 11, (0, 1, 2, 3, 4, 5)),
    # custom_mask_type: 0 none, 1 causal (top-left), 2 causal from the bottom right (unknown here)
    "aten::_efficient_attention_backward": ("bshd", 14, (0, 1, 2, 3, 5, 10)),
}


def _attention_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    layout, at, pos = _ATTN_BWD[name]
    go, q, k, v, o, lse = (arg_at(ts, i) for i in pos)
    causal = truthy(concrete_at(concrete, at))
    if q is None or k is None or v is None or q.prec is None or causal is None:
        return None
    if len(q.shape) != 4 or len(k.shape) != 4:
        return None
    if layout == "bhsd":
        (b, h, s, d), (_, hkv, skv, _) = q.shape, k.shape
    else:
        (b, s, h, d), (_, skv, hkv, _) = q.shape, k.shape
    try:
        fwd = ops.flash_attention(b, h, s, skv, d, q.prec, kv_heads=hkv, causal=causal, kv_dtype=k.prec or q.prec)
    except InputError:
        return None
    qo = sum(t.bytes for t in (q, go, o) if t is not None) + q.bytes  # Q, dO, O read; dQ written
    kv = 2 * (k.bytes + v.bytes)  # K, V read; dK, dV written
    return float(2.5 * fwd.flops), float(qo + kv + (lse.bytes if lse is not None else 0)), q.prec, "matrix", False


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
        out -= 1
    return out


def _pool(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``max_poolNd_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)``,
    ``avg_poolNd(self, kernel_size, stride, padding, ceil_mode, ...)``."""
    ts = tensor_args(dims, types)
    x = arg_at(ts, 0)
    m = re.search(r"pool(\d)d", name)
    if m is None:
        return None
    nsp = int(m.group(1))
    if x is None or len(x.shape) < nsp + 1:
        return None
    is_max = "max" in name
    kern = ints(concrete_at(concrete, 1), nsp)
    stride_text = concrete_at(concrete, 2)
    stride = ints(stride_text, nsp) if stride_text and stride_text != "[]" else kern
    pad = ints(concrete_at(concrete, 3), nsp)
    dil = ints(concrete_at(concrete, 4), nsp) if is_max else [1] * nsp
    ceil = truthy(concrete_at(concrete, 5 if is_max else 4))
    if kern is None or stride is None or pad is None or dil is None or ceil is None or min(stride) <= 0:
        return None
    out_sp = [_pool_out(h, k, s, p, d, ceil) for h, k, s, p, d in zip(x.shape[-nsp:], kern, stride, pad, dil,
                                                                        strict=True)]
    if min(out_sp) <= 0:
        return None
    out = x.numel // math.prod(x.shape[-nsp:]) * math.prod(out_sp)
    nbytes = x.bytes + out * x.size + (out * 8 if is_max else 0)
    return float(out * math.prod(kern)), float(nbytes), x.prec, "vector", False


def _adaptive_pool(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    x = arg_at(ts, 0)
    size = ints(concrete_at(concrete, 1), 2)
    if x is None or size is None or len(x.shape) < 3 or min(size) <= 0:
        return None
    out = x.numel // math.prod(x.shape[-2:]) * math.prod(size)
    nbytes = x.bytes + out * x.size + (out * 8 if "max" in name else 0)
    return float(x.numel), float(nbytes), x.prec, "vector", False


def _pool_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(grad_output, self, ...)``: grad input of ``self``'s size; max pools read their indices (last arg)."""
    ts = tensor_args(dims, types)
    g, x = arg_at(ts, 0), arg_at(ts, 1)
    if g is None or x is None or len(g.shape) != len(x.shape):
        return None
    idx = ts[-1] if "max" in name and ts and ts[-1] is not None and ts[-1].shape == g.shape else None
    if "max" in name and idx is None:
        return None
    if "adaptive_avg" in name:
        flops = x.numel
    elif "avg" in name:
        kern = ints(concrete_at(concrete, 2), len(g.shape) - 2)
        if kern is None:
            return None
        flops = g.numel * math.prod(kern)
    else:
        flops = g.numel
    nbytes = g.bytes + x.numel * g.size + (idx.bytes if idx is not None else 0)
    return float(flops), float(nbytes), g.prec, "vector", False


def _embedding_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    g, idx = arg_at(ts, 0), arg_at(ts, 1)
    rows = ints(concrete_at(concrete, 2), 1)
    if g is None or idx is None or rows is None or not g.shape or rows[0] <= 0:
        return None
    hidden = g.shape[-1]
    return float(g.numel), float(g.bytes + idx.bytes + rows[0] * hidden * g.size), g.prec, "vector", False


OPS: dict[str, CostFn] = {
    **dict.fromkeys(("aten::cudnn_batch_norm", "aten::native_batch_norm", "aten::miopen_batch_norm",
                     "aten::_native_batch_norm_legit", "aten::_native_batch_norm_legit_no_training"), _batch_norm),
    **dict.fromkeys(("aten::cudnn_batch_norm_backward", "aten::native_batch_norm_backward",
                     "aten::miopen_batch_norm_backward"), _batch_norm_backward),
    "aten::native_layer_norm_backward": _norm_backward, "aten::_fused_rms_norm_backward": _norm_backward,
    "aten::cudnn_convolution_backward": _cudnn_conv_backward,
    "aten::miopen_convolution_backward": _cudnn_conv_backward,
    **dict.fromkeys(_ATTN_BWD, _attention_backward),
    **dict.fromkeys(("aten::max_pool1d_with_indices", "aten::max_pool2d_with_indices", "aten::max_pool3d_with_indices",
                     "aten::avg_pool2d", "aten::avg_pool3d"), _pool),
    **dict.fromkeys(("aten::_adaptive_avg_pool2d", "aten::adaptive_avg_pool2d", "aten::adaptive_max_pool2d"),
                    _adaptive_pool),
    **dict.fromkeys(("aten::max_pool2d_with_indices_backward", "aten::max_pool3d_with_indices_backward",
                     "aten::avg_pool2d_backward", "aten::avg_pool3d_backward", "aten::_adaptive_avg_pool2d_backward",
                     "aten::adaptive_max_pool2d_backward"), _pool_backward),
    "aten::embedding_dense_backward": _embedding_backward,
}

#: ops whose size argument is recorded only on the enclosing op (PyTorch ≤ 1.10): child → (parent,
#: ((parent argument, child Concrete Inputs position), ...))
FROM_PARENT = {
    "aten::cudnn_convolution_backward_weight": ("aten::cudnn_convolution_backward", ((2, 0),)),
    "aten::cudnn_convolution_backward_input": ("aten::cudnn_convolution_backward", ((0, 0),)),
    "aten::miopen_convolution_backward_weight": ("aten::miopen_convolution_backward", ((2, 0),)),
    "aten::miopen_convolution_backward_input": ("aten::miopen_convolution_backward", ((0, 0),)),
}


def with_parent(child: Signature, parent: Signature) -> Signature | None:
    """The child's signature with the sizes it did not record filled in from its parent's recorded shapes."""
    name, dims, types, conc, *rest = child
    spec = FROM_PARENT.get(name)
    if spec is None or parent[0] != spec[0] or not isinstance(dims, list) or not isinstance(parent[1], list):
        return None
    conc = [c if isinstance(c, str) else "" for c in conc] if isinstance(conc, list) else [""] * len(dims)
    conc += [""] * (len(dims) - len(conc))
    for p_arg, c_at in spec[1]:
        if c_at >= len(conc):
            return None  # the child records fewer arguments than its schema has
        if conc[c_at].strip():
            continue  # recorded by the child itself
        shape = parent[1][p_arg] if p_arg < len(parent[1]) else None
        if not isinstance(shape, list) or not shape or not all(type(v) is int for v in shape):
            return None
        conc[c_at] = str(shape)
    return (name, dims, types, conc, *rest)


def parent_context(ops_rows: list[tuple[Any, ...]], signatures: list[Signature], res_of_op: np.ndarray
                   ) -> np.ndarray:
    """``res_of_op`` with the ops of :data:`FROM_PARENT` pointing at signatures completed from their enclosing
    op (the innermost op of the parent's name on the same thread); new signatures are appended."""
    if not any(sig[0] in FROM_PARENT for sig in signatures):  # checked per distinct signature first
        return res_of_op
    need = [i for i, r in enumerate(res_of_op) if r >= 0 and signatures[r][0] in FROM_PARENT]
    if not need:
        return res_of_op
    from .kineto_link import innermost, numbers, thread_codes

    parents = sorted({FROM_PARENT[signatures[res_of_op[i]][0]][0] for i in need})
    cand = [i for i, o in enumerate(ops_rows) if o[4] in parents and res_of_op[i] >= 0]
    if not cand:
        return res_of_op
    rows = [ops_rows[i] for i in cand] + [ops_rows[i] for i in need]
    threads = thread_codes([o[0] for o in rows], [o[1] for o in rows])
    start = numbers([o[2] for o in rows], "ts", None, negative_ok=True)
    end = start + np.nan_to_num(numbers([o[3] for o in rows], "dur", None))
    k = len(cand)
    at = innermost(threads[:k], start[:k], end[:k], threads[k:], start[k:])
    out = res_of_op.copy()
    memo: dict[str, int] = {}
    for i, a in zip(need, at, strict=True):
        if a < 0:
            continue
        sig = with_parent(signatures[res_of_op[i]], signatures[res_of_op[cand[a]]])
        if sig is None:
            continue
        key = repr(sig)
        if key not in memo:
            signatures.append(sig)
            memo[key] = len(signatures) - 1
        out[i] = memo[key]
    return out
