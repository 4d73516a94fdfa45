"""Which vendor's GPU a profile ran on, where its file says so without naming a catalog device: the device name or
architecture it gives (``AMD Instinct …``, ``gfx942``, ``sm_80``), else its profiler, which runs on one vendor's
GPUs only (Nsight Compute, Nsight Systems and nvprof on NVIDIA's, rocprof and its successors on AMD's).

The app warns when none of the chosen devices is that vendor's; the CLI names the vendor in its ``--hardware`` hint.
"""

from __future__ import annotations

import re

from ..models import Workload

#: profilers that only ever run on one vendor's GPUs (the format's name starts with the key)
FORMAT_VENDOR = {"ncu": "NVIDIA", "nsys": "NVIDIA", "nvprof": "NVIDIA", "rocprof": "AMD"}
#: a vendor told by a device name or an architecture
NAME_VENDOR = (("NVIDIA", re.compile(r"nvidia|geforce|tesla|quadro|\brtx\b|\bsm_?\d", re.I)),
               ("AMD", re.compile(r"\bamd\b|radeon|instinct|\bgfx[0-9a-f]{3,4}\b|\bmi\d{2,3}", re.I)))


def vendor_of(w: Workload) -> tuple[str, str] | None:
    """``(vendor, what says so)`` — ``("AMD", "rocprof runs on AMD GPUs only")``, ``("NVIDIA", "the file names
    Tesla T4")`` — or None where nothing says, or the files' profilers disagree."""
    meta = w.meta or {}
    for text in (w.device, meta.get("gpu_arch"), meta.get("arch")):
        for name, pattern in NAME_VENDOR:
            if text and pattern.search(str(text)):
                shown = " ".join(str(text).split())
                return name, f"the file names {shown if len(shown) <= 60 else shown[:59] + '…'}"
    found = {(v, k) for f in w.formats for k, v in FORMAT_VENDOR.items() if f.startswith(k)}
    if len({v for v, _ in found}) != 1:
        return None
    v = next(iter(found))[0]
    tools = sorted(k for _, k in found)
    return v, f"{' and '.join(tools)} {'runs' if len(tools) == 1 else 'run'} on {v} GPUs only"


def list_hint(w: Workload) -> str:
    """Where to find a device id for ``w``: "see `roofline hardware list --vendor AMD`: rocprof runs on AMD GPUs
    only" where its vendor is known, else the whole list."""
    said = vendor_of(w)
    return f"see `roofline hardware list --vendor {said[0]}`: {said[1]}" if said else "see `roofline hardware list`"


def article(word: str) -> str:
    """The article a vendor's name takes: an AMD, an NVIDIA, an Intel; a Google."""
    return "an" if word[:1].upper() in "AEIOUN" else "a"
