"""The Planner's starting points: the builders' example parameters, the scenario examples offered for download,
and the current workload as a scenario's ``base:``."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from roofcore.resources import data_dir
from roofcore.views import count_text
from roofcore.whatif import inline_kernels

from .state import WorkloadEntry

#: example builder parameters the Planner's Build tab starts from (a Llama-7B-class decode; one attention layer)
BUILDER_DEFAULTS: dict[str, dict[str, object]] = {
    "transformer": {"layers": 32, "hidden": 4096, "heads": 32, "ffn": 11008, "vocab": 32000, "batch": 1,
                    "seq": 2048, "phase": "decode"},
    "attention": {"batch": 8, "heads": 32, "q_len": 2048, "kv_len": 2048, "head_dim": 128},
}
#: a What-if scenario inlines the current workload's kernels up to this many; beyond it the base must be a file
INLINE_LIMIT = 2000
#: the example scenarios offered for download on the Planner
SCENARIO_EXAMPLES = data_dir("examples") / "scenarios"


@functools.cache
def scenario_examples() -> tuple[tuple[Path, str, bool], ...]:
    """The example scenarios offered for download, read once per process (they ship with the app): each file,
    its text, and whether its base names a workload file (which only ``roofline plan`` reads)."""
    out = []
    for path in sorted(SCENARIO_EXAMPLES.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        doc = yaml.safe_load(text) or {}
        out.append((path, text, isinstance(doc.get("base"), dict) and "file" in doc["base"]))
    return tuple(out)


def scenario_base(entry: WorkloadEntry) -> tuple[dict | None, str]:
    """The ``base:`` of a scenario for the app's current workload entry, and a sentence saying what it is.

    A built workload (the Build tab) is its builder and parameters; another workload of at most
    :data:`INLINE_LIMIT` kernels is inlined (``base: {kernels: [...]}``: FLOPs, bytes, the read/written/weight
    split and measured times, each row as loaded); a larger one cannot be inlined (``None``): the scenario must
    name its file (``base: {file: PATH}``), which only the CLI reads."""
    if entry.get("builder"):
        return ({"builder": entry["builder"], "params": dict(entry.get("params") or {})},
                f"base: the {entry['builder']} builder with its parameters.")
    w = entry["workload"]
    if len(w) > INLINE_LIMIT:
        return None, (f"{count_text(w)} in {len(w):,} rows are too many to inline (at most {INLINE_LIMIT:,} rows): "
                      "write `base: {file: PATH}` by hand and run the scenario with `roofline plan`.")
    return ({"name": w.name, "kernels": inline_kernels(w)},
            f"base: the {count_text(w)} of {w.name}, inline (FLOPs and bytes as loaded).")
