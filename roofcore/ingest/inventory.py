"""Kernel inventories a user writes: CSV and YAML (docs/formats.md).

Columns / keys: ``name, count, flops, bytes, bytes_<level>, bytes_<link>, time_s | time_ms | time_us,
precision, unit, group``. ``flops``, ``bytes*`` and ``time*`` are totals over the ``count`` launches
(``count`` defaults to 1). Cells may carry units (``"2.1 GFLOP"``, ``"80 MB"``, ``"3 ms"``); a cell
with a unit of the wrong kind, a negative or a non-numeric value skips its row, with the reason.
An empty ``flops`` or ``bytes`` cell means unknown, not zero. YAML kernels may be given as ops
(``op: matmul`` with ``m, n, k, dtype`` ...; see :mod:`roofcore.ops`): the op gives one launch and
is multiplied by ``count``. An optional ``match`` column/key holds a glob pattern (``*sgemm*``) that
joins the kernel to a time-only profile (Nsight Systems) whose kernel names it matches.

Optional split of the off-chip bytes, used by the planning transformations (:mod:`roofcore.plan`):
``bytes_read`` / ``bytes_written`` (also spelled ``read_bytes`` / ``written_bytes``) and
``weight_bytes`` (the part of the reads that is weights, which a batch change leaves fixed). They
are totals over the launches like ``bytes``, and are stored as the frame columns ``read_bytes``,
``written_bytes`` and ``weight_bytes`` (not ``bytes_*``, which names a memory level or link). YAML
ops derive the split from their shapes unless the kernel gives it: matmul writes ``m·n·|out|``
(its weights are unknown: ``B`` may be activations, as attention's K and V are); elementwise writes
``outputs·elements·|dtype|``; layernorm writes ``rows·hidden·|dtype|`` with γ, β as weights; dot
writes one scalar; other ops give no split.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import yaml

from .. import ops
from ..errors import InputError, UnitError, compose
from ..limits import load_yaml, yaml_input_error
from ..models import DTYPE_SIZE, Skipped, Workload, canonical_dtype, canonical_level
from ..units import Dimension, parse
from . import COUNT_LIMIT, check_binary, check_text, decode_error, make_frame, register_format, skip

if TYPE_CHECKING:
    from ..models import Kernel

TIME_COLUMNS = {"time_s": 1.0, "time_ms": 1e-3, "time_us": 1e-6, "time_ns": 1e-9}
#: optional split of the off-chip bytes: accepted spelling -> frame column (see the module docstring)
SPLIT_COLUMNS = {"bytes_read": "read_bytes", "read_bytes": "read_bytes", "bytes_written": "written_bytes",
                 "written_bytes": "written_bytes", "weight_bytes": "weight_bytes", "bytes_weights": "weight_bytes"}
KNOWN = {"name", "count", "flops", "precision", "unit", "group", "match", *TIME_COLUMNS, *SPLIT_COLUMNS}
_BYTES = re.compile(r"^bytes(_[a-z][a-z0-9_]*)?$")
UNITS = ("matrix", "vector")


def _sniff_csv(text: str, name: str) -> bool:
    first = next((ln for ln in text.split("\n") if ln.strip()), "")
    cols = {c.strip().strip('"').lower() for c in first.split(",")}
    return len(cols) > 1 and bool(cols & ({"name", "flops"} | set(TIME_COLUMNS)) or any(_BYTES.match(c) for c in cols))


def _show(v: object) -> str:
    """A cell as the user wrote it (numbers without numpy's repr)."""
    if isinstance(v, int | float | np.number) and not isinstance(v, bool):
        return f"{float(v):g}"
    return repr(str(v))


def _sniff_yaml(text: str, name: str) -> bool:
    return bool(re.search(r"^kernels\s*:", text, re.M)) or (
        name.lower().endswith((".yaml", ".yml")) and bool(re.search(r"^\s*-\s*name\s*:", text, re.M)))


# --------------------------------------------------------------------------------------------- CSV


def _numeric(col: pd.Series, dim: Dimension, scale: float, column: str, source: str,
             reasons: dict[int, str]) -> np.ndarray:
    """Column to float64 base units; cells that fail record a reason keyed by row position."""
    if pd.api.types.is_numeric_dtype(col.dtype):
        values: np.ndarray = col.to_numpy(dtype=np.float64, na_value=np.nan) * scale
    else:
        text = col.astype("string").str.strip()
        values = pd.to_numeric(text.str.replace(",", "", regex=False), errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan) * scale
        odd = np.flatnonzero(np.isnan(values) & text.fillna("").ne("").to_numpy())
        for i in odd:  # only cells that are not plain numbers: units, typos, text
            cell = text.iloc[i]
            try:
                has_unit = bool(re.search(r"[A-Za-zµμ]", cell)) and cell.lower() not in ("nan", "inf", "-inf")
                values[i] = parse(cell, dim) if has_unit else parse(cell, dim) * scale
            except UnitError as e:
                reasons.setdefault(int(i), f"{column}: expected {e.expected}, found {e.found}")
    bad = np.flatnonzero(values < 0)
    for i in bad:
        reasons.setdefault(int(i), f"{column}: expected a non-negative number, found {_show(col.iloc[i])}")
    bad = np.flatnonzero(np.isinf(values))
    for i in bad:
        reasons.setdefault(int(i), f"{column}: expected a finite number, found {_show(col.iloc[i])}")
    return values


@register_format("inventory-csv", "Kernel inventory CSV: name, count, flops, bytes[_<level>], time_s|ms|us, "
                 "precision, unit, group", _sniff_csv, priority=-10)
def parse_csv(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    check_binary(data, source)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)  # mixed cells are checked below, per row
            frame = pd.read_csv(io.BytesIO(data), encoding="utf-8-sig", skipinitialspace=True, keep_default_na=False,
                                na_values=["", "n/a", "N/A", "NA", "nan", "NaN"], engine="c")
    except UnicodeDecodeError as e:
        raise decode_error(data, source, e) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error, ValueError) as e:
        msg = str(e).strip().splitlines()[-1]
        raise InputError(where=source, text=f"not a readable CSV: {msg}.",
                         hint="quote fields that contain commas; check that every row has the header's columns.") from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    return _from_columns(frame, source)


def _header(frame: pd.DataFrame, source: str) -> tuple[list[str], list[str], list[str]]:
    """``(columns, byte columns, time columns)`` of an inventory's header, checked: each column once, known names,
    name, flops and an off-chip bytes column present, one time column at most."""
    cols = list(frame.columns)
    dup = [c for c in set(cols) if cols.count(c) > 1]
    if dup:
        raise InputError(where=f"{source}: header", expected="each column once", found=f"{dup[0]!r} twice")
    if "name" not in cols:
        raise InputError(where=f"{source}: header", expected="column 'name'", found="none",
                         hint=f"columns present: {', '.join(cols)}; an inventory needs name, flops and bytes.")
    byte_cols = [c for c in cols if _BYTES.match(c) and c not in SPLIT_COLUMNS]
    unknown = [c for c in cols if c not in KNOWN and c not in byte_cols]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], [*KNOWN, "bytes", "bytes_hbm", "bytes_l2"], n=1)
        raise InputError(where=f"{source}: header", expected="known columns (name, count, flops, bytes, bytes_<level>, "
                         "time_s|time_ms|time_us, precision, unit, group)", found=f"unknown column {unknown[0]!r}",
                         hint=f"did you mean {close[0]!r}?" if close else "rename or remove it.")
    times = [c for c in cols if c in TIME_COLUMNS]
    if len(times) > 1:
        raise InputError(where=f"{source}: header", expected="one time column", found=", ".join(times),
                         hint="keep one of time_s, time_ms, time_us.")
    if "flops" not in cols and not byte_cols:
        raise InputError(where=f"{source}: header", expected="column 'flops' and a bytes column", found="neither",
                         hint="an inventory gives each kernel's FLOPs and off-chip bytes (bytes or bytes_hbm).")
    if "flops" not in cols:
        raise InputError(where=f"{source}: header", expected="column 'flops'", found="none",
                         hint="give each kernel's FLOPs (total over its launches); leave a cell empty if unknown.")
    offchip = [c for c in byte_cols if canonical_level(c[len("bytes_"):] if c != "bytes" else "") == "hbm"]
    if not offchip:
        raise InputError(where=f"{source}: header", expected="an off-chip bytes column (bytes, bytes_hbm or bytes_dram)",
                         found="none" if not byte_cols else ", ".join(byte_cols),
                         hint="the off-chip roof needs the bytes each kernel moves to and from DRAM/HBM.")
    return cols, byte_cols, times


def _labels(values: pd.Series, key: str, allowed: tuple[str, ...] | None, reasons: dict[int, str]) -> pd.Categorical:
    """A precision (``allowed`` None: any known dtype, canonical) or unit column; a value not allowed records why
    its row is left out."""
    raw = values.astype("string").str.strip().str.lower()
    mapping: dict[object, object] = {}
    for value in raw.dropna().unique():
        if not value:
            mapping[value] = None
        elif allowed is None:
            try:
                mapping[value] = canonical_dtype(value)
            except InputError:
                mapping[value] = InputError
        else:
            mapping[value] = value if value in allowed else InputError
    mapped = np.array(raw.map(mapping).astype(object).to_numpy(), dtype=object)
    for i in np.flatnonzero(mapped == InputError):
        want = ", ".join(DTYPE_SIZE) if allowed is None else " or ".join(allowed)
        reasons.setdefault(int(i), f"{key}: expected {want}, found {_show(values.iloc[i])}")
    mapped[(mapped == InputError) | pd.isna(mapped)] = None
    return pd.Categorical(mapped)


def _from_columns(frame: pd.DataFrame, source: str) -> Workload:
    cols, byte_cols, times = _header(frame, source)
    n = len(frame)
    if n == 0:
        raise InputError(where=source, expected="at least one kernel row", found="a header only")
    reasons: dict[int, str] = {}
    name = frame["name"].astype("string").str.strip()
    for i in np.flatnonzero(name.isna().to_numpy() | name.eq("").fillna(True).to_numpy()):
        reasons.setdefault(int(i), "name: expected a kernel name, found an empty cell")
    columns: dict[str, object] = {"name": name.astype(object).to_numpy()}
    columns["flops"] = _numeric(frame["flops"], Dimension.FLOPS, 1.0, "flops", source, reasons)
    for c in byte_cols:
        columns[c] = _numeric(frame[c], Dimension.BYTES, 1.0, c, source, reasons)
    if times:
        columns["time_s"] = _numeric(frame[times[0]], Dimension.TIME, TIME_COLUMNS[times[0]], times[0], source, reasons)
    split = [c for c in cols if c in SPLIT_COLUMNS]
    if len({SPLIT_COLUMNS[c] for c in split}) < len(split):
        raise InputError(where=f"{source}: header", expected="each of bytes_read, bytes_written, weight_bytes once",
                         found=", ".join(split), hint="bytes_read and read_bytes are the same column; keep one.")
    for c in split:
        columns[SPLIT_COLUMNS[c]] = _numeric(frame[c], Dimension.BYTES, 1.0, c, source, reasons)
    if "count" in cols:
        count = _numeric(frame["count"], Dimension.FLOPS, 1.0, "count", source, reasons)
        count = np.where(np.isnan(count), 1.0, count)
        whole = np.isfinite(count) & (count >= 1) & (count == np.floor(count)) & (count < COUNT_LIMIT)
        for i in np.flatnonzero(~whole):
            reasons.setdefault(int(i), f"count: expected a whole number of launches ≥ 1, found {_show(frame['count'].iloc[i])}")
        columns["count"] = np.where(whole, count, 1).astype(np.int64)
    for key, allowed in (("precision", None), ("unit", UNITS)):
        if key in cols:
            columns[key] = _labels(frame[key], key, allowed, reasons)
    if "match" in cols:
        pattern = frame["match"].astype("string").str.strip()
        columns["match"] = np.where(pattern.isna().to_numpy() | pattern.eq("").fillna(True).to_numpy(), None,
                                    pattern.astype(object).to_numpy())
    if "group" in cols:
        group = frame["group"].astype("string").str.strip()
        columns["group"] = np.where(group.isna().to_numpy() | group.eq("").fillna(True).to_numpy(), None,
                                    group.astype(object).to_numpy())
    columns["source"] = np.full(n, source, dtype=object)
    columns["row"] = (np.arange(n) + 1).astype(str).astype(object)
    try:
        out = make_frame(columns, n)
    except InputError as e:
        raise InputError(where=f"{source}: header", text=e.text, hint=e.hint) from None
    skipped: tuple[Skipped, ...] = ()
    if reasons:
        keep = np.ones(n, dtype=bool)
        keep[list(reasons)] = False
        skipped = tuple(skip(source, i + 1, reasons[i]) for i in sorted(reasons))
        if not keep.any():
            first = skipped[0]
            raise InputError(where=f"{source}: row {first.row}", text=f"no usable rows; the first problem: {first.reason}.",
                             hint="fix the values (numbers ≥ 0, units matching the column) and load again.")
        out = out[keep].reset_index(drop=True)
    return Workload(frame=out, name=source, sources=(source,), formats=("inventory-csv",), skipped=skipped)


# --------------------------------------------------------------------------------------------- YAML

_KERNEL_KEYS = {"name", "count", "flops", "precision", "unit", "group", "match", "op", "time", *TIME_COLUMNS,
                *SPLIT_COLUMNS}


def _op_split(op: str, params: dict[str, Any], kern: Kernel) -> dict[str, float]:
    """Bytes written and weight bytes of one launch of a built-in op (see the module docstring)."""

    def size(key: str, default: str) -> float:
        return DTYPE_SIZE[canonical_dtype(params.get(key) or params.get(default) or "bf16")]

    try:
        if op == "matmul":
            written = float(params["m"]) * float(params["n"]) * size("out_dtype", "dtype")
            weight = np.nan  # B may be weights or activations (attention's K, V): give weight_bytes to say
        elif op == "elementwise":
            written = float(params.get("outputs", 1)) * float(params["elements"]) * size("dtype", "dtype")
            weight = 0.0
        elif op == "layernorm":
            written = float(params["rows"]) * float(params["hidden"]) * size("dtype", "dtype")
            weight = (2.0 if params.get("affine", True) is not False else 0.0) * float(params["hidden"]) * size(
                "dtype", "dtype")
        elif op == "dot":
            written, weight = size("dtype", "dtype"), 0.0
        else:
            return {}
    except (KeyError, TypeError, ValueError, InputError):
        return {}
    total = sum(kern.bytes.values())
    out = {"read_bytes": total - written, "written_bytes": written}
    if weight == weight:
        out["weight_bytes"] = weight
    return out


def _byte_key(level: str) -> str:
    return f"bytes_{canonical_level(level)}"


def _kernel_row(k: dict[Any, Any], where: str) -> dict[str, object]:
    if not isinstance(k.get("name"), str) or not k["name"].strip():
        raise InputError(where=f"{where}.name", expected="a kernel name", found=repr(k.get("name")))
    row: dict[str, object] = {"name": k["name"].strip()}
    count = k.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int | float) or count < 1 or int(count) != count:
        raise InputError(where=f"{where}.count", expected="a whole number of launches ≥ 1", found=repr(count))
    row["count"] = count = int(count)
    byte_keys = [key for key in k if isinstance(key, str) and _BYTES.match(key) and key not in SPLIT_COLUMNS]
    for key in [key for key in k if key in SPLIT_COLUMNS]:
        col = SPLIT_COLUMNS[key]
        if col in row:
            raise InputError(where=f"{where}.{key}", expected="one key per byte split", found="another name for it",
                             hint="bytes_read and read_bytes are the same key; keep one.")
        try:
            row[col] = parse(k[key], Dimension.BYTES, where=f"{where}.{key}") if k[key] is not None else np.nan
        except UnitError as e:
            raise InputError(where=e.where, expected=e.expected, found=e.found, hint=e.hint) from None
    if "op" in k:
        if "flops" in k or byte_keys:
            raise InputError(where=where, expected="either an op or flops/bytes", found="both",
                             hint="an op derives FLOPs and bytes from its shapes; drop one of the two.")
        params = {p: v for p, v in k.items() if p not in _KERNEL_KEYS}
        kern = ops.build(str(k["op"]), params, name=str(row["name"]), where=where)
        row["flops"] = kern.flops * count
        for level, b in kern.bytes.items():
            row[_byte_key(level)] = b * count
        for col, b in _op_split(str(k["op"]), params, kern).items():
            row.setdefault(col, b * count)
        row["precision"], row["unit"] = kern.precision, kern.unit
    else:
        unknown = [key for key in k if key not in _KERNEL_KEYS and key not in byte_keys]
        if unknown:
            raise InputError(where=f"{where}.{unknown[0]}", expected="a kernel key (name, count, flops, bytes, "
                             "bytes_<level>, time_s|time_ms|time_us, precision, unit, group) or op",
                             found=f"unknown key {unknown[0]!r}",
                             hint="op parameters (m, n, k, ...) need `op:` on the same kernel.")
        if "flops" not in k:
            raise InputError(where=where, expected="key 'flops' (or an op)", found="none",
                             hint="give FLOPs in total over the launches, or `op: matmul` with its shapes.")
        try:
            row["flops"] = parse(k["flops"], Dimension.FLOPS, where=f"{where}.flops") if k["flops"] is not None else np.nan
            for key in byte_keys:
                if _byte_key(key[len("bytes_"):] if key != "bytes" else "") in row:
                    raise InputError(where=f"{where}.{key}", expected="one key per level",
                                     found="another name for the same level",
                                     hint="bytes, bytes_hbm and bytes_dram all mean off-chip bytes; keep one.")
                row[_byte_key(key[len("bytes_"):] if key != "bytes" else "")] = (
                    parse(k[key], Dimension.BYTES, where=f"{where}.{key}") if k[key] is not None else np.nan)
        except UnitError as e:
            raise InputError(where=e.where, expected=e.expected, found=e.found, hint=e.hint) from None
    times = [t for t in ("time", *TIME_COLUMNS) if t in k]
    if len(times) > 1:
        raise InputError(where=where, expected="one time key", found=", ".join(times))
    if times:
        t = times[0]
        try:
            v = k[t]
            scale = TIME_COLUMNS.get(t, 1.0)
            has_unit = isinstance(v, str) and re.search(r"[A-Za-zµμ]", v)
            row["time_s"] = parse(v, Dimension.TIME, where=f"{where}.{t}") * (1.0 if has_unit else scale)
        except UnitError as e:
            raise InputError(where=e.where, expected=e.expected, found=e.found, hint=e.hint) from None
    if k.get("precision") is not None:
        row["precision"] = canonical_dtype(k["precision"], where=f"{where}.precision")
    if k.get("unit") is not None:
        if k["unit"] not in UNITS:
            raise InputError(where=f"{where}.unit", expected="matrix or vector", found=repr(k["unit"]))
        row["unit"] = k["unit"]
    if k.get("group") is not None:
        row["group"] = str(k["group"])
    if k.get("match") is not None:
        row["match"] = str(k["match"])
    return row


@register_format("inventory-yaml", "Kernel inventory YAML: kernels with numbers, or ops with shapes (matmul, "
                 "attention, conv2d, norms, collectives, ...: see the README)", _sniff_yaml, priority=-10)
def parse_yaml(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    text = check_text(data, source)
    try:
        doc = load_yaml(text, source)
    except yaml.YAMLError as e:
        raise yaml_input_error(e, source) from None
    title = source
    if isinstance(doc, dict):
        if "kernels" not in doc:
            raise InputError(where=f"{source}: $", expected="key 'kernels'", found="none",
                             hint=f"keys present: {', '.join(map(str, doc)) or 'none'}.")
        title = str(doc.get("name") or source)
        kernels = doc["kernels"]
    else:
        kernels = doc
    if not isinstance(kernels, list) or not kernels:
        found = "an empty list" if kernels == [] else f"{type(kernels).__name__} {kernels!r}"[:80]
        raise InputError(where=f"{source}: $.kernels", expected="a list of kernels", found=found,
                         hint="each kernel has a name and flops/bytes, or an op with its shapes.")
    rows: list[dict[str, object]] = []
    skipped: list[Skipped] = []
    for i, k in enumerate(kernels):
        where = f"{source}: $.kernels[{i}]"
        if not isinstance(k, dict):
            skipped.append(skip(source, f"$.kernels[{i}]", f"expected a mapping, found {type(k).__name__} {k!r}"[:200]))
            continue
        try:
            row = _kernel_row(k, where)
        except InputError as e:
            path = (e.where or where).split(": ", 1)[-1]
            skipped.append(skip(source, path, compose(None, e.expected, e.found, e.hint, e.text)))
            continue
        row["source"], row["row"] = source, f"$.kernels[{i}]"
        rows.append(row)
    if not rows:
        first = skipped[0]
        raise InputError(where=f"{source}: {first.row}", text=f"no usable kernels; the first problem: {first.reason}")
    keys = list(dict.fromkeys(key for r in rows for key in r))
    columns = {key: [r.get(key) for r in rows] for key in keys}
    for key in keys:
        if key.startswith("bytes") or key in ("flops", "time_s", *SPLIT_COLUMNS.values()):
            columns[key] = [np.nan if v is None else v for v in columns[key]]
    return Workload(frame=make_frame(columns, len(rows)), name=title, sources=(source,), formats=("inventory-yaml",),
                    skipped=tuple(skipped))
