"""Nsight Compute CSV (details and raw pages): goldens per fixture, one test per quirk docs/formats.md names,
exact messages for failed and unusable exports, the real samples, and a fuzz test."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofhelpers import mutated, sample

from roofcore import InputError, aggregate, analyze, ingest, load_catalogs
from roofcore.ingest import ncu, ncu_canon, ncu_read, ncu_tensor
from roofcore.models import Workload

DATA = Path(__file__).parent / "data" / "ncu"
SAMPLES = Path(__file__).parent.parent.parent / "shared" / "samples"
CMD = ("ncu --csv --print-units base --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg,"
       "sm__cycles_elapsed.avg.per_second,sm__sass_thread_inst_executed_op_dadd_pred_on.sum,"
       "sm__sass_thread_inst_executed_op_dmul_pred_on.sum,sm__sass_thread_inst_executed_op_dfma_pred_on.sum,"
       "sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,"
       "sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__sass_thread_inst_executed_op_hadd_pred_on.sum,"
       "sm__sass_thread_inst_executed_op_hmul_pred_on.sum,sm__sass_thread_inst_executed_op_hfma_pred_on.sum,"
       "sm__inst_executed_pipe_tensor.sum,dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum ./app > profile.csv")
METRICS = CMD.split("--metrics ")[1].split(" ")[0]
FLOPS = ",".join(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in
                 ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma"))


def read(name: str) -> Workload:
    return ingest.read(DATA / name, name=name)



def col(w: Workload, c: str) -> list:
    return w.frame[c].tolist()


def message(name: str) -> str:
    with pytest.raises(InputError) as e:
        read(name)
    return str(e.value)


# ------------------------------------------------------------------------------------------ goldens


def test_12_column_nersc_metrics_with_preamble_noise():
    w = read("details_12col_nersc.csv")
    assert w.formats == ("ncu-details",) and w.skipped == ()
    assert col(w, "row") == ["0", "1", "2"]
    assert col(w, "name")[0] == "void saxpy_kernel<float>(int, float, const float *, float *)"
    # docs/formats.md: 2·dfma + dmul + dadd + 2·ffma + fmul + fadd + 2·hfma + hmul + hadd (+ tensor FLOPs); launch 1
    # used tensor cores, but neither its name nor the export (no CC, no device) says which MMA instruction
    f = w.frame["flops"]
    assert f[0] == 2 * 1_048_576 and np.isnan(f[1]) and f[2] == 2 * 262_144 + 1_024 + 1_024 + 2 * 10
    assert col(w, "precision") == ["fp32", "fp16", "fp64"]
    assert col(w, "unit") == ["vector", "matrix", "vector"]
    assert col(w, "bytes_hbm") == [12_582_912, 3_145_728, 2_097_152]
    assert col(w, "bytes_l2") == [12_591_104, 9_437_184, 2_099_200]
    assert col(w, "bytes_l1") == [12_599_296, 6_291_456, 2_101_248]
    # launch 2 has no gpu__time_duration.sum row: sm__cycles_elapsed.avg / .per_second
    assert col(w, "time_s") == [9.216e-6, 45.056e-6, 20_000 / 1e9]
    assert col(w, "count") == [1, 1, 1]
    assert w.warnings == (
        "tensor-core FLOPs unknown for 1 launch: no instruction shape in the kernel name and no compute capability or "
        "known device name in the export; collect sm__ops_path_tensor_* counters (e.g. sm__ops_path_tensor_src_fp16_"
        "dst_fp32.sum) for exact tensor FLOPs.",)
    assert w.device is None and w.meta["profiler"] == "Nsight Compute" and "compute_capability" not in w.meta


def test_15_column_bom_crlf_op_dram_names_and_smsp_counters():
    w = read("details_15col_bom_crlf.csv")
    assert w.device == "NVIDIA GeForce RTX 5070"
    assert w.meta["compute_capability"] == "12.0" and w.meta["arch"] == "sm_120"
    assert col(w, "name") == ["(anonymous namespace)::tile_gemm<float, 16>(const float *, const float *, float *, int, int, int)"]
    assert col(w, "flops") == [2 * 8_388_608]
    assert col(w, "bytes_hbm") == [33_554_432 + 16_777_216]  # dram__bytes_read.sum is n/a: the _op_ names
    assert col(w, "time_s") == [1_048_576e-9]
    assert "bytes_l2" not in w.frame.columns  # no lts counter: no L2 column rather than an unknown one
    assert w.warnings == (
        "CUDA-core FLOPs leave out dadd, dmul, dfma, hadd, hmul, hfma: their sm__sass_thread_inst_executed_op_"
        "*_pred_on.sum counters are not in the export.",
        "no tensor-core counter (sm__inst_executed_pipe_tensor.sum or sm__ops_path_tensor_*): FLOPs count CUDA cores "
        "only.",
        "n/a, empty, negative, non-numeric or wrong-unit values read as unknown: dram__bytes_read.sum (1 launch), "
        "dram__bytes_write.sum (1 launch).",
    )


def test_auto_scaled_units_go_through_the_unit_table():
    w = read("details_auto_units.csv")
    assert col(w, "time_s") == [12.29e-6, 1.5e-3, 980e-9]
    assert col(w, "bytes_hbm") == pytest.approx([512e3, 64.25e6, 1.07e9], rel=1e-15)  # SI (unverified) prefixes
    assert col(w, "bytes_l2") == pytest.approx([1.02e6, 128.5e6, 2.14e9], rel=1e-15)
    assert col(w, "flops") == [262_144] * 3
    assert w.warnings[-1] == ("2 of 3 launches ran under 1 µs or moved under 1 MB of DRAM traffic: ncu replays them "
                              "with flushed caches at base clocks, so their DRAM bytes and intensity are unreliable.")


def test_20_column_rule_rows_are_kept_aside():
    w = read("details_20col_rules.csv")
    assert len(w) == 2 and w.skipped == () and w.warnings == ()
    assert col(w, "flops") == [4_194_304 + 4_194_304 + 2 * 8_388_608] * 2
    assert col(w, "time_s") == [20.48e-6, 20.512e-6]
    assert w.meta["ncu_rules"] == (
        "SOLBottleneck (OPT): Memory is more heavily utilized than Compute: look at the memory workload analysis "
        "section to see where the memory system bottleneck is.; LaunchConfiguration (WRN): A wave of thread blocks is "
        "defined as the maximum number of blocks that can run at once.")
    assert w.meta["arch"] == "sm_90"


def test_zero_clock_rate_never_divides_to_infinity():
    text = (DATA / "details_12col_nersc.csv").read_text().replace('"cycle/second","1,000,000,000.00"', '"cycle/second","0"')
    w = ingest.read(text.encode(), name="zero.csv")
    assert np.isnan(w.frame["time_s"][2]) and w.frame["time_s"][0] == 9.216e-6  # unknown, not inf


def test_trailing_comma_on_data_rows():
    w = read("details_trailing_comma.csv")
    assert col(w, "bytes_hbm") == [8_388_608] and col(w, "time_s") == [5.12e-6]
    assert col(w, "flops") == [0.0]  # counters present and zero: known zero work, not unknown
    assert w.frame["precision"].isna().all() and w.skipped == ()


def test_compute_capability_from_device_attributes():
    lines = (DATA / "details_trailing_comma.csv").read_text().splitlines()
    dram = '"dram__bytes.sum","byte","8,388,608"'
    attrs = [lines[1].replace(dram, f'"device__attribute_compute_capability_{k}","","{v}"') for k, v in
             (("major", 8), ("minor", 6))]
    w = ingest.read("\n".join(lines[:2] + attrs + lines[2:]).encode(), name="cc.csv")
    assert w.meta["compute_capability"] == "8.6" and w.meta["arch"] == "sm_86"  # no CC column in 12-column exports


def test_nvtx_columns_are_read_by_name():
    w = read("details_nvtx.csv")
    assert col(w, "name") == ["void reduce_sum<256>(const float *, float *, int)"]
    assert col(w, "flops") == [1_048_576] and col(w, "bytes_hbm") == [4_194_304] and col(w, "time_s") == [3.072e-6]


def test_missing_values_are_unknown_not_zero():
    w = read("details_missing_values.csv")
    f = w.frame
    assert np.isnan(f["flops"][0]) and f["flops"][1] == 2 * 131_072  # "PolicySpread" in fadd: unknown FLOPs
    assert col(w, "bytes_hbm") == [1_500_000, 2_000_000]  # dram__bytes.sum n/a: read + write (--print-fp values)
    assert np.isnan(f["bytes_l2"][0]) and np.isnan(f["bytes_l1"][0])  # "" and "inf"
    assert col(w, "time_s") == [2_500 / 1.25e9, 2.048e-6]  # "nan" duration: cycles / rate
    assert w.warnings == (
        "n/a, empty, negative, non-numeric or wrong-unit values read as unknown: dram__bytes.sum (1 launch), "
        "gpu__time_duration.sum (1 launch), l1tex__t_bytes.sum (1 launch), lts__t_bytes.sum (1 launch), "
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum (1 launch).",)


def test_tensor_op_counters_are_flops_and_name_the_precision():
    w = read("details_tensor_ops.csv")
    # plain bf16 family counted once (not plus its _sparsity_off twin); the pipe counter is ignored
    assert col(w, "flops") == [1_073_741_824 + 2 * 1_000, 4_096 + 2_048]
    assert col(w, "precision") == ["bf16", "fp16"] and col(w, "unit") == ["matrix", "matrix"]
    assert w.warnings[0] == ("2:4-sparse tensor ops counted as executed (sm__ops_path_tensor_src_fp16_dst_fp16_"
                             "sparsity_on): compare them with dense roofs with care.")
    assert not any("× 512" in x for x in w.warnings)


def test_two_tables_with_application_output_between_and_inside():
    w = read("details_two_tables.csv")
    assert col(w, "row") == ["0", "1"] and w.skipped == ()
    assert col(w, "flops") == [1_024_000, 2_048_000] and col(w, "time_s") == [4e-6, 8e-6]


def test_a_second_table_with_other_columns_is_read_by_its_own_header():
    first = (DATA / "details_two_tables.csv").read_text().split("==PROF== Disconnected from process 10")[0]
    second = (DATA / "details_nvtx.csv").read_text().replace('\n"0",', '\n"7",')
    w = ingest.read((first + "app output\n" + second).encode(), name="mixed.csv")
    assert col(w, "row") == ["0", "7"] and col(w, "flops") == [1_024_000, 1_048_576] and w.skipped == ()
    assert col(w, "name") == ["init_kernel(float *, int)", "void reduce_sum<256>(const float *, float *, int)"]


def test_labels_only_details_page_is_time_only():
    w = read("details_labels_only.csv")
    assert col(w, "time_s") == [4.35e-6, 1.25e-3]  # the "Duration" label, usecond / msecond
    assert w.meta["time_only"] == "true" and np.isnan(w.frame["flops"]).all()
    assert w.warnings == (f"no FLOP or byte counters in this export (DRAM throughput only as a % of peak, which is not "
                          f"bytes): only launch times are read (time only; join it with an inventory, or profile with: "
                          f"{CMD}).",)


def test_raw_page_units_row_and_wide_columns():
    w = read("raw_page.csv")
    assert w.formats == ("ncu-raw",) and w.device == "NVIDIA H100 80GB HBM3" and w.meta["arch"] == "sm_90"
    assert col(w, "row") == ["0", "1", "2"]
    assert col(w, "flops") == [34_359_738_368 + 2 * 65_536, 2 * 2_097_152, 34_359_738_368 + 2 * 65_536]
    assert col(w, "precision") == ["fp16", "fp32", "fp16"] and col(w, "unit") == ["matrix", "vector", "matrix"]
    assert col(w, "bytes_hbm") == [20_480_000, 16_384_000, 20_480_000]  # Kbyte read + write
    assert col(w, "bytes_l2") == [48e6, 16e6, 48e6] and col(w, "bytes_l1") == [96e6, 32e6, 96e6]
    assert col(w, "time_s") == pytest.approx([210.5e-6, 12.75e-6, 209.25e-6], rel=1e-15)


def test_python_reader_gives_the_same_result_as_pyarrow(monkeypatch):
    names = ["details_12col_nersc.csv", "details_15col_bom_crlf.csv", "details_20col_rules.csv", "details_nvtx.csv",
             "details_missing_values.csv", "details_tensor_ops.csv", "details_trailing_comma.csv", "raw_page.csv",
             "details_tensor_pipe.csv", "details_log_file.log", "raw_legacy_2019.csv", "details_set_full_ragged.csv"]
    fast = {n: read(n) for n in names}

    def broken(*args, **kwargs):
        raise pa.ArrowInvalid("forced")

    monkeypatch.setattr(ncu_read, "arrow_read", broken)
    for n in names:
        slow = read(n)
        assert slow.frame.equals(fast[n].frame), n
        assert slow.warnings == fast[n].warnings and slow.meta == fast[n].meta and slow.device == fast[n].device


def test_many_launches_read_in_chunks_match_the_python_reader(monkeypatch):
    lines = (DATA / "details_12col_nersc.csv").read_text().splitlines()
    header, rows = lines[4], lines[5:]
    body = [header] + [f'"{i * 3 + int(r[1])}"' + r[r.index(","):] for i in range(300) for r in rows]
    data = "\n".join(body).encode()
    monkeypatch.setattr(ncu_read, "BLOCK_SIZE", 4096)  # many arrow chunks with their own dictionaries
    monkeypatch.setattr(ncu_read, "PIECE_SIZE", 50_000)  # and several read_csv pieces
    fast = ncu.parse_details(data, "big.csv")
    assert len(fast) == 900 and col(fast, "row")[-1] == "899"
    np.testing.assert_array_equal(col(fast, "flops")[-3:], col(read("details_12col_nersc.csv"), "flops"))
    monkeypatch.setattr(ncu_read, "arrow_read", lambda *a, **k: (_ for _ in ()).throw(pa.ArrowInvalid("forced")))
    slow = ncu.parse_details(data, "big.csv")
    assert slow.frame.equals(fast.frame) and slow.warnings == fast.warnings


def test_invalid_utf8_in_a_kernel_name_is_replaced_not_fatal():
    data = (DATA / "details_nvtx.csv").read_bytes().replace(b"reduce_sum", b"reduce\xff_sum")
    w = ncu.parse_details(data, "bad-utf8.csv")
    assert col(w, "name") == ["void reduce\ufffd_sum<256>(const float *, float *, int)"] and col(w, "flops") == [1_048_576]


def test_launch_id_with_thousands_separator():
    text = (DATA / "details_nvtx.csv").read_text().replace('\n"0",', '\n"1,024",')
    assert col(ingest.read(text.encode(), name="id.csv"), "row") == ["1024"]


def test_ragged_and_stray_rows_are_skipped_with_a_reason():
    text = (DATA / "details_nvtx.csv").read_text().splitlines()
    text.insert(3, '"x","y"')  # too few fields
    text.insert(5, '"not an id"' + text[4][text[4].index(","):])
    w = ingest.read("\n".join(text).encode(), name="ragged.csv")
    assert [(s.row, s.reason) for s in w.skipped] == [("line 4", "expected 17 fields, found 2"),
                                                      ("line 6", "ID is not a launch number")]
    assert col(w, "flops") == [1_048_576]


def test_aggregate_and_analyze_per_launch_rows():
    w = read("details_20col_rules.csv")
    agg = aggregate(w).frame
    assert agg["count"].tolist() == [2] and agg["time_s"].tolist() == pytest.approx([40.992e-6])
    a = analyze(w, [load_catalogs().get("h100-sxm")])
    assert a.summary("h100-sxm")["kernels"] == 2


# ------------------------------------------------------------------------------------------ detection and messages


@pytest.mark.parametrize("name, fmt", [
    ("details_12col_nersc.csv", "ncu-details"), ("details_15col_bom_crlf.csv", "ncu-details"),
    ("details_20col_rules.csv", "ncu-details"), ("details_nvtx.csv", "ncu-details"), ("raw_page.csv", "ncu-raw"),
    ("failed_no_kernels.txt", "ncu-details"), ("rules_only.csv", "ncu-details"),
    ("details_set_full_ragged.csv", "ncu-details"), ("raw_legacy_2019.csv", "ncu-raw"),
    ("details_log_file.log", "ncu-details"),
])
def test_detected_from_content(name, fmt):
    assert ingest.detect((DATA / name).read_bytes(), "profile.csv").name == fmt


def test_failed_run_no_kernels_message():
    assert message("failed_no_kernels.txt") == (
        "failed_no_kernels.txt: Nsight Compute profiled no kernels (\"No kernels were profiled\"), so the output has no "
        "table. Hint: if the application launches its kernels from a child process (Python launchers, mpirun, torchrun), "
        "profile with --target-processes all; also check the --kernel-name, --launch-skip and --launch-count filters.")


def test_failed_run_other_error_message():
    assert message("failed_other_error.txt") == (
        f"failed_other_error.txt: Nsight Compute reported an error and wrote no table: Failed to profile \"matmul\" in "
        f"process 2718 Hint: fix that and profile again, e.g. {CMD}")


PERM = ("no permission to read GPU performance counters (ERR_NVGPUCTRPERM), so Nsight Compute measured no kernel. "
        "Hint: run as admin/root or enable access (NVreg_RestrictProfilingToAdminUsers=0 for the nvidia kernel module on "
        "Linux; NVIDIA Control Panel > Developer > Manage GPU Performance Counters on Windows), then profile again; see "
        "https://developer.nvidia.com/ERR_NVGPUCTRPERM.")


def test_permission_error_message():
    data = b"==PROF== Connected to process 1 (/a.out)\n==ERROR== Error: ERR_NVGPUCTRPERM - no access\nresult 42\n"
    with pytest.raises(InputError) as e:
        ingest.read(data, name="perm.csv")
    assert str(e.value) == f"perm.csv: {PERM}"


def test_rule_only_message():
    assert message("rules_only.csv") == (
        "rules_only.csv: this export holds only rule text (SOLFPRoofline), no metric values: roofline sections print "
        "just their rules on the details page. Hint: re-export the report with the raw page (ncu -i report.ncu-rep --csv "
        f"--page raw --print-units base > raw.csv) or profile with --metrics {METRICS}.")


def test_header_only_message():
    assert message("header_only.csv") == (
        "header_only.csv: expected at least one launch row under the ncu header, found a header only. Hint: the run "
        "measured no kernel: check the ncu output for ==WARNING== or ==ERROR== lines and the --kernel-name / "
        "--launch-skip / --launch-count filters.")


def test_no_roofline_metric_message():
    assert message("no_roofline_metrics.csv") == (
        "no_roofline_metrics.csv: no duration, FLOP or byte metric for a roofline in this export (2 other metrics, e.g. "
        "launch__registers_per_thread, sm__warps_active.avg.pct_of_peak_sustained_active). "
        f"Hint: profile with: {CMD}")


def test_european_locale_message():
    assert message("details_european_locale.csv") == (
        "details_european_locale.csv: metric values are in a European number format (e.g. '1,38': decimal comma, dots "
        "between thousands), as ncu writes them under such a locale; they cannot be read unambiguously. Hint: profile "
        "(or re-export with ncu -i report.ncu-rep --csv) with LC_ALL=C, e.g. LC_ALL=C ncu --csv --print-units base ...")


def test_european_thousands_dots_alone_are_caught():
    text = (DATA / "details_european_locale.csv").read_text().replace('"1,38"', '"1.38"')
    with pytest.raises(InputError, match=r"European number format \(e\.g\. '65\.536'"):
        ingest.read(text.encode(), name="eu.csv")


def test_raw_page_decimal_comma_in_any_column_is_refused():
    """The raw page's locale check samples the first launches of every metric column (not 20,000 values of each):
    a decimal comma in the last column alone, in a later launch, is still found."""
    head = [line for line in (DATA / "raw_page.csv").read_text().splitlines() if line.startswith('"')][:3]
    rows = [head[2].replace('"(64, 16, 1)"', f'"({i + 1}, 16, 1)"').replace('"0","2024"', f'"{i}","2024"', 1)
            for i in range(1200)]
    fields = next(csv.reader([rows[1100]]))
    fields[-1] = "34359738,5"  # a decimal comma, in the last metric column of launch 1,100
    rows[1100] = ",".join(f'"{f}"' for f in fields)
    with pytest.raises(InputError, match=r"European number format \(e\.g\. '34359738,5'"):
        ingest.read("\n".join([*head[:2], *rows]).encode(), name="raw_eu.csv")


def _saved_as_plain_csv(name: str) -> bytes:
    """A fixture as a spreadsheet saves it back: quotes only where needed, Kernel Name moved first, CRLF, a BOM; the
    lines before the header kept."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    rows = list(csv.reader(lines[at:]))
    first = rows[0].index("Kernel Name")
    rows = [[r[first], *r[:first], *r[first + 1:]] if len(r) > first else r for r in rows]  # ==PROF== lines kept
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return ("\ufeff" + "\r\n".join(lines[:at]) + ("\r\n" if at else "") + out.getvalue()).encode("utf-8")


@pytest.mark.parametrize("name", ["details_missing_values.csv", "raw_page.csv", "details_tensor_pipe.csv"])
def test_plain_csv_saved_back_is_requoted_in_one_pass(monkeypatch, name):
    """A table saved back as plain CSV, every row as wide as its header (ncu's ==PROF== lines after it kept), is read
    by pyarrow and requoted in one pass (not line by line): the same launches, figures and warnings as the export."""
    native = read(name)

    def line_by_line(data):
        raise AssertionError("the line-by-line rewrite was used")

    monkeypatch.setattr(ncu, "canonical", line_by_line)
    saved = ingest.read(_saved_as_plain_csv(name), name=name)
    assert saved.frame.equals(native.frame) and saved.warnings == native.warnings and saved.skipped == native.skipped


def test_plain_csv_with_a_spilled_name_is_still_put_back_line_by_line():
    """A kernel name left unquoted spills over its commas: the row is wider than the header, the one-pass requote
    declines, and the line-by-line rewrite puts the name back together."""
    native = read("details_missing_values.csv")
    text = _saved_as_plain_csv("details_missing_values.csv").decode("utf-8")
    name = str(native.frame["name"].iloc[0])
    assert ", " in name and f'"{name}"' in text
    spilled = text.replace(f'"{name}"', name).encode("utf-8")
    assert ncu_canon.requoted(spilled) is None
    assert ingest.read(spilled, name="x.csv").frame["name"].tolist() == native.frame["name"].tolist()


def test_not_an_ncu_export_message():
    with pytest.raises(InputError) as e:
        ncu.parse_details(b"a,b\n1,2\n", "x.csv")
    assert str(e.value) == (
        'x.csv: expected an Nsight Compute CSV table (a header starting "ID","Process ID",), found no such header. '
        "Hint: export with ncu --csv (details page, best with --print-units base) or ncu --csv --page raw, without "
        "--print-summary; ncu -i report.ncu-rep --csv --page raw re-exports a saved report.")


def test_unit_table():
    assert ncu.unit_factor("nsecond") == ("time", 1e-9) and ncu.unit_factor("ms") == ("time", 1e-3)
    assert ncu.unit_factor("Gbyte") == ("bytes", 1e9) and ncu.unit_factor("Kbyte") == ("bytes", 1e3)
    assert ncu.unit_factor("cycle/second") == ("frequency", 1.0)
    assert ncu.unit_factor("cycle/nsecond") == ("frequency", 1e9)
    assert ncu.unit_factor("Ghz") == ("frequency", 1e9) and ncu.unit_factor("MHz") == ("frequency", 1e6)
    assert ncu.unit_factor("inst") == ("count", 1.0) and ncu.unit_factor("") == ("count", 1.0)
    assert ncu.unit_factor("Minst") == ("count", 1e6)
    assert ncu.unit_factor("%") is None and ncu.unit_factor("register/thread") is None
    assert ncu.unit_factor("Gbyte/s") == ("bandwidth", 1e9) and ncu.unit_factor("Gbyte/second") == ("bandwidth", 1e9)
    assert ncu.unit_factor("Tbyte/s") == ("bandwidth", 1e12) and ncu.unit_factor("byte/second") == ("bandwidth", 1.0)


def test_wrong_unit_is_unknown_with_a_warning():
    text = (DATA / "details_nvtx.csv").read_text().replace('"dram__bytes.sum","byte"', '"dram__bytes.sum","%"')
    w = ingest.read(text.encode(), name="u.csv")
    assert np.isnan(w.frame["bytes_hbm"][0])
    assert ("n/a, empty, negative, non-numeric or wrong-unit values read as unknown: dram__bytes.sum (1 launch, unit '%')."
            in w.warnings)


# ------------------------------------------------------------------------------------------ ragged pages, legacy names, logs


def test_set_full_details_page_with_ragged_rows_and_human_units():
    w = read("details_set_full_ragged.csv")  # metric rows: 16 fields under a 20-column header; rule rows: 20
    assert len(w) == 2 and w.skipped == () and np.isnan(w.frame["flops"]).all()
    assert col(w, "time_s") == pytest.approx([12.80e-6, 1.25e-3], rel=1e-15)  # "Duration" in us, then in ms
    # "Memory Throughput" in Gbyte/s (then Gbyte/second) × Duration; the same label in % is not a byte figure
    assert col(w, "bytes_hbm") == pytest.approx([640.00e9 * 12.80e-6, 1_234.50e9 * 1.25e-3], rel=1e-12)
    assert w.warnings == (
        "derived figures: DRAM bytes of 2 launches = throughput (byte/s: dram__bytes.sum.per_second, the details "
        "page's \"Memory Throughput\") × duration, rounded as the export rounds them; collect dram__bytes.sum "
        "(lts__t_bytes.sum, l1tex__t_bytes.sum) for counted bytes.",
        "no FLOP counters in this export (a roofline section prints no numbers on the details page): FLOPs unknown; "
        f"add --metrics {FLOPS},sm__inst_executed_pipe_tensor.sum.",
    )
    assert w.meta["arch"] == "sm_90" and "SOLFPRoofline (INF)" in w.meta["ncu_rules"]


def test_ragged_rows_are_read_by_pyarrow_at_the_metric_rows_width(monkeypatch):
    def line_reader(*args, **kwargs):
        raise AssertionError("the csv-module reader was used")

    monkeypatch.setattr(ncu_read, "python_read", line_reader)  # rule rows come through pyarrow's invalid-row handler
    w = read("details_set_full_ragged.csv")
    assert len(w) == 2 and w.meta["ncu_rules"].startswith("SOLBottleneck (OPT)")


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_ragged_page_with_bytes_that_are_not_utf8_is_read_by_the_line_reader():
    """pyarrow decodes a longer row before its handler sees it: not UTF-8, that fails inside pyarrow (a warning,
    the row lost). Such a page goes to the line reader, which decodes with replacement."""
    data = (DATA / "details_set_full_ragged.csv").read_bytes()
    i = data.rindex(b"This workload exhibits")  # the second launch's rule row (past the format check's look)
    data = data[:i] + b"This workload \x97 exhibits" + data[i + 22:]
    w = ingest.read(data, name="latin1.csv", fmt="ncu-details")
    assert len(w) == 2 and w.skipped == () and w.meta["ncu_rules"].startswith("SOLBottleneck (OPT)")
    assert not ncu_read.utf8(data, 0, len(data)) and ncu_read.utf8("é".encode() * 3, 0, 6)


def test_a_short_metric_row_is_padded_but_a_row_missing_its_value_is_skipped():
    lines = (DATA / "details_set_full_ragged.csv").read_text().splitlines()
    lines[6] = lines[6][: lines[6].rindex(',"12.80"')]  # the Duration row cut before its value
    w = ingest.read("\n".join(lines).encode(), name="cut.csv")
    assert [(s.row, s.reason) for s in w.skipped] == [("line 7", "expected 20 fields, found 14")]
    assert np.isnan(w.frame["time_s"][0]) and np.isnan(w.frame["bytes_hbm"][0]) and w.frame["time_s"][1] == 1.25e-3


def test_legacy_2019_raw_page_names_two_decimals_and_lists():
    w = read("raw_legacy_2019.csv")
    assert w.formats == ("ncu-raw",) and w.device == "Tesla P100-PCIE-16GB" and w.meta["arch"] == "sm_60"
    assert col(w, "bytes_hbm") == [1_048_576 + 524_288, 2_097_152 + 0]  # dram__read_bytes + dram__write_bytes
    # gpu__time_duration; the second launch has none: sm__elapsed_cycles_avg / gpc__frequency
    assert col(w, "time_s") == [3_104e-9, 2_657 / 1_328_500_000]
    assert np.isnan(w.frame["flops"]).all() and w.skipped == ()
    assert w.warnings == (
        f"no FLOP counters in this export: FLOPs unknown; add --metrics {FLOPS} (on this pre-Volta GPU, CC 6.0, "
        "nvprof --metrics flop_count_sp,flop_count_dp,flop_count_hp counts them too).",
        "n/a, empty, negative, non-numeric or wrong-unit values read as unknown: gpu__time_duration.sum (1 launch).",
    )


def test_label_name_cells_are_read_by_their_metric_name():
    text = (DATA / "details_log_file.log").read_text().replace('"gpu__time_duration.sum"',
                                                               '"Duration (gpu__time_duration.sum)"')
    assert col(ingest.read(text.encode(), name="ln.csv"), "time_s") == [250_880e-9, 6_144e-9]


def test_nvtx_columns_on_the_raw_page():
    lines = (DATA / "raw_page.csv").read_text().splitlines()
    col_name = '"Id:Domain:Start/Stop_Range:PL_Type:PL_Value"'
    out = []
    for ln in lines:
        if ln.startswith('"ID"'):
            ln = ln.replace('"Host Name",', f'"Host Name",{col_name},')
        elif ln.startswith('""'):
            ln = '"",' + ln
        elif ln.startswith('"'):
            cell = '" ""3:<default domain>:prefill:none:none"" "' if ln.startswith('"2"') else '""'
            ln = ln.replace('"127.0.0.1",', f'"127.0.0.1",{cell},')
        out.append(ln)
    w = ingest.read("\n".join(out).encode(), name="raw_nvtx.csv")
    assert col(w, "group") == [None, None, "prefill"] and col(w, "row") == ["0", "1", "2"]
    assert col(w, "flops") == col(read("raw_page.csv"), "flops")


def test_log_file_output_is_detected_by_content_whatever_its_name():
    data = (DATA / "details_log_file.log").read_bytes()
    for name in ("prof.log", "prof.txt", "prof"):
        assert ingest.detect(data, name).name == "ncu-details"
    w = ingest.read(DATA / "details_log_file.log", name="prof.log")
    assert col(w, "flops") == [2 * 268_435_456 + 1_048_576, 1_048_576] and col(w, "time_s") == [250_880e-9, 6_144e-9]
    assert w.device == "NVIDIA L4" and w.meta["compute_capability"] == "8.9"


def test_nvtx_push_pop_ranges_become_the_group():
    assert col(read("details_nvtx.csv"), "group") == ["forward/layer 3, attn:qkv"]  # nested, a ":" in a name


@pytest.mark.parametrize("header, cell, group", [
    ("Id:Domain:Start/Stop_Range:PL_Type:PL_Value", ' "0:<default domain>:linear_nvtx:none:none" ', "linear_nvtx"),
    ("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
     '12  "<default domain>:step:none:none:none:none:none:none"', "step"),
    ("thread Domain:Push/Pop_Range:PL_Type:PL_Value", '3  "<default domain>:decode"', "decode"),  # fewer fields
    ("thread Domain:Push/Pop_Range:PL_Type:PL_Value", "", None),
])
def test_nvtx_cells(header, cell, group):
    assert ncu.nvtx_range(header, cell) == group


# ------------------------------------------------------------------------------------------ tensor instructions


def test_tensor_pipe_counts_times_the_instruction_shape():
    w = read("details_tensor_pipe.csv")  # CC 7.5; no CUDA-core counters
    f = w.frame["flops"]
    # per SASS instruction: h884 (fp16 accumulate) 1,024 per HMMA.884 STEP (a warp's m8n8k4, 2,048 FLOP, in 2 STEPs),
    # s1688 and tensor16x8x8 2·16·8·8, CUTLASS arch::Mma GemmShape<8, 8, 16> and i8816 2·8·8·16, an unnamed fp16
    # kernel the sm_75 default 2·16·8·8; wgmma unknown; no tensor work: unknown
    assert f[:6].tolist() == [1_000 * 1_024, 2_000 * 2_048, 3_000 * 2_048, 4_000 * 2_048, 500 * 2_048, 6_000 * 2_048]
    assert np.isnan(f[6]) and np.isnan(f[7])
    assert col(w, "precision")[:7] == ["fp16", "fp16", "fp16", "int8", "int8", "fp16", "bf16"]
    assert col(w, "unit")[:7] == ["matrix"] * 7
    assert w.warnings[:2] == (
        "tensor-core FLOPs = sm__inst_executed_pipe_tensor.sum × the FLOPs of one MMA instruction (2·M·N·K for shape "
        "M×N×K; Volta's HMMA.884 steps: 512, or 1,024 accumulating in fp16): × 1,024 (8×8×4, from the kernel name; "
        "HMMA.884 in 2 STEPs, fp16 accumulate) for 1 launch; × 2,048 (16×8×8, from the kernel name) for 2 "
        "launches; × 2,048 (8×8×16, from the kernel name) for 2 launches; × 2,048 (16×8×8, the sm_75 default for "
        "fp16: no shape in the kernel name) for 1 launch; collect sm__ops_path_tensor_* counters (e.g. sm__ops_path_"
        "tensor_src_fp16_dst_fp32.sum) for exact tensor FLOPs.",
        "tensor-core FLOPs unknown for 1 launch: a Hopper/Blackwell warpgroup MMA (wgmma / tcgen05), whose work per "
        "instruction depends on its N; collect sm__ops_path_tensor_* counters (e.g. sm__ops_path_tensor_src_fp16_dst_"
        "fp32.sum) for exact tensor FLOPs.",
    )
    assert w.warnings[2].startswith("no CUDA-core FLOP counters (sm__sass_thread_inst_executed_op_*): FLOPs are "
                                    "tensor-core FLOPs alone (6 launches), unknown for the other 2; add them with")


CUTLASS_DEVICE = ("cutlass::gemm::device::Gemm<cutlass::half_t, cutlass::layout::RowMajor, float, "
                  "cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<128, 256, 64>, "
                  "cutlass::gemm::GemmShape<64, 64, 64>, cutlass::gemm::GemmShape<16, 8, 16>, 3>")


@pytest.mark.parametrize("name, shape", [
    ("volta_h884gemm_128x128_ldg8_nn", (8, 8, 4)), ("volta_s884gemm_fp16_256x128_ldg8_f2f_tn", (8, 8, 4)),
    ("turing_h1688gemm_256x128_ldg8_tn", (16, 8, 8)), ("ampere_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x4_tn",
                                                        (16, 8, 16)),
    ("turing_i8816gemm_int8_128x128_ldg16_nt", (8, 8, 16)), ("ampere_i16832gemm_int8_256x128_ldg16_stages_64x3_nt",
                                                             (16, 8, 32)),
    ("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
     (16, 8, 16)),
    ("cutlass_80_tensorop_s1688gemm_64x64_16x10_nn_align4", (16, 8, 8)), ("fused_attn_hmma16816_kernel", (16, 8, 16)),
    ("cutlass::arch::Mma<cutlass::gemm::GemmShape<(int)16, (int)8, (int)8>, (int)32, cutlass::half_t>", (16, 8, 8)),
    (CUTLASS_DEVICE, (16, 8, 16)),  # the third GemmShape of a CUTLASS template is the instruction's
    ("gemm_kernel_256x128_stages_3(const __half *, __half *)", None), ("pack_884_rows(int *)", None),
    ("void add<float>(float *, const float *, int)", None),
])
def test_mma_shape_from_kernel_names(name, shape):
    assert ncu_tensor.name_shape(name) == shape


@pytest.mark.parametrize("name, cc, device, flops", [
    ("tc_gemm(const __half *, float *)", "7.0", None, 512),  # Volta HMMA.884: 8·8·4·2
    ("tc_gemm(const __half *, float *)", "7.5", None, 2_048),  # Turing HMMA.1688: 16·8·8·2
    ("tc_gemm(const __half *, float *)", "8.0", None, 4_096),  # Ampere HMMA.16816: 16·8·16·2
    ("tc_gemm_tf32(const float *, float *)", "8.6", None, 2_048),  # TF32 m16n8k8
    ("tc_gemm_int8(const int8_t *, int *)", "8.9", None, 8_192),  # IMMA.16832
    ("tc_gemm(const __half *, float *)", None, "NVIDIA GeForce RTX 2080 Ti", 2_048),  # CC from the device name
    ("tc_gemm(const __half *, float *)", None, "NVIDIA A100-SXM4-40GB", 4_096),
    ("tc_gemm(const __half *, float *)", None, None, np.nan),  # nothing says which instruction
    ("tc_gemm(const __half *, float *)", "6.1", None, np.nan),  # no tensor cores
    ("flash_fwd_wgmma_kernel<Sm90>", "9.0", None, np.nan),  # warpgroup MMA: work per instruction depends on N
])
def test_default_instruction_of_the_architecture(name, cc, device, flops):
    codes, factors = ncu_tensor.per_launch(np.array([name], dtype=object), cc, device)
    np.testing.assert_equal(factors[codes[0]].flops, flops)


# ------------------------------------------------------------------------------------------ real samples


@pytest.mark.samples
def test_sample_a100_sgemm_reference_values():
    w = ingest.read(sample("ncu_details_a100_interpolate_sgemm.csv"), name="a100.csv")
    f = w.frame
    assert col(w, "name")[0] == "ampere_sgemm_32x32_sliced1x4_tn" and col(w, "row") == ["0", "1"]
    assert f["flops"][0] == 145_408 and f["time_s"][0] == 7.488e-6  # PROVENANCE.md reference numbers
    assert (f["bytes_hbm"][0], f["bytes_l2"][0], f["bytes_l1"][0]) == (512, 233_856, 384)
    assert f["flops"][1] == 16 and f["time_s"][1] == 4.224e-6
    assert col(w, "precision") == ["fp32", "fp32"] and col(w, "unit") == ["vector", "vector"]
    assert w.warnings == ("2 of 2 launches ran under 1 µs or moved under 1 MB of DRAM traffic: ncu replays them with "
                          "flushed caches at base clocks, so their DRAM bytes and intensity are unreliable.",)


@pytest.mark.samples
def test_sample_rtx5070_bom_crlf_op_names():
    w = ingest.read(sample("ncu_details_rtx5070_win_gemm_naive.csv"), name="rtx.csv")
    assert col(w, "name") == ["unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)"]
    assert col(w, "bytes_hbm") == [54_207_744 + 26_601_216] and col(w, "time_s") == [9_589_248e-9]
    assert np.isnan(w.frame["flops"][0])  # the export has no FLOP counters
    assert w.meta["arch"] == "sm_120" and w.warnings == (
        f"no FLOP counters in this export: FLOPs unknown; add --metrics {FLOPS},sm__inst_executed_pipe_tensor.sum.",)


@pytest.mark.samples
def test_sample_b200_raw_page_is_time_only():
    w = ingest.read(sample("ncu_raw_b200_torch_sdpa_flash.csv"), name="b200.csv")
    assert w.formats == ("ncu-raw",) and len(w) == 16 and w.device == "NVIDIA B200"
    assert w.meta["time_only"] == "true" and w.meta["compute_capability"] == "10.0"
    assert w.frame["time_s"][0] == 687_488e-9 and w.frame["name"].str.startswith("void flash_fwd_kernel<").all()
    assert np.isnan(w.frame["flops"]).all() and w.skipped == ()


@pytest.mark.samples
def test_sample_failed_permission():
    with pytest.raises(InputError) as e:
        ingest.read(sample("ncu_failed_ERR_NVGPUCTRPERM.csv"), name="failed.csv")
    assert str(e.value) == f"failed.csv: {PERM}"


@pytest.mark.samples
def test_sample_rules_only():
    with pytest.raises(InputError) as e:
        ingest.read(sample("ncu_details_sol_roofline_section_only_rules.csv"), name="rules.csv")
    assert str(e.value) == (
        "rules.csv: this export holds only rule text (SOLFPRoofline), no metric values: roofline sections print just "
        "their rules on the details page. Hint: re-export the report with the raw page (ncu -i report.ncu-rep --csv "
        f"--page raw --print-units base > raw.csv) or profile with --metrics {METRICS}.")


def by_hand(name: str) -> list[dict[str, str]]:
    """A sample's table rows read with the csv module from its header on (independently of the parser); short
    rows padded with empty fields."""
    lines = sample(name).read_text(encoding="utf-8-sig").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID","Process ID",'))
    rows = list(csv.reader(lines[start:]))
    return [dict(zip(rows[0], r + [""] * (len(rows[0]) - len(r)), strict=False)) for r in rows[1:] if r]


def number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.samples
def test_sample_julia_set_full_details_page():
    w = ingest.read(sample("ncu_details_a100_julia_set_full_rules_humanunits.csv"), name="julia.csv")
    f = w.frame
    assert len(w) == 6 and w.skipped == () and np.isnan(f["flops"]).all()
    assert w.meta["compute_capability"] == "8.0"
    # read by eye: launch 0 Duration 56.06 us, Memory Throughput 488.17 Gbyte/s; launch 5 30.86 ms, 96.22 Gbyte/s
    assert f["time_s"][0] == pytest.approx(56.06e-6, rel=1e-12) and f["time_s"][5] == pytest.approx(30.86e-3, rel=1e-12)
    assert f["bytes_hbm"][0] == pytest.approx(488.17e9 * 56.06e-6, rel=1e-12)
    assert f["bytes_hbm"][5] == pytest.approx(96.22e9 * 30.86e-3, rel=1e-12)
    # every launch: DRAM bytes = Memory Throughput [Gbyte/s] × Duration [us or ms]
    scale = {"us": 1e-6, "ms": 1e-3, "Gbyte/s": 1e9}
    rows = by_hand("ncu_details_a100_julia_set_full_rules_humanunits.csv")
    dur = {int(r["ID"]): number(r["Metric Value"]) * scale[r["Metric Unit"]] for r in rows if r["Metric Name"] == "Duration"}
    rate = {int(r["ID"]): number(r["Metric Value"]) * scale[r["Metric Unit"]] for r in rows
            if r["Metric Name"] == "Memory Throughput" and r["Metric Unit"] != "%"}
    assert f["time_s"].tolist() == pytest.approx([dur[i] for i in range(6)], rel=1e-12)
    assert f["bytes_hbm"].tolist() == pytest.approx([rate[i] * dur[i] for i in range(6)], rel=1e-12)
    assert any(x.startswith("derived figures: DRAM bytes of 6 launches") for x in w.warnings)
    assert any(f"add --metrics {FLOPS}" in x for x in w.warnings)


@pytest.mark.samples
def test_sample_cutlass_hgemm_tensor_flops_from_the_instruction_shape():
    w = ingest.read(sample("ncu_details_a100pcie_cutlass_hgemm_20480_no_fp_counters.csv"), name="hgemm.csv")
    f = w.frame
    gemm = 2 * 20480**3  # each GEMM launch is a 20480³ HGEMM
    rows = by_hand("ncu_details_a100pcie_cutlass_hgemm_20480_no_fp_counters.csv")
    pipe = {int(r["ID"]): number(r["Metric Value"]) for r in rows if r["Metric Name"] == "sm__inst_executed_pipe_tensor.sum"}
    # the CUTLASS launches (4-9) run arch::Mma GemmShape<16, 8, 8> (16·8·8·2 = 2,048 FLOP), cuBLAS's
    # ampere_s16816gemm (10) 16·8·16·2 = 4,096
    assert [pipe[i] * 2_048 for i in range(4, 10)] + [pipe[10] * 4_096] == f["flops"][4:].tolist()
    assert f["flops"][4:].tolist() == pytest.approx([gemm] * 7, rel=0.02)
    assert np.isnan(f["flops"][:4]).all()  # initialisation kernels: no tensor work, no CUDA-core counters
    assert col(w, "unit")[4:] == ["matrix"] * 7 and col(w, "precision")[4:] == ["fp16"] * 7
    cycles = {int(r["ID"]): number(r["Metric Value"]) for r in rows if r["Metric Name"] == "sm__cycles_elapsed.avg"}
    hz = {int(r["ID"]): number(r["Metric Value"]) for r in rows
          if r["Metric Name"] == "sm__cycles_elapsed.avg.per_second"}
    assert f["time_s"].tolist() == [cycles[i] / hz[i] for i in range(11)]
    assert w.warnings[0] == (
        "tensor-core FLOPs = sm__inst_executed_pipe_tensor.sum × the FLOPs of one MMA instruction (2·M·N·K for shape "
        "M×N×K): × 2,048 (16×8×8, from the kernel name) for 6 launches; × 4,096 (16×8×16, from the kernel name) for 1 "
        "launch; collect sm__ops_path_tensor_* counters (e.g. sm__ops_path_tensor_src_fp16_dst_fp32.sum) for exact "
        "tensor FLOPs.")


@pytest.mark.samples
def test_sample_ncu2020_nvtx_columns():
    w = ingest.read(sample("ncu_details_ncu2020.2_rtx3070_nvtx_columns.csv"), name="nvtx.csv")
    assert len(w) == 2 and col(w, "group") == ["linear_nvtx", "linear_nvtx"] and w.skipped == ()
    assert col(w, "time_s") == [8_192e-9, 3_584e-9]  # gpu__time_duration.sum, nsecond
    assert w.meta["time_only"] == "true" and np.isnan(w.frame["flops"]).all() and np.isnan(w.frame["bytes_hbm"]).all()
    assert col(w, "name")[0] == ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x10_nn_align4>"
                                 "(cutlass_80_tensorop_s1688gemm_64x64_16x10_nn_align4::Params)")
    assert "DRAM throughput only as a % of peak" in w.warnings[0]


@pytest.mark.samples
def test_sample_ncu2019_legacy_raw_page():
    w = ingest.read(sample("ncu_raw_ncu2019.4_gtx1080_legacy_metric_names.csv"), name="legacy.csv")
    assert w.formats == ("ncu-raw",) and len(w) == 3 and w.device == "NVIDIA GeForce GTX 1080"
    assert w.meta["compute_capability"] == "6.1" and w.skipped == ()
    assert w.frame["time_s"][0] == 2_720e-9 and w.frame["bytes_hbm"][0] == 7_552 + 384  # read + write
    rows = [r for r in by_hand("ncu_raw_ncu2019.4_gtx1080_legacy_metric_names.csv") if r["ID"].isdigit()]
    assert col(w, "bytes_hbm") == [number(r["dram__read_bytes"]) + number(r["dram__write_bytes"]) for r in rows]
    assert col(w, "time_s") == [number(r["gpu__time_duration"]) / 1e9 for r in rows]
    assert np.isnan(w.frame["flops"]).all()


# ------------------------------------------------------------------------------------------ fuzz

SEEDS = [p.read_bytes() for p in sorted(DATA.iterdir())]
EXAMPLES = 10_000 if os.environ.get("ROOFCORE_FUZZ_LONG") == "1" else 150
JUNK = [b",", b'"', b"\n", b"\r\n", b"n/a", b"-1", b"1e999", b"nan", b"\x00", b"1,234,567.00", b"==PROF== x\n",
        b'"ID","Process ID",', b"\xef\xbb\xbf", b"\xff", b'""', b",,,,", b"9,00"]




@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=mutated(SEEDS, JUNK, raw_size=1024), raw=st.booleans())
def test_fuzz_ends_in_a_workload_or_an_input_error(data, raw):
    parse = ncu.parse_raw if raw else ncu.parse_details
    try:
        w = parse(data, "fuzz.csv")
    except InputError:
        return
    assert isinstance(w, Workload) and len(w) > 0
    assert (w.frame["count"] == 1).all()
    for c in ("flops", "time_s", *w.byte_columns):
        v = w.frame[c].to_numpy(dtype=float)
        assert not (np.isinf(v) | (v < 0)).any(), c


def test_raw_page_without_its_units_row_leaves_sized_values_unknown():
    """No units row (deleted by hand): a time's or a size's unit is not guessed (it was read as seconds and bytes, a
    duration in ns a million times too long); counts, which have no unit, stay."""
    lines = (DATA / "raw_page.csv").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    w = ingest.read("".join(lines[:at + 1] + lines[at + 2:]).encode(), name="raw.csv")
    full = ingest.read(DATA / "raw_page.csv")
    assert w.frame["time_s"].isna().all() and w.frame["bytes_hbm"].isna().all()
    assert np.array_equal(w.frame["flops"].to_numpy(), full.frame["flops"].to_numpy())
    assert any("gpu__time_duration.sum (3 launches, unit 'none: the file has no units row')" in x for x in w.warnings)


def test_raw_page_units_row_found_where_a_sort_put_it():
    """A spreadsheet's sort by kernel name puts the units row (no name) last: it is still the units row."""
    lines = (DATA / "raw_page.csv").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    moved = "".join(lines[:at + 1] + lines[at + 2:] + [lines[at + 1]])
    w, full = ingest.read(moved.encode(), name="raw.csv"), ingest.read(DATA / "raw_page.csv")
    assert np.array_equal(w.frame["time_s"].to_numpy(), full.frame["time_s"].to_numpy())
    assert not w.skipped and w.warnings == full.warnings
