"""Large PyTorch traces (Kineto JSON) of two shapes, for the trace benchmarks (issue #24).

* ``generated``: :func:`bench_kineto.make_trace`'s synthetic trace (cpu_ops with shapes, nested linear → t +
  addmm, launches, kernels, flow events, two threads);
* ``alexnet``: the events of a real trace (../shared/samples/pytorch_kineto_a100_alexnet_trace.json: user
  annotations, cpu_ops without shapes, runtime calls, syncs, kernels, copies, flow events) repeated until the
  trace holds about ``events`` events. Each copy is shifted in time by the sample's span and its ids
  (``External id``, ``correlation``, flow ``id``) by a fixed step, so every launch still links to its kernel and
  op; the metadata events (``ph`` ``M`` / ``i``, the profiler's span) are written once.

Run ``python benchmarks/trace_shapes.py alexnet OUT.json [--events N]`` to write one.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench_kineto import make_trace

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
ALEXNET = SAMPLES / "pytorch_kineto_a100_alexnet_trace.json"
_ONCE = {"M", "i"}


def _shift(e: dict, rep: int, dt: int, did: int) -> dict:
    e = dict(e)
    if isinstance(e.get("ts"), (int, float)):
        e["ts"] += rep * dt
    if isinstance(e.get("id"), int):
        e["id"] += rep * did
    a = e.get("args")
    if isinstance(a, dict):
        a = dict(a)
        for key in ("External id", "correlation"):
            if isinstance(a.get(key), int):
                a[key] += rep * did
        e["args"] = a
    return e


def make_repeated(path: Path, events: int, sample: Path = ALEXNET) -> int:
    """Write the sample's events repeated up to ``events`` events (see the module docstring); returns the count."""
    doc = json.loads(sample.read_text())
    evs = doc.pop("traceEvents")
    once = [e for e in evs if e.get("ph") in _ONCE or e.get("cat") == "Trace"]
    body = [e for e in evs if not (e.get("ph") in _ONCE or e.get("cat") == "Trace")]
    times = [e["ts"] + (e.get("dur") or 0) for e in body if isinstance(e.get("ts"), (int, float))]
    dt = int(max(times) - min(times)) + 1000
    ids = [v for e in body for v in (e.get("id"), *(e.get("args") or {}).values()) if type(v) is int]
    did = 10 ** len(str(max(ids)))
    tail = doc.pop("traceName", None)
    n = 0
    with path.open("w") as f:
        head = json.dumps(doc, indent=2)[:-2]
        f.write(head + ',\n  "traceEvents": [\n')
        first = True
        for e in once:
            f.write(("  " if first else ",\n  ") + json.dumps(e))
            first = False
            n += 1
        rep = 0
        while n < events:
            for e in body:
                f.write(",\n  " + json.dumps(_shift(e, rep, dt, did)))
                n += 1
                if n >= events:
                    break
            rep += 1
        f.write("\n  ]" + (f',\n  "traceName": {json.dumps(tail)}' if tail else "") + "\n}\n")
    return n


SHAPES = {"generated": make_trace, "alexnet": make_repeated}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("out", type=Path)
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args()
    n = SHAPES[args.shape](args.out, args.events)
    print(f"{args.out}: {n:,} events, {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
