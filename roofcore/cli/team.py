"""``roofline check`` (the CI regression gate) and ``roofline save`` (store a run from a pipeline), registered by
:func:`roofcore.cli.build_parser`. The database pieces are imported only when a command needs them, so the
engine's CLI works without the ``team`` extra."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import settings
from ..errors import RoofcoreError
from ..safetext import shown

if TYPE_CHECKING:
    from ..models import Workload
    from ..store import RunStore

# the gate, the readers and the database are imported by the command that runs: `roofline --help` needs none


def _store(args: argparse.Namespace, *, read: bool = False) -> RunStore:
    """The run database; for a read (``check``) only one that exists (:func:`gate_inputs.read_url`)."""
    from .. import gate_inputs

    try:
        from ..store import open_store
    except ImportError as e:
        raise RoofcoreError(f"saved runs need the database support ({e.name} is missing): "
                            "pip install 'roofcore[team]'.") from None
    return open_store(gate_inputs.read_url(args.db) if read else args.db)


def _is_run(items: list[str], args: argparse.Namespace) -> str | None:
    """The run id when this side names a saved run (:func:`gate_inputs.run_id`)."""
    from .. import gate_inputs

    return gate_inputs.run_id(items, args.db)


def _side(items: list[str], args: argparse.Namespace, what: str) -> tuple[Workload, str, tuple[str, ...]]:
    """One side of the gate: its workload, a label, and the devices a saved run was looked at on."""
    from ..ingest import read_many
    from .common import max_bytes_of

    run_id = _is_run(items, args)
    if run_id is None:
        w = read_many(items, fmt=args.format, max_bytes=max_bytes_of(args))
        return w, w.name, ()
    store = _store(args, read=True)
    run, w = store.workload(run_id)
    i = run.info
    if what == "baseline":
        _keep_baseline(store, i.id)
    return w, (f"saved run {i.id} ({shown(i.name)}, project {shown(i.project)}, {i.created_at:%Y-%m-%d %H:%M} "
               "UTC)"), i.devices


def _keep_baseline(store: RunStore, run_id: str) -> None:
    """Record that a gate uses this run as its baseline, so the app keeps it from deletion (best effort: a
    database this job may only read says so on stderr, and the gate goes on)."""
    try:
        store.used_as_baseline(run_id)
    except RoofcoreError as e:
        print(f"roofline check: note: could not record run {run_id} as this gate's baseline, so the app does not "
              f"keep it from deletion ({' '.join(str(e).split())[:200]})", file=sys.stderr)


def cmd_check(args: argparse.Namespace) -> int:
    from .. import gate_inputs
    from ..gate import DEFAULT_MAX_REGRESSION, check, gate_text, parse_threshold
    from ..ingest.vendor import list_hint
    from .common import catalog_for, emit

    gate_inputs.refuse_empty(args.current, "CURRENT")  # never the current folder: a gate never passes on nothing
    gate_inputs.refuse_empty(args.baseline, "--baseline")
    threshold = DEFAULT_MAX_REGRESSION if args.max_regression is None else parse_threshold(args.max_regression)
    cat = catalog_for(args)
    if args.hardware:
        cat.get(args.hardware)  # fail fast on a typo, before reading anything
    gate_inputs.refuse_same_run(_is_run(args.current, args), _is_run(args.baseline, args))
    gate_inputs.refuse_same_files(args.current, args.baseline)
    current, cur_label, cur_devices = _side(args.current, args, "current")
    baseline, base_label, base_devices = _side(args.baseline, args, "baseline")
    gate_inputs.refuse_same_kernels(current, baseline, base_label)
    hw_id = args.hardware or next(iter(cur_devices or base_devices), None)
    if hw_id is None:
        hits = cat.suggest(current.device, current.meta)
        if not hits:
            raise RoofcoreError(f"name the device both runs are judged on with --hardware ID ({list_hint(current)}): "
                                + (f"the profile names {current.device!r}, which the catalog lacks."
                                   if current.device else "the profile does not say which device it ran on."))
        hw_id = hits[0]
    g = check(replace(current, name=cur_label), replace(baseline, name=base_label), cat.get(hw_id), max_regression=threshold, achievable=args.achievable)
    emit(args, json.dumps(g.to_json(), indent=1, allow_nan=False) if args.json else gate_text(g))
    return g.exit_code


def cmd_save(args: argparse.Namespace) -> int:
    from ..units import fmt_bytes
    from .common import catalog_for, emit

    cat = catalog_for(args)
    devices = [cat.get(h).id for h in args.hardware or ()]
    files = []
    for p in args.inputs:
        try:
            files.append((Path(p).read_bytes(), Path(p).name))
        except OSError as e:
            raise RoofcoreError(f"{p}: cannot read the file ({e.strerror}).") from None
    store = _store(args)
    owner = None
    if args.owner:
        from ..store import Owner

        owner = Owner(args.owner[0], args.owner[1], args.owner_label or "")
    info = store.save(files, name=args.name, project=args.project, tags=args.tags or (), owner=owner,
                      visibility=args.visibility, devices=devices, fmt=args.format, protected=args.protect,
                      options={"combine": True, "achievable": bool(args.achievable)})
    base = (args.app_url or settings.APP_URL.value() or "").strip().rstrip("/")
    link = f"{base}/{info.link}" if base else info.link
    if args.json:
        emit(args, json.dumps({**info.to_json(), "link": link, "database": store.safe_url}, indent=1))
    else:
        emit(args, info.id)
        print(f"roofline save: saved run {info.id} ({shown(info.name)}, project {shown(info.project)}: "
              f"{len(files)} {'file' if len(files) == 1 else 'files'}, {info.kernels:,} "
              f"{'kernel' if info.kernels == 1 else 'kernels'}, {fmt_bytes(info.stored)} stored"
              f"{', protected' if info.protected else ''}) in {store.safe_url}; open it with {link}", file=sys.stderr)
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser,
                reading: argparse.ArgumentParser) -> None:
    """Register ``check`` and ``save`` on the ``roofline`` command's subparsers."""
    from .parser import command

    db_help = "the run database's URL (default: $ROOFCORE_DB_URL, else SQLite at $ROOFCORE_DB_PATH or " \
              "~/.local/share/roofline/runs.sqlite3)"
    ck = sub.add_parser(
        "check", parents=[common, reading],
        help="regression gate for CI: exit 1 when a kernel of CURRENT got slower or further from its roof than "
             "BASELINE allows",
        description="Match the kernels of CURRENT and BASELINE by name and exit 1 when a matched kernel's measured "
                    "time grew, or its fraction of the roof fell, by more than --max-regression; 0 otherwise; 2 on "
                    "bad input (also when nothing can be judged). Each side is one or more files, or a saved run "
                    "(its id with --db, or run:ID).")
    ck.add_argument("current", nargs="+", metavar="CURRENT", help="the run under test: files, or a saved run id")
    ck.add_argument("--baseline", nargs="+", required=True, metavar="BASELINE",
                    help="the reference run: files, or a saved run id")
    ck.add_argument("--hardware", metavar="ID", help="the device both runs are judged on (default: a saved run's "
                    "first device, else the device the profile names)")
    ck.add_argument("--max-regression", metavar="PCT",  # default: gate.DEFAULT_MAX_REGRESSION
                    help="largest allowed growth of a kernel's time, and fall of its fraction of the roof, relative "
                         "to the baseline (default: 10%%; exactly the limit passes)")
    ck.add_argument("--db", metavar="URL", help=db_help)
    ck.add_argument("--json", action="store_true", help="machine-readable verdicts (status, exit_code, regressions)")
    ck.set_defaults(func=command(".team", "cmd_check"))

    sv = sub.add_parser("save", parents=[common, reading],
                        help="store a run (its files, devices and options) in the run database, for the app's "
                             "History page, share links and `roofline check`")
    sv.add_argument("inputs", nargs="+", metavar="FILE")
    sv.add_argument("--project", required=True, help="the project the run belongs to")
    sv.add_argument("--name", required=True, help="the run's name (e.g. the commit or build)")
    sv.add_argument("--tags", type=lambda s: [t for t in s.split(",") if t.strip()], metavar="A,B",
                    help="comma-separated tags")
    sv.add_argument("--hardware", action="append", metavar="ID", help="device the run is looked at on (repeatable)")
    sv.add_argument("--owner", nargs=2, metavar=("ISSUER", "SUBJECT"),
                    help="the owner as the app's login knows them: their identity provider (the ID token's iss) and "
                         "their id there (sub); the app's sidebar shows both under 'Signed in as'. Default: none (a "
                         "pipeline's run, visible to everyone; an e-mail is no identity)")
    sv.add_argument("--owner-label", metavar="TEXT", help="what lists show for --owner (e.g. their e-mail)")
    sv.add_argument("--visibility", choices=["project", "private"], default="project",
                    help="project (default): everyone in the app sees it; private: only --owner")
    sv.add_argument("--protect", action="store_true",
                    help="keep the run from deletion in the app (a baseline, a release): only the host releases it")
    sv.add_argument("--db", metavar="URL", help=db_help)
    sv.add_argument("--app-url", metavar="URL", help="the app's address, to print the full share link "
                    "(default: $ROOFCORE_APP_URL)")
    sv.add_argument("--json", action="store_true", help="print the saved run as JSON instead of its id")
    sv.set_defaults(func=command(".team", "cmd_save"))
