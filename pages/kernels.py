"""Kernels: the analysed table (sortable, filterable, downloadable) and one kernel in detail."""

import streamlit as st

from app import combined, levels, page, pairing, state, tables
from app.markdown import escape_message
from app.memo import remember
from app.messages import message
from roofcore import FLAG_CODES, RoofcoreError, views
from roofcore.output import analysis_csv

page.start("pages/kernels.py", "Kernels")
a = page.analysis()
pairing.counter_pairs()  # a timeline read with counters: their share of the time, and pairs made by hand

ids = [h.id for h in a.hardware]
key = state.token()
try:
    table = remember("kernels.table", key, lambda: views.kernel_table(a, ids), keep=1)
except RoofcoreError as e:
    message("error", e)
    st.stop()

f1, f2, f3, f4 = st.columns([2, 2, 2, 2])
bounds = f1.multiselect("Bound", sorted(table["Bound"].unique()), key="k_bound")
masks = table["_flags"].to_numpy()
present = [code for bit, code in FLAG_CODES.items() if ((masks & int(bit)) != 0).any()]
flags = f2.multiselect("Flag", present, key="k_flag")
groups = f3.multiselect("Group", sorted(g for g in table["Group"].unique() if g), key="k_group",
                        disabled=not table["Group"].astype(bool).any())
text = f4.text_input("Name contains", key="k_text", placeholder="e.g. gemm")

if hidden := combined.note(a):  # an above-roof launch inside a combined row: its flag is not in this table
    message("warning", hidden)
shown = views.filter_kernels(table, bounds=bounds, flags=flags, groups=groups, text=text)
note = views.table_note(a, shown, tables.TABLE_ROW_LIMIT)  # kernels, as the sidebar counts them
if len(shown) > tables.TABLE_ROW_LIMIT:
    shown = shown.nlargest(tables.TABLE_ROW_LIMIT, "_key")
st.dataframe(shown.drop(columns=["_row", "_flags", "_key"]), hide_index=True, width="stretch",
             column_config=tables.kernel_columns(), height=tables.height(len(shown), 560), placeholder="–")
c1, c2 = st.columns([4, 1], vertical_alignment="center")
c1.caption(note + " Click a column header to sort.")
c2.download_button("Download CSV", lambda: analysis_csv(a), file_name="roofline-kernels.csv", mime="text/csv",
                   icon=":material/download:", on_click="ignore", help="Every kernel on every selected device.")

levels.tree(a)  # modules / NVTX ranges in reading order, one opened to its ops and kernels (app.levels)

st.subheader("One kernel in detail")
choices = remember("kernels.choices", key, lambda: views.kernel_choices(a, ids[0]), keep=1)
row = st.selectbox("Kernel", list(choices), format_func=choices.__getitem__, key="k_detail",
                   help=f"Longest-running first (the top {views.CHOICE_LIMIT:,}).")
if row is not None:
    try:
        detail = views.kernel_detail(a, row)
    except RoofcoreError as e:
        message("error", e)
        st.stop()
    for d in detail.values():
        with st.container(border=True):
            st.markdown(f"**{escape_message(views.device_label(d['hardware']))}** — bound by `{d['bound']}`")
            for i in range(0, len(d["metrics"]), 3):
                for col, m in zip(st.columns(3), d["metrics"][i:i + 3], strict=False):
                    col.metric(m.label, m.value, help=m.help)
            st.dataframe(d["resources"], hide_index=True, width="stretch", placeholder="–")
            st.caption(f"Roofline time = the largest resource time (perfect overlap). Input: {d['source']}.")
            for fl in d["flags"]:
                message("warning", f"{fl['code']}: {fl['message']}")
