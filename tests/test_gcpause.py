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
