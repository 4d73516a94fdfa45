"""`roofline measure`: the ERT-style micro-benchmark (quick mode) and the catalog device it writes."""

from __future__ import annotations

import os
import socket
import time

import numpy as np
import pytest
import yaml

from roofcore.catalog import load_bytes
from roofcore.measure import (
    BandwidthPoint,
    MeasuredCeiling,
    MeasureResult,
    Plateau,
    find_plateaus,
    measure,
    to_catalog_yaml,
)

KiB, MiB = 2**10, 2**20


def _plain_copy_bandwidth(trials: int = 15) -> float:
    """What a plain large numpy copy achieves here: 2 x the array size per copy, best of several."""
    src = np.ones(16 * MiB)  # 128 MiB per array, far beyond any cache
    dst = np.zeros_like(src)
    np.copyto(dst, src)
    best = float("inf")
    for _ in range(trials):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.nbytes / best


def _agrees(result: MeasureResult, refs: tuple[float, float]) -> bool:
    # within a factor of 2: on a 2-core VM with a 32 MiB L3 the benchmark's streaming kernels and numpy's copy of
    # 128 MiB arrays (which counts 2 bytes per element moved, not the write-allocate read) were seen 1.5-1.7x apart
    # (27.5 and 30.6 vs 18-19 GB/s, 2026-11-27); a plateau taken in a cache instead of main memory is several
    # times off and still fails
    return any(0.5 <= result.main_memory.bandwidth / ref <= 2.0 for ref in refs)


@pytest.fixture(scope="module")
def run():
    # the reference copy is taken just before and just after the benchmark, and a busy moment on a shared
    # CI machine gets up to two more attempts: both sides are timings, and other jobs slow either one
    for _ in range(3):
        before = _plain_copy_bandwidth()
        result = measure(quick=True, gpu=False)
        after = _plain_copy_bandwidth()
        if _agrees(result, (before, after)):
            break
    return result, (before, after)


@pytest.fixture(scope="module")
def device(run):
    text = to_catalog_yaml(run[0], hw_id="this-machine", name="This machine")
    [(hw, overrides)] = load_bytes(text.encode(), "measured.yaml")
    assert not overrides
    return hw, text


def test_main_memory_matches_a_plain_numpy_copy(run, device):
    result, refs = run
    hw, _ = device
    bw = hw.offchip.bandwidth
    assert hw.offchip.name == "hbm" and hw.offchip.label == "DRAM"
    assert bw == pytest.approx(result.main_memory.bandwidth, rel=1e-3)
    assert _agrees(result, refs), (bw, refs)


def test_cache_levels_are_higher_roofs_than_main_memory(run, device):
    hw, _ = device
    onchip = hw.levels[1:]
    assert [lv.name for lv in onchip] == sorted(lv.name for lv in onchip)[::-1]  # e.g. l3, l2, l1
    for lower, upper in zip(hw.levels, hw.levels[1:], strict=False):
        assert upper.bandwidth >= 1.3 * lower.bandwidth * 0.999
    for lv in onchip:
        assert 0 < lv.capacity <= 512 * MiB  # the largest working set on its plateau
    # (whether the smallest working sets ran faster than main memory is a timing of this machine at this moment:
    # under load it came out at a sixth of DRAM's rate, so it is not asserted; the levels above are the finding)


def test_yaml_loads_with_measured_figures_and_no_private_text(device):
    hw, text = device
    assert hw.id == "this-machine" and hw.kind.value == "cpu" and hw.name == "This machine"
    doc = yaml.safe_load(text)
    assert doc["schema_version"] == 1 and list(doc["sources"]) == ["M1"]
    assert doc["sources"]["M1"].startswith("roofline measure on ")
    for c in hw.ceilings:
        assert c.figure.measured and c.achievable == c.peak
    for lv in hw.levels:
        assert lv.figure.measured and lv.achievable == lv.bandwidth
    host = socket.gethostname()
    if len(host) >= 4:
        assert host not in text
    assert os.getcwd() not in text and os.path.expanduser("~") not in text


def test_compute_ceilings(run, device):
    result, _ = run
    hw, _ = device
    assert {c.key for c in hw.ceilings} == {"fp64-vector", "fp32-vector"}
    assert hw.default_ceiling == "fp64-vector"
    assert all(c.peak > 0 for c in hw.ceilings)
    # both measured (no ordering between them: on a loaded machine a matmul can come out below the FMA sweep)
    assert result.matmul_rate("fp64") > 0 and result.elementwise("fp64") > 0
    assert result.elementwise("fp32") > 0
    # the sweep counts 2 FLOP per multiply-add and rises (or holds) with FLOPs per element
    fp64 = [p for p in result.compute if p.precision == "fp64"]
    assert [p.flops_per_element for p in fp64] == [2 * 2**i for i in range(len(fp64))]


# ------------------------------------------------------------------------------------ deterministic parts


def _curve(*segments: tuple[int, int, float]) -> tuple[BandwidthPoint, ...]:
    """Points at powers of two from segments of (first working set, last working set, B/s)."""
    out = []
    for lo, hi, bw in segments:
        ws = lo
        while ws <= hi:
            out.append(BandwidthPoint(working_set=ws, bytes_per_s=bw, overhead_share=0.1))
            ws *= 2
    return tuple(out)


def test_find_plateaus_by_order_and_by_the_os_caches():
    curve = _curve((32 * KiB, 256 * KiB, 400e9), (512 * KiB, 512 * KiB, 250e9), (1 * MiB, 8 * MiB, 150e9),
                   (16 * MiB, 32 * MiB, 140e9), (64 * MiB, 512 * MiB, 30e9))
    by_order = find_plateaus(curve, os_caches=[])
    assert [p.level for p in by_order] == ["hbm", "l2", "l1"]
    assert by_order[0].bandwidth == 30e9 and by_order[1].bandwidth == 150e9 and by_order[2].bandwidth == 400e9
    assert by_order[1].largest == 32 * MiB and by_order[2].largest == 256 * KiB
    by_os = find_plateaus(curve, os_caches=[(1, 48 * KiB), (2, 1 * MiB), (3, 32 * MiB)])
    assert [p.level for p in by_os] == ["hbm", "l3", "l2"]
    assert by_os[2].os_cache == 1 * MiB and by_os[1].os_cache == 32 * MiB
    # overhead-bound points are not plateaus; a level barely above the one below it is not a level
    noisy = (BandwidthPoint(16 * KiB, 900e9, 0.9), *_curve((32 * KiB, 1 * MiB, 35e9), (2 * MiB, 512 * MiB, 30e9)))
    assert [p.level for p in find_plateaus(noisy, os_caches=[])] == ["hbm"]


def test_catalog_yaml_from_a_synthetic_result_with_a_gpu():
    from roofcore.measure import GpuResult

    result = MeasureResult(
        description="Some CPU, 8 logical cores, numpy 2 with OpenBLAS", vendor="Intel", date="2026-01-01",
        quick=True, seconds=1.0, bandwidth=(), compute=(), matmul=(),
        levels=(Plateau("hbm", 20e9, 64 * MiB, 512 * MiB), Plateau("l2", 80e9, 256 * KiB, 1 * MiB, 1 * MiB)),
        ceilings=(MeasuredCeiling("fp64", "vector", 1.234567e11, "numpy matmul"),
                  MeasuredCeiling("fp32", "vector", 2.5e11, "numpy matmul")),
        gpu=GpuResult("torch", "NVIDIA H100 80GB HBM3", 3.0e12,
                      (MeasuredCeiling("bf16", "matrix", 7.0e14, "torch.matmul 8192x8192"),)),
    )
    devices = load_bytes(to_catalog_yaml(result, hw_id="box").encode(), "synthetic.yaml")
    cpu, gpu = (hw for hw, _ in devices)
    assert cpu.id == "box" and cpu.levels[1].capacity == 1 * MiB and cpu.ceiling_map["fp64-vector"].peak == 1.235e11
    assert gpu.id == "box-gpu" and gpu.vendor == "NVIDIA" and gpu.offchip.bandwidth == 3.0e12
    assert gpu.ceilings[0].key == "bf16-matrix"
