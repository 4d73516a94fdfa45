"""PyTorch traces (Kineto JSON): ``roofline analyze FILE --json`` as a whole process against ``json.load`` and the
decoding floor, on two trace shapes, plain and gzipped (issue #24, acceptance 1).

Shapes (:mod:`trace_shapes`, about ``--events`` events each): ``generated`` (bench_kineto's synthetic trace: ops
with shapes, two threads) and ``alexnet`` (a real trace's events repeated, ids and times shifted). Per shape and
per form (``.json``, ``.json.gz``) it runs, alternated ``--repeat`` times, each a separate process:

* ``roofline analyze FILE --json > /dev/null`` (the acceptance: at most 0.4× ``json.load``, peak memory at most
  2.5× the file);
* the peer: ``json.load`` of the file (``gzip.open`` for ``.gz``), nothing else;
* the floor: ``msgspec.json.decode`` of the file into typed structs of the fields a reader needs (``args`` kept
  raw), nothing else (``.gz``: decompressed whole first);
* ``import numpy, pandas`` alone, for scale (what any pandas-based reader pays before reading).

``--rocprofv3`` adds a 44,000-dispatch rocprofv3 ``--output-format json`` file (:mod:`rocprofv3_json`; its floor:
``msgspec.json.decode`` into Python objects).

Medians of wall and CPU time (user + system of the child), ratios to ``json.load``, peak resident memory of each
child over the (uncompressed) file size. Run: ``python benchmarks/bench_traces.py [--events N] [--repeat 5]
[--shapes generated,alexnet] [--no-gz]``; results print and go to benchmarks/out/traces.json. Numbers depend on the
machine and its load: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from pathlib import Path

from bench_commands import PY, compare, compile_bytecode
from trace_shapes import SHAPES

OUT = Path(__file__).parent / "out"

FLOOR = """
import gzip, msgspec
class E(msgspec.Struct, gc=False):
    ph: object = None
    cat: object = None
    name: object = None
    ts: object = None
    dur: object = None
    pid: object = None
    tid: object = None
    id: object = None
    args: msgspec.Raw = None
class T(msgspec.Struct):
    traceEvents: list[E]
path = {path!r}
data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
msgspec.json.decode(data, type=T)
"""
PEER = "import gzip, json; p = {path!r}; json.load(gzip.open(p) if p.endswith('.gz') else open(p))"


def contenders(path: Path) -> dict[str, list[str]]:
    return {
        "roofline analyze --json": [PY, "-m", "roofcore", "analyze", str(path), "--json"],
        "json.load": [PY, "-c", PEER.format(path=str(path))],
        "floor: msgspec typed decode": [PY, "-c", FLOOR.format(path=str(path))],
        "import numpy, pandas": [PY, "-c", "import numpy, pandas"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shapes", default="generated,alexnet")
    ap.add_argument("--no-gz", action="store_true", help="plain files only")
    ap.add_argument("--keep", action="store_true", help="keep the generated traces in benchmarks/out")
    ap.add_argument("--rocprofv3", action="store_true", help="also a 44,000-dispatch rocprofv3 JSON")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    compile_bytecode()
    report = []
    for shape in args.shapes.split(","):
        path = OUT / f"trace_{shape}_{args.events}.json"
        if not path.exists():
            n = SHAPES[shape](path, args.events)
            print(f"{path.name}: {n:,} events, {path.stat().st_size / 1e6:.1f} MB")
        size = path.stat().st_size
        forms = [path]
        if not args.no_gz:
            gz = path.with_suffix(".json.gz")
            if not gz.exists():
                with path.open("rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
                    shutil.copyfileobj(src, dst, 1 << 22)
            forms.append(gz)
        for f in forms:
            r = compare(f"{shape} {f.name}", contenders(f), "json.load", args.repeat, size)
            r["file_mb"] = round(f.stat().st_size / 1e6, 1)
            report.append(r)
            _print(r)
        if not args.keep:
            for f in forms:
                f.unlink()
    if args.rocprofv3:
        report.append(_rocprofv3(args.repeat))
    (OUT / "traces.json").write_text(json.dumps(report, indent=1))


def _rocprofv3(repeat: int) -> dict:
    """A 44,000-dispatch rocprofv3 JSON (benchmarks/rocprofv3_json.py): analyze against json.load and the floor
    (msgspec.json.decode of the whole file into Python objects)."""
    from rocprofv3_json import make_json

    path = OUT / "rocprofv3_44000.json"
    size = make_json(path, 44_000)
    runs = contenders(path)
    runs["floor: msgspec typed decode"] = [PY, "-c", f"import msgspec; msgspec.json.decode(open({str(path)!r}, 'rb')"
                                                     ".read())"]
    r = compare(f"rocprofv3 {path.name}", runs, "json.load", repeat, size)
    r["file_mb"] = round(size / 1e6, 1)
    _print(r)
    path.unlink()
    return r


def _print(r: dict) -> None:
    print(f"\n{r['input']} ({r['file_mb']} MB on disk, {r['input_mb']} MB of JSON; load average "
          f"{r['load_average']:.1f}; medians of {r['repeat']})")
    for name, v in r["results"].items():
        print(f"  {name:30s} wall {v['median_s']:6.2f} s ({v['ratio_to_peer']:.2f}×)  cpu {v['median_cpu_s']:6.2f} s "
              f"({v['cpu_ratio_to_peer']:.2f}×)  peak {v['peak_rss_mb']:6.0f} MB ({v['rss_over_input']:.2f}× the file)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
