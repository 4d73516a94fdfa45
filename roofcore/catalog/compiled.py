"""The shipped catalogs in a compact form: each YAML file's parsed content as JSON, read in its place.

Parsing the shipped YAML (150 kB) takes most of ``roofline hardware list`` (PyYAML's C loader still builds every
value in Python: ~20× slower than ``json.loads`` of the same data). ``catalogs/parsed.json`` holds each shipped
file's content keyed by its name, with the SHA-256 of the YAML it came from: a file whose bytes no longer match
(edited in a source checkout, or an installed copy changed) is parsed from YAML as before, so the compact form is
never stale, only slower. User catalogs (``--catalog``, ``ROOFCORE_CATALOG_PATH``) are always read as YAML.

After editing a shipped catalog, ``python -m roofcore.catalog`` rewrites the file (tests/test_startup.py
checks it is current and that both forms give the same devices).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

NAME = "parsed.json"
_ABOUT = ("generated from the *.yaml files beside it by `python -m roofcore.catalog`; each entry is read in "
          "place of its YAML while the YAML's sha256 matches")


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


@lru_cache(maxsize=4)
def entries(folder: str) -> dict[str, Any]:
    try:
        doc = json.loads((Path(folder) / NAME).read_bytes())
    except (OSError, ValueError):
        return {}
    return doc.get("files", {}) if isinstance(doc, dict) else {}


def lookup(path: Path, raw: bytes) -> Any | None:
    """The parsed content of the shipped catalog at ``path`` whose bytes are ``raw``, or None (no current entry)."""
    entry = entries(str(path.parent)).get(path.name)
    if isinstance(entry, dict) and entry.get("sha256") == digest(raw):
        return entry.get("data")
    return None


def render(folder: Path) -> str:
    """The compact form of every ``*.yaml`` in ``folder`` (parsed as the loader parses them)."""
    from .load import read_yaml

    files = {}
    for p in sorted(folder.glob("*.yaml")):
        raw = p.read_bytes()
        files[p.name] = {"sha256": digest(raw), "data": read_yaml(raw, p.name)}
    return json.dumps({"about": _ABOUT, "files": files}, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False) + "\n"


def main() -> None:
    from .load import BUILTIN_DIR

    (BUILTIN_DIR / NAME).write_text(render(BUILTIN_DIR), encoding="utf-8")
    entries.cache_clear()

