"""Serving, not only static batches: a continuous-batching simulation with a KV-cache budget.

Requests arrive as a Poisson process at ``rate`` per second (seeded), with input and output lengths drawn from a
:class:`Lengths` (constant, uniform, or the rows of a CSV). The server (one model replica on ``tp·pp`` GPUs)
admits waiting requests in arrival order while their whole KV cache (``input + output`` tokens) fits the budget
left after weights, activations and workspace, and at most ``max_batch`` run at once; each admission round is one
prefill step of the admitted prompts (their first token comes out at its end), then decode steps advance every
running request by one token. Between events (an arrival that could be admitted, a request finishing) the
batch is fixed, so the decode steps up to the next event are costed at once (:func:`~roofcore.llm.timing.op_times`
on all of them: no per-token Python loop). TTFT is first token − arrival; TPOT is (last − first token) / (output
− 1). Goodput counts requests meeting both latency targets.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..models import Hardware
from .calibration import Calibration
from .config import ModelConfig
from .costing import Quant, step_ops
from .planner import PREFILL_CHUNK, WORKSPACE_BYTES, Shape, activation_bytes, kv_bytes_per_token, weight_bytes
from .timing import roofs, step_cost


@dataclass(frozen=True)
class Lengths:
    """A length distribution: ``constant`` (``a``), ``uniform`` (integers ``a``..``b``), or ``values`` (drawn with
    replacement from the given lengths, e.g. a CSV column)."""

    kind: str = "constant"
    a: int = 128
    b: int = 128
    values: tuple[int, ...] = ()

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.kind == "constant":
            return np.full(n, self.a, dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(self.a, self.b + 1, size=n)
        return rng.choice(np.asarray(self.values, dtype=np.int64), size=n)

    @property
    def mean(self) -> float:
        return float(self.a if self.kind == "constant" else (self.a + self.b) / 2 if self.kind == "uniform"
                     else np.mean(self.values))


def parse_lengths(text: str, where: str) -> Lengths:
    """``"128"`` (constant) or ``"64:512"`` (uniform, inclusive)."""
    try:
        if ":" in text:
            a, b = (int(x) for x in text.split(":", 1))
            if 1 <= a <= b:
                return Lengths("uniform", a, b)
        elif int(text) >= 1:
            return Lengths("constant", int(text), int(text))
    except ValueError:
        pass
    raise InputError(where=where, expected="a length such as 128, or a range such as 64:512", found=repr(text))


def lengths_from_csv(data: str, where: str = "lengths CSV") -> tuple[Lengths, Lengths]:
    """Input and output lengths from a CSV with columns named ``input``/``prompt``… and ``output``/``completion``…"""
    rows = list(csv.DictReader(io.StringIO(data)))
    if not rows:
        raise InputError(where=where, expected="a header and rows of input and output lengths", found="no rows")
    cols = {c.strip().lower(): c for c in rows[0] if c}
    def col(*prefixes: str) -> str | None:
        return next((cols[c] for pre in prefixes for c in cols if c.startswith(pre)), None)

    pick = [col("input", "prompt"), col("output", "completion")]
    if None in pick:
        raise InputError(where=where, expected="columns named input… and output… (or prompt…, completion…)",
                         found=", ".join(cols) or "none")
    out = []
    for name in [c for c in pick if c is not None]:  # (both are)
        try:
            vals = tuple(int(float(r[name])) for r in rows)
        except (TypeError, ValueError):
            raise InputError(where=f"{where}: {name}", expected="whole numbers of tokens", found="a non-number") from None
        if min(vals) < 1:
            raise InputError(where=f"{where}: {name}", expected="lengths ≥ 1", found=str(min(vals)))
        out.append(Lengths("values", values=vals))
    return out[0], out[1]


@dataclass
class ServingResult:
    """Latency percentiles (seconds), throughput, goodput; ``None`` where nothing finished."""

    hardware: str
    gpus: int
    requests: int
    completed: int
    duration_s: float
    ttft_p50_s: float | None
    ttft_p99_s: float | None
    tpot_p50_s: float | None
    tpot_p99_s: float | None
    throughput_tok_s: float
    goodput_req_s: float
    goodput_share: float
    max_running: int
    kv_budget_bytes: float
    targets: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _pct(a: np.ndarray, q: float) -> float | None:
    a = a[np.isfinite(a)]
    return float(np.percentile(a, q)) if a.size else None


def simulate(m: ModelConfig, q: Quant, hw: Hardware, s: Shape, cal: Calibration, *, rate: float, inputs: Lengths,
             outputs: Lengths, requests: int = 1000, max_batch: int = 256, seed: int = 0,
             ttft_target_s: float = 2.0, tpot_target_s: float = 0.1) -> ServingResult:
    """Simulate ``requests`` arrivals at ``rate``/s (see the module docstring)."""
    if not rate > 0:
        raise InputError(where="--rate", expected="requests per second > 0", found=repr(rate))
    table = step_ops(m, q, tp=s.tp, pp=s.pp, kv_reads=s.kv_reads)
    r = roofs(hw, table, s.tp, s.pp)
    rng = np.random.default_rng(seed)
    arrive = np.cumsum(rng.exponential(1.0 / rate, size=requests))
    lin, lout = inputs.draw(requests, rng), outputs.draw(requests, rng)
    per_tok = kv_bytes_per_token(m, q, s.tp, s.pp)
    # what is not cache: the weights, a full prefill chunk's activations with the logits of a full batch, workspace
    fixed = (weight_bytes(m, table, s.tp, s.pp) + activation_bytes(m, q, s.tp, PREFILL_CHUNK, max_batch)
             + WORKSPACE_BYTES)
    budget = (r.capacity or float("inf")) - fixed
    if budget <= 0:
        raise InputError(where=f"serving on {hw.id}", expected="room for a KV cache after the weights",
                         found=f"{fixed / 1e9:.1f} GB of weights, activations and workspace",
                         hint="raise --tp, or quantise the weights.")
    need = (lin + lout) * per_tok
    first, done, peak_run = _events(step_cost(table, r, cal), arrive, lin, lout, need, budget, max_batch,
                                    f"serving on {hw.id}")
    ttft = first - arrive
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot = np.where(lout > 1, (done - first) / (lout - 1), np.nan)
    dur = float(np.nanmax(done) - arrive[0]) if requests else 0.0
    ok = (ttft <= ttft_target_s) & (np.nan_to_num(tpot, nan=0.0) <= tpot_target_s)
    return ServingResult(
        hardware=hw.id, gpus=s.gpus, requests=requests, completed=int(np.isfinite(done).sum()), duration_s=dur,
        ttft_p50_s=_pct(ttft, 50), ttft_p99_s=_pct(ttft, 99), tpot_p50_s=_pct(tpot, 50), tpot_p99_s=_pct(tpot, 99),
        throughput_tok_s=float(lout.sum() / dur) if dur > 0 else 0.0,
        goodput_req_s=float(ok.sum() / dur) if dur > 0 else 0.0, goodput_share=float(ok.mean()),
        max_running=peak_run, kv_budget_bytes=float(budget),
        targets={"ttft_s": ttft_target_s, "tpot_s": tpot_target_s})


def _events(cost: Callable[[np.ndarray], np.ndarray], arrive: np.ndarray, lin: np.ndarray, lout: np.ndarray, need: np.ndarray, budget: float,
            max_batch: int, where: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The simulation's event loop (see the module docstring): each request's first-token and finish times, and the
    most requests that ran at once. The running set is kept in Python lists (at most ``max_batch``); the prefill
    of each request alone is costed for all of them at once beforehand."""
    requests = len(arrive)
    first, done = [float("nan")] * requests, [float("nan")] * requests
    arr, nd, li_l, lo_l = arrive.tolist(), need.tolist(), lin.tolist(), lout.tolist()
    li = lin.astype(float)
    alone = cost(np.stack([np.ones(requests), li, np.ones(requests), li * (li + 1) / 2, li], axis=1)).tolist()
    kmax = int(lout.max()) + 1
    x = np.ones((kmax, 5))
    steps = np.arange(1, kmax + 1, dtype=float)
    # running requests: id, the decode-step count at which it finishes, and its context at admission minus the step
    # count then (so Σ context = Σ base + n·step); ``step`` counts decode steps since the start
    run: list[int] = []
    fin_at: list[int] = []
    base: list[float] = []
    clock, used, nxt, peak, step, ctx_sum = 0.0, 0.0, 0, 0, 0, 0.0
    while nxt < requests or run:
        nrun, a0 = len(run), nxt
        while nxt < requests and arr[nxt] <= clock and nrun + nxt - a0 < max_batch and used + nd[nxt] <= budget:
            used += nd[nxt]
            nxt += 1
        if nxt > a0:
            if nxt - a0 == 1:
                clock += alone[a0]
            else:
                t = li[a0:nxt]
                clock += float(cost(np.array([[1.0, t.sum(), nxt - a0, (t * (t + 1)).sum() / 2, t.sum()]]))[0])
            for i in range(a0, nxt):
                first[i] = clock
                if lo_l[i] <= 1:
                    done[i] = clock
                    used -= nd[i]
                else:
                    run.append(i)
                    fin_at.append(step + lo_l[i] - 1)
                    base.append(li_l[i] - step)
                    ctx_sum += li_l[i] - step
            peak = max(peak, len(run))
            continue
        if not nrun:
            if nd[nxt] > budget:
                raise InputError(where=where, expected="requests whose KV cache fits the budget",
                                 found=f"{nd[nxt] / 1e9:.2f} GB for one request, {budget / 1e9:.2f} GB free")
            clock = max(clock, arr[nxt])
            continue
        k = min(fin_at) - step
        xs = x[:k]
        xs[:, 1:3] = nrun
        xs[:, 3] = ctx_sum + nrun * (step + steps[:k])  # each step attends the context plus the token it adds
        xs[:, 4] = xs[:, 3]
        ends = np.cumsum(cost(xs))
        n = k
        if nxt < requests and nrun < max_batch and used + nd[nxt] <= budget:
            n = min(k, int(np.searchsorted(ends, arr[nxt] - clock)) + 1)  # stop after the step spanning the arrival
        clock += float(ends[n - 1])
        step += n
        if n == k:
            keep = [j for j, f in enumerate(fin_at) if f > step]
            for j, f in enumerate(fin_at):
                if f <= step:
                    done[run[j]] = clock
                    used -= nd[run[j]]
                    ctx_sum -= base[j]
            run, fin_at, base = [run[j] for j in keep], [fin_at[j] for j in keep], [base[j] for j in keep]
    return np.array(first), np.array(done), peak


def cheapest(m: ModelConfig, q: Quant, hws: list[Hardware], cal: Calibration, *, rate: float, inputs: Lengths,
             outputs: Lengths, prices: dict[str, float], tps: Sequence[int] = (1, 2, 4, 8), requests: int = 500,
             ttft_target_s: float = 2.0, tpot_target_s: float = 0.1, min_share: float = 0.99,
             kv_reads: str = "grouped") -> list[dict[str, Any]]:
    """Each device × TP degree that holds the model, simulated at ``rate``: whether its p99 meets the targets
    (at least ``min_share`` of requests within both), its GPU count and cost per million output tokens; cheapest
    meeting the target first (by cost where prices are known, else by GPUs)."""
    rows = []
    for hw in hws:
        for tp in tps:
            if m.heads % tp:
                continue
            s = Shape(tp=tp, pp=1, batch=1, input_len=int(inputs.mean), output_len=int(outputs.mean), kv_reads=kv_reads)
            try:
                res = simulate(m, q, hw, s, cal, rate=rate, inputs=inputs, outputs=outputs, requests=requests,
                               ttft_target_s=ttft_target_s, tpot_target_s=tpot_target_s)
            except InputError as e:
                rows.append({"hardware": hw.id, "tp": tp, "gpus": tp, "meets": False, "why": str(e)})
                continue
            price = prices.get(hw.id)
            cost = price * tp / 3600.0 / res.throughput_tok_s * 1e6 if price is not None and res.throughput_tok_s else None
            rows.append({"hardware": hw.id, "tp": tp, "gpus": tp, "meets": res.goodput_share >= min_share,
                         "goodput_share": res.goodput_share, "ttft_p99_s": res.ttft_p99_s, "tpot_p99_s": res.tpot_p99_s,
                         "throughput_tok_s": res.throughput_tok_s, "cost_per_mtok": cost})
    return sorted(rows, key=lambda x: (not x["meets"], x.get("cost_per_mtok") is None,
                                       x.get("cost_per_mtok") or 0.0, x["gpus"]))
