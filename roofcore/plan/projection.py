"""A workload on the devices one is considering: the roofline with a communication fraction applied
(:func:`evaluate`), and the projection of a run from the device it was measured on to others (:func:`project`).

**comm_fraction** (:func:`~roofcore.plan.comm_fraction`) is applied here: every roof (ceilings, levels, links) is
lowered to ``(1 − f)`` of its value (:func:`effective_hardware`), so ``t_roof' = t_roof / (1 − f)``.

**Projection**: per kernel ``t_roof`` on each device; a measured kernel keeps its efficiency from
the device it ran on (``e = t_roof_source / time``; projected ``= t_roof_target / e``, never below
``t_roof_target``). The estimate of a measured run is the projected time (on the device it ran on, the measured
time); of a run with no measured times, or none that can be projected (no source device), ``t_roof``. A kernel
with no estimate on a device has none there: no roofline (FLOPs or off-chip bytes unknown), or, in a measured run,
no measured time (its roofline time alone is a lower bound, never an estimate) or no roofline on the device it ran
on (its efficiency is unknown). Each device's total says what it leaves out (:attr:`DeviceTotal.unknown_kernels`,
:attr:`DeviceTotal.untimed_kernels`, :attr:`DeviceTotal.coverage`, a note), never counting it as zero.
Speedups are against the source device (else the first device), over the kernels both devices give a time;
cost per run
``= price_per_hour × estimate_s / 3600``. To another vendor only FLOPs, off-chip and link bytes
are used (on-chip levels are dropped: cache sizes and names do not carry over), and a note says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..analyze import Analysis, analyze
from ..counting import kernel_counts
from ..errors import InputError, RoofcoreError
from ..models import Hardware, Workload
from ..units import fmt_pct
from .transforms import HBM, check_workload, is_link


def effective_hardware(hw: Hardware, fraction: float) -> Hardware:
    """``hw`` with every ceiling, memory level and link at ``(1 − fraction)`` of its rate (same id)."""
    if not fraction:
        return hw
    k = 1.0 - float(fraction)

    def sc(x: float | None) -> float | None:
        return None if x is None else x * k

    return replace(
        hw, name=f"{hw.name} (roofs × {k:.2f})",
        ceilings=tuple(replace(c, peak=c.peak * k, achievable=sc(c.achievable), sparse=sc(c.sparse)) for c in hw.ceilings),
        levels=tuple(replace(lv, bandwidth=lv.bandwidth * k, achievable=sc(lv.achievable)) for lv in hw.levels),
        links=tuple(replace(lk, bandwidth=lk.bandwidth * k, achievable=sc(lk.achievable)) for lk in hw.links))


def evaluate(workload: Workload, hardware: Hardware | Iterable[Hardware], *, achievable: bool = False) -> Analysis:
    """:func:`~roofcore.analyze.analyze`, with the workload's communication fraction applied to the roofs."""
    hws = [hardware] if isinstance(hardware, Hardware) else list(hardware)
    fr = float(workload.meta.get("comm_fraction", 0) or 0)
    return analyze(workload, [effective_hardware(h, fr) for h in hws], achievable=achievable)


@dataclass(frozen=True)
class DeviceTotal:
    """A workload's totals on one device of a projection (seconds; ``None`` where unknown)."""

    hardware: str
    name: str
    vendor: str
    t_roof_s: float | None  #: Σ roofline time
    projected_time_s: float | None  #: Σ projected time of the measured kernels (kept efficiency)
    estimate_s: float | None  #: Σ projected time (a measured run) or Σ t_roof (no measured times): the run's estimate
    speedup_roof: float | None  #: reference t_roof / this t_roof
    speedup: float | None  #: reference estimate / this estimate
    price_per_hour: float | None
    cost_per_run: float | None  #: price_per_hour × estimate_s / 3600
    cross_vendor: bool
    bound_share: Mapping[str, float] = field(default_factory=dict)
    unknown_kernels: int = 0  #: kernels (as every page counts them) with no estimate here: left out of the totals
    coverage: float | None = None  #: share of the measured time whose kernels the estimate holds (None: none
    #: timed, or no source device to project the times from)
    untimed_kernels: int = 0  #: of unknown_kernels, those with no measured time in a measured run

    def to_json(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Projection:
    """A workload projected onto devices: per kernel (:attr:`table`) and per device (:attr:`totals`)."""

    workload: Workload
    source: str | None  #: the device the measured times come from
    reference: str  #: speedups are against this device
    totals: tuple[DeviceTotal, ...]
    table: pd.DataFrame  #: one row per kernel × device
    notes: tuple[str, ...]
    analyses: tuple[Analysis, ...] = ()  #: per device, the analysis the projection used

    def total(self, hw_id: str) -> DeviceTotal:
        for t in self.totals:
            if t.hardware == hw_id:
                return t
        raise RoofcoreError(f"hardware {hw_id!r} is not in this projection")

    def to_json(self) -> dict[str, Any]:
        cols = ["name", "hardware", "count", "flops", "bytes_hbm", "t_roof_s", "bound", "time_s", "efficiency",
                "projected_time_s", "estimate_s"]
        recs = []
        for row in self.table[[c for c in cols if c in self.table]].itertuples(index=False):
            recs.append({k: clean(v) for k, v in zip(cols, row, strict=False)})
        return {"schema_version": 1, "workload": self.workload.name, "source": self.source,
                "reference": self.reference, "totals": [t.to_json() for t in self.totals], "kernels": recs,
                "notes": list(self.notes)}


def clean(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        x = float(v)
        return x if math.isfinite(x) else None
    if v is None or (isinstance(v, float) and v != v):
        return None
    return v


def _nsum(a: np.ndarray) -> float | None:
    return float(np.nansum(a)) if (~np.isnan(a)).any() else None


def _ratio(ref: np.ndarray, this: np.ndarray) -> float | None:
    """Σ ``ref`` / Σ ``this`` over the kernels both know (a kernel one device cannot time is in neither sum)."""
    both = ~np.isnan(ref) & ~np.isnan(this)
    a, b = float(ref[both].sum()), float(this[both].sum())
    return a / b if both.any() and a and b else None


#: why a kernel has no estimate on a device (:func:`_left_out`), in the order a note names them
_WHY = ("with no roofline (FLOPs or off-chip bytes unknown)",
        "with no measured time (a roofline time alone is a lower bound, not an estimate)",
        "measured with no roofline on the device they ran on (their efficiency is unknown)")


def _left_out(gaps: Sequence[tuple[str, tuple[int, int, int], float | None]]) -> list[str]:
    """The notes saying which estimates leave kernels out (``gaps``: per device the kernels left out for each of
    :data:`_WHY`, and the share of the measured time kept): one for every device where all leave out the same."""
    def said(ns: tuple[int, int, int], coverage: float | None) -> str:
        share = ("" if coverage is None else "; it covers all of the measured time" if coverage >= 1.0 else
                 f", {fmt_pct(1.0 - coverage)} of the measured time: it covers the other {fmt_pct(coverage)}")
        parts = [f"{n:,} kernel(s) {why}" for n, why in zip(ns, _WHY, strict=True) if n]
        return f"the estimate leaves out {' and '.join(parts)}{share}."
    hit = [(hw, ns, c) for hw, ns, c in gaps if any(ns)]
    if hit and len(hit) == len(gaps) and len({(ns, c) for _, ns, c in hit}) == 1:
        text = said(hit[0][1], hit[0][2])
        return ["On every device, " + text]
    return [f"{hw}: {said(ns, c)}" for hw, ns, c in hit]


def offchip_only(workload: Workload, hws: Iterable[Hardware] = ()) -> Workload:
    """The workload with on-chip level bytes dropped (FLOPs, off-chip and link bytes kept)."""
    drop = [c for c in workload.byte_columns if c != HBM and not is_link(c[len("bytes_"):], hws)]
    if not drop:
        return workload
    return replace(workload, frame=workload.frame.drop(columns=drop))


def _devices(source: str | Hardware | None, targets: Sequence[Hardware]) -> tuple[list[Hardware], Hardware | None]:
    """The devices to project onto (the source among them) and the source device, if named."""
    targets = list(targets)
    if not targets:
        raise RoofcoreError("project needs at least one target device")
    src: Hardware | None = None
    if isinstance(source, Hardware):
        src = source
        if all(t.id != src.id for t in targets):
            targets.insert(0, src)
    elif source:
        src = next((t for t in targets if t.id == source), None)
        if src is None:
            raise InputError(where="source", expected="one of the target devices: " + ", ".join(t.id for t in targets),
                             found=repr(source), hint="add the device the profile ran on to the devices.")
    return targets, src


def _unknown(frame: pd.DataFrame, est: np.ndarray, t_roof: np.ndarray, timed: np.ndarray
             ) -> tuple[int, tuple[int, int, int]]:
    """The kernels (as every page counts them: roofcore.counting) a device's estimate leaves out, in all and for
    each of :data:`_WHY`."""
    unknown = np.isnan(est)
    if not unknown.any():
        return 0, (0, 0, 0)
    roof = ~np.isnan(t_roof)
    why = [kernel_counts(frame, r)[0] if r.any() else 0
           for r in (unknown & ~roof, unknown & roof & ~timed, unknown & roof & timed)]
    return kernel_counts(frame, unknown)[0], (why[0], why[1], why[2])


def project(workload: Workload, source: str | Hardware | None, targets: Sequence[Hardware], *,
            price_per_hour: Mapping[str, float] | None = None, achievable: bool = False) -> Projection:
    """Project ``workload`` (measured on ``source``, or built) onto ``targets`` (module docstring)."""
    check_workload(workload, "project")
    targets, src = _devices(source, targets)
    ref = src or targets[0]
    prices = dict(price_per_hour or {})
    times = workload.frame["time_s"].to_numpy(dtype=np.float64)
    timed = ~np.isnan(times) & (times > 0)
    notes: list[str] = []
    eff = np.full(len(workload), np.nan)
    if src is not None and timed.any():
        t_src = evaluate(workload, src, achievable=achievable).results[0].t_roof
        with np.errstate(divide="ignore", invalid="ignore"):
            eff = np.where(timed & (t_src > 0), t_src / times, np.nan)
    elif timed.any():
        notes.append("Measured times are not projected: name the device they were measured on (source).")
    reduced = offchip_only(workload, targets)
    # the share of the measured time an estimate holds: only where it uses the measured times (a source named)
    measured = float(times[timed].sum()) if timed.any() and src is not None else 0.0
    frames, analyses, per = [], [], []
    gaps: list[tuple[str, tuple[int, int, int], float | None]] = []  # per device: kernels left out (_WHY), time kept
    projecting = measured > 0
    for hw in targets:
        cross = hw.vendor.strip().lower() != ref.vendor.strip().lower()
        wl = reduced if cross else workload
        if cross and wl is not workload:
            msg = (f"{hw.id}: another vendor than {ref.id}, so only FLOPs, off-chip and link bytes are used "
                   "(on-chip level bytes dropped).")
            notes.append(msg)
        a = evaluate(wl, hw, achievable=achievable)
        analyses.append(a)
        r = a.results[0]
        t_roof = r.t_roof
        with np.errstate(divide="ignore", invalid="ignore"):
            proj = np.where(~np.isnan(eff) & (eff > 0), t_roof / eff, np.nan)
        above = ~np.isnan(proj) & (proj < t_roof)
        if above.any():
            notes.append(f"{hw.id}: {kernel_counts(wl.frame, above)[0]:,} kernel(s) measured above their roof: "
                         "projected at the roof.")  # kernels as every page counts them (roofcore.counting)
            proj = np.where(above, t_roof, proj)
        if not projecting:  # no measured time to project: the roofline time is the estimate
            est = t_roof
        elif src is not None and hw.id == src.id:  # where it ran: its measured time, where no roof explains it too
            est = np.where(np.isnan(proj) & timed, times, proj)
        else:  # a projected time, never a roofline time in its place (a lower bound)
            est = proj
        tab = a.table(hw.id, messages=False)
        frames.append(pd.DataFrame({
            "kid": np.arange(len(tab)), "name": tab["name"], "hardware": hw.id, "count": tab["count"],
            "flops": tab["flops"], "bytes_hbm": tab.get(HBM, np.nan), "t_roof_s": t_roof,
            "bound": tab["bound"], "time_s": times if src is not None and hw.id == src.id else np.nan,
            "efficiency": eff, "projected_time_s": proj, "estimate_s": est}))
        share = a.summary(hw.id)["time_share_by_bound"]
        left_out, why = _unknown(wl.frame, est, t_roof, timed)
        coverage = float(times[timed & ~np.isnan(est)].sum()) / measured if measured > 0 else None
        gaps.append((hw.id, why, coverage))
        per.append((hw, cross, t_roof, est, _nsum(proj), share, (left_out, why[1]), coverage))
    notes += _left_out(gaps)
    ref_row = next(p for p in per if p[0].id == ref.id)
    totals = []
    for hw, cross, t_roof, est, pr, share, (left_out, untimed), coverage in per:
        price = prices.get(hw.id)
        es = _nsum(est)
        totals.append(DeviceTotal(
            hardware=hw.id, name=hw.name, vendor=hw.vendor, t_roof_s=_nsum(t_roof), projected_time_s=pr,
            estimate_s=es, speedup_roof=_ratio(ref_row[2], t_roof), speedup=_ratio(ref_row[3], est),
            price_per_hour=float(price) if price is not None else None,
            cost_per_run=float(price) * es / 3600.0 if price is not None and es is not None else None,
            cross_vendor=cross, bound_share=share, unknown_kernels=left_out, coverage=coverage,
            untimed_kernels=untimed))
    return Projection(workload=workload, source=src.id if src else None, reference=ref.id, totals=tuple(totals),
                      table=pd.concat(frames, ignore_index=True), notes=tuple(dict.fromkeys(notes)),
                      analyses=tuple(analyses))
