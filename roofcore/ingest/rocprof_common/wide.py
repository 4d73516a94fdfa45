"""The workload of a counter file: a wide table (one row per dispatch, a column per counter) read through its
:class:`Layout`, dispatches checked, counters derived, times and companions joined (:func:`finish`, shared
with the long formats); and the per-kernel-name summaries that carry times only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ...errors import InputError
from ...models import Skipped, Workload
from .. import check_text, make_frame, skip
from ..columns import HeaderPattern
from .context import context_dict, context_meta
from .counters import Counters, Problems, derive, gpu_family, numbers
from .table import (
    MAX_NAMED,
    Table,
    by_line,
    factorize_text,
    find_header,
    no_header,
    position,
    read_roles,
    read_table,
    to_floats,
    whole_numbers,
)
from .times import durations


@dataclass(frozen=True)
class Layout:
    fmt: str
    header: HeaderPattern  #: where the header line is (:func:`~..columns.header_with`, or a regex)
    ids: tuple[str, ...]
    name: tuple[str, ...]
    gpu: tuple[str, ...]
    start: tuple[str, ...]
    end: tuple[str, ...]
    expected: str  #: what the header should look like, for the no-header message
    hint: str  #: how to get the file, for the no-header message
    bare: str | None = None  #: the hint when the file holds no FLOP or byte counter at all
    empty: str | None = None  #: the hint when the file has a header and no row


@dataclass
class Ids:
    keep: np.ndarray  #: rows with a whole-number dispatch id and a kernel name
    ids: np.ndarray  #: stripped id text per row
    names: np.ndarray  #: stripped kernel name per row
    id_codes: np.ndarray  #: factorised ids (same code = same id text)
    skipped: list[Skipped]


def ids_and_names(table: Table, id_col: int, name_col: int, id_label: str, source: str) -> Ids:
    """Rows with a whole-number dispatch id and a kernel name; the others become skipped entries."""
    id_codes, id_uniq = factorize_text(table.columns[id_col])
    name_codes, name_uniq = factorize_text(table.columns[name_col])
    ids, names = id_uniq[id_codes], name_uniq[name_codes]
    id_ok = whole_numbers(id_uniq)[id_codes]
    name_ok = (name_uniq != "")[name_codes]
    skipped = []
    for i in np.flatnonzero(~(id_ok & name_ok)):
        reason = (f"{id_label} {ids[i]!r} is not a dispatch number (a second header, or program output)"
                  if not id_ok[i] else f"dispatch {ids[i]}: the kernel name is empty")
        skipped.append(skip(source, f"line {table.lines[i]}", reason))
    return Ids(id_ok & name_ok, ids, names, id_codes, skipped)


def parse_wide(data: bytes, source: str, context: dict[str, Any] | None, lay: Layout) -> Workload:
    text = check_text(data, source)
    at = find_header(text, lay.header)
    if at is None:
        raise no_header(text, source, lay.expected, lay.hint)
    roles: dict[str, int | None] = {}
    counters: Counters | None = None

    def pick(header: list[str]) -> list[int]:
        nonlocal counters
        for role in ("ids", "name", "gpu", "start", "end"):
            roles[role] = position(header, getattr(lay, role))
        roles["wave"] = position(header, ("wave_size",))
        counters = Counters(header)
        return sorted({p for p in roles.values() if p is not None} | set(counters.needed()))

    table = read_table(text, at, source, pick, lay.name)
    assert counters is not None
    if roles["ids"] is None or roles["name"] is None:
        raise no_header(text, source, lay.expected, lay.hint)
    if table.n == 0:
        if table.skipped:
            first = table.skipped[0]
            raise InputError(where=f"{source}: {first.row}", text=f"no usable dispatches; the first problem: {first.reason}.",
                             hint="load the CSV as the profiler wrote it.")
        raise InputError(where=source, expected="at least one dispatch row", found="a header only",
                         hint=lay.empty or "the profiled program launched no kernels, or the profiler stopped early; "
                                           "profile again.")
    found = ids_and_names(table, roles["ids"], roles["name"], table.header[roles["ids"]], source)
    keep = found.keep
    skipped = by_line(table.skipped + found.skipped)
    if not keep.any():
        first = skipped[0]
        raise InputError(where=f"{source}: {first.row}", text=f"no usable dispatches; the first problem: {first.reason}.",
                         hint="load the CSV as the profiler wrote it.")
    sel = {i: col[keep] for i, col in table.columns.items()}
    ids, names = found.ids[keep], found.names[keep]
    gpus = None
    if roles["gpu"] is not None:
        codes, uniq = factorize_text(sel[roles["gpu"]])
        gpus = uniq[codes]
    problems = Problems()
    cache: dict[str, np.ndarray | None] = {}

    def get(name: str) -> np.ndarray | None:
        if name not in cache:
            plan = counters.plan(name)
            if plan is None:
                cache[name] = None
            else:
                parts = [numbers(sel[i], table.header[i], ids, problems) for i in plan]
                cache[name] = np.sum(parts, axis=0) if len(parts) > 1 else parts[0]
        return cache[name]

    time_cols = (table.header[roles["start"]] if roles["start"] is not None else lay.start[-1],
                 table.header[roles["end"]] if roles["end"] is not None else lay.end[-1])
    times = (sel.get(roles["start"]) if roles["start"] is not None else None,
             sel.get(roles["end"]) if roles["end"] is not None else None)
    waves = sel[roles["wave"]] if roles["wave"] is not None else None
    return finish(lay.fmt, source, context, ids, names, gpus, get, times, time_cols, skipped, problems, waves,
                  bare=lay.bare)


def finish(fmt: str, source: str, context: dict[str, Any] | None, ids: np.ndarray, names: np.ndarray,
           gpus: np.ndarray | None, get: Callable[[str], np.ndarray | None], times: tuple[np.ndarray | None, ...],
           time_cols: tuple[str, str], skipped: list[Skipped], problems: Problems, waves: np.ndarray | None = None, *,
           bare: str | None = None, no_time: str | None = None) -> Workload:
    """The workload of ``n`` dispatches: counters by ``get(name)``, times from the ``times`` texts, context from the
    companions (sysinfo.csv, roofline.csv)."""
    n = len(ids)
    info = context_dict(context, "rocprof_sysinfo")
    banks = info.get("lds_banks_per_cu") if info else None
    banks = float(banks) if isinstance(banks, int | float) and not isinstance(banks, bool) and banks > 0 else None
    family = gpu_family(str(info.get("gpu_arch") or ""), str(info.get("gpu_series") or "")) if info else None
    no_sysinfo = fmt == "rocprof-compute" and info is None
    with np.errstate(over="ignore", invalid="ignore"):  # absurd counters give inf, turned to unknown
        res = derive(get, n, source, family, banks, info is not None, quiet_lds=no_sysinfo, bare=bare)
    time_s, time_warn = durations(times[0], times[1], ids, names, source, time_cols, no_time)
    warn: list[str] = []
    meta = {"profiler": fmt, **res.meta}
    device = context_meta(context, gpus if gpus is not None else np.zeros(0, dtype=object), meta, warn)
    if no_sysinfo:
        lds = ", LDS bytes are unknown (they need lds_banks_per_cu)" if "bytes_lds" in res.columns else ""
        formula = meta.get("hbm_formula", "none usable").split(" (")[0]
        warn.append(f"{source}: no sysinfo.csv read with it: the GPU model is unknown{lds}, and the off-chip "
                    f"formula follows the counters present ({formula}). Hint: load sysinfo.csv from the same "
                    "workload folder together with pmc_perf.csv.")
    wave32 = np.zeros(n, dtype=bool) if waves is None else np.array([str(v).strip() == "32" for v in waves])
    if info and info.get("wave_size") == 32:
        wave32[:] = True
    if wave32.any() and np.nan_to_num(res.columns["flops"][wave32]).any():
        warn.append(f"{source}: {int(wave32.sum())} dispatch(es) ran as wave32 (RDNA); rocprof-compute's FLOP rule "
                    "counts 64 lanes per VALU instruction (CDNA wave64), so their VALU FLOPs may be up to 2× too high.")
    if meta.get("hbm_formula", "").startswith("MI300") and "bytes_l2" in res.columns:
        warn.append(f"{source}: L2 bytes use rocprof-compute's 64 B per request; MI300 has 128 B cache lines, so "
                    "L2 bytes may be undercounted.")
    dup = pd.Series(ids).duplicated(keep=False).to_numpy(dtype=bool) if n else np.zeros(0, dtype=bool)
    if gpus is not None and dup.any():
        dup = pd.DataFrame({"i": ids, "g": gpus}).duplicated(keep=False).to_numpy(dtype=bool)
    if dup.any():
        shown = ", ".join(dict.fromkeys(str(x) for x in ids[dup][:MAX_NAMED]))
        warn.append(f"{source}: dispatch id(s) {shown} appear on more than one line; every line is kept (a file "
                    "joined from several runs, or a duplicated line?).")
    columns: dict[str, object] = {
        "name": names, "time_s": time_s, "source": np.full(n, source, dtype=object), "row": ids,
        **res.columns,
    }
    if gpus is not None:
        columns["gpu"] = gpus
    frame = make_frame(columns, n)
    warnings = [*warn, *time_warn, *res.warnings, *problems.warnings(source)]
    return Workload(frame=frame, name=source, sources=(source,), formats=(fmt,), skipped=tuple(skipped),
                    warnings=tuple(warnings), device=device, meta=meta)


def with_rows(w: Workload, frame: pd.DataFrame, warnings: list[str]) -> Workload:
    """``w`` with more rows (copies next to kernels) and warnings; an empty ``w`` is replaced by them."""
    if len(frame) == 0:
        return replace(w, warnings=(*w.warnings, *warnings))
    merged = frame if len(w.frame) == 0 else pd.concat([w.frame, frame], ignore_index=True, sort=False)
    return replace(w, frame=merged, warnings=(*w.warnings, *warnings))


def summary(fmt: str, source: str, names: np.ndarray, counts: np.ndarray, total_ns: np.ndarray, rows: np.ndarray,
            hint: str, meta: dict[str, str], skipped: list[Skipped]) -> Workload:
    """Time-only rows, one per kernel name (``--stats``, ``pmc_kernel_top.csv``): ``count`` launches, ``time_s``
    their total; FLOPs and bytes unknown. ``meta["time_only"]`` lets :func:`roofcore.ingest.read_many` join them by
    name to an inventory read with them."""
    n = len(names)
    time_s = np.where(np.isfinite(total_ns) & (total_ns > 0), total_ns * 1e-9, np.nan)
    warn = [f"{source}: a time per kernel name only (no counters): FLOPs and bytes are unknown. Hint: {hint}"]
    bad = np.flatnonzero(np.isnan(time_s))
    for i in bad[:MAX_NAMED]:
        warn.append(f"{source}: {names[i]}: total time {float(total_ns[i]):g} ns is not a positive number; its time "
                    "is left unknown.")
    if len(bad) > MAX_NAMED:
        warn.append(f"{source}: … and {len(bad) - MAX_NAMED} more kernels without a usable time.")
    frame = make_frame({"name": names, "count": counts.astype(np.int64), "time_s": time_s,
                        "source": np.full(n, source, dtype=object), "row": rows}, n)
    return Workload(frame=frame, name=source, sources=(source,), formats=(fmt,), skipped=tuple(skipped),
                    warnings=tuple(warn), meta={"time_only": "true", "profiler": fmt, **meta})


def parse_summary(data: bytes, source: str, fmt: str, header: HeaderPattern, roles: dict[str, tuple[str, ...]],
                  expected: str, how: str, hint: str, meta: dict[str, str],
                  check: Callable[[np.ndarray, str], None] | None = None) -> Workload:
    """A per-kernel-name summary table (``roles``: ``name``, ``count``, ``total`` ns) as time-only rows; rows whose
    count is not a whole number ≥ 1 are skipped; ``check(names, source)`` may refuse what the names show it is."""
    text = check_text(data, source)
    at = find_header(text, header)
    if at is None:
        raise no_header(text, source, expected, how)
    table, pos = read_roles(text, at, source, roles)
    if pos["name"] is None or pos["count"] is None or pos["total"] is None:
        raise no_header(text, source, expected, how)
    if table.n == 0:
        raise InputError(where=source, expected="a row per kernel under the header", found="a header only",
                         hint="the profiled program launched no kernels; profile again.")
    codes, uniq = factorize_text(table.columns[pos["name"]])
    names = uniq[codes]
    counts, total = to_floats(table.columns[pos["count"]]), to_floats(table.columns[pos["total"]])
    ok = (names != "") & np.isfinite(counts) & (counts >= 1) & (counts == np.floor(counts)) & (counts < 2**53)
    skipped = list(table.skipped)
    for i in np.flatnonzero(~ok):
        why = ("the name is empty" if names[i] == "" else
               f"{table.header[pos['count']]} {str(table.columns[pos['count']][i]).strip()!r} is not a count")
        skipped.append(skip(source, f"line {table.lines[i]}", why))
    skipped = by_line(skipped)
    if not ok.any():
        first = skipped[0]
        raise InputError(where=f"{source}: {first.row}", text=f"no usable rows; the first problem: {first.reason}.",
                         hint="load the file as the profiler wrote it.")
    if check is not None:
        check(names[ok], source)
    rows = np.array([f"line {x}" for x in table.lines[ok]], dtype=object)
    return summary(fmt, source, names[ok], counts[ok], total[ok], rows, hint, meta, skipped)

