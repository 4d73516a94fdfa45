"""rocprofv3 (rocprofiler-sdk) exports: kernel trace CSV, counter collection joined to it, JSON (rocpd: test_ingest_rocpd).

Expected numbers are read from the files here, independently of the parsers, or worked out by hand from our
fixtures in tests/data/rocprof (their counters and times are ours).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from roofhelpers import col, sample

from roofcore import InputError, ingest

DATA = Path(__file__).parent / "data" / "rocprof"
SHARED = Path(__file__).parent.parent.parent / "shared" / "samples"


def raw(name: str) -> bytes:
    return (DATA / name).read_bytes()




# --------------------------------------------------------------------------------------------- kernel trace


@pytest.mark.samples
def test_real_kernel_trace_times_by_column_name():
    path = sample("rocprofv3_0.x_kernel_trace.csv")
    rows = list(csv.DictReader(path.read_text().splitlines()))
    w = ingest.read(path, name="kernel_trace.csv")
    assert w.formats == ("rocprof-v3-trace",) and len(w) == 7
    assert col(w, "row") == [r["Dispatch_Id"] for r in rows] and col(w, "name") == [r["Kernel_Name"] for r in rows]
    assert col(w, "time_s") == pytest.approx([(int(r["End_Timestamp"]) - int(r["Start_Timestamp"])) * 1e-9
                                              for r in rows], rel=1e-12)
    assert col(w, "flops") == [None] * 7 and col(w, "bytes_hbm") == [None] * 7
    assert w.warnings == (
        "kernel_trace.csv: no FLOP or byte counters in this file: the kernels' FLOPs and bytes are unknown, only their "
        "times are read. Hint: a kernel trace holds times only: collect counters in the same run (rocprofv3 "
        "--kernel-trace --pmc SQ_INSTS_VALU_FMA_F32 … -- app) and load counter_collection.csv together with this "
        "file.",)


@pytest.mark.samples
def test_real_counter_collection_alone_then_joined_to_its_trace():
    counters, trace = sample("rocprofv3_0.x_counter_collection.csv"), sample("rocprofv3_0.x_kernel_trace.csv")
    alone = ingest.read(counters, name="counter_collection.csv")
    assert col(alone, "time_s") == [None] * 7
    assert alone.warnings[0] == (
        "counter_collection.csv: no Start_Timestamp/End_Timestamp columns: kernel times are unknown. Hint: load the "
        "kernel_trace.csv of the same run (rocprofv3 --kernel-trace --pmc … -- app) together with this file: its "
        "times are joined by dispatch id.")
    rows = {r["Dispatch_Id"]: r for r in csv.DictReader(trace.read_text().splitlines())}
    w = ingest.read_many([counters, trace])
    assert w.formats == ("rocprof-v3", "rocprof-v3-trace") and len(w) == 7  # one row per dispatch, not 14
    expected = [(int(rows[d]["End_Timestamp"]) - int(rows[d]["Start_Timestamp"])) * 1e-9 for d in col(w, "row")]
    assert col(w, "time_s") == pytest.approx(expected, rel=1e-12)
    assert col(w, "name") == [rows[d]["Kernel_Name"] for d in col(w, "row")]
    assert not any("Start_Timestamp" in x for x in w.warnings)


def test_trace_joins_counters_by_dispatch_and_agent_spellings():
    """Counters (Agent_Id 1, no times) + a newer trace (Agent_Id "Agent 1", Stream_Id, CRLF): joined by dispatch id;
    a dispatch whose name differs is not joined; a trace-only dispatch stays as a time-only row."""
    w = ingest.read_many([(raw("counter_collection_v3_notime.csv"), "cc.csv"),
                          (raw("kernel_trace_v3.csv"), "kt.csv")])
    assert w.sources == ("cc.csv", "kt.csv")
    assert col(w, "name") == ["scale_kernel(float*, float, int)", "dot_kernel(float const*, float const*, float*, int)",
                              "reduce_kernel(float const*, float*, int)", "other_kernel(int*)", "tail_kernel(int*)"]
    assert col(w, "time_s") == pytest.approx([2_000e-9, 5_000e-9, None, 1_000e-9, 500e-9], nan_ok=True)
    assert col(w, "flops") == [64 * 64, 64 * 2 * 128, 64 * 10, None, None]
    assert col(w, "bytes_hbm") == [(16 + 16) * 1024, (32 + 0.25) * 1024, (1 + 1) * 1024, None, None]
    assert ("cc.csv: 1 dispatch(es) have another kernel name in kt.csv (another run?): not joined, their times are "
            "unknown.") in w.warnings


def test_agent_info_names_the_device():
    w = ingest.read_many([(raw("kernel_trace_v3.csv"), "kt.csv"), (raw("agent_info.csv"), "agent_info.csv")])
    assert w.device == "AMD Instinct MI210" and w.meta["arch"] == "gfx90a" and w.meta["cu_per_gpu"] == "110"
    with pytest.raises(InputError) as e:
        ingest.read(raw("agent_info.csv"), name="agent_info.csv")
    assert str(e.value) == (
        "agent_info.csv: this is rocprofv3's agent_info.csv (the CPUs and GPUs of the run: name, arch, CUs), context "
        "for its kernel trace or counters, not a workload. Hint: load it together with the workload file it belongs "
        "to.")


def test_trace_alone_reads_agent_labels_as_written():
    w = ingest.read(raw("kernel_trace_v3.csv"), name="kt.csv")
    assert col(w, "gpu") == ["Agent 1"] * 4 and col(w, "row") == ["1", "2", "3", "4"]
    assert col(w, "time_s") == pytest.approx([2e-6, 5e-6, 1e-6, 5e-7])


# --------------------------------------------------------------------------------------------- JSON


def test_json_dispatches_symbols_counters_and_copies():
    w = ingest.read(raw("rocprofv3_results.json"), name="results.json")
    assert w.formats == ("rocprof-v3-json",) and w.device == "AMD Instinct MI300X" and w.meta["arch"] == "gfx942"
    assert col(w, "name") == ["gemm_bf16()", "softmax_rows(float*)", "CopyHostToDevice"]
    assert col(w, "row") == ["1", "2", "copy 0"] and col(w, "gpu") == ["GPU 0"] * 3
    assert col(w, "time_s") == pytest.approx([25_000e-9, 4_000e-9, 10_000e-9])
    # 512 × MFMA_MOPS_BF16; dispatch 2 has no counter record: unknown, not zero; the copy does no math
    assert col(w, "flops") == [512 * 1000, None, 0.0] and col(w, "precision") == ["bf16", None, None]
    assert col(w, "bytes_pcie") == [None, None, 65536] and col(w, "bytes_hbm") == [None, None, 65536]


@pytest.mark.parametrize("size", [b"1e999", b"1.7e308", b"-1", b'"64 KiB"'])
def test_json_copy_byte_count_out_of_range_is_unknown(size):
    """A byte count a decoder reads as infinity (1e999), one that doubles past the float limit at HBM (a
    device-to-device copy counts it twice), a negative one or text: the copy's bytes are unknown and said so,
    never infinite (the fuzz test found `1e99965536`)."""
    data = raw("rocprofv3_results.json").replace(b'"bytes": 65536', b'"bytes": ' + size)
    d2d = data.replace(b'"handle": 11\n      },\n      "bytes"', b'"handle": 22\n      },\n      "bytes"')
    assert d2d != data
    for doc in (data, d2d) if size != b"1.7e308" else (d2d,):
        w = ingest.read(doc, name="r.json")
        assert col(w, "bytes_hbm")[2] is None and col(w, "bytes_pcie")[2] is None
        assert any("1 of 1 copies have no byte count" in m for m in w.warnings)


def test_json_counters_repeated_for_a_dispatch_are_summed():
    doc = json.loads(raw("rocprofv3_results.json"))
    tool = doc["rocprofiler-sdk-tool"][0]
    tool["counters"].append({"id": {"handle": 504}, "name": "FETCH_SIZE"})
    tool["counters"].append({"id": {"handle": 505}, "name": "WRITE_SIZE"})
    tool["callback_records"]["counter_collection"][0]["records"] += [
        {"counter_id": {"handle": 504}, "value": 10.0}, {"counter_id": {"handle": 504}, "value": 6.0},
        {"counter_id": {"handle": 505}, "value": 4.0}]
    w = ingest.read(json.dumps(doc).encode(), name="r.json")
    assert col(w, "bytes_hbm")[0] == (10 + 6 + 4) * 1024
    tool["callback_records"]["counter_collection"][0]["records"].append({"counter_id": {"handle": 505}, "value": "n/a"})
    w = ingest.read(json.dumps(doc).encode(), name="r.json")
    assert col(w, "bytes_hbm")[0] is None  # a value that is not a number: unknown, said once
    assert ("r.json: WRITE_SIZE: 1 value(s) missing or not a non-negative number (first: dispatch 1, 'not a "
            "number'); what needs it is unknown for those dispatches.") in w.warnings


@pytest.mark.parametrize("doc,message", [
    ({"rocprofiler-sdk-tool": [{"agents": [], "buffer_records": {}}]},
     "r.json: no kernel dispatch, counter or copy records (buffer_records.kernel_dispatch, callback_records."
     "counter_collection, buffer_records.memory_copy are empty or absent). Hint: profile with `rocprofv3 "
     "--kernel-trace --output-format json -- app`."),
    ({"rocprofiler-sdk-tool": "x"},
     "r.json: expected a \"rocprofiler-sdk-tool\" list of process records, found list. Hint: load the results.json "
     "that `rocprofv3 --output-format json` wrote."),
])
def test_json_refusals(doc, message):
    with pytest.raises(InputError) as e:
        ingest.read(json.dumps(doc).encode(), name="r.json")
    assert str(e.value).replace("found str", "found list") == message


T0 = 7_000_000_000_000_000  # the JSON fixture's first dispatch start (ns)


def _with_roctx(calls: bool = True, kinds: bool = True) -> dict:
    """The JSON fixture's run with ROCTx ranges on its dispatching thread (4321) as rocprofv3 writes them: marker
    records of a MARKER kind whose text `strings.marker_api` holds by correlation id, and (``calls``) the HIP calls
    that enqueued dispatch 2 and the copy."""
    doc = json.loads((DATA / "rocprofv3_results.json").read_text())
    tool = doc["rocprofiler-sdk-tool"][0]

    def rec(kind: int, corr: int, start: int, end: int) -> dict:
        return {"size": 72, "kind": kind, "operation": 1, "correlation_id": {"internal": corr, "external": 0},
                "start_timestamp": T0 + start, "end_timestamp": T0 + end, "thread_id": 4321}

    tool["buffer_records"]["marker_api"] = [rec(6, 10, -10_000, 60_000), rec(6, 11, -5_000, 20_000),
                                            rec(6, 13, -9_000, -8_000), rec(7, 14, -7_000, 70_000)]
    if calls:
        tool["buffer_records"]["hip_api"] = [rec(3, 2, 15_000, 15_100), rec(3, 3, 39_000, 39_500)]
    names = [{"kind": k, "operations": []} for k in ("NONE", "KERNEL_DISPATCH", "MEMORY_COPY", "HIP_RUNTIME_API",
                                                       "HSA_CORE_API", "HSA_AMD_EXT_API", "MARKER_CORE_API",
                                                       "MARKER_CONTROL_API")]
    tool["strings"] = {"marker_api": [{"key": 10, "value": "step"}, {"key": 11, "value": "attention"},
                                      {"key": 13, "value": "roctxGetThreadId"}, {"key": 14, "value": "paused"}],
                       **({"buffer_records": names} if kinds else {})}
    return doc


@pytest.mark.parametrize("calls", [True, False])
def test_json_roctx_ranges_name_each_dispatch_by_its_launch_call(calls):
    """A dispatch gets the innermost range around the HIP call that enqueued it (dispatch 2 was queued inside
    "attention" and ran after it closed); without that call, the innermost holding its GPU start (on its thread; a
    copy with no thread recorded, on any). roctxGetThreadId and a control call's record are no ranges. The compiled
    decoder and the stdlib reader give the same."""
    from roofcore.hierarchy import SEP
    from roofcore.ingest import rocprofv3, rocprofv3_decode
    from roofcore.ingest.roctx import Marks

    doc = _with_roctx(calls)
    data = json.dumps(doc).encode()
    w = ingest.read(data, name="results.json")
    paths = w.frame["nvtx"].tolist()
    assert paths == ([f"step{SEP}attention", f"step{SEP}attention", "step"] if calls else
                     [f"step{SEP}attention", "step", "step"])  # the copy has no thread: any thread's range holds it
    assert w.frame["start_s"].tolist() == pytest.approx([T0 * 1e-9, (T0 + 30_000) * 1e-9, (T0 + 40_000) * 1e-9])
    marks = Marks([], {})
    got = rocprofv3.json_records(data, "results.json", marks)
    fast = Marks([], {})
    assert rocprofv3_decode.records(data, fast) == got and fast == marks  # the two readers agree
    assert len(marks.ranges) == 2
    note = next(m for m in w.warnings if m.startswith("ROCTx ranges from results.json"))
    assert note.startswith("ROCTx ranges from results.json: 3 of 3 dispatches and copies ran inside a range")


def test_json_roctx_without_kind_names_and_without_ranges():
    """Without `strings.buffer_records` (the kinds' names) the marker records with a text are ranges still; a run
    with marker records but no range text reads as before, with no nvtx column."""
    doc = _with_roctx(kinds=False)
    assert ingest.read(json.dumps(doc).encode(), name="r.json").frame["nvtx"].notna().all()
    doc["rocprofiler-sdk-tool"][0]["strings"]["marker_api"] = []
    w = ingest.read(json.dumps(doc).encode(), name="r.json")
    assert "nvtx" not in w.frame.columns and not any("ROCTx" in m for m in w.warnings)
