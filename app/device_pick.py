"""The sidebar's device from the file: an upload's device (what the file names, or what its architecture, compute
capability or gfx id says) is selected for it while the devices are still the app's own choice, with a notice
saying which and why and a way back to the default; devices chosen by hand are kept, and the app asks instead
(use it instead, or add it). A device the catalog lacks gets the closest of the same silicon, with the note, and a
button to add it on the Hardware page (the form filled in with what the file says)."""

from __future__ import annotations

import streamlit as st

import roofcore
from roofcore.ingest.vendor import article

from . import state
from .devices import Match, default_stands_in, explain, form_prefill, match, other_vendor, reason, vendor
from .markdown import escape_message
from .workload import DEFAULT_DEVICE

HARDWARE_PAGE = "pages/hardware.py"
#: the query parameter of the "Add … on the Hardware page" link (a link: a page switch made by the server, with
#: st.switch_page, would start the page with no widget state, and the uploader would come back empty)
ADD_PARAM = "add_device"


def chosen_now() -> list[str]:
    """The sidebar's devices (before its widget runs: what it will show)."""
    return state.HW_IDS.get([DEFAULT_DEVICE])


def untouched(now: list[str]) -> bool:
    """Whether the devices are still the app's choice: the default, or the device it took from a file (or none)."""
    return not state.HW_IDS.present() or now in ([], state.AUTO_IDS.get([DEFAULT_DEVICE]))


def use_device(hw_id: str, replace: bool = False) -> None:
    """Analyse on ``hw_id``: it replaces the untouched default device (or every chosen one: ``replace``), else
    it joins the chosen ones first."""
    now = chosen_now()
    state.HW_IDS.set([hw_id] if replace or untouched(now) else [hw_id, *(h for h in now if h != hw_id)])


def add_devices(hw_ids: list[str]) -> None:
    now = chosen_now()
    state.HW_IDS.set([*now, *(h for h in hw_ids if h not in now)])


def pick(catalog: roofcore.Catalog, entry: state.WorkloadEntry) -> None:
    """Once per new upload, before the device widget: select the file's device when the devices are untouched."""
    if state.DEVICE_PENDING.get() != entry["key"]:
        return
    state.DEVICE_PENDING.pop()
    m = match(catalog, entry["workload"])
    now = chosen_now()
    if m is None or m.top not in catalog:  # the file says nothing: a device taken from another file goes
        forget_pick()
        return
    if not untouched(now) or now == [m.top]:
        return
    state.AUTO_PICK.set({"key": entry["key"], "id": m.top})
    state.HW_IDS.set([m.top])
    state.AUTO_IDS.set([m.top])


def forget_pick() -> None:
    """The files a device was taken from are gone: the default comes back, unless devices were chosen by hand."""
    if state.AUTO_PICK.get() and untouched(chosen_now()):
        state.HW_IDS.set([DEFAULT_DEVICE])
        state.AUTO_IDS.set([DEFAULT_DEVICE])
    state.AUTO_PICK.set(None)


def _use_default() -> None:
    pick_ = state.AUTO_PICK.get() or {}
    state.AUTO_PICK.set({**pick_, "undone": True})
    state.HW_IDS.set([DEFAULT_DEVICE])
    state.AUTO_IDS.set([DEFAULT_DEVICE])


def _picked(catalog: roofcore.Catalog, entry: state.WorkloadEntry, m: Match) -> bool:
    """The notice of a device taken from the file (True when it is shown)."""
    p = state.AUTO_PICK.get()
    if not p or p["key"] != entry["key"] or p.get("undone") or chosen_now() != [p["id"]] or p["id"] not in catalog:
        return False
    hw = catalog.get(p["id"])
    why, more = explain(m)
    st.info(f"**Device from the file:** {escape_message(hw.name)} (`{hw.id}`)"
            + (f"  \n{escape_message(why)}." if why else "."), icon=":material/memory:")
    if more:
        with st.expander("Why this device", icon=":material/help_outline:"):
            for text in more:
                st.caption(escape_message(text) + ".")
    st.button("Use the default instead", on_click=_use_default, key="device_undo", icon=":material/undo:",
              help=f"Analyse on {DEFAULT_DEVICE}, the app's default device, as before this upload.")
    return True


def _offer(catalog: roofcore.Catalog, m: Match) -> None:
    """A device chosen by hand (or the default put back): the file's device is offered, never imposed."""
    now = chosen_now()
    top = m.top
    why = reason(m)
    if top and top in catalog and top not in now:
        name = escape_message(catalog.get(top).name)
        st.caption((f"Profiled on **{escape_message(m.device)}**; closest catalog device: **{name}** (`{top}`)."
                    if m.device else f"The file points to **{name}** (`{top}`).")
                   + (f" {escape_message(why)}." if why and not why.startswith("The file names") else ""))
        if untouched(now):  # nothing chosen by hand: take its place
            st.button(f"Use {top}", on_click=use_device, args=(top,), icon=":material/memory:",
                      key="use_suggested", help=f"Analyse on {top} instead of {', '.join(now) or 'nothing'}.")
        else:  # one under the other: side by side, the sidebar cuts "Use mi250x-gcd instead" short
            st.button(f"Use {top} instead", on_click=use_device, args=(top, True), icon=":material/memory:",
                      key="use_suggested", help=f"Replace {', '.join(now)} with {top}.")
            st.button(f"Add {top}", on_click=add_devices, args=([top],), icon=":material/add:",
                      key="add_suggested", help=f"Analyse on {top} too, beside {', '.join(now)}.")
    elif top and top in now and not m.exact:  # chosen, not named by the file: say where it came from
        st.caption(f"Device from the file: **{escape_message(catalog.get(top).name)}** (`{top}`)"
                   + (f". {escape_message(why)}." if why else "."))


def device_notice(catalog: roofcore.Catalog, entry: state.WorkloadEntry) -> None:
    """What the sidebar says about the upload's device: taken from the file, offered, or missing from the catalog."""
    w = entry["workload"]
    m = match(catalog, w)
    if entry["key"] == "bundled":
        return
    doubt = _doubt(catalog, w, m)
    if doubt is not None and doubt[0] == "vendor":
        st.warning(escape_message(doubt[1]), icon=":material/warning:")
    elif doubt is not None:
        st.caption(escape_message(doubt[1]))
    if m is None:
        return
    if not _picked(catalog, entry, m):
        _offer(catalog, m)
    if not m.missing:
        return
    if st.query_params.get(ADD_PARAM) == "1":  # the link below was followed: the page's form starts from the file
        del st.query_params[ADD_PARAM]
        state.HW_PREFILL.set(form_prefill(catalog, w, m))
    if not m.ids:
        st.caption(f"Profiled on **{escape_message(m.device)}**, which is not in the catalog"
                   + (f" ({escape_message(reason(m))})." if m.note else "."))
    st.page_link(HARDWARE_PAGE, label="Add it on the Hardware page", icon=":material/add_circle:",
                 query_params={ADD_PARAM: "1"},
                 help=f"Opens the Hardware page's form for {m.device}, with what the file says about it; its peaks "
                      "and bandwidths come from its datasheet.")


def _doubt(catalog: roofcore.Catalog, w: roofcore.Workload, m: Match | None) -> tuple[str, str] | None:
    """Whether the chosen devices may not be the profile's: ``("vendor", line)`` where none is of the vendor the file
    says, ``("default", line)`` where the untouched default stands in for a file that names no GPU; else None."""
    now = chosen_now()
    if line := other_vendor(catalog, w, m, now):
        return "vendor", line
    if now == [DEFAULT_DEVICE] and untouched(now) and (line := default_stands_in(catalog, w, m, DEFAULT_DEVICE)):
        return "default", line
    return None


def heading_note(catalog: roofcore.Catalog, entry: state.WorkloadEntry, hw_id: str) -> str | None:
    """A line under a device's heading (the Overview's, the Recommendations'), where the sidebar warns of it
    (:func:`_doubt`). The sidebar is folded away on a narrow screen; the headline numbers under the heading must not
    read as the profile's own device's."""
    if entry["key"] == "bundled" or hw_id not in catalog:
        return None
    w = entry["workload"]
    m = match(catalog, w)
    doubt = _doubt(catalog, w, m)
    if doubt is None:
        return None
    if doubt[0] == "vendor":
        said = vendor(catalog, w, m)
        return (f"Not the GPU this profile ran on: it ran on {article(said)} {said} GPU (see the sidebar)."
                if said else None)
    return "The app's default device: the file names no GPU (see the sidebar)." if hw_id == DEFAULT_DEVICE else None


__all__ = ["add_devices", "chosen_now", "device_notice", "forget_pick", "heading_note", "pick", "untouched",
           "use_device"]
