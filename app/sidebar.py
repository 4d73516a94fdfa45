"""The sidebar every page shares: the workload (uploads, the format, the device it was profiled on, combining
repeated launches), the devices and their roofs, and "Save run"; and the line at the top of every page."""

from __future__ import annotations

import streamlit as st

import roofcore
from roofcore.views import count_text, device_label, device_order

from . import pairing, runs, state, upload_choice
from .device_pick import add_devices, chosen_now, device_notice, forget_pick, pick
from .keys import content_key
from .markdown import escape_message
from .trace import mark
from .workload import BUNDLED_NAME, DEFAULT_DEVICE, UPLOAD_TYPES, bundled_workload, parse_uploads

#: what the app is, in one line (the top of every page)
TAGLINE = ("how close each GPU kernel of a profile runs to the device's compute and memory limits, what bounds it, "
           "and what to try next")
#: the exports the uploader reads, as a user names them
FORMATS_TEXT = ("Nsight Compute CSV (details or raw page), Nsight Systems stats (CSV or console text) or its "
                ".sqlite, nvprof, rocprof / rocprofv3 (CSV, JSON or its results.db) / rocprof-compute (pmc_perf.csv "
                "with its sysinfo.csv), PyTorch profiler traces (.json, .json.gz), JAX cost_analysis JSON, xprof "
                "roofline CSV, or your own kernel inventory (CSV/YAML)")
#: the sidebar's device chips show whole names (Streamlit cuts a chip at a fixed width: "NVIDIA · H100 S…")
CHIP_CSS = """<style>
[data-testid="stSidebar"] [data-testid="stMultiSelect"] [data-tag] {height: auto; max-width: 100%;}
[data-testid="stSidebar"] [data-testid="stMultiSelect"] [data-tag] > span {white-space: normal; overflow: visible;
  text-overflow: clip; line-height: 1.3; padding: 2px 0;}
</style>"""


def _bundled() -> state.WorkloadEntry:
    return {"workload": bundled_workload(), "label": BUNDLED_NAME, "key": "bundled"}


def defaults() -> None:
    """A new session's state: no devices of its own, the bundled example, nothing uploaded."""
    state.CUSTOM.setdefault({})  # id -> (Hardware, overrides); this session only
    state.UPLOADER_GEN.setdefault(0)
    state.LOADED_KEY.setdefault(None)
    state.LOAD_ERRORS.setdefault([])
    if not state.WORKLOAD.present():
        state.WORKLOAD.set(_bundled())


def _forget_uploads() -> None:
    """The example again, nothing read, nothing asked (the uploader keeps its key: the user emptied it, and a new
    key would give the browser's next pick to a widget the app no longer draws, so that pick would be lost)."""
    state.WORKLOAD.set(_bundled())
    state.LOAD_ERRORS.set([])
    state.LOADED_KEY.set(None)
    upload_choice.reset()
    forget_pick()


def _clear_uploads() -> None:
    """The "Clear uploads" button (a callback, before the run draws the uploader): an empty uploader, new key."""
    state.UPLOADER_GEN.set(state.UPLOADER_GEN.read() + 1)
    _forget_uploads()


def _load(files, fmt: str | None) -> None:
    """Read the uploads (cached), with the kernel pairs made for them by hand (app.pairing); keep the previous
    workload when none of them can be read.

    Idempotent, whenever a run stops: a click on another page starts the next run while this one still reads (and
    stops this one at its next touch of the session state), so the mark that these files are read
    (``state.LOADED_KEY``) is written last, after the workload and the errors. A run stopped before it leaves the
    files unread, and the next run, on whatever page, reads them again (from the cache once the parse is done)."""
    before = state.workload()
    pairs = pairing.pairs_for(before)
    key = (*(f.file_id for f in files), fmt or "", pairs)
    if key == state.LOADED_KEY.read():
        return
    mark("load start")
    files_data = tuple((f.getvalue(), f.name) for f in files)
    base = content_key(files_data, fmt)
    mark("content key")
    if base != before.get("base_key"):  # other files: the pairs were made for the previous ones
        pairs = ()
    digest = pairing.keyed(base, pairs)
    w, errors = parse_uploads(digest, fmt, files_data, pairs)
    mark("parsed")
    if w is not None:
        if base != before.get("base_key"):  # its device is picked once the catalog is known (app.device_pick)
            state.DEVICE_PENDING.set(digest)
        state.WORKLOAD.set({"workload": w, "label": " + ".join(f.name for f in files if f.name in w.sources)
                            or w.name, "key": digest, "base_key": base, "files": files_data, "format": fmt})
    state.LOAD_ERRORS.set(list(errors))
    state.LOADED_KEY.set((*key[:-1], pairs))  # last: see above


def counted(entry: state.WorkloadEntry) -> str:
    """The workload's count ("18 kernels (98 launches)"), once per upload: the sidebar and the Overview say it."""
    if "count_text" not in entry:
        entry["count_text"] = count_text(entry["workload"])
    return entry["count_text"]


def _uploads(catalog: roofcore.Catalog) -> tuple[list, list, str | None]:
    """The uploader and the format override; the uploads read (or cleared), files from another GPU asked about
    (app.upload_choice). Returns the uploader's files, those read into the workload, and the format."""
    files = st.file_uploader(
        "Profiles and kernel inventories", type=UPLOAD_TYPES,
        accept_multiple_files=True, key=f"uploads_{state.UPLOADER_GEN.read()}",
        help=FORMATS_TEXT + ". Several files are read together: the files of one run (pmc_perf.csv with "
             "sysinfo.csv and roofline.csv, a kernel trace with its counters), or an nsys time summary with an "
             "inventory, joined by kernel name. A zip or tar archive reads as the folder it holds; gzip, bzip2, xz and "
             "Zstandard files are read compressed.")
    formats = ["detect", *sorted(roofcore.FORMATS)]
    fmt = st.selectbox("Format", formats, key="format_override", disabled=not files,
                       format_func=lambda f: "Detect from content" if f == "detect" else f,
                       help="Detected from each file's content; pick one to force it for every upload.")
    fmt = None if fmt == "detect" else fmt
    used = upload_choice.select(catalog, files, fmt) if files else []
    if used:
        _load(used, fmt)
    elif state.LOADED_KEY.read() is not None or "base_key" in state.workload():  # the user removed every file
        _forget_uploads()
    if files:
        upload_choice.ask(files, fmt)
    return files, used, fmt


def _workload_section(catalog: roofcore.Catalog) -> tuple[list, str | None, bool]:
    """The sidebar's Workload part; the session's catalog gains the devices the upload measured."""
    files, used, fmt = _uploads(catalog)
    entry = state.workload()
    w = entry["workload"]
    for hw in w.measured:  # ceilings measured on the profiled machine (roofline.csv, ERT)
        if hw.id not in catalog:
            catalog = catalog.with_device(hw)
    state.CATALOG.set(catalog)
    st.caption(f"**{escape_message(entry['label'])}** · {counted(entry)} · " + ", ".join(w.formats))
    if entry["key"] == "bundled":
        st.caption(":orange-badge[:material/science: Example] The bundled example: upload a profile above to "
                   "see your own kernels.")
    if gpus := upload_choice.mixed():  # added by the user although from another GPU: every device stays chosen
        state.DEVICE_PENDING.pop()
        st.caption(f"Read as one workload from files profiled on {escape_message(gpus)}.")
    else:
        pick(catalog, entry)
        device_notice(catalog, entry)
    measured = [hw for hw in w.measured if hw.id in catalog]
    missing = [hw.id for hw in measured if hw.id not in chosen_now()]
    if missing:
        st.caption(f"The upload carries measured ceilings of {len(measured)} "
                   f"{'device' if len(measured) == 1 else 'devices'} ({', '.join(f'`{m}`' for m in missing)}).")
        st.button("Add the measured roofs", on_click=add_devices, args=(missing,), icon=":material/speed:",
                  key="use_measured")
    st.button("Clear uploads", on_click=_clear_uploads, disabled=not files, icon=":material/delete:")
    combine = st.toggle("Combine repeated launches", value=True, key=state.COMBINE.name,
                        help="Sum launches of the same kernel (name, precision, unit, group) into one row.")
    return used, fmt, combine


def _hardware_section(catalog: roofcore.Catalog) -> tuple[list[str], bool]:
    """The sidebar's Hardware part: the devices (a removed custom device drops out) and the roofs used."""
    st.subheader("Hardware")
    options = device_order(catalog)
    labels = {h.id: device_label(h) for h in catalog}
    for hw_id in state.SELECT_NEXT.pop([]):  # devices just added on the Hardware page
        state.HW_IDS.set([*chosen_now(), hw_id])
    if state.HW_IDS.present():  # a custom device that was removed drops out of the selection
        state.HW_IDS.set([h for h in dict.fromkeys(state.HW_IDS.read()) if h in options])
    chosen = st.multiselect(
        "Devices", options, default=[DEFAULT_DEVICE] if not state.HW_IDS.present() else None,
        format_func=labels.__getitem__, key=state.HW_IDS.name, placeholder="Type to search devices",
        help="Every page shows the workload on each selected device. Add your own on the Hardware page.")
    achievable = st.toggle("Use achievable roofs", value=False, key=state.ACHIEVABLE.name,
                           help="Use the measured (achievable) ceilings and bandwidths where the catalog has "
                                "them, instead of the theoretical peaks, for every number in the app.")
    return chosen, achievable


def sidebar(catalog: roofcore.Catalog) -> tuple[list[str], bool, bool]:
    """The sidebar; returns the chosen device ids, whether launches are combined and whether roofs are achievable."""
    with st.sidebar:
        st.subheader("Workload")
        used, fmt, combine = _workload_section(catalog)
        catalog = state.catalog()  # with the measured devices
        chosen, achievable = _hardware_section(catalog)
        runs.save_control(used, fmt)  # "Save run" (saved runs, share links)
    return chosen, combine, achievable


def header(bundled: bool) -> None:
    """What the app is, in one line; while the bundled example is shown, the call to upload a profile."""
    st.markdown(f"**Roofline** · {TAGLINE}.")
    if bundled:
        with st.container(border=True, key="welcome"):
            st.markdown("#### :material/upload_file: Upload a profile")
            st.markdown("Drop one or more exports into **Profiles and kernel inventories** in the sidebar: "
                        + FORMATS_TEXT + ". Give the files of one run together, or their folder as a zip or tar "
                        "archive; each file's format is detected from its content, compressed or not.")
            st.markdown(":orange-badge[:material/science: Example] Until then every page shows the **bundled "
                        "example**, a transformer block computed from its shapes (no profiler, no measured times).")


__all__ = ["CHIP_CSS", "FORMATS_TEXT", "TAGLINE", "counted", "defaults", "header", "sidebar"]
