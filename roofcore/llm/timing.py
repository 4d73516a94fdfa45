"""Roofs of a device for a step's ops, and the time of each op: ``t = max(F/π, B/β)/e + n·o`` (compute or memory;
a collective ``K/λ/e + n·o`` on the link), with ``e``/``o`` the class's :class:`~roofcore.llm.calibration.ClassFit`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..models import Ceiling, Hardware
from .calibration import Calibration
from .costing import CLASSES, OpTable

_COMM = CLASSES.index("communication")
_MATRIX = CLASSES.index("matrix")
#: link names taken for tensor-parallel traffic, fastest kind first
LINK_ORDER = ("nvlink", "xgmi", "infinity_fabric", "ici", "pcie")


@dataclass(frozen=True)
class Roofs:
    """Per op the compute ceiling (FLOP/s) and its name; the device's off-chip bandwidth, link, capacity."""

    hw: Hardware
    peak: np.ndarray
    ceiling: list[str]
    bw: float
    link: str | None
    link_bw: float
    capacity: float | None
    matrix_eff: float | None  #: the device's own achievable/peak for the matrix ceiling, where the catalog has it
    notes: tuple[str, ...]


def _ceiling(hw: Hardware, precision: str, unit: str, notes: list[str]) -> Ceiling:
    c = hw.resolve_ceiling(precision, unit)
    if c is not None and c.unit.value == unit:
        return c
    for alt in ("fp16", "bf16", "fp32"):
        c2 = hw.resolve_ceiling(alt, unit)
        if c2 is not None:
            if unit == "matrix":
                notes.append(f"{hw.id} has no {precision} {unit} roof: those ops are timed at {c2.key} "
                             "(the weights keep their own bytes)")
            return c2
    return c or hw.default


def roofs(hw: Hardware, table: OpTable, tp: int, pp: int) -> Roofs:
    """The roofs ``table``'s ops run against on ``hw``."""
    notes: list[str] = []
    cache: dict[tuple[str, str], Ceiling] = {}
    peaks, names = [], []
    for prec, unit in zip(table.precision, table.unit, strict=True):
        key = (prec, unit)
        if key not in cache:
            cache[key] = _ceiling(hw, prec, unit, notes)
        peaks.append(cache[key].peak)
        names.append(cache[key].key)
    links = hw.link_map
    link = next((n for n in LINK_ORDER if n in links), next(iter(links), None))
    if (tp > 1 or pp > 1) and link is None:
        raise InputError(where=f"--tp/--pp on {hw.id}", expected="a device with a link in the catalog",
                         found="no links", hint="use --tp 1 --pp 1, or add the device's link to its catalog entry.")
    mcode = [i for i, c in enumerate(table.classes) if c == _MATRIX]
    mc = hw.resolve_ceiling(table.precision[mcode[0]], "matrix") if mcode else None
    meff = (mc.achievable / mc.peak) if mc is not None and mc.achievable else None
    return Roofs(hw=hw, peak=np.array(peaks, dtype=float), ceiling=names, bw=hw.offchip.bandwidth, link=link,
                 link_bw=links[link].bandwidth if link else float("nan"), capacity=hw.offchip.capacity,
                 matrix_eff=meff, notes=tuple(dict.fromkeys(notes)))


def efficiencies(cal: Calibration, r: Roofs) -> tuple[np.ndarray, np.ndarray]:
    """Per class efficiency and overhead; the default matrix efficiency is the device's own where the catalog has it."""
    eff, over = cal.efficiency().copy(), cal.overhead()
    if not cal.calibrated and r.matrix_eff is not None:
        eff[_MATRIX] = r.matrix_eff
    return eff, over


@dataclass
class Times:
    """Per step (rows) and op (columns): seconds, and which roof bounds the op (0 compute, 1 memory, 2 link)."""

    seconds: np.ndarray
    bound: np.ndarray
    roof_seconds: np.ndarray  #: max(F/π, B/β) or K/λ: the time at the roof (efficiency 1, no overhead)
    overhead: np.ndarray
    flops: np.ndarray
    bytes: np.ndarray

    @property
    def total(self) -> np.ndarray:
        total: np.ndarray = self.seconds.sum(axis=1)
        return total


def op_times(table: OpTable, r: Roofs, cal: Calibration, x: np.ndarray) -> Times:
    """The time of each op of ``table`` on ``r`` for each step of ``x`` (rows ``(1, T, S, P, R)``)."""
    flops, nbytes, link = table.totals(x)
    eff, over = efficiencies(cal, r)
    e = eff[table.classes]
    comm = table.classes == _COMM
    with np.errstate(divide="ignore", invalid="ignore"):
        tc = flops / r.peak
        tm = nbytes / r.bw
        tl = np.where(comm, link / r.link_bw, 0.0)
    roof = np.where(comm, tl, np.maximum(tc, tm))
    bound = np.where(comm, 2, np.where(tc >= tm, 0, 1))
    o = over[table.classes] * table.launches
    active = (flops > 0) | (nbytes > 0) | (link > 0)
    overhead = np.where(active, o, 0.0)
    return Times(seconds=roof / e + overhead, bound=bound, roof_seconds=roof, overhead=overhead, flops=flops,
                 bytes=nbytes)


def phase_bound(t: Times, table: OpTable, r: Roofs, row: int = 0) -> dict[str, Any]:
    """What bounds one step: the time share of compute-, memory- and link-bound ops and of launch overhead, and the
    label of the largest (``compute:<ceiling>``, ``memory:hbm``, ``link:<name>`` or ``overhead``)."""
    sec = t.seconds[row]
    over = t.overhead[row]
    work = sec - over
    share = {"compute": float(work[t.bound[row] == 0].sum()), "memory": float(work[t.bound[row] == 1].sum()),
             "link": float(work[t.bound[row] == 2].sum()), "overhead": float(over.sum())}
    total = sum(share.values()) or 1.0
    share = {k: v / total for k, v in share.items()}
    top = max(share, key=share.__getitem__)
    if top == "compute":
        cmp = t.bound[row] == 0
        by: dict[str, float] = {}
        for i in np.flatnonzero(cmp):
            by[r.ceiling[i]] = by.get(r.ceiling[i], 0.0) + float(work[i])
        label = f"compute:{max(by, key=by.__getitem__)}"
    elif top == "memory":
        label = "memory:hbm"
    elif top == "link":
        label = f"link:{r.link}"
    else:
        label = "overhead"
    return {"bound": label, "share": share}


def step_cost(table: OpTable, r: Roofs, cal: Calibration) -> Callable[[np.ndarray], np.ndarray]:
    """A fast ``x -> seconds per step`` (the sum of :func:`op_times`), for the serving simulation: the coefficients
    are divided by their roofs and efficiencies once, so a call is a few array operations."""
    eff, over = efficiencies(cal, r)
    e = eff[table.classes]
    comm = table.classes == _COMM
    fc = np.where(comm[:, None], 0.0, table.flops / (r.peak * e)[:, None])
    bc = np.where(comm[:, None], table.link / (r.link_bw * e)[:, None], table.bytes / (r.bw * e)[:, None])
    ec = np.where(comm, 0.0, table.expert_bytes / (r.bw * e))
    has_e = bool(ec.any())
    o = over[table.classes] * table.launches
    fct, bct = np.ascontiguousarray(fc.T), np.ascontiguousarray(bc.T)

    def cost(x: np.ndarray) -> np.ndarray:
        m = x @ bct
        if has_e:
            m = m + np.outer(table.touched(x[:, 1]), ec)
        seconds: np.ndarray = np.maximum(x @ fct, m).sum(axis=1) + o.sum()
        return seconds

    return cost
