"""What users run, timed as whole processes against the peer tools on the same input, in the same run.

Each contender is a separate process (``python -m roofcore …``, exactly as the ``roofline`` command runs it,
and the peer as a script), run alternately ``--repeat`` times; the median wall time, the median CPU time (user +
system of the child: on a shared machine it moves less than the wall time) and the peak resident memory
(``ru_maxrss`` of the child) are reported, with the ratios to the peer. roofcore's bytecode is compiled first, as
``pip install`` does (an environment with ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module in
every run, a cost users do not pay). Inputs are generated once into ``benchmarks/out/``:

* an Nsight Compute details CSV, 20,000 launches × 25 metrics (``bench_ncu.make_csv``), against the NERSC
  pandas post-processing recipe (``peers/nersc_ncu.py``): ``roofline analyze --json`` and the text table, with
  two floors beside them for scale: ``import pandas`` alone, and pyarrow's CSV reader on the five columns a
  roofline needs (no pandas, no analysis, no output);
* a PyTorch profiler trace of 1,000,000 events (``bench_kineto.make_trace``), against ``json.load`` of the file
  (and HolisticTraceAnalysis's loader when it is installed);
* a 200,000-kernel inventory (``bench_engine.make_csv``): the JSON, CSV and table outputs against
  ``roofline analyze`` writing nothing but the summary (``--top 1``), i.e. the output layer's own cost;
* a job's folder of ``--ranks`` PyTorch traces (``rank0.json`` …, ``--rank-events`` events each): ``roofline
  analyze`` of the folder with its files parsed one after the other (``ROOFCORE_WORKERS=1``) against the default
  (one worker process per core).

Run: ``python benchmarks/bench_commands.py [--repeat 5] [--only ncu,kineto,inventory,ranks]``; results print and go to
``benchmarks/out/commands.json``. The numbers depend on the machine and its load: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
PY = sys.executable


def timed(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident memory (MB) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read() if proc.stderr else b""
    if status:
        raise SystemExit(f"{' '.join(cmd)} failed ({status}): {err.decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: ru_maxrss in KiB


def compare(label: str, contenders: dict[str, list[str]], peer: str, repeat: int, size: int) -> dict:
    """Run every contender ``repeat`` times, alternating; medians and ratios to ``peer``."""
    walls: dict[str, list[float]] = {k: [] for k in contenders}
    cpus: dict[str, list[float]] = {k: [] for k in contenders}
    rss: dict[str, float] = {k: 0.0 for k in contenders}
    for _ in range(repeat):
        for name, cmd in contenders.items():
            w, c, m = timed(cmd)
            walls[name].append(w)
            cpus[name].append(c)
            rss[name] = max(rss[name], m)
    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    out = {"input": label, "input_mb": round(size / 1e6, 1), "peer": peer, "repeat": repeat,
           "load_average": os.getloadavg()[0], "results": {}}
    for name in contenders:
        out["results"][name] = {"median_s": round(med[name], 3), "ratio_to_peer": round(med[name] / med[peer], 3),
                                "median_cpu_s": round(cpu[name], 3), "cpu_ratio_to_peer": round(cpu[name] / cpu[peer], 3),
                                "peak_rss_mb": round(rss[name], 1), "rss_over_input": round(rss[name] * 1e6 / size, 2)}
    return out


def compile_bytecode() -> None:
    """roofcore's modules compiled to ``__pycache__``, as an installed package has them."""
    import compileall

    compileall.compile_dir(str(HERE.parent / "roofcore"), quiet=1)


#: the least a Python reader of the ncu CSV does: pyarrow's multi-threaded CSV reader, the five columns a roofline
#: needs (launch, kernel, metric, unit, value), no pandas, no analysis, no output
ARROW_READ = ("import pyarrow as pa, pyarrow.csv as c; c.read_csv({path!r}, convert_options=c.ConvertOptions("
              "include_columns=['ID', 'Kernel Name', 'Metric Name', 'Metric Unit', 'Metric Value'], "
              "column_types={{'ID': pa.int64(), 'Metric Value': pa.string()}}))")  # declared: no type inference


def roofline(*args: str) -> list[str]:
    return [PY, "-m", "roofcore", *args]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="ncu,kineto,inventory,ranks")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--rank-events", type=int, default=250_000)
    ap.add_argument("--launches", type=int, default=20_000)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--kernels", type=int, default=200_000)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    compile_bytecode()
    sys.path.insert(0, str(HERE))
    only = set(args.only.split(","))
    report = []
    null = os.devnull

    if "ncu" in only:
        import bench_ncu

        csv = OUT / f"ncu_details_{args.launches}.csv"
        if not csv.exists():
            bench_ncu.make_csv(csv, args.launches)
        report.append(compare("ncu details CSV", {
            "nersc_pipeline": [PY, str(HERE / "peers" / "nersc_ncu.py"), str(csv)],
            "roofline_analyze_json": roofline("analyze", str(csv), "--hardware", "a100-80gb-sxm", "--json", "-o", null),
            "roofline_analyze_table": roofline("analyze", str(csv), "--hardware", "a100-80gb-sxm", "-o", null),
            # floors, for scale: what any Python tool pays before its own work
            "floor_import_pandas": [PY, "-c", "import pandas"],
            "floor_arrow_read": [PY, "-c", ARROW_READ.format(path=str(csv))],
        }, "nersc_pipeline", args.repeat, csv.stat().st_size))

    if "kineto" in only:
        import bench_kineto

        trace = OUT / f"kineto_{args.events}.json"
        if not trace.exists():
            bench_kineto.make_trace(trace, args.events)
        contenders = {
            "json_load": [PY, "-c", f"import json; json.load(open({str(trace)!r}))"],
            "roofline_analyze": roofline("analyze", str(trace), "--hardware", "h100-sxm", "-o", null),
        }
        try:
            import hta  # noqa: F401  (HolisticTraceAnalysis, when installed)

            contenders["hta_load"] = [PY, "-c", "from hta.common.trace_file import read_trace; "
                                      f"read_trace({str(trace)!r})"]
        except ImportError:
            pass
        report.append(compare("PyTorch trace", contenders, "json_load", args.repeat, trace.stat().st_size))

    if "inventory" in only:
        import bench_engine

        inv = OUT / f"inventory_{args.kernels}.csv"
        if not inv.exists():
            bench_engine.make_csv(inv, args.kernels)
        base = ["analyze", str(inv), "--hardware", "h100-sxm"]
        report.append(compare("kernel inventory", {
            "analyze_summary_only": roofline(*base, "--top", "1", "-o", null),
            "json": roofline(*base, "--json", "-o", null),
            "csv": roofline(*base, "--csv", "-o", null),
            "table": roofline(*base, "-o", null),
        }, "analyze_summary_only", args.repeat, inv.stat().st_size))
        r = report[-1]["results"]
        for k in ("json", "csv", "table"):
            r[k]["beyond_analyze_s"] = round(r[k]["median_s"] - r["analyze_summary_only"]["median_s"], 3)
            r[k]["beyond_analyze_cpu_s"] = round(r[k]["median_cpu_s"] - r["analyze_summary_only"]["median_cpu_s"], 3)

    if "ranks" in only:
        import bench_kineto

        folder = OUT / f"ranks_{args.ranks}x{args.rank_events}"
        folder.mkdir(exist_ok=True)
        for r in range(args.ranks):
            if not (folder / f"rank{r}.json").exists():
                bench_kineto.make_trace(folder / f"rank{r}.json", args.rank_events, seed=r)
        size = sum(f.stat().st_size for f in folder.iterdir())
        cmd = roofline("analyze", str(folder), "--hardware", "h100-sxm", "-o", null)
        report.append(compare(f"{args.ranks} rank traces (a folder)", {
            "one_after_the_other": ["env", "ROOFCORE_WORKERS=1", *cmd],
            "in_parallel": cmd,
        }, "one_after_the_other", args.repeat, size))
        report[-1]["cores"] = len(os.sched_getaffinity(0))

    (OUT / "commands.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
