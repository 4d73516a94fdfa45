"""roofcore.charts: the roofline's layers, marks, axes and caps, read from the Vega-Lite spec it produces."""

from __future__ import annotations

import collections
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from roofhelpers import make_hw, sample, watch_tabulation, workload_of

import roofcore
from roofcore import charts, ops, plan
from roofcore.analyze import analyze
from roofcore.charts.labels import shared_text
from roofcore.ingest import make_frame
from roofcore.measured import merge_measured
from roofcore.models import Workload


@pytest.fixture(scope="module")
def catalog():
    return roofcore.load_catalogs()


@pytest.fixture(scope="module")
def example():
    from roofcore.resources import examples

    return roofcore.read(examples()["transformer_block"])


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


def test_hierarchical_marks_carry_every_levels_intensity_and_ring_the_binding_level():
    """One mark per level, off-chip first in the legend; the tooltip gives the intensity at every level (not '–');
    the mark of the level that bounds the kernel is ringed and the others recede; no region is shaded, since the
    on-chip marks of a kernel bound past the off-chip ridge would contradict it."""
    hw = make_hw(peak=100e12, bw=1e12, levels={"l2": 4e12, "l1": 16e12})
    # a: L2 40 GB / 4 TB/s = 10 ms > compute 2 ms, L1 2.5 ms, HBM 1 ms: L2-bound at 200 FLOP/B off-chip, past
    # the 100 FLOP/B ridge; b: HBM-bound (2 ms)
    w = Workload(frame=make_frame({"name": ["a", "b"], "flops": [2e11, 1e9], "bytes_hbm": [1e9, 2e9],
                                   "bytes_l2": [40e9, 2e9], "bytes_l1": [40e9, 4e9], "time_s": [0.02, 0.004],
                                   "source": ["t"] * 2, "row": ["1", "2"]}, 2))
    fig = charts.roofline(analyze(w, [hw]), hierarchical=True)
    spec = spec_of(fig)
    kernels = next(lay for lay in layers(spec) if lay.get("description") == "kernels")
    marks = spec["datasets"][kernels["data"]["name"]]
    assert sorted((m["name"], m["level"], m["binding"]) for m in marks) == [
        ("a", "HBM", False), ("a", "L1", False), ("a", "L2", True),
        ("b", "HBM", True), ("b", "L1", False), ("b", "L2", False)]
    a = next(m for m in marks if m["name"] == "a" and m["level"] == "HBM")
    assert (a["i_hbm"], a["i_l2"], a["i_l1"]) == (200.0, 5.0, 5.0)
    assert kernels["encoding"]["shape"]["scale"]["domain"] == ["HBM", "L2", "L1"]
    tips = [t["title"] for t in kernels["encoding"]["tooltip"]]
    shown = [t for t in tips if t.startswith("Intensity")]
    assert shown == ["Intensity", "Intensity at HBM", "Intensity at L2", "Intensity at L1"]
    calc = {c["as"]: c["calculate"] for c in kernels["transform"]}
    assert "datum['x']" in calc["t_int"] and "datum['i_l2']" in calc["t_i_l2"]  # the mark's own level is x
    ring = next(lay for lay in layers(spec) if lay.get("description") == "binding_marks")
    assert ring["data"] == kernels["data"] and ring["transform"][0] == {"filter": "datum.binding"}  # no copy
    assert ring["encoding"]["tooltip"] == kernels["encoding"]["tooltip"]  # a hover on the ring finds the numbers
    assert kernels["encoding"]["opacity"]["condition"][1] == {"test": "datum.binding", "value": 0.95}
    assert not regions(spec)
    assert "the ringed mark is the level or link that bounds it" in fig.caption
    assert ("No memory/compute shading: each level has its own ridge, and regions split at the off-chip one would "
            "put marks of 1 kernel on the side that contradicts its bound.") in fig.caption


def _kernels(rows_: list[tuple]) -> Workload:
    names, flops, hbm, l2, prec, unit = zip(*rows_, strict=True)
    n = len(names)
    return Workload(frame=make_frame({"name": list(names), "flops": list(flops), "bytes_hbm": list(hbm),
                                      "bytes_l2": list(l2), "precision": list(prec), "unit": list(unit),
                                      "source": ["t"] * n, "row": [str(i + 1) for i in range(n)]}, n))


def regions(spec: dict) -> dict[str, tuple[float, float]]:
    return {lay["description"]: (r["x"], r["x2"]) for lay in layers(spec)
            if lay.get("description") in ("region_memory-bound", "region_compute-bound")
            for r in spec["datasets"][lay["data"]["name"]]}


def test_regions_follow_the_ceiling_every_kernel_runs_on_or_are_left_out(catalog):
    h100 = catalog.get("h100-sxm")
    fp32 = h100.ridge("fp32-vector")["hbm"]
    # both fp32 vector: shaded at the fp32 ridge (20 FLOP/B), not the default bf16 one (295)
    spec = spec_of(charts.roofline(analyze(_kernels([("s1", 1e9, 1e9, 1e9, "fp32", "vector"),
                                                     ("s2", 1e12, 1e9, 1e9, "fp32", "vector")]), [h100])))
    assert regions(spec) == {"region_memory-bound": (0.01, pytest.approx(fp32)),
                             "region_compute-bound": (pytest.approx(fp32), 1e4)}
    assert [r["text"] for r in rows(spec, "ridge_label")] == ["ridge 20 FLOP/B (fp32 vector)"]
    # fp32 beside bf16: two ridges, so no regions, and the caption says why
    fig = charts.roofline(analyze(_kernels([("s", 1e9, 1e9, 1e9, "fp32", "vector"),
                                            ("h", 1e12, 1e9, 1e9, "bf16", "matrix")]), [h100]))
    assert not regions(spec_of(fig)) and not rows(spec_of(fig), "ridge_label")
    assert ("No memory/compute shading: the kernels run against different compute ceilings (bf16-matrix, "
            "fp32-vector), each with its own ridge.") in fig.caption
    # bound by L2 while its off-chip intensity is past the ridge: a compute-bound region would contradict it
    fig = charts.roofline(analyze(_kernels([("tiled", 1e12, 1e9, 1e12, "bf16", "matrix")]), [h100]))
    assert not regions(spec_of(fig))
    assert ("No memory/compute shading: 1 kernel past the off-chip ridge is bound by L2, which regions split at "
            "that ridge would contradict.") in fig.caption


def test_drawn_regions_agree_with_every_mark(catalog, example):
    """Where regions are drawn, each mark left of the ridge is memory- (or link-) bound and each one right of it
    compute-bound, on the device the regions are for."""
    for ids in (["h100-sxm"], ["mi300x", "h100-sxm"], ["tpu-v5e"]):
        hws = [catalog.get(i) for i in ids]
        spec = spec_of(charts.roofline(analyze(example, hws)))
        reg = regions(spec)
        assert reg, ids
        ridge = reg["region_memory-bound"][1]
        marks = [m for m in rows(spec, "kernels") if m["device_id"] == ids[0]]
        assert marks and all((m["x"] < ridge) == m["bound"].startswith(("memory:", "link:")) for m in marks), ids


def test_kernels_without_flops_or_bytes_are_left_out_and_counted(catalog):
    w = Workload(frame=make_frame({"name": ["ok", "nobytes"], "flops": [1e12, 1e12], "bytes_hbm": [1e9, np.nan],
                                   "source": ["t"] * 2, "row": ["1", "2"]}, 2))
    fig = charts.roofline(analyze(w, [catalog.get("h100-sxm")]))
    assert fig.points == 1 and "1 kernel(s) not drawn" in fig.caption


def test_the_hierarchical_view_of_a_time_only_profile_draws_no_mark_and_says_why(catalog):
    """Kernels with times but no bytes at any level have no mark in the hierarchical view: the chart builds (it
    once failed on the missing columns) and its caption counts them as the flat view does."""
    w = Workload(frame=make_frame({"name": ["kern_a", "kern_b"], "time_s": [2e-3, 1e-3], "source": ["t"] * 2,
                                   "row": ["1", "2"]}, 2))
    a = analyze(w, [catalog.get("h100-sxm")])
    fig = charts.roofline(a, hierarchical=True)
    spec = fig.to_dict()  # validated against the Vega-Lite schema
    assert fig.points == 0 and not rows(spec, "kernels")
    assert "2 kernel(s) not drawn: FLOPs or bytes unknown" in fig.caption
    assert "2 kernel(s) not drawn: FLOPs or bytes unknown" in charts.roofline(a).caption


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


#: the placer's advance per glyph of a 12 px label (real glyphs are narrower, about 5.8 px): the boxes below are
#: at least as large as what is drawn
CHAR_PX = 6.7
#: text layers that name roofs and ceilings (and the other fixed annotations): none may overlap another
LABEL_ROLES = ("ceiling_labels", "ceiling_labels_below", "roof_labels", "roof_labels_below", "roof_key",
               "roof_key_title", "ceiling_key", "ceiling_key_title", "region_label_left", "region_label_right",
               "ridge_label", "kernel_numbers")


def text_boxes(spec: dict) -> list[tuple[int, str, str, np.ndarray]]:
    """(panel, role, text, 4 corners in screen px, y down) of every label drawn, computed from the spec alone:
    the anchor from the data and the log scales, then Vega's text geometry: align and dx along the text,
    baseline and dy across it (font size high), the whole turned by the angle about the anchor."""
    out = []
    for k, view in enumerate(spec.get("concat") or [spec]):
        w, h = view["width"], view["height"]
        for lay in view["layer"]:
            mark, role = lay["mark"], lay.get("description")
            if mark.get("type") != "text" or role not in LABEL_ROLES:
                continue  # the white halos under each label are the same text again
            enc = lay["encoding"]
            (x0, x1), (y0, y1) = enc["x"]["scale"]["domain"], enc["y"]["scale"]["domain"]
            fs = mark.get("fontSize", 11)
            for r in spec["datasets"][lay["data"]["name"]]:
                ax = math.log10(r["x"] / x0) / math.log10(x1 / x0) * w
                ay = h - math.log10(r["y"] / y0) / math.log10(y1 / y0) * h
                length = len(r["text"]) * CHAR_PX * fs / 12
                left = {"left": 0.0, "center": -length / 2, "right": -length}[mark["align"]] + mark.get("dx", 0)
                dy = mark.get("dy", 0)
                top = {"bottom": dy - fs, "top": dy, "middle": dy - fs / 2}[mark["baseline"]]
                corners = np.array([(left, top), (left + length, top), (left + length, top + fs), (left, top + fs)])
                t = math.radians(r["angle"] if "angle" in enc else mark.get("angle", 0))
                rot = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
                out.append((k, role, r["text"], corners @ rot.T + (ax, ay)))
    return out


def line_segments(spec: dict) -> list[tuple[int, str, np.ndarray]]:
    """(panel, roof name, 2 ends in screen px) of every roof and ceiling drawn, theoretical and achievable."""
    out = []
    for k, view in enumerate(spec.get("concat") or [spec]):
        w, h = view["width"], view["height"]
        for lay in view["layer"]:
            if lay.get("description") not in ("roofs", "achievable_roofs"):
                continue
            (x0, x1), (y0, y1) = lay["encoding"]["x"]["scale"]["domain"], lay["encoding"]["y"]["scale"]["domain"]
            for r in spec["datasets"][lay["data"]["name"]]:
                ends = [(math.log10(a / x0) / math.log10(x1 / x0) * w, h - math.log10(b / y0) / math.log10(y1 / y0) * h)
                        for a, b in ((r["x"], r["y"]), (r["x2"], r["y2"]))]
                out.append((k, r["name"], np.array(ends)))
    return out


def apart(p: np.ndarray, q: np.ndarray, gap: float = 0.0) -> bool:
    """Whether two convex shapes (a box, or a segment as its two ends) are more than ``gap`` px apart along some
    axis (the separating axis test over both shapes' edge normals)."""
    for shape in (p, q):
        for i in range(len(shape)):
            e = shape[(i + 1) % len(shape)] - shape[i]
            if not np.hypot(*e):
                continue
            n = np.array([-e[1], e[0]]) / np.hypot(*e)
            a, b = p @ n, q @ n
            if a.max() + gap <= b.min() or b.max() + gap <= a.min():
                return True
    return False


def assert_labels_clear(spec: dict) -> list[tuple[int, str, str, np.ndarray]]:
    """No label overlaps another (beyond half a pixel) and none comes within 1 px of a roof or ceiling line
    (a 2 px stroke: its label sits 3 px off it)."""
    boxes = text_boxes(spec)
    for i, (k, role, text, box) in enumerate(boxes):
        for k2, role2, text2, box2 in boxes[i + 1:]:
            assert k != k2 or apart(box, box2, -0.5), f"{role} {text!r} overlaps {role2} {text2!r}"
    for k, role, text, box in boxes:
        if role == "kernel_numbers":
            continue  # a number may sit on a line beside its mark
        for k2, name, seg in line_segments(spec):
            assert k != k2 or apart(box, seg, 1.0), f"{role} {text!r} strikes through the {name} line"
    return boxes


@pytest.mark.parametrize("size", [(760, 440), (420, 260)])
def test_three_devices_with_all_ceilings_label_every_line_clear_of_the_others(catalog, example, size):
    """Issue 14's chart point: three devices overlaid with every ceiling: labels never collide or strike through a
    line; what has no room along its line goes to a key (in the plot, or under the x axis on a small chart)."""
    hws = [catalog.get(i) for i in ("h100-sxm", "mi300x", "tpu-v5e")]
    fig = charts.roofline(analyze(example, hws), all_ceilings=True, width=size[0], height=size[1])
    spec = spec_of(fig)
    boxes = assert_labels_clear(spec)
    said = [t for _, role, t, _ in boxes if role in ("ceiling_labels", "ceiling_labels_below", "roof_labels",
                                                      "roof_labels_below")]
    said += [t.removeprefix(charts.KEY_DASH) for _, role, t, _ in boxes if role in ("roof_key", "ceiling_key")]
    roofs = [r for r in rows(spec, "roofs")]
    diagonals: dict[str, set] = {}  # every roof, once: a roof two devices share (PCIe 5.0 x16) said once for both
    for r in roofs:
        if r["kind"] != "compute":
            diagonals.setdefault(r["label"], set()).add(r["device_id"])
    assert sorted(t for t in said if "/s" in t and "FLOP" not in t) == sorted(
        shared_text(label, len(ids)) for label, ids in diagonals.items())
    assert "PCIe 5.0 x16 63 GB/s (2 devices)" in said  # H100 SXM's and MI300X's host link: one line, one label
    ceilings = [t for t in said if "FLOP" in t or "OPS" in t]
    assert len(ceilings) == len(set(ceilings))  # every distinct ceiling, once
    assert all(any(r["label"] in t and r["value"] in t for t in ceilings) for r in roofs if r["kind"] == "compute")
    assert "No room for a label" not in fig.caption
    if size == (420, 260):  # too small for a key inside the plot: under the x axis
        under = rows(spec, "ceiling_key") + rows(spec, "roof_key")
        assert under and all(r["y"] < fig.y_domain[0] for r in under)


def test_roofs_too_close_to_label_one_by_one_are_keyed_top_to_bottom(catalog):
    """Two devices whose levels interleave 1.3–1.7× apart (a GPU and the same GPU as measured): no room between
    the lines, so every roof is named in a key, in the order the lines run down the chart, each in its device's
    colour."""
    a = make_hw(peak=190e12, bw=1.6e12, levels={"l2": 7e12, "l1": 12e12, "lds": 24e12}, hw_id="dev-a")
    b = make_hw(peak=170e12, bw=1.4e12, levels={"l2": 5e12, "l1": 9.2e12, "lds": 17.7e12}, hw_id="dev-b")
    b = replace(b, name="Other device")
    w = workload(30, l2=True)
    spec = spec_of(charts.roofline(analyze(w, [a, b])))
    assert not rows(spec, "roof_labels") and not rows(spec, "roof_labels_below")
    key = rows(spec, "roof_key")
    assert [r["text"] for r in key] == ["— LDS 24 TB/s", "— LDS 17.7 TB/s", "— L1 12 TB/s", "— L1 9.2 TB/s",
                                        "— L2 7 TB/s", "— L2 5 TB/s", "— HBM 1.6 TB/s", "— HBM 1.4 TB/s"]
    assert [r["device"] for r in key] == ["Test device", "Other device"] * 4
    assert [r["text"] for r in rows(spec, "roof_key_title")] == ["Roofs, top to bottom"]
    assert all(r["y"] > 0 for r in key)  # inside the plot: above the x axis
    assert_labels_clear(spec)


#: the text layers that name a roof or ceiling: along its line or in a key
LINE_NAMES = ("ceiling_labels", "ceiling_labels_below", "roof_labels", "roof_labels_below", "roof_key", "ceiling_key")


def line_names(spec: dict) -> collections.Counter:
    """How often each roof or ceiling label is said, along its line or in a key (the key's dash left off)."""
    return collections.Counter(r["text"].removeprefix(charts.KEY_DASH) for role in LINE_NAMES for r in rows(spec, role))


def test_measured_twins_and_a_device_of_eight_gpus_carry_one_key_entry_per_roof():
    """A device beside its measured twin (the same roofs) and a device of eight GPUs of one model: roofs too close
    to label one by one go to the key, and no roof is named twice there; the twin's coinciding roofs are one entry
    "(2 devices)", said in the roofs' neutral colour (no one device's)."""
    a = make_hw(peak=190e12, bw=1.6e12, levels={"l2": 7e12, "l1": 12e12, "lds": 24e12}, hw_id="dev-a")
    twin = replace(a, id="dev-a-measured", name="Twin (measured)")
    gpus = [replace(make_hw(peak=170e12 * (1 + d / 1000), bw=1.4e12 * (1 + d / 1000),
                            levels={"l2": 5e12, "l1": 9.2e12, "lds": 17.7e12}, hw_id=f"dev-b-gpu{i}-measured"),
                    name=f"Other GPU {i} (measured, b.csv)") for i, d in enumerate((3, -8, 12, 0, -5, 7, 20, -2))]
    [eight] = merge_measured(gpus)
    spec = spec_of(charts.roofline(analyze(workload(30, l2=True), [a, twin, eight])))
    said = line_names(spec)
    assert said and max(said.values()) == 1, [t for t, n in said.items() if n > 1]
    key = rows(spec, "roof_key")
    assert [r["text"] for r in key] == ["— LDS 24 TB/s (2 devices)", "— LDS 17.7 TB/s", "— L1 12 TB/s (2 devices)",
                                        "— L1 9.2 TB/s", "— L2 7 TB/s (2 devices)", "— L2 5 TB/s",
                                        "— HBM 1.6 TB/s (2 devices)", "— HBM 1.4 TB/s"]
    assert [r["shared"] for r in key] == [True, False] * 4
    enc = next(lay for lay in layers(spec) if lay.get("description") == "roof_key")["encoding"]["color"]
    assert enc["condition"] == {"test": "datum.shared", "value": charts.ROOF_COLOR}
    assert said["bf16 matrix · 190 TFLOP/s (2 devices)"] == 1


def test_a_roof_of_eight_gpus_says_their_spread_in_its_tooltip():
    gpus = [make_hw(bw=1.4e12 * (1 + d / 1000), hw_id=f"dev-gpu{i}-measured") for i, d in enumerate((3, -8, 12, 0))]
    [four] = merge_measured(gpus)
    spec = spec_of(charts.roofline(analyze(workload(10), [four])))
    roofs = next(lay for lay in layers(spec) if lay.get("description") == "roofs")
    assert {"field": "derivation", "type": "nominal", "title": "Derivation"} in roofs["encoding"]["tooltip"]
    hbm = next(r for r in rows(spec, "roofs") if r["name"] == "hbm")
    assert hbm["derivation"] == "median of 4 GPUs (devices 0–3): 1.39–1.42 TB/s"
    assert hbm["beta"] == pytest.approx(1.4e12 * 1.0015)  # the median of 1.0 and 1.003 × 1.4 TB/s


@pytest.mark.samples
def test_the_real_mi300x_export_beside_the_catalogs_mi300x_names_each_roof_once(catalog):
    """rocprof-compute measured all 8 GPUs of the MI300X node: one measured device beside the datasheet's MI300X,
    each roof named once (today's MALL figure is the same on both: one entry for the two)."""
    w = roofcore.read_many([sample("rocprof_compute3.3_mi300x_bmm_pmc_perf_SUBSET_first40.csv"),
                            sample("rocprof_compute3.3_mi300x_bmm_sysinfo.csv"),
                            sample("rocprof_compute3.3_mi300x_bmm_roofline.csv")])
    assert [h.id for h in w.measured] == ["mi300x-measured"]
    hws = [catalog.get("mi300x"), *w.measured]
    spec = spec_of(charts.roofline(analyze(w, hws)))
    said = line_names(spec)
    assert max(said.values()) == 1, [t for t, n in said.items() if n > 1]
    assert {r["device_id"] for r in rows(spec, "roofs")} == {"mi300x", "mi300x-measured"}
    hbm = next(r for r in rows(spec, "roofs") if r["device_id"] == "mi300x-measured" and r["name"] == "hbm")
    assert hbm["derivation"] == "median of 8 GPUs (devices 0–7): 4.24–4.26 TB/s"


def test_a_facetted_and_a_numbered_chart_keep_labels_clear(catalog, example):
    hws = [catalog.get(i) for i in ("h100-sxm", "mi300x", "tpu-v5e")]
    a = analyze(example, hws)
    assert_labels_clear(spec_of(charts.roofline(a, layout="facet", all_ceilings=True)))
    numbers = np.arange(1, len(example) + 1)
    spec = spec_of(charts.roofline(analyze(example, hws[:1]), numbers=numbers))
    assert len(rows(spec, "kernel_numbers")) == len(example)
    assert_labels_clear(spec)


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


# ---------------------------------------------------------------------------------------- compare (two runs)


def test_roofline_compare_draws_an_arrow_per_matched_kernel():
    hw = make_hw()
    old = workload_of(*(ops.elementwise(1e8 * (i + 1), name=f"k{i}") for i in range(3)))
    new = plan.fuse(old, ["k1", "k2"], name="k1")
    c = plan.compare(old, new, hw)
    fig = charts.roofline_compare(c.old, c.new, hw.id)
    spec = fig.to_dict()
    arrows = [v for v in spec["datasets"].values() if v and "x2" in v[0] and "speedup" in v[0]]
    assert len(arrows) == 1 and {r["name"] for r in arrows[0]} == {"k0", "k1"}
    assert fig.kernels == 2


def test_roofline_compare_arrowheads_point_from_old_to_new():
    hw = make_hw()
    old = workload_of(ops.elementwise(1e9, name="slow"), times=[1e-2])
    new = workload_of(ops.elementwise(1e9, flops_per_element=8, name="slow"), times=[1e-3])  # same bytes, 8x FLOPs
    fig = charts.roofline_compare(plan.compare(old, new, hw).old, plan.compare(old, new, hw).new, hw.id)
    spec = fig.to_dict()
    (layer,) = [lay for lay in spec["layer"] if lay.get("description") == "compare_arrowheads"]
    (head,) = spec["datasets"][layer["data"]["name"]]
    (seg,) = [v for v in spec["datasets"].values() if v and "x2" in v[0] and "speedup" in v[0]]
    seg = seg[0]
    # the head sits at the segment's middle in log space and points up and to the right (intensity 8x, rate 80x)
    assert head["x"] == pytest.approx((seg["x"] * seg["x2"]) ** 0.5)
    assert head["y"] == pytest.approx((seg["y"] * seg["y2"]) ** 0.5)
    assert 0 < head["angle"] < 90
    assert layer["mark"]["shape"] == "triangle"


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


def test_box_hits_counts_what_a_circle_by_circle_check_counts():
    """The placer's box test (sorted ends, one band of circles per row) gives the counts of the direct check:
    a circle (x, y, r) overlaps a box when the box's nearest point is nearer than r; radius 0 overlaps nothing."""
    from roofcore.charts.placer import box_hits

    def direct(obs, x0, x1, y0, y1):
        ox, oy, r = obs[:, 0][None, :], obs[:, 1][None, :], obs[:, 2][None, :]
        dx = np.maximum(np.maximum(x0[:, None] - ox, ox - x1[:, None]), 0.0)
        dy = np.maximum(np.maximum(y0 - oy, oy - y1), 0.0)
        return (dx * dx + dy * dy < r * r).sum(axis=1)

    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(0, 200))
        obs = np.column_stack([rng.uniform(0, 640, n), rng.uniform(0, 270, n), rng.uniform(0, 12, n)])
        obs[: n // 10, 2] = 0.0  # some circles of radius 0
        w, h, top = rng.uniform(1, 200), rng.uniform(5, 60), rng.uniform(20, 270)
        xs = np.arange(4.0, 640 - w, 6.0)
        assert box_hits(obs, xs, xs + w, top - h, top).tolist() == direct(obs, xs, xs + w, top - h, top).tolist()
    one = np.array([[10.0, 10.0, 5.0]])  # just touching from the left, from above, and inside
    assert box_hits(one, np.array([15.0, 14.0, 0.0]), np.array([20.0, 20.0, 20.0]), 0.0, 20.0).tolist() == [0, 1, 1]
