"""Which catalog device a profile ran on, with the reasoning: :class:`DeviceMatch` from the device name the file gives
(if any) and what its meta says (architecture, SM/CU count, memory size).

Classes of answer, each with a one-line ``note`` unless the name is the catalog's own:

- the catalog's device by name (``NVIDIA A100-SXM4-40GB``): exact, no note;
- a variant of a catalog device (``AMD Instinct MI300X VF``, an SR-IOV virtual function; ``OAM``, ``HF``): the base
  device, with a note;
- a marketing or family name that names no model (``AMD Radeon Graphics``, ``MI200``, ``NVIDIA Graphics Device``)
  or no name at all: the device of that architecture, CU/SM count and memory size, with the reasoning;
- a model the catalog lacks, of a silicon it has (``NVIDIA L20`` on AD102): the closest device of the same silicon,
  with a note saying so — never a silent default;
- a silicon the catalog lacks (a V100 with no V100 in the catalog), or too little to tell: no device, with a note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .silicon import CHIPS, SILICON, line_of

if TYPE_CHECKING:
    from ..models import Hardware
    from .devices import Catalog


@dataclass(frozen=True)
class DeviceMatch:
    """The catalog devices for a profile's device, best first (may be empty); ``exact`` when the catalog has this
    very device; ``note``: one line of reasoning, ``None`` when the name is the catalog's own."""

    ids: list[str] = field(default_factory=list)
    exact: bool = False
    note: str | None = None


#: words after a model that name a variant of the same GPU: (meaning, shown in the note)
_VARIANTS = {"vf": "an SR-IOV virtual function", "oam": "the OAM module form", "hf": "a variant ('HF')"}

_MARKETING = re.compile(r"(?i)^\s*(amd\s+)?radeon(\s*\((tm|r)\))?(\s+pro)?\s+graphics\s*$|^\s*(nvidia\s+)?graphics\s+device\s*$"
                        r"|^\s*(amd\s+)?(instinct\s+)?mi[1-4]00\s*$")

_ARCH = re.compile(r"^(gfx[0-9a-f]{3,4}|sm_?\d{2,3}[a-z]?)(?::.*)?$")

#: words that make a name a product's even without a model word like a100: "GeForce RTX 3090 Ti", "Radeon RX 7900"
_PRODUCT = re.compile(r"(?i)\b(geforce|quadro|titan|tesla|jetson|instinct|radeon|rtx|gtx|rx)\b.*\d")


def memory_of(meta: Mapping[str, str] | None) -> tuple[float, str] | None:
    """The GPU memory a profile reports, in bytes, with how to show it, from whichever key the parser filled: bytes,
    KiB, MiB or GB (GPU memories of 4 GB to 1 TB fall in separate ranges in each unit, so the magnitude says which)."""
    for key in ("memory_bytes", "total_memory", "totalGlobalMem", "gpu_memory", "memory_gb", "vram_gb", "vram"):
        raw = (meta or {}).get(key)
        try:
            v = float(str(raw).replace(",", "")) if raw not in (None, "") else 0.0
        except ValueError:
            continue
        if not 0 < v < float("inf"):
            continue
        if key.endswith("_gb") or v < 1024:
            return v * 1e9, f"{v:g} GB"
        b = v * 2**20 if v < 1e6 else v * 2**10 if v < 1e9 else v
        return b, f"{b / 2**30:.0f} GiB"
    return None


def _norm_arch(text: object) -> str | None:
    """``gfx942`` from ``gfx942:sramecc+:xnack-``, ``sm_90`` from ``sm90`` or ``SM_90``; None for anything else."""
    hit = _ARCH.match(str(text or "").strip().lower())
    if not hit:
        return None
    a = hit.group(1)
    return a if a.startswith("gfx") else "sm_" + a.removeprefix("sm").lstrip("_")


def arch_of(meta: Mapping[str, str] | None, name: str | None = None) -> str | None:
    """``gfx942`` or ``sm_90`` from the meta (``gpu_arch``, ``arch``, ``compute_capability``), else from a name that
    is itself an architecture (``gfx942:sramecc+:xnack-``)."""
    m = meta or {}
    for text in (m.get("gpu_arch"), m.get("arch"), name):
        a = _norm_arch(text)
        if a:
            return a
    cc = re.fullmatch(r"\s*(\d{1,2})\.(\d)\s*", str(m.get("compute_capability") or ""))
    return f"sm_{cc.group(1)}{cc.group(2)}" if cc else None


def _mem_fits(hw: Hardware, mem: float | None) -> bool:
    """Whether a reported memory size fits the device's (profilers report GiB, or a little less than the label)."""
    cap = hw.offchip.capacity
    return mem is None or not cap or 0.85 <= mem / cap <= 1.2


def _silicon(hw: Hardware) -> tuple[str | None, str | None]:
    """(architecture, chip) of a catalog device: the built-in table, else a gfx/sm alias of a user's device."""
    if hw.id in SILICON:
        return SILICON[hw.id]
    for alias in hw.aliases:
        a = _norm_arch(alias)
        if a:
            return a, a
    return None, None


class _Facts:
    """What the profile says: name, architecture, unit count, memory; and the catalog's devices of that arch."""

    mem: float | None  #: bytes
    mem_text: str

    def __init__(self, cat: Catalog, name: str | None, meta: Mapping[str, str] | None, units: int | None):
        self.cat, self.name, self.units = cat, name, units
        self.arch = arch_of(meta, name)
        self.mem, self.mem_text = memory_of(meta) or (None, "")
        part = str((meta or {}).get("compute_partition") or "").strip().upper()
        self.partition = part if part in ("DPX", "TPX", "QPX", "CPX") else ""  #: a partition, not the whole GPU
        self.same_arch = [hw for hw in cat if _silicon(hw)[0] == self.arch] if self.arch else []

    def word(self) -> str:
        return "SMs" if (self.arch or "").startswith("sm_") else "CUs"

    def said(self) -> str:
        """``gfx942 with 304 CUs and 192 GB``: what the decision rests on."""
        parts = [f"{self.units} {self.word()}" if self.units else "", self.mem_text]
        parts = [p for p in parts if p]
        return (self.arch or "an unknown architecture") + (" with " + " and ".join(parts) if parts else "")

    def chip(self) -> str | None:
        """The silicon: one chip per gfx id; for an sm_XX, the smallest chip of that architecture with at least
        the profile's SM count (e.g. 84 SMs on sm_86 is GA102), or the one chip the catalog has of it."""
        if not self.arch:
            return None
        if self.arch.startswith("gfx"):
            return next((_silicon(hw)[1] for hw in self.same_arch), self.arch)
        chips = CHIPS.get(self.arch, ())
        if self.units:
            return next((c for c, full in chips if full >= self.units), None)
        mine = {_silicon(hw)[1] for hw in self.same_arch}
        return next(iter(mine)) if len(mine) == 1 and len(chips) <= 1 else None


def _by_units_and_memory(f: _Facts, pool: list[Hardware]) -> tuple[list[Hardware], bool]:
    """The devices of ``pool`` the unit count and memory size agree with; whether the count matched one exactly."""
    from .devices import UNITS

    counted = [hw for hw in pool if f.units and UNITS.get(hw.id) == f.units]
    if f.units and not counted:
        return [], False
    fits = [hw for hw in counted or pool if _mem_fits(hw, f.mem)]  # a size no candidate has: none of them
    return fits, bool(counted)


def _closest_of_silicon(f: _Facts, chip: str, line: str | None) -> list[Hardware]:
    """Catalog devices on ``chip``, the same product line first, then the nearest unit count and memory size."""
    from .devices import UNITS

    pool = [hw for hw in f.same_arch if _silicon(hw)[1] == chip]

    def key(hw: Hardware) -> tuple[bool, float, float]:
        return (line is not None and line_of(hw.name) != line,
                abs((UNITS.get(hw.id) or 0) - f.units) if f.units else 0,
                abs((hw.offchip.capacity or 0) - f.mem) if f.mem else 0)

    return sorted(pool, key=key)


def by_architecture(f: _Facts, lead: str) -> DeviceMatch:
    """A device from architecture, unit count and memory: ``lead`` opens the note ("X is a marketing name; ")."""
    if not f.arch:
        return DeviceMatch([], False, f"{lead}the file gives no architecture, CU/SM count or memory size to tell "
                                      "the device by.")
    if not f.same_arch:
        return DeviceMatch([], False, f"{lead}{f.said()} is an architecture the catalog has no device of — add it "
                                      "on the Hardware page.")
    found, counted = _by_units_and_memory(f, f.same_arch)
    if found:
        chips = {_silicon(hw)[1] for hw in found}
        if not counted and len(chips) > 1:
            names = ", ".join(hw.id for hw in found)
            return DeviceMatch([], False, f"{lead}{f.said()} could be any of {names}; the SM count would tell "
                                          "them apart.")
        best, others = found[0], [hw.id for hw in found[1:]]
        sure = not others and (counted or f.mem is not None)
        if sure:
            why = f"{lead}{f.said()} is the {best.name} ({best.id})"
        else:
            rest = others or [hw.id for hw in f.same_arch if hw is not best]
            missing = [w for w, have in (("CU count" if f.arch.startswith("gfx") else "SM count", f.units),
                                         ("memory size", f.mem)) if not have]
            by = f"the {' and '.join(missing)} would tell it from" if missing else "nothing in the file tells it from"
            why = f"{lead}{f.said()} is taken as the {best.name} ({best.id})" + (
                f"; {by} {', '.join(rest)}" if rest else ", the catalog's only device of it")
        if f.partition:
            why += f" (compute partition {f.partition}: the peaks are the whole GPU's)"
        return DeviceMatch([best.id], sure, why + ".")
    chip = f.chip()
    near = _closest_of_silicon(f, chip, None) if chip else []
    if not near:
        return DeviceMatch([], False, f"{lead}{f.said()} matches no catalog device, nor any device of the same "
                                      "silicon — add it on the Hardware page.")
    from .devices import UNITS

    best = near[0]
    return DeviceMatch([best.id], False, f"{lead}{f.said()} matches no catalog device; closest of the same silicon "
                                         f"({chip}): {best.id} ({UNITS.get(best.id, '?')} {f.word()}) — add it on "
                                         "the Hardware page.")


def unknown_model(f: _Facts, name: str) -> DeviceMatch:
    """A model the catalog lacks: the closest device of the same silicon, with a note; never a device of another."""
    chip = f.chip()
    if not chip:
        why = (f"{f.said()} does not say which silicon" if f.arch else "the file does not say its architecture")
        return DeviceMatch([], False, f"{name} is not in the catalog, and {why} — add it on the Hardware page.")
    near = _closest_of_silicon(f, chip, line_of(name))
    if not near:
        what = chip if chip == f.arch else f"{chip}, {f.arch}"
        return DeviceMatch([], False, f"{name} is not in the catalog, nor is any device of its silicon ({what}) — "
                                      "add it on the Hardware page.")
    return DeviceMatch([near[0].id], False, f"{name} is not in the catalog; closest of the same silicon ({chip}): "
                                            f"{near[0].id} — add it on the Hardware page.")


def resolve(cat: Catalog, device: str | None, meta: Mapping[str, str] | None) -> DeviceMatch:
    """See :meth:`Catalog.resolve`."""
    from .devices import names_gpu_model, units_of

    name = re.sub(r"\s+", " ", str(device or "")).strip() or None
    f = _Facts(cat, name, meta, units_of(meta))
    if not name or _ARCH.match(name.lower()):
        return by_architecture(f, "")
    if _MARKETING.match(name):
        return by_architecture(f, f"{name} is a {'family' if 'mi' in name.lower() else 'marketing'} name; ")
    base, variant = name, None
    tail = re.search(r"[\s_-]+(vf|oam|hf)\s*$", name, re.IGNORECASE)
    if tail:
        base, variant = name[:tail.start()].strip(), tail.group(1).lower()
    hits = cat.closest_by_name(base, units=f.units)
    if hits:
        hw = cat.get(hits[0])
        if variant:
            return DeviceMatch(hits, False, f"{name} is {_VARIANTS[variant]} of the {hw.name}: judged as {hw.id}.")
        return DeviceMatch(hits, True, None)
    named = cat.closest_by_name(base)
    if named:  # the name's model, contradicted by the profile's own unit count
        from .devices import UNITS

        word = "SMs" if (f.arch or "").startswith("sm_") or "nvidia" in name.lower() else "CUs"
        part = f" (compute partition {f.partition})" if f.partition else ""
        return DeviceMatch([], False, f"{name} has {UNITS.get(named[0], '?')} {word} in the catalog ({named[0]}) but "
                                      f"the profile reports {f.units}{part}: a partition or another model.")
    if names_gpu_model(base) or _PRODUCT.search(base):
        return unknown_model(f, name)
    return by_architecture(f, f"{name} names no GPU model the catalog knows; ")
