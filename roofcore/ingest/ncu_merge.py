"""Nsight Compute exports of the same launches read together are one set of launches, not two.

People export one profile several times (a ``--section SpeedOfLight_RooflineChart`` page with the FLOP rates, a
details page with the duration and the DRAM bytes, a raw page) or profile the same launches twice. Read together
(:func:`roofcore.ingest.read_many`), a launch that two ncu exports both list — the same ``ID``, ``Process ID`` and
kernel name, each unique in its file — becomes one launch: every figure is taken from the first export that knows
it, a figure both know must agree (else a warning names it, with both values, and the first is kept), and then
FLOPs = FLOP rate × duration and bytes = bandwidth × duration where only the rates were known
(:mod:`.ncu_rates`). Launches only one export lists stay as they are; exports that share no launch are simply put
side by side, as before."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..models import Workload
from ..units import fmt_si
from .frames import combine

_NCU = ("ncu-details", "ncu-raw")
#: figures compared and merged -> (words, unit) for messages; bytes_<level> / bandwidth_<level> added per frame
_FIGURES = {"time_s": ("duration", "s"), "flops": ("FLOPs", "FLOP"), "flops_rate": ("FLOP rate", "FLOP/s"),
            "sm_clock_hz": ("SM clock (SM Frequency)", "Hz")}
_TEXT = ("precision", "unit", "group")  # first non-empty
#: relative difference under which two exports agree (values printed to 3 significant digits differ by up to 0.5%)
TOLERANCE = 0.02


def _level(col: str) -> str:
    """``bytes_hbm`` / ``bandwidth_hbm`` -> "DRAM", ``bytes_l2`` -> "L2"."""
    name = col.split("_", 1)[1]
    return "DRAM" if name == "hbm" else name.upper()


def _is_ncu(w: Workload) -> bool:
    return bool(w.formats) and all(f in _NCU for f in w.formats) and "process_id" in w.frame.columns


def merge_launches(workloads: list[Workload]) -> list[Workload]:
    """``workloads`` with each Nsight Compute export merged into an earlier one it shares launches with."""
    if sum(_is_ncu(w) for w in workloads) < 2:
        return workloads
    out: list[Workload] = []
    for w in workloads:
        for i, m in enumerate(out):
            joined = _join(m, w) if _is_ncu(w) and _is_ncu(m) else None
            if joined is not None:
                out[i] = joined
                break
        else:
            out.append(w)
    return out


def _keys(f: pd.DataFrame, side: str) -> pd.Index:
    """A launch's key (ID, process, kernel name) per row; rows with no process number or a key the file repeats get
    a key of their own, unique to ``side`` (never matched)."""
    pid = f["process_id"].to_numpy(dtype=np.float64)
    keys = (f["row"].astype(str) + "\x00" + pd.Series(pid).map(repr).to_numpy() + "\x00" + f["name"].astype(str))
    keys = keys.to_numpy(dtype=object)
    bad = np.isnan(pid) | pd.Index(keys).duplicated(keep=False)
    keys[bad] = [f"\x01{side}{i}" for i in np.flatnonzero(bad)]
    return pd.Index(keys)


def _col(f: pd.DataFrame, col: str, rows: np.ndarray) -> np.ndarray:
    return f[col].to_numpy(dtype=np.float64)[rows] if col in f.columns else np.full(len(rows), np.nan)


def _join(a: Workload, b: Workload) -> Workload | None:
    """``a`` and ``b`` as one workload, launches both list merged; None when they share none."""
    fa, fb = a.frame.reset_index(drop=True), b.frame.reset_index(drop=True)
    pos = _keys(fb, "b").get_indexer(_keys(fa, "a"))
    ia = np.flatnonzero(pos >= 0)
    if not len(ia):
        return None
    ib = pos[ia]
    frame = fa.copy()
    for c in _TEXT:
        if c in frame.columns:
            frame[c] = frame[c].astype(object)
    figures = dict(_FIGURES)
    for c in dict.fromkeys([*fa.columns, *fb.columns]):
        if c.startswith(("bytes_", "bandwidth_")):
            figures[c] = (f"{_level(c)} bytes", "B") if c.startswith("bytes_") else (f"{_level(c)} bandwidth", "B/s")
    disagree: list[str] = []
    for c, (words, unit) in figures.items():
        va, vb = _col(fa, c, ia), _col(fb, c, ib)
        if np.isnan(vb).all():
            continue
        both = ~np.isnan(va) & ~np.isnan(vb)
        with np.errstate(invalid="ignore"):
            differ = both & (np.abs(va - vb) > TOLERANCE * np.maximum(np.abs(va), np.abs(vb)))
        if differ.any():
            k = int(np.flatnonzero(differ)[0])
            disagree.append(f"{words} for {int(differ.sum()):,} launch(es) (e.g. ID {fa['row'].iloc[ia[k]]}: "
                            f"{fmt_si(va[k], unit, 4)} in {a.name}, {fmt_si(vb[k], unit, 4)} in {b.name})")
        if c not in frame.columns:
            frame[c] = np.nan
        frame.loc[ia, c] = np.where(np.isnan(va), vb, va)
    for c in _TEXT:
        if c in fb.columns:
            va = frame[c].to_numpy(dtype=object)[ia]
            frame.loc[ia, c] = np.where(pd.isna(va), fb[c].to_numpy(dtype=object)[ib], va)
    frame.loc[ia, "source"] = (fa["source"].astype(str).to_numpy()[ia] + " + "
                               + fb["source"].astype(str).to_numpy()[ib])
    derived = _fill_from_rates(frame, ia)
    rest = fb.drop(index=ib)
    frame = pd.concat([frame, rest], ignore_index=True, sort=False) if len(rest) else frame
    notes = [f"{b.name} lists {len(ia):,} of the launches {a.name} lists (same ID, process and kernel name): read "
             f"as one launch each, not counted twice{derived}."]
    if disagree:
        notes.append(f"{a.name} and {b.name} disagree on the same launches: {'; '.join(disagree)}; the first file's "
                     "value is kept (different replay passes measure at different clocks).")
    base = combine([a, b])
    meta = dict(base.meta)
    if not (a.meta.get("time_only") == b.meta.get("time_only") == "true"):
        meta.pop("time_only", None)  # one export's times with the other's rates or counters: not a timeline alone
    return replace(base, frame=frame, meta=meta, warnings=tuple(dict.fromkeys(
        (*_current(a, len(fa), frame, ia), *_current(b, len(fb), frame, ia), *notes))))


def _fill_from_rates(frame: pd.DataFrame, rows: np.ndarray) -> str:
    """FLOPs = FLOP rate × duration and bytes = bandwidth × duration on the merged ``rows`` where only the rate
    is known; the words saying so (empty when nothing was derived)."""
    t = frame["time_s"].to_numpy(dtype=np.float64)[rows]
    said = []
    for total, rate, words in (("flops", "flops_rate", "FLOPs = FLOP rate × duration"),
                               *((c, c.replace("bytes_", "bandwidth_"), f"{_level(c)} bytes = bandwidth × duration")
                                 for c in frame.columns if c.startswith("bytes_"))):
        if rate not in frame.columns:
            continue
        have = frame[total].to_numpy(dtype=np.float64)[rows]
        r = frame[rate].to_numpy(dtype=np.float64)[rows]
        fill = np.isnan(have) & np.isfinite(r) & np.isfinite(t)
        if fill.any():
            frame.loc[rows[fill], total] = r[fill] * t[fill]
            said.append(f"{words} for {int(fill.sum()):,}")
    return f"; derived figures: {', '.join(said)}" if said else ""


#: warnings of one export that the other answers once every launch of it is merged: (marker, column now known)
_ANSWERED = (("have rates only (NVIDIA's roofline section", "time_s"), ("no duration (gpu__time_duration", "time_s"),
             ("no FLOP counters in this export", "flops"), ("no DRAM byte counter", "bytes_hbm"))


def _current(w: Workload, launches: int, merged: pd.DataFrame, rows: np.ndarray) -> tuple[str, ...]:
    """``w``'s warnings without those the merge answered: every one of its ``launches`` merged (into ``rows`` of
    the merged frame) and the figure now known for each."""
    if len(rows) < launches:
        return w.warnings
    out = []
    for x in w.warnings:
        col = next((c for marker, c in _ANSWERED if marker in x), None)
        if col is None or col not in merged.columns or np.isnan(merged[col].to_numpy(dtype=np.float64)[rows]).any():
            out.append(x)
    return tuple(out)
