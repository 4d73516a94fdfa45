"""``analyze(workload, hardware) -> Analysis``: the one value every consumer (CLI, charts, pages, report) reads.

The math lives in :mod:`roofcore.roofline` and runs vectorised once per device. What every reader shares is
computed once here: :attr:`Analysis.timed` (has a measured time > 0) and, per device, :meth:`Analysis.derived`
(achieved FLOP/s, efficiency, headroom, bound label); the other per-kernel columns (intensities, shares of peak,
flag messages) are built on demand by :meth:`Analysis.table` so a million-kernel analysis stays small in memory.
:meth:`Analysis.take` gives the analysis of some of its kernels without evaluating anything again. The JSON
document is written by :func:`roofcore.output.analysis_json_chunks` alone (:meth:`Analysis.json_fields` gives it
the fields around the kernel records).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from . import gcpause
from .communication import communication
from .errors import RoofcoreError
from .models import Hardware, Workload
from .roofline import FLAG_CODES, DeviceResult, Flag, Inputs, attainable, evaluate
from .units import fmt_rate
from .wording import flag_lists


def inputs(w: Workload) -> Inputs:
    """The arrays :func:`~roofcore.roofline.evaluate` reads.

    A kernel given by rates (``flops_rate`` FLOP/s, ``bandwidth_<level>`` byte/s; no duration) goes in as one
    second of its run: FLOPs = its FLOP rate, bytes = its bandwidths, time 1 s, so its bound, share of the roof and
    flags come out as for any kernel (:func:`_by_rates` then leaves its seconds unknown)."""
    f = w.frame
    pc, pu = _codes(f["precision"])
    uc, uu = _codes(f["unit"])
    nu = len(uu) + 1
    combined = (pc.astype(np.int64) + 1) * nu + (uc.astype(np.int64) + 1)
    codes, uniq = pd.factorize(combined)
    combos = tuple(((pu[c // nu - 1] if c // nu else None), (uu[c % nu - 1] if c % nu else None)) for c in uniq)
    flops, time_s = f["flops"].to_numpy(dtype=np.float64), f["time_s"].to_numpy(dtype=np.float64)
    byte_cols = {c[len("bytes_"):]: f[c].to_numpy(dtype=np.float64) for c in w.byte_columns}
    rated = _rated(f)
    if rated is not None:
        flops, time_s = _rate_or(f, "flops_rate", rated, flops), np.where(rated, 1.0, time_s)
        byte_cols = {k: _rate_or(f, f"bandwidth_{k}", rated, v) for k, v in byte_cols.items()}
    return Inputs(flops=flops, time_s=time_s, count=f["count"].to_numpy(dtype=np.int64), byte_cols=byte_cols,
                  combo_codes=codes.astype(np.int64), combos=combos)


def _rated(f: pd.DataFrame) -> np.ndarray | None:
    """Kernels placed by their rates: a FLOP rate, no duration, and FLOPs or off-chip bytes unknown (None: none)."""
    if "flops_rate" not in f.columns:
        return None
    rate = f["flops_rate"].to_numpy(dtype=np.float64)
    off = f["bytes_hbm"].to_numpy(dtype=np.float64) if "bytes_hbm" in f.columns else np.full(len(f), np.nan)
    rated = np.isfinite(rate) & f["time_s"].isna().to_numpy() & (f["flops"].isna().to_numpy() | np.isnan(off))
    return rated if rated.any() else None


def _rate_or(f: pd.DataFrame, col: str, rated: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``col`` (a rate) for the rated kernels, ``other`` for the rest; NaN where the frame lacks the column."""
    return np.where(rated, _col(f, col), other)


def _by_rates(r: DeviceResult, rated: np.ndarray | None) -> DeviceResult:
    """The result of :func:`_inputs`' one-second stand-ins made honest: their seconds (roof, serial, per resource)
    unknown, flagged missing-time, the roof time per second kept as ``rate_roof`` for the table."""
    if rated is None:
        return r
    unknown = np.where(rated, np.nan, 1.0)
    flags = r.flags | np.where(rated, np.uint16(Flag.MISSING_TIME), np.uint16(0)).astype(np.uint16)
    return replace(r, t_roof=r.t_roof * unknown, t_serial=r.t_serial * unknown, times=tuple(x * unknown for x in r.times),
                   flags=flags, rated=rated, rate_roof=np.where(rated, r.t_roof, np.nan))


def _col(f: pd.DataFrame, name: str) -> np.ndarray:
    """A float column of the frame, NaN where the frame lacks it."""
    return f[name].to_numpy(dtype=np.float64) if name in f.columns else np.full(len(f), np.nan)


def _codes(col: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Integer codes (-1 missing) and the distinct values of a small closed-set column."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(), list(col.cat.categories)
    codes, uniq = pd.factorize(col.to_numpy(dtype=object), use_na_sentinel=True)
    return codes, [None if pd.isna(x) else x for x in uniq]


@dataclass(frozen=True)
class Derived:
    """The per-kernel values derived from a device's roofline, computed once per analysis and device
    (:meth:`Analysis.derived`) and read by the table, the JSON and CSV, the charts, the views and the report."""

    #: the seconds the rates below are over: the measured time where > 0, 1 for a kernel placed by rates, else NaN
    seconds: npt.NDArray[np.float64]
    #: FLOP/s over those seconds (for a kernel placed by rates: its FLOP rate); NaN without them
    achieved_flops_per_s: npt.NDArray[np.float64]
    #: share of the roof reached: t_roof / measured time (rates: roof time per second measured); NaN untimed
    efficiency: npt.NDArray[np.float64]
    #: measured − roofline seconds where a time is given (a zero time too); NaN where either is unknown
    headroom_s: npt.NDArray[np.float64]
    #: "memory:hbm", "link:nvlink", "compute:bf16-matrix"; None where the bound is unknown
    bound: npt.NDArray[np.object_]


@dataclass(frozen=True)
class Analysis:
    """A workload on one or more devices. ``results`` is aligned with ``hardware``."""

    workload: Workload
    results: tuple[DeviceResult, ...]
    achievable: bool = False  #: whether measured (achievable) ceilings replaced the theoretical peaks
    #: :class:`Derived` per device id, made on first use (never passed on by ``replace``)
    _derived: dict[str, Derived] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def hardware(self) -> list[Hardware]:
        return [r.hardware for r in self.results]

    def result(self, hw_id: str) -> DeviceResult:
        for r in self.results:
            if r.hardware.id == hw_id:
                return r
        raise RoofcoreError(f"hardware {hw_id!r} is not in this analysis ({', '.join(h.id for h in self.hardware)})")

    # ------------------------------------------------------------------------------------- per kernel

    @cached_property
    def timed(self) -> npt.NDArray[np.bool_]:
        """Per kernel: has a measured time (> 0; a zero or unknown time is not one). The one meaning of "timed":
        efficiency, achieved FLOP/s, the share basis and ``kernels_missing_time`` all read it."""
        t: npt.NDArray[np.float64] = self.workload.frame["time_s"].to_numpy(dtype=np.float64)
        timed: npt.NDArray[np.bool_] = ~np.isnan(t) & (t > 0)
        return timed

    def derived(self, hw_id: str) -> Derived:
        """Achieved FLOP/s, efficiency, headroom and bound label of every kernel on ``hw_id``, computed once."""
        if hw_id not in self._derived:
            self._derived[hw_id] = self._derive(self.result(hw_id))
        return self._derived[hw_id]

    def _by_rate_inputs(self, r: DeviceResult) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                                                        npt.NDArray[np.float64]]:
        """FLOPs, seconds and roof seconds as the table divides them: a kernel placed by rates (no duration) takes
        part as one second of its run (its FLOP rate, 1 s, its roof time per second measured)."""
        f = self.workload.frame
        flops, t = f["flops"].to_numpy(dtype=np.float64), f["time_s"].to_numpy(dtype=np.float64)
        if r.rated is None:
            return flops, t, r.t_roof
        assert r.rate_roof is not None  # set with ``rated`` (_by_rates)
        return (np.where(r.rated, _col(f, "flops_rate"), flops), np.where(r.rated, 1.0, t),
                np.fmax(r.t_roof, r.rate_roof))

    def _derive(self, r: DeviceResult) -> Derived:
        w_flops, w_t, w_roof = self._by_rate_inputs(r)
        t = self.workload.frame["time_s"].to_numpy(dtype=np.float64)
        idx, labels = self.bound_labels(r.hardware.id)
        bound = np.array(labels, dtype=object)[idx]
        bound[idx == 0] = None  # slot 0: no bound
        seconds = np.where((w_t > 0) & ~np.isnan(w_t), w_t, np.nan)  # timed, or placed by rates (one second)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Derived(seconds=seconds, achieved_flops_per_s=w_flops / seconds, efficiency=w_roof / seconds,
                           headroom_s=np.where(~np.isnan(t), t - r.t_roof, np.nan), bound=bound)

    def take(self, rows: Sequence[int] | npt.NDArray[np.integer[Any]],
             hw_ids: Sequence[str] | None = None) -> Analysis:
        """The same analysis for some of its kernels (row positions, in that order) on ``hw_ids`` (default: every
        device): the workload's rows and each device's arrays taken, nothing evaluated again."""
        idx = np.asarray(rows, dtype=np.int64)
        w = self.workload
        sub = replace(w, frame=w.frame.iloc[idx].reset_index(drop=True))
        results = self.results if hw_ids is None else tuple(self.result(h) for h in hw_ids)
        return Analysis(workload=sub, results=tuple(_take(r, idx) for r in results), achievable=self.achievable)

    def table(self, hw_id: str | None = None, *, messages: bool = True) -> pd.DataFrame:
        """One row per kernel × device with every derived field (base units), JSON field names flattened."""
        results = [self.result(hw_id)] if hw_id else list(self.results)
        with gcpause.paused():  # a list of flags per row: the collector's passes would walk them all (gcpause)
            return pd.concat([self._device_table(r, messages) for r in results], ignore_index=True)

    def _device_table(self, r: DeviceResult, messages: bool) -> pd.DataFrame:
        f = self.workload.frame
        hw = r.hardware
        d = self.derived(hw.id)
        flops = f["flops"].to_numpy(dtype=np.float64)
        t = f["time_s"].to_numpy(dtype=np.float64)
        n = len(f)
        peak = r.peak()
        # the columns are gathered first and framed once: a column set on a frame costs pandas ~50 µs of checks,
        # and a chart, a view or an export builds this table for every device it shows
        ceil_names = np.array([c or "" for c in r.ceilings] or [""], dtype=object)
        cols: dict[str, Any] = {
            "name": f["name"].to_numpy(), "hardware": np.full(n, hw.id, dtype=object), "count": f["count"].to_numpy(),
            "group": f["group"].to_numpy(), "precision": f["precision"].to_numpy(), "unit": f["unit"].to_numpy(),
            "flops": flops, "time_s": t,
            "ceiling": ceil_names[r.ceiling_code] if len(r.ceilings) else np.full(n, "", dtype=object),
            "peak_flops_per_s": np.broadcast_to(np.asarray(peak, dtype=np.float64), (n,)).copy(),
        }
        # kernels placed by rates (no duration) take part as one second of their run: FLOP/s, byte/s, 1 s
        rated = r.rated

        def by_rate(col: str, other: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
            return other if rated is None else np.where(rated, _col(f, col), other)

        w_flops, _, w_roof = self._by_rate_inputs(r)
        with np.errstate(divide="ignore", invalid="ignore"):
            for col in self.workload.byte_columns:
                name = col[len("bytes_"):]
                b = f[col].to_numpy(dtype=np.float64)
                cols[col] = b
                b = by_rate(f"bandwidth_{name}", b)
                cols[f"intensity_{name}"] = np.where(b > 0, w_flops / b, np.where((b == 0) & (w_flops > 0), np.inf,
                                                                                   np.nan))
            cols["t_roof_s"] = r.t_roof
            cols["t_serial_s"] = r.t_serial
            cols["attainable_flops_per_s"] = attainable(w_flops, w_roof)
            cols["achieved_flops_per_s"] = d.achieved_flops_per_s
            cols["efficiency"] = d.efficiency
            cols["pct_peak_compute"] = d.achieved_flops_per_s / peak
            bw = np.array(r.bandwidths, dtype=np.float64)
            mem_bytes = np.full(n, np.nan)
            for i, name in enumerate(r.resources):
                if i == 0:
                    continue
                sel = r.mem_idx == i
                mem_bytes[sel] = by_rate(f"bandwidth_{name}", f[f"bytes_{name}"].to_numpy(dtype=np.float64))[sel]
            mem_bw = np.where(r.mem_idx > 0, bw[np.maximum(r.mem_idx, 0)], np.nan)
            cols["pct_peak_bandwidth"] = mem_bytes / d.seconds / mem_bw
            cols["headroom_s"] = d.headroom_s
        cols["bound"] = pd.Series(d.bound, dtype=object)  # object: pandas 3 would turn None into NaN in a str column
        cols["binding_level"] = pd.Series(np.where(r.mem_idx > 0, np.array(r.resources, dtype=object)[
            np.maximum(r.mem_idx, 0)], None), dtype=object)
        cols["flags_mask"] = r.flags
        cols["source"] = f["source"].to_numpy()
        cols["row"] = f["row"].to_numpy()
        out = pd.DataFrame(cols)
        if messages:
            out["flags"] = flag_lists(out, r)
        return out

    # ------------------------------------------------------------------------------------- per device

    def bound_labels(self, hw_id: str) -> tuple[np.ndarray, list[str]]:
        """Per kernel an index into the returned label list ("memory:hbm", "compute:bf16-matrix", "unknown")."""
        r = self.result(hw_id)
        labels = [f"{k}:{n}" for k, n in zip(r.resource_kinds, r.resources, strict=True)]
        labels[0] = "unknown"  # slot 0 is never a memory label; reuse it for kernels without a bound
        base = len(labels)
        labels += [f"compute:{c}" if c else "compute:unknown" for c in r.ceilings]
        idx = np.where(r.bound_idx > 0, r.bound_idx, np.where(r.bound_idx == 0, base + r.ceiling_code, 0))
        return idx.astype(np.int64), labels

    def summary(self, hw_id: str) -> dict[str, Any]:
        """Workload totals on one device: Σ time, Σ t_roof, speedup if every kernel reached its roof, time share by
        bound, and ``coverage``: which share of the kernels and of the measured time these numbers cover.

        Headlines are computed over the kernels whose roofline is known (FLOPs and bytes known): Σ t_roof and
        the speedup leave the others out rather than count them as zero or as already at their roof."""
        r = self.result(hw_id)
        f = self.workload.frame
        t = f["time_s"].to_numpy(dtype=np.float64)
        timed = self.timed
        known = ~np.isnan(r.t_roof)
        total_time = float(np.nansum(t)) if (~np.isnan(t)).any() else None
        t_roof_total = float(r.t_roof[known].sum()) if known.any() else None
        covered = timed & known
        speedup = None
        tiny_gain_share = None
        if covered.any():
            at_roof = np.minimum(t[covered], r.t_roof[covered])
            speedup = float(t[covered].sum() / at_roof.sum()) if at_roof.sum() > 0 else None
            gain = t[covered] - at_roof
            if gain.sum() > 0:
                tiny = (r.flags[covered] & Flag.TINY) != 0
                tiny_gain_share = float(gain[tiny].sum() / gain.sum())
        basis = "measured" if timed.any() else "roofline"
        weights = np.where(timed, t, 0.0) if timed.any() else np.nan_to_num(r.t_roof)
        idx, labels = self.bound_labels(hw_id)
        sums = np.bincount(idx, weights=weights, minlength=len(labels))
        total = sums.sum()
        share = {labels[i]: float(sums[i] / total) for i in np.argsort(-sums) if sums[i] > 0} if total > 0 else {}
        flags = r.flags
        timed_total = float(t[timed].sum()) if timed.any() else 0.0
        rated = r.rated if r.rated is not None else np.zeros(len(t), dtype=bool)
        coverage = {
            "kernels": len(t),
            "kernels_known": int(known.sum()),
            "time_s_known": float(t[covered].sum()) if timed.any() else None,
            "time_share_known": (float(t[covered].sum() / timed_total) if timed_total > 0 else None),
            "kernels_missing_flops": int((np.isnan(f["flops"].to_numpy(dtype=np.float64)) & ~rated).sum()),
            "kernels_missing_bytes": int(((flags & Flag.MISSING_BYTES) != 0).sum()),
            "kernels_missing_time": int((~timed).sum()),
            "speedup_tiny_share": tiny_gain_share,
            # kernels placed by their achieved rates alone (no duration): only when there are some
            **({"kernels_rates_only": int(rated.sum())} if rated.any() else {}),
        }
        return {
            "hardware": hw_id,
            "kernels": len(t),
            "time_s": total_time,
            "t_roof_s": t_roof_total,
            "t_serial_s": float(np.nansum(r.t_serial)) if (~np.isnan(r.t_serial)).any() else None,
            "speedup_if_at_roof": speedup,
            "time_share_by_bound": share,
            "share_basis": basis,
            "coverage": coverage,
            "flag_counts": {FLAG_CODES[fl]: int(((flags & fl) != 0).sum()) for fl in Flag if ((flags & fl) != 0).any()},
            "lacking_levels": list(r.lacking),
            # collectives' share of the time and of the link roof: only when the workload has some
            **({"communication": comm} if (comm := communication(f, r.hardware, self.achievable)) else {}),
        }

    def top_by_headroom(self, hw_id: str, n: int = 10) -> pd.DataFrame:
        tab = self.table(hw_id)
        key = tab["headroom_s"].where(tab["headroom_s"].notna(), -np.inf)
        return tab.loc[key.sort_values(ascending=False).index[:n]]

    # ------------------------------------------------------------------------------------- export

    def json_fields(self) -> dict[str, Any]:
        """The JSON contract's fields but ``kernels`` (README "JSON output"), in its order: what
        :func:`roofcore.output.analysis_json_chunks` (the one writer of the analysis JSON) writes around the kernel
        records. Use :func:`roofcore.output.analysis_document` for the whole document as a dict."""
        from .catalog import hardware_to_json
        from .ingest.join import counter_summary

        return {
            "schema_version": 1,
            "workload": {"name": self.workload.name, "sources": list(self.workload.sources),
                         "formats": list(self.workload.formats), "kernels": len(self.workload)},
            "roofs": "achievable" if self.achievable else "theoretical",
            "hardware": [hardware_to_json(h) for h in self.hardware],
            "summary": [self.summary(h.id) for h in self.hardware],
            "skipped": [{"source": s.source, "row": s.row, "reason": s.reason} for s in self.workload.skipped],
            "warnings": list(self.workload.warnings),
            # queue packets and API rows the inputs listed among their kernels: only when there were some
            **({"runtime_entries": self.workload.runtime.to_json()} if self.workload.runtime else {}),
            # a timeline joined with counters of some launches: the share of its time they cover (ingest.join)
            **({"counters": counters} if (counters := counter_summary(self.workload)) else {}),
        }


def _take(r: DeviceResult, idx: npt.NDArray[np.int64]) -> DeviceResult:
    """A device's result for the kernels at ``idx`` (per-combo fields, ceilings and peaks, stay whole)."""
    rated = r.rated[idx] if r.rated is not None else None
    keep = rated is not None and bool(rated.any())
    return replace(r, t_roof=r.t_roof[idx], t_serial=r.t_serial[idx], ceiling_code=r.ceiling_code[idx],
                   bound_idx=r.bound_idx[idx], mem_idx=r.mem_idx[idx], flags=r.flags[idx],
                   times=tuple(x[idx] for x in r.times), rated=rated if keep else None,
                   rate_roof=r.rate_roof[idx] if keep and r.rate_roof is not None else None)


def analyze(workload: Workload, hardware: Hardware | Iterable[Hardware], *, achievable: bool = False) -> Analysis:
    """Place every kernel of ``workload`` on the roofline of each device in ``hardware``."""
    hws = [hardware] if isinstance(hardware, Hardware) else list(hardware)
    if not hws:
        raise RoofcoreError("analyze needs at least one hardware device")
    if len(workload) == 0:
        raise RoofcoreError("the workload has no kernels to analyse")
    inp, rated = inputs(workload), _rated(workload.frame)
    return Analysis(workload=workload, achievable=achievable,
                    results=tuple(_by_rates(evaluate(inp, h, achievable=achievable), rated) for h in hws))


# --------------------------------------------------------------------------------------------- helpers


def coverage_text(summary: Mapping[str, Any], counts: Mapping[str, str] | None = None) -> str:
    """One sentence saying what share of the workload the headline numbers cover, and what is missing.

    ``"Roofline known for 62% of the measured time (12 of 20 kernels); unknown for the rest: FLOPs unknown for 8
    kernels."`` Empty when every kernel's roofline is known. The counts are the summary's rows, or ``counts``
    where given (``known``: "12 of 20 kernels"; ``missing_flops``, ``missing_bytes``, ``rates_only``: "8 kernels
    (30 launches)"), as :func:`roofcore.views.coverage_counts` counts kernels whatever the rows are."""
    c = summary.get("coverage") or {}
    n, k = c.get("kernels", 0), c.get("kernels_known", 0)
    if n and k == n:
        return ""
    said = dict(counts or {})
    kern = said.get("known") or f"{k:,} of {n:,} {'kernel' if n == 1 else 'kernels'}"
    share = c.get("time_share_known")
    head = (f"Roofline known for {share_text(share)} of the measured time ({kern})" if share is not None
            else f"Roofline known for {kern}")
    missing = []
    if c.get("kernels_missing_flops"):
        missing.append(f"FLOPs unknown for {said.get('missing_flops') or _kernels(c['kernels_missing_flops'])}")
    if c.get("kernels_missing_bytes"):
        missing.append(f"off-chip bytes unknown for {said.get('missing_bytes') or _kernels(c['kernels_missing_bytes'])}")
    if c.get("kernels_rates_only"):
        missing.append(f"{said.get('rates_only') or _kernels(c['kernels_rates_only'])} placed by achieved rates alone "
                       "(FLOP/s and byte/s, no duration: their time, FLOPs and bytes are unknown)")
    if k == 0:
        return head + ("; " + ", ".join(missing) if missing else "") + ": no headline can be computed."
    return head + ("; the rest is unknown: " + ", ".join(missing) if missing else "") + "."


def speedup_note(summary: Mapping[str, Any]) -> str:
    """A caveat for the "× faster" headline when its gain comes mostly from launch-bound kernels (under 1 µs)."""
    share = (summary.get("coverage") or {}).get("speedup_tiny_share")
    if share is not None and share >= 0.5:
        return (f"{share_text(share)} of that gain comes from launch-bound kernels under 1 µs per launch, which no "
                "roof bounds: batch or fuse them rather than expect it.")
    return ""


def _kernels(n: int) -> str:
    return f"{n:,} {'kernel' if n == 1 else 'kernels'}"


def share_text(x: float) -> str:
    """A share as a percentage with two significant figures (100% only when it is whole)."""
    if x >= 1:
        return "100%"
    if x <= 0:
        return "0%"
    pct = x * 100
    if pct >= 99.5:
        return ">99%"  # never round a part up to the whole
    return f"{pct:.0f}%" if pct >= 10 else f"{pct:.2g}%" if pct >= 1 else f"{pct:.1g}%"


__all__ = ["Analysis", "Derived", "analyze", "coverage_text", "fmt_rate", "speedup_note"]
