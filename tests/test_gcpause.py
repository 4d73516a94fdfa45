"""The cyclic collector is paused while a read runs, shared by nested and concurrent reads, and set back as it was
(roofcore.gcpause)."""

from __future__ import annotations

import gc
import threading

import pytest

import roofcore
from roofcore import gcpause, limits


def test_a_read_runs_with_the_collector_paused_and_sets_it_back(monkeypatch):
    seen = []
    tick = limits.tick

    def spy() -> None:  # called at the steps of every read
        seen.append(gc.isenabled())
        tick()

    monkeypatch.setattr(limits, "tick", spy)
    trace = (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, '
             b'"args": {"correlation": 1}}]}')
    assert gc.isenabled()
    w = roofcore.read(trace, name="t.json")
    assert len(w) == 1 and seen and not any(seen) and gc.isenabled()
    seen.clear()
    roofcore.read_many([(trace, "a.json"), (trace, "b.json")])
    assert seen and not any(seen) and gc.isenabled()


def test_a_failed_read_sets_it_back_too():
    assert gc.isenabled()
    with pytest.raises(roofcore.RoofcoreError):
        roofcore.read(b"\x89PNG\r\n\x1a\n", name="x.csv")
    assert gc.isenabled()


def test_nested_and_concurrent_pauses_end_with_the_last():
    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with gcpause.paused():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    with gcpause.paused():
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
        t.start()
        inside.wait(10)
    assert not gc.isenabled()  # the other thread's read still runs
    release.set()
    t.join(10)
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_host_stays_off():
    gc.disable()
    try:
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_table_is_built_with_the_collector_paused(monkeypatch):
    """``Analysis.table()`` makes a list of flags per row: built paused, then set back."""
    import importlib

    from roofhelpers import make_hw

    analyze_mod = importlib.import_module("roofcore.analyze")  # the package's attribute is the function

    seen = []
    flag_lists = analyze_mod.flag_lists

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return flag_lists(*args, **kwargs)

    monkeypatch.setattr(analyze_mod, "flag_lists", spy)
    w = roofcore.read(b"name,flops,bytes,time_s\nk1,1e9,1e6,0.001\nk2,1e6,1e9,0.002\n", name="inv.csv")
    table = roofcore.analyze(w, make_hw()).table()
    assert len(table) == 2 and seen == [False] and gc.isenabled()
