"""PyTorch traces: the workload from a scanned trace, in steps (the event columns, each kernel's launching op,
the ops' costs shared among their kernels, memory events, CUPTI ranges, the rows left out, the warnings, the
device). The format's rules are in :mod:`.kineto`'s docstring."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from ..counting import kernel_counts
from ..errors import InputError
from ..models import Skipped, Workload
from .frames import make_frame, skip
from .kineto_comm import group_context
from .kineto_counters import TENSOR_FLOPS_PER_INST, counter_point
from .kineto_events import EXPORT_HINT, K_KERNEL, K_MEMCPY, K_MEMSET, Scan
from .kineto_link import (
    as_int64,
    column,
    differ,
    id_index,
    innermost,
    joined,
    numbers,
    texts,
    thread_codes,
    transpose,
    valid_ids,
)
from .kineto_ops import OPS, op_cost
from .kineto_ops_grad import parent_context
from .kineto_ops_train import list_dtypes
from .kineto_results import is_rocm, links_and_notes, per_instance
from .kineto_serve import LACKING
from .kineto_tree import ancestry_columns, keep_both
from .pseudo import is_runtime

FORMAT = "pytorch-trace"
SHAPES_HINT = ("profile with torch.profiler.profile(..., record_shapes=True) so each op's input shapes are "
               "recorded.")
CPU_OPS_HINT = ("profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and record_shapes=True so "
                "each kernel's launching op and its input shapes are recorded.")
_TF32_KERNEL = re.compile(r"tf32|s1688|s16816|tensorop_s\d", re.IGNORECASE)
#: Grace Hopper / Grace Blackwell superchips: host copies use NVLink-C2C, not PCIe
_SUPERCHIP = re.compile(r"\bG[HB]\d{3}\b")


@dataclass
class Events:
    """The GPU events as columns, and the per-row results the steps fill in."""

    n: int
    ev_idx: Sequence[int]
    kind: np.ndarray
    names: list[str]
    ts: np.ndarray
    dur: np.ndarray
    nbytes: np.ndarray
    corr_raw: Sequence[object]
    ext_raw: Sequence[object]
    dev_raw: list[int | None]
    reasons: dict[int, str]
    op_of: np.ndarray = field(init=False)
    flops: np.ndarray = field(init=False)
    b_hbm: np.ndarray = field(init=False)
    b_pcie: np.ndarray = field(init=False)
    precision: np.ndarray = field(init=False)
    unit: np.ndarray = field(init=False)
    group: np.ndarray = field(init=False)
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    #: ``corr_raw`` / ``ext_raw`` as int64 where every value is a JSON integer (every Kineto trace), else None:
    #: converted once (``as_int64``), read by every step that links by id
    corr_ids: np.ndarray | None = field(init=False)
    ext_ids: np.ndarray | None = field(init=False)

    def __post_init__(self) -> None:
        n = self.n
        self.corr_ids, self.ext_ids = as_int64(self.corr_raw), as_int64(self.ext_raw)
        self.op_of = np.full(n, -1, dtype=np.int64)
        self.flops, self.b_hbm, self.b_pcie = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
        self.precision, self.unit = np.full(n, None, dtype=object), np.full(n, None, dtype=object)
        self.group = np.full(n, None, dtype=object)

    @property
    def is_kernel(self) -> np.ndarray:
        res: np.ndarray = self.kind == K_KERNEL
        return res


def build(sc: Scan, source: str, context: dict[str, Any]) -> Workload:
    warnings: list[str] = []
    if not sc.gpu and not sc.ranges:
        _no_gpu_events(sc, source)
    ev = _events(sc)
    res_of_op, op_names = _link_ops(sc, ev)
    res_of_op = parent_context(sc.ops, sc.signatures, res_of_op)  # sizes only the enclosing op recorded
    any_shapes = any(map(itemgetter(7), sc.ops))
    _cost_ops(sc, ev, res_of_op, op_names, warnings)
    _memory_events(ev)
    rows = _row_ids(ev)
    range_frame = _ranges(sc, ev, context, source, warnings)
    keep, skipped = _left_out(ev, rows, range_frame, source)
    _warn(sc, ev, keep, any_shapes, warnings)
    ev.extra.update(ancestry_columns(sc, ev))  # step, module, op, nvtx, phase, start_s (roofcore.hierarchy)
    return _workload(sc, ev, rows, keep, skipped, range_frame, any_shapes, source, warnings)


def _row_ids(ev: Events) -> np.ndarray:
    """Each GPU event's row id: its correlation id as text (``event N`` without one)."""
    ints = ev.corr_ids
    if ints is not None:  # every event has an integer correlation: converted in one pass
        return ints.astype(str).astype(object)
    return np.array([str(c) if c is not None else f"event {i}" for c, i in zip(ev.corr_raw, ev.ev_idx, strict=True)],
                    dtype=object)


def _events(sc: Scan) -> Events:
    """The GPU events' columns; a missing or unusable name, ``ts`` or ``dur`` records why its row is left out."""
    kernels = sc.gpu
    reasons: dict[int, str] = {}
    cols: Sequence[Sequence[Any]] = transpose(kernels, 9) if kernels else [()] * 9
    ev_idx, kind, names, ts_raw, dur_raw, corr_raw, ext_raw, dev_raw, bytes_raw = cols
    try:  # names repeat: each distinct one checked once
        bad: set[object] | None = {nm for nm in set(names) if type(nm) is not str or not nm.strip()}
    except TypeError:  # an unhashable name (a JSON array)
        bad = None
    for k, nm in enumerate(names) if bad is None or bad else ():
        if type(nm) is not str or not nm.strip():
            reasons[k] = f"name: expected a kernel name, found {json.dumps(nm)[:40]}"
    return Events(
        n=len(kernels), ev_idx=ev_idx, kind=np.array(kind, dtype=np.int64),
        names=list(names) if bad == set() else [nm if type(nm) is str else "" for nm in names],
        ts=numbers(ts_raw, "ts", reasons, negative_ok=True), dur=numbers(dur_raw, "dur", reasons),
        nbytes=numbers(bytes_raw, "args.bytes", None), corr_raw=corr_raw, ext_raw=ext_raw,
        dev_raw=[d if type(d) is int else None for d in dev_raw], reasons=reasons)


def _link_ops(sc: Scan, ev: Events) -> tuple[np.ndarray, np.ndarray]:
    """``ev.op_of``: the launching op of every kernel (correlation → runtime launch → innermost enclosing cpu_op);
    returns each op's signature index and name."""
    ops, n_ops = sc.ops, len(sc.ops)
    if not (ops and ev.n):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    corr = id_index(ev.corr_raw if ev.corr_ids is None else ev.corr_ids)
    ext = id_index(ev.ext_raw if ev.ext_ids is None else ev.ext_ids)
    ops_col = column(sc.arrays, ops)
    o_start = ops_col("ops_ts", 2, lambda v: numbers(v, "ts", None, negative_ok=True))
    o_end = o_start + np.nan_to_num(ops_col("ops_dur", 3, lambda v: numbers(v, "dur", None)))
    op_of = ev.op_of
    if sc.runtime:
        rt_col = column(sc.arrays, sc.runtime)
        threads = thread_codes(joined(ops_col("ops_pid", 0), rt_col("rt_pid", 0)),
                                joined(ops_col("ops_tid", 1), rt_col("rt_tid", 1)))
        r_time = rt_col("rt_ts", 2, lambda v: numbers(v, "ts", None, negative_ok=True))
        launch_op = innermost(threads[:n_ops], o_start, o_end, threads[n_ops:], r_time)
        r_index = id_index(rt_col("rt_corr", 3))
        first = ~r_index.duplicated()
        r_index, launch_op = r_index[first], launch_op[first]
        at = r_index.get_indexer(corr)
        if ev.corr_ids is None:  # integers: every one valid
            at[~valid_ids(ev.corr_raw)] = -1
        op_of = np.where(at >= 0, launch_op[np.maximum(at, 0)], -1)
    # fallback (newer traces): the kernel's External id is its op's External id, not its correlation
    if ev.ext_ids is not None and ev.corr_ids is not None:
        ext_differs = ev.ext_ids != ev.corr_ids
    else:
        ext_differs = valid_ids(ev.ext_raw) & differ(ev.ext_raw, ev.corr_raw)
    need = (op_of < 0) & ext_differs
    if need.any():
        o_index = id_index(ops_col("", 5))
        keep = ~o_index.duplicated()
        pos = o_index[keep].get_indexer(ext[need])
        op_ids = np.flatnonzero(keep)
        op_of[need] = np.where(pos >= 0, op_ids[np.maximum(pos, 0)], -1)
    ev.op_of = op_of
    return np.array(ops_col("", 6), dtype=np.int64), texts(ops_col("", 4))


def _cost_ops(sc: Scan, ev: Events, res_of_op: np.ndarray, op_names: np.ndarray, warnings: list[str]) -> None:
    """FLOPs / bytes from each op's formula, shared among its kernels by duration; kernels grouped by their op."""
    ctx = group_context(sc.top.get("distributedInfo"), is_rocm(sc.top))
    results = [op_cost(*sig, ctx=ctx) for sig in sc.signatures]
    res_of_op = per_instance(sc.ops, sc.signatures, ev.op_of, ev.names, res_of_op, results)
    r_flops = np.array([r[0] if r else np.nan for r in results] + [np.nan])
    r_bytes = np.array([r[1] if r else np.nan for r in results] + [np.nan])
    r_prec = np.array([r[2] if r else None for r in results] + [None], dtype=object)
    r_unit = np.array([r[3] if r else None for r in results] + [None], dtype=object)
    r_assumed = np.array([bool(r and r[4] is True) for r in results] + [False])
    is_kernel, op_of, n_ops = ev.is_kernel, ev.op_of, len(sc.ops)
    has_op = op_of >= 0
    res = np.full(ev.n, -1, dtype=np.int64)
    res[has_op] = res_of_op[op_of[has_op]]
    costed = is_kernel & (res >= 0)
    if costed.any():
        dur, precision, unit = ev.dur, ev.precision, ev.unit
        w = np.where(np.isnan(dur) | (dur < 0), 0.0, dur)
        ops_k = op_of[costed]
        tot = np.bincount(ops_k, weights=w[costed], minlength=n_ops)
        cnt = np.bincount(ops_k, minlength=n_ops)
        share = np.where(tot[ops_k] > 0, w[costed] / np.where(tot[ops_k] > 0, tot[ops_k], 1.0), 1.0 / cnt[ops_k])
        rk = res[costed]
        ev.flops[costed] = r_flops[rk] * share
        ev.b_hbm[costed] = r_bytes[rk] * share
        precision[costed] = r_prec[rk]
        unit[costed] = r_unit[rk]
        list_dtypes(results, rk, np.flatnonzero(costed), share, ev.names, ops_k, ev.b_hbm, precision, warnings)
        links_and_notes(results, rk, ops_k, share, costed, ev.extra, ev.n, ctx["link"], warnings)
        ok = ~np.isnan(ev.flops)
        costed_ok = np.flatnonzero(costed)[ok[costed]]
        fp32_mx = costed_ok[(precision[costed_ok] == "fp32") & (unit[costed_ok] == "matrix")]
        if fp32_mx.size:  # fp32 matmuls that ran on tensor cores as TF32 (the kernel name says so)
            codes, uniq = pd.factorize(np.array([ev.names[k] for k in fp32_mx], dtype=object))
            tf32 = np.array([bool(_TF32_KERNEL.search(u)) for u in uniq], dtype=bool)[codes]  # once per name
            precision[fp32_mx[tf32]] = "tf32"
        n_assumed = np.unique(op_of[costed_ok][r_assumed[res[costed_ok]]]).size
        if n_assumed:
            warnings.append(f"{_n(n_assumed, 'convolution op')} recorded no stride or padding (no 'Concrete "
                            "Inputs'; PyTorch < 2.1): output and input were assumed the same size (stride 1, 'same' "
                            "padding), which overcounts a strided convolution's FLOPs (or its grad input's bytes). "
                            "Hint: profile with a newer PyTorch for exact convolution FLOPs.")
    ev.group[has_op & is_kernel] = op_names[op_of[has_op & is_kernel]]


def _memory_events(ev: Events) -> None:
    """memcpy / memset: no FLOPs, the bytes the trace records (where they go: see the module docstring)."""
    mem = ~ev.is_kernel
    if not mem.any():
        return
    kind = ev.kind
    ev.flops[mem] = 0.0
    ev.group[kind == K_MEMCPY] = "memcpy"
    ev.group[kind == K_MEMSET] = "memset"
    mk = np.flatnonzero(mem)
    low = pd.Series([ev.names[k] for k in mk], dtype=object).str.lower()
    copy = kind[mk] == K_MEMCPY
    host = copy & low.str.contains("htod|dtoh|hosttodevice|devicetohost", regex=True).to_numpy(bool)
    d2d = copy & ~host & low.str.contains("dtod|devicetodevice", regex=True).to_numpy(bool)
    h2h = copy & ~host & ~d2d & low.str.contains("htoh|hosttohost", regex=True).to_numpy(bool)
    b = ev.nbytes[mk]
    ev.b_hbm[mk] = np.where(d2d, 2 * b, np.where(h2h, np.nan, b))
    ev.b_pcie[mk[host]] = b[host]


def _ranges(sc: Scan, ev: Events, context: dict[str, Any], source: str, warnings: list[str]
            ) -> pd.DataFrame | None:
    """CUPTI range counters onto the kernels of the same name and order; the rows of a ranges-only trace."""
    if not sc.ranges:
        return None
    factor = float(context.get("tensor_flops_per_inst") or TENSOR_FLOPS_PER_INST)
    r_names = [nm if type(nm) is str else str(nm) for _, nm, _ in sc.ranges]
    points = [counter_point(a, nm, factor) for (_, _, a), nm in zip(sc.ranges, r_names, strict=True)]
    if any(p["estimated"] for p in points):
        warnings.append(f"tensor-core FLOPs estimated as {factor:g} × sm__inst_executed_pipe_tensor.sum (the "
                        "factor depends on the architecture and instruction). Hint: add the "
                        "sm__ops_path_tensor_* counters to profiler_metrics for exact tensor FLOPs.")
    if not ev.is_kernel.any():
        return _range_rows(sc, points, r_names, source, warnings)
    kern_pos = np.flatnonzero(ev.is_kernel)
    kframe = pd.DataFrame({"name": [ev.names[k] for k in kern_pos], "pos": kern_pos, "ts": ev.ts[kern_pos]})
    kframe = kframe.sort_values(["ts", "pos"], kind="stable")
    kframe["nth"] = kframe.groupby("name", sort=False).cumcount()
    rframe = pd.DataFrame({"name": r_names, "r": np.arange(len(points))})
    rframe["nth"] = rframe.groupby("name", sort=False).cumcount()
    m = rframe.merge(kframe, on=["name", "nth"], how="inner")
    formula = {"flops": ev.flops.copy(), "bytes_hbm": ev.b_hbm.copy()}  # the ops' formulas, kept beside the counters
    for r, k in zip(m["r"].to_numpy(), m["pos"].to_numpy(), strict=True):
        p = points[r]
        ev.flops[k], ev.b_hbm[k] = p["flops"], p["bytes_hbm"]
        ev.precision[k], ev.unit[k] = p["precision"], p["unit"]
        for lvl in ("bytes_l2", "bytes_l1"):
            ev.extra.setdefault(lvl, np.full(ev.n, np.nan))[k] = p[lvl]
    keep_both(ev.extra, m["pos"].to_numpy(dtype=np.int64), formula, {"flops": ev.flops, "bytes_hbm": ev.b_hbm})
    if len(m) < len(points):
        warnings.append(f"{len(points) - len(m)} of {_n(len(points), 'CUPTI counter range')} match no "
                        "kernel event of the same name and order; their counters were not used.")
    return None


def _left_out(ev: Events, rows: np.ndarray, range_frame: pd.DataFrame | None, source: str
              ) -> tuple[np.ndarray, list[Skipped]]:
    """The rows kept, and those left out with their reasons; no usable row at all is an error."""
    skipped: list[Skipped] = []
    keep = np.ones(ev.n, dtype=bool)
    if ev.reasons:
        keep[list(ev.reasons)] = False
        skipped = [skip(source, rows[k], ev.reasons[k]) for k in sorted(ev.reasons)]
    kept = int(keep.sum()) + (len(range_frame) if range_frame is not None else 0)
    if not kept:
        first = skipped[0]
        where = first.row if first.row.startswith("event ") else f"correlation {first.row}"
        raise InputError(where=f"{source}: {where}", text=f"no usable kernel events; the first problem: "
                         f"{first.reason}.", hint=EXPORT_HINT)
    return keep, skipped


def _warn(sc: Scan, ev: Events, keep: np.ndarray, any_shapes: bool, warnings: list[str]) -> None:
    """Unknown FLOPs (and what to record), 0 µs events, a truncated file, entries that are not events."""
    is_kernel = ev.is_kernel
    unknown = int((is_kernel & keep & np.isnan(ev.flops)).sum())
    if unknown:
        if not sc.ops and not sc.ranges:  # a GPU-only trace: nothing launched the kernels as far as it shows
            why = "the trace has no CPU ops (cpu_op events) to link them to. Hint: " + CPU_OPS_HINT
        elif not any_shapes and not sc.ranges:
            why = "the trace has no input shapes. Hint: " + SHAPES_HINT
        else:
            miss = pd.Series(ev.group[is_kernel & keep & np.isnan(ev.flops)]).fillna("launching op not found")
            top = ", ".join(f"{k} ×{v}" for k, v in miss.value_counts().head(4).items())
            why = f"the launching op is not found, or has no shapes or no FLOP formula here ({top})."
            unfit = [k for k in miss.value_counts().index if k in OPS and k not in LACKING][:3]  # inputs unfit
            # (LACKING: ops whose formula needs what no trace records; their own warning says what)
            if unfit:
                why += (f" {', '.join(unfit)} {'has' if len(unfit) == 1 else 'have'} a formula that the recorded "
                        "inputs do not fit (a size, flag or pooling geometry PyTorch < 2.1 does not record, a dtype "
                        "a tensor list does not give, or shapes that disagree).")
        warnings.append(f"{_unknown_count(ev, keep)} unknown FLOPs and bytes (left empty, not zero): {why}")
    zero = int((keep & (ev.dur == 0)).sum())
    if zero:
        warnings.append(f"{_n(zero, 'event')} {'lasts' if zero == 1 else 'last'} 0 µs (the trace rounds to whole "
                        "µs): achieved rates are unknown for them.")
    if sc.truncated_at is not None:
        warnings.append(f"the file ends early, at character {sc.truncated_at} (truncated?): the {sc.events} events "
                        "before the break were read, the rest is missing.")
    if sc.not_objects:
        warnings.append(f"{_n(sc.not_objects, 'entry', 'entries')} of traceEvents {'is' if sc.not_objects == 1 else 'are'} "
                        "not a JSON object and ignored.")


def _unknown_count(ev: Events, keep: np.ndarray) -> str:
    """``"17 of 38 kernels (48 of 174 launches) have"``: the kernels with unknown FLOPs among those the workload
    keeps, counted as every page counts them (roofcore.counting: launches of one kernel are one kernel; copies
    count, runtime and queue entries do not: roofcore.ingest.pseudo)."""
    # object columns: only counted, so pandas need not make text (Arrow) columns of a million values
    cols = {k: pd.Series(v, dtype=object) for k, v in (("name", ev.names), ("precision", ev.precision),
                                                         ("unit", ev.unit), ("group", ev.group))}
    rows = pd.DataFrame({**cols, "count": np.ones(ev.n, dtype=np.int64)})
    kept = keep & ~is_runtime(cols["name"])  # each distinct name tested once (pseudo.is_runtime)
    missing = kept & ev.is_kernel & np.isnan(ev.flops)
    (k, n), (k_all, n_all) = kernel_counts(rows, missing), kernel_counts(rows, kept)
    launches = f" ({n:,} of {_n(n_all, 'launch')})" if n_all != k_all else ""
    return f"{k:,} of {_n(k_all, 'kernel')}{launches} {'has' if k == 1 else 'have'}"


def _workload(sc: Scan, ev: Events, rows: np.ndarray, keep: np.ndarray, skipped: list[Skipped],
              range_frame: pd.DataFrame | None, any_shapes: bool, source: str, warnings: list[str]) -> Workload:
    """The frame of the kept rows (and range rows), with the device and the trace's meta."""
    n = ev.n
    columns: dict[str, object] = {
        "name": np.array(ev.names, dtype=object), "flops": ev.flops, "time_s": ev.dur / 1e6,
        "precision": ev.precision, "unit": ev.unit, "group": ev.group, "source": np.full(n, source, dtype=object),
        "row": rows, "bytes_hbm": ev.b_hbm,
    }
    if not np.isnan(ev.b_pcie).all():
        columns["bytes_pcie"] = ev.b_pcie
    columns.update(ev.extra)
    frame = make_frame(columns, n)
    if not keep.all():
        frame = frame[keep].reset_index(drop=True)
    if range_frame is not None:
        frame = pd.concat([frame, range_frame], ignore_index=True, sort=False) if len(frame) else range_frame
    for col in ("precision", "unit"):
        frame[col] = pd.Categorical(frame[col].astype(object).where(frame[col].notna(), None))
    device, meta = _device(sc, np.array(ev.dev_raw, dtype=object)[keep] if n else np.zeros(0, dtype=object), warnings)
    meta["profiler"] = "PyTorch profiler (Kineto trace)"
    dist = sc.top.get("distributedInfo")  # {"backend": "nccl", "rank": 3, "world_size": 8} in a job's rank traces
    if isinstance(dist, dict):
        for key in ("rank", "world_size"):
            if type(dist.get(key)) is int and dist[key] >= 0:
                meta[key] = str(dist[key])
    # shapes: the ops' own Input Dims where there are ops (the evidence), else what the trace says it recorded
    meta["record_shapes"] = "true" if any_shapes or (not sc.ops and sc.top.get("record_shapes") == 1) else "false"
    if not sc.ops:  # nothing links a kernel to its launching op (roofcore.ingest.kineto_hint)
        meta["cpu_ops"] = "false"
    if device and "bytes_pcie" in frame.columns and _SUPERCHIP.search(device):
        frame = frame.rename(columns={"bytes_pcie": "bytes_c2c"})  # Grace's copies to its GPU cross NVLink-C2C
    return Workload(frame=frame, name=source, sources=(source,), formats=(FORMAT,), skipped=tuple(skipped),
                    warnings=tuple(warnings), device=device, meta=meta)


def _no_gpu_events(sc: Scan, source: str) -> None:
    """Refuse a trace without GPU activity: a Kineto trace of the CPU alone, or a file that is no Kineto trace."""
    kineto = bool(sc.ops or sc.runtime) or any(k in sc.top for k in ("schemaVersion", "deviceProperties",
                                                                       "distributedInfo", "traceName"))
    if sc.string_times and not kineto:
        raise InputError(where=source, text="not a PyTorch profiler trace: its events have no Kineto categories and "
                         f"{_n(sc.string_times, 'event')} {'has' if sc.string_times == 1 else 'have'} timestamps "
                         "written as JSON strings, as in rocprof's --hip-trace results.json.",
                         hint="drop --format so the format is detected from the content.")
    if not kineto:
        raise InputError(where=source, expected='a PyTorch profiler trace (events with "cat": "kernel", "cpu_op", '
                         '...)', found=f"{_n(sc.events, 'event')} without Kineto's categories" if sc.events else "no events",
                         hint="is this a PyTorch profiler trace? Export one with prof.export_chrome_trace(path).")
    if sc.truncated_at is not None:  # the kernels are written after the CPU ops: a copy cut short lost them
        raise InputError(where=source, text=f"the file ends early, at character {sc.truncated_at} (truncated?), before "
                         f"any GPU kernel event: {sc.events} events read ({len(sc.ops)} cpu_op, {len(sc.runtime)} "
                         "cuda_runtime).", hint="copy the whole trace again; the profiler writes the kernels after "
                         "the CPU ops.")
    raise InputError(where=source, expected='GPU kernel events ("cat": "kernel")',
                     found=f"none among {sc.events} events ({len(sc.ops)} cpu_op, {len(sc.runtime)} cuda_runtime)",
                     hint="profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]; a CPU-only "
                     "trace has no kernels to place on a roofline.")


def _n(k: int, word: str, plural: str | None = None) -> str:
    """``3 kernels``, ``1 kernel``."""
    return f"{k:,} {word if k == 1 else (plural or word + ('es' if word.endswith('ch') else 's'))}"


def _range_rows(sc: Scan, points: list[dict[str, Any]], r_names: list[str], source: str, warnings: list[str]
                ) -> pd.DataFrame:
    """Rows from CUPTI ranges alone (range profiler without kernel tracing)."""
    m = len(points)
    group: np.ndarray = np.full(m, None, dtype=object)
    launches = sorted((r for r in sc.runtime if isinstance(r[4], str) and "LaunchKernel" in r[4]),
                      key=lambda r: r[2] if type(r[2]) in (int, float) else math.inf)
    if launches and len(launches) == m and sc.ops:
        o_pid, o_tid, o_ts, o_dur, o_name = transpose(sc.ops, 5)
        l_pid, l_tid, l_ts = [r[0] for r in launches], [r[1] for r in launches], [r[2] for r in launches]
        threads = thread_codes(list(o_pid) + l_pid, list(o_tid) + l_tid)
        start = numbers(o_ts, "ts", None, negative_ok=True)
        end = start + np.nan_to_num(numbers(o_dur, "dur", None))
        at = innermost(threads[: len(o_pid)], start, end, threads[len(o_pid):],
                       numbers(l_ts, "ts", None, negative_ok=True))
        op_names = np.array([nm if type(nm) is str else None for nm in o_name], dtype=object)
        group = op_names[np.maximum(at, 0)]  # a copy (fancy indexing)
        group[at < 0] = None
    elif launches:
        warnings.append(f"{_n(m, 'CUPTI counter range')} but {_n(len(launches), 'kernel launch')}: ranges are not "
                        "linked to their ops (user-defined ranges?).")
    times = np.array([p["time_s"] for p in points], dtype=np.float64)
    if np.isnan(times).any():
        k = int(np.isnan(times).sum())
        warnings.append(f"{_n(k, 'CUPTI counter range')} {'has' if k == 1 else 'have'} no time (range ts/dur are "
                        "synthetic). Hint: add gpu__time_duration.sum to profiler_metrics to measure each kernel's "
                        "time.")
    columns = {
        "name": np.array(r_names, dtype=object), "flops": np.array([p["flops"] for p in points], dtype=np.float64),
        "time_s": times, "precision": np.array([p["precision"] for p in points], dtype=object),
        "unit": np.array([p["unit"] for p in points], dtype=object), "group": group,
        "source": np.full(m, source, dtype=object), "row": np.array([f"range {k}" for k in range(m)], dtype=object),
    }
    for lvl in ("bytes_hbm", "bytes_l2", "bytes_l1"):
        columns[lvl] = np.array([p[lvl] for p in points], dtype=np.float64)
    return make_frame(columns, m)


def _device(sc: Scan, dev_ids: np.ndarray, warnings: list[str]) -> tuple[str | None, dict[str, str]]:
    """The device the kernels ran on (``deviceProperties``): its name, and its compute capability and SM count
    (NVIDIA) or architecture and CU count (ROCm)."""
    props = sc.top.get("deviceProperties")
    by_id: dict[int, dict[str, Any]] = {}
    if isinstance(props, list):
        for p in props:
            if isinstance(p, dict) and type(p.get("id")) is int:
                by_id.setdefault(p["id"], p)
    used = pd.Series([d for d in dev_ids if type(d) is int], dtype=object).value_counts()
    meta: dict[str, str] = {}
    if len(used) > 1:
        meta["devices"] = ",".join(str(d) for d in sorted(used.index))
        names = {str(by_id[d].get("name")) for d in used.index if d in by_id}
        if len(names) > 1:
            warnings.append(f"kernels ran on devices of different models ({', '.join(sorted(names))}); the "
                            "workload is labelled with the most used one.")
    dev_id = used.index[0] if len(used) else (next(iter(by_id)) if len(by_id) == 1 else None)
    p = by_id.get(dev_id) if dev_id is not None else None
    if p is None and by_id and len({str(q.get("name")) for q in by_id.values()}) == 1:
        # ROCm numbers kernels' devices physically (device 2) but lists only the visible ones (id 0): one model
        p = next(iter(by_id.values()))
    if p is None:
        return None, meta
    name = str(p.get("name")).strip() if isinstance(p.get("name"), str) else ""
    arch = p.get("gcnArchName")
    rocm = (isinstance(arch, str) or bool(re.search(r"\bAMD\b|Radeon|Instinct", name))
            or any(k in sc.top for k in ("hip_runtime_version", "roctracer_version", "hip_driver_version")))
    major, minor, units = p.get("computeMajor"), p.get("computeMinor"), p.get("numSms")
    if rocm:  # HIP's computeMajor/Minor (9.0 for gfx90a and gfx908 alike) name no architecture
        if isinstance(arch, str) and arch.strip():
            meta["arch"] = arch.split(":")[0].strip()
        if type(units) is int and units > 0:
            meta["cu_per_gpu"] = str(units)
    else:
        if type(major) is int and type(minor) is int and major >= 0 and minor >= 0:
            meta["compute_capability"] = f"{major}.{minor}"
            meta["arch"] = f"sm_{major}{minor}"
        if type(units) is int and units > 0:
            meta["sm_count"] = str(units)
    return name or None, meta
