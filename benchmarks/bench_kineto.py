"""PyTorch trace (Kineto JSON) parsing speed and memory (issue #4 acceptance).

Generates a Kineto-shaped trace of about 1,000,000 events (~200 MB: ``cpu_op`` events with recorded shapes,
nested ``aten::linear`` → ``aten::t`` + ``aten::addmm``, ``cuda_runtime`` launches, kernels and ``ac2g`` flow
events, two threads), then measures, best of 3 each:

* ``json.load`` of the file (the reference: what any reader of this format pays at least once);
* ``roofcore.ingest.read`` of the same file (parse, link kernels to ops, FLOPs/bytes from shapes);
* peak traced memory (tracemalloc) of ``ingest.read`` (file read included), against the file size;
* the gzipped file through ``ingest.read`` (decompression included), for information.

Acceptance: read time ≤ 1.5 × json.load time; peak memory < 3 × the file size.
Run: ``python benchmarks/bench_kineto.py [--events N]``; results print and go to benchmarks/out/kineto.json.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import random
import tracemalloc
from pathlib import Path

from timing import best_of

from roofcore import ingest
from roofcore.ingest import kineto

OUT = Path(__file__).parent / "out"

KERNELS = [
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(cutlass_80_tensorop_s1688gemm_"
    "128x128_16x4_tn_align4::Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
    "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "ampere_sgemm_128x64_tn",
    "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1",
]


def make_trace(path: Path, events: int, seed: int = 0) -> int:
    """Write a Kineto-style trace with about ``events`` events; returns the number written."""
    rng = random.Random(seed)
    pid = 31337
    threads = (31337, 31400)
    clock = {t: 1_700_000_000_000.0 for t in threads}
    gpu_clock = 1_700_000_000_500.0
    ext = corr = n = 0
    shapes = [
        ("aten::addmm", [[4096], [64, 1024], [1024, 4096], [], []], ["float", "float", "float", "Scalar", "Scalar"],
         ["", "", "", "1", "1"], 0),
        ("aten::mm", [[64, 1024], [1024, 4096]], ["c10::BFloat16", "c10::BFloat16"], ["", ""], 2),
        ("aten::add", [[64, 4096], [64, 4096], []], ["float", "float", "Scalar"], ["", "", "1"], 1),
        ("aten::cudnn_convolution", [[32, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], []],
         ["float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"],
         ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"], 3),
    ]
    with path.open("w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", '
                '"totalGlobalMem": 85031714816, "computeMajor": 8, "computeMinor": 0, "numSms": 108}\n  ],\n'
                '  "record_shapes": 1,\n  "displayTimeUnit": "ms",\n  "traceEvents": [\n')
        first = True

        def w(e: dict) -> None:
            nonlocal first, n
            f.write(("  " if first else ",\n  ") + json.dumps(e))
            first = False
            n += 1

        def launch(tid: int, t: float, kernel: str, op_ext: int) -> None:
            nonlocal corr, gpu_clock
            corr += 1
            w({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid,
               "ts": round(t, 3), "dur": 3.125, "args": {"External id": op_ext, "cbid": 211, "correlation": corr}})
            w({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": round(t, 3), "cat": "ac2g", "name": "ac2g"})
            kd = round(rng.uniform(2, 200), 3)
            w({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": round(gpu_clock, 3), "dur": kd,
               "args": {"External id": op_ext, "device": 0, "stream": 7, "correlation": corr,
                        "registers per thread": 128, "shared memory": 49152, "grid": [256, 1, 1],
                        "block": [128, 1, 1]}})
            w({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": round(gpu_clock, 3), "cat": "ac2g", "name": "ac2g",
               "bp": "e"})
            gpu_clock += kd + 0.5

        while n < events:
            tid = rng.choice(threads)
            t0 = clock[tid]
            if rng.random() < 0.3:  # aten::linear -> aten::t + aten::addmm (nested ops, one launch)
                ext += 3
                w({"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": pid, "tid": tid, "ts": round(t0, 3),
                   "dur": 40.0, "args": {"External id": ext - 2,
                                         "Input Dims": [[64, 1024], [4096, 1024], [4096]],
                                         "Input type": ["float", "float", "float"],
                                         "Concrete Inputs": ["", "", ""]}})
                w({"ph": "X", "cat": "cpu_op", "name": "aten::t", "pid": pid, "tid": tid, "ts": round(t0 + 1, 3),
                   "dur": 4.0, "args": {"External id": ext - 1, "Input Dims": [[4096, 1024]],
                                        "Input type": ["float"], "Concrete Inputs": [""]}})
                name, dims, types, conc, k = shapes[0]
                w({"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": tid, "ts": round(t0 + 6, 3),
                   "dur": 30.0, "args": {"External id": ext, "Input Dims": dims,
                                         "Input type": types, "Concrete Inputs": conc}})
                launch(tid, t0 + 10, KERNELS[k], ext)
                clock[tid] = t0 + 41
            else:
                ext += 1
                name, dims, types, conc, k = rng.choice(shapes[1:])
                d = round(rng.uniform(8, 50), 3)
                w({"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": tid, "ts": round(t0, 3), "dur": d,
                   "args": {"External id": ext, "Input Dims": dims, "Input type": types,
                            "Concrete Inputs": conc}})
                launch(tid, t0 + 2, KERNELS[k], ext)
                clock[tid] = t0 + d + 1
        f.write('\n  ],\n  "traceName": "bench.pt.trace.json"\n}\n')
    return n




def json_load(path: Path) -> None:
    with path.open() as f:
        json.load(f)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the generated files in benchmarks/out")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    path = OUT / "bench.pt.trace.json"
    n = make_trace(path, args.events)
    size = path.stat().st_size
    gz = path.with_suffix(".json.gz")
    gz.write_bytes(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))
    print(f"trace: {n:,} events, {size / 1e6:.1f} MB ({gz.stat().st_size / 1e6:.1f} MB gzipped)")

    limit = 2 * size
    t_json = best_of(lambda: json_load(path))
    print(f"json.load:          {t_json:6.2f} s")
    t_read = best_of(lambda: ingest.read(path, max_bytes=limit))
    print(f"ingest.read:        {t_read:6.2f} s  ({t_read / t_json:.2f} x json.load; acceptance ≤ 1.5)")
    w = ingest.read(path, max_bytes=limit)
    data = gz.read_bytes()
    t_gz = best_of(lambda: ingest.read(data, name=gz.name, fmt="pytorch-trace", max_bytes=limit), repeat=1)
    print(f"ingest.read (.gz):  {t_gz:6.2f} s")

    gc.collect()
    tracemalloc.start()
    ingest.read(path, max_bytes=limit)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak traced memory: {peak / 1e6:.0f} MB = {peak / size:.2f} x the file (acceptance < 3; ingest.read "
          "from the path: file bytes, detection, parse)")
    raw = path.read_bytes()
    gc.collect()
    tracemalloc.start()
    kineto.parse(raw, path.name, {})
    _, peak_parse = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del raw
    print(f"  parse alone:      {peak_parse / 1e6:.0f} MB = {peak_parse / size:.2f} x the file (bytes already in "
          "memory, not counted)")
    f = w.frame
    print(f"rows: {len(f):,}; with FLOPs: {int(f['flops'].notna().sum()):,}; warnings: {len(w.warnings)}")
    result = {"events": n, "file_bytes": size, "gz_bytes": gz.stat().st_size, "json_load_s": t_json,
              "read_s": t_read, "ratio": t_read / t_json, "read_gz_s": t_gz, "peak_bytes": peak,
              "peak_over_file": peak / size, "parse_peak_bytes": peak_parse, "parse_peak_over_file": peak_parse / size,
              "rows": len(f)}
    (OUT / "kineto.json").write_text(json.dumps(result, indent=1))
    if not args.keep:
        path.unlink()
        gz.unlink()


if __name__ == "__main__":
    main()
