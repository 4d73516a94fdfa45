"""The repository documents itself (issue 25 point 1): docs/formats.md, docs/architecture.md and docs/hardware.md
exist and name what the code has, and no tracked file points at background notes outside the repository
(``../shared/docs``, their FORMATS/PRODUCT/ARCHITECTURE/HARDWARE.md), which a clone does not have."""

import re
import subprocess
from pathlib import Path

import pytest

import roofcore
from roofcore import FORMATS

ROOT = Path(roofcore.__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: a reference to the notes outside the repository: the folder, or one of its files by name (upper case: ours are not)
OUTSIDE = re.compile(r"shared/docs|\b(?:FORMATS|PRODUCT|ARCHITECTURE|HARDWARE|LANDSCAPE)\.md\b|\bFORMATS §")


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / p for p in out.decode().split("\0") if p]


def test_no_file_points_at_docs_outside_the_repository():
    me = Path(__file__).resolve()
    found = []
    for path in _tracked():
        if path == me or not path.is_file() or path.suffix in (".png", ".gz", ".pdf", ".sqlite3"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not found, "point at docs/formats.md, docs/architecture.md or docs/hardware.md instead:\n" + "\n".join(found)


def test_the_pattern_sees_what_it_must():
    for bad in ("see ../shared/docs/FORMATS.md §3", "(FORMATS §3.6a)", "HARDWARE.md pitfall 1", "PRODUCT.md"):
        assert OUTSIDE.search(bad), bad
    for good in ("docs/formats.md", "docs/hardware.md#measured-devices", "PROVENANCE.md", "the FORMATS registry"):
        assert not OUTSIDE.search(good), good


def test_formats_md_names_every_registered_format():
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    missing = [name for name in FORMATS if f"`{name}`" not in text]
    assert not missing, f"docs/formats.md does not describe: {missing}"


def test_links_between_the_docs_resolve():
    for doc in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            assert (doc.parent / target).resolve().is_file(), f"{doc.name} links to a missing {target}"


def test_hardware_md_names_every_catalog_key():
    import json

    schema = json.loads((ROOT / "catalogs" / "schema.json").read_text(encoding="utf-8"))
    keys = set(schema["properties"])
    for part in schema["$defs"].values():
        keys |= set(part.get("properties", ()))
    text = (DOCS / "hardware.md").read_text(encoding="utf-8")
    missing = sorted(k for k in keys if f"`{k}`" not in text)
    assert not missing, f"docs/hardware.md does not describe: {missing}"


def test_errors_docstring_matches_the_classes():
    """errors.py says which builtin each error family derives from; it must stay true (issue 25 point 6)."""
    from roofcore import errors

    assert not issubclass(errors.RoofcoreError, ValueError)
    for cls in (errors.LocatedError, errors.InputError, errors.CatalogError, errors.UnitError, errors.LimitError):
        assert issubclass(cls, errors.RoofcoreError) and issubclass(cls, ValueError), cls
    assert issubclass(errors.UnknownHardwareError, KeyError) and not issubclass(errors.UnknownHardwareError, ValueError)
    assert "Every error is also a builtin ``ValueError``" not in errors.__doc__


_PATH = re.compile(r"`((?:tests|roofcore|app|pages|catalogs|benchmarks|examples)/[\w./*-]+?)/?`")
_TEST = re.compile(r"(?<![/\w])(test_\w+\.py)\b")


def test_files_the_docs_name_exist():
    """A path in docs/*.md (`roofcore/ingest/ncu.py`, `tests/data/ncu/*`, test_samples.py) names a file in the tree."""
    missing = []
    for doc in sorted(DOCS.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        names = set(_PATH.findall(text)) | {f"tests/{t}" for t in _TEST.findall(text)}
        for name in sorted(names):
            if not (any(ROOT.glob(name)) if "*" in name else (ROOT / name).exists()):
                missing.append(f"{doc.name}: {name}")
    assert not missing, "\n".join(missing)
