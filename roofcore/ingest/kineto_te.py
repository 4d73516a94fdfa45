"""Transformer Engine ops in PyTorch traces: its GEMMs and fused layer-norm MLP, whose kernels TE launches from its
own C++ extension, so the op that carries the shapes is TE's, not an aten matmul.

* 1.x ``tex_ts::te_gemm_ts`` (``A`` at 0, ``B`` at 5, ``D`` at 10, bias at 14, accumulate at 20): ``2·M·N·K`` with ``D[M,N]`` and ``K`` the dimension ``A`` and ``B`` share; bytes A + B + D (read too
  when accumulating) + bias; FP8 operands are ``uint8`` tensors. 2.x ``_Linear`` (weight 0, input 1, fp8 flag
  4) and ``_LayerNormLinear`` (input 0, norm weight 1, weight 3, fp8 flag 7), whose GEMM kernels the op launches
  directly: :func:`roofcore.ops.matmul` of ``x·Wᵀ`` (+ the layer norm's FLOPs and parameters), FP8 inputs
  (1 byte) when the flag says so. Positions as TraceLens reads them (TE commit 91405eb); a shape that does not
  fit (``x``'s last dimension ≠ ``W``'s second) is unknown. Their backward nodes record no shapes: unknown.
* 2.x ``_LayerNormMLP`` (``LayerNorm → FC1 → activation → FC2``): argument positions differ between TE versions,
  so the tensors are found by shape: the input ``x[.., H]``, ``FC1``'s weight ``[F1, H]`` and ``FC2``'s
  ``[H, F]`` with ``F1 = F`` or ``2F`` (a gated activation: SwiGLU, GeGLU), γ (and β) ``[H]``. FLOPs: the layer
  norm (:func:`roofcore.ops.layernorm`) + ``2·rows·H·F1`` + the activation (``F1`` per row: 1 FLOP per element,
  the gate's product counted as well) + ``2·rows·F·H``; bytes: ``x``, γ, β, both weights and biases read once,
  the output ``[rows, H]`` written (the intermediate ``[rows, F1]`` written and read once more: FC1 and FC2 are
  separate GEMM kernels). Precision: the input's (the ``fp8`` flag's position varies between TE versions, so FP8
  execution is not read here). No such pair of weights: unknown.
"""

from __future__ import annotations

from .. import ops
from .kineto_args import CostFn, Result, TensorArg, arg_at, concrete_at, truthy


def _te_gemm(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """Transformer Engine 1.x ``tex_ts::te_gemm_ts(A, A_scale_inv, A_fp8_tensor, A_type, transa, B, B_scale_inv,
    B_fp8_tensor, B_type, transb, D, D_scale, D_type, D_amax, bias, bias_type, pre_gelu_out, grad, workspace,
    workspaceSize, accumulate, use_split_accumulator)``: ``D = op(A)·op(B)``; K is the dimension A and B share
    whose other dimensions are D's (so the transposes need not be read). FP8 operands are stored as ``uint8``."""
    a, b, d = arg_at(ts, 0), arg_at(ts, 5), arg_at(ts, 10)
    if a is None or b is None or d is None or len(a.shape) != 2 or len(b.shape) != 2 or len(d.shape) != 2:
        return None
    k = next((a.shape[i] for i in (0, 1) for j in (0, 1) if a.shape[i] == b.shape[j]
              and sorted((a.shape[1 - i], b.shape[1 - j])) == sorted(d.shape)), None)
    if k is None:
        return None
    bias = arg_at(ts, 14)
    accumulate = truthy(concrete_at(concrete, 20))
    nbytes = a.bytes + b.bytes + d.bytes * (2 if accumulate else 1) + (bias.bytes if bias is not None else 0.0)
    prec = a.prec if a.prec is not None else ("fp8" if a.size == 1 else None)
    return 2.0 * d.numel * k, float(nbytes), prec, "matrix", False


#: Transformer Engine 2.x autograd functions: (weight, input, layer-norm weight) positions among the forward's
#: arguments, and where its ``fp8`` flag sits in Concrete Inputs (TE's module/linear.py, layernorm_linear.py)
_TE_LINEAR = {"_Linear": (0, 1, None, 4), "_LayerNormLinear": (3, 0, 1, 7)}


def _te_linear(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """TE 2.x ``_Linear`` / ``_LayerNormLinear`` forward: ``y = x·Wᵀ`` (+ the layer norm of ``x`` first):
    :func:`roofcore.ops.matmul` on ``[∏x[:-1], in] @ [in, out]`` (+ :func:`roofcore.ops.layernorm`'s FLOPs and the
    norm's parameters read); FP8 when the ``fp8`` flag says so (inputs cast inside the op: 1 byte each)."""
    wi, xi, lni, fp8_at = _TE_LINEAR[name]
    w, x, ln = arg_at(ts, wi), arg_at(ts, xi), (arg_at(ts, lni) if lni is not None else None)
    if w is None or x is None or len(w.shape) != 2 or not x.shape or x.shape[-1] != w.shape[1] or x.prec is None:
        return None
    rows = x.numel // x.shape[-1]
    fp8 = truthy(concrete_at(concrete, fp8_at))
    prec = "fp8" if fp8 else x.prec
    kern = ops.matmul(rows, w.shape[0], w.shape[1], prec, out_dtype=x.prec)
    flops, nbytes = kern.flops, kern.bytes["hbm"]
    if ln is not None:
        flops += ops.layernorm(rows, x.shape[-1], x.prec).flops
        nbytes += ln.bytes * 2  # γ and β
    return float(flops), float(nbytes), prec, "matrix", False


def _layernorm_mlp(ts: list[TensorArg | None], concrete: object, name: str) -> Result | None:
    """TE 2.x ``_LayerNormMLP`` forward, its tensors found by shape (see the module docstring)."""
    x = arg_at(ts, 0)
    if x is None or x.prec is None or len(x.shape) < 2:
        return None
    hidden = x.shape[-1]
    rows = x.numel // hidden
    mats = [t for t in ts[1:] if t is not None and len(t.shape) == 2]
    pair = next(((w1, w2) for w1 in mats for w2 in mats if w1 is not w2 and w1.shape[1] == hidden
                 and w2.shape[0] == hidden and w1.shape[0] in (w2.shape[1], 2 * w2.shape[1])), None)
    if pair is None:
        return None
    w1, w2 = pair
    f1, f = w1.shape[0], w2.shape[1]
    vecs = [t for t in ts[1:] if t is not None and t.shape in ((hidden,), (f1,))]
    prec, size = x.prec, x.size
    flops = (ops.layernorm(rows, hidden, x.prec).flops + 2.0 * rows * hidden * f1 + rows * f1
             + 2.0 * rows * f * hidden)
    nbytes = (x.bytes + sum(t.bytes for t in vecs) + (w1.numel + w2.numel) * size + 2.0 * rows * f1 * size
              + rows * hidden * x.size)
    return float(flops), float(nbytes), prec, "matrix", False


OPS: dict[str, CostFn] = {
    "tex_ts::te_gemm_ts": _te_gemm, **dict.fromkeys(_TE_LINEAR, _te_linear), "_LayerNormMLP": _layernorm_mlp,
}
