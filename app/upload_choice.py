"""Files added to the sidebar's uploader that were profiled on another GPU than the workload's: they are not merged
silently. The app asks whether they join this workload, replace it, or are compared with it on the Compare page.

Every file stays in the uploader whatever the answer; the workload is read from the files in use
(``state.UPLOAD_USE``), the others are listed with a button to read them too.
"""

from __future__ import annotations

import hashlib

import streamlit as st

import roofcore

from . import state
from .device_pick import add_devices, chosen_now
from .devices import describe, differs, match
from .keys import content_key
from .markdown import escape_message
from .workload import parse_uploads

COMPARE_PAGE = "pages/compare.py"
#: the query parameter of the "Compare the two" link: a link, not a button, because a page switch made by the
#: server (st.switch_page) starts the new page with no widget state, so the uploader would come back empty
COMPARE_PARAM = "compare"


def reset() -> None:
    """The uploader was emptied: nothing seen, nothing in use, nothing to ask."""
    for key in (state.UPLOAD_SEEN, state.UPLOAD_USE, state.UPLOAD_ASK, state.UPLOAD_MIXED):
        key.pop()


def ident(f) -> str:
    """A file in the uploader, by what it is: its name, size and a hash of its first and last 64 kB (a file keeps
    its id in a browser session, but not under AppTest, which gives every value new ids)."""
    data = f.getvalue()
    edge = hashlib.sha256(data[:65536] + data[-65536:]).hexdigest()[:16]
    return f"{f.name}:{len(data)}:{edge}"


def _read(files, fmt: str | None) -> tuple[roofcore.Workload | None, str, str]:
    """These files read together on their own (cached per content, as the sidebar's uploads): workload, key, label."""
    data = tuple((f.getvalue(), f.name) for f in files)
    key = content_key(data, fmt)
    w, _errors = parse_uploads(key, fmt, data)
    label = " + ".join(f.name for f in files if w is not None and f.name in w.sources) or (w.name if w else "")
    return w, key, label


def _question(catalog: roofcore.Catalog, files, fmt: str | None) -> dict | None:
    """What to ask about ``files`` (added to an uploaded workload), or None where they can join it: they cannot be
    read alone (a companion file), or nothing says their GPU differs."""
    entry = state.workload()
    if entry["key"] == "bundled" or "run" in entry:
        return None
    w, _key, _label = _read(files, fmt)
    if w is None or not differs(catalog, entry["workload"], w):
        return None
    new = match(catalog, w)
    return {"new": tuple(ident(f) for f in files), "names": [f.name for f in files],
            "new_gpu": describe(catalog, w, new) or "another GPU",
            "old_gpu": describe(catalog, entry["workload"], match(catalog, entry["workload"])) or "another GPU",
            "new_id": new.top if new is not None and new.top in catalog else None}


def select(catalog: roofcore.Catalog, files, fmt: str | None) -> list:
    """The uploader's files the workload is read from now. Files just added join it, unless they come from
    another GPU than the workload's: then they wait for the user's answer (:func:`ask`).

    A run may stop at any touch of the session state (a click starts the next run): what the files are for is
    written first and the files seen last, so a run stopped in between leaves them "added" for the next run, which
    decides the same again (no file is counted twice)."""
    ids = tuple(ident(f) for f in files)
    seen = state.UPLOAD_SEEN.get(())
    use = [i for i in state.UPLOAD_USE.get(()) if i in ids]
    asked = state.UPLOAD_ASK.get()
    waiting = [i for i in (asked["new"] if asked else ()) if i in ids]
    added = [i for i in ids if i not in seen and i not in use and i not in waiting]
    if added and use:  # files added to a workload of this uploader: the same GPU?
        candidates = list(dict.fromkeys([*waiting, *added]))
        asked = _question(catalog, [f for f in files if ident(f) in candidates], fmt)
        if asked is None:
            use, waiting = [*use, *candidates], []
        else:
            waiting = list(asked["new"])
    elif added:
        use = [*use, *added]
    if not use:  # every file in use was removed: read the others
        use = [i for i in ids if i not in waiting] or waiting
        waiting = [] if use == waiting else waiting
    if asked is not None and tuple(waiting) != tuple(asked["new"]):
        names = {ident(f): f.name for f in files}
        asked = {**asked, "new": tuple(waiting), "names": [names[i] for i in waiting]} if waiting else None
    state.UPLOAD_USE.set(tuple(dict.fromkeys(use)))
    state.UPLOAD_ASK.set(asked if waiting else None)
    state.UPLOAD_SEEN.set(ids)  # last: see above
    once: dict[str, object] = {}
    for f in files:  # a file dropped again (while the first was still read, say) is read once, not counted twice
        once.setdefault(ident(f), f)
    return [f for i, f in once.items() if i in use]


def mixed() -> str | None:
    """The GPUs of a workload read from files of two GPUs ("Tesla T4 and AMD Instinct MI210"), while it is."""
    m = state.UPLOAD_MIXED.get()
    return m["gpus"] if m and m["use"] == state.UPLOAD_USE.get(()) else None


def _add(asked: dict) -> None:
    state.UPLOAD_ASK.set(None)
    use = (*state.UPLOAD_USE.get(()), *asked["new"])
    state.UPLOAD_USE.set(use)
    state.UPLOAD_MIXED.set({"use": use, "gpus": f"{asked['old_gpu']} and {asked['new_gpu']}"})
    if asked["new_id"]:
        add_devices([asked["new_id"]])


def _replace(asked: dict) -> None:
    state.UPLOAD_ASK.set(None)
    state.UPLOAD_USE.set(tuple(asked["new"]))


def _compare(asked: dict, new: tuple) -> None:
    """For the Compare page: the workload as it is (before) and the new files (after); the new files stay parked."""
    state.UPLOAD_ASK.set(None)
    entry = state.workload()
    state.COMPARE_RUNS.set(((entry["workload"], entry["key"], entry["label"]), new))
    state.COMPARE_FROM.set("upload")
    now = chosen_now()
    state.COMPARE_HW.set(now[0] if now else asked["new_id"])
    if asked["new_id"]:
        add_devices([asked["new_id"]])


def bold(gpu: str) -> str:
    """A GPU in the question, bold, an "(inferred)" after it not."""
    name, inferred, _ = gpu.partition(" (inferred)")
    return f"**{escape_message(name)}**" + (" (inferred)" if inferred else "")


def ask(files, fmt: str | None) -> None:
    """The question about files from another GPU (while one waits), and the files left out of the workload."""
    asked = state.UPLOAD_ASK.get()
    use = state.UPLOAD_USE.get(())
    if st.query_params.get(COMPARE_PARAM) == "upload":  # the "Compare the two" link was followed
        del st.query_params[COMPARE_PARAM]
        if asked:
            _compare(asked, _read([f for f in files if ident(f) in asked["new"]], fmt))
            asked = None
    if asked:
        names = ", ".join(asked["names"])
        st.warning(f"**{escape_message(names)}** was profiled on {bold(asked['new_gpu'])}, this workload on "
                   f"{bold(asked['old_gpu'])}. Add it to this workload, replace the workload with it, or compare the "
                   "two?", icon=":material/help:")
        readable = _read([f for f in files if ident(f) in asked["new"]], fmt)[0] is not None
        also = f"; {asked['new_id']} joins the devices" if asked["new_id"] else ""
        st.button("Add to this workload", on_click=_add, args=(asked,), key="upload_add", icon=":material/add:",
                  width="stretch", help=f"Read it with the current files as one workload{also}.")
        st.button("Replace", on_click=_replace, args=(asked,), key="upload_replace", icon=":material/swap_horiz:",
                  width="stretch", help="Analyse the new files alone; the others stay in the uploader.")
        st.page_link(COMPARE_PAGE, label="Compare the two", icon=":material/compare_arrows:", width="stretch",
                     query_params={COMPARE_PARAM: "upload"}, disabled=not readable,
                     help=f"Open Compare: the current workload before, the new files after{also}.")
    waiting = asked["new"] if asked else ()
    parked = [f for f in files if ident(f) not in use and ident(f) not in waiting]
    if parked and use:
        st.caption("In the uploader but not analysed: " + escape_message(", ".join(f.name for f in parked)) + ".")
        st.button("Read them with the others", key="upload_all", icon=":material/library_add:",
                  on_click=state.UPLOAD_USE.set, args=(tuple(ident(f) for f in files if ident(f) not in waiting),))
    ids = [ident(f) for f in files]
    if twice := list(dict.fromkeys(f.name for f, i in zip(files, ids, strict=True) if ids.count(i) > 1)):
        st.caption("In the uploader more than once, read once: " + escape_message(", ".join(twice)) + ".")


__all__ = ["ask", "ident", "mixed", "reset", "select"]
