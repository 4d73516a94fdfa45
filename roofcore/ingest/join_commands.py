"""The exact profiler commands that collect counters for the kernels of a timeline that have none
(:mod:`roofcore.ingest.join`): the few kernels without counters that hold most of the time, each with an Nsight
Compute or rocprofv3 command limited to that kernel and to the metrics the parsers read, as a short shell script::

    APP=./app  # your program and its arguments
    METRICS=gpu__time_duration.sum,sm__cycles_elapsed.avg,…
    # 1) 34% of the time: std::enable_if<…>::type internal::gemvx::kernel<…>
    ncu --kernel-name-base demangled --kernel-name regex:'\\bkernel<.*\\b7\\D' --launch-skip 0 --launch-count 10 …
    …
    for i in 1 2 3 4 5; do ncu --import kernel$i.ncu-rep --csv --page raw --print-units base > kernel$i.csv; done

(each command on one line). The program and the metric (or counter) list are said once, in shell variables.
Each kernel gets its own run: Nsight Compute's ``--launch-count`` counts the launches that pass the filter together
(``--filter-mode`` can count per GPU or per launch configuration, never per kernel name), so one run with a regex
for five kernels would give its launches to whichever ran first. The kernel is chosen by the shortest regular expression that selects it among the timeline's
kernels and matches it as the profiler spells it (:mod:`.join_regex`); Nsight Compute matches it against the
demangled name (``--kernel-name-base demangled``, the default being the bare function name), rocprofv3 against the
name it prints.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd

from ..counting import kernel_counts
from ..models import Workload
from .join_regex import kernel_regex

#: rows that move data rather than run a kernel: never matched, not in the coverage
COPY_GROUPS = ("memcpy", "memset")
#: kernels without counters given a targeted command: at most this many, the fewest that hold this share of the
#: time without counters
COMMANDS_MAX, COMMANDS_SHARE = 5, 0.8
#: launches to profile per kernel in a targeted Nsight Compute command (fewer where the timeline ran fewer)
LAUNCHES = 10
#: the script's first line: where the user says which program to profile (``$APP`` in the commands)
APP = "APP=./app  # your program and its arguments"


def kernel_times(w: Workload) -> pd.DataFrame:
    """Per distinct kernel name (copies left out), by time: ``time`` (s), ``count`` and ``known`` (it has counters:
    a joined counter kernel with FLOPs or bytes; in a workload not joined, known FLOPs)."""
    f = w.frame
    keep = ~f["group"].isin(COPY_GROUPS) if "group" in f else pd.Series(True, index=f.index)
    f = f[keep]
    if "counter_kernel" in f:
        known = f["counter_kernel"].notna() & (f["flops"].notna() | f[w.byte_columns].notna().any(axis=1))
    else:
        known = f["flops"].notna()
    # the names as text, kept an object column: pandas would otherwise copy every one into an Arrow string column
    text = pd.Series([x if type(x) is str else str(x) for x in f["name"].to_numpy(dtype=object)], index=f.index,
                     dtype=object)
    df = pd.DataFrame({"name": text, "time": f["time_s"].fillna(0.0),
                       "count": f["count"], "known": known})
    g = df.groupby("name", sort=False).agg(time=("time", "sum"), count=("count", "sum"), known=("known", "any"))
    return g.sort_values("time", ascending=False, kind="stable")


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def vendor_of(w: Workload) -> str | None:
    """``"nvidia"`` or ``"amd"`` from the formats, the architecture or the device, else None."""
    fmts = " ".join(w.formats)
    arch = str(w.meta.get("arch") or w.meta.get("gpu_arch") or "").lower()  # gpu_arch: told by kernel names
    device = f"{w.device or ''} {w.meta.get('devices', '')}"
    if "rocprof" in fmts or arch.startswith("gfx") or re.search(r"\b(AMD|Radeon|Instinct|MI\d{2,3})", device):
        return "amd"
    if re.search(r"\b(nsys|ncu|nvprof)", fmts) or arch.startswith("sm_") or \
            re.search(r"\b(NVIDIA|GeForce|Tesla|Quadro|RTX|[ABHLT]\d{2,3}\b|GB?\d{3})", device):
        return "nvidia"
    return None


def _pmc(w: Workload) -> list[str]:
    """The counters the rocprof parsers read for FLOPs and off-chip bytes on this GPU."""
    from .rocprof_common.counters import (
        FLOP_COUNTERS,
        MI200_COUNTERS,
        MI300_COUNTERS,
        VALU_OPS,
        VALU_PRECISIONS,
        gpu_family,
    )

    arch = str(w.meta.get("arch") or w.meta.get("gpu_arch") or "").lower()  # gpu_arch: told by kernel names
    rdna = bool(re.match(r"gfx1\d", arch))  # no matrix-core (MFMA) counters on RDNA
    flops = [f"SQ_INSTS_VALU_{op}_{p}" for p, _ in VALU_PRECISIONS for op, _ in VALU_OPS] if rdna else \
        list(FLOP_COUNTERS)
    fam = gpu_family(arch, w.device)
    hbm = MI300_COUNTERS if fam == "MI300" else MI200_COUNTERS if fam == "MI200" else ("FETCH_SIZE", "WRITE_SIZE")
    return [*flops, *hbm]


def _take(w: Workload, k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The timeline's kernel times (:func:`kernel_times`) and the few kernels without counters to collect."""
    kt = kernel_times(w)
    total = float(kt["time"].sum())
    lack = kt[~kt["known"] & (kt["time"] > 0)]
    if total <= 0 or lack.empty:
        return kt, lack.iloc[:0]
    cum = lack["time"].cumsum().to_numpy() / float(lack["time"].sum())
    return kt, lack.iloc[:min(k, int(np.searchsorted(cum, COMMANDS_SHARE - 1e-12)) + 1)]


def _lists(w: Workload, vendor: str | None) -> list[str]:
    """The shell lines that name the program (``APP=…``), the metrics (``METRICS=…``) and the counters (``PMC=…``)
    once."""
    from .ncu_metrics import ROOFLINE_METRICS

    return [APP] + ([f"METRICS={','.join(ROOFLINE_METRICS)}"] if vendor in ("nvidia", None) else []) + \
        ([f"PMC={','.join(_pmc(w))}"] if vendor in ("amd", None) else [])


def targeted_commands(w: Workload, k: int = COMMANDS_MAX) -> list[tuple[str, float, str]]:
    """``(kernel name, share of the kernel time, command)`` for the few kernels without counters that hold most of
    the time without counters (at most ``k``; the fewest that hold :data:`COMMANDS_SHARE` of it). The commands
    read the program from ``$APP``, the metrics from ``$METRICS`` and the counters from ``$PMC``
    (:func:`command_script` sets them)."""
    kt, take = _take(w, k)
    total = float(kt["time"].sum())
    vendor = vendor_of(w)
    names = [str(x) for x in kt.index]
    out: list[tuple[str, float, str]] = []
    for i, (name, row) in enumerate(take.iterrows(), start=1):
        rx = _quote(kernel_regex(str(name), names))
        cmds = []
        if vendor in ("nvidia", None):
            cmds.append(f"ncu --kernel-name-base demangled --kernel-name regex:{rx} --launch-skip 0 --launch-count "
                        f'{max(1, min(int(row["count"]), LAUNCHES))} --metrics "$METRICS" -o kernel{i} $APP')
        if vendor in ("amd", None):
            cmds.append(f'rocprofv3 --kernel-include-regex {rx} --pmc "$PMC" --output-format csv -- $APP')
        out.extend((str(name), float(row["time"]) / total, c) for c in cmds)
    return out


def command_script(w: Workload, k: int = COMMANDS_MAX) -> list[str]:
    """:func:`targeted_commands` as the lines of a shell script (module docstring): the program, the metric and
    counter lists once, each kernel's commands after a comment naming it and its share of the time, and the CSV export of the
    Nsight Compute reports. Empty where every kernel with time has counters."""
    from ..names import short_name
    from ..units import fmt_pct

    cmds = targeted_commands(w, k)
    if not cmds:
        return []
    lines = _lists(w, vendor_of(w))
    shown: dict[str, int] = {}
    for name, share, cmd in cmds:
        if name not in shown:
            shown[name] = len(shown) + 1
            lines.append(f"# {shown[name]}) {fmt_pct(share, 2)} of the time: {short_name(name)}")
        lines.append(cmd)
    if any(c.startswith("ncu ") for _, _, c in cmds):
        lines.append(f"for i in {' '.join(map(str, shown.values()))}; do ncu --import kernel$i.ncu-rep --csv --page raw "
                     "--print-units base > kernel$i.csv; done")
    return lines


def with_commands(w: Workload) -> Workload:
    """``w`` with the targeted commands as a shell script in ``meta["counter_commands"]`` (one line each,
    :func:`command_script`) and in a warning: one line that says what is missing, then the script."""
    from ..units import fmt_pct

    script = command_script(w)
    if not script:
        return w
    kt = kernel_times(w)
    lack = kt[~kt["known"]]
    total = float(kt["time"].sum())
    n = sum(line.startswith("# ") for line in script)
    load = ("the kernel*.csv files" if any(line.startswith("ncu ") for line in script) else
            "the counter_collection.csv files")
    f = w.frame  # kernels counted as every page counts them (roofcore.counting), copies among them
    rows = f["name"].astype(object).map(str).isin(set(lack.index)).to_numpy()
    if "group" in f:
        rows = rows & ~f["group"].isin(COPY_GROUPS).to_numpy()
    note = (f"No counters for {kernel_counts(f, rows)[0]:,} of {kernel_counts(f)[0]:,} kernels "
            f"({fmt_pct(lack['time'].sum() / total, 2)} of the "
            "timeline's kernel time). Hint: collect them for "
            + ("the kernel that holds most of it" if n == 1 else f"the {n} that hold most of it, each profiled alone")
            + f", with the commands below (set APP to your program first), then load {load} they write together with "
            "this timeline:")
    meta = {**w.meta, "counter_commands": "\n".join(script)}
    return replace(w, meta=meta, warnings=(*w.warnings, note + "\n" + "\n".join(script)))
