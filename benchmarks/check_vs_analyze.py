"""``roofline check`` against ``roofline analyze`` on the same million-kernel inventory (issue 23, point 13: the
gate takes at most 1.5× the analysis of the same file).

Two inventories of ``--kernels`` kernels, every name distinct (so the gate matches a million pairs, the worst
case for its per-kernel work): the baseline, and the current run, a copy whose times moved a little (most
within the limit, ``--regressed`` of them past it, so the gate fails and prints those). Timed as whole
processes, as users run them (``python -m roofcore …``), alternately, ``--repeat`` times:

* ``analyze``: ``roofline analyze CURRENT --hardware h100-sxm`` (the text table);
* ``check``: ``roofline check CURRENT --baseline BASELINE --hardware h100-sxm`` (exit 1: some kernels regressed).

The current run lists its kernels in the baseline's order, as a rerun of the same program does; ``--shuffled``
writes them in another order, so the gate looks every name up (its slower path).

The medians of wall and CPU time (user + system of the child) and their ratio check / analyze are printed and
written to ``benchmarks/out/check_vs_analyze_*.json``. The gate reads two files where the analysis reads one, and
its ratio counts that. ``--profile`` runs the gate once in this process under cProfile instead and prints the
top functions by cumulative time.

Run: ``python benchmarks/check_vs_analyze.py [--kernels 1000000] [--repeat 3] [--shuffled] [--profile]``. The
numbers depend on the machine and its load: compare the ratio from one run.
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

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ROOT = HERE.parent


def make_pair(base: Path, cur: Path, kernels: int, regressed: int, seed: int = 0, shuffled: bool = False) -> None:
    """The baseline and the current inventory (every kernel name distinct; see the module's docstring): the
    current run lists its kernels in the baseline's order, as a rerun of the program does, or ``shuffled``."""
    rng = np.random.default_rng(seed)
    flops = rng.lognormal(20, 3, kernels).round()
    frame = pd.DataFrame({
        "name": [f"kernel_{i}<float, {i % 7}>" for i in range(kernels)],
        "count": rng.integers(1, 100, kernels),
        "flops": flops,
        "bytes": (flops / rng.lognormal(2, 2, kernels)).round() + 1,
        "time_us": rng.lognormal(3, 2, kernels).round(3) + 0.001,
        "precision": rng.choice(["bf16", "fp32", "fp16", "int8"], kernels),
        "unit": rng.choice(["matrix", "vector"], kernels),
    })
    frame.to_csv(base, index=False)
    moved = frame["time_us"] * rng.uniform(0.95, 1.05, kernels)
    worse = rng.choice(kernels, size=min(regressed, kernels), replace=False)
    moved.iloc[worse] = frame["time_us"].iloc[worse] * 1.5
    frame = frame.assign(time_us=moved.round(3) + 0.001)
    if shuffled:
        frame = frame.iloc[rng.permutation(kernels)]
    frame.to_csv(cur, index=False)


def timed(cmd: list[str], expect: int) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process, which must exit with ``expect``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != expect:
        raise SystemExit(f"{' '.join(cmd)} exited {os.waitstatus_to_exitcode(status)}, not {expect}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def profile(argv: list[str]) -> None:
    import cProfile
    import pstats

    sys.path.insert(0, str(ROOT))
    from roofcore.cli import main as roofline

    prof = cProfile.Profile()
    prof.runcall(roofline, [*argv, "-o", os.devnull])
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=1_000_000)
    ap.add_argument("--regressed", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shuffled", action="store_true", help="the current run's kernels in another order (the "
                    "gate then looks every name up; a rerun lists them in the same order)")
    ap.add_argument("--profile", action="store_true", help="cProfile one check in this process instead")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    tag = f"{args.kernels}{'_shuffled' if args.shuffled else ''}"
    base, cur = OUT / f"check_base_{tag}.csv", OUT / f"check_cur_{tag}.csv"
    if not base.exists() or not cur.exists():
        make_pair(base, cur, args.kernels, args.regressed, shuffled=args.shuffled)
    check = ["check", str(cur), "--baseline", str(base), "--hardware", "h100-sxm"]
    if args.profile:
        profile(check)
        return
    py = [sys.executable, "-m", "roofcore"]
    contenders = {"analyze": ([*py, "analyze", str(cur), "--hardware", "h100-sxm"], 0), "check": ([*py, *check], 1)}
    walls: dict[str, list[float]] = {k: [] for k in contenders}
    cpus: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(args.repeat):
        for name, (cmd, expect) in contenders.items():
            w, c = timed(cmd, expect)
            walls[name].append(w)
            cpus[name].append(c)
    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    report = {"kernels": args.kernels, "order": "shuffled" if args.shuffled else "same", "input_mb": round(cur.stat().st_size / 1e6, 1), "repeat": args.repeat,
              "load_average": os.getloadavg()[0],
              "median_s": {k: round(v, 3) for k, v in med.items()},
              "median_cpu_s": {k: round(v, 3) for k, v in cpu.items()},
              "check_over_analyze": round(med["check"] / med["analyze"], 2),
              "check_over_analyze_cpu": round(cpu["check"] / cpu["analyze"], 2)}
    (OUT / f"check_vs_analyze_{tag}.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
