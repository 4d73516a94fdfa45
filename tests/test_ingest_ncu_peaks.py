"""Nsight Compute exports describe their own device (issue 13): the per-cycle peaks × the clocks ncu measured,
and a raw page's device attributes, become a device "as it ran" (``Workload.measured``), each figure
theoretical with its derivation. Expected figures are worked out here by hand from the fixtures' cells."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

import roofcore
from roofcore.analyze import analyze
from roofcore.ingest.ceilings import FP32_LANES, ncu_export_devices

CEIL = Path(__file__).resolve().parent / "data" / "ceilings"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"


def theoretical(hw) -> None:
    """Every figure: a derivation, never marked measured (the clocks are this machine's, the peaks ncu's model)."""
    for x in (*hw.ceilings, *hw.levels):
        assert x.figure.derivation and not x.figure.measured and x.figure.source.strip(), x
        assert x.achievable is None


def test_raw_page_peaks_times_clocks_of_the_first_launch():
    w = roofcore.read(CEIL / "ncu_raw_peaks.csv")
    [hw] = w.measured
    assert hw.id == "example-gpu-x1-ncu-measured"
    assert hw.name == "Example GPU X1 (from the ncu export, ncu_raw_peaks.csv)"
    # first launch: DRAM 1,024 B/cycle × 1.5 GHz, L2 4,096 × 1.2 GHz, L1 12,800 × 1.4 GHz (l1tex clock);
    # FP32 6,912 FFMA/cycle × 2 × 1.4 GHz (sm clock), FP64 3,456 DFMA/cycle × 2 × 1.4 GHz
    assert [(lv.name, lv.label, lv.bandwidth) for lv in hw.levels] == [
        ("hbm", "DRAM", 1024 * 1.5e9), ("l2", "L2", 4096 * 1.2e9), ("l1", "L1/TEX", 12800 * 1.4e9)]
    assert {c.key: c.peak for c in hw.ceilings} == {"fp32-vector": 6912 * 2 * 1.4e9, "fp64-vector": 3456 * 2 * 1.4e9}
    assert hw.default_ceiling == "fp32-vector" and hw.config == "compute capability 8.0"
    assert hw.offchip.figure.derivation == "1,024 B/cycle × 1.5 GHz = 1.54 TB/s"
    assert hw.offchip.figure.source == ("ncu_raw_peaks.csv: Nsight Compute dram__bytes.sum.peak_sustained × "
                                        "dram__cycles_elapsed.avg.per_second (first launch)")
    assert hw.ceiling_map["fp32-vector"].figure.derivation == "6,912 inst/cycle × 2 FLOP/inst × 1.4 GHz = 19.4 TFLOP/s"
    theoretical(hw)


def test_the_workload_runs_on_its_own_device_and_every_level_is_on_it():
    w = roofcore.read(CEIL / "ncu_raw_peaks.csv")
    a = analyze(w, list(w.measured))
    tab = a.table().set_index("name")
    assert not tab["flags"].map(lambda f: "level-not-on-device" in f).any()
    # tile_stencil_kernel: L2 48 MB / 4.9152 TB/s = 9.77 µs, the longest (L1 96 MB / 17.92 TB/s = 5.36 µs,
    # DRAM 3.072 MB / 1.536 TB/s = 2 µs, compute 2 × 5e7 FLOP / 19.35 TFLOP/s = 5.17 µs)
    assert tab.loc["tile_stencil_kernel(float const*, float*, int)", "bound"] == "memory:l2"


def test_details_page_peaks_with_auto_units():
    """``--metrics`` on the details page, units scaled by ncu (Kbyte/cycle, cycle/nsecond): the first launch only."""
    w = roofcore.read(CEIL / "ncu_details_peaks.csv")
    [hw] = w.measured
    assert hw.id == "nvidia-gpu-ncu-measured"  # the 12-column details page names no device
    assert [(lv.name, lv.bandwidth) for lv in hw.levels] == [("hbm", 1.02e3 * 1.5e9), ("l2", 4.10e3 * 1.2e9)]
    assert {c.key: c.peak for c in hw.ceilings} == {"fp32-vector": 6912 * 2 * 1.4e9}
    theoretical(hw)


def test_raw_page_device_attributes_alone():
    """No per-cycle peak: DRAM = 2 × memory clock × bus width / 8, FP32 = SMs × lanes (CC 8.6: 128) × 2 × clock,
    FP64 = FP32 ÷ the single-to-double ratio; attributes in CUDA's kHz and bits."""
    [hw] = roofcore.read(CEIL / "ncu_raw_attributes.csv").measured
    assert hw.id == "example-gpu-y2-ncu-measured"
    assert [(lv.name, lv.bandwidth) for lv in hw.levels] == [("hbm", 2 * 10e9 * 384 / 8)]
    fp32 = 60 * 128 * 2 * 1.5e9
    assert {c.key: c.peak for c in hw.ceilings} == {"fp32-vector": fp32, "fp64-vector": fp32 / 64}
    assert hw.offchip.figure.derivation == ("2 transfers per clock × 10 GHz memory_clock_rate × 384-bit "
                                            "global_memory_bus_width / 8 = 960 GB/s")
    theoretical(hw)


def test_no_device_without_dram_and_a_flop_rate_or_without_the_metrics():
    assert roofcore.read(Path(__file__).resolve().parent / "data" / "ncu" / "raw_page.csv").measured == ()
    text = (CEIL / "ncu_raw_peaks.csv").read_text()
    no_dram = text.replace('"dram__bytes.sum.peak_sustained"', '"dram__bytes.sum.peak_unknown"')
    assert ncu_export_devices(no_dram.encode(), "x.csv", "GPU", "8.0") == []
    # the FLOP rates need the SM clock: without it no FLOP rate remains, and no device
    no_clock = text.replace('"sm__cycles_elapsed.avg.per_second"', '"sm__cycles_elapsed.avg.per_minute"')
    assert ncu_export_devices(no_clock.encode(), "x.csv", "GPU", "8.0") == []
    # L1/TEX runs at the SM clock where its own is absent
    no_l1_clock = text.replace('"l1tex__cycles_elapsed.avg.per_second"', '"l1tex__cycles_elapsed.avg.per_minute"')
    [hw] = ncu_export_devices(no_l1_clock.encode(), "x.csv", "GPU", "8.0")
    assert hw.level_map["l1"].bandwidth == 12800 * 1.4e9


@pytest.mark.samples
def test_the_b200_raw_sample_describes_its_device_from_its_attributes():
    path = SAMPLES / "ncu_raw_b200_torch_sdpa_flash.csv"
    if not path.exists():
        pytest.skip("../shared/samples is not here (the real exports live outside the repository)")
    text = path.read_text()
    rows = csv.reader(io.StringIO(text[text.index('"ID","Process ID"'):]))
    header, units, first = next(rows), next(rows), next(rows)
    cell = dict(zip(header, first, strict=False))
    assert not [h for h in header if h.endswith(".peak_sustained")]  # this sample has no per-cycle peak
    w = roofcore.read(path)
    [hw] = w.measured
    assert hw.id == "b200-ncu-measured"
    a = "device__attribute_"
    assert units[header.index(a + "clock_rate")] == ""  # no unit: CUDA's kHz
    mem, bus = float(cell[a + "memory_clock_rate"]) * 1e3, float(cell[a + "global_memory_bus_width"])
    assert hw.offchip.bandwidth == pytest.approx(2 * mem * bus / 8)  # 7.67 TB/s
    fp32 = float(cell[a + "multiprocessor_count"]) * FP32_LANES["10.0"] * 2 * float(cell[a + "clock_rate"]) * 1e3
    assert hw.ceiling_map["fp32-vector"].peak == pytest.approx(fp32)  # 148 × 128 × 2 × 1.965 GHz = 74.4 TFLOP/s
    assert hw.ceiling_map["fp64-vector"].peak == pytest.approx(
        fp32 / float(cell[a + "single_to_double_precision_perf_ratio"]))
    theoretical(hw)
