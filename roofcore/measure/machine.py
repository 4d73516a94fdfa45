"""The machine measured: the CPU's model and vendor (never the host name), numpy's BLAS, and the short GPU pass
(PyTorch, else CuPy, only when importable and a device is present)."""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType

import numpy as np

from .results import GpuResult, MeasuredCeiling, Progress


def cpu_info() -> tuple[str, str]:
    """(model name, vendor) without the host name: /proc/cpuinfo on Linux, else platform."""
    model, vendor = "", ""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            key = key.strip().lower()
            if key == "model name" and not model:
                model = " ".join(value.split())
            elif key == "vendor_id" and not vendor:
                vendor = {"AuthenticAMD": "AMD", "GenuineIntel": "Intel"}.get(value.strip(), value.strip())
    except OSError:
        pass
    model = model or platform.processor() or platform.machine() or "CPU"
    if not vendor:
        low = model.lower()
        vendor = next((v for v in ("AMD", "Intel", "Apple", "Arm") if v.lower() in low), "unknown")
    return model, vendor


def blas_name() -> str:
    try:
        cfg = np.show_config(mode="dicts")  # numpy >= 1.26
        return str(cfg["Build Dependencies"]["blas"]["name"])
    except Exception:  # older numpy, or an unusual build
        return "BLAS"


def gpu_measure(quick: bool, progress: Progress | None) -> GpuResult | None:
    """A large device copy and matmuls with PyTorch, else CuPy; None when neither sees a GPU."""
    try:
        import torch  # type: ignore[import-not-found]

        if torch.cuda.is_available():
            return _torch_measure(torch, quick)
    except Exception:  # no torch, or a broken CUDA setup: skip the GPU
        pass
    try:
        import cupy  # type: ignore[import-not-found]

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return _cupy_measure(cupy, quick)
    except Exception:
        pass
    return None


def _gpu_time(fn: Callable[[], object], sync: Callable[[], object], trials: int) -> float:
    fn()
    sync()
    best = math.inf
    for _ in range(trials):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def _torch_measure(torch: ModuleType, quick: bool) -> GpuResult:
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    nbytes = (256 if quick else 1024) * 2**20
    src = torch.ones(nbytes // 4, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    bw = 2 * nbytes / _gpu_time(lambda: dst.copy_(src), sync, 5)
    matrix = torch.cuda.get_device_capability(dev) >= (7, 0)  # tensor cores from Volta on
    tf32 = bool(torch.backends.cuda.matmul.allow_tf32)
    n = 4096 if quick else 8192
    ceilings = []
    for prec, dtype, unit in (("fp32", torch.float32, "matrix" if tf32 else "vector"),
                              ("fp16", torch.float16, "matrix" if matrix else "vector"),
                              ("bf16", torch.bfloat16, "matrix" if matrix else "vector")):
        try:
            x = torch.randn(n, n, device=dev).to(dtype)
            y = torch.randn(n, n, device=dev).to(dtype)
            t = _gpu_time(partial(torch.matmul, x, y), sync, 5)
        except Exception:  # a precision this GPU does not run
            continue
        key = "tf32" if prec == "fp32" and tf32 else prec
        ceilings.append(MeasuredCeiling(key, unit, 2.0 * n**3 / t, f"torch.matmul {n}x{n}"))
    return GpuResult(backend="torch", name=torch.cuda.get_device_name(dev), bandwidth=bw, ceilings=tuple(ceilings))


def _cupy_measure(cupy: ModuleType, quick: bool) -> GpuResult:
    sync = cupy.cuda.Device().synchronize
    nbytes = (256 if quick else 1024) * 2**20
    src = cupy.ones(nbytes // 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    bw = 2 * nbytes / _gpu_time(lambda: cupy.copyto(dst, src), sync, 5)
    n = 4096 if quick else 8192
    x = cupy.random.standard_normal((n, n), dtype=cupy.float32)
    y = cupy.random.standard_normal((n, n), dtype=cupy.float32)
    t = _gpu_time(lambda: cupy.matmul(x, y), sync, 5)
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props.get("name"), bytes) else str(props.get("name", "GPU"))
    return GpuResult(backend="cupy", name=name, bandwidth=bw,
                     ceilings=(MeasuredCeiling("fp32", "vector", 2.0 * n**3 / t, f"cupy.matmul {n}x{n}"),))

