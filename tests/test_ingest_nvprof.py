"""Legacy nvprof CSV: metrics (FLOP and DRAM counts per kernel, no time), GPU trace and summary (time only),
their join by kernel name, exact refusals, the real sample, and a fuzz test."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from roofhelpers import mutated

from roofcore import InputError, ingest
from roofcore.ingest import nvprof
from roofcore.models import Workload

DATA = Path(__file__).parent / "data" / "nvprof"
SAMPLES = Path(__file__).parent.parent.parent / "shared" / "samples"
HINT = ("Hint: profile with nvprof --csv --metrics flop_count_sp,flop_count_dp,flop_count_hp,dram_read_bytes,"
        "dram_write_bytes ./app > metrics.csv (dram_read_transactions,dram_write_transactions where the byte metrics "
        "are missing) and nvprof --csv --print-gpu-trace ./app > trace.csv for kernel times; load both files together.")
NO_TIME = ("nvprof's metric mode records no kernel time: time unknown; load an nvprof --csv --print-gpu-trace export "
           "of the same run with it for the times.")


def read(name: str) -> Workload:
    return ingest.read(DATA / name, name=name)


def col(w: Workload, c: str) -> list:
    return w.frame[c].tolist()


def message(name: str) -> str:
    with pytest.raises(InputError) as e:
        read(name)
    return str(e.value)


@pytest.mark.parametrize("name, fmt", [
    ("metrics_flops_dram.csv", "nvprof"), ("metrics_parts_bytes.csv", "nvprof"), ("events.csv", "nvprof"),
    ("metrics_throughput_only.csv", "nvprof"), ("gpu_trace.csv", "nvprof-trace"), ("summary.csv", "nvprof-trace"),
])
def test_detected_from_content(name, fmt):
    assert ingest.detect((DATA / name).read_bytes(), "profile.txt").name == fmt


def test_metrics_flop_counts_and_dram_transactions():
    w = read("metrics_flops_dram.csv")
    assert w.formats == ("nvprof",) and w.device == "Tesla V100-SXM2-16GB" and w.meta["profiler"] == "nvprof"
    assert col(w, "name") == ["jacobi_step(double const *, double*, int)", "residual_norm(double const *, double*, int)"]
    assert col(w, "count") == [100, 1]  # Invocations; totals = Avg × Invocations
    assert col(w, "flops") == [83_886_080 * 100, 33_554_432 * 1]  # flop_count_dp (+ sp + hp, both 0)
    assert col(w, "bytes_hbm") == [(4_194_368 + 4_194_304) * 32 * 100, (4_194_310 + 2) * 32]  # 32-byte transactions
    assert col(w, "bytes_l2") == [(8_388_672 + 4_194_304) * 32 * 100, (4_194_320 + 4) * 32]
    assert np.isnan(w.frame["time_s"]).all()  # no time in metric mode, never 0
    assert col(w, "precision") == ["fp64", "fp64"] and col(w, "unit") == ["vector", "vector"]
    assert w.warnings == (NO_TIME,)


def test_metrics_flop_parts_byte_counts_and_tensor_kernels():
    w = read("metrics_parts_bytes.csv")
    assert w.device == "Tesla T4" and col(w, "count") == [2]
    assert col(w, "bytes_hbm") == [(6_291_456 + 2_097_152) * 2]  # dram_read_bytes + dram_write_bytes
    # flop_count_hp_add + _mul + 2·_fma would be 2·(1,024 + 2,048 + 2·65,536); the tensor units were busy
    # ("Mid (6)"), whose FLOPs nvprof does not count: unknown, not an undercount
    assert np.isnan(w.frame["flops"][0]) and col(w, "unit") == ["matrix"] and col(w, "precision") == ["fp16"]
    assert w.warnings == (
        "FLOPs leave out fp64, fp32 (flop_count_dp, flop_count_sp not in the export).",
        "FLOPs unknown for 1 kernel that used tensor cores (tensor_*_fu_utilization above Idle): nvprof counts no "
        "tensor-core FLOPs; Nsight Compute's sm__inst_executed_pipe_tensor.sum or sm__ops_path_tensor_* counts them.",
        NO_TIME,
    )


def test_flop_parts_are_add_mul_and_twice_fma():
    text = (DATA / "metrics_parts_bytes.csv").read_text().replace("Mid (6)", "Idle (0)")
    w = ingest.read(text.encode(), name="parts.csv")
    assert col(w, "flops") == [(1_024 + 2_048 + 2 * 65_536) * 2] and col(w, "unit") == ["vector"]


def test_gpu_trace_is_time_per_launch():
    w = read("gpu_trace.csv")
    assert w.formats == ("nvprof-trace",) and w.meta["time_only"] == "true" and w.device == "Tesla V100-SXM2-16GB"
    assert col(w, "name") == ["jacobi_step(double const *, double*, int)"] * 2 + [
        "residual_norm(double const *, double*, int)"]
    assert col(w, "time_s") == [245.12e-6, 244.864e-6, 180.032e-6]  # Duration column in us (units row)
    assert col(w, "row") == ["line 8", "line 9", "line 10"] and col(w, "count") == [1, 1, 1]
    assert w.warnings[0] == "2 copy, memset or API rows left out (not kernels)."


def test_summary_is_time_per_kernel():
    w = read("summary.csv")
    assert col(w, "count") == [100, 10] and col(w, "time_s") == pytest.approx([24.5248e-3, 1.80032e-3], rel=1e-15)
    assert w.meta["nvprof_layout"] == "summary" and w.warnings[0] == "3 copy, memset or API rows left out (not kernels)."


def test_trace_and_metrics_join_by_kernel_name():
    w = ingest.read_many([DATA / "metrics_flops_dram.csv", DATA / "gpu_trace.csv"])
    assert col(w, "time_s") == [245.12e-6, 244.864e-6, 180.032e-6]
    # per launch: the metrics' totals ÷ their invocations
    assert col(w, "flops") == [83_886_080, 83_886_080, 33_554_432]
    assert col(w, "bytes_hbm") == [(4_194_368 + 4_194_304) * 32] * 2 + [(4_194_310 + 2) * 32]


def test_throughput_only_metrics_are_refused():
    assert message("metrics_throughput_only.csv") == (
        "metrics_throughput_only.csv: this nvprof --metrics export holds no FLOP or byte counts (dram_read_throughput, "
        "dram_write_throughput, gld_efficiency: rates, ratios and percentages), and nvprof's metric mode records no "
        f"kernel time, so there is nothing to place on a roofline. {HINT}")


def test_events_are_refused():
    assert message("events.csv") == ("events.csv: this is nvprof --events output (raw hardware events, per kernel): "
                                     f"no FLOP or byte counts a roofline can use and no kernel time. {HINT}")


def test_header_only_and_copies_only():
    head = (DATA / "metrics_flops_dram.csv").read_text().split('"Tesla')[0]
    with pytest.raises(InputError, match="expected metric rows under the nvprof header, found a header only"):
        ingest.read(head.encode(), name="empty.csv")
    lines = (DATA / "gpu_trace.csv").read_text().splitlines()
    copies = "\n".join(ln for ln in lines if "jacobi" not in ln and "residual" not in ln)
    with pytest.raises(InputError, match=r"found none \(copies, memsets or API calls only\)"):
        ingest.read(copies.encode(), name="copies.csv")


def test_api_trace_is_refused():
    data = b'==1== Profiling result:\n"Start","Duration","Name","Correlation_ID"\nus,us,,\n0.0,2.8,"cuInit",1\n'
    with pytest.raises(InputError) as e:
        ingest.read(data, name="api.csv")
    assert str(e.value) == ("api.csv: this is an nvprof API trace (host-side CUDA calls), not GPU kernels. Hint: "
                            "export the kernels with nvprof --csv --print-gpu-trace ./app.")


def test_a_negative_or_unreadable_duration_is_unknown():
    text = (DATA / "gpu_trace.csv").read_text().replace("245.120000", "-245.120000").replace("180.032000", "n/a")
    w = ingest.read(text.encode(), name="t.csv")
    assert np.isnan(w.frame["time_s"][0]) and np.isnan(w.frame["time_s"][2]) and w.frame["time_s"][1] == 244.864e-6


# ------------------------------------------------------------------------------------------ the real sample


@pytest.mark.samples
def test_sample_gtx1060_throughputs_only_is_refused_naming_the_metrics():
    path = SAMPLES / "nvprof_csv_metrics_gtx1060.csv"
    if not path.exists():
        pytest.skip("../shared/samples/nvprof_csv_metrics_gtx1060.csv is not here (real exports live outside the repo)")
    rows = [r for r in csv.reader(path.read_text().splitlines()) if len(r) == 8 and r[0] != "Device"]
    names = list(dict.fromkeys(r[3] for r in rows))  # read by hand: no flop_count_*, dram_*_bytes or transactions
    assert not any(n.startswith(("flop_count", "dram_read_b", "dram_write_b")) or n.endswith("transactions")
                   for n in names)
    assert ingest.detect(path.read_bytes(), "x.csv").name == "nvprof"
    with pytest.raises(InputError) as e:
        ingest.read(path, name="gtx1060.csv")
    assert str(e.value) == (
        f"gtx1060.csv: this nvprof --metrics export holds no FLOP or byte counts ({', '.join(names[:4])} and "
        f"{len(names) - 4} more: rates, ratios and percentages), and nvprof's metric mode records no kernel time, so "
        f"there is nothing to place on a roofline. {HINT}")


# ------------------------------------------------------------------------------------------ fuzz

SEEDS = [p.read_bytes() for p in sorted(DATA.iterdir())]
EXAMPLES = 10_000 if os.environ.get("ROOFCORE_FUZZ_LONG") == "1" else 150
JUNK = [b",", b'"', b"\n", b"\r\n", b"n/a", b"-1", b"1e999", b"nan", b"12.5GB/s", b"97.1%", b"Mid (6)",
        b'"Device","Kernel","Invocations","Metric Name"', b"==9== x\n", b"ms,us,,", b"\xff"]


@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=mutated(SEEDS, JUNK, raw_size=1024))
def test_fuzz_ends_in_a_workload_or_an_input_error(data):
    for parse in (nvprof.parse_metrics, nvprof.parse_times):
        try:
            w = parse(data, "fuzz.csv")
        except InputError:
            continue
        assert isinstance(w, Workload) and len(w) > 0
        for c in ("flops", "time_s", *w.byte_columns):
            v = w.frame[c].to_numpy(dtype=float)
            assert not (np.isinf(v) | (v < 0)).any(), c


def test_gpu_trace_without_its_units_row_leaves_plain_durations_unknown():
    """No units row: ``245.120000`` is not guessed to be seconds (it is microseconds here), and the warning says so."""
    lines = (DATA / "gpu_trace.csv").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('"Start"'))
    w = ingest.read("".join(lines[:at + 1] + lines[at + 2:]).encode(), name="trace.csv")
    assert len(w) == 3 and w.frame["time_s"].isna().all()
    assert any(x.startswith("no units row under the header") for x in w.warnings)


def test_gpu_trace_units_row_found_where_a_sort_put_it():
    lines = (DATA / "gpu_trace.csv").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('"Start"'))
    w = ingest.read("".join(lines[:at + 1] + lines[at + 2:] + [lines[at + 1]]).encode(), name="trace.csv")
    assert col(w, "time_s") == [245.12e-6, 244.864e-6, 180.032e-6]


def test_two_exports_joined_are_both_read_and_said():
    """``cat a.csv b.csv``: the header (and units row) again in the middle; every launch is read, and the warning
    says that a kernel listed in both counts twice."""
    text = (DATA / "gpu_trace.csv").read_text()
    w = ingest.read((text + text).encode(), name="trace.csv")
    assert col(w, "time_s") == [245.12e-6, 244.864e-6, 180.032e-6] * 2
    said = [x for x in w.warnings if "header appears again" in x]
    assert len(said) == 1 and "counts twice" in said[0]
    assert "2 copy" not in " ".join(w.warnings) and "4 copy, memset or API rows left out" in " ".join(w.warnings)
    assert not [x for x in ingest.read(DATA / "gpu_trace.csv").warnings if "header appears again" in x]
