"""Reading workloads: a registry of input formats, detection from content, and aggregation.

A format is registered with :func:`register_format` (a dict plus a decorator, like Altair's plugin
registries): a name, a one-line description, a ``sniff(head_text, filename) -> bool`` and a
``parse(data, filename, context) -> Workload``. Built-in formats register through the same door when
this package is imported. ``read`` detects the format from the content unless ``fmt`` is given.

A *companion* format (``companion=True``) is not a workload but context for the other files read with
it (rocprof-compute's ``sysinfo.csv`` gives the GPU architecture): its parser returns a dict, which
:func:`read_many` merges and passes to every other parser as ``context``.
"""

from __future__ import annotations

# the names this module offered before it was split (ingest.Workload, ingest.InputError, ...)
from ..errors import InputError, RoofcoreError
from ..models import KERNEL_COLUMNS, Skipped, Workload, canonical_level
from .frames import COUNT_LIMIT, aggregate, combine, make_frame, rank_of, skip, with_rank
from .reading import PARALLEL_MIN_BYTES, read, read_file, read_many
from .registry import (
    FORMATS,
    Format,
    Parser,
    Sniffer,
    check_binary,
    check_text,
    decode_error,
    detect,
    get_format,
    max_input_bytes,
    register_format,
)

# built-in formats register themselves on import (after the registry above)
# isort: split
from . import (  # noqa: F401
    api_traces,
    ceilings,
    inventory,
    kineto,
    ncu,
    nsys,
    nsys_sqlite,
    nsys_trace,
    nvprof,
    nvtx_ranges,
    rocpd,
    rocprof,
    rocprof_compute,
    rocprof_v1,
    rocprof_v2,
    rocprofv3,
    roctx,
    xla,
    xprof,
)

__all__ = ["COUNT_LIMIT", "FORMATS", "KERNEL_COLUMNS", "PARALLEL_MIN_BYTES", "Format", "InputError", "Parser",
           "RoofcoreError", "Skipped", "Sniffer", "Workload", "aggregate", "canonical_level", "check_binary",
           "check_text", "combine", "decode_error", "detect", "get_format", "make_frame", "max_input_bytes", "rank_of",
           "read", "read_file", "read_many", "register_format", "skip", "with_rank"]
