"""Hardware catalogs: YAML files -> validated :class:`Hardware`, with errors that say where and why.

Load order: the built-in ``catalogs/`` folder, then the folders/files in ``ROOFCORE_CATALOG_PATH``
(``os.pathsep``-separated), then each ``--catalog PATH``. A device id may appear once; a later file
may reuse an id only with ``overrides: true``. The grammar is in ``catalogs/README.md``.

The package: :mod:`.load` finds, reads and validates the files, :mod:`.entries` turns their entries into
devices, :mod:`.devices` holds the :class:`Catalog` and matches profilers' device names to its ids,
:mod:`.export` writes a device back as YAML or JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType

from ..errors import CatalogError
from .devices import Catalog
from .export import hardware_to_json, hardware_to_yaml, hardware_to_yaml_dict
from .load import (
    BUILTIN_DIR,
    ENV_VAR,
    SCHEMA_PATH,
    SCHEMA_VERSION,
    MeasuredReader,
    catalog_paths,
    display_path,
    load_bytes,
    load_file,
)
from .resolve import DeviceMatch


def load_catalogs(extra: Iterable[str | Path] = (), *, use_env: bool = True,
                  measured: MeasuredReader | None = None) -> Catalog:
    """Load the built-in catalogs and the user's, checking every file; see the module docstring. Catalog YAML only,
    unless ``measured`` reads measured-ceiling files too (:func:`roofcore.catalog_files.load_catalogs` passes the
    readers of :mod:`roofcore.ingest.ceilings`)."""
    catalog = Catalog(devices=MappingProxyType({}))
    for f in catalog_paths(extra, use_env=use_env):
        for hw, overrides in load_file(f, measured=measured):
            if hw.id in catalog and not overrides:
                raise CatalogError(where=f"{hw.origin}: device {hw.id!r}", expected="an id not used before",
                                   found=f"{hw.id!r}, already defined in {catalog.get(hw.id).origin}",
                                   hint="rename it, or add `overrides: true` to replace the earlier device.")
            catalog = catalog.with_device(hw, overrides=True)
    return catalog



__all__ = [
    "BUILTIN_DIR",
    "ENV_VAR",
    "SCHEMA_PATH",
    "SCHEMA_VERSION",
    "Catalog",
    "DeviceMatch",
    "MeasuredReader",
    "catalog_paths",
    "display_path",
    "hardware_to_json",
    "hardware_to_yaml",
    "hardware_to_yaml_dict",
    "load_bytes",
    "load_catalogs",
    "load_file",
]
