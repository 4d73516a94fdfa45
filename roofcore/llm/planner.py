"""The static-batch plan of an LLM on each device: time to first token, time per output token at the first and
last decode step, throughput, memory against capacity and the largest batch that fits, the bound of each phase,
the decode crossover batch, the tensor-parallel all-reduce time and the cost per million output tokens.

A batch of ``B`` prompts of ``L_in`` tokens is prefilled in one step (TTFT), then ``L_out − 1`` decode steps each
add one token per sequence (step ``j`` attends ``L_in + j`` keys). Output throughput ``B·L_out / (TTFT + Σ
steps)``. Memory per GPU: weights ``/(tp·pp)`` (+ the 16-bit embedding table), the KV cache ``B·(L_in + L_out)``
tokens, activations of a prefill chunk of at most :data:`PREFILL_CHUNK` tokens and the logits, and a workspace
(:data:`WORKSPACE_BYTES`, an estimate). Pipeline stages run one after another for one batch (no overlap of
micro-batches: throughput is that of one batch; the memory per GPU is divided by ``pp``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..models import Hardware
from .calibration import Calibration
from .config import ModelConfig
from .costing import OpTable, Quant, check_kv_reads, decode_x, prefill_x, step_ops
from .timing import Roofs, op_times, phase_bound, roofs

PREFILL_CHUNK = 8192  #: tokens a prefill step holds activations for (TensorRT-LLM's default max_num_tokens)
WORKSPACE_BYTES = 1 << 30  #: CUDA context and library workspaces per GPU: an estimate (about 1 GiB)


@dataclass(frozen=True)
class Shape:
    """What is asked: parallelism, batch and lengths."""

    tp: int = 1
    pp: int = 1
    batch: int = 1
    input_len: int = 128
    output_len: int = 128
    kv_reads: str = "grouped"  #: how attention reads a GQA cache (costing.KV_READS): an engine's kernel, not the model

    def check(self) -> None:
        for k in ("tp", "pp", "batch", "input_len", "output_len"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise InputError(where=f"--{k.replace('_len', '')}", expected="a whole number ≥ 1", found=repr(v))
        check_kv_reads(self.kv_reads)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp


@dataclass
class DevicePlan:
    """One device's plan (seconds, bytes, tokens/s; ``None`` where unknown)."""

    hardware: str
    name: str
    gpus: int
    ttft_s: float
    tpot_first_s: float | None
    tpot_last_s: float | None
    e2e_s: float
    throughput_tok_s: float
    throughput_tok_s_per_gpu: float
    memory_bytes: dict[str, float]
    capacity_bytes: float | None
    fits: bool | None
    max_batch: int | None
    prefill: dict[str, Any]  #: :func:`~roofcore.llm.timing.phase_bound` of the prefill
    decode: dict[str, Any]  #: and of the decode step (empty without one)
    crossover_batch: int | None  #: decode batch where the whole step turns compute-bound (None: never)
    crossover_batch_matmul: int | None  #: where the matmuls alone do
    all_reduce_s: dict[str, float]
    price_per_hour: float | None
    cost_per_mtok: float | None
    cost_note: str
    points: dict[str, dict[str, float]]  #: per phase FLOPs, bytes, seconds (roofline points, per GPU)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: _clean(v) for k, v in self.__dict__.items()}


def _clean(v: object) -> object:
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_clean(x) for x in v]
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(v) else None
    return v


def kv_bytes_per_token(m: ModelConfig, q: Quant, tp: int = 1, pp: int = 1) -> float:
    """Cache bytes one token takes on one GPU: ``(layers/pp)·2·kv_heads/tp·head_dim·|kv|`` (KV heads replicated when
    ``tp`` exceeds them); MLA ``(layers/pp)·(kv_lora_rank + rope)·|kv|`` on every rank."""
    width = m.kv_width() if m.mla else 2 * max(m.kv_heads / tp, 1.0) * m.head_dim
    return m.layers / pp * width * q.kv_bytes


def weight_bytes(m: ModelConfig, table: OpTable, tp: int, pp: int) -> float:
    """Weights on one GPU: the step's weight reads (every expert once) plus the embedding table, over ``pp``."""
    emb = 0.0 if m.tied_embeddings else m.vocab * m.hidden * 2.0 / tp
    return (float(table.weights.sum()) + float(table.expert_bytes.sum()) * table.experts + emb) / pp


def activation_bytes(m: ModelConfig, q: Quant, tp: int, tokens: float, seqs: float) -> float:
    """Activations a step holds on one GPU: per token the residual stream twice and the widest projection output
    (QKV, or the FFN's gate and up), and the fp32 logits of each sequence."""
    hq, hk = m.heads / tp, max(m.kv_heads / tp, 1.0)
    ffn = max(m.ffn, m.moe_ffn * max(m.experts_per_tok, 1))
    width = max((hq + 2 * hk) * m.head_dim, (2 if m.gated_ffn else 1) * ffn / tp)
    return tokens * (2 * m.hidden + width) * q.act_bytes + seqs * m.vocab / tp * 4.0


def memory(m: ModelConfig, q: Quant, table: OpTable, s: Shape, batch: int) -> dict[str, float]:
    """Memory per GPU by part for ``batch`` sequences of ``input_len + output_len`` tokens (activations of a prefill
    chunk of at most :data:`PREFILL_CHUNK` tokens)."""
    act = activation_bytes(m, q, s.tp, min(batch * s.input_len, PREFILL_CHUNK), batch)
    parts = {"weights": weight_bytes(m, table, s.tp, s.pp),
             "kv_cache": batch * (s.input_len + s.output_len) * kv_bytes_per_token(m, q, s.tp, s.pp),
             "activations": act, "workspace": float(WORKSPACE_BYTES)}
    parts["total"] = sum(parts.values())
    return parts


def max_batch(m: ModelConfig, q: Quant, table: OpTable, s: Shape, capacity: float | None) -> int | None:
    """The largest batch whose memory fits ``capacity`` (0: not even the weights fit; None: capacity unknown)."""
    if not capacity:
        return None
    lo, hi = 0, 1
    while hi < 1 << 22 and memory(m, q, table, s, hi)["total"] <= capacity:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if memory(m, q, table, s, mid)["total"] <= capacity else (lo, mid)
    return lo


def crossover(table: OpTable, r: Roofs, context: float, *, matrix_only: bool = False) -> int | None:
    """The smallest decode batch at ``context`` whose step needs more compute time than memory time at the roofs
    (Σ F/π ≥ Σ B/β over the non-collective ops, or over the matmuls alone with ``matrix_only``); None: never up to
    a million (attention's K/V reads grow with the batch as fast as its FLOPs, so with a long context a whole
    decode step may stay memory-bound at any batch)."""
    b = np.unique(np.round(np.geomspace(1, 1 << 20, 400))).astype(float)
    flops, nbytes, _ = table.totals(decode_x(b, context))
    comm = (table.classes != 0) if matrix_only else (table.classes == 3)
    tc = (flops[:, ~comm] / r.peak[~comm]).sum(axis=1)
    tm = (nbytes[:, ~comm] / r.bw).sum(axis=1)
    hit = np.flatnonzero(tc >= tm)
    if not hit.size:
        return None
    i = hit[0]
    lo, hi = (int(b[i - 1]) if i else 0), int(b[i])  # lo is memory-bound (or 0), hi compute-bound: bisect

    def compute_bound(batch: int) -> bool:
        f, by, _ = table.totals(decode_x(batch, context))
        return bool((f[0, ~comm] / r.peak[~comm]).sum() >= (by[0, ~comm] / r.bw).sum())

    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(mid) else (mid, hi)
    return hi


def _price_note(hw: Hardware, price: float | None) -> str:
    return ("" if price is not None else
            f"unknown: no price for {hw.id} (give --price {hw.id}=USD_PER_HOUR, per GPU)")


def plan_device(m: ModelConfig, q: Quant, hw: Hardware, s: Shape, cal: Calibration, *,
                price_per_hour: float | None = None) -> DevicePlan:
    """:class:`DevicePlan` of ``m`` at ``s`` on ``hw`` (see the module docstring)."""
    s.check()
    table = step_ops(m, q, tp=s.tp, pp=s.pp, kv_reads=s.kv_reads)
    r = roofs(hw, table, s.tp, s.pp)
    pre = op_times(table, r, cal, prefill_x(s.batch, s.input_len))
    steps = np.arange(1, s.output_len, dtype=float)
    dec = op_times(table, r, cal, decode_x(s.batch, s.input_len + steps)) if steps.size else None
    ttft = float(pre.total[0])
    dec_total = dec.total if dec is not None else np.zeros(0)
    e2e = ttft + float(dec_total.sum())
    thr = s.batch * s.output_len / e2e
    mem = memory(m, q, table, s, s.batch)
    cap = r.capacity
    comm = table.classes == 3
    price = price_per_hour
    cost = price * s.gpus / 3600.0 / thr * 1e6 if price is not None else None
    pts = {"prefill": {"flops": float(pre.flops[0].sum()), "bytes": float(pre.bytes[0].sum()), "seconds": ttft}}
    if dec is not None:
        mid = len(dec_total) // 2
        pts["decode"] = {"flops": float(dec.flops[mid].sum()), "bytes": float(dec.bytes[mid].sum()),
                         "seconds": float(dec_total[mid])}
    notes = [*r.notes, *table.notes, *m.notes]
    if s.pp > 1:
        notes.append(f"pipeline parallel {s.pp}: stages run one after another for this batch (no micro-batch overlap)")
    return DevicePlan(
        hardware=hw.id, name=hw.name, gpus=s.gpus, ttft_s=ttft,
        tpot_first_s=float(dec_total[0]) if dec is not None else None,
        tpot_last_s=float(dec_total[-1]) if dec is not None else None, e2e_s=e2e, throughput_tok_s=thr,
        throughput_tok_s_per_gpu=thr / s.gpus, memory_bytes=mem, capacity_bytes=cap,
        fits=(mem["total"] <= cap) if cap else None, max_batch=max_batch(m, q, table, s, cap),
        prefill=phase_bound(pre, table, r), decode=phase_bound(dec, table, r) if dec is not None else {},
        crossover_batch=crossover(table, r, s.input_len + s.output_len / 2),
        crossover_batch_matmul=crossover(table, r, s.input_len + s.output_len / 2, matrix_only=True),
        all_reduce_s={"prefill": float(pre.seconds[0, comm].sum()),
                      "decode_step": float(dec.seconds[0, comm].sum()) if dec is not None else 0.0},
        price_per_hour=price, cost_per_mtok=cost, cost_note=_price_note(hw, price), points=pts, notes=notes)


@dataclass
class LLMPlan:
    """The plan of one model at one shape on several devices."""

    model: ModelConfig
    quant: Quant
    shape: Shape
    calibration: Calibration
    devices: list[DevicePlan]
    uncosted: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        p = self.model.params()
        return {"schema_version": 1,
                "model": {"name": self.model.name, "source": self.model.source, "params": p["total"],
                          "active_params": p["active"], "notes": list(self.model.notes)},
                "precision": {"weights": self.quant.weights, "kv_cache": self.quant.kv, "compute": self.quant.compute},
                "shape": dict(self.shape.__dict__), "calibration": self.calibration.to_json(),
                "uncosted_ops": list(self.uncosted), "devices": [d.to_json() for d in self.devices]}


def plan(m: ModelConfig, q: Quant, hws: list[Hardware], s: Shape, cal: Calibration | None = None, *,
         prices: dict[str, float] | None = None) -> LLMPlan:
    """:func:`plan_device` on each of ``hws``."""
    cal = cal or Calibration()
    prices = prices or {}
    devs = [plan_device(m, q, hw, s, cal, price_per_hour=prices.get(hw.id)) for hw in hws]
    return LLMPlan(model=m, quant=q, shape=s, calibration=cal, devices=devs,
                   uncosted=step_ops(m, q, tp=s.tp, pp=s.pp, kv_reads=s.kv_reads).uncosted)


def batch_sweep(m: ModelConfig, q: Quant, hw: Hardware, s: Shape, cal: Calibration, batches: Iterable[float]
                ) -> dict[str, np.ndarray | int]:
    """Per batch: TTFT, mean TPOT, output throughput (total; ``gpus`` to divide by), and the per-GPU prefill and
    decode roofline points (FLOPs, bytes; the decode step at the middle context) — the trajectory the app draws."""
    table = step_ops(m, q, tp=s.tp, pp=s.pp, kv_reads=s.kv_reads)
    r = roofs(hw, table, s.tp, s.pp)
    b = np.asarray(list(batches), dtype=float)
    pre = op_times(table, r, cal, prefill_x(b, s.input_len))
    ctx = s.input_len + max(s.output_len, 2) / 2.0
    dec = op_times(table, r, cal, decode_x(b, ctx))
    tpot = dec.total
    e2e = pre.total + tpot * max(s.output_len - 1, 0)
    return {"batch": b, "gpus": s.gpus, "ttft_s": pre.total, "tpot_s": tpot, "throughput_tok_s": b * s.output_len / e2e,
            "prefill_flops": pre.flops.sum(axis=1), "prefill_bytes": pre.bytes.sum(axis=1),
            "decode_flops": dec.flops.sum(axis=1), "decode_bytes": dec.bytes.sum(axis=1)}
