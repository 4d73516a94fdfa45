"""Measure this machine's own ceilings: an ERT-style empirical micro-benchmark (``roofline measure``).

What it runs (numpy, on the CPU; see :func:`measure`):

* **Bandwidth sweep.** A streaming copy ``np.copyto(dst, src)`` over working sets (``src`` + ``dst``)
  from tens of KiB to hundreds of MiB in geometric steps. Bytes are counted the STREAM way, bytes
  read + bytes written = 2 x the array size per copy; the write-allocate read of ``dst`` that a CPU
  cache adds is not counted, so the figure is the bandwidth a copying kernel *sees*. Each size is
  repeated until a minimum time and the best of several trials is kept. numpy's per-call overhead
  (about a microsecond) is measured on a tiny copy and subtracted; sizes where it is more than half of
  the time are kept in the curve but flagged and not used for plateaus, which is why the smallest
  cache (L1) is usually not resolved from Python.
* **Plateaus.** The curve is cut into runs of similar bandwidth (within ``_RUN_TOL`` of each other).
  The run at the largest sizes is main memory; its value is the best of its three largest sizes (a
  best-of-trials over them: noise only ever slows a copy down). A run at smaller working sets becomes
  an on-chip level when its bandwidth is at least ``LEVEL_RATIO`` times the level below it. Levels are
  named after the caches the OS reports (Linux sysfs: the smallest cache that holds the plateau's
  working sets; where several runs land on one cache the widest is its plateau), else ``l1``, ``l2``,
  ``l3`` by order. A level's capacity is the largest working set still on its plateau, a lower bound
  to within one sweep step.
* **Compute sweep.** ERT's FLOPs-per-element sweep: an in-cache array updated with ``k`` fused
  multiply-adds per element (``a = a * b + c``, 2 FLOP each), ``k = 1, 2, 4, ... 64``, in fp64 and
  fp32. numpy runs each multiply and add as its own pass over cached data, so this measures numpy's
  elementwise rate, not the FMA units' peak.
* **Matmul.** A large ``np.matmul`` in fp64 and fp32 (numpy's BLAS, all cores). On a CPU it runs on
  the same SIMD FMA units as the elementwise code (there is no matrix engine), so both are ``vector``
  ceilings; the ceiling is the higher of the two, which is the matmul, and the elementwise rate is
  kept in the notes.

On a GPU (PyTorch, else CuPy, only if importable and a device is present) a short extra pass measures
a large device-to-device copy and matmuls, written as a second device.

:func:`to_catalog_yaml` writes the result as a catalog device (``catalogs/README.md`` grammar) with
every figure ``measured: true``. The measured value is given as both ``peak`` and ``achievable``: a
measured device has no datasheet peak, and the loader needs a peak for the roof; using the
measurement for both means ``--achievable`` and the default roofs agree for this device. The output
names the CPU model and the date, never the host name or a path.

The package: :mod:`.sweeps` holds the CPU kernels, :mod:`.plateaus` reads levels off the bandwidth curve,
:mod:`.machine` names the CPU and runs the GPU pass, :mod:`.catalog_yaml` writes the catalog device,
:mod:`.results` the dataclasses they share.
"""

from __future__ import annotations

import datetime as _dt
import os
import time

import numpy as np

from ..units import fmt_rate
from .catalog_yaml import to_catalog_dict, to_catalog_yaml
from .machine import blas_name, cpu_info, gpu_measure
from .plateaus import LEVEL_RATIO, find_plateaus
from .results import (
    BandwidthPoint,
    ComputePoint,
    GpuResult,
    MatmulPoint,
    MeasuredCeiling,
    MeasureResult,
    Plateau,
    Progress,
)
from .sweeps import bandwidth_sweep, compute_sweep, matmul_rate, working_set_sizes


def measure(quick: bool = False, progress: Progress | None = None, *, gpu: bool = True) -> MeasureResult:
    """Run the benchmark. ``quick``: a few seconds (for tests); full: under a minute on a 2-core machine.

    ``progress`` receives one line per measurement. Single-threaded numpy for the sweeps (what one numpy
    kernel sees); numpy's BLAS uses every core for the matmul.
    """
    start = time.perf_counter()
    if quick:
        sizes = working_set_sizes(64 * 2**10, 512 * 2**20, 1)
        min_time, trials, mm_n, cs_n = 0.002, 5, 768, 16384
    else:
        sizes = working_set_sizes(16 * 2**10, 512 * 2**20, 2)
        min_time, trials, mm_n, cs_n = 0.03, 7, 2048, 16384
    bw = bandwidth_sweep(sizes, min_time=min_time, trials=trials, progress=progress)
    levels = find_plateaus(bw)
    compute: list[ComputePoint] = []
    matmul: list[MatmulPoint] = []
    ceilings: list[MeasuredCeiling] = []
    for prec in ("fp64", "fp32"):
        sweep = compute_sweep(prec, n=cs_n, min_time=min_time, trials=trials,
                              max_fmas=16 if quick else 64, progress=progress)
        compute += sweep
        mm = matmul_rate(prec, n=mm_n, trials=trials)
        matmul.append(mm)
        if progress:
            progress(f"{prec} matmul {mm.n}x{mm.n}: {fmt_rate(mm.flops_per_s)}")
        elem = max(p.flops_per_s for p in sweep)
        if mm.flops_per_s >= elem:
            how = f"numpy matmul {mm.n}x{mm.n}; elementwise FMA sweep {fmt_rate(elem)}"
        else:
            how = f"numpy elementwise FMA sweep; matmul {mm.n}x{mm.n} {fmt_rate(mm.flops_per_s)}"
        ceilings.append(MeasuredCeiling(prec, "vector", max(mm.flops_per_s, elem), how))
    gpu_result = gpu_measure(quick, progress) if gpu else None
    model, vendor = cpu_info()
    cores = os.cpu_count() or 1
    return MeasureResult(
        description=f"{model}, {cores} logical cores, numpy {np.__version__} with {blas_name()}",
        vendor=vendor, date=_dt.date.today().isoformat(), quick=quick, seconds=time.perf_counter() - start,
        bandwidth=bw, levels=levels, compute=tuple(compute), matmul=tuple(matmul), ceilings=tuple(ceilings),
        gpu=gpu_result, cores=cores,
    )



__all__ = ["LEVEL_RATIO", "BandwidthPoint", "ComputePoint", "GpuResult", "MatmulPoint", "MeasureResult",
           "MeasuredCeiling", "Plateau", "Progress", "bandwidth_sweep", "compute_sweep", "find_plateaus",
           "matmul_rate", "measure", "to_catalog_dict", "to_catalog_yaml"]
