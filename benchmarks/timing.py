"""Timing shared by the benchmark scripts (run them from the repository root: python benchmarks/NAME.py)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 3, clock: Callable[[], float] = time.perf_counter) -> float:
    """Best time of ``repeat`` runs, in seconds (the first absorbs file-cache and import costs): wall time, or
    ``clock=time.process_time`` for this process's CPU time (less sensitive to other programs)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)
