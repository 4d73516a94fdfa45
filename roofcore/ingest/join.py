"""Timeline + counters = a roofline: a profile's kernel times joined with a counter export of a sample of launches.

Performance engineers profile twice: a timeline first (Nsight Systems ``cuda_gpu_kern_sum``, rocprof ``--stats`` or
a kernel trace, rocprofv3 ``kernel_trace.csv``, a PyTorch trace without shapes) for where the time goes, then
counters (Nsight Compute, rocprof/rocprofv3 ``--pmc``, rocprof-compute) for a few launches of the hot kernels.
Each format says which it is (``role`` in :func:`~roofcore.ingest.register_format`; :func:`role_of` reads it
with the content: a counter format whose file holds no FLOP or byte counter is neither). :func:`join_inputs`
(called by :func:`~roofcore.ingest.read_many`) joins the two:

- kernels are matched by name across tools (:mod:`.join_names`: ``normalise_kernel_name``), or by hand (``pairs``:
  timeline name → counter name);
- per timeline kernel, FLOPs and bytes per launch are the mean over its sampled launches (each column on its
  own, so a file with bytes but no FLOPs gives bytes), with their spread (``flops_cv``, ``hbm_bytes_cv``: standard
  deviation ÷ mean; a warning names the kernels whose spread is large); times and launch counts come from the
  timeline alone — the counters' (replay) times are never used;
- timeline kernels without a match keep what the timeline gave (time only: FLOPs and bytes unknown); counter
  kernels no timeline kernel took are named in a warning, never added as time;
- ``meta["counter_coverage"]`` is the share of the timeline's kernel time that has counters (:func:`counter_summary`,
  :func:`counter_headline`), and a warning gives, for the few kernels without counters that hold most of the
  time, the exact profiler commands that collect them as a short shell script (:func:`targeted_commands`,
  :mod:`.join_commands`; also ``meta["counter_commands"]`` and the JSON's ``counters.commands``), also for a
  timeline read alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..measured import merge_measured
from ..models import Workload
from .join_commands import COPY_GROUPS, kernel_times, targeted_commands
from .join_commands import with_commands as _with_commands
from .join_names import Matching, match_kernels, normalise_kernel_name, normalise_names
from .registry import FORMATS

__all__ = ["COPY_GROUPS", "Matching", "counter_headline", "counter_summary", "join_counters", "join_inputs",
           "kernel_times", "match_kernels", "normalise_kernel_name", "normalise_names", "role_of", "targeted_commands"]

#: a spread (standard deviation ÷ mean over the sampled launches) above this is named in a warning
LARGE_SPREAD = 0.25
#: a timeline parser's note that its kernels have no counters: superseded by the join's own coverage line
_NO_COUNTERS = re.compile(r"gives times only|no FLOP or byte counters|\(no counters\)|have unknown FLOPs and bytes")


def _has_counters(w: Workload) -> bool:
    f = w.frame
    kernels = ~f["group"].isin(COPY_GROUPS) if "group" in f else np.ones(len(f), dtype=bool)
    return any(f.loc[kernels, c].notna().any() for c in ("flops", *w.byte_columns))


def _has_flops(w: Workload) -> bool:
    f = w.frame
    kernels = ~f["group"].isin(COPY_GROUPS) if "group" in f else np.ones(len(f), dtype=bool)
    return bool(f.loc[kernels, "flops"].notna().any())


def role_of(w: Workload) -> str:
    """``"timeline"`` (real kernel times, no counters), ``"counters"`` (FLOP or byte counters of sampled or replayed
    launches) or ``""`` (an inventory, a model, a counter export without counters such as a time-only Nsight
    Compute page), from the formats' ``role`` and what the file holds (``"either"``: a per-dispatch table that is a
    timeline unless counters were collected)."""
    roles = {FORMATS[f].role if f in FORMATS else "" for f in w.formats}
    if roles & {"counters", "either"} and _has_counters(w):
        return "counters"
    if roles and roles <= {"timeline", "either"}:
        return "timeline" if roles == {"timeline"} or not _has_counters(w) else "counters"
    return ""


def join_inputs(workloads: list[Workload], pairs: Mapping[str, str] | None = None) -> list[Workload]:
    """Timelines and counter exports among ``workloads`` joined into one workload (:func:`join_counters`); a
    timeline read without counters gets the targeted commands; the others pass through."""
    from .frames import combine

    roles = [role_of(w) for w in workloads]
    timelines = [w for w, r in zip(workloads, roles, strict=True) if r == "timeline"]
    counters = [w for w, r in zip(workloads, roles, strict=True) if r == "counters"]
    if timelines and counters:
        rest = [w for w, r in zip(workloads, roles, strict=True) if r not in ("timeline", "counters")]
        joined = join_counters(combine(timelines), combine(counters), pairs)
        if joined.meta.get("counter_kernels") != "0":
            return [joined, *rest]
        # not one kernel in common: two runs read side by side, not a timeline with its counters
        note = ("no kernel of " + ", ".join(s for c in counters for s in c.sources) + " matches one of the timeline "
                "(" + ", ".join(s for t in timelines for s in t.sources) + "): read side by side, not joined. Hint: "
                "if they are the same run, pair kernels by hand (roofcore.read_many(files, pairs={timeline name: "
                "counter name})).")
        first = workloads[0]
        return [replace(first, warnings=(*first.warnings, note)), *workloads[1:]]
    if timelines and not counters and len(timelines) == len(workloads):  # a timeline alone, without any FLOPs
        return [w if _has_flops(w) else _with_commands(w) for w in workloads]
    return workloads


# ------------------------------------------------------------------------------------------ the join


def _stats(cf: pd.DataFrame, cols: list[str]) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Per counter kernel name (position in the returned index): launches, and per column the launches with a
    value, the sum of the values, the sum of squares per launch, the least and most per launch."""
    names = cf["name"].astype(object).map(str).to_numpy()
    n = np.maximum(cf["count"].to_numpy(dtype=np.float64), 1.0)
    data: dict[str, np.ndarray] = {"launches": n}
    for c in cols:
        v = cf[c].to_numpy(dtype=np.float64)
        known = ~np.isnan(v)
        data[f"n {c}"] = np.where(known, n, 0.0)
        data[f"s {c}"] = np.where(known, v, 0.0)
        data[f"q {c}"] = np.where(known, v * v / n, 0.0)
        data[f"lo {c}"] = data[f"hi {c}"] = v / n
    g = pd.DataFrame(data).groupby(names, sort=False)
    sums = g[["launches", *(f"{k} {c}" for c in cols for k in "nsq")]].sum()
    lo, hi = g[[f"lo {c}" for c in cols]].min(), g[[f"hi {c}" for c in cols]].max()
    out = {k: sums[k].to_numpy() for k in sums.columns}
    out.update({k: lo[k].to_numpy() for k in lo.columns})
    out.update({k: hi[k].to_numpy() for k in hi.columns})
    return {str(k): i for i, k in enumerate(sums.index)}, out


def _first(cf: pd.DataFrame, col: str) -> dict[str, object]:
    """Per counter kernel name, its first non-empty value of ``col`` (precision, unit)."""
    if col not in cf:
        return {}
    v = cf[[col]].assign(name=cf["name"].astype(object).map(str)).dropna(subset=[col])
    first: dict[str, object] = v.groupby("name", sort=False)[col].first().to_dict()
    return first


def _pool(stats: dict[str, np.ndarray], rows: list[int], cols: list[str]) -> dict[str, float]:
    """Mean, spread, least and most per launch over the counter kernels at ``rows`` (one kernel's launches)."""
    out = {"launches": float(stats["launches"][rows].sum())}
    for c in cols:
        n = stats[f"n {c}"][rows].sum()
        mean = stats[f"s {c}"][rows].sum() / n if n else math.nan
        var = max(stats[f"q {c}"][rows].sum() / n - mean * mean, 0.0) if n else math.nan
        out[f"mean {c}"] = mean
        out[f"cv {c}"] = math.sqrt(var) / mean if n and mean > 0 else (0.0 if n and var == 0 else math.nan)
        out[f"lo {c}"] = float(np.nanmin(stats[f"lo {c}"][rows])) if n else math.nan
        out[f"hi {c}"] = float(np.nanmax(stats[f"hi {c}"][rows])) if n else math.nan
        out[f"n {c}"] = float(n)
    return out


def join_counters(timeline: Workload, counters: Workload, pairs: Mapping[str, str] | None = None) -> Workload:
    """Give a timeline's kernels the FLOPs and bytes per launch of a counter export's sampled launches.

    Output rows are the timeline's (its names, counts, times, groups, ranks); a matched row's FLOPs and bytes are
    the mean per launch over its kernel's sampled launches × the row's count (where a counter column is unknown,
    the timeline's own value stays). New columns: ``counter_kernel`` (the counter name matched), ``counter_match``
    (how: :data:`~roofcore.ingest.join_names.HOW`), ``counter_launches`` (launches sampled), ``flops_cv`` and
    ``hbm_bytes_cv`` (spread: standard deviation ÷ mean). ``pairs`` maps a timeline kernel name to a counter kernel
    name, fixing that pair by hand. Meta: ``counter_coverage`` (share of the timeline's kernel time with counters,
    0–1), ``counter_time_s``, ``counter_kernels`` / ``timeline_kernels`` (distinct names) and ``counter_commands``.
    """
    tf, cf = timeline.frame, counters.frame
    cols = list(dict.fromkeys(["flops", *counters.byte_columns]))
    kernel = ~tf["group"].isin(COPY_GROUPS).to_numpy() if "group" in tf else np.ones(len(tf), dtype=bool)
    codes, names = pd.factorize(tf["name"].astype(object).map(str), sort=False)
    names = [str(x) for x in names]
    is_kernel = np.zeros(len(names), dtype=bool)
    np.logical_or.at(is_kernel, codes, kernel)
    m = match_kernels([n for n, k in zip(names, is_kernel, strict=True) if k], cf["name"].astype(object).map(str),
                      pairs)
    index, stats = _stats(cf, cols)
    per = {t: _pool(stats, [index[c] for c in cs], cols) for t, cs in m.pairs.items()}
    precision, unit = _first(cf, "precision"), _first(cf, "unit")
    out = tf.copy()
    count = tf["count"].to_numpy(dtype=np.float64)
    for c in cols:
        mean = np.array([per[t][f"mean {c}"] if t in per else math.nan for t in names], dtype=np.float64)
        value = mean[codes] * count if len(codes) else np.zeros(0)
        own = tf[c].to_numpy(dtype=np.float64) if c in tf else np.full(len(tf), np.nan)
        out[c] = np.where(np.isnan(value), own, value)
        if (~np.isnan(value) & ~np.isnan(own)).any():  # counters beside the timeline's formulas: both kept
            out[f"formula_{c}"], out[f"counter_{c}"] = own, value  # (roofcore.hierarchy.sources)
    for col, found in (("precision", precision), ("unit", unit)):
        got = [next((found[c] for c in m.pairs.get(t, ()) if c in found), None) for t in names]
        new = pd.Series([got[i] for i in codes], index=out.index, dtype=object)
        out[col] = new.where(new.notna(), out[col].astype(object) if col in out else None)
    lookup = {
        "counter_kernel": [m.pairs[t][0] if t in m.pairs else None for t in names],
        "counter_match": [m.how.get(t) for t in names],
        "counter_launches": [per[t]["launches"] if t in per else math.nan for t in names],
        "flops_cv": [per[t]["cv flops"] if t in per else math.nan for t in names],
        "hbm_bytes_cv": [per[t].get("cv bytes_hbm", math.nan) if t in per else math.nan for t in names],
    }
    for col, vals in lookup.items():
        arr = np.asarray(vals, dtype=object if col in ("counter_kernel", "counter_match") else np.float64)
        out[col] = arr[codes] if len(codes) else arr[:0]
    joined = replace(
        timeline, frame=out, name=f"{timeline.name} + {counters.name}", sources=(*timeline.sources, *counters.sources),
        formats=tuple(dict.fromkeys((*timeline.formats, *counters.formats))),
        skipped=(*timeline.skipped, *counters.skipped), device=timeline.device or counters.device,
        measured=merge_measured((*timeline.measured, *counters.measured)),
        meta={k: v for k, v in {**counters.meta, **timeline.meta}.items() if k != "time_only"},
    )
    notes = _notes(joined, m, per, names)
    kept = [x for x in timeline.warnings if not _NO_COUNTERS.search(x)]
    joined = replace(joined, warnings=tuple(dict.fromkeys((*kept, *counters.warnings, *notes))))
    return _with_commands(_with_coverage(joined))


def _notes(w: Workload, m: Matching, per: dict[str, dict[str, float]], names: list[str]) -> list[str]:
    """Warnings on the matching: ambiguous kernels, counters nobody took, hand pairs that name nothing, spread."""
    from ..names import short_name

    notes = []
    if m.ambiguous:
        items = [f"{short_name(t)} (could be {', '.join(short_name(c) for c in cs[:3])}"
                 + (f" and {len(cs) - 3} more" if len(cs) > 3 else "") + ")" for t, cs in list(m.ambiguous.items())[:5]]
        notes.append(f"{_n(len(m.ambiguous), 'timeline kernel')} match several counter kernels, or share one with "
                     f"another kernel, and are left without counters: {'; '.join(items)}. Hint: pair them by hand "
                     "(read_many(..., pairs={timeline name: counter name}), or the app's kernel pairing).")
    if m.unused:
        notes.append(f"{_n(len(m.unused), 'counter kernel')} matched no timeline kernel (their counters are not "
                     f"used, their replay times never): {_list([short_name(c) for c in m.unused])}.")
    if m.bad_pairs:
        notes.append(f"pairs naming a kernel neither file has, ignored: {_list(m.bad_pairs)}.")
    wide = [t for t in names if t in per and per[t]["launches"] >= 2
            and max(per[t]["cv flops"], per[t].get("cv bytes_hbm", math.nan)) > LARGE_SPREAD]
    if wide:
        notes.append(f"FLOPs or off-chip bytes per launch vary by more than {LARGE_SPREAD:.0%} of the mean across the "
                     f"sampled launches of {_n(len(wide), 'kernel')} (their mean stands for every timeline launch): "
                     + "; ".join(_spread(short_name(t), per[t]) for t in wide[:5]) + ".")
    return notes


def _spread(name: str, p: dict[str, float]) -> str:
    from ..units import fmt_bytes, fmt_flops

    parts = []
    if p["cv flops"] > LARGE_SPREAD:
        parts.append(f"FLOPs {fmt_flops(p['lo flops'])}–{fmt_flops(p['hi flops'])}")
    if p.get("cv bytes_hbm", math.nan) > LARGE_SPREAD:
        parts.append(f"bytes {fmt_bytes(p['lo bytes_hbm'])}–{fmt_bytes(p['hi bytes_hbm'])}")
    return f"{name} ({', '.join(parts)} per launch over {p['launches']:,.0f} launches)"


def _n(k: int, word: str) -> str:
    return f"{k:,} {word}" + ("" if k == 1 else "s")


def _list(items: list[str], k: int = 5) -> str:
    return ", ".join(items[:k]) + (f" and {len(items) - k} more" if len(items) > k else "")


# ------------------------------------------------------------------------------------------ coverage


def _with_coverage(w: Workload) -> Workload:
    k = kernel_times(w)
    total = float(k["time"].sum())
    covered = float(k.loc[k["known"], "time"].sum())
    meta = {**w.meta, "counter_coverage": repr(covered / total if total > 0 else 0.0), "counter_time_s": repr(total),
            "counter_kernels": str(int(k["known"].sum())), "timeline_kernels": str(len(k))}
    return replace(w, meta=meta)


def counter_summary(w: Workload) -> dict[str, Any] | None:
    """The join's coverage for JSON: ``{"coverage", "timeline_time_s", "kernels", "kernels_with_counters",
    "commands"}`` (``commands``: the lines of the shell script that collects the missing counters); for a timeline
    read alone, ``{"commands"}``; None where there is neither."""
    cmds = w.meta.get("counter_commands", "")
    lines = cmds.split("\n") if cmds else []
    if "counter_coverage" not in w.meta:
        return {"commands": lines} if lines else None
    return {"coverage": float(w.meta["counter_coverage"]), "timeline_time_s": float(w.meta["counter_time_s"]),
            "kernels": int(w.meta["timeline_kernels"]), "kernels_with_counters": int(w.meta["counter_kernels"]),
            "commands": lines}


def counter_headline(w: Workload) -> str:
    """``"Counters for 83% of the timeline's 179 ms (12 of 46 kernels); the rest is time only."``, or ``""``."""
    s = counter_summary(w)
    if s is None or "coverage" not in s:
        return ""
    from ..units import fmt_pct, fmt_time

    n, k = s["kernels"], s["kernels_with_counters"]
    rest = "" if k == n else "; the rest is time only"
    return (f"Counters for {fmt_pct(s['coverage'], 2)} of the timeline's {fmt_time(s['timeline_time_s'])} "
            f"({k:,} of {n:,} {'kernel' if n == 1 else 'kernels'}){rest}.")

