"""Nsight Compute exports that carry rates only (NVIDIA's roofline sections: FP instructions per cycle, the SM clock,
the achieved DRAM bandwidth, no duration), and exports of the same launches read together (merged launch by launch).

Fixtures (tests/data/ncu, written in the shape of ncu 2025's exports): ``details_roofline_section_rates.csv`` is a
``--section SpeedOfLight_RooflineChart`` details page with the ``Body Item Label`` column (21 columns, metric rows
cut short with a trailing comma, human units); ``raw_roofline_section_rates.csv`` the raw page of the sections (metric
names, the derived ``_x2``/``_x4`` rates); ``details_roofline_section_durations.csv`` a details page of the same
launches (same ID, process and kernel name) with their durations, and one launch more."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest
from roofhelpers import col, make_hw, sample

from roofcore import InputError, aggregate, analyze, ingest
from roofcore.analyze import coverage_text
from roofcore.cli import main

DATA = Path(__file__).parent / "data" / "ncu"
RATES = DATA / "details_roofline_section_rates.csv"
DURATIONS = DATA / "details_roofline_section_durations.csv"
RAW = DATA / "raw_roofline_section_rates.csv"
#: fp32 100 TFLOP/s, fp64 10 TFLOP/s, fp16 200 TFLOP/s (vector), DRAM 1 TB/s
DEVICE = make_hw(100e12, 1e12, precision="fp32", unit="vector", extra_ceilings=[
    {"precision": "fp64", "unit": "vector", "peak": 10e12, "source": "unit test fixture"},
    {"precision": "fp16", "unit": "vector", "peak": 200e12, "source": "unit test fixture"}])

# the fixture's rates, by hand (docs/formats.md): FLOP/s = (add + mul + 2·FMA instructions per cycle) × SM clock, where
# the section's "Predicated-On FFMA Operations Per Cycle" is already 2·FFMA instructions
RATE = [(10 + 20 + 400) * 1.5e9,  # launch 0: FADD 10, FMUL 20, FFMA operations 400 per cycle at 1.50 GHz
        (2 + 0 + 64) * 1.2e9,  # launch 1: DADD 2, DMUL 0, DFMA operations 64 per cycle at 1.20 GHz
        1000 * 1.5e9]  # launch 2: FFMA operations 1,000 per cycle at 1.50 GHz
BANDWIDTH = [500e9, 800e9, 250e9]  # DRAM Bandwidth, Gbyte/s
DURATION = [100e-6, 20e-6, 40e-6, 5e-6]  # the details page's gpu__time_duration.sum


def read(*paths, **kw):
    return ingest.read_many([str(p) for p in paths], **kw)


def variant(path: Path, tmp_path: Path, name: str, *, old: str = "", new: str = "", drop: str | None = None) -> Path:
    """``path`` with ``old`` replaced by ``new`` (or the column ``drop`` removed), written to ``tmp_path/name``."""
    text = path.read_text()
    if drop is not None:
        lines = text.splitlines()
        head = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
        at = next(csv.reader([lines[head]])).index(drop)
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for i, ln in enumerate(lines):
            if i < head or ln.startswith("=="):
                out.write(ln + "\n")
                continue
            row = next(csv.reader([ln]))
            writer.writerow(row[:at] + row[at + 1:])
        text = out.getvalue()
    p = tmp_path / name
    p.write_text(text.replace(old, new) if old else text)
    return p


# ------------------------------------------------------------------------------------------ rates alone


def test_roofline_section_rates_give_each_launch_its_point_without_a_duration():
    w = ingest.read(RATES)
    assert len(w) == 3 and w.formats == ("ncu-details",)
    assert w.frame["flops_rate"].tolist() == pytest.approx(RATE)
    assert w.frame["bandwidth_hbm"].tolist() == pytest.approx(BANDWIDTH)
    assert col(w, "precision") == ["fp32", "fp64", "fp32"] and col(w, "unit") == ["vector"] * 3
    # what the file lacks stays unknown: no duration, so no FLOPs, bytes or time
    assert col(w, "time_s") == [None] * 3 and col(w, "flops") == [None] * 3 and col(w, "bytes_hbm") == [None] * 3
    assert any("3 of 3 launches have rates only" in x for x in w.warnings)
    # the roofline sections repeat the SM clock and DRAM bandwidth per body item: same values, not a duplicate
    assert not any("more than once" in x for x in w.warnings)

    a = analyze(w, DEVICE)
    tab = a.table(DEVICE.id)
    intensity = [r / b for r, b in zip(RATE, BANDWIDTH, strict=True)]
    assert tab["achieved_flops_per_s"].tolist() == pytest.approx(RATE)
    assert tab["intensity_hbm"].tolist() == pytest.approx(intensity)  # 1.29, 0.099, 6 FLOP/B
    # memory-bound on a 1 TB/s device: attainable = 1 TB/s × intensity; of the roof = achieved ÷ attainable
    assert tab["attainable_flops_per_s"].tolist() == pytest.approx([1e12 * i for i in intensity])
    assert tab["efficiency"].tolist() == pytest.approx([0.5, 0.8, 0.25])
    assert tab["pct_peak_bandwidth"].tolist() == pytest.approx([0.5, 0.8, 0.25])
    assert tab["pct_peak_compute"].tolist() == pytest.approx([RATE[0] / 100e12, RATE[1] / 10e12, RATE[2] / 100e12])
    assert tab["bound"].tolist() == ["memory:hbm"] * 3
    # seconds stay unknown: no roof time, no headroom, nothing summed
    assert tab[["t_roof_s", "t_serial_s", "headroom_s", "time_s", "flops", "bytes_hbm"]].isna().all().all()
    assert all("missing-time" in [f["code"] for f in fl] for fl in tab["flags"])
    s = a.summary(DEVICE.id)
    assert s["t_roof_s"] is None and s["time_s"] is None
    assert s["coverage"]["kernels_rates_only"] == 3 and s["coverage"]["kernels_known"] == 0
    assert s["coverage"]["kernels_missing_flops"] == 0
    assert "3 kernels placed by achieved rates alone" in coverage_text(s)


def test_a_workload_without_rates_has_no_rates_key_in_its_summary():
    w = ingest.read(DURATIONS)
    assert "flops_rate" not in w.frame.columns
    assert "kernels_rates_only" not in analyze(w, DEVICE).summary(DEVICE.id)["coverage"]


def test_rates_above_the_device_roof_are_flagged_as_a_contradiction():
    slow = make_hw(100e12, 0.2e12, precision="fp32", unit="vector",
                   extra_ceilings=[{"precision": "fp64", "unit": "vector", "peak": 10e12, "source": "unit test fixture"}])
    tab = analyze(ingest.read(RATES), slow).table(slow.id)
    # 500 GB/s measured on a 200 GB/s device: above its roof, never a finding
    assert all("above-roof" in [f["code"] for f in fl] for fl in tab["flags"])


def test_raw_page_rates_by_metric_name_and_the_half_sections_derived_rates(tmp_path):
    w = ingest.read(RAW)
    assert w.formats == ("ncu-raw",)
    # launch 0: the plain smsp__…per_cycle_elapsed rates: FFMA 200 instructions (2 FLOP each), FADD 10, FMUL 20
    # launch 1: the half section's derived rates, read back as instructions: HFMA ×4 (512 → 128 HFMA, 2 FLOP each),
    # HADD ×2 (64 → 32, 1 FLOP each), as the counters count them (docs/formats.md)
    assert w.frame["flops_rate"].tolist() == pytest.approx([(10 + 20 + 2 * 200) * 1.5e9, (2 * 128 + 32) * 1.5e9])
    assert col(w, "precision") == ["fp32", "fp16"]
    assert w.frame["bandwidth_hbm"].tolist() == pytest.approx([500e9, 200e9])


def test_the_body_item_label_column_changes_nothing(tmp_path):
    plain = variant(RATES, tmp_path, "no_body_item.csv", drop="Body Item Label")
    assert '"Body Item Label"' not in plain.read_text()
    a, b = ingest.read(RATES), ingest.read(plain)
    for c in ("flops_rate", "bandwidth_hbm", "sm_clock_hz", "process_id"):
        assert a.frame[c].tolist() == pytest.approx(b.frame[c].tolist())
    assert col(a, "precision") == col(b, "precision")


#: the section's labels and the metrics behind them (SpeedOfLight_RooflineChart.section), for --print-metric-name
NAMES = {"Predicated-On FADD Thread Instructions Executed Per Cycle":
         "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
         "Predicated-On FMUL Thread Instructions Executed Per Cycle":
         "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
         "Predicated-On DADD Thread Instructions Executed Per Cycle":
         "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed",
         "Predicated-On DMUL Thread Instructions Executed Per Cycle":
         "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed",
         "Predicated-On FFMA Operations Per Cycle": "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2",
         "Predicated-On DFMA Operations Per Cycle": "derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2",
         "SM Frequency": "smsp__cycles_elapsed.avg.per_second", "DRAM Bandwidth": "dram__bytes.sum.per_second"}


@pytest.mark.parametrize("style", ["name", "label-name"])
def test_print_metric_name_name_and_label_name(tmp_path, style):
    text = RATES.read_text()
    for label, name in NAMES.items():
        text = text.replace(f'"{label}"', f'"{name}"' if style == "name" else f'"{label} ({name})"')
    p = tmp_path / f"{style}.csv"
    p.write_text(text)
    w = ingest.read(p)
    assert w.frame["flops_rate"].tolist() == pytest.approx(RATE)
    assert w.frame["bandwidth_hbm"].tolist() == pytest.approx(BANDWIDTH)


def test_a_repeated_metric_with_different_values_is_still_a_duplicate(tmp_path):
    # launch 0's DRAM bandwidth: 500 Gbyte/s in the single-precision body item, 450 in the double-precision one
    text = RATES.read_text().splitlines()
    at = [i for i, ln in enumerate(text) if ln.startswith('"0",') and '"DRAM Bandwidth"' in ln][-1]
    text[at] = text[at].replace('"500.00"', '"450.00"')
    p = tmp_path / "dup.csv"
    p.write_text("\n".join(text) + "\n")
    assert any("more than once" in x for x in ingest.read(p).warnings)


def test_a_rate_without_the_sm_clock_gives_no_flop_rate(tmp_path):
    lines = [ln for ln in RATES.read_text().splitlines() if '"SM Frequency"' not in ln]
    p = tmp_path / "noclock.csv"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="no duration, FLOP or byte metric"):  # nothing left to place a launch by
        ingest.read(p)
    duration = [ln.replace('"DRAM Bandwidth","Gbyte/s","500.00"', '"Duration","usecond","100.00"') for ln in lines
                if ln.startswith('"0",') and '"DRAM Bandwidth"' in ln][:1]
    p.write_text("\n".join([*lines, *duration]) + "\n")
    w = ingest.read(p)
    assert "flops_rate" not in w.frame.columns and col(w, "flops") == [None] * 3
    assert any("without the SM clock" in x for x in w.warnings)


def test_a_rate_with_a_duration_gives_flops_in_one_file(tmp_path):
    # a roofline section exported with the duration (e.g. with the SpeedOfLight section): FLOPs = rate × duration
    lines = RATES.read_text().splitlines()
    extra = [ln.replace('"Single Precision Roofline","SM Frequency","Ghz","1.50"',
                        '"","Duration","usecond","100.00"') for ln in lines
             if ln.startswith('"0",') and '"Single Precision Roofline","SM Frequency"' in ln]
    p = tmp_path / "with_duration.csv"
    p.write_text("\n".join([*lines, *extra]) + "\n")
    w = ingest.read(p)
    assert w.frame["flops"].iloc[0] == pytest.approx(RATE[0] * 100e-6)  # 64.5 MFLOP
    assert math.isnan(w.frame["flops"].iloc[1]) and w.frame["flops_rate"].iloc[1] == pytest.approx(RATE[1])
    assert any("derived figures: FLOPs of 1 launch" in x for x in w.warnings)


def test_rates_averaged_over_launches_when_aggregated():
    agg = aggregate(ingest.read(RATES))
    sgemm = agg.frame[agg.frame["name"].str.startswith("sgemm")].iloc[0]
    assert sgemm["count"] == 2 and math.isnan(sgemm["flops"]) and math.isnan(sgemm["time_s"])
    assert sgemm["flops_rate"] == pytest.approx((RATE[0] + RATE[2]) / 2)
    assert sgemm["bandwidth_hbm"] == pytest.approx((BANDWIDTH[0] + BANDWIDTH[2]) / 2)


def test_chart_marks_of_rated_kernels_sit_at_their_achieved_rate():
    from roofcore.charts.points import kernel_points

    a = analyze(ingest.read(RATES), DEVICE)
    for hierarchical in (False, True):
        p = kernel_points(a, [DEVICE.id], hierarchical=hierarchical)
        assert p["perf"].tolist() == pytest.approx(RATE)
        assert p["intensity"].tolist() == pytest.approx([r / b for r, b in zip(RATE, BANDWIDTH, strict=True)])
        assert p["placed"].str.startswith("achieved rate").all() and np.isfinite(p["size_s"]).all()


# ------------------------------------------------------------------------------------------ merged with durations


@pytest.mark.parametrize("order", [(RATES, DURATIONS), (DURATIONS, RATES)])
def test_a_details_page_of_the_same_launches_gives_the_durations_and_flops(order):
    w = read(*order)
    assert len(w) == 4  # 3 launches in both files, merged; one only in the details page
    f = w.frame.set_index("row")
    assert f.loc[["0", "1", "2", "3"], "time_s"].tolist() == pytest.approx(DURATION)
    # FLOPs = FLOP rate × duration (the rates file's clock is in its rate)
    assert f.loc[["0", "1", "2"], "flops"].tolist() == pytest.approx(
        [RATE[0] * 100e-6, RATE[1] * 20e-6, RATE[2] * 40e-6])  # 64.5 MFLOP, 1.584 MFLOP, 60 MFLOP
    # DRAM bytes: the details page's counter where it has one, else bandwidth × duration (launch 1: 800 GB/s × 20 µs)
    assert f.loc[["0", "1", "2", "3"], "bytes_hbm"].tolist() == pytest.approx([50e6, 800e9 * 20e-6, 10e6, 2e6])
    assert f.loc[["0", "1", "2"], "precision"].tolist() == ["fp32", "fp64", "fp32"]
    assert math.isnan(f.loc["3", "flops"])  # only in the details page: no FLOP rate, FLOPs unknown
    merged = [x for x in w.warnings if "read as one launch each, not counted twice" in x]
    assert len(merged) == 1 and "lists 3 of the launches" in merged[0]
    # the same launch's SM clock: 1.5 GHz in one file, 1.4 GHz in the other (different replay passes)
    clash = [x for x in w.warnings if "disagree on the same launches" in x]
    assert len(clash) == 1 and "SM clock (SM Frequency) for 1 launch(es) (e.g. ID 2" in clash[0]
    # what the rates file lacked is now known for each of its launches: its "rates only" warning is gone
    assert not any("have rates only" in x for x in w.warnings)
    a = analyze(w, DEVICE)
    tab = a.table(DEVICE.id).set_index("row")
    assert tab.loc[["0", "1", "2"], "achieved_flops_per_s"].tolist() == pytest.approx(RATE)
    assert tab.loc[["0", "1", "2"], "t_roof_s"].notna().all()
    assert "kernels_rates_only" not in a.summary(DEVICE.id)["coverage"]


def test_a_time_only_details_page_with_the_rates_is_no_longer_time_only(tmp_path):
    times = tmp_path / "times.csv"
    times.write_text("\n".join(ln for ln in DURATIONS.read_text().splitlines() if "dram__bytes" not in ln) + "\n")
    assert ingest.read(times).meta.get("time_only") == "true"
    w = read(times, RATES)
    assert "time_only" not in w.meta  # not a timeline to join with counters: it has its FLOPs now
    f = w.frame.set_index("row")
    assert f.loc[["0", "1", "2"], "flops"].tolist() == pytest.approx([RATE[0] * 100e-6, RATE[1] * 20e-6, RATE[2] * 40e-6])
    assert f.loc[["0", "1", "2"], "bytes_hbm"].tolist() == pytest.approx([500e9 * 100e-6, 800e9 * 20e-6, 250e9 * 40e-6])


def test_the_same_export_read_twice_is_not_counted_twice():
    one, two = read(DURATIONS), read(DURATIONS, DURATIONS)
    assert len(two) == len(one) == 4
    assert two.frame["time_s"].sum() == pytest.approx(one.frame["time_s"].sum())


@pytest.mark.parametrize("old,new,merged", [
    ('"4242"', '"4343"', 0),  # another process: no launch in common
    ('"sgemm_nn_kernel<float, 128, 8>', '"sgemm_tn_kernel<float, 128, 8>', 1),  # launches 0 and 2 renamed
    ('"1","4242"', '"11","4242"', 2),  # launch 1 has another ID
])
def test_launches_that_differ_in_id_process_or_name_are_not_merged(tmp_path, old, new, merged):
    other = variant(DURATIONS, tmp_path, "durations.csv", old=old, new=new)
    w = read(RATES, other)
    assert len(w) == 3 + 4 - merged
    rated = w.frame["time_s"].isna() & w.frame["flops_rate"].notna()
    assert int(rated.sum()) == 3 - merged  # the launches not merged keep their rates and no duration
    notes = [x for x in w.warnings if "not counted twice" in x]
    assert (len(notes) == 1) == bool(merged)
    if not merged:
        assert any("have rates only" in x for x in w.warnings)


def test_a_launch_listed_twice_in_one_file_is_not_merged(tmp_path):
    # a raw page with launch 0 twice (two runs pasted together): which of them the other file describes is unknown
    lines = RAW.read_text().splitlines()
    p = tmp_path / "twice.csv"
    p.write_text("\n".join([*lines, lines[2]]) + "\n")
    w = read(p, DURATIONS)  # its launch 1 is another kernel than the details page's launch 1: no launch in common
    assert len(w) == 3 + 4 and int((w.frame["row"] == "0").sum()) == 3
    assert not any("not counted twice" in x for x in w.warnings)


def test_cli_prints_the_rated_kernel_with_its_achieved_rate(capsys):
    code = main(["analyze", str(RATES), "--hardware", "rtx-5090", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    import json

    doc = json.loads(out)
    k = doc["kernels"]
    assert [x["achieved_flops_per_s"] for x in k] == pytest.approx(RATE)
    assert [x["intensity"]["hbm"] for x in k] == pytest.approx([r / b for r, b in zip(RATE, BANDWIDTH, strict=True)])
    assert all(x["time_s"] is None and x["flops"] is None and x["t_roof_s"] is None for x in k)
    code = main(["analyze", str(RATES), "--hardware", "rtx-5090"])
    out, _ = capsys.readouterr()
    assert code == 0 and "sgemm_nn_kernel" in out and "placed by achieved rates alone" in out


# ------------------------------------------------------------------------------------------ the real sample


def test_real_rtx5090_details_page_with_its_roofline_section_export(tmp_path):
    """The RTX 5090 GEMV details page (no FLOP counter, ``n/a`` tensor counters) read with a roofline-section export of
    the same launch (written here in the 21-column shape, with the launch's own ID, process and kernel name):
    FLOPs = FLOP rate × the details page's duration."""
    real = sample("ncu_rtx5090_deepseekocr_gemv_details_na_legacy_metrics.csv")
    first = next(csv.reader([real.read_text().splitlines()[1]]))
    ident = first[:11]  # ID … CC of the launch
    assert ident[0] == "0" and ident[1] == "1702327"
    head = ['"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
            '"Device","CC","Section Name","Body Item Label","Metric Name","Metric Unit","Metric Value","Rule Name",'
            '"Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"']
    rows = [("Predicated-On FADD Thread Instructions Executed Per Cycle", "inst/cycle", "0"),
            ("Predicated-On FMUL Thread Instructions Executed Per Cycle", "inst/cycle", "1.50"),
            ("Predicated-On FFMA Operations Per Cycle", "inst/cycle", "100.50"),
            ("SM Frequency", "Ghz", "2.14"), ("DRAM Bandwidth", "Gbyte/s", "358.20")]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for metric, unit, value in rows:
        writer.writerow([*ident, "GPU Speed Of Light Roofline Chart", "Single Precision Achieved Value", metric, unit,
                         value, "", "", "", "", ""])
    section = tmp_path / "ncu.roofline.csv"
    section.write_text(head[0] + "\n" + out.getvalue())
    alone = ingest.read(real)
    assert math.isnan(alone.frame["flops"].iloc[0])  # the details page alone: FLOPs unknown
    w = read(real, section)
    assert len(w) == 1
    rate = (0 + 1.5 + 100.5) * 2.14e9  # FLOP per cycle × SM clock
    assert w.frame["time_s"].iloc[0] == pytest.approx(6.46e-6)
    assert w.frame["flops"].iloc[0] == pytest.approx(rate * 6.46e-6)
    assert w.frame["bytes_hbm"].iloc[0] == pytest.approx(2.33e6)  # the details page's counted bytes
    assert w.frame["precision"].iloc[0] == "fp32"
    # the details page's SOL SM clock (1.99 GHz) and the roofline export's (2.14 GHz): named, both values given
    assert any("SM clock (SM Frequency)" in x and "1.99 GHz" in x and "2.14 GHz" in x for x in w.warnings)
