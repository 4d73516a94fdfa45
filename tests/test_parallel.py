"""Many files in one run: a job's per-rank traces as a folder or a list, read in parallel processes, each row with
its file (``source``) and, where the file name or the trace says, its ``rank``."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import roofcore
from roofcore import ingest
from roofcore.cli import main
from roofcore.errors import InputError


def kernel(name: str, ts: float, dur: float, corr: int) -> dict:
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"External id": corr, "device": 0, "stream": 7, "correlation": corr}}


def trace(rank: int | None, kernels: int = 3, **top) -> bytes:
    """A small Kineto trace of ``kernels`` kernels (times differ per rank), with distributedInfo when ``rank``."""
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8,
                                                     "computeMinor": 0}], **top,
           "traceEvents": [kernel(f"k{i}", 100.0 * i, 10.0 + (rank or 0) + i, i + 1) for i in range(kernels)]}
    if rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 16}
    return json.dumps(doc).encode()


@pytest.fixture
def job(tmp_path):
    """A job's folder: four rank traces named rank0, rank1, rank2, rank10 (the trace does not say its rank), a
    README and a hidden file."""
    d = tmp_path / "traces"
    d.mkdir()
    for r in (10, 2, 0, 1):
        (d / f"rank{r}.pt.trace.json").write_bytes(trace(None))
    (d / "README.md").write_text("# the job's traces\n")
    (d / ".DS_Store").write_bytes(b"\x00\x01")
    return d


@pytest.mark.parametrize(("name", "rank"), [
    ("rank3.json", 3), ("trace_rank_03.pt.trace.json", 3), ("job-rank-12.json.gz", 12), ("RANK7.json", 7),
    ("cranky7.json", None), ("rank.json", None), ("worker0.1700000000.pt.trace.json", None),
    ("logs/rank4/trace.json", None),  # only the file's own name counts
])
def test_rank_from_the_file_name(name, rank):
    assert ingest.rank_of(name) == rank


def test_a_folder_is_its_files_in_rank_order_with_source_and_rank(job):
    w = roofcore.read_many([job])
    f = w.frame
    assert list(dict.fromkeys(f["source"])) == [str(job / f"rank{r}.pt.trace.json") for r in (0, 1, 2, 10)]
    assert f["rank"].tolist() == [r for r in (0, 1, 2, 10) for _ in range(3)]
    assert f["rank"].dtype == np.int64 and len(w.sources) == 4
    assert w.warnings[-1] == "Left out 1 file(s) of the folder that are not profiles: " \
                             f"{job / 'README.md'} (content none of them recognises)."


def test_the_trace_says_its_rank_where_the_file_name_does_not(tmp_path):
    (tmp_path / "a.json").write_bytes(trace(5))
    (tmp_path / "b.json").write_bytes(trace(None))
    w = roofcore.read_many([tmp_path / "a.json", tmp_path / "b.json"])
    assert w.frame["rank"].iloc[:3].tolist() == [5, 5, 5] and w.frame["rank"].iloc[3:].isna().all()
    one = roofcore.read_many([tmp_path / "a.json"])
    assert one.meta["rank"] == "5" and one.meta["world_size"] == "16" and set(one.frame["rank"]) == {5}


def test_parallel_processes_read_the_same_workload_as_one_after_the_other(job, monkeypatch):
    monkeypatch.setattr(ingest.reading, "PARALLEL_MIN_BYTES", 0)  # small files: in processes all the same
    alone = roofcore.read_many([job], workers=1)
    spread = roofcore.read_many([job], workers=2)
    pd.testing.assert_frame_equal(alone.frame, spread.frame)
    assert (alone.sources, alone.warnings, alone.device, alone.meta) == \
        (spread.sources, spread.warnings, spread.device, spread.meta)


def test_fresh_workers_do_not_run_the_parents_main_script(job, monkeypatch, tmp_path):
    """Under Streamlit, ``__main__`` is the app's page script and the server runs other threads, so the workers
    start fresh (forkserver/spawn), and a fresh worker runs a main script given by path again: here one that
    fails, as the app's does outside a session. The pool must still read the files."""
    import sys
    import threading
    import types

    script = tmp_path / "page.py"
    script.write_text("raise SystemExit('a worker ran the main script')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(ingest.reading, "PARALLEL_MIN_BYTES", 0)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)  # another thread: no fork
    other.start()
    try:
        w = roofcore.read_many([job], workers=2)
    finally:
        stop.set()
        other.join()
    assert len(w) == 12 and sys.modules["__main__"] is main


@pytest.mark.parametrize("pool", [ThreadPoolExecutor, ProcessPoolExecutor])
def test_any_executor_maps_the_per_file_read(job, pool):
    """A Dask cluster's ``client.get_executor()`` is such an executor: ``read_file`` is what it maps."""
    with pool(2) as ex:
        w = roofcore.read_many([job], executor=ex)
    assert len(w) == 12 and sorted(set(w.frame["rank"])) == [0, 1, 2, 10]
    with pool(2) as ex:
        parts = list(ex.map(ingest.read_file, sorted(job.glob("rank*.json"))))
    assert sorted(int(p.meta["rank"]) for p in parts) == [0, 1, 2, 10]
    assert len(ingest.combine(parts)) == 12


def test_a_bad_file_read_in_a_worker_is_the_usual_message(job, monkeypatch):
    monkeypatch.setattr(ingest.reading, "PARALLEL_MIN_BYTES", 0)
    (job / "rank3.pt.trace.json").write_bytes(b'{"schemaVersion": 1, "traceEvents": [')  # cut short
    with pytest.raises(InputError) as e:
        roofcore.read_many([job], workers=2)
    assert str(e.value).startswith(f"{job / 'rank3.pt.trace.json'}: ")
    errors = []
    w = roofcore.read_many([job], workers=2, on_error=lambda name, err: errors.append(name))
    assert errors == [str(job / "rank3.pt.trace.json")] and len(w) == 12


def test_a_named_file_no_format_reads_is_still_refused(job):
    with pytest.raises(InputError, match="content none of them recognises"):
        roofcore.read_many([job / "rank0.pt.trace.json", job / "README.md"])


def test_an_empty_folder_says_so(tmp_path):
    with pytest.raises(InputError, match="the folder holds no files to read"):
        roofcore.read_many([tmp_path])


def test_the_cli_analyses_a_folder(job, capsys):
    assert main(["analyze", str(job), "--hardware", "a100-80gb-sxm", "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert "12 kernels from" in out and "Left out 1 file(s) of the folder" in out
