"""The CPU kernels and their timing: the copy-bandwidth sweep, the FLOPs-per-element sweep, the matmul (numpy)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from ..units import fmt_bandwidth, fmt_bytes, fmt_rate
from .results import BandwidthPoint, ComputePoint, MatmulPoint, Progress


def _best_time(fn: Callable[[], object], calls: int, trials: int) -> float:
    """Best-of-``trials`` seconds per call, each trial making ``calls`` calls."""
    best = math.inf
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def _calls_for(fn: Callable[[], object], min_time: float) -> int:
    """How many calls make one trial last at least ``min_time`` (after one warm-up call)."""
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    return max(1, math.ceil(min_time / once))


def _copy_overhead(trials: int) -> float:
    """Seconds numpy spends per ``copyto`` call beyond moving the bytes (a 16-byte copy)."""
    src, dst = np.ones(2), np.empty(2)
    return _best_time(lambda: np.copyto(dst, src), 2000, max(trials, 5))


def working_set_sizes(lo: int, hi: int, steps_per_octave: int) -> list[int]:
    """Geometric working-set sizes from ``lo`` to ``hi`` bytes, rounded to whole 64-byte lines."""
    n = round(math.log2(hi / lo) * steps_per_octave)
    out = sorted({int(lo * 2 ** (i / steps_per_octave)) // 128 * 128 for i in range(n + 1)})
    return out


def bandwidth_sweep(sizes: list[int], *, min_time: float, trials: int,
                    progress: Progress | None = None) -> tuple[BandwidthPoint, ...]:
    """Copy bandwidth per working set (bytes of src + dst); see the module docstring for the counting."""
    overhead = _copy_overhead(trials)
    points = []
    for ws in sizes:
        n = max(1, ws // 16)  # two float64 arrays
        src = np.ones(n)
        dst = np.zeros(n)

        def kernel(src: np.ndarray = src, dst: np.ndarray = dst) -> None:
            np.copyto(dst, src)

        calls = _calls_for(kernel, min_time)
        t = _best_time(kernel, calls, trials)
        net = max(t - overhead, t * 0.02)
        points.append(BandwidthPoint(working_set=2 * n * 8, bytes_per_s=2 * n * 8 / net,
                                     overhead_share=min(1.0, overhead / t)))
        if progress:
            progress(f"bandwidth {fmt_bytes(2 * n * 8):>10s}: {fmt_bandwidth(points[-1].bytes_per_s)}")
        del src, dst
    return tuple(points)


def compute_sweep(precision: str, *, n: int, min_time: float, trials: int, max_fmas: int = 64,
                  progress: Progress | None = None) -> tuple[ComputePoint, ...]:
    """ERT's FLOPs-per-element sweep: ``k`` multiply-adds per element of an in-cache array, 2 FLOP each."""
    dtype = np.dtype("float64" if precision == "fp64" else "float32")
    a = np.full(n, 0.5, dtype=dtype)
    b = np.full(n, 0.5, dtype=dtype)  # a*b + c with a = 0.5, b = 0.5, c = 0.25 stays 0.5: no overflow, no denormals
    c = np.full(n, 0.25, dtype=dtype)
    points = []
    k = 1
    while k <= max_fmas:
        def kernel(k: int = k) -> None:
            for _ in range(k):
                np.multiply(a, b, out=a)
                np.add(a, c, out=a)

        calls = _calls_for(kernel, min_time)
        t = _best_time(kernel, calls, trials)
        points.append(ComputePoint(precision=precision, flops_per_element=2 * k, flops_per_s=2 * k * n / t))
        if progress:
            progress(f"{precision} {2 * k:3d} FLOP/element: {fmt_rate(points[-1].flops_per_s)}")
        k *= 2
    return tuple(points)


def matmul_rate(precision: str, *, n: int, trials: int) -> MatmulPoint:
    """``np.matmul`` of two n x n matrices, 2 n^3 FLOP, best of ``trials``."""
    dtype = np.dtype("float64" if precision == "fp64" else "float32")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, n)).astype(dtype)
    y = rng.standard_normal((n, n)).astype(dtype)
    out = np.empty((n, n), dtype=dtype)
    np.matmul(x, y, out=out)  # warm-up: threads, pages
    t = _best_time(lambda: np.matmul(x, y, out=out), 1, trials)
    return MatmulPoint(precision=precision, n=n, flops_per_s=2.0 * n**3 / t)

