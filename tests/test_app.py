"""The app as a user drives it, under Streamlit's AppTest: every page, uploads, device choices, custom devices.

Assertions are on content: the numbers shown are the engine's numbers formatted, the chart spec has the
roofline's layers and one mark per kernel, a bad upload names its problem and row, and the rest keeps working.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from roofhelpers import watch_tabulation
from streamlit.testing.v1 import AppTest

import roofcore
from app import state
from app.markdown import unescape_markdown
from app.workload import BUNDLED_EXAMPLE, BUNDLED_NAME
from roofcore import load_catalogs, views
from roofcore.catalog import load_bytes
from roofcore.units import fmt_factor, fmt_pct, fmt_time

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "streamlit_app.py")
DATA = Path(__file__).resolve().parent / "data"
PAGES = ["pages/overview.py", "pages/roofline.py", "pages/kernels.py", "pages/recommendations.py", "pages/hardware.py",
         "pages/report.py"]

INVENTORY = b"""name,count,flops,bytes,time_ms,precision,group
gemm_big,10,8.8e12,2.8e9,12.0,bf16,mlp
softmax,4,2.1e10,1.7e10,6.5,bf16,attention
layernorm,2,2.7e9,1.6e9,0.9,bf16,norm
"""


pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.sidebar.file_uploader[0].set_value([(name, data, "text/csv") for name, data in files]).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def charts(at: AppTest) -> list[dict]:
    """Each Vega-Lite chart on the page: its spec, with the datasets (sent as Arrow) decoded to row lists."""
    out = []
    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        spec["_data"] = {d.name: pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pylist()
                         for d in el.proto.datasets}
        out.append(spec)
    return out


def layers(spec: dict) -> list[dict]:
    views = spec.get("concat") or [spec]
    return [lay for v in views for lay in v["layer"]]


def rows_of(spec: dict, role: str) -> list[dict]:
    """Data rows of the layers described as ``role`` (across facets)."""
    return [r for lay in layers(spec) if lay.get("description") == role for r in spec["_data"][lay["data"]["name"]]]


def roofline_spec(at: AppTest) -> dict:
    found = [c for c in charts(at) if "roofcore" in c.get("usermeta", {})]
    assert len(found) == 1
    return found[0]


def said(elements) -> list[str]:
    """The text alerts show (their Markdown escapes undone: an engine message is escaped to read as itself)."""
    return [unescape_markdown(e.value) for e in elements]


def metrics(at: AppTest) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in at.metric:
        out.setdefault(m.label, []).append(m.value)
    return out


def engine(workload_bytes: bytes | None, ids: list[str], name: str = "inventory.csv") -> roofcore.Analysis:
    cat = roofcore.load_catalogs()
    w = (roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME) if workload_bytes is None
         else roofcore.read(workload_bytes, name=name))
    return roofcore.analyze(views.combine_launches(w), [cat.get(i) for i in ids])


# --------------------------------------------------------------------------------------------- pages


@pytest.fixture(scope="module")
def bundled() -> AppTest:
    """One session on the bundled example, walked through every page (the tests using it restore what they change)."""
    return start()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_on_the_bundled_example(bundled, page):
    goto(bundled, page)
    assert bundled.title[0].value == Path(page).stem.capitalize()
    assert not bundled.error
    assert bundled.sidebar.multiselect[0].value == ["h100-sxm"]
    assert "transformer_block.yaml" in " ".join(c.value for c in bundled.sidebar.caption)


def test_overview_numbers_are_the_engines(bundled):
    goto(bundled, "pages/overview.py")
    s = engine(None, ["h100-sxm"]).summary("h100-sxm")
    shown = metrics(bundled)
    assert shown["Roofline time"] == [fmt_time(s["t_roof_s"])] == ["40.5 ms"]
    kinds = views.bound_kind_shares(s)
    assert shown["Memory-bound"] == [fmt_pct(kinds["memory"])]
    assert shown["Compute-bound"] == [fmt_pct(kinds["compute"])]
    assert "Measured time" not in shown  # the example is analytic: no measured times, no speedup
    top = bundled.dataframe[0].value
    assert list(top["Kernel"][:2]) == ["ffn_down", "ffn_up"] or list(top["Kernel"][:2]) == ["ffn_up", "ffn_down"]
    share_chart = charts(bundled)[0]
    assert {r["bound"] for r in next(iter(share_chart["_data"].values()))} == {"memory:hbm", "compute:bf16-matrix"}


def test_roofline_chart_has_every_roof_and_one_mark_per_kernel(bundled):
    goto(bundled, "pages/roofline.py")
    spec = roofline_spec(bundled)
    roofs = rows_of(spec, "roofs")
    assert {r["name"] for r in roofs if r["kind"] == "memory"} == {lv.name for lv in load_catalogs().get("h100-sxm").levels}
    assert {r["name"] for r in roofs if r["kind"] == "link"} == {"nvlink", "pcie"}
    assert {r["name"] for r in roofs if r["kind"] == "compute"} == {"bf16-matrix"}  # default + the kernels' one
    assert rows_of(spec, "achievable_roofs")  # H100 has measured bf16 and fp8 figures: dashed roofs
    assert {round(r["x"], 1) for r in rows_of(spec, "ridges")} >= {295.2, 179.8}
    kernels = rows_of(spec, "kernels")
    assert len(kernels) == 12 == spec["usermeta"]["roofcore"]["kernel_points"]
    assert {r["name"] for r in kernels} >= {"ffn_up", "softmax", "gelu"}
    x, y = (next(lay for lay in layers(spec) if lay.get("description") == "kernels")["encoding"][c] for c in "xy")
    assert x["scale"]["type"] == y["scale"]["type"] == "log"
    assert x["axis"]["title"] == "Arithmetic intensity (FLOP/byte)" and y["axis"]["title"] == "Performance (FLOP/s)"
    assert x["scale"]["domain"] == [0.01, 10000.0]
    caption = " ".join(c.value for c in bundled.caption)
    assert "placed on their roof" in caption
    assert [b.label for b in bundled.get("download_button")] == ["Download SVG", "Download PNG"]


def test_roofline_controls_top_n_hierarchical_and_all_ceilings(bundled):
    goto(bundled, "pages/roofline.py")
    bundled.slider(key="rl_top").set_value(5).run()
    spec = roofline_spec(bundled)
    assert len(rows_of(spec, "kernels")) == 5
    assert "Showing the top 5 of 12 kernels by time." in " ".join(c.value for c in bundled.caption)
    bundled.toggle(key="rl_all").set_value(True).run()
    compute = {r["name"] for r in rows_of(roofline_spec(bundled), "roofs") if r["kind"] == "compute"}
    assert compute == {c.key for c in roofcore.load_catalogs().get("h100-sxm").ceilings}
    bundled.toggle(key="rl_hier").set_value(True).run()
    spec = roofline_spec(bundled)
    assert {r["level"] for r in rows_of(spec, "kernels")} == {"HBM3"}  # the example has off-chip bytes only
    bundled.slider(key="rl_top").set_value(12).run()
    bundled.toggle(key="rl_all").set_value(False).run()
    bundled.toggle(key="rl_hier").set_value(False).run()
    assert not bundled.exception


def test_kernels_page_filters_and_details(bundled):
    goto(bundled, "pages/kernels.py")
    table = bundled.dataframe[0].value
    assert len(table) == 12 and "Roofline time (ms)" in table.columns
    a = engine(None, ["h100-sxm"])
    ffn = a.table("h100-sxm").set_index("name").loc["ffn_up"]
    shown = table.set_index("Kernel").loc["ffn_up"]
    assert shown["Roofline time (ms)"] == pytest.approx(ffn["t_roof_s"] * 1e3)
    assert shown["Bound"] == ffn["bound"] == "compute:bf16-matrix"
    bundled.text_input(key="k_text").set_value("ffn").run()
    assert sorted(bundled.dataframe[0].value["Kernel"]) == ["ffn_down", "ffn_up"]
    bundled.text_input(key="k_text").set_value("").run()
    bundled.multiselect(key="k_bound").set_value(["memory:hbm"]).run()
    assert set(bundled.dataframe[0].value["Bound"]) == {"memory:hbm"} and len(bundled.dataframe[0].value) == 8
    bundled.multiselect(key="k_bound").set_value([]).run()
    labels = bundled.selectbox(key="k_detail").options
    bundled.selectbox(key="k_detail").set_value(next(i for i, lab in enumerate(labels) if lab.startswith("softmax")))
    bundled.run()
    assert "NVIDIA · H100 SXM5 80GB (h100-sxm)** — bound by `memory:hbm`" in " ".join(m.value for m in bundled.markdown)
    assert metrics(bundled)["Roofline time"] == ["5.13 ms"]
    resources = bundled.dataframe[1].value
    assert resources["Resource"].iloc[0].startswith("compute") and resources["Resource"].iloc[1] == "HBM3 (hbm)"


def test_hardware_page_compares_and_exports_yaml(bundled):
    goto(bundled, "pages/hardware.py")
    comparison = bundled.dataframe[0].value
    assert "Compute bf16-matrix" in comparison.index
    assert comparison.loc["Compute bf16-matrix"].iloc[0].startswith("989 TFLOP/s")
    yaml_button = next(b for b in bundled.get("download_button") if b.label == "Download YAML")
    assert yaml_button is not None


def test_achievable_roofs_change_every_number():
    at = start()
    at.sidebar.toggle(key="achievable").set_value(True).run()
    cat = roofcore.load_catalogs()
    w = views.combine_launches(roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME))
    s = roofcore.analyze(w, [cat.get("h100-sxm")], achievable=True).summary("h100-sxm")
    assert metrics(at)["Roofline time"] == [fmt_time(s["t_roof_s"])] != ["40.5 ms"]
    assert any("achievable roofs" in c.value for c in at.caption)


# --------------------------------------------------------------------------------------------- uploads


def test_upload_replaces_the_example_and_numbers_follow():
    at = upload(start(), ("inventory.csv", INVENTORY))
    assert "inventory.csv" in " ".join(c.value for c in at.sidebar.caption)
    s = engine(INVENTORY, ["h100-sxm"]).summary("h100-sxm")
    shown = metrics(at)
    assert shown["Measured time"] == [fmt_time(s["time_s"])] == ["19.4 ms"]
    assert shown["Roofline time"] == [fmt_time(s["t_roof_s"])]
    assert shown["Speedup if at roof"] == [fmt_factor(s["speedup_if_at_roof"])] == ["1.34×"]
    assert "Top kernels by headroom" in " ".join(m.value for m in at.markdown)
    goto(at, "pages/roofline.py")
    spec = roofline_spec(at)
    kernels = rows_of(spec, "kernels")
    assert sorted(r["name"] for r in kernels) == ["gemm_big", "layernorm", "softmax"]
    assert all(r["placed"] == "measured time" for r in kernels)
    gemm = next(r for r in kernels if r["name"] == "gemm_big")
    assert gemm["y"] == pytest.approx(8.8e12 / 12e-3) and gemm["x"] == pytest.approx(8.8e12 / 2.8e9)
    # colour by group: the legend lists the inventory's groups
    at.segmented_control(key="rl_color").set_value("group").run()
    assert {r["group"] for r in rows_of(roofline_spec(at), "kernels")} == {"mlp", "attention", "norm"}
    # the upload survives page changes; clearing it brings the example back
    goto(at, "pages/kernels.py")
    assert len(at.dataframe[0].value) == 3
    next(b for b in at.sidebar.button if b.label == "Clear uploads").click().run()
    assert "transformer_block.yaml" in " ".join(c.value for c in at.sidebar.caption)
    assert len(at.dataframe[0].value) == 12


def test_several_files_are_analysed_together():
    more = b"name,flops,bytes,time_us\nextra_kernel,1e9,1e8,50\n"
    at = upload(start(), ("a.csv", INVENTORY), ("b.csv", more))
    goto(at, "pages/kernels.py")
    assert len(at.dataframe[0].value) == 4


def test_bad_upload_names_the_problem_and_row_and_the_app_keeps_working():
    bad = b"name,flops,bytes,time_ms\ngemm,lots,1e6,1\nconv,many,2e6,2\n"
    at = upload(start(), ("broken.csv", bad))
    errors = said(at.error)
    assert len(errors) == 1
    assert errors[0].startswith("broken.csv: row 1: no usable rows; the first problem: flops: expected")
    assert "found 'lots'" in errors[0]
    assert any("Showing **examples/transformer_block.yaml** instead" in i.value for i in at.info)
    for page in PAGES[1:]:
        goto(at, page)
        assert said(at.error) == errors  # still said, on every page
    assert len(rows_of(roofline_spec(goto(at, "pages/roofline.py")), "kernels")) == 12


def test_png_renamed_csv_is_refused_with_what_it_is():
    png = (DATA / "bad_inventories" / "image.csv").read_bytes()
    assert png.startswith(b"\x89PNG")
    at = upload(start(), ("image.csv", png))
    assert said(at.error) == [
        "image.csv: expected a text workload file (CSV or YAML), found binary data (a PNG image). "
        "Hint: is this the right file? A renamed file keeps its content."]
    assert metrics(goto(at, "pages/overview.py"))["Roofline time"] == ["40.5 ms"]


def test_rows_that_cannot_be_read_are_skipped_and_listed():
    partly = INVENTORY + b"broken,1,1e9,-5,1,bf16,misc\n"
    at = upload(start(), ("partly.csv", partly))
    assert not at.error
    assert at.expander[0].label == "Import notes: 1 input row(s) skipped; the rest is analysed"
    skipped = at.dataframe[0].value
    assert list(skipped["row"]) == ["4"] and "bytes" in skipped["reason"].iloc[0]
    goto(at, "pages/kernels.py")
    assert len(at.dataframe[1].value) == 3  # the skipped-rows table comes first, then the kernels


# --------------------------------------------------------------------------------------------- hardware


def test_switching_devices_reanalyses_every_page():
    at = start()
    at.sidebar.multiselect[0].set_value(["h100-sxm", "mi300x"]).run()
    assert not at.exception
    assert [h.value for h in at.subheader if "·" in h.value] == [
        "NVIDIA · H100 SXM5 80GB (h100-sxm)", "AMD · Instinct MI300X (mi300x)"]
    mi = engine(None, ["mi300x"]).summary("mi300x")
    assert metrics(at)["Roofline time"] == ["40.5 ms", fmt_time(mi["t_roof_s"])]
    goto(at, "pages/roofline.py")
    spec = roofline_spec(at)
    assert len(rows_of(spec, "kernels")) == 24 and spec["usermeta"]["roofcore"]["devices"] == ["h100-sxm", "mi300x"]
    assert {r["device_id"] for r in rows_of(spec, "roofs")} == {"h100-sxm", "mi300x"}
    at.segmented_control(key="rl_layout").set_value("facets").run()
    spec = roofline_spec(at)
    assert len(spec["concat"]) == 2
    assert [p["title"] for p in spec["concat"]] == ["NVIDIA H100 SXM5 80GB", "AMD Instinct MI300X"]
    assert len(rows_of(spec, "kernels")) == 24
    at.sidebar.multiselect[0].set_value([]).run()
    assert at.info[0].value == "Select at least one device in the sidebar."


def test_add_a_device_by_uploading_catalog_yaml():
    at = goto(start(), "pages/hardware.py")
    raw = (DATA / "good_catalog.yaml").read_bytes()
    at.file_uploader(key="hw_upload_0").set_value(("acme.yaml", raw, "application/x-yaml")).run()
    assert not at.exception and not at.error
    assert at.success[0].value.startswith("Added Acme · X1 (acme-x1)")
    assert at.sidebar.multiselect[0].value == ["h100-sxm", "acme-x1"]
    assert at.sidebar.multiselect[0].options[0] == "Acme · X1 (acme-x1)"  # grouped by vendor, A first
    goto(at, "pages/overview.py")
    acme = roofcore.analyze(roofcore.read(BUNDLED_EXAMPLE), [load_bytes(raw, "acme.yaml")[0][0]]).summary("acme-x1")
    assert metrics(at)["Roofline time"][1] == fmt_time(acme["t_roof_s"])


def test_a_bad_catalog_upload_shows_the_loaders_message_verbatim():
    at = goto(start(), "pages/hardware.py")
    raw = (DATA / "bad_catalogs" / "wrong_unit.yaml").read_bytes()
    with pytest.raises(roofcore.CatalogError) as expected:
        load_bytes(raw, "wrong_unit.yaml")
    at.file_uploader(key="hw_upload_0").set_value(("wrong_unit.yaml", raw, "application/x-yaml")).run()
    assert said(at.error) == [str(expected.value)]  # verbatim: "$.devices[0]…" is not LaTeX
    assert at.error[0].value.startswith("wrong_unit.yaml: \\$.devices\\[0\\]")
    assert at.sidebar.multiselect[0].value == ["h100-sxm"]


def test_add_a_device_with_the_form():
    at = goto(start(), "pages/hardware.py")
    at.text_input(key="f_id").set_value("lab-gpu")
    at.text_input(key="f_name").set_value("Lab GPU")
    at.text_input(key="f_vendor").set_value("Lab")
    at.number_input(key="f_peak0").set_value(500.0)
    at.number_input(key="f_hbm").set_value(4.0)
    at.number_input(key="f_l2").set_value(10.0)
    at.text_input(key="f_link").set_value("nvlink")
    at.number_input(key="f_link_bw").set_value(400.0)
    at.button(key="f_submit").click().run()
    assert not at.exception and not at.error
    assert "lab-gpu" in at.sidebar.multiselect[0].value
    lab = at.session_state[state.CUSTOM.name]["lab-gpu"][0]
    assert lab.default.peak == 500e12 and lab.offchip.bandwidth == 4e12
    assert [lv.name for lv in lab.levels] == ["hbm", "l2"] and lab.link_map["nvlink"].bandwidth == 400e9
    goto(at, "pages/roofline.py")
    roofs = rows_of(roofline_spec(at), "roofs")
    assert {r["name"] for r in roofs if r["device_id"] == "lab-gpu"} == {"hbm", "l2", "nvlink", "bf16-matrix"}


def test_the_form_reports_a_clashing_id_by_its_field():
    at = goto(start(), "pages/hardware.py")
    at.text_input(key="f_id").set_value("h100-sxm")
    at.text_input(key="f_vendor").set_value("Me")
    at.number_input(key="f_peak0").set_value(500.0)
    at.number_input(key="f_hbm").set_value(4.0)
    at.button(key="f_submit").click().run()
    errors = said(at.error)
    assert errors == ["Id: 'h100-sxm' is a built-in device (catalogs/nvidia.yaml); pick another id, or tick \"Replace "
                      "a built-in device with the same id\""]
    assert "h100-sxm" not in at.session_state[state.CUSTOM.name]


# --------------------------------------------------------------------------------------------- profiler uploads


def test_profiler_upload_with_companion_detected_format_and_device_taken_from_the_file():
    data = Path(__file__).parent / "data" / "rocprof"
    at = upload(start(), ("pmc_perf.csv", (data / "pmc_perf_mi200.csv").read_bytes()),
                ("sysinfo.csv", (data / "sysinfo_mi200.csv").read_bytes()))
    assert not at.error
    assert "rocprof-compute" in " ".join(c.value for c in at.sidebar.caption)
    assert at.sidebar.multiselect(key="hw_ids").value == ["mi250x-gcd"]  # replaces the untouched default
    assert at.sidebar.info[0].value.startswith("**Device from the file:** AMD Instinct MI250X (one GCD) (`mi250x-gcd`)")
    goto(at, "pages/roofline.py")
    assert at.get("vega_lite_chart") and not at.exception


def test_format_override_reports_a_mismatch():
    at = upload(start(), ("kernels.csv", INVENTORY))
    at.sidebar.selectbox(key="format_override").select("ncu-details").run()
    assert at.error and at.error[0].value.startswith("kernels.csv")
    at.sidebar.selectbox(key="format_override").select("detect").run()
    assert not at.error


def test_a_100k_kernel_upload_charts_only_the_drawn_kernels(monkeypatch):
    """Issue #3: a 100,000-kernel upload on the Roofline page tabulates (Analysis.table) only the ≤ 5,000
    kernels the chart draws, builds no Altair object, and sends at most 5,000 kernel marks."""
    import numpy as np

    from roofcore import charts as rc_charts

    n = 100_000
    rng = np.random.default_rng(0)
    flops = rng.lognormal(20, 3, n).round() + 1
    body = "\n".join(f"k{i},{f:.0f},{f / b:.0f},{t:.3f}" for i, (f, b, t) in enumerate(
        zip(flops, rng.lognormal(2, 2, n), rng.lognormal(3, 2, n), strict=True)))
    csv = ("name,flops,bytes,time_us\n" + body + "\n").encode()
    at = goto(start(), "pages/roofline.py")
    rows_tabulated = watch_tabulation(monkeypatch, "the Roofline page")
    upload(at, ("large.csv", csv))
    assert not at.error, [e.value for e in at.error]
    assert rows_tabulated and max(rows_tabulated) <= rc_charts.MAX_MARKS
    spec = roofline_spec(at)
    assert spec["usermeta"]["roofcore"]["kernel_points"] == len(rows_of(spec, "kernels")) == rc_charts.MAX_MARKS
    assert sum(len(v) for v in spec["_data"].values()) < rc_charts.MAX_MARKS + 100  # marks plus a few roof rows
    assert any(f"the top 5,000 of {n:,} kernels" in c.value for c in at.caption), [c.value for c in at.caption]


# a kernel with a small launch above its roof on the H100 (3.35 MB at 3.35 TB/s is 1 µs; measured 0.5 µs) and a
# large one under it: combined, the kernel sits under its roof
HIDDEN = b"name,count,flops,bytes,time_us\nk,1,1e6,3.35e6,0.5\nk,1,1e9,3.35e9,2000\nother,1,1e9,1e9,1000\n"


def test_combining_never_hides_a_launch_above_its_roof():
    """A launch faster than its roofline (an input is wrong) stays in sight when repeated launches are combined:
    the Overview lists it among the flags, says combining hid it and how to see it; launches apart, the flag is
    the usual one."""
    cat = roofcore.load_catalogs()
    w = roofcore.read(HIDDEN, name="hidden.csv")
    hws = [cat.get("h100-sxm")]
    combined = roofcore.analyze(views.combine_launches(w), hws)
    assert "above-roof" not in combined.summary("h100-sxm")["flag_counts"]
    g = views.combined_away(roofcore.analyze(w, hws), combined, "h100-sxm")
    assert g is not None and g.combined_away and (g.code, g.count) == ("above-roof", 1)
    assert g.help.startswith("1 single launch(es) faster than the roofline allows") and g.examples[0][0] == "k"
    assert views.combined_away(roofcore.analyze(w, hws), roofcore.analyze(w, hws), "h100-sxm") is None

    at = goto(upload(start(), ("hidden.csv", HIDDEN)), "pages/overview.py")
    labels = [e.label for e in at.expander]
    assert any(lb.startswith("`above-roof` × 1 — 1 single launch(es) faster than the roofline allows") for lb in labels)
    at.sidebar.toggle(key="combine").set_value(False).run()
    labels = [e.label for e in at.expander]
    assert any(lb == f"`above-roof` × 1 — {views.FLAG_HELP['above-roof']}" for lb in labels), labels


@pytest.mark.parametrize("path", ["pages/kernels.py", "pages/roofline.py"])
def test_the_pages_of_combined_rows_say_a_launch_above_its_roof_is_inside_one(path):
    """The Kernels table and the roofline show the combined rows, where the launch above its roof has no flag:
    each says so above them, naming the device and the way to see it; launches apart, the flag is the row's."""
    at = goto(upload(start(), ("hidden.csv", HIDDEN)), path)
    said_ = [x for x in said(at.warning) if "single launch(es) faster than the roofline allows" in x]
    assert len(said_) == 1 and "(h100-sxm): 1 single launch(es)" in said_[0] and "Turn off Combine repeated" in said_[0]
    at.sidebar.toggle(key="combine").set_value(False).run()
    assert not [x for x in said(at.warning) if "single launch(es)" in x]


def test_the_overview_says_when_combining_keeps_a_kernel_in_two_rows():
    """Launches whose time is unknown are not summed with the kernel's timed ones (the sum would be a bound): the
    combined workload keeps two rows, and the Overview says so (the import notes show the file's own warnings)."""
    data = b"name,count,flops,bytes,time_us\nk,1,1e9,1e6,5\nk,1,1e9,1e6,\nk,1,1e9,1e6,7\n"
    at = goto(upload(start(), ("untimed.csv", data)), "pages/overview.py")
    assert any(x.startswith("Combining repeated launches: 1 kernel(s) keep more than one row") for x in said(at.info))
    assert "1 of 1 kernel has a measured time" in at.caption[0].value  # one kernel: "has"
    at.sidebar.toggle(key="combine").set_value(False).run()
    assert not any(x.startswith("Combining repeated launches") for x in said(at.info))
