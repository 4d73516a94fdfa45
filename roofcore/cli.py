"""The ``roofline`` command (also ``python -m roofcore``). Errors print one line and exit with status 2."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence

import numpy as np

from . import __version__
from .advise import advice_text, advise_all
from .analyze import Analysis, analyze, coverage_text, speedup_note
from .catalog import Catalog, hardware_to_json, hardware_to_yaml, load_catalogs
from .errors import RoofcoreError
from .ingest import FORMATS, aggregate, max_input_bytes, read_many
from .roofline import FLAG_CODES
from .units import fmt_bandwidth, fmt_bytes, fmt_factor, fmt_flops, fmt_intensity, fmt_pct, fmt_rate, fmt_time


def _catalog(args: argparse.Namespace) -> Catalog:
    return load_catalogs(args.catalog or ())


def _table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right if right is not None else set(range(1, len(headers)))
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _short(text: object, width: int = 44) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"


# ----------------------------------------------------------------------------------------- hardware


def cmd_hardware_list(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    devices = [h for h in cat if not args.vendor or h.vendor.lower() == args.vendor.lower()]
    if args.json:
        _emit(args, json.dumps([hardware_to_json(h) for h in devices], indent=1))
        return 0
    rows = []
    for h in devices:
        c = h.default
        nsrc = len({f.source for f in h.figures})
        rows.append([h.id, h.vendor, _short(h.name, 34), h.kind.value, f"{c.key} {fmt_rate(c.peak)}",
                     f"{h.offchip.display} {fmt_bandwidth(h.offchip.bandwidth)}",
                     fmt_bytes(h.offchip.capacity) if h.offchip.capacity else "–",
                     f"{h.ridge()[h.offchip.name]:.0f}", str(len(h.levels)), str(len(h.links)), str(nsrc),
                     "unverified" if h.unverified or any(f.unverified for f in h.figures) else ""])
    vendors = sorted({h.vendor for h in devices})
    out = _table(["id", "vendor", "name", "kind", "default ceiling", "off-chip", "capacity", "ridge",
                  "levels", "links", "sources", "note"], rows, right={6, 7, 8, 9, 10})
    out += (f"\n\n{len(devices)} devices from {len(vendors)} vendors ({', '.join(vendors)}). Every figure is dense and "
            "has a source: `roofline hardware show ID` lists them. Ridge = default ceiling / off-chip bandwidth, FLOP/B.")
    if cat.replaced:
        out += "\nOverridden by user catalogs: " + ", ".join(cat.replaced)
    _emit(args, out)
    return 0


def cmd_hardware_show(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    h = cat.get(args.id)
    if args.json:
        _emit(args, json.dumps(hardware_to_json(h), indent=1))
        return 0
    if args.yaml:
        _emit(args, hardware_to_yaml(h))
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
             _tags(c.figure), _short(c.figure.source, 60)] for c in h.ceilings]
    lines.append("Compute ceilings (dense peak; sparse figures shown for reference only, never a roof)")
    lines.append(_table(["ceiling", "peak", "achievable", "sparse", "", "source"], rows, right={1, 2, 3}))
    lines.append("")
    ridge = h.ridge()
    rows = [[lv.name, lv.display, fmt_bandwidth(lv.bandwidth), fmt_bandwidth(lv.achievable) if lv.achievable else "–",
             fmt_bytes(lv.capacity) if lv.capacity else "–", f"{ridge[lv.name]:.1f}", _tags(lv.figure),
             _short(lv.figure.source, 60)] for lv in h.levels]
    lines.append(f"Memory levels (off-chip first); ridge = {h.default_ceiling} peak / bandwidth, FLOP/B")
    lines.append(_table(["level", "label", "bandwidth", "achievable", "capacity", "ridge", "", "source"], rows,
                        right={2, 3, 4, 5}))
    if h.links:
        lines.append("")
        rows = [[lk.name, lk.display, fmt_bandwidth(lk.bandwidth), f"{ridge[lk.name]:.0f}", _tags(lk.figure),
                 _short(lk.figure.source, 60)] for lk in h.links]
        lines.append("Links (bandwidth per direction)")
        lines.append(_table(["link", "label", "bandwidth", "ridge", "", "source"], rows, right={2, 3}))
    lines.append("")
    lines.append("Sources")
    used = {f.source.split(":", 1)[0] for f in h.figures}
    for sid, text in h.sources.items():
        if sid in used:
            lines.append(f"  {sid}: {text}")
    _emit(args, "\n".join(lines))
    return 0


def _tags(f) -> str:
    return ",".join(t for t, on in (("measured", f.measured), ("derived", bool(f.derivation)),
                                    ("unverified", f.unverified)) if on)


# ----------------------------------------------------------------------------------------- analyze


def _max_bytes(args: argparse.Namespace) -> int:
    return int(args.max_input_mb * 1e6) if args.max_input_mb else max_input_bytes()


def _analysis(args: argparse.Namespace) -> Analysis:
    """Read the inputs and analyse them on every --hardware device (shared by `analyze` and `advise`)."""
    cat = _catalog(args)
    if args.hardware:
        cat.get(args.hardware[0]) if not _measured_ids(args.hardware) else None  # fail fast on a typo
    workload = read_many(args.inputs, fmt=args.format, max_bytes=_max_bytes(args))
    measured = tuple(getattr(workload, "measured", ()) or ())
    for hw in measured:
        if hw.id not in cat:
            cat = cat.with_device(hw)
    if args.hardware:
        hws = [cat.get(h) for h in args.hardware]
    else:
        hws = _detected_devices(cat, workload) + list(measured[:1])  # the others: --hardware ID (listed below)
        if not hws:
            ran = f"the profile names its device as {workload.device!r}, which the catalog lacks; " if workload.device \
                else "the input does not say which device it ran on; "
            raise RoofcoreError(f"{ran}name at least one device with --hardware ID (see `roofline hardware list`).")
    if args.aggregate:
        workload = aggregate(workload)
    return analyze(workload, hws, achievable=args.achievable)


def _measured_ids(ids: Sequence[str]) -> bool:
    """Whether any --hardware id may come from the inputs' own measured ceilings (checked after reading them)."""
    return any(i.endswith("-measured") for i in ids)


def _detected_devices(cat: Catalog, workload) -> list:
    """The catalog device the profile ran on, when the export names it and the catalog has it."""
    hits = cat.suggest(workload.device, workload.meta)
    return [cat.get(hits[0])] if hits else []


def device_line(a: Analysis) -> str:
    """``Profiled on: NVIDIA A100-SXM4-40GB (CC 8.0); closest catalog device a100-40gb-sxm.``"""
    w = a.workload
    if not w.device and not w.meta.get("arch") and not getattr(w, "measured", ()):
        return ""
    what = w.device or w.meta.get("arch")
    extra = [f"CC {w.meta['compute_capability']}" if w.meta.get("compute_capability") else "",
             w.meta.get("arch", "") if w.device and w.meta.get("arch") else ""]
    extra = [x for x in extra if x]
    line = f"Profiled on: {what}" + (f" ({', '.join(extra)})" if extra else "") + "."
    measured = [hw.id for hw in getattr(w, "measured", ()) or ()]
    if len(measured) > 1:
        line += (f" The inputs carry measured ceilings of {len(measured)} devices ({', '.join(measured)}): "
                 "name them with --hardware ID.")
    return line


def cmd_analyze(args: argparse.Namespace) -> int:
    a = _analysis(args)
    fmt = "json" if args.json else "csv" if args.csv else None
    if fmt is None and args.output:
        fmt = {".json": "json", ".csv": "csv"}.get(os.path.splitext(args.output)[1].lower())
    if args.advise and fmt == "csv":
        raise RoofcoreError("--advise adds the recommendations to the text or JSON output, not to --csv "
                            "(use `roofline advise ... --json` for them alone).")
    if fmt == "json":
        from .output import analysis_json_chunks

        extra = {"advice": [x.to_json() for x in advise_all(a).values()]} if args.advise else None
        _emit(args, analysis_json_chunks(a, extra, binary=_binary_ok(args)))
    elif fmt == "csv":
        from .output import analysis_csv_chunks

        _emit(args, analysis_csv_chunks(a, binary=_binary_ok(args)))
    else:
        text = analysis_text(a, top=args.top)
        if args.advise:
            text += "\n\n" + advice_report(a, top=10)
        _emit(args, text)
    return 0


def cmd_advise(args: argparse.Namespace) -> int:
    a = _analysis(args)
    if args.json:
        doc = {"schema_version": 1, "workload": {"name": a.workload.name, "sources": list(a.workload.sources)},
               "roofs": "achievable" if a.achievable else "theoretical",
               "advice": [x.to_json() for x in advise_all(a).values()]}
        _emit(args, json.dumps(doc, indent=1, allow_nan=False))
    else:
        _emit(args, advice_report(a, top=args.top))
    return 0


def advice_report(a: Analysis, top: int = 10) -> str:
    """The ranked recommendations for every device of ``a``, as text."""
    return "\n\n".join(advice_text(x, top=top, hardware=a.result(hw_id).hardware)
                        for hw_id, x in advise_all(a).items())


def analysis_csv(a: Analysis) -> str:
    """The per-kernel table as CSV (:func:`roofcore.output.analysis_csv`)."""
    from .output import analysis_csv as csv_text

    return csv_text(a)


def analysis_text(a: Analysis, top: int = 25) -> str:
    w = a.workload
    out = [f"Workload: {w.name} — {len(w):,} {'kernel' if len(w) == 1 else 'kernels'} from "
           f"{', '.join(w.sources) or 'memory'} ({', '.join(w.formats)})"]
    if device_line(a):
        out.append(device_line(a))
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
        rows = [[_short(sub["name"][k]), str(sub["count"][k]), fmt_flops(sub["flops"][k]), fmt_bytes(off[k]),
                 fmt_intensity(inten[k]), fmt_time(sub["t_roof_s"][k]), fmt_time(sub["time_s"][k]),
                 fmt_rate(sub["attainable_flops_per_s"][k]), fmt_rate(sub["achieved_flops_per_s"][k]),
                 fmt_pct(sub["efficiency"][k]), sub["bound"][k] if isinstance(sub["bound"][k], str) else "–",
                 ",".join(code for bit, code in FLAG_CODES.items() if int(sub["flags_mask"][k]) & int(bit))]
                for k in range(len(shown))]
        out.append(_table(["kernel", "count", "FLOPs", "off-chip", "intensity", "t_roof", "time", "attainable",
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
        for note in (coverage_text(s), speedup_note(s)):
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
    for warn in w.warnings:
        out.append(f"Warning: {warn}")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------- plan, compare


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan import run_scenario, scenario_text

    result = run_scenario(args.scenario, _catalog(args))
    if args.json:
        _emit(args, json.dumps(result.to_json(), indent=1, allow_nan=False))
    else:
        _emit(args, scenario_text(result))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .plan import compare, comparison_text

    if not args.hardware:
        raise RoofcoreError("name the device with --hardware ID (see `roofline hardware list`).")
    cat = _catalog(args)
    hw = cat.get(args.hardware)
    old = read_many([args.old], fmt=args.format, max_bytes=_max_bytes(args))
    new = read_many([args.new], fmt=args.format, max_bytes=_max_bytes(args))
    c = compare(old, new, hw, achievable=args.achievable)
    if args.json:
        _emit(args, json.dumps(c.to_json(), indent=1, allow_nan=False))
    else:
        _emit(args, comparison_text(c, top=args.top))
    return 0


def cmd_measure(args: argparse.Namespace) -> int:
    """Measure this machine (roofcore.measure) and write it as a catalog device; progress goes to stderr."""
    from .catalog import load_bytes
    from .errors import CatalogError
    from .measure import measure, to_catalog_yaml

    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", args.id):
        raise CatalogError(where="--id", expected="a kebab-case device id such as this-machine", found=repr(args.id))
    if args.id in _catalog(args):
        raise CatalogError(where="--id", expected="an id not in the catalogs", found=repr(args.id),
                           hint="pick another --id, or add `overrides: true` to the device in the written file.")
    print(f"roofline measure: {'quick' if args.quick else 'full'} run "
          f"({'a few seconds' if args.quick else 'up to about a minute'})...", file=sys.stderr, flush=True)
    result = measure(quick=args.quick, progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    text = to_catalog_yaml(result, hw_id=args.id, name=args.name)
    load_bytes(text.encode("utf-8"), args.output or "measured.yaml")  # what we write must load
    _emit(args, text)
    print(result.summary(), file=sys.stderr)
    if args.output:
        print(f"wrote {args.output}; use it with `roofline hardware show {args.id} --catalog {args.output}`",
              file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from . import report
    from .plan import run_scenario

    a = _analysis(args)
    scenario = run_scenario(args.scenario, _catalog(args)) if args.scenario else None
    fmt = "json" if args.json else "csv" if args.csv else None
    if fmt is None:
        fmt = {".json": "json", ".csv": "csv", ".pdf": "pdf"}.get(os.path.splitext(args.output or "")[1].lower(), "html")
    if fmt == "json":
        doc = a.to_json()
        doc["advice"] = [x.to_json() for x in advise_all(a).values()]
        _emit(args, json.dumps(doc, indent=1, allow_nan=False))
        return 0
    if fmt == "csv":
        _emit(args, analysis_csv(a))
        return 0
    if fmt == "pdf":
        data = report.build_pdf(a, title=args.title, scenario=scenario, top=args.top, appendix=args.appendix,
                                paper=args.paper)
        with open(args.output, "wb") as fh:
            fh.write(data)
        return 0
    _emit(args, report.build_html(a, title=args.title, scenario=scenario, top=args.top, appendix=args.appendix,
                                  paper=args.paper))
    return 0


def cmd_formats(args: argparse.Namespace) -> int:
    rows = [[f.name, f.description] for f in sorted(FORMATS.values(), key=lambda f: f.name)]
    _emit(args, _table(["format", "description"], rows, right=set()))
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    """The bundled example workloads: their names and where they are installed, or one's path."""
    from .resources import examples

    found = examples()
    if args.name:
        if args.name not in found:
            raise RoofcoreError(f"no bundled example {args.name!r}; the examples are {', '.join(found)}.")
        _emit(args, str(found[args.name]))
        return 0
    _emit(args, _table(["example", "file"], [[k, str(v)] for k, v in found.items()], right=set())
          + "\nAnalyse one with: roofline analyze \"$(roofline examples NAME)\" --hardware ID")
    return 0


def _binary_ok(args: argparse.Namespace) -> bool:
    """Whether UTF-8 bytes can go to the destination as they are: a file, or a UTF-8 standard output without
    newline translation (the output layer then hands over its buffers without decoding and encoding them)."""
    if getattr(args, "output", None):
        return True
    enc = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    return hasattr(sys.stdout, "buffer") and enc == "utf8" and os.linesep == "\n"


def _emit(args: argparse.Namespace, text: str | Iterable[str | bytes | memoryview]) -> None:
    """Write ``text`` (or its pieces, streamed: text, or UTF-8 bytes when :func:`_binary_ok`) to --output or
    standard output, ending with a newline."""
    pieces = [text] if isinstance(text, str) else text
    if getattr(args, "output", None):
        with open(args.output, "wb") as fh:
            _write(fh, pieces, binary=True)
    elif _binary_ok(args):
        sys.stdout.flush()
        _write(sys.stdout.buffer, pieces, binary=True)
        sys.stdout.buffer.flush()
    else:
        _write(sys.stdout, pieces, binary=False)


def _write(fh, pieces: Iterable[str | bytes | memoryview], binary: bool) -> None:
    last = ""
    for piece in pieces:
        if len(piece):
            if isinstance(piece, str) == binary:
                piece = piece.encode("utf-8") if binary else str(piece, "utf-8")
            fh.write(piece)
            last = piece
    if (last[-1:] != "\n") if isinstance(last, str) else (bytes(last[-1:]) != b"\n"):
        fh.write(b"\n" if binary else "\n")


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--catalog", action="append", metavar="PATH",
                        help="extra hardware catalog file or folder (repeatable); also $ROOFCORE_CATALOG_PATH")
    common.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    # how inputs are read and judged: shared by analyze, advise, report and compare
    reading = argparse.ArgumentParser(add_help=False)
    reading.add_argument("--format", metavar="NAME", help="force an input format (see `roofline formats`)")
    reading.add_argument("--achievable", action="store_true", help="use measured (achievable) ceilings where known")
    reading.add_argument("--max-input-mb", type=float, metavar="MB",
                         help="refuse inputs larger than this (default: $ROOFCORE_MAX_INPUT_MB or 512)")
    # one workload (several files) on one or more devices: analyze, advise, report
    workload = argparse.ArgumentParser(add_help=False, parents=[reading])
    workload.add_argument("inputs", nargs="+", metavar="INPUT")
    workload.add_argument("--hardware", action="append", metavar="ID", help="device id (repeatable)")
    workload.add_argument("--aggregate", action="store_true",
                          help="combine launches of the same kernel (sum FLOPs, bytes, time; count launches)")
    p = argparse.ArgumentParser(prog="roofline", description="Roofline analysis and planning for kernels and workloads.")
    p.add_argument("--version", action="version", version=f"roofline {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    hw = sub.add_parser("hardware", help="list and show catalog devices")
    hws = hw.add_subparsers(dest="hw_command", required=True)
    lst = hws.add_parser("list", parents=[common], help="every device with its default ceiling and off-chip roof")
    lst.add_argument("--json", action="store_true")
    lst.add_argument("--vendor", help="only this vendor")
    lst.set_defaults(func=cmd_hardware_list)
    show = hws.add_parser("show", parents=[common], help="one device: ceilings, levels, links, ridge points, sources")
    show.add_argument("id")
    g = show.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true")
    g.add_argument("--yaml", action="store_true", help="print the device in catalog YAML (to copy and edit)")
    show.set_defaults(func=cmd_hardware_show)

    an = sub.add_parser("analyze", parents=[common, workload], help="place every kernel of the inputs on each device's roofline")
    g = an.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="machine-readable JSON (the contract in the README)")
    g.add_argument("--csv", action="store_true", help="one row per kernel × device")
    an.add_argument("--top", type=int, default=25, metavar="N", help="kernels shown per device in the text table (0: all)")
    an.add_argument("--advise", action="store_true",
                    help="append the ranked recommendations (top 10 per device) to the text or JSON output")
    an.set_defaults(func=cmd_analyze)

    ad = sub.add_parser("advise", parents=[common, workload],
                        help="ranked recommendations per device: what to fix first and the seconds it saves")
    ad.add_argument("--json", action="store_true", help="machine-readable JSON: every recommendation with its gain")
    ad.add_argument("--top", type=int, default=10, metavar="N", help="recommendations shown per device (0: all)")
    ad.set_defaults(func=cmd_advise)

    pl = sub.add_parser("plan", parents=[common],
                        help="run a what-if scenario (YAML: base workload, devices, steps) and compare its variants")
    pl.add_argument("scenario", metavar="SCENARIO.yaml")
    pl.add_argument("--json", action="store_true",
                    help="every variant with the analyze per-kernel fields, totals and speedups against the base")
    pl.set_defaults(func=cmd_plan)

    cp = sub.add_parser("compare", parents=[common, reading],
                        help="two runs of a workload on one device: per-kernel and total speedups, matched by name")
    cp.add_argument("old", metavar="OLD")
    cp.add_argument("new", metavar="NEW")
    cp.add_argument("--hardware", metavar="ID", help="the device both runs are judged on")
    cp.add_argument("--json", action="store_true", help="machine-readable JSON")
    cp.add_argument("--top", type=int, default=25, metavar="N", help="kernels shown in the text table (0: all)")
    cp.set_defaults(func=cmd_compare)

    rp = sub.add_parser("report", parents=[common, workload],
                        help="a report (HTML, or PDF with -o FILE.pdf): summary, numbered rooflines, top kernels, advice, "
                             "assumptions, then every kernel")
    rp.add_argument("--scenario", metavar="FILE", help="a planning scenario (YAML) whose variants are tabled")
    rp.add_argument("--title", help="report title (default: 'Roofline report: WORKLOAD')")
    g = rp.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="the analysis and advice as JSON instead of the report")
    g.add_argument("--csv", action="store_true", help="the per-kernel table as CSV instead of the report")
    rp.add_argument("--top", type=int, default=10, metavar="N",
                    help="kernels in the top-kernels table, numbered in the charts (default 10; 0: all)")
    rp.add_argument("--appendix", choices=("none", "top", "all"),
                    help="kernels listed with full names at the end: all, the top ones, or none "
                         "(default: all up to 2,000 kernels, else top; the CSV has every kernel)")
    rp.add_argument("--paper", choices=("a4", "letter"), default="a4", help="page size of the PDF and of printing")
    rp.set_defaults(func=cmd_report)

    me = sub.add_parser("measure", parents=[common],
                        help="measure this machine's ceilings (ERT-style micro-benchmark) and write a catalog device")
    me.add_argument("--quick", action="store_true", help="a coarse run of a few seconds instead of about a minute")
    me.add_argument("--id", default="this-machine", help="device id in the written YAML (kebab-case; default: this-machine)")
    me.add_argument("--name", help="device name in the written YAML (default: the CPU model, \"(measured)\")")
    me.set_defaults(func=cmd_measure)

    fm = sub.add_parser("formats", parents=[common], help="list the input formats")
    fm.set_defaults(func=cmd_formats)

    ex = sub.add_parser("examples", parents=[common], help="list the bundled example workloads, or print one's path")
    ex.add_argument("name", nargs="?", help="an example's name: print the path of its file")
    ex.set_defaults(func=cmd_examples)

    from .teamcli import add_parsers  # `check` (the CI regression gate) and `save` (a run into the database)

    add_parsers(sub, common, reading)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    np.seterr(all="ignore")
    try:
        return args.func(args)
    except RoofcoreError as e:
        print(f"roofline: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: one line for users, the traceback with ROOFCORE_DEBUG=1
        if os.environ.get("ROOFCORE_DEBUG"):
            raise
        print(f"roofline: internal error: {type(e).__name__}: {' '.join(str(e).split())[:300]} "
              "(set ROOFCORE_DEBUG=1 for the traceback)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("roofline: interrupted", file=sys.stderr)
        return 130



