"""The device a workload was profiled on, as the app shows it: the catalog device resolved from what the file says
(its device name, else the architecture, compute capability, gfx id or SM/CU count the readers found), the
one-line reason, and whether two workloads came from different GPUs. No Streamlit here: app.device_pick shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import roofcore
from roofcore.ingest.arch import catalog_match
from roofcore.ingest.vendor import article, vendor_of


@dataclass(frozen=True)
class Match:
    """Where a workload's device lands in the catalog."""

    ids: tuple[str, ...]  #: catalog ids, the closest first (none: nothing of the same silicon)
    exact: bool  #: the device the file names is itself in the catalog
    device: str | None  #: the device as the file names it
    note: str | None  #: one line: why these ids (the resolver's reasoning)
    evidence: str | None  #: what in the file named the device, when no device column did

    @property
    def top(self) -> str | None:
        return self.ids[0] if self.ids else None

    @property
    def missing(self) -> bool:
        """The file names a device that the catalog lacks (a closest one may stand in for it)."""
        return bool(self.device) and not self.exact


def match(catalog: roofcore.Catalog, w: roofcore.Workload) -> Match | None:
    """The catalog device for ``w`` (``Catalog.resolve`` where the engine has it, else ``suggest``); None when the
    file says nothing about its device."""
    meta = dict(w.meta or {})
    evidence = str(meta.get("device_evidence") or "").strip() or None
    m = catalog.resolve(w.device, meta)
    # the same choice as the CLI's: the catalog's answer, or the one device the implied DRAM peak picks out
    picked, by_bandwidth = catalog_match(catalog, w.device, meta)
    ids, exact = tuple(picked), bool(m.exact)
    note = by_bandwidth or ((str(m.note).strip() or None) if m.note else None)
    if not ids and not w.device:
        return None
    return Match(ids=ids, exact=exact, device=str(w.device).strip() if w.device else None, note=note,
                 evidence=evidence)


def _sentence(text: str) -> str:
    """A clause as a sentence's start: "the file names …" gets its capital, "sm_80 with …" and "gfx942 …" do not."""
    text = text.strip().rstrip(". ")
    return text[:1].upper() + text[1:] if re.match(r"[a-z]+\s", text) else text


def explain(m: Match) -> tuple[str, list[str]]:
    """Why this device: one short line (a device the catalog lacks: the resolver's note; else the first thing the
    file says, else the note's first clause, else the name the file gives), and the rest of the reasoning."""
    note = [c.strip() for c in (m.note or "").rstrip(". ").split("; ") if c.strip()]
    evidence = [c.strip() for c in (m.evidence or "").split("; ") if c.strip()]
    if m.missing and note:
        return _sentence("; ".join(note)), ([_sentence("From the file: " + m.evidence)] if evidence else [])
    if evidence:
        line = evidence[0]
        rest = ([_sentence("; ".join(note))] if note else []) + (
            [_sentence("From the file: " + "; ".join(evidence))] if len(evidence) > 1 else [])
        return _sentence(line), rest
    if note:
        return _sentence(note[0]), ([_sentence("; ".join(note[1:]))] if len(note) > 1 else [])
    return (_sentence(f"the file names {m.device}") if m.device else ""), []


def reason(m: Match) -> str:
    """The one-line reason of :func:`explain`."""
    return explain(m)[0]


def vendor(catalog: roofcore.Catalog, w: roofcore.Workload, m: Match | None) -> str | None:
    """The GPU vendor: the matched device's, else the one the device name says, else the profiler's (ncu runs on
    NVIDIA GPUs only, rocprof on AMD ones: :func:`roofcore.ingest.vendor.vendor_of`); None when nothing says."""
    if m is not None and m.top and m.top in catalog:
        return catalog.get(m.top).vendor
    found = vendor_of(w)
    return found[0] if found else None


def other_vendor(catalog: roofcore.Catalog, w: roofcore.Workload, m: Match | None, chosen: list[str]) -> str | None:
    """One line where the file says which vendor's GPU it ran on, names no catalog device, and none of the
    ``chosen`` devices is that vendor's (the default NVIDIA device under a rocprof export): its measured times would
    be read against another vendor's roofs with nothing said. None otherwise (a device of the vendor is among the
    chosen ones, or the file's own device is offered by :func:`match`)."""
    if m is not None and m.top and m.top in catalog:
        return None  # the sidebar offers the file's own device
    found = vendor_of(w)
    devices = [catalog.get(h) for h in chosen if h in catalog]
    if found is None or not devices or any(d.vendor.lower() in (found[0].lower(), "unknown", "") for d in devices):
        return None  # a device of that vendor, or one of no known vendor (an ERT measurement), is among them
    names = ", ".join(d.name for d in devices[:2]) + (f" and {len(devices) - 2} more" if len(devices) > 2 else "")
    return (f"This profile ran on {article(found[0])} {found[0]} GPU ({found[1]}); its times are read against the "
            f"roofs of {names}. Choose the {found[0]} GPU it ran on under Devices.")


def default_stands_in(catalog: roofcore.Catalog, w: roofcore.Workload, m: Match | None, default: str) -> str | None:
    """One line where the file names no GPU (nor one the catalog lacks) and the app's ``default`` device stands in,
    with what the file does say of its GPU (kernel names built for sm_80, ...): the CLI refuses such a file without
    ``--hardware``, and the app should not draw it on the default's roofs with nothing said. None otherwise."""
    if (m is not None and (m.top or m.device)) or default not in catalog:
        return None
    said = str((w.meta or {}).get("device_evidence") or "").strip()
    return ((f"The file names no one GPU: {said}." if said else "The file names no GPU.") + " The roofs are those of "
            f"the default device, {catalog.get(default).name}; choose the GPU it ran on under Devices.")


def describe(catalog: roofcore.Catalog, w: roofcore.Workload, m: Match | None) -> str | None:
    """The GPU as a sentence names it: the file's device name, else the matched device's (said to be inferred: the
    file names none), else "an AMD GPU"."""
    if m is not None and m.device:
        return m.device
    if m is not None and m.top and m.top in catalog:
        return f"{catalog.get(m.top).name} (inferred)"
    v = vendor(catalog, w, m)
    return f"{article(v)} {v} GPU" if v else None


def _key(text: str | None) -> str:
    return re.sub(r"[^a-z0-9]", "", (text or "").lower())


def differs(catalog: roofcore.Catalog, old: roofcore.Workload, new: roofcore.Workload) -> bool:
    """Whether two workloads were profiled on different GPUs, as far as their files say: different catalog
    devices, else different device names, else different vendors. Unknown on either side is no difference."""
    a, b = match(catalog, old), match(catalog, new)
    if a is not None and b is not None:
        if a.top and b.top:
            return a.top != b.top
        if a.device and b.device:
            return _key(a.device) != _key(b.device)
        if (a.top and b.device) or (b.top and a.device):  # a name the catalog lacks is not the other's device
            return True
    va, vb = vendor(catalog, old, a), vendor(catalog, new, b)
    return bool(va and vb and va != vb)


def form_prefill(catalog: roofcore.Catalog, w: roofcore.Workload, m: Match) -> dict[str, str]:
    """What the Hardware page's "add a device" form can start from: the name the file gives, an id made of it and
    the vendor. No figure is copied from another device: the peaks and bandwidths come from its datasheet."""
    name = m.device or ""
    out = {"name": name, "id": re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60]}
    v = vendor(catalog, w, None)
    if v:
        out["vendor"] = v
    return out


__all__ = ["Match", "default_stands_in", "describe", "differs", "explain", "form_prefill", "match", "other_vendor",
           "reason", "vendor"]
