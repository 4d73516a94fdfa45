"""What a roofline chart cannot place, said and handled: kernels whose FLOPs or bytes are unknown (and the
profiler options that collect them), and data movement (0 FLOP), judged by its bandwidth against the roof."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..counting import kernel_counts, plural, rows_are_launches
from ..models import Workload
from ..roofline import Flag

#: warnings that say FLOPs or bytes are unknown and how to collect them (the import's own, with the exact options)
_MISSING_NOTE = re.compile(r"unknown|no (CUDA-core )?(FLOP|byte|off-chip)|no counters for", re.IGNORECASE)
_HOW_NOTE = re.compile(r"Hint:|--metrics|--pmc|profile with|record_shapes|collect ", re.IGNORECASE)


def note_and_script(text: str) -> tuple[str, str]:
    """A warning's prose (its first line) and the shell commands its later lines hold, one a line (``""`` where it
    has none): the targeted counter commands of a timeline (:mod:`roofcore.ingest.join_commands`) are shown as a
    script to paste, apart from the sentence that introduces them."""
    head, _, script = str(text).partition("\n")
    return head, script


def collect_commands(workload: Workload) -> list[str]:
    """What to run to collect the FLOPs and bytes a workload lacks, in the profiler's own options.

    The import's warnings say it where the format knows (the ncu metrics, the PyTorch profiler's arguments,
    the rocprof counters); a command for the format family is added where none of them gives it whole."""
    from ..ingest import kineto
    from ..ingest.kineto_hint import unknown_flops_hint
    from ..ingest.ncu_metrics import PROFILE_COMMAND

    out = [w for w in dict.fromkeys(workload.warnings) if _MISSING_NOTE.search(w) and _HOW_NOTE.search(w)]
    said = " ".join(out)
    fams = {f.split("-")[0] for f in workload.formats}
    metrics = PROFILE_COMMAND.split(" --metrics ", 1)[1].split()[0]
    if fams & {"ncu", "nsys", "nvprof"} and metrics not in said:
        out.append(("Nsight Systems records kernel times only; for FLOPs and bytes profile the same kernels with "
                    "Nsight Compute: " if "nsys" in fams else "Profile with Nsight Compute: ") + PROFILE_COMMAND)
    hint = unknown_flops_hint(workload) if "pytorch" in fams else ""
    if hint and not (hint in said or kineto.SHAPES_HINT in said or kineto.CPU_OPS_HINT in said):
        out.append("PyTorch profiler: " + hint + ".")  # as the trace allows: no record_shapes once it has shapes
    if "rocprof" in fams and not re.search(r"--pmc|pmc:|pmc_perf", said):
        out.append("rocprof-compute profile -n run -- ./app, then upload the run's pmc_perf.csv with its sysinfo.csv "
                   "(and roofline.csv for measured roofs)")
    if "inventory" in fams and not out:
        out.append("Give every row flops and bytes columns (or an op with its shapes).")
    return out


@dataclass(frozen=True)
class ChartGaps:
    """Why kernels of an analysis are not on its roofline chart (counts over the whole workload, first device), in
    kernels as every page counts them (:mod:`roofcore.counting`: launches of one kernel are one kernel)."""

    total: int  #: kernels in the analysis
    drawn: int  #: kernels with a mark
    missing_flops: int  #: FLOPs unknown
    missing_bytes: int  #: off-chip bytes unknown
    unknown: int  #: either unknown: no roofline at all
    moves: int  #: 0 FLOP with a known roof: data movement, judged by bandwidth instead
    commands: tuple[str, ...]  #: how to collect what is missing
    rest: int = 0  #: left out otherwise (the top-kernels setting, no positive time or rate)
    launches: tuple[int, int] = (0, 0)  #: launches drawn and in all, where rows are launches (else (0, 0))

    @property
    def text(self) -> str:
        """One paragraph for the chart area: what is drawn, what is missing for the rest, where moves are."""
        if self.drawn == self.total and not (self.unknown or self.moves or self.rest):
            return ""
        drawn, every = self.launches
        if not self.drawn:
            head = f"No kernel of {self.total:,}" + (f" ({every:,} launches)" if every else "") + " can be drawn"
        else:
            head = (f"Drawn: {self.drawn:,} of {plural(self.total, 'kernel')}"
                    + (f" ({drawn:,} of {every:,} launches)" if every else "") + ". Not drawn")
        parts = []
        if self.unknown:
            what = [f"FLOPs unknown for {self.missing_flops:,}" if self.missing_flops else "",
                    f"off-chip bytes unknown for {self.missing_bytes:,}" if self.missing_bytes else ""]
            parts.append(f"{self.unknown:,} {'has' if self.unknown == 1 else 'have'} no roofline "
                         f"({', '.join(w for w in what if w)}: unknown, not zero)")
        if self.moves:
            parts.append(f"{self.moves:,} {'moves' if self.moves == 1 else 'move'} data without arithmetic (0 FLOP), "
                         "which a log-log roofline cannot place: the achieved bandwidth against the memory or link "
                         "roof is in the data-movement table below")
        if self.rest > 0:
            parts.append(f"{self.rest:,} left out by the top-kernels setting, or with no positive time or rate")
        return head + ": " + "; ".join(parts) + "." + (" To collect what is missing:" if self.commands else "")


def chart_gaps(analysis: Analysis, drawn: int | np.ndarray) -> ChartGaps:
    """Counts of :class:`ChartGaps` for a chart that drew the kernels of rows ``drawn`` (``RooflineFigure.rows``;
    a number of rows, ``RooflineFigure.kernels``, where the rows are not known)."""
    r = analysis.results[0]
    frame = analysis.workload.frame
    flags = r.flags.astype(np.int64)
    flops = frame["flops"].to_numpy(dtype=np.float64)
    known = ~np.isnan(r.t_roof)
    moves = known & (flops == 0)
    if isinstance(drawn, int | np.integer):  # rows drawn, not which: each row counts as a kernel
        n_drawn = int(drawn)
        rest = len(flops) - n_drawn - int((~known).sum()) - int(moves.sum())
        kernels = {"total": len(flops), "drawn": n_drawn, "unknown": int((~known).sum()), "moves": int(moves.sum()),
                   "missing_flops": int(((flags & int(Flag.MISSING_FLOPS)) != 0).sum()),
                   "missing_bytes": int(((flags & int(Flag.MISSING_BYTES)) != 0).sum()), "rest": max(rest, 0)}
        launches = (0, 0)
    else:
        on = np.zeros(len(flops), dtype=bool)
        on[np.asarray(drawn, dtype=np.int64)] = True

        def k(mask: np.ndarray) -> int:
            return kernel_counts(frame, mask)[0]

        kernels = {"total": k(np.ones(len(flops), dtype=bool)), "drawn": k(on), "unknown": k(~known & ~on),
                   "moves": k(moves & ~on), "missing_flops": k(((flags & int(Flag.MISSING_FLOPS)) != 0) & ~on),
                   "missing_bytes": k(((flags & int(Flag.MISSING_BYTES)) != 0) & ~on),
                   "rest": k(known & ~moves & ~on)}
        launches = (kernel_counts(frame, on)[1], kernel_counts(frame)[1]) if rows_are_launches(frame) else (0, 0)
    unknown = kernels["unknown"]
    return ChartGaps(**kernels, launches=launches,
                     commands=tuple(collect_commands(analysis.workload)) if unknown else ())


def data_movement(analysis: Analysis, hw_ids: Sequence[str]) -> pd.DataFrame:
    """Kernels that move data without arithmetic (0 FLOP: copies, memsets, vcopy), judged where they can be:
    the bytes on the resource that binds them (a link for a host copy, off-chip memory for a device copy),
    that roof's bandwidth, the achieved bandwidth (bytes ÷ measured time) and its share of the roof.

    One row per kernel × device, longest first; bandwidths in GB/s, bytes in MB, time in ms (numbers, so the
    columns sort). Empty when there are none."""
    parts = []
    f = analysis.workload.frame
    flops = f["flops"].to_numpy(dtype=np.float64)
    t = f["time_s"].to_numpy(dtype=np.float64)
    for hw_id in hw_ids:
        r = analysis.result(hw_id)
        sel = np.flatnonzero((flops == 0) & ~np.isnan(r.t_roof) & (r.mem_idx > 0))
        if not len(sel):
            continue
        hw = r.hardware
        display = {**{lv.name: lv.display for lv in hw.levels}, **{lk.name: lk.display for lk in hw.links}}
        idx = r.mem_idx[sel].astype(np.int64)
        names = np.array(r.resources, dtype=object)[idx]
        beta = np.array(r.bandwidths, dtype=np.float64)[idx]
        moved = np.full(len(sel), np.nan)
        for name in set(names):
            on = names == name
            moved[on] = f[f"bytes_{name}"].to_numpy(dtype=np.float64)[sel[on]]
        ts = t[sel]
        with np.errstate(divide="ignore", invalid="ignore"):
            achieved = np.where(ts > 0, moved / ts, np.nan)
        kinds = np.array(r.resource_kinds, dtype=object)[idx]
        parts.append(pd.DataFrame({
            "Kernel": f["name"].to_numpy()[sel].astype(str), "Device": hw_id, "Launches": f["count"].to_numpy()[sel],
            "Moves over": [f"{display.get(n, n)} ({k})" for n, k in zip(names, kinds, strict=True)],
            "Bytes (MB)": moved * 1e-6, "Time (ms)": ts * 1e3, "Achieved (GB/s)": achieved * 1e-9,
            "Roof (GB/s)": beta * 1e-9, "Of roof (%)": achieved / beta * 100.0,
            "_key": np.nan_to_num(np.where(np.isnan(ts), r.t_roof[sel], ts), nan=0.0)}))
    if not parts:
        return pd.DataFrame(columns=["Kernel", "Of roof (%)", "Achieved (GB/s)", "Roof (GB/s)", "Moves over",
                                     "Bytes (MB)", "Time (ms)", "Launches", "Device"])
    out = pd.concat(parts, ignore_index=True).sort_values("_key", ascending=False, kind="stable")
    # the verdict first (share of the roof, achieved, roof), the amounts after: a narrow page keeps it in view
    order = ["Kernel", "Of roof (%)", "Achieved (GB/s)", "Roof (GB/s)", "Moves over", "Bytes (MB)", "Time (ms)",
             "Launches", "Device"]
    return out[order].reset_index(drop=True)
