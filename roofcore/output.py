"""The output layer: an analysis's columnar table as JSON, CSV and flag messages, built over arrays.

:meth:`Analysis.table` is the one columnar table (kernels × devices, every field in base units, flags as a
bitmask). Everything a user exports is a view of it, built here without a Python loop over kernels:

* numbers in messages are rounded in numpy and each distinct rounded value is formatted once by Python (a few
  thousand texts, whatever the number of kernels), so the text is exactly ``units.fmt_*``'s;
* flag messages, JSON objects and CSV lines are joined column by column with Arrow's string kernels from those
  texts, the numbers (orjson, one C pass per column) and each distinct string escaped once;
* the JSON writer and the CSV writer stream the kernels in pieces of :data:`CHUNK_ROWS`.

The JSON is the README's contract: the same keys and nulls as ``Analysis.to_json()`` (a test compares them on
every sample), ASCII-escaped as ``json.dumps`` writes it.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from json.encoder import encode_basestring_ascii as _enc

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .roofline import FLAG_CODES, DeviceResult, Flag

_STR = pa.string()
Esc = Callable[[str], str] | None  #: how text is escaped for its destination (None: plain text)


def _esc_json(text: str) -> str:
    """The inside of a JSON string literal (``json.dumps``'s ASCII escapes); escaping pieces one by one and joining
    them gives the escape of the whole, as every character is escaped on its own."""
    return _enc(text)[1:-1]


# ------------------------------------------------------------------------------------ text by distinct value


class Col:
    """A text column held as its distinct texts and one code per row: formatting and escaping are done once per
    distinct text, and Arrow expands the codes."""

    __slots__ = ("codes", "texts")

    def __init__(self, texts: list[str], codes: np.ndarray) -> None:
        self.texts, self.codes = texts, codes

    def __len__(self) -> int:
        return len(self.codes)

    def take(self, idx: np.ndarray) -> Col:
        return Col(self.texts, self.codes[idx])

    def map(self, f: Callable[[str], str]) -> Col:
        return Col([f(t) for t in self.texts], self.codes)

    def arrow(self, esc: Esc = None) -> pa.Array:
        texts = self.texts if esc is None else _escape_all(self.texts, esc)
        return pa.array(texts, _STR).take(pa.array(np.asarray(self.codes, dtype=np.int64)))

    def tolist(self) -> list[str]:
        return np.asarray([*self.texts, ""], dtype=object)[self.codes].tolist()


def _escape_all(texts: list[str], esc: Callable[[str], str]) -> list[str]:
    """``esc`` of every text. The escapes here work character by character, so the texts are escaped in one call,
    joined by NUL, and split again where the NUL (or its JSON escape) is; one by one if a text holds its own."""
    if len(texts) > 8 and (esc is _esc_json or esc is _csv_esc):
        joined = "\x00".join(texts)
        parts = _enc(joined)[1:-1].split("\\u0000") if esc is _esc_json else _csv_esc(joined).split("\x00")
        if len(parts) == len(texts):
            return parts
    return [esc(t) for t in texts]


def _unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for integer keys; by a presence table where their range is small
    (no sort)."""
    if len(key) and int(key.max()) - int(key.min()) < 1 << 20:
        lo = int(key.min())
        k = key - lo
        present = np.zeros(int(k.max()) + 1, dtype=bool)
        present[k] = True
        return np.flatnonzero(present) + lo, (np.cumsum(present) - 1)[k]
    uniq, inv = np.unique(key, return_inverse=True)
    return uniq, inv.reshape(-1)


def _by_bits(values: np.ndarray, fmt: Callable[[float], str]) -> Col:
    """``fmt`` once per distinct float (by bit pattern, so 0.0 and -0.0 stay apart)."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    uniq, inv = np.unique(v.view(np.int64), return_inverse=True)
    return Col([fmt(x) for x in uniq.view(np.float64).tolist()], inv.reshape(-1).astype(np.int64))


#: (sign, digits, exponent) key of :func:`_g3` -> its text, kept between calls (a few thousand keys in practice)
_G3_TEXT: dict[int, str] = {}


def _g3_text(k: int) -> str:
    mant, se = k % 1024, k // 1024
    sign, exp = se % 2, se // 2
    text = format(float(("-" if sign else "") + f"{mant}e{exp - 2}"), ".3g")
    if len(_G3_TEXT) > 100_000:
        _G3_TEXT.clear()
    _G3_TEXT[k] = text
    return text


#: a value closer than this to a rounding tie (in units of the last kept digit) is formatted by Python itself
_TIE = 1e-6


def _g3(values: np.ndarray) -> Col:
    """``f"{v:.3g}"`` of every value: the three significant digits and the exponent found in numpy, each distinct
    (sign, digits, exponent) written by Python once. Values near a rounding tie, zeros, NaN, ±inf and extremes are
    formatted one by one (per distinct value), so every text is exactly Python's."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    codes = np.zeros(n, dtype=np.int64)
    a = np.abs(x)
    with np.errstate(invalid="ignore"):
        fast = np.isfinite(x) & (a > 1e-290) & (a < 1e290)
    texts: list[str] = []
    fi = np.flatnonzero(fast)
    tie = np.zeros(len(fi), dtype=bool)
    if len(fi):
        v, av = x[fi], a[fi]
        e = np.floor(np.log10(av)).astype(np.int64)
        q = av / np.power(10.0, e - 2)
        low, high = q < 100, q >= 1000  # log10 can be one off next to a power of ten
        if low.any() or high.any():
            e = e - low + high
            q = av / np.power(10.0, e - 2)
        tie = np.abs(q - np.floor(q) - 0.5) < _TIE
        m = np.rint(q).astype(np.int64)
        carry = m >= 1000  # 999.7 rounds to 1.00e(+1)
        m[carry] = 100
        e = e + carry
        key = (e * 2 + (v < 0)) * 1024 + m
        uk, inv = _unique(key[~tie])
        cache = _G3_TEXT
        texts = [cache.get(k) or _g3_text(k) for k in uk.tolist()]
        codes[fi[~tie]] = inv
    slow = np.concatenate([fi[tie], np.flatnonzero(~fast)])
    if len(slow):
        one = _by_bits(x[slow], lambda y: f"{y:.3g}")
        codes[slow] = one.codes + len(texts)
        texts += one.texts
    return Col(texts, codes)


def _sig3(values: np.ndarray) -> Col:
    """``units._sig``: three significant digits, "0" for zero, a whole number where ``.3g`` would write an
    exponent (1000 after prefix scaling)."""
    x = np.asarray(values, dtype=np.float64)
    c = _g3(x)
    sci = [k for k, t in enumerate(c.texts) if "e" in t]
    texts, codes = list(c.texts), c.codes.copy()
    if sci:
        rows = np.flatnonzero(np.isin(codes, sci))
        whole = _by_bits(np.rint(x[rows]), lambda y: f"{y:.0f}")  # .0f rounds half to even, as rint does
        codes[rows] = whole.codes + len(texts)
        texts += whole.texts
    zero = np.flatnonzero(x == 0)
    if len(zero):
        codes[zero] = len(texts)
        texts.append("0")
    return Col(texts, codes)


def _f0(values: np.ndarray) -> Col:
    """``f"{v:.0f}"`` of every value (rint is the same half-to-even rounding)."""
    return _by_bits(np.rint(np.asarray(values, dtype=np.float64)), lambda y: f"{y:.0f}")


_UP = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_TIME = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _scaled(values: np.ndarray, steps: tuple[tuple[float, str], ...], unit: str, floor: tuple[float, str]) -> Col:
    """``fmt_si``/``fmt_time`` over an array: the same text per element (prefix by magnitude, then 3 digits)."""
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    cls = np.full(n, -1, dtype=np.int64)  # -1 unknown, -2 infinite, else the step (len(steps): the floor)
    y = np.zeros(n)
    mag = np.abs(v)
    todo = np.isfinite(v)
    for k, (factor, _) in enumerate(steps):
        with np.errstate(invalid="ignore"):
            sel = todo & (mag >= factor * 0.9995)
        cls[sel] = k
        y[sel] = v[sel] / factor
        todo &= ~sel
    cls[todo] = len(steps)
    y[todo] = v[todo] / floor[0]
    cls[np.isinf(v)] = -2
    num = _sig3(y)
    ncodes = np.where(cls >= 0, num.codes, 0)
    prefixes = [p for _, p in steps] + [floor[1]]
    width = len(prefixes) + 2
    uk, inv = _unique(ncodes * width + (cls + 2))
    texts = []
    for k in uk.tolist():
        c = k % width - 2
        texts.append("–" if c == -1 else "∞" if c == -2 else f"{num.texts[k // width]} {prefixes[c]}{unit}")
    return Col(texts, inv)


def _time(values: np.ndarray) -> Col:
    v = np.asarray(values, dtype=np.float64)
    c = _scaled(v, _TIME, "", (1e-9, "ns"))  # "3.2 ms": the unit is the prefix, so no space to tidy
    zero = np.flatnonzero(v == 0)  # exactly zero is "0 s"; under a thousandth of a ns stays "0 ns", as fmt_time says
    if len(zero):
        c.codes[zero] = len(c.texts)
        c.texts.append("0 s")
    return c


def _si(values: np.ndarray, unit: str) -> Col:
    return _scaled(values, _UP, unit, (1.0, ""))


def _pct(values: np.ndarray) -> Col:
    v = np.asarray(values, dtype=np.float64) * 100
    c = _sig3(v).map(lambda s: s + "%")
    nan = np.flatnonzero(np.isnan(v))
    if len(nan):
        c.codes[nan] = len(c.texts)
        c.texts.append("–")
    return c


def vfmt_si(values: np.ndarray, unit: str) -> list[str]:
    """``units.fmt_si`` over an array."""
    return _si(values, unit).tolist()


def vfmt_time(values: np.ndarray) -> list[str]:
    """``units.fmt_time`` over an array."""
    return _time(values).tolist()


def vfmt_pct(values: np.ndarray) -> list[str]:
    """``units.fmt_pct`` over an array."""
    return _pct(values).tolist()


def _strs(values: np.ndarray) -> Col:
    """``str(v)`` of every value (as an f-string writes it: None is "None"), once per distinct value."""
    arr = np.asarray(values, dtype=object)
    codes, uniq = pd.factorize(arr, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64).copy()
    texts = [str(u) for u in uniq]
    seen: dict[str, int] = {}
    for k in np.flatnonzero(codes < 0).tolist():  # None and NaN, each written as itself
        codes[k] = seen.setdefault(str(arr[k]), len(texts) + len(seen))
    return Col(texts + list(seen), codes)


# ------------------------------------------------------------------------------------------ Arrow helpers

#: a part of a row's text: text the same on every row (escaped for its destination), a :class:`Col` (escaped),
#: an Arrow scalar or array (taken as it is), or a function of the escape that builds such an array
Part = str | Col | pa.Scalar | pa.Array | Callable[[Esc], pa.Array]


def _join(parts: Sequence[Part], n: int, esc: Esc = None) -> pa.Array:
    """Row-wise concatenation of ``parts`` (one pass of Arrow's string kernel)."""
    if n == 0:
        return pa.array([], _STR)
    args: list = []
    arrays = False
    for p in parts:
        if isinstance(p, str):
            args.append(pa.scalar(esc(p) if esc else p, _STR))
        elif isinstance(p, pa.Scalar):
            args.append(p)
        else:
            args.append(p.arrow(esc) if isinstance(p, Col) else p if isinstance(p, pa.Array) else p(esc))
            arrays = True
    if not arrays:
        return _const("".join(a.as_py() for a in args), n)
    if len(args) == 1:
        return args[0]
    return pc.binary_join_element_wise(*args, "")


def _raw(text: str) -> pa.Scalar:
    """Text that is already escaped for its destination (JSON syntax around a message)."""
    return pa.scalar(text, _STR)


def _const(text: str, n: int) -> pa.Array:
    return pa.array([text], _STR).take(pa.array(np.zeros(n, dtype=np.int64)))


def _scatter(items: pa.Array, idx: np.ndarray, n: int) -> pa.Array:
    """An ``n``-row array holding ``items`` at rows ``idx`` (ascending) and "" elsewhere."""
    if len(idx) == n:
        return items
    mask = np.zeros(n, dtype=bool)
    mask[idx] = True
    return pc.replace_with_mask(_const("", n), pa.array(mask), items)


def _text_of(arr: pa.Array) -> memoryview:
    """The characters of a string array's rows, back to back (its data buffer, not copied)."""
    if len(arr) == 0:
        return memoryview(b"")
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4)
    return memoryview(arr.buffers()[2])[int(offsets[0]):int(offsets[-1])]


_CSV_SPECIAL = ',"\n\r'


def _special(parts: Sequence[Part], n: int) -> np.ndarray:
    """Per row, whether the joined text holds a character that makes a CSV cell need quotes."""
    out = np.zeros(n, dtype=bool)
    for p in parts:
        if isinstance(p, str):
            if any(c in p for c in _CSV_SPECIAL):
                return np.ones(n, dtype=bool)
        elif isinstance(p, Col):
            out |= np.append(_has_special(pa.array(p.texts, _STR)), False)[p.codes]
        else:
            out |= _has_special(p if isinstance(p, pa.Array) else p(None))
    return out


def _has_special(arr: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.match_substring_regex(arr, '[,"\n\r]'), False).to_numpy(zero_copy_only=False),
                      dtype=bool)


# ------------------------------------------------------------------------------------------ flag messages

#: the rows of one device's table a message recipe is for (ascending), and the parts of those rows' messages
Segment = tuple[np.ndarray, list]


def _recipes(tab: pd.DataFrame, r: DeviceResult) -> dict[Flag, list[Segment]]:
    """Per flag set on some rows of ``tab`` (one device's rows), how its messages are written: segments of rows
    with the parts of their messages. Each message is one sentence with the numbers behind the flag; the numbers
    are formatted once per distinct value, and nothing is joined yet (the destination escapes and joins)."""
    mask = np.asarray(tab["flags_mask"].to_numpy(), dtype=np.int64)
    hw = r.hardware
    out: dict[Flag, list[Segment]] = {}

    def rows(bit: Flag) -> np.ndarray:
        return np.flatnonzero(mask & int(bit))

    def col(name: str, idx: np.ndarray) -> np.ndarray:
        return tab[name].to_numpy()[idx]

    if len(i := rows(Flag.ABOVE_ROOF)):
        out[Flag.ABOVE_ROOF] = _above_roof(tab, i, hw)
    if len(i := rows(Flag.FAR_BELOW)):
        eff = col("efficiency", i).astype(np.float64)
        with np.errstate(divide="ignore"):
            ratio = 1 / eff
        out[Flag.FAR_BELOW] = [(i, [
            "Measured ", _time(col("time_s", i)), " is ", _f0(ratio), "× the roofline time ", _time(col("t_roof_s", i)),
            " (efficiency ", _pct(eff), "): latency, launch overhead, synchronisation or occupancy dominate, which the "
            "roofline cannot diagnose."])]
    if len(i := rows(Flag.TINY)):
        t, tr = col("time_s", i).astype(np.float64), col("t_roof_s", i).astype(np.float64)
        per = np.where(np.isnan(t), tr, t) / np.maximum(col("count", i).astype(np.float64), 1)
        out[Flag.TINY] = [(i, [_time(per), " per launch is under 1 µs: launch-bound, and replaying profilers (cache "
                                           "flush, base clocks) distort such kernels; batch or fuse them rather than "
                                           "tuning them."])]
    if len(i := rows(Flag.MISSING_TIME)):
        out[Flag.MISSING_TIME] = [(i, ["No measured time: only the roofline bound is known for this kernel."])]
    if len(i := rows(Flag.ZERO_TIME)):
        out[Flag.ZERO_TIME] = [(i, ["The measured time is zero or negative (a corrupt timestamp?): achieved rate and "
                                    "efficiency are left unknown rather than divided by zero."])]
    if len(i := rows(Flag.MISSING_FLOPS)):
        out[Flag.MISSING_FLOPS] = [(i, ["FLOPs are unknown (not zero): this kernel's roofline time and bound are "
                                        "unknown."])]
    if len(i := rows(Flag.MISSING_BYTES)):
        out[Flag.MISSING_BYTES] = [(i, [f"Off-chip ({hw.offchip.display}) bytes are unknown (not zero): this "
                                        "kernel's roofline time and bound are unknown."])]
    if len(i := rows(Flag.LEVEL_NOT_ON_DEVICE)):
        has = [col(f"bytes_{lv}", i).astype(np.float64) for lv in r.lacking]

        def listed(pieces: Callable[[str, np.ndarray], list], m: int = len(i)) -> Callable[[Esc], pa.Array]:
            def build(esc: Esc) -> pa.Array:  # per row, the lacking levels holding bytes, joined with ", "
                seen = np.zeros(m, dtype=bool)
                arrays = []
                for lv, b in zip(r.lacking, has, strict=True):
                    here = b > 0
                    sep = Col(["", ", "], seen.astype(np.int64))
                    arrays.append(pc.if_else(pa.array(here), _join([sep, *pieces(lv, b)], m, esc), ""))
                    seen |= here
                if not arrays:
                    return _const("", m)
                return arrays[0] if len(arrays) == 1 else pc.binary_join_element_wise(*arrays, "")
            return build

        out[Flag.LEVEL_NOT_ON_DEVICE] = [(i, [
            "Bytes at ", listed(lambda lv, b: [lv]), " (", listed(lambda lv, b: [_g3(b), " B"]),
            f") are not on any roof: {hw.id} has no such memory level or link in its catalog."])]
    if len(i := rows(Flag.NO_CEILING)):
        out[Flag.NO_CEILING] = [(i, [f"{hw.id} publishes no ", _strs(col("precision", i)),
                                     " ceiling: the compute time is unknown and the bound uses memory and links only."])]
    return out


def _above_roof(tab: pd.DataFrame, i: np.ndarray, hw) -> list[Segment]:
    """Why a kernel beats its roof, most likely cause first (see PRODUCT.md: FLOPs, bytes, units, precision, scope):
    one segment per cause."""
    n = len(i)
    eff = tab["efficiency"].to_numpy(dtype=np.float64)[i]
    bcodes, buniq = pd.factorize(tab["bound"].to_numpy()[i], use_na_sentinel=True)
    compute = np.array([isinstance(b, str) and b.startswith("compute") for b in buniq] + [False])[bcodes]
    lcodes, luniq = pd.factorize(tab["binding_level"].to_numpy()[i], use_na_sentinel=True)
    level = Col([u if isinstance(u, str) and u else hw.offchip.name for u in luniq] + [hw.offchip.name],
                np.where(lcodes < 0, len(luniq), lcodes).astype(np.int64))
    t = tab["time_s"].to_numpy(dtype=np.float64)[i]
    bw = np.full(n, np.nan)
    for k, lv in enumerate(level.texts):
        sel = level.codes == k
        if sel.any() and f"bytes_{lv}" in tab.columns:
            b = tab[f"bytes_{lv}"].to_numpy(dtype=np.float64)[i][sel]
            with np.errstate(divide="ignore", invalid="ignore"):
                bw[sel] = np.where(t[sel] > 0, b / t[sel], np.nan)
    ceiling = _strs(tab["ceiling"].to_numpy()[i])
    head = ["Measured ", _time(t), " beats the roofline minimum ", _time(tab["t_roof_s"].to_numpy()[i]), " (",
            _g3(eff), "× the roof), so an input is wrong: "]
    with np.errstate(invalid="ignore"):
        two = (eff >= 1.8) & (eff <= 2.2)
        case = np.where(compute, np.where(two, 0, 1),
                        np.where(eff >= 500, 2, np.where(two & (hw.scope.value == "die"), 3, 4)))
    causes: list[list] = [
        ["most likely the precision or unit (", ceiling, " assumed; a 2× gap is the next precision, FP16 accumulate, "
         "or a 2:4-sparse rate) or FLOPs counted twice."],
        ["most likely the FLOP count or its unit, or the precision (", ceiling, " assumed)."],
        ["most likely the units: the bytes look about 1000× too small (KB or MB read as bytes?)."],
        ["most likely per-die vs per-package scope: the time or bytes cover both dies of the package."],
        ["most likely the ", level, " bytes are undercounted (traffic counted at another level, or bytes per launch "
         "with time over all launches) — achieved ", _si(bw, "B/s"), " vs the roof."],
    ]
    out = []
    for c, cause in enumerate(causes):
        sub = np.flatnonzero(case == c)
        if len(sub):
            out.append((i[sub], [p.take(sub) if isinstance(p, Col) else p for p in (*head, *cause)]))
    return out


def _plain(segments: list[Segment]) -> tuple[np.ndarray, pa.Array]:
    """One flag's messages as plain text: the rows (ascending) and their messages."""
    if len(segments) == 1:
        idx, parts = segments[0]
        return idx, _join(parts, len(idx))
    idx = np.concatenate([s[0] for s in segments])
    order = np.argsort(idx, kind="stable")
    msgs = pa.concat_arrays([_join(parts, len(rows)) for rows, parts in segments])
    return idx[order], msgs.take(pa.array(order))


def flag_messages(tab: pd.DataFrame, r: DeviceResult) -> dict[Flag, np.ndarray]:
    """Per flag, an object array aligned with ``tab`` (one device's rows): the message where the flag is set, else
    None (``Analysis.table(..)["flags"]``)."""
    out: dict[Flag, np.ndarray] = {}
    for bit, segments in _recipes(tab, r).items():
        idx, msgs = _plain(segments)
        arr = np.full(len(tab), None, dtype=object)
        arr[idx] = msgs.to_numpy(zero_copy_only=False)
        out[bit] = arr
    return out


def above_roof_messages(tab: pd.DataFrame, i: np.ndarray, hw) -> list[str]:
    """The above-roof message of rows ``i`` of one device's table, in the order of ``i``."""
    i = np.asarray(i, dtype=np.int64)
    order = np.argsort(i, kind="stable")
    _, msgs = _plain(_above_roof(tab, i[order], hw))
    out = np.empty(len(i), dtype=object)
    out[order] = msgs.to_numpy(zero_copy_only=False)
    return out.tolist()


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


def _flag_cells(tab: pd.DataFrame, r: DeviceResult, esc: Esc, before: Callable[[Flag], pa.Scalar], after: str,
                sep: str, *, csv: bool = False) -> tuple[list[pa.Array], np.ndarray]:
    """Per row, its flags written one after the other in :class:`Flag` order: ``sep`` between them, each as
    ``before(flag)`` + the message escaped with ``esc`` + ``after``; and (for ``csv``) whether the row's text needs
    CSV quotes (``sep`` and the codes hold no character that needs them). Each segment of messages is joined once
    and placed on its rows; the caller joins the pieces (row-aligned, "" where a flag is absent) into its rows."""
    n = len(tab)
    earlier = np.zeros(n, dtype=bool)  # rows where a flag was already written: the next one starts with sep
    pieces = []
    special = np.zeros(n, dtype=bool)
    recipes = _recipes(tab, r)
    for bit in (b for b in Flag if b in recipes):
        segments = recipes[bit]
        for idx, parts in segments:
            lead = Col(["", sep], earlier[idx].astype(np.int64))
            pieces.append(_scatter(_join([lead, before(bit), *parts, _raw(after)], len(idx), esc), idx, n))
            if csv:
                special[idx] |= _special(parts, len(idx))
        for idx, _ in segments:
            earlier[idx] = True
    return pieces, special


def _csv_esc(text: str) -> str:
    return text.replace('"', '""')


def flag_text(tab: pd.DataFrame, r: DeviceResult) -> list[str]:
    """``"code: message; code: message"`` per row (the CSV's flags column, before CSV quoting)."""
    pieces, _ = _flag_cells(tab, r, None, lambda bit: _raw(f"{FLAG_CODES[bit]}: "), "", "; ")
    return _join(pieces or [_raw("")], len(tab)).to_pylist()


# ------------------------------------------------------------------------------------------------- JSON


def _jnum(values: np.ndarray, *, empty_unknown: bool = False) -> pa.Array:
    """JSON numbers, shortest round-trip form (orjson's, one C pass per column); NaN and ±inf are null (as CSV cells,
    ``empty_unknown``: NaN empty, ±inf written ``inf``/``-inf`` as pandas writes them)."""
    v = np.ascontiguousarray(values)
    if not len(v):
        return pa.array([], _STR)
    empty = np.isnan(v) if empty_unknown and v.dtype.kind == "f" else None
    out = _split_commas(orjson.dumps(v, option=orjson.OPT_SERIALIZE_NUMPY), len(v),
                        empty if empty is not None and empty.any() else None)
    inf = np.isinf(v) if empty is not None else None
    if inf is not None and inf.any():
        out = pc.replace_with_mask(out, pa.array(inf), pa.array(np.where(v[inf] > 0, "inf", "-inf").tolist(), _STR))
    return out


def _split_commas(text: bytes, n: int, empty: np.ndarray | None = None) -> pa.Array:
    """orjson's ``[a,b,…]`` of ``n`` numbers as a string array, cut at the commas in numpy (no Python string per
    number): the bytes without the commas are the data, the commas' positions the offsets; ``empty`` rows left
    without text."""
    raw = np.frombuffer(text, dtype=np.uint8)[1:-1]
    comma = np.flatnonzero(raw == ord(","))
    if len(comma) != n - 1:
        raise ValueError(f"expected {n} numbers, found {len(comma) + 1}")
    start = np.concatenate(([0], comma + 1))
    end = np.append(comma, len(raw))
    keep = np.ones(len(raw) + 1, dtype=np.int8)
    keep[comma] = 0
    lengths = end - start
    if empty is not None:  # drop the bytes of those rows: +1/-1 marks at their ends, summed
        mark = np.zeros(len(raw) + 1, dtype=np.int64)
        np.add.at(mark, start[empty], 1)
        np.add.at(mark, end[empty], -1)
        keep[np.cumsum(mark) > 0] = 0
        lengths[empty] = 0
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw[keep[:-1].astype(bool)]))


def _values(col: pd.Series) -> pa.Array | np.ndarray:
    """A column's values: Arrow strings where pandas holds them so (its ``str`` dtype, no copy), else numpy."""
    if isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "pyarrow":
        a = pa.array(col.array)
        a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
        return a if a.type == _STR else a.cast(_STR)
    return col.to_numpy(dtype=object) if col.dtype == object or not isinstance(col.dtype, np.dtype) else col.to_numpy()


def _distinct(values: pa.Array | np.ndarray) -> tuple[np.ndarray, list]:
    """Codes (-1 missing) and the distinct values of a column with few of them."""
    if isinstance(values, pa.Array):
        d = values.dictionary_encode()
        uniq = d.dictionary.to_pylist()
        return np.asarray(pc.fill_null(d.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64), uniq
    codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), uniq.tolist()


def _jdict(values, *, empty_is_null: bool = False) -> pa.Array:
    """JSON strings of a column with few distinct values (devices, precisions, bounds), each encoded once; None,
    NaN and other non-strings are null."""
    codes, uniq = _distinct(values)
    enc = [(_enc(x) if isinstance(x, str) and (x or not empty_is_null) else "null") for x in uniq]
    return Col([*enc, "null"], np.where(codes < 0, len(enc), codes)).arrow()


#: printable ASCII but the quote and the backslash: text that needs no JSON escape
_NEEDS_ESCAPE = '[^ !#-\\[\\]-~]'


def _jdistinct(values) -> pa.Array:
    """JSON strings of a column of mostly distinct values (names, rows): quoted in Arrow, and only the strings
    that need an escape go through ``json``'s encoder; non-strings are null."""
    try:
        arr = values if isinstance(values, pa.Array) else pa.array(values, _STR, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([_enc(x) if isinstance(x, str) else "null" for x in values], _STR)
    out = pc.fill_null(_join(['"', arr, '"'], len(arr)), "null")
    bad = np.asarray(pc.fill_null(pc.match_substring_regex(arr, _NEEDS_ESCAPE), False).to_numpy(zero_copy_only=False))
    if bad.any():
        fixed = pa.array([_enc(x) for x in arr.filter(pa.array(bad)).to_pylist()], _STR)
        out = pc.replace_with_mask(out, pa.array(bad), fixed)
    return out


def _jflags(tab: pd.DataFrame, r: DeviceResult) -> list[Part]:
    """The ``flags`` value of each row: ``[{"code": …, "message": …}, …]``."""
    pieces, _ = _flag_cells(tab, r, _esc_json, lambda bit: _raw('{"code": ' + _enc(FLAG_CODES[bit]) + ', "message": "'),
                            '"}', ", ")
    return [_raw("["), *pieces, _raw("]")]


def _jobj(names: list[str], cols: list[pa.Array], n: int) -> list[Part]:
    if not names:
        return [_raw("{}")]
    parts: list[Part] = []
    for k, (name, c) in enumerate(zip(names, cols, strict=True)):
        parts += [_raw(("{" if k == 0 else ", ") + _enc(name) + ": "), c]
    return [*parts, _raw("}")]


#: the kernel record's keys in the JSON contract's order (README "JSON output")
KERNEL_KEYS = ("name", "hardware", "group", "count", "precision", "unit", "ceiling", "flops", "bytes", "time_s",
               "intensity", "t_roof_s", "t_serial_s", "attainable_flops_per_s", "bound", "binding_level",
               "achieved_flops_per_s", "efficiency", "pct_peak_compute", "pct_peak_bandwidth", "headroom_s", "flags",
               "source", "row")


def _kernels_json(tab: pd.DataFrame, r: DeviceResult, byte_names: list[str], end: str = "") -> pa.Array:
    """One JSON object per row (each followed by ``end``), keys and nulls as ``Analysis.to_json()``'s kernels."""
    n = len(tab)

    def num(c: str) -> pa.Array:
        return _jnum(tab[c].to_numpy(dtype=np.float64))

    def text(c: str) -> pa.Array | np.ndarray:
        return _values(tab[c])

    values: dict[str, pa.Array | list[Part]] = {
        "name": _jdistinct(text("name")), "hardware": _jdict(text("hardware")),
        "group": _jdict(text("group")), "count": _jnum(tab["count"].to_numpy(dtype=np.int64)),
        "precision": _jdict(text("precision")), "unit": _jdict(text("unit")),
        "ceiling": _jdict(text("ceiling"), empty_is_null=True), "flops": num("flops"),
        "bytes": _jobj(byte_names, [num(f"bytes_{b}") for b in byte_names], n), "time_s": num("time_s"),
        "intensity": _jobj(byte_names, [num(f"intensity_{b}") for b in byte_names], n),
        "t_roof_s": num("t_roof_s"), "t_serial_s": num("t_serial_s"),
        "attainable_flops_per_s": num("attainable_flops_per_s"), "bound": _jdict(text("bound")),
        "binding_level": _jdict(text("binding_level")), "achieved_flops_per_s": num("achieved_flops_per_s"),
        "efficiency": num("efficiency"), "pct_peak_compute": num("pct_peak_compute"),
        "pct_peak_bandwidth": num("pct_peak_bandwidth"), "headroom_s": num("headroom_s"),
        "flags": _jflags(tab, r), "source": _jdict(text("source")), "row": _jdistinct(text("row")),
    }
    parts: list[Part] = []
    for k, key in enumerate(KERNEL_KEYS):
        v = values[key]
        parts += [_raw(("{" if k == 0 else ", ") + _enc(key) + ": "), *(v if isinstance(v, list) else [v])]
    return _join([*parts, _raw("}" + end)], n)


def kernels_json(tab: pd.DataFrame, r: DeviceResult, byte_names: list[str]) -> list[str]:
    """One JSON object per row of one device's table, keys and nulls as ``Analysis.to_json()``'s kernels.

    Each column is encoded once (numbers by orjson in C, repeated strings once per distinct value) and Arrow joins
    the columns into rows: no Python-level work per field and row."""
    return _kernels_json(tab, r, byte_names).to_pylist()


#: kernels encoded per piece of :func:`analysis_json_chunks` (bounds the text held in memory at once)
CHUNK_ROWS = 20_000


def _pieces(pieces: Iterator[str | memoryview], binary: bool, encoding: str) -> Iterator[str | bytes | memoryview]:
    """Text pieces as text, or (``binary``) as bytes: the large ones are Arrow buffers, written without a copy."""
    for p in pieces:
        if binary:
            yield p.encode(encoding) if isinstance(p, str) else p
        else:
            yield p if isinstance(p, str) else str(p, encoding)


def analysis_json_chunks(analysis, extra: dict | None = None, *, binary: bool = False
                         ) -> Iterator[str | bytes | memoryview]:
    """``Analysis.to_json()`` as JSON text in pieces, written column-wise: one kernel per line, the other keys
    indented as ``json.dumps(indent=1)`` does. Streamed so a million kernels never sit in memory as one string;
    ``binary`` gives the pieces as ASCII bytes (the kernels as Arrow's buffers, not copied)."""
    return _pieces(_json_text(analysis, extra), binary, "ascii")


def _json_text(analysis, extra: dict | None) -> Iterator[str | memoryview]:
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
        def pieces() -> Iterator[Callable[[], pa.Array]]:
            for r in analysis.results:
                tab = analysis._device_table(r, messages=False)
                for lo in range(0, len(tab), CHUNK_ROWS):
                    yield partial(_kernels_json, tab.iloc[lo:lo + CHUNK_ROWS], r, byte_names, ",\n")

        started = False
        for rows in _ahead(pieces()):
            yield "[\n" if not started else ",\n"
            yield _text_of(rows)[:-2]  # each row ends ",\n": not the last
            started = True
        yield "\n ]" if started else "[]"
    yield "\n}"


def _ahead(jobs: Iterator[Callable[[], pa.Array]], depth: int = 2) -> Iterator[pa.Array]:
    """The jobs' results in order, the next ``depth`` computed in threads meanwhile: Arrow's string kernels,
    orjson and numpy release the GIL, so a second core writes the next piece while this one is handed over."""
    if (os.cpu_count() or 1) < 2:
        yield from (job() for job in jobs)
        return
    with ThreadPoolExecutor(depth, thread_name_prefix="roofcore-output") as pool:
        pending: deque = deque()
        for job in jobs:
            pending.append(pool.submit(job))
            if len(pending) > depth:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


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


def _csv_text(values) -> pa.Array:
    """Text cells: a leading formula character neutralised with a quote, quoted where needed; empty when missing.
    In Arrow for strings; other objects are written as ``str()`` once per distinct value."""
    try:
        arr = values if isinstance(values, pa.Array) else pa.array(values, _STR, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
        cells = []
        for x in uniq.tolist():
            text = x if isinstance(x, str) else str(x)
            cells.append(_csv_quote("'" + text if text[:1] in _FORMULA else text))
        return Col([*cells, ""], np.where(codes < 0, len(cells), codes).astype(np.int64)).arrow()
    n = len(arr)
    d = arr.dictionary_encode()
    if len(d.dictionary) * 4 < n:  # few distinct texts (devices, precisions, sources): each written once
        codes = np.asarray(pc.fill_null(d.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
        cells = [_csv_quote("'" + x if x[:1] in _FORMULA else x) for x in d.dictionary.to_pylist()]
        return Col([*cells, ""], np.where(codes < 0, len(cells), codes)).arrow()
    formula = pc.match_substring_regex(arr, "^[=+\\-@\t\r]")
    if pc.any(formula).as_py():
        arr = pc.if_else(formula, _join(["'", arr], n), arr)
    special = pc.match_substring_regex(arr, '[,"\n\r]')
    if pc.any(special).as_py():
        arr = pc.if_else(special, _join(['"', pc.replace_substring(arr, '"', '""'), '"'], n), arr)
    return pc.fill_null(arr, "")


def _csv_col(col: pd.Series) -> pa.Array:
    """One column as CSV cells: numbers in shortest round-trip form (empty when unknown), text as :func:`_csv_text`."""
    kind = col.dtype.kind if isinstance(col.dtype, np.dtype) else "O"
    if kind == "f":
        return _jnum(col.to_numpy(dtype=np.float64), empty_unknown=True)
    if kind in "iu":
        return _jnum(col.to_numpy(dtype=np.int64))
    if kind == "b":
        return _strs(col.to_numpy()).arrow()
    return _csv_text(_values(col))


def _csv_flags(tab: pd.DataFrame, r: DeviceResult) -> list[Part]:
    """The flags cell of each row: ``code: message; …``, quoted (its quotes doubled) where CSV needs it."""
    pieces, special = _flag_cells(tab, r, _csv_esc, lambda bit: _raw(f"{FLAG_CODES[bit]}: "), "", "; ", csv=True)
    quote = Col(["", '"'], special.astype(np.int64))
    return [quote, *pieces, quote]


def analysis_csv_chunks(analysis, *, binary: bool = False) -> Iterator[str | bytes | memoryview]:
    """The per-kernel table as CSV pieces (one row per kernel × device, the columns of ``Analysis.table`` less the
    bitmask, flags as ``code: message; …``), written column-wise like the JSON (``binary``: as UTF-8 bytes)."""
    return _pieces(_csv_text_pieces(analysis), binary, "utf-8")


def _csv_text_pieces(analysis) -> Iterator[str | memoryview]:
    header: list[str] = []

    def lines(part: pd.DataFrame, r: DeviceResult) -> pa.Array:
        parts: list[Part] = []
        for k, c in enumerate(header):
            if k:
                parts.append(_raw(","))
            if c == "flags":
                parts += _csv_flags(part, r)
            else:
                parts.append(_csv_col(part[c]) if c in part.columns else _raw(""))
        return _join([*parts, _raw("\n")], len(part))

    def pieces() -> Iterator[Callable[[], pa.Array]]:
        for r in analysis.results:
            tab = analysis._device_table(r, messages=False)
            if not header:
                header.extend([*(c for c in tab.columns if c != "flags_mask"), "flags"])
            for lo in range(0, len(tab), CHUNK_ROWS):
                yield partial(lines, tab.iloc[lo:lo + CHUNK_ROWS], r)

    jobs = pieces()
    first = next(jobs, None)  # the header is known once the first table is
    if header:
        yield ",".join(_csv_quote(c) for c in header) + "\n"
    if first is not None:
        for rows in _ahead(itertools.chain([first], jobs)):
            yield _text_of(rows)


def analysis_csv(analysis) -> str:
    """:func:`analysis_csv_chunks` joined into one string."""
    return "".join(analysis_csv_chunks(analysis))


def finite_or_none(v: object) -> float | None:
    if v is None:
        return None
    x = float(v)
    return x if math.isfinite(x) else None


__all__ = ["above_roof_messages", "analysis_csv", "analysis_csv_chunks", "analysis_json", "analysis_json_chunks",
           "flag_lists", "flag_messages", "flag_text", "kernels_json", "neutralise", "vfmt_pct", "vfmt_si", "vfmt_time"]
