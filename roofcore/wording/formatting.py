"""``units.fmt_*``'s texts over arrays: numbers rounded in numpy, each distinct rounded value formatted once by
Python, so every text is exactly the scalar formatter's whatever the number of kernels."""

from __future__ import annotations

import numpy as np

from .cells import Col, by_bits, unique_codes

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


def g3(values: np.ndarray) -> Col:
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
        uk, inv = unique_codes(key[~tie])
        cache = _G3_TEXT
        texts = [cache.get(k) or _g3_text(k) for k in uk.tolist()]
        codes[fi[~tie]] = inv
    slow = np.concatenate([fi[tie], np.flatnonzero(~fast)])
    if len(slow):
        one = by_bits(x[slow], lambda y: f"{y:.3g}")
        codes[slow] = one.codes + len(texts)
        texts += one.texts
    return Col(texts, codes)


def sig3(values: np.ndarray) -> Col:
    """``units._sig``: three significant digits, "0" for zero, a whole number where ``.3g`` would write an
    exponent (1000 after prefix scaling)."""
    x = np.asarray(values, dtype=np.float64)
    c = g3(x)
    sci = [k for k, t in enumerate(c.texts) if "e" in t]
    texts, codes = list(c.texts), c.codes.copy()
    if sci:
        rows = np.flatnonzero(np.isin(codes, sci))
        whole = by_bits(np.rint(x[rows]), lambda y: f"{y:.0f}")  # .0f rounds half to even, as rint does
        codes[rows] = whole.codes + len(texts)
        texts += whole.texts
    zero = np.flatnonzero(x == 0)
    if len(zero):
        codes[zero] = len(texts)
        texts.append("0")
    return Col(texts, codes)


def f0(values: np.ndarray) -> Col:
    """``f"{v:.0f}"`` of every value (rint is the same half-to-even rounding)."""
    return by_bits(np.rint(np.asarray(values, dtype=np.float64)), lambda y: f"{y:.0f}")


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
    num = sig3(y)
    ncodes = np.where(cls >= 0, num.codes, 0)
    prefixes = [p for _, p in steps] + [floor[1]]
    width = len(prefixes) + 2
    uk, inv = unique_codes(ncodes * width + (cls + 2))
    texts = []
    for k in uk.tolist():
        c = k % width - 2
        texts.append("–" if c == -1 else "∞" if c == -2 else f"{num.texts[k // width]} {prefixes[c]}{unit}")
    return Col(texts, inv)


def time_text(values: np.ndarray) -> Col:
    v = np.asarray(values, dtype=np.float64)
    c = _scaled(v, _TIME, "", (1e-9, "ns"))  # "3.2 ms": the unit is the prefix, so no space to tidy
    zero = np.flatnonzero(v == 0)  # exactly zero is "0 s"; under a thousandth of a ns stays "0 ns", as fmt_time says
    if len(zero):
        c.codes[zero] = len(c.texts)
        c.texts.append("0 s")
    return c


def si(values: np.ndarray, unit: str) -> Col:
    return _scaled(values, _UP, unit, (1.0, ""))


def pct(values: np.ndarray) -> Col:
    v = np.asarray(values, dtype=np.float64) * 100
    c = sig3(v).map(lambda s: s + "%")
    nan = np.flatnonzero(np.isnan(v))
    if len(nan):
        c.codes[nan] = len(c.texts)
        c.texts.append("–")
    return c


def vfmt_si(values: np.ndarray, unit: str) -> list[str]:
    """``units.fmt_si`` over an array."""
    return si(values, unit).tolist()


def vfmt_time(values: np.ndarray) -> list[str]:
    """``units.fmt_time`` over an array."""
    return time_text(values).tolist()


def vfmt_pct(values: np.ndarray) -> list[str]:
    """``units.fmt_pct`` over an array."""
    return pct(values).tolist()
