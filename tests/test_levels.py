"""Rooflines above the kernel (issue 27): kernels summed per op, module, step, NVTX range and time window
(roofcore.hierarchy), on small frames built here."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from roofhelpers import make_hw

from roofcore.analyze import analyze
from roofcore.errors import RoofcoreError
from roofcore.hierarchy import OUTSIDE, SEP, flag_steps, group, levels_of, parse_by
from roofcore.ingest.ancestry import containing, paths, range_paths
from roofcore.ingest.frames import make_frame
from roofcore.models import Workload

HW = make_hw(peak=100e12, bw=1e12)


def _workload(**extra) -> Workload:
    """Six launches: two GEMMs and a norm in layer 0 and 1 of a model, one copy outside, one kernel of unknown FLOPs."""
    cols = {
        "name": ["gemm", "gemm", "norm", "gemm", "copy", "mystery"],
        "flops": [2e12, 2e12, 1e9, 2e12, 0.0, np.nan],
        "bytes_hbm": [1e9, 1e9, 4e9, 1e9, 1e9, 1e9],
        "time_s": [0.03, 0.03, 0.01, 0.04, 0.002, 0.005],
        "precision": ["bf16"] * 6, "unit": ["matrix"] * 6,
        "group": ["aten::mm", "aten::mm", "aten::layer_norm", "aten::mm", "memcpy", None],
        "module": [f"Net_0{SEP}Layer_0", f"Net_0{SEP}Layer_0{SEP}Attn_0", f"Net_0{SEP}Layer_0", f"Net_0{SEP}Layer_1",
                   None, "Net_0"],
        "op": ["aten::mm", "aten::mm", "aten::layer_norm", "aten::mm", None, "aten::foo"],
        "step": ["ProfilerStep#1", "ProfilerStep#1", "ProfilerStep#1", "ProfilerStep#2", None, "ProfilerStep#2"],
        "start_s": [0.0, 0.031, 0.062, 0.1, 0.2, 0.145],
        **extra,
    }
    return Workload(frame=make_frame(cols, 6), name="t", sources=("t",), formats=("test",))


def test_parse_by():
    assert parse_by("module:2") == ("module", 2)
    assert parse_by("Step") == ("step", None)
    for bad in ("layer", "op:2", "module:0", "module:x"):
        with pytest.raises(RoofcoreError):
            parse_by(bad)


@pytest.mark.parametrize("by", ["kernel", "op", "module", "module:1", "module:2", "step", "nvtx"])
def test_sums_over_groups_equal_kernel_totals(by):
    a = analyze(_workload(), HW)
    rows = group(a, by)
    f = a.workload.frame
    assert rows["self_time_s"].sum() == pytest.approx(f["time_s"].sum())
    assert rows["self_launches"].sum() == len(f)
    assert np.nansum(rows["self_flops"]) == pytest.approx(np.nansum(f["flops"]))
    assert np.nansum(rows["self_t_roof_s"]) == pytest.approx(np.nansum(a.results[0].t_roof))


def test_module_tree_self_and_total():
    a = analyze(_workload(), HW)
    rows = group(a, "module").set_index("group")
    net, layer0 = rows.loc["Net_0"], rows.loc[f"Net_0{SEP}Layer_0"]
    assert layer0["time_s"] == pytest.approx(0.07)  # its own GEMM and norm, and Attn_0's GEMM
    assert layer0["self_time_s"] == pytest.approx(0.04)
    assert net["time_s"] == pytest.approx(0.115) and net["self_time_s"] == pytest.approx(0.005)
    assert rows.loc[OUTSIDE, "time_s"] == pytest.approx(0.002)  # the copy: outside, never dropped
    assert layer0["parent"] == "Net_0" and layer0["depth"] == 2 and layer0["name"] == "Layer_0"
    # the mystery kernel's FLOPs are unknown: Net_0 sums the known FLOPs and says its coverage of the time
    assert net["flops"] == pytest.approx(6e12 + 1e9)
    assert net["coverage"] == pytest.approx(0.11 / 0.115)
    assert net["achieved_flops_per_s"] == pytest.approx((6e12 + 1e9) / 0.11)
    assert net["headroom_s"] == pytest.approx(0.11 - (0.02 * 3 + 0.004))
    assert net["bound"] == "compute:bf16-matrix"
    depth1 = group(a, "module:1").set_index("group")
    assert set(depth1.index) == {"Net_0", OUTSIDE}
    assert depth1.loc["Net_0", "self_time_s"] == pytest.approx(0.115)


def test_unknown_stays_unknown():
    a = analyze(_workload(), HW)
    rows = group(a, "op").set_index("group")
    foo = rows.loc["aten::foo"]
    assert math.isnan(foo["flops"]) and foo["coverage"] == 0 and math.isnan(foo["achieved_flops_per_s"])
    assert foo["bound"] is None
    assert rows.loc["aten::mm", "launches"] == 3 and rows.loc["aten::mm", "bound"] == "compute:bf16-matrix"
    assert rows.loc["aten::layer_norm", "bound"] == "memory:hbm"


def test_steps_in_time_order_with_span():
    a = analyze(_workload(), HW)
    rows = group(a, "step")
    assert list(rows["group"]) == ["ProfilerStep#1", "ProfilerStep#2", OUTSIDE]
    assert rows.loc[0, "start_s"] == 0.0 and rows.loc[0, "end_s"] == pytest.approx(0.072)


def test_windows():
    a = analyze(_workload(), HW)
    rows = group(a, window=0.05)
    assert list(rows["group"]) == [0, 1, 2, 4]  # starts 0, 31, 62, 100, 145, 200 ms
    assert rows["self_time_s"].sum() == pytest.approx(a.workload.frame["time_s"].sum())
    assert rows.loc[2, "start_s"] == pytest.approx(0.1) and rows.loc[2, "launches"] == 2
    with pytest.raises(RoofcoreError):
        group(a, window=0)


def test_levels_of():
    assert levels_of(_workload()) == ["kernel", "op", "module", "class", "step", "window"]
    plain = Workload(frame=make_frame({"name": ["k"], "flops": [1.0], "time_s": [1.0]}, 1))
    assert levels_of(plain) == ["kernel", "op"] or levels_of(plain) == ["kernel"]
    a = analyze(plain, HW)
    rows = group(a, "module")
    assert list(rows["group"]) == [OUTSIDE] and rows.loc[0, "launches"] == 1


def test_outlier_step_says_what_differs():
    names = ["gemm", "norm"] * 5
    times = [0.01, 0.002] * 5
    times[6] = 0.03  # step 3's GEMM is three times slower
    steps = [f"ProfilerStep#{i // 2}" for i in range(10)]
    start = [i // 2 * 0.1 + (i % 2) * 0.011 for i in range(10)]
    f = make_frame({"name": names, "flops": [1e12] * 10, "bytes_hbm": [1e8] * 10, "time_s": times, "step": steps,
                    "start_s": start, "precision": ["bf16"] * 10, "unit": ["matrix"] * 10}, 10)
    a = analyze(Workload(frame=f), HW)
    flagged = flag_steps(group(a, "step"), f).set_index("group")
    assert flagged["outlier"].tolist() == [False, False, False, True, False]
    assert "slower kernel: gemm" in flagged.loc["ProfilerStep#3", "differs"]
    assert flagged["point"].all()


def test_paths_from_nesting():
    # thread 0: A [0, 10] holds B [1, 5] holds C [2, 3]; D [6, 9]; thread 1: E [0, 10]
    th = np.array([0, 0, 0, 0, 1])
    st = np.array([0.0, 1, 2, 6, 0])
    en = np.array([10.0, 5, 3, 9, 10])
    names = ["A", "B", "C", "D", "E"]
    assert range_paths(th, st, en, names) == ["A", f"A{SEP}B", f"A{SEP}B{SEP}C", f"A{SEP}D", "E"]
    got = paths(th, st, en, names, np.array([0, 0, 0, 1, 0, 2]), np.array([2.5, 5.5, 7.0, 3.0, 11.0, 1.0]))
    assert got.tolist() == [f"A{SEP}B{SEP}C", "A", f"A{SEP}D", "E", None, None]
    assert containing(np.array([0.0, 10]), np.array([5.0, 20]), np.array([1.0, 7, 15, np.nan])).tolist() == [0, -1, 1, -1]


# --------------------------------------------------------------------------------------------- CLI


def test_cli_levels_text_json_csv(tmp_path):
    import argparse
    import json

    from roofcore.cli.levels import groups_csv, groups_json, level_rows, levels_text, wanted

    a = analyze(_workload(), HW)
    assert wanted(argparse.Namespace(by="kernel", window=None)) is None
    assert wanted(argparse.Namespace(by="kernel", window="10ms")) == ("window", pytest.approx(0.01))
    with pytest.raises(RoofcoreError):
        wanted(argparse.Namespace(by="module", window="10ms"))
    with pytest.raises(RoofcoreError):
        wanted(argparse.Namespace(by="module", window=None, aggregate=True))
    rows = level_rows(a, "module", None)
    doc = json.loads(json.dumps(groups_json(rows, a.workload.byte_names), allow_nan=False))
    layer = next(d for d in doc if d["group"] == f"Net_0{SEP}Layer_0")
    assert layer["parent"] == "Net_0" and layer["self_time_s"] == pytest.approx(0.04) and layer["hardware"] == HW.id
    assert next(d for d in doc if d["group"] == OUTSIDE)["flops"] == 0.0
    csv_text = groups_csv(rows, a.workload.byte_names)
    assert csv_text.splitlines()[0].startswith("hardware,level,group,name,depth,parent")
    assert len(csv_text.splitlines()) == len(rows) + 1
    text = levels_text(a, level_rows(a, "step", None))
    assert "ProfilerStep#1" in text and "by step: 3 groups" in text and "Hint" not in text
    plain = analyze(Workload(frame=make_frame({"name": ["k"], "flops": [1.0], "time_s": [1.0]}, 1)), HW)
    assert "No kernel has a module here: every one is outside. Hint: profile with" in levels_text(
        plain, level_rows(plain, "module", None))


def test_cli_by_nvtx_on_ncu_export(tmp_path, capsys):
    """The Nsight Compute 2020 export with NVTX columns: its launches grouped by their range, through the CLI."""
    import json

    from roofhelpers import sample

    from roofcore.cli import main

    path = sample("ncu_details_ncu2020.2_rtx3070_nvtx_columns.csv")
    out = tmp_path / "by.json"
    assert main(["analyze", str(path), "--hardware", "rtx-3070", "--by", "nvtx", "--json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["by"] == "nvtx" and len(doc["kernels"]) == 2
    assert [(g["group"], g["launches"]) for g in doc["groups"]] == [("linear_nvtx", 2)]
    assert doc["groups"][0]["time_s"] == pytest.approx(sum(k["time_s"] for k in doc["kernels"]))


# --------------------------------------------------------------------------------------------- charts


def test_group_workload_and_level_roofline():
    from roofcore.charts.levels import level_roofline
    from roofcore.hierarchy.points import group_workload

    a = analyze(_workload(), HW)
    rows = group(a, "module:2")
    gw = group_workload(rows, a.workload.byte_names)
    f = gw.frame.set_index("row")
    # Layer_0's covered kernels: the GEMM and the norm of its own (Attn_0's GEMM is at depth 3, cut to Layer_0)
    assert f.loc[f"Net_0{SEP}Layer_0", "flops"] == pytest.approx(4e12 + 1e9)
    assert f.loc[f"Net_0{SEP}Layer_0", "time_s"] == pytest.approx(0.07)
    assert f.loc[f"Net_0{SEP}Layer_0", "group"] == "Layer"  # coloured by class, not instance
    assert "Net_0" not in f.index  # its own kernel has no known FLOPs: no point
    fig = level_roofline(a, "module:2", top=5)
    assert fig.kernels == 2 and fig.caption.startswith("One point per module")  # Layer_0, Layer_1


def test_level_roofline_of_groups_with_no_known_roofline_draws_the_roofs_alone():
    """A time-only trace with ranges (a kernel trace and its ROCTx or NVTX ranges, no counters): no group has a
    point, so the chart is the roofs with a note saying so, not "the workload has no kernels to analyse"."""
    from roofcore.charts.levels import level_roofline

    w = Workload(frame=make_frame({"name": np.array(["a", "b", "c"], dtype=object), "time_s": np.array([1e-3, 2e-3, 3e-3]),
                                   "flops": np.full(3, np.nan),
                                   "nvtx": np.array(["step", f"step{SEP}attn", None], dtype=object)}, 3),
                 name="t", sources=("t",), formats=("x",))
    fig = level_roofline(analyze(w, HW), "nvtx")
    assert fig.kernels == 0 and fig.caption.startswith("No range has a kernel with a known roofline")
    assert "kernel(s) not drawn" not in fig.caption


def test_trajectory_and_over_time_charts():
    from roofcore.charts.levels import over_time_chart, trajectory_chart

    names = ["gemm", "norm"] * 5
    times = [0.01, 0.002] * 5
    times[6] = 0.03
    f = make_frame({"name": names, "flops": [1e12] * 10, "bytes_hbm": [1e8] * 10, "time_s": times,
                    "step": [f"ProfilerStep#{i // 2}" for i in range(10)], "phase": ["forward", "backward"] * 5,
                    "start_s": [i // 2 * 0.1 + (i % 2) * 0.011 for i in range(10)], "precision": ["bf16"] * 10,
                    "unit": ["matrix"] * 10}, 10)
    a = analyze(Workload(frame=f), HW)
    spec = trajectory_chart(a).to_dict()
    data = [d for ds in spec["datasets"].values() for d in ds]
    labels = {d.get("label") for d in data if str(d.get("label", "")).startswith(("first", "last"))}
    assert labels == {"first: ProfilerStep#0", "last: ProfilerStep#4"}
    assert any(d.get("outlier") and d.get("name") == "ProfilerStep#3" for d in data)
    spec = over_time_chart(a).to_dict()
    assert len(spec["vconcat"]) == 2


def test_class_level_merges_instances():
    a = analyze(_workload(), HW)
    rows = group(a, "class:2").set_index("group")
    assert rows.loc[f"Net{SEP}Layer", "launches"] == 4  # Layer_0's three kernels and Layer_1's one
    assert rows.loc[f"Net{SEP}Layer", "time_s"] == pytest.approx(0.11)
    tree = group(a, "class").set_index("group")
    assert tree.loc["Net", "time_s"] == pytest.approx(0.115) and tree.loc[f"Net{SEP}Layer{SEP}Attn", "launches"] == 1
    assert tree["self_launches"].sum() == 6


def test_cli_chart_export(tmp_path, monkeypatch):
    from roofcore import charts
    from roofcore.cli.levels import write_charts

    rendered = []  # the figures, rendered by a stand-in (vl-convert's start costs seconds; test_charts renders)
    monkeypatch.setattr(charts, "to_svg", lambda fig: rendered.append(fig) or "<svg></svg>")
    a = analyze(_workload(), HW)
    out = write_charts(a, "module:2", None, str(tmp_path / "mod.svg"))
    assert out == [str(tmp_path / "mod.svg")] and (tmp_path / "mod.svg").read_text().lstrip().startswith("<svg")
    steps = write_charts(a, "step", None, str(tmp_path / "steps.svg"))
    assert [p.rsplit("/", 1)[-1] for p in steps] == ["steps.svg", "steps-over-time.svg"]
    assert type(rendered[0]).__name__ == "RooflineFigure" and len(rendered) == 3
    with pytest.raises(RoofcoreError):
        write_charts(a, "step", None, str(tmp_path / "steps.jpg"))


def test_report_section_by_module_and_step():
    from roofcore.report import build_html

    html = build_html(analyze(_workload(), HW), charts=False, appendix="none")
    assert "<h2>By module and step</h2>" in html
    section = html[html.index("<h2>By module and step</h2>"):]
    section = section[:section.index("</section>")]
    # no depth has three classes (Net, Layer, Attn one each): the deepest, every class a row
    assert "Module classes with the most time (depth 3)" in section
    assert all(f"<td>{c}</td>" in section for c in ("Attn", "Layer"))
    assert "<td>ProfilerStep#1</td>" in section and "No step beyond 1.5× the median step." in section
    plain = Workload(frame=make_frame({"name": ["k"], "flops": [1e9], "bytes_hbm": [1e6], "time_s": [1e-3]}, 1))
    assert "By module" not in build_html(analyze(plain, HW), charts=False, appendix="none")


def test_report_section_by_range():
    """A workload with NVTX / ROCTx ranges (here the ROCTx fixture pair, time only) gets a "By range" section: the
    ranges with the most time by their path (their roofline: test_level_roofline_of_groups_with_no_known_roofline_…)."""
    from roofcore import read_many
    from roofcore.report import build_html

    data = Path(__file__).parent / "data" / "rocprofv3"
    w = read_many([data / "9_kernel_trace.csv", data / "9_marker_api_trace.csv"])
    html = build_html(analyze(w, HW), charts=False, appendix="none")
    assert "<h2>By range</h2>" in html
    section = html[html.index("<h2>By range</h2>"):]
    section = section[:section.index("</section>")]
    assert "NVTX / ROCTx ranges with the most time (depth 2)" in section
    assert f"<td>iteration{SEP}attention</td>" in section and f"<td>iteration{SEP}mlp</td>" in section


def test_views_tree_order_where_and_contents():
    from roofcore.hierarchy import views as hv

    a = analyze(_workload(), HW)
    tree = hv.preorder(group(a, "module"))
    assert list(tree["group"]) == ["Net_0", f"Net_0{SEP}Layer_0", f"Net_0{SEP}Layer_0{SEP}Attn_0",
                                   f"Net_0{SEP}Layer_1", OUTSIDE]
    assert tree["label"].iloc[2] == "\u2003\u2003Attn_0"
    assert hv.where_text(a.workload, ["gemm"]) == \
        "Where: in Layer (2 instances): 70% of their time; op aten::mm."
    ops, kernels = hv.node_contents(a, f"Net_0{SEP}Layer_0")
    assert ops.set_index("Op")["Launches"].to_dict() == {"aten::mm": 2, "aten::layer_norm": 1}
    assert kernels["Launches"].sum() == 3
    assert hv.where_text(Workload(frame=make_frame({"name": ["k"]}, 1)), ["k"]) == ""


def test_cli_advice_says_where():
    from roofcore.cli.analysis import advice_report

    text = advice_report(analyze(_workload(), HW), top=5)
    assert "    Where: in " in text and "; op aten::" in text
    plain = Workload(frame=make_frame({"name": ["k"], "flops": [1e9], "bytes_hbm": [1e9], "time_s": [1.0]}, 1))
    assert "Where:" not in advice_report(analyze(plain, HW), top=5)
