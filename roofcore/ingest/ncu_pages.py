"""The two Nsight Compute pages read into launches: the details page (long, one row per launch × metric) and the
raw page (wide, one row per launch, a units row), with the NVTX ranges and rule rows they carry."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa

from ..models import Skipped
from . import skip
from .ncu_metrics import TEXT, Launches, canonical, factor_for, metric_keys, rule_only, scale, wanted
from .ncu_read import (
    EURO_SAMPLE,
    INTEGRAL_UNITS,
    check_locale,
    dict_codes,
    first_row,
    read_block,
    required_width,
    to_float,
)


def _launch_runs(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row its launch (0…), and each launch's first row: ncu writes each launch's rows together, ids
    ascending; sorted otherwise."""
    if len(ids) < 2 or (ids[1:] >= ids[:-1]).all():
        change = np.ones(len(ids), dtype=bool)
        np.not_equal(ids[1:], ids[:-1], out=change[1:])
        return np.cumsum(change) - 1, np.flatnonzero(change)
    _, starts, launch = np.unique(ids, return_index=True, return_inverse=True)
    return launch, starts


def _check_value_locale(values: pa.ChunkedArray | pa.Array, u_names: list[str], u_codes: np.ndarray,
                        source: str) -> None:
    """Refuse a European decimal comma, judged on the first values (integral units tell 1.234 apart)."""
    integral = np.array([u in INTEGRAL_UNITS for u in u_names] or [False], dtype=bool)
    check_locale(values, integral[u_codes[:EURO_SAMPLE]], source)


def details_launches(data: bytes, block: tuple[int, int, int], names: list[str], source: str,
             skipped: list[Skipped]) -> Launches:
    """Pivot the long table: launches from the ``ID`` runs, metrics scattered into a launch × metric matrix."""
    start, end, _ = block
    first = first_row(data, start, end, names, 1)
    if first and int(first["__fields__"]) > len(names):  # trailing comma on data rows
        names = names + [f"__extra{i}" for i in range(int(first["__fields__"]) - len(names))]
    rule_cols: list[str] = [c for c in ("Rule Name", "Rule Type", "Rule Description") if c in names]
    nvtx_cols = _nvtx_columns(names)
    pid_col = ["Process ID"] if "Process ID" in names else []
    include = ["ID", *pid_col, "Kernel Name", "Metric Name", "Metric Unit", "Metric Value", *rule_cols, *nvtx_cols]
    dict_cols = {*pid_col, "Kernel Name", "Metric Name", "Metric Unit", *rule_cols, *nvtx_cols}
    fields = int(first.get("__fields__", 0) or 0)
    width = fields if required_width(names) <= fields < len(names) else None  # metric rows without rule columns
    table, ids, lines, bad = read_block(data, block, names, include, dict_cols, 1, source, width)
    skipped.extend(bad)
    m_codes, m_names = dict_codes(table.column("Metric Name"))
    is_metric = np.array([bool(m.strip()) for m in m_names] or [False], dtype=bool)[m_codes]
    rules = _rules(table, rule_cols, ~is_metric) if "Rule Name" in rule_cols else []
    ok_id = ~np.isnan(ids)
    for i in np.flatnonzero(is_metric & ~ok_id)[:1000]:
        skipped.append(skip(source, f"line {lines[i]}", "ID is not a launch number"))
    keep = is_metric & ok_id
    if not keep.any():
        if rules:
            raise rule_only(source, rules)
        return Launches(ids=np.empty(0), names=np.empty(0, dtype=object), metrics={}, rules=rules, first=first)
    k_codes, k_names = dict_codes(table.column("Kernel Name"))
    u_codes, u_names = dict_codes(table.column("Metric Unit"))
    values = table.column("Metric Value")
    if not keep.all():
        sel = np.flatnonzero(keep)
        ids, k_codes, m_codes, u_codes = ids[sel], k_codes[sel], m_codes[sel], u_codes[sel]
        values = values.take(pa.array(sel))
    _check_value_locale(values, u_names, u_codes, source)

    launch, starts = _launch_runs(ids)
    n_launch = len(starts)

    keys = metric_keys(m_names, u_names)  # (metric, unit) -> metric read, "" = not used
    used = sorted({k for k in keys.ravel() if k})
    n_slot = max(len(used), 1)
    slot_of_key = {k: i for i, k in enumerate(used)}
    pair_slot = np.vectorize(lambda k: slot_of_key.get(k, -1), otypes=[np.int64])(keys)
    factor = np.array([[factor_for(k, u) for u in u_names] or [np.nan] for k in used] or [[np.nan]])
    slot = pair_slot[m_codes, u_codes]
    numeric = np.array([k not in TEXT for k in used] + [False], dtype=bool)  # [-1]: not used
    sel = numeric[slot]
    slot_s, unit_s = slot[sel], u_codes[sel]
    vals_s = to_float(values if sel.all() else values.filter(pa.array(sel)))  # only the metrics used
    scaled = scale(vals_s, factor[slot_s, unit_s])
    flat = launch[sel] * n_slot + slot_s
    mat: np.ndarray = np.full(n_launch * n_slot, np.nan)
    mat[flat] = scaled
    mat = mat.reshape(n_launch, n_slot)
    per_cell = np.bincount(flat, minlength=n_launch * n_slot).reshape(n_launch, n_slot)
    missing_rows = np.bincount(slot_s[np.isnan(scaled)], minlength=n_slot)
    metrics, missing, bad_units, text = _by_metric(used, mat, per_cell, missing_rows, (slot, slot_s, unit_s),
                                                   values, u_names)
    other = [m for i, m in enumerate(m_names) if not any(keys[i]) and m.strip()]
    kernel = np.asarray(k_names, dtype=object)[k_codes[starts]]
    rows = np.flatnonzero(keep)[starts] if not keep.all() else starts  # each launch's first row in the table
    return Launches(ids=ids[starts], names=kernel, metrics=metrics, missing=missing, text=text, other=other,
                     bad_units=bad_units, rules=rules, duplicates=_duplicates(flat, scaled, per_cell), first=first,
                     groups=_nvtx_groups(table, nvtx_cols, rows), pids=_pids(table, rows))


def _by_metric(used: list[str], mat: np.ndarray, per_cell: np.ndarray, missing_rows: np.ndarray,
               slots: tuple[np.ndarray, np.ndarray, np.ndarray], values: pa.ChunkedArray | pa.Array,
               u_names: list[str]) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, str], dict[str, str]]:
    """Per metric read: its values per launch, how many launches have it unusable, a unit that does not fit it,
    and the text metrics' first value. ``slots``: each row's slot, and the numeric rows' slots and unit codes."""
    slot, slot_s, unit_s = slots
    metrics: dict[str, np.ndarray] = {}
    missing: dict[str, int] = {}
    bad_units: dict[str, str] = {}
    text: dict[str, str] = {}
    for s, name in enumerate(used):
        if name in TEXT:
            rows = np.flatnonzero(slot == s)
            if len(rows):
                text[name] = str(values[int(rows[0])].as_py() or "")
            continue
        metrics[name] = mat[:, s]
        if missing_rows[s]:
            missing[name] = int(((per_cell[:, s] > 0) & np.isnan(mat[:, s])).sum())
            units_seen = {u_names[int(u)] for u in np.unique(unit_s[slot_s == s])}
            wrong = sorted(u for u in units_seen if np.isnan(factor_for(name, u)))
            if wrong:
                bad_units[name] = wrong[0]
    return metrics, missing, bad_units, text


def _duplicates(flat: np.ndarray, scaled: np.ndarray, per_cell: np.ndarray) -> int:
    """Whether a metric appears more than once for one launch with different values (the roofline sections repeat
    the SM clock and the DRAM bandwidth in each body item: the same value, not a duplicate)."""
    if not (per_cell > 1).any():
        return 0
    lo = np.full(per_cell.size, np.inf)
    hi = np.full(per_cell.size, -np.inf)
    np.minimum.at(lo, flat, np.nan_to_num(scaled, nan=-np.inf))
    np.maximum.at(hi, flat, np.nan_to_num(scaled, nan=-np.inf))
    return int(((per_cell.ravel() > 1) & (lo != hi)).any())


def _pids(table: pa.Table, rows: np.ndarray) -> np.ndarray | None:
    """The process id of each launch (its row in ``table``), NaN where it is not a number; None without the column."""
    if "Process ID" not in table.column_names:
        return None
    codes, values = dict_codes(table.column("Process ID"))
    per_value = pd.to_numeric(pd.Series(values, dtype=object).str.replace(",", ""), errors="coerce").to_numpy(
        dtype=np.float64) if values else np.empty(0)
    return per_value[codes[rows]] if len(per_value) else np.full(len(rows), np.nan)


# ------------------------------------------------------------------------------------------ NVTX

_QUOTED = re.compile(r'"([^"]*)"')


def _nvtx_columns(names: list[str]) -> list[str]:
    """``--nvtx`` columns: ``thread Domain:Push/Pop_Range:...`` and ``Id:Domain:Start/Stop_Range:...``."""
    return [c for c in names if any(f.endswith("_Range") for f in c.split(":")[1:])]


def nvtx_range(header: str, cell: str) -> str | None:
    """The range names in one NVTX cell, outermost first, joined with "/" (None when the launch is in none).

    A cell is ``<thread>  "<domain>:<range>:<PL_Type>:...:<Msg>"  "..."`` (push/pop, nested ranges each
    quoted) or ``"<id>:<domain>:<range>:..."`` (start/stop), laid out as the column header says; a range name
    may itself hold ":", so it is everything between the fields before and after it."""
    fields = header.split(":")
    at = next((i for i, f in enumerate(fields) if f.endswith("_Range")), None)
    text = cell.strip()
    if at is None or not text:
        return None
    ranges = _QUOTED.findall(text) or [re.sub(r"^\d+\s+", "", text)]
    out = []
    for r in ranges:
        parts = r.strip().split(":")
        if len(parts) >= len(fields):
            name = ":".join(parts[at: len(parts) - (len(fields) - at - 1)])
        else:
            name = parts[at] if len(parts) > at else r
        if name.strip():
            out.append(name.strip())
    return "/".join(out) or None


def _nvtx_groups(table: pa.Table, cols: list[str], rows: np.ndarray) -> np.ndarray | None:
    """Per launch (the given table rows), the push/pop range path, else the start/stop ranges; None if no column."""
    if not cols or not len(rows):
        return None
    out = np.full(len(rows), None, dtype=object)
    for c in sorted(cols, key=lambda c: "Start/Stop" in c):  # push/pop first
        codes, values = dict_codes(table.column(c))
        parsed = np.array([nvtx_range(c, v) for v in values] or [None], dtype=object)[codes[rows]]
        out = np.where(pd.isna(out), parsed, out)
    return out


def _rules(table: pa.Table, rule_cols: list[str], candidates: np.ndarray) -> list[str]:
    """Rule rows (empty metric, a rule name): ``"Name (Type): description"``, distinct, descriptions shortened."""
    r_codes, r_names = dict_codes(table.column("Rule Name"))
    has_rule = np.array([bool(r.strip()) for r in r_names] or [False], dtype=bool)[r_codes] & candidates
    out: list[str] = []
    if not has_rule.any():
        return out
    kind = dict_codes(table.column("Rule Type")) if "Rule Type" in rule_cols else None
    desc = dict_codes(table.column("Rule Description")) if "Rule Description" in rule_cols else None
    for i in np.flatnonzero(has_rule)[:200]:
        k = kind[1][kind[0][i]] if kind else ""
        d = " ".join(desc[1][desc[0][i]].split())[:160] if desc else ""
        out.append(f"{r_names[r_codes[i]]} ({k}): {d}")
    return list(dict.fromkeys(out))


_IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
             "Block Size", "Grid Size", "Device", "CC")


def _moved_units(table: pa.Table, ids: np.ndarray, metric_cols: list[str]) -> tuple[int, dict[str, str]] | None:
    """``(row, units)``: the units row found among the launches (no ID, no kernel name, a unit such as
    ``nsecond`` in some metric column), where a spreadsheet's sort put it; None if there is none."""
    names = table.column("Kernel Name")
    for i in map(int, np.flatnonzero(np.isnan(ids))[:1000]):
        if str(names[i].as_py() or "").strip():
            continue
        units = {c: str(table.column(c)[i].as_py() or "").strip() for c in metric_cols}
        if any(u and not u[0].isdigit() and u[0] not in "+-." for u in units.values()):
            return i, units
    return None


def raw_launches(data: bytes, block: tuple[int, int, int], names: list[str], source: str,
         skipped: list[Skipped]) -> Launches:
    start, end, _ = block
    second = first_row(data, start, end, names, 1)
    has_units = bool(second) and second.get("ID", "x") == "" and second.get("Kernel Name", "x") == ""
    units = {k: v for k, v in second.items() if k != "__fields__"} if has_units else {}
    skip_rows = 2 if has_units else 1
    first = first_row(data, start, end, names, skip_rows)
    if first and int(first["__fields__"]) > len(names):
        names = names + [f"__extra{i}" for i in range(int(first["__fields__"]) - len(names))]
    seen_names: set[str] = set()
    key_of: dict[str, str] = {}  # column -> the metric it gives (2019.x names renamed); the first column wins
    for c in names:
        key = canonical(c)
        if c not in seen_names and c not in _IDENTITY and wanted(key) and key not in key_of.values():
            key_of[c] = key
        seen_names.add(c)
    metric_cols = list(key_of)
    nvtx_cols = _nvtx_columns(names)
    pid_col = ["Process ID"] if "Process ID" in names else []
    include = ["ID", *pid_col, "Kernel Name", *metric_cols, *nvtx_cols]
    table, ids, lines, bad = read_block(data, block, names, include, {*pid_col, "Kernel Name", *nvtx_cols},
                                         skip_rows, source)
    skipped.extend(bad)
    n = table.num_rows
    units_at = -1
    if not has_units:  # a spreadsheet's sort moved the units row (no ID, no name) among the launches
        moved = _moved_units(table, ids, metric_cols)
        if moved is not None:
            (units_at, units), has_units = moved, True
    for i in np.flatnonzero(np.isnan(ids))[:1000]:
        if i != units_at:
            skipped.append(skip(source, f"line {lines[i]}", "ID is not a launch number"))
    keep = np.flatnonzero(~np.isnan(ids))
    if len(keep) < n:
        table = table.take(pa.array(keep))
        ids = ids[keep]
    k_codes, k_names = dict_codes(table.column("Kernel Name"))
    metrics: dict[str, np.ndarray] = {}
    missing: dict[str, int] = {}
    bad_units: dict[str, str] = {}
    text: dict[str, str] = {}
    # the locale is file-wide: the first launches of each column, as many values in all as the details page's sample
    # (a details page's 20,000 first values are its first ~800 launches too), not 20,000 per column
    sample = max(EURO_SAMPLE // max(sum(key not in TEXT for key in key_of.values()), 1), 1000)
    for c, key in key_of.items():
        col = table.column(c)
        if key in TEXT:
            if len(col):
                text[key] = str(col[0].as_py() or "")
            continue
        unit = units.get(c, "")
        check_locale(col.slice(0, sample), unit in INTEGRAL_UNITS, source)
        f = factor_for(key, unit)  # no units row: a unit-less value is a count; a time's or a size's is unknown
        vals = scale(to_float(col), np.full(len(col), f))
        metrics[key] = vals
        if np.isnan(vals).any():
            missing[key] = int(np.isnan(vals).sum())
            if np.isnan(f):
                bad_units[key] = unit if has_units else "none: the file has no units row"
    other = [c for c in names if c not in _IDENTITY and c not in key_of and c not in nvtx_cols
             and not c.startswith("__extra")]
    names_out = np.asarray(k_names, dtype=object)[k_codes] if k_names else np.empty(0, dtype=object)
    return Launches(ids=ids, names=names_out, metrics=metrics, missing=missing, text=text, other=other,
                     bad_units=bad_units, first=first, groups=_nvtx_groups(table, nvtx_cols, np.arange(len(ids))),
                     pids=_pids(table, np.arange(len(ids))))
