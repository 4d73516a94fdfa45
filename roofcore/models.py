"""Domain values: frozen dataclasses and enums, validated on construction. Units in base SI units.

Hardware and single results are dataclasses; kernels live in a DataFrame (:class:`Workload`) so the
math stays vectorised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .errors import InputError, RoofcoreError

if TYPE_CHECKING:
    import pandas as pd


class Precision(StrEnum):
    """Numeric formats a compute ceiling is quoted for."""

    FP64 = "fp64"
    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    FP4 = "fp4"

    @property
    def size(self) -> float:
        """Bytes per element in memory (tf32 is stored as fp32)."""
        return DTYPE_SIZE[self.value]


class Unit(StrEnum):
    """Which units execute the math: ``matrix`` = tensor core / MXU / MFMA / MME; ``vector`` = CUDA cores / VPU / VALU."""

    MATRIX = "matrix"
    VECTOR = "vector"


class DeviceKind(StrEnum):
    GPU = "gpu"
    TPU = "tpu"
    NPU = "npu"
    CPU = "cpu"


class Scope(StrEnum):
    """What one catalog device is: a whole package as sold, or one die that software sees as a device."""

    PACKAGE = "package"
    DIE = "die"


#: bytes per element for each dtype name an op or inventory may use
DTYPE_SIZE: dict[str, float] = {
    "fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5, "fp4": 0.5,
}

#: spellings users and profilers write, mapped to our dtype names
DTYPE_ALIASES: dict[str, str] = {
    "float64": "fp64", "double": "fp64", "f64": "fp64",
    "float32": "fp32", "float": "fp32", "f32": "fp32", "single": "fp32",
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "f16": "fp16",
    "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
    "i8": "int8", "i4": "int4", "nvfp4": "fp4", "mxfp4": "fp4",
}

#: the off-chip memory level is always called ``hbm``; these names mean the same level
OFFCHIP = "hbm"
LEVEL_ALIASES: dict[str, str] = {"dram": OFFCHIP, "gddr": OFFCHIP, "ddr": OFFCHIP, "offchip": OFFCHIP, "": OFFCHIP}

#: names that are interconnects rather than memory levels, for messages about kernels' bytes
KNOWN_LINKS = frozenset(
    {"nvlink", "ici", "xgmi", "pcie", "dcn", "roce", "ethernet", "infiniband", "ib", "c2c", "network", "upi", "cxl"}
)


def canonical_dtype(name: object, *, where: str | None = None) -> str:
    """Normalise a dtype or precision name (``"bfloat16"`` -> ``"bf16"``)."""
    text = str(name).strip().lower()
    text = DTYPE_ALIASES.get(text, text)
    if text not in DTYPE_SIZE:
        raise InputError(where=where, expected="a precision: " + ", ".join(DTYPE_SIZE), found=repr(name),
                         hint="aliases such as float32, bfloat16 or half are accepted too.")
    return text


def canonical_level(name: str) -> str:
    text = name.strip().lower()
    return LEVEL_ALIASES.get(text, text)


def ceiling_key(precision: str, unit: str) -> str:
    return f"{precision}-{unit}"


@dataclass(frozen=True)
class Figure:
    """Where a number came from: the source text, and whether it is measured, derived or unverified."""

    source: str
    measured: bool = False
    unverified: bool = False
    derivation: str | None = None
    notes: str | None = None


@dataclass(frozen=True)
class Ceiling:
    """A dense peak compute rate for one precision on one kind of unit."""

    precision: Precision
    unit: Unit
    peak: float  #: FLOP/s, dense (never a 2:4-sparse figure)
    figure: Figure
    sparse: float | None = None  #: FLOP/s with 2:4 structured sparsity, for reference only; never a roof
    achievable: float | None = None  #: FLOP/s, measured sustained (e.g. MAMF)
    achievable_figure: Figure | None = None

    def __post_init__(self) -> None:
        if not (self.peak > 0 and math.isfinite(self.peak)):
            raise RoofcoreError(f"ceiling {self.key}: peak must be a positive FLOP/s, got {self.peak!r}")

    @property
    def key(self) -> str:
        return ceiling_key(self.precision.value, self.unit.value)

    def rate(self, achievable: bool = False) -> float:
        """FLOP/s of this roof: the measured sustained rate when ``achievable`` and known, else the peak."""
        return (self.achievable or self.peak) if achievable else self.peak


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy; the first level of a device is the off-chip one (``hbm``)."""

    name: str
    bandwidth: float  #: bytes per second
    figure: Figure
    label: str | None = None  #: display name, e.g. "HBM3" or "DDR5"
    capacity: float | None = None  #: bytes
    capacity_figure: Figure | None = None
    achievable: float | None = None  #: bytes per second, measured sustained
    achievable_figure: Figure | None = None

    @property
    def display(self) -> str:
        return self.label or self.name.upper()

    def rate(self, achievable: bool = False) -> float:
        """B/s of this roof: the measured sustained bandwidth when ``achievable`` and known, else the datasheet's."""
        return (self.achievable or self.bandwidth) if achievable else self.bandwidth


@dataclass(frozen=True)
class Link:
    """An interconnect; ``bandwidth`` is per direction (vendors usually quote both directions added)."""

    name: str
    bandwidth: float  #: bytes per second, per direction
    figure: Figure
    label: str | None = None
    achievable: float | None = None  #: bytes per second, per direction, measured
    achievable_figure: Figure | None = None

    @property
    def display(self) -> str:
        return self.label or self.name.upper()

    def rate(self, achievable: bool = False) -> float:
        """B/s per direction: measured when ``achievable`` and known, else the datasheet's."""
        return (self.achievable or self.bandwidth) if achievable else self.bandwidth


@dataclass(frozen=True)
class Hardware:
    """One device from a catalog: compute ceilings, memory levels (off-chip first) and links."""

    id: str
    name: str
    vendor: str
    kind: DeviceKind
    ceilings: tuple[Ceiling, ...]
    levels: tuple[MemoryLevel, ...]
    links: tuple[Link, ...] = ()
    default_ceiling: str = ""
    scope: Scope = Scope.PACKAGE
    config: str | None = None  #: clock / power configuration the peaks assume
    notes: str | None = None
    aliases: tuple[str, ...] = ()  #: names profilers report for this device
    unverified: bool = False
    origin: str = ""  #: the catalog file it came from
    sources: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not self.ceilings:
            raise RoofcoreError(f"hardware {self.id}: at least one compute ceiling is needed")
        if not self.levels or self.levels[0].name != OFFCHIP:
            raise RoofcoreError(f"hardware {self.id}: the first memory level must be the off-chip level '{OFFCHIP}'")
        if not self.default_ceiling:
            object.__setattr__(self, "default_ceiling", self.ceilings[0].key)
        if self.default_ceiling not in self.ceiling_map:
            raise RoofcoreError(f"hardware {self.id}: default ceiling {self.default_ceiling} is not among its ceilings")

    @property
    def ceiling_map(self) -> dict[str, Ceiling]:
        return {c.key: c for c in self.ceilings}

    @property
    def level_map(self) -> dict[str, MemoryLevel]:
        return {lv.name: lv for lv in self.levels}

    @property
    def link_map(self) -> dict[str, Link]:
        return {lk.name: lk for lk in self.links}

    @property
    def default(self) -> Ceiling:
        return self.ceiling_map[self.default_ceiling]

    @property
    def offchip(self) -> MemoryLevel:
        return self.levels[0]

    @property
    def figures(self) -> tuple[Figure, ...]:
        """Every catalog figure of the device: its ceilings', then its levels', then its links'."""
        resources: tuple[Ceiling | MemoryLevel | Link, ...] = (*self.ceilings, *self.levels, *self.links)
        return tuple(x.figure for x in resources)

    def ridge(self, ceiling: str | None = None, *, achievable: bool = False) -> dict[str, float]:
        """Ridge points (FLOP/byte) of ``ceiling`` (default: the device default) against every level and link."""
        c = self.ceiling_map[ceiling or self.default_ceiling]
        pi = c.rate(achievable)
        out = {}
        bandwidths: tuple[MemoryLevel | Link, ...] = (*self.levels, *self.links)
        for res in bandwidths:
            beta = res.rate(achievable)
            out[res.name] = pi / beta
        return out

    def resolve_ceiling(self, precision: str | None, unit: str | None) -> Ceiling | None:
        """The ceiling a kernel of this precision/unit runs against, or None if the device has none.

        No precision: the default ceiling. A precision without a unit: matrix if the device has it, else
        vector. A unit the device lacks for that precision falls back to the other unit.
        """
        if not precision:
            if not unit:
                return self.default
            same_unit = [c for c in self.ceilings if c.unit.value == unit]
            return self.default if self.default.unit.value == unit or not same_unit else same_unit[0]
        cm = self.ceiling_map
        order = [unit] if unit else []
        order += [u for u in ("matrix", "vector") if u not in order]
        for u in order:
            if ceiling_key(precision, u) in cm:
                return cm[ceiling_key(precision, u)]
        return None


#: columns every workload frame has (besides bytes_<level> / bytes_<link>)
KERNEL_COLUMNS = ("name", "count", "flops", "time_s", "precision", "unit", "group", "source", "row")


@dataclass(frozen=True)
class Skipped:
    """An input row that was left out, and why."""

    source: str
    row: str  #: row number or launch id as the input names it
    reason: str


@dataclass(frozen=True)
class Kernel:
    """One kernel given by hand or derived from an op: totals over ``count`` launches."""

    name: str
    flops: float  #: FLOP, total over launches
    bytes: dict[str, float]  #: bytes per level or link name, total over launches
    count: int = 1
    time_s: float | None = None  #: measured seconds, total over launches
    precision: str | None = None
    unit: str | None = None
    group: str | None = None


@dataclass(frozen=True)
class RuntimeEntry:
    """One name of a runtime or queue pseudo-entry (``<barrier packet>``, ``hipMemcpy``): not a kernel."""

    name: str
    kind: str  #: e.g. "barrier packet", "HIP/HSA API call" (roofcore.ingest.pseudo.PATTERNS)
    count: int  #: entries (launches) of this name
    time_s: float  #: their total measured time, NaN when none is known


@dataclass(frozen=True)
class RuntimeEntries:
    """The queue and runtime pseudo-entries a profile listed among its kernels, left out of the kernels
    (:func:`roofcore.ingest.pseudo.split_runtime`): one :class:`RuntimeEntry` per name."""

    entries: tuple[RuntimeEntry, ...] = ()

    @property
    def count(self) -> int:
        return sum(e.count for e in self.entries)

    @property
    def time_s(self) -> float:
        """Total measured time; NaN when no entry's time is known."""
        known = [e.time_s for e in self.entries if not math.isnan(e.time_s)]
        return math.fsum(known) if known else math.nan

    def merged(self, other: RuntimeEntries | None) -> RuntimeEntries:
        """Both files' entries, one per name (counts and known times added)."""
        out: dict[str, RuntimeEntry] = {}
        for e in (*self.entries, *(other.entries if other else ())):
            if e.name in out:
                o = out[e.name]
                t = e.time_s if math.isnan(o.time_s) else o.time_s if math.isnan(e.time_s) else o.time_s + e.time_s
                e = RuntimeEntry(e.name, o.kind, o.count + e.count, t)
            out[e.name] = e
        return RuntimeEntries(tuple(out.values()))

    def to_json(self) -> dict[str, Any]:
        """``{"count", "time_s", "entries": [{"name", "kind", "count", "time_s"}]}``; unknown times are null."""
        def t(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {"count": self.count, "time_s": t(self.time_s),
                "entries": [{"name": e.name, "kind": e.kind, "count": e.count, "time_s": t(e.time_s)}
                            for e in self.entries]}


@dataclass(frozen=True)
class Workload:
    """Kernels as a DataFrame: one row per kernel (or launch), base units, totals over launches.

    Columns: ``name, count, flops, time_s, precision, unit, group, source, row`` and one
    ``bytes_<name>`` float column per memory level or link (``bytes_hbm`` is the off-chip traffic).
    ``flops``/``time_s`` are NaN where unknown (unknown work is not zero work). A kernel a profiler gives
    as rates without a duration has ``flops_rate`` (FLOP/s) and ``bandwidth_<name>`` (byte/s) columns, by which
    the analysis places it (:mod:`roofcore.ingest.ncu_rates`). Treat the frame as read-only: transformations build
    new workloads.
    """

    frame: pd.DataFrame
    name: str = "workload"
    sources: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    warnings: tuple[str, ...] = ()
    device: str | None = None  #: the device the profile ran on, as the profiler named it
    meta: Mapping[str, str] = field(default_factory=dict)  #: e.g. compute_capability, arch, profiler version
    #: devices as measured on the machine that ran it (rocprof-compute roofline.csv, ERT roofline.json read with it)
    measured: tuple[Hardware, ...] = ()
    #: queue and runtime pseudo-entries the inputs listed among their kernels (``<barrier packet>``, ``hipMemcpy``):
    #: not in ``frame``, counted here (roofcore.ingest.pseudo); None when there were none
    runtime: RuntimeEntries | None = None

    @property
    def byte_columns(self) -> list[str]:
        return [c for c in self.frame.columns if c.startswith("bytes_")]

    @property
    def byte_names(self) -> list[str]:
        return [c[len("bytes_"):] for c in self.byte_columns]

    def __len__(self) -> int:
        return len(self.frame)
