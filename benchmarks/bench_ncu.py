"""Nsight Compute CSV: ``roofline analyze FILE --json`` as a whole process against its peers and floor (issue #24).

Generates an ncu ``--csv`` details export (default 20,000 launches × 25 metrics, ~136 MB): the 2023–2026
15-column header, every field quoted, long templated kernel names with commas, values with thousands separators
(no preamble, so pandas' defaults can read it); with ``--page raw`` the same launches as a raw page (one row per
launch, a units row); with ``--page saved`` the details page as a spreadsheet saves it back (quotes only where
needed, CRLF, a BOM). Then runs, alternated ``--repeat`` times, each a separate process:

* ``roofline analyze FILE --json > /dev/null`` (the acceptance: at most 0.5× the lean peer, 0.3× the published
  recipe, peak memory at most 2× the file);
* the lean pandas pipeline (``peers/nersc_ncu.py``: read, pivot per launch, to numbers, the figures);
* the NERSC recipe as published (``peers/nersc_ncu_published.py``: read, ``groupby(['Kernel Name', 'Metric
  Name']).sum()``, ``pivot_table``, the figures per kernel);
* the floors (``peers/floor_ncu.py``): pyarrow's and polars' multi-threaded readers on the five needed columns,
  cast and pivoted to one row per launch (polars only where it is installed);
* ``import pandas`` alone, for scale.

Medians of wall and CPU time (user + system of the child), ratios to each peer, peak resident memory of each child
over the file size. ``--stages`` also times the reader's parts in this process (parse, analyse).

Run: ``python benchmarks/bench_ncu.py [--launches N] [--repeat 5] [--page details|raw|saved] [--stages]``; results
print and go to benchmarks/out/ncu.json (ncu_raw.json, ncu_saved.json for the other pages). Numbers depend on the
machine and its load: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench_commands import PY, compare, compile_bytecode

OUT = Path(__file__).parent / "out"
PEERS = Path(__file__).parent / "peers"

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


def _thousands(x) -> list[str]:
    return [f"{v:,}" for v in x.tolist()]


def make_csv(path: Path, launches: int, seed: int = 0) -> None:
    """Write an ncu details export of ``launches`` × 25 metric rows (vectorised per metric)."""
    import numpy as np

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


def make_raw_csv(path: Path, launches: int, seed: int = 0) -> None:
    """The same launches as :func:`make_csv` as an ``ncu --csv --page raw`` export: one row per launch, a units row."""
    details = path.with_name(path.stem + "_details.tmp")
    make_csv(details, launches, seed)
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    t = pcsv.read_csv(details, convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in (
        "ID", "Metric Value")}))
    details.unlink()
    ident = HEADER.split(",")[:11]
    names = [m for m, _, _ in METRICS]
    values = np.asarray(t["Metric Value"].to_pylist(), dtype=object).reshape(launches, len(METRICS))
    first = t.slice(0, None).take(list(range(0, launches * len(METRICS), len(METRICS))))
    cols = [first[c.strip('"')].to_pylist() for c in ident]
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(",".join([*ident, *(f'"{m}"' for m in names)]) + "\n")
        fh.write(",".join(['""'] * len(ident) + [f'"{u}"' for _, u, _ in METRICS]) + "\n")
        for i in range(launches):
            fh.write(",".join(f'"{c[i]}"' for c in cols) + "," + ",".join(f'"{v}"' for v in values[i]) + "\n")


def make_saved_csv(path: Path, launches: int, seed: int = 0) -> None:
    """The details export of :func:`make_csv` as a spreadsheet saves it back: quotes only where needed, CRLF, a BOM."""
    import csv

    details = path.with_name(path.stem + "_details.tmp")
    make_csv(details, launches, seed)
    with details.open(newline="", encoding="utf-8") as fi, path.open("w", newline="", encoding="utf-8") as fo:
        fo.write("\ufeff")
        csv.writer(fo, lineterminator="\r\n").writerows(csv.reader(fi))
    details.unlink()


def roofline_cmd() -> list[str]:
    """The ``roofline`` command as installed (its console script beside this Python), else ``python -m roofcore``."""
    script = Path(PY).with_name("roofline")
    found = str(script) if script.exists() else shutil.which("roofline")
    return [found] if found else [PY, "-m", "roofcore"]


def stages(csv: Path, repeat: int) -> dict:
    """The reader's parts in this process, best of ``repeat`` (CPU and wall): parse (bytes → workload) and analyse."""
    import numpy as np

    from roofcore import analyze, ingest, load_catalogs

    hw = [load_catalogs(use_env=False).get("a100-80gb-sxm")]
    best: dict[str, tuple[float, float]] = {}
    for _ in range(repeat):
        for name, fn in (("read_s", lambda: ingest.read(csv)), ("read_and_analyze_s", lambda: analyze(ingest.read(csv), hw))):
            t, c = time.perf_counter(), time.process_time()
            fn()
            w, cpu = time.perf_counter() - t, time.process_time() - c
            old = best.get(name, (np.inf, np.inf))
            best[name] = (min(old[0], w), min(old[1], cpu))
    return {k: {"wall": round(w, 3), "cpu": round(c, 3)} for k, (w, c) in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--page", choices=("details", "raw", "saved"), default="details",
                    help="saved: the details page as a spreadsheet saves it back (quotes only where needed)")
    ap.add_argument("--stages", action="store_true", help="also time the reader's parts in this process")
    ap.add_argument("--generate", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate:  # in a child process: this one stays small (a child's peak memory counts its parent's)
        return {"details": make_csv, "raw": make_raw_csv, "saved": make_saved_csv}[args.page](Path(args.generate),
                                                                                            args.launches)
    OUT.mkdir(exist_ok=True)
    compile_bytecode()
    csv = OUT / f"ncu_{args.page}_{args.launches}.csv"
    if not csv.exists():
        subprocess.run([PY, __file__, "--page", args.page, "--launches", str(args.launches), "--generate", str(csv)],
                       check=True)
    size = csv.stat().st_size
    contenders = {"roofline_analyze_json": [*roofline_cmd(), "analyze", str(csv), "--json"]}
    if args.page == "saved":  # pandas reads a spreadsheet's CSV as it reads ncu's
        contenders["lean_pandas"] = [PY, str(PEERS / "nersc_ncu.py"), str(csv)]
    if args.page == "details":  # the peers and the floors read the details page
        contenders.update(lean_pandas=[PY, str(PEERS / "nersc_ncu.py"), str(csv)],
                          nersc_published=[PY, str(PEERS / "nersc_ncu_published.py"), str(csv)],
                          floor_pyarrow=[PY, str(PEERS / "floor_ncu.py"), "arrow", str(csv)])
        try:
            import polars  # noqa: F401  (not a roofcore dependency: the floor only where it is installed)

            contenders["floor_polars"] = [PY, str(PEERS / "floor_ncu.py"), "polars", str(csv)]
        except ImportError:
            pass
    contenders["import_pandas"] = [PY, "-c", "import pandas"]
    peer = "lean_pandas" if "lean_pandas" in contenders else "import_pandas"
    result = compare(f"ncu {args.page} CSV, {args.launches:,} launches", contenders, peer, args.repeat, size)
    res = result["results"]
    ours = res["roofline_analyze_json"]
    result["cpus"] = len(os.sched_getaffinity(0))
    # Linux counts a parent's peak resident memory at the start of each child's: this one's, the floor of them all
    result["bench_process_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    for other in ("lean_pandas", "nersc_published", "floor_pyarrow", "floor_polars"):
        if other in res:
            result[f"ours_over_{other}"] = {"wall": round(ours["median_s"] / res[other]["median_s"], 3),
                                            "cpu": round(ours["median_cpu_s"] / res[other]["median_cpu_s"], 3)}
    if args.stages:
        result["stages_in_process"] = stages(csv, 3)
    name = "ncu.json" if args.page == "details" else f"ncu_{args.page}.json"
    (OUT / name).write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(json.dumps(result, indent=1, ensure_ascii=False))
    if "nersc_published" in res:
        checks = {"<= 0.5x lean pandas": ours["median_s"] <= 0.5 * res["lean_pandas"]["median_s"],
                  "<= 0.3x NERSC as published": ours["median_s"] <= 0.3 * res["nersc_published"]["median_s"],
                  "peak RSS <= 2x file": ours["rss_over_input"] <= 2.0}
        for k, ok in checks.items():
            print("PASS" if ok else "FAIL", k)


if __name__ == "__main__":
    sys.exit(main())
