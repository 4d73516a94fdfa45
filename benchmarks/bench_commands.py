"""What users run, timed as whole processes against the peer tools on the same input, in the same run.

Each contender is a separate process (``python -m roofcore …``, exactly as the ``roofline`` command runs it,
and the peer as a script), run alternately ``--repeat`` times; the median wall time and the peak resident memory
(``ru_maxrss`` of the child) are reported, with the ratio to the peer. Inputs are generated once into
``benchmarks/out/``:

* an Nsight Compute details CSV, 20,000 launches × 25 metrics (``bench_ncu.make_csv``), against the NERSC
  pandas post-processing recipe (``peers/nersc_ncu.py``): ``roofline analyze --json`` and the text table;
* a PyTorch profiler trace of 1,000,000 events (``bench_kineto.make_trace``), against ``json.load`` of the file
  (and HolisticTraceAnalysis's loader when it is installed);
* a 200,000-kernel inventory (``bench_engine.make_csv``): the JSON, CSV and table outputs against
  ``roofline analyze`` writing nothing but the summary (``--top 1``), i.e. the output layer's own cost.

Run: ``python benchmarks/bench_commands.py [--repeat 5] [--only ncu,kineto,inventory]``; results print and go to
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


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB, via GNU time; 0 where it is absent) of one child process."""
    gnu_time = Path("/usr/bin/time")
    wrap = [str(gnu_time), "-f", "%M"] if gnu_time.exists() else []
    t0 = time.perf_counter()
    proc = subprocess.run([*wrap, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return wall, (int(proc.stderr.decode().strip().splitlines()[-1]) / 1024 if wrap else 0.0)


def compare(label: str, contenders: dict[str, list[str]], peer: str, repeat: int, size: int) -> dict:
    """Run every contender ``repeat`` times, alternating; medians and ratios to ``peer``."""
    walls: dict[str, list[float]] = {k: [] for k in contenders}
    rss: dict[str, float] = {k: 0.0 for k in contenders}
    for _ in range(repeat):
        for name, cmd in contenders.items():
            w, m = timed(cmd)
            walls[name].append(w)
            rss[name] = max(rss[name], m)
    med = {k: statistics.median(v) for k, v in walls.items()}
    out = {"input": label, "input_mb": round(size / 1e6, 1), "peer": peer, "results": {}}
    for name in contenders:
        out["results"][name] = {"median_s": round(med[name], 3), "ratio_to_peer": round(med[name] / med[peer], 3),
                                "peak_rss_mb": round(rss[name], 1), "rss_over_input": round(rss[name] * 1e6 / size, 2)}
    return out


def roofline(*args: str) -> list[str]:
    return [PY, "-m", "roofcore", *args]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="ncu,kineto,inventory")
    ap.add_argument("--launches", type=int, default=20_000)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--kernels", type=int, default=200_000)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
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

    (OUT / "commands.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
