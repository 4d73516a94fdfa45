"""Devices as a front end lists and tabulates them: a label, the picker's order, the catalog with a session's own
devices, and the Hardware tables (ceilings, levels, links, sources, devices side by side), figures formatted."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from ..catalog import Catalog
from ..models import Figure, Hardware, Precision
from ..units import fmt_bandwidth, fmt_bytes, fmt_intensity, fmt_rate


def device_label(hw: Hardware) -> str:
    """``"NVIDIA · H100 SXM5 80GB (h100-sxm)"``: the vendor prefix is dropped from the name when repeated."""
    name = hw.name
    if name.lower().startswith(hw.vendor.lower() + " "):
        name = name[len(hw.vendor) + 1:]
    return f"{hw.vendor} · {name} ({hw.id})" + (" · unverified" if hw.unverified else "")


def device_order(devices: Iterable[Hardware]) -> list[str]:
    """Device ids grouped by vendor, then by name (what the hardware picker lists)."""
    return [h.id for h in sorted(devices, key=lambda h: (h.vendor.lower(), h.name.lower(), h.id))]


def effective_catalog(base: Catalog, custom: Iterable[tuple[Hardware, bool]]) -> Catalog:
    """The built-in catalog plus the session's custom devices (which may override an id they say so for)."""
    cat = base
    for hw, overrides in custom:
        cat = cat.with_device(hw, overrides=overrides)
    return cat


def _tags(fig: Figure) -> str:
    tags = [t for t, on in (("measured", fig.measured), ("derived", bool(fig.derivation)),
                            ("unverified", fig.unverified)) if on]
    return ", ".join(tags)


def _derived(rows: list[dict[str, str]], figures: list[Figure]) -> pd.DataFrame:
    """The rows, with a Derivation column before Source where a figure says how it was worked out (a device of
    several GPUs: the median and its spread, "median of 8 GPUs (devices 0–7): 4.24–4.26 TB/s")."""
    frame = pd.DataFrame(rows)
    if any(f.derivation for f in figures):
        frame.insert(frame.columns.get_loc("Source"), "Derivation", [f.derivation or "–" for f in figures])
    return frame


def ceilings_frame(hw: Hardware) -> pd.DataFrame:
    ridge_off = {c.key: c.peak / hw.offchip.bandwidth for c in hw.ceilings}
    return _derived([{
        "Ceiling": c.key + (" (default)" if c.key == hw.default_ceiling else ""),
        "Peak (dense)": fmt_rate(c.peak), "Achievable": fmt_rate(c.achievable) if c.achievable else "–",
        "Sparse (reference only)": fmt_rate(c.sparse) if c.sparse else "–",
        f"Ridge vs {hw.offchip.display}": fmt_intensity(ridge_off[c.key]),
        "Marks": _tags(c.figure), "Source": c.figure.source} for c in hw.ceilings], [c.figure for c in hw.ceilings])


def levels_frame(hw: Hardware) -> pd.DataFrame:
    ridge = hw.ridge()
    return _derived([{
        "Level": lv.name, "Label": lv.display, "Bandwidth": fmt_bandwidth(lv.bandwidth),
        "Achievable": fmt_bandwidth(lv.achievable) if lv.achievable else "–",
        "Capacity": fmt_bytes(lv.capacity) if lv.capacity else "–",
        f"Ridge ({hw.default_ceiling})": fmt_intensity(ridge[lv.name]), "Marks": _tags(lv.figure),
        "Source": lv.figure.source} for lv in hw.levels], [lv.figure for lv in hw.levels])


def links_frame(hw: Hardware) -> pd.DataFrame:
    ridge = hw.ridge()
    columns = ["Link", "Label", "Bandwidth (per direction)", "Achievable", f"Ridge ({hw.default_ceiling})", "Marks",
               "Source"]
    if not hw.links:
        return pd.DataFrame(columns=columns)
    return _derived([{
        "Link": lk.name, "Label": lk.display, "Bandwidth (per direction)": fmt_bandwidth(lk.bandwidth),
        "Achievable": fmt_bandwidth(lk.achievable) if lk.achievable else "–",
        f"Ridge ({hw.default_ceiling})": fmt_intensity(ridge[lk.name]), "Marks": _tags(lk.figure),
        "Source": lk.figure.source} for lk in hw.links], [lk.figure for lk in hw.links])


def hardware_comparison(hws: Sequence[Hardware]) -> pd.DataFrame:
    """Devices side by side (one column each): identity, every ceiling (theoretical / achievable), every
    level and link (bandwidth, capacity), ridge points against the default ceiling, and unverified marks."""
    rows: dict[str, dict[str, str]] = {}

    def put(key: str, hw: Hardware, value: str) -> None:
        rows.setdefault(key, {})[device_label(hw)] = value

    for hw in hws:
        put("Vendor", hw, hw.vendor)
        put("Kind · scope", hw, f"{hw.kind.value} · {hw.scope.value}")
        put("Default ceiling", hw, f"{hw.default_ceiling} {fmt_rate(hw.default.peak)}")
        put("Unverified figures", hw, "yes" if hw.unverified or any(
            f.unverified for f in (*(c.figure for c in hw.ceilings), *(lv.figure for lv in hw.levels))) else "no")
    keys = sorted({c.key for h in hws for c in h.ceilings},
                  key=lambda k: ([p.value for p in Precision].index(k.split("-")[0]), k))
    for key in keys:
        for hw in hws:
            c = hw.ceiling_map.get(key)
            put(f"Compute {key}", hw, "–" if c is None else fmt_rate(c.peak) + (
                f" (achievable {fmt_rate(c.achievable)})" if c.achievable else ""))
    levels = list(dict.fromkeys(lv.name for h in hws for lv in h.levels))
    for name in levels:
        for hw in hws:
            lv = hw.level_map.get(name)
            put(f"Memory {name}", hw, "–" if lv is None else f"{lv.display} {fmt_bandwidth(lv.bandwidth)}" + (
                f", {fmt_bytes(lv.capacity)}" if lv.capacity else "") + (
                f" (achievable {fmt_bandwidth(lv.achievable)})" if lv.achievable else ""))
    for name in dict.fromkeys(lk.name for h in hws for lk in h.links):
        for hw in hws:
            lk = hw.link_map.get(name)
            put(f"Link {name}", hw, "–" if lk is None else f"{lk.display} {fmt_bandwidth(lk.bandwidth)}")
    for hw in hws:
        put("Ridge, off-chip (default ceiling)", hw, fmt_intensity(hw.ridge()[hw.offchip.name]))
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "Figure"
    return frame.fillna("–")


def sources_frame(hw: Hardware) -> pd.DataFrame:
    """The documents behind the device's figures (declared ids first, then any quoted inline)."""
    used = {}
    for f in (*(c.figure for c in hw.ceilings), *(lv.figure for lv in hw.levels), *(lk.figure for lk in hw.links)):
        sid = f.source.split(":", 1)[0]
        used[sid if sid in hw.sources else f.source] = hw.sources.get(sid, f.source)
    return pd.DataFrame([{"Id": k if k in hw.sources else "", "Source": v} for k, v in used.items()])
