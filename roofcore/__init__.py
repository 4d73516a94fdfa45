"""roofcore: the roofline engine under the roofline report and planning app. Never imports Streamlit.

    >>> from roofcore import load_catalogs, read, analyze
    >>> cat = load_catalogs()
    >>> a = analyze(read("examples/transformer_block.yaml"), [cat.get("h100-sxm")])
    >>> a.summary("h100-sxm")["t_roof_s"]  # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.2.0"  #: as pyproject.toml's version (tests/test_changelog.py checks)

import importlib
import sys
import types
from typing import Any

# The public names are imported when first used (PEP 562), so that `roofline --help` and the commands that need
# neither pandas nor the readers start at once; `from roofcore import analyze` works as before.
_LAZY = {
    **dict.fromkeys(("RULES", "Advice", "Recommendation", "advise_all"), "advise"),
    **dict.fromkeys(("Analysis", "analyze"), "analyze"),
    **dict.fromkeys(("Catalog", "DeviceMatch", "hardware_to_json", "hardware_to_yaml"), "catalog"),
    **dict.fromkeys(("load_catalogs",), "catalog_files"),  # catalog YAML and measured-ceiling files
    **dict.fromkeys(("CatalogError", "InputError", "LimitError", "LocatedError", "RoofcoreError", "UnitError",
                     "UnknownHardwareError"), "errors"),
    **dict.fromkeys(("FORMATS", "aggregate", "read", "read_many", "register_format"), "ingest"),
    **dict.fromkeys(("Ceiling", "DeviceKind", "Figure", "Hardware", "Kernel", "Link", "MemoryLevel", "Precision",
                     "Scope", "Skipped", "Unit", "Workload"), "models"),
    **dict.fromkeys(("OPS", "register_op"), "ops"),
    **dict.fromkeys(("FLAG_CODES", "Flag"), "roofline"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif not name.startswith("__"):
        try:  # a submodule used as an attribute (roofcore.ingest.detect after `import roofcore`), as before
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: object) -> None:
        # importing the submodule roofcore.analyze binds it on the package: the name stays the function
        if name == "analyze" and isinstance(value, types.ModuleType):
            value = value.analyze
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "FLAG_CODES",
    "FORMATS",
    "OPS",
    "RULES",
    "Advice",
    "Analysis",
    "Catalog",
    "CatalogError",
    "Ceiling",
    "DeviceKind",
    "DeviceMatch",
    "Figure",
    "Flag",
    "Hardware",
    "InputError",
    "Kernel",
    "LimitError",
    "Link",
    "LocatedError",
    "MemoryLevel",
    "Precision",
    "Recommendation",
    "RoofcoreError",
    "Scope",
    "Skipped",
    "Unit",
    "UnitError",
    "UnknownHardwareError",
    "Workload",
    "__version__",
    "advise",
    "advise_all",
    "aggregate",
    "analyze",
    "hardware_to_json",
    "hardware_to_yaml",
    "load_catalogs",
    "read",
    "read_many",
    "register_format",
    "register_op",
]
