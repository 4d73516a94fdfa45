"""The import direction declared in docs/architecture.md holds: each package imports only the packages its line of
the ```layering``` block allows (imports inside functions count; ``if TYPE_CHECKING:`` imports do not).

Violations that exist today are listed in KNOWN, each with where it happens: the coordinator works them off (issue
25 point 5). The test fails on a violation not listed, and on a listed one that no longer happens (remove it from
KNOWN), so the list only shrinks. ``python -m pytest tests/test_layering.py -s`` prints the count.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "roofcore"
DOC = ROOT / "docs" / "architecture.md"

#: (importer, imported) pairs that break the rules today, with one place each happens (issue 25 point 5)
KNOWN: dict[tuple[str, str], str] = {}


@lru_cache(maxsize=1)
def rules() -> dict[str, frozenset[str]]:
    """The ```layering``` block of docs/architecture.md: package -> the packages it may import."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```layering\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no ```layering``` block"
    every = {line.split("->")[0].strip() for line in block.group(1).splitlines() if "->" in line}
    # `*`: every engine package but the command line's
    engine = {p for p in every if p not in ("app", "pages", "streamlit_app", "roofcore", "cli", "__main__")}
    out = {}
    for line in block.group(1).splitlines():
        if "->" not in line:
            continue
        left, right = (s.strip() for s in line.split("->", 1))
        allowed = set()
        for name in right.split():
            allowed |= engine if name == "*" else {name}
        out[left] = frozenset(allowed)
    return out


def _unit(module: str) -> str | None:
    """The package of the layering a dotted module name belongs to (None: outside the project)."""
    parts = module.split(".")
    if parts[0] == "roofcore":
        return "roofcore" if len(parts) == 1 else parts[1]
    if parts[0] in ("app", "pages", "streamlit_app"):
        return parts[0]
    return None


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


_IMPORT = re.compile(r"^([ \t]*)(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t]+\w)")
_TYPE_CHECKING = re.compile(r"^([ \t]*)if\s+(?:typing\.)?TYPE_CHECKING\s*:")


def _statements(text: str) -> list[tuple[ast.stmt, int]]:
    """The import statements of a module with their line numbers, outside ``if TYPE_CHECKING:`` blocks: found line by
    line and parsed one by one (parsing whole files costs seconds over the tree)."""
    lines = text.splitlines()
    found: list[tuple[ast.stmt, int]] = []
    skip_indent: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None and line.strip() and indent <= skip_indent:
            skip_indent = None
        if (m := _TYPE_CHECKING.match(line)) is not None:
            skip_indent = len(m.group(1))
        elif skip_indent is None and _IMPORT.match(line):
            stmt, start = line.split("#", 1)[0].strip(), i + 1
            while stmt.count("(") > stmt.count(")") or stmt.endswith("\\"):
                i += 1
                stmt = stmt.rstrip("\\") + " " + lines[i].split("#", 1)[0].strip()
            found += [(node, start) for node in ast.parse(stmt).body]
        i += 1
    return found


def imports(py: Path) -> list[tuple[str, int]]:
    """(imported module, line) of every import in the file that names a project module."""
    rel = py.relative_to(ROOT).with_suffix("")
    package = list(rel.parts[:-1])
    found = []
    for node, line in _statements(py.read_text(encoding="utf-8")):
        if isinstance(node, ast.Import):
            found += [(a.name, line) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join([*up, *([node.module] if node.module else [])])
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((sub if _is_module(sub) else base, line))
    return found


def _sources() -> list[Path]:
    return [ROOT / "streamlit_app.py", *sorted(PKG.rglob("*.py")), *sorted((ROOT / "app").rglob("*.py")),
            *sorted((ROOT / "pages").glob("*.py"))]


@lru_cache(maxsize=1)
def violations() -> dict[tuple[str, str], list[str]]:
    """(importer, imported) -> the places ("file:line") where an import breaks the rules."""
    allowed = rules()
    out: dict[tuple[str, str], list[str]] = {}
    for py in _sources():
        rel = py.relative_to(ROOT)
        src = _unit(".".join(rel.with_suffix("").parts))
        if src == "roofcore" and rel.name != "__init__.py":
            src = rel.stem  # a top-level module: roofcore/<name>.py
        for module, line in imports(py):
            dst = _unit(module)
            if dst is None or dst == src:
                continue
            if dst not in allowed.get(src, frozenset()):
                places = out.setdefault((src, dst), [])
                if f"{rel.as_posix()}:{line}" not in places:
                    places.append(f"{rel.as_posix()}:{line}")
    return out


def test_every_package_has_a_line():
    """Each package of roofcore (and the app's parts) is named in the layering block, and only those."""
    names = {p.stem for p in PKG.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    names |= {"roofcore", "app", "pages", "streamlit_app"}
    assert set(rules()) == names, (sorted(names - set(rules())), sorted(set(rules()) - names))


def test_the_import_direction_in_architecture_md_holds():
    found = violations()
    print(f"\nimport-direction violations: {len(found)} package pairs, "
          f"{sum(map(len, found.values()))} imports; {len(KNOWN)} listed in KNOWN")
    for pair, places in sorted(found.items()):
        print(f"  {pair[0]} -> {pair[1]}: {', '.join(places)}")
    new = {pair: places for pair, places in found.items() if pair not in KNOWN}
    assert not new, "imports against docs/architecture.md's layering (fix them, or change the rule there):\n" + \
        "\n".join(f"  {a} -> {b}: {', '.join(p)}" for (a, b), p in sorted(new.items()))
    fixed = sorted(set(KNOWN) - set(found))
    assert not fixed, f"fixed, remove from KNOWN in tests/test_layering.py: {fixed}"


@pytest.mark.parametrize(("code", "where", "expected"), [
    ("from ..errors import InputError", "roofcore/ingest/x.py", [("roofcore.errors", 1)]),
    ("from . import settings", "roofcore/x.py", [("roofcore.settings", 1)]),
    ("from .. import __version__", "roofcore/cli/x.py", [("roofcore", 1)]),
    ("from roofcore.views import kernel_table", "pages/x.py", [("roofcore.views", 1)]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..analyze import Analysis\n",
     "roofcore/charts/x.py", [("typing", 1)]),
    ("def f():\n    from ..store import open_store\n", "roofcore/x/y.py", [("roofcore.store", 2)]),
])
def test_imports_are_resolved_as_python_does(tmp_path, monkeypatch, code, where, expected):
    py = ROOT / where
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: code if self == py else Path.read_text(self))
    assert imports(py) == expected


def test_the_rules_themselves_have_no_cycle():
    """The allowed imports form a DAG, so code that keeps to them has no import cycle between packages."""
    allowed = rules()
    state: dict[str, int] = {}

    def visit(p: str, path: tuple[str, ...]) -> None:
        if state.get(p) == 2:
            return
        assert state.get(p) != 1, f"cycle in docs/architecture.md's layering: {' -> '.join((*path, p))}"
        state[p] = 1
        for q in sorted(allowed.get(p, ())):
            visit(q, (*path, p))
        state[p] = 2

    for p in sorted(allowed):
        visit(p, ())
