"""How the pages' grids show the engine's tables (:mod:`roofcore.views`): how many rows go to the browser, a height
that fits the rows, and the column formats of the kernel and data-movement tables."""

from __future__ import annotations

import streamlit as st

from roofcore.views import KERNEL_COLUMNS

#: most rows a kernels table sends to the browser (the CSV download has all)
TABLE_ROW_LIMIT = 5000


def height(rows: int, most: int) -> int:
    """Pixels for a grid of ``rows`` rows and its header, at most ``most``."""
    return min(35 * (rows + 1) + 3, most)


def kernel_columns() -> dict:
    """The kernel table's number formats and help (from :data:`roofcore.views.KERNEL_COLUMNS`)."""
    config = {col: st.column_config.NumberColumn(col, format=fmt, help=help_)
              for col, (_f, _s, fmt, help_) in KERNEL_COLUMNS.items()}
    config["Launches"] = st.column_config.NumberColumn("Launches", format="%d")
    return config


def movement_columns(achievable: bool) -> dict:
    """The data-movement table's formats (:func:`roofcore.views.data_movement`)."""
    return {
        "Kernel": st.column_config.TextColumn("Kernel", width="medium"),
        "Launches": st.column_config.NumberColumn("Launches", format="%d", width="small"),
        "Bytes (MB)": st.column_config.NumberColumn("Bytes (MB)", format="%.4g"),
        "Time (ms)": st.column_config.NumberColumn("Time (ms)", format="%.4g", help="measured"),
        "Achieved (GB/s)": st.column_config.NumberColumn("Achieved (GB/s)", format="%.4g",
                                                         help="bytes ÷ measured time"),
        "Roof (GB/s)": st.column_config.NumberColumn(
            "Roof (GB/s)", format="%.4g", help="the bandwidth of the level or link that binds it"
            + (" (achievable)" if achievable else "")),
        "Of roof (%)": st.column_config.ProgressColumn("Of roof", format="%.3g%%", min_value=0, max_value=100)}


__all__ = ["TABLE_ROW_LIMIT", "height", "kernel_columns", "movement_columns"]
