"""One writer per contract (issue 25 point 2): the analysis JSON is written by one function, the per-kernel derived
values are computed once on the analysis, and slicing an analysis never runs the engine again.

The scans read the source (roofcore/, app/, pages/) as syntax trees: a second module building the analysis
document or its kernel records, a new "has a measured time" test on a frame, or a new ``analyze(...)`` call in the
charts or views fails here with the place to fix.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from roofhelpers import make_hw, workload_of

import roofcore
from roofcore.charts import points
from roofcore.models import Kernel
from roofcore.output import KERNEL_KEYS, analysis_document, analysis_json
from roofcore.views import kernels as kernel_views

ROOT = Path(__file__).resolve().parent.parent
analyze_module = importlib.import_module("roofcore.analyze")  # the package's name ``analyze`` is the function
#: the one module that writes the analysis JSON (its document and its kernel records)
WRITER = "roofcore/output/json_out.py"
#: the keys of a kernel record no other dict has: a dict literal with several of them builds kernel records
RECORD_KEYS = frozenset(KERNEL_KEYS) - {"name", "hardware", "group", "count", "precision", "unit", "ceiling",
                                        "flops", "bytes", "time_s", "source", "row", "flags", "bound"}
#: ``analyze(...)`` calls in the charts and views, each on a workload of its own (not rows of an analysis)
ANALYZE_CALLS = {
    "roofcore/charts/levels.py": 1,  # the groups of a level as a workload of their own (one point per group)
}
#: "has a measured time" computed on a frame other than an analysis's (which reads ``Analysis.timed``)
TIMED_ELSEWHERE = {
    "roofcore/analyze.py": 1,  # Analysis.timed itself
    "roofcore/communication.py": 1,  # below the analysis (reads a frame): collectives' measured time
    "pages/history.py": 1,  # a stored run's kernels (a history frame, no analysis)
    "pages/planner.py": 1,  # the planner's base workload (it plans on the workload, not an analysis)
}
TIMED = re.compile(r'isnan\(t\)\s*&\s*\(t > 0\)|\(t > 0\)\s*&\s*~np\.isnan\(t\)|time_s"\]\.(gt\(0\)|notna\(\))')


def sources() -> list[tuple[str, str]]:
    files = [*sorted((ROOT / "roofcore").rglob("*.py")), *sorted((ROOT / "app").rglob("*.py")),
             *sorted((ROOT / "pages").rglob("*.py"))]
    return [(f.relative_to(ROOT).as_posix(), f.read_text(encoding="utf-8")) for f in files]


def _keys(node: ast.Dict) -> set[str]:
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def test_one_module_builds_the_analysis_document_and_its_kernel_records():
    found = []
    for path, text in sources():
        if path == WRITER:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Dict):
                keys = _keys(node)
                if len(keys & RECORD_KEYS) >= 4:
                    found.append(f"{path}:{node.lineno}: a kernel record ({sorted(keys & RECORD_KEYS)})")
                if {"kernels", "summary"} <= keys:
                    value = node.values[[k.value if isinstance(k, ast.Constant) else None
                                         for k in node.keys].index("kernels")]
                    if not isinstance(value, ast.Subscript):  # read from analysis_document(): allowed
                        found.append(f"{path}:{node.lineno}: an analysis document (kernels and summary)")
            elif isinstance(node, ast.Assign):  # doc["kernels"] = ...
                for target in node.targets:
                    if (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
                            and target.slice.value == "kernels" and "summary" in text):
                        found.append(f"{path}:{node.lineno}: kernels set on a document")
    assert not found, ("the analysis JSON has one writer (roofcore.output.analysis_json_chunks; as a dict: "
                       "analysis_document); these build it again:\n" + "\n".join(found))


def test_the_writer_is_what_every_producer_calls():
    """The command line, the Report page's download and the planner reach the document through the writer."""
    calls = {path for path, text in sources() if re.search(r"\banalysis_(json|json_chunks|document)\b", text)}
    assert {"roofcore/cli/analysis.py", "roofcore/cli/commands.py", "pages/report.py", "pages/planner.py"} <= calls
    assert not [path for path, text in sources() if re.search(r"\.to_json\(\s*kernels\s*=", text)]


def test_timed_is_computed_once():
    counts: dict[str, int] = {}
    for path, text in sources():
        n = len(TIMED.findall(text))
        if n:
            counts[path] = n
    assert counts == TIMED_ELSEWHERE, ("'has a measured time' is Analysis.timed (time > 0); read it rather than "
                                       f"testing the frame again: {counts}")


def test_the_charts_and_views_never_run_the_engine_on_rows_of_an_analysis():
    counts: dict[str, int] = {}
    for path, text in sources():
        if not path.startswith(("roofcore/charts/", "roofcore/views/")):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name in ("analyze", "evaluate"):
                    counts[path] = counts.get(path, 0) + 1
    assert counts == ANALYZE_CALLS, ("rows of an analysis are Analysis.take(rows): nothing is evaluated again; "
                                     f"analyze()/evaluate() calls found: {counts}")


# ------------------------------------------------------------------------------------------------ behaviour


def _analysis() -> roofcore.Analysis:
    hw = make_hw(100e12, 2e12)
    kernels = [Kernel(f"k{i}", 1e9 * (i + 1), {"hbm": 1e6 * (10 - i)}, time_s=1e-3 * (i % 4),
                      count=i + 1) for i in range(10)]
    kernels.append(Kernel("no time", 1e9, {"hbm": 1e6}))
    kernels.append(Kernel("no flops", float("nan"), {"hbm": 1e6}, time_s=2e-3))
    return roofcore.analyze(workload_of(*kernels), [hw, roofcore.load_catalogs().get("h100-sxm")])


def test_slicing_takes_rows_and_runs_nothing(monkeypatch):
    a = _analysis()
    rows = [7, 2, 11, 0]
    fresh = roofcore.analyze(a.take(rows).workload, a.hardware)  # the engine run on just those kernels

    def boom(*args, **kwargs):
        raise AssertionError("the engine ran again")

    monkeypatch.setattr(analyze_module, "evaluate", boom)
    monkeypatch.setattr(analyze_module, "analyze", boom)
    monkeypatch.setattr(roofcore, "analyze", boom)
    sub = a.take(rows)
    for h in a.hardware:
        pd.testing.assert_frame_equal(sub.table(h.id), fresh.table(h.id))
        assert sub.summary(h.id) == fresh.summary(h.id)
    got, capped, idx = points.selected(a, [a.hardware[1].id], top_n=3)
    assert not capped and len(got.workload) == 3 and [h.id for h in got.hardware] == [a.hardware[1].id]
    pd.testing.assert_frame_equal(got.table(), a.take(idx).table(a.hardware[1].id))
    assert list(kernel_views.subset(a, rows).workload.frame["name"]) == ["k7", "k2", "no flops", "k0"]
    kernel_views.top_kernels(a, a.hardware[0].id, n=3)


def test_derived_values_are_the_tables_and_made_once():
    a = _analysis()
    h = a.hardware[0].id
    d = a.derived(h)
    assert a.derived(h) is d
    tab = a.table(h, messages=False)
    for col in ("achieved_flops_per_s", "efficiency", "headroom_s"):
        np.testing.assert_array_equal(tab[col].to_numpy(dtype=np.float64), getattr(d, col))
    assert list(tab["bound"]) == list(d.bound)
    t = a.workload.frame["time_s"].to_numpy(dtype=np.float64)
    assert a.timed.tolist() == [bool(x > 0) for x in np.nan_to_num(t)]
    # a zero time is no measurement: missing in the summary, no efficiency; its headroom is still written
    zero = np.flatnonzero(t == 0)
    assert a.summary(h)["coverage"]["kernels_missing_time"] == int((~a.timed).sum())
    assert np.isnan(d.efficiency[zero]).all() and not np.isnan(d.headroom_s[zero]).any()


def test_the_document_is_the_written_text():
    a = _analysis()
    doc = analysis_document(a, {"advice": []})
    assert doc == json.loads(analysis_json(a, {"advice": []}))
    assert list(doc)[:6] == ["schema_version", "workload", "roofs", "hardware", "kernels", "summary"]
    assert list(doc)[-1] == "advice" and list(doc["kernels"][0]) == list(KERNEL_KEYS)
    assert analysis_document(a, kernels=False)["kernels"] == []


@pytest.mark.parametrize("hierarchical", [False, True])
def test_selected_gives_the_numbers_a_fresh_analysis_gave(hierarchical):
    a = _analysis()
    hw_ids = [h.id for h in a.hardware]
    sub, _, idx = points.selected(a, hw_ids, top_n=5, hierarchical=hierarchical)
    fresh = roofcore.analyze(a.take(idx).workload, a.hardware)
    pd.testing.assert_frame_equal(points.kernel_points(sub, hw_ids, hierarchical=hierarchical),
                                  points.kernel_points(fresh, hw_ids, hierarchical=hierarchical))
