"""AMD profiler exports (docs/formats.md): one module per format, on the shared pieces of :mod:`.rocprof_common`.

========================================  ==================================  =================================
format                                    module                              file
========================================  ==================================  =================================
``rocprof-v1``                            :mod:`.rocprof_v1`                  rocprof results.csv, per-pass CSVs
``rocprof-v1-stats``                      :mod:`.rocprof_v1`                  results.stats.csv (--stats)
``rocprof-v1-hiptrace``                   :mod:`.rocprof_v1`                  results.json (--hip-trace)
``rocprof-v2``                            :mod:`.rocprof_v2`                  rocprofv2 file-plugin CSV
``rocprof-v3``                            :mod:`.rocprofv3`                   counter_collection.csv
``rocprof-v3-trace``                      :mod:`.rocprofv3`                   kernel_trace.csv
``rocprof-v3-json``                       :mod:`.rocprofv3`                   results.json (--output-format json)
``rocprof-v3-db``                         :mod:`.rocpd`                       <pid>_results.db (rocpd, SQLite)
``rocprof-v3-agent-info`` (companion)     :mod:`.rocprofv3`                   agent_info.csv
``rocprof-compute``                       :mod:`.rocprof_compute`             pmc_perf.csv
``rocprof-compute-kernel-top``            :mod:`.rocprof_compute`             pmc_kernel_top.csv
``rocprof-compute-sysinfo`` (companion)   :mod:`.rocprof_compute`             sysinfo.csv
``rocprof-compute-dispatch-info`` (c.)    :mod:`.rocprof_compute`             pmc_dispatch_info.csv
``rocprof-compute-roofline`` (companion)  :mod:`.ceilings`                    roofline.csv (measured ceilings)
========================================  ==================================  =================================

:func:`reconcile` puts together the files of one run read at once (:func:`roofcore.ingest.read_many`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..models import Workload
from . import ceilings, rocprof_compute, rocprof_v1, rocprof_v2, rocprofv3  # noqa: F401  (registration)
from .ceilings import parse_roofline
from .rocprof_common import no_time_warning
from .rocprof_compute import parse_compute, parse_dispatch_info, parse_kernel_top, parse_sysinfo
from .rocprof_v1 import parse_hiptrace, parse_stats, parse_v1
from .rocprof_v2 import parse_v2
from .rocprofv3 import V3_NO_TIME, parse_agent_info, parse_json, parse_trace, parse_v3

#: per-kernel-name summaries: redundant next to the per-dispatch rows of the same run
SUMMARIES = ("rocprof-v1-stats", "rocprof-compute-kernel-top")
#: a summary and the per-dispatch counter files the same run of the same tool writes beside it
SAME_RUN = {"rocprof-v1-stats": ("rocprof-v1",), "rocprof-compute-kernel-top": ("rocprof-compute",)}


def _same_run(summary: Workload, detail: Workload) -> bool:
    """Whether ``summary`` repeats ``detail``'s dispatches: the same tool's run, or dispatches without counters (a
    finer timeline). Next to another tool's counters it is the timeline they join (:mod:`roofcore.ingest.join`)."""
    from .join import role_of

    return role_of(detail) != "counters" or any(f in SAME_RUN.get(s, ()) for s in summary.formats
                                                for f in detail.formats)


def join_traces(workloads: list[Workload]) -> list[Workload]:
    """Counter collections without times (rocprofv3 0.x) get the times of the kernel traces read with them.

    Rows are matched by dispatch id (by agent and id where an id repeats across agents or processes); a pair whose
    kernel names differ is not joined (two runs), which a warning counts. Trace rows that match no counter row are
    kept as time-only rows.
    """
    counts = [w for w in workloads if w.formats == ("rocprof-v3",) and w.frame["time_s"].isna().all()]
    traces = [w for w in workloads if w.formats == ("rocprof-v3-trace",)]
    if not counts or not traces:
        return workloads
    taken = {id(w) for w in (*counts, *traces)}  # by identity: workloads hold frames, which do not compare
    out = [w for w in workloads if id(w) not in taken]
    tf = pd.concat([t.frame for t in traces], ignore_index=True, sort=False)
    used = np.zeros(len(tf), dtype=bool)
    joined: list[Workload] = []
    for c in counts:
        key = c.meta.get("row_id")
        ok_traces = [t.meta.get("row_id") == key for t in traces]
        if not all(ok_traces):
            out.append(c)
            continue
        cf = c.frame.copy()
        ckey, tkey = _keys(cf), _keys(tf)
        if ckey[1].duplicated().any() or tkey[1].duplicated().any():
            ckey, tkey = ckey[0] + "/" + ckey[1], tkey[0] + "/" + tkey[1]
        else:
            ckey, tkey = ckey[1], tkey[1]
        index = {k: i for i, k in enumerate(tkey) if not used[i]}
        pos = np.array([index.get(k, -1) for k in ckey], dtype=np.int64)
        hit = pos >= 0
        same = np.zeros(len(cf), dtype=bool)
        same[hit] = (cf["name"].astype(str).to_numpy()[hit] == tf["name"].astype(str).to_numpy()[pos[hit]])
        time = cf["time_s"].to_numpy(dtype=np.float64).copy()
        time[same] = tf["time_s"].to_numpy(dtype=np.float64)[pos[same]]
        cf["time_s"] = time
        used[pos[same]] = True
        drop = no_time_warning(c.name, ("Start_Timestamp", "End_Timestamp"), V3_NO_TIME)
        warn = [x for x in c.warnings if x != drop]
        names = ", ".join(t.name for t in traces)
        if (hit & ~same).any():
            warn.append(f"{c.name}: {int((hit & ~same).sum())} dispatch(es) have another kernel name in {names} "
                        "(another run?): not joined, their times are unknown.")
        if (~hit).any():
            warn.append(f"{c.name}: {int((~hit).sum())} of {len(cf)} dispatch(es) are not in {names}: their times "
                        "are unknown.")
        joined.append(replace(c, frame=cf, warnings=tuple(warn)))
    if not joined:
        return workloads
    rest = tf[~used]
    t_warn = [x for t in traces for x in t.warnings if len(rest) or not x.startswith(f"{t.name}: no FLOP or byte")]
    first = joined[0]
    frame = pd.concat([first.frame, rest], ignore_index=True, sort=False) if len(rest) else first.frame
    merged = replace(first, frame=frame, name=" + ".join([first.name, *(t.name for t in traces)]),
                     sources=(*first.sources, *(s for t in traces for s in t.sources)),
                     formats=("rocprof-v3", "rocprof-v3-trace"), skipped=(*first.skipped,
                                                                          *(s for t in traces for s in t.skipped)),
                     warnings=(*first.warnings, *t_warn))
    return [merged, *joined[1:], *out]


def _keys(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(agent number, row id) as text: ``Agent 1``, ``GPU 1`` and ``1`` are the same agent."""
    gpu = frame["gpu"] if "gpu" in frame.columns else pd.Series([""] * len(frame))
    agent = gpu.astype(str).str.extract(r"(\d+)\s*$")[0].fillna("")
    return agent.reset_index(drop=True), frame["row"].astype(str).str.strip().reset_index(drop=True)


def reconcile(workloads: list[Workload]) -> list[Workload]:
    """The files of one run, read together: rocprofv3 counters get their kernel trace's times (by dispatch id), and a
    per-kernel summary (``--stats``, ``pmc_kernel_top.csv``) next to per-dispatch rocprof rows of the same run is left
    out, with a warning, so no time is counted twice. Other workloads pass through (a ``--stats`` summary next to
    rocprofv3 or rocprof-compute counters is a timeline for them)."""
    workloads = join_traces(workloads)
    summary = {id(w) for w in workloads if w.formats and all(f in SUMMARIES for f in w.formats)}
    detail = [w for w in workloads if id(w) not in summary and any(f.startswith("rocprof") for f in w.formats)]
    summaries = [w for w in workloads if id(w) in summary and any(_same_run(w, d) for d in detail)]
    summary = {id(w) for w in summaries}
    if not summaries or not detail:
        return workloads
    names = ", ".join(w.name for w in detail)
    note = tuple(f"{s.name}: a per-kernel summary of the run whose dispatches {names} lists one by one; those are "
                 "used, and this summary is left out (its times would count twice)." for s in summaries)
    first = replace(detail[0], warnings=(*detail[0].warnings, *note),  # the summary's unread rows still said
                    skipped=(*detail[0].skipped, *(row for s in summaries for row in s.skipped)))
    return [first if w is detail[0] else w for w in workloads if id(w) not in summary]


__all__ = [
    "SUMMARIES",
    "join_traces",
    "parse_agent_info",
    "parse_compute",
    "parse_dispatch_info",
    "parse_hiptrace",
    "parse_json",
    "parse_kernel_top",
    "parse_roofline",
    "parse_stats",
    "parse_sysinfo",
    "parse_trace",
    "parse_v1",
    "parse_v2",
    "parse_v3",
    "reconcile",
]
