"""Readers shared by the ingest formats: the unit table (FORMATS §9) every CSV with a unit per value goes through
(time → s, bytes → B, byte/s → B/s, frequencies → Hz, counts with SI prefixes)."""

from __future__ import annotations

# -------------------------------------------------------------------------------------------- units

_COUNT_BASES = ("", "inst", "cycle", "sector", "request", "warp", "thread", "block", "op", "flop")
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
#: time units per second
_TIME = {"nsecond": 1e9, "ns": 1e9, "usecond": 1e6, "us": 1e6, "µs": 1e6, "msecond": 1e3, "ms": 1e3,
         "second": 1.0, "s": 1.0, "sec": 1.0}


def _unit_table() -> dict[str, tuple[str, float]]:
    t: dict[str, tuple[str, float]] = {u: ("time", 1.0 / per_s) for u, per_s in _TIME.items()}
    for p, f in _PREFIX.items():
        for base in _COUNT_BASES:
            if base or not p:
                t[p + base] = ("count", f)
        t[p + "byte"] = ("bytes", f)  # SI powers of 1000 as far as seen (unverified; prefer --print-units base)
        t[p + "B"] = ("bytes", f)
        t[p + "hz"] = ("frequency", f)
        for tu, per_s in _TIME.items():
            t[f"{p}cycle/{tu}"] = ("frequency", f * per_s)
            t[f"{p}byte/{tu}"] = t[f"{p}B/{tu}"] = ("bandwidth", f * per_s)
    for p, f in {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30}.items():
        t[p + "B"] = t[p + "byte"] = ("bytes", f)
    return t


UNITS = _unit_table()
_UNITS_LOWER = {k.lower(): v for k, v in UNITS.items()}  # "MHz", "GHz": lower-cased keys do not collide


def unit_factor(unit: str) -> tuple[str, float] | None:
    """``(dimension, factor to base units)`` of an ncu unit string, or None if unknown (FORMATS §9)."""
    u = unit.strip()
    return UNITS.get(u) or _UNITS_LOWER.get(u.lower())
