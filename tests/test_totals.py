"""A spreadsheet's totals row under a table is no kernel (roofcore/ingest/totals.py). The class runs over every
sample and fixture in tests/test_perturb.py (``totals_row``); these are the rules and the rows that stay."""

from __future__ import annotations

import roofcore

HEAD = "name,count,flops,bytes,time_ms"
ROWS = "gemm,2,8.0e12,2.0e9,12.0\nnorm,3,2.0e9,3.0e9,4.0\n"


def read(extra: str) -> roofcore.Workload:
    return roofcore.read(f"{HEAD}\n{ROWS}{extra}".encode(), name="inv.csv")


def notes(w: roofcore.Workload, word: str) -> list[str]:
    return [x for x in w.warnings if word in x]


def test_a_row_that_is_the_sum_of_the_others_is_left_out_and_said():
    for name in ("Total", "TOTAL", "Grand total", "Sum", "totals", "All kernels"):
        w = read(f"{name},5,8.002e12,5.0e9,16.0\n")
        assert list(w.frame["name"]) == ["gemm", "norm"], name
        assert w.frame["time_s"].sum() == 0.016
        assert len(notes(w, "is the sum of the other rows")) == 1, w.warnings


def test_rounded_sums_are_sums():
    """A spreadsheet shows sums rounded to what its column format shows: within a part in a thousand."""
    w = read("Total,5,8.0e12,5.0e9,16.01\n")
    assert len(w) == 2


def test_a_total_over_rows_that_are_not_kernels_is_left_out():
    """The spreadsheet summed copies and API rows as well; the parser kept only kernels: the total is above."""
    w = read("Total,9,8.002e12,5.0e9,20.5\n")
    assert len(w) == 2 and len(notes(w, "at least the sum of the other rows")) == 1


def test_a_kernel_named_sum_stays_a_kernel():
    """A reduction kernel called "sum" whose figures are its own: kept, and the warning says why."""
    w = read("sum,1,1.0e6,4.0e6,0.01\n")
    assert list(w.frame["name"]) == ["gemm", "norm", "sum"]
    assert notes(w, "is kept as a kernel") == ["inv.csv: a row named 'sum' is kept as a kernel: its figures are not "
                                              "the sums of the other rows."]


def test_a_sum_row_above_the_sums_stays():
    """Only a row named "Total" may hold more than the sums (no kernel is named so); "sum" must add up."""
    w = read("sum,9,8.002e12,5.0e9,20.5\n")
    assert len(w) == 3 and notes(w, "is kept as a kernel")


def test_a_table_of_single_launches_ignores_their_count():
    """One row per launch (count 1 each): the totals row's own count of 1 is no figure to compare."""
    text = "name,count,flops,bytes,time_ms\nk1,1,,,1.5\nk2,1,,,2.5\nk3,1,,,3.0\nTotal,1,,,7.0\n"
    w = roofcore.read(text.encode(), name="trace.csv")
    assert len(w) == 3 and notes(w, "is the sum")


def test_nothing_named_a_total_changes_nothing():
    w = read("")
    assert len(w) == 2 and not notes(w, "sum")
