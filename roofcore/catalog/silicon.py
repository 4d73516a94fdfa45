"""The silicon behind each built-in catalog device, so that "the same silicon" can be computed: a profile from a GPU
the catalog lacks (an L20, a 3090 Ti) is judged on the nearest device built from the same chip, never on one of
another chip (a V100 never becomes an A100).

NVIDIA chips and their full SM counts are from NVIDIA's architecture whitepapers (GP10x, GV100, TU10x, GA100, GA10x,
AD10x, GH100, GB10x/GB20x); a chip's product enables up to that many. AMD names one silicon per LLVM target (gfx id).
"""

from __future__ import annotations

import re

#: catalog id -> (architecture, chip)
SILICON: dict[str, tuple[str, str]] = {
    # NVIDIA Pascal, Volta, Turing
    "gtx-1080": ("sm_61", "GP104"), "gtx-1060-6gb": ("sm_61", "GP106"),
    "v100-sxm2-16gb": ("sm_70", "GV100"), "v100-sxm2-32gb": ("sm_70", "GV100"),
    "t4": ("sm_75", "TU104"), "rtx-2080-ti": ("sm_75", "TU102"),
    # Ampere
    "a100-40gb-sxm": ("sm_80", "GA100"), "a100-80gb-sxm": ("sm_80", "GA100"), "a100-40gb-pcie": ("sm_80", "GA100"),
    "a800-sxm": ("sm_80", "GA100"),
    "rtx-3070": ("sm_86", "GA104"), "rtx-3080": ("sm_86", "GA102"), "rtx-3090": ("sm_86", "GA102"),
    "a10": ("sm_86", "GA102"), "a10g": ("sm_86", "GA102"), "a40": ("sm_86", "GA102"), "rtx-a6000": ("sm_86", "GA102"),
    "jetson-agx-orin-64gb": ("sm_87", "GA10B"),
    # Ada
    "l4": ("sm_89", "AD104"), "l40s": ("sm_89", "AD102"), "l20": ("sm_89", "AD102"), "rtx-4090": ("sm_89", "AD102"),
    "rtx-6000-ada": ("sm_89", "AD102"), "rtx-4080": ("sm_89", "AD103"),
    # Hopper
    "h100-sxm": ("sm_90", "GH100"), "h100-pcie": ("sm_90", "GH100"), "h200-sxm": ("sm_90", "GH100"),
    "h800-sxm": ("sm_90", "GH100"), "h20": ("sm_90", "GH100"),
    # Blackwell
    "b200": ("sm_100", "GB100"), "gb200": ("sm_100", "GB100"), "b300": ("sm_103", "GB110"),
    "rtx-5070": ("sm_120", "GB205"), "rtx-5080": ("sm_120", "GB203"), "rtx-5090": ("sm_120", "GB202"),
    "rtx-pro-6000-blackwell": ("sm_120", "GB202"),
    # AMD
    "mi50": ("gfx906", "Vega 20"), "mi60": ("gfx906", "Vega 20"), "mi100": ("gfx908", "Arcturus"),
    "mi210": ("gfx90a", "Aldebaran"), "mi250x-gcd": ("gfx90a", "Aldebaran"), "mi250x": ("gfx90a", "Aldebaran"),
    "mi300x": ("gfx942", "Aqua Vanjaram"), "mi325x": ("gfx942", "Aqua Vanjaram"), "mi300a": ("gfx942", "Aqua Vanjaram"),
    "mi350x": ("gfx950", "CDNA 4"), "mi355x": ("gfx950", "CDNA 4"),
    "rx-7900-xtx": ("gfx1100", "Navi 31"), "radeon-ai-pro-r9700": ("gfx1201", "Navi 48"),
    "rx-9070-xt": ("gfx1201", "Navi 48"),
}

#: NVIDIA architecture -> its chips with their full SM counts, smallest first
CHIPS: dict[str, tuple[tuple[str, int], ...]] = {
    "sm_60": (("GP100", 60),),
    "sm_61": (("GP108", 3), ("GP107", 6), ("GP106", 10), ("GP104", 20), ("GP102", 30)),
    "sm_70": (("GV100", 84),),
    "sm_75": (("TU117", 16), ("TU116", 24), ("TU106", 36), ("TU104", 48), ("TU102", 72)),
    "sm_80": (("GA100", 128),),
    "sm_86": (("GA107", 20), ("GA106", 30), ("GA104", 48), ("GA103", 60), ("GA102", 84)),
    "sm_87": (("GA10B", 16),),
    "sm_89": (("AD107", 24), ("AD106", 36), ("AD104", 60), ("AD103", 80), ("AD102", 144)),
    "sm_90": (("GH100", 144),),
    "sm_100": (("GB100", 160),),
    "sm_103": (("GB110", 160),),
    "sm_120": (("GB207", 20), ("GB206", 36), ("GB205", 50), ("GB203", 84), ("GB202", 192)),
}

_WORKSTATION = re.compile(r"\bquadro\b|\brtx\s?a\d{4}\b|\brtx\s?pro\b|\brtx\s?\d{4}\s?ada\b|radeon\s+(ai\s+)?pro\b")


def line_of(name: str) -> str:
    """The product line a name belongs to (geforce, workstation, radeon, jetson, datacenter): a file from a card the
    catalog lacks is judged on a device of the same silicon and, where there is one, of the same line."""
    low = name.lower()
    if _WORKSTATION.search(low):
        return "workstation"
    if "geforce" in low or re.search(r"\b(rtx|gtx)\s?\d{3,4}\b", low):
        return "geforce"
    if "radeon" in low:
        return "radeon"
    if re.search(r"\b(jetson|orin|xavier)\b", low):
        return "jetson"
    return "datacenter"
