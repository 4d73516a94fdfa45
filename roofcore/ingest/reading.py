"""Reading inputs: one file or bytes (:func:`read`), several files and folders (:func:`read_many`), in worker
processes where that pays (:func:`read_file`), all within :mod:`roofcore.limits`."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import filemap, gcpause, limits, settings
from ..errors import InputError, LimitError, RoofcoreError
from ..measured import merge_measured
from ..models import Hardware, Workload
from .arch import infer as infer_arch
from .archive import Failed, is_archive, members, unread_note, what
from .compression import GZIP_MAGIC, gunzip_bounded, kind, unpacked
from .dialect import canonical, is_json, spreadsheet_cut
from .frames import combine, with_rank
from .pool import plain_main, process_pool
from .pseudo import split_runtime
from .registry import Format, detect, get_format, max_input_bytes
from .totals import drop_totals

#: one input of several: a path (file or folder) or uploaded ``(bytes, name)``
_Source = str | Path | tuple[bytes, str]


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
    return unpacked(data, max_bytes, label), label  # bzip2, xz, Zstandard undone (gzip: where it is parsed)


def _too_big(label: str, what: str, size: int, max_bytes: int) -> LimitError:
    return LimitError(f"{label}: {what} is {size / 1e6:,.1f} MB, above the input size limit of "
                             f"{max_bytes / 1e6:,.0f} MB ({limits.INPUT_MB.env}). {limits.INPUT_MB.hint()}")


def _parse(f: Format, data: bytes, label: str, context: dict[str, Any] | None, max_bytes: int | None = None
           ) -> Workload | dict[str, Any]:
    """One parser on one input, within the limits: size (gzip decompression bounded), rows, kernels, time."""
    max_bytes = max_bytes or max_input_bytes()
    limits.tick()
    if data[:2] == GZIP_MAGIC and not f.gzip:
        data = gunzip_bounded(data, max_bytes, label)
    notes: tuple[str, ...] = ()
    cut = None
    if data[:2] != GZIP_MAGIC and not f.magic:  # a parser that streams gzip itself counts as it reads; binary: none
        data, notes = canonical(data, label)  # a spreadsheet's or shell's re-save (.dialect)
        if not is_json(data):  # lines of a table; JSON's readers bound their events (a trace: ROOFCORE_MAX_ROWS)
            cut = spreadsheet_cut(data, limits.check_rows(data, label))  # one count of the lines for both
    try:
        out = f.parse(data, label, {"max_bytes": max_bytes, **(context or {})})
    except RecursionError:
        raise InputError(where=label, text="the input is nested too deeply to read.") from None
    if isinstance(out, Workload):
        if notes:  # what the re-save's conversion read differently: decimal commas, a legacy code page
            out = replace(out, warnings=(*out.warnings, *(f"{label}: {n}." for n in notes)))
        if cut:
            out = replace(out, warnings=(*out.warnings, f"{label}: the file has exactly {cut:,} lines, a spreadsheet's "
                                         "row limit: it was most likely cut there when a spreadsheet saved it, and "
                                         "what followed is missing. Use the file as the profiler wrote it."))
        out = drop_totals(out, label)  # a spreadsheet's "Total" row is no kernel (.totals), whatever the format
        out = split_runtime(out)  # queue packets and API rows are not kernels (.pseudo), whatever the format
        out = infer_arch(out, data)  # the GPU from names, program output, rates (.arch), whatever the format
        limits.KERNELS.check(len(out), label, f"{len(out):,} kernels read")
    limits.tick()
    return out


def _workload(out: Workload | dict[str, Any]) -> Workload:
    """A workload format's parse (only a companion format's parser returns a dict)."""
    assert isinstance(out, Workload), "a workload format's parser returns a Workload"
    return out


def _companion(out: Workload | dict[str, Any]) -> dict[str, Any]:
    """A companion format's parse: context for the other inputs (:attr:`Format.companion`)."""
    assert isinstance(out, dict), "a companion format's parser returns a dict"
    return out


def read(source: str | Path | bytes, name: str | None = None, fmt: str | None = None, *,
         max_bytes: int | None = None, context: dict[str, Any] | None = None) -> Workload:
    """Read one workload from a path or bytes; ``fmt`` forces a format, else it is detected.

    Within :mod:`roofcore.limits`: ``max_bytes`` (default ``ROOFCORE_MAX_INPUT_MB``), rows, kernels, JSON
    depth and the parse time (``ROOFCORE_PARSE_TIMEOUT_S``). A path of :data:`~roofcore.filemap.MAP_MIN_BYTES` or
    more is detected on its head and, where its format reads one (``Format.mapped``), parsed from a memory map
    instead of a copy (:mod:`roofcore.filemap`)."""
    max_bytes = max_bytes or max_input_bytes()
    with limits.deadline(name or ("input" if isinstance(source, bytes) else str(source))), gcpause.paused():
        return _read(source, name, fmt, max_bytes, context)


def _read(source: str | Path | bytes, name: str | None, fmt: str | None, max_bytes: int,
          context: dict[str, Any] | None) -> Workload:
    src: _Source
    if isinstance(source, bytes):
        data, label = _load(source, name, max_bytes)
        whole, size, src = True, len(data), (data, label)
    else:  # a large file: its format detected on its head, then read whole or mapped (_opened)
        data, label, size, whole = _head(source, max_bytes, name, filemap.MAP_MIN_BYTES)
        src = source
    if is_archive(data):  # the folder it holds
        return read_many([(data, label) if whole else src], fmt, max_bytes=max_bytes)
    f = get_format(fmt) if fmt else detect(data, label, max_bytes)
    with _opened(_Input(src, label, f, data if whole else None, size), max_bytes) as data:
        if f.companion:
            hint = "load it together with the workload file it belongs to."
            parsed = _companion(_parse(f, data, label, context, max_bytes))
            measured = merge_measured(parsed.get("measured_hardware") or ())
            if measured:  # measured ceilings: also a device to analyse any workload against
                hint = (f"load it together with a workload (e.g. pmc_perf.csv), or use it as a device: `roofline "
                        f"analyze WORKLOAD --catalog {label} --hardware {measured[0].id}`.")
            raise InputError(where=label, text=f"this is {f.description[0].lower() + f.description[1:]}, not a "
                             "workload.", hint=hint)
        return _workload(_parse(f, data, label, context, max_bytes))


def read_many(sources: Iterable[_Source], fmt: str | None = None, *,
              max_bytes: int | None = None,
              on_error: Callable[[str, RoofcoreError], None] | None = None,
              workers: int | None = None, executor: Executor | None = None,
              pairs: Mapping[str, str] | None = None, together: bool = False) -> Workload:
    """Read several inputs (paths, folders, or ``(bytes, name)`` pairs) into one workload.

    Companion files (e.g. rocprof-compute ``sysinfo.csv``) become context for the others; a time-only
    profile (``nsys``) is joined by kernel name to the inventories read with it. With ``on_error``, a file
    that cannot be read is reported to it (``on_error(name, error)``) and left out instead of failing the
    whole read (the app keeps the good files of an upload). Within the limits of :func:`read`; the parse
    time counts for all the files together.

    A folder stands for the files in it, e.g. a job's per-rank traces: in name order (numbers counted, so rank10
    follows rank9), hidden files skipped, and a file that no format recognises left out with a warning (a file
    named on its own is refused instead). Files given by path and together larger than
    :data:`PARALLEL_MIN_BYTES` are parsed in parallel, one process per core (``workers``, else
    ``ROOFCORE_WORKERS``: how many; 1 reads them one after the other), or by ``executor``, any
    :class:`concurrent.futures.Executor` (a Dask cluster's ``client.get_executor()`` spreads a fleet of traces
    over its machines): each runs :func:`read_file`. Every row keeps its file in ``source`` and, where the file
    name (``rank3``, ``rank_03``) or the trace (``distributedInfo``) says, its ``rank``.

    A timeline (Nsight Systems, rocprof ``--stats`` or kernel trace, a PyTorch trace without shapes) read with a
    counter export of some launches (Nsight Compute, rocprof counters, rocprof-compute) becomes one workload: the
    timeline's times and launch counts, with FLOPs and bytes per launch from the sampled launches of the same kernel,
    matched by a name normalised across tools (:mod:`roofcore.ingest.join`). ``pairs`` (timeline kernel name →
    counter kernel name) fixes pairs by hand where the names do not match.

    A host API trace (``<pid>_hip_api_trace.csv``) among several sources is one of the run's files: left out with a
    note and used for ROCTx ranges, as in a folder; named on its own it is refused (with what to export instead).
    ``together``: the sources are one upload (the app's), which the notes name ("of the upload").
    """
    max_bytes = max_bytes or max_input_bytes()
    sources = list(sources)
    with limits.deadline(", ".join(s[1] if isinstance(s, tuple) else Path(s).name for s in sources[:3])
                         or "the inputs"):  # a zip archive inflates here
        items, failed = _expand_folders(sources, max_bytes)
    if not items and failed:  # nothing but damaged archives: the first one's own message
        raise failed[0][0]
    names = [s[1] if isinstance(s, tuple) else Path(s).name for s, _ in items]
    what = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    with limits.deadline(what or "the inputs"), gcpause.paused():
        w = _read_many(items, fmt, max_bytes, on_error, workers, executor, pairs, failed, together)
    limits.KERNELS.check(len(w), what, f"{len(w):,} kernels read from these files")
    return w


#: files given by path and together at least this large are parsed in parallel (below it, starting worker
#: processes costs more than it saves)
PARALLEL_MIN_BYTES = 32_000_000
_HEAD = 1 << 20  #: bytes read to detect the format of one of several files (the rest is read when it is parsed)


@dataclass
class _Input:
    source: _Source
    label: str
    fmt: Format
    data: bytes | None  #: None: a large file of several, read when it is parsed
    size: int


def _natural(p: Path) -> list[int | str]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", p.name)]


#: where an input of several came from: (the folder's or archive's name, "folder", "zip archive" or "tar archive")
_Within = tuple[str, str] | None


def _expand_folders(sources: list[_Source], max_bytes: int) -> tuple[list[tuple[_Source, _Within]], Failed]:
    """``(source, the folder or archive it came from)`` for every input (None: named on its own), a folder's
    files and an archive's (:mod:`.archive`) in its place; and what was left out unread: a damaged archive in a
    folder or in another archive, an archive's damaged or encrypted member (an archive named on its own with
    nothing readable is an error)."""
    from ..catalog import display_path

    failed: Failed = []

    def unpacked_archive(s: _Source, within: _Within = None) -> list[tuple[_Source, _Within]]:
        data, label = _load(s[0], s[1], max_bytes) if isinstance(s, tuple) else _load(s, None, max_bytes)
        holder = (label, what(data))
        inner: list[InputError] = []
        try:
            found = members(data, label, max_bytes, failed=inner)
        except InputError as e:
            if within is None:
                raise
            failed.append((e, within[1]))  # a damaged archive in a folder: left out, said
            return []
        failed.extend((e, holder[1]) for e in inner)
        return [(m, holder) for m in found]

    out: list[tuple[_Source, _Within]] = []
    for s in sources:
        if isinstance(s, tuple) or not Path(s).is_dir():
            out += unpacked_archive(s) if _archived(s) else [(s, None)]
            continue
        files = sorted((p for p in Path(s).iterdir() if p.is_file() and not p.name.startswith(".")), key=_natural)
        if not files:
            raise InputError(where=display_path(s), text="the folder holds no files to read.",
                             hint="point at the folder of the traces themselves, or name the files.")
        folder = (display_path(s), "folder")
        for p in files:  # an archive in the folder: its files, as the folder's
            out += unpacked_archive(p, folder) if _archived(p) else [(p, folder)]
    return out, failed


def _archived(s: _Source) -> bool:
    """Whether an input is an archive (by its first bytes, whatever its name)."""
    if isinstance(s, tuple):
        return is_archive(s[0])
    try:
        with Path(s).open("rb") as fh:
            head = fh.read(512)
            return is_archive(head + fh.read(_HEAD) if kind(head) else head)  # compressed: a tar inside?
    except OSError:
        return False  # read as a file: its own message


def _head(path: str | Path, max_bytes: int, name: str | None = None, small: int = _HEAD
          ) -> tuple[bytes, str, int, bool]:
    """``(head or whole file, label, size, whole)``: the first :data:`_HEAD` bytes of a file larger than
    ``small`` (enough to detect its format), the whole of a smaller or gzip-compressed one, or of one whose head
    is blank (detection would call it empty)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size <= small:
            data, label = _load(p, name, max_bytes)
            return data, label, size, True
        with p.open("rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        data, label = _load(p, name, max_bytes)  # its own message: cannot read the file
        return data, label, len(data), True
    if kind(head) is not None or size > max_bytes or head.isspace():
        data, label = _load(p, name, max_bytes)  # decompressed (gzip: sniffed on its first piece) / refused for its size
        return data, label, size, True
    from ..catalog import display_path

    return head, name or display_path(p), size, False


def _read_many(items: list[tuple[_Source, _Within]], fmt: str | None, max_bytes: int,
               on_error: Callable[[str, RoofcoreError], None] | None, workers: int | None,
               executor: Executor | None, pairs: Mapping[str, str] | None = None, failed: Failed | None = None,
               together: bool = False) -> Workload:
    inputs, api, left, left_from = _detected(items, fmt, max_bytes, on_error, together)
    context, measured = _context(inputs, api, max_bytes)
    left_out = [f"{label} ({why})" for label, why in left]
    jobs = [i for i in inputs if not i.fmt.companion]
    workloads = []
    for i, got in zip(jobs, _parse_all(jobs, context, max_bytes, workers, executor), strict=True):
        if isinstance(got, RoofcoreError):
            if on_error is None:
                raise got
            on_error(i.label, got)
        else:
            workloads.append(got)
    loaded = [(i.data, i.label, i.fmt) for i in inputs]
    if not workloads and len(loaded) == 1 and (on_error is None or loaded[0][2].companion):
        # that format's own message (what it is, how to use it)
        return _read(_data(inputs[0], max_bytes), inputs[0].label, inputs[0].fmt.name, max_bytes, None)
    if not workloads and loaded and all(f.companion for _, _, f in loaded):
        raise InputError(where=", ".join(label for _, label, _ in loaded), text="only companion files were given, "
                         "no workload.", hint="add the profile they belong to (e.g. pmc_perf.csv next to sysinfo.csv).")
    holder = " or ".join(sorted(left_from))
    if not workloads and not loaded and left_out:  # folders of READMEs and logs: say so, and what they hold
        from .api_traces import V3_KERNELS  # (a reader's module: imported once the registry is)
        folders = ", ".join(sorted({w[0] for _, w in items if w})) or f"the {'uploaded' if together else 'named'} files"
        owner = f"{holder}'" if holder.endswith("s") else f"{holder}'s"
        raise InputError(where=folders, text=f"no profile among the {owner} files: {'; '.join(left_out[:3])}"
                         + (f" and {len(left_out) - 3} more." if len(left_out) > 3 else "."),
                         hint="point at the folder of the profiles themselves, or name the files."
                         if not left_from <= {"upload", "inputs"} else V3_KERNELS + " with them.")  # API traces only
    if not workloads:
        names = ", ".join(label for _, label, _ in loaded) or "the inputs"
        raise InputError(where=names, text="no workload could be read from these files.",
                         hint="companion files (sysinfo.csv, roofline.csv) need the profile they belong to "
                              "(e.g. pmc_perf.csv); see the messages above for the others.")
    out = _joined(workloads, pairs)
    if measured:
        out = replace(out, measured=merge_measured((*out.measured, *measured)))  # one device per GPU model
    left_out = [f"{label} ({why})" for label, why in left if label not in out.sources]  # API traces that placed kernels
    if left_out:
        out = replace(out, warnings=(*out.warnings, f"Left out {len(left_out)} file(s) of the {holder} that are not "
                                     "profiles: " + "; ".join(left_out[:5])
                                     + (f" and {len(left_out) - 5} more." if len(left_out) > 5 else ".")))
    if failed:  # damaged archives or members among readable files: the rest is read, these are said
        out = replace(out, warnings=(*out.warnings, unread_note(failed)))
    return out


def _detected(items: list[tuple[_Source, _Within]], fmt: str | None, max_bytes: int,
              on_error: Callable[[str, RoofcoreError], None] | None, together: bool
              ) -> tuple[list[_Input], list[_Input], list[tuple[str, str]], set[str]]:
    """The inputs with their formats; the host API traces of a folder (or of files uploaded ``together``), left out
    but kept for the launch calls ROCTx ranges may use; what a folder held that is not a profile, with why; and
    what held those (folder, zip archive, tar archive, upload). A file named on its own that cannot be read goes to
    ``on_error`` (else raises)."""
    from ..catalog import display_path

    inputs: list[_Input] = []
    api: list[_Input] = []
    left: list[tuple[str, str]] = []
    left_from: set[str] = set()
    for s, within in items:
        label = s[1] if isinstance(s, tuple) else display_path(s)
        try:
            if isinstance(s, tuple):
                data, label = _load(s[0], s[1], max_bytes)
                whole, size = True, len(data)
            else:  # one file: read whole unless it is large enough to map
                data, label, size, whole = _head(s, max_bytes, small=_HEAD if len(items) > 1 else filemap.MAP_MIN_BYTES)
            f = get_format(fmt) if fmt else detect(data, label, max_bytes)
            if not fmt and f.name == "host-api-trace" and (within or len(items) > 1):
                within = within or (("the uploaded files", "upload") if together else ("the named files", "inputs"))
                api.append(_Input(s, label, f, data if whole else None, size))  # its calls: for ROCTx ranges
                _parse(f, data, label, None, max_bytes)
            inputs.append(_Input(s, label, f, data if whole else None, size))
        except InputError as e:
            if within is not None and not fmt:  # a folder's README, log or binary report: not a profile
                left.append((label, e.found or e.text or "not readable"))
                left_from.add(within[1])
                continue
            if on_error is None:
                raise
            on_error(label, e)
        except RoofcoreError as e:
            if on_error is None:
                raise
            on_error(label, e)
    return inputs, api, left, left_from


def _context(inputs: list[_Input], api: list[_Input], max_bytes: int) -> tuple[dict[str, Any], list[Hardware]]:
    """The context the companion files give the workloads, with the launch calls of a folder's API traces where
    ROCTx ranges use them (:func:`.roctx.launch_calls`), and the measured devices (roofline.csv, ERT
    roofline.json) that go with the workload."""
    from .roctx import launch_calls  # (a reader's module: imported once the registry is)

    context: dict[str, Any] = {}
    measured: list[Hardware] = []
    for i in inputs:
        if i.fmt.companion:
            ctx = dict(_companion(_parse(i.fmt, _data(i, max_bytes), i.label, context, max_bytes)))
            measured.extend(ctx.pop("measured_hardware", ()))
            context.update(ctx)
    context.update(launch_calls(context, [(functools.partial(_data, i, max_bytes), i.label) for i in api]))
    return context, measured


def _joined(workloads: list[Workload], pairs: Mapping[str, str] | None) -> Workload:
    """The files' workloads as one: a rocprof run's files reconciled, Nsight Compute exports of the same launches
    merged, a timeline joined with counters of some launches, a time-only profile with an inventory."""
    from .join import join_inputs
    from .ncu_merge import merge_launches
    from .rocprof import reconcile

    workloads = reconcile(workloads)  # the files of one rocprof run: joined, never counted twice
    workloads = merge_launches(workloads)  # ncu exports of the same launches: one launch each, never two
    workloads = join_inputs(workloads, pairs)  # a timeline + counters of some launches: one workload (.join)
    timing = [w for w in workloads if w.meta.get("time_only") == "true"]
    models = [w for w in workloads if w.meta.get("time_only") != "true"]
    if timing and models:
        from .nsys import join_times

        model = combine(models)
        return combine([join_times(t, model) for t in timing])
    return combine(workloads)


def _data(i: _Input, max_bytes: int) -> bytes:
    if i.data is not None:
        return i.data
    assert not isinstance(i.source, tuple), "uploaded bytes are kept until they are parsed"
    return _load(i.source, i.label, max_bytes)[0]


@contextlib.contextmanager
def _opened(i: _Input, max_bytes: int) -> Iterator[bytes]:
    """The input's data for its parse: a read-only map of a large file whose format reads one (closed after the
    parse; :mod:`roofcore.filemap`), else its bytes."""
    if i.data is None and i.fmt.mapped and i.size >= filemap.MAP_MIN_BYTES and not isinstance(i.source, tuple):
        with filemap.mapped(i.source) as m:
            if m is not None and len(m) <= max_bytes and m[:2] != GZIP_MAGIC:  # else: changed since; read it
                yield m  # type: ignore[misc]  # the parsers read a map as bytes (len, slices, find: filemap)
                return
    yield _data(i, max_bytes)


def _parse_all(jobs: list[_Input], context: dict[str, Any], max_bytes: int, workers: int | None,
               executor: Executor | None) -> list[Workload | RoofcoreError]:
    """Each job's workload (with its rank), or the error that refused it: in worker processes where that pays
    (several files read from disk, together large), else here one after the other, each file's bytes let go once
    it is read."""
    on_disk = [i for i in jobs if not isinstance(i.source, tuple)]
    cpus = workers or settings.cores()
    if executor is None and (cpus < 2 or len(on_disk) < 2 or sum(i.size for i in on_disk) < PARALLEL_MIN_BYTES):
        out: list[Workload | RoofcoreError] = []
        for i in jobs:
            try:
                with _opened(i, max_bytes) as data:
                    out.append(with_rank(_workload(_parse(i.fmt, data, i.label, context, max_bytes)), i.label))
            except RoofcoreError as e:
                out.append(e)
            i.data = None
        return out
    left = _time_left()
    pool = executor or process_pool(min(cpus, len(on_disk)))
    try:
        with plain_main():  # fresh workers start within submit
            futures = {id(i): pool.submit(read_file, i.source, i.fmt.name, max_bytes=max_bytes,
                                          context=context or None, timeout_s=left) for i in on_disk}
        out = []
        for i in jobs:
            try:
                if id(i) in futures:
                    out.append(futures[id(i)].result())
                else:  # uploaded bytes: read here while the workers read the files
                    parsed = _workload(_parse(i.fmt, _data(i, max_bytes), i.label, context, max_bytes))
                    out.append(with_rank(parsed, i.label))
            except RoofcoreError as e:
                out.append(e)
        return out
    finally:
        if executor is None:
            pool.shutdown(cancel_futures=True)


def _time_left() -> float | None:
    """Seconds left of the parse time limit in force here (None: no limit), for the workers to keep to."""
    import time

    d = limits.DEADLINE.get()
    return None if d is None else max(d[0] - time.monotonic(), 0.001)


def read_file(source: _Source, fmt: str | None = None, *, max_bytes: int | None = None,
              context: dict[str, Any] | None = None, timeout_s: float | None = None) -> Workload:
    """One file's workload, with its ``rank`` where the file name or the trace says (:func:`with_rank`).

    A plain top-level function of picklable arguments: :func:`read_many` maps it over worker processes, and a
    Dask cluster can map it over a fleet of traces (``client.map(read_file, paths)``, then :func:`combine`).
    ``timeout_s`` bounds this read (the rest of a caller's parse time limit)."""
    label = source[1] if isinstance(source, tuple) else str(source)
    with gcpause.paused():
        if timeout_s is None:
            return _read_with_rank(source, fmt, max_bytes, context)
        with limits.deadline(label, timeout_s):
            return _read_with_rank(source, fmt, max_bytes, context)


def _read_with_rank(source: _Source, fmt: str | None, max_bytes: int | None, context: dict[str, Any] | None
                    ) -> Workload:
    if isinstance(source, tuple):
        w = read(source[0], source[1], fmt, max_bytes=max_bytes, context=context)
    else:
        w = read(source, None, fmt, max_bytes=max_bytes, context=context)
    return with_rank(w, w.name)
