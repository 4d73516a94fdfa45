"""Training ops of PyTorch traces (1 of 2): the optimizer's tensor-list ops, AMP, reductions, losses, softmax
backward, gathers and scatters, ``cat`` and RoPE. Registered into :data:`.kineto_ops.OPS`; the normalisations,
convolution, attention, pooling and embedding backward are in :mod:`.kineto_ops_grad`.

Bytes are off-chip traffic with every input read once and every output written once (as :mod:`.kineto_ops`);
FLOPs count one per elementwise operation (a multiply-add is 2, a comparison or ``sqrt`` 1), as PyTorch's
own counter and :func:`roofcore.ops.elementwise` do. Per family (``n``: elements, ``|x|``: element size):

* ``_foreach_<op>`` over tensor lists (``Input Dims`` a list of shapes per list argument; ``n`` = Σ numel of
  one list): FLOPs ``f·n`` with ``f`` = 1 for ``add sub mul div sqrt rsqrt exp log neg abs reciprocal sign
  sigmoid pow maximum minimum clamp_min clamp_max``, 3 for ``addcmul addcdiv lerp`` (``a + v·b·c``,
  ``a + w·(b − a)``), 2 for ``norm`` (square, add), 0 for ``zero_``/``copy_``; bytes: every list argument read
  and one list written (``zero_`` reads nothing, ``copy_`` only its source; ``norm`` writes one fp32 scalar per
  tensor); scalar and scalar-list arguments not counted.
* ``_fused_adam_`` / ``_fused_adamw_`` (PyTorch's FusedAdamMathFunctor): FLOPs ``13·n`` (moment 1 as a lerp 3,
  moment 2 ``β₂v + (1−β₂)g²`` 4, denominator ``√v/√bc₂ + ε`` 3, update ``p − s·m/d`` 3) + ``2·n`` for a
  weight decay recorded non-zero; bytes: params, grads, ``exp_avg``, ``exp_avg_sq`` (and ``max_exp_avg_sq``
  when given) read, params and both moments (and the max) written. ``_fused_sgd_``: ``2·n`` (``p − lr·g``)
  + ``3·n`` with momentum buffers (``μ·b + (1−τ)·g``) + ``2·n`` for a non-zero weight decay; params and grads
  (and buffers) read, params (and buffers) written.
* ``_amp_foreach_non_finite_check_and_unscale_``: FLOPs ``n`` (the multiply by ``inv_scale``; the finiteness
  test is a comparison); bytes ``2·n`` elements (read, written in place; ``found_inf`` and ``inv_scale``,
  8 B, not counted).
  ``_amp_update_scale_``: FLOPs 1; bytes: scale, growth tracker and found_inf read, scale and tracker written.
  Tensor lists record no element dtype (``Input type`` is ``TensorList``): each kernel's name gives it
  (:func:`name_dtype`: the first template argument of ``multi_tensor_apply_kernel``'s ``…Functor<float, …>``
  or ``FusedAdamMathFunctor<c10::Half, …>``), and :func:`list_dtypes` sizes the kernel's bytes by it; where the
  name gives none, fp32 (4 B) is assumed, as optimizer state and AMP's master gradients are, and said in a
  warning.
* reductions ``sum``, ``mean``, ``amax``, ``amin``, ``max``/``min`` (a full reduction, or along ``dim`` with
  int64 indices written too), ``prod``, ``norm``/``linalg_vector_norm``, ``var``/``std``: FLOPs 1 per input
  element (each element enters one add or comparison), 2 for norms (square, add), 3 for ``var``/``std``
  (subtract, square, add); bytes: input read + output written (at the ``dtype`` argument's size where given).
  The reduced dims come from ``Concrete Inputs``; a reduction whose dims were not recorded is unknown.
  ``max``/``min`` of two tensors are elementwise (:mod:`.kineto_ops`).
* ``_softmax_backward_data`` / ``_log_softmax_backward_data``: FLOPs ``4·n`` (``y·(g − Σg·y)``:
  multiply, add, subtract, multiply; ``g − eʸ·Σg``: add, exp, multiply, subtract); bytes: grad output and
  output read, grad input written (PyTorch ≤ 1.10's fourth argument, ``self``, only gives the dtype).
* ``nll_loss_forward`` / ``nll_loss2d_forward`` (``self [N, C(, H, W)]``, ``target``): ``R`` = target
  elements; FLOPs ``R`` (the sum of the picked log-probabilities) + ``2R`` with class weights; bytes: ``R``
  picked elements of ``self`` (one per row, not the row), the int64 targets, the weights picked, the output
  (``R`` elements for ``reduction=none``, else one) and ``total_weight``. ``nll_loss_backward`` /
  ``nll_loss2d_backward``: FLOPs ``R``; bytes: the whole grad input written (zeroed, then one value per row),
  targets, weights and the scalar grad output read. Cross-entropy is ``log_softmax`` + ``nll_loss`` (its
  kernels run in those children).
* gathers and scatters (FLOPs 0 unless they add): ``index_select`` and ``gather``: the gathered elements
  read, the indices, the output written; ``scatter``/``scatter_``: the indices and source (or a value)
  read, the scattered elements written (out-of-place: ``self`` copied, read and written); ``scatter_add``,
  ``scatter_reduce``, ``index_add``: FLOPs 1 per source element, the targets read and written.
* ``cat``: FLOPs 0, every input read and the output written, ``2·n`` elements, sized by the kernel name's
  element type (``CatArrayBatchedCopy<c10::Half, …>``, or ``OpaqueType<2>``: 2 B, no precision); a name that
  gives none leaves its bytes unknown.
* dropout: ``native_dropout(input, p, train)``: FLOPs ``2·n`` (compare the random number with ``p``, scale;
  the random numbers' generation not counted); bytes input read, output and the 1-byte mask written.
  ``native_dropout_backward(grad_output, mask, scale)``: FLOPs ``2·n`` (mask, scale); bytes grad output and
  mask read, grad input written. ``masked_fill(_)(self, mask, value)``: FLOPs 0; bytes ``self`` and the mask
  (and a tensor ``value``) read, ``self`` written. ``mse_loss(self, target, reduction)``: FLOPs ``3·n``
  (subtract, square, add); bytes both inputs read, the output (``n`` for ``reduction=none``, else 1)
  written; ``mse_loss_backward(grad_output, self, target, reduction)``: FLOPs ``3·n`` (subtract, two
  multiplies), bytes the three inputs read, grad input written.
* RoPE, vLLM's ``_C::rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox)``: rotation
  width ``r`` = the cache's last dim; rotated elements ``E = T·(H_q + H_k)·r`` (``H`` = width/``head_size``);
  FLOPs ``3·E`` (a pair ``(x₁, x₂)`` becomes ``(x₁c − x₂s, x₂c + x₁s)``: 4 multiplies and 2 adds per 2
  elements); bytes ``2·E`` elements (read and written in place) + ``T·r`` cache elements + ``8·T`` positions.

Anything that does not fit (an unknown dtype, dims not recorded, shapes that disagree) is None: unknown.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .kineto_args import DTYPES, CostFn, Result, TensorArg, arg_at, concrete_at, ints, tensor_args

_TENSOR_LIST = "TensorList"
#: the warning for a tensor list's assumed element size (list_dtypes prefixes "3 ops: ")
LIST_DTYPE_GUESS = ("tensor lists (the optimizer's _foreach_* and fused steps, AMP's unscale) record no "
                    "element dtype, nor did their kernels' names say it: fp32 (4 B per element) was assumed, as "
                    "optimizer state and AMP master gradients are; their bytes are half that for fp16/bf16 lists.")
_ASSUMED = (4.0, "fp32")
#: a tensor-list result's 6th field: {LIST_ELEMENTS: elements moved}, sized per kernel by list_dtypes
LIST_ELEMENTS = "list_elements"
_NAME_DTYPE = re.compile(r"(?:Functor|CatArrayBatchedCopy\w*)<\s*((?:[\w:]|\(anonymous namespace\))+(?:<\d+>)?)\s*,")
_OPAQUE = re.compile(r"OpaqueType<(\d+)>$")


def name_dtype(kernel: str) -> tuple[float, str | None] | None:
    """(bytes per element, precision) of a tensor-list kernel from its name's element type, or None."""
    m = _NAME_DTYPE.search(kernel)
    if m is None:
        return None
    t = m.group(1)
    opaque = _OPAQUE.search(t)
    if opaque:
        return float(opaque.group(1)), None
    spec = DTYPES.get(t)
    return (float(spec[0]), spec[1]) if spec else None


def _listed(flops: float, elements: float) -> Result:
    """A tensor-list result at the assumed 4 B per element, the elements moved kept for :func:`list_dtypes`."""
    size, prec = _ASSUMED
    return float(flops), float(elements * size), prec, "vector", False, {LIST_ELEMENTS: float(elements)}


def list_dtypes(results: list[Result | None], rk: np.ndarray, kernels: np.ndarray, share: np.ndarray,
                names: list[str], ops_k: np.ndarray, b_hbm: np.ndarray, precision: np.ndarray,
                warnings: list[str]) -> None:
    """In place: the bytes and precision of tensor-list kernels (``results[rk]`` with :data:`LIST_ELEMENTS`) from
    their names' element type; ``cat`` without one stays unknown, the others keep 4 B, said in one warning."""
    guessed: set[int] = set()
    for j, (r, k) in enumerate(zip(rk, kernels, strict=True)):
        res = results[r] if r < len(results) else None
        extra = res[5] if res is not None and len(res) > 5 and isinstance(res[5], dict) else None
        if res is None or extra is None or LIST_ELEMENTS not in extra:
            continue
        found = name_dtype(names[k])
        if found is not None:
            b_hbm[k] = extra[LIST_ELEMENTS] * found[0] * share[j]
            precision[k] = found[1]
        elif res[1] == res[1]:  # an optimizer op: the 4 B assumption stands
            guessed.add(int(ops_k[j]))
    if guessed:
        warnings.append(f"{len(guessed):,} {'op' if len(guessed) == 1 else 'ops'}: {LIST_DTYPE_GUESS}")


def _lists(dims: object, types: object) -> list[list[tuple[int, ...]] | None]:
    """Per argument, the shapes of a tensor list (``Input type`` ``TensorList``), or None."""
    if not isinstance(dims, list) or not isinstance(types, list):
        return []
    out: list[list[tuple[int, ...]] | None] = []
    for d, t in zip(dims, types, strict=False):
        ok = (t == _TENSOR_LIST and isinstance(d, list)
              and all(isinstance(s, list) and all(type(x) is int and x >= 0 for x in s) for s in d))
        out.append([tuple(s) for s in d] if ok else None)
    return out


def _numel(shapes: list[tuple[int, ...]]) -> int:
    return sum(math.prod(s) for s in shapes)


_FOREACH_FLOPS = {
    **dict.fromkeys(("add", "sub", "mul", "div", "sqrt", "rsqrt", "exp", "log", "neg", "abs", "reciprocal", "sign",
                     "sigmoid", "pow", "maximum", "minimum", "clamp_min", "clamp_max"), 1),
    **dict.fromkeys(("addcmul", "addcdiv", "lerp"), 3), "norm": 2, "zero": 0, "copy": 0,
}


def _foreach(dims: object, types: object, concrete: object, name: str) -> Result | None:
    base = name.removeprefix("aten::_foreach_").rstrip("_")
    lists = [s for s in _lists(dims, types) if s is not None]
    if not lists or any(len(s) != len(lists[0]) for s in lists):
        return None
    n = _numel(lists[0])
    if any(_numel(s) != n for s in lists[1:]):  # a list argument of other sizes (broadcast): not modelled
        return None
    reads = 0 if base == "zero" else 1 if base == "copy" else len(lists)
    writes = len(lists[0]) if base == "norm" else n  # norm: one scalar per tensor
    return _listed(_FOREACH_FLOPS[base] * n, reads * n + writes)


def _nonzero(text: str | None) -> bool:
    try:
        return text is not None and float(text) != 0.0
    except ValueError:
        return False


def _fused_adam(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay, ...)``."""
    ls = _lists(dims, types)
    p, g, m, v = (ls[i] if i < len(ls) else None for i in range(4))
    mx = ls[4] if len(ls) > 4 else None
    if p is None or g is None or m is None or v is None:
        return None
    n = _numel(p)
    if any(_numel(s) != n for s in (g, m, v)):
        return None
    extra = 1 if mx and _numel(mx) == n else 0  # amsgrad: max_exp_avg_sqs read and written
    return _listed((13 + 2 * _nonzero(concrete_at(concrete, 9))) * n, (4 + extra + 3 + extra) * n)


def _fused_sgd(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(self, grads, momentum_buffer_list, weight_decay, momentum, lr, ...)``."""
    ls = _lists(dims, types)
    p, g = (ls[i] if i < len(ls) else None for i in range(2))
    buf = ls[2] if len(ls) > 2 else None
    if p is None or g is None or _numel(g) != _numel(p):
        return None
    n = _numel(p)
    has_buf = bool(buf and _numel(buf) == n)
    return _listed((2 + 3 * has_buf + 2 * _nonzero(concrete_at(concrete, 3))) * n, (2 + has_buf + 1 + has_buf) * n)


def _amp_unscale(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ls = _lists(dims, types)
    grads = ls[0] if ls else None
    if grads is None:
        return None
    return _listed(_numel(grads), 2 * _numel(grads))  # + found_inf and inv_scale: 8 B, not counted


def _amp_update_scale(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    scale, tracker, found = (arg_at(ts, i) for i in range(3))
    if scale is None or tracker is None or found is None:
        return None
    nbytes = 2 * scale.bytes + 2 * tracker.bytes + found.bytes
    return 1.0, float(nbytes), scale.prec, "vector", False


#: reductions: FLOPs per input element
_REDUCE_FLOPS = {"sum": 1, "mean": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "prod": 1, "nansum": 1,
                 "norm": 2, "linalg_vector_norm": 2, "var": 3, "std": 3, "argmax": 1, "argmin": 1}
_LIST_TYPES = ("ScalarList", "GenericList", "IntArrayRef", "int[]", "Int[]")


def _reduced_out(x: TensorArg, dims: object, types: object, concrete: object, at: int) -> int | None:
    """Elements of the output of reducing ``x`` over the dims given by argument ``at``; None: not recorded."""
    t = types[at] if isinstance(types, list) and at < len(types) else None
    text = concrete_at(concrete, at)
    if t is None or t == "":  # the overload without dims (sum(self, dtype)), or dim=None: a full reduction
        return 1 if text is None else None
    if text is None:
        return None
    if text.lower() == "none":
        return 1
    nd = len(x.shape)
    axes = {a % nd for a in (int(v) for v in re.findall(r"-?\d+", text))} if nd else set()
    if not axes and t in _LIST_TYPES:
        return 1  # dim=[]: every dim
    if any(a >= nd for a in axes):
        return None
    return math.prod(s for i, s in enumerate(x.shape) if i not in axes)


def _reduce(dims: object, types: object, concrete: object, name: str) -> Result | None:
    op = name.removeprefix("aten::")
    ts = tensor_args(dims, types)
    x = arg_at(ts, 0)
    if x is None:
        return None
    t1 = types[1] if isinstance(types, list) and len(types) > 1 else None
    if op in ("norm", "linalg_vector_norm"):  # norm(self, p, dim, keepdim, dtype) / (self, ord, dim, keepdim, dtype)
        at = 2 if isinstance(types, list) and len(types) > 2 else 9
    elif op in ("var", "std"):  # var(self, dim, correction, keepdim) and var(self, unbiased)
        at = 1 if t1 not in ("Scalar", "bool") else 9
    else:
        at = 1
    if isinstance(types, list) and at >= len(types):
        out = 1 if op not in ("max", "min") or len(types) == 1 else None
    else:
        out = _reduced_out(x, dims, types, concrete, at)
    if out is None:
        return None
    out_size = x.size
    dt = concrete_at(concrete, len(types) - 1) if op in ("sum", "mean", "prod", "nansum") and isinstance(types, list) else None
    if dt is not None and dt.isdigit():  # the dtype argument as a c10::ScalarType code: 6 float, 5 half, 15 bf16, 7 double
        out_size = {5: 2, 6: 4, 7: 8, 15: 2}.get(int(dt), out_size)
    nbytes = x.bytes + out * out_size
    if op in ("argmax", "argmin"):
        nbytes = x.bytes + out * 8
    elif op in ("max", "min") and out > 1:
        nbytes += out * 8  # values and int64 indices
    return float(_REDUCE_FLOPS[op] * x.numel), float(nbytes), x.prec, "vector", False


def _max_min(dims: object, types: object, concrete: object, name: str) -> Result | None:
    if len(tensor_args(dims, types)) > 1 and arg_at(tensor_args(dims, types), 1) is not None:
        from .kineto_ops import elementwise

        return elementwise(tensor_args(dims, types), concrete, name)
    return _reduce(dims, types, concrete, name)


def _softmax_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    g, y = arg_at(ts, 0), arg_at(ts, 1)
    if g is None or y is None or g.prec is None or g.shape != y.shape:
        return None
    return float(4 * g.numel), float(g.bytes + y.bytes + g.bytes), g.prec, "vector", False


def _nll_rows(x: TensorArg, target: TensorArg) -> int | None:
    """Rows of an NLL loss: the target's elements, which must be the input's without its class dim."""
    if len(x.shape) == 1:
        return 1 if target.numel == 1 else None
    if target.shape != (x.shape[0], *x.shape[2:]):
        return None
    return target.numel


def _nll_forward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(self, target, weight, reduction, ignore_index)``; reduction 0 is ``none``."""
    ts = tensor_args(dims, types)
    x, target, weight = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 2)
    if x is None or target is None or x.prec is None:
        return None
    rows = _nll_rows(x, target)
    if rows is None:
        return None
    red = ints(concrete_at(concrete, 3), 1)
    out = rows if red == [0] else 1
    flops = rows * (3 if weight is not None else 1)
    nbytes = rows * x.size + target.bytes + (rows * weight.size if weight is not None else 0) + out * x.size + 4
    return float(flops), float(nbytes), x.prec, "vector", False


def _nll_backward(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(grad_output, self, target, weight, reduction, ignore_index, total_weight)``."""
    ts = tensor_args(dims, types)
    g, x, target, weight = (arg_at(ts, i) for i in range(4))
    if g is None or x is None or target is None or x.prec is None:
        return None
    rows = _nll_rows(x, target)
    if rows is None:
        return None
    nbytes = g.bytes + target.bytes + (rows * weight.size if weight is not None else 0) + x.bytes + 4
    return float(rows), float(nbytes), x.prec, "vector", False


def _index_select(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(self, dim, index)``: ``index`` rows along ``dim``."""
    ts = tensor_args(dims, types)
    x, idx = arg_at(ts, 0), arg_at(ts, 2)
    dim = ints(concrete_at(concrete, 1), 1)
    if x is None or idx is None or dim is None or not x.shape:
        return None
    d = dim[0] % len(x.shape)
    if not x.shape[d]:
        return None
    out = x.numel // x.shape[d] * idx.numel
    return 0.0, float(2 * out * x.size + idx.bytes), x.prec, "vector", False


def _gather(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(self, dim, index, sparse_grad)``: the output has the index's shape."""
    ts = tensor_args(dims, types)
    x, idx = arg_at(ts, 0), arg_at(ts, 2)
    if x is None or idx is None or len(idx.shape) != len(x.shape):
        return None
    return 0.0, float(2 * idx.numel * x.size + idx.bytes), x.prec, "vector", False


def _scatter(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(self, dim, index, src|value, ...)``: ``_add``/``_reduce`` and ``index_add`` add; out-of-place copies self."""
    ts = tensor_args(dims, types)
    x, idx, src = arg_at(ts, 0), arg_at(ts, 2), arg_at(ts, 3)
    if x is None or idx is None:
        return None
    adds = "add" in name or "reduce" in name
    if name.startswith("aten::index_add"):  # (self, dim, index, source, alpha): whole slices per index
        if src is None:
            return None
        moved = src.numel
    else:
        moved = idx.numel
    nbytes = idx.bytes + (moved * src.size if src is not None else 0) + moved * x.size * (2 if adds else 1)
    if not name.endswith("_"):
        nbytes += 2 * x.bytes  # the out-of-place form copies self first
    return float(moved if adds else 0), float(nbytes), x.prec, "vector", False


def _cat(dims: object, types: object, concrete: object, name: str) -> Result | None:
    """``(tensors, dim)``: every input read, the output written; sized by the kernel name (:func:`list_dtypes`)."""
    ls = _lists(dims, types)
    if not ls or ls[0] is None or not ls[0]:
        return None
    return 0.0, math.nan, None, "vector", False, {LIST_ELEMENTS: float(2 * _numel(ls[0]))}


def _rotary(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    pos, q, k, cache = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 2), arg_at(ts, 4)
    head = ints(concrete_at(concrete, 3), 1)
    if pos is None or q is None or cache is None or head is None or q.prec is None or len(cache.shape) != 2:
        return None
    tokens, r, hs = pos.numel, cache.shape[1], head[0]
    widths = [t.numel // tokens for t in (q, k) if t is not None] if tokens else []
    if not tokens or hs <= 0 or r > hs or any(w % hs for w in widths):
        return None
    rotated = tokens * sum(w // hs for w in widths) * r
    nbytes = 2 * rotated * q.size + tokens * r * cache.size + pos.bytes
    return float(3 * rotated), float(nbytes), q.prec, "vector", False


def _dropout(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    x = arg_at(ts, 0)
    if x is None:
        return None
    if name.endswith("_backward"):  # (grad_output, mask, scale)
        mask = arg_at(ts, 1)
        if mask is None or mask.shape != x.shape:
            return None
        return float(2 * x.numel), float(2 * x.bytes + mask.bytes), x.prec, "vector", False
    return float(2 * x.numel), float(2 * x.bytes + x.numel), x.prec, "vector", False  # + the bool mask


def _masked_fill(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    x, mask, value = arg_at(ts, 0), arg_at(ts, 1), arg_at(ts, 2)
    if x is None or mask is None:
        return None
    return 0.0, float(2 * x.bytes + mask.bytes + (value.bytes if value is not None else 0)), x.prec, "vector", False


def _mse(dims: object, types: object, concrete: object, name: str) -> Result | None:
    ts = tensor_args(dims, types)
    back = name.endswith("_backward")
    g = arg_at(ts, 0) if back else None
    x, t = (arg_at(ts, 1), arg_at(ts, 2)) if back else (arg_at(ts, 0), arg_at(ts, 1))
    if x is None or t is None or (back and g is None):
        return None
    if back and g is not None:
        return float(3 * x.numel), float(g.bytes + x.bytes + t.bytes + x.bytes), x.prec, "vector", False
    red = ints(concrete_at(concrete, 2), 1)
    out = x.numel if red == [0] else 1
    return float(3 * x.numel), float(x.bytes + t.bytes + out * x.size), x.prec, "vector", False


_FOREACH_NAMES = [f"aten::_foreach_{b}{s}" for b in _FOREACH_FLOPS for s in ("", "_")
                  if not (b in ("zero", "copy") and s == "")]
#: called with the raw ``(Input Dims, Input type, Concrete Inputs, name)``: tensor lists need the raw dims
OPS: dict[str, CostFn] = {
    **dict.fromkeys(_FOREACH_NAMES, _foreach),
    "aten::_fused_adam_": _fused_adam, "aten::_fused_adamw_": _fused_adam, "aten::_fused_adam": _fused_adam,
    "aten::_fused_adamw": _fused_adam, "aten::_fused_sgd_": _fused_sgd, "aten::_fused_sgd": _fused_sgd,
    "aten::_amp_foreach_non_finite_check_and_unscale_": _amp_unscale, "aten::_amp_update_scale_": _amp_update_scale,
    **{f"aten::{op}": _reduce for op in _REDUCE_FLOPS if op not in ("max", "min")},
    "aten::max": _max_min, "aten::min": _max_min,
    "aten::_softmax_backward_data": _softmax_backward, "aten::_log_softmax_backward_data": _softmax_backward,
    "aten::nll_loss_forward": _nll_forward, "aten::nll_loss2d_forward": _nll_forward,
    "aten::nll_loss_backward": _nll_backward, "aten::nll_loss2d_backward": _nll_backward,
    "aten::index_select": _index_select, "aten::gather": _gather,
    **dict.fromkeys(("aten::scatter", "aten::scatter_", "aten::scatter_add", "aten::scatter_add_",
                     "aten::scatter_reduce", "aten::scatter_reduce_", "aten::index_add", "aten::index_add_"), _scatter),
    "aten::cat": _cat, "_C::rotary_embedding": _rotary,
    "aten::native_dropout": _dropout, "aten::native_dropout_backward": _dropout,
    "aten::masked_fill": _masked_fill, "aten::masked_fill_": _masked_fill,
    "aten::mse_loss": _mse, "aten::mse_loss_backward": _mse,
}
