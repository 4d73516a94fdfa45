"""``roofline config``: every ``ROOFCORE_*`` environment variable (:mod:`roofcore.settings`) with its current
value and where that came from (``env`` or ``default``)."""

from __future__ import annotations

import argparse
import json
import sys

from .. import settings


def config_text() -> str:
    """One block per variable: name, value and source on the first line; type, accepted values, meaning below."""
    rows = settings.table()
    width = max(len(r["name"]) for r in rows)
    out = []
    for r in rows:
        out.append(f"{r['name']:<{width}}  {r['value']}  ({r['source']})")
        out.append(f"{'':<{width}}  {r['meaning']}; {r['type']}: {r['limits']}")
    return "\n".join(out) + "\n"


def cmd_config(args: argparse.Namespace) -> int:
    text = json.dumps(settings.table(), indent=2, ensure_ascii=False) + "\n" if args.json else config_text()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0
