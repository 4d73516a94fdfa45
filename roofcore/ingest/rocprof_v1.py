"""rocprof (v1) exports (docs/formats.md): ``results.csv``, ``--stats`` and ``--hip-trace`` JSON.

- ``rocprof-v1``: ``results.csv`` (``Index,KernelName,gpu-id,…``, times ``BeginNs``/``EndNs``; also rocprofv2's
  file-plugin v1) and rocprof-compute's per-pass files (``Dispatch_ID,Kernel_Name,GPU_ID,queue-id,…``): one row per
  dispatch, counters and times as in :mod:`.rocprof_common`. A row whose ``EndNs`` is before its ``BeginNs`` (a
  clock glitch seen in real files) keeps its other numbers with its time unknown, named in a warning.
- ``rocprof-v1-stats``: ``results.stats.csv`` (``"Name","Calls","TotalDurationNs","AverageNs","Percentage"``; also
  rocprofv3's ``kernel_stats.csv``): one time-only row per kernel name, ``count`` = Calls, time = TotalDurationNs.
  The HIP API and copy summaries written beside it (``hip_stats.csv``, ``copy_stats.csv``) have the same header
  and are refused: they hold no kernels.
- ``rocprof-v1-hiptrace``: ``results.json`` of ``--hip-trace``, a Chrome trace that is not Kineto: the first event
  is ``{}``, ``ts``/``dur``/``pid``/``tid`` are JSON strings, lanes are named by ``process_name`` metadata
  (``GPU0``…, ``COPY``, ``CPU HIP API``). Kernels (GPU lanes): time from ``args.BeginNs``/``EndNs`` (else
  ``ts``/``dur`` in µs), FLOPs and bytes unknown (no counters). Copies (COPY lane): FLOPs 0 (a copy does no math);
  the copy event has no size, so its bytes come from the ``hipMemcpy*`` call that issued it (``sizeBytes(N)``,
  direction from ``kind(K)`` or the call's name): the n-th copy of a direction is the n-th call of that direction
  (paired in order, not by time: the copy and API clocks disagree), only where their numbers agree. Host↔device copies move their bytes over PCIe and to/from HBM (``bytes_pcie`` = ``bytes_hbm``),
  device-to-device copies read and write HBM (2 × bytes), as the Kineto reader counts them. A copy with no such
  call keeps its bytes unknown.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..models import Workload
from . import check_binary, check_text, make_frame, register_format
from .columns import Either
from .pseudo import kind_of
from .rocprof_common import (
    Layout,
    Problems,
    durations,
    find_header,
    finish,
    header_sniffer,
    header_with,
    load_json,
    parse_summary,
    parse_wide,
    with_rows,
)

# --------------------------------------------------------------------------------------------- results.csv

V1 = Layout(
    "rocprof-v1",
    Either(header_with("Index", "KernelName", "gpu-id"), header_with("Dispatch_ID", "Kernel_Name", "GPU_ID", "queue-id")),
    ("Index", "Dispatch_ID"), ("KernelName", "Kernel_Name"), ("gpu-id", "GPU_ID"),
    ("BeginNs", "Start_Timestamp"), ("EndNs", "End_Timestamp"),
    "a rocprof v1 results.csv header (Index,KernelName,gpu-id,… or Dispatch_ID,Kernel_Name,GPU_ID,queue-id,…)",
    "profile with `rocprof --timestamp on -i input.txt app` and load the results.csv it writes.",
    bare="profile with counters: `rocprof --timestamp on -i input.txt app` with a `pmc:` line naming "
         "SQ_INSTS_VALU_{ADD,MUL,FMA}_F32 (and _F16, _F64), SQ_INSTS_VALU_MFMA_MOPS_*, FETCH_SIZE and WRITE_SIZE; or "
         "profile with rocprof-compute and load its pmc_perf.csv.")
#: a rocprof-compute per-pass file (renamed columns): its counters are a part of what pmc_perf.csv merges
PER_PASS_BARE = ("a rocprof-compute per-pass file holds only some counters; load pmc_perf.csv from the same workload "
                 "folder, which merges every pass.")


_PER_PASS = header_with("Dispatch_ID")


def _v1_sniff(head: str, filename: str) -> bool:
    """A results.csv header; a rocprof-compute merged file in the same layout (Omniperf 1.x ``pmc_perf.csv``) is
    left to ``rocprof-compute`` (the file name is the tie-breaker: the headers begin alike)."""
    return bool(V1.header.search(head)) and "pmc_perf" not in filename.lower()


@register_format("rocprof-v1", "rocprof v1 results.csv (Index,KernelName,gpu-id,…) and rocprof-compute per-pass "
                 "CSVs (Dispatch_ID,Kernel_Name,GPU_ID,queue-id,…): counters per dispatch", _v1_sniff, priority=20, role="either")
def parse_v1(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    text = check_text(data, source)
    at = find_header(text, V1.header)
    per_pass = at is not None and bool(_PER_PASS.match(text, at[0]))
    return parse_wide(data, source, context, replace(V1, bare=PER_PASS_BARE) if per_pass else V1)


# --------------------------------------------------------------------------------------------- --stats

STATS_HEADER = header_with("Name", "Calls", "TotalDurationNs")
STATS_HINT = ("profile with counters (rocprof -i input.txt with a pmc: line, or rocprof-compute's pmc_perf.csv), or "
              "load this file with an inventory of the kernels' FLOPs and bytes to join them by name.")
#: names of HIP/HSA API calls and copies: the other --stats summaries, not kernels
_API = re.compile(r"^(?:hip|hsa_|__hip|roctx)\w*$")
_COPY = re.compile(r"^(?:Copy|Fill|Memset|Marker)\w*$", re.I)


def _not_kernels(names: np.ndarray, source: str) -> None:
    if all(_API.match(str(x)) or str(kind_of(x)).endswith("API call") for x in names):
        raise InputError(where=source, text="this is an API call summary (host-side calls: rocprof's hip_stats.csv or "
                         "hsa_stats.csv, rocprofv3's hip_api_stats.csv), not a kernel summary.",
                         hint="load the kernel summary written beside it: results.stats.csv (rocprof --stats), or "
                              "<pid>_kernel_stats.csv (rocprofv3 --kernel-trace --stats --output-format csv).")
    if all(_COPY.match(str(x)) for x in names):
        raise InputError(where=source, text="these are memory copy statistics (rocprof's copy_stats.csv), not GPU kernels.",
                         hint="load results.stats.csv, the kernel summary written beside it.")


@register_format("rocprof-v1-stats", "rocprof --stats summary (results.stats.csv; rocprofv3 kernel_stats.csv): "
                 "calls and total time per kernel name, no counters", header_sniffer(STATS_HEADER), priority=20,
                 role="timeline")
def parse_stats(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """One time-only row per kernel name: count = Calls, time_s = TotalDurationNs × 1e-9."""
    return parse_summary(data, source, "rocprof-v1-stats", STATS_HEADER,
                         {"name": ("Name",), "count": ("Calls",), "total": ("TotalDurationNs",)},
                         'a rocprof --stats header ("Name","Calls","TotalDurationNs",…)',
                         "profile with `rocprof --stats` and load results.stats.csv.", STATS_HINT,
                         {"profiler": "rocprof --stats"}, _not_kernels)


# --------------------------------------------------------------------------------------------- --hip-trace

HIPTRACE_HINT = "load results.json as rocprof --hip-trace wrote it."
HIPTRACE_BARE = ("a --hip-trace records times only; profile with counters too (rocprof -i input.txt, or "
                 "rocprof-compute's pmc_perf.csv) and load that file for FLOPs and bytes.")
_DIRECTION = (("h2d", re.compile(r"HostToDevice|HtoD", re.I)), ("d2h", re.compile(r"DeviceToHost|DtoH", re.I)),
              ("d2d", re.compile(r"DeviceToDevice|DtoD|PeerToPeer|Peer", re.I)),
              ("h2h", re.compile(r"HostToHost|HtoH", re.I)))
_KIND = {"0": "h2h", "1": "h2d", "2": "d2h", "3": "d2d", "4": "any"}  #: hipMemcpyKind; 4 = hipMemcpyDefault
_SIZE = re.compile(r"\bsizeBytes\((\d+)\)")
_KIND_ARG = re.compile(r"\bkind\((\d)\)")
#: a kernel or copy event: its name, its ``args`` and the whole event
_Event = tuple[str, dict[str, Any], dict[str, Any]]


def _hiptrace_sniff(head: str, filename: str) -> bool:
    """A Chrome trace whose times are JSON strings or that carries rocprof's BeginNs: not Kineto (which it resembles;
    the higher priority makes this reader see it first)."""
    if head.lstrip()[:1] != "{" or '"traceEvents"' not in head:
        return False
    return '"BeginNs"' in head or bool(re.search(r'"(?:ts|dur)"\s*:\s*"\d', head))


def _direction(name: str) -> str | None:
    return next((d for d, pattern in _DIRECTION if pattern.search(name)), None)


def _num_text(v: object) -> str:
    return v.strip() if isinstance(v, str) else "" if v is None or isinstance(v, bool) else str(v)


def _ns_texts(e: dict[str, Any]) -> tuple[str, str]:
    """Begin and end of an event in ns, as text: args BeginNs/EndNs, else ts/dur (µs)."""
    args = a if isinstance(a := e.get("args"), dict) else {}
    begin, end = _num_text(args.get("BeginNs")), _num_text(args.get("EndNs"))
    if begin and end:
        return begin, end
    try:
        ts, dur = float(_num_text(e.get("ts"))), float(_num_text(e.get("dur")))
    except ValueError:
        return _num_text(e.get("ts")), ""
    return f"{ts * 1e3:.3f}", f"{(ts + dur) * 1e3:.3f}"


def _begin(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


@register_format("rocprof-v1-hiptrace", "rocprof --hip-trace results.json (Chrome trace with string times, not "
                 "Kineto): kernel times and copies with their bytes", _hiptrace_sniff, priority=25, role="timeline")
def parse_hiptrace(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Kernels with their times (no counters) and copies with FLOPs 0 and their bytes; see the module docstring."""
    from .rocprof_decode import hiptrace_events

    check_binary(data, source)
    events = hiptrace_events(data)  # the compiled decoder; None: read with the stdlib (its messages are the reference)
    if events is None:
        doc = load_json(data, source, HIPTRACE_HINT)
        events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise InputError(where=source, expected='a "traceEvents" list', found=type(events).__name__,
                         hint=HIPTRACE_HINT)
    lanes: dict[str, str] = {}
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_name":
            args = a if isinstance(a := e.get("args"), dict) else {}
            lanes[_num_text(e.get("pid"))] = str(args.get("name", ""))
    kernels: list[_Event] = []
    copies: list[_Event] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        args = a if isinstance(a := e.get("args"), dict) else {}
        name = str(args.get("Name") or e.get("name") or "").strip()
        lane = lanes.get(_num_text(e.get("pid")), "").upper()
        if "API" in lane or (not lane and ("args" in args or name.startswith(("hip", "hsa_")))):
            if name.startswith("hipMemcpy"):
                calls.append((name, args))
        elif lane == "COPY" or (not lane and name.startswith("Copy")):
            copies.append((name, args, e))
        elif lane.startswith("GPU") or (not lane and "dev-id" in args):
            kernels.append((name, args, e))
    if not kernels and not copies:
        raise InputError(where=source, text=f"no GPU kernel or copy events among {len(events):,} trace events (only "
                         "host API calls, or an empty trace).", hint="profile a program that launches kernels, with "
                         "`rocprof --hip-trace --timestamp on`.")
    n = len(kernels)
    ids = np.array([str(i) for i in range(n)], dtype=object)
    names = np.array([k[0] for k in kernels], dtype=object)
    gpus = np.array([_num_text(k[1].get("dev-id")) for k in kernels], dtype=object)
    spans = [_ns_texts(k[2]) for k in kernels]
    times = (np.array([s for s, _ in spans], dtype=object), np.array([t for _, t in spans], dtype=object))
    w = finish("rocprof-v1-hiptrace", source, context, ids, names, gpus, lambda _: None, times, ("BeginNs", "EndNs"),
               [], Problems(), bare=HIPTRACE_BARE)
    w = replace(w, meta={**w.meta, "profiler": "rocprof --hip-trace"})
    frame, warn = _copies(copies, calls, source)
    return with_rows(w, frame, warn)


def _copies(copies: list[_Event], calls: list[tuple[str, dict[str, Any]]], source: str
            ) -> tuple[pd.DataFrame, list[str]]:
    """Copy rows (FLOPs 0), each given the size of the hipMemcpy call that issued it; see the module docstring."""
    m = len(copies)
    if not m:
        return make_frame({}, 0), []
    sized: list[tuple[float, str, float]] = []  # (begin, direction, bytes or NaN) of the hipMemcpy calls whose direction is known
    for name, args in calls:
        text = str(args.get("args", ""))
        size_arg = _SIZE.search(text)
        kind = _KIND_ARG.search(text)
        direction = _KIND.get(kind.group(1)) if kind else _direction(name)
        if direction:
            sized.append((_begin(_num_text(args.get("BeginNs"))), direction,
                          float(size_arg.group(1)) if size_arg else np.nan))
    sized.sort(key=lambda c: c[0])
    spans = [_ns_texts(c[2]) for c in copies]
    begins = np.array([_begin(s) for s, _ in spans])
    order = np.argsort(begins, kind="stable")
    directions = [_direction(c[0]) for c in copies]
    size = np.full(m, np.nan)
    # Pair in order, not by time: the copy engine's clock and the host API clock disagree by more than a copy lasts
    # (a copy can start before the call that issued it). A kind(4) (hipMemcpyDefault) call has no direction: then
    # all copies pair with all calls in order, when their numbers agree.
    groups = ([(list(order), sized)] if any(d == "any" for _, d, _ in sized) else
              [([i for i in order if directions[i] == d], [c for c in sized if c[1] == d])
               for d in dict.fromkeys(directions) if d is not None])
    unpaired = 0
    for members, issued in groups:
        if len(members) == len(issued):
            size[members] = [c[2] for c in issued]
        else:
            unpaired += len(members)
    names = np.array([c[0] for c in copies], dtype=object)
    ids = np.array([f"copy {i}" for i in range(m)], dtype=object)
    time_s, warn = durations(np.array([s for s, _ in spans], dtype=object),
                             np.array([t for _, t in spans], dtype=object), ids, names, source, ("BeginNs", "EndNs"))
    host = np.array([d in ("h2d", "d2h") for d in directions])
    d2d = np.array([d == "d2d" for d in directions])
    hbm = np.where(d2d, 2 * size, np.where(host, size, np.nan))
    columns = {"name": names, "flops": np.zeros(m), "time_s": time_s, "group": np.full(m, "memcpy", dtype=object),
               "source": np.full(m, source, dtype=object), "row": ids, "bytes_hbm": hbm,
               "bytes_pcie": np.where(host, size, np.nan),
               "gpu": np.array([_num_text(c[1].get("dev-id")) for c in copies], dtype=object)}
    unknown = int(np.isnan(hbm).sum())
    if unknown:
        why = (f"{unpaired} could not be paired with the hipMemcpy calls that issued them (the numbers of copies and "
               "of calls of that direction differ)" if unpaired else "their calls give no sizeBytes(…), or they are "
               "host-to-host")
        warn.append(f"{source}: {unknown} of {m} copies have no size in the trace ({why}): their bytes are "
                    "unknown.")
    return make_frame(columns, m), warn
