"""Every ROOFCORE_* variable is declared once, in roofcore.settings, and read only through it."""

import argparse
import ast
import json
import os
import re
from pathlib import Path

import pytest

from roofcore import limits, settings
from roofcore.cli.config import cmd_config, config_text
from roofcore.errors import LimitError, RoofcoreError

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_PY = ROOT / "roofcore" / "settings.py"


def _sources() -> list[Path]:
    return [ROOT / "streamlit_app.py", *sorted((ROOT / "roofcore").rglob("*.py")), *sorted((ROOT / "app").rglob("*.py")),
            *sorted((ROOT / "pages").glob("*.py"))]


def _environ_keys(tree: ast.Module) -> list[tuple[int, object]]:
    """(line, key) of each os.environ / os.getenv read: the key a constant, a module constant's value, or the
    expression's text where it cannot be resolved."""
    consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
              for t in n.targets if isinstance(t, ast.Name)}

    def key(node: ast.expr) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in consts:
            return consts[node.id]
        return ast.unparse(node)

    def is_environ(node: ast.expr) -> bool:
        return ast.unparse(node) in ("os.environ", "environ")

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_environ(node.value):
            found.append((node.lineno, key(node.slice)))
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop", "setdefault")
                 and is_environ(node.func.value)) or ast.unparse(node.func) in ("os.getenv", "getenv")):
            found.append((node.lineno, key(node.args[0])))
        elif isinstance(node, ast.Compare) and any(is_environ(c) for c in node.comparators):
            found.append((node.lineno, key(node.left)))
    return found


def test_no_module_but_settings_reads_a_roofcore_variable():
    """Engine, app and pages read ROOFCORE_* only through roofcore.settings; a key that cannot be resolved to a
    string counts as a read too (name the variable through settings instead)."""
    bad = []
    for py in _sources():
        text = py.read_text(encoding="utf-8")
        if py == SETTINGS_PY or ("environ" not in text and "getenv" not in text):
            continue
        for line, key in _environ_keys(ast.parse(text)):
            if not isinstance(key, str) or key.startswith("ROOFCORE_") or not key.isupper():
                bad.append(f"{py.relative_to(ROOT)}:{line} reads {key!r}")
    assert not bad, "\n".join(bad)


def test_the_check_sees_every_way_of_reading():
    tree = ast.parse("import os\nV = 'ROOFCORE_X'\na = os.environ.get(V)\nb = os.environ['ROOFCORE_Y']\n"
                     "c = os.getenv('ROOFCORE_Z')\nd = 'ROOFCORE_W' in os.environ\ne = os.environ.get(f())\n")
    assert [k for _, k in _environ_keys(tree)] == ["ROOFCORE_X", "ROOFCORE_Y", "ROOFCORE_Z", "ROOFCORE_W", "f()"]


def test_every_variable_named_in_the_code_is_declared():
    named = set()
    for py in _sources():
        if py == SETTINGS_PY:
            continue
        named |= set(re.findall(r"\bROOFCORE_[A-Z0-9_]*[A-Z0-9]\b", py.read_text(encoding="utf-8")))
    assert named <= set(settings.BY_NAME), sorted(named - set(settings.BY_NAME))
    assert len(settings.BY_NAME) == len(settings.SETTINGS) == 12
    for s in settings.SETTINGS:
        assert s.kind and s.limits and s.meaning and s.name in SETTINGS_PY.read_text(encoding="utf-8").split('"""')[1]


def test_workers_is_parsed_one_way(monkeypatch):
    monkeypatch.setenv("ROOFCORE_WORKERS", "3")
    assert settings.cores() == 3
    monkeypatch.setenv("ROOFCORE_WORKERS", " 1 ")
    assert settings.cores() == 1
    for every_cpu in ("0", "", "  "):
        monkeypatch.setenv("ROOFCORE_WORKERS", every_cpu)
        assert settings.WORKERS.value() is None and settings.cores() >= 1
    for bad in ("two", "-1", "1.5"):
        monkeypatch.setenv("ROOFCORE_WORKERS", bad)
        with pytest.raises(RoofcoreError, match=r"ROOFCORE_WORKERS='.*': expected a whole number"):
            settings.cores()


def test_limits_come_from_settings(monkeypatch):
    assert limits.INPUT_MB.default == settings.MAX_INPUT_MB.default == 512
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "12")
    assert limits.ROWS.value() == 12 and settings.MAX_ROWS.source() == "env"
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "nan")
    with pytest.raises(LimitError, match="ROOFCORE_MAX_ROWS='nan': expected a number ≥ 0"):
        limits.ROWS.value()


def test_flags_and_paths(monkeypatch, tmp_path):
    for raw, on in (("1", True), ("yes", True), ("0", False), ("off", False), ("FALSE", False), ("", False)):
        monkeypatch.setenv("ROOFCORE_DEBUG", raw)
        assert settings.DEBUG.value() is on, raw
    monkeypatch.setenv("ROOFCORE_CATALOG_PATH", f"{tmp_path / 'a'}{os.pathsep} {tmp_path / 'b'} ")
    assert settings.CATALOG_PATH.value() == (tmp_path / "a", tmp_path / "b")
    monkeypatch.setenv("ROOFCORE_APP_URL", " https://roof.example/app/ ")
    assert settings.APP_URL.value() == "https://roof.example/app"


def test_config_prints_value_and_source(monkeypatch, capsys):
    monkeypatch.setenv("ROOFCORE_MAX_KERNELS", "5000")
    monkeypatch.setenv("ROOFCORE_DB_URL", "postgresql://roof:hunter2@db.internal/roof")
    monkeypatch.delenv("ROOFCORE_MAX_ROWS", raising=False)
    text = config_text()
    assert re.search(r"^ROOFCORE_MAX_KERNELS +5,000 +\(env\)$", text, re.M)
    assert re.search(r"^ROOFCORE_MAX_ROWS +10,000,000 +\(default\)$", text, re.M)
    assert "postgresql://roof:***@db.internal/roof" in text and "hunter2" not in text
    monkeypatch.setenv("ROOFCORE_WORKERS", "many")
    assert cmd_config(argparse.Namespace(json=True, output=None)) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert list(rows) == [s.name for s in settings.SETTINGS]
    assert rows["ROOFCORE_WORKERS"]["source"] == "env" and "invalid" in rows["ROOFCORE_WORKERS"]["value"]
    assert set(rows["ROOFCORE_MAX_JSON_DEPTH"]) == {"name", "value", "source", "type", "limits", "meaning"}


def test_roofline_config_command(monkeypatch, capsys, tmp_path):
    from roofcore.cli import main

    monkeypatch.setenv("ROOFCORE_PARSE_TIMEOUT_S", "60")
    assert main(["config"]) == 0
    assert re.search(r"^ROOFCORE_PARSE_TIMEOUT_S +60 +\(env\)$", capsys.readouterr().out, re.M)
    out = tmp_path / "settings.json"
    assert main(["config", "--json", "-o", str(out)]) == 0
    assert {r["name"]: r["source"] for r in json.loads(out.read_text())}["ROOFCORE_PARSE_TIMEOUT_S"] == "env"
