"""Every rule's recommendations for a device, ranked and de-duplicated (:func:`advise`); the package docstring
says how gains are claimed and why no second of a kernel is counted twice."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..analyze import Analysis
from .model import Advice, Lever, Recommendation
from .rule_context import RULES, Context, Rule, context


def _dedupe(ctx: Context, recs: list[Recommendation]) -> tuple[list[Recommendation], np.ndarray]:
    """Count each action's gain after those ranked above it (see the package docstring); then rank by it."""
    order = {r.__name__: i for i, r in enumerate(RULES)}
    greedy = sorted(recs, key=lambda r: (r.lever is not Lever.DATA_CHECK, -r.standalone_gain_s, order[r.rule]))
    n = len(ctx.base_s)
    roof_f = np.ones(n)  # best roof factor per kernel so far
    eff_f = np.ones(n)  # efficiency factor once claimed
    out = []
    for r in greedy:
        if not len(r.rows):
            out.append(r)
            continue
        idx, f = r.rows, r.factors
        before = ctx.base_s[idx] * roof_f[idx] * eff_f[idx]
        if r.kind == "efficiency":
            eff_f[idx] = f
        elif r.kind == "roof":
            roof_f[idx] = np.minimum(roof_f[idx], f)
        after = ctx.base_s[idx] * roof_f[idx] * eff_f[idx]
        out.append(replace(r, gain_s=float(np.maximum(before - after, 0.0).sum())))
    out.sort(key=lambda r: (r.lever is not Lever.DATA_CHECK, -r.gain_s, -r.at_stake_s, order[r.rule]))
    return out, ctx.base_s * roof_f * eff_f


def advise(analysis: Analysis, hw_id: str | None = None, *, rules: list[Rule] | None = None) -> Advice:
    """Every rule's recommendations for one device (default: the analysis's first), ranked and de-duplicated."""
    hw_id = hw_id or analysis.hardware[0].id
    ctx = context(analysis, hw_id)
    recs: list[Recommendation] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for fn in rules or RULES:
            recs.extend(fn(ctx))
    items, after = _dedupe(ctx, recs)
    total = float((ctx.base_s - after).sum())
    base = np.nan_to_num(np.asarray(ctx.base_s, dtype=np.float64))
    known = ~np.isnan(ctx.analysis.result(hw_id).t_roof)
    known_share = float(base[known].sum() / base.sum()) if base.sum() > 0 else None
    return Advice(hardware=hw_id, items=tuple(items), total_gain_s=total, workload_time_s=ctx.workload_time_s,
                  basis=ctx.basis, known_share=known_share, before_s=ctx.base_s, after_s=after)


def advise_all(analysis: Analysis) -> dict[str, Advice]:
    """:func:`advise` for every device of the analysis, by device id."""
    return {h.id: advise(analysis, h.id) for h in analysis.hardware}
