"""Queue and runtime pseudo-entries (``<barrier packet>``, ``Unknown command type``, marker packets, ``hipMemcpy…``
API rows) leave the kernels, whatever the format, and are shown once: CLI, JSON, Overview, report."""

import json
import math
from pathlib import Path

import pytest
from roofhelpers import make_hw, sample

import roofcore
from roofcore.advise import advise_all
from roofcore.cli.analysis import analysis_text
from roofcore.errors import InputError
from roofcore.ingest.pseudo import is_runtime, kind_of, runtime_line, split_runtime
from roofcore.models import RuntimeEntries, RuntimeEntry
from roofcore.output import analysis_json

DATA = Path(__file__).parent / "data" / "pseudo"
STATS = DATA / "systrace_results.stats.csv"
KERNELS = ["void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int) [clone .kd]",
           "__amd_rocclr_copyBuffer.kd", "relu_kernel(float*, int) [clone .kd]"]
HW = make_hw(100e12, 2e12)


@pytest.mark.parametrize("name, kind", [
    ("<barrier packet>", "barrier packet"), ('"<barrier packet>"', "barrier packet"), ("BarrierAnd", "barrier packet"),
    ("barrier-or packet", "barrier packet"), ("Marker", "marker packet"), ("Unknown command type", "unknown queue command"),
    ("hipMemcpy", "HIP/HSA API call"), ("hipMemcpyAsync", "HIP/HSA API call"), ("hipLaunchKernel", "HIP/HSA API call"),
    ("__hipPushCallConfiguration", "HIP/HSA API call"), ("hsa_signal_wait_scacquire", "HIP/HSA API call"),
    ("roctxRangePushA", "HIP/HSA API call"), ("cudaMemcpyAsync", "CUDA API call"), ("cuLaunchKernel", "CUDA API call"),
    ("cuMemcpyHtoDAsync_v2", "CUDA API call"),
])
def test_runtime_names_are_classified(name, kind):
    assert kind_of(name) == kind


@pytest.mark.parametrize("name", [
    "__amd_rocclr_copyBuffer.kd", "__amd_rocclr_fillBufferAligned.kd", "[CUDA memcpy HtoD]", "[CUDA memset]",
    "CopyHostToDevice", "Memcpy HtoD (Host -> Device)", "cuApplyLayerNorm", "hipcub::DeviceRadixSortOnesweepKernel",
    "void hipLaunchKernelGGL_wrapper<float>(float*)", "barrier_sync_kernel", "markers_kernel(int*)",
    "cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4", "Cijk_Ailk_Bljk_HHS_BH_MT64x64x32_ISA942", None, 3.0,
])
def test_kernels_and_copies_stay_kernels(name):
    assert kind_of(name) is None


@pytest.mark.parametrize("odd", [None, float("nan"), 7, "  \"hipMemcpyAsync\"  "])
def test_the_column_pass_agrees_with_each_name_on_its_own(odd):
    """Names repeat, so the column is matched once per distinct name (RE2 in Arrow, or name by name where one is
    no text): the rows found are those :func:`kind_of` finds one name at a time, missing names none."""
    import numpy as np
    import pandas as pd

    names = np.array(["<barrier packet>", "hipLaunchKernel", "cudaLaunchKernel", "ncclDevKernel_AllReduce_RING_LL",
                      "void gemm<float>(int, float *)", "ncclAllReduce", "__amd_rocclr_copyBuffer", "Marker", odd],
                     dtype=object)
    col = pd.Series(names[np.random.default_rng(5).integers(0, len(names), 400)], dtype=object)
    assert is_runtime(col).tolist() == [kind_of(x) is not None for x in col]
    assert is_runtime(pd.Series([], dtype=object)).tolist() == []


def test_stats_summary_keeps_only_kernels():
    w = roofcore.read(STATS)
    assert list(w.frame["name"]) == KERNELS
    assert [(e.name, e.kind, e.count) for e in w.runtime.entries] == [
        ("<barrier packet>", "barrier packet", 40), ("Unknown command type", "unknown queue command", 2),
        ("hipMemcpyAsync", "HIP/HSA API call", 4)]
    assert w.runtime.count == 46
    assert w.runtime.time_s == pytest.approx((61_200_000 + 9_000_000 + 2_400_000) * 1e-9)


def test_kineto_trace_keeps_copies_and_kernels():
    w = roofcore.read(DATA / "rocm_gpu_only.pt.trace.json")
    names = list(w.frame["name"])
    assert "<barrier packet>" not in names and "Marker" not in names
    assert "Memcpy HtoD (Host -> Device)" in names and len(names) == 3
    assert {e.name: (e.count, e.time_s) for e in w.runtime.entries} == {
        "<barrier packet>": (2, pytest.approx(500e-6)), "Marker": (1, pytest.approx(5e-6))}


def test_left_out_of_ranking_headline_and_recommendations():
    a = roofcore.analyze(roofcore.read(STATS), [HW])
    s = a.summary(HW.id)
    assert s["time_s"] == pytest.approx((30_400_000 + 1_600_000 + 675_000) * 1e-9)  # kernels only
    assert s["coverage"]["kernels"] == 3
    assert set(a.table(HW.id)["name"]) == set(KERNELS)
    advice = json.dumps([x.to_json() for x in advise_all(a).values()])
    assert "barrier" not in advice and "hipMemcpy" not in advice and "Unknown command" not in advice


def test_shown_once_in_cli_json_and_report():
    a = roofcore.analyze(roofcore.read(STATS), [HW])
    text = analysis_text(a)
    assert text.count("Runtime/queue entries: 46, 72.6 ms") == 1
    assert text.count("<barrier packet> ×40 (61.2 ms)") == 1
    doc = json.loads(analysis_json(a))
    assert doc["runtime_entries"]["count"] == 46
    assert doc["runtime_entries"]["entries"][0] == {"name": "<barrier packet>", "kind": "barrier packet",
                                                   "count": 40, "time_s": pytest.approx(0.0612)}
    assert all("barrier" not in k["name"] for k in doc["kernels"])
    from roofcore.report import build_html

    html = build_html(a, charts=False)
    assert html.count("Runtime/queue entries") == 1 and html.count("&lt;barrier packet&gt; ×40") == 1


def test_no_key_and_no_line_without_runtime_entries(tmp_path):
    p = tmp_path / "k.csv"
    p.write_text('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n"relu(float*)",2,2000,1000,100.0\n')
    w = roofcore.read(p)
    assert w.runtime is None
    a = roofcore.analyze(w, [HW])
    assert "runtime_entries" not in json.loads(analysis_json(a))
    assert "Runtime/queue" not in analysis_text(a)


def test_files_read_together_add_up(tmp_path):
    other = tmp_path / "rank1_results.stats.csv"
    other.write_text('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
                     '"<barrier packet>",10,1000000,100000,50.0\n"Marker",3,,,\n"relu(float*)",2,1000000,500000,50.0\n')
    w = roofcore.read_many([STATS, other])
    got = {e.name: (e.count, e.time_s) for e in w.runtime.entries}
    assert got["<barrier packet>"] == (50, pytest.approx(0.0622))
    assert w.runtime.count == 46 + 10 + 3
    assert "relu(float*)" in set(w.frame["name"])


def test_a_file_of_runtime_entries_only_is_refused(tmp_path):
    p = tmp_path / "only.stats.csv"
    p.write_text('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n"<barrier packet>",4,400,100,80.0\n'
                 '"Unknown command type",1,100,100,20.0\n')
    with pytest.raises(InputError, match="every row is a runtime or queue entry"):
        roofcore.read(p)


def test_unknown_times_stay_unknown():
    r = RuntimeEntries((RuntimeEntry("Marker", "marker packet", 3, math.nan),))
    assert math.isnan(r.time_s)
    assert r.to_json() == {"count": 3, "time_s": None, "entries": [{"name": "Marker", "kind": "marker packet",
                                                                   "count": 3, "time_s": None}]}
    assert runtime_line(r) == ("Runtime/queue entries: 3, time unknown (not kernels: left out of the analysis) — "
                               "Marker ×3")
    merged = r.merged(RuntimeEntries((RuntimeEntry("Marker", "marker packet", 1, 2e-6),)))
    assert merged.entries == (RuntimeEntry("Marker", "marker packet", 4, 2e-6),)


def test_split_leaves_a_workload_without_entries_as_it_is():
    w = roofcore.read(DATA.parent / "rocprof" / "results.stats.csv")
    assert split_runtime(w) is w and w.runtime is None


# ------------------------------------------------------------------------------------------ real exports


def test_real_stats_with_a_barrier_row_keeps_its_kernels(tmp_path):
    """The R9700 run's results.stats.csv as rocprof --sys-trace writes it, with a barrier row among the kernels: the
    kernels and their numbers stay as without it."""
    path = sample("rocprofv1_r9700_rdna4_llamacpp_results.stats.csv")
    text = path.read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    mixed = tmp_path / path.name
    mixed.write_text(header + '\n"<barrier packet>",96,812345678,8462,55.1\n' + rest, encoding="utf-8")
    plain, with_barrier = roofcore.read(path), roofcore.read(mixed)
    assert plain.runtime is None
    assert with_barrier.frame[["name", "count", "time_s"]].equals(plain.frame[["name", "count", "time_s"]])
    assert with_barrier.runtime.entries == (RuntimeEntry("<barrier packet>", "barrier packet", 96, 0.812345678),)


@pytest.mark.parametrize("name", [
    "rocprofv1_r9700_rdna4_llamacpp_results_multigpu_gpuid2.csv", "rocprofv1_mi300x_8gpu_gunrock_bfs_results_7kB_kernel_names.csv",
    "rocprofv1_mi300a_vecadd_hiptrace_results.json", "pytorch_kineto_mi210_rocm6.4_gpu_only.json.gz",
    "nsys_rtx5090_deepseekocr_decode_cuda_gpu_kern_sum_unquoted.csv", "rocprofv3_0.x_kernel_trace.csv",
])
def test_real_kernels_are_never_taken_for_runtime_entries(name):
    """rocclr's blit kernels, copies and every real kernel name of these exports stay kernels."""
    w = roofcore.read(sample(name))
    assert w.runtime is None
    assert not [n for n in w.frame["name"] if kind_of(n)]


@pytest.mark.usefixtures("navigation_only")  # tests/conftest.py
def test_overview_shows_them_once():
    from test_app import start, upload

    from app.markdown import unescape_markdown

    at = upload(start(), (STATS.name, STATS.read_bytes()))
    text = unescape_markdown(" ".join(c.value for c in at.caption))
    assert text.count("Runtime/queue entries: 46, 72.6 ms") == 1 and text.count("<barrier packet> ×40") == 1
