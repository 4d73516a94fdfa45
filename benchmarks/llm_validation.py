"""The LLM planner against published measurements (benchmarks/data/llm_published.yaml): per row the predicted and
measured value and their ratio, then per metric the median and worst error.

Run: ``python benchmarks/llm_validation.py [--json]``. The planner runs with its documented defaults (no profile):
no constant of roofcore.llm is set from these rows; they only judge it. What a source says of its engine, read
from the engine's code or documentation (``kv_reads``; ``first_token: decode_step``, see :func:`predict`), sets how its
rows are predicted. Error of a row: ``|predicted/measured − 1|``;
the worst is also given as a factor ``max(r, 1/r)`` (the goal: none beyond 2×).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import yaml

from roofcore.catalog import load_catalogs
from roofcore.llm import Calibration, Shape, load_model, plan_device, quant

DATA = Path(__file__).with_name("data") / "llm_published.yaml"
#: metric -> how it is read from a DevicePlan
METRICS = {
    "throughput_per_gpu": lambda d, s: d.throughput_tok_s_per_gpu,
    "throughput": lambda d, s: d.throughput_tok_s,
    "ttft_s": lambda d, s: d.ttft_s,
    "e2e_s": lambda d, s: d.e2e_s,
    "tpot_s": lambda d, s: (d.e2e_s - d.ttft_s) / (s.output_len - 1),
}
#: the groups the goal is stated for
GROUPS = {"output throughput": ("throughput_per_gpu", "throughput"), "first-token latency": ("ttft_s",),
          "other latency (e2e, TPOT)": ("e2e_s", "tpot_s")}


def predict(row: dict, catalog, cal: Calibration, source: dict | None = None) -> float:
    """The planner's value of ``row``'s metric, with what its ``source`` says of the engine: ``kv_reads`` (how its
    attention kernel reads a grouped-query cache) and ``first_token: decode_step`` (the engine prefills the prompt
    but its last token, and makes every output token, the first included, with a decode step)."""
    source = source or {}
    w, kv = row["precision"].split("/")
    lin, lout = row["input"], row["output"]
    by_step = source.get("first_token") == "decode_step"
    if by_step:
        if row["metric"] not in ("ttft_s", "throughput"):
            raise ValueError(f"first_token: decode_step has no reading of {row['metric']}")
        lin, lout = lin - 1, (2 if row["metric"] == "ttft_s" else lout + 1)
    s = Shape(tp=row["tp"], pp=1, batch=row["batch"], input_len=lin, output_len=lout,
              kv_reads=source.get("kv_reads", "grouped"))
    d = plan_device(load_model(row["model"]), quant(w, kv), catalog.get(row["hardware"]), s, cal)
    if by_step:  # the first output token is out after the prefill of L−1 tokens and one decode step
        return float(d.e2e_s if row["metric"] == "ttft_s" else row["batch"] * row["output"] / d.e2e_s)
    return float(METRICS[row["metric"]](d, s))


def run(path: Path = DATA) -> dict:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    catalog, cal = load_catalogs(), Calibration()
    rows = []
    for row in doc["rows"]:
        pred = predict(row, catalog, cal, doc["sources"][row["source"]])
        rows.append({**row, "predicted": pred, "ratio": pred / row["measured"]})
    summary = {}
    for group, metrics in GROUPS.items():
        sel = [r for r in rows if r["metric"] in metrics]
        if sel:
            errs = [abs(r["ratio"] - 1) for r in sel]
            factor = max(max(r["ratio"], 1 / r["ratio"]) for r in sel)
            summary[group] = {"rows": len(sel), "median_error": statistics.median(errs), "worst_error": max(errs),
                              "worst_factor": factor, "within_2x": sum(1 for r in sel if 0.5 <= r["ratio"] <= 2)}
    return {"sources": doc["sources"], "rows": rows, "summary": summary}


def _fmt(metric: str, v: float) -> str:
    return f"{v * 1e3:,.1f} ms" if metric.endswith("_s") else f"{v:,.0f}"


def text(result: dict) -> str:
    lines = [f"{'source':17} {'model':14} {'device':14} {'prec':9} {'TP':>2} {'batch':>5} {'in':>5} {'out':>5} "
             f"{'metric':18} {'measured':>11} {'predicted':>11} {'pred/meas':>9}"]
    for r in result["rows"]:
        lines.append(f"{r['source']:17} {r['model']:14} {r['hardware']:14} {r['precision']:9} {r['tp']:>2} "
                     f"{r['batch']:>5} {r['input']:>5} {r['output']:>5} {r['metric']:18} "
                     f"{_fmt(r['metric'], r['measured']):>11} {_fmt(r['metric'], r['predicted']):>11} {r['ratio']:>9.2f}")
    lines.append("")
    for group, s in result["summary"].items():
        lines.append(f"{group}: {s['rows']} rows, median error {s['median_error']:.0%}, worst {s['worst_error']:.0%} "
                     f"(×{s['worst_factor']:.2f}), {s['within_2x']}/{s['rows']} within 2×")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run()
    print(json.dumps(result, indent=1) if args.json else text(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
