"""roofcore.advise: every rule fires on a workload made to trigger it and stays silent on one that must not,
its message tested exactly; gains are bounded by the roofline and never counted twice; the seeds' examples.

Measured times here are ones we set to place a kernel: ``time = t_roof / 0.95`` puts it at 95% of its roof,
``time = 2 × t_roof`` at 50%. The test device's round numbers (100 TFLOP/s, 1 TB/s) keep the expected
numbers checkable by hand; each test says how they follow.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofhelpers import make_hw, workload_of

import roofcore
from roofcore import advise as adv
from roofcore import analyze, ops
from roofcore.advise import Confidence, Lever
from roofcore.models import Kernel

DATA = Path(__file__).resolve().parent / "data" / "advise"
SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"

#: rule name -> {"fires", "silent"}: which of the two tests each rule has (checked by the meta-test)
COVERED: dict[str, set[str]] = defaultdict(set)


def covers(rule: str, how: str):
    assert how in ("fires", "silent")

    def deco(fn):
        COVERED[rule].add(how)
        return fn

    return deco


def ceiling(precision: str, unit: str, peak: float) -> dict:
    return {"precision": precision, "unit": unit, "peak": peak, "source": "unit test fixture"}


#: bf16-matrix 100 TFLOP/s (default), fp8-matrix 200, fp32-vector 20, tf32-matrix 50; HBM 1 TB/s (ridge
#: 100 FLOP/B), L2 4 TB/s, PCIe 25 GB/s
GPU = make_hw(peak=100e12, bw=1e12, levels={"l2": 4e12}, links={"pcie": 25e9},
              extra_ceilings=[ceiling("fp8", "matrix", 200e12), ceiling("fp32", "vector", 20e12),
                              ceiling("tf32", "matrix", 50e12)])


def kern(name: str, flops: float, hbm: float, *, precision: str | None = "bf16", unit: str | None = "matrix",
         count: int = 1, **other: float) -> Kernel:
    return Kernel(name=name, flops=flops, bytes={"hbm": hbm, **other}, precision=precision, unit=unit, count=count)


def run(kernels, times=None, hw=GPU) -> adv.Advice:
    return adv.advise(analyze(workload_of(*kernels, times=times), hw))


def of(advice: adv.Advice, rule: str) -> list[adv.Recommendation]:
    return [r for r in advice.items if r.rule == rule]


def one(advice: adv.Advice, rule: str) -> adv.Recommendation:
    found = of(advice, rule)
    assert len(found) == 1, [(r.rule, r.title) for r in advice.items]
    return found[0]


# --------------------------------------------------------------------------------------------- data checks


@covers("above_roof", "fires")
def test_above_roof_names_the_likely_wrong_input():
    # 1 TFLOP at 100 TFLOP/s needs 10 ms; measured 5 ms is 2x the roof: the engine blames precision or unit
    r = one(run([kern("gemm", 1e12, 1e9)], [5e-3]), "above_roof")
    assert r.title == "Check the counts of gemm: it beats its roofline"
    assert r.reason == ("Measured 5 ms beats the roofline minimum 10 ms (2× the roof), so an input is wrong: most "
                        "likely the precision or unit (bf16-matrix assumed; a 2× gap is the next precision, FP16 "
                        "accumulate, or a 2:4-sparse rate) or FLOPs counted twice.")
    assert (r.lever, r.confidence, r.gain_s, r.kernels) == (Lever.DATA_CHECK, Confidence.HIGH, 0.0, ("gemm",))


@covers("above_roof", "silent")
def test_above_roof_is_silent_below_the_roof_and_other_rules_skip_such_kernels():
    assert not of(run([kern("gemm", 1e12, 1e9)], [12e-3]), "above_roof")
    advice = run([kern("gemm", 1e12, 1e9)], [5e-3])
    assert [r.rule for r in advice.items] == ["above_roof"]  # nothing else trusts its numbers
    assert advice.total_gain_s == 0


@covers("missing_data", "fires")
def test_missing_data_counts_the_time_no_rule_can_judge():
    r = one(run([kern("mystery", math.nan, 1e9), kern("known", 1e9, 1e9, unit="vector")], [4e-3, 1e-3]),
            "missing_data")
    assert r.title == "Collect FLOPs and bytes for 1 kernel"
    assert r.reason == ("1 kernel (4 ms, 80% of the workload) cannot be placed on the roofline (1 without FLOPs), so "
                        "no rule can judge it; collect FLOP and off-chip byte counters.")
    assert r.kernels == ("mystery",) and r.gain_s == 0


@covers("missing_data", "silent")
def test_missing_data_is_silent_when_every_kernel_has_its_numbers():
    assert not of(run([kern("known", 1e9, 1e9)], [1e-3]), "missing_data")


def test_missing_data_hint_follows_the_profiler_format():
    w = roofcore.read(b"name,count,flops,bytes,time_ms\nk,1,,1e6,1\n", name="inv.csv")
    r = one(adv.advise(analyze(w, GPU)), "missing_data")
    assert r.reason.endswith("; give flops and bytes (or an op with its shapes) for these rows.")


# --------------------------------------------------------------------------------------------- latency


@covers("tiny_launches", "fires")
def test_tiny_launches_are_told_to_batch():
    # 100 launches in 50 µs: 500 ns each; roof = 1 MB / 1 TB/s = 1 µs, so 2% of the roof
    r = one(run([kern("tiny_add", 1e6, 1e6, count=100)], [50e-6]), "tiny_launches")
    assert r.title == "Batch 100 tiny launches into fewer kernels (graph capture, persistent kernels, fusion)"
    assert r.reason == ("tiny_add (50 µs, 100% of the workload) launches 100 times at 500 ns per launch on average, "
                        "at 2% of its roof: under 1 µs a launch costs more than its work, so only fewer launches help.")
    assert r.lever is Lever.LAUNCH_OVERHEAD and r.gain_s == pytest.approx(49e-6)  # the headroom, 50 − 1 µs


@covers("tiny_launches", "silent")
def test_tiny_launches_need_many_launches():
    advice = run([kern("tiny_add", 1e6, 1e6, count=5)], [4e-6])  # 0.8 µs each, but 5 launches are not "many"
    assert not of(advice, "tiny_launches")
    assert of(advice, "memory_far")  # at 25% of its roof: the bandwidth rule speaks instead


def test_tiny_launches_name_the_vendors_graphs():
    nv = make_hw(peak=100e12, bw=1e12)
    nv = type(nv)(**{**nv.__dict__, "vendor": "NVIDIA"})
    r = one(run([kern("tiny_add", 1e6, 1e6, count=100)], [50e-6], hw=nv), "tiny_launches")
    assert "(CUDA graphs, persistent kernels, fusion)" in r.title


@covers("below_both_roofs", "fires")
def test_below_both_roofs_says_the_roofline_cannot_diagnose_it():
    # roof = 1 GB / 1 TB/s = 1 ms; measured 20 ms: 20× the roof, 5% efficiency
    r = one(run([kern("slow", 1e9, 1e9)], [20e-3]), "below_both_roofs")
    assert r.title == "Find the latency in slow: it runs at 5% of its roof"
    assert r.reason == ("slow takes 20 ms, 20× its roofline time 1 ms (bound by HBM bandwidth): launch overhead, "
                        "synchronisation, low occupancy or cache thrashing dominate, which the roofline cannot "
                        "diagnose further; look at its timeline and stall reasons.")
    assert (r.lever, r.confidence) == (Lever.LATENCY, Confidence.LOW)
    assert r.gain_s == pytest.approx(19e-3)  # the headroom


@covers("below_both_roofs", "silent")
def test_below_both_roofs_is_silent_at_half_the_roof():
    assert not of(run([kern("slow", 1e9, 1e9)], [2e-3]), "below_both_roofs")


# --------------------------------------------------------------------------------------------- memory-bound


@covers("memory_far", "fires")
def test_memory_far_reports_percent_of_bandwidth():
    # 1 GB at 1 TB/s = 1 ms roof, measured 2 ms: 50% of HBM bandwidth (and a tiny % of peak FLOP/s, never shown)
    r = one(run([kern("copy", 1e9, 1e9, unit="vector")], [2e-3]), "memory_far")
    assert r.title == "Reach the HBM roof in copy: coalesce accesses, fix the layout, cut re-reads"
    assert r.reason == ("copy is memory-bound on HBM at 1 FLOP/B, 50% of HBM bandwidth (2 ms measured, 1 ms at the "
                        "roof): uncoalesced or strided accesses, a poor layout or repeated reads keep it below the roof.")
    assert "FLOP/s" not in r.reason
    assert (r.lever, r.gain_s) == (Lever.MEMORY_ACCESS, pytest.approx(1e-3))


@covers("memory_far", "silent")
def test_memory_far_is_silent_near_the_roof_and_without_a_time():
    assert not of(run([kern("copy", 1e9, 1e9, unit="vector")], [1.05e-3]), "memory_far")
    assert not of(run([kern("copy", 1e9, 1e9, unit="vector")]), "memory_far")  # needs a measured time


def test_memory_far_groups_many_kernels_with_a_range():
    names = [f"copy{i}" for i in range(6)]
    times = [2e-3, 2e-3, 2e-3, 2e-3, 4e-3, 2.5e-3]  # 50%, 50%, 50%, 50%, 25%, 40% of HBM bandwidth
    # separate rows of different counts so they are not a fusion chain
    advice = run([kern(n, 1e9, 1e9, unit="vector", count=i + 1) for i, n in enumerate(names)], times)
    recs = of(advice, "memory_far")
    # one card each for the three names with the largest headroom (3, 1.5, 1 ms; ties in workload order)
    singles = sorted((r for r in recs if r.name_count == 1), key=lambda r: -r.standalone_gain_s)
    assert [r.kernels for r in singles] == [("copy4",), ("copy5",), ("copy0",)]
    group = next(r for r in recs if r.name_count > 1)
    assert group.kernels == ("copy1", "copy2", "copy3")
    assert group.title == "Reach the HBM roof in 3 kernels: coalesce accesses, fix the layout, cut re-reads"
    assert group.reason == ("3 kernels (6 ms, 41.4% of the workload) are memory-bound on HBM at 50% of HBM bandwidth: "
                            "uncoalesced or strided accesses, poor layouts or repeated reads keep them below the roof.")


#: the test GPU with an L1/shared level (16 TB/s), and an AMD-like one with vL1D and LDS, and one with a MALL
L1GPU = make_hw(peak=100e12, bw=1e12, levels={"l2": 4e12, "l1": 16e12})
AMDGPU = make_hw(peak=100e12, bw=1e12, levels={"l2": 4e12, "l1": 8e12, "lds": 16e12})
MALLGPU = make_hw(peak=100e12, bw=1e12, levels={"mall": 2e12, "l2": 4e12})


@covers("onchip_tiling", "fires")
def test_onchip_tiling_when_l2_sets_the_roof():
    # L2 8 GB / 4 TB/s = 2 ms > HBM 1 GB / 1 TB/s = 1 ms: L2-bound. Measured 2.5 ms (80% of L2 bandwidth).
    # Tiling at best brings it to the next roof, HBM's 1 ms: factor 1/2 at kept efficiency, 2.5 ms -> 1.25 ms
    r = one(run([kern("stencil", 1e9, 1e9, unit="vector", l2=8e9)], [2.5e-3]), "onchip_tiling")
    assert r.title == "Tile stencil for L1/shared memory reuse: it is at the L2 roof"
    assert r.reason == ("stencil is bound by L2 at 0.125 FLOP/B (80% of its 4 TB/s), under the HBM roof at 1 FLOP/B: "
                        "tiles staged in L1/shared memory and reused there (larger tiles) cut L2 bytes until the next "
                        "roof, HBM's, 1 ms instead of 2 ms.")
    assert (r.lever, r.standalone_gain_s) == (Lever.TILING, pytest.approx(1.25e-3))


def test_at_the_l1_roof_block_in_registers():
    # L1 64 GB / 16 TB/s = 4 ms > HBM 1 ms > L2 0.5 ms: at the L1 roof; measured 5 ms = 80% of 16 TB/s. Registers
    # are the only level inside L1: register blocking, at best down to HBM's 1 ms (5 ms -> 1.25 ms)
    r = one(run([kern("stencil", 1e9, 1e9, unit="vector", l2=2e9, l1=64e9)], [5e-3], hw=L1GPU), "onchip_tiling")
    assert r.title == "Block stencil in registers: it is at the L1 roof"
    assert r.reason == ("stencil is bound by L1 at 0.0156 FLOP/B (80% of its 16 TB/s), under the HBM roof at 1 FLOP/B: "
                        "register blocking (several outputs per thread, operands kept in registers) cuts L1 bytes "
                        "until the next roof, HBM's, 1 ms instead of 4 ms.")
    assert r.standalone_gain_s == pytest.approx(5e-3 * (1 - 1 / 4))


def test_the_level_inside_the_binding_one_is_named_lds_on_amd_and_l2_under_a_mall():
    # AMD-like: L2 8 GB / 4 TB/s = 2 ms binds (vL1D 0.8 ms, LDS 0.25 ms, HBM 1 ms); tiles go to LDS
    r = one(run([kern("stencil", 1e9, 1e9, unit="vector", l2=8e9, l1=6.4e9, lds=4e9)], hw=AMDGPU), "onchip_tiling")
    assert r.title == "Tile stencil for LDS reuse: it is at the L2 roof"
    assert ("(its 4 TB/s; no measured time)" in r.reason and "tiles staged in LDS" in r.reason
            and "until the next roof, HBM's, 1 ms instead of 2 ms." in r.reason)
    # MALL 8 GB / 2 TB/s = 4 ms binds (L2 1.5 ms, HBM 1 ms): tiles sized for L2, next roof L2's
    r = one(run([kern("stencil", 1e9, 1e9, unit="vector", mall=8e9, l2=6e9)], [5e-3], hw=MALLGPU), "onchip_tiling")
    assert r.title == "Tile stencil for L2 reuse: it is at the MALL roof"
    assert r.reason.endswith("cut MALL bytes until the next roof, L2's, 1.5 ms instead of 4 ms.")


@covers("offchip_reuse", "fires")
def test_between_the_l2_and_the_hbm_roof_tile_for_l2_reuse():
    # HBM 1 GB / 1 TB/s = 1 ms binds; L2 2 GB / 4 TB/s = 0.5 ms, L1 6 GB / 16 TB/s = 0.375 ms, compute 0.4 ms:
    # L1 moves 6x the HBM bytes (data re-read). Without HBM the roof is L2's 0.5 ms: factor 1/2, 1.25 ms -> 0.625
    advice = run([kern("gemm", 40e9, 1e9, l2=2e9, l1=6e9)], [1.25e-3], hw=L1GPU)
    r = one(advice, "offchip_reuse")
    assert r.title == "Tile gemm for L2 reuse: it sits between the L2 and the HBM roof"
    assert r.reason == ("gemm is bound by HBM at 40 FLOP/B (80% of its 1 TB/s), while L2 at 20 FLOP/B leaves room "
                        "(4 TB/s); L1 moves 6× its HBM bytes, so it re-reads data: blocking each tile's working set "
                        "to fit L2 (tile rasterisation or swizzling) cuts HBM bytes, at best until the next roof, "
                        "L2's, 500 µs instead of 1 ms.")
    assert (r.lever, r.confidence, r.standalone_gain_s) == (Lever.TILING, Confidence.LOW, pytest.approx(0.625e-3))
    sized = make_hw(peak=100e12, bw=1e12, levels={"l2": 4e12, "l1": 16e12})
    sized = replace(sized, levels=(sized.levels[0], replace(sized.levels[1], capacity=40e6), sized.levels[2]))
    r = one(run([kern("gemm", 40e9, 1e9, l2=2e9, l1=6e9)], [1.25e-3], hw=sized), "offchip_reuse")
    assert "to fit the 40 MB L2 (tile rasterisation" in r.reason


def test_a_matrix_product_re_reads_its_operands_whatever_its_on_chip_ratio():
    # conv: L2 moves only 2x the HBM bytes, but a matrix product re-reads its operands by construction
    r = one(run([kern("conv2d_fprop", 40e9, 1e9, l2=2e9, l1=1.5e9)], [1.25e-3], hw=L1GPU), "offchip_reuse")
    assert ("while L2 at 20 FLOP/B leaves room (4 TB/s); a matrix product re-reads its operands (L2 moves 2× its HBM "
            "bytes): blocking") in r.reason


@covers("offchip_reuse", "silent")
def test_offchip_reuse_is_silent_for_a_stream_and_without_on_chip_bytes():
    # a copy-like kernel reads each byte once (L1 1.2x HBM): tiling cannot cut what it never re-reads
    assert not of(run([kern("axpy", 1e8, 1e9, l2=1e9, l1=1.2e9)], [1.25e-3], hw=L1GPU), "offchip_reuse")
    assert not of(run([kern("gemm", 40e9, 1e9)], [1.25e-3], hw=L1GPU), "offchip_reuse")  # no on-chip bytes
    assert not of(run([kern("gemm", 40e9, 1e9, l2=2e9, l1=6e9)], [1.25e-3], hw=make_hw(peak=100e12, bw=1e12)),
                  "offchip_reuse")  # a device without an on-chip level


@covers("onchip_tiling", "silent")
def test_onchip_tiling_is_silent_when_off_chip_memory_binds():
    assert not of(run([kern("stencil", 1e9, 1e9, unit="vector", l2=2e9)], [1.2e-3]), "onchip_tiling")


@covers("fusion", "fires")
def test_fusion_of_adjacent_memory_bound_kernels():
    # three one-in, one-out elementwise ops over 1e8 bf16 elements: 400 MB each, 1.2 GB in all; fused, the
    # first input and the last output: (400 + 400) / 2 MB = 400 MB, 3x less; roof 1.2 ms -> 400 µs
    advice = run([ops.elementwise(1e8, "bf16", name=n) for n in ("a", "b", "c")])
    r = one(advice, "fusion")
    assert r.title == "Fuse a → b → c"
    assert r.reason == ("This chain of 3 adjacent memory-bound kernels takes 1.2 ms, 100% of the workload: each writes "
                        "its result to HBM for the next to read back. Fused, it moves about 400 MB instead of 1.2 GB "
                        "(3× less traffic), so its roof falls from 1.2 ms to 400 µs.")
    assert r.kernels == ("a", "b", "c") and r.lever is Lever.FUSION
    assert r.gain_s == pytest.approx(0.8e-3)  # roof time − fused roof time (no measured time)


@covers("fusion", "silent")
def test_fusion_needs_adjacent_memory_bound_kernels_of_one_loop():
    a, b = ops.elementwise(1e8, "bf16", name="a"), ops.elementwise(1e8, "bf16", name="b")
    gemm = ops.matmul(8192, 8192, 8192, "bf16", name="gemm")  # compute-bound: breaks the chain
    assert not of(run([a, gemm, b]), "fusion")
    b10 = Kernel(name="b", flops=b.flops * 10, bytes={"hbm": b.bytes["hbm"] * 10}, precision="bf16", unit="vector",
                 count=10)
    assert not of(run([a, b10]), "fusion")  # different launch counts: not one producer and its consumer
    assert not of(run([a, a]), "fusion")  # the same kernel twice is a loop, not a chain


def test_fusion_of_a_loop_is_one_recommendation_per_repeated_chain():
    a, b = ops.elementwise(1e8, "bf16", name="a"), ops.elementwise(1e8, "bf16", name="b")
    r = one(run([a, b, a, b, a]), "fusion")  # (a → b) twice, then a alone
    assert r.title == "Fuse a → b" and r.kernel_count == 4 and r.name_count == 2
    assert r.reason.startswith("This chain of 2 adjacent memory-bound kernels occurs 2 times and takes 1.6 ms, 80% of "
                               "the workload:")
    assert r.gain_s == pytest.approx(0.8e-3)  # each pair: 800 → 400 µs


def test_fusion_with_measured_times_keeps_the_chains_efficiency():
    # two 400 MB kernels measured at 50% of their roof (0.8 ms each): fused roof 400 µs vs 800 µs, so the
    # 1.6 ms become 0.8 ms at the same efficiency: a 0.8 ms gain, not 1.2 ms (time − new roof)
    advice = run([ops.elementwise(1e8, "bf16", name=n) for n in ("a", "b")], [0.8e-3, 0.8e-3])
    r = one(advice, "fusion")
    assert r.reason.endswith("so its roof falls from 800 µs to 400 µs; at its measured 50% of the roof, 1.6 ms "
                             "becomes 800 µs.")
    assert r.standalone_gain_s == pytest.approx(0.8e-3)


@covers("lower_precision", "fires")
def test_lower_precision_moves_memory_and_compute_roofs():
    # both at 90% of their roof. norm: 1 GB -> 500 MB, 1 ms -> 500 µs. gemm: fp8 at 200 TFLOP/s, 10 -> 5 ms
    advice = run([kern("norm", 1e9, 1e9, unit="vector"), kern("gemm", 1e12, 1e9)], [1e-3 / 0.9, 10e-3 / 0.9])
    gemm, norm = of(advice, "lower_precision")
    assert gemm.title == "Move gemm from bf16 to fp8 where numerics allow"
    assert gemm.reason == ("gemm is compute-bound at 90% of its roof in bf16: fp8 runs on the 200 TFLOP/s fp8-matrix "
                           "ceiling and cuts its bytes 2× (1 GB → 500 MB), so its roof falls from 10 ms to 5 ms.")
    assert norm.title == "Move norm from bf16 to fp8 where numerics allow"
    assert norm.reason == ("norm is memory-bound at 90% of HBM bandwidth in bf16: fp8 cuts its bytes 2× (1 GB → "
                           "500 MB), so its roof falls from 1 ms to 500 µs.")
    # kept efficiency: 11.1 ms × (1 − 5/10) for the gemm
    assert gemm.gain_s == pytest.approx(10e-3 / 0.9 / 2) and gemm.confidence is Confidence.MEDIUM


@covers("lower_precision", "silent")
def test_lower_precision_is_silent_far_from_the_roof_or_without_a_smaller_ceiling():
    assert not of(run([kern("norm", 1e9, 1e9, unit="vector")], [2e-3]), "lower_precision")  # 50%: reach it first
    assert not of(run([kern("q", 1e9, 1e9, precision="fp8")]), "lower_precision")  # no fp4/int4 ceiling


@covers("larger_batch", "fires")
def test_larger_batch_for_a_memory_bound_matmul():
    # 64×8192 @ 8192×8192 bf16: I = 2·64·8192² / 2(64·8192 + 8192² + 64·8192) ≈ 63 FLOP/B < ridge 100.
    # The ridge is 1.6× away, so the batch grows 1.6×, not 2×: HBM time per unit of work ÷ 1.6 = compute time
    advice = run([ops.matmul(64, 8192, 8192, "bf16", name="proj")])
    r = one(advice, "larger_batch")
    assert r.title == "Raise the batch of proj 1.6×, to the HBM ridge"
    assert r.reason == ("proj is memory-bound on HBM at 63 FLOP/B on bf16-matrix, under the ridge 100 FLOP/B: when a "
                        "weight operand shared across the batch dominates its bytes, a 1.6× larger batch cuts its time "
                        "per unit of work from 136 µs to 85.9 µs at best (the ridge needs 1.6×).")
    assert (r.lever, r.confidence) == (Lever.BATCH, Confidence.LOW)
    flops = 2 * 64 * 8192 * 8192
    assert r.standalone_gain_s == pytest.approx(r.at_stake_s - flops / 100e12)


def test_larger_batch_doubles_when_the_ridge_is_far():
    advice = run([ops.matmul(16, 8192, 8192, "bf16", name="decode")])
    r = one(advice, "larger_batch")
    assert r.title == "Double the batch of decode"
    assert "a 2× larger batch" in r.reason and "(the ridge needs 6.3×)" in r.reason


@covers("larger_batch", "silent")
def test_larger_batch_leaves_elementwise_kernels_alone():
    # memory-bound but on vector units: batch does not raise an elementwise op's intensity
    assert not of(run([ops.elementwise(1e8, "bf16", name="gelu")]), "larger_batch")


# --------------------------------------------------------------------------------------------- compute-bound


@covers("compute_far", "fires")
def test_compute_far_on_matrix_and_vector_units():
    # gemm at 50% of 100 TFLOP/s (20 ms vs 10 ms); saxpy_loop at 50% of fp32-vector 20 TFLOP/s (10 vs 5 ms)
    advice = run([kern("gemm", 1e12, 1e9), kern("saxpy_loop", 1e11, 1e8, precision="fp32", unit="vector")],
                 [20e-3, 10e-3])
    gemm, saxpy = of(advice, "compute_far")
    assert gemm.title == "Find the stalls in gemm: it reaches 50% of its compute roof"
    assert gemm.reason == ("gemm is compute-bound at 1000 FLOP/B and reaches 50% of the 100 TFLOP/s bf16-matrix peak "
                           "(20 ms measured, 10 ms at the roof): pipeline stalls, shapes that do not fill the matrix "
                           "units, low occupancy or the instruction mix hold it below the roof.")
    assert gemm.lever is Lever.STALLS and gemm.gain_s == pytest.approx(10e-3)
    assert saxpy.title == "Vectorise saxpy_loop: it reaches 50% of its compute roof"
    assert saxpy.reason == ("saxpy_loop is compute-bound at 1000 FLOP/B and reaches 50% of the 20 TFLOP/s fp32-vector "
                            "peak (10 ms measured, 5 ms at the roof): scalar code, no FMA, low occupancy or pipeline "
                            "stalls hold it below the roof.")
    assert saxpy.lever is Lever.VECTORISATION


@covers("compute_far", "silent")
def test_compute_far_is_silent_at_the_roof():
    assert not of(run([kern("gemm", 1e12, 1e9)], [10e-3 / 0.95]), "compute_far")


#: a CPU-like device: fp32 on vector units at 20 TFLOP/s, TF32 matrix units at 150 TFLOP/s, no bf16
SIMT = make_hw(peak=20e12, bw=1e12, precision="fp32", unit="vector", hw_id="simt-device",
               extra_ceilings=[ceiling("tf32", "matrix", 150e12)])


@covers("matrix_units", "fires")
def test_matrix_units_for_fp32_on_cuda_cores():
    # 1 TFLOP on 20 TFLOP/s = 50 ms; TF32 at 150 TFLOP/s = 6.67 ms (HBM: 100 MB at 1 TB/s = 0.1 ms)
    r = one(run([kern("sgemm_nn", 1e12, 1e8, precision="fp32", unit="vector")], hw=SIMT), "matrix_units")
    assert r.title == "Run sgemm_nn on matrix units (tf32-matrix)"
    assert r.reason == ("sgemm_nn is compute-bound on vector units (20 TFLOP/s fp32-vector); simt-device has 150 "
                        "TFLOP/s tf32-matrix (TF32 keeps fp32 storage), so a matrix-unit kernel would take its roof "
                        "from 50 ms to 6.67 ms.")
    assert (r.lever, r.confidence) == (Lever.MATRIX_UNITS, Confidence.MEDIUM)
    assert r.gain_s == pytest.approx(50e-3 - 1e12 / 150e12)


def test_matrix_units_doubts_kernels_that_do_not_look_like_matrix_products():
    r = one(run([kern("saxpy_loop", 1e12, 1e8, precision="fp32", unit="vector")], hw=SIMT), "matrix_units")
    assert r.confidence is Confidence.LOW and r.reason.endswith(" — if it is a matrix product.")


@covers("matrix_units", "silent")
def test_matrix_units_is_silent_on_matrix_units_already():
    assert not of(run([kern("gemm", 1e12, 1e8, precision="tf32", unit="matrix")], hw=SIMT), "matrix_units")


@covers("weak_fp64", "fires")
def test_weak_fp64_on_a_consumer_like_gpu():
    # fp64 1 TFLOP/s vs fp32 64 TFLOP/s (1/64): 1 TFLOP takes 1 s in FP64, 15.6 ms in FP32
    hw = make_hw(peak=64e12, bw=1e12, precision="fp32", unit="vector", extra_ceilings=[ceiling("fp64", "vector", 1e12)])
    r = one(run([kern("dgemm", 1e12, 1e9, precision="fp64", unit="vector")], hw=hw), "weak_fp64")
    assert r.title == "Move dgemm from FP64 to FP32 where numerics allow"
    assert r.reason == ("dgemm is compute-bound in FP64 and test-device's FP64 (1 TFLOP/s fp64-vector) is 1/64 of its "
                        "FP32 (64 TFLOP/s fp32-vector): with mixed precision or iterative refinement its roof falls "
                        "from 1 s to 15.6 ms.")
    assert (r.lever, r.confidence) == (Lever.PRECISION, Confidence.LOW)
    assert r.gain_s == pytest.approx(1 - 1 / 64)


@covers("weak_fp64", "silent")
def test_weak_fp64_is_silent_where_fp64_matches_fp32(catalog):
    # A100: fp64 tensor cores 19.5 TFLOP/s = fp32 19.5 TFLOP/s
    k = kern("dgemm", 1e12, 1e9, precision="fp64", unit="matrix")
    assert not of(run([k], hw=catalog.get("a100-40gb-sxm")), "weak_fp64")


@covers("compute_near", "fires")
def test_compute_near_says_only_fewer_flops_or_more_hardware_help():
    r = one(run([kern("gemm", 1e12, 1e9)], [10e-3 / 0.95]), "compute_near")
    assert r.title == "Cut the FLOPs of gemm or add hardware: it is at its compute roof"
    assert r.reason == ("gemm (10.5 ms, 100% of the workload) is compute-bound at 1000 FLOP/B, above the ridge 100 "
                        "FLOP/B, at 95% of the 100 TFLOP/s bf16-matrix peak: only fewer FLOPs (a cheaper algorithm, "
                        "sparsity, low rank) or more or faster hardware help.")
    assert (r.lever, r.confidence, r.gain_s) == (Lever.ALGORITHM, Confidence.HIGH, 0.0)
    assert adv.gain_text(r, 1.0) == "gain not bounded by the roofline"


@covers("compute_near", "silent")
def test_compute_near_is_silent_for_memory_bound_kernels():
    assert not of(run([kern("norm", 1e9, 1e9, unit="vector")], [1.05e-3]), "compute_near")


# --------------------------------------------------------------------------------------------- links


@covers("link_far", "fires")
def test_link_far_for_pageable_copies():
    # 250 MB over PCIe at 25 GB/s = 10 ms; measured 50 ms: 20% of the link, 40 ms headroom
    k = kern("Memcpy HtoD (Pageable -> Device)", 0, 2.5e8, precision=None, unit=None, pcie=2.5e8)
    r = one(run([k], [50e-3]), "link_far")
    assert r.title == "Speed up the PCIE transfers of Memcpy HtoD (Pageable -> Device)"
    assert r.reason == ("Memcpy HtoD (Pageable -> Device) is link-bound on PCIE: 250 MB at 20% of its 25 GB/s (50 ms "
                        "measured, 10 ms at the roof), from pageable host memory; use pinned (page-locked) host memory, "
                        "fewer and larger copies, and copies overlapped with compute.")
    assert (r.lever, r.confidence, r.gain_s) == (Lever.OVERLAP, Confidence.HIGH, pytest.approx(40e-3))


@covers("link_far", "silent")
def test_link_far_is_silent_at_the_link_roof():
    k = kern("copy", 0, 2.5e8, precision=None, unit=None, pcie=2.5e8)
    assert not of(run([k], [10.5e-3]), "link_far")


@covers("link_near", "fires")
def test_link_near_reshard_compress_or_overlap():
    # 250 MB on PCIe = 10 ms, measured 10.5 ms (95%); hidden completely, HBM's 250 µs is the next roof:
    # 10.5 ms × (1 − 0.25/10) saved at kept efficiency
    k = kern("allreduce", 1e6, 2.5e8, pcie=2.5e8)
    r = one(run([k], [10.5e-3]), "link_near")
    assert r.title == "Cut or hide the PCIE traffic of allreduce: reshard, compress, overlap"
    assert r.reason == ("allreduce is link-bound on PCIE at 0.004 FLOP/B, under the ridge 4000 FLOP/B (10.5 ms "
                        "measured, 10 ms at the roof): a sharding that communicates less, compressed or lower-precision "
                        "messages, or overlap with compute; hidden completely it would take 250 µs, its next roof.")
    assert (r.lever, r.confidence) == (Lever.RESHARDING, Confidence.LOW)
    assert r.gain_s == pytest.approx(10.5e-3 * (1 - 0.25 / 10))


@covers("link_near", "silent")
def test_link_near_is_silent_for_memory_bound_kernels():
    assert not of(run([kern("copy", 1e9, 1e9, unit="vector")], [1.05e-3]), "link_near")


# --------------------------------------------------------------------------------------------- ranking and gains


def test_every_rule_has_an_explanation_and_a_firing_and_a_silent_test():
    names = [r.__name__ for r in adv.RULES]
    assert len(names) == len(set(names)) >= 15
    for fn in adv.RULES:
        assert len(fn.explanation) > 80, fn.__name__
        assert fn.explanation == " ".join(fn.__doc__.split())
    assert {n: COVERED.get(n, set()) for n in names} == {n: {"fires", "silent"} for n in names}
    assert set(COVERED) <= set(names)  # no test claims a rule that does not exist
    assert list(adv.explain()) == names


def test_a_duplicate_rule_name_is_refused():
    with pytest.raises(ValueError, match="rule 'fusion' is already registered"):
        adv.rule(adv.fusion)


def test_ranked_by_gain_with_data_checks_first():
    advice = run([kern("mystery", math.nan, 1e9), kern("slow", 1e9, 1e9), kern("copy", 1e9, 1e9, unit="vector",
                                                                              count=2)], [1e-3, 20e-3, 2e-3])
    assert [r.rule for r in advice.items] == ["missing_data", "below_both_roofs", "memory_far"]
    gains = [r.gain_s for r in advice.items[1:]]
    assert gains == sorted(gains, reverse=True)


def test_overlapping_actions_never_count_a_kernels_seconds_twice():
    # copy at 50% of its roof gets both "reach the roof" (efficiency 1/2) and fp8 is not offered (far), but
    # the stencil gets tiling (roof ÷ 2) and fp8 (bytes ÷ 2) — two roof moves on one kernel do not compound
    advice = run([kern("stencil", 1e9, 1e9, unit="vector", l2=8e9)], [2.5e-3])
    tiling, prec = one(advice, "onchip_tiling"), one(advice, "lower_precision")
    assert tiling.standalone_gain_s == pytest.approx(1.25e-3) and prec.standalone_gain_s == pytest.approx(1.25e-3)
    assert tiling.gain_s + prec.gain_s == pytest.approx(1.25e-3)  # the best one alone, not 2.5 ms
    assert advice.total_gain_s == pytest.approx(1.25e-3)
    # an efficiency action and a roof action compound: fused chain at 50% efficiency -> new roof exactly
    chain = [ops.elementwise(1e8, "bf16", name=n) for n in ("a", "b")]
    advice = run(chain, [0.8e-3, 0.8e-3])
    assert advice.total_gain_s == pytest.approx(1.6e-3 - 0.4e-3)  # time − fused roof, no more
    assert {r.rule for r in advice.items if r.gain_s > 0} == {"fusion", "memory_far"}


def test_gain_text_for_actions_ranked_below_a_better_one():
    advice = run([kern("stencil", 1e9, 1e9, unit="vector", l2=8e9)], [2.5e-3])
    second = advice.items[1]
    assert second.gain_s == 0 and adv.gain_text(second, advice.workload_time_s) == \
        "nothing beyond the actions above (alone 1.25 ms)"
    assert adv.gain_text(advice.items[0], advice.workload_time_s) == "saves 1.25 ms (50%)"


kernel_strategy = st.builds(
    lambda f, b, l2, pcie, t, p, u, c: Kernel(
        name=f"k{f:.3g}", flops=f, bytes={"hbm": b, "l2": l2, "pcie": pcie}, precision=p, unit=u, count=c,
        time_s=t),
    st.floats(1e3, 1e13), st.floats(1e3, 1e11), st.one_of(st.just(0.0), st.floats(1, 1e11)),
    st.one_of(st.just(0.0), st.floats(1, 1e9)),
    st.one_of(st.none(), st.floats(1e-7, 1.0)), st.sampled_from(["bf16", "fp32", "fp8", "fp64", None]),
    st.sampled_from(["matrix", "vector", None]), st.integers(1, 200))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(kernel_strategy, min_size=1, max_size=8))
def test_gains_are_bounded_by_the_roofline_and_the_workload(kernels):
    a = analyze(workload_of(*kernels), GPU)
    advice = adv.advise(a)
    tab = a.table(GPU.id, messages=False)
    t, roof = tab["time_s"].to_numpy(), tab["t_roof_s"].to_numpy()
    assert advice.total_gain_s <= advice.workload_time_s * (1 + 1e-9)
    assert np.all(advice.after_s >= -1e-15) and np.all(advice.after_s <= advice.before_s * (1 + 1e-12))
    assert sum(r.gain_s for r in advice.items) == pytest.approx(advice.total_gain_s, rel=1e-9, abs=1e-18)
    for r in advice.items:
        assert 0 <= r.gain_s <= r.standalone_gain_s * (1 + 1e-9) + 1e-18
        assert r.kind != "none" or r.standalone_gain_s == 0
        rows = r.rows
        if r.kind == "efficiency":  # moves kernels up to their roof: at most their headroom
            assert r.standalone_gain_s <= np.sum(np.maximum(t[rows] - roof[rows], 0)) * (1 + 1e-9) + 1e-18
        elif r.kind == "roof":  # moves the roof: at most time (or t_roof) − new roof, new roof = t_roof × factor
            base = np.where(np.isnan(t[rows]), roof[rows], t[rows])
            # a kernel within the engine's rounding tolerance of its roof (1e-6) is not "above" it
            assert np.all(base >= roof[rows] * (1 - 2e-6))
            assert r.standalone_gain_s <= np.sum(base - roof[rows] * r.factors) + 2e-6 * np.sum(base) + 1e-18


def test_advice_json_and_text():
    advice = run([kern("slow", 1e9, 1e9)], [20e-3])
    doc = json.loads(json.dumps(advice.to_json(), allow_nan=False))
    assert doc["hardware"] == "test-device" and doc["basis"] == "measured"
    assert doc["items"][0]["rule"] == "below_both_roofs" and doc["items"][0]["gain_s"] == pytest.approx(19e-3)
    assert doc["summary"] == ("Doing all of these saves up to 19 ms of 20 ms (measured time, 95%): 20× faster; all of "
                              "it from low-confidence actions.")
    assert adv.advice_text(advice, hardware=GPU).splitlines() == [
        "== Recommendations on Test device (test-device) ==",
        "Doing all of these saves up to 19 ms of 20 ms (measured time, 95%): 20× faster; all of it from low-confidence "
        "actions.",
        "",
        " 1. Find the latency in slow: it runs at 5% of its roof",
        "    latency · low confidence · saves 19 ms (95%) · rule below_both_roofs",
        "    " + advice.items[0].reason,
        "    kernels: slow",
    ]
    assert adv.advice_frame(advice)["rule"].tolist() == ["below_both_roofs"]


def test_summary_separates_the_confident_part_of_the_total():
    # memory_far (medium) saves 1 ms of copy's 2 ms; below_both_roofs (low) 19 ms of slow's 20 ms
    advice = run([kern("copy", 1e9, 1e9, unit="vector", count=2), kern("slow", 1e9, 1e9)], [2e-3, 20e-3])
    assert advice.summary() == ("Doing all of these saves up to 20 ms of 22 ms (measured time, 90.9%): 11× faster; "
                                "1 ms of it from high- or medium-confidence actions.")
    advice = run([kern("copy", 1e9, 1e9, unit="vector")], [2e-3])
    assert advice.summary() == "Doing all of these saves up to 1 ms of 2 ms (measured time, 50%): 2× faster."


def test_advise_defaults_to_the_first_device_and_advise_all_covers_each(catalog):
    a = analyze(workload_of(kern("slow", 1e9, 1e9)), [GPU, catalog.get("h100-sxm")])
    assert adv.advise(a).hardware == "test-device"
    assert set(adv.advise_all(a)) == {"test-device", "h100-sxm"}


def test_nothing_to_say():
    advice = run([kern("copy", 1e9, 1e9, precision="fp8", unit="vector")], [1.0e-3])
    assert advice.items == () and advice.summary() == (
        "No recommendation: every kernel is at its roof or has no numbers a rule can judge.")


def test_many_kernels_stay_bounded(catalog):
    """20,000 kernels give a few grouped cards (the time it takes is benchmarks/bench_engine.py's business)."""
    rng = np.random.default_rng(7)
    n = 20_000
    kernels = [Kernel(name=f"k{i % 700}", flops=float(rng.uniform(1e5, 1e12)),
                      bytes={"hbm": float(rng.uniform(1e5, 1e10)), "l2": float(rng.uniform(1e5, 1e11))},
                      precision=str(rng.choice(["bf16", "fp32"])), unit=str(rng.choice(["matrix", "vector"])),
                      time_s=float(rng.uniform(1e-6, 1e-2))) for i in range(n)]
    a = analyze(workload_of(*kernels), catalog.get("h100-sxm"))
    advice = adv.advise(a)
    assert advice.total_gain_s <= advice.workload_time_s
    assert all(len(r.kernels) <= adv.MAX_NAMES for r in advice.items)
    assert len(advice.items) < 80  # grouped: a few cards per action, not one per kernel


# --------------------------------------------------------------------------------------------- the seeds


@pytest.fixture(scope="module")
def catalog():
    return roofcore.load_catalogs(use_env=False)


def test_seed_unfused_chain_on_tpu_v7x_is_told_to_fuse(catalog):
    # LayerNorm reads its input once (2E, issue 26) and the Add reads two (3E): 9E of bf16 traffic unfused.
    # Fused, the advisor takes the chain's ends (first + last kernel's traffic) / 2 = (2E + 3E) / 2 = 2.5E, 3.6x
    # less — the seeds' "~4x" is the 1-in-1-out case (next test). The gain is the roof time it removes.
    w = roofcore.read(DATA / "unfused_chain.yaml")
    hw = catalog.get("tpu-v7x")
    advice = adv.advise(analyze(w, hw))
    top = advice.items[0]
    assert top.rule == "fusion" and top.title == "Fuse layernorm → gelu → dropout → residual_add"
    e, bw = 8192 * 8192 * 2, 7.37e12
    unfused = sum(w.frame["bytes_hbm"])
    assert unfused == pytest.approx(9 * e, rel=1e-3)
    assert top.gain_s == pytest.approx((unfused - 2.5 * e) / bw, rel=1e-3)
    assert "(3.6× less traffic)" in top.reason
    assert advice.total_gain_s / advice.workload_time_s == pytest.approx(6.5 / 9, abs=0.01)


def test_seed_four_one_in_one_out_ops_fuse_with_a_4x_traffic_cut(catalog):
    chain = [ops.elementwise(2**26, "bf16", name=n) for n in ("ln", "gelu", "dropout", "add")]
    advice = adv.advise(analyze(workload_of(*chain), catalog.get("tpu-v7x")))
    top = advice.items[0]
    assert top.rule == "fusion" and "(4× less traffic)" in top.reason
    assert top.gain_s == pytest.approx(0.75 * advice.workload_time_s)  # 1 − 1/4 of the roof time


MEMORY_SIDE = {"memory_far", "fusion", "lower_precision", "larger_batch", "onchip_tiling"}


def test_seed_600_matmul_near_the_compute_roof_on_v5p(catalog):
    # 2·600³ FLOP over 3·600²·2 B: 200 FLOP/B, above v5p's ridge 459e12 / 2.765e12 = 166; time = t_roof / 0.95
    k = ops.matmul(600, 600, 600, "bf16")
    hw = catalog.get("tpu-v5p")
    t_roof = analyze(workload_of(k), hw).table()["t_roof_s"].iat[0]
    advice = adv.advise(analyze(workload_of(k, times=[t_roof / 0.95]), hw))
    near = one(advice, "compute_near")
    assert "compute-bound at 200 FLOP/B, above the ridge 166 FLOP/B, at 95% of the 459 TFLOP/s bf16-matrix peak" in \
        near.reason
    assert not {r.rule for r in advice.items} & (MEMORY_SIDE - {"lower_precision"})
    assert one(advice, "lower_precision").reason.startswith("matmul is compute-bound")  # int8 doubles the peak


def test_seed_600_matmul_is_memory_bound_on_v6e(catalog):
    # v6e's ridge is 918e12 / 1.638e12 = 560 FLOP/B > 200: memory-bound, so the advice is on the memory side
    k = ops.matmul(600, 600, 600, "bf16")
    hw = catalog.get("tpu-v6e")
    t_roof = analyze(workload_of(k), hw).table()["t_roof_s"].iat[0]
    advice = adv.advise(analyze(workload_of(k, times=[t_roof / 0.95]), hw))
    rules = {r.rule for r in advice.items}
    assert rules and rules <= MEMORY_SIDE and "compute_near" not in rules
    assert {"larger_batch", "lower_precision"} <= rules
    assert "memory-bound on HBM at 200 FLOP/B on bf16-matrix, under the ridge 560 FLOP/B" in \
        one(advice, "larger_batch").reason


# --------------------------------------------------------------------------------------------- real exports

pytestmark_samples = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"{SAMPLES} is absent (a fresh clone)")


def sample(catalog, hw_id: str, *names: str) -> adv.Advice:
    w = roofcore.read_many([SAMPLES / n for n in names])
    return adv.advise(analyze(w, catalog.get(hw_id)), hw_id)


@pytestmark_samples
def test_real_alexnet_trace_asks_for_shapes_then_pinned_copies(catalog):
    advice = sample(catalog, "a100-40gb-sxm", "pytorch_kineto_a100_alexnet_trace.json")
    first, second = advice.items[:2]
    assert first.rule == "missing_data" and "record_shapes=True" in first.reason
    assert second.rule == "link_far" and second.kernels == ("Memcpy HtoD (Pageable -> Device)",)
    assert "from pageable host memory" in second.reason and second.confidence is Confidence.HIGH
    assert second.gain_s / advice.workload_time_s == pytest.approx(0.719, abs=0.01)


@pytestmark_samples
def test_real_rocprof_vcopy_is_told_to_reach_the_hbm_roof(catalog):
    advice = sample(catalog, "mi250x-gcd", "rocprof_compute_vcopy_MI200_pmc_perf.csv",
                    "rocprof_compute_vcopy_MI200_sysinfo.csv")
    assert [r.rule for r in advice.items] == ["memory_far"]
    assert "54% of HBM2e bandwidth" in advice.items[0].reason
    assert advice.items[0].kernel_count == 3 and advice.items[0].name_count == 1


@pytestmark_samples
def test_real_ncu_sgemm_is_below_both_roofs(catalog):
    advice = sample(catalog, "a100-40gb-sxm", "ncu_details_a100_interpolate_sgemm.csv")
    assert [r.rule for r in advice.items] == ["below_both_roofs", "below_both_roofs"]
    assert advice.items[0].kernels == ("ampere_sgemm_32x32_sliced1x4_tn",)
    assert "which the roofline cannot diagnose further" in advice.items[0].reason


@pytestmark_samples
def test_real_cutlass_gemm_is_told_to_tile_for_l2_reuse(catalog):
    """The CUTLASS 20480³ GEMMs move 147 GB of HBM each (cuBLAS's kernel in the same file: 26 GB): HBM-bound with
    L2 room, the largest action is tiling for L2 reuse, down to the L2 roof at most."""
    advice = sample(catalog, "a100-40gb-pcie", "ncu_details_a100pcie_cutlass_hgemm_20480_no_fp_counters.csv")
    top = next(r for r in advice.items if r.gain_s > 0)
    assert top.rule == "offchip_reuse" and top.kernel_count == 6 and top.confidence is Confidence.LOW
    assert top.title.endswith("for L2 reuse: it sits between the L2 and the HBM2 roof")
    assert "to fit the 40 MB L2 (tile rasterisation or swizzling)" in top.reason and "L2's, " in top.reason


def test_a_time_only_profile_gets_its_data_check_and_no_error():
    """nsys gives kernel times and nothing else: no bytes column exists at all (the batch rule once read one)."""
    from roofcore import report

    data = (b" Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Name\n"
            b" --------  ---------------  ---------  --------  --------  --------  --------  -----------  ----\n"
            b"    100.0        1,831,281      1,010   1,813.1   1,792.0     1,760     2,368         45.1  vectorAdd\n")
    w = roofcore.read(data, name="nsys.txt")
    assert not [c for c in w.frame.columns if c.startswith("bytes_") and w.frame[c].notna().any()]
    a = analyze(w, [roofcore.load_catalogs().get("a100-40gb-sxm")])
    recs = adv.advise_all(a)["a100-40gb-sxm"].items
    assert [r.rule for r in recs] == ["missing_data"]
    assert "Recommendations" in report.build_html(a, charts=False)
