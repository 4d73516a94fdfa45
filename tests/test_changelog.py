"""CHANGELOG.md in dated version sections (an Unreleased section on top, then ``## X.Y.Z — YYYY-MM-DD``, newest
first, changes grouped as Added / Changed / Fixed, one line each), and the newest version is the package's."""

import re
import tomllib
from datetime import date
from pathlib import Path

import roofcore

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.compile(r"^## (\d+)\.(\d+)\.(\d+) — (\d{4}-\d{2}-\d{2})$")


def _sections() -> list[str]:
    return [line for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("## ")]


def test_unreleased_on_top_then_dated_versions_newest_first():
    heads = _sections()
    assert heads[0] == "## Unreleased"
    versions = []
    for head in heads[1:]:
        m = VERSION.match(head)
        assert m, f"not a dated version heading: {head!r}"
        date.fromisoformat(m.group(4))
        versions.append((tuple(map(int, m.groups()[:3])), m.group(4)))
    assert versions, "no released version"
    assert versions == sorted(versions, reverse=True), "versions and dates must go newest first"


def test_each_change_is_one_line_under_a_group():
    group = None
    for n, line in enumerate((ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("## "):
            group = None
        elif line.startswith("### "):
            group = line[4:]
            assert group in ("Added", "Changed", "Fixed", "Removed", "Deprecated", "Security"), line
        elif line.startswith("- "):
            assert group, f"CHANGELOG.md:{n}: a change outside an Added/Changed/Fixed group"
        elif line.startswith(("  ", "\t")) and group:
            raise AssertionError(f"CHANGELOG.md:{n}: one line per change (a continuation line)")


def test_the_newest_version_is_the_packages():
    newest = next(VERSION.match(h) for h in _sections() if VERSION.match(h))
    version = ".".join(newest.groups()[:3])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert project == version == roofcore.__version__
