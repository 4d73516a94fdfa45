"""AMD rocprof exports (docs/formats.md): rocprof v1, rocprofv2, rocprofv3, rocprof-compute and its companions.

Golden values are worked out by hand from the fixture counters with rocprof-compute's ``calc_ai`` formulas
(docs/formats.md); the real exports in ../shared/samples are checked against PROVENANCE.md's reference numbers.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofhelpers import col, mutated, sample

from roofcore import InputError, RoofcoreError, analyze, ingest, load_catalogs
from roofcore.ingest import aggregate, rocprof_common
from roofcore.models import Hardware, Workload

DATA = Path(__file__).parent / "data" / "rocprof"
SHARED = Path(__file__).parent.parent.parent / "shared" / "samples"
LONG = os.environ.get("ROOFCORE_FUZZ_LONG") == "1"
EXAMPLES = 10_000 if LONG else 150


def raw(name: str) -> bytes:
    return (DATA / name).read_bytes()


def load(name: str, **kw) -> Workload:
    return ingest.read(raw(name), name=name, **kw)



def ctx(*names: str) -> dict:
    out: dict = {}
    for n in names:
        out.update(ingest.FORMATS[ingest.detect(raw(n), n).name].parse(raw(n), n, {}))
    return out



# --------------------------------------------------------------------------------------------- detection


@pytest.mark.parametrize("name,fmt", [
    ("pmc_perf_mi200.csv", "rocprof-compute"), ("pmc_perf_mi300.csv", "rocprof-compute"),
    ("results_v1.csv", "rocprof-v1"), ("results_v1_instances.csv", "rocprof-v1"), ("results_v2.csv", "rocprof-v2"),
    ("counter_collection_v3.csv", "rocprof-v3"), ("counter_collection_v3_new.csv", "rocprof-v3"),
    ("sysinfo_mi200.csv", "rocprof-compute-sysinfo"), ("sysinfo_mi300.csv", "rocprof-compute-sysinfo"),
    ("roofline.csv", "rocprof-compute-roofline"),
])
def test_each_fixture_is_detected_from_its_header(name, fmt):
    assert ingest.detect(raw(name), "renamed.txt").name == fmt  # content decides, not the file name
    assert ingest.FORMATS[fmt].companion == fmt.startswith("rocprof-compute-")


@pytest.mark.samples
@pytest.mark.parametrize("name,fmt", [
    ("rocprof_compute_vcopy_MI200_pmc_perf.csv", "rocprof-compute"),
    ("rocprof_compute_vcopy_MI200_roofline.csv", "rocprof-compute-roofline"),
    ("rocprof_compute_vcopy_MI200_sysinfo.csv", "rocprof-compute-sysinfo"),
    ("rocprofv1_vcopy_MI200_SQ_LEVEL_WAVES.csv", "rocprof-v1"),
])
def test_real_samples_are_detected(name, fmt):
    assert ingest.detect(sample(name).read_bytes(), name).name == fmt


def test_header_after_program_output_with_bom_and_crlf_reads_the_same():
    clean = load("pmc_perf_mi200.csv")
    noisy = ("\ufeffRunning vecCopy with 6 kernels\nrocprofiler: 6 dispatches\n"
             + raw("pmc_perf_mi200.csv").decode()).replace("\n", "\r\n").encode()
    w = ingest.read(noisy, name="pmc_perf_mi200.csv")
    assert w.formats == ("rocprof-compute",)
    pd.testing.assert_frame_equal(w.frame, clean.frame)
    assert w.warnings == clean.warnings and w.skipped == ()


# --------------------------------------------------------------------------------------------- rocprof-compute

MI200_WARNINGS = (
    "pmc_perf_mi200.csv: no sysinfo.csv read with it: the GPU model is unknown, LDS bytes are unknown (they need "
    "lds_banks_per_cu), and the off-chip formula follows the counters present (MI200). Hint: load sysinfo.csv from "
    "the same workload folder together with pmc_perf.csv.",
    "pmc_perf_mi200.csv: dispatch 3 (corrupt_ts_kernel(float*)): timestamp in scientific notation: Start_Timestamp "
    "'1.00000000E+15', End_Timestamp '1.00000000E+15'; its time is left unknown. Hint: use the CSV as the profiler "
    "wrote it; a spreadsheet rewrites long timestamps in scientific notation and loses their last digits.",
    "pmc_perf_mi200.csv: dispatch 4 (int8_gemm_kernel(signed char const*, int*)): End_Timestamp − Start_Timestamp "
    "= 0 ns; its time is left unknown. Hint: the profiler recorded no positive duration; profile again.",
    "pmc_perf_mi200.csv: 1 dispatch(es) also ran int8 MFMA ops (512 × SQ_INSTS_VALU_MFMA_MOPS_I8), not counted in "
    "their FLOPs: they are integer ops, counted only for kernels whose main work is int8.",
)


def test_pmc_perf_mi200_golden_values():
    w = load("pmc_perf_mi200.csv")
    assert w.formats == ("rocprof-compute",) and w.skipped == () and w.device is None
    assert w.warnings == MI200_WARNINGS
    # names as exported (only surrounding whitespace removed); one row per dispatch, row = Dispatch_ID
    assert col(w, "name") == ["gemm_f16_kernel(half const*, half const*, float*, int)",
                              "axpy<double>(double, double const*, double*, unsigned long)",
                              "copy_kernel(float*, float const*)", "corrupt_ts_kernel(float*)",
                              "int8_gemm_kernel(signed char const*, int*)", "mixed_kernel(float*, signed char const*)"]
    assert col(w, "row") == ["0", "1", "2", "3", "4", "5"] and col(w, "count") == [1] * 6
    assert col(w, "gpu") == ["1"] * 6
    assert col(w, "flops") == [
        512 * 2000 + 64 * (100 + 50 + 2 * 200 + 10),  # MFMA F16 MOPS + VALU F32 (FMA counts 2)
        64 * (100 + 2 * 3000) + 64 * 20,  # VALU F64 MUL + FMA, VALU F32 ADD
        0.0,  # counters present and zero: a measured zero, not unknown
        64 * 2 * 10,
        64 * 5 + 512 * 1 + 512 * 100,  # int8 kernel: its integer MFMA ops count
        64 * 2 * 1000,  # vector fp32 kernel: the 512 × 10 int8 ops are left out (warned)
    ]
    assert col(w, "precision") == ["fp16", "fp64", None, "fp32", "int8", "fp32"]
    assert col(w, "unit") == ["matrix", "vector", None, "vector", "matrix", "vector"]
    assert col(w, "bytes_hbm") == [
        2000 * 32 + (12000 - 2000) * 64 + 3000 * 64 + (4000 - 3000) * 32,  # MI200 formula
        4000 * 64 + 2000 * 64, 100 * 32 + 100 * 32, 10 * 64 + 10 * 64, 40 * 64 + 25 * 64, 40 * 64 + 25 * 64]
    assert col(w, "bytes_l2") == [64 * (20000 + 5000 + 10 + 6), 64 * 6000, 64 * 200, 64 * 20, 64 * 75, 64 * 75]
    assert col(w, "bytes_l1") == [64 * 40000, 64 * 10000, 64 * 200, 64 * 20, 64 * 100, 64 * 100]
    assert col(w, "bytes_lds") == [None] * 6  # needs sysinfo.csv
    assert col(w, "time_s") == pytest.approx([250_000e-9, 12_345e-9, 1_000e-9, None, None, 5_000e-9], nan_ok=True)
    # merge artefacts (wave_size_1, obj_1) and unused counters (SQC_DCACHE_REQ_READ_1) do not leak into the frame
    assert list(w.frame.columns) == ["name", "count", "flops", "time_s", "precision", "unit", "group", "source",
                                     "row", "bytes_hbm", "bytes_l2", "bytes_l1", "bytes_lds", "gpu"]
    assert w.meta == {"profiler": "rocprof-compute", "hbm_formula_from": "counters present",
                      "hbm_formula": "MI200 (TCC_EA_RDREQ/WRREQ, calc_ai)"}


def test_pmc_perf_with_sysinfo_and_roofline_as_context():
    w = ingest.read_many([(raw("roofline.csv"), "roofline.csv"), (raw("pmc_perf_mi200.csv"), "pmc_perf_mi200.csv"),
                          (raw("sysinfo_mi200.csv"), "sysinfo_mi200.csv")])
    assert w.formats == ("rocprof-compute",) and w.sources == ("pmc_perf_mi200.csv",)
    assert col(w, "bytes_lds") == [(5000 - 1000) * 4 * 32, 0, 0, 0, 0, 0]  # lds_banks_per_cu = 32
    assert w.device == "MI200"
    assert w.warnings == MI200_WARNINGS[1:]  # the "no sysinfo.csv" warning is gone
    assert w.meta == {
        "profiler": "rocprof-compute", "hbm_formula": "MI200 (TCC_EA_RDREQ/WRREQ, calc_ai)", "gpu_model": "MI200",
        "gpu_arch": "gfx90a", "gpu_series": "MI200", "cu_per_gpu": "110", "num_xcd": "1", "lds_banks_per_cu": "32",
        "compute_partition": "NA", "rocm_version": "6.1.0-82", "arch": "gfx90a",
        # GPU_ID 1 picks the roofline.csv row of device 1; GB/s and GFLOP/s × 1e9
        "measured_device": "1", "measured_hbm_bytes_per_s": repr(1300.5e9), "measured_l2_bytes_per_s": repr(5000.5e9),
        "measured_l1_bytes_per_s": repr(9000.5e9), "measured_lds_bytes_per_s": repr(17000.5e9),
        "measured_fp32_vector_flops_per_s": repr(20000.5e9), "measured_fp64_vector_flops_per_s": repr(19500.5e9),
        "measured_bf16_matrix_flops_per_s": repr(160000.5e9), "measured_fp16_matrix_flops_per_s": repr(155000.5e9),
        "measured_fp32_matrix_flops_per_s": repr(40000.5e9), "measured_fp64_matrix_flops_per_s": repr(40500.5e9),
        "measured_int8_matrix_ops_per_s": repr(158000.5e9)}


def test_pmc_perf_mi300_formula_by_arch_or_by_counters():
    hbm = [100 * 128 + 500 * 32 + (10000 - 100 - 500) * 64 + (3000 - 2500) * 32 + 2500 * 64,
           0 * 128 + 0 * 32 + (2000 - 0 - 0) * 64 + (10 - 0) * 32 + 0 * 64]
    l2_note = ("pmc_perf_mi300.csv: L2 bytes use rocprof-compute's 64 B per request; MI300 has 128 B cache lines, "
               "so L2 bytes may be undercounted.")
    w = load("pmc_perf_mi300.csv", context=ctx("sysinfo_mi300.csv"))
    assert col(w, "bytes_hbm") == hbm
    assert col(w, "flops") == [512 * 4000, 64 * 1000] and col(w, "precision") == ["bf16", "fp32"]
    assert col(w, "unit") == ["matrix", "vector"]
    assert col(w, "bytes_l2") == [64 * 12000, 64 * 2010] and col(w, "time_s") == pytest.approx([40e-6, 8e-6])
    assert w.device == "MI300X" and w.meta["arch"] == "gfx942" and w.meta["num_xcd"] == "8"
    assert w.meta["hbm_formula"] == "MI300 (TCC_BUBBLE, TCC_EA0_RDREQ/WRREQ, calc_ai)"
    assert w.warnings == (l2_note,)
    # no sysinfo: the TCC_BUBBLE / TCC_EA0 counters choose the MI300 formula, and the user is told
    w = load("pmc_perf_mi300.csv")
    assert col(w, "bytes_hbm") == hbm and w.meta["hbm_formula_from"] == "counters present"
    assert w.warnings == (
        "pmc_perf_mi300.csv: no sysinfo.csv read with it: the GPU model is unknown, and the off-chip formula follows "
        "the counters present (MI300). Hint: load sysinfo.csv from the same workload folder together with "
        "pmc_perf.csv.", l2_note)
    # an MI200 sysinfo.csv next to MI300 counters: the counters win, with a warning
    w = load("pmc_perf_mi300.csv", context=ctx("sysinfo_mi200.csv"))
    assert col(w, "bytes_hbm") == hbm
    assert w.warnings == (l2_note, "pmc_perf_mi300.csv: the GPU is MI200-class but the file has the MI300 counters "
                                   "(TCC_EA0_*, TCC_BUBBLE); off-chip bytes use the MI300 formula.")


def test_zero_and_corrupt_durations_are_never_divided_by():
    w = ingest.read_many([(raw("pmc_perf_mi200.csv"), "pmc_perf_mi200.csv"),
                          (raw("sysinfo_mi200.csv"), "sysinfo_mi200.csv")])
    a = analyze(w, [load_catalogs().get("mi250x-gcd")])
    tab = a.table()  # (intensity may be inf: FLOPs with 0 LDS bytes; nothing divides by a time)
    timed = tab[["time_s", "achieved_flops_per_s", "efficiency", "headroom_s"]].to_numpy(dtype=float)
    assert not np.isinf(timed).any()
    assert tab["time_s"].isna().tolist() == [False, False, False, True, True, False]
    assert tab["achieved_flops_per_s"].isna().tolist()[3:5] == [True, True]


def test_many_bad_timestamps_name_ten_dispatches_then_count():
    head = "Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size,SQ_INSTS_VALU_FMA_F32,Start_Timestamp,End_Timestamp\n"
    body = "".join(f"{i},k{i},0,64,1,{1000 + i},{1000 + i}\n" for i in range(12))
    body += "12,late,0,64,1,,5\n13,text,0,64,1,12.5.1,20\n"
    w = ingest.read((head + body).encode(), name="p.csv")
    assert len(w) == 14 and w.frame["time_s"].isna().all()
    time_warnings = [x for x in w.warnings if "time" in x and "dispatch" in x]
    assert time_warnings[0] == ("p.csv: dispatch 0 (k0): End_Timestamp − Start_Timestamp = 0 ns; its time is left "
                                "unknown. Hint: the profiler recorded no positive duration; profile again.")
    assert time_warnings[-1] == "p.csv: … and 4 more dispatch(es) with unusable timestamps; their times are left unknown."
    assert len(time_warnings) == 11
    w = ingest.read((head + "12,late,0,64,1,,5\n13,text,0,64,1,12.5.1,20\n").encode(), name="p.csv")
    assert [x for x in w.warnings if "dispatch 1" in x] == [
        "p.csv: dispatch 12 (late): not a timestamp in ns: Start_Timestamp ''; its time is left unknown. Hint: use "
        "the CSV as the profiler wrote it; a spreadsheet rewrites long timestamps in scientific notation and loses "
        "their last digits.",
        "p.csv: dispatch 13 (text): not a timestamp in ns: Start_Timestamp '12.5.1'; its time is left unknown. Hint: "
        "use the CSV as the profiler wrote it; a spreadsheet rewrites long timestamps in scientific notation and "
        "loses their last digits."]


def test_fractional_ns_timestamps_are_exact_and_negative_spans_unknown():
    """rocprof-compute 3.x averages passes into fractional ns; 17-digit starts must not lose the fraction."""
    head = "Dispatch_ID,Kernel_Name,GPU_ID,SQ_INSTS_VALU_FMA_F32,Start_Timestamp,End_Timestamp\n"
    body = ("0,a,0,1.0,41551790928449.54,41551790935219.08\n1,b,0,1.0,12075944713091723,12075944713416199\n"
            "2,c,0,1.0,100.5,99.25\n")
    w = ingest.read((head + body).encode(), name="p.csv")
    assert col(w, "time_s")[:2] == pytest.approx([6769.54e-9, 324476e-9], rel=1e-12)
    assert col(w, "time_s")[2] is None
    assert ("p.csv: dispatch 2 (c): End_Timestamp − Start_Timestamp = -1.25 ns; its time is left unknown. Hint: the "
            "profiler recorded the end before the start (a timestamp glitch); the other dispatches are kept.") in w.warnings


def test_lds_needs_banks_and_bad_counter_cells_are_unknown_not_zero():
    head = ("Dispatch_ID,Kernel_Name,GPU_ID,SQ_LDS_IDX_ACTIVE,SQ_LDS_BANK_CONFLICT,TCP_TOTAL_CACHE_ACCESSES_sum,"
            "Start_Timestamp,End_Timestamp\n")
    body = ("0,a,0,100,20,10,0,100\n1,b,0,n/a,0,-5,0,100\n2,c,0,10,20,inf,0,100\n3,d,0,\"1,000\",0,abc,0,100\n")
    w = ingest.read((head + body).encode(), name="p.csv", context=ctx("sysinfo_mi300.csv"))
    assert col(w, "bytes_lds") == [80 * 4 * 32, None, None, 1000 * 4 * 32]
    assert col(w, "bytes_l1") == [640, None, None, None]
    assert col(w, "flops") == [None] * 4 and col(w, "bytes_hbm") == [None] * 4
    assert w.warnings == (
        "p.csv: no FLOP counters (SQ_INSTS_VALU_ADD|MUL|FMA|TRANS_F16|F32|F64, SQ_INSTS_VALU_MFMA_MOPS_*): FLOPs are "
        "unknown. Hint: collect them (rocprof-compute profiles them; with rocprof add them to --pmc), or load "
        "rocprof-compute's pmc_perf.csv.",
        "p.csv: no off-chip counters: HBM bytes are unknown. Hint: collect TCC_EA_RDREQ(_32B)_sum and "
        "TCC_EA_WRREQ(_64B)_sum (MI200; TCC_EA0_* and TCC_BUBBLE_sum on MI300), or FETCH_SIZE and WRITE_SIZE.",
        "p.csv: 1 dispatch(es) give negative LDS bytes from their counters (counter noise or a garbled file): left "
        "unknown.",
        "p.csv: TCP_TOTAL_CACHE_ACCESSES_sum: 3 value(s) missing or not a non-negative number (first: dispatch 1, "
        "'-5'); what needs it is unknown for those dispatches.",
        "p.csv: SQ_LDS_IDX_ACTIVE: 1 value(s) missing or not a non-negative number (first: dispatch 1, 'n/a'); what "
        "needs it is unknown for those dispatches.",
    )
    huge = head + "0,a,0,1e307,0,1e307,0,100\n"
    w = ingest.read(huge.encode(), name="p.csv", context=ctx("sysinfo_mi300.csv"))
    assert col(w, "bytes_lds") == [None] and col(w, "bytes_l1") == [None]
    assert w.warnings[-2:] == (
        "p.csv: 1 dispatch(es) have counters too large to be real for bytes_l1: left unknown.",
        "p.csv: 1 dispatch(es) have counters too large to be real for bytes_lds: left unknown.")
    w = ingest.read((head + body).encode(), name="p.csv")  # no sysinfo: LDS unknown, said once
    assert col(w, "bytes_lds") == [None] * 4
    assert w.warnings[0].startswith("p.csv: no sysinfo.csv read with it: the GPU model is unknown, LDS bytes are "
                                    "unknown (they need lds_banks_per_cu)")


def test_partial_counter_sets_leave_levels_unknown():
    head = ("Dispatch_ID,Kernel_Name,GPU_ID,TCP_TCC_READ_REQ_sum,TCP_TCC_WRITE_REQ_sum,TCC_EA_RDREQ_sum,"
            "FETCH_SIZE,Start_Timestamp,End_Timestamp\n0,k,0,10,10,5,4,0,10\n")
    w = ingest.read(head.encode(), name="p.csv", context=ctx("sysinfo_mi200.csv"))
    assert col(w, "bytes_hbm") == [None] and col(w, "bytes_l2") == [None]
    assert w.warnings[1:] == (
        "p.csv: FETCH_SIZE without WRITE_SIZE: off-chip bytes are unknown (one direction only). Hint: collect "
        "WRITE_SIZE as well.",
        "p.csv: L2 bytes need TCP_TCC_READ_REQ_sum, TCP_TCC_WRITE_REQ_sum, TCP_TCC_ATOMIC_WITH_RET_REQ_sum, "
        "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum; missing TCP_TCC_ATOMIC_WITH_RET_REQ_sum, "
        "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum: L2 bytes are unknown.")
    w = ingest.read(head.replace("FETCH_SIZE", "X").encode(), name="p.csv")
    assert ("p.csv: no off-chip counters (missing TCC_EA_RDREQ_32B_sum, TCC_EA_WRREQ_sum, TCC_EA_WRREQ_64B_sum): "
            "HBM bytes are unknown. Hint: collect TCC_EA_RDREQ(_32B)_sum and TCC_EA_WRREQ(_64B)_sum (MI200; TCC_EA0_* "
            "and TCC_BUBBLE_sum on MI300), or FETCH_SIZE and WRITE_SIZE.") in w.warnings


def test_duplicated_dispatch_lines_are_kept_and_reported():
    lines = raw("pmc_perf_mi200.csv").decode().splitlines(keepends=True)
    w = ingest.read("".join([*lines, lines[2]]).encode(), name="p.csv")
    assert col(w, "row") == ["0", "1", "2", "3", "4", "5", "1"]
    assert ("p.csv: dispatch id(s) 1 appear on more than one line; every line is kept (a file joined from several "
            "runs, or a duplicated line?).") in w.warnings


def test_garbled_lines_are_skipped_with_their_line_number():
    text = raw("pmc_perf_mi200.csv").decode().splitlines(keepends=True)
    garbled = [text[0], text[1], "0,truncated,1,2\n", text[2], "Dispatch_ID,Kernel_Name" + "," * (text[0].count(",") - 1)
               + "\n", text[3], '7,"unterminated,1\n']
    w = ingest.read("".join(garbled).encode(), name="p.csv")
    assert col(w, "row") == ["0", "1", "2"]
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("line 3", "4 fields where the header has 47 (a truncated or garbled line, or program output mixed into the "
                   "CSV)"),
        ("line 5", "Dispatch_ID 'Dispatch_ID' is not a dispatch number (a second header, or program output)"),
        ("line 7", "2 fields where the header has 47 (a truncated or garbled line, or program output mixed into the "
                   "CSV)"),
    ]


def test_quoted_newline_in_a_name_reads_record_by_record_with_true_line_numbers():
    text = raw("pmc_perf_mi200.csv").decode().replace("  copy_kernel(float*, float const*)  ",
                                                      "copy_kernel(float*,\nfloat const*)")
    w = ingest.read((text + "Exiting.\n").encode(), name="p.csv")
    assert col(w, "name")[2] == "copy_kernel(float*,\nfloat const*)" and len(w) == 6
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("line 9", "1 fields where the header has 47 (a truncated or garbled line, or program output mixed into the "
                   "CSV)")]


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.csv")))
def test_fast_and_record_by_record_readers_agree(name):
    """pandas' C reader checked by csv field counts gives what the csv module gives record by record."""
    text = raw(name).decode().rstrip("\r\n") + "\njunk line\n\n   \n1,2,3,,,,\n"  # some files end without a newline
    header = next(csv.reader([text.partition("\n")[0]]))
    idx = list(range(len(header)))
    fast = rocprof_common.read_fast(text, header, idx, 1, "x")
    reader = csv.reader(io.StringIO(text))
    next(reader)
    slow = rocprof_common.read_records(reader, header, idx, 1, "x")
    assert fast is not None and fast.lines.tolist() == slow.lines.tolist()
    assert fast.skipped == slow.skipped and len(fast.skipped) >= 1
    assert all(fast.columns[i].tolist() == slow.columns[i].tolist() for i in idx)


# --------------------------------------------------------------------------------------------- real samples


@pytest.mark.samples
def test_real_pmc_perf_matches_provenance_reference_numbers():
    path = sample("rocprof_compute_vcopy_MI200_pmc_perf.csv")
    w = ingest.read(path)
    assert len(w) == 3 and set(w.frame["name"]) == {"vecCopy(double*, double*, double*, int, int) [clone .kd]"}
    d0 = w.frame.iloc[0]
    assert d0["row"] == "0"
    assert d0["flops"] == 0.0  # measured zero: the FLOP counters exist and are 0
    assert d0["bytes_hbm"] == 16_778_112 and d0["bytes_l2"] == 16_777_216 and d0["bytes_l1"] == 33_554_432
    assert d0["time_s"] == pytest.approx(20_480e-9, rel=1e-12)
    assert pd.isna(d0["precision"]) and pd.isna(d0["unit"])
    # companions by path: sysinfo gives LDS bytes (0 here), device and arch; roofline the measured ceilings
    w = ingest.read_many([path, sample("rocprof_compute_vcopy_MI200_sysinfo.csv"),
                          sample("rocprof_compute_vcopy_MI200_roofline.csv")])
    assert w.device == "MI200" and w.meta["arch"] == "gfx90a" and col(w, "bytes_lds") == [0.0, 0.0, 0.0]
    assert w.meta["measured_device"] == "2"  # the dispatches ran on GPU_ID 2
    assert w.meta["measured_hbm_bytes_per_s"] == repr(1389.0227 * 1e9)
    assert w.warnings == () and w.skipped == ()
    assert load_catalogs().closest(w.meta["arch"]) == ["mi250x-gcd"]
    agg = aggregate(w).frame
    assert len(agg) == 1 and agg["count"].tolist() == [3]
    assert agg["bytes_hbm"].tolist() == [16_778_112 + 14_218_112 + 14_220_800]


@pytest.mark.samples
def test_real_roofline_and_sysinfo_companions():
    path = sample("rocprof_compute_vcopy_MI200_roofline.csv")
    roof = ingest.FORMATS["rocprof-compute-roofline"].parse(path.read_bytes(), "roofline.csv", {})["rocprof_roofline"]
    assert sorted(roof) == [0, 1, 2, 3]
    assert roof[0]["HBMBw"] == 1388.9302 * 1e9 and roof[0]["HBMBwHigh"] == 1389.4768 * 1e9  # typo hbmBwHigh fixed
    assert roof[0]["MFMAI8OpsLow"] == 165911.17 * 1e9 and "MFMAFI8OpsLow" not in roof[0]
    assert len(roof[3]) == 33
    with pytest.raises(InputError) as e:
        ingest.read(path, name="roofline.csv")
    assert str(e.value) == (
        "roofline.csv: this is a table of measured ceilings (HBM, L2, L1, LDS bandwidth and FLOP/s per GPU) from "
        "rocprof-compute roofline.csv, context for pmc_perf.csv or a device to analyse against, not a workload. Hint: "
        "load it together with a workload (e.g. pmc_perf.csv), or use it as a device: `roofline analyze WORKLOAD "
        "--catalog roofline.csv --hardware rocprof-measured`.")  # its 4 GPUs: one device, their median
    info = ingest.FORMATS["rocprof-compute-sysinfo"].parse(
        sample("rocprof_compute_vcopy_MI200_sysinfo.csv").read_bytes(), "sysinfo.csv", {})["rocprof_sysinfo"]
    assert (info["gpu_model"], info["gpu_arch"], info["gpu_series"]) == ("MI200", "gfx90a", "MI200")
    assert (info["lds_banks_per_cu"], info["cu_per_gpu"], info["num_xcd"]) == (32, 104, 1)
    assert info["hbm_bw"] == 1638.4e9 and info["max_sclk"] == 1700e6 and info["gpu_l2"] == 8192 * 1024
    assert info["warnings"] == []


@pytest.mark.samples
def test_real_per_pass_v1_file():
    w = ingest.read(sample("rocprofv1_vcopy_MI200_SQ_LEVEL_WAVES.csv"), name="SQ_LEVEL_WAVES.csv")
    assert w.formats == ("rocprof-v1",) and col(w, "row") == ["0", "1", "2"] and col(w, "gpu") == ["2", "2", "2"]
    assert col(w, "time_s") == pytest.approx([20_480e-9, 16_320e-9, 15_520e-9])
    assert col(w, "flops") == [None] * 3 and col(w, "bytes_hbm") == [None] * 3
    assert w.warnings == ("SQ_LEVEL_WAVES.csv: no FLOP or byte counters in this file: the kernels' FLOPs and bytes are "
                          "unknown, only their times are read. Hint: a rocprof-compute per-pass file holds only some "
                          "counters; load pmc_perf.csv from the same workload folder, which merges every pass.",)


# --------------------------------------------------------------------------------------------- rocprof v1 / v2


def _epoch_trace(durations_ns: list[int], keep: int | None) -> bytes:
    """A rocprofv3 kernel trace with ns-since-epoch timestamps (19 digits), each kept to ``keep`` significant
    digits as a spreadsheet saves them (None: as written)."""
    def saved(v: int) -> str:
        return str(v) if keep is None else str(round(v, keep - len(str(v))))
    rows, t = [], 1_764_000_000_123_456_789
    for i, d in enumerate(durations_ns):
        rows.append(f'KERNEL_DISPATCH,1,1,1,1,{i},{i},1,"k{i}(float*)",64,0,0,1,256,1,1,1024,1,1,{saved(t)},{saved(t + d)}')
        t += d + 3_333_337
    head = ("Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Correlation_Id,Kernel_Name,"
            "Private_Segment_Size,Group_Segment_Size,Workgroup_Size,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,"
            "Grid_Size,Grid_Size_X,Grid_Size_Y,Grid_Size_Z,Start_Timestamp,End_Timestamp")
    return ("\n".join([head, *rows]) + "\n").encode()


def test_timestamps_a_spreadsheet_kept_to_15_digits_say_how_well_each_time_is_known():
    """A spreadsheet keeps 15 significant digits: ns since the epoch (19 digits) lose their last 4, so a duration
    is known to ±10 µs. Durations under 100 steps (1 ms) become unknown, the longer ones keep theirs, and one
    warning says so; the file as written reads exactly (19 digits fit an int64) and says nothing."""
    lengths = [2_500, 40_000, 2_000_000, 5_123_457, 9_000_001, 30_000_017]
    exact = ingest.read(_epoch_trace(lengths, None), name="kernel_trace.csv")
    assert col(exact, "time_s") == pytest.approx([d * 1e-9 for d in lengths])
    assert not [x for x in exact.warnings if "spreadsheet" in x]
    w = ingest.read(_epoch_trace(lengths, 15), name="kernel_trace.csv")
    t = col(w, "time_s")
    assert t[:2] == [None, None] and t[2:] == pytest.approx([d * 1e-9 for d in lengths[2:]], rel=0.01)
    said = [x for x in w.warnings if "as a spreadsheet saves" in x]
    assert len(said) == 1 and "ends in 4 zero(s)" in said[0] and "±10,000 ns" in said[0] and "2 of 6" in said[0]
    assert not [x for x in w.warnings if "dispatch 0 " in x]  # no per-dispatch "profile again" for these


def test_what_counts_as_timestamps_a_spreadsheet_rounded():
    from roofcore.ingest.rocprof_common.times import ns, rounded_step
    epoch = np.arange(6, dtype=np.int64) * 1_000_000_000 + 1_764_000_000_123_460_000
    assert rounded_step(epoch) == 10_000
    assert rounded_step(epoch[:5]) == 0  # too few to tell from chance
    assert rounded_step(epoch + 7) == 0  # one digit not zero
    assert rounded_step(np.arange(6, dtype=np.int64) * 10 + 10**17) == 0  # 17 digits ending in one zero: a 10 ns clock
    assert rounded_step(np.arange(6, dtype=np.int64) * 1000 + 10**15) == 0  # 16 digits: a 10 ns step is a clock's
    ok, whole, _ = ns(np.array(["9223372036854775807", "9223372036854775808", "1764000000123456789.5"], dtype=object))
    assert ok.tolist() == [True, False, True] and whole[0] == np.iinfo(np.int64).max


def test_v1_results_fetch_size_is_kilobytes():
    w = load("results_v1.csv")
    assert w.formats == ("rocprof-v1",)
    assert col(w, "name") == ["copy_kernel(float*, float*, int, int) [clone .kd]",
                              "saxpy(float, float const*, float*, int) [clone .kd]"]  # suffixes kept as exported
    assert col(w, "bytes_hbm") == [(65536 + 65536) * 1024, (2048.5 + 1024.25) * 1024]
    assert col(w, "flops") == [0.0, 64 * 2 * 262144] and col(w, "precision") == [None, "fp32"]
    assert col(w, "time_s") == pytest.approx([10_000e-9, 25_000e-9])  # EndNs − BeginNs
    assert w.meta["hbm_formula"] == "FETCH_SIZE + WRITE_SIZE (KiB × 1024)"
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("line 4", "1 fields where the header has 26 (a truncated or garbled line, or program output mixed into the "
                   "CSV)")]
    assert w.warnings == (
        "results_v1.csv: FLOPs count only the counters present (a lower bound if the kernels ran the other "
        "instructions); missing: SQ_INSTS_VALU_{ADD,MUL,FMA,TRANS}_F16, SQ_INSTS_VALU_TRANS_F32, "
        "SQ_INSTS_VALU_{ADD,MUL,FMA,TRANS}_F64, SQ_INSTS_VALU_MFMA_MOPS_{F16,BF16,F32,F64,I8}. Hint: collect every "
        "SQ_INSTS_VALU_* counter above for complete FLOPs.",)


def test_v1_per_instance_columns_are_summed_when_sum_is_absent():
    w = load("results_v1_instances.csv")
    rd, rd32, wr, wr64 = 600 + 400, 50 + 50, 300 + 200, 200 + 200
    assert col(w, "bytes_hbm") == [rd32 * 32 + (rd - rd32) * 64 + wr64 * 64 + (wr - wr64) * 32]
    assert col(w, "flops") == [None] and col(w, "time_s") == pytest.approx([3_000e-9])


def test_v2_plugin_trailing_comma_and_missing_cell():
    w = load("results_v2.csv")
    assert w.formats == ("rocprof-v2",) and w.skipped == ()
    assert col(w, "row") == ["1", "2"] and col(w, "gpu") == ["1", "1"]
    assert col(w, "flops") == [64 * (2 * 1000 + 10), None]  # 'n/a' is missing, not zero
    assert col(w, "precision") == ["fp64", None]
    assert col(w, "bytes_hbm") == [2000 * 64 + 500 * 64] * 2
    assert col(w, "time_s") == pytest.approx([100_000e-9, 90_000e-9])
    assert w.warnings[-1] == ("results_v2.csv: SQ_INSTS_VALU_ADD_F64: 1 value(s) missing or not a non-negative "
                              "number (first: dispatch 2, 'n/a'); what needs it is unknown for those dispatches.")


def test_wave32_is_warned_and_sum_columns_win_over_instances():
    text = raw("results_v2.csv").decode().replace(",16,64,", ",16,32,", 1)  # dispatch 1 ran as wave32
    w = ingest.read(text.encode(), name="v2.csv")
    assert col(w, "flops")[0] == 64 * (2 * 1000 + 10)  # calc_ai's 64 lanes, kept, with a warning
    assert ("v2.csv: 1 dispatch(es) ran as wave32 (RDNA); rocprof-compute's FLOP rule counts 64 lanes per VALU "
            "instruction (CDNA wave64), so their VALU FLOPs may be up to 2× too high.") in w.warnings
    head = "Dispatch_ID,Kernel_Name,GPU_ID,TCP_TOTAL_CACHE_ACCESSES[0],TCP_TOTAL_CACHE_ACCESSES[1],"
    w = ingest.read(f"{head}TCP_TOTAL_CACHE_ACCESSES_sum\n0,k,0,1,2,10\n".encode(), name="p.csv")
    assert col(w, "bytes_l1") == [640]  # the profiler's _sum, not the instances
    w = ingest.read(f"{head}X\n0,k,0,1,2,10\n".encode(), name="p.csv")
    assert col(w, "bytes_l1") == [64 * 3]  # instances summed when _sum is absent


# --------------------------------------------------------------------------------------------- rocprofv3


def test_v3_long_format_pivots_and_sums_repeated_counters():
    w = load("counter_collection_v3.csv")
    assert w.formats == ("rocprof-v3",) and w.skipped == ()
    assert col(w, "row") == ["1", "2"] and col(w, "gpu") == ["4", "4"]
    assert col(w, "flops") == [64 * (2 * 4096 + 100), 64 * 1024]  # MUL_F32 written as 1.0e+02
    assert col(w, "bytes_hbm") == [3000 * 64 + (700 + 300) * 64, 200 * 64 + (50 + 50) * 64]  # WRREQ rows summed
    assert col(w, "time_s") == pytest.approx([10_240e-9, 2_000e-9])
    assert "bytes_l2" not in w.frame.columns  # no L2 counters collected: no such level, rather than a column of NaN


def test_v3_newer_header_with_prepended_agent_columns():
    w = load("counter_collection_v3_new.csv")
    assert col(w, "gpu") == ["Agent 2", "Agent 2"] and col(w, "name") == ["mfma_bf16_gemm"] * 2
    assert col(w, "flops") == [512 * 100] * 2 and col(w, "precision") == ["bf16"] * 2
    assert col(w, "bytes_hbm") == [(64.5 + 32) * 1024] * 2 and col(w, "bytes_l1") == [64 * 1000] * 2
    assert col(w, "time_s") == pytest.approx([5_000e-9, None], nan_ok=True)
    assert w.warnings[0] == ("counter_collection_v3_new.csv: dispatch 2 (mfma_bf16_gemm): End_Timestamp − "
                             "Start_Timestamp = -100 ns; its time is left unknown. Hint: the profiler recorded the "
                             "end before the start (a timestamp glitch); the other dispatches are kept.")
    assert aggregate(w).frame["count"].tolist() == [1, 1]  # the untimed dispatch is not summed with the timed one


def test_v3_long_gives_the_same_numbers_as_the_wide_table():
    wide = pd.read_csv(DATA / "pmc_perf_mi200.csv", dtype=str, keep_default_na=False)
    ident = ["Dispatch_ID", "Kernel_Name", "GPU_ID", "Start_Timestamp", "End_Timestamp"]
    counters = [c for c in wide.columns if c.startswith(("SQ_", "TCP_", "TCC_"))]
    long = wide.melt(id_vars=ident, value_vars=counters, var_name="Counter_Name", value_name="Counter_Value")
    long = long.rename(columns={"Dispatch_ID": "Dispatch_Id", "GPU_ID": "Agent_Id"})
    long.insert(0, "Correlation_Id", long["Dispatch_Id"])
    long = long.sample(frac=1.0, random_state=7)  # row order must not matter
    buf = io.StringIO()
    long.to_csv(buf, index=False)
    v3 = ingest.read(buf.getvalue().encode(), name="x_counter_collection.csv")
    w = load("pmc_perf_mi200.csv")
    assert v3.formats == ("rocprof-v3",)
    order = [int(r) for r in v3.frame["row"]]
    for key in ("flops", "bytes_hbm", "bytes_l2", "bytes_l1", "time_s", "precision", "unit", "name"):
        a, b = v3.frame[key].tolist(), w.frame[key].iloc[order].tolist()
        assert [None if pd.isna(x) else x for x in a] == [None if pd.isna(x) else x for x in b], key


# --------------------------------------------------------------------------------------------- companions


def test_sysinfo_companion_types_units_and_notes():
    info = ctx("sysinfo_mi300.csv")["rocprof_sysinfo"]
    assert (info["gpu_model"], info["gpu_arch"], info["gpu_series"], info["compute_partition"]) == (
        "MI300X", "gfx942", "MI300", "SPX")
    assert (info["lds_banks_per_cu"], info["cu_per_gpu"], info["num_xcd"], info["wave_size"]) == (32, 304, 8, 64)
    assert info["hbm_bw"] == 5324.8e9 and info["max_mclk"] == 1300e6 and info["gpu_l1"] == 32 * 1024
    bad = raw("sysinfo_mi200.csv").decode().replace(",32,32,56,", ",32,many,56,").encode()
    w = ingest.read_many([(raw("pmc_perf_mi200.csv"), "p.csv"), (bad, "sysinfo.csv")])
    assert "sysinfo.csv: lds_banks_per_cu 'many' is not a positive whole number; left unknown." in w.warnings
    assert col(w, "bytes_lds") == [None] * 6
    old = b"workload_name,gpu_soc,numCU,LDSBanks,hbmBW\nx,mi200,104,32,1638.4\n"  # Omniperf 1.x names
    info = ingest.FORMATS["rocprof-compute-sysinfo"].parse(old, "sysinfo.csv", {})["rocprof_sysinfo"]
    assert (info["gpu_series"], info["cu_per_gpu"], info["lds_banks_per_cu"], info["hbm_bw"]) == (
        "mi200", 104, 32, 1638.4e9)


def test_roofline_companion_fixture():
    roof = ctx("roofline.csv")["rocprof_roofline"]
    assert sorted(roof) == [0, 1]
    assert roof[1]["HBMBw"] == 1300.5e9 and roof[1]["HBMBwHigh"] == 1301.5e9 and roof[1]["MFMAI8OpsLow"] == 157999.5e9
    assert roof[0]["LDSBw"] == 17000e9 and roof[0]["MFMAF64Flops"] == 40500e9


# --------------------------------------------------------------------------------------------- errors

COMPANION_HINT = "Hint: load it together with the workload file it belongs to."
ERRORS = [
    (b"Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size,Start_Timestamp,End_Timestamp\n", "pmc_perf.csv", None,
     "pmc_perf.csv: expected at least one dispatch row, found a header only. Hint: the file is empty (no dispatch was "
     "profiled): rocprof-compute writes such files when its dispatch or kernel filter (--dispatch, --kernel) matched "
     "nothing, or when the program launched no kernel; profile again with a filter that matches."),
    (b"Index,KernelName,gpu-id,queue-id,BeginNs,EndNs\r\n", "results.csv", None,
     "results.csv: expected at least one dispatch row, found a header only. Hint: the profiled program launched no "
     "kernels, or the profiler stopped early; profile again."),
    (b"name,flops\nk,1\n", "x.csv", "rocprof-compute",
     "x.csv: expected a rocprof-compute pmc_perf.csv header (Dispatch_ID,Kernel_Name,GPU_ID,\u2026), found first line "
     "'name,flops'. Hint: load pmc_perf.csv from the workload folder rocprof-compute wrote (workloads/<name>/<arch>/)."),
    (b"name,flops\nk,1\n", "x.csv", "rocprof-v1",
     "x.csv: expected a rocprof v1 results.csv header (Index,KernelName,gpu-id,\u2026 or Dispatch_ID,Kernel_Name,"
     "GPU_ID,queue-id,\u2026), found first line 'name,flops'. Hint: profile with `rocprof --timestamp on -i input.txt "
     "app` and load the results.csv it writes."),
    (b"x\n" * 3, "x.csv", "rocprof-v2",
     "x.csv: expected a rocprofv2 file-plugin header (Dispatch_ID,GPU_ID,Queue_ID,\u2026,Kernel_Name,Start_Timestamp,"
     "End_Timestamp,\u2026), found first line 'x'. Hint: profile with `rocprofv2 --plugin file --pmc \u2026 app` and "
     "load the results CSV it writes."),
    (b"Dispatch_ID,GPU_ID,Queue_ID,PID,TID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,Scratch_Per_Workitem,Arch_VGPR,"
     b"Accum_VGPR,SGPR,Wave_Size,Kernel_Name,Start_Timestamp,End_Timestamp,Correlation_ID\n", "v2.csv", "rocprof-v3",
     "v2.csv: expected a rocprofv3 counter_collection.csv header (Correlation_Id,Dispatch_Id,\u2026,Kernel_Name,\u2026,"
     "Counter_Name,Counter_Value,\u2026), found first line 'Dispatch_ID,GPU_ID,Queue_ID,PID,TID,Grid_Size,Workgroup_S"
     "...'. Hint: profile with `rocprofv3 --pmc \u2026 --output-format csv -- app` and load "
     "<pid>_counter_collection.csv."),
    (b'"Correlation_Id","Dispatch_Id","Kernel_Name","Counter_Name","Counter_Value"\n', "cc.csv", None,
     "cc.csv: expected at least one counter row, found a header only. Hint: the profiled program launched no kernels, "
     "or no counter could be collected; check rocprofv3's output and the --pmc names (rocprofv3 --list-avail)."),
    (b"Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size\nDone.\nExiting\n", "p.csv", None,
     "p.csv: line 2: no usable dispatches; the first problem: 1 fields where the header has 4 (a truncated or garbled "
     "line, or program output mixed into the CSV). Hint: load the CSV as the profiler wrote it."),
    (b"Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size\nfirst,k,0,1\n", "p.csv", None,
     "p.csv: line 2: no usable dispatches; the first problem: Dispatch_ID 'first' is not a dispatch number (a "
     "second header, or program output). Hint: load the CSV as the profiler wrote it."),
    (b'"Correlation_Id","Dispatch_Id","Kernel_Name","Counter_Name","Counter_Value"\n1,1,k,,5\n', "cc.csv", None,
     "cc.csv: line 2: no usable rows; the first problem: the counter name is empty. Hint: load the CSV as rocprofv3 "
     "wrote it."),
    (raw("roofline.csv"), "MI200/roofline.csv", None,
     "MI200/roofline.csv: this is a table of measured ceilings (HBM, L2, L1, LDS bandwidth and FLOP/s per GPU) from "
     "rocprof-compute roofline.csv, context for pmc_perf.csv or a device to analyse against, not a workload. Hint: "
     "load it together with a workload (e.g. pmc_perf.csv), or use it as a device: `roofline analyze WORKLOAD "
     "--catalog MI200/roofline.csv --hardware mi200-measured`."),
    (raw("sysinfo_mi200.csv"), "sysinfo.csv", None,
     "sysinfo.csv: this is the system description rocprof-compute writes (sysinfo.csv: GPU model, arch, CUs, LDS "
     f"banks), context for pmc_perf.csv, not a workload. {COMPANION_HINT}"),
]


@pytest.mark.parametrize("data,name,fmt,message", ERRORS,
                         ids=[f"{i}-{n}-{f or 'detected'}" for i, (_, n, f, _) in enumerate(ERRORS)])
def test_error_messages(data, name, fmt, message):
    with pytest.raises(InputError) as e:
        ingest.read(data, name=name, fmt=fmt)
    assert str(e.value) == message


@pytest.mark.parametrize("parse,data,message", [
    ("rocprof-compute-sysinfo", b"workload_name,gpu_model,gpu_arch\n",
     "s.csv: expected a row of values under the sysinfo.csv header, found a header only. Hint: profile again with "
     "rocprof-compute; it writes one row describing the system."),
    ("rocprof-compute-sysinfo", b"workload_name,gpu_model,gpu_arch\nx,MI200\n",
     "s.csv: expected 3 values under the sysinfo.csv header, found 2. Hint: load sysinfo.csv as rocprof-compute "
     "wrote it."),
    ("rocprof-compute-roofline", b"device,HBMBw,L2Bw\n",
     "s.csv: expected a row per GPU (device number, then GB/s and GFLOP/s), found none. Hint: load roofline.csv as "
     "rocprof-compute wrote it."),
    ("rocprof-compute-roofline", b"device,HBMBw,L2Bw\nmean,1,2\n",
     "s.csv: expected a row per GPU (device number, then GB/s and GFLOP/s), found no row with a device number. Hint: "
     "load roofline.csv as rocprof-compute wrote it."),
    ("rocprof-compute-roofline", b"HBMBw\n1\n",
     "s.csv: expected a rocprof-compute roofline.csv header (device,HBMBw,\u2026), found first line 'HBMBw'. Hint: "
     "load roofline.csv from the workload folder rocprof-compute wrote."),
])
def test_companion_error_messages(parse, data, message):
    with pytest.raises(InputError) as e:
        ingest.FORMATS[parse].parse(data, "s.csv", {})
    assert str(e.value) == message


def test_only_companions_is_an_error():
    with pytest.raises(InputError) as e:
        ingest.read_many([(raw("sysinfo_mi200.csv"), "sysinfo.csv"), (raw("roofline.csv"), "roofline.csv")])
    assert str(e.value) == ("sysinfo.csv, roofline.csv: only companion files were given, no workload. Hint: add the "
                            "profile they belong to (e.g. pmc_perf.csv next to sysinfo.csv).")


def test_odd_context_values_are_ignored():
    odd = {"rocprof_sysinfo": {"lds_banks_per_cu": "32", "gpu_arch": 942, "warnings": [1, "note"]},
           "rocprof_roofline": {"0": {"HBMBw": 1.0}, 1: "x", 2: {"HBMBw": "fast"}}}
    w = load("pmc_perf_mi200.csv", context=odd)
    assert col(w, "bytes_lds") == [None] * 6 and "note" in w.warnings
    assert "measured_hbm_bytes_per_s" not in w.meta and w.meta["measured_device"] == "2"
    for bad in (None, [], {"rocprof_sysinfo": "gfx90a"}):
        assert len(ingest.FORMATS["rocprof-compute"].parse(raw("pmc_perf_mi200.csv"), "p.csv", bad)) == 6


# --------------------------------------------------------------------------------------------- fuzz

FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SEEDS = {
    "rocprof-compute": ["pmc_perf_mi200.csv", "pmc_perf_mi300.csv"],
    "rocprof-v1": ["results_v1.csv", "results_v1_instances.csv"],
    "rocprof-v2": ["results_v2.csv"],
    "rocprof-v3": ["counter_collection_v3.csv", "counter_collection_v3_new.csv"],
    "rocprof-compute-sysinfo": ["sysinfo_mi200.csv", "sysinfo_mi300.csv", "sysinfo_v1.csv"],
    "rocprof-compute-roofline": ["roofline.csv", "../ceilings/roofline_mi300x.csv"],
    "rocprof-v1-stats": ["results.stats.csv"],
    "rocprof-v1-hiptrace": ["hiptrace_results.json"],
    "rocprof-v3-trace": ["kernel_trace_v3.csv"],
    "rocprof-v3-json": ["rocprofv3_results.json"],
    "rocprof-compute-kernel-top": ["pmc_kernel_top.csv"],
    "rocprof-compute-dispatch-info": ["pmc_dispatch_info.csv"],
    "ert-roofline": ["../ceilings/roofline.json"],
    "rocprof-v3-agent-info": ["agent_info.csv"],
}
SUMMARIES = {"rocprof-v1-stats", "rocprof-compute-kernel-top"}
CONTEXTS = [{}, None, ctx("sysinfo_mi200.csv"), ctx("sysinfo_mi300.csv", "roofline.csv"),
            {"rocprof_sysinfo": {"lds_banks_per_cu": -1.5, "gpu_arch": None}, "rocprof_roofline": {0: {}}}]


ROCPROF_JUNK = [b",", b'"', b"\n", b"n/a", b"-1", b"1e999", b"nan", b"1.5E+15", b"\r\n", b"\xef\xbb\xbf", b"[3]",
                b"_sum", b"\xff", b"9" * 30]
ROCPROF_REPLACEMENTS = [b"0", b"-7", b"", b"x", b"\x00"]


def fuzzed(seeds: list[bytes]):
    return mutated(seeds, ROCPROF_JUNK, ROCPROF_REPLACEMENTS, raw_size=1024)


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_fuzz_parser_returns_a_result_or_an_input_error(fmt):
    parse = ingest.FORMATS[fmt].parse
    seeds = [raw(n) for n in SEEDS[fmt]]

    @FUZZ
    @given(data=fuzzed(seeds), context=st.sampled_from(CONTEXTS))
    def run(data, context):
        try:
            out = parse(data, "fuzz.csv", context)
        except InputError:
            return
        if isinstance(out, Workload):
            f = out.frame
            assert len(f) > 0 and ((f["count"] >= 1) if fmt in SUMMARIES else (f["count"] == 1)).all()
            assert not np.isinf(f.select_dtypes("number").to_numpy(dtype=float)).any()
            assert (f["time_s"].dropna() > 0).all() and (f["flops"].dropna() >= 0).all()
            assert all((f[c].dropna() >= 0).all() for c in out.byte_columns)
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in out.meta.items())
        else:
            assert isinstance(out, dict) and 1 <= len(out) <= 2 and not (set(out) - {
                "rocprof_sysinfo", "rocprof_roofline", "rocprof_dispatch_info", "rocprof_agents", "measured_hardware"})
            assert all(isinstance(h, Hardware) and h.levels[0].name == "hbm" for h in out.get("measured_hardware", ()))

    run()


@FUZZ
@given(text=st.text(max_size=400), name=st.text(max_size=20))
def test_fuzz_sniffers_never_raise(text, name):
    for fmt in SEEDS:
        assert ingest.FORMATS[fmt].sniff(text, name) in (True, False)


@FUZZ
@given(data=fuzzed([raw(n) for names in SEEDS.values() for n in names]))
def test_fuzz_detect_and_read_many(data):
    with contextlib.suppress(RoofcoreError):
        ingest.read_many([(data, "a.csv"), (raw("sysinfo_mi300.csv"), "sysinfo.csv")])
