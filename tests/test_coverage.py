"""Unknown stays unknown: a kernel without FLOPs or off-chip bytes has no roofline, and headlines say what they cover."""

import math

import numpy as np
from roofhelpers import make_hw, workload_of

from roofcore.analyze import analyze, coverage_text, speedup_note
from roofcore.cli import analysis_text
from roofcore.models import Kernel

HW = make_hw(100e12, 2e12, links={"pcie": 32e9})


def _bounds(a):
    return list(a.table(HW.id)["bound"])


def test_missing_flops_or_bytes_is_unknown_never_a_bound():
    a = analyze(workload_of(
        Kernel("both", 2e12, {"hbm": 1e9}),
        Kernel("no-flops", math.nan, {"hbm": 1e9}),
        Kernel("no-bytes", 2e12, {"hbm": math.nan}),
        Kernel("neither", math.nan, {"hbm": math.nan}),
        times=[0.1, 0.1, 0.1, 0.1]), HW)
    tab = a.table(HW.id)
    assert _bounds(a) == ["compute:bf16-matrix", None, None, None]
    assert tab["t_roof_s"].tolist()[0] == 0.02 and tab["t_roof_s"][1:].isna().all()
    assert tab["efficiency"][1:].isna().all() and tab["headroom_s"][1:].isna().all()
    codes = [[f["code"] for f in fl] for fl in tab["flags"]]
    assert "missing-flops" in codes[1] and "missing-bytes" in codes[2]
    assert "unknown" in a.summary(HW.id)["time_share_by_bound"]


def test_a_copy_is_bound_by_its_link_only_when_its_bytes_are_known():
    a = analyze(workload_of(
        Kernel("Memcpy HtoD", 0.0, {"pcie": 64e6}),
        Kernel("Memcpy HtoD (no bytes)", 0.0, {"pcie": math.nan}),
        times=[0.004, 0.001]), HW)
    tab = a.table(HW.id)
    assert _bounds(a) == ["link:pcie", None]
    assert tab["t_roof_s"][0] == 64e6 / 32e9 and math.isnan(tab["t_roof_s"][1])
    assert [f["code"] for f in tab["flags"][0]] == []  # a known copy is not "missing bytes"


def test_headlines_cover_only_known_kernels_and_say_so():
    # known kernel: t_roof 0.01 s, measured 0.04 s; unknown kernel: measured 0.06 s
    a = analyze(workload_of(Kernel("known", 1e12, {"hbm": 1e9}), Kernel("unknown", math.nan, {"hbm": 1e9}),
                            times=[0.04, 0.06]), HW)
    s = a.summary(HW.id)
    assert s["t_roof_s"] == 0.01
    assert s["speedup_if_at_roof"] == 4.0  # over the known kernel only, not (0.1 / (0.01 + 0.06))
    c = s["coverage"]
    assert (c["kernels"], c["kernels_known"], c["kernels_missing_flops"]) == (2, 1, 1)
    assert math.isclose(c["time_share_known"], 0.4)
    assert coverage_text(s) == ("Roofline known for 40% of the measured time (1 of 2 kernels); the rest is unknown: "
                                "FLOPs unknown for 1 kernel.")
    text = analysis_text(a)
    assert "4× faster if every kernel with a known roofline reached its roof" in text
    assert "Roofline known for 40% of the measured time" in text


def test_no_kernel_known_gives_no_headline():
    a = analyze(workload_of(Kernel("a", math.nan, {"hbm": math.nan}), times=[0.01]), HW)
    s = a.summary(HW.id)
    assert s["t_roof_s"] is None and s["speedup_if_at_roof"] is None
    assert coverage_text(s).endswith("no headline can be computed.")
    assert "faster" not in analysis_text(a)


def test_full_coverage_says_nothing_extra():
    a = analyze(workload_of(Kernel("a", 1e12, {"hbm": 1e9}), times=[0.02]), HW)
    assert coverage_text(a.summary(HW.id)) == ""


def test_speedup_from_launch_bound_kernels_says_so():
    # two 0.5 µs launches whose roofs are 1 ns: the whole "speedup" is launch overhead
    a = analyze(workload_of(Kernel("tiny", 1e3, {"hbm": 1e3}), Kernel("tiny2", 1e3, {"hbm": 1e3}),
                            times=[5e-7, 5e-7]), HW)
    s = a.summary(HW.id)
    assert s["speedup_if_at_roof"] > 100
    assert speedup_note(s).startswith("100% of that gain comes from launch-bound kernels")
    text = analysis_text(a)
    assert "e+0" not in text and "×" in text


def test_generated_holes_never_get_a_bound():
    rng = np.random.default_rng(7)
    n = 400
    flops = rng.uniform(0, 1e12, n)
    hbm = rng.uniform(1, 1e9, n)
    flops[rng.random(n) < 0.3] = np.nan
    hbm[rng.random(n) < 0.3] = np.nan
    kernels = [Kernel(f"k{i}", flops[i], {"hbm": hbm[i]}) for i in range(n)]
    a = analyze(workload_of(*kernels, times=[1e-3] * n), HW)
    tab = a.table(HW.id, messages=False)
    hole = tab["flops"].isna() | tab["bytes_hbm"].isna()
    assert tab.loc[hole, "bound"].isna().all() and tab.loc[hole, "t_roof_s"].isna().all()
    assert tab.loc[~hole, "bound"].notna().all()
