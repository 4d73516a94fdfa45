"""The :class:`Catalog` (devices by id, in load order) and how a profiler's device name finds its catalog id
(:meth:`Catalog.closest`, :meth:`Catalog.suggest`): right or none, never wrong."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import CatalogError, UnknownHardwareError
from ..models import Hardware
from .resolve import DeviceMatch
from .resolve import resolve as _resolve

# ------------------------------------------------------------------- profiler device names -> catalog ids

#: words that name a vendor or a product line, not the model ("NVIDIA", "Tesla", "AMD Instinct", "(R)")
_BRAND_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro", "amd", "instinct", "radeon", "intel", "apple",
                          "google", "r", "tm", "gpu", "vf"})

#: form-factor words: the same model in another form has other peaks (an A100 PCIe is not an A100 SXM4)
_FORM_WORDS = {"sxm": "sxm", "sxm2": "sxm", "sxm3": "sxm", "sxm4": "sxm", "sxm5": "sxm", "sxm6": "sxm",
               "pcie": "pcie", "nvl": "nvl", "oam": "oam", "gcd": "gcd", "dgxs": "dgxs", "mezzanine": "sxm"}

#: NVIDIA board codes some drivers print instead of the product name: (form, memory GB)
_BOARDS = {"pg509-200": ("sxm", 40)}

#: SMs / CUs per built-in device, to refuse a name match a profile's own count contradicts (an MI210 or an
#: MI250 GCD, 104 CUs, is not an MI250X GCD, 110)
UNITS = {"a100-40gb-sxm": 108, "a100-80gb-sxm": 108, "a100-40gb-pcie": 108, "h100-sxm": 132, "h100-pcie": 114,
          "h200-sxm": 132, "b200": 148, "l4": 58, "l40s": 142, "rtx-4090": 128, "v100-sxm2-16gb": 80,
          "v100-sxm2-32gb": 80, "t4": 40, "gtx-1080": 20, "gtx-1060-6gb": 10, "rtx-2080-ti": 68, "rtx-3070": 46,
          "rtx-5070": 48, "mi100": 120, "mi210": 104, "mi250x-gcd": 110, "mi250x": 220, "mi300a": 228,
          "mi300x": 304, "mi325x": 304, "mi350x": 256, "rtx-5090": 170, "radeon-ai-pro-r9700": 64,
          "rtx-5080": 84, "rtx-4080": 76, "rtx-3090": 82, "rtx-3080": 68, "rtx-pro-6000-blackwell": 188,
          "rtx-6000-ada": 142, "a10": 72, "a10g": 80, "a40": 84, "rtx-a6000": 84, "l20": 92, "a800-sxm": 108,
          "h800-sxm": 132, "h20": 78, "gb200": 148, "jetson-agx-orin-64gb": 16, "mi355x": 256, "mi60": 64,
          "mi50": 60, "rx-9070-xt": 64, "rx-7900-xtx": 96}  # b300: SM count not published

_ARCH = re.compile(r"^(gfx[0-9a-f]{3,4}|sm_?\d{2,3}[a-z]?)(?::.*)?$")

_MODEL_WORD = re.compile(r"^[a-z]{1,3}\d{1,4}[a-z]{0,3}$")  # a100, h100, v100, t4, l40s, mi300x, gh200, b200



def _name_key(text: str) -> str:
    """A name compared without case, brand words, parentheses or separators ("NVIDIA A100-SXM4-40GB" -> "a100 sxm4 40gb")."""
    low = re.sub(r"\([^)]*\)", " ", text.lower().replace("(r)", " ").replace("(tm)", " "))
    return " ".join(w for w in re.split(r"[^a-z0-9+]+", low) if w and w not in _BRAND_WORDS)


def _model(text: str) -> tuple[str, int | None, str | None]:
    """(model words, memory GB or None, form factor or None) of a device name."""
    words = _name_key(text).split()
    model, mem, form = [], None, None
    i = 0
    while i < len(words):
        w = words[i]
        board = f"{w}-{words[i + 1]}" if i + 1 < len(words) else ""
        if board in _BOARDS:
            form, mem = _BOARDS[board]
            i += 2
            continue
        if re.fullmatch(r"pg\d{3}", w):  # an unknown board code: form and memory unknown
            i += 2
            continue
        m = re.fullmatch(r"(\d+)gb", w)
        if m:
            mem = int(m.group(1))
        elif w in _FORM_WORDS:
            form = _FORM_WORDS[w]
        elif not re.fullmatch(r"hbm\d*e?|gddr\d*x?|\d+w|hgx|dgx", w):  # memory type and power do not name a model
            model.append(w)
        i += 1
    return " ".join(model), mem, form


def units_of(meta: Mapping[str, str] | None) -> int | None:
    """The SM or CU count a profile reports (``cu_per_gpu``, ``sm_count``), which tells devices of one
    architecture apart (a 104-CU gfx90a is an MI210, a 110-CU one an MI250X GCD)."""
    for key in ("cu_per_gpu", "sm_count"):
        try:
            v = int(float((meta or {}).get(key) or 0))
        except ValueError:
            continue
        if v > 0:
            return v
    return None


def names_gpu_model(text: str) -> bool:
    """Whether a device name names a GPU model (a100, mi300x, rtx 4090), as opposed to an id typo or nothing."""
    return any(_MODEL_WORD.match(w) for w in _model(text)[0].split())


@dataclass(frozen=True)
class Catalog:
    """Loaded devices by id, in load order; ``replaced`` records which ids a user catalog overrode."""

    devices: Mapping[str, Hardware]
    replaced: Mapping[str, str] = field(default_factory=dict)  #: id -> origin of the device it replaced

    def __iter__(self) -> Iterator[Hardware]:
        return iter(self.devices.values())

    def __len__(self) -> int:
        return len(self.devices)

    def __contains__(self, hw_id: object) -> bool:
        return hw_id in self.devices

    @property
    def ids(self) -> list[str]:
        return list(self.devices)

    def get(self, hw_id: str) -> Hardware:
        if hw_id in self.devices:
            return self.devices[hw_id]
        close = self.closest(hw_id)
        hint = f"closest: {', '.join(close)}" if close else "see `roofline hardware list`"
        raise UnknownHardwareError(f"unknown hardware id {hw_id!r}; {hint}.")

    def closest_by_name(self, text: str, *, units: int | None = None) -> list[str]:
        """The one id a profiler's device name names, or ``[]``: the catalog's own name or alias, else the model
        when nothing contradicts it (memory size, form factor, board code, the SM/CU count ``units``)."""
        raw = text.strip()
        needle = _name_key(raw)
        devices = list(self)

        def fits(hw: Hardware) -> bool:
            return units is None or UNITS.get(hw.id) in (None, units)

        exact = [hw.id for hw in devices
                 if raw.lower() == hw.id or (needle and needle in {_name_key(a) for a in (hw.name, *hw.aliases)})]
        if exact:
            return [i for i in exact if fits(self.devices[i])][:1]
        found = self._by_model(raw, fits)
        return found if len(found) == 1 else []

    def _by_model(self, raw: str, fits: Callable[[Hardware], bool]) -> list[str]:
        model, mem, form = _model(raw)
        found = []
        for hw in self:
            sigs = [_model(x) for x in (hw.id, hw.name, *hw.aliases)]
            if not model or model not in {s[0] for s in sigs}:
                continue
            forms = {s[2] for s in sigs if s[2]}
            mems = {s[1] for s in sigs if s[1]} or ({round(hw.offchip.capacity / 1e9)} if hw.offchip.capacity else set())
            if (form and forms and form not in forms) or (mem and mems and mem not in mems) or not fits(hw):
                continue
            found.append(hw.id)
        return found

    def closest(self, text: str, n: int = 3, *, units: int | None = None) -> list[str]:
        """Ids for ``text``: the device a profiler's device name reports, else ids near an id typo.

        A device name maps to one id only when the model matches and nothing contradicts it: memory size,
        form factor (``NVIDIA A100-PCIE-40GB`` is no SXM4 A100), board code (``A100-PG509-200`` is the SXM4
        40GB board) or the profile's SM/CU count ``units``; a V100 never becomes an A100. An architecture
        (``gfx942``, ``sm_90``) maps through the catalog's aliases: with ``units``, to the device of that count
        only; without, to the catalog's first device of that architecture. ``[]`` when unsure. Near ids by spelling
        (``h100`` -> h100-sxm, h100-pcie, h200-sxm) only for lower-case id-like text, for "did you mean".
        """
        raw = text.strip()
        needle = _name_key(raw)
        devices = list(self)

        def fits(hw: Hardware) -> bool:
            return units is None or UNITS.get(hw.id) in (None, units)

        if any(raw.lower() == hw.id or (needle and needle in {_name_key(a) for a in (hw.name, *hw.aliases)})
               for hw in devices):
            return self.closest_by_name(raw, units=units)
        arch = _ARCH.match(raw.lower())
        if arch:  # several devices share one (gfx942: MI300X, MI300A): the CU count tells them apart
            same = [hw.id for hw in devices if arch.group(1) in {a.lower() for a in hw.aliases}]
            if units is not None:
                same = [i for i in same if UNITS.get(i) == units]
            return same[:1]  # without a count: the catalog's first device of that architecture
        found = self._by_model(raw, fits)
        if len(found) == 1:
            return found
        if not re.fullmatch(r"[a-z0-9][a-z0-9._+-]*", raw):
            return []  # a profiler's name the catalog lacks, or matches ambiguously: no guess
        names = {hw.id: hw.id for hw in devices}
        for hw in devices:
            for alias in (hw.name, *hw.aliases):
                names[alias.lower()] = hw.id
        hits = difflib.get_close_matches(raw.lower(), list(names), n=n * 3, cutoff=0.5)
        out: list[str] = list(found)  # the model's devices first ("a100": both A100s), then near spellings
        for h in hits:
            if names[h] not in out:
                out.append(names[h])
        return out[:n]

    def resolve(self, device: str | None, meta: Mapping[str, str] | None = None) -> DeviceMatch:
        """The catalog device a profile ran on, with one line of reasoning when the name is not the catalog's own.

        From the device name the file gives and its meta (``gpu_arch``/``arch``/``compute_capability``, ``sm_count``
        /``cu_per_gpu``, a memory size): the device by name (exact); a variant (``MI300X VF``, an SR-IOV virtual
        function; ``OAM``, ``HF``) as its base device; a marketing or family name (``AMD Radeon Graphics``,
        ``MI200``) or no name by architecture, unit count and memory size (gfx942 with 304 CUs and 192 GB is an
        MI300X); a model the catalog lacks as the closest device of the same silicon (never of another: a V100
        never becomes an A100); else no device, with a note saying why. See :mod:`roofcore.catalog.resolve`."""
        return _resolve(self, device, meta)

    def suggest(self, device: str | None, meta: Mapping[str, str] | None = None) -> list[str]:
        """Catalog ids for the device a profile ran on, best first: :meth:`resolve`'s ids (its note says why)."""
        return list(self.resolve(device, meta).ids)

    def with_device(self, hw: Hardware, *, overrides: bool = False) -> Catalog:
        """A new catalog with ``hw`` added (e.g. a custom device from the app)."""
        if hw.id in self.devices and not overrides:
            raise CatalogError(where=hw.origin or hw.id, expected="a new id, or `overrides: true`",
                               found=f"id {hw.id!r}, already defined in {self.devices[hw.id].origin}",
                               hint="pick another id, or say `overrides: true` to replace the built-in device.")
        devices = dict(self.devices)
        replaced = dict(self.replaced)
        if hw.id in devices:
            replaced[hw.id] = devices[hw.id].origin
        devices[hw.id] = hw
        return Catalog(devices=MappingProxyType(devices), replaced=MappingProxyType(replaced))

