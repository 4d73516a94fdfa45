"""Rooflines above the kernel in the app: the Roofline page's level selector and charts, the Kernels page's tree
table, the Recommendations' "where". The engine is roofcore.hierarchy; everything here is computed once per
analysis and choice for every session (app.memo.shared), so switching back to a level costs a look-up."""

from __future__ import annotations

import streamlit as st

from roofcore import Analysis, analyze
from roofcore import hierarchy as hy
from roofcore.charts import levels as level_charts
from roofcore.hierarchy import views as hv

from . import state, tables
from .memo import shared

#: the time windows offered
WINDOWS = {"1 ms": 1e-3, "10 ms": 1e-2, "100 ms": 0.1, "1 s": 1.0}
_HELP = {"kernel": "every kernel launch", "op": "the op that launched it (aten::addmm)",
         "module": "its nn.Module path", "class": "its nn.Module path without instance numbers (every layer alike)", "step": "its profiler step, in time order",
         "nvtx": "its annotation path: NVTX (Nsight Systems) or ROCTx (rocprofv3) ranges",
         "window": "time windows of its start"}
#: a level's name on screen where its CLI name (--by) would puzzle: AMD's ranges are ROCTx, not NVTX
_LABEL = {"nvtx": "ranges"}


def label(level: str) -> str:
    return _LABEL.get(level, level)


def per_launch(a: Analysis) -> Analysis:
    """The analysis of every launch: the hierarchy needs each launch's ancestry, which combining launches (the
    sidebar's default) sums away. Computed once per analysis."""
    if not state.combine():
        return a
    w = state.workload()["workload"]
    return shared("levels.analysis", None, lambda: analyze(w, a.hardware, achievable=a.achievable))


def levels(a: Analysis) -> list[str]:
    """The levels the sidebar's workload has data for (``kernel`` first)."""
    return shared("levels.available", None, lambda: hy.levels_of(state.workload()["workload"]))


def _max_depth(ra: Analysis, col: str) -> int:
    f = ra.workload.frame
    return shared("levels.depth", col, lambda: int(f[col].dropna().map(lambda p: p.count(hy.SEP) + 1).max())
                  if col in f.columns and f[col].notna().any() else 1)


def choose(a: Analysis) -> tuple[str, float | None]:
    """The level (``--by``) and window the user picks; ``("kernel", None)`` where the workload has no hierarchy."""
    options = levels(a)
    if options == ["kernel"]:
        return "kernel", None
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    level = c1.segmented_control("Level", options, default="kernel", key="rl_level", format_func=label,
                                 help="One point per " + "; ".join(f"{label(k)}: {_HELP[k]}" for k in options) + ".") \
        or "kernel"
    if level in ("module", "class", "nvtx"):
        top = _max_depth(per_launch(a), hy.COLUMNS[level])
        depth = c2.select_slider("Depth", list(range(1, top + 1)), value=min(2, top), key="rl_depth",
                                 help="Paths cut to this many names: the layers, their blocks, ...") if top > 1 else 1
        return f"{level}:{depth}", None
    if level == "window":
        pick = c2.segmented_control("Window", list(WINDOWS), default="10 ms", key="rl_window") or "10 ms"
        return "window", WINDOWS[pick]
    return level, None


def draw(a: Analysis, by: str, window: float | None) -> None:
    """The groups of level ``by`` on the first device's roofline; steps and windows also as a trajectory and as
    rates over time; then the groups' table."""
    ra = per_launch(a)
    hw = ra.hardware[0]
    key = (by, window, hw.id)
    fig = shared("levels.figure", key, lambda: level_charts.level_roofline(ra, by, hw_id=hw.id, window=window))
    spec = shared("levels.spec", key, lambda: fig.spec(arrow=True))
    st.vega_lite_chart(spec=dict(spec), theme=None, width="content", key="level_chart")
    st.caption(fig.caption + (f" On {hw.name}; the sidebar's other devices are on the kernel level."
                              if len(ra.hardware) > 1 else ""))
    timed = by in ("step", "window")
    if timed:
        steps = "window" if window else "step"
        # specs made once per level (st.altair_chart would convert and validate the charts on every run; the
        # chart tests validate them)
        traj = shared("levels.trajectory", key, lambda: level_charts.trajectory_chart(
            ra, hw_id=hw.id, by=steps, window=window).to_dict(validate=False))
        st.vega_lite_chart(spec=dict(traj), theme=None, width="content", key="level_trajectory")
        over = shared("levels.over_time", key, lambda: level_charts.over_time_chart(
            ra, hw_id=hw.id, by=steps, window=window).to_dict(validate=False))
        st.vega_lite_chart(spec=dict(over), theme=None, width="content", key="level_over_time")
    table = shared("levels.table", key, lambda: _table(ra, by, window, hw.id))
    st.dataframe(table, hide_index=True, width="stretch", placeholder="–", key="level_table",
                 column_config=tables.group_columns(Path=st.column_config.TextColumn("Path", width="medium")))


def _table(ra: Analysis, by: str, window: float | None, hw_id: str):
    rows = hy.group(ra, by, window=window, hw_id=hw_id)
    level = rows["level"].iloc[0] if len(rows) else by
    if level in ("step", "window"):
        rows = hy.flag_steps(rows, ra.workload.frame, level, window)
    return hv.group_table(rows)


def tree(a: Analysis) -> None:
    """The Kernels page's tree: modules (or NVTX ranges) in reading order with their totals; open one to see its
    ops and kernels."""
    options = [lv for lv in levels(a) if lv in ("module", "nvtx")]
    if not options:
        return
    ra = per_launch(a)
    hw = ra.hardware[0]
    st.subheader("By " + " and ".join(map(label, options)))
    level = options[0] if len(options) == 1 else st.segmented_control("Tree", options, default=options[0],
                                                                     key="k_tree_level", format_func=label) or options[0]
    rows = shared("levels.tree", (level, hw.id), lambda: hy.group(ra, level, hw_id=hw.id))
    table = shared("levels.tree_table", (level, hw.id), lambda: hv.group_table(rows, tree=True))
    st.dataframe(table.drop(columns="Path"), hide_index=True, width="stretch", placeholder="–", key="k_tree",
                 height=min(560, 38 + 35 * len(table)), column_config=tables.group_columns())
    paths = [p for p in table["Path"] if p != hy.OUTSIDE] + [hy.OUTSIDE]
    node = st.selectbox("Open", paths, key="k_tree_open", format_func=lambda p: p.replace(hy.SEP, " › "),
                        help="Its ops and kernels, over every launch below it.")
    if node:
        ops, kernels = shared("levels.node", (level, node, hw.id), lambda: hv.node_contents(ra, node, level, hw.id))
        left, right = st.columns(2)
        left.dataframe(ops, hide_index=True, width="stretch", placeholder="–", key="k_tree_ops",
                       column_config=tables.group_columns())
        right.dataframe(kernels, hide_index=True, width="stretch", placeholder="–", key="k_tree_kernels",
                        column_config=tables.group_columns())


def where(a: Analysis, kernels: tuple[str, ...]) -> str:
    """"Where: in OAIAttention, one per TransformerBlock (36): 80% of their time; op aten::addmm." ("" without)."""
    if not {"module", "op"} & set(state.workload()["workload"].frame.columns):
        return ""
    ra = per_launch(a)
    return shared("levels.where", tuple(kernels), lambda: hv.where_text(ra.workload, kernels))


__all__ = ["choose", "draw", "levels", "per_launch", "tree", "where"]
