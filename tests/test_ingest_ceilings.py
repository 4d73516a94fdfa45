"""Measured ceilings as devices: rocprof-compute roofline.csv and the Empirical Roofline Toolkit's roofline.json.

Each real file's figures are read here with csv / json, independently of the parser, and compared with two or more
figures of the devices built from it.
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path
from statistics import median

import pytest
from roofhelpers import sample

import roofcore
from roofcore import CatalogError, InputError, analyze, ingest, load_catalogs
from roofcore.catalog_files import load_bytes
from roofcore.measured import MedianDevice, merge_measured, summary
from roofcore.models import DeviceKind, Hardware

CEIL = Path(__file__).parent / "data" / "ceilings"
ROC = Path(__file__).parent / "data" / "rocprof"
SHARED = Path(__file__).parent.parent.parent / "shared" / "samples"



def measured(path: Path, name: str | None = None) -> list[Hardware]:
    data = path.read_bytes()
    fmt = ingest.detect(data, name or path.name)
    assert fmt.companion
    return fmt.parse(data, name or path.name, {})["measured_hardware"]


def check_measured(hw: Hardware) -> None:
    """Every figure is measured: the peak and the achievable value are the same number, from the file."""
    for x in (*hw.ceilings, *hw.levels):
        assert x.figure.measured and x.achievable_figure.measured
        assert x.achievable == (x.peak if hasattr(x, "peak") else x.bandwidth)


# --------------------------------------------------------------------------------------------- ERT


@pytest.mark.samples
def test_real_ert_roofline_json_is_a_device():
    path = sample("ert1.1.0_skylake_roofline.json")
    doc = json.loads(path.read_text())
    gbytes = dict(doc["empirical"]["gbytes"]["data"])
    gflops = dict(doc["empirical"]["gflops"]["data"])
    [hw] = measured(path)
    assert hw.id == "ert-skylake-measured" and hw.kind == DeviceKind.CPU
    assert hw.name == "ERT skylake (measured, ert1.1.0_skylake_roofline.json)"
    assert [lv.name for lv in hw.levels] == ["hbm", "l2", "l1"] and hw.offchip.label == "DRAM"
    assert hw.offchip.bandwidth == gbytes["DRAM"] * 1e9 and hw.level_map["l1"].bandwidth == gbytes["L1"] * 1e9
    assert hw.default.key == "fp64-vector" and hw.default.peak == gflops["FP64 GFLOPs"] * 1e9
    assert hw.default.figure.source == ("ert1.1.0_skylake_roofline.json: Empirical Roofline Toolkit 1.1.0 "
                                        "roofline.json, measured on this machine")
    check_measured(hw)
    assert "apollo" not in hw.id + hw.name + (hw.config or "")  # never the host name


@pytest.mark.samples
def test_real_ert_alone_is_refused_with_how_to_use_it():
    with pytest.raises(InputError) as e:
        ingest.read(sample("ert1.1.0_skylake_roofline.json"), name="ert.json")
    assert str(e.value) == (
        "ert.json: this is the Empirical Roofline Toolkit's roofline.json: bandwidths and FLOP/s measured on one "
        "machine, a device to analyse a workload against, not a workload. Hint: load it together with a workload "
        "(e.g. pmc_perf.csv), or use it as a device: `roofline analyze WORKLOAD --catalog ert.json --hardware "
        "ert-skylake-avx512-measured`.")  # named ert.json: the -march ERT compiled for names it


def test_ert_fixture_ids_from_march_and_two_precisions():
    [hw] = measured(CEIL / "roofline.json")
    assert hw.id == "ert-znver3-measured"  # the file name says nothing: the -march ERT compiled for
    assert {c.key: c.peak for c in hw.ceilings} == {"fp64-vector": 1500.5e9, "fp32-vector": 3001.0e9}
    assert hw.offchip.bandwidth == 150.75e9 and hw.level_map["l2"].bandwidth == 2000.25e9
    assert hw.config == "Empirical Roofline Toolkit 1.1.0; best runs used 32, 64 OpenMP threads"


@pytest.mark.parametrize("doc,message", [
    ({"empirical": {"gbytes": {"data": [["L1", 100.0]]}, "gflops": {"data": [["FP64 GFLOPs", 5.0]]}}},
     "e.json: $.empirical.gbytes.data: expected a DRAM (off-chip) bandwidth, found L1. Hint: ERT measures DRAM last; "
     "run it with a working set larger than the caches."),
    ({"empirical": {"gbytes": {"data": [["DRAM", 100.0]]}, "gflops": {"data": []}}},
     "e.json: $.empirical.gflops.data: expected a FLOP rate such as [\"FP64 GFLOPs\", …], found none. Hint: run ERT "
     "with its FLOP sweep (ERT_FLOPS) enabled."),
])
def test_ert_refusals(doc, message):
    with pytest.raises(InputError) as e:
        ingest.FORMATS["ert-roofline"].parse(json.dumps(doc).encode(), "e.json", {})
    assert str(e.value) == message
    with pytest.raises(CatalogError) as e:  # the same message when given as a catalog
        load_bytes(json.dumps(doc).encode(), "e.json")
    assert str(e.value) == message


# --------------------------------------------------------------------------------------------- roofline.csv


@pytest.mark.samples
def test_real_mi300x_roofline_csv_gives_a_device_per_gpu():
    path = sample("rocprof_compute3.3_mi300x_bmm_roofline.csv")
    rows = list(csv.DictReader(path.read_text().splitlines()))
    devices = measured(path)
    assert [h.id for h in devices] == [f"mi300x-gpu{r['device']}-measured" for r in rows]
    hw, first = devices[0], rows[0]
    assert hw.offchip.bandwidth == float(first["HBMBw"]) * 1e9
    assert hw.level_map["mall"].bandwidth == float(first["MALLBw"]) * 1e9
    assert [lv.name for lv in hw.levels] == ["hbm", "mall", "l2", "l1", "lds"]
    assert hw.ceiling_map["bf16-matrix"].peak == float(first["MFMABF16Flops"]) * 1e9
    assert hw.ceiling_map["fp8-matrix"].peak == float(first["MFMAF8Flops"]) * 1e9
    assert float(first["MFMAF4Flops"]) == 0 and "fp4-matrix" not in hw.ceiling_map  # 0 = not measured
    assert hw.default_ceiling == "bf16-matrix" and hw.vendor == "AMD" and hw.kind == DeviceKind.GPU
    # the spread of the benchmark's runs (Low/High, with the header's own hbmBwHigh typo) in the figure's note
    assert hw.offchip.figure.notes == (f"measured range {float(first['HBMBwLow']):,.6g}–"
                                       f"{float(first['hbmBwHigh']):,.6g} GB/s over the benchmark's runs")
    check_measured(hw)


@pytest.mark.samples
def test_real_mi200_roofline_with_pmc_perf_keeps_meta_and_adds_devices():
    roof = sample("rocprof_compute_vcopy_MI200_roofline.csv")
    rows = {r["device"]: r for r in csv.DictReader(roof.read_text().splitlines())}
    w = ingest.read_many([sample("rocprof_compute_vcopy_MI200_pmc_perf.csv"), roof,
                          sample("rocprof_compute_vcopy_MI200_sysinfo.csv")])
    assert w.meta["measured_hbm_bytes_per_s"] == repr(float(rows["2"]["HBMBw"]) * 1e9)  # context as before
    [hw] = w.measured  # its 4 GPUs of one model: one device, each figure their median
    assert hw.id == "mi200-measured" and isinstance(hw, MedianDevice)
    assert hw.level_map["l2"].bandwidth == pytest.approx(median(float(r["L2Bw"]) * 1e9 for r in rows.values()))
    assert hw.ceiling_map["fp64-vector"].peak == pytest.approx(
        median(float(r["FP64Flops"]) * 1e9 for r in rows.values()))
    check_measured(hw)
    a = analyze(w, [hw])  # a workload against the device it ran on, as measured
    assert a.table()["bound"].tolist() == ["memory:hbm"] * 3


def test_roofline_fixture_skips_unknown_precisions_and_zeros():
    devices = measured(CEIL / "roofline_mi300x.csv", "roofline.csv")
    assert [h.id for h in devices] == ["rocprof-gpu0-measured", "rocprof-gpu1-measured"]  # no GPU name anywhere
    hw = devices[0]
    assert sorted(hw.ceiling_map) == ["bf16-matrix", "fp32-vector", "fp8-matrix", "fp8-vector", "int8-matrix"]
    assert hw.offchip.bandwidth == 4000.5e9 and hw.offchip.figure.notes == (
        "measured range 3,990–4,010 GB/s over the benchmark's runs")
    assert hw.name == "AMD GPU 0 (measured, roofline.csv)"


def test_roofline_ids_follow_sysinfo_when_the_name_does_not_say():
    ctx = ingest.FORMATS["rocprof-compute-sysinfo"].parse((ROC / "sysinfo_mi300.csv").read_bytes(), "s.csv", {})
    out = ingest.FORMATS["rocprof-compute-roofline"].parse((CEIL / "roofline_mi300x.csv").read_bytes(),
                                                           "roofline.csv", ctx)
    assert [h.id for h in out["measured_hardware"]] == ["mi300x-gpu0-measured", "mi300x-gpu1-measured"]


# --------------------------------------------------------------------------------------------- as a catalog


def test_measured_files_load_as_catalogs():
    cat = load_catalogs([CEIL / "roofline.json", CEIL / "roofline_mi300x.csv"], use_env=False)
    assert {"ert-znver3-measured", "mi300x-measured"} <= set(cat.ids)  # roofline_mi300x.csv's 2 GPUs: one device
    assert not {"mi300x-gpu0-measured", "mi300x-gpu1-measured"} & set(cat.ids)
    assert cat.get("mi300x-measured").offchip.bandwidth == pytest.approx((4000.5e9 + 4100e9) / 2)
    assert "mi300x" in cat  # the built-in catalog is still there
    hw = cat.get("ert-znver3-measured")
    assert hw.origin.endswith("roofline.json") and hw.offchip.achievable == 150.75e9


def test_cli_lists_and_analyses_against_a_measured_device(capsys):
    from roofcore.cli import main

    assert main(["hardware", "list", "--catalog", str(CEIL / "roofline.json")]) == 0
    assert "ert-znver3-measured" in capsys.readouterr().out
    code = main(["analyze", str(ROC / "pmc_perf_v3layout.csv"), "--catalog", str(CEIL / "roofline_mi300x.csv"),
                 "--hardware", "mi300x-measured"])
    out = capsys.readouterr().out
    assert code == 0 and "MI300X (measured, median of 2 GPUs, roofline_mi300x.csv) (mi300x-measured)" in out


# --------------------------------------------------------------------------------------------- several GPUs, one model
# roofline_mi200_8gpu.csv (written for these tests): 8 GPUs of one model, each figure 0.2–2% apart, and GPU 5 without
# an FP64 vector figure (0 = not measured). Expected medians are worked out from the file with csv and statistics.

EIGHT = CEIL / "roofline_mi200_8gpu.csv"


def columns_of(path: Path) -> dict[str, list[float]]:
    """GB/s or GFLOP/s per column, × 1e9, the GPUs that measured it (a positive number)."""
    rows = list(csv.DictReader(path.read_text().splitlines()))
    return {c: [float(r[c]) * 1e9 for r in rows if float(r[c]) > 0] for c in rows[0] if c != "device"}


def read_eight(*more: Path) -> roofcore.Workload:
    return ingest.read_many([ROC / "pmc_perf_mi200.csv", ROC / "sysinfo_mi200.csv", EIGHT, *more])


def test_eight_gpus_of_one_model_are_one_device_their_median_with_the_spread():
    cols = columns_of(EIGHT)
    w = read_eight()
    [hw] = w.measured
    assert hw.id == "mi200-measured" and hw.name == "MI200 (measured, median of 8 GPUs, roofline_mi200_8gpu.csv)"
    for col, level in (("HBMBw", "hbm"), ("L2Bw", "l2"), ("L1Bw", "l1"), ("LDSBw", "lds")):
        assert hw.level_map[level].bandwidth == pytest.approx(median(cols[col]), rel=1e-12), level
    for col, key in (("FP32Flops", "fp32-vector"), ("FP64Flops", "fp64-vector"), ("MFMABF16Flops", "bf16-matrix"),
                     ("MFMAF64Flops", "fp64-matrix"), ("MFMAI8Ops", "int8-matrix")):
        assert hw.ceiling_map[key].peak == pytest.approx(median(cols[col]), rel=1e-12), key
    assert len(cols["FP64Flops"]) == 7 and len(cols["HBMBw"]) == 8
    assert [lv.name for lv in hw.levels] == ["hbm", "l2", "l1", "lds"] and hw.default_ceiling == "bf16-matrix"
    # the spread: lowest 1,388.8 GB/s (GPU 1), highest 1,428 GB/s (GPU 6)
    assert hw.offchip.figure.derivation == "median of 8 GPUs (devices 0–7): 1.39–1.43 TB/s"
    assert hw.ceiling_map["fp64-vector"].figure.derivation == "median of 7 of 8 GPUs: 20.1–20.7 TFLOP/s"
    assert hw.offchip.figure.source == "roofline_mi200_8gpu.csv: rocprof-compute roofline.csv, empirical micro-benchmark"
    assert "Spread, lowest–highest: HBM 1.39–1.43 TB/s; L2 4.96–5.1 TB/s;" in hw.notes
    assert summary(hw) == "median of 8 GPUs, devices 0–7, HBM 1.39–1.43 TB/s"
    check_measured(hw)
    assert len(hw.members) == 8 and w.meta["measured_device"]  # the per-GPU table is still the pmc_perf context


def test_models_stay_apart_and_a_device_measured_once_is_as_it_was():
    w = read_eight(CEIL / "roofline_mi300x.csv", CEIL / "roofline.json")
    assert [h.id for h in w.measured] == ["mi200-measured", "mi300x-measured", "ert-znver3-measured"]
    ert = w.measured[2]
    assert not isinstance(ert, MedianDevice)
    assert replace(ert, origin="") == replace(measured(CEIL / "roofline.json")[0], origin="")  # as the reader gave it
    assert len(w.measured[1].members) == 2 and len(w.measured[0].members) == 8


def test_merging_again_takes_the_median_over_every_gpu_once():
    gpus = measured(EIGHT, "roofline_mi200_8gpu.csv")
    assert [g.id for g in gpus] == [f"mi200-gpu{i}-measured" for i in range(8)]  # the reader: a device per GPU
    [whole] = merge_measured(gpus)
    [again] = merge_measured((*merge_measured(gpus[:5]), *gpus[5:], gpus[0]))  # in two goes, GPU 0 twice
    assert again == whole and merge_measured([whole]) == (whole,)
    assert whole.offchip.bandwidth == pytest.approx(median(g.offchip.bandwidth for g in gpus), rel=1e-12)


def test_ncu_exports_of_one_gpu_model_from_several_ranks_are_one_device(tmp_path):
    """An 8-rank job profiled rank by rank: each export describes the same model at its own clocks."""
    text = (CEIL / "ncu_raw_peaks.csv").read_text()
    paths = []
    for rank, clock in enumerate(("1,450,000,000", "1,500,000,000", "1,560,000,000")):
        path = tmp_path / f"rank{rank}.csv"
        path.write_text(text.replace("4242", str(5000 + rank)).replace('"1,500,000,000"', f'"{clock}"', 1))
        paths.append(path)
    w = ingest.read_many(paths)
    [hw] = w.measured
    assert hw.id == "example-gpu-x1-ncu-measured" and isinstance(hw, MedianDevice)
    assert hw.name == "Example GPU X1 (from the ncu exports, median of 3 exports)"
    assert hw.offchip.bandwidth == pytest.approx(1024 * 1.5e9)  # 1,024 B/cycle × the median DRAM clock
    assert hw.offchip.figure.derivation == "median of 3 exports: 1.48–1.6 TB/s"
    assert not hw.offchip.figure.measured  # theoretical at each machine's clocks, as each export's own


def test_the_cli_says_one_measured_device_with_its_spread(capsys):
    from roofcore.cli import main

    files = [str(ROC / "pmc_perf_mi200.csv"), str(ROC / "sysinfo_mi200.csv"), str(EIGHT)]
    assert main(["analyze", *files]) == 0
    out = capsys.readouterr().out
    assert ("The inputs carry measured ceilings: mi200-measured (median of 8 GPUs, devices 0–7, HBM 1.39–1.43 "
            "TB/s).") in out
    assert out.count("== MI200 (measured, median of 8 GPUs, roofline_mi200_8gpu.csv) (mi200-measured)") == 1
    assert "gpu0-measured" not in out
    assert main(["analyze", *files, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    hws = [h for h in doc["hardware"] if h["id"].endswith("-measured")]
    assert [h["id"] for h in hws] == ["mi200-measured"]
    assert hws[0]["levels"][0]["derivation"] == "median of 8 GPUs (devices 0–7): 1.39–1.43 TB/s"


def test_the_hardware_tables_show_each_figures_spread():
    from roofcore import views

    [hw] = read_eight().measured
    levels = views.levels_frame(hw).set_index("Level")
    assert levels.loc["hbm", "Derivation"] == "median of 8 GPUs (devices 0–7): 1.39–1.43 TB/s"
    assert list(levels.columns[-2:]) == ["Derivation", "Source"]
    ceilings = views.ceilings_frame(hw).set_index("Ceiling")
    assert ceilings.loc["fp64-vector", "Derivation"] == "median of 7 of 8 GPUs: 20.1–20.7 TFLOP/s"
    assert "Derivation" not in views.levels_frame(measured(CEIL / "roofline.json")[0])  # nothing derived: no column
