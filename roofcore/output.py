"""The output layer: an analysis's columnar table as JSON, CSV and flag messages, built over arrays.

:meth:`Analysis.table` is the one columnar table (kernels × devices, every field in base units, flags as a
bitmask). Everything a user exports is a view of it, built here without a per-kernel Python loop over
``DataFrame`` rows: flag messages are formatted per flag over the rows that carry it, and the JSON writer
encodes each column once and joins the rows (the standard library's ``json.dumps`` over a million small
dicts was most of ``roofline analyze --json``). The JSON is the README's contract: the same keys and nulls
as ``Analysis.to_json()`` (a test compares them on every sample).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii as _enc

import numpy as np
import orjson
import pandas as pd

from .roofline import FLAG_CODES, DeviceResult, Flag

# ----------------------------------------------------------------------------------- vectorised formatting

_UP = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_TIME = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _sig3(x: float) -> str:
    text = f"{x:.3g}"
    return f"{x:.0f}" if "e" in text else text


def _scaled(values: np.ndarray, steps: tuple[tuple[float, str], ...], unit: str, floor: tuple[float, str]) -> list[str]:
    """``fmt_si``/``fmt_time`` over an array: the same text per element, one pass per prefix."""
    v = np.asarray(values, dtype=np.float64)
    out = np.full(len(v), "–", dtype=object)
    mag = np.abs(v)
    todo = np.isfinite(v)
    out[np.isinf(v)] = "∞"
    for factor, prefix in steps:
        sel = todo & (mag >= factor * 0.9995)
        if sel.any():
            out[sel] = [f"{_sig3(x)} {prefix}{unit}" for x in (v[sel] / factor).tolist()]
        todo &= ~sel
    if todo.any():
        f, p = floor
        out[todo] = [("0" if x == 0 else _sig3(x)) + f" {p}{unit}" for x in (v[todo] / f).tolist()]
    return out.tolist()


def vfmt_si(values: np.ndarray, unit: str) -> list[str]:
    return _scaled(values, _UP, unit, (1.0, ""))


def vfmt_time(values: np.ndarray) -> list[str]:
    out = _scaled(values, _TIME, "", (1e-9, "ns"))
    return [("0 s" if s == "0 ns" else s.replace("  ", " ").rstrip()) for s in out]


def vfmt_pct(values: np.ndarray) -> list[str]:
    v = np.asarray(values, dtype=np.float64) * 100
    return ["–" if x != x else ("0" if x == 0 else _sig3(x)) + "%" for x in v.tolist()]


# ------------------------------------------------------------------------------------------ flag messages


def flag_messages(tab: pd.DataFrame, r: DeviceResult) -> dict[Flag, np.ndarray]:
    """Per flag, an object array aligned with ``tab`` (one device's rows): the message where the flag is set, else
    None. Each message is one sentence with the numbers behind the flag (``Analysis.table(..)["flags"]``)."""
    mask = np.asarray(tab["flags_mask"].to_numpy(), dtype=np.int64)
    hw = r.hardware
    out: dict[Flag, np.ndarray] = {}
    n = len(tab)

    def rows(bit: Flag) -> np.ndarray:
        return np.flatnonzero(mask & int(bit))

    def col(name: str, idx: np.ndarray) -> np.ndarray:
        return tab[name].to_numpy()[idx]

    def put(bit: Flag, idx: np.ndarray, texts) -> None:
        arr = np.full(n, None, dtype=object)
        arr[idx] = texts
        out[bit] = arr

    if len(i := rows(Flag.ABOVE_ROOF)):
        put(Flag.ABOVE_ROOF, i, above_roof_messages(tab, i, hw))
    if len(i := rows(Flag.FAR_BELOW)):
        eff = col("efficiency", i).astype(np.float64)
        put(Flag.FAR_BELOW, i, [
            f"Measured {t} is {1 / e:.0f}× the roofline time {tr} (efficiency {p}): latency, launch overhead, "
            "synchronisation or occupancy dominate, which the roofline cannot diagnose."
            for t, e, tr, p in zip(vfmt_time(col("time_s", i)), eff.tolist(), vfmt_time(col("t_roof_s", i)),
                                   vfmt_pct(eff), strict=True)])
    if len(i := rows(Flag.TINY)):
        t, tr = col("time_s", i).astype(np.float64), col("t_roof_s", i).astype(np.float64)
        per = np.where(np.isnan(t), tr, t) / np.maximum(col("count", i).astype(np.float64), 1)
        put(Flag.TINY, i, [
            f"{x} per launch is under 1 µs: launch-bound, and replaying profilers (cache flush, base clocks) distort "
            "such kernels; batch or fuse them rather than tuning them." for x in vfmt_time(per)])
    if len(i := rows(Flag.MISSING_TIME)):
        put(Flag.MISSING_TIME, i, "No measured time: only the roofline bound is known for this kernel.")
    if len(i := rows(Flag.ZERO_TIME)):
        put(Flag.ZERO_TIME, i, "The measured time is zero or negative (a corrupt timestamp?): achieved rate and "
                               "efficiency are left unknown rather than divided by zero.")
    if len(i := rows(Flag.MISSING_FLOPS)):
        put(Flag.MISSING_FLOPS, i, "FLOPs are unknown (not zero): this kernel's roofline time and bound are unknown.")
    if len(i := rows(Flag.MISSING_BYTES)):
        put(Flag.MISSING_BYTES, i, f"Off-chip ({hw.offchip.display}) bytes are unknown (not zero): this kernel's "
                                   "roofline time and bound are unknown.")
    if len(i := rows(Flag.LEVEL_NOT_ON_DEVICE)):
        names: list[list[str]] = [[] for _ in range(len(i))]
        amounts: list[list[str]] = [[] for _ in range(len(i))]
        for lv in r.lacking:
            b = col(f"bytes_{lv}", i).astype(np.float64)
            for k in np.flatnonzero(b > 0).tolist():
                names[k].append(lv)
                amounts[k].append(f"{b[k]:.3g} B")
        put(Flag.LEVEL_NOT_ON_DEVICE, i, [
            f"Bytes at {', '.join(nm)} ({', '.join(am)}) are not on any roof: {hw.id} has no such memory level or "
            "link in its catalog." for nm, am in zip(names, amounts, strict=True)])
    if len(i := rows(Flag.NO_CEILING)):
        put(Flag.NO_CEILING, i, [
            f"{hw.id} publishes no {p} ceiling: the compute time is unknown and the bound uses memory and links only."
            for p in col("precision", i).tolist()])
    return out


def above_roof_messages(tab: pd.DataFrame, i: np.ndarray, hw) -> list[str]:
    """Why a kernel beats its roof, most likely cause first (see PRODUCT.md: FLOPs, bytes, units, precision, scope)."""
    eff = tab["efficiency"].to_numpy(dtype=np.float64)[i]
    bound = [b if isinstance(b, str) else "" for b in tab["bound"].to_numpy()[i].tolist()]
    ceiling = tab["ceiling"].to_numpy()[i].tolist()
    level = [lv if isinstance(lv, str) and lv else hw.offchip.name for lv in tab["binding_level"].to_numpy()[i].tolist()]
    t = tab["time_s"].to_numpy(dtype=np.float64)[i]
    bw = np.full(len(i), np.nan)
    for lv in set(level):
        sel = np.array([x == lv for x in level])
        if f"bytes_{lv}" in tab.columns:
            b = tab[f"bytes_{lv}"].to_numpy(dtype=np.float64)[i][sel]
            bw[sel] = np.where(t[sel] > 0, b / t[sel], np.nan)
    bw_text = vfmt_si(bw, "B/s")
    out = []
    die = hw.scope.value == "die"
    for k, (time_text, roof_text) in enumerate(zip(vfmt_time(t), vfmt_time(tab["t_roof_s"].to_numpy()[i]),
                                                   strict=True)):
        e = float(eff[k])
        head = f"Measured {time_text} beats the roofline minimum {roof_text} ({e:.3g}× the roof), so an input is wrong: "
        if bound[k].startswith("compute"):
            if 1.8 <= e <= 2.2:
                cause = (f"most likely the precision or unit ({ceiling[k]} assumed; a 2× gap is the next precision, "
                         "FP16 accumulate, or a 2:4-sparse rate) or FLOPs counted twice.")
            else:
                cause = f"most likely the FLOP count or its unit, or the precision ({ceiling[k]} assumed)."
        elif e >= 500:
            cause = "most likely the units: the bytes look about 1000× too small (KB or MB read as bytes?)."
        elif 1.8 <= e <= 2.2 and die:
            cause = "most likely per-die vs per-package scope: the time or bytes cover both dies of the package."
        else:
            cause = (f"most likely the {level[k]} bytes are undercounted (traffic counted at another level, or bytes "
                     f"per launch with time over all launches) — achieved {bw_text[k]} vs the roof.")
        out.append(head + cause)
    return out


def flag_lists(tab: pd.DataFrame, r: DeviceResult) -> list[list[dict]]:
    """``[{code, message}]`` per row, flags in :class:`Flag` order (the app's and ``to_json()``'s shape)."""
    msgs = flag_messages(tab, r)
    out: list[list[dict]] = [[] for _ in range(len(tab))]
    for bit in Flag:
        if bit in msgs:
            code = FLAG_CODES[bit]
            arr = msgs[bit]
            for k in np.flatnonzero(arr != None).tolist():  # noqa: E711 (elementwise on an object array)
                out[k].append({"code": code, "message": arr[k]})
    return out


def flag_text(tab: pd.DataFrame, r: DeviceResult) -> list[str]:
    """``"code: message; code: message"`` per row (the CSV's flags column)."""
    msgs = flag_messages(tab, r)
    out = np.full(len(tab), "", dtype=object)
    for bit in Flag:
        if bit in msgs:
            arr = msgs[bit]
            has = np.flatnonzero(arr != None)  # noqa: E711
            if len(has):
                prefix = np.where(out[has] == "", "", "; ")
                out[has] = [p0 + p + f"{FLAG_CODES[bit]}: {m}" for p0, p, m in
                            zip(out[has].tolist(), prefix.tolist(), arr[has].tolist(), strict=True)]
    return out.tolist()


# ------------------------------------------------------------------------------------------------- JSON


def _jnum(values: np.ndarray) -> list[str]:
    """JSON numbers, shortest round-trip form (orjson's, one C pass per column); NaN and ±inf are null."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    if not len(v):
        return []
    return orjson.dumps(v, option=orjson.OPT_SERIALIZE_NUMPY).decode()[1:-1].split(",")


def _jint(values: np.ndarray) -> list[str]:
    return list(map(str, np.asarray(values, dtype=np.int64).tolist()))


def _jstr(values, *, empty_is_null: bool = False, distinct: bool = False) -> list[str]:
    """JSON strings (ASCII-escaped as ``json.dumps`` does); None, NaN and other non-strings are null. Each distinct
    value is encoded once (devices, precisions, bounds repeat on every row); ``distinct`` columns (names, rows)
    are encoded directly."""
    if distinct:
        return [_enc(x) if isinstance(x, str) else "null" for x in values]
    arr = np.asarray(values, dtype=object)
    codes, uniq = pd.factorize(arr, use_na_sentinel=True)
    enc = [(_enc(x) if isinstance(x, str) and (x or not empty_is_null) else "null") for x in uniq.tolist()]
    enc.append("null")  # code -1: missing
    return np.asarray(enc, dtype=object)[codes].tolist()


def _jflags(tab: pd.DataFrame, r: DeviceResult) -> list[str]:
    msgs = flag_messages(tab, r)
    out = np.full(len(tab), "", dtype=object)
    for bit in Flag:
        if bit in msgs:
            arr = msgs[bit]
            has = np.flatnonzero(arr != None)  # noqa: E711
            if len(has):
                item = '{"code": ' + _enc(FLAG_CODES[bit]) + ', "message": %s}'
                first = arr[has[0]]
                same = isinstance(first, str) and bool((arr[has] == first).all())  # a fixed sentence: encode it once
                texts = [_enc(first)] * len(has) if same else _jstr(arr[has], distinct=True)
                sep = np.where(out[has] == "", "", ", ")
                out[has] = [a + s + item % m for a, s, m in zip(out[has].tolist(), sep.tolist(), texts, strict=True)]
    return ["[" + x + "]" for x in out.tolist()]


def _jobj(names: list[str], cols: list[list[str]], n: int) -> list[str]:
    if not names:
        return ["{}"] * n
    tpl = "{" + ", ".join(_enc(k).replace("%", "%%") + ": %s" for k in names) + "}"
    return list(map(tpl.__mod__, zip(*cols, strict=True)))


#: the kernel record's keys in the JSON contract's order (README "JSON output")
KERNEL_KEYS = ("name", "hardware", "group", "count", "precision", "unit", "ceiling", "flops", "bytes", "time_s",
               "intensity", "t_roof_s", "t_serial_s", "attainable_flops_per_s", "bound", "binding_level",
               "achieved_flops_per_s", "efficiency", "pct_peak_compute", "pct_peak_bandwidth", "headroom_s", "flags",
               "source", "row")


def kernels_json(tab: pd.DataFrame, r: DeviceResult, byte_names: list[str]) -> list[str]:
    """One JSON object per row of one device's table, keys and nulls as ``Analysis.to_json()``'s kernels.

    Each column is encoded once (numbers by orjson in C, repeated strings once per distinct value), then every
    row is one ``%`` of a template: no Python-level work per field and row."""
    n = len(tab)

    def num(c: str) -> list[str]:
        return _jnum(tab[c].to_numpy(dtype=np.float64))

    values = {
        "name": _jstr(tab["name"].tolist(), distinct=True), "hardware": _jstr(tab["hardware"].tolist()),
        "group": _jstr(tab["group"].tolist()), "count": _jint(tab["count"].to_numpy()),
        "precision": _jstr(tab["precision"].tolist()), "unit": _jstr(tab["unit"].tolist()),
        "ceiling": _jstr(tab["ceiling"].tolist(), empty_is_null=True), "flops": num("flops"),
        "bytes": _jobj(byte_names, [num(f"bytes_{b}") for b in byte_names], n), "time_s": num("time_s"),
        "intensity": _jobj(byte_names, [num(f"intensity_{b}") for b in byte_names], n),
        "t_roof_s": num("t_roof_s"), "t_serial_s": num("t_serial_s"),
        "attainable_flops_per_s": num("attainable_flops_per_s"), "bound": _jstr(tab["bound"].tolist()),
        "binding_level": _jstr(tab["binding_level"].tolist()), "achieved_flops_per_s": num("achieved_flops_per_s"),
        "efficiency": num("efficiency"), "pct_peak_compute": num("pct_peak_compute"),
        "pct_peak_bandwidth": num("pct_peak_bandwidth"), "headroom_s": num("headroom_s"),
        "flags": _jflags(tab, r), "source": _jstr(tab["source"].tolist()),
        "row": _jstr(tab["row"].tolist(), distinct=True),
    }
    return _jobj(list(KERNEL_KEYS), [values[k] for k in KERNEL_KEYS], n)


#: kernels encoded per piece of :func:`analysis_json_chunks` (bounds the text held in memory at once)
CHUNK_ROWS = 20_000


def analysis_json_chunks(analysis, extra: dict | None = None) -> Iterator[str]:
    """``Analysis.to_json()`` as JSON text in pieces, written column-wise: one kernel per line, the other keys
    indented as ``json.dumps(indent=1)`` does. Streamed so a million kernels never sit in memory as one string."""
    doc = analysis.to_json(kernels=False)
    if extra:
        doc.update(extra)
    byte_names = analysis.workload.byte_names
    yield "{"
    first_key = True
    for k, v in doc.items():
        yield ("\n " if first_key else ",\n ") + _enc(k) + ": "
        first_key = False
        if k != "kernels":
            yield json.dumps(v, indent=1, allow_nan=False).replace("\n", "\n ")
            continue
        started = False
        for r in analysis.results:
            tab = analysis._device_table(r, messages=False)
            for lo in range(0, len(tab), CHUNK_ROWS):
                part = tab.iloc[lo:lo + CHUNK_ROWS]
                yield ("[\n" if not started else ",\n") + ",\n".join(kernels_json(part, r, byte_names))
                started = True
        yield "\n ]" if started else "[]"
    yield "\n}"


def analysis_json(analysis, extra: dict | None = None) -> str:
    """:func:`analysis_json_chunks` joined into one string."""
    return "".join(analysis_json_chunks(analysis, extra))


# -------------------------------------------------------------------------------------------------- CSV


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def neutralise(col: pd.Series) -> pd.Series:
    """Text a spreadsheet would run as a formula (``= + - @``, tab, CR) prefixed with a quote, over a column."""
    s = col.astype(object)
    text = s.map(lambda v: isinstance(v, str) and v[:1] in _FORMULA) if len(s) < 64 else \
        s.where(s.map(type) == str, None).str[:1].isin(_FORMULA)  # noqa: E721
    if not text.any():
        return col
    out = s.copy()
    out[text] = "'" + s[text].astype(str)
    return out


def _csv_quote(v: str) -> str:
    return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n\r') else v


def _csv_col(col: pd.Series) -> list[str]:
    """One column as CSV cells: numbers in shortest round-trip form (empty when unknown), text quoted where needed
    and neutralised (a spreadsheet would run ``=…`` as a formula)."""
    kind = col.dtype.kind if isinstance(col.dtype, np.dtype) else "O"
    if kind == "f":
        return [("" if x == "null" else x) for x in _jnum(col.to_numpy(dtype=np.float64))]
    if kind in "iub":
        return list(map(str, col.to_numpy().tolist()))
    arr = np.asarray(col.tolist(), dtype=object)
    codes, uniq = pd.factorize(arr, use_na_sentinel=True)
    cells = []
    for x in uniq.tolist():
        text = x if isinstance(x, str) else str(x)
        cells.append(_csv_quote("'" + text if text[:1] in _FORMULA else text))
    cells.append("")
    return np.asarray(cells, dtype=object)[codes].tolist()


def analysis_csv_chunks(analysis) -> Iterator[str]:
    """The per-kernel table as CSV pieces (one row per kernel × device, the columns of ``Analysis.table`` less the
    bitmask, flags as ``code: message; …``), written column-wise like the JSON."""
    header = None
    for r in analysis.results:
        tab = analysis._device_table(r, messages=False)
        cols = [*(c for c in tab.columns if c != "flags_mask"), "flags"]
        if header is None:
            header = cols
            yield ",".join(_csv_quote(c) for c in cols) + "\n"
        for lo in range(0, len(tab), CHUNK_ROWS):
            part = tab.iloc[lo:lo + CHUNK_ROWS]
            flags = pd.Series(flag_text(part, r), dtype=object)
            cells = [_csv_col(flags if c == "flags" else part[c]) if c in part.columns or c == "flags"
                     else [""] * len(part) for c in header]
            tpl = ",".join(["%s"] * len(header)) + "\n"
            yield "".join(map(tpl.__mod__, zip(*cells, strict=True)))


def analysis_csv(analysis) -> str:
    """:func:`analysis_csv_chunks` joined into one string."""
    return "".join(analysis_csv_chunks(analysis))


def finite_or_none(v: object) -> float | None:
    if v is None:
        return None
    x = float(v)
    return x if math.isfinite(x) else None


__all__ = ["above_roof_messages", "analysis_csv", "analysis_csv_chunks", "analysis_json", "analysis_json_chunks", "flag_lists", "flag_messages", "flag_text", "kernels_json", "neutralise",
           "vfmt_pct", "vfmt_si", "vfmt_time"]
