"""Timing marks for finding where a run's time goes: with ROOFCORE_TRACE=1 in the server's environment, each
:func:`mark` writes one line to the server's log (wall-clock seconds, so a browser-side timeline can be laid
beside it, and the server's CPU seconds so far; see benchmarks/trace_upload.py), and so does each garbage
collection of more than 2 ms. Without it, a mark costs one dictionary lookup."""

from __future__ import annotations

import gc
import sys
import time

from roofcore import settings

ON = settings.TRACE.value()


def mark(label: str) -> None:
    """``ROOFCORE_TRACE <wall seconds> <process CPU seconds> <label>`` on stderr when tracing is on."""
    if ON:
        print(f"ROOFCORE_TRACE {time.time():.6f} {time.process_time():.6f} {label}", file=sys.stderr, flush=True)


def _gc_timer():
    """A gc callback that marks each collection of more than 2 ms (generation, seconds, objects collected)."""
    started = {}

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started["t"] = time.perf_counter()
        elif "t" in started:
            took = time.perf_counter() - started.pop("t")
            if took > 0.002:
                mark(f"gc gen {info['generation']} took {took * 1000:.0f} ms ({info['collected']} collected)")

    return on_gc


if ON:
    gc.callbacks.append(_gc_timer())


__all__ = ["ON", "mark"]
