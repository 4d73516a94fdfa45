"""roofcore: the roofline engine under the roofline report and planning app. Never imports Streamlit.

    >>> from roofcore import load_catalogs, read, analyze
    >>> cat = load_catalogs()
    >>> a = analyze(read("examples/transformer_block.yaml"), [cat.get("h100-sxm")])
    >>> a.summary("h100-sxm")["t_roof_s"]  # doctest: +SKIP
"""

__version__ = "0.1.0"

from .advise import RULES, Advice, Recommendation, advise_all  # advise(): roofcore.advise.advise
from .analyze import Analysis, analyze
from .catalog import Catalog, DeviceMatch, hardware_to_json, hardware_to_yaml, load_catalogs
from .errors import (
    CatalogError,
    InputError,
    LimitError,
    LocatedError,
    RoofcoreError,
    UnitError,
    UnknownHardwareError,
)
from .ingest import FORMATS, aggregate, read, read_many, register_format
from .models import (
    Ceiling,
    DeviceKind,
    Figure,
    Hardware,
    Kernel,
    Link,
    MemoryLevel,
    Precision,
    Scope,
    Skipped,
    Unit,
    Workload,
)
from .ops import OPS, register_op
from .roofline import FLAG_CODES, Flag

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
