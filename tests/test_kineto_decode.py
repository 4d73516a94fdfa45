"""The compiled decoder of PyTorch traces (roofcore.ingest.kineto_decode): the same events as the stdlib scanner
(kineto_events), cut in pieces anywhere, gzip read as a stream, and everything it does not read exactly handed
to the scanner (whose messages and partial reads are the reference)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from roofcore.errors import RoofcoreError
from roofcore.ingest import compression, kineto, kineto_decode
from roofcore.ingest.kineto_decode import Fallback
from roofcore.ingest.kineto_events import scan as scanner

DATA = Path(__file__).parent / "data" / "kineto"
FIELDS = ("gpu", "runtime", "ops", "ranges", "marks", "signatures", "top", "events", "not_objects", "truncated_at",
          "seen_events", "string_times")


def decoded(data: bytes):
    gz = data[:2] == b"\x1f\x8b"
    return kineto_decode.scan(data, compression.gunzip_chunks(data, 1 << 30) if gz else None, "t.json", kineto.OPS)


def scanned(data: bytes):
    return scanner(kineto.byte_chunks(data, "t.json", {}), "t.json", kineto.OPS)


def assert_same_scan(data: bytes) -> None:
    a, b = decoded(data), scanned(data)
    for f in FIELDS:
        assert repr(getattr(a, f)) == repr(getattr(b, f)), f


def test_byte_order_mark_and_crlf():
    assert_same_scan(b"\xef\xbb\xbf" + json.dumps(rich_trace(), indent=1).replace("\n", "\r\n").encode())


def rich_trace() -> dict:
    """Every kind of event the reader buckets, the awkward spellings included."""
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 500},
        {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 1, "ts": 5, "dur": 90},
        {"ph": "X", "cat": "python_function", "name": "torch/nn/functional.py(12): linear", "pid": 1, "tid": 1,
         "ts": 6, "dur": 80},
        {"ph": "i", "cat": "user_annotation", "name": "instant", "pid": 1, "tid": 1, "ts": 7},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
         "args": {"External id": 7, "Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"],
                  "Concrete Inputs": ["", ""], "Sequence number": 1, "grid": [{"x": 1}, {"y": 2}]}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 70, "dur": 50,
         "args": {"Input Dims": [[64,32],[32,16]], "External id": 8, "Input type": ["float", "float"],
                  "Concrete Inputs": ["", ""]}},
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 130, "dur": 5,
         "args": {"External id": 9, "Input Dims": [[1024]], "Input type": ["float"], "Collective name": "allreduce",
                  "Group size": 8, "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "Float"}},
        {"ph": "X", "cat": "Operator", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 140, "dur": 5},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 3,
         "args": {"correlation": 11, "External id": 7}},
        {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1, "ts": 80, "dur": 3,
         "args": {"correlation": "12"}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 90, "dur": 3,
         "args": {}},
        {"ph": "s", "id": 11, "pid": 1, "tid": 1, "ts": 20, "cat": "ac2g", "name": "ac2g"},
        {"ph": "X", "cat": "kernel", "name": "sgemm_}, {_kernel", "pid": 0, "tid": 7, "ts": 30, "dur": 12.5,
         "args": {"correlation": 11, "External id": 7, "device": 0, "grid": [1, 1, 1]}},
        {"ph": "X", "cat": "Kernel", "name": "old_kernel", "pid": 0, "tid": 7, "ts": 85, "dur": 2,
         "args": {"correlation": "12", "external id": 8, "device": 1}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3", "pid": 0, "tid": 7, "ts": 29, "dur": 90},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 100,
         "dur": 4, "args": {"bytes": 4096, "device": 0, "External id": None, "external id": 3}},
        {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 110, "dur": 1},
        {"ph": "X", "cat": "cuda_profiler_range", "name": "sgemm", "pid": 0, "tid": 7, "ts": 0, "dur": 1,
         "args": {"dram__bytes.sum": 4096, "nested": {"a": [1, 2]}}},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
        {"ph": "X", "name": "no category", "ts": "622109046136", "dur": "9"},
        {},
        {"ph": "X", "cat": "kernel", "name": "ünïcödé \\ \" kernel", "pid": 0, "tid": 7, "ts": -5, "dur": 0,
         "args": {"correlation": 2**62}},
    ]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100", "computeMajor": 8,
                                                     "computeMinor": 0}], "traceEvents": ev,
            "traceName": "t.json", "distributedInfo": {"rank": 1, "world_size": 2}}


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.iterdir()))
def test_fixtures_decode_as_scanned(name):
    assert_same_scan((DATA / name).read_bytes())


def test_every_kind_of_event_and_marks():
    data = json.dumps(rich_trace(), indent=1, ensure_ascii=False).encode()
    assert_same_scan(data)
    sc = decoded(data)
    assert [m[0] for m in sc.marks] == ["annotation", "module", "gpu_annotation"]
    assert sc.marks[1] == ("module", 1, 1, 5, 90, "nn.Module: Linear_0")
    assert len(sc.signatures) == 2 and sc.signatures[1][4][0] == ("Collective name", "allreduce")
    assert sc.ops[0][6] == sc.ops[1][6] == 0  # one signature for two spellings of the same inputs
    assert sc.ranges == [(17, "sgemm", {"dram__bytes.sum": 4096, "nested": {"a": [1, 2]}})]
    assert sc.top["traceName"] == "t.json" and sc.string_times == 1 and sc.events == 22


@pytest.mark.parametrize("piece", [1, 40, 300, 1 << 22])
def test_cut_anywhere_reads_the_same(monkeypatch, piece):
    """Pieces of any size (cuts inside an event's args and inside strings are found out and moved on)."""
    monkeypatch.setattr(kineto_decode, "PIECE", piece)
    for indent in (None, 2):
        data = json.dumps(rich_trace(), indent=indent).encode()
        assert_same_scan(data)
        bare = json.dumps(rich_trace()["traceEvents"], indent=indent).encode()  # Chrome's bare array
        assert_same_scan(bare)


def test_gzip_is_decoded_as_a_stream(monkeypatch):
    monkeypatch.setattr(compression, "CHUNK", 512)
    monkeypatch.setattr(kineto_decode, "PIECE", 256)
    events = [{"ph": "X", "cat": "kernel", "name": f"k{i % 5}", "pid": 0, "tid": 7, "ts": i, "dur": 1,
               "args": {"correlation": i}} for i in range(2000)]
    raw = json.dumps({"traceEvents": events}, indent=1).encode()
    seen = []
    more = kineto_decode.Input.more

    def spy(self):
        seen.append(len(self.buf))
        return more(self)

    monkeypatch.setattr(kineto_decode.Input, "more", spy)
    sc = decoded(gzip.compress(raw))
    assert len(sc.gpu) == 2000 and len(raw) > 100_000
    assert max(seen) < 8192  # never more than the head, a piece, a chunk and an event held decompressed


@pytest.mark.parametrize("data", [
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}',  # truncated
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": NaN, "dur": 2}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e999, "dur": 2}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": true, "dur": 2}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": ["k"], "ts": 1, "dur": 2}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "args": []}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k"}, 42]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "caf\xe9"}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "unread": "caf\xe9"}]}',
    b'{"traceEvents": [{"ph": "X"} {"ph": "X"}]}',
    b'{"traceEvents": []} trailing',
    b'{"a": 1, "traceEvents": [], "a": 2}',
    b'{"traceEvents": {"a": 1}}',
    b'{"schemaVersion": 1}',
    b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {"Input Dims": '
    + b"[" * 150 + b"]" * 150 + b"}}]}",
    # numbers beyond a float in values read after the events' decode: an op's inputs, a range's counters
    b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"Input Dims": '
    b'[[1e99964, 256], [256, 128]], "Input type": ["float", "float"]}}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "cuda_profiler_range", "name": "k", "ts": 1, "dur": 2, "args": '
    b'{"dram__bytes.sum": -1e999}}]}',
    b"",
])
def test_what_it_does_not_read_exactly_goes_to_the_scanner(data, monkeypatch):
    with pytest.raises(Fallback):
        decoded(data)

    def answer() -> object:
        try:
            w = kineto.parse(data, "t.json")
        except RoofcoreError as e:
            return str(e)
        return w.frame.to_json(), w.warnings

    got = answer()
    monkeypatch.setattr(kineto, "DECODER", False)
    assert answer() == got  # parse() gives the scanner's answer


def test_parse_through_either_reader_is_identical(monkeypatch):
    data = json.dumps(rich_trace()).encode()
    fast = kineto.parse(data, "t.json")
    monkeypatch.setattr(kineto, "DECODER", False)
    slow = kineto.parse(data, "t.json")
    assert fast.frame.equals(slow.frame) and fast.warnings == slow.warnings and fast.meta == slow.meta
    assert fast.skipped == slow.skipped


def test_arrays_made_while_decoding_match_the_tuples(monkeypatch):
    """The decoder's numeric columns (Scan.arrays) are what the build would make of the tuples; a column whose
    values are not all integers (a thread named by a string) is left to the build."""
    monkeypatch.setattr(kineto_decode, "PIECE", 200)  # arrays made piece by piece, then joined
    doc = rich_trace()
    sc = decoded(json.dumps(doc).encode())
    assert set(sc.arrays) == set(kineto_decode.ARRAYS) - {"rt_corr"}  # a correlation written "12"
    assert sc.arrays["ops_ts"].tolist() == [float(o[2]) for o in sc.ops]
    doc["traceEvents"][4]["tid"] = "main thread"
    doc["traceEvents"][9]["args"]["correlation"] = 12
    sc = decoded(json.dumps(doc).encode())
    assert "ops_tid" not in sc.arrays and "ops_pid" in sc.arrays and sc.arrays["rt_corr"].tolist() == [11, 12]
    fast = kineto.parse(json.dumps(doc).encode(), "t.json")
    monkeypatch.setattr(kineto, "DECODER", False)
    slow = kineto.parse(json.dumps(doc).encode(), "t.json")
    assert fast.frame.equals(slow.frame) and fast.warnings == slow.warnings
