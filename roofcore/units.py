"""Quantities in, floats in base units out (FLOP, byte, second, and per second); and back for display.

Units are converted once, at the edges: the catalog loader and the parsers call :func:`parse`, the
charts, CLI and report call the ``fmt_*`` functions. The core only ever sees floats in base units.
Decimal prefixes are SI (1 TB/s = 1e12 B/s); binary prefixes (KiB, GiB/s) are explicit.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

from .errors import UnitError


class Dimension(StrEnum):
    """What a quantity measures; each has a base unit."""

    FLOP_RATE = "FLOP/s"
    BANDWIDTH = "B/s"
    BYTES = "B"
    FLOPS = "FLOP"
    TIME = "s"

    @property
    def example(self) -> str:
        return _EXAMPLES[self]


_EXAMPLES = {
    Dimension.FLOP_RATE: '"989 TFLOP/s" (or TOPS for integer ops)',
    Dimension.BANDWIDTH: '"3.35 TB/s"',
    Dimension.BYTES: '"80 GB" or "96 GiB"',
    Dimension.FLOPS: '"2.1 GFLOP"',
    Dimension.TIME: '"3.2 ms"',
}

_BASES: dict[str, Dimension] = {}
for _names, _dim in (
    (("FLOP/s", "FLOPS", "FLOPs/s", "OP/s", "OPS", "OPs/s", "flop/s", "op/s"), Dimension.FLOP_RATE),
    (("B/s", "byte/s", "bytes/s", "Byte/s", "Bytes/s"), Dimension.BANDWIDTH),
    (("B", "byte", "bytes", "Byte", "Bytes"), Dimension.BYTES),
    (("FLOP", "FLOPs", "OP", "OPs", "flop", "flops", "op", "ops"), Dimension.FLOPS),
    (("s", "sec", "second", "seconds"), Dimension.TIME),
):
    for _n in _names:
        _BASES[_n] = _dim

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}
_SUBUNIT = {"m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12}

_NUMBER = r"[+-]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*(?P<num>{_NUMBER}|[+-]?(?:inf|nan))\s*(?P<unit>[^\s\d].*?)?\s*$", re.IGNORECASE)


def _split_unit(unit: str) -> tuple[float, Dimension] | None:
    if unit in _BASES:
        return 1.0, _BASES[unit]
    for table in (_BINARY, _DECIMAL, _SUBUNIT):
        for prefix, factor in table.items():
            if prefix and unit.startswith(prefix) and unit[len(prefix):] in _BASES:
                dim = _BASES[unit[len(prefix):]]
                if table is _SUBUNIT and dim is not Dimension.TIME:
                    return None  # "mB" is not a thing; avoid silently reading milli-bytes
                return factor, dim
    return None


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("_", ""))


def parse(value: object, dimension: Dimension, *, where: str | None = None, allow_zero: bool = True) -> float:
    """Return ``value`` in the base unit of ``dimension``.

    Accepts a number (already in base units), a numeric string (``"1e9"``, which YAML leaves as a
    string), or a number with a unit (``"3.35 TB/s"``, ``"96 GiB"``, ``"7.49 us"``). Raises
    :class:`UnitError` for a wrong or unknown unit, a negative, non-finite or non-numeric value.
    """
    expected = f"a non-negative quantity in {dimension.value} such as {dimension.example}"
    if isinstance(value, bool) or value is None:
        raise UnitError(where=where, expected=expected, found=repr(value))
    if isinstance(value, int | float):
        number, unit = float(value), ""
    elif isinstance(value, str):
        m = _QUANTITY.match(value)
        if not m:
            raise UnitError(where=where, expected=expected, found=repr(value),
                            hint="write a number, then a unit, e.g. " + dimension.example + ".")
        number = _number(m["num"]) if m["num"].lower().lstrip("+-") not in ("inf", "nan") else float(m["num"])
        unit = (m["unit"] or "").strip()
    else:
        raise UnitError(where=where, expected=expected, found=f"{type(value).__name__} {value!r}")
    factor = 1.0
    if unit:
        split = _split_unit(unit)
        if split is None:
            hint = f"known units for {dimension.value} look like {dimension.example}."
            if unit.endswith("b/s") or unit.endswith("bps"):
                hint = "a lowercase b means bits; write bytes with a capital B (e.g. GB/s)."
            raise UnitError(where=where, expected=expected, found=repr(value), hint=hint)
        factor, dim = split
        if dim is not dimension:
            raise UnitError(where=where, expected=expected, found=f"{value!r}, a quantity in {dim.value}",
                            hint=f"this field takes {dimension.value}; check the field and the unit.")
    if not math.isfinite(number):
        raise UnitError(where=where, expected=expected, found=repr(value))
    if number < 0 or (number == 0 and not allow_zero):
        raise UnitError(where=where, expected=expected if allow_zero else expected.replace("non-negative", "positive"),
                        found=repr(value), hint="figures are magnitudes; a zero or negative value is a typo.")
    return number * factor


# ----------------------------------------------------------------------------------------------- display

_UP = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def sig(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:  # .3g turns 1000 into 1e+03; we never want that after prefix scaling
        text = f"{x:.0f}"
    return text


def fmt_si(value: float | None, unit: str, digits: int = 3) -> str:
    """``fmt_si(3.35e12, "B/s") -> "3.35 TB/s"``; ``None``/NaN -> ``"–"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if math.isinf(value):
        return "∞"
    mag = abs(value)
    for factor, prefix in _UP:
        if mag >= factor * 0.9995:
            return f"{sig(value / factor, digits)} {prefix}{unit}"
    return f"{sig(value, digits)} {unit}"


def fmt_rate(v: float | None) -> str:
    return fmt_si(v, "FLOP/s")


def fmt_bandwidth(v: float | None) -> str:
    return fmt_si(v, "B/s")


def fmt_bytes(v: float | None) -> str:
    return fmt_si(v, "B")


def fmt_flops(v: float | None) -> str:
    return fmt_si(v, "FLOP")


def fmt_time(v: float | None) -> str:
    """Seconds to ``"3.2 ms"``, ``"7.49 µs"``, ``"1.5 s"``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    mag = abs(v)
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if mag >= factor * 0.9995:
            return f"{sig(v / factor)} {unit}"
    return "0 s" if v == 0 else f"{sig(v / 1e-9)} ns"


def fmt_intensity(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if math.isinf(v):
        return "∞ FLOP/B"
    return f"{sig(v)} FLOP/B" if v < 1e4 else fmt_si(v, "FLOP/B")


def fmt_factor(v: float | None) -> str:
    """A ratio as a reader quotes it: ``"1,545×"``, ``"12×"``, ``"3.2×"``, ``"1.04×"`` (never ``1.54e+03×``)."""
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "–"
    if v >= 99.95:
        return f"{v:,.0f}×"
    return f"{v:.3g}×"  # below 100, .3g never switches to e-notation


def fmt_money(v: float | None) -> str:
    """Dollars as a person writes them, never below the cent: ``"$1,235"``, ``"$3.56"``, ``"$0.29"``, ``"$0.01"``;
    an amount under half a cent is ``"< $0.01"`` (:func:`fmt_cost` says it per enough runs to read), never a long
    decimal or e-notation."""
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "–"
    sign, v = ("-" if v < 0 else ""), abs(v)
    if v == 0:
        return "$0"
    if v < 0.005:
        return "< $0.01"
    return f"{sign}${v:,.0f}" if v >= 99.995 else f"{sign}${v:,.2f}"


#: the run counts a cost is quoted per, and how each reads ("$0.29 per million runs")
RUN_SCALES = ((1, "run"), (1_000, "1,000 runs"), (1_000_000, "million runs"), (1_000_000_000, "billion runs"))
#: a cost is quoted per as many runs as make it at least this many dollars: two significant figures in cents
READABLE_COST = 0.10


def cost_scale(per_run: float, *, at_least: int = 1) -> int:
    """The run count a cost reads best per: the smallest of :data:`RUN_SCALES` (from ``at_least`` runs) at which
    it comes to :data:`READABLE_COST` or more (the largest where none does)."""
    scales = [n for n, _ in RUN_SCALES if n >= at_least] or [RUN_SCALES[-1][0]]
    return next((n for n in scales if abs(per_run) * n >= READABLE_COST), scales[-1] if per_run else scales[0])


def fmt_cost(per_run: float | None, runs: int | None = None, *, at_least: int = 1) -> str:
    """A cost per run said per ``runs`` runs, by default per as many as make it readable (:func:`cost_scale`):
    ``fmt_cost(0.356) -> "$0.36 per run"``, ``fmt_cost(0.00356) -> "$3.56 per 1,000 runs"``, ``fmt_cost(2.9e-7)
    -> "$0.29 per million runs"``; ``fmt_cost(0.00356, 1) -> "< $0.01 per run"``. The one money text of the
    Planner and of `roofline plan`."""
    if per_run is None or (isinstance(per_run, float) and (math.isnan(per_run) or math.isinf(per_run))):
        return "–"
    n = cost_scale(per_run, at_least=at_least) if runs is None else int(runs)
    label = dict(RUN_SCALES).get(n, f"{n:,} runs")
    return f"{fmt_money(per_run * n)} per {label}"


def fmt_pct(v: float | None, digits: int = 3) -> str:
    """A fraction (0.94) as a percentage ("94%")."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{sig(v * 100, digits)}%"
