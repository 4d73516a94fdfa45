"""The Planner and Compare pages under AppTest: every tab runs on the bundled example, and the numbers shown are
:mod:`roofcore.plan`'s (projection, what-if fusion, crossover table, scenarios, comparison)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

import roofcore
from app import state
from app.planner import BUILDER_DEFAULTS, scenario_base
from app.workload import BUNDLED_EXAMPLE, BUNDLED_NAME
from roofcore import plan, views
from roofcore.units import fmt_money, fmt_time
from roofcore.whatif import apply_steps, scenario_yaml

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "streamlit_app.py")
PLANNER, COMPARE = "pages/planner.py", "pages/compare.py"
SCENARIOS = ROOT / "examples" / "scenarios"


pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def goto(at: AppTest, page: str) -> AppTest:
    return ok(at.switch_page(page).run())


def planner() -> AppTest:
    return goto(ok(AppTest.from_file(APP, default_timeout=60).run()), PLANNER)


@pytest.fixture(scope="module")
def cat() -> roofcore.Catalog:
    return roofcore.load_catalogs()


@pytest.fixture(scope="module")
def bundled() -> roofcore.Workload:
    return roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME)


#: a column only each page table has
TABLES = {"plan_projection": "Cross-vendor", "wi_totals": "Variant Σ t_roof", "sv_table": "batch_int8_weights",
          "sc_table": "vs base", "cmp_table": "Bound before"}


def frame(at: AppTest, key: str):
    return next(d.value for d in at.dataframe if TABLES[key] in d.value.columns)


def has_arrows(at: AppTest) -> bool:
    """A roofline_compare chart (with its arrows layer) is on the page."""
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    return any(lay.get("description") == "compare_arrows" for sp in specs for lay in sp.get("layer", []))


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def test_every_tab_runs_and_projection_is_the_engines(cat, bundled):
    at = planner()
    assert at.title[0].value == "Planner"
    assert [t.label for t in at.tabs] == ["Project", "What-if", "Build", "Solvers", "Scenario", "LLM serving"]
    assert not errors(at)
    at.multiselect(key="plan_targets").set_value(["mi300x", "tpu-v5e"]).run()
    at.number_input(key="plan_price_mi300x").set_value(2.5).run()
    ok(at)
    p = plan.project(bundled, None, [cat.get(h) for h in ("h100-sxm", "mi300x", "tpu-v5e")],
                     price_per_hour={"mi300x": 2.5})
    shown = frame(at, "plan_projection")
    assert shown["Device"].tolist() == ["h100-sxm", "mi300x", "tpu-v5e"]
    assert shown["Σ t_roof"].tolist() == [fmt_time(t.t_roof_s) for t in p.totals]
    assert shown["Estimate"].tolist() == [fmt_time(t.estimate_s) for t in p.totals]
    assert shown["Speedup"].tolist() == [f"{t.speedup:.2f}×" for t in p.totals]
    assert shown["Cost per run"].tolist() == ["–", fmt_money(p.total("mi300x").cost_per_run), "–"]
    assert any("Across vendors" in c.value for c in at.caption)
    # the bundled example has no measured time: its estimate is its rooflines, and the caption says that
    assert any("Estimate: each kernel's roofline time." in c.value for c in at.caption)
    assert not any("projected time" in c.value for c in at.caption)


def test_fusing_two_kernels_changes_the_variant_total_as_plan_fuse_says(cat, bundled):
    at = planner()
    names = bundled.frame["name"].tolist()
    at.selectbox(key="wi_fuse_first").set_value(names.index("ffn_up")).run()
    at.selectbox(key="wi_fuse_last").set_value(names.index("gelu")).run()
    ok(at)
    assert not errors(at)
    hw = cat.get("h100-sxm")
    expected = plan.evaluate(plan.fuse(bundled, ["ffn_up", "gelu"]), hw).summary("h100-sxm")["t_roof_s"]
    base = plan.evaluate(bundled, hw).summary("h100-sxm")["t_roof_s"]
    totals = frame(at, "wi_totals")
    assert totals["Variant Σ t_roof"].tolist() == [fmt_time(expected)] != [fmt_time(base)]
    assert totals["Base Σ t_roof"].tolist() == [fmt_time(base)]
    assert len(at.session_state[state.WHATIF_VARIANT.name]) == len(bundled) - 1
    assert has_arrows(at)
    # a bad shard link is the engine's error, shown, and the page keeps working
    at.number_input(key="wi_chips").set_value(2).run()
    at.text_input(key="wi_link").set_value("hbm").run()
    ok(at)
    assert any("link" in e for e in errors(at))


def test_builder_button_replaces_the_workload(cat):
    at = planner()
    at.button(key="b_use").click().run()
    ok(at)
    entry = at.session_state[state.WORKLOAD.name]
    assert entry["key"].startswith("builder:transformer:") and entry["builder"] == "transformer"
    at = goto(at, "pages/overview.py")
    roof = [m.value for m in at.metric if m.label == "Roofline time"]
    built = BUILDER_DEFAULTS["transformer"]
    w = roofcore.builders.build_workload("transformer", built)
    expected = plan.evaluate(w, cat.get("h100-sxm")).summary("h100-sxm")["t_roof_s"]
    assert roof == [fmt_time(expected)] != ["40.5 ms"]


def test_solver_table_is_crossover_table(cat):
    at = planner()
    at.sidebar.multiselect(key="hw_ids").set_value(["h100-sxm", "tpu-v5e"]).run()
    ok(at)
    expected = plan.crossover_table([cat.get("h100-sxm"), cat.get("tpu-v5e")])
    shown = frame(at, "sv_table")
    assert shown.columns.tolist() == expected.columns.tolist()
    for col in expected.columns:
        if col == "hardware":
            assert shown[col].tolist() == expected[col].tolist()
        else:
            assert shown[col].tolist() == pytest.approx(expected[col].tolist(), nan_ok=True)
    flops, link, _ = plan.shard_defaults(cat.get("h100-sxm"))  # the first selected device's bf16 rate and NVLink
    assert [m.value for m in at.metric if m.label.startswith("Compute-bound from D")] == [
        f"{plan.shard_crossover(flops, link, 128, 8192):,.0f}"]
    bm, bn = plan.tile_for_intensity(300.0, multiple=16)
    assert [m.value for m in at.metric if m.label.startswith("Smallest tile")] == [f"{bm:,} × {bn:,}"]


def upload_scenario(at: AppTest, name: str, data: bytes) -> AppTest:
    return ok(at.file_uploader(key="sc_upload").set_value((name, data, "application/x-yaml")).run())


def test_an_uploaded_example_scenario_shows_its_variants(cat):
    at = planner()
    path = SCENARIOS / "sharded_matmul.yaml"
    at = upload_scenario(at, path.name, path.read_bytes())
    assert not errors(at)
    result = plan.run_scenario(path, cat, allow_files=False)
    shown = frame(at, "sc_table")
    assert shown.equals(views.scenario_frame(result))
    assert set(shown["Variant"]) == {v.name for v in result.variants}


def test_an_uploaded_scenario_may_not_read_server_files():
    at = planner()
    doc = {"name": "sneaky", "base": {"file": "/etc/passwd"}, "hardware": ["h100-sxm"], "steps": []}
    at = upload_scenario(at, "sneaky.yaml", yaml.safe_dump(doc).encode())
    assert any("files cannot be named by an uploaded scenario" in e for e in errors(at)), errors(at)
    assert not [d for d in at.dataframe if "vs base" in d.value.columns]


def test_whatif_steps_download_as_a_scenario_that_reproduces_the_variant(cat, bundled):
    entry = {"workload": bundled}
    base, _ = scenario_base(entry)
    steps = [{"name": "fuse", "fuse": {"kernels": ["ffn_up", "gelu"]}}, {"name": "fp8", "precision": {"dtype": "fp8"}}]
    text = scenario_yaml("x", base, ["h100-sxm"], steps)
    result = plan.run_scenario(yaml.safe_load(text), cat, allow_files=False)
    variant = apply_steps(bundled, steps)
    hw = cat.get("h100-sxm")
    assert result.variants[0].projection.totals[0].t_roof_s == pytest.approx(
        plan.evaluate(bundled, hw).summary("h100-sxm")["t_roof_s"])
    assert result.variants[-1].projection.totals[0].t_roof_s == pytest.approx(
        plan.evaluate(variant, hw).summary("h100-sxm")["t_roof_s"])


#: two launches of one kernel, 1 MB of weights in each one's 2 MB (issue 16: 131 MB after batch ×64, not 4.35 GB)
REPEATS = b"name,count,flops,bytes,weight_bytes,time_ms,precision\nk,1,1e9,2e6,1e6,1.0,bf16\nk,1,1e9,2e6,1e6,1.0,bf16\n"


@pytest.mark.parametrize("combine", [True, False])
def test_the_planner_plans_on_the_workload_as_loaded(cat, combine):
    """Combining repeated launches is for display: the What-if variant is the loaded rows transformed (one per
    launch), its bytes keep the weights fixed under a batch step, and its total is plan's on the raw workload."""
    at = ok(AppTest.from_file(APP, default_timeout=60).run())
    at.sidebar.file_uploader[0].set_value([("repeats.csv", REPEATS, "text/csv")]).run()
    at.sidebar.toggle(key=state.COMBINE.name).set_value(combine).run()
    at = goto(ok(at), PLANNER)
    at.number_input(key="wi_batch").set_value(64.0).run()
    ok(at)
    assert not errors(at)
    raw = roofcore.read(REPEATS, name="repeats.csv")
    variant = at.session_state[state.WHATIF_VARIANT.name]
    assert len(variant) == len(raw) == 2
    assert variant.frame["bytes_hbm"].sum() == pytest.approx(2 * (1e6 + 64 * 1e6))  # 130 MB: weights read once
    hw = cat.get("h100-sxm")
    expected = plan.evaluate(plan.scale_batch(raw, 64.0), hw).summary("h100-sxm")["t_roof_s"]
    assert frame(at, "wi_totals")["Variant Σ t_roof"].tolist() == [fmt_time(expected)]


BEFORE = b"name,count,flops,bytes,time_ms,precision\ngemm,1,8e12,2e9,20.0,bf16\nsoftmax,1,2e10,1.6e10,8.0,bf16\n"
AFTER = b"name,count,flops,bytes,time_ms,precision\ngemm,1,8e12,2e9,10.0,bf16\nsoftmax,1,2e10,8e9,5.0,bf16\nnew_op,1,1e9,1e8,1.0,bf16\n"


def test_compare_two_csv_uploads_shows_the_speedup_and_the_chart():
    at = goto(ok(AppTest.from_file(APP, default_timeout=60).run()), COMPARE)
    assert at.title[0].value == "Compare"
    at.file_uploader(key="cmp_before").set_value(("before.csv", BEFORE, "text/csv")).run()
    at.file_uploader(key="cmp_after").set_value(("after.csv", AFTER, "text/csv")).run()
    ok(at)
    assert not errors(at)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Before"] == fmt_time(0.028) and shown["After"] == fmt_time(0.016)
    assert shown["Speedup"] == f"{28 / 16:.2f}×"
    table = frame(at, "cmp_table")
    assert dict(zip(table["Kernel"], table["Speedup"], strict=True)) == {"gemm": "2.00×", "softmax": "1.60×"}
    assert "**Only before** (0)" in [m.value for m in at.markdown] and "**Only after** (1)" in [
        m.value for m in at.markdown]
    only = [d.value for d in at.dataframe if "Share" in d.value.columns]  # only before, only after
    assert [list(f["Kernel"]) for f in only] == [[], ["new_op"]]
    assert has_arrows(at)


def test_compare_against_the_current_workload_and_a_bad_upload():
    at = goto(ok(AppTest.from_file(APP, default_timeout=60).run()), COMPARE)
    at.toggle(key="cmp_current").set_value(True).run()
    at.file_uploader(key="cmp_after").set_value(("broken.csv", b"nothing,useful\n1,2\n", "text/csv")).run()
    ok(at)
    assert errors(at)
    at.file_uploader(key="cmp_after").set_value(("after.csv", AFTER, "text/csv")).run()
    ok(at)
    assert not errors(at)
    assert {m.label: m.value for m in at.metric}["Matched kernels"] == "1"  # softmax


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_scenario_runs_when_uploaded_or_names_its_file(path):
    at = upload_scenario(planner(), path.name, path.read_bytes())
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "file" in doc["base"]:  # a file base runs from the CLI only
        assert any("files cannot be named" in e for e in errors(at)), errors(at)
    else:
        assert not errors(at)
        assert set(frame(at, "sc_table")["Variant"]) == {"base", *(s["name"] for s in doc["steps"])}
