"""Nsight Compute details CSV: parse + analyse speed and memory (issue #4 acceptance).

Generates an ncu ``--csv`` details export (default 20,000 launches × 25 metrics, ~136 MB): the
2023–2026 15-column header, every field quoted, long templated kernel names with commas, values
with thousands separators (no preamble, so pandas' defaults can read it). Then measures, best of 3
each, interleaved:
  * pandas alone reading the file (``pd.read_csv(path)``, defaults), the reference;
  * the parser on the file's bytes + ``roofcore.analyze(workload, [a100-80gb-sxm])`` (the acceptance);
  * end to end, ``roofcore.ingest.read(path)`` + analyse (adds reading the bytes and format detection);
  * peak memory of one end-to-end run: tracemalloc plus pyarrow's pool peak (not traced), vs the file size.

Run: ``python benchmarks/bench_ncu.py [--launches N]``; results print and go to benchmarks/out/ncu.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from timing import best_of

from roofcore import analyze, ingest, load_catalogs
from roofcore.ingest import ncu

OUT = Path(__file__).parent / "out"

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')

#: (metric, unit, kind): kind picks how a value is drawn
METRICS = [
    ("dram__bytes.sum", "byte", "bytes"),
    ("dram__bytes_read.sum", "byte", "bytes"),
    ("dram__bytes_write.sum", "byte", "bytes"),
    ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%", "pct"),
    ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%", "pct"),
    ("gpu__time_duration.sum", "nsecond", "ns"),
    ("l1tex__t_bytes.sum", "byte", "bytes"),
    ("l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "%", "pct"),
    ("launch__registers_per_thread", "register/thread", "regs"),
    ("lts__t_bytes.sum", "byte", "bytes"),
    ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "%", "pct"),
    ("sm__cycles_elapsed.avg", "cycle", "cycles"),
    ("sm__cycles_elapsed.avg.per_second", "cycle/second", "hz"),
    ("sm__inst_executed_pipe_tensor.sum", "inst", "inst"),
    *[(f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum", "inst", "inst")
      for p in "dfh" for op in ("add", "fma", "mul")],
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "pct"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "pct"),
]
assert len(METRICS) == 25

KERNELS = [
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_{0}x{1}_32x3_nn_align4>(T1::Params)",
    "void at::native::elementwise_kernel<128, 2, at::native::AddFunctor<float>>(int, T3)",
    "void at::native::vectorized_elementwise_kernel<4, GeluFunctor<float>, at::detail::Array<char *, 2>>(int, T2, T3)",
    "ampere_sgemm_{0}x{1}_sliced1x4_tn",
    "void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, const float *, float *)",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<{0}, {1}, 64, 4, 0, 0, cutlass::bfloat16_t>, 1, 0>(Flash_fwd_params)",
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, {0}, 0, 0>(float *, const float *, int)",
    "vectorAdd(const float *, const float *, float *, int)",
    "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize{0}x{1}x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
    "void layer_norm_kernel<float, float>(int, float, const float *, const float *, float *)",
]


def _thousands(x: np.ndarray) -> list[str]:
    return [f"{v:,}" for v in x.tolist()]


def make_csv(path: Path, launches: int, seed: int = 0) -> None:
    """Write an ncu details export of ``launches`` × 25 metric rows (vectorised per metric)."""
    rng = np.random.default_rng(seed)
    names = [k.format(2 ** (5 + i % 3), 2 ** (5 + j % 3)) for k in KERNELS for i in range(4) for j in range(4)]
    pick = rng.integers(0, len(names), launches)
    cols: list[list[str]] = []
    for _metric, _unit, kind in METRICS:
        if kind == "bytes":
            v = _thousands(rng.integers(0, 4_000_000_000, launches))
        elif kind == "ns":
            v = _thousands(rng.integers(1_000, 20_000_000, launches))
        elif kind == "cycles":
            v = [f"{x:,.2f}" for x in rng.uniform(1e3, 2e7, launches).tolist()]
        elif kind == "hz":
            v = [f"{x:,.2f}" for x in rng.uniform(1.0e9, 1.41e9, launches).tolist()]
        elif kind == "inst":
            v = _thousands(rng.integers(0, 5_000_000_000, launches))
        elif kind == "regs":
            v = [str(x) for x in rng.integers(16, 255, launches).tolist()]
        else:
            v = [f"{x:.2f}" for x in rng.uniform(0, 100, launches).tolist()]
        cols.append(v)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(HEADER + "\n")
        for i in range(launches):
            k = names[pick[i]]
            prefix = (f'"{i}","4242","python3.10","127.0.0.1","{k}","1","7","(128, 1, 1)","({i % 4096 + 1}, 8, 1)",'
                      f'"0","8.0","Command line profiler metrics"')
            fh.write("".join(f'{prefix},"{m}","{u}","{cols[j][i]}"\n' for j, (m, u, _) in enumerate(METRICS)))




def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    csv = OUT / f"ncu_details_{args.launches}.csv"
    if not csv.exists():
        make_csv(csv, args.launches)
    size = csv.stat().st_size
    hw = [load_catalogs(use_env=False).get("a100-80gb-sxm")]
    data = csv.read_bytes()

    def parse_and_analyze():  # the parser's part: bytes in, analysis out
        return analyze(ncu.parse_details(data, csv.name), hw)

    def end_to_end():  # what `roofline analyze FILE` does: read the file, detect the format, parse, analyse
        return analyze(ingest.read(csv), hw)

    # interleaved, so that a busy machine slows every contender alike
    t_pandas, t_ours, t_e2e = [], [], []
    for _ in range(args.repeat):
        t_pandas.append(best_of(lambda: pd.read_csv(csv), 1))
        t_ours.append(best_of(parse_and_analyze, 1))
        t_e2e.append(best_of(end_to_end, 1))
    t_read = best_of(csv.read_bytes, args.repeat)
    t_detect = best_of(lambda: ingest.detect(data, csv.name), args.repeat)

    gc.collect()
    pool = pa.default_memory_pool()
    tracemalloc.start()
    a = end_to_end()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    arrow_peak = pool.max_memory()  # not traced by tracemalloc; the process's peak (every run above), an upper bound
    w = a.workload
    result = {
        "launches": args.launches, "metric_rows": args.launches * len(METRICS), "file_mb": round(size / 1e6, 1),
        "cpus": len(os.sched_getaffinity(0)),
        "pandas_read_csv_s": round(min(t_pandas), 3),
        "parse_and_analyze_s": round(min(t_ours), 3), "ratio_to_pandas": round(min(t_ours) / min(t_pandas), 3),
        "end_to_end_read_path_and_analyze_s": round(min(t_e2e), 3),
        "end_to_end_ratio_to_pandas": round(min(t_e2e) / min(t_pandas), 3),
        "of_which_read_bytes_s": round(t_read, 3), "of_which_detect_s": round(t_detect, 3),
        "peak_traced_mb": round(peak / 1e6, 1), "peak_traced_over_file": round(peak / size, 3),
        "arrow_pool_peak_mb": round(arrow_peak / 1e6, 1),
        "peak_traced_plus_arrow_over_file": round((peak + arrow_peak) / size, 3),
        "kernels": len(w), "warnings": list(w.warnings), "skipped": len(w.skipped),
        "t_roof_total_s": a.summary(hw[0].id)["t_roof_s"],
    }
    (OUT / "ncu.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(json.dumps(result, indent=1, ensure_ascii=False))
    ok = min(t_ours) <= min(t_pandas) and peak + arrow_peak < 3 * size
    print("PASS" if ok else "FAIL", "(parse + analyse ≤ pandas read_csv; traced + arrow peak < 3× file size)")


if __name__ == "__main__":
    main()
