"""The Roofline app: page config, the login gate, the shared sidebar, and navigation over pages/.

Run with ``streamlit run streamlit_app.py``. The sidebar's choices become one analysis per run, kept in the
session for the pages (app/state.py names every key): the workload (surviving page changes), the analysis (that
workload on the selected devices, with a token naming it) and the catalog (built-in plus this session's devices).
The pages are listed in :func:`_pages`; what they share is the ``app`` package beside this file.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import roofcore
from app import login, messages, reload, runs, state
from app.markdown import escape_markdown, escape_message
from app.sidebar import CHIP_CSS, defaults, header, sidebar
from app.trace import mark
from app.uploads import share_upload_bytes
from app.workload import analysis_for, base_catalog, parse_uploads
from roofcore.views import effective_catalog, note_and_script, skipped_frame

# a local icon: a :material/...: page icon is fetched from Google's font server, which an offline host cannot reach
st.set_page_config(page_title="Roofline", page_icon=str(Path(__file__).parent / "assets" / "icon.png"), layout="wide")
share_upload_bytes()  # an upload's bytes are not copied on every run (see app.uploads)


def _pages() -> list:
    return [
        st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
        st.Page("pages/roofline.py", title="Roofline", icon=":material/show_chart:"),
        st.Page("pages/kernels.py", title="Kernels", icon=":material/table_rows:"),
        st.Page("pages/recommendations.py", title="Recommendations", icon=":material/lightbulb:"),
        st.Page("pages/planner.py", title="Planner", icon=":material/tune:"),
        st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("pages/history.py", title="History", icon=":material/history:"),
        st.Page("pages/hardware.py", title="Hardware", icon=":material/memory:"),
        st.Page("pages/report.py", title="Report", icon=":material/description:"),
    ]


def main() -> None:
    """The login gate, then the app; no error reaches the user as a traceback (see app.messages.guard)."""
    mark("run start")
    pages = _pages()
    runs.remember_link()  # a share link's ?run=<id>, before the first page switch drops it
    reload.remember()  # ?upload=<name> on a session's first run: a reload ended the session that held it
    if not state.ENTERED.present():
        # Streamlit 1.67: the first run of a session opened at the root URL gives the sidebar's widgets other ids
        # than every later run (the entry script runs as the page itself), so a first upload, toggle or sign-in
        # click would be dropped. One page switch before any widget exists makes every run alike.
        state.ENTERED.set(True)
        st.switch_page(st.navigation(pages))
    login.login_gate(pages)
    with messages.guard():  # also a broken built-in catalog, and a page's error that the page did not catch
        _main(pages)


def _import_notes(entry: state.WorkloadEntry) -> None:
    """Why the last upload could not be read, and the rows and warnings of the workload's import."""
    errors = state.LOAD_ERRORS.read()
    for msg in errors:
        messages.message("error", msg)
    if errors:
        st.info(f"Showing **{escape_message(entry['label'])}** instead: fix the file and upload it again.",
                icon=":material/info:")
    w = entry["workload"]
    if w.skipped or w.warnings:
        parts = ([f"{len(w.skipped):,} input row(s) skipped"] if w.skipped else []) + (
            [f"{len(w.warnings):,} warning(s)"] if w.warnings else [])
        with st.expander(f"Import notes: {' and '.join(parts)}; the rest is analysed", icon=":material/warning:"):
            for text in w.warnings:
                prose, script = note_and_script(text)  # commands to run: a block to copy, line by line
                st.markdown(f"- {escape_markdown(prose)}")
                if script:  # in a popover, drawn when opened: see pages/roofline.py
                    with st.popover("Commands to run", icon=":material/terminal:"):
                        st.code(script, language="bash")
            if w.skipped:
                st.dataframe(skipped_frame(w), hide_index=True, width="stretch", placeholder="–")


def _main(pages: list) -> None:
    defaults()
    st.html(CHIP_CSS)
    state.BUILTIN.set(base_catalog())  # a broken catalog file raises: nothing else can work (see guard)
    runs.open_pending(parse_uploads, pages)  # a share link's run: its workload, devices, options and page
    nav = st.navigation(pages)  # before the sidebar: its links to pages (st.page_link) need the pages registered
    chosen, combine, achievable = sidebar(effective_catalog(state.BUILTIN.read(), state.CUSTOM.read().values()))
    catalog = state.catalog()  # with the measured devices the upload carries (see app.sidebar)
    mark("sidebar done")

    entry = state.workload()
    reload.keep(entry)  # the address names the upload on screen, so that a reload can say what it cleared
    reload.notice(entry)
    header(entry["key"] == "bundled")
    _import_notes(entry)

    state.ANALYSIS.set(None)
    state.TOKEN.set(None)
    if chosen:
        try:
            token, analysis = analysis_for(entry["workload"], entry["key"], [catalog.get(h) for h in chosen],
                                           combine, achievable)
            state.TOKEN.set(token)
            state.ANALYSIS.set(analysis)
        except roofcore.RoofcoreError as e:
            messages.message("error", e)

    mark("analysis done")
    if state.START_PAGE.present():  # see app.page.start, at the top of each page
        st.switch_page(state.START_PAGE.pop())
    state.CURRENT_PAGE.set(nav.title)
    state.CURRENT_PAGE_URL.set(nav.url_path)  # what a saved run reopens on
    nav.run()
    mark("run end")


main()
