"""Large files read through a memory map (roofcore.filemap): the same workload, warnings and errors as from the
file's bytes, the map closed afterwards, and every other input (uploads, gzip, small files, other formats) read
as bytes as before. Mapping is forced here by lowering ``filemap.MAP_MIN_BYTES``; the memory it saves is measured
by benchmarks/bench_commands.py, not asserted."""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import json
import mmap
import time

import pandas as pd
import pytest
from roofhelpers import sample

import roofcore
from roofcore import filemap, limits
from roofcore.errors import InputError, RoofcoreError
from roofcore.ingest import check_binary, kineto, ncu_read
from roofcore.models import Workload

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n')
METRICS = (("gpu__time_duration.sum", "nsecond", "{t:,}"), ("dram__bytes.sum", "byte", "{b:,}"),
           ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "{f:,}"))


def ncu_csv(launches: int, noise: bool = False) -> bytes:
    """A details-page export of ``launches`` × 3 metric rows (a ``==PROF==`` line per launch with ``noise``)."""
    rows = [HEADER]
    for i in range(launches):
        if noise:
            rows.append(f"==PROF== Profiling kernel {i}\n")
        for metric, unit, fmt in METRICS:
            value = fmt.format(t=1000 + i, b=4096 * (i + 1), f=1_000_000 + 7 * i)
            rows.append(f'"{i}","42","python","host","gemm_{i % 5}","1","7","(128, 1, 1)","(8, 1, 1)","0","8.0",'
                        f'"Command line profiler metrics","{metric}","{unit}","{value}"\n')
    return "".join(rows).encode()


def kineto_trace(ops: int) -> bytes:
    """A Kineto trace: per op a cpu_op with shapes, its launch and its kernel, plus a memcpy."""
    events = []
    for i in range(ops):
        ts = 1000 * i
        events += [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts, "dur": 100,
             "args": {"External id": i, "Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"]}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 10,
             "dur": 5, "args": {"correlation": i, "External id": i}},
            {"ph": "X", "cat": "kernel", "name": f"sgemm_{i % 3}", "pid": 0, "tid": 7, "ts": ts + 20, "dur": 30,
             "args": {"correlation": i, "External id": i, "device": 0}},
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": ts + 60, "dur": 4,
             "args": {"bytes": 8192, "device": 0}},
        ]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100", "computeMajor": 8,
                                                     "computeMinor": 0}], "traceEvents": events}
    return json.dumps(doc, indent=1).encode()


@pytest.fixture
def maps(monkeypatch) -> list[mmap.mmap]:
    """Map every file a mapping format reads by path (whatever its size); the maps made, to check."""
    made: list[mmap.mmap] = []
    real = filemap.mapped

    @contextlib.contextmanager
    def spy(path):
        with real(path) as m:
            if m is not None:
                made.append(m)
            yield m

    monkeypatch.setattr(filemap, "MAP_MIN_BYTES", 0)
    monkeypatch.setattr(filemap, "mapped", spy)
    return made


def small_pieces(monkeypatch) -> None:
    """Pieces and windows of a few KB, so a small file is read in many, each released after."""
    monkeypatch.setattr(ncu_read, "PIECE_SIZE", 8192)
    monkeypatch.setattr(kineto, "WINDOW", 4096)


def closes(m: mmap.mmap) -> bool:
    """Whether the map is closed or can be: no view of it kept. pyarrow lets go of the buffer it read from its own
    threads, a moment after ``read_csv`` returns (then ``filemap.mapped`` leaves the map to close with its last
    view)."""
    for _ in range(200):
        try:
            m.close()
            return True
        except BufferError:
            time.sleep(0.005)
    return False


def assert_same(a: Workload, b: Workload) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame)
    for f in dataclasses.fields(Workload):
        if f.name != "frame":
            assert repr(getattr(a, f.name)) == repr(getattr(b, f.name)), f.name


def read_both(path, monkeypatch, maps, fmt=None) -> tuple[Workload | str, Workload | str]:
    """``(read from bytes, read from a map)`` of one file: the workload, or the error's message."""
    def one():
        try:
            return roofcore.read(path, fmt=fmt)
        except RoofcoreError as e:
            return f"{type(e).__name__}: {e}"

    with monkeypatch.context() as m:
        m.setattr(filemap, "MAP_MIN_BYTES", 1 << 62)
        plain = one()
    assert not maps
    return plain, one()


def check_same(path, monkeypatch, maps, fmt=None, mapped=True) -> Workload | str:
    plain, got = read_both(path, monkeypatch, maps, fmt)
    if isinstance(plain, str):
        assert got == plain
    else:
        assert_same(got, plain)
    assert len(maps) == int(mapped)
    assert all(closes(m) for m in maps)
    return got


@pytest.mark.parametrize("name", ["ncu_details_a100_interpolate_sgemm.csv",
                                  "ncu_details_a100_julia_set_full_rules_humanunits.csv",
                                  "ncu_details_ncu2020.2_rtx3070_nvtx_columns.csv",
                                  "ncu_details_rtx5070_win_gemm_naive.csv",
                                  "ncu_raw_b200_torch_sdpa_flash.csv",
                                  "ncu_raw_ncu2019.4_gtx1080_legacy_metric_names.csv",
                                  "ncu_failed_ERR_NVGPUCTRPERM.csv",
                                  "pytorch_kineto_a100_alexnet_trace.json",
                                  "pytorch_kineto_t4_amp_record_shapes.json"])
def test_a_mapped_sample_reads_as_its_bytes(name, monkeypatch, maps):
    small_pieces(monkeypatch)
    check_same(sample(name), monkeypatch, maps)


def test_gzip_and_other_formats_are_read_as_bytes(monkeypatch, maps):
    check_same(sample("pytorch_kineto_b200_cuda12.9_eager.json.gz"), monkeypatch, maps, mapped=False)
    check_same(sample("nvprof_csv_metrics_gtx1060.csv"), monkeypatch, maps, mapped=False)


def test_generated_files_read_the_same_from_a_map(tmp_path, monkeypatch, maps):
    small_pieces(monkeypatch)
    for name, data, n in (("ncu.csv", ncu_csv(400), 400), ("noisy.csv", ncu_csv(300, noise=True), 300),
                          ("trace.json", kineto_trace(300), 600)):
        path = tmp_path / name
        path.write_bytes(data)
        maps.clear()
        w = check_same(path, monkeypatch, maps)
        assert len(w) == n


def test_uploaded_bytes_are_never_mapped(maps):
    data = ncu_csv(50)
    w = roofcore.read(data, name="upload.csv")
    many = roofcore.read_many([(data, "upload.csv")])
    assert len(w) == len(many) == 50 and not maps


def test_truncated_files(tmp_path, monkeypatch, maps):
    small_pieces(monkeypatch)
    csv = ncu_csv(200)
    trace = kineto_trace(200)
    for name, data in (("cut.csv", csv[: len(csv) * 2 // 3]), ("cut.json", trace[: len(trace) * 2 // 3])):
        path = tmp_path / name
        path.write_bytes(data)
        maps.clear()
        w = check_same(path, monkeypatch, maps)
        assert isinstance(w, Workload) and len(w) > 0
    assert any("ends" in x or "truncated" in x for x in w.warnings)


def test_empty_and_blank_files(tmp_path, monkeypatch, maps):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.json"
    blank.write_bytes(b" \n" * 5000)
    for path in (empty, blank):
        for fmt in (None, "ncu-details", "pytorch-trace"):
            maps.clear()
            msg = check_same(path, monkeypatch, maps, fmt=fmt, mapped=False)
            assert "an empty file" in msg
    # blank for its first megabytes: read whole (detection on its head would call it empty)
    late = tmp_path / "late.csv"
    late.write_bytes(b" \n" * (3 << 19) + ncu_csv(5))
    maps.clear()
    got = check_same(late, monkeypatch, maps, fmt="ncu-details", mapped=False)
    assert isinstance(got, Workload) and len(got) == 5
    with filemap.mapped(late) as m:  # a parser handed such a map scans it past its first pieces
        check_binary(m, "late.csv")
    with filemap.mapped(blank) as m, pytest.raises(InputError, match="an empty file"):
        check_binary(m, "blank.json")


def test_a_file_that_is_not_the_format(tmp_path, monkeypatch, maps):
    csv, trace = tmp_path / "k.csv", tmp_path / "t.json"
    csv.write_bytes(ncu_csv(20))
    trace.write_bytes(kineto_trace(20))
    for path, fmt in ((csv, "pytorch-trace"), (trace, "ncu-details"), (trace, "ncu-raw")):
        maps.clear()
        msg = check_same(path, monkeypatch, maps, fmt=fmt)
        assert msg.startswith("InputError: ")
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"%PDF-1.7\n" + b"x" * 10_000)
    maps.clear()
    assert "binary data (a PDF document)" in check_same(binary, monkeypatch, maps, fmt="ncu-details")


def test_row_limit_counts_a_mapped_file(tmp_path, monkeypatch, maps):
    path = tmp_path / "rows.csv"
    path.write_bytes(ncu_csv(100).rstrip(b"\n"))  # the last line without its newline counts too
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "300")
    msg = check_same(path, monkeypatch, maps)
    assert "301 rows, above the rows limit of 300" in msg


def test_read_many_and_parallel_workers_map_large_files(tmp_path, monkeypatch, maps):
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    a.write_bytes(ncu_csv(30))
    b.write_bytes(kineto_trace(10))
    one = roofcore.read_many([a])
    assert len(maps) == 1 and closes(maps[0]) and len(one) == 30
    monkeypatch.setattr(roofcore.ingest.reading, "_HEAD", 1024)  # both larger than a head: read when parsed
    both = roofcore.read_many([a, b], workers=1)
    assert len(maps) == 3 and all(closes(m) for m in maps) and len(both) == 50


# ------------------------------------------------------------------------------------------- filemap itself


def test_filemap_helpers(tmp_path, monkeypatch):
    data = bytes(range(256)) * 40_000 + b"\nend"
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    with filemap.mapped(path) as m:
        assert filemap.is_mapped(m) and not filemap.is_mapped(data)
        assert filemap.count(m, b"\n") == data.count(b"\n") == filemap.count(data, b"\n")
        assert filemap.count(m, b"\n", 5, 300_000) == data.count(b"\n", 5, 300_000)
        assert b"".join(filemap.pieces(m, 1 << 16)) == data == b"".join(filemap.pieces(data, 1 << 16))
        filemap.release(m, 0, len(m))  # released pages read back from the file
        assert m[:] == data
        filemap.release(data, 0, 10)  # bytes: nothing to do
        monkeypatch.setattr(filemap, "DONTNEED", None)  # no madvise here (Windows): not released, no error
        filemap.release(m, 0, len(m))
        with pytest.raises(ValueError):
            filemap.count(m, b"ab")
    assert m.closed
    filemap.release(m, 0, 4096)  # a closed map: nothing to release, no error
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with filemap.mapped(empty) as m:
        assert m is None
    with filemap.mapped(tmp_path / "missing") as m:
        assert m is None


def test_limits_check_rows_on_a_map(tmp_path, monkeypatch):
    path = tmp_path / "r.csv"
    path.write_bytes(b"a\n" * 50 + b"b")
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "50")
    with filemap.mapped(path) as m, pytest.raises(roofcore.LimitError, match="51 rows"):
        limits.check_rows(m, "r.csv")


def test_gzip_input_stays_bytes(tmp_path, monkeypatch, maps):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(kineto_trace(20)))
    w = roofcore.read(path)
    assert len(w) == 40 and not maps


def test_a_file_that_changes_size_between_detection_and_parse(tmp_path, monkeypatch, maps):
    """The map is made when the parse starts: it sees the file as it is then (shorter, longer, empty, too big)."""
    from roofcore.ingest import reading

    path = tmp_path / "k.csv"
    real_detect = reading.detect

    def changed(data: bytes):
        def detect(*a, **k):
            f = real_detect(*a, **k)
            path.write_bytes(data)
            return f
        return detect

    for now, want in ((ncu_csv(7), 7), (ncu_csv(90), 90)):
        path.write_bytes(ncu_csv(40))
        maps.clear()
        with monkeypatch.context() as m:
            m.setattr(reading, "detect", changed(now))
            w = roofcore.read(path)
        assert len(w) == want and len(maps) == 1 and closes(maps[0])
        assert_same(w, roofcore.read(now, name=w.name))
    path.write_bytes(ncu_csv(40))
    with monkeypatch.context() as m, pytest.raises(InputError, match="an empty file"):
        m.setattr(reading, "detect", changed(b""))
        roofcore.read(path)
    path.write_bytes(ncu_csv(40))
    with monkeypatch.context() as m, pytest.raises(roofcore.LimitError, match="above the input size limit"):
        m.setattr(reading, "detect", changed(ncu_csv(4000)))
        roofcore.read(path, max_bytes=len(ncu_csv(40)) + 10)
