"""The compiled decoders of rocprofv3 JSON and rocprof --hip-trace JSON (roofcore.ingest.rocprofv3_decode,
rocprof_decode): the same workload as the stdlib readers, and everything they do not read exactly handed to them."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from roofcore.errors import RoofcoreError
from roofcore.ingest import rocprof_decode, rocprof_v1, rocprofv3, rocprofv3_decode
from roofcore.ingest.rocprof_common import times

DATA = Path(__file__).parent / "data" / "rocprof"


def outcome(parse, data: bytes) -> object:
    try:
        w = parse(data, "t.json")
    except RoofcoreError as e:
        return str(e)
    fields = [repr(getattr(w, f.name)) for f in dataclasses.fields(w) if f.name != "frame"]
    return w.frame.to_json(), fields


def both(parse, module, fn: str, data: bytes, monkeypatch) -> tuple[object, object]:
    fast = outcome(parse, data)
    with monkeypatch.context() as m:
        m.setattr(module, fn, lambda data, *rest: None)
        slow = outcome(parse, data)
    return fast, slow


def v3_doc() -> dict:
    """The fixture with the awkward spellings rocprofv3 versions use: ids as text or bare numbers, a second
    process record, a dispatch seen only by its counters, a counter value that is no number."""
    doc = json.loads((DATA / "rocprofv3_results.json").read_text())
    tool = doc["rocprofiler-sdk-tool"][0]
    other = copy.deepcopy(tool)
    other["buffer_records"]["kernel_dispatch"][0]["dispatch_info"]["agent_id"] = 22
    other["buffer_records"]["kernel_dispatch"][0]["dispatch_info"]["dispatch_id"] = "7"
    other["callback_records"]["counter_collection"][0]["dispatch_data"]["dispatch_info"]["dispatch_id"] = 99
    other["callback_records"]["counter_collection"][0]["records"].append({"counter_id": {"handle": 503},
                                                                          "value": "n/a"})
    other["buffer_records"]["memory_copy"] = [{"src_agent_id": {"handle": 11}, "dst_agent_id": {"handle": 22},
                                               "bytes": 4096, "start_timestamp": 5, "end_timestamp": 905}]
    doc["rocprofiler-sdk-tool"].append(other)
    return doc


def test_rocprofv3_json_reads_as_the_stdlib_reader(monkeypatch):
    for doc in (json.loads((DATA / "rocprofv3_results.json").read_text()), v3_doc(),
                json.loads((DATA / "rocprofv3_roctx_results.json").read_text())):  # ROCTx ranges and HIP calls
        data = json.dumps(doc, indent=4).encode()
        assert rocprofv3_decode.records(data) is not None  # the fast path read it
        fast, slow = both(rocprofv3.parse_json, rocprofv3_decode, "records", data, monkeypatch)
        assert fast == slow and not isinstance(fast, str)


@pytest.mark.parametrize("edit", [
    lambda d: d["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"][0].update(start_timestamp=True),
    lambda d: d["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"][0]["dispatch_info"].update(
        agent_id=[22]),
    lambda d: d["rocprofiler-sdk-tool"][0].update(buffer_records=[]),
    lambda d: d["rocprofiler-sdk-tool"][0].update(agents=None),
    lambda d: d["rocprofiler-sdk-tool"][0].update(kernel_symbols=[[[[[[[[]]]]]]]] * 1),
    lambda d: d.update({"rocprofiler-sdk-tool": []}),
    lambda d: d["rocprofiler-sdk-tool"][0].update(buffer_records={}, callback_records={}),
    lambda d: d["rocprofiler-sdk-tool"][0]["metadata"].update(note="caf\udce9"),
])
def test_rocprofv3_json_odd_input_goes_to_the_stdlib_reader(edit, monkeypatch):
    doc = v3_doc()
    edit(doc)
    data = json.dumps(doc).encode("utf-8", "surrogateescape")
    fast, slow = both(rocprofv3.parse_json, rocprofv3_decode, "records", data, monkeypatch)
    assert fast == slow


def test_rocprofv3_json_api_call_of_another_shape_goes_to_the_stdlib_reader(monkeypatch):
    """The typed decode of the HIP calls (read only where there are ROCTx ranges) meets a call whose thread is a
    list: the stdlib reader reads the file, and both give the same."""
    doc = json.loads((DATA / "rocprofv3_roctx_results.json").read_text())
    doc["rocprofiler-sdk-tool"][0]["buffer_records"]["hip_api"][0]["thread_id"] = [4321]
    data = json.dumps(doc).encode()
    assert rocprofv3_decode.records(data) is None
    fast, slow = both(rocprofv3.parse_json, rocprofv3_decode, "records", data, monkeypatch)
    assert fast == slow and not isinstance(fast, str)


def test_rocprofv3_json_number_beyond_a_float_in_a_table_goes_to_the_stdlib_reader(monkeypatch):
    """A table the typed decode kept raw (agents) holding 1e999, which the stdlib reads as infinity."""
    doc = v3_doc()
    doc["rocprofiler-sdk-tool"][0]["agents"][0]["simd_count"] = 123456789
    data = json.dumps(doc).replace("123456789", "1e999").encode()
    assert rocprofv3_decode.records(data) is None
    fast, slow = both(rocprofv3.parse_json, rocprofv3_decode, "records", data, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize("data", [b'{"rocprofiler-sdk-tool": [{"agents": []', b'{"rocprofiler-sdk-tool": NaN}',
                                  b"[1, 2]", b"\x89PNG\r\n\x1a\n\x00\x00"])
def test_rocprofv3_json_damaged(data, monkeypatch):
    assert rocprofv3_decode.records(data) is None
    fast, slow = both(rocprofv3.parse_json, rocprofv3_decode, "records", data, monkeypatch)
    assert fast == slow and isinstance(fast, str)


def hiptrace() -> dict:
    return json.loads((DATA / "hiptrace_results.json").read_text())


def test_hiptrace_reads_as_the_stdlib_reader(monkeypatch):
    doc = hiptrace()
    doc["traceEvents"].append({"ph": "X", "name": "hipMemcpy", "pid": 2, "ts": 5, "dur": 1,
                               "args": {"args": "sizeBytes(64) kind(1)", "BeginNs": "5000", "Name": "hipMemcpy"}})
    doc["traceEvents"].append({"ph": "X", "name": "k_no_lane", "pid": 99, "ts": "7", "dur": "2",
                               "args": {"dev-id": 0, "extra": [1, {"x": 2}]}})
    data = json.dumps(doc).encode()
    assert rocprof_decode.hiptrace_events(data) is not None
    fast, slow = both(rocprof_v1.parse_hiptrace, rocprof_decode, "hiptrace_events", data, monkeypatch)
    assert fast == slow and not isinstance(fast, str)


@pytest.mark.parametrize("data", [b'{"traceEvents": [{}, {"ph": "X", "ts": true}]}', b'{"traceEvents": [{}, 5]}',
                                  b'{"traceEvents": {"a": 1}}', b'{"traceEvents": [{}, {"ph": "X", "x": "\xe9"}]}',
                                  b'{"traceEvents": [{}', b'{"other": 1}'])
def test_hiptrace_odd_input_goes_to_the_stdlib_reader(data, monkeypatch):
    assert rocprof_decode.hiptrace_events(data) is None
    fast, slow = both(rocprof_v1.parse_hiptrace, rocprof_decode, "hiptrace_events", data, monkeypatch)
    assert fast == slow


def test_whole_ns_fast_path_agrees_with_the_pattern():
    rng = np.random.default_rng(3)
    digits = [str(v) for v in rng.integers(0, 10**17, 200)] + ["0", "007", "9" * 18, "1" * 19, str(2**63 - 1)]
    texts = np.array(digits, dtype=object)
    ok, whole, frac = times.ns(texts)
    assert ok.all() and whole.tolist() == [int(t) for t in digits] and not frac.any()
    assert times.whole_ns(texts) is not None
    for odd in (["1", "2.5"], ["1", ""], [str(2**63)], ["1" * 20], ["+1"], ["1_0"], ["\u0663"], [" 1"], ["1e5"]):
        assert times.whole_ns(np.array(odd, dtype=object)) is None
