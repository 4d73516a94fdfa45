"""Scenarios: a base workload, the devices, and steps that each make a variant (fuse, precision, batch, shard,
communication, other devices), every variant projected and compared with the base (:func:`run_scenario`); the
YAML grammar is in ``examples/scenarios``."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analyze import Analysis
from ..errors import InputError, RoofcoreError
from ..models import Hardware, Workload
from ..units import fmt_cost, fmt_time
from .projection import Projection, clean, evaluate, project
from .steps import apply, base_workload, load_doc, number, relocate, step_error

if TYPE_CHECKING:
    from ..catalog import Catalog

STEP_KINDS = ("fuse", "precision", "batch", "shard", "comm_fraction", "hardware")
_TOP_KEYS = {"name", "base", "hardware", "price_per_hour", "steps", "measured_on", "description"}


@dataclass(frozen=True)
class Variant:
    """One workload of a scenario (the base or a step's result) on its devices."""

    name: str
    kind: str  #: "base" or one of :data:`STEP_KINDS`
    params: Any
    parent: str | None
    workload: Workload
    hardware: tuple[str, ...]
    analysis: Analysis
    projection: Projection
    speedup_vs_base: Mapping[str, float | None]  #: per device: base t_roof (same device, else the base's first) / this t_roof
    speedup_vs_base_estimate: Mapping[str, float | None]  #: the same with the estimates (measured where known)

    def to_json(self, document: Callable[[Analysis], Mapping[str, Any]]) -> dict[str, Any]:
        """``document``: the analysis JSON as a dict (:func:`roofcore.output.analysis_document`, its one writer)."""
        a = document(self.analysis)
        totals = []
        for t in self.projection.totals:
            d = t.to_json()
            d["speedup_vs_base"] = clean(self.speedup_vs_base.get(t.hardware))
            d["speedup_vs_base_estimate"] = clean(self.speedup_vs_base_estimate.get(t.hardware))
            totals.append(d)
        return {"name": self.name, "step": self.kind, "params": self.params, "from": self.parent,
                "hardware": list(self.hardware), "workload": a["workload"], "kernels": a["kernels"],
                "summary": a["summary"], "totals": totals,
                "notes": list(dict.fromkeys([*self.workload.warnings, *self.projection.notes]))}


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    source: str
    variants: tuple[Variant, ...]
    hardware: tuple[Hardware, ...]  #: every device any variant uses
    description: str | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        """What every page and report says under the result: each variant's warnings and projection notes (what
        an estimate leaves out, kernels measured above their roof, cross-vendor drops), each once, in order."""
        return tuple(dict.fromkeys(n for v in self.variants for n in (*v.workload.warnings, *v.projection.notes)))

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise RoofcoreError(f"no variant {name!r} in scenario {self.name!r}")

    def to_json(self, document: Callable[[Analysis], Mapping[str, Any]]) -> dict[str, Any]:
        """``document``: :func:`roofcore.output.analysis_document` (plan may not import the output layer)."""
        from ..catalog import hardware_to_json

        return {"schema_version": 1, "scenario": self.name, "source": self.source, "description": self.description,
                "roofs": "theoretical", "hardware": [hardware_to_json(h) for h in self.hardware],
                "base": self.variants[0].name, "variants": [v.to_json(document) for v in self.variants]}


@dataclass
class _Run:
    """A scenario while it runs: the catalog, the device the base was measured on, the prices, the variants so far
    (the base first) and the devices of each."""

    catalog: Any
    measured: str | None = None
    prices: dict[str, float] = field(default_factory=dict)  #: device id -> $/hour
    variants: dict[str, Variant] = field(default_factory=dict)
    hw_of: dict[str, tuple[Hardware, ...]] = field(default_factory=dict)

    def devices(self, ids: list[str], where: str) -> tuple[Hardware, ...]:
        out = []
        for i, h in enumerate(ids):
            if h not in self.catalog:
                close = self.catalog.closest(h) if hasattr(self.catalog, "closest") else []
                raise step_error(f"{where}[{i}]", "a device id from the catalog", h,
                           f"closest: {', '.join(close)}" if close else "see `roofline hardware list`.")
            out.append(self.catalog.get(h))
        return tuple(out)

    def add(self, vname: str, kind: str, params: Any, parent: str | None, w: Workload,
            hws: tuple[Hardware, ...]) -> None:
        """The variant ``vname``: ``w`` projected onto ``hws``, its speedups against the base."""
        has_time = bool((w.frame["time_s"].to_numpy(dtype=np.float64) > 0).any())
        src = self.catalog.get(self.measured) if self.measured and has_time else None
        proj = project(w, src, list(hws), price_per_hour=self.prices)
        sp, spe = {}, {}
        if parent is not None:
            b = next(iter(self.variants.values())).projection
            for t in proj.totals:
                ref = b.total(t.hardware) if any(x.hardware == t.hardware for x in b.totals) else b.totals[0]
                sp[t.hardware] = ref.t_roof_s / t.t_roof_s if ref.t_roof_s and t.t_roof_s else None
                spe[t.hardware] = ref.estimate_s / t.estimate_s if ref.estimate_s and t.estimate_s else None
        else:
            sp = {t.hardware: 1.0 for t in proj.totals}
            spe = dict(sp)
        self.variants[vname] = Variant(name=vname, kind=kind, params=params, parent=parent, workload=w,
                                       hardware=tuple(h.id for h in hws), analysis=evaluate(w, hws), projection=proj,
                                       speedup_vs_base=sp, speedup_vs_base_estimate=spe)
        self.hw_of[vname] = hws


def run_scenario(source: str | Path | Mapping[str, Any], catalog: Catalog, *, allow_files: bool = True,
                 base_dir: str | Path | None = None) -> ScenarioResult:
    """Run a scenario (a YAML path or its parsed dict) against ``catalog`` (a :class:`~roofcore.catalog.Catalog`).

    Each step makes a new variant from the previous one (chained), or from ``from: base`` / ``from: NAME``
    of an earlier step. ``allow_files=False`` refuses ``base: {file: ...}`` (for uploads).
    """
    doc, label, here = load_doc(source)
    if base_dir is not None:
        here = Path(base_dir)
    run = _Run(catalog)
    base_hw, steps = _header(doc, label, run)
    base = base_workload(doc["base"], label, here, allow_files)
    all_hw: dict[str, Hardware] = {h.id: h for h in base_hw}
    run.add("base", "base", None, None, base, base_hw)
    prev = "base"
    for i, step in enumerate(steps):
        where = f"{label}: $.steps[{i}]"
        kind, vname, parent = _step(step, i, where, run.variants, prev)
        w, hws = run.variants[parent].workload, run.hw_of[parent]
        if kind == "hardware":
            ids = step["hardware"]
            if isinstance(ids, str):
                ids = [ids]
            if not isinstance(ids, list) or not ids:
                raise step_error(f"{where}.hardware", "a non-empty list of device ids", ids)
            hws = run.devices(ids, f"{where}.hardware")
            all_hw.update({h.id: h for h in hws})
        else:
            try:
                w = apply(kind, step[kind], w, f"{where}.{kind}")
            except InputError as e:
                raise relocate(e, where, kind) from None
            w = replace(w, name=f"{base.name} · {vname}")
        run.add(vname, kind, step[kind], parent, w, hws)
        prev = vname
    return ScenarioResult(name=str(doc.get("name") or label), source=label, variants=tuple(run.variants.values()),
                          hardware=tuple(all_hw.values()), description=doc.get("description"))


def _header(doc: dict[str, Any], label: str, run: _Run) -> tuple[tuple[Hardware, ...], list[Any]]:
    """Check the scenario's keys, devices, prices, measured device and steps (in that order: the first mistake is
    the one reported); the prices and measured device go to ``run``. Returns the base's devices and the steps."""
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        k = sorted(unknown)[0]
        close = difflib.get_close_matches(k, list(_TOP_KEYS), n=1)
        raise step_error(f"{label}: $.{k}", "a scenario key: " + ", ".join(sorted(_TOP_KEYS)), k,
                   f"did you mean {close[0]!r}?" if close else None)
    if "base" not in doc:
        raise step_error(f"{label}: $", "key 'base'", "none", "base: {file: PATH} | {builder: NAME, params: {...}} | "
                   "{kernels: [...]}")
    hw_ids = doc.get("hardware")
    if not isinstance(hw_ids, list) or not hw_ids or not all(isinstance(h, str) for h in hw_ids):
        raise step_error(f"{label}: $.hardware", "a non-empty list of device ids", hw_ids if hw_ids is not None else "none",
                   "see `roofline hardware list`.")
    base_hw = run.devices(hw_ids, f"{label}: $.hardware")
    prices = doc.get("price_per_hour") or {}
    if not isinstance(prices, dict):
        raise step_error(f"{label}: $.price_per_hour", "a mapping of device id to $/hour", f"<{type(prices).__name__}>")
    for k, v in prices.items():
        number(v, f"{label}: $.price_per_hour.{k}", strict=False)
    measured = doc.get("measured_on")
    if measured is not None and measured not in [h.id for h in base_hw]:
        raise step_error(f"{label}: $.measured_on", "one of the scenario's hardware ids", measured,
                   "the device the base's times were measured on must be among the devices.")
    steps = doc.get("steps") or []
    if not isinstance(steps, list):
        raise step_error(f"{label}: $.steps", "a list of steps", f"<{type(steps).__name__}>")
    run.prices, run.measured = prices, measured
    return base_hw, steps


def _step(step: Any, i: int, where: str, variants: Mapping[str, Variant], prev: str) -> tuple[str, str, str]:
    """A step's action, its variant's name and the variant it starts from, each checked."""
    if not isinstance(step, dict):
        raise step_error(where, "a mapping with a name and one action (" + ", ".join(STEP_KINDS) + ")",
                   f"<{type(step).__name__}>")
    kinds = [k for k in STEP_KINDS if k in step]
    extra = set(step) - {*STEP_KINDS, "name", "from"}
    if extra:
        k = sorted(extra)[0]
        close = difflib.get_close_matches(k, [*STEP_KINDS, "name", "from"], n=1)
        raise step_error(f"{where}.{k}", "a step key: name, from, or one of " + ", ".join(STEP_KINDS), k,
                   f"did you mean {close[0]!r}?" if close else None)
    if len(kinds) != 1:
        raise step_error(where, "exactly one action: " + ", ".join(STEP_KINDS), ", ".join(kinds) or "none")
    kind = kinds[0]
    vname = str(step.get("name") or f"step {i + 1}: {kind}")
    if vname in variants:
        raise step_error(f"{where}.name", "a name no other step has", vname)
    parent = step.get("from", prev)
    if parent not in variants:
        raise step_error(f"{where}.from", "base or the name of an earlier step: " + ", ".join(variants), parent)
    return kind, vname, parent


def scenario_text(result: ScenarioResult) -> str:
    """A plain-text summary of a scenario (the CLI's `roofline plan`): one row per variant × device."""
    rows = []
    for v in result.variants:
        for t in v.projection.totals:
            top = next(iter(t.bound_share), "–")
            rows.append([v.name, t.hardware, fmt_time(t.t_roof_s) if t.t_roof_s is not None else "–",
                         fmt_time(t.estimate_s) if t.estimate_s is not None else "–",
                         f"{v.speedup_vs_base[t.hardware]:.2f}x" if v.speedup_vs_base.get(t.hardware) else "–",
                         fmt_cost(t.cost_per_run), top])
    head = ["variant", "device", "t_roof", "estimate", "vs base", "cost", "mostly bound by"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{w}}}" if i in (0, 1, 6) else f"{{:>{w}}}" for i, w in enumerate(widths))
    out = [f"Scenario: {result.name}", "", fmt.format(*head).rstrip(), fmt.format(*["-" * w for w in widths])]
    out += [fmt.format(*r).rstrip() for r in rows]
    notes = list(dict.fromkeys(n for v in result.variants for n in (*v.workload.warnings, *v.projection.notes)))
    if notes:
        out += ["", *[f"Note: {n}" for n in notes]]
    out += ["", "vs base: base t_roof (same device, else the base's first device) / this t_roof."]
    return "\n".join(out)
