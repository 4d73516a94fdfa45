"""Nsight Systems' SQLite export: the same launches as the cuda_gpu_trace CSV of the same report (joined with ncu
counters the same way), each launch's NVTX ranges from the thread that launched it, both schema layouts, and what
cannot be read said on one line.

The databases are written by tests/nsys_build.py from our cuda_gpu_trace fixtures (tests/data/join, tests/data/nsys)
and hand-placed NVTX ranges; the expected values come from the CSV reader on the same rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from nsys_build import Launch, Range, build, from_gpu_trace
from roofhelpers import col, make_hw

import roofcore
from roofcore import InputError, ingest
from roofcore.analyze import analyze
from roofcore.hierarchy import SEP, group

DATA = Path(__file__).parent / "data"
HW = make_hw()


@pytest.mark.parametrize("layout", ["current", "old"])
def test_the_launches_read_as_the_gpu_trace_csv_and_join_ncu_counters_alike(layout, tmp_path):
    """The join fixture's cuda_gpu_trace (an RTX 5090 run: five launches, two copies, a name with unquoted commas)
    as a database: the same names, times, device and warnings; read with the ncu export of some launches, the same
    joined FLOPs, bytes and headline."""
    trace = DATA / "join" / "cuda_gpu_trace.csv"
    launches, copies, gpus = from_gpu_trace(trace)
    db = tmp_path / "report1.sqlite"
    db.write_bytes(build(launches, copies=copies, gpus=gpus, layout=layout))
    assert ingest.detect(db.read_bytes(), db.name).name == "nsys-sqlite"
    s, c = roofcore.read(db), roofcore.read(trace)
    assert s.formats == ("nsys-sqlite",) and s.device == c.device == "NVIDIA GeForce RTX 5090"
    for name in ("name", "time_s", "count"):
        assert col(s, name) == col(c, name), name
    assert col(s, "row") == [str(k.corr) for k in sorted(launches, key=lambda k: k.start)]
    assert s.warnings == c.warnings and s.meta["time_only"] == "true"
    joined = roofcore.read_many([db, DATA / "join" / "ncu_details.csv"])
    reference = roofcore.read_many([trace, DATA / "join" / "ncu_details.csv"])
    for name in ("name", "time_s", "flops", "bytes_hbm", "count"):
        assert col(joined, name) == col(reference, name), name


NVTX = [Range(900, 1700, ":step"), Range(910, 1210, ":forward"), Range(1250, 1550, ":backward"),
        Range(950, None, "a mark", kind=34), Range(880, 1800, "loader", pid=99)]
CALLS = {11: (920, 930), 12: (1000, 1010), 13: (1300, 1310), 14: (2000, 2010)}


@pytest.mark.parametrize("layout", ["current", "old"])
def test_each_launch_gets_the_nvtx_ranges_around_its_launch_call(layout):
    """The ranges of the thread that called the launch, around the call: as the nvtx_gpu_proj_trace of the same run
    gives them to the CSV (tests/test_nvtx_ranges.py); a mark (no end) is no range, and another process's range
    that holds the call's time is not this launch's."""
    launches, copies, gpus = from_gpu_trace(DATA / "nsys" / "cuda_gpu_trace_nvtx.csv")
    for k in launches:
        k.call = CALLS[k.corr]
    w = ingest.read(build(launches, NVTX, copies, gpus=gpus, layout=layout), name="r.sqlite")
    assert w.frame["nvtx"].tolist() == [f"step{SEP}forward", f"step{SEP}forward", f"step{SEP}backward", None]
    assert w.frame["start_s"].tolist() == pytest.approx([1e-6, 1.2e-6, 1.4e-6, 5e-6])
    assert ("NVTX ranges from the database: 3 of 4 kernel launches were launched inside a range (the innermost "
            "around the launch call names it), 1 outside every range.") in w.warnings
    reference = ingest.read_many([DATA / "nsys" / "cuda_gpu_trace_nvtx.csv", DATA / "nsys" / "nvtx_gpu_proj_trace.csv"])
    mine = group(analyze(w, HW), by="nvtx").set_index("group")["launches"].to_dict()
    assert mine == group(analyze(reference, HW), by="nvtx").set_index("group")["launches"].to_dict()


def test_named_domains_nvtxt_ranges_and_ranges_ended_elsewhere_are_read_as_nsys_projects_them():
    """A range of a named NVTX domain is `domain:name` (the domain's name from its creation event, in the launching
    process), as nsys's own reports write it; the default domain's stays bare; NVTXT ranges (70, 71) are ranges; a
    start/end range ended on another thread holds no launch (nvtx_gpu_proj_trace leaves it out too)."""
    launches = [Launch(1000, 1100, "conv", 1, call=(100, 110)), Launch(2000, 2100, "gemm", 2, call=(500, 510)),
                Launch(3000, 3100, "relu", 3, call=(800, 810))]
    ranges = [Range(40, None, "cuDNN", kind=75, domain=3), Range(40, None, "other process", kind=75, domain=7, pid=9),
              Range(50, 900, "step", kind=71), Range(60, 200, "fprop", domain=3),
              Range(400, 600, "layer", kind=60, domain=7), Range(450, 560, "handed over", kind=60, end_pid=4243),
              Range(790, 850, "act", kind=70)]
    w = ingest.read(build(launches, ranges), name="r.sqlite")
    assert w.frame["nvtx"].tolist() == [f"step{SEP}cuDNN:fprop", f"step{SEP}layer", f"step{SEP}act"]


def test_ranges_without_the_launch_calls_are_said_not_guessed():
    """NVTX ranges but no CUDA API trace (profiled without -t cuda's API calls): no launch can be tied to a range,
    so none gets a path, and a warning says why instead of a silent "outside"."""
    con = sqlite3.connect(":memory:")
    con.deserialize(build([Launch(1000, 1100, "a_kernel", 5, call=(100, 110))], [Range(50, 200, "step")]))
    con.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
    w = ingest.read(con.serialize(), name="r.sqlite")
    assert "nvtx" not in w.frame.columns
    assert any(x.startswith("the database holds NVTX ranges but no CUDA API calls") for x in w.warnings), w.warnings


def test_graphs_traced_whole_are_counted_as_missing_time():
    """With --cuda-graph-trace=graph nsys records a graph launch as one row and not its kernels: the workload says
    how many and how long, instead of leaving that time out without a word."""
    con = sqlite3.connect(":memory:")
    con.deserialize(build([Launch(1000, 1100, "a_kernel", 5)]))
    con.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INT, "end" INT, graphExecId INT)')
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, 1)", [(2000, 502000), (600000, 1100000)])
    con.commit()
    w = ingest.read(con.serialize(), name="r.sqlite")
    assert col(w, "name") == ["a_kernel"]
    assert ("2 CUDA graph launch(es) (1 ms) were traced as whole graphs: their kernels are not in the trace, and their "
            "time is not in this workload. Hint: profile with `nsys profile --cuda-graph-trace=node` to trace each "
            "kernel of a graph.") in w.warnings


def test_the_same_correlation_id_in_two_processes_is_told_apart():
    """Correlation ids restart in every process: a launch is matched to its call by process and id."""
    launches = [Launch(1000, 1100, "a_kernel", 5, pid=1, call=(100, 110)),
                Launch(2000, 2100, "b_kernel", 5, pid=2, call=(500, 510))]
    ranges = [Range(50, 200, "one", pid=1), Range(400, 600, "two", pid=2)]
    w = ingest.read(build(launches, ranges), name="r.sqlite")
    assert w.frame["nvtx"].tolist() == ["one", "two"]


def test_unusable_launches_are_skipped_and_named():
    launches = [Launch(1000, 1100, "good", 1), Launch(2000, None, "no_end", 2), Launch(3000, 2900, "backwards", 3)]
    w = ingest.read(build(launches), name="r.sqlite")
    assert col(w, "name") == ["good"] and [s.row for s in w.skipped] == ["launch 2", "launch 3"]
    assert "found 3000, 2900 and 'backwards'" in w.skipped[1].reason
    assert "calls that launched" not in " ".join(w.warnings)  # no NVTX table rows: no NVTX column, no word
    assert "nvtx" not in w.frame.columns


def one_line(data: bytes, name: str = "r.sqlite") -> str:
    with pytest.raises(InputError) as e:
        ingest.read(data, name=name)
    assert "\n" not in str(e.value)
    return str(e.value)


def test_a_database_without_launches_says_what_to_profile():
    assert one_line(build([], copies=[(1, 2)])) == (
        "r.sqlite: expected at least one kernel launch in CUPTI_ACTIVITY_KIND_KERNEL, found none. Hint: profile with "
        "CUDA tracing (nsys profile -t cuda) and check that kernels ran.")
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE OSRT_API (start INT)")
    assert one_line(con.serialize()) == (
        "r.sqlite: this is an Nsight Systems SQLite export without CUDA kernels (no CUPTI_ACTIVITY_KIND_KERNEL table), "
        "not a profile. Hint: profile with CUDA tracing on (nsys profile -t cuda …) and check that kernels ran.")


def test_the_format_forced_on_a_csv_says_so():
    with pytest.raises(InputError) as e:
        ingest.read((DATA / "join" / "cuda_gpu_trace.csv").read_bytes(), name="cuda_gpu_trace.csv", fmt="nsys-sqlite")
    assert str(e.value) == ("cuda_gpu_trace.csv: expected an SQLite database (a profiler's .db or .sqlite file), "
                            "found other data. Hint: let the format be detected from the content (no --format).")
