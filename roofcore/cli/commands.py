"""``plan`` (a what-if scenario), ``compare`` (two runs on one device), ``report`` (HTML or PDF) and ``measure``
(this machine's ceilings as a catalog device)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from ..advise import advise_all
from ..errors import RoofcoreError
from ..ingest import read_many
from .analysis import analysis_csv, analysis_of_args
from .common import catalog_for, emit, max_bytes_of


def cmd_plan(args: argparse.Namespace) -> int:
    from ..plan import run_scenario, scenario_text

    result = run_scenario(args.scenario, catalog_for(args))
    if args.json:
        from ..output import analysis_document

        emit(args, json.dumps(result.to_json(analysis_document), indent=1, allow_nan=False))
    else:
        emit(args, scenario_text(result))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ..plan import compare, comparison_text

    if not args.hardware:
        raise RoofcoreError("name the device with --hardware ID (see `roofline hardware list`).")
    cat = catalog_for(args)
    hw = cat.get(args.hardware)
    old = read_many([args.old], fmt=args.format, max_bytes=max_bytes_of(args))
    new = read_many([args.new], fmt=args.format, max_bytes=max_bytes_of(args))
    c = compare(old, new, hw, achievable=args.achievable)
    if args.json:
        emit(args, json.dumps(c.to_json(), indent=1, allow_nan=False))
    else:
        emit(args, comparison_text(c, top=args.top))
    return 0


def cmd_measure(args: argparse.Namespace) -> int:
    """Measure this machine (roofcore.measure) and write it as a catalog device; progress goes to stderr."""
    from ..catalog import load_bytes
    from ..errors import CatalogError
    from ..measure import measure, to_catalog_yaml

    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", args.id):
        raise CatalogError(where="--id", expected="a kebab-case device id such as this-machine", found=repr(args.id))
    if args.id in catalog_for(args):
        raise CatalogError(where="--id", expected="an id not in the catalogs", found=repr(args.id),
                           hint="pick another --id, or add `overrides: true` to the device in the written file.")
    print(f"roofline measure: {'quick' if args.quick else 'full'} run "
          f"({'a few seconds' if args.quick else 'up to about a minute'})...", file=sys.stderr, flush=True)
    result = measure(quick=args.quick, progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    text = to_catalog_yaml(result, hw_id=args.id, name=args.name)
    load_bytes(text.encode("utf-8"), args.output or "measured.yaml")  # what we write must load
    emit(args, text)
    print(result.summary(), file=sys.stderr)
    if args.output:
        print(f"wrote {args.output}; use it with `roofline hardware show {args.id} --catalog {args.output}`",
              file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .. import report
    from ..plan import run_scenario

    a = analysis_of_args(args)
    scenario = run_scenario(args.scenario, catalog_for(args)) if args.scenario else None
    fmt = "json" if args.json else "csv" if args.csv else None
    if fmt is None:
        fmt = {".json": "json", ".csv": "csv", ".pdf": "pdf"}.get(os.path.splitext(args.output or "")[1].lower(), "html")
    if fmt == "json":
        from ..output import analysis_json_chunks

        emit(args, analysis_json_chunks(a, {"advice": [x.to_json() for x in advise_all(a).values()]}))
        return 0
    if fmt == "csv":
        emit(args, analysis_csv(a))
        return 0
    if fmt == "pdf":
        data = report.build_pdf(a, title=args.title, scenario=scenario, top=args.top, appendix=args.appendix,
                                paper=args.paper)
        with open(args.output, "wb") as fh:
            fh.write(data)
        return 0
    emit(args, report.build_html(a, title=args.title, scenario=scenario, top=args.top, appendix=args.appendix,
                                  paper=args.paper))
    return 0

