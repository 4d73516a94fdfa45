"""Rooflines above the kernel in the app (issue 27): the Roofline page's level selector, the Kernels page's tree
table and the Recommendations' "where", under AppTest, on a small PyTorch trace of our own (tests/data/kineto/
levels_small.json: 6 profiler steps of a model of one layer, an attention and an MLP block, written by
benchmarks/bench_levels.make_trace)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_app import charts, goto, start, upload

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

TRACE = Path(__file__).parent / "data" / "kineto" / "levels_small.json"


def table(at, column: str, n: int = 0):
    """The ``n``-th table on the page with ``column``."""
    return [d.value for d in at.dataframe if column in d.value.columns][n]


@pytest.fixture(scope="module")
def at():
    return upload(start(), ("levels_small.json", TRACE.read_bytes()))


def test_roofline_level_selector_draws_groups_and_steps(at):
    goto(at, "pages/roofline.py")
    level = at.segmented_control(key="rl_level")
    assert level.options == ["kernel", "op", "module", "class", "step", "window"]
    level.set_value("module").run()
    assert not at.exception
    points = [r for c in charts(at) for rows in c["_data"].values() for r in rows if r.get("name") == "Layer_0"]
    assert points  # module:2 cuts every path to Model_0 › Layer_0
    assert at.select_slider(key="rl_depth").value == 2
    at.select_slider(key="rl_depth").set_value(3).run()
    rows = table(at, "Path")
    assert set(rows["Group"]) == {"Attention_0", "MLP_0"} and rows["Launches"].sum() == 42
    level.set_value("step").run()
    assert not at.exception
    rows = table(at, "Path")
    assert list(rows["Group"]) == [f"ProfilerStep#{i}" for i in range(6)]
    assert len(charts(at)) == 3  # the steps on the roofline, their trajectory, their rates over time
    level.set_value("kernel").run()
    assert not at.exception and at.get("vega_lite_chart")


def test_kernels_tree_and_recommendations_where(at):
    goto(at, "pages/kernels.py")
    tree = table(at, "Self time (ms)")
    assert list(tree["Group"].str.strip("\u2003"))[:2] == ["Model_0", "Layer_0"]
    assert tree["Launches"].iloc[0] == 42
    at.selectbox(key="k_tree_open").set_value("Model_0 › Layer_0 › MLP_0").run()
    ops = table(at, "Op")
    assert set(ops["Op"]) == {"aten::addmm", "aten::add"} and ops["Launches"].sum() == 18
    goto(at, "pages/recommendations.py")
    said = " ".join(c.value for c in at.caption)
    assert "Where: in Attention" in said or "Where: in MLP" in said


def test_report_page_has_the_by_module_section_while_launches_are_combined(at):
    """The sidebar combines repeated launches by default, which sums modules and steps away; the Report page's
    report still has its "By module and step" section, from the launch-by-launch analysis."""
    from app import state

    assert at.toggle(key=state.COMBINE.name).value  # launches combined, as the sidebar starts
    goto(at, "pages/report.py")
    assert not at.exception
    html = at.get("iframe")[0].proto.srcdoc
    assert "By module and step" in html and "MLP" in html


def test_a_rocprofv3_run_with_roctx_ranges_uploaded_together():
    """The CSVs of one rocprofv3 --sys-trace run uploaded together: the HIP API trace is a note, not an error (it
    places the kernels by their launch calls), the "ranges" level draws the roofs with a note where no range has a
    point (a kernel trace has no counters), and the Kernels page has the ranges' tree."""
    v3 = Path(__file__).parent / "data" / "rocprofv3"
    hip = ('"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
           '"HIP_RUNTIME_API","hipLaunchKernel",9,9,13,2500,2520\n').encode()
    at = upload(start(), *((p.name, p.read_bytes()) for p in (v3 / "9_kernel_trace.csv", v3 / "9_marker_api_trace.csv")),
                ("9_hip_api_trace.csv", hip))
    assert not at.error, [e.value for e in at.error]
    goto(at, "pages/roofline.py")
    level = at.segmented_control(key="rl_level")
    assert "nvtx" in level.options or "ranges" in level.options
    level.set_value("nvtx").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = " ".join(c.value for c in at.caption)
    assert "No range has a kernel with a known roofline" in said
    goto(at, "pages/kernels.py")
    tree = table(at, "Self time (ms)")
    assert list(tree["Group"].str.strip("\u2003")) == ["iteration", "attention", "outside"]  # mlp: no kernel left
    assert tree["Launches"].iloc[1] == 3  # up_proj_kernel, queued inside "attention" (its hipLaunchKernel), is attention's
