"""Meta-tests that keep the house honest."""

import ast
import re
from pathlib import Path

import roofcore
from roofcore import FORMATS, OPS
from roofcore.catalog import BUILTIN_DIR, load_file

PKG = Path(roofcore.__file__).parent
ROOT = PKG.parent
#: the app's own package (beside streamlit_app.py and pages/), never imported by the engine
APP = ROOT / "app"


def test_roofcore_never_imports_streamlit():
    for py in PKG.rglob("*.py"):
        tree = ast.parse(py.read_text(), filename=str(py))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n == "streamlit" or n.startswith("streamlit.") for n in names), py


def _imports(py: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"), filename=str(py))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def test_roofcore_never_imports_the_app_nor_names_a_page():
    """Engine -> app, never back: no module of roofcore imports the app (its package, its entry point) or
    Streamlit, or names a page file; what a page needs, the engine offers as a public function."""
    app_modules = ("app", "streamlit_app", "streamlit", "pages")
    for py in PKG.rglob("*.py"):
        bad = [n for n in _imports(py) if n.split(".")[0] in app_modules]
        assert not bad, f"{py.relative_to(ROOT)} imports {bad}"
        pages = re.findall(r"\bpages/\w+\.py|\bstreamlit_app\b", py.read_text(encoding="utf-8"))
        assert not pages, f"{py.relative_to(ROOT)} names {pages}"


#: a session key written as a string where the state is read or written
_STRING_KEY = re.compile(r"""session_state\s*(?:\[|\.(?:get|pop|setdefault)\()\s*[rbfu]*['"]""")


def _app_sources() -> list[Path]:
    """The app's code: its entry point, its pages and its package."""
    return [ROOT / "streamlit_app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted(APP.rglob("*.py"))]


def test_session_keys_live_in_the_state_module():
    """Every session key is named once, in app/state.py: the app's code reaches the session only through it, and
    no test or benchmark writes a key as a string."""
    state = APP / "state.py"
    if not state.exists():
        import pytest

        pytest.skip("no app package beside the engine (an installed roofcore)")
    touching = [py.relative_to(ROOT).as_posix() for py in _app_sources() if py != state
                and "session_state" in py.read_text(encoding="utf-8")]
    assert not touching, f"only app/state.py reads or writes st.session_state: {touching}"
    strings = [f"{py.relative_to(ROOT).as_posix()}:{n}" for folder in ("tests", "benchmarks", "roofcore")
               for py in sorted((ROOT / folder).rglob("*.py")) if py.name != "test_meta.py"
               for n, line in enumerate(py.read_text(encoding="utf-8").splitlines(), 1) if _STRING_KEY.search(line)]
    assert not strings, f"session keys as strings (use app.state's keys): {strings}"


def test_every_app_table_shows_a_missing_value_as_a_dash():
    """Every st.dataframe of the app passes ``placeholder="–"``: Streamlit writes a missing cell as "None" (the
    LLM tab's calibration table did), which reads as a value; the app's tables say unknown with a dash."""
    if not APP.exists():
        import pytest

        pytest.skip("no app package beside the engine (an installed roofcore)")
    bare = [f"{py.relative_to(ROOT).as_posix()}:{node.lineno}" for py in _app_sources()
            for node in ast.walk(ast.parse(py.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dataframe"
            and not any(k.arg == "placeholder" for k in node.keywords)]
    assert not bare, f"st.dataframe without placeholder=\"–\": {bare}"


def test_only_charts_imports_altair():
    for py in PKG.rglob("*.py"):
        if py.relative_to(PKG).parts[0] == "charts":  # the charts package
            continue
        assert "import altair" not in py.read_text(), py


def test_every_catalog_file_loads():
    for f in sorted(BUILTIN_DIR.glob("*.yaml")):
        assert load_file(f)


def test_registries_are_documented():
    for f in FORMATS.values():
        assert f.description and f.sniff and f.parse
    for name, fn in OPS.items():
        assert fn.__doc__, name
    assert set(OPS) >= {"matmul", "elementwise", "layernorm", "dot"}


def test_public_api_is_explicit():
    for name in roofcore.__all__:
        assert hasattr(roofcore, name), name


def test_every_engine_package_ships_in_the_wheel():
    """pyproject.toml lists the packages by name: a new package of roofcore (a split) must be listed, or the wheel
    leaves it out while an editable install hides it."""
    import tomllib

    import pytest

    pyproject = ROOT / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("no source tree (an installed roofcore)")
    listed = set(tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {".".join(init.parent.relative_to(ROOT).parts) for init in PKG.rglob("__init__.py")
                if "migrations" not in init.relative_to(PKG).parts}
    assert packages <= listed, f"packages missing from pyproject.toml: {sorted(packages - listed)}"


# ------------------------------------------------------------------------------------------------ shape (issue 16)

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "migrations" not in p.relative_to(PKG).parts)


def _app_modules() -> list[Path]:
    """The app's package (the same limits as the engine's modules); absent in an installed roofcore."""
    return sorted(APP.rglob("*.py")) if APP.is_dir() else []


def test_no_module_above_500_lines():
    """One concern per module: a module above the limit is a package of smaller ones waiting to happen."""
    long = {py.relative_to(ROOT).as_posix(): n for py in [*_modules(), *_app_modules()]
            if (n := len(py.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules above {MAX_MODULE_LINES} lines (split them): {long}"


def test_no_function_above_80_lines_without_a_reason():
    """A function above the limit says why on the comment line above it (one containing "80 lines")."""
    long = []
    for py in [*_modules(), *_app_modules()]:
        lines = py.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines), filename=str(py))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                reason = first >= 2 and "80 lines" in lines[first - 2] and lines[first - 2].lstrip().startswith("#")
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES and not reason:
                    long.append(f"{py.relative_to(ROOT).as_posix()}:{node.lineno} {node.name}")
    assert not long, f"functions above {MAX_FUNCTION_LINES} lines with no reason given: {long}"


#: imported before the modules are tried one by one (third-party, so no cycle of roofcore's or the app's is
#: hidden): each child then imports only roofcore's and the app's own modules
_PRELOAD = ("numpy", "pandas", "pyarrow", "pyarrow.csv", "yaml", "jsonschema", "orjson", "altair", "streamlit")

_ISOLATED = r"""
import importlib, json, os, sys
for m in sys.argv[2:]:
    try:
        importlib.import_module(m)
    except ImportError:
        pass


def own(prefixes):
    return {m for m in sys.modules if m.split(".")[0] in prefixes}


def child(name, prefixes):
    # a fresh import of `name`: what it loaded of `prefixes`, and its error if any
    before = own(prefixes)
    msg = ""
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in ("roofcore", "app"):
            msg = ""  # an optional extra that is not installed (sqlalchemy for roofcore.store)
        else:
            msg = f"{type(e).__name__}: {e}"
    except BaseException as e:
        msg = f"{type(e).__name__}: {e}"
    return {"error": msg, "loaded": sorted(own(prefixes) - before)}


def forked(fn, *args):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, json.dumps(fn(*args)).encode())
        os._exit(0)
    os.close(w)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(out or b'{"error": "the child died", "loaded": []}')


def each(names, prefixes):
    # one fresh child per module, parents first; a module its parent package's import already loaded is skipped:
    # importing it first runs exactly that import (its parent's __init__ first), which was tried
    failures, loaded, tried = {}, {}, 0
    for name in sorted(names, key=lambda n: (n.count("."), n)):
        parent = name.rpartition(".")[0]
        if parent and name in loaded.get(parent, ()):
            continue
        got = forked(child, name, prefixes)
        tried += 1
        loaded[name] = set(got["loaded"])
        if got["error"]:
            failures[name] = got["error"]
    return failures, tried


def app_side(names):
    # the app's modules on top of a loaded roofcore (the engine never imports the app, so no cycle through it hides)
    importlib.import_module("roofcore")
    return each(names, ("app",))


names = json.loads(sys.argv[1])
failures, tried = each([n for n in names if n.split(".")[0] == "roofcore"], ("roofcore",))
app_failures, app_tried = forked(app_side, [n for n in names if n.split(".")[0] == "app"]) or ({}, 0)
failures.update(app_failures)
print(json.dumps({"failures": failures, "tried": tried + app_tried}))
"""


def test_every_module_imports_on_its_own():
    """No import cycle: each module of roofcore and of the app's package imported first, in a fresh interpreter,
    loads (a cycle shows as a partially initialised module). One interpreter with the third-party libraries
    loaded forks a child per module."""
    import json
    import os
    import subprocess
    import sys

    import pytest

    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork (one fresh child per module)")
    names = []
    for py in [*_modules(), *_app_modules()]:
        parts = py.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # runs the CLI
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    proc = subprocess.run([sys.executable, "-c", _ISOLATED, json.dumps(names), *_PRELOAD], capture_output=True,
                          text=True, timeout=600, cwd=PKG.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not result["failures"], result["failures"]
    assert result["tried"] >= len({n.split(".")[0] for n in names}), result


def _project_modules() -> dict[str, Path]:
    """Dotted name -> file for every module of the engine, the app, the pages and the tests' own helpers (tests/
    is on sys.path, so ``roofhelpers`` is a module name there)."""
    out: dict[str, Path] = {}
    for top in ("roofcore", "app", "pages", "tests"):
        for p in (ROOT / top).rglob("*.py"):
            if "artifacts" in p.parts:
                continue
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = p
            if top == "tests" and len(parts) == 2:
                out[parts[1]] = p
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _imported_from(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    base = parts[:-1]  # a module's package, or the package of an __init__
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, *([node.module] if node.module else [])])


def test_no_underscore_name_crosses_a_module():
    """Issue 25 point 3: what a module offers its siblings has a public name. No module of roofcore/, app/, pages/
    or tests/ imports an underscore name from another project module (``from .x import _y``), nor reaches one
    through a module (``x._y``, ``monkeypatch.setattr(x, "_y", ...)`` included); dunders are not private."""
    mods = _project_modules()
    found = []
    for dotted, path in mods.items():
        if dotted.count(".") == 0 and path.parent.name == "tests" and dotted != "tests":
            continue  # the alias of a test helper: checked under its dotted name
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, str] = {}  # local name -> project module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                src = _imported_from(path, node)
                for a in node.names:
                    if f"{src}.{a.name}" in mods:
                        bound[a.asname or a.name] = f"{src}.{a.name}"
                    elif src in mods and _private(a.name):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {src} import {a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods:
                        bound[a.asname or a.name.split(".")[0]] = a.name
        for node in ast.walk(tree):
            attr = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
                attr = node.attr
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setattr"
                  and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in bound
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
                attr = node.args[1].value
            if attr is not None and _private(attr):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not found, f"{len(found)} private names used across modules (give them public names):\n" + "\n".join(found)
