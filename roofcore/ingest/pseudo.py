"""Queue and runtime pseudo-entries: rows a profiler lists among the kernels that are not kernels.

rocprof's ``--hip-trace``/``--sys-trace`` summaries and the GPU lanes of AMD traces list the packets the runtime
puts on a queue to order work (``<barrier packet>``, HSA barrier-AND/OR and marker packets, roctracer's
``Unknown command type`` for an operation it cannot name), and some exports give the host API call that issued an
operation (``hipMemcpy``, ``cudaLaunchKernel``) as the row's name. They take queue time but run no kernel code: a
roofline cannot place them, and ranked among the kernels a barrier that waits on a copy tops the list.

:func:`split_runtime` runs once on every format's workload right after parsing (``roofcore.ingest.reading``): rows
whose name is one of :data:`PATTERNS` leave the frame, and ``Workload.runtime`` keeps their count and time by
name (:class:`~roofcore.models.RuntimeEntries`; :func:`roofcore.ingest.combine` adds the files' together). The
rest of the tool never sees them as kernels (ranking, headline, recommendations, coverage) and shows them once
(:func:`runtime_line`). Real copies and fills are kept as they are read (``[CUDA memcpy HtoD]``, ``CopyHostToDevice``,
rocclr's blit kernels ``__amd_rocclr_copyBuffer``): those move data with a byte count.

The rule is the name alone, matched whole (surrounding quotes and blanks ignored), so it holds for every format.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..models import RuntimeEntries, RuntimeEntry, Workload

#: ``(kind, pattern)``: a name that matches a pattern whole is a runtime or queue entry of that kind. Written in the
#: syntax Python's ``re`` and RE2 (Arrow's matcher) share. API names need a capital (or ``_``) after the prefix, so
#: kernels such as ``hipcub::…`` or Apex's ``cuApplyLayerNorm`` stay kernels.
PATTERNS: tuple[tuple[str, str], ...] = (
    # rocprof v1 names HSA barrier/marker packets "<barrier packet>"; HSA's own names are barrier-AND / barrier-OR
    ("barrier packet", r"(?i:<?\s*barrier(?:[ _-]?(?:and|or))?(?:[ _-]?packet)?\s*>?)"),
    ("marker packet", r"(?i:<?\s*marker(?:[ _-]?packet)?\s*>?)"),
    # roctracer_op_string() for a queue operation it has no name for
    ("unknown queue command", r"(?i:unknown command type)"),
    ("HIP/HSA API call", r"(?:hip[A-Z]|__hip[A-Z]|hsa_[a-z]|roctx[A-Z])\w*"),
    ("CUDA API call", r"(?:cuda[A-Z]|cu(?:Launch|Memcpy|Memset|MemAlloc|MemFree|Stream|Event|Ctx|Module|Graph|Init"
                      r"|Device)(?:[A-Z0-9_]|$))\w*"),
    # collective library calls; the kernels that run them are ncclKernel_…/ncclDevKernel_… and stay kernels
    ("RCCL/NCCL API call", r"nccl(?:AllReduce|AllGather|ReduceScatter|Reduce|Broadcast|Bcast|Send|Recv|AllToAllv?"
                           r"|Gather|Scatter|Group(?:Start|End)|Comm[A-Z]\w*|GetUniqueId|GetVersion|GetErrorString"
                           r"|GetLastError|Mem(?:Alloc|Free)|RedOp\w*)"),
)

_QUOTES = r'\s*"*\s*'
_ANY = "^" + _QUOTES + "(?:" + "|".join(p for _, p in PATTERNS) + ")" + _QUOTES + "$"
_EACH = tuple((kind, re.compile("^" + _QUOTES + "(?:" + p + ")" + _QUOTES + "$")) for kind, p in PATTERNS)


def kind_of(name: object) -> str | None:
    """The kind of runtime or queue entry ``name`` is (``"barrier packet"``, ``"HIP/HSA API call"``, ...), or None
    for a kernel (or anything else the tool keeps)."""
    if not isinstance(name, str):
        return None
    return next((kind for kind, p in _EACH if p.match(name)), None)


def is_runtime(names: pd.Series) -> np.ndarray:
    """Which names are runtime or queue entries (bool per row): what :func:`split_runtime` takes out of a frame,
    so a parser's own counts can leave them out as well."""
    return _hits(names)


def _hits(names: pd.Series) -> np.ndarray:
    """Which rows are runtime entries: one RE2 pass in Arrow over the distinct names (names repeat: a million
    launches have a few thousand), missing names none."""
    codes, uniq = pd.factorize(names.to_numpy(dtype=object), use_na_sentinel=True)
    try:
        arr = pa.array(uniq, type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a name that is not text (a number): checked one by one
        hit = np.fromiter((kind_of(x) is not None for x in uniq), dtype=bool, count=len(uniq))
    else:
        hit = np.asarray(pc.fill_null(pc.match_substring_regex(arr, _ANY), False).to_numpy(zero_copy_only=False),
                         dtype=bool)
    found: np.ndarray = np.append(hit, False)[codes]  # code -1 (missing): the False appended
    return found


def split_runtime(w: Workload) -> Workload:
    """``w`` without its runtime and queue entries, which go to ``w.runtime`` (added to any it had); ``w`` itself
    when it has none. A file of nothing but such entries is refused: it holds no kernel."""
    f = w.frame
    if f.empty or "name" not in f.columns:
        return w
    hit = _hits(f["name"])
    if not hit.any():
        return w
    gone = f[hit]
    entries = _entries(gone)
    if hit.all():
        shown = ", ".join(e.name for e in entries[:3]) + (", …" if len(entries) > 3 else "")
        raise InputError(where=", ".join(w.sources) or w.name, text=f"every row is a runtime or queue entry ({shown}): "
                         "host API calls or queue packets, not kernels.",
                         hint="export the GPU kernels: rocprofv3 --kernel-trace --output-format csv, rocprof --stats "
                              "(results.stats.csv), nsys stats --report cuda_gpu_kern_sum, or the profiler's kernel "
                              "summary.")
    found = RuntimeEntries(entries)
    return replace(w, frame=f[~hit].reset_index(drop=True),
                   runtime=found if w.runtime is None else w.runtime.merged(found))


def _entries(rows: pd.DataFrame) -> tuple[RuntimeEntry, ...]:
    """One entry per distinct name: launches and total time (NaN when no row's time is known)."""
    names = rows["name"].astype(object).map(lambda x: str(x).strip().strip('"').strip())
    count = rows["count"].to_numpy(dtype=np.float64) if "count" in rows.columns else np.ones(len(rows))
    time = rows["time_s"].to_numpy(dtype=np.float64) if "time_s" in rows.columns else np.full(len(rows), np.nan)
    g = pd.DataFrame({"name": names.to_numpy(), "count": count, "time_s": time}).groupby("name", sort=False)
    agg = g.agg(count=("count", "sum"), time_s=("time_s", lambda t: t.sum(min_count=1)))
    return tuple(RuntimeEntry(str(n), kind_of(n) or "runtime entry", int(c), float(t))
                 for n, c, t in zip(agg.index, agg["count"], agg["time_s"], strict=True))


def runtime_line(runtime: RuntimeEntries | None, shown: int = 3) -> str:
    """``Runtime/queue entries: 12, 3.4 ms (not kernels: left out of the analysis) — <barrier packet> ×10 (3 ms),
    hipMemcpy ×2 (0.4 ms)``; empty when there are none."""
    if runtime is None or not runtime.entries:
        return ""
    from ..units import fmt_time

    def one(e: RuntimeEntry) -> str:
        return f"{e.name} ×{e.count:,}" + (f" ({fmt_time(e.time_s)})" if np.isfinite(e.time_s) else "")

    top = sorted(runtime.entries, key=lambda e: (-np.nan_to_num(e.time_s, nan=-1.0), -e.count))
    more = len(top) - shown
    time = fmt_time(runtime.time_s) if np.isfinite(runtime.time_s) else "time unknown"
    return (f"Runtime/queue entries: {runtime.count:,}, {time} (not kernels: left out of the analysis) — "
            + ", ".join(one(e) for e in top[:shown]) + (f" and {more} more" if more > 0 else ""))
