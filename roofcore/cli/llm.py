"""``roofline llm MODEL``: the LLM serving planner on catalog devices (roofcore.llm; imported when the command runs)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..llm import Calibration, LLMPlan, ModelConfig, Quant
    from ..models import Hardware

# the engine and the catalog are imported when the command runs (building the parser imports neither)


def add_llm_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    del common  # its -o/--output would clash with --output (the output length): the options are declared here
    p = sub.add_parser("llm", help="plan serving an LLM (preset or config.json): latency, throughput, memory, cost per device")
    p.add_argument("--catalog", action="append", metavar="PATH",
                   help="extra hardware catalog file or folder (repeatable); also $ROOFCORE_CATALOG_PATH")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument("model", metavar="MODEL", help="a preset (e.g. llama-2-7b; an unknown name lists them) or a config.json path")
    p.add_argument("--hardware", action="append", metavar="ID", help="device id (repeatable; default h100-sxm)")
    p.add_argument("--tp", type=int, default=1, metavar="N", help="tensor-parallel degree (default 1)")
    p.add_argument("--pp", type=int, default=1, metavar="N", help="pipeline-parallel degree (default 1)")
    p.add_argument("--batch", type=int, default=1, metavar="B", help="sequences per batch (default 1)")
    p.add_argument("--input", default="512", metavar="L", help="input length in tokens; with --rate also LO:HI (uniform)")
    p.add_argument("--output", dest="output_len", default="128", metavar="L", help="output length in tokens; with --rate also LO:HI")
    p.add_argument("--precision", default="fp16", metavar="P", help="weights: fp16, bf16, fp8, int8, int4 (default fp16)")
    p.add_argument("--kv-precision", metavar="P", help="KV cache: fp16, bf16, fp8, int8 (default: 16-bit)")
    p.add_argument("--kv-reads", default="grouped", metavar="HOW",
                   help="how attention reads a grouped-query cache: grouped (default: once per KV head; FlashAttention, "
                        "XQA) or per-query-head (once per query head: decode kernels without GQA sharing)")
    p.add_argument("--calibrate", action="append", metavar="FILE",
                   help="a profile (any supported export) to fit per-op-class efficiencies on (repeatable: one run)")
    p.add_argument("--price", action="append", metavar="ID=USD", help="$/hour of one GPU of a device (repeatable)")
    p.add_argument("--rate", type=float, metavar="R", help="simulate serving R requests/s (continuous batching)")
    p.add_argument("--lengths-csv", metavar="FILE", help="with --rate: input and output lengths from a CSV")
    p.add_argument("--requests", type=int, default=1000, metavar="N", help="with --rate: requests simulated (default 1000)")
    p.add_argument("--ttft-target", type=float, default=2.0, metavar="S", help="with --rate: TTFT target in s (default 2)")
    p.add_argument("--tpot-target", type=float, default=0.1, metavar="S", help="with --rate: TPOT target in s (default 0.1)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON")
    p.set_defaults(func=cmd_llm)


def _prices(items: list[str] | None) -> dict[str, float]:
    out = {}
    for item in items or ():
        key, _, val = item.partition("=")
        try:
            out[key.strip()] = float(val)
        except ValueError:
            raise InputError(where="--price", expected="ID=USD_PER_HOUR, e.g. h100-sxm=2.5", found=repr(item)) from None
        if out[key.strip()] < 0 or not key.strip():
            raise InputError(where="--price", expected="ID=USD_PER_HOUR ≥ 0", found=repr(item))
    return out


def _dest(args: argparse.Namespace) -> argparse.Namespace:
    """Where :func:`~roofcore.cli.common._emit` writes: ``--out FILE`` or standard output."""
    return argparse.Namespace(output=args.out)


def _int_len(text: str, where: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise InputError(where=where, expected="a whole number of tokens (a range LO:HI only with --rate)",
                         found=repr(text)) from None
    if v < 1:
        raise InputError(where=where, expected="a whole number of tokens ≥ 1", found=repr(text))
    return v


def cmd_llm(args: argparse.Namespace) -> int:
    import numpy as np

    from .. import llm
    from ..llm.costing import check_kv_reads
    from .common import catalog_for, emit

    np.seterr(all="ignore")

    cat = catalog_for(args)
    model = llm.load_model(args.model)
    q = llm.quant(args.precision, args.kv_precision)
    hws = [cat.get(h) for h in (args.hardware or ["h100-sxm"])]
    prices = _prices(args.price)
    cal = llm.calibrate_file(args.calibrate, cat, [h.id for h in hws]) if args.calibrate else llm.Calibration()
    if args.rate is not None:
        return _serve(args, llm, model, q, hws, cal, prices)
    shape = llm.Shape(tp=args.tp, pp=args.pp, batch=args.batch, input_len=_int_len(args.input, "--input"),
                      output_len=_int_len(args.output_len, "--output"),
                      kv_reads=check_kv_reads(args.kv_reads))
    result = llm.plan(model, q, hws, shape, cal, prices=prices)
    if args.json:
        emit(_dest(args), json.dumps(result.to_json(), indent=1, allow_nan=False))
    else:
        emit(_dest(args), plan_text(result))
    return 0


def _serve(args: argparse.Namespace, llm: ModuleType, model: ModelConfig, q: Quant, hws: list[Hardware],
           cal: Calibration, prices: dict[str, float]) -> int:
    from ..llm.costing import check_kv_reads
    from .common import emit, text_table

    if args.lengths_csv:
        ins, outs = llm.lengths_from_csv(Path(args.lengths_csv).read_text(encoding="utf-8"), args.lengths_csv)
    else:
        ins, outs = llm.parse_lengths(args.input, "--input"), llm.parse_lengths(args.output_len, "--output")
    if args.requests < 1:
        raise InputError(where="--requests", expected="a whole number ≥ 1", found=str(args.requests))
    shape = llm.Shape(tp=args.tp, pp=args.pp, batch=1, input_len=int(ins.mean), output_len=int(outs.mean),
                      kv_reads=check_kv_reads(args.kv_reads))
    runs = [llm.simulate(model, q, hw, shape, cal, rate=args.rate, inputs=ins, outputs=outs, requests=args.requests,
                         ttft_target_s=args.ttft_target, tpot_target_s=args.tpot_target) for hw in hws]
    best = llm.cheapest(model, q, hws, cal, rate=args.rate, inputs=ins, outputs=outs, prices=prices,
                        requests=min(args.requests, 500), ttft_target_s=args.ttft_target, tpot_target_s=args.tpot_target,
                        kv_reads=shape.kv_reads)
    doc = {"model": model.name, "rate_req_s": args.rate, "calibration": cal.to_json(),
           "serving": [r.to_json() for r in runs], "options": best}
    if args.json:
        emit(_dest(args), json.dumps(doc, indent=1, allow_nan=False, default=float))
        return 0
    rows = [[r.hardware, f"{r.gpus}", _ms(r.ttft_p50_s), _ms(r.ttft_p99_s), _ms(r.tpot_p50_s), _ms(r.tpot_p99_s),
             f"{r.throughput_tok_s:,.0f}", f"{r.goodput_share:.0%}"] for r in runs]
    lines = [f"{model.name} at {args.rate:g} requests/s, {args.requests:,} requests; targets TTFT ≤ {args.ttft_target:g} s, "
             f"TPOT ≤ {args.tpot_target:g} s",
             text_table(["device", "GPUs", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "tok/s", "goodput"], rows), "",
             "cheapest meeting the targets (device × TP):"]
    lines.append(text_table(["device", "TP", "meets", "tok/s", "$/M tok"],
                        [[o["hardware"], str(o["tp"]), "yes" if o["meets"] else "no",
                          f"{o.get('throughput_tok_s', 0):,.0f}",
                          "unknown" if o.get("cost_per_mtok") is None else f"{o['cost_per_mtok']:.3f}"] for o in best]))
    emit(_dest(args), "\n".join(lines))
    return 0


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v * 1e3:,.1f} ms"


def _gb(v: float | None) -> str:
    return "–" if v is None else f"{v / 1e9:,.1f} GB"


def plan_text(p: LLMPlan) -> str:
    from .common import text_table

    s = p.shape
    head = (f"{p.model.name}: {p.model.params()['total'] / 1e9:.2f} B parameters · weights {p.quant.weights}, "
            f"KV {p.quant.kv} · TP {s.tp} × PP {s.pp} · batch {s.batch}, input {s.input_len}, output {s.output_len}")
    rows = []
    for d in p.devices:
        rows.append([d.hardware, _ms(d.ttft_s), _ms(d.tpot_first_s), _ms(d.tpot_last_s), f"{d.throughput_tok_s:,.0f}",
                     f"{d.throughput_tok_s_per_gpu:,.0f}", f"{_gb(d.memory_bytes['total'])} / {_gb(d.capacity_bytes)}",
                     "–" if d.max_batch is None else str(d.max_batch),
                     "unknown" if d.cost_per_mtok is None else f"${d.cost_per_mtok:.3f}"])
    out = [head, text_table(["device", "TTFT", "TPOT first", "TPOT last", "tok/s", "tok/s/GPU", "memory/GPU", "max batch",
                         "$/M tok"], rows), ""]
    for d in p.devices:
        cross = "at no batch" if d.crossover_batch is None else f"at batch {d.crossover_batch}"
        mm = "at no batch" if not d.crossover_batch_matmul else f"at batch {d.crossover_batch_matmul}"
        out.append(f"{d.hardware}: prefill {d.prefill['bound']}, decode {d.decode.get('bound', '–')}; decode turns "
                   f"compute-bound {cross} (its matmuls alone {mm}); "
                   f"all-reduce {_ms(d.all_reduce_s['prefill'])} in prefill, {_ms(d.all_reduce_s['decode_step'])} a "
                   f"decode step" + (f"; cost {d.cost_note}" if d.cost_note else ""))
        if d.fits is False:
            out.append(f"  does not fit: {_gb(d.memory_bytes['total'])} a GPU against {_gb(d.capacity_bytes)}; "
                       + ("not even the weights fit: raise --tp/--pp or quantise" if not d.max_batch
                          else f"at most batch {d.max_batch}") + " (the times assume it did)")
        out.extend(f"  note: {n}" for n in d.notes)
    cal = p.calibration
    out.append("")
    out.append("calibration: " + ("documented defaults (no profile given; --calibrate FILE fits them)"
                                  if not cal.calibrated else cal.origin))
    for c, f in cal.fits.items():
        spread = f", spread {f.spread[0]:.2f}–{f.spread[1]:.2f}" if f.spread else ""
        out.append(f"  {c}: {f.efficiency:.2f} of the roof + {f.overhead_s * 1e6:.1f} µs a launch{spread} — {f.source}")
        if f.kernels:
            out.append("    from " + ", ".join(k if len(k) <= 60 else k[:59] + "…" for k in f.kernels[:3])
                       + (f" and {len(f.kernels) - 3} more named in --json" if len(f.kernels) > 3 else ""))
    out.append("not costed: " + "; ".join(p.uncosted))
    return "\n".join(out)
