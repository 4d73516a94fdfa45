"""roofcore.charts: the roofline's layers, marks, axes and caps, read from the Vega-Lite spec it produces."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from roofhelpers import make_hw, watch_tabulation

import roofcore
from roofcore import charts
from roofcore.analyze import analyze
from roofcore.ingest import make_frame
from roofcore.models import Workload


@pytest.fixture(scope="module")
def catalog():
    return roofcore.load_catalogs()


@pytest.fixture(scope="module")
def example():
    from roofcore.app_support import BUNDLED_EXAMPLE

    return roofcore.read(BUNDLED_EXAMPLE)


def spec_of(fig: charts.RooflineFigure) -> dict:
    return fig.to_dict()


def layers(spec: dict) -> list[dict]:
    return [lay for view in (spec.get("concat") or [spec]) for lay in view["layer"]]


def rows(spec: dict, role: str) -> list[dict]:
    return [r for lay in layers(spec) if lay.get("description") == role for r in spec["datasets"][lay["data"]["name"]]]


def workload(n: int, *, timed: bool = True, l2: bool = False, seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    flops = rng.lognormal(22, 2, n)
    b = flops / rng.lognormal(2, 2, n)
    cols = {"name": [f"k{i}" for i in range(n)], "flops": flops, "bytes_hbm": b,
            "source": ["test"] * n, "row": [str(i + 1) for i in range(n)]}
    if timed:
        cols["time_s"] = np.maximum(flops / 989e12, b / 3.35e12) / rng.uniform(0.05, 1, n)
    if l2:
        cols["bytes_l2"] = b * 3
    return Workload(frame=make_frame(cols, n), name="synthetic")


def test_every_roof_ceiling_ridge_and_kernel_is_a_layer(catalog, example):
    h100 = catalog.get("h100-sxm")
    fig = charts.roofline(analyze(example, [h100]))
    spec = spec_of(fig)
    roles = {lay.get("description") for lay in layers(spec)}
    assert roles >= {"roofs", "achievable_roofs", "ridges", "kernels", "roof_labels", "ceiling_labels"}
    roofs = rows(spec, "roofs")
    assert sorted(r["name"] for r in roofs if r["kind"] == "memory") == sorted(lv.name for lv in h100.levels) == ["hbm", "l1", "l2"]
    assert sorted(r["name"] for r in roofs if r["kind"] == "link") == ["nvlink", "pcie"]
    # the default ceiling (which is also the kernels' one) and nothing else unless asked
    assert [r["name"] for r in roofs if r["kind"] == "compute"] == ["bf16-matrix"]
    hbm = next(r for r in roofs if r["name"] == "hbm")
    assert hbm["y"] / hbm["x"] == pytest.approx(3.35e12) and hbm["y2"] == pytest.approx(989e12)  # y = β·x up to π
    bf16 = next(r for r in roofs if r["name"] == "bf16-matrix")
    assert bf16["y"] == bf16["y2"] == 989e12 and bf16["x2"] == fig.x_domain[1]
    achievable = rows(spec, "achievable_roofs")
    assert {(r["name"], r["y2"]) for r in achievable if r["kind"] == "compute"} == {("bf16-matrix", 794.5e12)}
    ridges = {r["text"].split(":")[0]: r["x"] for r in rows(spec, "ridges")}
    assert ridges["ridge HBM3 × bf16-matrix"] == pytest.approx(989e12 / 3.35e12)
    assert ridges["ridge L2 × bf16-matrix"] == pytest.approx(989e12 / 5.5e12)
    labels = [r["text"] for role in ("roof_labels", "roof_labels_below") for r in rows(spec, role)]
    assert sorted(labels) == ["HBM3 3.35 TB/s", "L1/shared 33.5 TB/s", "L2 5.5 TB/s", "NVLink 4 450 GB/s", "PCIe 5.0 x16 63 GB/s"]
    assert [r["text"] for r in rows(spec, "ceiling_labels")] == ["bf16 matrix · 989 TFLOP/s"]
    kernels = rows(spec, "kernels")
    assert len(kernels) == len(example) == fig.points == 12
    assert spec["usermeta"]["roofcore"] == {"kernel_points": 12, "kernels": 12, "capped": False,
                                           "devices": ["h100-sxm"]}


def test_all_ceilings_on_request_with_shared_labels(catalog, example):
    h100 = catalog.get("h100-sxm")
    spec = spec_of(charts.roofline(analyze(example, [h100]), all_ceilings=True))
    assert {r["name"] for r in rows(spec, "roofs") if r["kind"] == "compute"} == {c.key for c in h100.ceilings}
    texts = [r["text"] for lay in ("ceiling_labels", "ceiling_labels_below") for r in rows(spec, lay)]
    assert "bf16 matrix / fp16 matrix · 989 TFLOP/s" in texts  # one label per distinct peak
    assert len(texts) == len({c.peak for c in h100.ceilings})


def test_axes_are_log_and_fixed_by_the_device(catalog, example):
    h100 = catalog.get("h100-sxm")
    x_dom, y_dom = charts.base_domains([h100])
    assert x_dom == (0.01, 1e4)  # a decade past 10 × the largest ridge (fp8 1979 T / 3.35 TB/s = 591)
    assert y_dom == (1e11, 2 * 1979e12)
    spec = spec_of(charts.roofline(analyze(example, [h100])))
    enc = next(lay for lay in layers(spec) if lay.get("description") == "kernels")["encoding"]
    for ch, dom, title in (("x", x_dom, charts.AXIS_X), ("y", y_dom, charts.AXIS_Y)):
        assert enc[ch]["scale"] == {"type": "log", "domain": list(dom), "nice": False}
        assert enc[ch]["axis"]["title"] == title and enc[ch]["axis"]["format"] == "~s"
    # the same device gives the same axes whatever the workload: charts line up
    other = charts.roofline(analyze(workload(50), [h100]))
    assert (other.x_domain, other.y_domain) == (x_dom, y_dom)


def test_axes_grow_by_decades_only_for_kernels_beyond_them(catalog):
    h100 = catalog.get("h100-sxm")
    w = Workload(frame=make_frame({"name": ["tiny", "dense"], "flops": [1e3, 1e15], "bytes_hbm": [1e6, 1e9],
                                   "time_s": [1e-3, 1.2], "source": ["t", "t"], "row": ["1", "2"]}, 2))
    fig = charts.roofline(analyze(w, [h100]))
    assert fig.x_domain == (0.001, 1e6) and fig.y_domain[0] == 1e6
    assert "Axes extended by whole decades" in fig.caption


def test_untimed_kernels_sit_on_their_roof_and_timed_ones_at_their_achieved_rate(catalog, example):
    h100 = catalog.get("h100-sxm")
    a = analyze(example, [h100])
    fig = charts.roofline(a)
    tab = a.table("h100-sxm").set_index("name")
    for k in rows(spec_of(fig), "kernels"):
        assert k["y"] == pytest.approx(tab.loc[k["name"], "attainable_flops_per_s"])
        assert k["x"] == pytest.approx(tab.loc[k["name"], "intensity_hbm"])
    assert "placed on their roof (attainable FLOP/s), which is all of them here" in fig.caption
    timed = analyze(workload(20), [h100])
    t = timed.table("h100-sxm").set_index("name")
    for k in rows(spec_of(charts.roofline(timed)), "kernels"):
        assert k["y"] == pytest.approx(t.loc[k["name"], "flops"] / t.loc[k["name"], "time_s"])
        assert k["placed"] == "measured time"


def test_marks_are_capped_top_by_time_and_the_caption_says_so(catalog):
    h100, mi300x = catalog.get("h100-sxm"), catalog.get("mi300x")
    w = workload(300)
    fig = charts.roofline(analyze(w, [h100]), max_marks=100)
    kernels = rows(spec_of(fig), "kernels")
    assert len(kernels) == fig.points == 100 and fig.capped
    assert "Capped at 100 marks: showing the top 100 of 300 kernels by time." in fig.caption
    longest = w.frame.nlargest(100, "time_s")["name"]
    assert {k["name"] for k in kernels} == set(longest)
    two = charts.roofline(analyze(w, [h100, mi300x]), max_marks=100)  # every device counts against the cap
    assert two.points == 100 and two.kernels == 50
    top = charts.roofline(analyze(w, [h100]), top_n=10)
    assert top.points == 10 and not top.capped and "Showing the top 10 of 300 kernels by time." in top.caption


def test_a_large_workload_never_sends_more_than_the_cap(catalog):
    fig = charts.roofline(analyze(workload(20_000, l2=True), [catalog.get("h100-sxm")]), hierarchical=True)
    spec = spec_of(fig)
    assert len(rows(spec, "kernels")) == fig.points <= charts.MAX_MARKS
    assert sum(len(v) for v in spec["datasets"].values()) < charts.MAX_MARKS * 2  # marks plus a few roof rows


def test_hierarchical_view_has_a_mark_per_level_joined_by_a_rule(catalog):
    hw = make_hw(peak=100e12, bw=1e12, levels={"l2": 4e12})
    w = Workload(frame=make_frame({"name": ["a", "b"], "flops": [1e12, 2e12], "bytes_hbm": [1e10, 1e9],
                                   "bytes_l2": [4e10, 8e9], "time_s": [0.05, 0.01], "source": ["t"] * 2,
                                   "row": ["1", "2"]}, 2))
    spec = spec_of(charts.roofline(analyze(w, [hw]), hierarchical=True))
    marks = rows(spec, "kernels")
    assert sorted((m["name"], m["level"], round(m["x"], 2)) for m in marks) == [
        ("a", "HBM", 100.0), ("a", "L2", 25.0), ("b", "HBM", 2000.0), ("b", "L2", 250.0)]
    assert {m["y"] for m in marks if m["name"] == "a"} == {1e12 / 0.05}  # one rate, several intensities
    links = rows(spec, "kernel_links")
    assert sorted((r["x"], r["x2"]) for r in links) == [(25.0, 100.0), (250.0, 2000.0)]


def test_kernels_without_flops_or_bytes_are_left_out_and_counted(catalog):
    w = Workload(frame=make_frame({"name": ["ok", "nobytes"], "flops": [1e12, 1e12], "bytes_hbm": [1e9, np.nan],
                                   "source": ["t"] * 2, "row": ["1", "2"]}, 2))
    fig = charts.roofline(analyze(w, [catalog.get("h100-sxm")]))
    assert fig.points == 1 and "1 kernel(s) not drawn" in fig.caption


def test_several_devices_overlaid_or_faceted(catalog, example):
    a = analyze(example, [catalog.get("h100-sxm"), catalog.get("tpu-v5e")])
    overlay = spec_of(charts.roofline(a))
    # roofs coloured by device, marks by bound: two colour scales, and a legend of the devices' mark shapes
    assert overlay["resolve"] == {"scale": {"color": "independent", "stroke": "independent"},
                                  "legend": {"shape": "independent"}}
    kernels = rows(overlay, "kernels")
    assert len(kernels) == 24 and {k["device_id"] for k in kernels} == {"h100-sxm", "tpu-v5e"}
    enc = next(lay for lay in layers(overlay) if lay.get("description") == "kernels")["encoding"]
    assert enc["shape"]["field"] == "device" and enc["fillOpacity"]["condition"]["test"].endswith(
        "'NVIDIA H100 SXM5 80GB')")  # the first device's marks filled, the others hollow
    facets = spec_of(charts.roofline(a, layout="facet"))
    assert [p["title"] for p in facets["concat"]] == ["NVIDIA H100 SXM5 80GB", "Google TPU v5e"]
    domains = {tuple(lay["encoding"]["x"]["scale"]["domain"]) for lay in layers(facets)
               if lay.get("description") == "roofs"}
    assert len(domains) == 1  # every panel on the same axes
    assert [p["name"] for p in facets["params"]] == ["legend_pick"]  # one legend highlight for all panels


def test_legend_click_highlights_by_bound_or_group(catalog, example):
    spec = spec_of(charts.roofline(analyze(example, [catalog.get("h100-sxm")]), color_by="group"))
    param = spec["params"][0]
    assert param["select"] == {"type": "point", "fields": ["group"]} and param["bind"] == "legend"
    enc = next(lay for lay in layers(spec) if lay.get("description") == "kernels")["encoding"]
    assert enc["color"]["field"] == "group" and enc["opacity"]["condition"]["param"] == "legend_pick"
    tips = {t["title"] for t in enc["tooltip"]}
    assert tips >= {"Kernel", "Launches", "FLOPs", "Bytes", "Intensity", "Achieved", "Attainable",
                    "Efficiency (of roof)", "Bound", "Headroom"}


def test_bound_colours_read_memory_blue_compute_orange():
    dom, rng = charts.bound_colors(["compute:bf16-matrix", "memory:l2", "memory:hbm", "link:nvlink", "unknown"])
    assert dom == ["memory:hbm", "memory:l2", "compute:bf16-matrix", "link:nvlink", "unknown"]
    assert rng[0].startswith("#1f77b4") and rng[2] == "#e6550d"


def test_labels_do_not_overlap_each_other(catalog, example):
    """Every placed label's box is clear of the others (the placer's own bookkeeping, checked from outside)."""
    hws = [catalog.get(i) for i in ("h100-sxm", "mi300x", "tpu-v5e")]
    a = analyze(example, hws)
    fig = charts.roofline(a, all_ceilings=True)
    spec = spec_of(fig)
    placer = charts._Placer(fig.x_domain, fig.y_domain, 760, 440)
    flat, diagonal = [], []
    for role, side in (("ceiling_labels", 1), ("ceiling_labels_below", -1), ("roof_labels", 1),
                       ("roof_labels_below", -1)):
        for r in rows(spec, role):
            (x,), (y,) = placer.xy([r["x"]], [r["y"]])
            length = len(r["text"]) * 6.7
            if role.startswith("roof_labels"):  # in the frame of the (parallel) diagonals: along s, across n
                t = math.radians(-r["angle"])
                s0, n = x * math.cos(t) + y * math.sin(t), -x * math.sin(t) + y * math.cos(t)
                lo = n + 3 if side > 0 else n - 17
                diagonal.append((s0, s0 + length, lo, lo + 14))
            else:
                lo = y + 3 if side > 0 else y - 17
                flat.append((x, x + length, lo, lo + 14))
    assert len(diagonal) >= 8 and len(flat) >= 8  # a label with no free spot is left out, not overlapped
    assert "No room for a label that crosses no line: " in fig.caption  # ... and named under the chart
    for boxes in (flat, diagonal):
        for i, (a0, a1, b0, b1) in enumerate(boxes):
            for c0, c1, d0, d1 in boxes[i + 1:]:
                assert a1 <= c0 or c1 <= a0 or b1 <= d0 or d1 <= b0, ((a0, a1, b0, b1), (c0, c1, d0, d1))


def test_bound_share_chart_has_one_bar_per_bound():
    spec = charts.bound_share_chart({"memory:hbm": 0.35, "compute:bf16-matrix": 0.65}).to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {(d["bound"], d["label"]) for d in data} == {("memory:hbm", "35%"), ("compute:bf16-matrix", "65%")}


def test_svg_and_png_export_offline(catalog, example):
    fig = charts.roofline(analyze(example, [catalog.get("h100-sxm")]))
    svg = charts.to_svg(fig)
    assert svg.startswith("<svg") and "Arithmetic intensity (FLOP/byte)" in svg and "HBM3 3.35 TB/s" in svg
    assert charts.to_png(fig, scale=1).startswith(b"\x89PNG")


def test_chart_data_is_built_without_a_python_loop_per_kernel(catalog):
    """20,000 kernels give 20,000 chart points as one frame (vectorised pandas and numpy, no loop per kernel)."""
    a = analyze(workload(20_000), [catalog.get("h100-sxm")])
    pts = charts.kernel_points(a, ["h100-sxm"])
    assert len(pts) == 20_000
    assert isinstance(pts, pd.DataFrame)


def test_a_100k_kernel_roofline_builds_rows_for_the_drawn_kernels_only(catalog, monkeypatch):
    """The chart of 100,000 kernels tabulates only the ≤ MAX_MARKS it draws, and creates no Altair object: the
    roofline is written as a Vega-Lite dict (Altair objects cost more than the engine's whole analysis)."""
    a = analyze(workload(100_000), [catalog.get("h100-sxm")])
    rows_tabulated = watch_tabulation(monkeypatch, "charts.roofline")
    fig = charts.roofline(a)
    fig.spec(arrow=True)
    assert rows_tabulated and max(rows_tabulated) <= charts.MAX_MARKS
    assert fig.points == charts.MAX_MARKS and fig.capped
    monkeypatch.undo()
    spec = fig.to_dict()  # validated against the Vega-Lite schema
    assert len(rows(spec, "kernels")) == charts.MAX_MARKS


@pytest.mark.samples
def test_a_kernel_without_offchip_bytes_on_a_real_export_is_placed_by_its_binding_level():
    """ncu's RTX 5070 export has DRAM bytes but no FLOPs: the chart builds (it once failed on a read-only array)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "shared" / "samples" / "ncu_details_rtx5070_win_gemm_naive.csv"
    if not path.exists():
        pytest.skip("../shared/samples is not here (the real exports live outside the repository)")
    a = analyze(roofcore.read(path), [roofcore.load_catalogs().get("rtx-4090")])
    spec = charts.roofline(a).to_dict()
    assert spec["usermeta"]["roofcore"]
