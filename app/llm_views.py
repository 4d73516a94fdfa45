"""The Planner's "LLM serving" tab, without Streamlit: the results table, the batch sweep on each device's roofline
(prefill and decode steps as points joined into a trajectory), the latency-vs-throughput curve and the memory
stack against capacity. Every number comes from :mod:`roofcore.llm`; the roofline is :func:`roofcore.charts.roofline`'s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from roofcore import charts
from roofcore.analyze import analyze
from roofcore.ingest import make_frame
from roofcore.llm import Calibration, LLMPlan, Quant, Shape, batch_sweep
from roofcore.llm.config import ModelConfig
from roofcore.models import Hardware, Workload

#: the batches the sweep visits (those above the device's largest batch are left out)
SWEEP = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
MEMORY_PARTS = ("weights", "kv_cache", "activations", "workspace")


def _ms(v: float | None) -> float | None:
    return None if v is None else v * 1e3


def plan_frame(p: LLMPlan) -> pd.DataFrame:
    """One row per device: latencies (ms), throughput, memory (GB) against capacity, largest batch, bounds, cost."""
    rows = []
    for d in p.devices:
        rows.append({
            "device": d.hardware, "GPUs": d.gpus, "TTFT (ms)": _ms(d.ttft_s), "TPOT first (ms)": _ms(d.tpot_first_s),
            "TPOT last (ms)": _ms(d.tpot_last_s), "tok/s": d.throughput_tok_s, "tok/s per GPU": d.throughput_tok_s_per_gpu,
            "memory/GPU (GB)": d.memory_bytes["total"] / 1e9,
            "capacity (GB)": None if d.capacity_bytes is None else d.capacity_bytes / 1e9,
            "fits": {True: "yes", False: "no", None: "unknown"}[d.fits], "max batch": d.max_batch,
            "prefill bound": d.prefill["bound"], "decode bound": d.decode.get("bound"),
            "crossover batch": "never" if d.crossover_batch is None else str(d.crossover_batch),
            "all-reduce/step (ms)": _ms(d.all_reduce_s["decode_step"]),
            "$/M tok": d.cost_per_mtok, "cost": d.cost_note or "from the price given",
        })
    return pd.DataFrame(rows)


def calibration_frame(cal: Calibration) -> pd.DataFrame:
    """Per op class: efficiency, overhead (µs), spread, kernels and the source."""
    return pd.DataFrame([{
        "class": c, "efficiency": f.efficiency, "overhead (µs)": f.overhead_s * 1e6,
        "spread": "" if not f.spread else f"{f.spread[0]:.2f}–{f.spread[1]:.2f}", "launches": f.launches or None,
        "kernels": ", ".join(f.kernels[:4]), "source": f.source} for c, f in cal.fits.items()])


def sweep(m: ModelConfig, q: Quant, hw: Hardware, s: Shape, cal: Calibration, max_batch: int | None) -> dict:
    """:func:`roofcore.llm.batch_sweep` over :data:`SWEEP` up to the largest batch that fits (at least batch 1)."""
    top = max(max_batch or SWEEP[-1], 1)
    return batch_sweep(m, q, hw, s, cal, [b for b in SWEEP if b <= top] or [1])


def sweep_workload(sw: dict, q: Quant, name: str) -> Workload:
    """The sweep as a workload: one row per step (prefill and middle decode step per batch), per GPU, timed."""
    b = sw["batch"]
    n = len(b)
    pre_t = sw["ttft_s"]
    cols = {
        "name": [f"prefill B={int(x)}" for x in b] + [f"decode B={int(x)}" for x in b],
        "count": np.ones(2 * n, dtype=np.int64),
        "flops": np.concatenate([sw["prefill_flops"], sw["decode_flops"]]),
        "time_s": np.concatenate([pre_t, sw["tpot_s"]]),
        "precision": [q.compute] * (2 * n), "unit": ["matrix"] * (2 * n),
        "group": ["prefill"] * n + ["decode"] * n, "source": ["llm planner"] * (2 * n),
        "row": [str(i + 1) for i in range(2 * n)],
        "bytes_hbm": np.concatenate([sw["prefill_bytes"], sw["decode_bytes"]]),
    }
    return Workload(frame=make_frame(cols, 2 * n), name=name, sources=("llm planner",), formats=("builder",))


def sweep_roofline(sw: dict, q: Quant, hw: Hardware, name: str) -> dict:
    """The sweep's steps on ``hw``'s roofline (:func:`roofcore.charts.roofline`, coloured by phase), joined in batch
    order per phase: the trajectory a growing batch takes."""
    w = sweep_workload(sw, q, name)
    fig = charts.roofline(analyze(w, hw), [hw.id], color_by="group", width=420, height=340)
    spec = fig.spec(arrow=True)  # the datasets as Arrow bytes, as the Roofline page sends them
    f = w.frame
    path = pd.DataFrame({"x": f["flops"] / f["bytes_hbm"], "y": f["flops"] / f["time_s"], "phase": f["group"],
                         "order": np.tile(np.arange(len(sw["batch"])), 2), "step": f["name"]})
    x_enc = next(layer["encoding"]["x"] for layer in spec["layer"] if "x" in layer.get("encoding", {}))
    y_enc = next(layer["encoding"]["y"] for layer in spec["layer"] if "y" in layer.get("encoding", {}))
    spec["layer"].append({
        "data": {"values": path.to_dict("records")}, "mark": {"type": "line", "opacity": 0.6, "clip": True},
        "encoding": {"x": {**x_enc, "field": "x"}, "y": {**y_enc, "field": "y"}, "detail": {"field": "phase"},
                     "order": {"field": "order", "type": "quantitative"},
                     "strokeDash": {"field": "phase", "type": "nominal", "legend": None}}})
    spec["title"] = f"{hw.id}: batch sweep, per GPU"
    return spec


def latency_throughput_spec(curves: dict[str, dict]) -> dict:
    """TPOT (ms) against output throughput per GPU, one line per device across the batch sizes."""
    rows = [{"device": dev, "batch": int(b), "tok/s per GPU": float(t), "TPOT (ms)": float(p) * 1e3,
             "TTFT (ms)": float(f) * 1e3}
            for dev, sw in curves.items()
            for b, t, p, f in zip(sw["batch"], sw["throughput_tok_s"] / sw["gpus"], sw["tpot_s"], sw["ttft_s"], strict=True)]
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "width": 420, "height": 300,
            "title": "Latency against throughput across batch sizes", "data": {"values": rows},
            "mark": {"type": "line", "point": True},
            "encoding": {"x": {"field": "tok/s per GPU", "type": "quantitative", "scale": {"type": "log"}},
                         "y": {"field": "TPOT (ms)", "type": "quantitative", "scale": {"type": "log"}},
                         "color": {"field": "device", "type": "nominal"},
                         "tooltip": [{"field": f} for f in ("device", "batch", "tok/s per GPU", "TPOT (ms)", "TTFT (ms)")]}}


def memory_spec(p: LLMPlan) -> dict:
    """Per device the memory per GPU stacked by part, with a tick at the device's capacity."""
    rows = [{"device": d.hardware, "part": part, "rank": i, "GB": d.memory_bytes[part] / 1e9}
            for d in p.devices for i, part in enumerate(MEMORY_PARTS)]
    caps = [{"device": d.hardware, "capacity (GB)": d.capacity_bytes / 1e9} for d in p.devices if d.capacity_bytes]
    layers = [{"data": {"values": rows}, "mark": "bar",
               "encoding": {"y": {"field": "device", "type": "nominal", "title": None},
                            "x": {"field": "GB", "type": "quantitative", "stack": "zero", "title": "GB per GPU"},
                            "color": {"field": "part", "type": "nominal", "sort": list(MEMORY_PARTS)},
                            "order": {"field": "rank", "type": "quantitative"},
                            "tooltip": [{"field": "device"}, {"field": "part"}, {"field": "GB", "format": ",.1f"}]}}]
    if caps:
        layers.append({"data": {"values": caps}, "mark": {"type": "tick", "thickness": 3, "color": "black"},
                       "encoding": {"y": {"field": "device", "type": "nominal"},
                                    "x": {"field": "capacity (GB)", "type": "quantitative"},
                                    "tooltip": [{"field": "device"}, {"field": "capacity (GB)", "format": ",.0f"}]}})
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "width": 420,
            "title": "Memory per GPU against capacity (black tick)", "layer": layers}


def serving_frame(runs: list) -> pd.DataFrame:
    """One row per device's simulation: latency percentiles (ms), throughput, goodput."""
    return pd.DataFrame([{
        "device": r.hardware, "GPUs": r.gpus, "TTFT p50 (ms)": _ms(r.ttft_p50_s), "TTFT p99 (ms)": _ms(r.ttft_p99_s),
        "TPOT p50 (ms)": _ms(r.tpot_p50_s), "TPOT p99 (ms)": _ms(r.tpot_p99_s), "tok/s": r.throughput_tok_s,
        "goodput (req/s)": r.goodput_req_s, "within targets": r.goodput_share, "most running": r.max_running}
        for r in runs])


def options_frame(rows: list[dict]) -> pd.DataFrame:
    """:func:`roofcore.llm.cheapest`'s rows: device, TP, whether it meets the targets, throughput, cost."""
    return pd.DataFrame([{
        "device": o["hardware"], "TP": o["tp"], "meets": "yes" if o["meets"] else "no",
        "within targets": o.get("goodput_share"), "tok/s": o.get("throughput_tok_s"),
        "$/M tok": o.get("cost_per_mtok"), "why not": o.get("why", "")} for o in rows])


def results(m: ModelConfig, q: Quant, hws: list[Hardware], s: Shape, cal: Calibration,
            prices: dict[str, float]) -> dict:
    """Everything the tab shows for one set of inputs (the page keeps it per session: a rerun costs nothing):
    the plan, its table, each device's sweep roofline, the latency and memory charts."""
    from roofcore.llm import plan

    p = plan(m, q, hws, s, cal, prices=prices)
    curves = {hw.id: sweep(m, q, hw, s, cal, d.max_batch) for hw, d in zip(hws, p.devices, strict=True)}
    return {"plan": p, "table": plan_frame(p),
            "rooflines": {hw.id: sweep_roofline(curves[hw.id], q, hw, m.name) for hw in hws},
            "latency": latency_throughput_spec(curves), "memory": memory_spec(p)}


def device_key(hw: Hardware) -> tuple:
    """What of a device the plan depends on (a session may redefine a device under the same id)."""
    return (hw.id, hw.offchip.bandwidth, hw.offchip.capacity, tuple((c.key, c.peak, c.achievable) for c in hw.ceilings),
            tuple((lk.name, lk.bandwidth) for lk in hw.links))
