"""A timeline uploaded with counters of some launches, in the app (AppTest): the Kernels page shows the share of the
timeline's time that has counters and the kernels without, and pairs a timeline kernel with a counter kernel by
hand (as Compare pairs two runs' kernels); the uploads are read again with the pairs, and the numbers are the
engine's ``read_many(..., pairs=...)``.

Fixtures: tests/data/join (an nsys kernel summary and an Nsight Compute details page of some of its kernels, one
counter kernel under a name no timeline kernel has); the real A100 pair of ../shared/samples where it exists.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from roofhelpers import sample
from streamlit.testing.v1 import AppTest
from test_app import APP

import roofcore
from roofcore.ingest.join import kernel_times
from roofcore.units import fmt_pct

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

JOIN = Path(__file__).resolve().parent / "data" / "join"
TIMELINE, COUNTERS = JOIN / "kern_sum.csv", JOIN / "ncu_details.csv"


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def kernels_page(*paths: Path) -> AppTest:
    at = ok(AppTest.from_file(APP, default_timeout=120).run())
    ok(at.sidebar.file_uploader[0].set_value([(p.name, p.read_bytes(), "text/csv") for p in paths]).run())
    return ok(at.switch_page("pages/kernels.py").run())


def pairing(at: AppTest):
    found = [e for e in at.expander if e.label.startswith("Timeline + counters:")]
    assert len(found) == 1, [e.label for e in at.expander]
    return found[0]


def without(at: AppTest):
    """The table of timeline kernels without counters."""
    return next(d.value for d in at.dataframe if list(getattr(d.value, "columns", ())) == [
        "Kernel", "Launches", "Time", "Share"])


def kernel_row(at: AppTest, text: str):
    table = next(d.value for d in at.dataframe if "Bound" in getattr(d.value, "columns", ()))
    return table[table["Kernel"].str.contains(text, regex=False)].iloc[0]


def test_the_share_with_counters_and_the_kernels_without():
    at = kernels_page(TIMELINE, COUNTERS)
    w = roofcore.read_many([TIMELINE, COUNTERS])
    assert pairing(at).label == f"Timeline + counters: {fmt_pct(float(w.meta['counter_coverage']), 2)} of the time " \
                                "has counters" == "Timeline + counters: 55% of the time has counters"
    table = without(at)
    assert [k.split("<")[0] for k in table["Kernel"]] == ["void cutlass::Kernel2", "std::enable_if"]
    assert list(table["Share"]) == ["25%", "20%"]
    assert at.selectbox(key="pair_counter").options[0] == "unused_kernel<…>"  # the one no timeline kernel took


def test_a_pair_made_by_hand_reads_the_files_again_with_it():
    at = kernels_page(TIMELINE, COUNTERS)
    picks = at.selectbox(key="pair_timeline")
    picks.select_index(next(i for i, o in enumerate(picks.options) if "Kernel2" in o))
    at.selectbox(key="pair_counter").select_index(0)  # unused_kernel<…>
    ok(at.button(key="pair_submit").click().run())
    timeline_name = next(n for n in roofcore.read(TIMELINE).frame["name"] if "Kernel2" in n)
    counter_name = next(n for n in roofcore.read(COUNTERS).frame["name"] if "unused_kernel" in n)
    w = roofcore.read_many([TIMELINE, COUNTERS], pairs={timeline_name: counter_name})
    assert pairing(at).label == f"Timeline + counters: {fmt_pct(float(w.meta['counter_coverage']), 2)} of the " \
                                "time has counters" == "Timeline + counters: 80% of the time has counters"
    flops = w.frame.loc[w.frame["name"] == timeline_name, "flops"].iloc[0]
    assert flops > 0 and kernel_row(at, "Kernel2")["FLOPs (G)"] == pytest.approx(flops / 1e9)
    assert any(c.value.startswith("Paired by hand: cutlass") for c in at.caption)
    ok(at.button(key="pair_clear").click().run())
    assert pairing(at).label == "Timeline + counters: 55% of the time has counters"
    assert math.isnan(kernel_row(at, "Kernel2")["FLOPs (G)"])  # unknown again


def test_no_pairing_for_a_workload_without_a_timeline_join():
    at = kernels_page(COUNTERS)
    assert not [e for e in at.expander if e.label.startswith("Timeline + counters:")]


@pytest.mark.samples
def test_the_real_a100_timeline_with_its_counters():
    timeline = sample("nsys2025.3.2_stats_console_log_a100_julia.out")
    counters = sample("ncu_details_a100_julia_set_full_rules_humanunits.csv")
    w = roofcore.read_many([timeline, counters])
    at = kernels_page(timeline, counters)
    assert pairing(at).label == f"Timeline + counters: {fmt_pct(float(w.meta['counter_coverage']), 2)} of the " \
                                "time has counters"
    k = kernel_times(w)
    assert without(at)["Kernel"].iloc[0] == k[~k["known"]].index[0]
