"""The report's text helpers: file paths reduced to base names, percentages and numbers as the report prints
them, dollars, escaped and formatted table columns. Pure functions of strings and numbers."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ..analyze import Analysis

esc = html.escape



#: a path of the machine: absolute (/, ~/, C:\, \\server), relative through . or .., or folders ending
#: in a file with an extension (data/run.csv); "FLOP/s" and "TB/s" are not paths
_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:[\\/]|\\\\|~[\\/]|\.{1,2}[\\/]|[\\/](?=[\w.-]))(?:[^\s\\/,;:()\"'<>|]*[\\/])*"
                   r"([^\s\\/,;:()\"'<>|]+)"
                   r"|(?<![\w./\\])(?:[\w.-]+[\\/])+([\w.-]+\.[A-Za-z]\w{0,5})(?![\w/\\])")


def no_paths(text: str) -> str:
    """``text`` with each file path reduced to its base name (a report is shared; the machine's folders are not)."""
    return _PATH.sub(lambda m: m.group(1) or m.group(2) or "", str(text))


def default_title(a: Analysis) -> str:
    """``Roofline report: <workload name>``, the name without any folder."""
    return f"Roofline report: {no_paths(a.workload.name)}"


def pct(x: float | None) -> str:
    """A fraction as a percentage with two significant figures ("41%", "5.3%", "0.12%"); above 100% whole."""
    if x is None or not np.isfinite(x):
        return "–"
    p = x * 100
    if p >= 100:
        return f"{p:,.0f}%"
    if p >= 99.5:
        return ">99%"  # never round a part up to the whole
    if p <= 0:
        return "0%"
    if p < 0.001:
        return "<0.001%"
    return f"{p:.2g}%" if p < 10 else f"{p:.0f}%"



_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)%")

_SCI = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([+-]?\d+)(?![\w.])")



def quotable(text: str) -> str:
    """Text from elsewhere (advice, warnings) with its numbers as the report prints them: percentages with
    two significant figures, no scientific notation."""
    text = _PERCENT.sub(lambda m: pct(float(m.group(1)) / 100), text)
    return _SCI.sub(lambda m: f"{float(m.group(0)):,.{max(0, 2 - int(m.group(2)))}f}"
                    if -6 <= int(m.group(2)) <= 15 else m.group(0), text)


def vfmt(values: Iterable[float], fn: Callable[[float], str]) -> pd.Series:
    """``fn`` over a column, called once per distinct value (NaN → "–")."""
    s = pd.Series(values, dtype="float64").reset_index(drop=True)
    uniq = pd.unique(s.dropna())
    table = {v: fn(float(v)) for v in uniq}
    out = s.map(table).astype(object)
    return out.where(out.notna(), "–")


def escape_col(values: Iterable[str]) -> pd.Series:
    s = pd.Series(list(values), dtype=object)
    table = {v: esc(v) for v in pd.unique(s)}
    return s.map(table).astype(object)


def money(v: float | None) -> str:
    """Dollars as a reader quotes them: "$12.40", "$0.034", "$0.000034" (never "$3.4e-05")."""
    if v is None or not np.isfinite(v):
        return "–"
    if abs(v) >= 0.01 or v == 0:
        return f"${v:,.2f}"
    return f"${v:.{1 - int(np.floor(np.log10(abs(v))))}f}"


def clip(text: str, limit: int = 90) -> str:
    """A catalog source cut to its first ``limit`` characters (at a word), for the small print."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > limit // 2 else limit].rstrip(",;:") + " …"

