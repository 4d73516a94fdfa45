"""The Planner's numbers as a reader reads them (issue 23, points 4-6): money never below the cent as a long
decimal but per as many runs as make it readable, no e-notation on any tab, the solver's figures from the selected
device, price inputs in the order they are laid out and named by device, and a fusion that needs a chain the user
picks and says why when its result cannot be computed. AppTest on the bundled example and small inventories of our
own; the Tab order itself is walked in a browser by tests/test_browser.py."""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_app import goto, start, upload

import roofcore
from app import state
from app.markdown import unescape_markdown
from app.workload import BUNDLED_EXAMPLE, BUNDLED_NAME
from roofcore import plan, views
from roofcore.units import fmt_cost, fmt_money, fmt_si
from roofcore.whatif import FUSE_MAX, fuse_problem

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

PLANNER = "pages/planner.py"
#: e-notation as a number prints it (1.97e+14, 3.4e-05), and a money amount with digits below the cent
E_NOTATION = re.compile(r"\d[eE][+-]?\d")
SUB_CENT = re.compile(r"\$\d*\.\d{3,}")
#: three kernels, the middle one without a FLOP count
GAP = b"name,flops,bytes,time_us\nk_load,1e9,4e8,50\nk_mystery,,2e8,40\nk_store,2e9,4e8,60\n"
#: a timeline only: times and bytes, no FLOPs at all
NO_FLOPS = b"name,flops,bytes,time_us\nk_a,,4e8,50\nk_b,,2e8,40\n"


@pytest.fixture(scope="module")
def cat() -> roofcore.Catalog:
    return roofcore.load_catalogs()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


#: a column only each table has
COLUMN = {"plan_projection": "Cross-vendor", "wi_totals": "Variant Σ t_roof"}


def tables(at: AppTest, key: str) -> list:
    return [d.value for d in at.dataframe if COLUMN[key] in d.value.columns]


def table(at: AppTest, key: str):
    return tables(at, key)[0]


# ------------------------------------------------------------------------------------------------ money


@pytest.mark.parametrize(("per_run", "text"), [
    (2.9e-7, "$0.29 per million runs"), (3.4e-5, "$34.00 per million runs"), (0.00356, "$3.56 per 1,000 runs"),
    (0.36, "$0.36 per run"), (12.345, "$12.35 per run"), (4.2e-10, "$0.42 per billion runs"), (0.0, "$0 per run"),
    (None, "–"), (float("nan"), "–")])
def test_a_cost_is_said_per_as_many_runs_as_make_it_readable(per_run, text):
    assert fmt_cost(per_run) == text


@pytest.mark.parametrize("per_run", [3.557e-6, 2.9e-7, 1e-12, 0.0049, 0.0123456, 0.999, 123.456])
def test_money_is_never_below_the_cent_nor_in_e_notation(per_run):
    for text in (fmt_money(per_run), fmt_cost(per_run), fmt_cost(per_run, 1), fmt_cost(per_run, at_least=1000)):
        assert not SUB_CENT.search(text) and not E_NOTATION.search(text), text
    assert fmt_money(per_run) == ("< $0.01" if per_run < 0.005 else fmt_money(per_run))


def test_the_readable_scale_starts_at_a_thousand_beside_a_per_run_column():
    assert fmt_cost(0.36, at_least=1000) == "$360 per 1,000 runs"
    assert fmt_cost(2.9e-7, at_least=1000) == "$0.29 per million runs"


# ------------------------------------------------------------------------------------------------ no e-notation


def page_texts(at: AppTest) -> list[str]:
    """Every text the Planner shows: markdown, captions, metrics, alerts, inputs' values and the string cells of
    every table."""
    texts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success")
             for e in at.get(kind)]
    texts += [f"{m.label} {m.value}" for m in at.metric]
    texts += [str(t.value) for t in at.text_input]
    for d in at.dataframe:
        df = d.value
        texts += [str(v) for c in df.columns if not pd.api.types.is_numeric_dtype(df[c]) for v in df[c]]
    return texts


def test_no_e_notation_and_no_sub_cent_money_anywhere_in_the_planner(cat):
    at = goto(start(), PLANNER)
    at.multiselect(key="plan_targets").set_value(["mi300x", "tpu-v5e"]).run()
    for hid, price in (("h100-sxm", 3.0), ("mi300x", 2.5), ("tpu-v5e", 1.2)):
        at.number_input(key=f"plan_price_{hid}").set_value(price).run()
    ok(at)
    texts = page_texts(at)
    assert any("per million runs" in t for t in texts)  # the tables' cells are in
    assert [t for t in texts if E_NOTATION.search(t) or SUB_CENT.search(t)] == []
    # number inputs print as typed: none in e-notation (the solver's rates are text with SI units)
    assert [n.label for n in at.number_input if "e" in (n.proto.format or "")] == []
    costs = table(at, "plan_projection")
    p = plan.project(roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME), None,
                     [cat.get(h) for h in ("h100-sxm", "mi300x", "tpu-v5e")],
                     price_per_hour={"h100-sxm": 3.0, "mi300x": 2.5, "tpu-v5e": 1.2})
    assert costs["Cost at scale"].tolist() == [fmt_cost(t.cost_per_run, at_least=1000) for t in p.totals]
    assert all(c.endswith("per million runs") for c in costs["Cost at scale"])  # $0.00003 a run: per million
    assert costs["Cost per run"].tolist() == ["< $0.01"] * 3


# ------------------------------------------------------------------------------------------------ solver defaults


def test_solver_defaults_are_the_selected_devices(cat):
    at = goto(start(), PLANNER)
    at.sidebar.multiselect(key="hw_ids").set_value(["tpu-v5e", "mi300x"]).run()
    ok(at)
    assert at.text_input(key="sv_flops").value == "197 TFLOP/s"  # TPU v5e's bf16 peak and its ICI
    assert at.text_input(key="sv_link").value == fmt_si(plan.shard_defaults(cat.get("tpu-v5e"))[1], "B/s", 6)
    at.selectbox(key="sv_hw").set_value("mi300x").run()
    flops, link, name = plan.shard_defaults(cat.get("mi300x"))
    assert name and flops == cat.get("mi300x").resolve_ceiling("bf16", "matrix").peak
    assert at.text_input(key="sv_flops").value == fmt_si(flops, "FLOP/s", 6) == "1.3074 PFLOP/s"
    assert at.text_input(key="sv_link").value == fmt_si(link, "B/s", 6)
    shown = [m.value for m in at.metric if m.label.startswith("Compute-bound from D")]
    assert shown == [f"{plan.shard_crossover(flops, link, 128, 8192):,.0f}"]
    at.text_input(key="sv_flops").set_value("197 TFLOP/s").run()  # a figure typed by hand is read with its unit
    at.text_input(key="sv_link").set_value("45 GB/s").run()
    assert [m.value for m in at.metric if m.label.startswith("Compute-bound from D")] == ["8,756"]


def test_a_device_without_a_link_is_asked_for_one_not_shown_an_error(cat):
    """MI300A publishes no link: the solver says so and waits for one typed by hand; nothing the user did is wrong,
    so no error shows (the walk over every sample on every page fails on any error)."""
    assert plan.shard_defaults(cat.get("mi300a"))[1] is None
    at = goto(start(), PLANNER)
    at.sidebar.multiselect(key="hw_ids").set_value(["mi300a"]).run()
    assert not at.error, [e.value for e in at.error]
    assert at.text_input(key="sv_link").value == ""
    assert any("publishes no link" in i.value for i in at.info)
    assert not [m for m in at.metric if m.label.startswith("Compute-bound from D")]
    at.text_input(key="sv_link").set_value("45 GB/s").run()
    assert not at.error and [m for m in at.metric if m.label.startswith("Compute-bound from D")]


# ------------------------------------------------------------------------------------------------ price inputs


def test_price_inputs_follow_the_layout_and_name_their_device(cat):
    at = goto(start(), PLANNER)
    extra = ["mi300x", "tpu-v5e", "a100-80gb-sxm", "mi250x", "l4"]
    at.multiselect(key="plan_targets").set_value(extra).run()
    ok(at)
    targets = ["h100-sxm", *extra]
    prices = [n for n in at.number_input if n.key and n.key.startswith("plan_price_")]
    assert [n.key for n in prices] == [f"plan_price_{h}" for h in targets]  # row by row, as laid out
    assert [n.label for n in prices] == [f"{views.device_label(cat.get(h))}: $/hour" for h in targets]


# ------------------------------------------------------------------------------------------------ fusion


def test_the_fusion_picker_offers_no_select_all_and_bounds_the_chain():
    at = goto(start(), PLANNER)
    what_if = at.tabs[1]
    assert [m.key for m in what_if.multiselect if m.proto.select_all] == []
    assert at.selectbox(key="wi_fuse_last").disabled  # a chain starts at a launch the user picks
    at.selectbox(key="wi_fuse_first").set_value(0).run()
    assert "Pick the chain's last launch" in " ".join(c.value for c in at.caption)
    assert at.session_state[state.FUSE_LAST.name] is None and len(at.selectbox(key="wi_fuse_last").options) <= FUSE_MAX - 1


def test_a_chain_through_a_launch_without_flops_says_which_instead_of_a_dash():
    at = goto(upload(start(), ("gap.csv", GAP)), PLANNER)
    at.selectbox(key="wi_fuse_first").set_value(0).run()
    at.selectbox(key="wi_fuse_last").set_value(2).run()
    ok(at)
    said = unescape_markdown(" ".join(w.value for w in at.warning))
    assert "1: k_mystery has no FLOP count" in said and "cannot be computed" in said
    assert tables(at, "wi_totals") == []  # no totals with a hole in them
    at.selectbox(key="wi_fuse_first").set_value(1).run()  # k_mystery alone cannot start a known chain either
    at.selectbox(key="wi_fuse_last").set_value(2).run()
    assert "1: k_mystery has no FLOP count" in unescape_markdown(" ".join(w.value for w in at.warning))


def test_totals_that_cannot_be_computed_say_why():
    at = goto(upload(start(), ("no_flops.csv", NO_FLOPS)), PLANNER)
    at.number_input(key="wi_batch").set_value(2.0).run()
    ok(at)
    totals = table(at, "wi_totals")
    cells = [str(v) for c in totals.columns for v in totals[c]]
    assert "–" not in cells
    assert totals["Base Σ t_roof"].tolist() == ["unknown: 2 of 2 kernels lack FLOPs"]
    assert totals["Speedup per unit"].tolist() == ["unknown: 2 of 2 kernels lack FLOPs"]


def test_fuse_problem_names_what_is_wrong_with_a_chain(cat):
    w = roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME)
    assert fuse_problem(w, [8, 9]) is None
    assert "pick its first and its last" in fuse_problem(w, [3])
    assert "consecutive" in fuse_problem(w, [2, 4]) and "3: softmax" in fuse_problem(w, [2, 4])
    f = w.frame.copy()
    f.loc[5, plan.HBM] = float("nan")
    holed = dataclasses.replace(w, frame=f)
    assert "5: out_proj has no off-chip byte count" in fuse_problem(holed, [4, 5, 6])
    long = dataclasses.replace(w, frame=pd.concat([w.frame] * 3, ignore_index=True))  # 36 launches
    assert f"at most {FUSE_MAX}" in fuse_problem(long, range(0, FUSE_MAX + 1))
