"""The ``roofline`` argument parser: the options shared by several commands, then each command's own."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from .. import __version__


def command(module: str, name: str, *, numeric: bool = True) -> Callable[[argparse.Namespace], int]:
    """The command ``name`` of ``module`` (a module of this package, or absolute), imported only when it runs:
    building the parser (and ``--help``) imports no command's dependencies. A ``numeric`` command runs with
    numpy's floating-point warnings off (0/0 of an unknown figure is NaN by design, not a warning)."""

    def run(args: argparse.Namespace) -> int:
        if numeric:
            import numpy as np

            np.seterr(all="ignore")
        fn: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module, __package__), name)
        return fn(args)

    run.__name__ = run.__qualname__ = name
    return run


cmd_advise, cmd_analyze = command(".analysis", "cmd_advise"), command(".analysis", "cmd_analyze")
# listing what roofcore knows needs no numbers: these start without numpy
cmd_examples = command(".browse", "cmd_examples", numeric=False)
cmd_formats = command(".browse", "cmd_formats", numeric=False)
cmd_hardware_list = command(".browse", "cmd_hardware_list", numeric=False)
cmd_hardware_show = command(".browse", "cmd_hardware_show", numeric=False)
cmd_compare, cmd_measure = command(".commands", "cmd_compare"), command(".commands", "cmd_measure")
cmd_plan, cmd_report = command(".commands", "cmd_plan"), command(".commands", "cmd_report")


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
    _add_hardware(sub, common)
    _add_analysis(sub, common, workload)
    _add_planning(sub, common, reading)
    _add_report(sub, common, workload)
    _add_tools(sub, common)
    from .llm import add_llm_parser  # `llm`: the LLM serving planner (its engine is imported when it runs)

    add_llm_parser(sub, common)

    from .team import add_parsers  # `check` (the CI regression gate) and `save` (a run into the database)

    add_parsers(sub, common, reading)
    return p


def _add_hardware(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
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


def _add_analysis(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser,
                  workload: argparse.ArgumentParser) -> None:
    an = sub.add_parser("analyze", parents=[common, workload], help="place every kernel of the inputs on each device's roofline")
    g = an.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="machine-readable JSON (the contract in the README)")
    g.add_argument("--csv", action="store_true", help="one row per kernel × device")
    an.add_argument("--top", type=int, default=25, metavar="N", help="kernels shown per device in the text table (0: all)")
    an.add_argument("--advise", action="store_true",
                    help="append the ranked recommendations (top 10 per device) to the text or JSON output")
    an.add_argument("--by", default="kernel", metavar="LEVEL",
                    help="one roofline point per kernel (default), op, module, module:DEPTH, step, nvtx or nvtx:DEPTH "
                         "(where the profile records them)")
    an.add_argument("--window", metavar="DURATION", help="one point per time window of the kernels' start, e.g. 10ms")
    an.add_argument("--chart", metavar="FILE", help="with --by or --window: also write the chart (.png or .svg): the "
                    "groups on the roofline, or for steps and windows their trajectory (and FILE-over-time beside it)")
    an.add_argument("--flops-from", choices=("counters", "formulas"),
                    help="where a kernel has FLOPs and bytes from counters and from op formulas: which to use "
                         "(default counters)")
    an.set_defaults(func=cmd_analyze)

    ad = sub.add_parser("advise", parents=[common, workload],
                        help="ranked recommendations per device: what to fix first and the seconds it saves")
    ad.add_argument("--json", action="store_true", help="machine-readable JSON: every recommendation with its gain")
    ad.add_argument("--top", type=int, default=10, metavar="N", help="recommendations shown per device (0: all)")
    ad.set_defaults(func=cmd_advise)


def _add_planning(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser,
                  reading: argparse.ArgumentParser) -> None:
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


def _add_report(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser,
                workload: argparse.ArgumentParser) -> None:
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


def _add_tools(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
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

    cf = sub.add_parser("config", parents=[common],
                        help="every ROOFCORE_* environment variable: its value, where it came from, what it means")
    cf.add_argument("--json", action="store_true", help="one object per variable: name, value, source, type, "
                                                       "limits, meaning")
    cf.set_defaults(func=command(".config", "cmd_config", numeric=False))
