"""Data that ships with roofcore: the hardware catalogs and the example workloads.

In an installed package (wheel, ``pip install .``) they live inside it (``roofcore/catalogs``,
``roofcore/examples``, mapped there by ``pyproject.toml``); in a source checkout or an editable install
they are the top-level ``catalogs/`` and ``examples/`` folders beside the package. Found with
:mod:`importlib.resources`, so no caller depends on where the files sit.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_dir(name: str) -> Path:
    """The shipped folder ``name`` (``"catalogs"`` or ``"examples"``)."""
    inside = resources.files("roofcore") / name
    if inside.is_dir():
        return Path(str(inside))
    return Path(__file__).resolve().parent.parent / name


def examples() -> dict[str, Path]:
    """Bundled example workloads by name (``transformer_block`` -> its YAML file)."""
    return {p.stem: p for p in sorted(data_dir("examples").glob("*.yaml"))}


__all__ = ["data_dir", "examples"]
