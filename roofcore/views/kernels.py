"""Kernels as tables: one row per kernel and device in display units (numbers stay numeric so columns sort), the
filters over it, the kernels to look at first, the detail picker's choices, and the rows an import left out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import counting
from ..analyze import Analysis
from ..models import Workload
from ..roofline import FLAG_CODES
from ..units import fmt_intensity, fmt_pct, fmt_rate, fmt_time

if TYPE_CHECKING:
    from numpy.typing import NDArray


def skipped_frame(workload: Workload) -> pd.DataFrame:
    """The input rows left out of ``workload`` and why."""
    return pd.DataFrame([{"file": s.source, "row": s.row, "reason": s.reason} for s in workload.skipped],
                        columns=["file", "row", "reason"])


def subset(analysis: Analysis, rows: Sequence[int] | np.ndarray) -> Analysis:
    """The same analysis for a few kernels (row positions): :meth:`Analysis.take`, nothing evaluated again."""
    return analysis.take(rows)


def time_key(analysis: Analysis, hw_id: str) -> np.ndarray:
    """Seconds per kernel to rank by: measured time where known, else the roofline time (0 if neither)."""
    t = analysis.workload.frame["time_s"].to_numpy(dtype=np.float64)
    return np.nan_to_num(np.where(np.isnan(t), analysis.result(hw_id).t_roof, t), nan=0.0)


def top_kernels(analysis: Analysis, hw_id: str, n: int = 10) -> tuple[pd.DataFrame, str]:
    """The kernels to look at first on one device, and what they are ranked by.

    With measured times: by headroom (measured − roofline seconds); without: by roofline time. Only the top
    rows are tabulated, so this stays fast for a million kernels.
    """
    r = analysis.result(hw_id)
    timed = analysis.timed  # a zero time is no measurement: those rank with the untimed
    if timed.any():
        key, basis = np.where(timed, analysis.derived(hw_id).headroom_s, -np.inf), "headroom"
    else:
        key, basis = np.nan_to_num(r.t_roof, nan=-np.inf), "roofline time"
    k = min(n, len(key))
    idx = np.argpartition(-key, k - 1)[:k] if k < len(key) else np.arange(len(key))
    idx = idx[np.argsort(-key[idx], kind="stable")]
    tab = subset(analysis, idx).table(hw_id, messages=False)
    cols = {"Kernel": tab["name"], "Launches": tab["count"], "Bound": tab["bound"].fillna("unknown")}
    if basis == "headroom":
        cols |= {"Time": tab["time_s"].map(fmt_time), "Roofline time": tab["t_roof_s"].map(fmt_time),
                 "Headroom": tab["headroom_s"].map(fmt_time), "Of roof": tab["efficiency"].map(fmt_pct)}
    else:
        cols |= {"Roofline time": tab["t_roof_s"].map(fmt_time),
                 "Attainable": tab["attainable_flops_per_s"].map(fmt_rate),
                 "Intensity": tab[f"intensity_{analysis.result(hw_id).hardware.offchip.name}"].map(fmt_intensity)
                 if f"intensity_{analysis.result(hw_id).hardware.offchip.name}" in tab else "–"}
    return pd.DataFrame(cols), basis


#: display column -> (source column, scale to the display unit, printf format, help)
KERNEL_COLUMNS: dict[str, tuple[str, float, str, str]] = {
    "FLOPs (G)": ("flops", 1e-9, "%.4g", "GFLOP, total over launches"),
    "Off-chip bytes (MB)": ("bytes_off", 1e-6, "%.4g", "MB read and written off-chip (HBM/DRAM), total"),
    "Intensity (FLOP/B)": ("intensity_off", 1.0, "%.4g", "FLOPs per off-chip byte"),
    "Time (ms)": ("time_s", 1e3, "%.4g", "measured, total over launches"),
    "Roofline time (ms)": ("t_roof_s", 1e3, "%.4g", "the least time the roofs allow (perfect overlap)"),
    "Headroom (ms)": ("headroom_s", 1e3, "%.4g", "measured − roofline time: the most a fix can save"),
    "Achieved (TFLOP/s)": ("achieved_flops_per_s", 1e-12, "%.4g", "FLOPs ÷ measured time"),
    "Attainable (TFLOP/s)": ("attainable_flops_per_s", 1e-12, "%.4g", "FLOPs ÷ roofline time"),
    "Of roof (%)": ("efficiency", 100.0, "%.3g%%", "roofline time ÷ measured time"),
}


def flag_codes(mask: np.ndarray) -> np.ndarray:
    """Comma-separated flag codes per kernel from the engine's bitmask, vectorised."""
    out = pd.Series([""] * len(mask), dtype=object)
    m = np.asarray(mask, dtype=np.int64)
    for bit, code in FLAG_CODES.items():
        hit = (m & int(bit)) != 0
        if hit.any():
            out[hit] = out[hit] + np.where(out[hit] == "", code, ", " + code)
    codes: NDArray[np.object_] = out.to_numpy()
    return codes


def kernel_table(analysis: Analysis, hw_ids: Sequence[str]) -> pd.DataFrame:
    """One row per kernel × device with numeric columns in display units (see :data:`KERNEL_COLUMNS`).

    Hidden helper columns: ``_row`` (kernel position in the workload) and ``_flags`` (bitmask).
    """
    parts = []
    for hw_id in hw_ids:
        r = analysis.result(hw_id)
        off = r.hardware.offchip.name
        tab = analysis.table(hw_id, messages=False)
        part = pd.DataFrame({"Kernel": tab["name"].astype(str), "Device": hw_id, "Launches": tab["count"],
                             "Group": tab["group"].fillna(""), "Precision": tab["precision"].fillna(""),
                             "Bound": tab["bound"].fillna("unknown")})
        src = tab.assign(bytes_off=tab.get(f"bytes_{off}", np.nan), intensity_off=tab.get(f"intensity_{off}", np.nan))
        for col, (field, scale, _fmt, _help) in KERNEL_COLUMNS.items():
            part[col] = src[field].to_numpy(dtype=np.float64) * scale
        part["Flags"] = flag_codes(tab["flags_mask"].to_numpy())
        part["Source"] = tab["source"].astype(str) + ": " + tab["row"].astype(str)
        part["_row"] = np.arange(len(tab))
        part["_flags"] = tab["flags_mask"].to_numpy()
        part["_key"] = np.nan_to_num(np.where(np.isnan(tab["time_s"]), tab["t_roof_s"], tab["time_s"]), nan=0.0)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out = out.replace([np.inf, -np.inf], np.nan)
    return out


def filter_kernels(table: pd.DataFrame, *, bounds: Sequence[str] = (), flags: Sequence[str] = (),
                   groups: Sequence[str] = (), text: str = "") -> pd.DataFrame:
    """Rows of :func:`kernel_table` matching every given filter (any of the bounds/flags/groups; name substring)."""
    keep = np.ones(len(table), dtype=bool)
    if bounds:
        keep &= table["Bound"].isin(list(bounds)).to_numpy()
    if flags:
        bits = sum(int(b) for b, c in FLAG_CODES.items() if c in flags)
        keep &= (table["_flags"].to_numpy(dtype=np.int64) & bits) != 0
    if groups:
        keep &= table["Group"].isin(list(groups)).to_numpy()
    if text.strip():
        keep &= table["Kernel"].str.contains(text.strip(), case=False, regex=False).to_numpy()
    return table[keep]


def table_note(analysis: Analysis, shown: pd.DataFrame, limit: int) -> str:
    """What the Kernels table shows, counted as the sidebar counts (kernels and launches, whatever the rows are):
    ``"38 of 38 kernels (174 launches), in 174 rows: one per launch and device."``; ``shown`` is the filtered
    :func:`kernel_table` (the longest ``limit`` rows of it are drawn)."""
    w = analysis.workload
    rows = np.unique(shown["_row"].to_numpy(dtype=np.int64))
    kernels, launches = counting.kernel_counts(w.frame, rows)
    whole, _ = counting.kernel_counts(w.frame)
    count = w.frame["count"].to_numpy()
    per = ("kernel" if whole == len(w) else "launch" if (count == 1).all()
           else "row of the input")
    what = f"{kernels:,} of {counting.plural(whole, 'kernel')}" + (
        f" ({counting.plural(launches, 'launch', 'launches')})" if launches != kernels else "")
    if len(shown) > limit:
        return (f"{what} match: showing the {limit:,} longest-running of their {len(shown):,} rows (one per {per} and "
                "device); the CSV has all.")
    return f"{what}, in {counting.plural(len(shown), 'row')}: one per {per} and device."


#: most kernels the detail picker offers (longest-running first; the table's name filter finds the rest)
CHOICE_LIMIT = 1000


def kernel_choices(analysis: Analysis, hw_id: str, limit: int = CHOICE_LIMIT) -> dict[int, str]:
    """Kernels offered for the detail view, longest-running first: row position -> label ("name  [bf16, mlp]")."""
    key = time_key(analysis, hw_id)
    if len(key) > limit:
        idx = np.argpartition(-key, limit - 1)[:limit]
        idx = idx[np.argsort(-key[idx], kind="stable")]
    else:
        idx = np.argsort(-key, kind="stable")
    f = analysis.workload.frame.iloc[idx]
    labels = []
    for name, *parts in zip(f["name"].astype(str), f["precision"], f["group"], strict=True):
        shown = [p for p in parts if isinstance(p, str) and p]  # a missing precision may be NaN: not text
        labels.append(name + (f"  [{', '.join(shown)}]" if shown else ""))
    return dict(zip(idx.tolist(), labels, strict=True))
