"""A validated catalog file's entries as models: each device with its compute ceilings, memory levels and
links, every quantity parsed to base units and checked (plausible, dense not sparse, achievable at most the
peak, off-chip first, each name once), every figure with its source."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import CatalogError, UnitError
from ..models import (
    OFFCHIP,
    Ceiling,
    DeviceKind,
    Figure,
    Hardware,
    Link,
    MemoryLevel,
    Precision,
    Scope,
    Unit,
    canonical_level,
)
from ..units import Dimension, fmt_si, parse

#: beyond these a figure is a prefix typo (torchao once listed a GPU at 1.792e15 B/s)
_PLAUSIBLE = {"peak": 1e17, "hbm": 5e13, "level": 1e15, "link": 1e13}

_SOURCE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")



@dataclass
class Ctx:
    file: str
    sources: Mapping[str, str]

    def source(self, value: str, path: str) -> str:
        if value in self.sources:
            return f"{value}: {self.sources[value]}"
        if _SOURCE_ID.match(value) and " " not in value and len(value) <= 12:
            raise CatalogError(where=f"{self.file}: {path}", expected="a source id declared under `sources`",
                               found=repr(value),
                               hint=f"declared ids: {', '.join(self.sources) or 'none'}; or write the document itself.")
        return value

    def qty(self, value: Any, dim: Dimension, path: str, *, positive: bool = True) -> float:
        try:
            return parse(value, dim, where=f"{self.file}: {path}", allow_zero=not positive)
        except UnitError as e:
            raise CatalogError(where=e.where, expected=e.expected, found=e.found, hint=e.hint) from None

    def figure(self, d: dict[str, Any], path: str, *, key: str = "source") -> Figure:
        return Figure(source=self.source(d[key], f"{path}.{key}"), measured=bool(d.get("measured", False)),
                      unverified=bool(d.get("unverified", False)), derivation=d.get("derivation"),
                      notes=d.get("notes"))

    def achievable(self, d: dict[str, Any], dim: Dimension, path: str, ceiling: float) -> tuple[float | None, Figure | None]:
        if "achievable" not in d:
            return None, None
        value = self.qty(d["achievable"], dim, f"{path}.achievable")
        if value > ceiling:
            raise CatalogError(where=f"{self.file}: {path}.achievable", expected="a measured value at most the peak",
                               found=f"{d['achievable']!r} above the peak",
                               hint="an achievable rate above the theoretical one means a unit or scope mix-up.")
        src = d.get("achievable_source", d["source"])
        fig = Figure(source=self.source(src, f"{path}.achievable_source"), measured=True)
        return value, fig

    def implausible(self, value: float, limit: float, path: str, raw: Any, unit: str) -> None:
        if value > limit:
            raise CatalogError(where=f"{self.file}: {path}", expected=f"a plausible figure (below {fmt_si(limit, unit)})",
                               found=repr(raw), hint="a prefix is probably wrong (T for G, P for T).")


def _ceiling(ctx: Ctx, d: dict[str, Any], path: str) -> Ceiling:
    fig = ctx.figure(d, path)
    raw = d["peak"]
    if isinstance(raw, str) and "spars" in raw.lower():
        raise CatalogError(where=f"{ctx.file}: {path}.peak", expected="a dense peak", found=f"{raw!r}, a sparse figure",
                           hint="put the sparse figure under `sparse:` and the dense one (half of it) under `peak:`.")
    peak = ctx.qty(raw, Dimension.FLOP_RATE, f"{path}.peak")
    ctx.implausible(peak, _PLAUSIBLE["peak"], f"{path}.peak", raw, "FLOP/s")
    sparse = None
    if "sparse" in d:
        sparse = ctx.qty(d["sparse"], Dimension.FLOP_RATE, f"{path}.sparse")
        if peak >= sparse:
            raise CatalogError(where=f"{ctx.file}: {path}.peak", expected=f"a dense peak below the sparse figure {d['sparse']!r}",
                               found=f"{raw!r}, which looks like the sparse figure",
                               hint="with 2:4 sparsity vendors quote twice the dense rate; the roof is the dense one.")
    ach, ach_fig = ctx.achievable(d, Dimension.FLOP_RATE, path, peak)
    return Ceiling(precision=Precision(d["precision"]), unit=Unit(d["unit"]), peak=peak, figure=fig,
                   sparse=sparse, achievable=ach, achievable_figure=ach_fig)


def _level(ctx: Ctx, d: dict[str, Any], path: str, first: bool) -> MemoryLevel:
    name = canonical_level(d["level"])
    if first and name != OFFCHIP:
        raise CatalogError(where=f"{ctx.file}: {path}.level", expected=f"the off-chip level '{OFFCHIP}' first",
                           found=repr(d["level"]),
                           hint="list off-chip memory first as `level: hbm` (give the technology in `label`).")
    if not first and name == OFFCHIP:
        raise CatalogError(where=f"{ctx.file}: {path}.level", expected="an on-chip level (l2, l1, smem, lds, vmem...)",
                           found=repr(d["level"]), hint="only the first memory level is off-chip.")
    fig = ctx.figure(d, path)
    bw = ctx.qty(d["bandwidth"], Dimension.BANDWIDTH, f"{path}.bandwidth")
    ctx.implausible(bw, _PLAUSIBLE["hbm" if first else "level"], f"{path}.bandwidth", d["bandwidth"], "B/s")
    cap, cap_fig = None, None
    if "capacity" in d:
        cap = ctx.qty(d["capacity"], Dimension.BYTES, f"{path}.capacity")
        cap_fig = Figure(source=ctx.source(d.get("capacity_source", d["source"]), f"{path}.capacity_source"))
    ach, ach_fig = ctx.achievable(d, Dimension.BANDWIDTH, path, bw)
    return MemoryLevel(name=name, bandwidth=bw, figure=fig, label=d.get("label"), capacity=cap,
                       capacity_figure=cap_fig, achievable=ach, achievable_figure=ach_fig)


def _link(ctx: Ctx, d: dict[str, Any], path: str) -> Link:
    fig = ctx.figure(d, path)
    bw = ctx.qty(d["bandwidth"], Dimension.BANDWIDTH, f"{path}.bandwidth")
    ctx.implausible(bw, _PLAUSIBLE["link"], f"{path}.bandwidth", d["bandwidth"], "B/s")
    ach, ach_fig = ctx.achievable(d, Dimension.BANDWIDTH, path, bw)
    return Link(name=d["link"], bandwidth=bw, figure=fig, label=d.get("label"), achievable=ach,
                achievable_figure=ach_fig)


def _unique(ctx: Ctx, names: list[str], path: str, what: str) -> None:
    seen: dict[str, int] = {}
    for i, n in enumerate(names):
        if n in seen:
            raise CatalogError(where=f"{ctx.file}: {path}[{i}]", expected=f"each {what} once",
                               found=f"{n!r} again (also at [{seen[n]}])", hint=f"merge the two {what} entries.")
        seen[n] = i


def device(ctx: Ctx, d: dict[str, Any], i: int, file_vendor: str | None) -> Hardware:
    path = f"$.devices[{i}]"
    vendor = d.get("vendor") or file_vendor
    if not vendor:
        raise CatalogError(where=f"{ctx.file}: {path}", expected="key 'vendor' (on the device or the file)",
                           found="none", hint="add `vendor: NAME` at the top of the file.")
    ceilings = tuple(_ceiling(ctx, c, f"{path}.compute[{j}]") for j, c in enumerate(d["compute"]))
    _unique(ctx, [c.key for c in ceilings], f"{path}.compute", "precision-unit ceiling")
    levels = tuple(_level(ctx, lv, f"{path}.memory[{j}]", j == 0) for j, lv in enumerate(d["memory"]))
    _unique(ctx, [lv.name for lv in levels], f"{path}.memory", "memory level")
    links = tuple(_link(ctx, lk, f"{path}.links[{j}]") for j, lk in enumerate(d.get("links", [])))
    _unique(ctx, [lk.name for lk in links], f"{path}.links", "link")
    clash = {lv.name for lv in levels} & {lk.name for lk in links}
    if clash:
        raise CatalogError(where=f"{ctx.file}: {path}.links", expected="link names distinct from memory level names",
                           found=", ".join(sorted(clash)), hint="rename one of them.")
    default = d.get("default_ceiling") or ceilings[0].key
    if default not in {c.key for c in ceilings}:
        raise CatalogError(where=f"{ctx.file}: {path}.default_ceiling", expected="one of the device's ceilings: "
                           + ", ".join(c.key for c in ceilings), found=repr(default),
                           hint="add that ceiling under `compute` or pick a listed one.")
    return Hardware(
        id=d["id"], name=d["name"], vendor=vendor, kind=DeviceKind(d["kind"]), ceilings=ceilings, levels=levels,
        links=links, default_ceiling=default, scope=Scope(d.get("scope", "package")), config=d.get("config"),
        notes=d.get("notes"), aliases=tuple(d.get("aliases", ())), unverified=bool(d.get("unverified", False)),
        origin=ctx.file, sources=MappingProxyType(dict(ctx.sources)),
    )

