"""What the micro-benchmark finds: the points of each sweep, the plateaus, the ceilings, and the whole result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..units import fmt_bandwidth, fmt_bytes, fmt_rate

#: a point is overhead-bound (not used for plateaus) when numpy's call overhead is above this share of its time
_MAX_OVERHEAD = 0.5

Progress = Callable[[str], None]



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

