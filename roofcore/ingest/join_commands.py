"""The exact profiler command that collects counters for the kernels of a timeline that have none
(:mod:`roofcore.ingest.join`): the few kernels without counters that hold most of the time, each with an Nsight
Compute or rocprofv3 command limited to that kernel and to the metrics the parsers read.

The kernel is chosen by a regular expression built from its normalised name (:mod:`.join_names`): the function's
name, then as many of its template arguments as it takes to tell it from the timeline's other kernels of the same
name (``kernel<…7…>`` and ``kernel<…6…>`` of cuBLAS's gemvx differ in the eleventh). Between two arguments the
expression allows what tools print differently: blanks, namespaces (``at::native::``, ``<unnamed>::``,
``(anonymous namespace)::``), casts (``(int)``), ``const``, literal suffixes (``2ul``) and ``true``/``false`` for
``1``/``0``. Nsight Compute matches it against the demangled
name (``--kernel-name-base demangled``), rocprofv3 against the name it prints.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd

from ..models import Workload
from .join_names import parse_name

#: rows that move data rather than run a kernel: never matched, not in the coverage
COPY_GROUPS = ("memcpy", "memset")
#: kernels without counters given a targeted command: at most this many, the fewest that hold this share of the
#: time without counters
COMMANDS_MAX, COMMANDS_SHARE = 5, 0.8
#: launches to profile per kernel in a targeted Nsight Compute command (fewer where the timeline ran fewer)
LAUNCHES = 10
#: template arguments used at most to tell a kernel from its namesakes
MAX_TOKENS = 16

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+")
#: what may stand between two template arguments as tools print them
_LEAD = r"(?:\w+::|<unnamed>::|\([\w ]+\)(?:::)?|const\W+)*"
_SEP = r"\W+" + _LEAD
_SPECIAL = re.compile(r"([.^$*+?()\[\]{}|\\])")


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
    df = pd.DataFrame({"name": f["name"].astype(object).map(str), "time": f["time_s"].fillna(0.0),
                       "count": f["count"], "known": known})
    g = df.groupby("name", sort=False).agg(time=("time", "sum"), count=("count", "sum"), known=("known", "any"))
    return g.sort_values("time", ascending=False, kind="stable")


def _escape(s: str) -> str:
    return _SPECIAL.sub(r"\\\1", s)


def _tokens(name: str) -> list[str]:
    """The template arguments' words and numbers, up to a lambda (tools spell lambdas too differently) or ``const``
    (tools put it on either side)."""
    p = parse_name(name)
    inner = p.key[p.key.find("<") + 1:] if not p.bare else ""
    out = []
    for t in _TOKEN.findall(inner):
        if t == "lambda":
            break
        if t not in ("const", "volatile"):
            out.append(t)
    return out


def _token_rx(t: str) -> str:
    if t == "0":
        return "(?:0|false)"
    if t == "1":
        return "(?:1|true)"
    return t + "[uUlL]*" if t.isdigit() else _escape(t)


def kernel_regex(name: str, others: list[str] | tuple[str, ...] = ()) -> str:
    """A regular expression (ECMAScript, as Nsight Compute and rocprofv3 take it) that selects kernel ``name`` and
    not the kernels in ``others`` that share its function name, where its first template arguments tell it apart."""
    p = parse_name(name)
    toks = _tokens(name)
    rivals = [_tokens(o) for o in others if o != name and parse_name(o).base == p.base]
    k = 0
    while k < min(len(toks), MAX_TOKENS) and any(r[:k] == toks[:k] for r in rivals):
        k += 1
    if rivals and any(r[:k] == toks[:k] for r in rivals):
        k = min(len(toks), MAX_TOKENS)
    rx = r"(?:^|\W)" + _escape(p.base)
    if k == 0:
        return rx + r"(?:\W|$)"
    return rx + "<" + _LEAD + _SEP.join(_token_rx(t) for t in toks[:k])


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def vendor_of(w: Workload) -> str | None:
    """``"nvidia"`` or ``"amd"`` from the formats, the architecture or the device, else None."""
    fmts = " ".join(w.formats)
    arch = str(w.meta.get("arch", "")).lower()
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

    arch = str(w.meta.get("arch", "")).lower()
    rdna = bool(re.match(r"gfx1\d", arch))  # no matrix-core (MFMA) counters on RDNA
    flops = [f"SQ_INSTS_VALU_{op}_{p}" for p, _ in VALU_PRECISIONS for op, _ in VALU_OPS] if rdna else \
        list(FLOP_COUNTERS)
    fam = gpu_family(arch, w.device)
    hbm = MI300_COUNTERS if fam == "MI300" else MI200_COUNTERS if fam == "MI200" else ("FETCH_SIZE", "WRITE_SIZE")
    return [*flops, *hbm]


def targeted_commands(w: Workload, k: int = COMMANDS_MAX) -> list[tuple[str, float, str]]:
    """``(kernel name, share of the kernel time, command)`` for the few kernels without counters that hold most of
    the time without counters (at most ``k``; the fewest that hold :data:`COMMANDS_SHARE` of it)."""
    from .ncu_metrics import ROOFLINE_METRICS

    kt = kernel_times(w)
    total = float(kt["time"].sum())
    lack = kt[~kt["known"] & (kt["time"] > 0)]
    if total <= 0 or lack.empty:
        return []
    cum = lack["time"].cumsum().to_numpy() / float(lack["time"].sum())
    take = lack.iloc[:min(k, int(np.searchsorted(cum, COMMANDS_SHARE - 1e-12)) + 1)]
    vendor = vendor_of(w)
    names = [str(x) for x in kt.index]
    out = []
    for i, (name, row) in enumerate(take.iterrows(), start=1):
        rx = _quote(kernel_regex(str(name), names))
        cmds = []
        if vendor in ("nvidia", None):
            cmds.append(f"ncu --kernel-name-base demangled --kernel-name regex:{rx} --launch-skip 0 --launch-count "
                        f"{max(1, min(int(row['count']), LAUNCHES))} --metrics {','.join(ROOFLINE_METRICS)} "
                        f"-o kernel{i} ./app")
        if vendor in ("amd", None):
            cmds.append(f"rocprofv3 --kernel-include-regex {rx} --pmc {' '.join(_pmc(w))} --output-format csv "
                        "-- ./app")
        out.extend((str(name), float(row["time"]) / total, c) for c in cmds)
    return out


def with_commands(w: Workload) -> Workload:
    """``w`` with the targeted commands in ``meta["counter_commands"]`` (one a line) and in a warning."""
    from ..names import short_name
    from ..units import fmt_pct

    cmds = targeted_commands(w)
    if not cmds:
        return w
    kt = kernel_times(w)
    lack = kt[~kt["known"]]
    total = float(kt["time"].sum())
    shown = list(dict.fromkeys(n for n, _, _ in cmds))
    items = [f"{j}) {short_name(n)} ({fmt_pct(s, 2)} of the time): {c}" for j, (n, s, c) in enumerate(cmds, start=1)]
    export = (" Export each Nsight Compute report as CSV (ncu --import kernel1.ncu-rep --csv --page raw "
              "--print-units base > kernel1.csv) and load the CSVs together with this timeline."
              if any(c.startswith("ncu ") for _, _, c in cmds) else
              " Load the counter_collection.csv files together with this timeline.")
    note = (f"No counters for {len(lack):,} of {len(kt):,} kernels ({fmt_pct(lack['time'].sum() / total, 2)} of the "
            f"timeline's kernel time). Hint: collect them for the {len(shown)} that hold most of it, each profiled "
            "alone: " + " ".join(items) + "." + export)
    meta = {**w.meta, "counter_commands": "\n".join(c for _, _, c in cmds)}
    return replace(w, meta=meta, warnings=(*w.warnings, note))
