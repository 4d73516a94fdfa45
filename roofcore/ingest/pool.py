"""Worker processes for reading several large files at once (:func:`.reading.read_many` maps
:func:`.reading.read_file` over them): how they start, and a ``__main__`` they cannot run again."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Executor


def process_pool(n: int) -> Executor:
    """Worker processes: forked where this process runs no other thread (they start at once, with everything
    imported), else started fresh (a server's threads may hold locks a fork would copy)."""
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    method = "fork" if "fork" in methods and threading.active_count() == 1 else \
        "forkserver" if "forkserver" in methods else "spawn"
    return ProcessPoolExecutor(n, mp_context=multiprocessing.get_context(method))


@contextlib.contextmanager
def plain_main() -> Iterator[None]:
    """While worker processes start: a ``__main__`` without a file. A worker started fresh (spawn, forkserver)
    runs its parent's main script again unless that was imported by module name; under Streamlit the main
    module is the app's page script, which must not run in a worker (it fails there, and the pool breaks), and a
    user's script without a ``__name__`` guard would run once per worker. The workers only run
    :func:`read_file`, imported by its module's name."""
    import sys
    import types

    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) or not getattr(main, "__file__", None):
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main
