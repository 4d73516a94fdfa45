"""Engine speed and memory on a large inventory (issue #2 acceptance).

Generates an N-row inventory CSV (default 1,000,000 rows), then measures:
  * pandas alone reading the CSV (``pd.read_csv``), the reference;
  * ``roofcore.ingest.read`` (parse + validate);
  * ``roofcore.analyze`` against 3 devices, time and peak traced memory (tracemalloc), compared with the
    size of the workload DataFrame (``memory_usage(deep=True)``).

Run: ``python benchmarks/bench_engine.py [--rows N]``; results print and go to benchmarks/out/engine.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
from timing import best_of

from roofcore import analyze, ingest, load_catalogs

OUT = Path(__file__).parent / "out"


def make_csv(path: Path, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    flops = rng.lognormal(20, 3, rows).round()
    frame = pd.DataFrame({
        "name": [f"kernel_{i % 50000}<float, {i % 7}>" for i in range(rows)],
        "count": rng.integers(1, 100, rows),
        "flops": flops,
        "bytes": (flops / rng.lognormal(2, 2, rows)).round() + 1,
        "bytes_l2": (flops / rng.lognormal(1, 2, rows)).round() + 1,
        "time_us": rng.lognormal(3, 2, rows).round(3),
        "precision": rng.choice(["bf16", "fp32", "fp16", "int8"], rows),
        "unit": rng.choice(["matrix", "vector"], rows),
        "group": rng.choice([f"layer{i}" for i in range(48)], rows),
    })
    frame.to_csv(path, index=False)




def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    csv = OUT / f"inventory_{args.rows}.csv"
    if not csv.exists():
        make_csv(csv, args.rows)
    cat = load_catalogs(use_env=False)
    hws = [cat.get(h) for h in ("h100-sxm", "mi300x", "tpu-v5e")]

    t_pandas = best_of(lambda: pd.read_csv(csv))

    t0 = time.perf_counter()
    w = ingest.read(csv)
    t_ingest = time.perf_counter() - t0
    frame_bytes = int(w.frame.memory_usage(deep=True).sum())

    t_analyze = best_of(lambda: analyze(w, hws))
    numeric_bytes = int(w.frame.select_dtypes("number").memory_usage(deep=True).sum())
    gc.collect()
    tracemalloc.start()
    a = analyze(w, hws)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    t0 = time.perf_counter()
    summaries = [a.summary(h.id) for h in hws]
    t_summary = time.perf_counter() - t0

    result = {
        "rows": args.rows, "csv_mb": round(csv.stat().st_size / 1e6, 1), "devices": [h.id for h in hws],
        "pandas_read_csv_s": round(t_pandas, 3), "roofcore_ingest_s": round(t_ingest, 3),
        "analyze_s": round(t_analyze, 3), "analyze_over_pandas_read": round(t_analyze / t_pandas, 3),
        "frame_mb": round(frame_bytes / 1e6, 1), "analyze_peak_traced_mb": round(peak / 1e6, 1),
        "peak_over_frame": round(peak / frame_bytes, 3), "frame_numeric_mb": round(numeric_bytes / 1e6, 1),
        "peak_over_numeric_columns": round(peak / numeric_bytes, 3), "summaries_s": round(t_summary, 3),
        "skipped_rows": len(w.skipped), "t_roof_total_s": [s["t_roof_s"] for s in summaries],
    }
    (OUT / "engine.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    ok = t_analyze <= t_pandas and peak < 3 * frame_bytes
    print("PASS" if ok else "FAIL", "(analysis ≤ pandas read time, peak < 3× frame)")


if __name__ == "__main__":
    main()
