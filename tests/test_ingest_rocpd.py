"""rocprofv3's rocpd database (ROCm 7's default output): the same run read from a database as from its CSV or JSON
export, in both table layouts, several runs in one file, and every way a database can be wrong (cut, damaged, another
tool's, a crafted one) as one line.

The databases are written by tests/rocpd_build.py from the records of real samples and of our JSON fixture; the
expected numbers come from reading those same records through the CSV and JSON readers."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from rocpd_build import SUFFIX, Copy, Dispatch, Region, build, from_csvs, from_json, regions_from_csv
from roofhelpers import col, make_hw

from roofcore import InputError, RoofcoreError, ingest
from roofcore.analyze import analyze
from roofcore.hierarchy import OUTSIDE, SEP, group
from roofcore.ingest import sqlite_db

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).parent.parent.parent / "shared" / "samples"
LAYOUTS = ("inline", "stamped")


COLUMNS = ("name", "row", "time_s", "flops", "precision", "bytes_hbm", "bytes_pcie", "bytes_l2", "gpu")


def same_rows(a, b, columns=COLUMNS) -> None:
    for c in columns:
        assert (c in a.frame.columns) == (c in b.frame.columns), c
        if c in a.frame.columns:
            assert col(a, c) == col(b, c), c


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_json_fixture_as_a_database_reads_as_the_json(layout):
    """FLOPs from MFMA counters (summed per dispatch), HBM bytes, unknown where a dispatch has no counter, a copy
    over PCIe, the GPU's name and arch: as the JSON reader reads the same records."""
    data = (DATA / "rocprof" / "rocprofv3_results.json").read_bytes()
    dispatches, copies = from_json(json.loads(data))
    db = build(dispatches, copies, layout=layout)
    assert ingest.detect(db, "results.db").name == "rocprof-v3-db"
    w, j = ingest.read(db, name="results.db"), ingest.read(data, name="results.json")
    assert w.formats == ("rocprof-v3-db",) and w.device == j.device == "AMD Instinct MI300X"
    assert w.meta["arch"] == "gfx942" and w.meta["profiler"] == "rocprofv3"
    same_rows(w, j)
    assert col(w, "flops")[:2] == [512 * 1000, None]  # dispatch 2 has no counter: unknown, not zero
    assert [m.replace("results.db", "results.json") for m in w.warnings] == list(j.warnings)


@pytest.mark.samples
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_real_trace_with_its_counters_as_a_database_reads_as_the_csvs(layout):
    """The rocprofv3 kernel trace and counter collection of one real run (8 dispatches, 2 queues, SQ_WAVES), as its
    database holds them: the same dispatches, names and times as the two CSVs read together."""
    trace, counters = SHARED / "rocprofv3_0.x_kernel_trace.csv", SHARED / "rocprofv3_0.x_counter_collection.csv"
    if not trace.is_file():
        pytest.skip("../shared/samples is absent")
    w = ingest.read(build(from_csvs(trace, counters), layout=layout), name="results.db")
    csvs = ingest.read_many([trace, counters])
    order = sorted(range(len(w)), key=lambda i: int(col(w, "row")[i]))
    by_id = sorted(range(len(csvs)), key=lambda i: int(col(csvs, "row")[i]))
    for c in ("name", "row", "time_s"):
        assert [col(w, c)[i] for i in order] == [col(csvs, c)[i] for i in by_id], c
    assert len(w) == 7 and None not in col(w, "time_s")


def test_several_runs_and_processes_in_one_database_are_all_read():
    """`rocpd merge` (or two processes of one job) leave a database with a table set per run: every run's
    dispatches are read, the same dispatch id in two runs is two dispatches, and two GPUs keep their labels."""
    con = sqlite3.connect(":memory:")
    build([Dispatch(1, "a()", 100, 1100), Dispatch(2, "b()", 2000, 2500, agent=1)], layout="inline", gpus=2,
          con=con)
    build([Dispatch(1, "c()", 100, 400, pid=77)], layout="stamped", suffix="_ffff", con=con)
    w = ingest.read(con.serialize(), name="merged.db")
    assert sorted(zip(col(w, "name"), col(w, "row"), col(w, "gpu"), strict=True)) == [
        ("a()", "1", "GPU 0"), ("b()", "2", "GPU 1"), ("c()", "1", "GPU 0")]
    assert col(w, "time_s") == pytest.approx([1000e-9, 500e-9, 300e-9])


def _paths(w) -> list:
    return [None if v is None or v != v else v for v in w.frame["nvtx"].tolist()]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_roctx_ranges_in_the_database_read_as_the_marker_csv_with_its_kernel_trace(layout):
    """The kernel trace and ROCTx marker trace fixtures as rocprofv3 writes them to one database (ranges in
    rocpd_region, their text in the event's message): each dispatch gets the path the two CSVs read together give,
    on its own thread (thread 11's longer "loader" range never wins), marks, control calls and roctxGetThreadId no
    range; without a traced launch call, by the range holding its start on the GPU."""
    v3 = DATA / "rocprofv3"
    db = build(from_csvs(v3 / "9_kernel_trace.csv"), regions=regions_from_csv(v3 / "9_marker_api_trace.csv"),
               layout=layout)
    w = ingest.read(db, name="results.db")
    csvs = ingest.read_many([v3 / "9_kernel_trace.csv", v3 / "9_marker_api_trace.csv"])
    assert _paths(w) == _paths(csvs) == [f"iteration{SEP}attention", f"iteration{SEP}attention",
                                         f"iteration{SEP}mlp", "iteration", None]
    assert w.frame["start_s"].tolist() == pytest.approx(csvs.frame["start_s"].tolist())
    assert any(m.startswith("ROCTx ranges from results.db: 4 of 5 dispatches ran inside a range (no "
                            "launch call is recorded") for m in w.warnings), w.warnings
    g = group(analyze(w, make_hw()), by="nvtx").set_index("group")
    assert g.loc["iteration", "launches"] == 4 and g.loc[OUTSIDE, "launches"] == 1


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_call_that_launched_a_dispatch_names_its_range(layout):
    """With HIP calls traced (--sys-trace), a dispatch belongs to the range around the call that enqueued it (its
    event's stack id is the call's), not to the range its GPU start falls in: work queued at the end of "attention"
    that runs during "mlp" is attention's. A copy is placed the same way; a dispatch whose call is not in the
    database falls back to its GPU start."""
    ranges = [Region(1000, 9000, 9, "step"), Region(1100, 3000, 9, "attention"), Region(3100, 6000, 9, "mlp"),
              Region(1000, 9500, 11, "loader")]
    calls = [Region(2900, 2950, 9, None, "HIP_RUNTIME_API", call=41, operation="hipLaunchKernel"),
             Region(3200, 3300, 9, None, "HIP_RUNTIME_API", call=42, operation="hipMemcpyAsync"),
             Region(1200, 1250, 11, None, "HIP_RUNTIME_API", call=43, operation="hipLaunchKernel")]
    dispatches = [Dispatch(1, "late()", 3500, 4000, pid=4242, tid=9, call=41),
                  Dispatch(2, "loaded()", 4100, 4200, pid=4242, tid=11, call=43),
                  Dispatch(3, "untraced()", 5000, 5100, pid=4242, tid=9, call=99)]
    db = build(dispatches, [Copy(4096, 3400, 3600, "CPU", "GPU", tid=9, call=42)], regions=ranges + calls,
               layout=layout)
    w = ingest.read(db, name="results.db")
    assert col(w, "name") == ["late()", "loaded()", "untraced()", "CopyHostToDevice"]
    assert _paths(w) == [f"step{SEP}attention", "loader", f"step{SEP}mlp", f"step{SEP}mlp"]
    assert any("the innermost around the call that launched it names it, or, for the 1 whose call was not traced"
               in m for m in w.warnings), w.warnings


def test_api_calls_without_roctx_ranges_leave_the_dispatches_as_they_were():
    """HIP calls and a message on an event that is not a marker are no ranges: no nvtx column, no note."""
    calls = [Region(100, 5000, 9, None, "HIP_RUNTIME_API", call=41, operation="hipLaunchKernel"),
             Region(100, 5000, 9, "not a marker", "HIP_RUNTIME_API", operation="hipDeviceSynchronize")]
    w = ingest.read(build([Dispatch(1, "k()", 1000, 2000, tid=9, call=41)], regions=calls), name="r.db")
    assert "nvtx" not in w.frame.columns and not any("ROCTx" in m for m in w.warnings)


def test_missing_times_and_counters_are_unknown_and_said():
    """A dispatch without an end timestamp has an unknown time (named); a counter value that is NULL or text makes
    what needs it unknown for that dispatch: never zero."""
    db = build([Dispatch(1, "gemm()", 1000, 26000, counters={"SQ_INSTS_VALU_MFMA_MOPS_BF16": 10.0}),
                Dispatch(2, "gemm()", 30000, None, counters={"SQ_INSTS_VALU_MFMA_MOPS_BF16": 10.0}),
                Dispatch(3, "gemm()", 40000, 41000, counters={"SQ_INSTS_VALU_MFMA_MOPS_BF16": None}),
                Dispatch(4, "gemm()", 50000, 51000, counters={"SQ_INSTS_VALU_MFMA_MOPS_BF16": "n/a"})],
               layout="stamped")
    w = ingest.read(db, name="r.db")
    assert col(w, "time_s")[:2] == pytest.approx([25e-6, None], nan_ok=True) and col(w, "time_s")[1] is None
    assert col(w, "flops") == [5120, 5120, None, None]
    assert any("dispatch 2 (gemm()): not a timestamp in ns" in m for m in w.warnings), w.warnings
    assert any(m.startswith("r.db: SQ_INSTS_VALU_MFMA_MOPS_BF16: 2 value(s) missing or not a non-negative number")
               for m in w.warnings), w.warnings


def test_a_database_written_in_wal_mode_reads(tmp_path):
    path = tmp_path / "results.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    build([Dispatch(5, "k()", 10, 60)], con=con)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    assert path.read_bytes()[18:20] == b"\x02\x02"
    w = ingest.read(path)
    assert col(w, "name") == ["k()"] and col(w, "time_s") == pytest.approx([50e-9])


def one_line(data: bytes, name: str = "r.db") -> str:
    with pytest.raises(InputError) as e:
        ingest.read(data, name=name)
    text = str(e.value)
    assert "\n" not in text and text.startswith(name + ": ")
    return text


def test_a_cut_database_says_so():
    db = build([Dispatch(i, "k()", 10 * i, 10 * i + 5) for i in range(1, 400)])
    text = one_line(db[: len(db) // 2 + 100])
    assert "the database is cut: its header counts" in text and f"the file ends after {len(db) // 2 + 100:,}" in text
    assert one_line(db[:50]).startswith("r.db: expected an SQLite database, found a file too short for its header")


def test_damaged_databases_are_one_line_or_read():
    """300 seeded damages (bytes overwritten in the header, the schema or the data, ROCTx ranges and launch calls
    among them): every one reads or is one line naming the file, never a crash."""
    regions = [Region(1000 * i, 1000 * i + 900, 9, f"layer {i}") for i in range(1, 200, 10)]
    regions += [Region(1000 * i - 50, 1000 * i - 40, 9, None, "HIP_RUNTIME_API", call=i, operation="hipLaunchKernel")
                for i in range(1, 200)]
    db = build([Dispatch(i, f"kernel_{i % 7}()", 1000 * i, 1000 * i + 300, counters={"SQ_WAVES": 4.0}, tid=9, call=i)
                for i in range(1, 200)], [Copy(1 << 20, 5, 50, "CPU", "GPU")], regions=regions)
    rng = random.Random(7)
    for _ in range(300):
        b = bytearray(db)
        for _ in range(rng.choice((1, 4, 32))):
            at = rng.choice((rng.randrange(100), rng.randrange(len(b))))
            b[at] = rng.randrange(256)
        try:
            ingest.read(bytes(b), name="d.db")
        except RoofcoreError as e:
            assert "\n" not in str(e) and str(e).startswith("d.db")


@pytest.mark.parametrize("tables,message", [
    (["CREATE TABLE runs (id INT)", "CREATE TABLE alembic_version (v TEXT)"],
     "run.db: this is a database of saved runs (roofcore's run store), not a profile. Hint: use it as the run store "
     "(`--db sqlite:///FILE` or ROOFCORE_DB_URL), not as a workload."),
    (["CREATE TABLE notes (t TEXT)"],
     "run.db: expected a profiler's database (rocprofv3's rocpd_kernel_dispatch or Nsight Systems' "
     "CUPTI_ACTIVITY_KIND_KERNEL table), found an SQLite database with notes. Hint: load rocprofv3's rocpd database "
     "(`--output-format rocpd`, ROCm 7's default <pid>_results.db) or an Nsight Systems SQLite export (`nsys export "
     "--type sqlite`, or the .sqlite `nsys stats` writes beside the report)."),
    # a view of that name is SQL of the file's own: never run, so no rocpd table is found
    (["CREATE VIEW rocpd_kernel_dispatch AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
      "SELECT i AS id FROM n"],
     "run.db: expected a profiler's database (rocprofv3's rocpd_kernel_dispatch or Nsight Systems' "
     "CUPTI_ACTIVITY_KIND_KERNEL table), found an SQLite database with no tables. Hint: load rocprofv3's rocpd "
     "database (`--output-format rocpd`, ROCm 7's default <pid>_results.db) or an Nsight Systems SQLite export "
     "(`nsys export --type sqlite`, or the .sqlite `nsys stats` writes beside the report)."),
])
def test_other_sqlite_databases_are_named(tables, message):
    con = sqlite3.connect(":memory:")
    for sql in tables:
        con.execute(sql)
    assert one_line(con.serialize(), "run.db") == message


def test_counters_without_a_kernel_trace_are_named():
    """rocprofv3 --pmc without --kernel-trace writes counter values whose events have no dispatch row (no name, no
    time): said, not read as an empty run."""
    con = sqlite3.connect(":memory:")
    build([Dispatch(1, "k()", 1, 2, counters={"SQ_WAVES": 4.0, "SQ_INSTS_VALU": 9.0})], con=con)
    con.execute(f'DELETE FROM "rocpd_kernel_dispatch{SUFFIX}"')
    assert one_line(con.serialize()) == (
        "r.db: the database holds 2 counter values but no kernel dispatch: rocprofv3 ran with --pmc and without "
        "--kernel-trace, and rocpd then keeps no kernel name or time. Hint: profile with `rocprofv3 --kernel-trace "
        "--pmc … -- app`.")
    con.execute(f'DELETE FROM "rocpd_pmc_event{SUFFIX}"')
    assert one_line(con.serialize()) == ("r.db: no kernel dispatch, counter or copy records. Hint: profile with "
                                         "`rocprofv3 --kernel-trace --output-format rocpd -- app` (ROCm 7's default) "
                                         "and load the .db file.")


def test_a_query_that_runs_away_is_stopped(monkeypatch):
    monkeypatch.setattr(sqlite_db, "STEPS_PER_BYTE", 0)
    db = build([Dispatch(i, "k()", i, i + 1) for i in range(1, 3000)])
    monkeypatch.setattr(sqlite_db, "BUDGET_FLOOR", 0)
    assert "took too long to query" in one_line(db)


def test_a_text_format_forced_on_a_database_is_refused():
    with pytest.raises(InputError, match=r"found binary data \(an SQLite database\)"):
        ingest.read(build([Dispatch(1, "k()", 1, 2)]), name="r.db", fmt="rocprof-v3-trace")


def test_the_fixture_database_reads(tmp_path):
    """tests/data/rocprofv3/results.db (the JSON fixture's run, written by rocpd_build; a seed of the fuzz test):
    through the CLI, as a user runs it."""
    out = subprocess.run([sys.executable, "-m", "roofcore", "analyze", str(DATA / "rocprofv3" / "results.db"),
                          "--json"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert [k["name"] for k in doc["kernels"]][:2] == ["gemm_bf16()", "softmax_rows(float*)"]
    assert doc["workload"]["formats"] == ["rocprof-v3-db"]

