"""Two runs of a workload on one device (:func:`compare`): kernels matched by name after summing their launches
(or paired by hand where renamed), per-kernel and total speedups, measured times where both runs have them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..analyze import Analysis
from ..errors import InputError
from ..ingest.frames import launch_sums
from ..models import OFFCHIP, Hardware, Workload
from ..roofline import attainable
from ..units import fmt_time
from .projection import clean, evaluate
from .transforms import HBM, SPLIT, check_workload


def by_name(workload: Workload) -> Workload:
    """Launches of the same kernel name summed into one row (FLOPs, bytes, time; launches counted)."""
    f = workload.frame
    if not f["name"].duplicated().any():
        return workload
    sums = [c for c in ["count", "flops", "time_s", *workload.byte_columns, *SPLIT] if c in f]
    g = f.groupby(f["name"].astype(str), sort=False)
    agg, note = launch_sums(f, g, sums)
    first = g[[c for c in f.columns if c not in sums and c != "name"]].first()
    out = pd.concat([first, agg], axis=1).reset_index().rename(columns={"index": "name"})
    out["row"] = g.size().astype(str).radd("launches: ").to_numpy()
    out["count"] = out["count"].fillna(1).astype(np.int64)
    for c in ("precision", "unit", "group"):
        out[c] = pd.Series(out[c].astype(object).where(out[c].notna(), None), dtype=object)
    return replace(workload, frame=out[[c for c in f.columns if c in out.columns]],
                   warnings=(*workload.warnings, note) if note else workload.warnings)


@dataclass(frozen=True)
class Comparison:
    """Two runs of a workload on one device, kernels matched by name."""

    hardware: str
    old: Analysis  #: launches aggregated by name
    new: Analysis
    table: pd.DataFrame  #: one row per matched kernel
    only_old: tuple[str, ...]
    only_new: tuple[str, ...]
    totals: Mapping[str, Any]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        cols = list(self.table.columns)
        return {"schema_version": 1, "hardware": self.hardware, "old": self.old.workload.name,
                "new": self.new.workload.name, "totals": {k: clean(v) for k, v in self.totals.items()},
                "kernels": [{k: clean(v) for k, v in zip(cols, row, strict=True)}
                            for row in self.table.itertuples(index=False)],
                "only_old": list(self.only_old), "only_new": list(self.only_new), "notes": list(self.notes)}


def _side(a: Analysis, hw_id: str) -> pd.DataFrame:
    if a.result(hw_id).rated is None:  # the usual case: the few columns needed, not the whole table
        return _plain_side(a, hw_id)
    tab = a.table(hw_id, messages=False)
    t = tab["time_s"].to_numpy(dtype=np.float64)
    timed = a.timed
    off = f"intensity_{OFFCHIP}"
    return pd.DataFrame({
        "name": tab["name"].astype(str), "time": np.where(timed, t, tab["t_roof_s"]),
        "basis": _basis(timed.astype(np.int8)), "t_roof_s": tab["t_roof_s"], "flops": tab["flops"],
        "bytes_hbm": tab.get(HBM, np.nan), "intensity": tab.get(off, np.nan),
        "perf": np.where(timed, tab["achieved_flops_per_s"], tab["attainable_flops_per_s"]), "bound": tab["bound"]})


def _basis(codes: np.ndarray) -> pd.Categorical:
    """Each kernel's time basis from codes 0 roofline, 1 measured, 2 mixed (categories: compared as codes)."""
    return pd.Categorical.from_codes(codes, categories=["roofline", "measured", "mixed"])


def _plain_side(a: Analysis, hw_id: str) -> pd.DataFrame:
    """:func:`_side` for an analysis with no kernel placed by its rates: the same columns computed from the frame
    and the device result alone (the full table of a million kernels costs seconds)."""
    r, f = a.result(hw_id), a.workload.frame
    t, flops = f["time_s"].to_numpy(dtype=np.float64), f["flops"].to_numpy(dtype=np.float64)
    timed = a.timed
    hbm = f[HBM].to_numpy(dtype=np.float64) if HBM in f.columns else None
    idx, labels = a.bound_labels(hw_id)
    names = np.array([None, *labels[1:]], dtype=object)  # slot 0: no bound (the table's None)
    with np.errstate(divide="ignore", invalid="ignore"):
        inten = np.full(len(f), np.nan) if hbm is None else \
            np.where(hbm > 0, flops / hbm, np.where((hbm == 0) & (flops > 0), np.inf, np.nan))
        perf = np.where(timed, flops / t, attainable(flops, r.t_roof))
    return pd.DataFrame({  # copy=False: column by column, not stacked into one block (a copy of every column)
        "name": f["name"].astype(str), "time": np.where(timed, t, r.t_roof),
        "basis": _basis(timed.astype(np.int8)), "t_roof_s": r.t_roof.copy(), "flops": flops.copy(),
        "bytes_hbm": np.full(len(f), np.nan) if hbm is None else hbm.copy(), "intensity": inten, "perf": perf,
        "bound": pd.Series(names[idx], dtype=object)}, copy=False)


def compare(old: Workload, new: Workload, hw: Hardware, *, achievable: bool = False,
            pairs: Mapping[str, str] | Sequence[tuple[str, str]] | None = None) -> Comparison:
    """Per-kernel and total speedups of ``new`` over ``old`` on ``hw`` (measured times where both have them,
    else roofline times); kernels matched by name after summing their launches.

    ``pairs``: (old name, new name) matched by hand, for kernels renamed between the runs (a naive and a tiled
    GEMM); each name must be one that matches nothing by name. The table's ``name`` is the old name and
    ``name_new`` the new one. With no kernel matched the total speedup is ``None``: the two sums would compare
    different kernels."""
    check_workload(old, "compare (old)")
    check_workload(new, "compare (new)")
    ao, an = evaluate(by_name(old), hw, achievable=achievable), evaluate(by_name(new), hw, achievable=achievable)
    so, sn = _side(ao, hw.id), _side(an, hw.id)
    sn["name_new"] = sn["name"]
    by_hand = _pairs(pairs, so["name"], sn["name"])
    if by_hand:
        sn["name"] = sn["name"].map(lambda n: by_hand.get(n, n))
    m, unmatched_old, unmatched_new = _match(so, sn)
    with np.errstate(divide="ignore", invalid="ignore"):
        m["speedup"] = m["time_old"] / m["time_new"]
    b_old, b_new = m["basis_old"].cat.codes.to_numpy(), m["basis_new"].cat.codes.to_numpy()
    m["basis"] = _basis(np.where(b_old == b_new, b_old, 2).astype(np.int8))
    m = m.drop(columns=["basis_old", "basis_new"])
    only_old = tuple(so["name"][unmatched_old].tolist())
    only_new = tuple(sn["name_new"][unmatched_new].tolist())
    old_total, new_total = float(np.nansum(so["time"])), float(np.nansum(sn["time"]))
    both = (m["time_old"].notna() & m["time_new"].notna()).to_numpy()  # a matched kernel one side cannot time is
    mo, mn = float(m["time_old"][both].sum()), float(m["time_new"][both].sum())  # in neither matched sum
    totals = {"old_time_s": old_total, "new_time_s": new_total,
              "speedup": old_total / new_total if new_total > 0 and len(m) else None,
              "matched_old_time_s": mo, "matched_new_time_s": mn,
              "matched_speedup": mo / mn if mn > 0 else None, "matched": len(m), "paired": len(by_hand),
              "matched_share_old": mo / old_total if old_total > 0 else None,
              "matched_share_new": mn / new_total if new_total > 0 else None,
              "basis_old": "measured" if (so["basis"] == "measured").all() else
              ("roofline" if (so["basis"] == "roofline").all() else "mixed"),
              "basis_new": "measured" if (sn["basis"] == "measured").all() else
              ("roofline" if (sn["basis"] == "roofline").all() else "mixed")}
    notes = []
    untimed = (int(so["time"].isna().sum()), int(sn["time"].isna().sum()))
    if any(untimed):
        notes.append(f"{untimed[0]:,} kernel(s) of the old run and {untimed[1]:,} of the new one have neither a "
                     "measured time nor a roofline (FLOPs or off-chip bytes unknown): they are left out of the "
                     "totals and of the speedups, never counted as 0 s.")
    if "mixed" in (totals["basis_old"], totals["basis_new"]) or totals["basis_old"] != totals["basis_new"]:
        notes.append("Times are measured where a run has them, else roofline times: a speedup between a "
                     "measured and a roofline time compares a run with a bound.")
    if not len(m):
        notes.append("No kernel matched by name, so there is no speedup: the two totals would compare different "
                     "kernels. Pair renamed kernels by hand (a naive and a tiled GEMM have different names).")
    elif only_old or only_new:
        notes.append(f"{len(only_old)} kernel(s) only in the old run and {len(only_new)} only in the new one count "
                     "in the totals but have no per-kernel speedup.")
    return Comparison(hardware=hw.id, old=ao, new=an, table=m, only_old=only_old, only_new=only_new,
                      totals=totals, notes=tuple(notes))


def _match(so: pd.DataFrame, sn: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The two sides joined by name (each name once per side: launches are summed by name), in the old side's
    order, columns suffixed ``_old`` and ``_new`` as :meth:`pandas.DataFrame.merge` names them; and which rows of
    each side matched nothing. Looked up with Arrow's hash table: a million names in a fraction of a second."""
    key = pa.large_string()
    names_old, names_new = pa.array(so["name"]).cast(key), pa.array(sn["name"]).cast(key)
    if names_old.equals(names_new):
        at = np.arange(len(so))  # a rerun of the same program: the same kernels in the same order
    else:
        at = pc.index_in(names_old, value_set=names_new).fill_null(-1).to_numpy().astype(np.int64)
    i_old = np.flatnonzero(at >= 0)
    i_new = at[i_old]
    unmatched_old, unmatched_new = at < 0, np.ones(len(sn), dtype=bool)
    unmatched_new[i_new] = False
    same = len(i_old) == len(so) == len(sn) and (i_new == i_old).all()  # then no row is copied (copy on write)
    old = so.reset_index(drop=True) if same else so.iloc[i_old].reset_index(drop=True)
    new = (sn if same else sn.iloc[i_new]).drop(columns="name").reset_index(drop=True)
    old = old.rename(columns={c: f"{c}_old" for c in old.columns if c != "name"})
    new = new.rename(columns={c: f"{c}_new" for c in new.columns if c != "name_new"})
    return pd.concat([old, new], axis=1), unmatched_old, unmatched_new


def _pairs(pairs: Mapping[str, str] | Sequence[tuple[str, str]] | None, old: pd.Series, new: pd.Series
           ) -> dict[str, str]:
    """Hand-made pairs as new name -> old name, each checked: both names exist and match nothing by name."""
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs or ())
    if not items:
        return {}
    olds, news = set(old), set(new)
    out: dict[str, str] = {}
    for i, pair in enumerate(items):
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise InputError(where=f"pairs[{i}]", expected="an (old name, new name) pair", found=repr(pair))
        a, b = map(str, pair)
        for name, side, other, label in ((a, olds, news, "old"), (b, news, olds, "new")):
            if name not in side:
                raise InputError(where=f"pairs[{i}]", expected=f"a kernel of the {label} run",
                                 found=repr(name), hint="names are matched after summing launches by name.")
            if name in other:
                raise InputError(where=f"pairs[{i}]", expected="a kernel that matches nothing by name",
                                 found=f"{name!r}, in both runs", hint="it is matched by its name already.")
        if b in out or a in out.values():
            raise InputError(where=f"pairs[{i}]", expected="each kernel in one pair at most",
                             found=f"{a!r} -> {b!r}")
        out[b] = a
    return out


def comparison_text(c: Comparison, top: int = 25) -> str:
    """A plain-text report of a comparison (the CLI's `roofline compare`)."""
    t = c.totals
    lines = [f"{c.old.workload.name} -> {c.new.workload.name} on {c.hardware}: "
             f"{fmt_time(t['old_time_s'])} -> {fmt_time(t['new_time_s'])}"
             + (f", speedup {t['speedup']:.2f}x" if t["speedup"] else "")
             + f" ({t['basis_old']} -> {t['basis_new']} times)", ""]
    tab = c.table.assign(delta=c.table["time_old"] - c.table["time_new"]).sort_values("delta", ascending=False,
                                                                                      key=lambda s: s.abs())
    rows = tab.head(top if top > 0 else len(tab))
    w = max([6, *(min(len(n), 44) for n in rows["name"])])
    lines.append(f"{'kernel':<{w}}  {'old':>10}  {'new':>10}  {'speedup':>8}  basis")
    for r in rows.itertuples(index=False):
        name = r.name if r.name_new == r.name else f"{r.name} → {r.name_new}"  # paired by hand
        name = name if len(name) <= 44 else name[:43] + "…"
        sp = f"{r.speedup:.2f}x" if r.speedup == r.speedup and math.isfinite(r.speedup) else "–"
        lines.append(f"{name:<{w}}  {fmt_time(r.time_old):>10}  {fmt_time(r.time_new):>10}  {sp:>8}  {r.basis}")
    if c.only_old:
        lines.append(f"\nOnly in old ({len(c.only_old)}): " + ", ".join(c.only_old[:10]) + (" …" if len(c.only_old) > 10 else ""))
    if c.only_new:
        lines.append(f"Only in new ({len(c.only_new)}): " + ", ".join(c.only_new[:10]) + (" …" if len(c.only_new) > 10 else ""))
    lines += [f"Note: {n}" for n in c.notes]
    return "\n".join(lines)
