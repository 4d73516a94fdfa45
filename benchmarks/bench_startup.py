"""How long the ``roofline`` command takes to start: whole processes, against the floor of Python itself.

Issue 24 point 3: ``roofline --help``, ``roofline formats`` and ``roofline hardware list`` at most 0.25 s each,
``roofline analyze`` of a small input (under 100 kB) at most 0.5 s. Each command runs as a separate process
(``python -m roofcore …``, as the ``roofline`` script runs it), alternated with the floors ``python -c pass``
and ``python -c "import argparse"`` ``--repeat`` times; the median wall time, the median CPU time (user +
system of the child: on a shared machine it moves less than the wall time) and the ratio to each floor are
printed against the target. roofcore's bytecode is compiled first, as ``pip install`` does.

The small inputs: the bundled example ``transformer_block.yaml`` (an inventory: catalog, analysis, no profiler
reader) and, where ../shared/samples is present, a real Nsight Compute details export of 11 kB.

Run: ``python benchmarks/bench_startup.py [--repeat 11] [--baseline DIR]``; results also go to
``benchmarks/out/startup.json``. ``--baseline DIR``: a checkout of an earlier commit (``git archive REV | tar -x
-C DIR``), whose commands run alternated with this tree's (run in DIR: ``python -m roofcore`` imports the
package of the folder it runs in), for before/after in one run.
Which modules a command imports is checked by tests/test_startup.py (behaviour, not time).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import subprocess  # noqa: E402
import time  # noqa: E402

from bench_commands import OUT, PY, compile_bytecode, roofline  # noqa: E402

NCU_SAMPLE = ROOT.parent / "shared" / "samples" / "ncu_details_a100_interpolate_sgemm.csv"
EXAMPLE = ROOT / "examples" / "transformer_block.yaml"

def timed(cmd: list[str], cwd: Path = ROOT) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one child process, run in ``cwd`` (``python -m`` imports
    the package from there first)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read() if proc.stderr else b""
    if status:
        raise SystemExit(f"{' '.join(cmd)} failed ({status}): {err.decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def contenders() -> dict[str, tuple[list[str], float | None]]:
    """label -> (command, target in seconds, or None for a floor)"""
    null = os.devnull
    out: dict[str, tuple[list[str], float | None]] = {
        "floor: python -c pass": ([PY, "-c", "pass"], None),
        "floor: python -c 'import argparse'": ([PY, "-c", "import argparse"], None),
        # what `analyze` cannot avoid while its tables are pandas frames (pandas 3 imports pyarrow when installed)
        "floor: python -c 'import pandas'": ([PY, "-c", "import pandas"], None),
        "roofline --help": (roofline("--help"), 0.25),
        "roofline formats": (roofline("formats"), 0.25),
        "roofline hardware list": (roofline("hardware", "list"), 0.25),
        f"roofline analyze {EXAMPLE.name}": (roofline("analyze", str(EXAMPLE), "--hardware", "h100-sxm",
                                                      "-o", null), 0.5),
    }
    if NCU_SAMPLE.is_file():
        out[f"roofline analyze {NCU_SAMPLE.name}"] = (roofline("analyze", str(NCU_SAMPLE), "--hardware",
                                                                "a100-80gb-sxm", "-o", null), 0.5)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--baseline", metavar="DIR", help="an earlier checkout to time beside this tree")
    args = ap.parse_args()
    compile_bytecode()
    runs: dict[str, tuple[list[str], float | None, Path]] = {}
    for name, (cmd, target) in contenders().items():
        if args.baseline and name.startswith("roofline"):
            import compileall

            compileall.compile_dir(str(Path(args.baseline) / "roofcore"), quiet=1)
            runs[f"before: {name}"] = (cmd, None, Path(args.baseline).resolve())
        runs[name] = (cmd, target, ROOT)
    for cmd, _, cwd in runs.values():  # warm the file cache (and fail early on a broken command)
        timed(cmd, cwd)
    walls: dict[str, list[float]] = {k: [] for k in runs}
    cpus: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(args.repeat):
        for name, (cmd, _, cwd) in runs.items():
            w, c = timed(cmd, cwd)
            walls[name].append(w)
            cpus[name].append(c)
    floor = statistics.median(walls["floor: python -c pass"])
    rows = []
    print(f"median of {args.repeat} alternated runs, load average {os.getloadavg()[0]:.2f}, {PY}")
    print(f"{'command':58} {'wall s':>7} {'cpu s':>6} {'-floor':>7} {'target':>7}  verdict")
    for name, (_, target, _cwd) in runs.items():
        w, c = statistics.median(walls[name]), statistics.median(cpus[name])
        verdict = "" if target is None else ("ok" if w <= target else "OVER")
        print(f"{name:58} {w:7.3f} {c:6.3f} {w - floor:7.3f} {target or '':>7}  {verdict}")
        rows.append({"command": name, "median_s": round(w, 4), "median_cpu_s": round(c, 4),
                     "over_floor_s": round(w - floor, 4), "target_s": target, "ok": None if target is None else w <= target})
    OUT.mkdir(exist_ok=True)
    (OUT / "startup.json").write_text(json.dumps({"repeat": args.repeat, "load_average": os.getloadavg()[0],
                                                  "results": rows}, indent=1))


if __name__ == "__main__":
    main()
