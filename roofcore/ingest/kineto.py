"""PyTorch profiler traces: Kineto ``export_chrome_trace`` JSON, plain or gzip (FORMATS.md §6.2).

One row per GPU activity: every ``"cat": "kernel"`` launch, and ``gpu_memcpy`` / ``gpu_memset`` events kept as
kernels with FLOPs 0 (a copy does no math) and the bytes the trace records (group ``memcpy`` / ``memset``).
Times are the events' ``dur`` (µs) × 1e-6 s. ``row`` is the launch's correlation id. The modules beside this
one read the events (:mod:`.kineto_events`), cost the ops (:mod:`.kineto_ops`) and read CUPTI counters
(:mod:`.kineto_counters`); this one links kernels to ops and builds the workload.

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

import itertools
import json
import math
import re
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from .. import limits
from ..errors import InputError
from ..models import Skipped, Workload
from . import check_binary, make_frame, max_input_bytes, register_format, skip
from .compression import gunzip_chunks
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
from .kineto_ops import DTYPES, OPS, Result, op_cost

__all__ = ["CATS", "DTYPES", "FORMAT", "K_CPUOP", "K_KERNEL", "K_MEMCPY", "K_MEMSET", "K_RANGE", "K_RUNTIME", "OPS",
           "TENSOR_FLOPS_PER_INST", "Result", "counter_point", "innermost", "name_precision", "op_cost", "parse"]

FORMAT = "pytorch-trace"
GZIP_MAGIC = b"\x1f\x8b"
_WINDOW = 1 << 22  # bytes of a plain input handed to the decoder at a time

SHAPES_HINT = ("profile with torch.profiler.profile(..., record_shapes=True) so each op's input shapes are "
               "recorded.")
CPU_OPS_HINT = ("profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and record_shapes=True so "
                "each kernel's launching op and its input shapes are recorded.")
_TF32_KERNEL = re.compile(r"tf32|s1688|s16816|tensorop_s\d", re.IGNORECASE)
#: Grace Hopper / Grace Blackwell superchips: host copies use NVLink-C2C, not PCIe
_SUPERCHIP = re.compile(r"\bG[HB]\d{3}\b")


# --------------------------------------------------------------------------------------------- numbers


def _numbers(values: Sequence[object], what: str, reasons: dict[int, str] | None, *, negative_ok: bool = False
             ) -> np.ndarray:
    """Floats (NaN for missing); a present but non-numeric, non-finite or negative value records a reason."""
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        arr = None
    if arr is not None and arr.shape == (len(values),):
        with np.errstate(invalid="ignore"):
            if not np.isinf(arr).any() and (negative_ok or not (arr < 0).any()):
                return arr
    arr = np.full(len(values), np.nan)
    want = "a number" if negative_ok else "a non-negative number"
    for k, v in enumerate(values):
        if v is None:
            continue
        x = _as_float(v)
        if x is not None and math.isnan(x):
            continue
        if x is not None and math.isfinite(x) and (negative_ok or x >= 0):
            arr[k] = x
        elif reasons is not None and k not in reasons:
            shown = json.dumps(v)[:40] if isinstance(v, (str, list, dict, bool)) else repr(v)[:40]
            reasons[k] = f"{what}: expected {want}, found {shown}"
    return arr


def _as_float(v: object) -> float | None:
    """A JSON number or numeric string as a float (None: anything else, or too large for a float)."""
    if type(v) not in (int, float, str):
        return None
    try:
        return float(v)  # type: ignore[arg-type]
    except (ValueError, OverflowError):
        return None


def _ids(values: Sequence[object]) -> pd.Index:
    """Correlation / External ids as an index (ints stay ints; anything unhashable becomes missing)."""
    clean = [v if type(v) in (int, str) else None for v in values]
    try:
        return pd.Index(np.array(clean, dtype=np.int64))
    except (TypeError, ValueError, OverflowError):
        return pd.Index(pd.array(clean, dtype=object))


# --------------------------------------------------------------------------------------------- linking


def innermost(op_group: np.ndarray, op_start: np.ndarray, op_end: np.ndarray, q_group: np.ndarray,
              q_time: np.ndarray) -> np.ndarray:
    """Per query (thread, time), the index of the innermost op on that thread whose [start, end] holds it, or -1.

    Ops sorted by (thread, start, longest first); each op's parent (the innermost op holding its start) found by
    pointer jumping, vectorised; a query starts at the last op starting at or before it and climbs parents
    until one ends at or after it. Properly nested intervals assumed (as profiler ranges on one thread are).
    """
    res = np.full(len(q_time), -1, dtype=np.int64)
    usable = np.flatnonzero(~np.isnan(op_start) & ~np.isnan(op_end))
    n = len(usable)
    if n == 0 or len(q_time) == 0:
        return res
    op_group, op_start, op_end = op_group[usable], op_start[usable], op_end[usable]
    sort = np.lexsort((np.arange(n), -op_end, op_start, op_group))
    order = usable[sort]
    g, s, e = op_group[sort], op_start[sort], op_end[sort]
    par = np.arange(-1, n - 1, dtype=np.int64)
    par[np.r_[True, g[1:] != g[:-1]]] = -1
    active = np.flatnonzero(par >= 0)
    while active.size:
        bad = e[par[active]] < s[active]
        active = active[bad]
        par[active] = par[par[active]]
        active = active[par[active] >= 0]
    valid = ~np.isnan(q_time)
    groups, lo = np.unique(g, return_index=True)
    hi = np.r_[lo[1:], n]
    qpos = np.searchsorted(groups, q_group)
    qpos_c = np.minimum(qpos, len(groups) - 1)
    known = valid & (qpos < len(groups)) & (groups[qpos_c] == q_group)
    cand = np.full(len(q_time), -1, dtype=np.int64)
    qi = np.flatnonzero(known)
    qi = qi[np.argsort(qpos_c[qi], kind="stable")]
    ks = qpos_c[qi]
    cuts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1], True]) if len(qi) else np.zeros(1, dtype=np.int64)
    for a, b in itertools.pairwise(cuts):  # one searchsorted per thread
        k, sel = ks[a], qi[a:b]
        pos = lo[k] + np.searchsorted(s[lo[k]:hi[k]], q_time[sel], side="right") - 1
        cand[sel] = np.where(pos >= lo[k], pos, -1)
    active = np.flatnonzero(cand >= 0)
    while active.size:
        bad = e[cand[active]] < q_time[active]
        active = active[bad]
        cand[active] = par[cand[active]]
        active = active[cand[active] >= 0]
    hit = cand >= 0
    res[hit] = order[cand[hit]]
    return res


def _valid_ids(values: Sequence[object]) -> np.ndarray:
    """Which ids are usable for linking (JSON integers or strings)."""
    return np.array([type(v) in (int, str) for v in values], dtype=bool)


def _thread_codes(pids: Sequence[object], tids: Sequence[object]) -> np.ndarray:
    def codes(vals: Sequence[object]) -> np.ndarray:
        clean = np.array([v if type(v) in (int, str) else None for v in vals], dtype=object)
        c, _ = pd.factorize(clean, use_na_sentinel=False)
        return c.astype(np.int64)

    pc, tc = codes(pids), codes(tids)
    return pc * (int(tc.max(initial=0)) + 1) + tc


# --------------------------------------------------------------------------------------------- parse


#: rocprof's ``--hip-trace`` results.json is a Chrome trace too, but not Kineto's: its first event is ``{}`` and
#: every ``ts`` is a JSON string
_HIP_TRACE = re.compile(r'"traceEvents"\s*:\s*\[\s*\{\s*\}|"ts"\s*:\s*"\d')


def _sniff(head: str, name: str) -> bool:
    """A JSON trace: an object with ``traceEvents``, or Chrome's bare event array (``[{"ph": ..., "cat": ...``),
    and not rocprof's hip-trace JSON."""
    start = head.lstrip()[:1]
    if start == "{":
        found = '"traceEvents"' in head
    else:
        found = start == "[" and bool(re.search(r'"ph"\s*:', head)) and bool(re.search(r'"cat"\s*:', head))
    return found and not _HIP_TRACE.search(head)


def _chunks(data: bytes, source: str, context: dict) -> Iterator[bytes]:
    """The input as byte pieces: gzip decompressed as a stream (bounded), plain data as views of ``data``."""
    if data[:2] == GZIP_MAGIC:
        limit = int(context.get("max_bytes") or max_input_bytes())
        return gunzip_chunks(data, limit, source)
    _check_head(data, source)
    view = memoryview(data)
    return (view[k:k + _WINDOW] for k in range(0, len(data), _WINDOW))


def _check_head(data: bytes, source: str) -> None:
    """Refuse binary files (magic bytes, NULs at the start) without copying the whole input."""
    head = data[:8192]
    if head.strip():
        check_binary(head, source)


@register_format(FORMAT, "PyTorch profiler trace (Kineto export_chrome_trace JSON, plain or .gz): GPU kernels, "
                 "FLOPs/bytes from recorded shapes or CUPTI counters", _sniff, priority=20, gzip=True)
def parse(data: bytes, source: str, context: dict | None = None) -> Workload:
    """One row per GPU kernel, memcpy and memset event (or CUPTI range); see the module docstring.

    ``context``: ``max_bytes`` bounds gzip decompression (default: the input limit);
    ``tensor_flops_per_inst`` replaces the ×512 tensor-instruction factor for CUPTI counters.
    """
    context = context or {}
    chunks = _chunks(data, source, context)
    if data[:2] == GZIP_MAGIC:  # binary content inside the gzip: checked on the first decompressed piece
        first = next(chunks, b"")
        _check_head(first, source)
        chunks = _chain(first, chunks)
    try:
        sc = scan(chunks, source, OPS)
    except RecursionError:
        raise InputError(where=source, text="the input is nested too deeply to read.", hint=EXPORT_HINT) from None
    limits.ROWS.check(sc.events, source, f"{sc.events:,} trace events")
    if not sc.seen_events:
        keys = ", ".join(list(sc.top)[:8]) or "none"
        raise InputError(where=f"{source}: $", expected='key "traceEvents"', found=f"keys {keys}",
                         hint="is this a PyTorch profiler trace? Export one with prof.export_chrome_trace(path).")
    return _build(sc, source, context)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _build(sc: Scan, source: str, context: dict) -> Workload:
    warnings: list[str] = []
    kernels = sc.gpu
    n_kern = sum(1 for r in kernels if r[1] == K_KERNEL)
    if not kernels and not sc.ranges:
        _no_gpu_events(sc, source)
    reasons: dict[int, str] = {}
    n = len(kernels)
    cols = list(zip(*kernels, strict=True)) if kernels else [()] * 9
    ev_idx, kind, names, ts_raw, dur_raw, corr_raw, ext_raw, dev_raw, bytes_raw = cols
    kind = np.array(kind, dtype=np.int64)
    for k, nm in enumerate(names):
        if type(nm) is not str or not nm.strip():
            reasons[k] = f"name: expected a kernel name, found {json.dumps(nm)[:40]}"
    names = [nm if type(nm) is str else "" for nm in names]
    dev_raw = [d if type(d) is int else None for d in dev_raw]
    ts = _numbers(ts_raw, "ts", reasons, negative_ok=True)
    dur = _numbers(dur_raw, "dur", reasons)
    nbytes = _numbers(bytes_raw, "args.bytes", None)
    corr = _ids(corr_raw)
    ext = _ids(ext_raw)

    # --- the launching op of every kernel: correlation → runtime launch → innermost enclosing cpu_op
    op_of = np.full(n, -1, dtype=np.int64)
    ops = sc.ops
    n_ops = len(ops)
    if ops and n:
        o_pid, o_tid, o_ts, o_dur, o_name, o_ext, o_res, _ = zip(*ops, strict=True)
        o_start = _numbers(o_ts, "ts", None, negative_ok=True)
        o_end = o_start + np.nan_to_num(_numbers(o_dur, "dur", None))
        runtime = sc.runtime
        if runtime:
            r_pid, r_tid, r_ts, r_corr, _ = zip(*runtime, strict=True)
            threads = _thread_codes(list(o_pid) + list(r_pid), list(o_tid) + list(r_tid))
            r_time = _numbers(r_ts, "ts", None, negative_ok=True)
            launch_op = innermost(threads[:n_ops], o_start, o_end, threads[n_ops:], r_time)
            r_index = _ids(r_corr)
            first = ~r_index.duplicated()
            r_index, launch_op = r_index[first], launch_op[first]
            at = r_index.get_indexer(corr)
            at[~_valid_ids(corr_raw)] = -1
            op_of = np.where(at >= 0, launch_op[np.maximum(at, 0)], -1)
        # fallback (newer traces): the kernel's External id is its op's External id, not its correlation
        ext_differs = _valid_ids(ext_raw) & np.array([e != c for e, c in zip(ext_raw, corr_raw, strict=True)],
                                                     dtype=bool)
        need = (op_of < 0) & ext_differs
        if need.any():
            o_index = _ids(o_ext)
            keep = ~o_index.duplicated()
            pos = o_index[keep].get_indexer(ext[need])
            op_ids = np.flatnonzero(keep)
            op_of[need] = np.where(pos >= 0, op_ids[np.maximum(pos, 0)], -1)
        res_of_op = np.array(o_res, dtype=np.int64)
        op_names = np.array([nm if type(nm) is str else None for nm in o_name], dtype=object)
    else:
        res_of_op = np.zeros(0, dtype=np.int64)
        op_names = np.zeros(0, dtype=object)
    any_shapes = any(r[7] for r in ops)

    # --- FLOPs / bytes from the op's formula, shared among its kernels by duration
    results = [op_cost(*sig) for sig in sc.signatures]
    r_flops = np.array([r[0] if r else np.nan for r in results] + [np.nan])
    r_bytes = np.array([r[1] if r else np.nan for r in results] + [np.nan])
    r_prec = np.array([r[2] if r else None for r in results] + [None], dtype=object)
    r_unit = np.array([r[3] if r else None for r in results] + [None], dtype=object)
    r_assumed = np.array([bool(r and r[4]) for r in results] + [False])
    is_kernel = kind == K_KERNEL
    has_op = op_of >= 0
    res = np.full(n, -1, dtype=np.int64)
    res[has_op] = res_of_op[op_of[has_op]]
    costed = is_kernel & (res >= 0)
    flops = np.full(n, np.nan)
    b_hbm = np.full(n, np.nan)
    b_pcie = np.full(n, np.nan)
    precision = np.full(n, None, dtype=object)
    unit = np.full(n, None, dtype=object)
    if costed.any():
        w = np.where(np.isnan(dur) | (dur < 0), 0.0, dur)
        ops_k = op_of[costed]
        tot = np.bincount(ops_k, weights=w[costed], minlength=n_ops)
        cnt = np.bincount(ops_k, minlength=n_ops)
        share = np.where(tot[ops_k] > 0, w[costed] / np.where(tot[ops_k] > 0, tot[ops_k], 1.0), 1.0 / cnt[ops_k])
        rk = res[costed]
        flops[costed] = r_flops[rk] * share
        b_hbm[costed] = r_bytes[rk] * share
        precision[costed] = r_prec[rk]
        unit[costed] = r_unit[rk]
        ok = ~np.isnan(flops)
        costed_ok = np.flatnonzero(costed)[ok[costed]]
        fp32_mx = costed_ok[(precision[costed_ok] == "fp32") & (unit[costed_ok] == "matrix")]
        if fp32_mx.size:  # fp32 matmuls that ran on tensor cores as TF32 (the kernel name says so)
            tf32 = pd.Series([names[k] for k in fp32_mx], dtype=object).str.contains(_TF32_KERNEL).to_numpy(bool)
            precision[fp32_mx[tf32]] = "tf32"
        n_assumed = np.unique(op_of[costed_ok][r_assumed[res[costed_ok]]]).size
        if n_assumed:
            warnings.append(f"{_n(n_assumed, 'convolution op')} recorded no stride or padding (no 'Concrete "
                            "Inputs'; PyTorch < 2.1): output and input were assumed the same size (stride 1, 'same' "
                            "padding), which overcounts a strided convolution's FLOPs (or its grad input's bytes). "
                            "Hint: profile with a newer PyTorch for exact convolution FLOPs.")

    # --- memcpy / memset: the bytes the trace records
    group = np.full(n, None, dtype=object)
    group[has_op & is_kernel] = op_names[op_of[has_op & is_kernel]]
    mem = ~is_kernel
    if mem.any():
        flops[mem] = 0.0
        group[kind == K_MEMCPY] = "memcpy"
        group[kind == K_MEMSET] = "memset"
        mk = np.flatnonzero(mem)
        low = pd.Series([names[k] for k in mk], dtype=object).str.lower()
        copy = kind[mk] == K_MEMCPY
        host = copy & low.str.contains("htod|dtoh|hosttodevice|devicetohost", regex=True).to_numpy(bool)
        d2d = copy & ~host & low.str.contains("dtod|devicetodevice", regex=True).to_numpy(bool)
        h2h = copy & ~host & ~d2d & low.str.contains("htoh|hosttohost", regex=True).to_numpy(bool)
        b = nbytes[mk]
        b_hbm[mk] = np.where(d2d, 2 * b, np.where(h2h, np.nan, b))
        b_pcie[mk[host]] = b[host]

    time_s = dur / 1e6
    rows = np.array([str(c) if c is not None else f"event {i}" for c, i in zip(corr_raw, ev_idx, strict=True)],
                    dtype=object)

    # --- CUPTI range counters
    extra: dict[str, np.ndarray] = {}
    range_frame = None
    if sc.ranges:
        factor = float(context.get("tensor_flops_per_inst") or TENSOR_FLOPS_PER_INST)
        r_names = [nm if type(nm) is str else str(nm) for _, nm, _ in sc.ranges]
        points = [counter_point(a, nm, factor) for (_, _, a), nm in zip(sc.ranges, r_names, strict=True)]
        if any(p["estimated"] for p in points):
            warnings.append(f"tensor-core FLOPs estimated as {factor:g} × sm__inst_executed_pipe_tensor.sum (the "
                            "factor depends on the architecture and instruction). Hint: add the "
                            "sm__ops_path_tensor_* counters to profiler_metrics for exact tensor FLOPs.")
        if n_kern:
            kern_pos = np.flatnonzero(is_kernel)
            kframe = pd.DataFrame({"name": [names[k] for k in kern_pos], "pos": kern_pos, "ts": ts[kern_pos]})
            kframe = kframe.sort_values(["ts", "pos"], kind="stable")
            kframe["nth"] = kframe.groupby("name", sort=False).cumcount()
            rframe = pd.DataFrame({"name": r_names, "r": np.arange(len(points))})
            rframe["nth"] = rframe.groupby("name", sort=False).cumcount()
            m = rframe.merge(kframe, on=["name", "nth"], how="inner")
            for r, k in zip(m["r"].to_numpy(), m["pos"].to_numpy(), strict=True):
                p = points[r]
                flops[k], b_hbm[k] = p["flops"], p["bytes_hbm"]
                precision[k], unit[k] = p["precision"], p["unit"]
                for lvl in ("bytes_l2", "bytes_l1"):
                    extra.setdefault(lvl, np.full(n, np.nan))[k] = p[lvl]
            if len(m) < len(points):
                warnings.append(f"{len(points) - len(m)} of {_n(len(points), 'CUPTI counter range')} match no "
                                "kernel event of the same name and order; their counters were not used.")
        else:
            range_frame = _range_rows(sc, points, r_names, source, warnings)

    # --- rows left out
    skipped: list[Skipped] = []
    keep = np.ones(n, dtype=bool)
    if reasons:
        keep[list(reasons)] = False
        skipped = [skip(source, rows[k], reasons[k]) for k in sorted(reasons)]
    kept = int(keep.sum()) + (len(range_frame) if range_frame is not None else 0)
    if not kept:
        first = skipped[0]
        where = first.row if first.row.startswith("event ") else f"correlation {first.row}"
        raise InputError(where=f"{source}: {where}", text=f"no usable kernel events; the first problem: "
                         f"{first.reason}.", hint=EXPORT_HINT)

    unknown = int((is_kernel & keep & np.isnan(flops)).sum())
    n_kernels = int((is_kernel & keep).sum())
    if unknown:
        if not ops and not sc.ranges:  # a GPU-only trace: nothing launched the kernels as far as it shows
            why = "the trace has no CPU ops (cpu_op events) to link them to. Hint: " + CPU_OPS_HINT
        elif not any_shapes and not sc.ranges:
            why = "the trace has no input shapes. Hint: " + SHAPES_HINT
        else:
            miss = pd.Series(group[is_kernel & keep & np.isnan(flops)]).fillna("launching op not found")
            top = ", ".join(f"{k} ×{v}" for k, v in miss.value_counts().head(4).items())
            why = f"the launching op is not found, or has no shapes or no FLOP formula here ({top})."
        verb = "has" if unknown == 1 else "have"
        warnings.append(f"{unknown} of {_n(n_kernels, 'kernel')} {verb} unknown FLOPs and bytes (left empty, not "
                        f"zero): {why}")
    zero = int((keep & (dur == 0)).sum())
    if zero:
        warnings.append(f"{_n(zero, 'event')} {'lasts' if zero == 1 else 'last'} 0 µs (the trace rounds to whole "
                        "µs): achieved rates are unknown for them.")
    if sc.truncated_at is not None:
        warnings.append(f"the file ends early, at character {sc.truncated_at} (truncated?): the {sc.events} events "
                        "before the break were read, the rest is missing.")
    if sc.not_objects:
        warnings.append(f"{_n(sc.not_objects, 'entry', 'entries')} of traceEvents {'is' if sc.not_objects == 1 else 'are'} "
                        "not a JSON object and ignored.")

    columns: dict[str, object] = {
        "name": np.array(names, dtype=object), "flops": flops, "time_s": time_s,
        "precision": precision, "unit": unit, "group": group, "source": np.full(n, source, dtype=object),
        "row": rows, "bytes_hbm": b_hbm,
    }
    if not np.isnan(b_pcie).all():
        columns["bytes_pcie"] = b_pcie
    columns.update(extra)
    frame = make_frame(columns, n)
    if not keep.all():
        frame = frame[keep].reset_index(drop=True)
    if range_frame is not None:
        frame = pd.concat([frame, range_frame], ignore_index=True, sort=False) if len(frame) else range_frame
    for col in ("precision", "unit"):
        frame[col] = pd.Categorical(frame[col].astype(object).where(frame[col].notna(), None))
    device, meta = _device(sc, np.array(dev_raw, dtype=object)[keep] if n else np.zeros(0, dtype=object), warnings)
    meta["profiler"] = "PyTorch profiler (Kineto trace)"
    dist = sc.top.get("distributedInfo")  # {"backend": "nccl", "rank": 3, "world_size": 8} in a job's rank traces
    for key in ("rank", "world_size") if isinstance(dist, dict) else ():
        if type(dist.get(key)) is int and dist[key] >= 0:
            meta[key] = str(dist[key])
    meta["record_shapes"] = "true" if any_shapes or sc.top.get("record_shapes") == 1 else "false"
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
    raise InputError(where=source, expected='GPU kernel events ("cat": "kernel")',
                     found=f"none among {sc.events} events ({len(sc.ops)} cpu_op, {len(sc.runtime)} cuda_runtime)",
                     hint="profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]; a CPU-only "
                     "trace has no kernels to place on a roofline.")


def _n(k: int, word: str, plural: str | None = None) -> str:
    """``3 kernels``, ``1 kernel``."""
    return f"{k:,} {word if k == 1 else (plural or word + ('es' if word.endswith('ch') else 's'))}"


def _range_rows(sc: Scan, points: list[dict], r_names: list[str], source: str, warnings: list[str]) -> pd.DataFrame:
    """Rows from CUPTI ranges alone (range profiler without kernel tracing)."""
    m = len(points)
    group = np.full(m, None, dtype=object)
    launches = sorted((r for r in sc.runtime if isinstance(r[4], str) and "LaunchKernel" in r[4]),
                      key=lambda r: r[2] if type(r[2]) in (int, float) else math.inf)
    if launches and len(launches) == m and sc.ops:
        o_pid, o_tid, o_ts, o_dur, o_name, *_ = zip(*sc.ops, strict=True)
        l_pid, l_tid, l_ts = [r[0] for r in launches], [r[1] for r in launches], [r[2] for r in launches]
        threads = _thread_codes(list(o_pid) + l_pid, list(o_tid) + l_tid)
        start = _numbers(o_ts, "ts", None, negative_ok=True)
        end = start + np.nan_to_num(_numbers(o_dur, "dur", None))
        at = innermost(threads[: len(o_pid)], start, end, threads[len(o_pid):],
                       _numbers(l_ts, "ts", None, negative_ok=True))
        op_names = np.array([nm if type(nm) is str else None for nm in o_name], dtype=object)
        group = np.where(at >= 0, op_names[np.maximum(at, 0)], None)
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
    by_id = {}
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
