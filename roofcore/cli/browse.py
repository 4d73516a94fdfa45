"""The commands that list what roofcore knows: catalog devices (``hardware list``, ``hardware show``), input
formats, bundled examples."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ..errors import RoofcoreError
from ..units import fmt_bandwidth, fmt_bytes, fmt_rate
from .common import catalog_for, emit, short, text_table

if TYPE_CHECKING:
    from ..models import Figure


def cmd_hardware_list(args: argparse.Namespace) -> int:
    from ..catalog import hardware_to_json

    cat = catalog_for(args)
    devices = [h for h in cat if not args.vendor or h.vendor.lower() == args.vendor.lower()]
    if args.json:
        emit(args, json.dumps([hardware_to_json(h) for h in devices], indent=1))
        return 0
    rows = []
    for h in devices:
        c = h.default
        nsrc = len({f.source for f in h.figures})
        rows.append([h.id, h.vendor, short(h.name, 34), h.kind.value, f"{c.key} {fmt_rate(c.peak)}",
                     f"{h.offchip.display} {fmt_bandwidth(h.offchip.bandwidth)}",
                     fmt_bytes(h.offchip.capacity) if h.offchip.capacity else "–",
                     f"{h.ridge()[h.offchip.name]:.0f}", str(len(h.levels)), str(len(h.links)), str(nsrc),
                     "unverified" if h.unverified or any(f.unverified for f in h.figures) else ""])
    vendors = sorted({h.vendor for h in devices})
    out = text_table(["id", "vendor", "name", "kind", "default ceiling", "off-chip", "capacity", "ridge",
                  "levels", "links", "sources", "note"], rows, right={6, 7, 8, 9, 10})
    out += (f"\n\n{len(devices)} devices from {len(vendors)} vendors ({', '.join(vendors)}). Every figure is dense and "
            "has a source: `roofline hardware show ID` lists them. Ridge = default ceiling / off-chip bandwidth, FLOP/B.")
    if cat.replaced:
        out += "\nOverridden by user catalogs: " + ", ".join(cat.replaced)
    emit(args, out)
    return 0


def cmd_hardware_show(args: argparse.Namespace) -> int:
    from ..catalog import hardware_to_json, hardware_to_yaml

    cat = catalog_for(args)
    h = cat.get(args.id)
    if args.json:
        emit(args, json.dumps(hardware_to_json(h), indent=1))
        return 0
    if args.yaml:
        emit(args, hardware_to_yaml(h))
        return 0
    lines = [f"{h.name} ({h.id}) — {h.vendor} {h.kind.value}, {h.scope.value} scope" + (" — UNVERIFIED" if h.unverified else "")]
    if h.config:
        lines.append(f"Configuration: {h.config}")
    if h.notes:
        lines.append(f"Notes: {h.notes}")
    lines.append(f"Catalog: {h.origin}" + (f" (overrides {cat.replaced[h.id]})" if h.id in cat.replaced else ""))
    lines.append("")
    rows = [[c.key + (" (default)" if c.key == h.default_ceiling else ""), fmt_rate(c.peak),
             fmt_rate(c.achievable) if c.achievable else "–", fmt_rate(c.sparse) if c.sparse else "–",
             _tags(c.figure), short(c.figure.source, 60)] for c in h.ceilings]
    lines.append("Compute ceilings (dense peak; sparse figures shown for reference only, never a roof)")
    lines.append(text_table(["ceiling", "peak", "achievable", "sparse", "", "source"], rows, right={1, 2, 3}))
    lines.append("")
    ridge = h.ridge()
    rows = [[lv.name, lv.display, fmt_bandwidth(lv.bandwidth), fmt_bandwidth(lv.achievable) if lv.achievable else "–",
             fmt_bytes(lv.capacity) if lv.capacity else "–", f"{ridge[lv.name]:.1f}", _tags(lv.figure),
             short(lv.figure.source, 60)] for lv in h.levels]
    lines.append(f"Memory levels (off-chip first); ridge = {h.default_ceiling} peak / bandwidth, FLOP/B")
    lines.append(text_table(["level", "label", "bandwidth", "achievable", "capacity", "ridge", "", "source"], rows,
                        right={2, 3, 4, 5}))
    if h.links:
        lines.append("")
        rows = [[lk.name, lk.display, fmt_bandwidth(lk.bandwidth), f"{ridge[lk.name]:.0f}", _tags(lk.figure),
                 short(lk.figure.source, 60)] for lk in h.links]
        lines.append("Links (bandwidth per direction)")
        lines.append(text_table(["link", "label", "bandwidth", "ridge", "", "source"], rows, right={2, 3}))
    lines.append("")
    lines.append("Sources")
    used = {f.source.split(":", 1)[0] for f in h.figures}
    for sid, text in h.sources.items():
        if sid in used:
            lines.append(f"  {sid}: {text}")
    emit(args, "\n".join(lines))
    return 0


def _tags(f: Figure) -> str:
    return ",".join(t for t, on in (("measured", f.measured), ("derived", bool(f.derivation)),
                                    ("unverified", f.unverified)) if on)


def cmd_formats(args: argparse.Namespace) -> int:
    if "roofcore.ingest" in sys.modules:  # the registry is loaded (formats registered in this process included)
        rows = [[f.name, f.description] for f in sorted(sys.modules["roofcore.ingest"].FORMATS.values(),
                                                        key=lambda f: f.name)]
    else:  # the built-in ones, without importing every reader
        from .format_index import BUILTIN

        rows = [list(f) for f in BUILTIN]
    emit(args, text_table(["format", "description"], rows, right=set()))
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    """The bundled example workloads: their names and where they are installed, or one's path."""
    from ..resources import examples

    found = examples()
    if args.name:
        if args.name not in found:
            raise RoofcoreError(f"no bundled example {args.name!r}; the examples are {', '.join(found)}.")
        emit(args, str(found[args.name]))
        return 0
    emit(args, text_table(["example", "file"], [[k, str(v)] for k, v in found.items()], right=set())
          + "\nAnalyse one with: roofline analyze \"$(roofline examples NAME)\" --hardware ID")
    return 0

