"""The seed articles' worked examples, through the engine (../shared/seeds, 'Roofline Analysis: A Comprehensive Guide')."""

import math

import pytest
from roofhelpers import make_hw, workload_of

from roofcore import analyze, load_catalogs, ops
from roofcore.models import Kernel


@pytest.fixture(scope="module")
def catalog():
    return load_catalogs(use_env=False)


def test_ridge_points_of_the_seeds(catalog):
    # §3.1: TPU v5e 1.97e14 / 8.2e11 ≈ 240 FLOP/B; §3.3: H100 9.89e14 / 3.35e12 ≈ 295 FLOP/B
    assert catalog.get("tpu-v5e").ridge()["hbm"] == pytest.approx(240, rel=0.01)
    assert catalog.get("h100-sxm").ridge()["hbm"] == pytest.approx(295, rel=0.01)


def test_dot_product_intensity_and_attainable():
    # §4.1: FLOPs 2N−1, bytes 4N+2 in bf16; I → 1/2; on π=100 TFLOP/s, β=2 TB/s: ridge 50, P = 1 TFLOP/s
    n = 10**9
    k = ops.dot(n, "bf16")
    assert k.flops == 2 * n - 1 and k.bytes["hbm"] == 4 * n + 2
    assert k.flops / k.bytes["hbm"] == pytest.approx(0.5, rel=1e-6)
    hw = make_hw(peak=100e12, bw=2e12, precision="bf16", unit="vector")
    assert hw.ridge()["hbm"] == 50
    row = analyze(workload_of(k), hw).table().iloc[0]
    assert row.attainable_flops_per_s == pytest.approx(1e12, rel=1e-6)
    assert row.bound == "memory:hbm"


@pytest.mark.parametrize("n", [128, 1024, 4096, 16384])
def test_square_matmul_intensity_is_n_over_3_in_bf16(n):
    k = ops.matmul(n, n, n, "bf16")
    assert k.flops == 2 * n**3
    assert k.bytes["hbm"] == 3 * n * n * 2
    assert k.flops / k.bytes["hbm"] == pytest.approx(n / 3)


def test_matmul_intensity_approaches_batch_when_d_f_large():
    # §4.2: I = BDF / (BD + DF + BF) ≈ B when D, F ≫ B
    k = ops.matmul(64, 65536, 65536, "bf16")
    assert k.flops / k.bytes["hbm"] == pytest.approx(64, rel=0.01)


def test_layernorm_on_a_bandwidth_bound_machine():
    # A LayerNorm that runs at its roof: ~100% of peak bandwidth and a tiny % of peak FLOP/s
    k = ops.layernorm(65536, 4096, "bf16")
    assert k.flops == 7 * 65536 * 4096
    assert k.bytes["hbm"] == (2 * 65536 * 4096 + 2 * 4096) * 2
    hw = make_hw(peak=989e12, bw=3.35e12)
    t_roof = k.bytes["hbm"] / 3.35e12
    row = analyze(workload_of(k, times=[t_roof]), hw).table().iloc[0]
    assert row.bound == "memory:hbm"
    assert row.pct_peak_bandwidth == pytest.approx(1.0)
    assert row.pct_peak_compute < 0.01
    assert row.efficiency == pytest.approx(1.0)


def test_time_bounds_min_is_max_and_max_is_sum():
    # §1.2: T_min = max(T_math, T_comm...), T_max = T_math + Σ T_comm
    k = Kernel(name="k", flops=4e12, bytes={"hbm": 2e9, "l2": 9e9, "ici": 1e9}, precision="bf16", unit="matrix")
    hw = make_hw(peak=200e12, bw=1e12, levels={"l2": 5e12}, links={"ici": 4.5e10})
    row = analyze(workload_of(k), hw).table().iloc[0]
    t = {"math": 4e12 / 200e12, "hbm": 2e9 / 1e12, "l2": 9e9 / 5e12, "ici": 1e9 / 4.5e10}
    assert row.t_roof_s == pytest.approx(max(t.values()))
    assert row.t_serial_s == pytest.approx(sum(t.values()))
    assert row.bound == "link:ici"


def test_distributed_matmul_flips_at_d_8755():
    # §4.3: 2 chips sharded on D; per chip FLOPs BDF, link bytes 2BF; compute-bound iff D > 8,755
    hw = make_hw(peak=1.97e14, bw=8.2e11, links={"ici": 4.5e10})
    b, f = 128, 8192

    def bound(d):
        k = Kernel(name="shard", flops=b * d * f, bytes={"hbm": 0.0, "ici": 2 * b * f}, precision="bf16", unit="matrix")
        return analyze(workload_of(k), hw).table().iloc[0].bound

    assert bound(4096) == "link:ici"
    assert bound(8192) == "link:ici"
    assert bound(8800) == "compute:bf16-matrix"
    assert bound(16384) == "compute:bf16-matrix"
    assert pytest.approx(8755.6, rel=1e-4) == 1.97e14 * 2 / 4.5e10


def test_quantization_thresholds():
    # §6.1 full int8: I ≈ 2B vs knee 3.94e14/8.1e11 ≈ 486 -> B > 243; §6.2 int8 weights, bf16 math: B > 120
    d = f = 32768
    int8_hw = make_hw(peak=3.94e14, bw=8.1e11, precision="int8")
    bf16_hw = make_hw(peak=1.97e14, bw=8.1e11)

    def crossover(hw, **dtypes):
        lo, hi = 1, 4096
        while hi - lo > 1:
            mid = (lo + hi) // 2
            k = ops.matmul(mid, f, d, **dtypes)
            b = analyze(workload_of(k), hw).table().iloc[0].bound
            lo, hi = (lo, mid) if b.startswith("compute") else (mid, hi)
        return hi

    assert crossover(int8_hw, dtype="int8") == pytest.approx(243, abs=6)
    assert crossover(bf16_hw, dtype="bf16", b_dtype="int8") == pytest.approx(120, abs=4)
    assert crossover(bf16_hw, dtype="bf16") == pytest.approx(240, abs=8)


def test_tiled_matmul_intensity():
    # §4.4: I ≈ bm·bn / (bm + bn)
    bm, bn = 128, 256
    assert bm * bn / (bm + bn) == pytest.approx(85.33, rel=1e-3)
    assert math.isclose(ops.matmul(bm, bn, 10**7, "bf16").flops / (10**7 * (bm + bn) * 2), bm * bn / (bm + bn))
