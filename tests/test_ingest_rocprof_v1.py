"""rocprof (v1) exports beyond results.csv: ``--stats`` summaries, ``--hip-trace`` JSON, glitched timestamps.

Expected numbers are read from the files here, independently of the parsers (csv / json / regex), or worked out by
hand from our fixtures in tests/data/rocprof.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest
from roofhelpers import col, sample

from roofcore import InputError, ingest

DATA = Path(__file__).parent / "data" / "rocprof"
SHARED = Path(__file__).parent.parent.parent / "shared" / "samples"




# --------------------------------------------------------------------------------------------- --stats


def test_stats_fixture_is_time_only_per_kernel_name():
    w = ingest.read((DATA / "results.stats.csv").read_bytes(), name="results.stats.csv")  # CRLF, quoted commas
    assert w.formats == ("rocprof-v1-stats",) and w.meta == {"time_only": "true", "profiler": "rocprof --stats"}
    assert col(w, "name") == ["saxpy_kernel(float, float const*, float*, int) [clone .kd]",
                              "fill_kernel(float*, int) [clone .kd]"]
    assert col(w, "count") == [4, 2] and col(w, "time_s") == pytest.approx([120_000e-9, 30_000e-9])
    assert col(w, "flops") == [None, None] and w.byte_columns == []
    assert w.warnings == (
        "results.stats.csv: a time per kernel name only (no counters): FLOPs and bytes are unknown. Hint: profile "
        "with counters (rocprof -i input.txt with a pmc: line, or rocprof-compute's pmc_perf.csv), or load this file "
        "with an inventory of the kernels' FLOPs and bytes to join them by name.",)


@pytest.mark.parametrize("body,message", [
    ('"hipMemcpy",3,1000,333,90.0\n"hipMalloc",3,100,33,10.0\n',
     "x.csv: this is an API call summary (host-side calls: rocprof's hip_stats.csv or hsa_stats.csv, rocprofv3's "
     "hip_api_stats.csv), not a kernel summary. Hint: load the kernel summary written beside it: results.stats.csv "
     "(rocprof --stats), or <pid>_kernel_stats.csv (rocprofv3 --kernel-trace --stats --output-format csv)."),
    ('"CopyHostToDevice",2,1000,500,60.0\n"CopyDeviceToHost",1,500,500,40.0\n',
     "x.csv: these are memory copy statistics (rocprof's copy_stats.csv), not GPU kernels. Hint: load "
     "results.stats.csv, the kernel summary written beside it."),
    ('"k",many,1000,500,60.0\n',
     "x.csv: line 2: no usable rows; the first problem: Calls 'many' is not a count. Hint: load the file as the "
     "profiler wrote it."),
    ("",
     "x.csv: expected a row per kernel under the header, found a header only. Hint: the profiled program launched no "
     "kernels; profile again."),
])
def test_stats_refusals(body, message):
    data = ('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n' + body).encode()
    with pytest.raises(InputError) as e:
        ingest.read(data, name="x.csv")
    assert str(e.value) == message


def test_stats_negative_total_is_unknown_and_named():
    data = b'"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n"k",2,-5,1,100.0\n'
    w = ingest.read(data, name="x.csv")
    assert col(w, "time_s") == [None] and col(w, "count") == [2]
    assert "x.csv: k: total time -5 ns is not a positive number; its time is left unknown." in w.warnings


@pytest.mark.samples
def test_real_stats_sample():
    path = sample("rocprofv1_mi300a_vecadd_results.stats.csv")
    rows = list(csv.DictReader(path.read_text().splitlines()))
    w = ingest.read(path)
    assert w.formats == ("rocprof-v1-stats",)  # not an inventory
    assert col(w, "name") == [r["Name"] for r in rows]
    assert col(w, "count") == [int(r["Calls"]) for r in rows]
    assert col(w, "time_s") == pytest.approx([int(r["TotalDurationNs"]) * 1e-9 for r in rows])
    assert col(w, "flops") == [None]


# --------------------------------------------------------------------------------------------- --hip-trace


def test_hiptrace_fixture_kernels_and_copies():
    w = ingest.read((DATA / "hiptrace_results.json").read_bytes(), name="hiptrace_results.json")
    assert ingest.detect((DATA / "hiptrace_results.json").read_bytes(), "x.json").name == "rocprof-v1-hiptrace"
    assert w.formats == ("rocprof-v1-hiptrace",) and w.meta["profiler"] == "rocprof --hip-trace"
    assert col(w, "name") == ["saxpy_kernel(float, float const*, float*, int)", "fill_kernel(float*, int)",
                              "CopyHostToDevice", "CopyDeviceToDevice", "CopyDeviceToHost", "CopyHostToDevice"]
    # kernels: BeginNs/EndNs, else ts/dur in µs (strings); no counters
    assert col(w, "time_s")[:2] == pytest.approx([12_500e-9, 3_500e-9])
    assert col(w, "flops") == [None, None, 0.0, 0.0, 0.0, 0.0]  # a copy does no math
    # copies paired in order with the hipMemcpy calls of their direction; host copies over PCIe and at HBM,
    # device-to-device read + write at HBM; the async call without sizeBytes leaves its copy unknown
    assert col(w, "bytes_pcie") == [None, None, 1_048_576.0, None, 2_097_152.0, None]
    assert col(w, "bytes_hbm") == [None, None, 1_048_576.0, 2 * 4096.0, 2_097_152.0, None]
    assert col(w, "group") == [None, None, "memcpy", "memcpy", "memcpy", "memcpy"]
    assert w.warnings[-1] == ("hiptrace_results.json: 1 of 4 copies have no size in the trace (their calls give no "
                              "sizeBytes(…), or they are host-to-host): their bytes are unknown.")


def test_a_kineto_trace_is_not_claimed():
    kineto = json.dumps({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2.0, "args": {}}]})
    assert ingest.detect(kineto.encode(), "t.json").name == "pytorch-trace"


def test_hiptrace_with_only_api_calls_is_refused():
    data = json.dumps({"traceEvents": [{}, {"ph": "X", "name": "hipMalloc", "pid": "2", "ts": "1", "dur": "2",
                                            "args": {"BeginNs": "1000", "EndNs": "3000", "args": "( size(8))"}}]})
    with pytest.raises(InputError) as e:
        ingest.read(data.encode(), name="r.json")
    assert str(e.value) == ("r.json: no GPU kernel or copy events among 2 trace events (only host API calls, or an "
                            "empty trace). Hint: profile a program that launches kernels, with `rocprof --hip-trace "
                            "--timestamp on`.")


@pytest.mark.samples
def test_real_hiptrace_sample():
    path = sample("rocprofv1_mi300a_vecadd_hiptrace_results.json")
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("ph") == "X"]
    kernel = next(e for e in events if e["pid"] == "10")  # the GPU4 lane
    copies = [e for e in events if e["name"].startswith("Copy")]
    sizes = [int(m.group(1)) for e in events if e["name"] == "hipMemcpy"
             for m in [re.search(r"sizeBytes\((\d+)\)", e["args"]["args"])]]
    w = ingest.read(path)
    assert w.formats == ("rocprof-v1-hiptrace",)
    kernels = w.frame[w.frame["group"].isna()]
    assert kernels["name"].tolist() == [kernel["name"]] and pd_isnan(kernels["flops"].iloc[0])
    assert kernels["time_s"].iloc[0] == pytest.approx((int(kernel["args"]["EndNs"]) - int(kernel["args"]["BeginNs"]))
                                                      * 1e-9)
    moved = w.frame[w.frame["group"] == "memcpy"]
    assert moved["name"].tolist() == [c["name"] for c in copies] and (moved["flops"] == 0).all()
    assert moved["bytes_pcie"].tolist() == sizes  # H2D, H2D, D2H: each its call's sizeBytes
    assert moved["time_s"].tolist() == pytest.approx([int(c["args"]["DurationNs"]) * 1e-9 for c in copies])


def pd_isnan(x: float) -> bool:
    return isinstance(x, float) and math.isnan(x)


# --------------------------------------------------------------------------------------------- glitched timestamps


@pytest.mark.samples
def test_real_negative_durations_are_unknown_and_named():
    path = sample("rocprofv1_rdna_results_SUBSET_negative_durations.csv")
    rows = list(csv.DictReader(path.read_text().splitlines()))
    spans = [int(r["EndNs"]) - int(r["BeginNs"]) for r in rows]
    w = ingest.read(path)
    assert w.formats == ("rocprof-v1",) and len(w) == len(rows) == 20
    expected = [s * 1e-9 if s > 0 else None for s in spans]
    assert col(w, "time_s") == pytest.approx(expected, nan_ok=True)
    bad = [r["Index"] for r, s in zip(rows, spans, strict=True) if s <= 0]
    assert len(bad) == 2 and sum(t is not None for t in col(w, "time_s")) == 18
    named = [x for x in w.warnings if "its time is left unknown" in x]
    assert [re.search(r"dispatch (\d+) ", x).group(1) for x in named] == bad
    assert named[0].endswith("EndNs − BeginNs = -756 ns; its time is left unknown. Hint: the profiler recorded the "
                             "end before the start (a timestamp glitch); the other dispatches are kept.")
