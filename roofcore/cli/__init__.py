"""The ``roofline`` command (also ``python -m roofcore``). Errors print one line and exit with status 2.

The package: :mod:`.parser` builds the argument parser, :mod:`.browse` lists devices, formats and examples,
:mod:`.analysis` runs ``analyze`` and ``advise``, :mod:`.commands` ``plan``, ``compare``, ``report`` and
``measure``, :mod:`.common` holds what they share; :func:`main` runs one command.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from .. import settings
from ..errors import RoofcoreError
from .parser import build_parser

#: names this package offers, each imported from its module when first used (so `--help` imports nothing heavy)
_LAZY = {
    **dict.fromkeys(("advice_report", "analysis_csv", "analysis_text", "cmd_advise", "cmd_analyze", "device_line"),
                    "analysis"),
    **dict.fromkeys(("cmd_examples", "cmd_formats", "cmd_hardware_list", "cmd_hardware_show"), "browse"),
    **dict.fromkeys(("cmd_compare", "cmd_measure", "cmd_plan", "cmd_report"), "commands"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except RoofcoreError as e:
        print(f"roofline: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: one line for users, the traceback with ROOFCORE_DEBUG=1
        if settings.DEBUG.value():
            raise
        print(f"roofline: internal error: {type(e).__name__}: {' '.join(str(e).split())[:300]} "
              "(set ROOFCORE_DEBUG=1 for the traceback)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("roofline: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """The installed command's entry point (and ``python -m roofcore``'s): :func:`main`, then exit.

    Once pyarrow is loaded the process leaves without the interpreter's teardown: Arrow's C++ thread pool can
    abort the process there ("terminate called without an active exception", status -6, after the command's
    whole output; apache/arrow#34314), which made a finished command fail now and then. The output is flushed
    and the exit handlers run first, so nothing the command wrote or registered is lost.
    """
    try:
        code = main()
    except SystemExit as e:  # argparse: --help, a usage error
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    if "pyarrow" not in sys.modules:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to deliver
            stream.flush()
    os._exit(code)


__all__ = ["advice_report", "analysis_csv", "analysis_text", "build_parser", "cmd_advise", "cmd_analyze",
           "cmd_compare", "cmd_examples", "cmd_formats", "cmd_hardware_list", "cmd_hardware_show", "cmd_measure",
           "cmd_plan", "cmd_report", "device_line", "main", "run"]
