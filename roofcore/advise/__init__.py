"""Bottleneck recommendations: :data:`RULES` turn an :class:`~roofcore.analyze.Analysis` into ranked actions.

Each rule is a small function ``rule(ctx) -> list[Recommendation]`` registered in :data:`RULES`, its docstring
the explanation shown to users. A rule reads the engine's numbers for one device (:class:`Context`: the
per-kernel table, roof times per resource, measured times) and never recomputes roofline math beyond
"the same formulas with one input changed" (fewer bytes, another ceiling).

**Gains** (seconds, over the workload). Each recommendation claims, per kernel, a time factor of one of two
kinds:

- *efficiency* — the action moves the kernel up to its roof (coalescing, vectorisation, latency): the factor
  is ``t_roof / time``, so the claim is at most the headroom ``time − t_roof``;
- *roof* — the action moves the roof (fusion, precision, batch, tiling, resharding): the factor is
  ``new_roof / t_roof`` and the kernel is assumed to keep its measured efficiency, so the claim is
  ``time·(1 − new_roof/t_roof)`` ≤ ``time − new_roof`` (untimed kernels: ``t_roof − new_roof``).

**De-duplication** (:func:`advise`): actions are taken greedily, largest standalone gain first. Per kernel
the efficiency part is claimed once, and roof actions do not compound: a kernel's time after several roof
actions is its time under the best one alone. Each recommendation counts only what it saves beyond the
actions ranked above it, so no second of any kernel is counted twice and the total never exceeds the
workload's time. Data checks (the numbers are wrong or missing) claim nothing and are listed first.

The package: :mod:`.model` the results (:class:`Recommendation`, :class:`Advice`), :mod:`.rule_context` what a
rule reads (:class:`Context`) and the registry (:func:`rule`), the rules by what binds the kernels
(:mod:`.checks`: data checks and latency; :mod:`.memory`; :mod:`.precision_batch`; :mod:`.compute`;
:mod:`.links`), :mod:`.engine` the ranking (:func:`advise`), :mod:`.text` the CLI's text and the app's cards.
A new rule is a function with ``@rule`` in the module of its kind.
"""

from __future__ import annotations

from .model import Advice, Confidence, Lever, Recommendation
from .rule_context import (
    FAR_BELOW,
    MAX_NAMES,
    MAX_SPLIT,
    MIN_ROOF_CUT,
    MIN_TINY_LAUNCHES,
    NEAR_ROOF,
    RULES,
    WEAK_FP64_RATIO,
    Context,
    Rule,
    context,
    explain,
    rule,
)

# isort: off
# the rule modules register their rules as they are imported: in this order, the order ties are ranked in
from .checks import above_roof, below_both_roofs, missing_data, tiny_launches
from .memory import REUSE_MIN, fusion, memory_far, offchip_reuse, onchip_tiling
from .precision_batch import larger_batch, lower_precision
from .compute import compute_far, compute_near, matrix_units, weak_fp64
from .links import link_far, link_near
# isort: on

from .engine import advise, advise_all
from .text import LEVER_LABELS, Card, advice_frame, advice_text, cards, gain_text, kernels_text

__all__ = [
    "FAR_BELOW", "LEVER_LABELS", "MAX_NAMES", "MAX_SPLIT", "MIN_ROOF_CUT", "MIN_TINY_LAUNCHES", "NEAR_ROOF", "REUSE_MIN",
    "RULES", "WEAK_FP64_RATIO", "Advice", "Card", "Confidence", "Context", "Lever", "Recommendation", "Rule",
    "above_roof", "advice_frame", "advice_text", "advise", "advise_all", "below_both_roofs", "cards", "compute_far",
    "compute_near", "context", "explain", "fusion", "gain_text", "kernels_text", "larger_batch", "link_far",
    "link_near", "lower_precision", "matrix_units", "memory_far", "missing_data", "offchip_reuse", "onchip_tiling",
    "rule", "tiny_launches", "weak_fp64",
]
