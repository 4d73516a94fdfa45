"""Workload builders: whole kernel lists from a model's shapes, built from the op formulas in :mod:`roofcore.ops`.

A builder returns a :class:`~roofcore.models.Workload` like any reader does (``formats=("builder",)``,
``sources=("builder:<name>",)``), so everything downstream (analyze, plan, charts, report) treats it as
an inventory. Every kernel is one launch (``count`` 1) of an op whose formula is documented in
:mod:`roofcore.ops`; the frame has one extra numeric column, ``weight_bytes``: the part of the kernel's
off-chip bytes that are model weights (projection matrices, norm scales). Scaling the batch keeps
``weight_bytes`` fixed and scales the rest.

Registry: :data:`BUILDERS` maps a name to its function and :data:`BUILDER_PARAMS` to its parameters;
:func:`build_workload` checks a parameter mapping (from a scenario YAML ``builder:`` entry or the app)
and calls the builder.

Transformer template (:func:`transformer`), a decoder-only model (Llama-style), per layer ``i``:

======================  ================================================================  ======================
kernel (``op`` key)     op and shape (``T`` tokens, ``d = hidden/heads``, ``Hkv`` KV heads)   weights
======================  ================================================================  ======================
``attn_norm``           ``rmsnorm(T, hidden)`` at ``act_dtype``                             γ: ``hidden·|act|``
``qkv_proj``            ``matmul(T, (heads + 2·Hkv)·d, hidden)``, ``b`` at ``weight_dtype``   ``hidden·(H+2Hkv)·d``
``rope``                ``elementwise(T·(heads + Hkv)·d)``, 3 FLOPs/element (2 mul, 1 add)  —
``kv_cache_write``      new K and V (``T·2·Hkv·d``) read at ``act``, written at ``kv_dtype``  —
``attention``           ``flash_attention(batch, heads, q, kv, d, Hkv, causal)``, K/V at    —
                        ``kv_dtype``; or unfused: ``attn_scores``, ``attn_softmax``,
                        ``attn_pv`` (:func:`unfused_attention`)
``o_proj``              ``matmul(T, hidden, heads·d)``                                      ``heads·d·hidden``
``attn_residual``       ``elementwise(T·hidden)``, 2 inputs, 1 output, 1 FLOP               —
``ffn_norm``            ``rmsnorm(T, hidden)``                                              γ
``ffn_gate``/``ffn_up`` ``matmul(T, ffn, hidden)`` each (SwiGLU; ``gated_ffn=False``: up    ``hidden·ffn`` each
                        only)
``ffn_act``             SwiGLU ``silu(g)·u``: ``elementwise(T·ffn)``, 2 inputs, 5 FLOPs     —
                        (negate, exp, add, divide, multiply); GELU (tanh): 1 input, 8 FLOPs
``ffn_down``            ``matmul(T, hidden, ffn)``                                          ``ffn·hidden``
``ffn_residual``        as ``attn_residual``                                                —
======================  ================================================================  ======================

plus ``embedding`` (gather of ``T`` rows at ``weight_dtype``, output at ``act_dtype``; its bytes grow
with the tokens, so ``weight_bytes`` is 0), ``final_norm`` (``rmsnorm(T, hidden)``) and ``lm_head``
(``matmul(L, vocab, hidden)``, ``L`` = ``batch`` for ``logits="last"``, ``T`` for ``"all"``).

Phases: ``prefill`` processes ``T = batch·seq`` tokens; attention has ``q = seq`` queries over
``kv = context`` keys (default ``seq``; a larger context is a cached prefix), causal. ``decode``
processes one token per sequence, ``T = batch``; attention has ``q = 1`` over ``kv = context`` keys
(default ``seq``: the KV length attended, the new token included), so each layer reads the KV cache,
``2·batch·context·Hkv·d·|kv_dtype|`` bytes, and appends one token's K/V. GQA/MQA: K/V widths and the
cache use ``kv_heads``, not ``heads``.

Precisions: ``weight_dtype`` sets the bytes of the projection matrices (and the embedding table);
``act_dtype`` sets activations and the compute ceiling of every kernel: int8/int4 weights shrink the
bytes, but the math still runs at ``act_dtype`` (weight-only quantisation dequantises on the fly; a
full int8 model sets ``act_dtype`` to int8 too). ``kv_dtype`` sets the cache. Norm scales are stored at
``act_dtype``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import ops
from .errors import InputError
from .ingest import make_frame
from .models import DTYPE_SIZE, OFFCHIP, Kernel, Workload, canonical_dtype

__all__ = [
    "BUILDERS", "BUILDER_PARAMS", "Item", "attention", "build_workload", "transformer", "unfused_attention",
    "workload_from",
]


@dataclass(frozen=True)
class Item:
    """One kernel of a built workload and the part of its off-chip bytes that are weights."""

    kernel: Kernel
    weight_bytes: float = 0.0


def workload_from(items: Sequence[Item | Kernel], *, name: str, builder: str, meta: Mapping[str, str] | None = None
                  ) -> Workload:
    """A workload frame from kernels (one row each), with the ``weight_bytes`` column."""
    packed = [it if isinstance(it, Item) else Item(it) for it in items]
    if not packed:
        raise InputError(where=f"builder:{builder}", expected="at least one kernel", found="none")
    n = len(packed)
    ks = [it.kernel for it in packed]
    levels = list(dict.fromkeys(level for k in ks for level in k.bytes))
    columns: dict[str, object] = {
        "name": [k.name for k in ks],
        "count": np.array([k.count for k in ks], dtype=np.int64),
        "flops": np.array([k.flops for k in ks], dtype=np.float64),
        "precision": [k.precision for k in ks],
        "unit": [k.unit for k in ks],
        "group": [k.group for k in ks],
        "source": [f"builder:{builder}"] * n,
        "row": [str(i + 1) for i in range(n)],
        "weight_bytes": np.array([it.weight_bytes for it in packed], dtype=np.float64),
    }
    for level in levels:
        columns[f"bytes_{level}"] = np.array([k.bytes.get(level, 0.0) for k in ks], dtype=np.float64)
    return Workload(frame=make_frame(columns, n), name=name, sources=(f"builder:{builder}",), formats=("builder",),
                    meta=dict(meta or {}))


def _with(k: Kernel, name: str, group: str | None) -> Kernel:
    return Kernel(name=name, flops=k.flops, bytes=dict(k.bytes), count=k.count, time_s=k.time_s,
                  precision=k.precision, unit=k.unit, group=group)


def _check_heads(heads: int, kv_heads: int | None) -> int:
    kvh = heads if kv_heads is None else kv_heads
    if kvh < 1 or heads % kvh:
        raise InputError(where="kv_heads", expected=f"a positive divisor of heads ({heads})", found=str(kv_heads),
                         hint="grouped-query attention shares each K/V head over heads/kv_heads query heads.")
    return kvh


def unfused_attention(*, batch: int, heads: int, q_len: int, kv_len: int, head_dim: int, kv_heads: int | None = None,
                      dtype: str = "bf16", kv_dtype: str | None = None, causal: bool = True,
                      name: str = "attn", group: str | None = None) -> list[Kernel]:
    """Attention as three kernels, each round-tripping its result through off-chip memory.

    ``{name}_scores`` ``S = QKᵀ``: FLOPs ``2·B·H·q·kv·d``; bytes Q ``B·H·q·d`` + K ``B·Hkv·kv·d`` (at
    ``kv_dtype``) + S written ``B·H·q·kv``. ``{name}_softmax``: :func:`roofcore.ops.softmax` over
    ``B·H·q`` rows of ``kv`` (scale and mask folded in, not counted). ``{name}_pv`` ``O = PV``: FLOPs
    ``2·B·H·q·kv·d``; bytes P ``B·H·q·kv`` + V ``B·Hkv·kv·d`` + O ``B·H·q·d``. A causal mask does not
    remove work here (the full matrices are computed, then masked), unlike the flash kernel. GQA: each
    K/V head is read once (a broadcast batched matmul; a ``repeat_kv`` copy would add traffic).
    """
    kvh = _check_heads(heads, kv_heads)
    del causal  # the unfused kernels compute every pair; kept for a signature like flash_attention's
    dtype = canonical_dtype(dtype)
    s, skv = DTYPE_SIZE[dtype], DTYPE_SIZE[canonical_dtype(kv_dtype or dtype)]
    q_bytes = batch * heads * q_len * head_dim * s
    kv_bytes = batch * kvh * kv_len * head_dim * skv
    score_bytes = batch * heads * q_len * kv_len * s
    flops = 2.0 * batch * heads * q_len * kv_len * head_dim
    sm = ops.softmax(batch * heads * q_len, kv_len, dtype)
    return [
        Kernel(name=f"{name}_scores", flops=flops, bytes={OFFCHIP: q_bytes + kv_bytes + score_bytes},
               precision=dtype, unit="matrix", group=group),
        _with(sm, f"{name}_softmax", group),
        Kernel(name=f"{name}_pv", flops=flops, bytes={OFFCHIP: score_bytes + kv_bytes + q_bytes},
               precision=dtype, unit="matrix", group=group),
    ]


def attention(*, batch: int, heads: int, q_len: int, kv_len: int, head_dim: int, kv_heads: int | None = None,
              dtype: str = "bf16", kv_dtype: str | None = None, causal: bool = True, flash: bool = True,
              name: str | None = None) -> Workload:
    """One attention layer as a workload: the flash-fused kernel (``flash=True``) or the unfused three."""
    kvh = _check_heads(heads, kv_heads)
    title = name or f"attention B{batch} H{heads}/{kvh} q{q_len} kv{kv_len} d{head_dim} ({'flash' if flash else 'unfused'})"
    if flash:
        ks = [_with(ops.flash_attention(batch, heads, q_len, kv_len, head_dim, dtype, kv_heads=kvh, causal=causal,
                                        kv_dtype=kv_dtype), "flash_attention", "attention")]
    else:
        ks = unfused_attention(batch=batch, heads=heads, q_len=q_len, kv_len=kv_len, head_dim=head_dim, kv_heads=kvh,
                               dtype=dtype, kv_dtype=kv_dtype, causal=causal, group="attention")
    return workload_from(ks, name=title, builder="attention")


PHASES = ("prefill", "decode")
LOGITS = ("last", "all")
GROUP_BY = ("op", "layer", "layer/op")


def _check_transformer(*, layers: int, hidden: int, heads: int, ffn: int, vocab: int, batch: int, seq: int,
                       kv_heads: int | None, head_dim: int | None, phase: str, context: int | None, logits: str,
                       group_by: str) -> tuple[int, int, int]:
    """``(kv_heads, head_dim, context)`` of :func:`transformer`'s arguments, checked (one message per mistake)."""
    if phase not in PHASES:
        raise InputError(where="phase", expected=" or ".join(PHASES), found=repr(phase))
    if logits not in LOGITS:
        raise InputError(where="logits", expected=" or ".join(LOGITS), found=repr(logits))
    if group_by not in GROUP_BY:
        raise InputError(where="group_by", expected=" or ".join(GROUP_BY), found=repr(group_by))
    for key, value in (("layers", layers), ("hidden", hidden), ("heads", heads), ("ffn", ffn), ("vocab", vocab),
                       ("batch", batch), ("seq", seq)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise InputError(where=key, expected="a whole number ≥ 1", found=repr(value))
    kvh = _check_heads(heads, kv_heads)
    if head_dim is None:
        if hidden % heads:
            raise InputError(where="heads", expected=f"a divisor of hidden ({hidden})", found=str(heads),
                             hint="or give head_dim explicitly.")
        head_dim = hidden // heads
    ctx = seq if context is None else context
    if ctx < 1 or (phase == "prefill" and ctx < seq):
        raise InputError(where="context", expected=f"a KV length ≥ {'seq (' + str(seq) + ')' if phase == 'prefill' else '1'}",
                         found=str(context), hint="context is the number of keys attended, the new tokens included.")
    return kvh, head_dim, ctx


def transformer(*, layers: int, hidden: int, heads: int, ffn: int, vocab: int, batch: int, seq: int,
                kv_heads: int | None = None, head_dim: int | None = None, phase: str = "prefill",
                context: int | None = None, weight_dtype: str = "bf16", act_dtype: str = "bf16",
                kv_dtype: str = "bf16", gated_ffn: bool = True, flash: bool = True, logits: str = "last",
                group_by: str = "op", name: str | None = None) -> Workload:
    """One forward step of a decoder-only transformer as a kernel list (see the module docstring).

    Kernel names are ``layer{i}/{op}`` (``embedding``, ``final_norm``, ``lm_head`` outside the layers);
    ``group`` is the op key (``group_by="op"``: ``qkv_proj``, ``attention``, ...), the layer
    (``"layer"``: ``layer{i}``, ``embed``, ``head``) or both (``"layer/op"``). Returns the workload of one
    prefill of ``batch × seq`` tokens, or of one decode step (one new token per sequence).
    """
    kvh, head_dim, ctx = _check_transformer(layers=layers, hidden=hidden, heads=heads, ffn=ffn, vocab=vocab,
                                            batch=batch, seq=seq, kv_heads=kv_heads, head_dim=head_dim, phase=phase,
                                            context=context, logits=logits, group_by=group_by)
    act, wdt, kvdt = canonical_dtype(act_dtype), canonical_dtype(weight_dtype), canonical_dtype(kv_dtype)
    sa, sw, skv = DTYPE_SIZE[act], DTYPE_SIZE[wdt], DTYPE_SIZE[kvdt]
    tokens = batch * seq if phase == "prefill" else batch
    q_len = seq if phase == "prefill" else 1
    d, h = head_dim, heads

    items: list[Item] = []

    def add(k: Kernel, layer: str, op: str, weight_bytes: float = 0.0) -> None:
        group = {"op": op, "layer": layer, "layer/op": f"{layer}/{op}"}[group_by]
        kname = f"{layer}/{op}" if layer.startswith("layer") else op
        items.append(Item(_with(k, kname, group), weight_bytes))

    def linear(m: int, n: int, k: int) -> tuple[Kernel, float]:
        return ops.matmul(m, n, k, act, b_dtype=wdt), float(k) * n * sw

    add(ops.embedding(tokens, hidden, vocab, wdt, out_dtype=act), "embed", "embedding")
    for i in range(layers):
        lay = f"layer{i}"
        add(ops.rmsnorm(tokens, hidden, act), lay, "attn_norm", hidden * sa)
        k, w = linear(tokens, (h + 2 * kvh) * d, hidden)
        add(k, lay, "qkv_proj", w)
        add(ops.elementwise(tokens * (h + kvh) * d, act, flops_per_element=3.0), lay, "rope")
        new_kv = tokens * 2 * kvh * d
        add(Kernel(name="kv_cache_write", flops=0.0, bytes={OFFCHIP: new_kv * (sa + skv)}, precision=act,
                   unit="vector"), lay, "kv_cache_write")
        if flash:
            add(ops.flash_attention(batch, h, q_len, ctx, d, act, kv_heads=kvh, causal=True, kv_dtype=kvdt),
                lay, "attention")
        else:
            for part, op in zip(unfused_attention(batch=batch, heads=h, q_len=q_len, kv_len=ctx, head_dim=d,
                                                  kv_heads=kvh, dtype=act, kv_dtype=kvdt),
                                ("attn_scores", "attn_softmax", "attn_pv"), strict=True):
                add(part, lay, op)
        k, w = linear(tokens, hidden, h * d)
        add(k, lay, "o_proj", w)
        add(ops.elementwise(tokens * hidden, act, inputs=2), lay, "attn_residual")
        add(ops.rmsnorm(tokens, hidden, act), lay, "ffn_norm", hidden * sa)
        if gated_ffn:
            k, w = linear(tokens, ffn, hidden)
            add(k, lay, "ffn_gate", w)
            k, w = linear(tokens, ffn, hidden)
            add(k, lay, "ffn_up", w)
            add(ops.elementwise(tokens * ffn, act, flops_per_element=5.0, inputs=2), lay, "ffn_act")
        else:
            k, w = linear(tokens, ffn, hidden)
            add(k, lay, "ffn_up", w)
            add(ops.elementwise(tokens * ffn, act, flops_per_element=8.0), lay, "ffn_act")
        k, w = linear(tokens, hidden, ffn)
        add(k, lay, "ffn_down", w)
        add(ops.elementwise(tokens * hidden, act, inputs=2), lay, "ffn_residual")
    add(ops.rmsnorm(tokens, hidden, act), "head", "final_norm", hidden * sa)
    k, w = linear(batch if logits == "last" else tokens, vocab, hidden)
    add(k, "head", "lm_head", w)

    params = dict(layers=layers, hidden=hidden, heads=heads, kv_heads=kvh, head_dim=d, ffn=ffn, vocab=vocab,
                  batch=batch, seq=seq, phase=phase, context=ctx, weight_dtype=wdt, act_dtype=act, kv_dtype=kvdt,
                  gated_ffn=gated_ffn, flash=flash, logits=logits)
    title = name or (f"transformer {layers}L h{hidden} {h}/{kvh} heads ffn{ffn} · {phase} B{batch} "
                     + (f"S{seq}" if phase == "prefill" else f"ctx{ctx}") + f" · w {wdt}, act {act}, kv {kvdt}")
    return workload_from(items, name=title, builder="transformer",
                         meta={"builder": "transformer", "builder_params": json.dumps(params)})


# ------------------------------------------------------------------------------------------ registry

#: parameter kinds: "int" (whole ≥ 1), "dtype", "bool", "str", or a tuple of allowed values
_TRANSFORMER_PARAMS: dict[str, tuple[object, bool]] = {
    "layers": ("int", True), "hidden": ("int", True), "heads": ("int", True), "ffn": ("int", True),
    "vocab": ("int", True), "batch": ("int", True), "seq": ("int", True), "kv_heads": ("int", False),
    "head_dim": ("int", False), "phase": (PHASES, False), "context": ("int", False),
    "weight_dtype": ("dtype", False), "act_dtype": ("dtype", False), "kv_dtype": ("dtype", False),
    "gated_ffn": ("bool", False), "flash": ("bool", False), "logits": (LOGITS, False),
    "group_by": (GROUP_BY, False), "name": ("str", False),
}
_ATTENTION_PARAMS: dict[str, tuple[object, bool]] = {
    "batch": ("int", True), "heads": ("int", True), "q_len": ("int", True), "kv_len": ("int", True),
    "head_dim": ("int", True), "kv_heads": ("int", False), "dtype": ("dtype", False), "kv_dtype": ("dtype", False),
    "causal": ("bool", False), "flash": ("bool", False), "name": ("str", False),
}

#: builder name -> function returning a Workload (keyword parameters only)
BUILDERS: dict[str, Callable[..., Workload]] = {"transformer": transformer, "attention": attention}
#: builder name -> {parameter: (kind, required)}
BUILDER_PARAMS: dict[str, dict[str, tuple[object, bool]]] = {
    "transformer": _TRANSFORMER_PARAMS, "attention": _ATTENTION_PARAMS,
}


def _value(kind: object, value: Any, where: str) -> Any:
    if kind == "dtype":
        return canonical_dtype(value, where=where)
    if kind == "bool":
        if not isinstance(value, bool):
            raise InputError(where=where, expected="true or false", found=repr(value))
        return value
    if kind == "str":
        if not isinstance(value, str) or not value.strip():
            raise InputError(where=where, expected="a name", found=repr(value))
        return value.strip()
    if isinstance(kind, tuple):
        text = str(value).strip().lower() if isinstance(value, str) else None
        if text not in kind:
            raise InputError(where=where, expected=" or ".join(kind), found=repr(value))
        return text
    # "int": a whole number ≥ 1 ("4,096" and "4_096" accepted, as in op parameters)
    number: float | None = None
    if isinstance(value, int | float | np.number) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.replace(",", "").replace("_", ""))
        except ValueError:
            number = None
    if number is None or not np.isfinite(number) or number < 1 or number != int(number):
        raise InputError(where=where, expected="a whole number ≥ 1", found=repr(value))
    return int(number)


def build_workload(name: str, params: Mapping[str, Any] | None, *, where: str = "builder") -> Workload:
    """Check ``params`` against builder ``name``'s parameters and build its workload.

    Unknown builders and parameters, missing required ones and values of the wrong kind raise
    :class:`InputError` with where/expected/found/hint (``where`` prefixes the parameter path).
    """
    if name not in BUILDERS:
        close = difflib.get_close_matches(str(name), list(BUILDERS), n=1)
        raise InputError(where=where, expected="a builder: " + ", ".join(sorted(BUILDERS)), found=repr(name),
                         hint=f"did you mean {close[0]!r}?" if close else "or give a workload file instead.")
    spec = BUILDER_PARAMS[name]
    params = dict(params or {})
    if not all(isinstance(k, str) for k in params):
        raise InputError(where=where, expected="parameter names", found=repr(next(k for k in params if not isinstance(k, str))))
    unknown = [k for k in params if k not in spec]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(spec), n=1)
        raise InputError(where=f"{where}.{unknown[0]}", expected=f"a parameter of {name}: {', '.join(spec)}",
                         found=f"unknown parameter {unknown[0]!r}",
                         hint=f"did you mean {close[0]!r}?" if close else None)
    required = [k for k, (_, req) in spec.items() if req]
    missing = [k for k in required if k not in params or params[k] is None]
    if missing:
        optional = [k for k, (_, req) in spec.items() if not req]
        raise InputError(where=where, expected=f"parameter '{missing[0]}' for builder {name}", found="none",
                         hint=f"{name} takes {', '.join(required)}; optional {', '.join(optional)}.")
    kwargs = {k: _value(spec[k][0], v, f"{where}.{k}") for k, v in params.items() if v is not None}
    try:
        return BUILDERS[name](**kwargs)
    except InputError as e:  # a cross-parameter check names its parameter; place it in the input
        at = f"{where}.{e.where}" if e.where else where
        raise InputError(where=at, expected=e.expected, found=e.found, hint=e.hint, text=e.text) from None
