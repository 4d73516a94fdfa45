"""A device out of the catalog: in the catalog's YAML grammar (quantities as unit strings, for download and
editing) and as the stable JSON shape (base units)."""

from __future__ import annotations

from typing import Any

from ..models import Figure, Hardware, Link, MemoryLevel
from .load import SCHEMA_VERSION


def _q(value: float, unit: str) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")):
        if value >= factor:
            return f"{value / factor:.6g} {prefix}{unit}"
    return f"{value:.6g} {unit}"


def _fig(f: Figure) -> dict[str, Any]:
    out: dict[str, Any] = {"source": f.source}
    for k in ("measured", "unverified"):
        if getattr(f, k):
            out[k] = True
    for k in ("derivation", "notes"):
        if getattr(f, k):
            out[k] = getattr(f, k)
    return out


def hardware_to_yaml_dict(hw: Hardware) -> dict[str, Any]:
    """The device in the catalog grammar (quantities as unit strings), for download and editing."""
    dev: dict[str, Any] = {"id": hw.id, "name": hw.name, "vendor": hw.vendor, "kind": hw.kind.value,
                           "scope": hw.scope.value}
    for k in ("config", "notes"):
        if getattr(hw, k):
            dev[k] = getattr(hw, k)
    if hw.aliases:
        dev["aliases"] = list(hw.aliases)
    if hw.unverified:
        dev["unverified"] = True
    dev["default_ceiling"] = hw.default_ceiling
    dev["compute"] = []
    for c in hw.ceilings:
        e: dict[str, Any] = {"precision": c.precision.value, "unit": c.unit.value, "peak": _q(c.peak, "FLOP/s")}
        if c.sparse:
            e["sparse"] = _q(c.sparse, "FLOP/s")
        if c.achievable:
            e["achievable"] = _q(c.achievable, "FLOP/s")
            e["achievable_source"] = (c.achievable_figure or c.figure).source
        dev["compute"].append(e | _fig(c.figure))
    dev["memory"] = [_path_entry("level", lv, lv.capacity) for lv in hw.levels]
    if hw.links:
        dev["links"] = [_path_entry("link", lk) for lk in hw.links]
    return dev


def _path_entry(key: str, x: MemoryLevel | Link, capacity: float | None = None) -> dict[str, Any]:
    """A memory level or link in the catalog grammar: name, bandwidth, label, capacity (levels), achievable."""
    e: dict[str, Any] = {key: x.name, "bandwidth": _q(x.bandwidth, "B/s")}
    if x.label:
        e["label"] = x.label
    if capacity:
        e["capacity"] = _q(capacity, "B")
    if x.achievable:
        e["achievable"] = _q(x.achievable, "B/s")
        e["achievable_source"] = (x.achievable_figure or x.figure).source
    return e | _fig(x.figure)


def hardware_to_yaml(hw: Hardware) -> str:
    import yaml

    doc = {"schema_version": SCHEMA_VERSION, "devices": [hardware_to_yaml_dict(hw)]}
    text: str = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)
    return text


def hardware_to_json(hw: Hardware) -> dict[str, Any]:
    """The stable JSON shape of a device (base units: FLOP/s, B/s, B; ridge in FLOP/B)."""

    def fig(f: Figure) -> dict[str, Any]:
        return {"source": f.source, "measured": f.measured, "unverified": f.unverified, "derivation": f.derivation}

    def opt(f: Figure | None) -> dict[str, Any] | None:
        return None if f is None else fig(f)

    return {
        "id": hw.id, "name": hw.name, "vendor": hw.vendor, "kind": hw.kind.value, "scope": hw.scope.value,
        "config": hw.config, "notes": hw.notes, "unverified": hw.unverified, "origin": hw.origin,
        "default_ceiling": hw.default_ceiling,
        "ceilings": [{"key": c.key, "precision": c.precision.value, "unit": c.unit.value, "peak_flops_per_s": c.peak,
                      "sparse_flops_per_s": c.sparse, "achievable_flops_per_s": c.achievable,
                      **fig(c.figure), "achievable_figure": opt(c.achievable_figure)} for c in hw.ceilings],
        "levels": [{"name": lv.name, "label": lv.display, "bandwidth_bytes_per_s": lv.bandwidth,
                    "capacity_bytes": lv.capacity, "achievable_bytes_per_s": lv.achievable,
                    **fig(lv.figure), "achievable_figure": opt(lv.achievable_figure)} for lv in hw.levels],
        "links": [{"name": lk.name, "label": lk.display, "bandwidth_bytes_per_s_per_direction": lk.bandwidth,
                   "achievable_bytes_per_s": lk.achievable, **fig(lk.figure),
                   "achievable_figure": opt(lk.achievable_figure)} for lk in hw.links],
        "ridge": hw.ridge(),
        "ridge_by_ceiling": {c.key: hw.ridge(c.key) for c in hw.ceilings},
    }

