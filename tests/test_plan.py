"""Planning: transformations, solvers, projection, scenarios and comparisons (the roofcore.plan package).

The seeds' planning examples ("Roofline Analysis: A Comprehensive Guide" §4.2–4.4, §6, §10.2, §12 and
the fusion article) come out right through the engine, as tests/test_seeds.py does for analysis.
"""

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofhelpers import fast_hw, make_hw, workload_of

from roofcore import InputError, analyze, load_catalogs, ops, plan, read, views
from roofcore.models import Kernel
from roofcore.output import analysis_document

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "examples" / "scenarios").glob("*.yaml"))
GiB = 2**30


@pytest.fixture(scope="module")
def catalog():
    return load_catalogs(use_env=False)


def chain(n: int = 4, elements: float = GiB / 2):
    """``n`` elementwise kernels, each reading one bf16 tensor and writing one of the same size."""
    return workload_of(*(ops.elementwise(elements, "bf16", name=f"k{i}") for i in range(n)))


def snapshot(w):
    return w.frame.copy(deep=True), tuple(w.warnings), dict(w.meta)


def unchanged(w, snap):
    frame, warnings, meta = snap
    return w.frame.equals(frame) and list(w.frame.columns) == list(frame.columns) and \
        tuple(w.warnings) == warnings and dict(w.meta) == meta


# ---------------------------------------------------------------------------------------- fusion


def test_fused_chain_halves_traffic_and_doubles_attainable_at_each_step():
    # four kernels each reading and writing one tensor, fused 4 -> 2 -> 1 on the bandwidth slope
    hw = make_hw(peak=100e12, bw=1e12, precision="bf16", unit="vector")
    w4 = chain()
    w2 = plan.fuse(plan.fuse(w4, ["k0", "k1"], name="a"), ["k2", "k3"], name="b")
    w1 = plan.fuse(w2, ["a", "b"], name="all")
    traffic = [float(w.frame["bytes_hbm"].sum()) for w in (w4, w2, w1)]
    assert traffic[1] == pytest.approx(traffic[0] / 2) and traffic[2] == pytest.approx(traffic[1] / 2)
    perf = []
    for w in (w4, w2, w1):
        tab = analyze(w, hw).table()
        assert (tab["bound"] == "memory:hbm").all()
        perf.append(float(tab["attainable_flops_per_s"].iloc[0]))
        assert tab["flops"].sum() == pytest.approx(4 * GiB / 2)
    assert perf[1] == pytest.approx(2 * perf[0]) and perf[2] == pytest.approx(2 * perf[1])
    assert len(w1) == 1 and w1.frame["name"].iloc[0] == "all"


def test_fuse_uses_read_and_written_split_when_given():
    # k0 reads 10 writes 4; k1 reads its predecessor's 4 plus 3 of weights, writes 5: fused = 10 + 3 + 5
    w = workload_of(Kernel("k0", 1, {"hbm": 14}), Kernel("k1", 1, {"hbm": 12}))
    f = w.frame.copy()
    f["read_bytes"], f["written_bytes"] = [10.0, 7.0], [4.0, 5.0]
    fused = plan.fuse(replace(w, frame=f), [0, 1])
    row = fused.frame.iloc[0]
    assert row.bytes_hbm == 18 and row.read_bytes == 13 and row.written_bytes == 5
    assert row["name"] == "fused(k0 + k1)" and math.isnan(row.time_s)


def test_fuse_in_the_transformer_example_reads_ops_split():
    w = read(ROOT / "examples" / "transformer_block.yaml")
    fused = plan.fuse(w, ["ffn_up", "gelu"])
    before = w.frame.set_index("name")
    row = fused.frame.set_index("name").loc["fused(ffn_up + gelu)"]
    # ffn_up's output (gelu's input) stays on chip: only ffn_up's reads and gelu's writes remain
    assert row.bytes_hbm == pytest.approx(before.loc["ffn_up", "read_bytes"] + before.loc["gelu", "written_bytes"])
    assert len(fused) == len(w) - 1
    assert list(fused.frame["name"]).index("fused(ffn_up + gelu)") == list(w.frame["name"]).index("ffn_up")


def test_fuse_errors():
    w = chain(2)
    with pytest.raises(InputError, match=r"fuse\[1\]: expected the name of a kernel in the workload, found 'k9'"):
        plan.fuse(w, ["k0", "k9"])
    with pytest.raises(InputError, match="at least two kernels"):
        plan.fuse(w, ["k0"])


# ---------------------------------------------------------------------------------------- precision, batch


def test_int8_weights_with_weight_bytes_halve_only_weights_and_keep_the_bf16_ceiling():
    b, d, f = 64, 8192, 8192
    k = ops.matmul(b, f, d, "bf16")
    w = workload_of(k)
    fr = w.frame.copy()
    fr["weight_bytes"] = [d * f * 2.0]
    fr["written_bytes"] = [b * f * 2.0]
    w = replace(w, frame=fr)
    q = plan.change_precision(w, "int8", what="weights")
    assert q.frame["bytes_hbm"].iloc[0] == pytest.approx(b * d * 2 + d * f * 1 + b * f * 2)
    assert q.frame["precision"].iloc[0] == "bf16" and q.frame["weight_dtype"].iloc[0] == "int8"
    full = plan.change_precision(w, "int8", what="both")
    assert full.frame["bytes_hbm"].iloc[0] == pytest.approx((b * d + d * f + b * f) * 1)
    assert full.frame["precision"].iloc[0] == "int8"
    act = plan.change_precision(w, "fp8", what="activations")
    assert act.frame["bytes_hbm"].iloc[0] == pytest.approx(b * d + d * f * 2 + b * f)
    hw = make_hw(peak=1.97e14, bw=8.1e11, extra_ceilings=[
        {"precision": "int8", "unit": "matrix", "peak": 3.94e14, "source": "unit test fixture"}])
    assert analyze(q, hw).table().iloc[0].ceiling == "bf16-matrix"
    assert analyze(full, hw).table().iloc[0].ceiling == "int8-matrix"


def test_weights_change_without_weight_bytes_moves_nothing_and_says_so():
    w = chain(1)
    q = plan.change_precision(w, "int8", what="weights")
    assert q.frame["bytes_hbm"].iloc[0] == w.frame["bytes_hbm"].iloc[0]
    assert any("no weight_bytes" in x for x in q.warnings)


def test_scale_batch_keeps_weight_bytes_and_forgets_time():
    k = Kernel("mm", 100.0, {"hbm": 60.0, "l2": 10.0}, time_s=1.0)
    w = workload_of(k)
    fr = w.frame.copy()
    fr["weight_bytes"], fr["read_bytes"], fr["written_bytes"] = [30.0], [40.0], [20.0]
    w = replace(w, frame=fr)
    s = plan.scale_batch(w, 4)
    row = s.frame.iloc[0]
    assert row.flops == 400 and row.weight_bytes == 30
    assert row.bytes_hbm == pytest.approx((40 - 30) * 4 + 30 + 20 * 4)
    assert row.bytes_l2 == 40 and math.isnan(row.time_s)
    assert any("unknown" in x for x in s.warnings)


# ---------------------------------------------------------------------------------------- sharding


def test_shard_on_d_reproduces_the_seed_flip_at_8755():
    # §4.3 / §10.2 test 5: 2 chips sharded on D, per chip FLOPs BDF, link bytes 2BF; flips near D = 8,755
    hw = make_hw(peak=1.97e14, bw=4e13, links={"ici": 4.5e10})  # HBM out of the way: compute vs link
    b, f = 128, 8192

    def bound(d):
        base = workload_of(ops.matmul(b, f, d, "bf16"))
        fr = base.frame.copy()
        fr["written_bytes"] = [2.0 * b * f]  # the B×F output: what the chips all-reduce
        w = plan.shard(replace(base, frame=fr), 2, dim="k", link="ici")
        row = w.frame.iloc[0]
        assert row.flops == pytest.approx(b * d * f)
        assert row.bytes_ici == pytest.approx(2 * b * f)
        return analyze(w, hw).table().iloc[0].bound

    assert [bound(d) for d in (4096, 8192, 8800, 16384)] == ["link:ici", "link:ici", "compute:bf16-matrix",
                                                               "compute:bf16-matrix"]
    assert plan.shard_crossover(1.97e14, 4.5e10, b, f) == pytest.approx(8755.6, rel=1e-4)


def test_shard_dims_and_tree():
    w = workload_of(Kernel("mm", 800.0, {"hbm": 100.0}))
    fr = w.frame.copy()
    fr["read_bytes"], fr["written_bytes"], fr["weight_bytes"] = [80.0], [20.0], [60.0]
    w = replace(w, frame=fr)
    m = plan.shard(w, 4, dim="batch").frame.iloc[0]
    assert m.flops == 200 and m.bytes_hbm == pytest.approx(20 / 4 + 60 + 20 / 4) and "bytes_ici" not in m
    n = plan.shard(w, 4, dim="n").frame.iloc[0]
    assert n.bytes_hbm == pytest.approx(20 + 60 / 4 + 20 / 4)
    t = plan.shard(w, 4, dim="k", algorithm="tree", link="nvlink").frame.iloc[0]
    assert t.bytes_nvlink == pytest.approx(2 * 2 * 20)  # 2·⌈log2 4⌉·S
    r = plan.shard(w, 4, dim="k").frame.iloc[0]
    assert r.bytes_ici == pytest.approx(2 * 3 / 4 * 20) and r.bytes_hbm == pytest.approx(80 / 4 + 20)
    with pytest.raises(InputError, match=r"shard\.dim"):
        plan.shard(w, 2, dim="z")


def test_comm_fraction_divides_roof_time_by_one_minus_f():
    hw = make_hw(peak=100e12, bw=2e12)
    w = workload_of(ops.matmul(4096, 4096, 4096), ops.elementwise(1e9))
    t0 = plan.evaluate(w, hw).results[0].t_roof
    w2 = plan.comm_fraction(w, 0.2)
    assert plan.evaluate(w2, hw).results[0].t_roof == pytest.approx(t0 / 0.8)
    w3 = plan.comm_fraction(w2, 0.5)
    assert plan.evaluate(w3, hw).results[0].t_roof == pytest.approx(t0 / 0.4)
    assert analyze(w2, hw).results[0].t_roof == pytest.approx(t0)  # plain analyze ignores it: evaluate applies it
    with pytest.raises(InputError, match="comm_fraction"):
        plan.comm_fraction(w, 1.0)


# ---------------------------------------------------------------------------------------- solvers


@pytest.mark.parametrize("tpu", ["tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7x"])
def test_square_matmul_becomes_compute_bound_at_three_ridges_in_bf16(catalog, tpu):
    hw = catalog.get(tpu)
    n = plan.square_matmul_crossover(hw, "bf16")
    assert n == pytest.approx(3 * hw.ridge("bf16-matrix")["hbm"])

    def bound(size):
        return analyze(workload_of(ops.matmul(size, size, size, "bf16")), hw).table().iloc[0].bound

    assert bound(math.ceil(n) + 1) == "compute:bf16-matrix"
    assert bound(math.floor(n) - 1) == "memory:hbm"


def test_v5e_batch_thresholds():
    # §6: v5e ≈240 in bf16, ≈120 with int8 weights, ≈243 in full int8 (seed figures 1.97e14, 3.94e14, 8.1e11)
    hw = make_hw(peak=1.97e14, bw=8.1e11, extra_ceilings=[
        {"precision": "int8", "unit": "matrix", "peak": 3.94e14, "source": "unit test fixture"}])
    d = f = 32768
    cases = {("bf16", None): 243, ("bf16", "int8"): 122, ("int8", None): 243}
    for (dtype, wdt), want in cases.items():
        b = plan.matmul_crossover(hw, dtype=dtype, weight_dtype=wdt, d=d, f=f)
        assert b == pytest.approx(want, rel=0.02)

        def bound(batch, dtype=dtype, wdt=wdt):
            k = ops.matmul(batch, f, d, dtype, b_dtype=wdt)
            return analyze(workload_of(k), hw).table().iloc[0].bound

        assert bound(math.ceil(b)).startswith("compute") and bound(math.floor(b) - 1) == "memory:hbm"
    assert plan.matmul_crossover(hw, d=32, f=32) == math.inf  # too small ever to be compute-bound


def test_v5e_thresholds_from_the_catalog(catalog):
    hw = catalog.get("tpu-v5e")
    assert plan.matmul_crossover(hw, d=65536, f=65536) == pytest.approx(240, rel=0.02)
    assert plan.matmul_crossover(hw, weight_dtype="int8", d=65536, f=65536) == pytest.approx(120, rel=0.02)
    assert plan.matmul_crossover(hw, dtype="int8", d=65536, f=65536) == pytest.approx(240, rel=0.03)
    table = plan.crossover_table([hw])
    assert table.loc[0, "batch_int8_weights"] < table.loc[0, "batch_bf16"]


def test_tiled_intensity_and_tile_for_target():
    # §4.4: I ≈ bm·bn/(bm+bn); 128×256 → 85.3
    assert plan.tiled_intensity(128, 256) == pytest.approx(85.33, rel=1e-3)
    assert plan.tile_for_intensity(64) == (128, 128)
    bm, bn = plan.tile_for_intensity(85.3, ratio=2, multiple=16)
    assert plan.tiled_intensity(bm, bn) >= 85.3 and bm % 16 == 0 and bn % 16 == 0
    assert plan.tiled_intensity(bm - 16, 2 * (bm - 16)) < 85.3


def test_per_example_weights_intensity_tends_to_one():
    # §12.1: X[B,D]·Y[B,D,F]: I = DF/(D + DF + F) → 1 FLOP/B
    if "per_example_matmul" not in ops.OPS:
        pytest.skip("per_example_matmul op not available")
    k = ops.OPS["per_example_matmul"](batch=8, d=8192, f=8192, dtype="bf16")
    assert k.flops / k.bytes["hbm"] == pytest.approx(1.0, rel=1e-3)


# ---------------------------------------------------------------------------------------- projection


def test_projection_keeps_measured_efficiency_and_costs(catalog):
    h100, h200 = catalog.get("h100-sxm"), catalog.get("h200-sxm")
    mm, ew = ops.matmul(8192, 8192, 8192), ops.elementwise(1e9)
    roof = analyze(workload_of(mm, ew), h100).results[0].t_roof
    w = workload_of(mm, ew, times=[2 * roof[0], 4 * roof[1]])  # 50% and 25% efficient on the H100
    p = plan.project(w, "h100-sxm", [h100, h200], price_per_hour={"h200-sxm": 3.6})
    on200 = analyze(w, h200).results[0].t_roof
    tab = p.table[p.table["hardware"] == "h200-sxm"]
    assert tab["projected_time_s"].to_numpy() == pytest.approx([2 * on200[0], 4 * on200[1]])
    t200 = p.total("h200-sxm")
    assert t200.estimate_s == pytest.approx(2 * on200[0] + 4 * on200[1])
    assert p.total("h100-sxm").estimate_s == pytest.approx(float(np.sum(w.frame["time_s"])))
    assert t200.speedup == pytest.approx(p.total("h100-sxm").estimate_s / t200.estimate_s)
    assert t200.cost_per_run == pytest.approx(3.6 * t200.estimate_s / 3600)
    json.dumps(p.to_json(), allow_nan=False)


COPY_AND_UNKNOWN = (b"name,count,flops,bytes_hbm,bytes_pcie,time_us\n"
                    b"gemm,1,1e12,1e9,,100\n"          # a roofline on every device
                    b"copy,1,0,,1e9,50\n"               # bound by a link only a device with that link has
                    b"mystery,1,,,,30\n")               # measured, FLOPs and bytes unknown: no roofline anywhere


def test_an_estimate_says_what_it_leaves_out_and_speedups_compare_like_with_like():
    """A kernel with no roofline on a device is left out of that device's estimate (never counted as zero), and the
    total says how many and what share of the measured time the estimate still holds; a speedup sums only the
    kernels both devices give a time. On the device it ran on a run's estimate is its measured time, the kernel
    no roofline explains included."""
    w = read(COPY_AND_UNKNOWN, name="inv.csv")
    linked, bare = make_hw(hw_id="with-link", links={"pcie": 64e9}), make_hw(hw_id="no-link")
    p = plan.project(w, "with-link", [linked, bare])
    a, b = p.total("with-link"), p.total("no-link")
    assert (a.unknown_kernels, b.unknown_kernels) == (0, 2)
    assert a.coverage == pytest.approx(1.0) and b.coverage == pytest.approx(100 / 180)
    tab = p.table.set_index(["hardware", "name"])["estimate_s"]
    assert a.estimate_s == pytest.approx(tab["with-link", "gemm"] + tab["with-link", "copy"] + 30e-6)
    assert tab["with-link", "mystery"] == pytest.approx(30e-6)  # measured where it ran, with no roofline
    assert b.estimate_s == pytest.approx(tab["no-link", "gemm"])
    assert b.speedup == pytest.approx(tab["with-link", "gemm"] / tab["no-link", "gemm"])  # the copy in neither sum
    assert not any(n.startswith("with-link: the estimate leaves out") for n in p.notes)
    assert "no-link: the estimate leaves out 2 kernel(s) with no roofline (FLOPs or off-chip bytes unknown), 44.4% " \
           "of the measured time: it covers the other 55.6%." in p.notes, p.notes
    # measured where no roof explains it (an unknown link), projected to a device whose roof does: no efficiency
    back = plan.project(read(COPY_AND_UNKNOWN, name="inv.csv"), "no-link", [bare, linked])
    assert "with-link: the estimate leaves out 1 kernel(s) with no roofline (FLOPs or off-chip bytes unknown) and 1 " \
           "kernel(s) measured with no roofline on the device they ran on (their efficiency is unknown), 44.4% of " \
           "the measured time: it covers the other 55.6%." in back.notes, back.notes
    frame = views.projection_frame(p).set_index("Device")
    assert frame.loc["no-link", "Estimate covers"] == "55.6% of time"
    one = plan.project(w, "no-link", [bare, make_hw(hw_id="no-link-2", bw=4e12)])
    assert [n for n in one.notes if "leaves out" in n] == [
        "no-link-2: the estimate leaves out 2 kernel(s) with no roofline (FLOPs or off-chip bytes unknown), "
        "44.4% of the measured time: it covers the other 55.6%."]
    on = one.table[one.table["hardware"] == "no-link"].set_index("name")["estimate_s"]
    assert (on["copy"], on["mystery"]) == (pytest.approx(50e-6), pytest.approx(30e-6))  # where they ran: as measured
    plain = plan.project(read(COPY_AND_UNKNOWN.split(b"copy")[0], name="inv.csv"), "no-link", [bare])
    assert plain.total("no-link").unknown_kernels == 0 and plain.total("no-link").coverage == pytest.approx(1.0)
    assert "Estimate covers" not in views.projection_frame(plain).columns
    json.dumps(p.to_json(), allow_nan=False)


def test_a_measured_run_never_estimates_an_untimed_kernel_by_its_roofline_alone():
    """In a measured run a kernel with no measured time has no estimate: its roofline time is a lower bound, and
    the projected kernels beside it are real times. It is left out and said, on every device, never counted at
    its roofline time (it was before, so "covers 100% of the measured time" hid a bound in the sum); a run with
    no measured time at all is estimated by its rooflines, as the table says."""
    w = read(b"name,count,flops,bytes_hbm,time_us\ngemm,1,1e9,1e6,100\nnorm,1,1e9,1e9,\n", name="inv.csv")
    h1, h2 = make_hw(hw_id="here"), make_hw(hw_id="there", bw=4e12)
    p = plan.project(w, "here", [h1, h2])
    tab = p.table.set_index(["hardware", "name"])
    assert np.isnan(tab.loc[("here", "norm"), "estimate_s"]) and np.isnan(tab.loc[("there", "norm"), "estimate_s"])
    assert tab.loc[("here", "norm"), "t_roof_s"] > 0  # a roofline, but no estimate
    for t in p.totals:
        assert (t.unknown_kernels, t.untimed_kernels, t.coverage) == (1, 1, pytest.approx(1.0))
    assert p.total("here").estimate_s == pytest.approx(100e-6)
    assert "On every device, the estimate leaves out 1 kernel(s) with no measured time (a roofline time alone is a " \
           "lower bound, not an estimate); it covers all of the measured time." in p.notes, p.notes
    assert set(views.projection_frame(p)["Estimate covers"]) == {"100% of time, not 1 untimed kernel(s)"}
    built = plan.project(read(b"name,count,flops,bytes_hbm\ngemm,1,1e12,1e9\n", name="b.csv"), None, [h1, h2])
    assert built.total("there").estimate_s == pytest.approx(built.total("there").t_roof_s)


def test_cross_vendor_projection_drops_on_chip_levels(catalog):
    k = Kernel("k", 1e12, {"hbm": 1e9, "l2": 5e11}, precision="bf16", unit="matrix")
    w = workload_of(k)
    p = plan.project(w, "h100-sxm", [catalog.get("h100-sxm"), catalog.get("mi300x")])
    assert p.total("mi300x").cross_vendor and not p.total("h100-sxm").cross_vendor
    assert any("another vendor" in n and "on-chip" in n for n in p.notes)
    mi = p.table[p.table["hardware"] == "mi300x"].iloc[0]
    assert mi.t_roof_s == pytest.approx(max(1e12 / 1307.4e12, 1e9 / 5.3e12))
    with pytest.raises(InputError, match="source"):
        plan.project(w, "b200", [catalog.get("h100-sxm")])


# ---------------------------------------------------------------------------------------- compare


def test_a_scenario_says_what_its_estimates_leave_out(catalog):
    """A scenario's table and notes (the Planner's Scenario tab and the report print both) say what each estimate
    leaves out; with no source device the measured times are not projected, so it counts kernels, not time."""
    doc = {"name": "t", "base": {"kernels": [{"name": "a", "op": "elementwise", "elements": 1e9},
                                              {"name": "mystery", "flops": None, "bytes": None, "time_ms": 1.0}]},
           "hardware": ["h100-sxm"], "steps": [{"name": "moved", "from": "base", "hardware": ["mi300x"]}]}
    r = plan.run_scenario(doc, catalog)
    assert "On every device, the estimate leaves out 1 kernel(s) with no roofline (FLOPs or off-chip bytes " \
           "unknown)." in r.notes
    assert set(views.scenario_frame(r)["Estimate covers"]) == {"all but 1 kernel(s)"}
    assert all(t.coverage is None for v in r.variants for t in v.projection.totals)


def test_what_if_totals_say_how_many_kernels_their_sums_hold():
    w = read(COPY_AND_UNKNOWN, name="inv.csv")
    hw = make_hw(hw_id="no-link")
    a = plan.evaluate(w, hw)
    row = views.variant_totals(a, a).iloc[0]
    assert row["Roofline known"] == "1 of 3 → 1 of 3 kernels"
    full = plan.evaluate(read(COPY_AND_UNKNOWN.split(b"copy")[0], name="inv.csv"), hw)
    assert "Roofline known" not in views.variant_totals(full, full).columns


def test_compare_leaves_out_a_kernel_one_side_cannot_time_from_both_sums():
    """A kernel with neither a measured time nor a roofline in one run is in neither matched sum (else the speedup
    compares different kernels), and a note says how many each run leaves out."""
    hw = make_hw()
    old = read(b"name,count,flops,bytes,time_ms\na,1,1e9,1e6,2\nb,1,1e9,1e6,1\nx,1,1e9,1e6,1\n", name="old.csv")
    new = read(b"name,count,flops,bytes,time_ms\na,1,1e9,1e6,1\nb,1,,,\nx,1,1e9,1e6,0.5\n", name="new.csv")
    c = plan.compare(old, new, hw)
    assert c.totals["matched_speedup"] == pytest.approx((2 + 1) / (1 + 0.5))
    assert c.totals["matched_old_time_s"] == pytest.approx(3e-3)
    assert any(n.startswith("0 kernel(s) of the old run and 1 of the new one have neither") for n in c.notes)


def test_launches_summed_by_name_are_unknown_where_one_is():
    """Compare and the gate sum a kernel's launches by name: a launch of unknown time makes the kernel's time
    unknown (its roofline time stands in, marked), never the time of the other launches, and a warning says so."""
    old = read(b"name,count,flops,bytes,time_ms\na,1,1e9,1e6,2\na,1,1e9,1e6,\nb,1,1e9,1e6,1\n", name="old.csv")
    summed = plan.by_name(old)
    f = summed.frame.set_index("name")
    assert math.isnan(f.loc["a", "time_s"]) and f.loc["a", "count"] == 2 and f.loc["b", "time_s"] == 1e-3
    assert summed.warnings[-1].startswith("combining repeated launches: kernels whose launches are known only in "
                                          "part are unknown in that part (1 with time unknown for some launches)")
    c = plan.compare(old, read(b"name,count,flops,bytes,time_ms\na,1,1e9,1e6,1\nb,1,1e9,1e6,1\n", name="n.csv"),
                     make_hw())
    assert c.table.set_index("name").loc["a", "basis"] == "mixed"


def test_compare_matches_by_name_and_lists_unmatched():
    hw = make_hw()
    old = workload_of(Kernel("a", 1e9, {"hbm": 1e6}), Kernel("a", 1e9, {"hbm": 1e6}), Kernel("b", 1e9, {"hbm": 1e6}),
                      Kernel("gone", 1.0, {"hbm": 1.0}), times=[2e-3, 2e-3, 1e-3, 1e-3])
    new = workload_of(Kernel("a", 2e9, {"hbm": 2e6}), Kernel("b", 1e9, {"hbm": 1e6}), Kernel("fresh", 1.0, {"hbm": 1.0}),
                      times=[1e-3, 5e-4, 1e-4])
    c = plan.compare(old, new, hw)
    rows = c.table.set_index("name")
    assert rows.loc["a", "speedup"] == pytest.approx(4.0) and rows.loc["b", "speedup"] == pytest.approx(2.0)
    assert c.only_old == ("gone",) and c.only_new == ("fresh",)
    assert c.totals["speedup"] == pytest.approx(6e-3 / 1.6e-3)
    assert "a" in plan.comparison_text(c)
    json.dumps(c.to_json(), allow_nan=False)


# ---------------------------------------------------------------------------------------- scenarios


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_every_shipped_scenario_runs(catalog, path):
    r = plan.run_scenario(path, catalog)
    doc = json.loads(json.dumps(r.to_json(analysis_document), allow_nan=False))
    assert doc["variants"][0]["name"] == "base" and len(doc["variants"]) >= 2
    assert plan.scenario_text(r).startswith("Scenario:")


def test_scenario_json_has_the_analyze_fields(catalog):
    r = plan.run_scenario(ROOT / "examples" / "scenarios" / "elementwise_chain.yaml", catalog)
    doc = r.to_json(analysis_document)
    a = analysis_document(analyze(read(ROOT / "examples" / "transformer_block.yaml"), catalog.get("h100-sxm")))
    for v in doc["variants"]:
        assert set(v["kernels"][0]) == set(a["kernels"][0])
        assert {"hardware", "t_roof_s", "estimate_s", "speedup_vs_base", "cost_per_run"} <= set(v["totals"][0])
    speed = [v["totals"][0]["speedup_vs_base"] for v in doc["variants"]]
    assert speed == pytest.approx([1.0, 4 / 3, 2.0, 4.0])


def test_scenario_from_base_and_hardware_step(catalog):
    doc = {"name": "t", "base": {"kernels": [{"name": "a", "op": "elementwise", "elements": 1e9}]},
           "hardware": ["h100-sxm"], "steps": [
               {"name": "half", "precision": {"dtype": "fp8"}},
               {"name": "moved", "from": "base", "hardware": ["mi300x"]}]}
    r = plan.run_scenario(doc, catalog)
    moved = r.variant("moved")
    assert moved.parent == "base" and moved.hardware == ("mi300x",)
    assert moved.workload.frame["bytes_hbm"].iloc[0] == r.variant("base").workload.frame["bytes_hbm"].iloc[0]
    assert moved.speedup_vs_base["mi300x"] == pytest.approx(5.3 / 3.35, rel=0.01)


@pytest.mark.parametrize("steps, message", [
    ([{"fuse": ["a", "zz"]}], r"t: \$.steps\[0\].fuse\[1\]: expected the name of a kernel in the workload, found 'zz'"),
    ([{"fuse": ["a", "b"]}, {"precision": {"dtype": "fp7"}}], r"t: \$.steps\[1\].precision.dtype: expected a precision"),
    ([{"batch": -2}], r"t: \$.steps\[0\].batch: expected a number > 0, found -2"),
    ([{"shard": {"chips": 2, "algo": "ring"}}], r"t: \$.steps\[0\].shard.algo: expected chips, dim, link"),
    ([{"fuse": ["a", "b"], "batch": 2}], r"t: \$.steps\[0\]: expected exactly one action"),
    ([{"bach": 2}], r"t: \$.steps\[0\].bach: .*Hint: did you mean 'batch'\?"),
    ([{"batch": 2, "from": "nope"}], r"t: \$.steps\[0\].from: expected base or the name of an earlier step"),
    ([{"hardware": ["h100-sxn"]}], r"t: \$.steps\[0\].hardware\[0\]: expected a device id from the catalog"),
])
def test_scenario_errors_say_where(catalog, steps, message):
    doc = {"name": "t", "hardware": ["h100-sxm"], "steps": steps, "base": {"kernels": [
        {"name": "a", "op": "elementwise", "elements": 1e6}, {"name": "b", "op": "elementwise", "elements": 1e6}]}}
    with pytest.raises(InputError, match=message):
        plan.run_scenario(doc, catalog)


def test_scenario_file_errors(tmp_path, catalog):
    p = tmp_path / "s.yaml"
    p.write_text("name: x\nhardware: [h100-sxm]\nbase: {file: missing.yaml}\n")
    with pytest.raises(InputError, match=r"\$.base.file: expected an existing workload file"):
        plan.run_scenario(p, catalog)
    p.write_text("name: x\nhardware: [h100-sxm]\nbase: {file: ../x.yaml}\n")
    with pytest.raises(InputError, match="cannot be named by an uploaded scenario"):
        plan.run_scenario(p, catalog, allow_files=False)
    p.write_text("name: x\nbase: {kernels: [{name: a, flops: 1, bytes: 1}]}\n")
    with pytest.raises(InputError, match=r"\$.hardware: expected a non-empty list of device ids"):
        plan.run_scenario(p, catalog)


# ---------------------------------------------------------------------------------------- properties

sizes = st.floats(min_value=1.0, max_value=1e12, allow_nan=False, allow_infinity=False)
kernel_rows = st.lists(st.tuples(sizes, sizes, st.one_of(st.none(), st.floats(0.05, 0.95))), min_size=2, max_size=6)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _workload(rows, with_split: bool = True):
    w = workload_of(*(Kernel(f"k{i}", fl, {"hbm": b, "l2": b / 3}, precision="bf16", unit="vector")
                      for i, (fl, b, _) in enumerate(rows)))
    if with_split:
        fr = w.frame.copy()
        fr["read_bytes"] = [b * (r if r is not None else np.nan) for _, b, r in rows]
        fr["weight_bytes"] = [b * (r or 0) / 2 for _, b, r in rows]
        w = replace(w, frame=fr)
    return w


@FAST
@given(kernel_rows, st.booleans(), st.data())
def test_fusion_never_increases_bytes(rows, with_split, data):
    w = _workload(rows, with_split)
    picks = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=2, max_size=len(rows), unique=True))
    snap = snapshot(w)
    fused = plan.fuse(w, picks)
    assert unchanged(w, snap)
    assert fused.frame["bytes_hbm"].sum() <= w.frame["bytes_hbm"].sum() * (1 + 1e-12)
    assert fused.frame["flops"].sum() == pytest.approx(w.frame["flops"].sum(), rel=1e-9)


@FAST
@given(kernel_rows, st.integers(1, 64), st.sampled_from(["k", "m", "n"]), st.sampled_from(["ring", "tree"]))
def test_sharding_divides_per_chip_flops_by_n(rows, n, dim, algorithm):
    w = _workload(rows)
    snap = snapshot(w)
    s = plan.shard(w, n, dim=dim, algorithm=algorithm)
    assert unchanged(w, snap)
    assert s.frame["flops"].to_numpy() == pytest.approx(w.frame["flops"].to_numpy() / n)
    assert (s.frame["bytes_hbm"].to_numpy() <= w.frame["bytes_hbm"].to_numpy() * (1 + 1e-12)).all()


@FAST
@given(kernel_rows, st.sampled_from(["fp8", "int8", "int4", "fp16", "bf16"]), st.sampled_from(plan.WHAT),
       st.booleans())
def test_precision_reduction_never_increases_bytes(rows, dtype, what, with_split):
    w = _workload(rows, with_split)
    snap = snapshot(w)
    q = plan.change_precision(w, dtype, what=what)
    assert unchanged(w, snap)
    for c in w.byte_columns:
        assert (q.frame[c].to_numpy() <= w.frame[c].to_numpy() * (1 + 1e-12)).all()


@FAST
@given(kernel_rows, st.floats(0.01, 100), st.floats(0, 0.99))
def test_no_transformation_mutates_its_input(rows, factor, fraction):
    w = _workload(rows)
    snap = snapshot(w)
    plan.scale_batch(w, factor)
    plan.comm_fraction(w, fraction)
    plan.change_precision(w, "fp32")
    plan.fuse(w, [0, 1])
    plan.shard(w, 3)
    plan.project(w, None, [fast_hw(1e14, 1e12)])
    assert unchanged(w, snap)


# ---------------------------------------------------------------------------------------- inventory split columns


def test_inventory_reads_the_byte_split_as_plain_columns():
    w = read(b"name,flops,bytes,bytes_read,bytes_written,weight_bytes\na,1,10,6,4,2\n", name="x.csv")
    assert w.byte_columns == ["bytes_hbm"]
    row = w.frame.iloc[0]
    assert (row.read_bytes, row.written_bytes, row.weight_bytes) == (6.0, 4.0, 2.0)
    assert w.frame["weight_bytes"].dtype == np.float64
    y = read(b"kernels:\n  - {name: mm, op: matmul, m: 8, n: 16, k: 32, dtype: bf16, weight_bytes: 1 KiB, count: 2}\n"
             b"  - {name: e, flops: 1, bytes: 8, bytes_written: 2}\n", name="x.yaml")
    mm, e = y.frame.iloc[0], y.frame.iloc[1]
    assert mm.written_bytes == 2 * 8 * 16 * 2 and mm.read_bytes == 2 * (8 * 32 + 32 * 16) * 2
    assert mm.weight_bytes == 1024 and e.written_bytes == 2 and math.isnan(e.read_bytes)
    with pytest.raises(InputError, match="same column"):
        read(b"name,flops,bytes,bytes_read,read_bytes\na,1,10,6,4\n", name="x.csv")


def test_split_without_read_written_counts_weights_as_reads():
    w = workload_of(Kernel("matvec", 2.0, {"hbm": 110.0}), Kernel("plain", 1.0, {"hbm": 10.0}))
    fr = w.frame.copy()
    fr["weight_bytes"] = [100.0, np.nan]
    read, written, weight = plan.split_bytes(fr)
    assert list(read) == [105.0, 5.0] and list(written) == [5.0, 5.0] and list(weight) == [100.0, 0.0]


def test_decode_int8_weights_scenario_halves_weight_traffic(catalog):
    path = ROOT / "examples" / "scenarios" / "llama7b_decode_int8_batch.yaml"
    if not path.exists():
        pytest.skip("builder scenario not shipped")
    r = plan.run_scenario(path, catalog)
    base, q = r.variant("base").workload.frame, r.variant("int8 weights").workload.frame
    wb = base["weight_bytes"].sum()
    assert q["bytes_hbm"].sum() == pytest.approx(base["bytes_hbm"].sum() - wb / 2)
    assert (q["precision"] == base["precision"]).all()


def test_combining_launches_keeps_the_byte_split_the_planner_scales():
    """Two launches of one kernel, 1 MB of weights each out of 2 MB: batch ×64 scales only the activations,
    whether the launches are combined or not (combining once dropped weight_bytes: 4.35 GB instead of 131 MB)."""
    from roofcore.ingest import aggregate, make_frame
    from roofcore.models import Workload
    from roofcore.plan import scale_batch

    cols = {"name": ["k", "k"], "flops": [1e9, 1e9], "bytes_hbm": [2e6, 2e6], "weight_bytes": [1e6, 1e6],
            "time_s": [1e-3, 1e-3], "source": ["t", "t"], "row": ["1", "2"]}
    raw = Workload(frame=make_frame(cols, 2))
    combined = aggregate(raw)
    assert len(combined) == 1 and combined.frame["weight_bytes"].iloc[0] == 2e6
    on_raw = scale_batch(raw, 64).frame["bytes_hbm"].sum()
    on_combined = scale_batch(combined, 64).frame["bytes_hbm"].sum()
    assert on_raw == on_combined == 2 * (1e6 + 64 * 1e6)  # weights fixed, activations × 64: 130 MB either way
