"""Kernel times from rocprof's nanosecond timestamps: exact for whole and decimal ns (also as a spreadsheet re-types
them: thousands separators, scientific notation that kept every digit), unknown (NaN, with a warning naming the
dispatch) for a zero, negative or missing one, or one in scientific notation that lost its last digits (FORMATS
§0.11). Timestamps a spreadsheet saved with its 15 significant digits (``1700000000123460000``: the last digits
zeros) give each duration to ± one step of what is left; a duration shorter than 100 steps is then unknown, and a
warning says so once for the file."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .table import MAX_NAMED, SPREADSHEET_DIGITS, plain_numbers


def no_time_warning(source: str, cols: tuple[str, str], hint: str | None = None) -> str:
    return (f"{source}: no {cols[0]}/{cols[1]} columns: kernel times are unknown. Hint: "
            f"{hint or 'profile with timestamps on (rocprof --timestamp on).'}")


def ns(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ok, whole ns, fraction of a ns) of timestamp texts: whole ns, or decimal ns as rocprof-compute 3.x averages
    passes; the whole part stays an exact int64 (ns since boot need 16+ digits, beyond a float's exact range)."""
    whole = whole_ns(texts)
    if whole is not None:
        return np.ones(len(texts), dtype=bool), whole, np.zeros(len(texts))
    m = pd.Series(texts, dtype=object).str.extract(r"^([0-9]{1,19})(\.[0-9]*)?$")
    ok = m[0].notna().to_numpy(dtype=bool, copy=True)
    ok[ok] = [_fits(t) for t in m[0][ok]]
    whole = np.zeros(len(texts), dtype=np.int64)
    whole[ok] = m[0][ok].astype(np.int64).to_numpy()
    frac = pd.to_numeric(m[1].where(m[1].notna() & (m[1] != "."), "0").radd("0"), errors="coerce")
    return ok, whole, frac.fillna(0.0).to_numpy(dtype=np.float64)


#: the largest int64, as text: a timestamp of 19 digits (ns since the epoch, or since a boot 317 days ago) up to it
INT64_MAX = str(np.iinfo(np.int64).max)


def _fits(digits: str) -> bool:
    return len(digits) < len(INT64_MAX) or (len(digits) == len(INT64_MAX) and digits <= INT64_MAX)


def whole_ns(texts: np.ndarray) -> np.ndarray | None:
    """Every text 1–19 ASCII digits that fit an int64 (the usual case): their values, checked and converted at C
    speed; else None."""
    if not len(texts):
        return None
    try:
        joined = "".join(texts)
    except TypeError:
        return None
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if not (joined.isascii() and joined.isdigit()) or lengths.min() < 1 or lengths.max() > len(INT64_MAX):
        return None
    if lengths.max() == len(INT64_MAX) and not all(map(_fits, texts[lengths == len(INT64_MAX)])):
        return None
    return np.array(texts, dtype=np.int64)


#: a duration from rounded timestamps is kept where the rounding can move it by at most 1%
KEPT_STEPS = 100


def rounded_step(values: np.ndarray) -> int:
    """The step, in ns, of timestamps a spreadsheet saved with its :data:`.table.SPREADSHEET_DIGITS` significant
    digits: ``10**k`` where every one of 17 digits or more ends in its ``k`` digits beyond the 15th as zeros (the
    largest such step); 0 where some does not, or fewer than six are that long (too few to tell rounding from
    chance). A 16-digit timestamp's 10 ns step is not looked for: a GPU whose clock ticks every 10 ns writes such
    timestamps itself (and a 10 ns step moves a 1 µs kernel by 1% at most)."""
    v = values[values >= 10 ** (SPREADSHEET_DIGITS + 1)]  # 17 digits and more: a step of 100 ns or more
    if len(v) < 6 or (v % 100).any():  # ns since boot: two last digits 0 on every one is no chance
        return 0
    digits = SPREADSHEET_DIGITS + 2 + sum((v >= 10 ** d).astype(np.int64)
                                          for d in range(SPREADSHEET_DIGITS + 2, 19))
    step = np.int64(10) ** (digits - SPREADSHEET_DIGITS)
    return 0 if (v % step).any() else int(step.max())


def durations(start: np.ndarray | None, end: np.ndarray | None, ids: np.ndarray, names: np.ndarray,
              source: str, cols: tuple[str, str], no_time: str | None = None) -> tuple[np.ndarray, list[str]]:
    """Seconds from ns timestamps; unusable ones give NaN and a warning per dispatch (docs/formats.md).
    ``no_time``: the hint when the file has no timestamp columns."""
    n = len(ids)
    if start is None or end is None:
        return np.full(n, np.nan), [no_time_warning(source, cols, no_time)]
    s_txt = np.array([str(v).strip() for v in start], dtype=object)
    e_txt = np.array([str(v).strip() for v in end], dtype=object)
    (s_ok, s, s_frac), (e_ok, e, e_frac) = ns(plain_numbers(s_txt)), ns(plain_numbers(e_txt))
    ok = s_ok & e_ok
    d = np.where(ok, (e - s).astype(np.float64) + (e_frac - s_frac), 0.0)
    step = rounded_step(np.concatenate([s, e])) if (ok & (s_frac == 0) & (e_frac == 0)).all() else 0
    coarse = ok & (np.abs(d) < KEPT_STEPS * step)  # rounding alone could make or break these
    good = ok & (d > 0) & ~coarse
    time_s = np.where(good, d * 1e-9, np.nan)
    bad = np.flatnonzero(~good & ~coarse)
    warn: list[str] = []
    if step:
        warn.append(f"{source}: every {cols[0]}/{cols[1]} ends in {len(str(step)) - 1} zero(s), as a spreadsheet "
                    f"saves a number of more than {SPREADSHEET_DIGITS} digits: each duration is known to ±{step:,} ns. "
                    + (f"{int(coarse.sum()):,} of {n:,} dispatch(es), shorter than {KEPT_STEPS * step:,} ns, have "
                       "an unknown time; the others keep theirs (within 1%)." if coarse.any() else
                       "Every dispatch is long enough to keep its time (within 1%).")
                    + " Hint: use the CSV as the profiler wrote it.")
    for i in bad[:MAX_NAMED]:
        if ok[i]:
            why = f"{cols[1]} − {cols[0]} = {int(d[i]) if float(d[i]).is_integer() else round(float(d[i]), 3)} ns"
            hint = ("the profiler recorded the end before the start (a timestamp glitch); the other dispatches are "
                    "kept" if d[i] < 0 else "the profiler recorded no positive duration; profile again")
        else:
            shown = ", ".join(f"{c} {t!r}" for c, t, g in ((cols[0], s_txt[i], s_ok[i]),
                                                           (cols[1], e_txt[i], e_ok[i])) if not g)
            sci = any(re.search(r"\d[eE][+-]?\d", t) for t in (s_txt[i], e_txt[i]))
            why = f"{'timestamp in scientific notation' if sci else 'not a timestamp in ns'}: {shown}"
            hint = ("use the CSV as the profiler wrote it; a spreadsheet rewrites long timestamps in scientific "
                    "notation and loses their last digits")
        warn.append(f"{source}: dispatch {ids[i]} ({names[i]}): {why}; its time is left unknown. Hint: {hint}.")
    if len(bad) > MAX_NAMED:
        warn.append(f"{source}: … and {len(bad) - MAX_NAMED} more dispatch(es) with unusable timestamps; their "
                    "times are left unknown.")
    return time_s, warn

