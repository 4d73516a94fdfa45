"""Print a pip constraints file pinning every direct dependency of pyproject.toml (core and every extra) to its
declared lower bound (``pkg>=X`` becomes ``pkg==X``), so one CI job installs the oldest versions we claim to
support and runs the tests on them: a lower bound that no longer works fails there, not on a user's machine."""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQ = re.compile(r"^\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*>=\s*([0-9][0-9A-Za-z.]*)\s*$")


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    pins: dict[str, str] = {}
    for req in reqs:
        m = REQ.match(req)
        if m:
            pins[m.group(1).lower()] = m.group(3)
    if not pins:
        print("lower bounds: pyproject.toml declares no `>=` bound", file=sys.stderr)
        return 1
    sys.stdout.write("".join(f"{name}=={version}\n" for name, version in sorted(pins.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
