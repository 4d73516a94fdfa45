"""The cyclic garbage collector paused while a reader builds a workload's objects.

A read makes hundreds of thousands of containers (rows, tuples, dicts) that live until its workload is built. Each
pass of the collector over its older generations walks all of them again, and in a long-lived process (the app's
server) every object of the libraries it has loaded as well. The readers make no reference cycles, so the
collector is paused for a read: a 44,000-dispatch rocprofv3 JSON read and analysed in a process with the app's
libraries loaded took 0.77 s of CPU with it running and 0.57 s paused. It is set back as it was when the last of
the reads running at once (sessions of the app, in threads) ends; garbage any thread made meanwhile is collected
by its next pass.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator


class _Pause:
    """How many reads hold the pause, and whether the collector ran before the first of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.restore = False


_PAUSE = _Pause()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Within the block the cyclic collector does not run (reference counting frees as always); nested and
    concurrent blocks share one pause, which ends with the last of them."""
    p = _PAUSE
    with p.lock:
        if p.depth == 0:
            p.restore = gc.isenabled()
            gc.disable()
        p.depth += 1
    try:
        yield
    finally:
        with p.lock:
            p.depth -= 1
            if p.depth == 0 and p.restore:
                gc.enable()


__all__ = ["paused"]
