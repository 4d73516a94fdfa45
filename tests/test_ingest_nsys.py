"""Nsight Systems kernel summaries (CSV variants, console tables) and joining their times to a model."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from roofhelpers import mutated

from roofcore import InputError, analyze, ingest, load_catalogs
from roofcore.ingest import nsys
from roofcore.ingest.nsys import join_times
from roofcore.models import Workload

DATA = Path(__file__).parent / "data" / "nsys"
SAMPLES = Path(__file__).parent.parent.parent / "shared" / "samples"


def read(name: str) -> Workload:
    return ingest.read(DATA / name, name=name)


def col(w: Workload, c: str) -> list:
    return w.frame[c].tolist()


def message(data: bytes, name: str = "k.csv") -> str:
    with pytest.raises(InputError) as e:
        nsys.parse(data, name)
    return str(e.value)


def test_cuda_gpu_kern_sum_csv():
    w = read("kern_sum.csv")
    assert w.formats == ("nsys-kern-sum",) and w.meta["time_only"] == "true" and w.meta["profiler"] == "Nsight Systems"
    assert col(w, "name") == ["void gemm_kernel<float, 128>(const float *, const float *, float *, int)",
                              "relu_kernel(float *)", "memset_kernel(void *, int)"]
    assert col(w, "count") == [100, 300, 50]
    assert col(w, "time_s") == [5e-3, 3e-3, 5e-4]  # Total Time, all instances
    assert np.isnan(w.frame["flops"]).all() and w.byte_columns == []
    assert col(w, "row") == ["2", "3", "4"] and w.skipped == ()


def test_older_gpukernsum_header():
    w = read("gpukernsum_old.csv")
    assert col(w, "name") == ["burn(float *, int, int)", "init_kernel"]
    assert col(w, "count") == [10, 20] and col(w, "time_s") == [8e-4, 2e-4]


def test_timeunit_suffix():
    w = read("kern_sum_timeunit_us.csv")
    assert col(w, "count") == [25] and col(w, "time_s") == [1250.5e-6]


def test_stdout_with_several_reports_and_crlf():
    w = read("stats_stdout_csv.txt")
    assert col(w, "name") == ["saxpy(int, float, const float *, float *)", "fill_kernel"]
    assert col(w, "count") == [1010, 1010] and col(w, "time_s") == [6e-3, 2e-3]


def test_console_table_uses_the_rule_row_for_columns():
    w = read("console.txt")
    assert w.meta["nsys_layout"] == "console"
    assert col(w, "name") == ["void conv_fwd<float, 3>(const float *, float *, int)", "bias_add"]
    assert col(w, "count") == [2048, 512]  # thousands separators
    assert col(w, "time_s") == [10_485_760e-9, 1_011_712e-9]


@pytest.mark.samples
def test_sample_console_a100_vectoradd():
    path = SAMPLES / "nsys_stats_console_a100_vectoradd.txt"
    if not path.exists():
        pytest.skip("../shared/samples/nsys_stats_console_a100_vectoradd.txt is not here (real exports live outside "
                    "the repository)")
    w = ingest.read(path, name="console.txt")
    assert w.formats == ("nsys-kern-sum",)
    assert col(w, "name") == ["vectorAdd(const float *, const float *, float *, int)"]
    assert col(w, "count") == [1010] and col(w, "time_s") == [1_831_281e-9]


def test_batch_log_reads_only_the_kernel_table():
    """A job's whole log: program output (UTF-8 box drawing), capture progress, then every report; names cut by
    nsys (ending in …) kept as printed, the two rows sharing one cut name kept apart."""
    w = read("batch_log.out")
    assert w.meta["nsys_layout"] == "console" and w.device is None
    assert col(w, "name") == ["advect_tracer__FILE_Model_jl_L120", "broadcast_kernel(Meta<Dyn, void, (…",
                              "broadcast_kernel(Meta<Dyn, void, (…"]
    assert col(w, "count") == [10, 200, 100]
    assert col(w, "time_s") == [3_000_000e-9, 1_200_000e-9, 800_000e-9]
    assert col(w, "row") == ["37", "38", "39"]
    assert w.warnings == ("2 kernel names were cut by nsys to fit its column (ending in …), kept as printed; 1 cut "
                          "name is shared by 2 different kernels, which a join by name cannot tell apart. Hint: nsys "
                          "stats --report cuda_gpu_kern_sum --format csv prints whole names.",
                          "an Nsight Systems kernel summary gives times only: FLOPs and bytes of its kernels are "
                          "unknown (left empty, not zero), so no kernel has a roofline yet. Hint: load it together "
                          "with a kernel inventory (joined by name), or profile the kernels with Nsight Compute: ncu "
                          "--csv --print-units base --metrics gpu__time_duration.sum,dram__bytes.sum,"
                          "sm__sass_thread_inst_executed_op_ffma_pred_on.sum,... (see `roofline formats`).")


@pytest.mark.parametrize(("name", "row", "gap"), [
    ("console.txt", "      8.8", "\n"), ("batch_log.out", "     16.0", "\n\n"), ("stats_stdout_csv.txt", "25.0,", "\n"),
    ("kern_sum.csv", None, "  \n")])
def test_blank_lines_between_rows_do_not_end_the_table(name, row, gap):
    """An editor's stray Return, or rows pasted from two places, leave blank lines inside the kernel table: the
    rows below them are read too (before, the table ended there, without a word). Where the next report follows a
    blank line, the table still ends there (the batch log, the several-report stdout)."""
    text = (DATA / name).read_text(encoding="utf-8")
    lines = text.split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith(row)) if row else len(lines) // 2
    gapped = "\n".join(lines[:at]) + "\n" + gap + "\n".join(lines[at:])
    alone, w = ingest.read(DATA / name), ingest.read(gapped.encode(), name=name)
    assert len(alone) >= 2 and col(w, "name") == col(alone, "name") and col(w, "time_s") == col(alone, "time_s")
    assert col(w, "count") == col(alone, "count")


def test_batch_log_detected_with_the_tables_far_below():
    """detect() sees the first 64 KiB: a log whose reports start later is known by the capture's own lines."""
    text = (DATA / "batch_log.out").read_text(encoding="utf-8")
    cut = text.index("Generated:")
    noise = "".join(f"[ Info: step {i} │ residual 1.0e-3\n" for i in range(4000))
    data = (text[:cut] + noise + text[cut:]).encode()
    assert len(data) > 100_000 and data.index(b"cuda_gpu_kern_sum") > 65_536
    assert ingest.detect(data, "slurm-4711.out").name == "nsys-kern-sum"
    assert col(ingest.read(data, name="slurm-4711.out"), "count") == [10, 200, 100]
    # further down still, nsys's first line at the start of the capture names the log
    data = ("Collecting data...\n" + noise * 2 + text).encode()
    assert data.index(b"qdstrm") > 65_536 and ingest.detect(data, "slurm-4711.out").name == "nsys-kern-sum"


def test_gpu_named_by_the_metrics_line():
    data = (b"GPU 0: General Metrics for NVIDIA GA100 (any frequency)\n" + (DATA / "console.txt").read_bytes())
    w = nsys.parse(data, "c.txt")
    assert w.device == "NVIDIA GA100" and "devices" not in w.meta


@pytest.mark.parametrize(("name", "data", "report"), [
    ("out.csv", b"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n"
                b"100.0,9000,3,3000.0,3000.0,2000,4000,1000.0,PushPop,step\n", "NVTX range summary (nvtx_sum)"),
    ("out.csv", b"Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,Range\n100.0,9000,3,3000.0,2000,4000,step\n",
     "NVTX range summary (nvtx_sum)"),
    ("out.csv", b"Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
                b"90.0,9000,3,3000.0,3000.0,2000,4000,1000.0,cudaMalloc\n10.0,1000,9,111.1,100.0,90,200,30.0,"
                b"cudaLaunchKernel\n", "CUDA API summary (cuda_api_sum)"),
    ("out.csv", b"Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
                b"90.0,9000,3,3000.0,3000.0,2000,4000,1000.0,sem_wait\n10.0,1000,9,111.1,100.0,90,200,30.0,poll\n",
     "OS runtime summary (osrt_sum)"),
    ("r_osrt_sum.csv", b"Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n",
     "OS runtime summary (osrt_sum)"),
    ("out.csv", b"Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation\n"
                b'100.0,4096,2,2048.0,2048.0,1024,3072,1448.2,"[CUDA memcpy Host-to-Device]"\n',
     "GPU memory-operation time summary (cuda_gpu_mem_time_sum)"),
    ("out.csv", b"Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n"
                b"0.008,2,0.004,0.004,0.004,0.004,0.0,[CUDA memcpy Host-to-Device]\n",
     "GPU memory-operation size summary (cuda_gpu_mem_size_sum)"),
])  # a GPU trace (cuda_gpu_trace) is a timeline of its own: tests/test_join.py
def test_other_reports_refused_by_name(name, data, report):
    assert ingest.detect(data, name).name == "nsys-kern-sum"
    assert message(data, name) == (
        f"{name}: this is an Nsight Systems {report}, not a kernel summary. Hint: export the kernel summary: nsys "
        "stats --report cuda_gpu_kern_sum --format csv -o out report.nsys-rep")


@pytest.mark.samples
def test_sample_nvtx_sum_csv_refused_by_name():
    path = SAMPLES / "nsys_stats_nvtx_sum_csv_not_kernels.csv"
    if not path.exists():
        pytest.skip("../shared/samples/ is not here (real exports live outside the repository)")
    with pytest.raises(InputError) as e:
        ingest.read(path, name="nvtx.csv")
    assert str(e.value) == (
        "nvtx.csv: this is an Nsight Systems NVTX range summary (nvtx_sum), not a kernel summary. Hint: export the "
        "kernel summary: nsys stats --report cuda_gpu_kern_sum --format csv -o out report.nsys-rep")


def _kernel_table_by_hand(text: str) -> list[tuple[str, int, int]]:
    """(name, instances, total ns) of the cuda_gpu_kern_sum console table, read without the parser: the rows
    between the table's rule and the next blank line, eight numbers then the name."""
    lines = text.split("\n")
    head = lines.index(" ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):")
    assert lines[head + 2].split()[:3] == ["Time", "(%)", "Total"] and set(lines[head + 3].strip()) <= {"-", " "}
    row = re.compile(r"^ *[\d.]+ +([\d,]+) +([\d,]+)(?: +[\d,.]+){5} +(.*?) *$")
    rows = []
    for line in lines[head + 4:]:
        if not line.strip():
            break
        total, count, name = row.match(line).groups()
        rows.append((name, int(count.replace(",", "")), int(total.replace(",", ""))))
    return rows


@pytest.mark.samples
def test_sample_batch_log_a100_julia():
    path = SAMPLES / "nsys2025.3.2_stats_console_log_a100_julia.out"
    if not path.exists():
        pytest.skip("../shared/samples/ is not here (real exports live outside the repository)")
    data = path.read_bytes()
    assert ingest.detect(data, path.name).name == "nsys-kern-sum"
    w = ingest.read(path, name="log.out")
    expected = _kernel_table_by_hand(data.decode("utf-8"))
    assert len(expected) == 354 and len(w) == 354
    assert col(w, "name") == [e[0] for e in expected]
    assert col(w, "count") == [e[1] for e in expected]
    assert w.frame["time_s"].tolist() == pytest.approx([e[2] * 1e-9 for e in expected], rel=1e-15)
    assert expected[0] == ("set_microphysics_tendency_cache__FILE_ClimaAtmos_jl_src_cache_microphysics_cache_jl_L1013",
                           10, 271_046_731)
    assert w.frame["name"].str.endswith("(…").sum() > 0  # cut names kept as printed
    # only the kernel table: nothing from the NVTX, OS runtime or CUDA API reports around it
    assert not w.frame["name"].str.contains("cuLaunchKernel|cuProfilerStop|ClimaCoupler.Interfacer|pthread_").any()
    assert np.isnan(w.frame["flops"]).all() and w.meta["time_only"] == "true"


@pytest.mark.parametrize("name", ["kern_sum.csv", "gpukernsum_old.csv", "kern_sum_timeunit_us.csv",
                                  "stats_stdout_csv.txt", "console.txt", "console_skipped.txt", "batch_log.out"])
def test_detected_from_content(name):
    assert ingest.detect((DATA / name).read_bytes(), "stats.txt").name == "nsys-kern-sum"


# ------------------------------------------------------------------------------------------ messages


def test_skipped_report_message():
    assert message((DATA / "console_skipped.txt").read_bytes(), "s.txt") == (
        "s.txt: the cuda_gpu_kern_sum report was skipped: the profile has no CUDA kernel data. Hint: profile with "
        "CUDA tracing on (nsys profile -t cuda ...) and check that kernels ran.")


def test_other_reports_only_message():
    assert message((DATA / "console_no_kernel_table.txt").read_bytes(), "o.txt") == (
        "o.txt: no cuda_gpu_kern_sum table among the Nsight Systems reports here (osrt_sum). Hint: export the kernel "
        "summary: nsys stats --report cuda_gpu_kern_sum --format csv -o out report.nsys-rep")


def test_no_table_message():
    assert message(b"hello\nworld\n") == (
        "k.csv: expected an Nsight Systems cuda_gpu_kern_sum table (Time (%), Total Time (ns), Instances, ..., Name), "
        "found none. Hint: export it with: nsys stats --report cuda_gpu_kern_sum --format csv -o out report.nsys-rep")


def test_unknown_time_unit_message():
    data = b"Time (%),Total Time (days),Instances,Name\n100.0,1,1,k\n"
    assert message(data) == ("k.csv: header: expected a Total Time unit (ns, us, ms or s), found 'Total Time (days)'. "
                             "Hint: export with --timeunit ns (the default).")


def test_header_only_message():
    assert message(b"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n") == (
        "k.csv: expected at least one kernel row under the cuda_gpu_kern_sum header, found none. Hint: the profile has "
        "no kernels; profile with CUDA tracing (-t cuda).")


def test_bad_rows_are_skipped_with_reasons():
    data = (b"Time (%),Total Time (ns),Instances,Name\n50.0,1000,2,good\n10.0,n/a,1,bad_total\n5.0,100,0,no_instances\n"
            b"1.0,100\n")
    w = nsys.parse(data, "k.csv")
    assert col(w, "name") == ["good"] and col(w, "time_s") == [1e-6]
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("line 3", "Total Time and Instances must be numbers, found 'n/a' and '1'"),
        ("line 4", "Instances must be a whole number ≥ 1, found 0"),
        ("line 5", "expected 4 fields, found 2"),
    ]


def test_all_rows_bad_message():
    assert message(b"Time (%),Total Time (ns),Instances,Name\n10.0,n/a,1,k\n") == (
        "k.csv: line 2: no usable kernel rows; the first problem: Total Time and Instances must be numbers, found "
        "'n/a' and '1'. Hint: export again with nsys stats --report cuda_gpu_kern_sum --format csv.")


# ------------------------------------------------------------------------------------------ joining


def test_join_times_exact_glob_scaling_and_unmatched():
    w = join_times(read("kern_sum.csv"), read("model.yaml"))
    f = w.frame
    assert col(w, "name") == ["void gemm_kernel<float, 128>(const float *, const float *, float *, int)",
                              "relu_kernel(float *)", "memset_kernel(void *, int)", "softmax"]
    assert col(w, "model") == ["void gemm_kernel<float, 128>(const float *, const float *, float *, int)", "relu",
                               None, "softmax"]
    assert col(w, "count") == [100, 300, 50, 10]
    assert col(w, "time_s")[:3] == [5e-3, 3e-3, 5e-4] and f["time_s"][3] == pytest.approx(2e-4)
    # gemm: same count, totals as given; relu: 1 modelled launch, 300 profiled → ×300
    assert f["flops"][0] == 2e11 and f["bytes_hbm"][0] == 4e9 and f["bytes_l2"][0] == 8e9
    assert f["flops"][1] == 3e8 and f["bytes_hbm"][1] == 2.4e9 and np.isnan(f["bytes_l2"][1])
    assert np.isnan(f["flops"][2]) and np.isnan(f["bytes_hbm"][2])  # unmatched: time only
    assert f["flops"][3] == 5e6  # model row without a timed match, kept as modelled
    assert col(w, "precision")[:3] == ["fp32", "fp32", None] and col(w, "group")[:3] == ["mm", "act", None]
    assert col(w, "source")[:3] == ["kern_sum.csv"] * 3 and col(w, "row")[:3] == ["2", "3", "4"]
    assert w.warnings == (
        "FLOPs and bytes of 1 kernel scaled from the model's count to the profile's instances (model totals ÷ model "
        "count × instances), e.g. relu_kernel(float *): model 1 launch, profile 300.",
        "unmatched kernels: memset_kernel(void *, int) (time only; add them to the model, or a `match` glob).",
        "model kernels with no timed match (kept with the model's own numbers): softmax.",
    )
    assert "time_only" not in w.meta and w.meta["time_join"] == "2 of 3 timed kernels matched"
    assert w.formats == ("nsys-kern-sum", "inventory-yaml")


def test_read_many_joins_a_time_only_profile_with_an_inventory():
    w = ingest.read_many([DATA / "kern_sum.csv", DATA / "model.yaml"])
    assert w.frame["flops"].tolist()[:2] == [2e11, 3e8]
    a = analyze(w, [load_catalogs().get("h100-sxm")])
    assert a.summary("h100-sxm")["kernels"] == 4


def test_join_per_launch_ncu_times():
    times = ingest.read(Path(__file__).parent / "data" / "ncu" / "details_labels_only.csv", name="t.csv")
    model = ingest.read(b'name,count,flops,bytes\n"void add_kernel<float>(float *, const float *, int)",4,8e6,1.2e7\n',
                        name="m.csv")
    w = join_times(times, model)
    assert col(w, "flops") == [2e6, 2e6] and col(w, "bytes_hbm") == [3e6, 3e6]  # model totals ÷ 4 launches × 1
    assert col(w, "time_s") == [4.35e-6, 1.25e-3] and col(w, "count") == [1, 1]


# ------------------------------------------------------------------------------------------ fuzz

SEEDS = [p.read_bytes() for p in sorted(DATA.iterdir()) if p.suffix != ".yaml"]
EXAMPLES = 10_000 if os.environ.get("ROOFCORE_FUZZ_LONG") == "1" else 150
JUNK = [b",", b'"', b"\n", b"\r\n", b"n/a", b"-1", b"1e999", b"nan", b"\x00", b"1,234", b"-----", b"   ",
        b"Time (%)", b"Executing 'cuda_gpu_kern_sum' stats report\n", b"\xff", b"SKIPPED"]




@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=mutated(SEEDS, JUNK, raw_size=1024))
def test_fuzz_ends_in_a_workload_or_an_input_error(data):
    try:
        w = nsys.parse(data, "fuzz.txt")
    except InputError:
        return
    assert isinstance(w, Workload) and len(w) > 0
    assert (w.frame["count"] >= 1).all() and (w.frame["time_s"] >= 0).all()


@pytest.mark.parametrize("name", ["kern_sum.csv", "console.txt", "stats_stdout_csv.txt"])
def test_a_second_kernel_summary_in_the_file_is_said(name):
    """Two exports joined (``cat``, or ``nsys stats`` of two reports): the first table is read, and the warning says
    that another starts at its line and was not read."""
    text = (DATA / name).read_text()
    w = ingest.read((text + "\n" + text.replace("relu", "other")).encode(), name=name)
    alone = ingest.read(DATA / name)
    assert np.array_equal(w.frame["time_s"].to_numpy(), alone.frame["time_s"].to_numpy())
    said = [x for x in w.warnings if x.startswith("another kernel summary starts at line")]
    assert len(said) == 1 and "load each export as its own file" in said[0]
    assert not [x for x in alone.warnings if x.startswith("another kernel summary")]
