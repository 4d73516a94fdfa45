"""Meta-tests that keep the house honest."""

import ast
from pathlib import Path

import roofcore
from roofcore import FORMATS, OPS
from roofcore.catalog import BUILTIN_DIR, load_file

PKG = Path(roofcore.__file__).parent


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


def test_only_charts_imports_altair():
    for py in PKG.rglob("*.py"):
        if py.name == "charts.py":
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
