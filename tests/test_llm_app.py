"""The Planner's "LLM serving" tab under AppTest, and its tables and charts (app.llm_views) without Streamlit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from roofhelpers import unformatted_numbers
from streamlit.testing.v1 import AppTest

import roofcore
from app import llm_views
from roofcore.llm import Calibration, Shape, load_model, plan, quant

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "streamlit_app.py")

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def _table(at: AppTest):
    return next(d.value for d in at.dataframe if "TPOT first (ms)" in d.value.columns)


def test_tab_plans_the_chosen_model_and_devices():
    at = ok(AppTest.from_file(APP, default_timeout=60).run())
    at = ok(at.switch_page("pages/planner.py").run())
    tab = next(t for t in at.tabs if t.label == "LLM serving")
    assert tab.selectbox(key="llm_model").value == "llama-2-7b"
    first = _table(at)
    assert len(first) >= 1 and (first["TTFT (ms)"] > 0).all()
    shown = json.loads(next(d for d in at.dataframe if "TPOT first (ms)" in d.value.columns).proto.columns)
    formats = {k: v["type_config"]["format"] for k, v in shown.items() if "type_config" in v}  # not 1066.1149 tok/s
    assert formats["tok/s"] == "%.0f" and formats["TTFT (ms)"] == "%.1f" and formats["memory/GPU (GB)"] == "%.1f"
    assert set(formats) >= {c for c in first.columns if first[c].dtype.kind == "f"}  # every float column has one
    # a missing value is a dash, as on every table of the app (the calibration's launches showed "None")
    assert {d.proto.placeholder for d in at.dataframe} == {"–"}
    at.selectbox(key="llm_model").set_value("llama-2-70b")
    at.selectbox(key="llm_tp").set_value(4)
    at.multiselect(key="llm_devices").set_value(["h100-sxm", "a100-80gb-sxm"])
    at.number_input(key="llm_price_h100-sxm").set_value(3.0)
    ok(at.run())
    t = _table(at)
    assert list(t["device"]) == ["h100-sxm", "a100-80gb-sxm"] and (t["GPUs"] == 4).all()
    assert t["$/M tok"].iloc[0] > 0 and "unknown" in t["cost"].iloc[1]
    assert (t["all-reduce/step (ms)"] > 0).all()
    titles = [json.loads(c.proto.spec).get("title") for c in at.get("vega_lite_chart")]
    titles = [t if isinstance(t, str) else str(t) for t in titles]
    # a roofline per device (the batch sweep), latency against throughput, memory
    assert sum("batch sweep" in t for t in titles) == 2
    assert any("Latency against throughput" in t for t in titles) and any("Memory per GPU" in t for t in titles)
    # an engine that reads the 70B's grouped K/V once per query head decodes slower, and the plan says why
    at.selectbox(key="llm_kv_reads").set_value("per_query_head")
    ok(at.run())
    slow = _table(at)
    assert (slow["TPOT first (ms)"].to_numpy() > t["TPOT first (ms)"].to_numpy()).all()
    assert any("once per query head" in c.value for c in at.caption)
    at.selectbox(key="llm_kv_reads").set_value("grouped")
    # serving at a rate: a small model on one device keeps the simulation short
    at.selectbox(key="llm_model").set_value("llama-3.1-8b")
    at.selectbox(key="llm_tp").set_value(1)
    at.multiselect(key="llm_devices").set_value(["h100-sxm"])
    at.toggle(key="llm_serve").set_value(True)
    ok(at.run())
    served = next(d.value for d in at.dataframe if "TTFT p99 (ms)" in d.value.columns)
    assert list(served["device"]) == ["h100-sxm"] and (served["TTFT p99 (ms)"] > 0).all()
    options = next(d.value for d in at.dataframe if "why not" in d.value.columns)
    assert set(options["TP"]) == {1, 2, 4, 8} and options["meets"].iloc[0] == "yes"
    assert options["$/M tok"].iloc[0] > 0  # the H100's price is still given
    assert not unformatted_numbers(at)  # every float column of every table of the tab (no 0.9634 "within targets")


def test_views_from_a_plan():
    cat = roofcore.load_catalogs()
    m, q, s = load_model("llama-2-7b"), quant("fp16"), Shape(batch=8, input_len=512, output_len=64)
    hws = [cat.get("h100-sxm")]
    p = plan(m, q, hws, s)
    sw = llm_views.sweep(m, q, hws[0], s, Calibration(), max_batch=16)
    assert list(sw["batch"]) == [1, 2, 4, 8, 16]
    spec = llm_views.sweep_roofline(sw, q, hws[0], m.name)
    path = spec["layer"][-1]["data"]["values"]
    assert len(path) == 10 and {r["phase"] for r in path} == {"prefill", "decode"}
    # the decode trajectory moves right (intensity grows with the batch)
    dec = [r["x"] for r in path if r["phase"] == "decode"]
    assert dec == sorted(dec)
    mem = llm_views.memory_spec(p)["layer"][0]["data"]["values"]
    assert {r["part"] for r in mem} == set(llm_views.MEMORY_PARTS)
    assert llm_views.plan_frame(p)["fits"].iloc[0] == "yes"
