"""What advice is made of: a :class:`Recommendation` (one action on one device, the kernels it applies to and
the seconds it saves), the :class:`Advice` for a device (ranked, with its total), and their levers and
confidences."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from ..analyze import share_text
from ..units import fmt_pct, fmt_time


class Lever(StrEnum):
    """What an action changes."""

    FUSION = "fusion"
    TILING = "tiling"
    PRECISION = "precision"
    BATCH = "batch"
    OVERLAP = "overlap"
    RESHARDING = "resharding"
    ALGORITHM = "algorithm"
    MORE_HARDWARE = "more_hardware"  #: reserved for plan-level advice (compute_near names it in its title)
    LAUNCH_OVERHEAD = "launch_overhead"
    LATENCY = "latency"
    MATRIX_UNITS = "matrix_units"
    VECTORISATION = "vectorisation"
    STALLS = "stalls"
    MEMORY_ACCESS = "memory_access"
    DATA_CHECK = "data_check"


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True)
class Recommendation:
    """One action on one device, with the kernels it applies to and the seconds it would save."""

    rule: str  #: the rule function's name
    title: str  #: a short imperative action
    lever: Lever
    hardware: str  #: device id
    kernels: tuple[str, ...]  #: kernel names, largest gain first (at most MAX_NAMES)
    kernel_count: int  #: kernels (rows of the workload) it applies to
    name_count: int  #: distinct kernel names among them
    reason: str  #: one or two sentences with the numbers that triggered it
    gain_s: float  #: s saved over the workload, after the higher-ranked actions (see module docstring)
    standalone_gain_s: float  #: s saved if this were the only action
    at_stake_s: float  #: s its kernels take now (measured, else roofline)
    confidence: Confidence
    #: row positions in the workload frame (largest saving first)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False, compare=False)
    #: per row of ``rows``: the time factor the action applies; ``kind`` says whether it reaches the roof
    #: ("efficiency"), moves it ("roof"), or claims nothing ("none": data checks and diagnoses)
    factors: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    kind: str = field(default="roof", repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "title": self.title, "lever": self.lever.value, "hardware": self.hardware,
                "kernels": list(self.kernels), "kernel_count": self.kernel_count, "name_count": self.name_count,
                "reason": self.reason, "gain_s": self.gain_s, "standalone_gain_s": self.standalone_gain_s,
                "at_stake_s": self.at_stake_s, "confidence": self.confidence.value}


@dataclass(frozen=True)
class Advice:
    """The ranked recommendations for one device, and what doing all of them would save."""

    hardware: str
    items: tuple[Recommendation, ...]
    total_gain_s: float  #: s, Σ gain_s (de-duplicated), never more than workload_time_s
    workload_time_s: float  #: s, Σ over kernels of the measured time, else the roofline time
    basis: str  #: "measured", "roofline" or "mixed" (some kernels timed)
    #: share of ``workload_time_s`` in kernels whose roofline is known (None: no time to share)
    known_share: float | None = None
    #: s per kernel (workload row) before and after every action: Σ(before − after) is total_gain_s
    before_s: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    after_s: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    @property
    def speedup(self) -> float | None:
        rest = self.workload_time_s - self.total_gain_s
        return self.workload_time_s / rest if rest > 0 else None

    def summary(self) -> str:
        """One sentence: the total achievable gain."""
        if not self.items:
            return "No recommendation: every kernel is at its roof or has no numbers a rule can judge."
        if self.total_gain_s <= 0:
            return (f"The roofline bounds no saving here ({fmt_time(self.workload_time_s)} of {self.basis} time): "
                    "see the checks and diagnoses below.")
        speed = self.speedup
        text = (f"Doing all of these saves up to {fmt_time(self.total_gain_s)} of {fmt_time(self.workload_time_s)} "
                f"({self.basis} time, {fmt_pct(self.total_gain_s / self.workload_time_s)})"
                + (f": {times_text(speed)} faster" if speed else ""))
        sure = sum(r.gain_s for r in self.items if r.confidence is not Confidence.LOW)
        if fmt_time(sure) != fmt_time(self.total_gain_s):  # a low-confidence part that shows at 3 digits
            text += (f"; {fmt_time(sure)} of it from high- or medium-confidence actions" if sure > 0 else
                     "; all of it from low-confidence actions")
        if self.known_share is not None and self.known_share < 0.995:
            text += (f"; the roofline is known for {_pct2(self.known_share)} of that time, so the rest cannot be judged"
                     if self.known_share > 0 else "; no kernel's roofline is known")
        return text + "."

    def to_json(self) -> dict[str, Any]:
        return {"hardware": self.hardware, "workload_time_s": self.workload_time_s, "basis": self.basis,
                "known_share": self.known_share, "total_gain_s": self.total_gain_s, "summary": self.summary(),
                "items": [r.to_json() for r in self.items]}


# --------------------------------------------------------------------------------------------- text


def times_text(x: float) -> str:
    """A factor for text: '2.8×', '37×', '1,200×'."""
    return f"{x:.2g}×" if x < 10 else f"{x:,.0f}×"


def _pct2(x: float) -> str:
    """A share with two significant figures, never rounded up to the whole: '62%', '4.2%', '>99%'."""
    return share_text(x)


def short(text: object, width: int = 48) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"
