"""What a front end shows of an analysis: tables, counts, labels and notes built from an
:class:`~roofcore.analyze.Analysis`, a :class:`~roofcore.models.Workload` or a device, without Streamlit (the app's
pages are thin on top of these, a notebook can use them as they are, and they are tested without a browser).

Tables meant for a sortable grid keep numbers numeric in one display unit per column (named in
:data:`KERNEL_COLUMNS`); tables meant for reading have their figures formatted with units.

The modules: :mod:`.summary` (counts and headline metrics), :mod:`.kernels` (the kernel table, its filters, the
top kernels and the detail picker), :mod:`.detail` (one kernel on every device), :mod:`.flags` (flags grouped by
code), :mod:`.coverage` (what a roofline cannot place: unknown FLOPs or bytes, and data movement),
:mod:`.devices` (device labels and the Hardware tables), :mod:`.plan` (planning results as tables).
"""

from __future__ import annotations

from ..counting import plural
from ..ingest.pseudo import runtime_line
from .coverage import ChartGaps, chart_gaps, collect_commands, data_movement, note_and_script
from .detail import kernel_detail
from .devices import (
    ceilings_frame,
    device_label,
    device_order,
    effective_catalog,
    hardware_comparison,
    levels_frame,
    links_frame,
    sources_frame,
)
from .flags import FLAG_HELP, FlagGroup, combined_away, flag_groups
from .kernels import (
    CHOICE_LIMIT,
    KERNEL_COLUMNS,
    filter_kernels,
    flag_codes,
    kernel_choices,
    kernel_table,
    skipped_frame,
    subset,
    table_note,
    time_key,
    top_kernels,
)
from .plan import (
    comparison_frame,
    projection_frame,
    projection_totals,
    scenario_frame,
    unmatched_frames,
    variant_totals,
)
from .summary import (
    MICRO_KERNEL_S,
    Metric,
    bound_kind_shares,
    combine_launches,
    count_of,
    count_text,
    coverage_counts,
    kernel_counts,
    micro_kernel_note,
    overview_metrics,
)

__all__ = [
    "CHOICE_LIMIT", "FLAG_HELP", "KERNEL_COLUMNS", "MICRO_KERNEL_S", "ChartGaps", "FlagGroup", "Metric",
    "bound_kind_shares", "ceilings_frame", "chart_gaps", "collect_commands", "combine_launches", "combined_away", "comparison_frame",
    "count_of", "count_text", "coverage_counts", "data_movement", "device_label", "device_order", "effective_catalog", "filter_kernels",
    "flag_codes", "flag_groups", "hardware_comparison", "kernel_choices", "kernel_counts", "kernel_detail",
    "kernel_table", "levels_frame", "links_frame", "micro_kernel_note", "note_and_script", "overview_metrics", "plural",
    "projection_frame", "projection_totals", "runtime_line", "scenario_frame", "skipped_frame", "sources_frame",
    "subset", "table_note", "time_key", "top_kernels", "unmatched_frames", "variant_totals",
]
