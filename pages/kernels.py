"""Kernels: the analysed table (sortable, filterable, downloadable) and one kernel in detail."""

import streamlit as st

import app_pages
from roofcore import FLAG_CODES, RoofcoreError
from roofcore import app_support as app
from roofcore.cli import analysis_csv

app_pages.start("pages/kernels.py", "Kernels")
a = app_pages.analysis()

ids = [h.id for h in a.hardware]
memo = st.session_state.setdefault("kernels_memo", {})
key = st.session_state["analysis_token"]
try:
    if key not in memo:
        memo.clear()
        memo[key] = app.kernel_table(a, ids)
    table = memo[key]
except RoofcoreError as e:
    app_pages.message("error", e)
    st.stop()

f1, f2, f3, f4 = st.columns([2, 2, 2, 2])
bounds = f1.multiselect("Bound", sorted(table["Bound"].unique()), key="k_bound")
masks = table["_flags"].to_numpy()
present = [code for bit, code in FLAG_CODES.items() if ((masks & int(bit)) != 0).any()]
flags = f2.multiselect("Flag", present, key="k_flag")
groups = f3.multiselect("Group", sorted(g for g in table["Group"].unique() if g), key="k_group",
                        disabled=not table["Group"].astype(bool).any())
text = f4.text_input("Name contains", key="k_text", placeholder="e.g. gemm")

shown = app.filter_kernels(table, bounds=bounds, flags=flags, groups=groups, text=text)
if len(shown) > app.TABLE_ROW_LIMIT:
    note = f"Showing the {app.TABLE_ROW_LIMIT:,} longest-running of {len(shown):,} matching rows; the CSV has all."
    shown = shown.nlargest(app.TABLE_ROW_LIMIT, "_key")
else:
    note = f"{len(shown):,} of {len(table):,} rows (one per kernel and device)."
config = {col: st.column_config.NumberColumn(col, format=fmt, help=help_)
          for col, (_f, _s, fmt, help_) in app.KERNEL_COLUMNS.items()}
config["Launches"] = st.column_config.NumberColumn("Launches", format="%d")
st.dataframe(shown.drop(columns=["_row", "_flags", "_key"]), hide_index=True, width="stretch", column_config=config,
             height=min(35 * (len(shown) + 1) + 3, 560), placeholder="–")
c1, c2 = st.columns([4, 1], vertical_alignment="center")
c1.caption(note + " Click a column header to sort.")
c2.download_button("Download CSV", lambda: analysis_csv(a), file_name="roofline-kernels.csv", mime="text/csv",
                   icon=":material/download:", on_click="ignore", help="Every kernel on every selected device.")

st.subheader("One kernel in detail")
choices_memo = st.session_state.setdefault("kernel_choices", {})
if key not in choices_memo:
    choices_memo.clear()
    choices_memo[key] = app.kernel_choices(a, ids[0])
choices = choices_memo[key]
row = st.selectbox("Kernel", list(choices), format_func=choices.__getitem__, key="k_detail",
                   help=f"Longest-running first (the top {app.CHOICE_LIMIT:,}).")
if row is not None:
    try:
        detail = app.kernel_detail(a, row)
    except RoofcoreError as e:
        app_pages.message("error", e)
        st.stop()
    for d in detail.values():
        with st.container(border=True):
            st.markdown(f"**{app.escape_message(app.device_label(d['hardware']))}** — bound by `{d['bound']}`")
            for i in range(0, len(d["metrics"]), 3):
                for col, m in zip(st.columns(3), d["metrics"][i:i + 3], strict=False):
                    col.metric(m.label, m.value, help=m.help)
            st.dataframe(d["resources"], hide_index=True, width="stretch", placeholder="–")
            st.caption(f"Roofline time = the largest resource time (perfect overlap). Input: {d['source']}.")
            for fl in d["flags"]:
                app_pages.message("warning", f"{fl['code']}: {fl['message']}")
