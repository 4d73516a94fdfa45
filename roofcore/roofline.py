"""The roofline math, vectorised over kernels (docs/architecture.md).

For kernel *k* on hardware *h*: the time each resource needs is ``FLOPs / π`` for the compute
ceiling the kernel runs on, ``bytes_l / β_l`` for each memory level and ``bytes_x / β_x`` for each
link. ``t_roof`` is their maximum (perfect overlap, the roofline bound), ``t_serial`` their sum (no
overlap); the bound is the resource that sets ``t_roof``. Attainable FLOP/s = ``FLOPs / t_roof``
= ``min(π, min_l β_l·I_l)``.

Unknown is unknown: a kernel whose FLOPs or off-chip bytes are unknown (NaN) has no roofline time and
bound ``unknown`` — a bound computed from the other resource alone would invent it (a kernel without
FLOP counters is not "memory-bound"). The one exception is data movement: a kernel with zero FLOPs
(a copy, a collective) and known link bytes is bound by its link. Unknown *on-chip* bytes drop out of
the max (the off-chip and compute roofs still bound the kernel).

Everything here works on numpy arrays; nothing loops over kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag

import numpy as np

from .models import Hardware, Link, MemoryLevel


class Flag(IntFlag):
    """Per-kernel flags, stored as a bitmask; :data:`FLAG_CODES` gives their JSON codes."""

    ABOVE_ROOF = 1
    FAR_BELOW = 2
    TINY = 4
    MISSING_TIME = 8
    MISSING_FLOPS = 16
    MISSING_BYTES = 32
    LEVEL_NOT_ON_DEVICE = 64
    NO_CEILING = 128
    ZERO_TIME = 256


FLAG_CODES = {
    Flag.ABOVE_ROOF: "above-roof",
    Flag.FAR_BELOW: "far-below-roofs",
    Flag.TINY: "tiny-kernel",
    Flag.MISSING_TIME: "missing-time",
    Flag.MISSING_FLOPS: "missing-flops",
    Flag.MISSING_BYTES: "missing-bytes",
    Flag.LEVEL_NOT_ON_DEVICE: "level-not-on-device",
    Flag.NO_CEILING: "no-ceiling",
    Flag.ZERO_TIME: "zero-time",
}

#: efficiency below this (measured time > 10× the roofline time) is "far below both roofs"
FAR_BELOW_EFFICIENCY = 0.10
#: a launch shorter than this is launch-bound (and replay profilers distort it)
TINY_LAUNCH_S = 1e-6
#: efficiency above 1 by more than rounding is "above the roof"
ABOVE_ROOF_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Inputs:
    """A workload's arrays, hardware-independent, computed once per analysis."""

    flops: np.ndarray  #: FLOP, NaN unknown
    time_s: np.ndarray  #: s, NaN unknown
    count: np.ndarray  #: launches
    byte_cols: dict[str, np.ndarray]  #: name -> bytes, NaN unknown
    combo_codes: np.ndarray  #: index into ``combos`` per kernel
    combos: tuple[tuple[str | None, str | None], ...]  #: distinct (precision, unit) pairs


@dataclass(frozen=True)
class DeviceResult:
    """Roofline results of every kernel on one device. Arrays are aligned with the workload's rows."""

    hardware: Hardware
    resources: tuple[str, ...]  #: resource names: "compute", then memory levels, then links present
    resource_kinds: tuple[str, ...]  #: "compute" | "memory" | "link" per resource
    bandwidths: tuple[float, ...]  #: B/s per resource (NaN for compute)
    ceilings: tuple[str | None, ...]  #: ceiling key per combo (None: the device has none)
    peaks: np.ndarray  #: FLOP/s per combo (NaN: none)
    t_roof: np.ndarray  #: s
    t_serial: np.ndarray  #: s
    ceiling_code: np.ndarray  #: int16: combo index per kernel
    bound_idx: np.ndarray  #: int16: resource index that sets t_roof, -1 unknown
    mem_idx: np.ndarray  #: int16: memory/link resource with the longest time, -1 none
    flags: np.ndarray  #: uint16 bitmask of :class:`Flag`
    lacking: tuple[str, ...]  #: byte names the workload has but this device lacks
    #: s per resource (aligned with ``resources``): FLOPs/π, bytes/β per level and link; NaN unknown. Kept so that
    #: nothing downstream recomputes them (advice, charts, the kernel detail read these).
    times: tuple[np.ndarray, ...] = ()
    #: kernels placed by achieved rates alone (FLOP/s and byte/s, no duration: :mod:`roofcore.ingest.ncu_rates`),
    #: None when there are none; their seconds above are NaN, and ``rate_roof`` holds their roof time per second
    #: measured (= roof / achieved), from which the table gives their attainable FLOP/s and share of the roof
    rated: np.ndarray | None = None
    rate_roof: np.ndarray | None = None

    def peak(self) -> np.ndarray:
        peak: np.ndarray = self.peaks[self.ceiling_code]
        return peak

    def time_of(self, resource: str) -> np.ndarray:
        """Seconds each kernel needs on ``resource`` ("compute", a level or a link name); NaN unknown or absent."""
        if resource in self.resources:
            return self.times[self.resources.index(resource)]
        return np.full(len(self.t_roof), np.nan)


def _time(num: np.ndarray, rate: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / rate


def evaluate(inp: Inputs, hw: Hardware, *, achievable: bool = False) -> DeviceResult:
    """Roofline of every kernel in ``inp`` on ``hw``; with ``achievable`` measured ceilings replace peaks where known."""
    n = len(inp.flops)
    ceils = [hw.resolve_ceiling(p, u) for p, u in inp.combos]
    peaks = np.array([np.nan if c is None else c.rate(achievable) for c in ceils],
                     dtype=np.float64)
    code = inp.combo_codes
    peak = peaks[code] if len(peaks) else np.full(n, np.nan)

    names, kinds, bws, times = ["compute"], ["compute"], [np.nan], [_time(inp.flops, 1.0) / peak]
    lm, km = hw.level_map, hw.link_map
    lacking: list[str] = []
    bandwidths: tuple[MemoryLevel | Link, ...] = (*hw.levels, *hw.links)
    present = {res.name: res for res in bandwidths if res.name in inp.byte_cols}
    for name, res in present.items():
        beta = res.rate(achievable)
        names.append(name)
        kinds.append("memory" if name in lm else "link")
        bws.append(beta)
        times.append(_time(inp.byte_cols[name], beta))
    for name in inp.byte_cols:
        if name not in lm and name not in km:
            lacking.append(name)

    # one pass per resource (a handful), each vectorised over kernels; NaN (unknown) never wins a max
    best = np.full(n, -np.inf)
    mem_best = np.full(n, -np.inf)
    bound_idx = np.full(n, -1, dtype=np.int16)
    mem_idx = np.full(n, -1, dtype=np.int16)
    t_serial = np.zeros(n)
    any_valid = np.zeros(n, dtype=bool)
    for i, ti in enumerate(times):
        valid = ~np.isnan(ti)
        any_valid |= valid
        np.add(t_serial, ti, out=t_serial, where=valid)
        bound_idx = np.where(ti > best, np.int16(i), bound_idx)
        best = np.fmax(best, ti)
        if i:
            mem_idx = np.where(ti > mem_best, np.int16(i), mem_idx)
            mem_best = np.fmax(mem_best, ti)
    known = roof_known(inp, hw, names, kinds)
    t_roof = np.where(any_valid & known, best, np.nan)
    t_serial[~(any_valid & known)] = np.nan
    bound_idx[~known] = -1
    mem_idx[~known] = -1
    del best, mem_best

    flags = np.zeros(n, dtype=np.uint16)

    def flag(bit: Flag, cond: np.ndarray) -> None:
        np.bitwise_or(flags, np.uint16(bit), out=flags, where=cond)

    t = inp.time_s
    has_t = ~np.isnan(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        eff = t_roof / t  # NaN or inf where there is no usable time; comparisons below are then False
        timed = has_t & (t > 0)
        flag(Flag.ABOVE_ROOF, (eff > 1.0 + ABOVE_ROOF_TOLERANCE) & timed)
        flag(Flag.FAR_BELOW, (eff < FAR_BELOW_EFFICIENCY) & timed)
        per_launch = np.where(has_t, t, t_roof) / np.maximum(inp.count, 1)
    flag(Flag.TINY, per_launch < TINY_LAUNCH_S)
    if has_t.any():
        flag(Flag.MISSING_TIME, ~has_t)
    flag(Flag.ZERO_TIME, has_t & (t <= 0))
    no_flops = np.isnan(inp.flops)
    flag(Flag.MISSING_FLOPS, no_flops)
    off = inp.byte_cols.get(hw.offchip.name)
    flag(Flag.MISSING_BYTES, (np.ones(n, dtype=bool) if off is None else np.isnan(off)) & ~known)
    for name in lacking:
        flag(Flag.LEVEL_NOT_ON_DEVICE, inp.byte_cols[name] > 0)
    flag(Flag.NO_CEILING, np.isnan(peak) & ~no_flops)

    return DeviceResult(
        hardware=hw, resources=tuple(names), resource_kinds=tuple(kinds), bandwidths=tuple(bws),
        ceilings=tuple(None if c is None else c.key for c in ceils), peaks=peaks, t_roof=t_roof, t_serial=t_serial,
        ceiling_code=code.astype(np.int16), bound_idx=bound_idx, mem_idx=mem_idx, flags=flags, lacking=tuple(lacking),
        times=tuple(times),
    )


def roof_known(inp: Inputs, hw: Hardware, names: list[str] | None = None,
               kinds: list[str] | None = None) -> np.ndarray:
    """Per kernel: is its roofline time known on ``hw``? FLOPs known and off-chip bytes known, or — for data
    movement (zero FLOPs) — bytes known on a link of the device."""
    n = len(inp.flops)
    flops_known = ~np.isnan(inp.flops)
    off = inp.byte_cols.get(hw.offchip.name)
    known: np.ndarray = flops_known & (np.zeros(n, dtype=bool) if off is None else ~np.isnan(off))
    moves = flops_known & (inp.flops == 0) & ~known
    if moves.any():
        links = {x.name for x in hw.links}
        for name, col in inp.byte_cols.items():
            if name in links:
                known |= moves & ~np.isnan(col)
    return known


def attainable(flops: np.ndarray, t_roof: np.ndarray) -> np.ndarray:
    """FLOP/s the roofline allows: ``FLOPs / t_roof`` (NaN where the roof time is zero or unknown)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t_roof > 0, flops / t_roof, np.nan)
