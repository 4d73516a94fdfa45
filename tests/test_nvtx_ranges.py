"""NVTX / ROCTx ranges as kernel ancestry (issue 27 point 1): Nsight Systems nvtx_kern_sum, nvtx_gpu_proj_trace read
with cuda_gpu_trace, rocprofv3 marker_api_trace read with kernel_trace; group sums equal the kernel totals and kernels
outside every range are "outside"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from roofhelpers import make_hw

import roofcore
from roofcore import ingest
from roofcore.analyze import analyze
from roofcore.errors import InputError
from roofcore.hierarchy import OUTSIDE, SEP, group, levels_of

DATA = Path(__file__).parent / "data"
NSYS, V3 = DATA / "nsys", DATA / "rocprofv3"
HW = make_hw()


def _nvtx(w) -> list:
    return [x if isinstance(x, str) else None for x in w.frame["nvtx"]]


def _sums_hold(w) -> None:
    """Every level-1 group and every tree node: the top-level rows' sums are the kernel totals."""
    g = group(analyze(w, HW), by="nvtx:1")
    f = w.frame
    assert g["launches"].sum() == f["count"].sum()
    assert g["time_s"].sum() == pytest.approx(f["time_s"].sum(), rel=1e-12)
    tree = group(analyze(w, HW), by="nvtx")
    top = tree[tree["parent"].isna()]
    assert top["time_s"].sum() == pytest.approx(f["time_s"].sum(), rel=1e-12)
    assert tree["self_time_s"].sum() == pytest.approx(f["time_s"].sum(), rel=1e-12)


def test_nvtx_kern_sum_rows_are_kernels_with_their_range():
    w = roofcore.read(NSYS / "nvtx_kern_sum.csv")
    assert w.formats == ("nsys-nvtx-kern-sum",) and w.meta["time_only"] == "true"
    f = w.frame
    assert _nvtx(w) == ["decode", "decode", "prefill", None]  # ":decode" (default domain) -> decode
    assert f["count"].tolist() == [16, 8, 2, 3]  # Kern Inst
    assert f["time_s"].tolist() == pytest.approx([320e-6, 48e-6, 900e-6, 15e-6])
    assert "nvtx" in levels_of(w)
    g = group(analyze(w, HW), by="nvtx").set_index("group")
    assert g.loc[OUTSIDE, "launches"] == 3 and g.loc["decode", "launches"] == 24
    assert g.loc["decode", "time_s"] == pytest.approx(368e-6)
    _sums_hold(w)
    assert not any("more than one NVTX range" in x for x in w.warnings)


def test_nvtx_kern_sum_nested_ranges_are_counted_once_per_range_and_said():
    w = roofcore.read(NSYS / "nvtx_kern_sum_nested.csv")
    said = [x for x in w.warnings if "more than one NVTX range" in x]
    assert len(said) == 1 and said[0].startswith("1 kernel name(s)") and "nvtx_gpu_proj_trace" in said[0]


def test_nvtx_sum_is_still_refused_and_kern_sum_detected():
    assert ingest.detect((NSYS / "nvtx_kern_sum.csv").read_bytes(), "x.csv").name == "nsys-nvtx-kern-sum"
    body = ("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n"
            "60.0,600,6,100.0,100.0,90,110,5.0,PushPop,:forward\n")
    with pytest.raises(InputError, match="nvtx_sum"):
        roofcore.read(body.encode(), name="nvtx_sum.csv")


def test_projected_ranges_give_each_launch_its_innermost_range():
    w = ingest.read_many([NSYS / "cuda_gpu_trace_nvtx.csv", NSYS / "nvtx_gpu_proj_trace.csv"])
    f = w.frame
    assert _nvtx(w) == [f"step{SEP}forward", f"step{SEP}forward", f"step{SEP}backward", None]
    assert f["start_s"].tolist() == pytest.approx([1e-6, 1.2e-6, 1.4e-6, 5e-6])
    assert any("3 of 4 kernel launches lie inside a projected range" in x for x in w.warnings)
    g = group(analyze(w, HW), by="nvtx").set_index("group")
    assert g.loc["step", "launches"] == 3 and g.loc["step", "self_launches"] == 0  # total: with descendants
    assert g.loc[OUTSIDE, "launches"] == 1
    _sums_hold(w)


def test_a_launch_that_outlasts_the_innermost_range_climbs_to_its_parent():
    trace = (NSYS / "cuda_gpu_trace_nvtx.csv").read_text().replace("\n1200,100,", "\n1250,100,")  # ends at 1350 > 1300
    w = ingest.read_many([(trace.encode(), "trace.csv"), NSYS / "nvtx_gpu_proj_trace.csv"])
    assert _nvtx(w)[1] == "step"


def test_the_gpu_trace_alone_has_no_nvtx_column():
    w = roofcore.read(NSYS / "cuda_gpu_trace_nvtx.csv")
    assert "nvtx" not in w.frame.columns and "start_s" not in w.frame.columns


def test_roctx_ranges_on_the_launching_thread():
    w = ingest.read_many([V3 / "9_kernel_trace.csv", V3 / "9_marker_api_trace.csv"])
    f = w.frame
    # the "loader" range of thread 11 holds every start but is not the launching thread's; the mark (start = end),
    # the control call and roctxGetThreadId are not ranges
    assert _nvtx(w) == [f"iteration{SEP}attention", f"iteration{SEP}attention", f"iteration{SEP}mlp",
                                  "iteration", None]
    assert f["start_s"].to_numpy() == pytest.approx(np.array([1200, 1600, 3200, 6500, 9800]) / 1e9)
    g = group(analyze(w, HW), by="nvtx").set_index("group")
    assert g.loc["iteration", "launches"] == 4 and g.loc["iteration", "self_launches"] == 1
    assert g.loc[OUTSIDE, "launches"] == 1
    _sums_hold(w)


def test_roctx_ranges_in_a_run_folder_use_its_hip_trace_for_the_launch_calls(tmp_path):
    """rocprofv3 --sys-trace writes the HIP API trace beside the kernel and marker traces: in a folder (or its
    archive) its calls place each dispatch by the call that enqueued it (Correlation_Id), so up_proj_kernel, queued
    inside "attention" but run during "mlp", is attention's; the trace is then read, not left out. Without a
    marker trace it is left out as before (tests/test_api_traces.py)."""
    import shutil

    for name in ("9_kernel_trace.csv", "9_marker_api_trace.csv"):
        shutil.copy(V3 / name, tmp_path / name)
    (tmp_path / "9_hip_api_trace.csv").write_text(
        '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
        '"HIP_RUNTIME_API","hipMalloc",9,9,3,200,300\n"HIP_RUNTIME_API","hipLaunchKernel",9,9,13,2500,2520\n')
    w = ingest.read_many([tmp_path])
    assert _nvtx(w) == [f"iteration{SEP}attention"] * 3 + ["iteration", None]
    note = next(m for m in w.warnings if m.startswith("ROCTx ranges from"))
    assert "(launch calls from " in note and "9_hip_api_trace.csv" in note and "for the 4 whose call" in note
    assert not any(m.startswith("Left out") for m in w.warnings), w.warnings
    uploads = [(p.read_bytes(), p.name) for p in sorted(tmp_path.iterdir())]  # the app's upload of the same files
    assert _nvtx(ingest.read_many(sorted(tmp_path.iterdir()))) == _nvtx(w)  # the same files named one by one
    (tmp_path / "9_hip_api_trace.csv").write_text(  # calls that enqueued no dispatch here: still left out, and said
        '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
        '"HIP_RUNTIME_API","hipMalloc",9,9,3,200,300\n')
    unused = ingest.read_many([tmp_path])
    assert any(m.startswith("Left out 1 file(s)") and "9_hip_api_trace.csv" in m for m in unused.warnings)
    assert _nvtx(ingest.read_many(uploads, together=True)) == _nvtx(w)
    (tmp_path / "9_marker_api_trace.csv").unlink()
    w = ingest.read_many([tmp_path])
    assert "nvtx" not in w.frame.columns and any(m.startswith("Left out 1 file(s)") for m in w.warnings)


def test_launch_calls_read_alike_by_pyarrow_and_row_by_row():
    """The API trace's calls by pyarrow, and row by row where a damaged cell makes pyarrow refuse the file: the
    same calls, the damaged one left out; other domains (markers) and reversed times are no calls."""
    from roofcore.ingest.roctx import launch_calls

    head = '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
    rows = ('"HIP_RUNTIME_API","hipLaunchKernel",9,9,13,2500,2520\n"HSA_CORE_API","hsa_signal_store",9,10,14,7,8\n'
            '"MARKER_CORE_API","step",9,9,15,1,9\n"HIP_RUNTIME_API","hipMemcpy",9,9,16,30,20\n')
    ctx = {"roctx_ranges": {"source": "m.csv"}}
    clean = launch_calls(ctx, [(lambda: (head + rows).encode(), "a.csv")])["roctx_calls"]
    damaged = launch_calls(ctx, [(lambda: (head + rows + '"HIP_RUNTIME_API","hipFree",9,9,17,12x,40\n').encode(),
                                  "b.csv")])["roctx_calls"]
    for got in (clean, damaged):
        assert list(got["corr"]) == ["13", "14"] and list(got["thread"]) == ["9", "10"]
        assert list(got["start"]) == pytest.approx([2500e-9, 7e-9]) and list(got["end"]) == pytest.approx([2520e-9, 8e-9])
    assert launch_calls({}, [(lambda: b"", "c.csv")]) == {}  # no ranges: the traces are not even read


def test_roctx_without_thread_ids_takes_the_shortest_range_of_any_thread():
    text = (V3 / "9_kernel_trace.csv").read_text().replace('"Thread_Id",', "").replace(",0,9,", ",0,")
    w = ingest.read_many([(text.encode(), "1_kernel_trace.csv"), V3 / "9_marker_api_trace.csv"])
    # thread 11's "loader" (1000-9500) now holds the first four starts too: the shorter range of thread 9 wins
    assert _nvtx(w) == [f"iteration{SEP}attention", f"iteration{SEP}attention", f"iteration{SEP}mlp", "iteration",
                        None]
    assert any(x.startswith("4 dispatches start inside ranges of more than one thread") for x in w.warnings)


@pytest.mark.parametrize("path, what", [
    (V3 / "9_marker_api_trace.csv", "this is a rocprofv3 ROCTx marker trace"),
    (NSYS / "nvtx_gpu_proj_trace.csv", "this is an Nsight Systems nvtx_gpu_proj_trace"),
])
def test_ranges_alone_are_context_not_a_workload(path, what):
    with pytest.raises(InputError) as e:
        roofcore.read(path)
    assert "\n" not in str(e.value) and what in str(e.value) and "not a workload" in str(e.value)


@pytest.mark.parametrize("name, body, said", [
    ("m_marker_api_trace.csv", '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp",'
     '"End_Timestamp"\n"MARKER_CORE_API","tick",1,1,1,100,100\n"MARKER_CORE_API","x",1,1,2,1e,9\n',
     "not a workload"),
    ("nvtx_kern_sum.csv", "NVTX Range,Style,PID,TID,NVTX Inst,Kern Inst,Total Time (ns),Avg (ns),Med (ns),Min (ns),"
     "Max (ns),StdDev (ns),Kernel Name\n:a,PushPop,1,1,1,x,y,1,1,1,1,0,\n", "no usable nvtx_kern_sum rows"),
    ("proj.csv", "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,"
     "NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack\n,1,1,1,1,PushPop,1,1,1,0,0,1,,:1\n",
     "not a workload"),
    ("proj_us.csv", "Name,Projected Start (parsec),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,"
     "PID,TID,NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack\n:a,1,1,1,1,PushPop,1,1,1,0,0,1,,:1\n",
     "a time unit (ns, us, ms or s)"),
])
def test_bad_range_files_give_one_line(name, body, said):
    with pytest.raises(InputError) as e:
        roofcore.read(body.encode(), name=name)
    assert "\n" not in str(e.value) and said in str(e.value)


def test_a_marker_trace_without_ranges_leaves_the_kernel_trace_as_it_was():
    marks = ('"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
             '"MARKER_CORE_API","tick",9,9,1,1300,1300\n')
    w = ingest.read_many([V3 / "9_kernel_trace.csv", (marks.encode(), "9_marker_api_trace.csv")])
    assert len(w) == 5 and "nvtx" not in w.frame.columns


def test_ranges_survive_a_join_with_an_inventory_and_with_counters():
    inv = b"name,count,flops,bytes\ngemv_fp16_kernel,1,2e6,4e6\n"
    w = ingest.read_many([NSYS / "nvtx_kern_sum.csv", (inv, "inv.csv")])  # nsys.join_times
    assert _nvtx(w) == ["decode", "decode", "prefill", None] and w.frame["flops"].iloc[0] == pytest.approx(32e6)
    _sums_hold(w)
    join = DATA / "join"
    proj = (b"Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,"
            b"NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack\n:step,2000000,20000,1990000,40000,PushPop,1,1,3,0,0,"
            b"1,,:1\n")
    w = ingest.read_many([join / "cuda_gpu_trace.csv", join / "ncu_details.csv", (proj, "proj.csv")])  # ingest.join
    assert w.formats == ("nsys-gpu-trace", "ncu-details") and _nvtx(w)[:3] == ["step", "step", None]
    _sums_hold(w)


@pytest.mark.parametrize("order", ["proj first", "trace first"])
def test_both_reports_in_one_stdout(order):
    proj = (NSYS / "nvtx_gpu_proj_trace.csv").read_text()
    trace = (NSYS / "cuda_gpu_trace_nvtx.csv").read_text()
    parts = [proj, trace] if order == "proj first" else [trace, proj]
    text = "\n".join(f"Processing [r.sqlite] with [/opt/nsys/reports/{n}.py]... \n{p}" for n, p in
                     zip(("a", "b"), parts, strict=True))
    assert ingest.detect(text.encode(), "stdout.txt").name == "nsys-gpu-trace"
    w = roofcore.read(text.encode(), name="stdout.txt")
    assert _nvtx(w) == [f"step{SEP}forward", f"step{SEP}forward", f"step{SEP}backward", None]


def test_nested_kern_sum_rows_made_exclusive_by_the_projections_range_tree():
    three = ((NSYS / "nvtx_kern_sum_nested.csv").read_text()
             + ":attn,PushPop,7,7,2,1,50000,50000,50000,50000,50000,0,gemm_kernel\n")
    proj = ((NSYS / "nvtx_gpu_proj_trace_nested.csv").read_text()
            + ":attn,1000,500,960,600,PushPop,7,7,1,2,0,5,2,:1:2:5\n")
    w = ingest.read_many([(three.encode(), "kern.csv"), (proj.encode(), "proj.csv")])
    got = dict(zip(_nvtx(w), zip(w.frame["count"], w.frame["time_s"], strict=True), strict=True))
    # step 4 launches (400 µs) hold forward 2 (190 µs), which holds attn 1 (50 µs): each keeps its own
    assert got == {"step": (2, pytest.approx(210e-6)), f"step{SEP}forward": (1, pytest.approx(140e-6)),
                   f"step{SEP}forward{SEP}attn": (1, pytest.approx(50e-6))}
    assert w.frame["count"].sum() == 4 and w.frame["time_s"].sum() == pytest.approx(400e-6)
    assert not any("more than one NVTX range" in x for x in w.warnings)
    _sums_hold(w)


def test_a_range_name_under_two_parents_leaves_the_rows_as_nsys_counts_them():
    proj = ((NSYS / "nvtx_gpu_proj_trace_nested.csv").read_text()
            + ":forward,20000,100,19990,200,PushPop,7,7,1,0,0,9,,:9\n")
    w = ingest.read_many([NSYS / "nvtx_kern_sum_nested.csv", (proj.encode(), "proj.csv")])
    assert w.frame["count"].tolist() == [4, 2]
    assert any("'forward' has more than one enclosing range name" in x for x in w.warnings)
