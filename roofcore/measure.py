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
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from .units import fmt_bandwidth, fmt_bytes, fmt_rate

#: an on-chip level must be at least this many times faster than the level below it
LEVEL_RATIO = 1.3
#: points whose bandwidths are all within this factor of each other form one run
_RUN_TOL = 1.25
#: a point is overhead-bound (not used for plateaus) when numpy's call overhead is above this share of its time
_MAX_OVERHEAD = 0.5

Progress = Callable[[str], None]


# ------------------------------------------------------------------------------------------------ results


@dataclass(frozen=True)
class BandwidthPoint:
    """One working-set size of the bandwidth sweep."""

    working_set: int  #: bytes of src + dst
    bytes_per_s: float  #: (read + written) / time, per-call overhead removed
    overhead_share: float  #: share of the raw time that was numpy's per-call overhead

    @property
    def reliable(self) -> bool:
        return self.overhead_share <= _MAX_OVERHEAD


@dataclass(frozen=True)
class Plateau:
    """A memory level found in the bandwidth curve."""

    level: str  #: catalog level name: ``hbm`` for main memory, else ``l1``/``l2``/``l3``...
    bandwidth: float  #: B/s
    smallest: int  #: smallest working set (bytes) on the plateau
    largest: int  #: largest working set (bytes) on the plateau = the capacity estimate
    os_cache: int | None = None  #: the size the OS reports for the cache this level was matched to


@dataclass(frozen=True)
class ComputePoint:
    """One point of the FLOPs-per-element sweep."""

    precision: str
    flops_per_element: int
    flops_per_s: float


@dataclass(frozen=True)
class MatmulPoint:
    precision: str
    n: int  #: square size
    flops_per_s: float


@dataclass(frozen=True)
class MeasuredCeiling:
    precision: str
    unit: str
    flops_per_s: float
    how: str  #: one line: which kernel set it


@dataclass(frozen=True)
class GpuResult:
    """The short GPU pass (absent on machines without one)."""

    backend: str  #: "torch" or "cupy"
    name: str
    bandwidth: float  #: large device-to-device copy, (read + written) / time
    ceilings: tuple[MeasuredCeiling, ...]


@dataclass(frozen=True)
class MeasureResult:
    """Everything :func:`measure` found; ``levels[0]`` is main memory, then on-chip levels, slowest first."""

    description: str  #: the CPU, its core count, numpy's BLAS; no host name
    vendor: str
    date: str  #: ISO date
    quick: bool
    seconds: float
    bandwidth: tuple[BandwidthPoint, ...]
    levels: tuple[Plateau, ...]
    compute: tuple[ComputePoint, ...]
    matmul: tuple[MatmulPoint, ...]
    ceilings: tuple[MeasuredCeiling, ...]
    gpu: GpuResult | None = None
    cores: int = field(default=1)

    @property
    def main_memory(self) -> Plateau:
        return self.levels[0]

    def elementwise(self, precision: str) -> float:
        """The best rate of the FLOPs-per-element sweep for one precision (0 if not measured)."""
        return max((p.flops_per_s for p in self.compute if p.precision == precision), default=0.0)

    def matmul_rate(self, precision: str) -> float:
        return max((p.flops_per_s for p in self.matmul if p.precision == precision), default=0.0)

    def summary(self) -> str:
        """A few lines for the terminal."""
        lines = [f"{self.description}, {self.date} ({'quick' if self.quick else 'full'} run, {self.seconds:.0f} s)"]
        for p in self.levels:
            what = "main memory" if p.level == "hbm" else f"{p.level} (working sets up to {fmt_bytes(p.largest)})"
            lines.append(f"  {what:44s} {fmt_bandwidth(p.bandwidth)}")
        for c in self.ceilings:
            lines.append(f"  {c.precision}-{c.unit:37s} {fmt_rate(c.flops_per_s)}  ({c.how})")
        if self.gpu:
            lines.append(f"  GPU {self.gpu.name} ({self.gpu.backend}): memory {fmt_bandwidth(self.gpu.bandwidth)}, "
                         + ", ".join(f"{c.precision}-{c.unit} {fmt_rate(c.flops_per_s)}" for c in self.gpu.ceilings))
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ timing


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


# ------------------------------------------------------------------------------------------------ sweeps


def _sizes(lo: int, hi: int, steps_per_octave: int) -> list[int]:
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

        def kernel(src=src, dst=dst):
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
        def kernel(k=k):
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


# ------------------------------------------------------------------------------------------------ plateaus


def _os_caches() -> list[tuple[int, int]]:
    """(level, size in bytes) of the data caches the OS reports for CPU 0 (Linux sysfs; [] elsewhere)."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    out = []
    try:
        for d in sorted(base.glob("index*")):
            kind = (d / "type").read_text().strip()
            if kind not in ("Data", "Unified"):
                continue
            level = int((d / "level").read_text().strip())
            size_text = (d / "size").read_text().strip().upper()
            mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size_text[-1:], 1)
            out.append((level, int(size_text.rstrip("KMG")) * mult))
    except (OSError, ValueError):
        return []
    return sorted(set(out))


def find_plateaus(points: tuple[BandwidthPoint, ...], *, ratio: float = LEVEL_RATIO,
                  os_caches: list[tuple[int, int]] | None = None) -> tuple[Plateau, ...]:
    """Main memory first, then on-chip levels from the largest working set to the smallest (see module doc)."""
    pts = sorted((p for p in points if p.reliable), key=lambda p: p.working_set)
    if not pts:
        raise ValueError("no bandwidth point was long enough to measure; use larger working sets")
    # runs of similar bandwidth, walking from the largest working set down
    runs: list[list[BandwidthPoint]] = []
    i = len(pts) - 1
    while i >= 0:
        run = [pts[i]]
        j = i - 1
        while j >= 0:
            values = [p.bytes_per_s for p in run] + [pts[j].bytes_per_s]
            if max(values) / min(values) > _RUN_TOL:
                break
            run.append(pts[j])
            j -= 1
        runs.append(run)
        i = j
    main_run = runs[0]
    largest = sorted(main_run, key=lambda p: p.working_set)[-3:]
    main = Plateau(level="hbm", bandwidth=max(p.bytes_per_s for p in largest),
                   smallest=min(p.working_set for p in main_run), largest=max(p.working_set for p in main_run))
    # candidate on-chip plateaus, smallest working set first; a lone point between two plateaus is a transition
    wide = [run for run in reversed(runs[1:]) if len(run) >= 2]
    cands = [Plateau(level="", bandwidth=statistics.median(p.bytes_per_s for p in run),
                     smallest=min(p.working_set for p in run), largest=max(p.working_set for p in run))
             for run in wide]
    caches = sorted(os_caches if os_caches is not None else _os_caches(), key=lambda c: (c[1], c[0]))
    if caches:
        # name each plateau after the smallest cache the OS reports that holds its working sets; where several
        # plateaus land on one cache, the widest (most sizes; then the fastest) is that cache's plateau, the
        # others are transitions
        best: dict[int, tuple[Plateau, int]] = {}
        for run, cand in zip(wide, cands, strict=True):
            cache = next((c for c in caches if c[1] >= cand.largest), None)
            if cache is None:
                continue
            named = Plateau(level=f"l{cache[0]}", bandwidth=cand.bandwidth, smallest=cand.smallest,
                            largest=cand.largest, os_cache=cache[1])
            old = best.get(cache[0])
            if old is None or (len(run), named.bandwidth) > (old[1], old[0].bandwidth):
                best[cache[0]] = (named, len(run))
        cands = sorted((p for p, _ in best.values()), key=lambda p: p.largest)
    # keep, from main memory upwards, each plateau at least `ratio` times faster than the level below it
    kept: list[Plateau] = []
    for cand in reversed(cands):
        if cand.bandwidth >= ratio * (kept[-1] if kept else main).bandwidth:
            kept.append(cand)
    if not caches:
        kept = [Plateau(level=f"l{len(kept) - i}", bandwidth=p.bandwidth, smallest=p.smallest, largest=p.largest)
                for i, p in enumerate(kept)]
    # catalog order: main memory first, then on-chip levels from the largest (slowest) to the smallest
    return (main, *kept)


# ------------------------------------------------------------------------------------------------ machine


def _cpu_info() -> tuple[str, str]:
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


def _blas_name() -> str:
    try:
        cfg = np.show_config(mode="dicts")  # numpy >= 1.26
        return str(cfg["Build Dependencies"]["blas"]["name"])
    except Exception:  # older numpy, or an unusual build
        return "BLAS"


# ------------------------------------------------------------------------------------------------ GPU


def _gpu_measure(quick: bool, progress: Progress | None) -> GpuResult | None:
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


def _torch_measure(torch, quick: bool) -> GpuResult:
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
            t = _gpu_time(lambda x=x, y=y: torch.matmul(x, y), sync, 5)
        except Exception:  # a precision this GPU does not run
            continue
        key = "tf32" if prec == "fp32" and tf32 else prec
        ceilings.append(MeasuredCeiling(key, unit, 2.0 * n**3 / t, f"torch.matmul {n}x{n}"))
    return GpuResult(backend="torch", name=torch.cuda.get_device_name(dev), bandwidth=bw, ceilings=tuple(ceilings))


def _cupy_measure(cupy, quick: bool) -> GpuResult:
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


# ------------------------------------------------------------------------------------------------ driver


def measure(quick: bool = False, progress: Progress | None = None, *, gpu: bool = True) -> MeasureResult:
    """Run the benchmark. ``quick``: a few seconds (for tests); full: under a minute on a 2-core machine.

    ``progress`` receives one line per measurement. Single-threaded numpy for the sweeps (what one numpy
    kernel sees); numpy's BLAS uses every core for the matmul.
    """
    start = time.perf_counter()
    if quick:
        sizes = _sizes(64 * 2**10, 512 * 2**20, 1)
        min_time, trials, mm_n, cs_n = 0.002, 5, 768, 16384
    else:
        sizes = _sizes(16 * 2**10, 512 * 2**20, 2)
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
    gpu_result = _gpu_measure(quick, progress) if gpu else None
    model, vendor = _cpu_info()
    cores = os.cpu_count() or 1
    return MeasureResult(
        description=f"{model}, {cores} logical cores, numpy {np.__version__} with {_blas_name()}",
        vendor=vendor, date=_dt.date.today().isoformat(), quick=quick, seconds=time.perf_counter() - start,
        bandwidth=bw, levels=levels, compute=tuple(compute), matmul=tuple(matmul), ceilings=tuple(ceilings),
        gpu=gpu_result, cores=cores,
    )


# ------------------------------------------------------------------------------------------------ catalog


def _qty(value: float, unit: str) -> str:
    """A quantity string the catalog loader reads back, to 4 significant digits (e.g. "33.12 GB/s")."""
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.4g} {prefix}{unit}"
    return f"{value:.4g} {unit}"


def _capacity(nbytes: int) -> str:
    for factor, prefix in ((2**30, "Gi"), (2**20, "Mi"), (2**10, "Ki")):
        if nbytes >= factor:
            return f"{nbytes / factor:.4g} {prefix}B"
    return f"{nbytes} B"


def _measured(value: str, source: str = "M1") -> dict:
    # a measured device has no datasheet peak: the measurement is its roof and its achievable value alike
    return {"peak": value, "achievable": value, "source": source, "measured": True}


def to_catalog_dict(result: MeasureResult, *, hw_id: str = "this-machine", name: str | None = None) -> dict:
    """The result as a catalog document (``catalogs/README.md`` grammar); see :func:`to_catalog_yaml`."""
    compute = []
    for c in result.ceilings:
        e = {"precision": c.precision, "unit": c.unit} | _measured(_qty(c.flops_per_s, "FLOP/s"))
        e["notes"] = c.how
        compute.append(e)
    memory = []
    for p in result.levels:
        bw = _qty(p.bandwidth, "B/s")
        e = {"level": p.level, "label": "DRAM" if p.level == "hbm" else f"{p.level.upper()} cache",
             "bandwidth": bw, "achievable": bw, "source": "M1", "measured": True}
        if p.level == "hbm":
            e["notes"] = (f"numpy copy, one thread, working sets {_capacity(p.smallest)} to {_capacity(p.largest)}; "
                          "bytes read + written (STREAM counting, write-allocate not counted)")
        else:
            e["capacity"] = _capacity(p.largest)
            os_note = f"; the OS reports {_capacity(p.os_cache)}" if p.os_cache else ""
            e["notes"] = (f"numpy copy, one thread, plateau over working sets {_capacity(p.smallest)} to "
                          f"{_capacity(p.largest)}; capacity = the largest working set on the plateau{os_note}")
        memory.append(e)
    model = result.description.split(",")[0]
    devices = [{
        "id": hw_id,
        "name": name or f"{model} (measured)",
        "vendor": result.vendor,
        "kind": "cpu",
        "config": (f"as measured: bandwidth and elementwise sweeps on one thread, matmul on numpy's BLAS "
                   f"with {result.cores} logical cores"),
        "default_ceiling": "fp64-vector",
        "notes": ("Measured by `roofline measure` (ERT-style, numpy). Peak and achievable are both the measured "
                  "value: there is no datasheet peak. On-chip levels are the bandwidth plateaus at small working "
                  "sets; numpy's per-call overhead hides the smallest cache."),
        "compute": compute,
        "memory": memory,
    }]
    g = result.gpu
    if g is not None and g.ceilings:
        gbw = _qty(g.bandwidth, "B/s")
        devices.append({
            "id": f"{hw_id}-gpu", "name": f"{g.name} (measured)", "vendor": _gpu_vendor(g.name),
            "kind": "gpu", "config": f"as measured with {g.backend}",
            "notes": "Measured by `roofline measure` with a device copy and matmuls; peak = achievable = measured.",
            "compute": [{"precision": c.precision, "unit": c.unit} | _measured(_qty(c.flops_per_s, "FLOP/s"))
                        | {"notes": c.how} for c in g.ceilings],
            "memory": [{"level": "hbm", "label": "device memory", "bandwidth": gbw, "achievable": gbw,
                        "source": "M1", "measured": True, "notes": "large device-to-device copy, bytes read + written"}],
        })
    return {
        "schema_version": 1,
        "sources": {"M1": f"roofline measure on {result.description}, {result.date}"},
        "devices": devices,
    }


def _gpu_vendor(name: str) -> str:
    low = name.lower()
    return "AMD" if ("amd" in low or "instinct" in low or "radeon" in low) else "NVIDIA"


def to_catalog_yaml(result: MeasureResult, *, hw_id: str = "this-machine", name: str | None = None) -> str:
    """A catalog YAML file with the measured device (and a ``-gpu`` one when a GPU was measured).

    Every figure is ``measured: true`` with ``peak`` = ``achievable`` = the measurement; it loads with
    :func:`roofcore.catalog.load_bytes` and goes next to the theoretical catalogs with ``--catalog``.
    """
    header = ("# Measured by `roofline measure` (roofcore.measure). Peak and achievable are both the measured value:\n"
              "# a measured device has no datasheet peak. Load it with `roofline --catalog FILE ...`.\n")
    return header + yaml.safe_dump(to_catalog_dict(result, hw_id=hw_id, name=name), sort_keys=False,
                                   allow_unicode=True, width=120)
