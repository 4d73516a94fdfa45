"""rocprofv3's rocpd database against its JSON export of the same run, as whole processes in one run.

The run: ``rocprofv3_json.make_json`` (44,000 dispatches by default, with four counters each and a copy per 500),
written once as rocprofv3's JSON and once as its rocpd database (``tests/rocpd_build.py``, the same records).
Contenders, alternated ``--repeat`` times (``bench_commands.compare``): ``roofline analyze --json`` of the database,
the same of the JSON (the peer: what a user ran before the database was read), and two floors: the stdlib's
``sqlite3`` fetching the rows a roofline needs (dispatch, kernel name, agent, start, end; each counter value with
its event and counter id) with no analysis, and ``import pandas`` alone (every ``analyze`` pays it).

Run: ``python benchmarks/bench_rocpd.py [--dispatches 44000] [--repeat 5]``; results print and go to
``benchmarks/out/rocpd.json``. Compare ratios from one run: the machine's load moves the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
PY = sys.executable

#: the least a Python reader does: the database copied into memory, the rows a roofline needs fetched, nothing more
SQLITE_FLOOR = """import sqlite3, sys
con = sqlite3.connect(":memory:"); con.deserialize(open(sys.argv[1], "rb").read())
s = [r[0] for r in con.execute("select name from sqlite_master where name like 'rocpd_kernel_dispatch_%'")][0][21:]
con.execute(f"select K.dispatch_id, S.display_name, K.agent_id, K.start, K.end from rocpd_kernel_dispatch{s} K "
            f"left join rocpd_info_kernel_symbol{s} S on S.id = K.kernel_id").fetchall()
con.execute(f"select id, name from rocpd_info_pmc{s}").fetchall()
con.execute(f"select event_id, pmc_id, value from rocpd_pmc_event{s}").fetchall()
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dispatches", type=int, default=44_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--make", action="store_true", help=argparse.SUPPRESS)  # write the inputs, in a child process
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]
    js, db = OUT / f"rocprofv3_{args.dispatches}.json", OUT / f"rocprofv3_{args.dispatches}.db"
    if args.make:
        _make(js, db, args.dispatches)
        return
    # a child's peak memory starts from its parent's: the inputs are written by another process
    subprocess.run([PY, __file__, "--make", "--dispatches", str(args.dispatches)], check=True)
    import bench_commands

    bench_commands.compile_bytecode()
    null = os.devnull
    result = bench_commands.compare(f"rocprofv3 run, {args.dispatches:,} dispatches", {
        "json_analyze": bench_commands.roofline("analyze", str(js), "--json", "-o", null),
        "db_analyze": bench_commands.roofline("analyze", str(db), "--json", "-o", null),
        "floor_sqlite3_fetch": [PY, "-c", SQLITE_FLOOR, str(db)],
        "floor_import_pandas": [PY, "-c", "import numpy, pandas"],
    }, "json_analyze", args.repeat, db.stat().st_size)
    result["json_mb"] = round(js.stat().st_size / 1e6, 1)
    print(json.dumps(result, indent=1))
    (OUT / "rocpd.json").write_text(json.dumps(result, indent=1))


def _make(js: Path, db: Path, dispatches: int) -> None:
    import rocprofv3_json
    from rocpd_build import build, from_json

    if not js.exists():
        rocprofv3_json.make_json(js, dispatches, counters=True)
    if not db.exists():
        runs, copies = from_json(json.loads(js.read_bytes()))
        db.write_bytes(build(runs, copies))


if __name__ == "__main__":
    main()
