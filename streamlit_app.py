"""The Roofline app: page config, the shared sidebar (workload and hardware), and navigation over pages/.

Run with ``streamlit run streamlit_app.py``. The sidebar's choices become one analysis per run, kept in
``st.session_state`` for the pages: ``workload`` (the current workload, surviving page changes),
``analysis`` (that workload on the selected devices; ``analysis_token`` names it), ``catalog`` (built-in plus this session's devices).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import app_pages
import app_runs
import roofcore
from roofcore import app_support as app

# a local icon: a :material/...: page icon is fetched from Google's font server, which an offline host cannot reach
st.set_page_config(page_title="Roofline", page_icon=str(Path(__file__).parent / "assets" / "icon.png"), layout="wide")

#: session keys (fixed, so pages and tests can rely on them)
WORKLOAD, ANALYSIS, CATALOG, HW_IDS, CUSTOM = "workload", "analysis", "catalog", "hw_ids", "custom_devices"
#: what the app is, in one line (the top of every page)
TAGLINE = ("how close each GPU kernel of a profile runs to the device's compute and memory limits, what bounds it, "
           "and what to try next")
#: the exports the uploader reads, as a user names them
FORMATS_TEXT = ("Nsight Compute CSV (details or raw page), Nsight Systems stats (CSV or console text), nvprof, "
                "rocprof / rocprofv3 / rocprof-compute (pmc_perf.csv with its sysinfo.csv), PyTorch profiler traces "
                "(.json, .json.gz), JAX cost_analysis JSON, xprof roofline CSV, or your own kernel inventory (CSV/YAML)")
#: the sidebar's device chips show whole names (Streamlit cuts a chip at a fixed width: "NVIDIA · H100 S…")
CHIP_CSS = """<style>
[data-testid="stSidebar"] [data-testid="stMultiSelect"] [data-tag] {height: auto; max-width: 100%;}
[data-testid="stSidebar"] [data-testid="stMultiSelect"] [data-tag] > span {white-space: normal; overflow: visible;
  text-overflow: clip; line-height: 1.3; padding: 2px 0;}
</style>"""


@st.cache_resource(show_spinner=False)
def base_catalog() -> roofcore.Catalog:
    """The built-in catalogs (and ROOFCORE_CATALOG_PATH), loaded once per server."""
    return roofcore.load_catalogs()


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)
def parse_uploads(key: str, fmt: str | None, _files: tuple[tuple[bytes, str], ...]
                  ) -> tuple[roofcore.Workload | None, tuple[str, ...]]:
    """The uploaded files read together (companions such as sysinfo.csv give context; a time-only nsys
    profile joins the inventories), a file that cannot be read reported and left out. Cached per content
    (``key``: the SHA-256 of the files' names and bytes, and the format override).

    A resource cache, not a data cache: the workload is never modified, so it is shared rather than pickled
    on every store and load (pickling a 100,000-kernel workload costs as much as parsing it). Only a session
    holding the very same bytes reaches an entry, and then it gets what it would have computed itself: the
    same file uploaded again (another round, another colleague) is not parsed again."""
    errors: list[str] = []
    try:
        w = roofcore.read_many(_files, fmt=fmt, on_error=lambda name, e: errors.append(str(e)))
    except roofcore.RoofcoreError as e:  # nothing readable: the per-file messages say why, else this one does
        return None, tuple(errors) or (str(e),)
    return w, tuple(errors)


@st.cache_data(show_spinner=False)
def bundled_workload() -> roofcore.Workload:
    return roofcore.read(app.BUNDLED_EXAMPLE, name=app.BUNDLED_NAME)


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(CUSTOM, {})  # id -> (Hardware, overrides); this session only
    ss.setdefault("uploader_gen", 0)
    ss.setdefault("loaded_key", None)
    ss.setdefault("load_errors", [])
    if WORKLOAD not in ss:
        ss[WORKLOAD] = {"workload": bundled_workload(), "label": app.BUNDLED_NAME, "key": "bundled"}


def _clear_uploads() -> None:
    ss = st.session_state
    ss["uploader_gen"] += 1  # a new key gives an empty uploader
    ss[WORKLOAD] = {"workload": bundled_workload(), "label": app.BUNDLED_NAME, "key": "bundled"}
    ss["loaded_key"], ss["load_errors"] = None, []


def _load(files, fmt: str | None) -> None:
    """Read the uploads (cached); keep the previous workload when none of them can be read."""
    ss = st.session_state
    key = (*(f.file_id for f in files), fmt or "")
    if key == ss["loaded_key"]:
        return
    ss["loaded_key"] = key
    files_data = tuple((f.getvalue(), f.name) for f in files)
    digest = app.content_key(files_data, fmt)
    w, errors = parse_uploads(digest, fmt, files_data)
    ss["load_errors"] = list(errors)
    if w is not None:
        ss[WORKLOAD] = {"workload": w, "label": " + ".join(f.name for f in files if f.name in w.sources) or w.name,
                        "key": digest}


def _use_device(hw_id: str, replace: bool = False) -> None:
    """Analyse on ``hw_id``: it replaces the untouched default device (or every chosen one: ``replace``), else
    it joins the chosen ones first."""
    ss = st.session_state
    now = ss.get(HW_IDS, [app.DEFAULT_DEVICE])
    ss[HW_IDS] = [hw_id] if replace or now in ([app.DEFAULT_DEVICE], []) else [hw_id, *(h for h in now if h != hw_id)]


def _add_devices(hw_ids: list[str]) -> None:
    ss = st.session_state
    now = ss.get(HW_IDS, [app.DEFAULT_DEVICE])
    ss[HW_IDS] = [*now, *(h for h in hw_ids if h not in now)]


def counted(entry: dict) -> str:
    """The workload's count ("18 kernels (98 launches)"), once per upload: the sidebar and the Overview say it."""
    if "count_text" not in entry:
        entry["count_text"] = app.count_text(entry["workload"])
    return entry["count_text"]


def sidebar(catalog: roofcore.Catalog) -> tuple[list[str], bool, bool]:
    ss = st.session_state
    with st.sidebar:
        st.subheader("Workload")
        files = st.file_uploader(
            "Profiles and kernel inventories", type=["csv", "yaml", "yml", "json", "gz", "txt", "log", "out"],
            accept_multiple_files=True, key=f"uploads_{ss['uploader_gen']}",
            help=FORMATS_TEXT + ". Several files are read together: the files of one run (pmc_perf.csv with "
                 "sysinfo.csv and roofline.csv, a kernel trace with its counters), or an nsys time summary with an "
                 "inventory, joined by kernel name.")
        formats = ["detect", *sorted(roofcore.FORMATS)]
        fmt = st.selectbox("Format", formats, key="format_override", disabled=not files,
                           format_func=lambda f: "Detect from content" if f == "detect" else f,
                           help="Detected from each file's content; pick one to force it for every upload.")
        if files:
            _load(files, None if fmt == "detect" else fmt)
        elif ss["loaded_key"] is not None:  # the user removed every file
            _clear_uploads()
        w = ss[WORKLOAD]["workload"]
        for hw in getattr(w, "measured", ()) or ():  # ceilings measured on the profiled machine (roofline.csv, ERT)
            if hw.id not in catalog:
                catalog = catalog.with_device(hw)
        ss[CATALOG] = catalog
        st.caption(f"**{app.escape_message(ss[WORKLOAD]['label'])}** · {counted(ss[WORKLOAD])} · "
                   + ", ".join(w.formats))
        if ss[WORKLOAD]["key"] == "bundled":
            st.caption(":orange-badge[:material/science: Example] The bundled example: upload a profile above to "
                       "see your own kernels.")
        suggested = catalog.suggest(w.device, w.meta)
        if w.device:
            chosen_now = ss.get(HW_IDS, [app.DEFAULT_DEVICE])
            if suggested and suggested[0] not in chosen_now:
                st.caption(f"Profiled on **{app.escape_message(w.device)}**; closest catalog device: "
                           f"**{app.escape_message(catalog.get(suggested[0]).name)}** (`{suggested[0]}`).")
                if chosen_now in ([app.DEFAULT_DEVICE], []):  # nothing chosen by hand: take its place
                    st.button(f"Use {suggested[0]}", on_click=_use_device, args=(suggested[0],),
                              icon=":material/memory:", key="use_suggested",
                              help=f"Analyse on {suggested[0]} instead of {', '.join(chosen_now) or 'nothing'}.")
                else:  # devices chosen by hand: ask whether it replaces them or joins them
                    # one under the other: side by side, the sidebar cuts "Use mi250x-gcd instead" short
                    st.button(f"Use {suggested[0]} instead", on_click=_use_device, args=(suggested[0], True),
                              icon=":material/memory:", key="use_suggested",
                              help=f"Replace {', '.join(chosen_now)} with {suggested[0]}.")
                    st.button(f"Add {suggested[0]}", on_click=_add_devices, args=([suggested[0]],),
                              icon=":material/add:", key="add_suggested",
                              help=f"Analyse on {suggested[0]} too, beside {', '.join(chosen_now)}.")
            elif not suggested:
                st.caption(f"Profiled on **{app.escape_message(w.device)}**, which is not in the catalog: add it "
                           "on the Hardware page.")
        measured = [hw for hw in getattr(w, "measured", ()) or () if hw.id in catalog]
        missing = [hw.id for hw in measured if hw.id not in ss.get(HW_IDS, [app.DEFAULT_DEVICE])]
        if missing:
            st.caption(f"The upload carries measured ceilings of {len(measured)} "
                       f"{'device' if len(measured) == 1 else 'devices'} ({', '.join(f'`{m}`' for m in missing)}).")
            st.button("Add the measured roofs", on_click=_add_devices, args=(missing,), icon=":material/speed:",
                      key="use_measured")
        st.button("Clear uploads", on_click=_clear_uploads, disabled=not files, icon=":material/delete:")
        combine = st.toggle("Combine repeated launches", value=True, key="combine",
                            help="Sum launches of the same kernel (name, precision, unit, group) into one row.")

        st.subheader("Hardware")
        options = app.device_order(catalog)
        labels = {h.id: app.device_label(h) for h in catalog}
        for hw_id in ss.pop("select_next", []):  # devices just added on the Hardware page
            ss[HW_IDS] = [*ss.get(HW_IDS, [app.DEFAULT_DEVICE]), hw_id]
        if HW_IDS in ss:  # a custom device that was removed drops out of the selection
            ss[HW_IDS] = [h for h in dict.fromkeys(ss[HW_IDS]) if h in options]
        chosen = st.multiselect(
            "Devices", options, default=[app.DEFAULT_DEVICE] if HW_IDS not in ss else None,
            format_func=labels.__getitem__, key=HW_IDS, placeholder="Type to search devices",
            help="Every page shows the workload on each selected device. Add your own on the Hardware page.")
        achievable = st.toggle("Use achievable roofs", value=False, key="achievable",
                               help="Use the measured (achievable) ceilings and bandwidths where the catalog has "
                                    "them, instead of the theoretical peaks, for every number in the app.")
        app_runs.save_control(files, None if fmt == "detect" else fmt)  # "Save run" (saved runs, share links)
    return chosen, combine, achievable


@st.cache_resource(show_spinner=False, max_entries=32, ttl=3600)
def _analysis(token: str, _workload: roofcore.Workload, _hws: tuple[roofcore.Hardware, ...], combine: bool,
              achievable: bool) -> roofcore.Analysis:
    """One analysis per content (``token``), shared by the sessions that ask for the same one (never modified)."""
    return roofcore.analyze(app.combine_launches(_workload) if combine else _workload, list(_hws), achievable=achievable)


def analysis_for(workload: roofcore.Workload, wkey: str, hws: list[roofcore.Hardware], combine: bool,
                 achievable: bool) -> tuple[str, roofcore.Analysis]:
    """The analysis for these choices and a token naming it: the workload's content key, the options and each
    device's content (a custom device by its figures, not its id), so the same choices give the same token in
    every session. Pages key their memos on the token; a rerun or a page change costs nothing."""
    token = app.analysis_token(wkey, hws, combine, achievable)
    return token, _analysis(token, workload, tuple(hws), combine, achievable)


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
    """The login gate, then the app; no error reaches the user as a traceback (see app_pages.guard)."""
    ss = st.session_state
    pages = _pages()
    app_runs.remember_link()  # a share link's ?run=<id>, before the first page switch drops it
    if "entered" not in ss:
        # Streamlit 1.67: the first run of a session opened at the root URL gives the sidebar's widgets other ids
        # than every later run (the entry script runs as the page itself), so a first upload, toggle or sign-in
        # click would be dropped. One page switch before any widget exists makes every run alike.
        ss["entered"] = True
        st.switch_page(st.navigation(pages))
    app_pages.login_gate(pages)
    with app_pages.guard():  # also a broken built-in catalog, and a page's error that the page did not catch
        _main(pages)


def header(bundled: bool) -> None:
    """What the app is, in one line; while the bundled example is shown, the call to upload a profile."""
    st.markdown(f"**Roofline** · {TAGLINE}.")
    if bundled:
        with st.container(border=True, key="welcome"):
            st.markdown("#### :material/upload_file: Upload a profile")
            st.markdown("Drop one or more exports into **Profiles and kernel inventories** in the sidebar: "
                        + FORMATS_TEXT + ". Give the files of one run together; each file's format is detected "
                        "from its content.")
            st.markdown(":orange-badge[:material/science: Example] Until then every page shows the **bundled "
                        "example**, a transformer block computed from its shapes (no profiler, no measured times).")


def _main(pages: list) -> None:
    _defaults()
    ss = st.session_state
    st.html(CHIP_CSS)
    ss["builtin_catalog"] = base_catalog()  # a broken catalog file raises: nothing else can work (see guard)
    app_runs.open_pending(parse_uploads, pages)  # a share link's run: its workload, devices, options and page
    catalog = app.effective_catalog(ss["builtin_catalog"], ss[CUSTOM].values())
    chosen, combine, achievable = sidebar(catalog)
    catalog = ss[CATALOG]  # with the measured devices the upload carries (see sidebar)

    header(ss[WORKLOAD]["key"] == "bundled")
    for msg in ss["load_errors"]:
        app_pages.message("error", msg)
    if ss["load_errors"]:
        st.info(f"Showing **{app.escape_message(ss[WORKLOAD]['label'])}** instead: fix the file and upload it again.",
                icon=":material/info:")
    w = ss[WORKLOAD]["workload"]
    if w.skipped or w.warnings:
        parts = ([f"{len(w.skipped):,} input row(s) skipped"] if w.skipped else []) + (
            [f"{len(w.warnings):,} warning(s)"] if w.warnings else [])
        with st.expander(f"Import notes: {' and '.join(parts)}; the rest is analysed", icon=":material/warning:"):
            for text in w.warnings:
                st.markdown(f"- {app.escape_markdown(text)}")
            if w.skipped:
                st.dataframe(app.skipped_frame(w), hide_index=True, width="stretch")

    ss[ANALYSIS], ss["analysis_token"] = None, None
    if chosen:
        try:
            ss["analysis_token"], ss[ANALYSIS] = analysis_for(w, ss[WORKLOAD]["key"], [catalog.get(h) for h in chosen],
                                                              combine, achievable)
        except roofcore.RoofcoreError as e:
            app_pages.message("error", e)

    nav = st.navigation(pages)
    if "start_page" in ss:  # see the guard at the top of each page
        st.switch_page(ss.pop("start_page"))
    ss["current_page"] = nav.title
    ss["current_page_url"] = nav.url_path  # what a saved run reopens on
    nav.run()


main()
