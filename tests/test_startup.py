"""Start-up (issue 24 point 3): the commands that list or explain import none of the heavy libraries, the
lazy names of ``roofcore`` behave as the eager ones did, and the compact forms that spare the readers and the
YAML parser (format list, parsed catalogs) match what they stand for. Behaviour, not time: the times are in
benchmarks/bench_startup.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roofcore.catalog import compiled, load_file
from roofcore.catalog.load import BUILTIN_DIR, catalog_devices, display_path, read_yaml
from roofcore.cli.format_index import BUILTIN
from roofcore.ingest import FORMATS

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "pandas", "pyarrow", "altair", "vl_convert", "sqlalchemy", "alembic", "streamlit", "jsonschema",
         "matplotlib", "weasyprint", "msgspec", "polars")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOFCORE_")}
    return {**env, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[str, set[str]]]:
    """stdout and the top-level packages imported, per command: started together (one wait, not four)."""
    cmds = {"--help": ["--help"], "formats": ["formats"], "hardware list": ["hardware", "list"]}
    procs = {k: subprocess.Popen([sys.executable, "-X", "importtime", "-m", "roofcore", *args], cwd=ROOT, env=_env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k, args in cmds.items()}
    out = {}
    for k, p in procs.items():
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, (k, stderr[-2000:])
        mods = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in stderr.splitlines()
                if line.startswith("import time:") and line.count("|") == 2}
        assert "roofcore" in mods, k  # -X importtime did report
        out[k] = (stdout, mods)
    return out


@pytest.mark.parametrize("command", ["--help", "formats", "hardware list"])
def test_listing_commands_import_nothing_heavy(runs, command):
    _stdout, mods = runs[command]
    assert not mods & set(HEAVY), sorted(mods & set(HEAVY))


@pytest.mark.parametrize("command", ["--help", "formats"])
def test_help_and_formats_need_no_yaml(runs, command):
    assert "yaml" not in runs[command][1]


def test_formats_lists_the_registry(runs):
    """The list printed without the readers is the registry's, row for row."""
    stdout, _ = runs["formats"]
    rows = [line.split(None, 1) for line in stdout.splitlines()[2:]]
    assert [r[0] for r in rows] == sorted(FORMATS)
    for name, text in rows:
        assert " ".join(FORMATS[name].description.split()) == " ".join(text.split()), name


def test_format_index_is_current():
    """Adding a format or changing its description: run `python -m roofcore.cli.format_index`."""
    assert tuple((f.name, f.description) for f in sorted(FORMATS.values(), key=lambda f: f.name)) == BUILTIN


def test_help_lists_every_command(runs):
    stdout, _ = runs["--help"]
    for cmd in ("hardware", "analyze", "advise", "plan", "compare", "report", "measure", "formats", "check", "save"):
        assert cmd in stdout


# ----------------------------------------------------------------------------------------- parsed catalogs

@pytest.fixture(scope="module")
def from_yaml() -> dict[str, tuple[bytes, object]]:
    """Each shipped catalog's bytes and its content parsed from the YAML (once: the slow part)."""
    return {p.name: (p.read_bytes(), read_yaml(p.read_bytes(), p.name)) for p in sorted(BUILTIN_DIR.glob("*.yaml"))}


def test_parsed_catalogs_are_current(from_yaml):
    """After editing a shipped catalog: run `python -m roofcore.catalog` (otherwise it is parsed as YAML: slower)."""
    doc = json.loads((BUILTIN_DIR / compiled.NAME).read_bytes())
    assert doc["files"] == {name: {"sha256": compiled.digest(raw), "data": data} for name, (raw, data) in from_yaml.items()}


def test_parsed_form_gives_the_same_devices(from_yaml):
    for name, (raw, data) in from_yaml.items():
        parsed = compiled.lookup(BUILTIN_DIR / name, raw)
        if parsed is None:
            pytest.skip(f"{name} changed since catalogs/{compiled.NAME} was written")
        assert catalog_devices(parsed, name, validate=False) == catalog_devices(data, name, validate=False)


def test_a_changed_catalog_is_read_from_its_yaml(tmp_path):
    """The compact form is used only for the very bytes it was made from."""
    path = tmp_path / "x.yaml"
    path.write_bytes(b"schema_version: 1\ndevices: []\n")
    (tmp_path / compiled.NAME).write_text(compiled.render(tmp_path), encoding="utf-8")
    compiled.entries.cache_clear()
    try:
        assert compiled.lookup(path, path.read_bytes()) == {"schema_version": 1, "devices": []}
        assert compiled.lookup(path, b"schema_version: 1\ndevices: []\n# edited\n") is None
        assert compiled.lookup(tmp_path / "other.yaml", b"") is None
    finally:
        compiled.entries.cache_clear()


def test_catalog_loads_without_the_parsed_form(monkeypatch, from_yaml):
    """No current entry in parsed.json: the shipped file is read from its YAML, with the same devices."""
    from roofcore.catalog import load as load_mod

    path = BUILTIN_DIR / "cpus.yaml"
    data = from_yaml[path.name][1]
    read = []
    monkeypatch.setattr(compiled, "lookup", lambda path, raw: None)
    monkeypatch.setattr(load_mod, "read_yaml", lambda raw, file: read.append(file) or read_yaml(raw, file))
    load_mod.load_builtin.cache_clear()
    try:
        assert load_file(path) == catalog_devices(data, display_path(path), validate=False)
        assert read == [display_path(path)]
    finally:
        load_mod.load_builtin.cache_clear()


# --------------------------------------------------------------------------------------------- lazy names

def test_lazy_names_behave_as_before():
    """Every public name resolves to what it names; `import roofcore` alone loads no submodule with numpy."""
    import roofcore
    from roofcore import advise, analyze, errors, ingest, models

    assert set(roofcore.__all__) <= set(dir(roofcore))
    for name in roofcore.__all__:
        assert getattr(roofcore, name) is not None, name
    assert roofcore.analyze is analyze and callable(analyze) and analyze.__module__ == "roofcore.analyze"
    assert roofcore.read is ingest.read and roofcore.InputError is errors.InputError
    assert roofcore.Workload is models.Workload and roofcore.RULES is advise.RULES
    with pytest.raises(AttributeError):
        roofcore.no_such_name  # noqa: B018
    p = subprocess.run([sys.executable, "-c", "import sys, roofcore; print(sorted(sys.modules))"], cwd=ROOT,
                       env=_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "numpy" not in p.stdout and "roofcore.ingest" not in p.stdout


def test_importing_the_analyze_module_keeps_the_function():
    """`import roofcore.analyze` binds the submodule on the package (as the import system does for every
    submodule): the package's `analyze` stays the function, as when it was imported eagerly."""
    import roofcore

    fn = roofcore.analyze
    setattr(roofcore, "analyze", sys.modules["roofcore.analyze"])  # noqa: B010  (what the import system does)
    assert roofcore.analyze is fn and callable(roofcore.analyze)
