"""The Recommendations page under AppTest, and the roofline chart's ``highlight`` option it uses.

The cards must be the engine's :func:`roofcore.advise.advise` in its order, user text (kernel names) must be
escaped, and the chart must ring exactly the kernels of the recommendation picked.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import roofcore
from app.markdown import escape_markdown
from app.workload import BUNDLED_EXAMPLE, BUNDLED_NAME, DEFAULT_DEVICE
from roofcore import advise as adv
from roofcore import charts, views

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "streamlit_app.py")
PAGE = "pages/recommendations.py"
DATA = Path(__file__).resolve().parent / "data" / "advise"


pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def goto(at: AppTest) -> AppTest:
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def chart_rows(at: AppTest, role: str) -> list[dict]:
    (el,) = at.get("vega_lite_chart")
    spec = json.loads(el.proto.spec)
    data = {d.name: pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pylist() for d in el.proto.datasets}
    return [r for lay in spec["layer"] if lay.get("description") == role for r in data[lay["data"]["name"]]]


def engine_advice(workload: roofcore.Workload, hw_id: str = DEFAULT_DEVICE) -> adv.Advice:
    cat = roofcore.load_catalogs()
    return adv.advise(roofcore.analyze(views.combine_launches(workload), [cat.get(hw_id)]), hw_id)


def card_titles(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if re.match(r"\*\*\d+\. ", m.value)]


@pytest.fixture(scope="module")
def bundled() -> AppTest:
    return goto(start())


def test_cards_are_the_engines_advice_in_order(bundled):
    expected = engine_advice(roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME))
    assert bundled.title[0].value == "Recommendations"
    assert not bundled.error
    md = [m.value for m in bundled.markdown]
    assert f"**{escape_markdown(expected.summary())}**" in md
    shown = expected.items[:15]
    assert card_titles(bundled) == [f"**{i}. {escape_markdown(r.title)}**" for i, r in enumerate(shown, 1)]
    first = adv.cards(expected)[0]
    assert first.title == "Fuse attn_scores (QK^T) → softmax → attn_pv (PV)"
    assert f"**{escape_markdown(first.gain)}**" in md  # "8.01 ms (19.6% of the workload)"
    assert escape_markdown(first.reason) in md
    assert any(c.value == escape_markdown(first.meta) for c in bundled.caption)
    assert "Kernels: attn\\_scores \\(QK^T\\) · softmax · attn\\_pv \\(PV\\)" in md
    assert len(bundled.get("vega_lite_chart")) == 1  # one chart per device, not one per card


def test_the_chart_rings_the_picked_recommendations_kernels(bundled):
    expected = engine_advice(roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME))
    pick = bundled.selectbox(key="rec_pick_h100-sxm")
    assert pick.value == 0
    assert {r["name"] for r in chart_rows(bundled, "highlighted")} == set(expected.items[0].kernels)
    kernels = chart_rows(bundled, "kernels")
    assert len(kernels) == 12 and {r["name"] for r in kernels if r["hl"]} == set(expected.items[0].kernels)
    pick.set_value(1).run()
    assert not bundled.exception
    assert {r["name"] for r in chart_rows(bundled, "highlighted")} == set(expected.items[1].kernels) == {"ffn_up"}
    pick.set_value(0).run()


def test_no_device_selected_says_so():
    at = start()
    at.sidebar.multiselect[0].set_value([]).run()
    goto(at)
    assert [i.value for i in at.info] == ["Select at least one device in the sidebar."]
    assert not at.get("vega_lite_chart")


def test_uploaded_kernel_names_are_escaped_and_measured_advice_shown():
    at = start()
    data = (DATA / "measured_block.csv").read_bytes()
    at.sidebar.file_uploader[0].set_value([("measured_block.csv", data, "text/csv")]).run()
    goto(at)
    expected = engine_advice(roofcore.read(data, name="measured_block.csv"))
    assert expected.basis == "measured"
    md = [m.value for m in at.markdown]
    assert card_titles(at)[0] == ("**1. Fuse \\<b\\>bias\\_add\\</b\\> \\*not bold\\* … → \\`gelu\\` \\| table → "
                                  "layernorm**")
    assert not any("<b>" in m or "](http" in m for m in md)  # no live HTML or link from a kernel name
    assert ("Kernels: \\<…\\>bias\\_add\\<…\\> \\*not bold\\* \\[x\\] · \\`gelu\\` \\| table "  # short names
            "· layernorm") in md
    assert f"**{escape_markdown(expected.summary())}**" in md


def test_two_devices_get_a_section_each():
    at = start()
    at.sidebar.multiselect[0].set_value(["h100-sxm", "tpu-v5e"]).run()
    goto(at)
    assert [s.value for s in at.subheader][:2] == [views.device_label(roofcore.load_catalogs().get(h))
                                                   for h in ("h100-sxm", "tpu-v5e")]
    assert len(at.get("vega_lite_chart")) == 2


# --------------------------------------------------------------------------------------------- charts.roofline


@pytest.fixture(scope="module")
def example() -> roofcore.Analysis:
    cat = roofcore.load_catalogs()
    return roofcore.analyze(roofcore.read(BUNDLED_EXAMPLE), [cat.get("h100-sxm")])


def rows(fig: charts.RooflineFigure, role: str) -> list[dict]:
    spec = fig.to_dict()
    return [r for lay in spec["layer"] if lay.get("description") == role for r in spec["datasets"][lay["data"]["name"]]]


def layer(fig: charts.RooflineFigure, role: str) -> dict:
    return next(lay for lay in fig.to_dict()["layer"] if lay.get("description") == role)


def test_highlight_rings_the_named_kernels_and_fades_the_rest(example):
    fig = charts.roofline(example, highlight=["softmax", "gelu"])
    assert sorted(r["name"] for r in rows(fig, "highlighted")) == ["gelu", "softmax"]
    marks = rows(fig, "kernels")
    assert len(marks) == 12 and sorted(r["name"] for r in marks if r["hl"]) == ["gelu", "softmax"]
    opacity = layer(fig, "kernels")["encoding"]["opacity"]
    assert opacity["condition"] == {"test": "datum.hl", "value": 0.95}
    assert opacity["value"] == charts.HIGHLIGHT_FADE
    ring = layer(fig, "highlighted")
    assert ring["mark"]["filled"] is False and ring["mark"]["stroke"] == charts.HIGHLIGHT_COLOR
    assert "highlighted" not in fig.caption
    charts.to_svg(fig)  # renders offline


def test_without_highlight_the_chart_is_unchanged(example):
    fig = charts.roofline(example)
    assert not rows(fig, "highlighted") and "hl" not in rows(fig, "kernels")[0]
    assert "legend_pick" in json.dumps(layer(fig, "kernels")["encoding"]["opacity"])


def test_highlighted_names_that_are_not_drawn_are_reported(example):
    fig = charts.roofline(example, highlight=["not-a-kernel", "gelu"])
    assert [r["name"] for r in rows(fig, "highlighted")] == ["gelu"]
    assert fig.caption.startswith("1 highlighted kernel(s) not drawn (left out above, or not in this analysis).")
    fig = charts.roofline(example, highlight=[])
    assert not rows(fig, "highlighted") and not any(r["hl"] for r in rows(fig, "kernels"))
