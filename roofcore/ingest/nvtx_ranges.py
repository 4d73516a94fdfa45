"""NVTX ranges of Nsight Systems exports as each kernel's ``nvtx`` ancestry (roofcore.hierarchy), docs/formats.md.

- ``nsys-nvtx-kern-sum``: ``nsys stats --report nvtx_kern_sum --format csv`` (``NVTX Range,Style,PID,TID,NVTX Inst,
  Kern Inst,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Kernel Name``): one time-only row per
  range × kernel, ``count`` = Kern Inst, ``time_s`` = Total Time, ``nvtx`` = the range (nsys writes
  ``domain:name``; the default domain's empty prefix is dropped). A row with no range holds the kernels launched
  outside every range ("outside"). nsys counts a kernel in *every* range open at its launch: where ranges nest, the
  rows overlap, which a warning counts (export the projection below for one range per launch).
- ``nsys-nvtx-proj`` (companion): ``nsys stats --report nvtx_gpu_proj_trace --format csv`` (``Name,Projected Start
  (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,NumGPUOps,Lvl,NumChild,RangeId,
  ParentId,RangeStack``): each range projected on the GPU (its first GPU operation's start to its last one's end).
  Read with a ``cuda_gpu_trace`` of the same report, each kernel gets the innermost projected range of one thread
  that holds its whole execution (start and end) as its ``nvtx`` path, outermost first; where ranges of several
  threads hold it, the shortest (a warning counts them). A kernel no range holds is "outside".
"""

from __future__ import annotations

import csv
import re
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..models import Workload
from . import COUNT_LIMIT, check_text, make_frame, register_format, skip
from .ancestry import SEP
from .columns import header_with, rejoin
from .nsys import TIME_UNITS
from .readers import table_lines

#: the nvtx_kern_sum header: its columns in any order (a spreadsheet may have moved them)
_KERN_SUM = header_with("NVTX Range", "Style", "Kern Inst", "Kernel Name")
_PROJ = re.compile(r'^\ufeff?"?Name"?,"?Projected Start \(\w+\)"?,"?Projected Duration \(\w+\)"?,[^\n]*$', re.M)
_GPU_TRACE = re.compile(r'^\ufeff?"?Start \(\w+\)"?,"?Duration \(\w+\)"?,"?CorrId"?,', re.M)
KERN_SUM_HINT = "export it with: nsys stats --report nvtx_kern_sum --format csv -o out report.nsys-rep"
PROJ_HINT = ("export both from the same report: nsys stats --report nvtx_gpu_proj_trace,cuda_gpu_trace --format csv "
             "-o out report.nsys-rep, and load the two CSVs together")


def range_name(cell: str) -> str | None:
    """``:forward`` (the default domain) -> ``forward``; ``dom:forward`` stays; empty -> None."""
    s = cell.strip()
    s = s[1:] if s.startswith(":") else s
    return s or None


def _table(text: str, m: re.Match[str], source: str
           ) -> tuple[dict[str, int], list[str], list[tuple[int, list[str]]]]:
    """The column positions by lower-case name (units dropped), the header as written, the rows under it."""
    header = [h.strip() for h in next(csv.reader([m.group(0).lstrip("\ufeff")]))]
    col = {re.sub(r"\s*\([^)]*\)\s*$", "", h).lower(): i for i, h in enumerate(header)}
    first = text.count("\n", 0, m.start()) + 2
    lines = text[m.end() + 1:].split("\n")

    def cells(line: str) -> list[str]:
        try:
            return next(csv.reader([line]), [])
        except csv.Error:
            return []

    def is_row(line: str) -> bool:  # past a blank line (.readers.table_lines): as wide as the header, no header
        return len(cells(line)) == len(header) and not m.re.match(line)

    rows = [(first + k, cells(line)) for k, line in table_lines(lines, is_row)]
    return col, header, rows


def _require(col: dict[str, int], header: list[str], need: tuple[str, ...], source: str, expected: str,
             hint: str) -> None:
    """Refuse a header without the columns read (a stray quote can merge its cells into one)."""
    if any(c not in col for c in need):
        raise InputError(where=f"{source}: header", expected=expected, found=", ".join(header)[:200], hint=hint)


def _per_s(header: list[str], i: int, source: str) -> float:
    m = re.search(r"\((\w+)\)\s*$", header[i])
    per_s = TIME_UNITS.get((m.group(1) if m else "ns").lower())
    if per_s is None:
        raise InputError(where=f"{source}: header", expected="a time unit (ns, us, ms or s)", found=repr(header[i]),
                         hint="export with --timeunit ns (the default).")
    return per_s


def _num(cell: str) -> float:
    try:
        return float(cell.strip().replace(",", "") or "nan")
    except ValueError:
        return float("nan")


@register_format("nsys-nvtx-kern-sum", "Nsight Systems nvtx_kern_sum (CSV): time per NVTX range × kernel name, the "
                 "range as each kernel's nvtx ancestry, no FLOPs", lambda head, name: bool(_KERN_SUM.search(head)),
                 priority=17, role="timeline")
def parse_kern_sum(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    text = check_text(data, source)
    m = _KERN_SUM.search(text)
    if m is None:
        raise InputError(where=source, expected="an nvtx_kern_sum header (NVTX Range,Style,PID,TID,NVTX Inst,Kern "
                         "Inst,Total Time (ns),…,Kernel Name)", found="none", hint=KERN_SUM_HINT)
    col, header, rows = _table(text, m, source)
    _require(col, header, ("nvtx range", "kern inst", "total time", "kernel name"), source,
             "NVTX Range, Kern Inst, Total Time and Kernel Name columns", KERN_SUM_HINT)
    per_s = _per_s(header, col["total time"], source)
    names, counts, times, nvtx, lines, threads, skipped = [], [], [], [], [], [], []
    for line_no, f in rows:
        if len(f) > len(header):  # a kernel name whose commas were left unquoted
            f = rejoin(f, col["kernel name"], len(header))
        if len(f) != len(header):
            skipped.append(skip(source, f"line {line_no}", f"expected {len(header)} fields, found {len(f)}"))
            continue
        n, t, name = _num(f[col["kern inst"]]), _num(f[col["total time"]]) / per_s, f[col["kernel name"]].strip()
        if not (0 <= n < COUNT_LIMIT and t >= 0) or not name:  # a count past int64 (or inf) is no launch count
            skipped.append(skip(source, f"line {line_no}", "Kern Inst must be a count (0 to 2^62), Total Time ≥ 0, Kernel "
                                f"Name given, found {f[col['kern inst']]!r}, {f[col['total time']]!r}, {name!r}"))
            continue
        names.append(name)
        counts.append(int(n))
        times.append(t)
        nvtx.append(range_name(f[col["nvtx range"]]))
        lines.append(str(line_no))
        threads.append("/".join(f[col[c]].strip() for c in ("pid", "tid") if c in col))
    if not names:
        first = skipped[0].reason if skipped else "no rows under the header"
        raise InputError(where=source, text=f"no usable nvtx_kern_sum rows; the first problem: {first}.",
                         hint=KERN_SUM_HINT)
    warnings = [f"an Nsight Systems NVTX kernel summary gives times only: FLOPs and bytes of its {len(names):,} rows "
                "are unknown (left empty, not zero). Hint: load it together with a kernel inventory or an Nsight "
                "Compute export of the same kernels."]
    seen: dict[tuple[str, str], set[str]] = {}
    for th, name, r in zip(threads, names, nvtx, strict=True):
        if r is not None:
            seen.setdefault((th, name), set()).add(r)
    shared = sum(len(v) > 1 for v in seen.values())
    ranges = (context or {}).get("nvtx_ranges")
    if shared and ranges:  # the range tree of a projection read with it makes the rows exclusive
        done = _exclusive(threads, names, counts, times, nvtx, ranges)
        if isinstance(done, str):
            warnings.append(done)
        else:
            keep, counts, times, nvtx = done
            names, lines = [names[i] for i in keep], [lines[i] for i in keep]
            warnings.append(f"nested NVTX ranges made exclusive with the range tree of {ranges['source']}: each "
                            "range keeps the launches and time of the kernels launched in it and in no range inside "
                            "it; its path names the ranges holding it.")
            shared = 0
    k = len(names)
    frame = make_frame({"name": names, "count": np.asarray(counts, dtype=np.int64), "time_s": np.asarray(times),
                        "source": [source] * k, "row": lines, "nvtx": np.asarray(nvtx, dtype=object)}, k)
    if shared:
        warnings.append(f"{shared:,} kernel name(s) appear under more than one NVTX range of one thread: nsys counts a "
                        "kernel in every range open at its launch, so where those ranges nest, their launches and time "
                        "are counted once per range. Hint: load the nvtx_gpu_proj_trace of the same report with it "
                        f"(its range tree makes the rows exclusive); for one range per launch, {PROJ_HINT}.")
    return Workload(frame=frame, name=source, sources=(source,), formats=("nsys-nvtx-kern-sum",),
                    skipped=tuple(skipped), warnings=tuple(warnings), device=None,
                    meta={"time_only": "true", "profiler": "Nsight Systems", "nsys_layout": "nvtx kernel summary"})


def _exclusive(threads: list[str], names: list[str], counts: list[int], times: list[float],
               nvtx: list[str | None], ranges: dict[str, Any]
               ) -> tuple[list[int], list[int], list[float], list[str | None]] | str:
    """nvtx_kern_sum rows made exclusive: per thread, the parent of each range name from the projected ranges' tree;
    a row keeps its count and time minus those of its child ranges' rows (same thread and kernel), its range becomes
    its path; rows left with no launch go. A reason (text) instead where the names do not form one tree per thread,
    or a subtraction goes below zero."""
    parent: dict[tuple[str, str], set[str | None]] = {}
    r_thread = np.asarray(ranges["thread"], dtype=object)
    for t in dict.fromkeys(ranges["thread"]):
        idx = np.flatnonzero(r_thread == t)
        idx = idx[np.lexsort((np.asarray(ranges["depth"])[idx], -np.asarray(ranges["end"])[idx],
                              np.asarray(ranges["start"])[idx]))]
        up, _ = _tree(np.asarray(ranges["start"])[idx], np.asarray(ranges["end"])[idx],
                      np.asarray(ranges["depth"], dtype=np.float64)[idx], [ranges["name"][i] for i in idx])
        for j, i in enumerate(idx.tolist()):
            parent.setdefault((t, ranges["name"][i]), set()).add(ranges["name"][idx[up[j]]] if up[j] >= 0 else None)
    split = sorted(n for (_t, n), ps in parent.items() if len(ps) > 1)
    if split:
        return (f"NVTX ranges left as nsys counts them: range {split[0]!r} has more than one enclosing range name in "
                f"{ranges['source']}, so the summary's rows cannot be made exclusive.")
    up_of = {key: next(iter(ps)) for key, ps in parent.items()}
    row_of = {(t, n, r): i for i, (t, n, r) in enumerate(zip(threads, names, nvtx, strict=True)) if r is not None}
    counts, times, paths = list(counts), list(times), list(nvtx)
    orig = (tuple(counts), tuple(times))
    for (t, n, r), i in row_of.items():
        p = up_of.get((t, r))
        if p is not None and (t, n, p) in row_of:
            j = row_of[(t, n, p)]
            counts[j] -= orig[0][i]  # the child's own row as nsys counted it (with its descendants)
            times[j] -= orig[1][i]
        chain, q = [r], p
        while q is not None and len(chain) < 64:
            chain.append(q)
            q = up_of.get((t, q))
        paths[i] = SEP.join(reversed(chain))
    bad = [i for i in range(len(counts)) if counts[i] < 0]
    if bad:
        return (f"NVTX ranges left as nsys counts them: {names[bad[0]]} in {nvtx[bad[0]]!r} has fewer launches than in "
                f"the ranges {ranges['source']} puts inside it (another report?).")
    keep = [i for i in range(len(counts)) if counts[i] > 0]
    return keep, [counts[i] for i in keep], [max(times[i], 0.0) for i in keep], [paths[i] for i in keep]


@register_format("nsys-nvtx-proj", "an Nsight Systems nvtx_gpu_proj_trace (CSV): NVTX ranges projected on the "
                 "GPU, context for a cuda_gpu_trace of the same report (each kernel's NVTX range)",
                 lambda head, name: bool(_PROJ.search(head) and not _GPU_TRACE.search(head)), priority=17,
                 companion=True)
def parse_proj(data: bytes, source: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"nvtx_ranges": {thread, start, end, depth, name, source}}``, times in seconds; ``{}`` without ranges."""
    return proj_ranges(check_text(data, source), source)


def proj_ranges(text: str, source: str) -> dict[str, Any]:
    """:func:`parse_proj` of a text (also the stdout of ``nsys stats`` holding the GPU trace after it)."""
    m = _PROJ.search(text)
    if m is None:
        raise InputError(where=source, expected="an nvtx_gpu_proj_trace header (Name,Projected Start (ns),Projected "
                         "Duration (ns),…)", found="none", hint=PROJ_HINT)
    col, header, rows = _table(text, m, source)
    _require(col, header, ("name", "projected start", "projected duration"), source,
             "Name, Projected Start and Projected Duration columns", PROJ_HINT)
    per_s = _per_s(header, col["projected start"], source)
    out: dict[str, list[Any]] = {"thread": [], "start": [], "end": [], "depth": [], "name": []}
    for _line, f in rows:
        if len(f) != len(header):
            continue
        s, d = _num(f[col["projected start"]]) / per_s, _num(f[col["projected duration"]]) / per_s
        name = range_name(f[col["name"]])
        if not (np.isfinite(s) and d >= 0) or name is None:
            continue
        out["thread"].append("/".join(f[col[c]].strip() for c in ("pid", "tid") if c in col))
        out["start"].append(s)
        out["end"].append(s + d)
        out["depth"].append(_num(f[col["lvl"]]) if "lvl" in col else 0.0)
        out["name"].append(name)
    # no range with a name and a time: nothing to give (the GPU trace read with it stays as it is)
    return {"nvtx_ranges": {**out, "source": source}} if out["name"] else {}


# ------------------------------------------------------------------------------------------ assigning


def _tree(start: np.ndarray, end: np.ndarray, depth: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """Per range of one thread, its parent (-1: none) and its path, outermost first (ranges nest properly)."""
    n = len(names)
    order = np.lexsort((depth, -end, start)).tolist()
    parent = np.full(n, -1, dtype=np.int64)
    path = [""] * n
    stack: list[int] = []
    for i in order:
        while stack and end[i] > end[stack[-1]]:
            stack.pop()
        if stack:
            parent[i] = stack[-1]
        path[i] = f"{path[stack[-1]]}{SEP}{names[i]}" if stack else names[i]
        stack.append(i)
    return parent, path


def innermost_paths(r_thread: list[str] | np.ndarray, r_start: np.ndarray, r_end: np.ndarray,
                    r_depth: np.ndarray, names: list[str], q_thread: list[str] | None, q_start: np.ndarray,
                    q_end: np.ndarray) -> tuple[np.ndarray, int]:
    """Per query (a kernel: its thread or None, start, end) the path of the innermost range of that thread (or, without
    a thread, ``q_thread`` None or a query's thread "", of any thread: the shortest) holding [start, end], or None;
    and how many queries ranges of several threads held."""
    from .kineto_link import innermost

    nq = len(q_start)
    best = np.full(nq, None, dtype=object)
    width = np.full(nq, np.inf)
    hits = np.zeros(nq, dtype=np.int64)
    r_thread = np.asarray(r_thread, dtype=object)
    qt = None if q_thread is None else np.asarray(q_thread, dtype=object)
    for t in dict.fromkeys(r_thread.tolist()):
        idx = np.flatnonzero(r_thread == t)
        idx = idx[np.lexsort((r_depth[idx], -r_end[idx], r_start[idx]))]  # index order: outer before inner
        s, e, d = r_start[idx], r_end[idx], r_depth[idx]
        parent, path = _tree(s, e, d, [names[i] for i in idx])
        sel = np.arange(nq) if qt is None else np.flatnonzero((qt == t) | (qt == ""))
        if not len(sel):
            continue
        at = innermost(np.zeros(len(idx), dtype=np.int64), s, e, np.zeros(len(sel), dtype=np.int64), q_start[sel])
        for j, a in zip(sel.tolist(), at.tolist(), strict=True):
            while a >= 0 and q_end[j] > e[a] + 1e-9:
                a = int(parent[a])
            if a < 0:
                continue
            hits[j] += 1
            if e[a] - s[a] < width[j]:
                width[j], best[j] = e[a] - s[a], path[a]
    return best, int((hits > 1).sum())


def attach_projection(w: Workload, starts: np.ndarray, context: dict[str, Any] | None, text: str = ""
                      ) -> Workload:
    """``w`` (a cuda_gpu_trace, one row per launch, ``starts`` in seconds) with ``nvtx`` and ``start_s`` from the
    projected ranges a companion read, or that ``text`` holds beside the GPU trace (``nsys stats --report
    nvtx_gpu_proj_trace,cuda_gpu_trace`` to stdout); unchanged without either."""
    from dataclasses import replace

    ranges = (context or {}).get("nvtx_ranges")
    if not ranges and _PROJ.search(text):
        ranges = proj_ranges(text, w.name).get("nvtx_ranges")
    if not ranges:
        return w
    f = w.frame.copy()
    t = f["time_s"].to_numpy(dtype=np.float64)
    paths, several = innermost_paths(ranges["thread"], np.asarray(ranges["start"]), np.asarray(ranges["end"]),
                                     np.asarray(ranges["depth"], dtype=np.float64), ranges["name"], None, starts,
                                     starts + t)
    f["nvtx"] = pd.Series(paths, dtype=object, index=f.index)  # None stays None (outside)
    f["start_s"] = starts
    out = sum(p is None for p in paths)
    warn = [f"NVTX ranges from {ranges['source']}: {len(paths) - out:,} of {len(paths):,} kernel launches lie inside a "
            f"projected range (the innermost holding the whole launch), {out:,} outside every range."]
    if several:
        warn.append(f"{several:,} kernel launches lie inside projected ranges of more than one thread: each was given "
                    "the shortest (cuda_gpu_trace does not say which thread launched it).")
    return replace(w, frame=f, warnings=(*w.warnings, *warn), sources=(*w.sources, ranges["source"]))
