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

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import limits
from ..errors import InputError, RoofcoreError
from ..models import KERNEL_COLUMNS, Skipped, Workload, canonical_level
from .compression import GZIP_MAGIC, gunzip_bounded, gunzip_chunks

Parser = Callable[..., "Workload | dict"]  # (data: bytes, name: str, context: Mapping | None) -> Workload
Sniffer = Callable[[str, str], bool]


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    parse: Parser
    sniff: Sniffer
    priority: int = 0  #: higher sniffs first (specific formats before generic CSV)
    companion: bool = False  #: context for other inputs (returns a dict), not a workload
    gzip: bool = False  #: the parser reads gzip data itself (streaming); others get it decompressed


FORMATS: dict[str, Format] = {}


def max_input_bytes() -> int:
    """The input size limit in bytes: ``ROOFCORE_MAX_INPUT_MB`` (default 512 MB; 0 = no limit)."""
    mb = limits.INPUT_MB.value()
    return int(mb * 1e6) if mb else 1 << 62


def register_format(name: str, description: str, sniff: Sniffer, *, priority: int = 0, companion: bool = False,
                    gzip: bool = False):
    """Decorator registering ``parse`` under ``name``; a duplicate name is an error."""

    def deco(parse: Parser) -> Parser:
        if name in FORMATS:
            raise ValueError(f"format {name!r} is already registered")
        FORMATS[name] = Format(name, description, parse, sniff, priority, companion, gzip)
        return parse

    return deco


def get_format(name: str) -> Format:
    if name in FORMATS:
        return FORMATS[name]
    close = difflib.get_close_matches(name, list(FORMATS), n=1)
    raise InputError(where="--format", expected="one of " + ", ".join(sorted(FORMATS)), found=repr(name),
                     hint=f"did you mean {close[0]!r}?" if close else "see `roofline formats`.")


_MAGIC = {b"\x89PNG": "a PNG image", b"%PDF": "a PDF document", b"PK\x03\x04": "a zip archive",
          b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image", b"\x1f\x8b": "gzip-compressed data",
          # rocprofv3's rocpd database (ROCm 7's default output) or an nsys .sqlite export: say what to export instead
          b"SQLite format 3\x00": "an SQLite database, e.g. rocprofv3's rocpd output: profile again with "
                                  "`rocprofv3 --output-format csv` (or json)"}


def check_binary(data: bytes, name: str) -> None:
    """Refuse empty and binary files with a clear message."""
    if not data or data.isspace():  # no copy of a large input
        raise InputError(where=name, expected="a workload file (CSV or YAML)", found="an empty file",
                         hint="export again, or check that the right file was chosen.")
    for magic, what in _MAGIC.items():
        if magic == GZIP_MAGIC:
            continue  # decompressed (bounded) before this check: see detect() and _parse()
        if data.startswith(magic):
            raise InputError(where=name, expected="a text workload file (CSV or YAML)", found=f"binary data ({what})",
                             hint="is this the right file? A renamed file keeps its content.")
    if b"\x00" in data[:8192]:
        raise InputError(where=name, expected="a text workload file (CSV or YAML)", found="binary data",
                         hint="is this the right file? A renamed file keeps its content.")


def decode_error(data: bytes, name: str, e: UnicodeDecodeError) -> InputError:
    return InputError(where=name, expected="UTF-8 text", found=f"byte 0x{data[e.start]:02x} at offset {e.start}",
                      hint="save the file as UTF-8.")


def check_text(data: bytes, name: str) -> str:
    """Decode ``data`` as UTF-8 text (BOM stripped, newlines normalised), refusing empty and binary files."""
    check_binary(data, name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise decode_error(data, name, e) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def detect(data: bytes, name: str, max_bytes: int | None = None) -> Format:
    """The registered format whose sniffer accepts this content (the file name is only a tie-breaker).

    Gzip data is sniffed on its first decompressed piece (bounded by the input limit)."""
    if data[:2] == GZIP_MAGIC:
        data = next(gunzip_chunks(data, max_bytes or max_input_bytes(), name), b"")
    check_binary(data, name)
    try:
        head = data[:65536].decode("utf-8-sig", errors="strict" if len(data) <= 65536 else "ignore")
    except UnicodeDecodeError as e:
        raise decode_error(data, name, e) from None
    head = head.replace("\r\n", "\n").replace("\r", "\n")
    for fmt in sorted(FORMATS.values(), key=lambda f: -f.priority):
        if fmt.sniff(head, name):
            return fmt
    raise InputError(where=name, expected="a known format: " + ", ".join(sorted(FORMATS)),
                     found="content none of them recognises",
                     hint="see `roofline formats`; force one with --format NAME.")


def _load(source: str | Path | bytes, name: str | None, max_bytes: int) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        data, label = source, name or "input"
    else:
        path = Path(source)
        from ..catalog import display_path

        label = name or display_path(path)
        try:
            size = path.stat().st_size
        except OSError as e:
            raise InputError(where=label, text=f"cannot read the file ({e.strerror}).") from None
        if size > max_bytes:
            raise _too_big(label, "the file", size, max_bytes)
        data = path.read_bytes()
    if len(data) > max_bytes:
        raise _too_big(label, "the input", len(data), max_bytes)
    return data, label


def _too_big(label: str, what: str, size: int, max_bytes: int) -> limits.LimitError:
    return limits.LimitError(f"{label}: {what} is {size / 1e6:,.1f} MB, above the input size limit of "
                             f"{max_bytes / 1e6:,.0f} MB ({limits.INPUT_MB.env}). {limits.INPUT_MB.hint()}")


def _parse(f: Format, data: bytes, label: str, context: dict | None, max_bytes: int | None = None
           ) -> Workload | dict:
    """One parser on one input, within the limits: size (gzip decompression bounded), rows, kernels, time."""
    max_bytes = max_bytes or max_input_bytes()
    limits.tick()
    if data[:2] == GZIP_MAGIC and not f.gzip:
        data = gunzip_bounded(data, max_bytes, label)
    if data[:2] != GZIP_MAGIC:  # a parser that streams gzip itself counts as it reads
        limits.check_rows(data, label)
    try:
        out = f.parse(data, label, {"max_bytes": max_bytes, **(context or {})})
    except RecursionError:
        raise InputError(where=label, text="the input is nested too deeply to read.") from None
    if isinstance(out, Workload):
        limits.KERNELS.check(len(out), label, f"{len(out):,} kernels read")
    limits.tick()
    return out


def read(source: str | Path | bytes, name: str | None = None, fmt: str | None = None, *,
         max_bytes: int | None = None, context: dict | None = None) -> Workload:
    """Read one workload from a path or bytes; ``fmt`` forces a format, else it is detected.

    Within :mod:`roofcore.limits`: ``max_bytes`` (default ``ROOFCORE_MAX_INPUT_MB``), rows, kernels, JSON
    depth and the parse time (``ROOFCORE_PARSE_TIMEOUT_S``)."""
    max_bytes = max_bytes or max_input_bytes()
    with limits.deadline(name or ("input" if isinstance(source, bytes) else str(source))):
        return _read(source, name, fmt, max_bytes, context)


def _read(source: str | Path | bytes, name: str | None, fmt: str | None, max_bytes: int, context: dict | None
          ) -> Workload:
    data, label = _load(source, name, max_bytes)
    f = get_format(fmt) if fmt else detect(data, label, max_bytes)
    if f.companion:
        hint = "load it together with the workload file it belongs to."
        measured = _parse(f, data, label, context, max_bytes).get("measured_hardware") or ()
        if measured:  # measured ceilings: also a device to analyse any workload against
            hint = (f"load it together with a workload (e.g. pmc_perf.csv), or use it as a device: `roofline analyze "
                    f"WORKLOAD --catalog {label} --hardware {measured[0].id}`.")
        raise InputError(where=label, text=f"this is {f.description[0].lower() + f.description[1:]}, not a workload.",
                         hint=hint)
    return _parse(f, data, label, context, max_bytes)


def read_many(sources: Iterable[str | Path | tuple[bytes, str]], fmt: str | None = None, *,
              max_bytes: int | None = None,
              on_error: Callable[[str, RoofcoreError], None] | None = None) -> Workload:
    """Read several inputs (paths, or ``(bytes, name)`` pairs) into one workload.

    Companion files (e.g. rocprof-compute ``sysinfo.csv``) become context for the others; a time-only
    profile (``nsys``) is joined by kernel name to the inventories read with it. With ``on_error``, a file
    that cannot be read is reported to it (``on_error(name, error)``) and left out instead of failing the
    whole read (the app keeps the good files of an upload). Within the limits of :func:`read`; the parse
    time counts for all the files together.
    """
    sources = list(sources)
    max_bytes = max_bytes or max_input_bytes()
    what = ", ".join(s[1] if isinstance(s, tuple) else Path(s).name for s in sources[:3]) + (
        f" and {len(sources) - 3} more" if len(sources) > 3 else "")
    with limits.deadline(what or "the inputs"):
        w = _read_many(sources, fmt, max_bytes, on_error)
    limits.KERNELS.check(len(w), what, f"{len(w):,} kernels read from these files")
    return w


def _read_many(sources: list, fmt: str | None, max_bytes: int,
               on_error: Callable[[str, RoofcoreError], None] | None) -> Workload:
    loaded = []
    for s in sources:
        label = s[1] if isinstance(s, tuple) else str(s)
        try:
            data, label = _load(s[0], s[1], max_bytes) if isinstance(s, tuple) else _load(s, None, max_bytes)
            loaded.append((data, label, get_format(fmt) if fmt else detect(data, label, max_bytes)))
        except RoofcoreError as e:
            if on_error is None:
                raise
            on_error(label, e)
    context: dict = {}
    measured: list = []  # measured ceilings (roofline.csv, ERT roofline.json): devices that go with the workload
    for data, label, f in loaded:
        if f.companion:
            out = dict(_parse(f, data, label, context, max_bytes))
            measured.extend(out.pop("measured_hardware", ()))
            context.update(out)
    workloads = []
    for data, label, f in loaded:
        if f.companion:
            continue
        try:
            workloads.append(_parse(f, data, label, context, max_bytes))
        except RoofcoreError as e:
            if on_error is None:
                raise
            on_error(label, e)
    if not workloads and len(loaded) == 1 and (on_error is None or loaded[0][2].companion):
        data, label, f = loaded[0]
        return _read(data, label, f.name, max_bytes, None)  # that format's own message (what it is, how to use it)
    if not workloads and loaded and all(f.companion for _, _, f in loaded):
        raise InputError(where=", ".join(label for _, label, _ in loaded), text="only companion files were given, "
                         "no workload.", hint="add the profile they belong to (e.g. pmc_perf.csv next to sysinfo.csv).")
    if not workloads:
        names = ", ".join(label for _, label, _ in loaded) or "the inputs"
        raise InputError(where=names, text="no workload could be read from these files.",
                         hint="companion files (sysinfo.csv, roofline.csv) need the profile they belong to "
                              "(e.g. pmc_perf.csv); see the messages above for the others.")
    from .rocprof import reconcile

    workloads = reconcile(workloads)  # the files of one rocprof run: joined, never counted twice
    timing = [w for w in workloads if w.meta.get("time_only") == "true"]
    models = [w for w in workloads if w.meta.get("time_only") != "true"]
    if timing and models:
        from .nsys import join_times

        model = combine(models)
        out = combine([join_times(t, model) for t in timing])
    else:
        out = combine(workloads)
    if measured:
        from dataclasses import replace

        out = replace(out, measured=tuple({h.id: h for h in (*out.measured, *measured)}.values()))
    return out


def combine(workloads: list[Workload], name: str | None = None) -> Workload:
    if len(workloads) == 1 and name is None:
        return workloads[0]
    frame = pd.concat([w.frame for w in workloads], ignore_index=True, sort=False)
    return Workload(
        frame=frame,
        name=name or " + ".join(w.name for w in workloads),
        sources=tuple(s for w in workloads for s in w.sources),
        formats=tuple(dict.fromkeys(f for w in workloads for f in w.formats)),
        skipped=tuple(s for w in workloads for s in w.skipped),
        warnings=tuple(x for w in workloads for x in w.warnings),
        device=next((w.device for w in workloads if w.device), None),
        meta={k: v for w in workloads for k, v in w.meta.items()},
        measured=tuple({h.id: h for w in workloads for h in w.measured}.values()),
    )


def make_frame(columns: dict[str, object], n: int) -> pd.DataFrame:
    """A workload frame with every standard column, right dtypes, and canonical ``bytes_<name>`` columns."""
    out: dict[str, object] = {}
    for key in KERNEL_COLUMNS:
        if key in columns and isinstance(columns[key], pd.Categorical):
            out[key] = columns[key]  # precision / unit from a large CSV: a closed set, kept compact
        elif key in columns and key in ("name", "precision", "unit", "group", "source", "row"):
            # object dtype keeps None as None (pandas 3 would infer a str dtype with NaN)
            out[key] = pd.Series(np.asarray(columns[key], dtype=object), dtype=object)
        elif key in columns:
            out[key] = columns[key]
        elif key in ("flops", "time_s"):
            out[key] = np.full(n, np.nan)
        elif key == "count":
            out[key] = np.ones(n, dtype=np.int64)
        else:
            out[key] = pd.Series([None] * n, dtype=object)
    for key, value in columns.items():
        if key not in out and not key.startswith("bytes"):  # e.g. match, launch, weight_bytes
            arr = np.asarray(value)
            out[key] = (arr.astype(np.float64) if arr.dtype.kind in "biuf"
                        else pd.Series(np.asarray(value, dtype=object), dtype=object))
        if key.startswith("bytes"):
            level = canonical_level(key[len("bytes_"):] if key.startswith("bytes_") else "")
            col = f"bytes_{level}"
            if col in out:
                raise InputError(text=f"two columns give the same bytes: {key!r} and another name of {col!r}.",
                                 hint="bytes, bytes_hbm and bytes_dram all mean off-chip bytes; keep one.")
            out[col] = np.asarray(value, dtype=np.float64)
    frame = pd.DataFrame(out)
    frame["flops"] = frame["flops"].astype(np.float64)
    frame["time_s"] = frame["time_s"].astype(np.float64)
    frame["count"] = frame["count"].astype(np.int64)
    return frame


def aggregate(workload: Workload, by: tuple[str, ...] = ("name", "precision", "unit", "group")) -> Workload:
    """Launches of the same kernel summed into one row: FLOPs, bytes and time added, launches counted.

    A sum over launches is NaN only when every launch's value is unknown.
    """
    f = workload.frame
    if f.empty:
        return workload
    keys = [k for k in by if k in f.columns]
    # every byte count adds up over launches, the plan's read/written/weight split too (roofcore.plan.SPLIT)
    extra = [c for c in f.columns if c.endswith("_bytes") and not c.startswith("bytes_") and f[c].dtype.kind == "f"]
    sums = ["count", "flops", "time_s", *workload.byte_columns, *extra]
    g = f.groupby([f[k].astype(object).fillna("") for k in keys], sort=False, dropna=False)
    agg = g[sums].sum(min_count=1)
    first = g[[*keys, "source", "row"]].first() if "source" in f.columns else g[keys].first()
    out = pd.concat([first.reset_index(drop=True), agg.reset_index(drop=True)], axis=1)
    for k in keys:
        out[k] = out[k].replace("", None)
    out["row"] = g.size().astype(str).radd("launches: ").to_numpy() if len(out) else out["row"]
    out["count"] = out["count"].fillna(0).astype(np.int64)
    out = out[[c for c in f.columns if c in out.columns]]
    from dataclasses import replace

    return replace(workload, frame=out)


def skip(source: str, row: object, reason: str) -> Skipped:
    return Skipped(source=source, row=str(row), reason=reason)


# built-in formats register themselves on import
from . import (  # noqa: E402,F401
    ceilings,
    inventory,
    kineto,
    ncu,
    nsys,
    nvprof,
    rocprof,
    rocprof_compute,
    rocprof_v1,
    rocprof_v2,
    rocprofv3,
    xla,
)
