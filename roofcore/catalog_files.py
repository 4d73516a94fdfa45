"""Hardware from any file a user gives as a catalog: catalog YAML, and files of measured ceilings.

A measured-ceilings file (rocprof-compute's ``roofline.csv``, the Empirical Roofline Toolkit's ``roofline.json``) is
read by :mod:`roofcore.ingest.ceilings`, the same reader that takes it as a workload's companion; the catalog
package sits below the readers (they look devices up in it), so it cannot ask them itself. This module joins the
two: the CLI's ``--catalog``, ``ROOFCORE_CATALOG_PATH``, the app's device upload and ``roofcore.load_catalogs``
come through here, and ``roofcore.catalog`` alone reads catalog YAML.

The readers (and pandas with them) are imported only when a file that is not a shipped catalog is read.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .catalog import Catalog
    from .models import Hardware


def measured_devices(raw: bytes, file: str) -> list[Hardware] | None:
    """The devices of a measured-ceilings file, or None when ``raw`` is not one (then it is read as YAML)."""
    from .ingest.ceilings import measured_devices as read

    return read(raw, file)


def load_catalogs(extra: Iterable[str | Path] = (), *, use_env: bool = True) -> Catalog:
    """The built-in catalogs, ``ROOFCORE_CATALOG_PATH``'s and ``extra``: YAML or measured ceilings, every file
    checked (:func:`roofcore.catalog.load_catalogs`)."""
    from .catalog import load_catalogs as load

    return load(extra, use_env=use_env, measured=measured_devices)


def load_bytes(raw: bytes, file: str = "uploaded.yaml", *, validate: bool = True) -> list[tuple[Hardware, bool]]:
    """One uploaded file's devices, YAML or measured ceilings (:func:`roofcore.catalog.load_bytes`)."""
    from .catalog import load_bytes as load

    return load(raw, file, validate=validate, measured=measured_devices)


__all__ = ["load_bytes", "load_catalogs", "measured_devices"]
