"""PyTorch profiler traces: Kineto ``export_chrome_trace`` JSON, plain or gzip (docs/formats.md).

One row per GPU activity: every ``"cat": "kernel"`` launch, and ``gpu_memcpy`` / ``gpu_memset`` events kept as
kernels with FLOPs 0 (a copy does no math) and the bytes the trace records (group ``memcpy`` / ``memset``).
Times are the events' ``dur`` (µs) × 1e-6 s. ``row`` is the launch's correlation id. The modules beside this
one read the events (:mod:`.kineto_events`), cost the ops (:mod:`.kineto_ops`), read CUPTI counters
(:mod:`.kineto_counters`), link kernels to ops (:mod:`.kineto_link`) and build the workload
(:mod:`.kineto_build`); this one sniffs and reads the input.

FLOPs and bytes come from the launching op's recorded input shapes (``record_shapes=True``). A kernel's
``args.correlation`` names its ``cuda_runtime`` / ``cuda_driver`` launch event; the launch lies inside (time
containment, same pid/tid) the innermost enclosing ``cpu_op``, whose formula (:mod:`.kineto_ops`) gives the op's
FLOPs and bytes, with the op's own dtypes (``c10::Half`` under autocast). Fallback: the kernel's ``External id``
(``external id`` in 2021's schema) = the op's. fp32 matmuls whose kernel name says TF32 (``tf32``, ``s1688``,
``s16816``) run as ``tf32``.

An op that launches several kernels (cuDNN layout transforms + the convolution, split-K GEMM + reduction) gives
its FLOPs and bytes to them in proportion to their durations (equal shares if all last 0 µs): sums over an op's
kernels equal the op's numbers and each kernel shows the op's intensity. Kernels without a formula, without
shapes, or whose launch is not found keep FLOPs and bytes **unknown (NaN), not zero**; a warning counts them
and says what to record (shapes, or CPU ops at all in a GPU-only trace).

Memory events: HtoD / DtoH copies move ``bytes`` over the ``pcie`` link and to/from HBM (``bytes_pcie`` =
``bytes_hbm`` = bytes; on a Grace Hopper / Blackwell superchip, GH200 / GB200, the ``c2c`` link); DtoD copies read and write device memory (``bytes_hbm`` = 2 × bytes, no link); PtoP and
unknown copies and memsets count ``bytes`` once at HBM; host-to-host copies touch no device memory (bytes
unknown). A copy whose event has no ``bytes`` has unknown bytes.

CUPTI range-profiler events (``cat: cuda_profiler_range``) carry per-kernel counters (:mod:`.kineto_counters`).
The n-th range of a kernel name is matched to the n-th kernel event of that name; a trace of ranges only (the
range profiler runs without kernel tracing) gives one row per range, linked to its op through the n-th kernel
launch as HolisticTraceAnalysis does.

The device: ``deviceProperties`` of the GPU the kernels ran on (its ``name`` as printed; NVIDIA: compute
capability ``computeMajor.computeMinor`` and ``sm_XY``; ROCm: ``gcnArchName`` where recorded — HIP's
``computeMajor/Minor`` are not an architecture; ``numSms`` as ``sm_count`` / ``cu_per_gpu``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .. import filemap, limits
from ..errors import InputError
from ..models import Workload
from . import check_binary, max_input_bytes, register_format
from .compression import gunzip_chunks
from .kineto_args import DTYPES, Result
from .kineto_build import CPU_OPS_HINT, FORMAT, SHAPES_HINT, build
from .kineto_counters import TENSOR_FLOPS_PER_INST, counter_point, name_precision
from .kineto_events import (
    CATS,
    EXPORT_HINT,
    K_CPUOP,
    K_KERNEL,
    K_MEMCPY,
    K_MEMSET,
    K_RANGE,
    K_RUNTIME,
    Scan,
    scan,
)
from .kineto_link import innermost
from .kineto_ops import OPS, op_cost

__all__ = ["CATS", "CPU_OPS_HINT", "DTYPES", "FORMAT", "K_CPUOP", "K_KERNEL", "K_MEMCPY", "K_MEMSET", "K_RANGE",
           "K_RUNTIME", "OPS", "SHAPES_HINT", "TENSOR_FLOPS_PER_INST", "Result", "counter_point", "innermost",
           "name_precision", "op_cost", "parse"]

GZIP_MAGIC = b"\x1f\x8b"
WINDOW = 1 << 22  # bytes of a plain input handed to the scanner at a time
#: read with the compiled decoder first (:mod:`.kineto_decode`); False: the stdlib scanner alone (tests compare)
DECODER = True


# --------------------------------------------------------------------------------------------- parse


#: rocprof's ``--hip-trace`` results.json is a Chrome trace too, but not Kineto's: its first event is ``{}`` and
#: every ``ts`` is a JSON string
_HIP_TRACE = re.compile(r'"traceEvents"\s*:\s*\[\s*\{\s*\}|"ts"\s*:\s*"\d')


def sniff(head: str, name: str) -> bool:
    """A JSON trace: an object with ``traceEvents``, or Chrome's bare event array (``[{"ph": ..., "cat": ...``),
    and not rocprof's hip-trace JSON."""
    start = head.lstrip()[:1]
    if start == "{":
        found = '"traceEvents"' in head
    else:
        found = start == "[" and bool(re.search(r'"ph"\s*:', head)) and bool(re.search(r'"cat"\s*:', head))
    return found and not _HIP_TRACE.search(head)


def byte_chunks(data: bytes, source: str, context: dict[str, Any]) -> Iterator[bytes | memoryview]:
    """The input as byte pieces: gzip decompressed as a stream (bounded), plain data as views of ``data`` (copies
    of a mapped file's pieces, its pages let go once read: :mod:`roofcore.filemap`)."""
    if data[:2] == GZIP_MAGIC:
        limit = int(context.get("max_bytes") or max_input_bytes())
        return gunzip_chunks(data, limit, source)
    _check_head(data, source)
    return filemap.pieces(data, WINDOW)


def _check_head(data: bytes, source: str) -> None:
    """Refuse binary files (magic bytes, NULs at the start) without copying the whole input."""
    head = data[:8192]
    if head.strip():
        check_binary(head, source)


@register_format(FORMAT, "PyTorch profiler trace (Kineto export_chrome_trace JSON, plain or .gz): GPU kernels, "
                 "FLOPs/bytes from recorded shapes or CUPTI counters", sniff, priority=20, gzip=True, mapped=True,
                 role="timeline")
def parse(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """One row per GPU kernel, memcpy and memset event (or CUPTI range); see the module docstring.

    ``context``: ``max_bytes`` bounds gzip decompression (default: the input limit);
    ``tensor_flops_per_inst`` replaces the ×512 tensor-instruction factor for CUPTI counters.
    """
    context = context or {}
    sc = _decoded(data, source, context) if DECODER else None
    try:
        if sc is None:  # the scanner: input the decoder does not read exactly (its messages are the reference)
            sc = scan(_checked_chunks(data, source, context), source, OPS)
    except RecursionError:
        raise InputError(where=source, text="the input is nested too deeply to read.", hint=EXPORT_HINT) from None
    limits.ROWS.check(sc.events, source, f"{sc.events:,} trace events")
    if not sc.seen_events:
        keys = ", ".join(list(sc.top)[:8]) or "none"
        raise InputError(where=f"{source}: $", expected='key "traceEvents"', found=f"keys {keys}",
                         hint="is this a PyTorch profiler trace? Export one with prof.export_chrome_trace(path).")
    return build(sc, source, context)


def _checked_chunks(data: bytes, source: str, context: dict[str, Any]) -> Iterator[bytes | memoryview]:
    """The input's pieces (:func:`_chunks`), a gzip's binary content refused on its first decompressed piece."""
    chunks = byte_chunks(data, source, context)
    if data[:2] == GZIP_MAGIC:
        first = next(chunks, b"")
        _check_head(bytes(first), source)  # gzip's pieces are bytes already
        chunks = _chain(first, chunks)
    return chunks


def _decoded(data: bytes, source: str, context: dict[str, Any]) -> Scan | None:
    """The events through the compiled decoder (:mod:`.kineto_decode`); None where the scanner must read them."""
    from .kineto_decode import Fallback
    from .kineto_decode import scan as decode

    gz = data[:2] == GZIP_MAGIC
    chunks = _checked_chunks(data, source, context) if gz else None
    if not gz:
        _check_head(data, source)
    try:
        return decode(data, chunks, source, OPS)
    except Fallback:
        return None


def _chain(first: bytes | memoryview, rest: Iterator[bytes | memoryview]) -> Iterator[bytes | memoryview]:
    yield first
    yield from rest
