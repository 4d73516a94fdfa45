"""One forward step of an LLM on one GPU of a tensor/pipeline-parallel group, as a list of ops whose FLOPs and
bytes are affine in five step variables (so a whole batch sweep or a serving simulation costs one matrix product).

Step variables ``x = (1, T, S, P, R)``: ``T`` tokens computed in the step (prefill: Σ prompt lengths; decode: one
per sequence), ``S`` sequences (one logits row each), ``P`` attention (query, key) pairs (prefill of a prompt of
``L``: ``L(L+1)/2``, causal; a decode token at context ``s``: ``s``), ``R`` cached tokens whose K/V are read
(prefill: ``L``; decode: ``s``). Each op has FLOPs ``F·x``, off-chip bytes ``B·x`` and link bytes ``K·x``; an MoE
expert op adds the bytes of the experts a step touches, ``E·(1 − (1 − k/E)^T)`` of them under the **uniform
routing assumption** (every token picks ``k`` of ``E`` experts uniformly and independently).

Per layer, per GPU (``tp`` shards: ``Hq = H/tp`` query heads, ``Hk = max(Hkv/tp, 1)`` KV heads, FFN ``f/tp``):
``attn_norm`` (rmsnorm), ``qkv_proj`` (matmul ``T × (Hq+2Hk)·d × h``), ``rope``, ``kv_cache_write``,
``attention`` (flash: FLOPs ``4·Hq·d·P``, bytes Q/O ``2·Hq·d·T·|a|`` + K/V ``2·Hk·d·R·|kv|``), ``o_proj``,
``all_reduce`` (``tp > 1``: ``T·h·|a|`` bytes, ring link bytes ``2(tp−1)/tp`` of it), ``residual``, ``ffn_norm``,
``ffn_gate_up`` (one fused matmul), ``ffn_act``, ``ffn_down``, ``all_reduce``, ``residual``; then ``final_norm``,
``lm_head`` (``S`` rows), ``logits_gather`` (``tp > 1``), ``embedding``, and per pipeline boundary a
``pp_send`` of ``T·h·|a|``. MoE layers replace the FFN with ``router``, ``experts_gate_up``/``experts_down``
(``T·k`` token-rows) and the shared experts. MLA (DeepSeek-V2) caches ``kv_lora_rank + rope`` per token and layer
and attends with the up-projections absorbed (FLOPs per pair and head ``2(c+r) + 2c``).

Precisions (:func:`quant`): weights fp16/bf16 (compute at that precision), fp8 (W8A8 FP8: matmul inputs 1 byte,
compute at fp8), int8 (weight-only, per-channel fp16 scales, compute at fp16), int4 (weight-only, groups of 128
with an fp16 scale and zero each: ``0.5 + 4/128`` bytes a weight, compute at fp16). Embedding and LM head stay at
16 bits (the usual practice of quantisation recipes). Activations are 16-bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..models import DTYPE_SIZE, canonical_dtype
from .config import ModelConfig

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

NVARS = 5  #: (1, T, S, P, R)
CLASSES = ("matrix", "attention", "elementwise", "communication")
WEIGHT_PRECISIONS = ("fp16", "bf16", "fp8", "int8", "int4")
KV_PRECISIONS = ("fp16", "bf16", "fp8", "int8")
INT4_GROUP = 128
#: how the attention kernel reads the K/V cache of a grouped-query (GQA/MQA) model: ``grouped`` (default) reads
#: each KV head once per step, shared by the query heads of its group (FlashAttention-2, FlashInfer, TensorRT-LLM's
#: XQA kernel); ``per_query_head`` reads it once for every query head, as a decode kernel with one thread block
#: per (sequence, query head) does — TensorRT-LLM's masked multi-head attention before XQA (``hi_kv = hi /
#: qhead_per_kv`` in decoderMaskedMultiheadAttentionTemplate.h), which NVIDIA's XQA blog measured at 2.4× less
#: Llama-70B throughput than XQA on H200 (TensorRT-LLM docs, blogs/XQA-kernel.md). An upper bound: L2 hits
#: between the blocks of one group are not credited. MLA models always read their latent cache once.
KV_READS = ("grouped", "per_query_head")


@dataclass(frozen=True)
class Quant:
    """How weights, activations and the cache are stored and computed."""

    weights: str
    kv: str
    compute: str  #: the matrix ceiling's precision
    act: str = "bf16"

    @property
    def act_bytes(self) -> float:
        return DTYPE_SIZE[self.act]

    @property
    def kv_bytes(self) -> float:
        return DTYPE_SIZE[self.kv]

    @property
    def matmul_in_bytes(self) -> float:
        """Bytes of a matmul's activation input (fp8: quantised to 1 byte)."""
        return 1.0 if self.compute == "fp8" else self.act_bytes

    def weight_bytes(self, k: float, n: float) -> float:
        """Bytes of a ``k × n`` weight matrix with its scales."""
        if self.weights == "int4":
            return k * n * (0.5 + 4.0 / INT4_GROUP)
        if self.weights == "int8":
            return k * n * 1.0 + 2.0 * n
        if self.weights == "fp8":
            return k * n * 1.0 + 4.0
        return k * n * DTYPE_SIZE[self.weights]


def check_kv_reads(kv_reads: str) -> str:
    """``kv_reads`` if it is one of :data:`KV_READS` (a dash taken for an underscore), else one clear error."""
    v = str(kv_reads).replace("-", "_")
    if v not in KV_READS:
        raise InputError(where="--kv-reads", expected=" or ".join(k.replace("_", "-") for k in KV_READS),
                         found=repr(kv_reads))
    return v


def quant(weights: str = "fp16", kv: str | None = None) -> Quant:
    """The :class:`Quant` of a weight precision and a KV precision (default: 16-bit, fp8 weights keep fp16 KV)."""
    try:
        w = canonical_dtype(weights, where="--precision")
    except InputError:
        w = str(weights)
    if w not in WEIGHT_PRECISIONS:
        raise InputError(where="--precision", expected=" or ".join(WEIGHT_PRECISIONS), found=repr(weights))
    act = w if w in ("fp16", "bf16") else "fp16"
    try:
        k = canonical_dtype(kv, where="--kv-precision") if kv else act
    except InputError:
        k = str(kv)
    if k not in KV_PRECISIONS:
        raise InputError(where="--kv-precision", expected=" or ".join(KV_PRECISIONS), found=repr(kv))
    return Quant(weights=w, kv=k, compute="fp8" if w == "fp8" else act, act=act)


@dataclass
class OpTable:
    """The ops of one step, as arrays (one row per op): FLOPs, bytes and link bytes are ``coef @ x``."""

    names: list[str]
    classes: np.ndarray  #: index into CLASSES
    launches: np.ndarray  #: kernel launches per step
    flops: np.ndarray  #: (n, 5)
    bytes: np.ndarray  #: (n, 5)
    link: np.ndarray  #: (n, 5)
    weights: np.ndarray  #: (n,) bytes of weights the op reads (the constant part of its bytes that is weights)
    precision: list[str]  #: the ceiling's precision
    unit: list[str]  #: the ceiling's unit
    expert_bytes: np.ndarray  #: (n,) bytes of ONE expert this op reads per touched expert (0: not an expert op)
    experts: int = 0
    topk: int = 0
    notes: tuple[str, ...] = ()
    uncosted: tuple[str, ...] = ()  #: ops the model has that no formula here costs (listed, never zero)

    def touched(self, tokens: np.ndarray) -> np.ndarray:
        """Expected distinct experts a step of ``tokens`` touches (uniform routing)."""
        if not self.experts:
            return np.zeros_like(np.asarray(tokens, dtype=float))
        t = np.asarray(tokens, dtype=float)
        return self.experts * (1.0 - (1.0 - self.topk / self.experts) ** t)

    def totals(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per op (columns) and step (rows of ``x``, shape (m, 5)): FLOPs, bytes, link bytes."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        b = x @ self.bytes.T + np.outer(self.touched(x[:, 1]), self.expert_bytes)
        return x @ self.flops.T, b, x @ self.link.T


class _Builder:
    def __init__(self) -> None:
        self.rows: list[tuple[str, int, float, np.ndarray, np.ndarray, np.ndarray, float, str, str, float]] = []

    def add(self, name: str, cls: str, flops: np.ndarray, nbytes: np.ndarray, *, weights: float = 0.0,
            link: np.ndarray | None = None, launches: float = 1.0,
            precision: str = "fp16", unit: str = "vector", expert: float = 0.0, repeat: int = 1) -> None:
        if repeat <= 0:
            return
        f = np.asarray(flops, dtype=float) * repeat
        b = np.asarray(nbytes, dtype=float) * repeat
        k = np.zeros(NVARS) if link is None else np.asarray(link, dtype=float) * repeat
        self.rows.append((name, CLASSES.index(cls), launches * repeat, f, b, k, weights * repeat, precision, unit,
                          expert * repeat))


def _v(c: float = 0.0, t: float = 0.0, s: float = 0.0, p: float = 0.0, r: float = 0.0) -> np.ndarray:
    return np.array([c, t, s, p, r], dtype=float)


def _matmul(b: _Builder, name: str, q: Quant, k: float, n: float, *, rows: str = "t", repeat: int = 1,
            expert: bool = False, row_scale: float = 1.0) -> None:
    """A ``rows × k`` by ``k × n`` matmul: FLOPs ``2kn`` per row, bytes in ``k·|in|`` + out ``n·|a|`` per row + weights."""
    w = q.weight_bytes(k, n)
    per_row = row_scale * (k * q.matmul_in_bytes + n * q.act_bytes)
    coef = {"t": _v(t=1.0), "s": _v(s=1.0)}[rows]
    b.add(name, "matrix", 2.0 * k * n * row_scale * coef, per_row * coef + (_v() if expert else _v(c=w)),
          weights=0.0 if expert else w, precision=q.compute, unit="matrix", expert=w if expert else 0.0, repeat=repeat)


def _elementwise(b: _Builder, name: str, q: Quant, width: float, *, flops_per: float, tensors: float,
                 const_bytes: float = 0.0, repeat: int = 1) -> None:
    b.add(name, "elementwise", flops_per * width * _v(t=1.0), tensors * width * q.act_bytes * _v(t=1.0) + _v(c=const_bytes),
          weights=const_bytes, precision=q.act, repeat=repeat)


def _all_reduce(b: _Builder, name: str, q: Quant, width: float, tp: int, repeat: int) -> None:
    if tp > 1:
        msg = width * q.act_bytes
        b.add(name, "communication", (tp - 1) / tp * width * _v(t=1.0), 2.0 * msg * _v(t=1.0),
              link=2.0 * (tp - 1) / tp * msg * _v(t=1.0), precision=q.act, repeat=repeat)


def _attention(b: _Builder, m: ModelConfig, q: Quant, tp: int, L: int, kv_reads: str = "grouped") -> None:
    """Projections, RoPE, cache write and attention of ``L`` layers (``kv_reads``: see :data:`KV_READS`)."""
    h, a = m.hidden, q.act_bytes
    hq = m.heads / tp
    if m.mla:
        c, r = m.kv_lora_rank, m.rope_head_dim
        qk = m.nope_head_dim + r
        if m.q_lora_rank:
            _matmul(b, "q_a_proj", q, h, m.q_lora_rank, repeat=L)
            _matmul(b, "q_b_proj", q, m.q_lora_rank, hq * qk, repeat=L)
        else:
            _matmul(b, "q_proj", q, h, hq * qk, repeat=L)
        _matmul(b, "kv_a_proj", q, h, c + r, repeat=L)  # replicated on every TP rank
        _matmul(b, "kv_b_absorbed", q, c, hq * (m.nope_head_dim + m.v_head_dim), repeat=L)
        _elementwise(b, "rope", q, (hq + 1) * r, flops_per=3.0, tensors=2.0, repeat=L)
        kvw = c + r
        b.add("kv_cache_write", "elementwise", _v(), kvw * (a + q.kv_bytes) * _v(t=1.0), precision=q.act, repeat=L)
        b.add("attention", "attention", hq * (2.0 * kvw + 2.0 * c) * _v(p=1.0),
              hq * (kvw + c) * a * _v(t=1.0) + kvw * q.kv_bytes * _v(r=1.0), precision=q.act, unit="matrix", repeat=L)
        _matmul(b, "o_proj", q, hq * m.v_head_dim, h, repeat=L)
        return
    d = m.head_dim
    hk = max(m.kv_heads / tp, 1.0)
    _matmul(b, "qkv_proj", q, h, (hq + 2 * hk) * d, repeat=L)
    _elementwise(b, "rope", q, (hq + hk) * d, flops_per=3.0, tensors=2.0, repeat=L)
    b.add("kv_cache_write", "elementwise", _v(), 2 * hk * d * (a + q.kv_bytes) * _v(t=1.0), precision=q.act, repeat=L)
    reads = max(hq, hk) if kv_reads == "per_query_head" else hk  # heads whose K/V a step reads from memory
    b.add("attention", "attention", 4.0 * hq * d * _v(p=1.0),
          2.0 * hq * d * a * _v(t=1.0) + 2.0 * reads * d * q.kv_bytes * _v(r=1.0), precision=q.act, unit="matrix",
          repeat=L)
    _matmul(b, "o_proj", q, hq * d, h, repeat=L)


def _ffn(b: _Builder, m: ModelConfig, q: Quant, tp: int, width: int, prefix: str, *, repeat: int,
         expert: bool = False, rows: float = 1.0) -> None:
    f = width / tp
    gate = 2 if m.gated_ffn else 1
    _matmul(b, f"{prefix}_gate_up", q, m.hidden, gate * f, repeat=repeat, expert=expert, row_scale=rows)
    _elementwise(b, f"{prefix}_act", q, f * rows, flops_per=5.0 if m.gated_ffn else 8.0, tensors=3.0 if m.gated_ffn else 2.0,
                 repeat=repeat)
    _matmul(b, f"{prefix}_down", q, f, m.hidden, repeat=repeat, expert=expert, row_scale=rows)


def step_ops(m: ModelConfig, q: Quant, *, tp: int = 1, pp: int = 1, kv_reads: str = "grouped") -> OpTable:
    """The ops of one step on one GPU column (all ``pp`` stages, one ``tp`` shard each): see the module docstring;
    ``kv_reads`` says how the attention kernel reads the cache (:data:`KV_READS`)."""
    for key, v in (("tp", tp), ("pp", pp)):
        if not isinstance(v, int) or v < 1:
            raise InputError(where=f"--{key}", expected="a whole number ≥ 1", found=repr(v))
    kv_reads = check_kv_reads(kv_reads)
    if m.heads % tp:
        raise InputError(where="--tp", expected=f"a divisor of the model's {m.heads} attention heads", found=str(tp))
    if m.layers < pp:
        raise InputError(where="--pp", expected=f"at most the model's {m.layers} layers", found=str(pp))
    b = _Builder()
    h, L = m.hidden, m.layers
    norm_w = h * q.act_bytes
    _elementwise(b, "attn_norm", q, h, flops_per=4.0, tensors=2.0, const_bytes=norm_w, repeat=L)
    _attention(b, m, q, tp, L, kv_reads)
    _all_reduce(b, "all_reduce", q, h, tp, L)
    _elementwise(b, "residual", q, h, flops_per=1.0, tensors=3.0, repeat=2 * L)
    _elementwise(b, "ffn_norm", q, h, flops_per=4.0, tensors=2.0, const_bytes=norm_w, repeat=L)
    dense = m.dense_layers if m.moe else L
    _ffn(b, m, q, tp, m.ffn, "ffn", repeat=dense)
    notes = []
    if kv_reads == "per_query_head" and not m.mla and m.heads > m.kv_heads:
        notes.append(f"attention reads the K/V cache once per query head ({m.heads // m.kv_heads} query heads share "
                     "each KV head): a decode kernel without grouped-query sharing (--kv-reads per-query-head)")
    if m.moe:
        ml = m.moe_layers
        _matmul(b, "router", q, h, m.experts, repeat=ml)
        _ffn(b, m, q, tp, m.moe_ffn, "experts", repeat=ml, expert=True, rows=float(m.experts_per_tok))
        if m.shared_experts:
            _ffn(b, m, q, tp, m.shared_experts * m.moe_ffn, "shared_experts", repeat=ml)
        notes.append(f"MoE routing assumption: uniform — each token picks {m.experts_per_tok} of {m.experts} experts "
                     "uniformly and independently, so a step of T tokens reads the weights of "
                     f"{m.experts}·(1 − (1 − {m.experts_per_tok}/{m.experts})^T) experts on average; a skewed router "
                     "touches fewer experts (less weight traffic) but loads some more heavily.")
    _all_reduce(b, "all_reduce", q, h, tp, L)
    _elementwise(b, "final_norm", q, h, flops_per=4.0, tensors=2.0, const_bytes=norm_w)
    head = Quant(weights=q.act, kv=q.kv, compute=q.act, act=q.act)  # the LM head and embedding stay 16-bit
    _matmul(b, "lm_head", head, h, m.vocab / tp, rows="s")
    if tp > 1:
        msg = m.vocab * q.act_bytes
        b.add("logits_gather", "communication", _v(), msg * _v(s=1.0), link=(tp - 1) / tp * msg * _v(s=1.0), precision=q.act)
    b.add("embedding", "elementwise", _v(), h * (2.0 + q.act_bytes) * _v(t=1.0) + 8.0 * _v(t=1.0), precision=q.act)
    if pp > 1:
        msg = h * q.act_bytes
        b.add("pp_send", "communication", _v(), msg * _v(t=1.0), link=msg * _v(t=1.0), precision=q.act, repeat=pp - 1)
        # every stage holds 1/pp of the layers; the column above sums all stages, which run one after another
    rows = b.rows
    return OpTable(
        names=[r[0] for r in rows], classes=np.array([r[1] for r in rows]), launches=np.array([r[2] for r in rows]),
        flops=np.array([r[3] for r in rows]), bytes=np.array([r[4] for r in rows]), link=np.array([r[5] for r in rows]),
        weights=np.array([r[6] for r in rows]), precision=[r[7] for r in rows], unit=[r[8] for r in rows],
        expert_bytes=np.array([r[9] for r in rows]), experts=m.experts, topk=m.experts_per_tok, notes=tuple(notes),
        uncosted=_uncosted(m))


def _uncosted(m: ModelConfig) -> tuple[str, ...]:
    """Ops the model runs that no formula here costs: listed, never counted as zero time."""
    out = ["sampling (top-k/top-p over the logits): not costed"]
    if m.moe:
        out.append("MoE token permutation/unpermutation (gather/scatter of routed tokens): not costed")
    return tuple(out)


def step_x(tokens: ArrayLike, seqs: ArrayLike, pairs: ArrayLike, kv_read: ArrayLike) -> np.ndarray:
    """Rows ``(1, T, S, P, R)`` for the step variables (scalars or arrays of one length)."""
    t, s, p, r = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (tokens, seqs, pairs, kv_read)))
    return np.stack([np.ones_like(t), t, s, p, r], axis=-1).reshape(-1, NVARS)


def prefill_x(batch: ArrayLike, length: ArrayLike) -> np.ndarray:
    """A prefill of ``batch`` prompts of ``length`` tokens (causal pairs ``L(L+1)/2`` each)."""
    b, n = np.asarray(batch, dtype=float), np.asarray(length, dtype=float)
    return step_x(b * n, b, b * n * (n + 1) / 2.0, b * n)


def decode_x(batch: ArrayLike, context: ArrayLike) -> np.ndarray:
    """A decode step of ``batch`` sequences, each attending ``context`` keys (the new token included)."""
    b, s = np.asarray(batch, dtype=float), np.asarray(context, dtype=float)
    return step_x(b, b, b * s, b * s)
