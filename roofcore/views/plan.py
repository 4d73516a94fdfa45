"""Planning results as display tables (times, speedups and costs formatted): a projection, a What-if variant
against its base, a scenario's variants, and the comparison of two runs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..units import fmt_cost, fmt_money, fmt_pct, fmt_time

if TYPE_CHECKING:
    from ..plan import Comparison, Projection, ScenarioResult
    from ..plan.projection import DeviceTotal


def _fmt_x(v: float | None) -> str:
    return f"{v:.2f}×" if v is not None and v == v and math.isfinite(v) else "–"


def _costs(v: float | None) -> dict[str, str]:
    """A cost per run as two columns a reader can quote, never below the cent: per run ("$0.36", "< $0.01") and
    per as many runs as make it readable ("$356 per 1,000 runs", "$0.29 per million runs"); "–" without a price."""
    return {"Cost per run": fmt_money(v), "Cost at scale": fmt_cost(v, at_least=1000)}


def _covers(t: DeviceTotal) -> str:
    """What a device's estimate holds: its share of the measured time (and the kernels with no measured time it
    leaves out), else the kernels it leaves out."""
    if t.coverage is not None:  # of the measured time: the note under the table says so
        untimed = f", not {t.untimed_kernels:,} untimed kernel(s)" if t.untimed_kernels else ""
        return f"{fmt_pct(t.coverage)} of time{untimed}"
    return f"all but {t.unknown_kernels:,} kernel(s)" if t.unknown_kernels else "every kernel"


def projection_frame(p: Projection) -> pd.DataFrame:
    """A :class:`roofcore.plan.Projection`'s per-device totals for display (times, speedups and cost formatted);
    where some estimate leaves kernels out (no roofline), a column says what each one covers."""
    rows = []
    partial = any(t.unknown_kernels for t in p.totals)
    for t in p.totals:
        top = next(iter(t.bound_share), None)
        covers = {"Estimate covers": _covers(t)} if partial else {}
        rows.append({"Device": t.hardware, "Name": t.name, "Σ t_roof": fmt_time(t.t_roof_s),
                     "Estimate": fmt_time(t.estimate_s), **covers,
                     "Speedup": _fmt_x(t.speedup), "Speedup (roof)": _fmt_x(t.speedup_roof),
                     **_costs(t.cost_per_run),
                     "Mostly bound by": f"{top} ({t.bound_share[top]:.0%})" if top else "–",
                     "Cross-vendor": "yes" if t.cross_vendor else ""})
    return pd.DataFrame(rows)


def projection_totals(p: Projection) -> pd.DataFrame:
    """Per device the Σ t_roof and estimate in seconds (numbers, for the Planner's bar chart)."""
    return pd.DataFrame([{"device": t.hardware, "t_roof_s": t.t_roof_s, "estimate_s": t.estimate_s}
                         for t in p.totals])


def _why_unknown(summary: dict[str, Any]) -> str:
    """Why a Σ t_roof is unknown (an :meth:`Analysis.summary` with ``t_roof_s`` None), said in the cell instead of
    "–": which kernels lack FLOPs or bytes, else that none has a roof on the device."""
    cov = summary["coverage"]
    n = cov["kernels"]
    parts = [f"{k:,} of {n:,} kernels lack {what}" for k, what in
             ((cov["kernels_missing_flops"], "FLOPs"), (cov["kernels_missing_bytes"], "bytes")) if k]
    return "unknown: " + ("; ".join(parts) if parts else f"no kernel has a roof on {summary['hardware']}")


def variant_totals(base: Analysis, variant: Analysis, units: float = 1.0) -> pd.DataFrame:
    """Per device: Σ t_roof of the base and of the variant, and the speedup (formatted); where either sum leaves
    kernels out (no roofline: FLOPs or off-chip bytes unknown), a column says how many it holds.

    ``units``: how many times the base's work one run of the variant does (a batch step of ×8: 8). The speedup
    then compares work per unit (per sample, per token): the variant's time ÷ ``units`` against the base's, so
    a batch of 8 that takes 3× as long is 2.67× faster per sample, not 0.33× per run."""
    rows = []
    per_unit = units != 1.0
    for hw in base.hardware:
        sb, sv = base.summary(hw.id), variant.summary(hw.id)
        tb, tv = sb["t_roof_s"], sv["t_roof_s"]
        why = (_why_unknown(sb) if tb is None else _why_unknown(sv) if tv is None
               else "unknown: a Σ t_roof of 0 s (no work)")
        row = {"Device": hw.id, "Base Σ t_roof": fmt_time(tb) if tb is not None else _why_unknown(sb),
               "Variant Σ t_roof": fmt_time(tv) if tv is not None else _why_unknown(sv)}
        if per_unit:
            row |= {"Base per unit": row["Base Σ t_roof"],
                    "Variant per unit": fmt_time(tv / units) if tv is not None else row["Variant Σ t_roof"],
                    "Speedup per unit": _fmt_x(tb * units / tv) if tb and tv else why}
        else:
            row["Speedup"] = _fmt_x(tb / tv) if tb and tv else why
        row["Kernels"] = f"{len(base.workload)} → {len(variant.workload)}"
        kb, kv = sb["coverage"]["kernels_known"], sv["coverage"]["kernels_known"]
        if kb < len(base.workload) or kv < len(variant.workload):  # the sums leave kernels out: say how many
            row["Roofline known"] = f"{kb:,} of {len(base.workload):,} → {kv:,} of {len(variant.workload):,} kernels"
        rows.append(row)
    return pd.DataFrame(rows)


def scenario_frame(result: ScenarioResult) -> pd.DataFrame:
    """A :class:`roofcore.plan.ScenarioResult` as one row per variant × device (formatted)."""
    rows = []
    partial = any(t.unknown_kernels for v in result.variants for t in v.projection.totals)
    for v in result.variants:
        for t in v.projection.totals:
            covers = {"Estimate covers": _covers(t)} if partial else {}
            rows.append({"Variant": v.name, "Step": v.kind, "Device": t.hardware, "Σ t_roof": fmt_time(t.t_roof_s),
                         "Estimate": fmt_time(t.estimate_s), **covers,
                         "vs base": _fmt_x(v.speedup_vs_base.get(t.hardware)), **_costs(t.cost_per_run)})
    return pd.DataFrame(rows)


def comparison_frame(c: Comparison) -> pd.DataFrame:
    """A :class:`roofcore.plan.Comparison`'s matched kernels, most time saved first (times formatted)."""
    t = c.table.assign(saved=(c.table["time_old"] - c.table["time_new"]).abs())
    t = t.sort_values("saved", ascending=False, kind="stable")
    names = t["name"].astype(str)
    if "name_new" in t:  # a pair made by hand shows both names
        names = names.where(t["name_new"] == t["name"], names + " → " + t["name_new"].astype(str))
    return pd.DataFrame({"Kernel": names.to_numpy(), "Before": _known(t["time_old"], fmt_time),
                         "After": _known(t["time_new"], fmt_time), "Speedup": _known(t["speedup"], _fmt_x),
                         "Basis": t["basis"].to_numpy(), "Bound before": _known(t["bound_old"], str),
                         "Bound after": _known(t["bound_new"], str)})


def _known(values: pd.Series, fmt: Callable[[Any], str]) -> np.ndarray:
    """Each value formatted, and "unknown" where it is missing (None, NaN, infinite): a Compare cell never reads
    "None", "nan" or "–" for a time, speedup or bound no one knows."""
    def one(v: Any) -> str:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "unknown"
        return fmt(v)

    return np.array([one(v) for v in values.to_numpy(dtype=object)], dtype=object)


def unmatched_frames(c: Comparison) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The kernels of a :class:`roofcore.plan.Comparison` found in one run only (before, after), each with its
    time (measured, else roofline) and share of its run's time, longest first: what pairing by hand would add."""
    out = []
    for a, names, total in ((c.old, c.only_old, c.totals["old_time_s"]), (c.new, c.only_new, c.totals["new_time_s"])):
        f = a.workload.frame
        sel = f["name"].astype(str).isin(set(names)).to_numpy()
        t = f["time_s"].to_numpy(dtype=np.float64)[sel]
        timed = a.timed[sel]
        tt = np.where(timed, t, a.result(c.hardware).t_roof[sel])
        frame = pd.DataFrame({"Kernel": f["name"].astype(str).to_numpy()[sel], "_t": tt,
                              "Time": _known(pd.Series(tt), fmt_time),
                              "Basis": np.where(timed, "measured", np.where(np.isnan(tt), "unknown", "roofline")),
                              "Share": [fmt_pct(v / total, 2) if total and v == v else "unknown" for v in tt]})
        out.append(frame.sort_values("_t", ascending=False, kind="stable").drop(columns="_t").reset_index(drop=True))
    return out[0], out[1]
