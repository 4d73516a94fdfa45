"""``analyze`` and ``advise``: the inputs read and placed on each device's roofline (the device named, else the
one the profile ran on), as text, JSON or CSV, with the ranked recommendations."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace

import numpy as np

from ..advise import advice_text, advise_all
from ..analyze import Analysis, analyze, coverage_text, speedup_note
from ..catalog import Catalog
from ..communication import communication_text
from ..errors import RoofcoreError
from ..ingest import aggregate, read_many
from ..ingest.arch import catalog_ids, catalog_match
from ..ingest.join import counter_headline
from ..ingest.pseudo import runtime_line
from ..ingest.vendor import list_hint
from ..measured import summary as measured_summary
from ..models import Hardware, Workload
from ..roofline import FLAG_CODES
from ..units import (
    fmt_bandwidth,
    fmt_bytes,
    fmt_factor,
    fmt_flops,
    fmt_intensity,
    fmt_pct,
    fmt_rate,
    fmt_time,
)
from ..views.flags import combined_away
from .common import binary_ok, catalog_for, emit, max_bytes_of, short, text_table
from .levels import (
    groups_csv,
    groups_json,
    level_rows,
    levels_text,
    sources_json,
    sources_text,
    wanted,
    write_charts,
)


def analysis_of_args(args: argparse.Namespace) -> Analysis:
    """Read the inputs and analyse them on every --hardware device (shared by `analyze` and `advise`)."""
    cat = catalog_for(args)
    for hw_id in args.hardware or ():  # a typo fails before a large input is read; measured ids come with it
        if not hw_id.endswith("-measured"):
            cat.get(hw_id)
    workload = read_many(args.inputs, fmt=args.format, max_bytes=max_bytes_of(args))
    measured = workload.measured
    for hw in measured:
        if hw.id not in cat:
            cat = cat.with_device(hw)
    if args.hardware:
        hws = [cat.get(h) for h in args.hardware]
    else:
        hws = detected_devices(cat, workload) + list(measured[:1])  # the others: --hardware ID (listed below)
        if not hws:
            why = cat.resolve(workload.device, workload.meta).note if workload.device or workload.meta.get("arch") \
                else None
            ran = f"the profile names its device as {workload.device!r}, which the catalog lacks; " if workload.device \
                else "the input does not say which device it ran on" + (
                    f": {workload.meta['device_evidence']}, which names no one device" if workload.meta.get(
                        "device_evidence") else "") + "; "
            listed = list_hint(workload)  # rocprof: AMD's devices only
            raise RoofcoreError(f"{why} Name at least one device with --hardware ID ({listed})."
                                if why else f"{ran}name at least one device with --hardware ID ({listed}).")
    from ..hierarchy.sources import pairs_in, prefer

    if pairs_in(workload):  # counters beside op formulas: counters unless --flops-from formulas
        workload = prefer(workload, getattr(args, "flops_from", None) or "counters")
    if not args.aggregate:
        return analyze(workload, hws, achievable=args.achievable)
    combined = aggregate(workload)
    a = analyze(combined, hws, achievable=args.achievable)
    launches = analyze(workload, hws, achievable=args.achievable)  # a launch above its roof must not vanish
    hidden = [f"{hw.id}: {g.count:,} kernel(s) with {g.help[0].lower()}{g.help[1:]} Run without --aggregate to see "
              "them." for hw in hws if (g := combined_away(launches, a, hw.id)) is not None]
    if not hidden:
        return a
    return replace(a, workload=replace(combined, warnings=(*combined.warnings, *hidden)))  # the same roofline


def detected_devices(cat: Catalog, workload: Workload) -> list[Hardware]:
    """The catalog device the profile ran on: named by the export, or told by what it says (:mod:`..ingest.arch`)."""
    hits = catalog_ids(cat, workload.device, workload.meta)
    return [cat.get(hits[0])] if hits else []


def device_note(cat: Catalog, a: Analysis) -> str | None:
    """The one line of reasoning behind the catalog device the profile's device resolves to (:meth:`Catalog.resolve`),
    or None when the file names the catalog's own device (or nothing at all)."""
    w = a.workload
    if not w.device and not w.meta.get("arch") and not w.meta.get("gpu_arch"):
        return None
    return catalog_match(cat, w.device, w.meta)[1] or cat.resolve(w.device, w.meta).note


def device_line(a: Analysis, note: str | None = None) -> str:
    """``Profiled on: AMD Radeon Graphics (gfx942). AMD Radeon Graphics is a marketing name; gfx942 with 304 CUs …``:
    the device the profile names, then ``note`` (:func:`device_note`) when the catalog device needed reasoning."""
    w = a.workload
    arch = w.meta.get("arch") or w.meta.get("gpu_arch")  # gpu_arch alone: told by kernel names (ingest.arch)
    if not w.device and not arch and not w.measured:
        return ""
    what = w.device or arch
    extra = [f"CC {w.meta['compute_capability']}" if w.meta.get("compute_capability") else "",
             w.meta.get("arch", "") if w.device and w.meta.get("arch") else ""]
    extra = [x for x in extra if x]
    line = f"Profiled on: {what}" + (f" ({', '.join(extra)})" if extra else "") + "."
    if note:
        line += f" {note}"
    measured = [hw.id + (f" ({said})" if (said := measured_summary(hw)) else "") for hw in w.measured]
    if len(measured) > 1:
        line += (f" The inputs carry measured ceilings of {len(measured)} devices ({', '.join(measured)}): "
                 "name them with --hardware ID.")
    elif measured and measured[0] != w.measured[0].id:  # the GPUs of one model: their median, and its spread
        line += f" The inputs carry measured ceilings: {measured[0]}."
    return line


def cmd_analyze(args: argparse.Namespace) -> int:
    a = analysis_of_args(args)
    fmt = "json" if args.json else "csv" if args.csv else None
    if fmt is None and args.output:
        fmt = {".json": "json", ".csv": "csv"}.get(os.path.splitext(args.output)[1].lower())
    if args.advise and fmt == "csv":
        raise RoofcoreError("--advise adds the recommendations to the text or JSON output, not to --csv "
                            "(use `roofline advise ... --json` for them alone).")
    level = wanted(args)
    if level is not None:  # --by LEVEL / --window: one point per group (roofcore.hierarchy)
        return _analyze_levels(args, a, fmt, level)
    if fmt in ("json", "csv"):
        _release_freed_buffers()
    if fmt == "json":
        from ..output import analysis_json_chunks

        extra = {"advice": [x.to_json() for x in advise_all(a).values()]} if args.advise else {}
        extra.update(sources_json(a.workload))
        emit(args, analysis_json_chunks(a, extra or None, binary=binary_ok(args)))
    elif fmt == "csv":
        from ..output import analysis_csv_chunks

        emit(args, analysis_csv_chunks(a, binary=binary_ok(args)))
    else:
        text = analysis_text(a, top=args.top, device_note=device_note(catalog_for(args), a))
        if sources_text(a.workload):
            text += "\n\n" + sources_text(a.workload)
        if args.advise:
            text += "\n\n" + advice_report(a, top=10)
        emit(args, text)
    return 0


def _analyze_levels(args: argparse.Namespace, a: Analysis, fmt: str | None, level: tuple[str, float | None]) -> int:
    """The groups of ``--by`` / ``--window`` as text, JSON (the analysis document with ``by``, ``window_s`` and
    ``groups`` added) or CSV (one line per group × device)."""
    rows = level_rows(a, *level)
    by = level[0]
    if getattr(args, "chart", None):
        write_charts(a, by, level[1], args.chart)
    if fmt == "json":
        from ..output import analysis_json_chunks

        extra = {"by": by, "window_s": level[1], "groups": groups_json(rows, a.workload.byte_names)}
        if args.advise:
            extra["advice"] = [x.to_json() for x in advise_all(a).values()]
        emit(args, analysis_json_chunks(a, extra, binary=binary_ok(args)))
    elif fmt == "csv":
        emit(args, groups_csv(rows, a.workload.byte_names))
    else:
        text = levels_text(a, rows, top=args.top)
        if args.advise:
            text += "\n\n" + advice_report(a, top=10)
        emit(args, text)
    return 0


def _release_freed_buffers() -> None:
    """The JSON and CSV writers make many short-lived Arrow buffers in a few threads: the system allocator returns
    them when freed, where Arrow's default (mimalloc) keeps them per thread (for 200,000 kernels, about 100 MB more
    at the peak for the same output). Set once the analysis is done, for this one-shot process only."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


def cmd_advise(args: argparse.Namespace) -> int:
    a = analysis_of_args(args)
    if args.json:
        doc = {"schema_version": 1, "workload": {"name": a.workload.name, "sources": list(a.workload.sources)},
               "roofs": "achievable" if a.achievable else "theoretical",
               "advice": [x.to_json() for x in advise_all(a).values()]}
        emit(args, json.dumps(doc, indent=1, allow_nan=False))
    else:
        emit(args, advice_report(a, top=args.top))
    return 0


def advice_report(a: Analysis, top: int = 10) -> str:
    """The ranked recommendations for every device of ``a``, as text."""
    from ..hierarchy.views import where_text

    where = (lambda ks: where_text(a.workload, ks)) if {"module", "op"} & set(a.workload.frame.columns) else None
    return "\n\n".join(advice_text(x, top=top, hardware=a.result(hw_id).hardware, where=where)
                        for hw_id, x in advise_all(a).items())


def analysis_csv(a: Analysis) -> str:
    """The per-kernel table as CSV (:func:`roofcore.output.analysis_csv`)."""
    from ..output import analysis_csv as csv_text

    return csv_text(a)


def analysis_text(a: Analysis, top: int = 25, device_note: str | None = None) -> str:
    w = a.workload
    out = [f"Workload: {w.name} — {len(w):,} {'kernel' if len(w) == 1 else 'kernels'} from "
           f"{', '.join(w.sources) or 'memory'} ({', '.join(w.formats)})"]
    if device_line(a, device_note):
        out.append(device_line(a, device_note))
    if w.meta.get("device_evidence"):
        out.append(f"Device evidence: {w.meta['device_evidence']}.")
    if w.runtime is not None:
        out.append(runtime_line(w.runtime))
    if counter_headline(w):  # a timeline joined with counters of some launches (roofcore.ingest.join)
        out.append(counter_headline(w))
    if a.achievable:
        out.append("Roofs: achievable (measured) ceilings where the catalog has them, else theoretical peaks.")
    for r in a.results:
        h = r.hardware
        s = a.summary(h.id)
        c = h.default
        out.append("")
        out.append(f"== {h.name} ({h.id}) — {c.key} {fmt_rate(c.peak)}, {h.offchip.display} "
                   f"{fmt_bandwidth(h.offchip.bandwidth)}, ridge {h.ridge()[h.offchip.name]:.0f} FLOP/B ==")
        tab = a.table(h.id, messages=False)  # flag codes come from the bitmask: no message is built here
        key = tab["time_s"].fillna(tab["t_roof_s"]).fillna(0).to_numpy()
        order = np.argsort(-key, kind="stable")
        shown = order if top <= 0 else order[:top]
        sub = {c: tab[c].to_numpy()[shown].tolist() for c in ("name", "count", "flops", "t_roof_s", "time_s",
                                                               "attainable_flops_per_s", "achieved_flops_per_s",
                                                               "efficiency", "bound", "flags_mask")}
        off = tab["bytes_hbm"].to_numpy()[shown].tolist() if "bytes_hbm" in tab else [None] * len(shown)
        inten = tab["intensity_hbm"].to_numpy()[shown].tolist() if "intensity_hbm" in tab else [None] * len(shown)
        rows = [[short(sub["name"][k]), str(sub["count"][k]), fmt_flops(sub["flops"][k]), fmt_bytes(off[k]),
                 fmt_intensity(inten[k]), fmt_time(sub["t_roof_s"][k]), fmt_time(sub["time_s"][k]),
                 fmt_rate(sub["attainable_flops_per_s"][k]), fmt_rate(sub["achieved_flops_per_s"][k]),
                 fmt_pct(sub["efficiency"][k]), sub["bound"][k] if isinstance(sub["bound"][k], str) else "–",
                 ",".join(code for bit, code in FLAG_CODES.items() if int(sub["flags_mask"][k]) & int(bit))]
                for k in range(len(shown))]
        out.append(text_table(["kernel", "count", "FLOPs", "off-chip", "intensity", "t_roof", "time", "attainable",
                           "achieved", "of roof", "bound", "flags"], rows, right=set(range(1, 10))))
        if len(shown) < len(tab):
            out.append(f"(showing {len(shown)} of {len(tab)} kernels by time; --top 0 shows all)")
        cov = s["coverage"]
        partial = cov["kernels_known"] < cov["kernels"]
        known = " (kernels with a known roofline)" if partial else ""
        line = f"Total: roofline {fmt_time(s['t_roof_s'])}{known}"
        if s["time_s"] is not None:
            line = f"Total: measured {fmt_time(s['time_s'])}, roofline {fmt_time(s['t_roof_s'])}{known}"
            if s["speedup_if_at_roof"]:
                line += (f"; {fmt_factor(s['speedup_if_at_roof'])} faster if every kernel "
                         f"{'with a known roofline ' if partial else ''}reached its roof")
        out.append(line)
        for note in (coverage_text(s), speedup_note(s), communication_text(s)):
            if note:
                out.append(note)
        share = ", ".join(f"{k} {fmt_pct(v)}" for k, v in s["time_share_by_bound"].items())
        out.append(f"Time by bound ({'measured time' if s['share_basis'] == 'measured' else 'roofline time'}): {share}")
        if s["flag_counts"]:
            out.append("Flags: " + ", ".join(f"{k} ×{v}" for k, v in s["flag_counts"].items())
                       + " (--json gives each kernel's reasons)")
        if s["lacking_levels"]:
            out.append(f"Not on {h.id}: bytes at {', '.join(s['lacking_levels'])} (no such level or link in its catalog).")
    if w.skipped:
        out.append("")
        out.append(f"Skipped {len(w.skipped)} input row(s):")
        for sk in w.skipped[:20]:
            where = f"row {sk.row}" if sk.row.isdigit() else sk.row
            out.append(f"  {sk.source}: {where}: {sk.reason}")
        if len(w.skipped) > 20:
            out.append(f"  … and {len(w.skipped) - 20} more (--json lists all)")
    for warn in w.warnings:  # a warning's later lines (commands to run) indented under it
        out.append("Warning: " + warn.replace("\n", "\n  "))
    return "\n".join(out)

