"""Measured devices of one model as one device: the median of the GPUs, with their spread.

An export may measure several GPUs of one model: rocprof-compute's ``roofline.csv`` has a row per GPU of the node
(``mi300x-gpu0-measured`` … ``mi300x-gpu7-measured``), and the Nsight Compute exports of an 8-rank job describe
the same model eight times (``h100-sxm-ncu-measured`` in each). Eight near-identical devices are no help beside
the workload: :func:`merge_measured` makes them one, :class:`MedianDevice`, whose every figure is the median over
the GPUs that measured it, its ``derivation`` saying so with the spread ("median of 8 GPUs (devices 0–7):
4.24–4.26 TB/s"), and its notes listing the spread of every figure. Devices of different models stay apart.

"Same model": the same id once the GPU's index is taken out (readers name a device of a multi-GPU file
``<model>-gpu<N>-measured``), the same vendor and kind.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from .models import Ceiling, DeviceKind, Figure, Hardware, Link, MemoryLevel
from .units import fmt_si

#: the GPU's index in a measured device's id (``mi300x-gpu3-measured``)
GPU_INDEX = re.compile(r"-gpu(\d+)(?=-measured$)")
#: a reader's device name: the model, the GPU's index, then what and where in parentheses
_NAME = re.compile(r"^(?P<model>.*?)(?: GPU \d+)? \((?P<how>.*)\)$")
#: SI prefixes of :func:`roofcore.units.fmt_si`
_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


@dataclass(frozen=True)
class MedianDevice(Hardware):
    """A measured device made of several GPUs of one model (:func:`merge_measured`): every figure the median of
    ``members``' (the per-GPU devices, kept so that a later merge takes the median over every GPU again)."""

    members: tuple[Hardware, ...] = ()


def model_id(hw: Hardware) -> str:
    """The id of ``hw``'s model: its id without the GPU's index (``mi300x-gpu3-measured`` → ``mi300x-measured``)."""
    return GPU_INDEX.sub("", hw.id)


def gpu_index(hw: Hardware) -> int | None:
    hit = GPU_INDEX.search(hw.id)
    return int(hit.group(1)) if hit else None


def merge_measured(devices: Iterable[Hardware]) -> tuple[Hardware, ...]:
    """One device per model, in the order the models first appear: a model measured once is its device as it
    was, one measured on several GPUs a :class:`MedianDevice`. A device given twice (equal) counts once; a
    :class:`MedianDevice` counts as its members."""
    groups: dict[tuple[str, str, DeviceKind], list[Hardware]] = {}
    for hw in devices:
        for one in hw.members if isinstance(hw, MedianDevice) else (hw,):
            group = groups.setdefault((model_id(one), one.vendor, one.kind), [])
            if one not in group:
                group.append(one)
    return tuple(g[0] if len(g) == 1 else median_device(g) for g in groups.values())


def median_device(members: Sequence[Hardware]) -> MedianDevice:
    """The median of several measured devices of one model, figure by figure (each figure over the members that
    have it), with the spread of every figure in its derivation and in the device's notes."""
    first = members[0]
    words = _Words(members)
    levels = [_level(words, [m.level_map[n] for m in members if n in m.level_map])
              for n in dict.fromkeys(lv.name for m in members for lv in m.levels)]
    levels.sort(key=lambda lv: lv.name != first.offchip.name)  # the off-chip level first, the others in order
    ceilings = [_ceiling(words, [m.ceiling_map[k] for m in members if k in m.ceiling_map])
                for k in dict.fromkeys(c.key for m in members for c in m.ceilings)]
    links = [_link(words, [m.link_map[n] for m in members if n in m.link_map])
             for n in dict.fromkeys(lk.name for m in members for lk in m.links)]
    keys = [c.key for c in ceilings]
    figures: tuple[Ceiling | MemoryLevel | Link, ...] = (*levels, *ceilings, *links)
    spread = "; ".join(f"{_display(x)} {_spread_of(x)}" for x in figures if _spread_of(x))
    notes = (f"The median of {words.count()} of one model{words.which()}, figure by figure: each figure is the median "
             f"of the {words.noun} that measured it." + (f" Spread, lowest–highest: {spread}." if spread else ""))
    same_notes = {m.notes for m in members}
    if len(same_notes) == 1 and first.notes:
        notes += " " + first.notes
    return MedianDevice(
        id=model_id(first), name=words.name(), vendor=first.vendor, kind=first.kind, ceilings=tuple(ceilings),
        levels=tuple(levels), links=tuple(links),
        default_ceiling=first.default_ceiling if first.default_ceiling in keys else keys[0], scope=first.scope,
        config=first.config if len({m.config for m in members}) == 1 else None, notes=notes,
        unverified=any(m.unverified for m in members), origin=", ".join(dict.fromkeys(m.origin for m in members)),
        members=tuple(members))


def summary(hw: Hardware) -> str | None:
    """``"median of 8 GPUs (devices 0–7), HBM 4.24–4.26 TB/s"``: what a device made of several GPUs is, with the
    spread of its off-chip bandwidth; None for any other device."""
    if not isinstance(hw, MedianDevice):
        return None
    words = _Words(hw.members)
    spread = _spread_of(hw.offchip)
    return ", ".join(x for x in (f"median of {words.count()}", words.devices(),
                                 f"{hw.offchip.display} {spread}" if spread else "") if x)


def spread_text(lo: float, hi: float, unit: str) -> str:
    """``"4.24–4.26 TB/s"``: both ends in the prefix of the higher, with as many digits (3 to 6) as tell them
    apart; one figure when they print alike even so."""
    top = fmt_si(hi, unit)
    shown = top.partition(" ")[2]
    factor = _PREFIX.get(shown[: len(shown) - len(unit)], 1.0)
    for digits in (3, 4, 5, 6):
        low = f"{lo / factor:.{digits}g}"
        high = f"{hi / factor:.{digits}g}"
        if "e" not in low + high and low != high:
            return f"{low}–{high} {shown}"
    return top


# --------------------------------------------------------------------------------------------- pieces


class _Words:
    """How a merged device and its figures are described: GPUs (with their indices) or files."""

    def __init__(self, members: Sequence[Hardware]) -> None:
        self.members = members
        self.indices = [gpu_index(m) for m in members]
        self.files = list(dict.fromkeys(PurePath(m.origin).name for m in members if m.origin))
        indexed = all(i is not None for i in self.indices)
        self.noun = "GPUs" if indexed or len(self.files) <= 1 else "exports"

    def count(self, n: int | None = None) -> str:
        n = len(self.members) if n is None else n
        return f"{n} {self.noun}" if n == len(self.members) else f"{n} of {len(self.members)} {self.noun}"

    def devices(self) -> str:
        """``"devices 0–7"`` (the GPUs' indices), or empty where the members do not say them."""
        if self.noun != "GPUs" or any(i is None for i in self.indices):
            return ""
        idx = sorted({i for i in self.indices if i is not None})
        run = idx == list(range(idx[0], idx[-1] + 1)) and len(idx) > 2
        return "devices " + (f"{idx[0]}–{idx[-1]}" if run else ", ".join(map(str, idx)))

    def which(self, files: bool = True) -> str:
        """`` (devices 0–7 of roofline.csv)`` (``files``: with where they come from), `` (r0.csv, r1.csv and 6
        more)``."""
        where = "" if not files else self.files[0] if len(self.files) == 1 else \
            f"{len(self.files)} files" if self.files else ""
        if devices := self.devices():
            return f" ({devices}" + (f" of {where})" if where else ")")
        if not files:
            return ""
        shown = ", ".join(self.files[:2]) + (f" and {len(self.files) - 2} more" if len(self.files) > 2 else "")
        return f" ({shown})" if shown else ""

    def name(self) -> str:
        first = self.members[0]
        hit = _NAME.match(first.name)
        model = hit.group("model") if hit else first.name
        how = hit.group("how").removesuffix(f", {PurePath(first.origin).name}") if hit else "measured"
        if len(self.files) > 1 and how.endswith("export"):
            how += "s"
        where = self.files[0] if len(self.files) == 1 else f"{len(self.files)} files" if self.noun == "GPUs" else ""
        return f"{model} ({how}, median of {self.count()}" + (f", {where})" if where else ")")

    def figure(self, figures: Sequence[Figure], values: Sequence[float], unit: str) -> Figure:
        sources = list(dict.fromkeys(f.source for f in figures))
        source = sources[0] if len(sources) == 1 else (
            "; ".join(sources[:2]) + (f"; and {len(sources) - 2} more" if len(sources) > 2 else ""))
        return Figure(source=source, measured=all(f.measured for f in figures),
                      unverified=any(f.unverified for f in figures),
                      derivation=(f"median of {self.count(len(values))}"
                                  + (self.which(files=False) if len(values) == len(self.members) else "")
                                  + f": {spread_text(min(values), max(values), unit)}"))


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _achievable(words: _Words, items: Sequence[Ceiling | MemoryLevel | Link], unit: str) -> tuple[float | None, Figure | None]:
    got = [(x.achievable, x.achievable_figure or x.figure) for x in items if x.achievable]
    if not got:
        return None, None
    values = [v for v, _ in got]
    return _median(values), words.figure([f for _, f in got], values, unit)


def _level(words: _Words, items: Sequence[MemoryLevel]) -> MemoryLevel:
    values = [x.bandwidth for x in items]
    ach, ach_fig = _achievable(words, items, "B/s")
    caps = [x.capacity for x in items if x.capacity]
    return MemoryLevel(name=items[0].name, bandwidth=_median(values), figure=words.figure(
        [x.figure for x in items], values, "B/s"), label=items[0].label, capacity=_median(caps) if caps else None,
        capacity_figure=items[0].capacity_figure if caps else None, achievable=ach, achievable_figure=ach_fig)


def _ceiling(words: _Words, items: Sequence[Ceiling]) -> Ceiling:
    values = [x.peak for x in items]
    ach, ach_fig = _achievable(words, items, "FLOP/s")
    sparse = [x.sparse for x in items if x.sparse]
    return Ceiling(precision=items[0].precision, unit=items[0].unit, peak=_median(values),
                   figure=words.figure([x.figure for x in items], values, "FLOP/s"),
                   sparse=_median(sparse) if sparse else None, achievable=ach, achievable_figure=ach_fig)


def _link(words: _Words, items: Sequence[Link]) -> Link:
    values = [x.bandwidth for x in items]
    ach, ach_fig = _achievable(words, items, "B/s")
    return Link(name=items[0].name, bandwidth=_median(values), figure=words.figure([x.figure for x in items], values,
                "B/s"), label=items[0].label, achievable=ach, achievable_figure=ach_fig)


def _display(x: Ceiling | MemoryLevel | Link) -> str:
    return f"{x.precision.value} {x.unit.value}" if isinstance(x, Ceiling) else x.display


def _spread_of(x: Ceiling | MemoryLevel | Link) -> str:
    """The figure's spread as its derivation gives it (``"4.24–4.26 TB/s"``), empty when the GPUs agree."""
    text = (x.figure.derivation or "").rpartition(": ")[2]
    return text if "–" in text else ""


__all__ = ["GPU_INDEX", "MedianDevice", "gpu_index", "median_device", "merge_measured", "model_id", "spread_text",
           "summary"]
