"""Planning: projection to other devices, transformations, solvers,
scenarios and the comparison of two runs.

Every transformation returns a **new** :class:`~roofcore.models.Workload` (a copied frame, through
``dataclasses.replace``); nothing here mutates its input (docs/architecture.md, "Nothing mutates its input"). Results are
frozen dataclasses with ``to_json()``.

The package, each module documenting its choices and formulas (the tests in ``tests/test_plan.py`` pin each
one): :mod:`.transforms` (the read/written split of the off-chip bytes; fuse, change_precision, scale_batch,
shard, comm_fraction), :mod:`.projection` (evaluate with the communication fraction, project to other
devices), :mod:`.solvers` (crossovers and tiles), :mod:`.comparison` (two runs), :mod:`.steps` and
:mod:`.scenarios` (a scenario's YAML and its run).
"""

from __future__ import annotations

from .comparison import Comparison, by_name, compare, comparison_text
from .projection import DeviceTotal, Projection, effective_hardware, evaluate, offchip_only, project
from .scenarios import STEP_KINDS, ScenarioResult, Variant, run_scenario, scenario_text
from .solvers import (
    crossover_table,
    matmul_crossover,
    shard_crossover,
    shard_defaults,
    square_matmul_crossover,
    tile_for_intensity,
    tiled_intensity,
)
from .steps import apply as apply  # the app's what-if steps are parsed as scenario steps are
from .transforms import (
    ALGORITHMS,
    DIMS,
    HBM,
    SPLIT,
    TIME_NOTE,
    WHAT,
    change_precision,
    collective_bytes,
    comm_fraction,
    fuse,
    scale_batch,
    shard,
    split_bytes,
)

__all__ = [
    "ALGORITHMS", "DIMS", "HBM", "SPLIT", "STEP_KINDS", "TIME_NOTE", "WHAT", "Comparison", "DeviceTotal",
    "Projection", "ScenarioResult", "Variant", "by_name", "change_precision", "collective_bytes", "comm_fraction",
    "compare", "comparison_text", "crossover_table", "effective_hardware", "evaluate", "fuse", "matmul_crossover",
    "offchip_only", "project", "run_scenario", "scale_batch", "scenario_text", "shard", "shard_crossover",
    "shard_defaults", "split_bytes", "square_matmul_crossover", "tile_for_intensity", "tiled_intensity",
]
