"""What every section of the report reads (:class:`_Report`): the analysis, its advice, the kernels ranked
and numbered as the top-kernels table numbers them, their short names; and the per-kernel columns that the
top-kernels table and the appendix share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..analyze import Analysis
from ..models import Hardware
from ..names import short_names
from ..units import fmt_bytes, fmt_flops, fmt_intensity, fmt_time
from .text import pct, vfmt

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ..advise import Advice


@dataclass
class Report:
    """What every section reads: the analysis, its advice, the ranking and numbering of kernels, short names."""

    a: Analysis
    advice: dict[str, Advice]  #: per device id
    order: np.ndarray  #: workload rows by time (measured, else the mean roofline time over devices), largest first
    top: np.ndarray  #: the rows of the top-kernels table, in order (numbered 1, 2, ...)
    number: np.ndarray  #: per workload row, its number in the top-kernels table (0: not in it)
    short: dict[str, str]  #: full kernel name → unique short name
    tables: dict[str, pd.DataFrame]  #: per device id, Analysis.table (one row per workload row)

    @property
    def names(self) -> NDArray[np.object_]:
        names: NDArray[np.object_] = self.a.workload.frame["name"].astype(str).to_numpy()
        return names

    def label(self, name: str) -> str:
        """A kernel as the body names it: its numbers in the top table ("#2", "#1–#6", "#3, #7") and short name."""
        short = self.short.get(name, name)
        nums = [int(self.number[i]) for i in self.top[self.names[self.top] == name]] if len(self.top) else []
        if not nums:
            return short
        if len(nums) > 2 and nums == list(range(nums[0], nums[-1] + 1)):
            return f"#{nums[0]}–#{nums[-1]} {short}"
        return ", ".join(f"#{n}" for n in nums[:3]) + (", …" if len(nums) > 3 else "") + f" {short}"


def _model(a: Analysis, advice: dict[str, Advice], top: int) -> Report:
    f = a.workload.frame
    t = f["time_s"].to_numpy(dtype=np.float64)
    tables = {h.id: a.table(h.id, messages=False) for h in a.hardware}
    roofs = np.vstack([tb["t_roof_s"].to_numpy(dtype=np.float64) for tb in tables.values()] or [np.full(len(t), np.nan)])
    known = (~np.isnan(roofs)).sum(axis=0)
    roof = np.where(known > 0, np.nansum(roofs, axis=0) / np.maximum(known, 1), np.nan)
    key = np.nan_to_num(np.where(np.isnan(t), roof, t), nan=0.0)  # as the charts rank them
    order = np.argsort(-key, kind="stable")
    shown = order[:top] if top > 0 else order
    number = np.zeros(len(f), dtype=np.int64)
    number[shown] = np.arange(1, len(shown) + 1)
    names = f["name"].astype(str).to_numpy()
    return Report(a, advice, order, shown, number, short_names(names[order]), tables)


def build_report(a: Analysis, advice: dict[str, Advice] | None, top: int) -> Report:
    from ..advise import advise_all

    return _model(a, advise_all(a) if advice is None else advice, top)


def offchip_column(a: Analysis) -> str | None:
    cols = a.workload.byte_columns
    return "bytes_hbm" if "bytes_hbm" in cols else (cols[0] if cols else None)


def _bound_short(h: Hardware, label: object) -> str:
    """``compute:bf16-matrix`` → ``bf16-matrix``; ``memory:hbm`` → the level's label (``HBM3``); links too."""
    if not isinstance(label, str) or ":" not in label:
        return "–"
    kind, name = label.split(":", 1)
    if kind == "compute":
        return name
    lv = h.level_map.get(name) or h.link_map.get(name)
    return (lv.display if lv is not None else name) + (" link" if kind == "link" else "")


def bound_words(h: Hardware, label: str) -> str:
    """A bound in words for a sentence: "the bf16-matrix peak", "HBM3 bandwidth", "the PCIe 5.0 x16 link"."""
    kind, _, name = label.partition(":")
    if kind == "compute":
        return f"the {name} peak"
    if kind == "memory":
        return f"{_bound_short(h, label)} bandwidth"
    if kind == "link":
        return f"the {_bound_short(h, label)}"
    return "unknown"


def kernel_columns(r: Report, rows: np.ndarray, *, short: bool) -> tuple[list[tuple[str, bool | str]],
                                                                            list[pd.Series], list[str]]:
    """The per-kernel columns for workload ``rows`` as plain text: #, kernel (short or full name), count,
    time, FLOPs, off-chip bytes, intensity, then per device t_roof, of roof and bound. Also returns, per
    column, the device it belongs to ("" for the kernel's own columns)."""
    a = r.a
    f = a.workload.frame.iloc[rows]
    off = offchip_column(a)
    multi = len(a.hardware) > 1
    names = f["name"].astype(str)
    headers: list[tuple[str, bool | str]] = [("#", True), ("kernel", False), ("count", True), ("time", True),
                                             ("FLOPs", True)]
    cols = [pd.Series(np.where(r.number[rows] > 0, r.number[rows].astype(str), ""), dtype=object),
            names.map(r.short).astype(object) if short else names.astype(object),
            f["count"].map("{:,}".format).astype(object), vfmt(f["time_s"], fmt_time), vfmt(f["flops"], fmt_flops)]
    if not (short and multi):  # the body's table has no room for bytes beside two devices; intensity says it
        headers.append(("off-chip bytes", True))
        cols.append(vfmt(f[off], fmt_bytes) if off else pd.Series(["–"] * len(rows), dtype=object))
    headers.append(("intensity", True))
    if off:
        with np.errstate(divide="ignore", invalid="ignore"):
            b = f[off].to_numpy(dtype=np.float64)
            fl = f["flops"].to_numpy(dtype=np.float64)
            inten = np.where(b > 0, fl / b, np.nan)
        cols.append(vfmt(inten, fmt_intensity))
    else:
        cols.append(pd.Series(["–"] * len(rows), dtype=object))
    owner = [""] * len(headers)
    for h in a.hardware:
        tab = r.tables[h.id].iloc[rows]
        bounds = tab["bound"].to_numpy(dtype=object)
        uniq = {b: _bound_short(h, b) for b in pd.unique(pd.Series(bounds, dtype=object).dropna())}
        bound_col = pd.Series([uniq.get(b, "–") if isinstance(b, str) else "–" for b in bounds], dtype=object)
        suffix = f" {h.id}" if multi and not short else ""
        headers += [(f"t_roof{suffix}", True), (f"of roof{suffix}", True), (f"bound{suffix}", "t")]
        cols += [vfmt(tab["t_roof_s"], fmt_time), vfmt(tab["efficiency"], pct), bound_col]
        owner += [h.id] * 3
    return headers, [c.reset_index(drop=True) for c in cols], owner

