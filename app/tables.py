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


#: the formats of the hierarchy's tables (:func:`roofcore.hierarchy.views.group_table`, ``node_contents``): four
#: significant digits as the kernel table has them, shares to three (they showed 3.4434 ms, 40.6267 %)
_GROUP_FORMATS = {"Time (ms)": "%.4g", "Share (%)": "%.3g", "Known (%)": "%.3g", "GFLOP": "%.4g",
                  "Off-chip (MB)": "%.4g", "Achieved (TFLOP/s)": "%.4g", "Of roof (%)": "%.3g",
                  "Headroom (ms)": "%.4g", "Self time (ms)": "%.4g", "Roof time (ms)": "%.4g"}


def group_columns(**extra: object) -> dict:
    """The hierarchy tables' number formats (and ``extra`` column configs, e.g. the Path's width)."""
    config: dict = {col: st.column_config.NumberColumn(col, format=fmt) for col, fmt in _GROUP_FORMATS.items()}
    config["Launches"] = st.column_config.NumberColumn("Launches", format="%d")
    return {**config, **extra}


#: a kernel inventory as the Build tab lists it (``roofcore.whatif.inline_kernels``): FLOPs and bytes are counts,
#: written whole with thousands separators, never in e-notation
_INVENTORY_COLUMNS = {
    "count": st.column_config.NumberColumn("count", format="%d"),
    "flops": st.column_config.NumberColumn("flops", format="localized"),
    "time_s": st.column_config.NumberColumn("time_s", format="%.4g"),
}


def inventory_columns(names: list[str]) -> dict:
    """:data:`_INVENTORY_COLUMNS` with every byte column (``bytes_hbm``, ``weight_bytes``, ...) as a count too."""
    return {**{c: st.column_config.NumberColumn(c, format="localized") for c in names if "bytes" in c},
            **_INVENTORY_COLUMNS}


__all__ = ["TABLE_ROW_LIMIT", "group_columns", "height", "inventory_columns", "kernel_columns",
           "movement_columns"]
