"""Measured ceilings as devices: rocprof-compute roofline.csv and the Empirical Roofline Toolkit's roofline.json.

Each real file's figures are read here with csv / json, independently of the parser, and compared with two or more
figures of the devices built from it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from roofhelpers import sample

from roofcore import CatalogError, InputError, analyze, ingest, load_catalogs
from roofcore.catalog import load_bytes
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
    assert [h.id for h in w.measured] == ["mi200-gpu0-measured", "mi200-gpu1-measured", "mi200-gpu2-measured",
                                          "mi200-gpu3-measured"]
    gpu2 = w.measured[2]
    assert gpu2.level_map["l2"].bandwidth == float(rows["2"]["L2Bw"]) * 1e9
    assert gpu2.ceiling_map["fp64-vector"].peak == float(rows["2"]["FP64Flops"]) * 1e9
    a = analyze(w, [gpu2])  # a workload against the device it ran on, as measured
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
    assert {"ert-znver3-measured", "mi300x-gpu0-measured", "mi300x-gpu1-measured"} <= set(cat.ids)
    assert "mi300x" in cat  # the built-in catalog is still there
    hw = cat.get("ert-znver3-measured")
    assert hw.origin.endswith("roofline.json") and hw.offchip.achievable == 150.75e9


def test_cli_lists_and_analyses_against_a_measured_device(capsys):
    from roofcore.cli import main

    assert main(["hardware", "list", "--catalog", str(CEIL / "roofline.json")]) == 0
    assert "ert-znver3-measured" in capsys.readouterr().out
    code = main(["analyze", str(ROC / "pmc_perf_v3layout.csv"), "--catalog", str(CEIL / "roofline_mi300x.csv"),
                 "--hardware", "mi300x-gpu1-measured"])
    out = capsys.readouterr().out
    assert code == 0 and "MI300X GPU 1 (measured, roofline_mi300x.csv)" in out
