"""The app's session state, in one place: every key of ``st.session_state`` that the app reads or writes is named
here once, with the type of its value, and read or written through its :class:`Key` (a misspelt key is then an
``AttributeError`` on import, not a silent ``None``). No other module of the app touches ``st.session_state``
(tests/test_meta.py checks it).

A widget whose value is only ever taken from the widget's return keeps its key at the widget (``key="rl_top"``);
a widget key that is also read or set elsewhere (the sidebar's devices and toggles, Compare's device) is named
here and passed as ``key=state.HW_IDS.name``.
"""

from __future__ import annotations

from typing import Any, Generic, NotRequired, TypedDict, TypeVar

import streamlit as st

from roofcore import Analysis, Catalog, Hardware, Workload

T = TypeVar("T")


class Key(Generic[T]):
    """One session key and the type of its value."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Key({self.name!r})"

    def read(self) -> T:
        """The value, which must be there (a ``KeyError`` otherwise, as a missing key is a bug of the app)."""
        return st.session_state[self.name]

    def get(self, default: Any = None) -> T | Any:
        return st.session_state.get(self.name, default)

    def set(self, value: T) -> None:
        st.session_state[self.name] = value

    def setdefault(self, value: T) -> T:
        return st.session_state.setdefault(self.name, value)

    def pop(self, default: Any = None) -> T | Any:
        return st.session_state.pop(self.name, default)

    def present(self) -> bool:
        return self.name in st.session_state


class WorkloadEntry(TypedDict):
    """The sidebar's workload: what every page analyses, and where it came from."""

    workload: Workload  #: as read (launches apart; the analysis combines them when the sidebar says so)
    label: str  #: what the sidebar calls it
    key: str  #: its content key: "bundled", "sha256:..." (files), "builder:NAME:DIGEST"
    run: NotRequired[str]  #: the saved run it was opened from
    files: NotRequired[tuple[tuple[bytes, str], ...]]  #: the files it was read from (bytes, name): an upload, a run
    format: NotRequired[str | None]  #: the format they were read with
    base_key: NotRequired[str]  #: an upload's content key without the kernel pairs made by hand (app.pairing)
    builder: NotRequired[str]  #: a built workload: the builder's name
    params: NotRequired[dict]  #: and its parameters
    count_text: NotRequired[str]  #: "18 kernels (98 launches)", counted once


# ------------------------------------------------------------------------------------ the workload and analysis
WORKLOAD: Key[WorkloadEntry] = Key("workload")
ANALYSIS: Key[Analysis | None] = Key("analysis")  #: the workload on the chosen devices (None: none chosen, or it failed)
TOKEN: Key[str | None] = Key("analysis_token")  #: names the analysis by its content (memos key on it)
CATALOG: Key[Catalog] = Key("catalog")  #: built-in + this session's devices + devices measured by the upload
BUILTIN: Key[Catalog] = Key("builtin_catalog")  #: the built-in catalogs (and ROOFCORE_CATALOG_PATH)
CUSTOM: Key[dict[str, tuple[Hardware, bool]]] = Key("custom_devices")  #: id -> (device, overrides); this session
HW_IDS: Key[list[str]] = Key("hw_ids")  #: the sidebar's devices (a widget)
COMBINE: Key[bool] = Key("combine")  #: combine repeated launches (a widget)
ACHIEVABLE: Key[bool] = Key("achievable")  #: achievable roofs (a widget)
SELECT_NEXT: Key[list[str]] = Key("select_next")  #: devices to add to the selection on the next run

# ------------------------------------------------------------------------------------------------ the sidebar
UPLOADER_GEN: Key[int] = Key("uploader_gen")  #: a new number gives an empty uploader
LOADED_KEY: Key[tuple | None] = Key("loaded_key")  #: the uploads last read (their file ids and format)
LOAD_ERRORS: Key[list[str]] = Key("load_errors")  #: why files of the last upload could not be read
DEVICE_PENDING: Key[str] = Key("device_pending")  #: the content key of an upload whose device is still to pick
AUTO_IDS: Key[list[str]] = Key("auto_hw_ids")  #: the devices the app chose itself last (any other: by hand)
AUTO_PICK: Key[dict | None] = Key("auto_pick")  #: the device taken from the file: key, id, before, undone
UPLOAD_SEEN: Key[tuple[str, ...]] = Key("upload_seen")  #: the file ids the uploader held on the last run
UPLOAD_USE: Key[tuple[str, ...]] = Key("upload_use")  #: the file ids the workload is read from
UPLOAD_ASK: Key[dict | None] = Key("upload_ask")  #: files from another GPU waiting for add / replace / compare
UPLOAD_MIXED: Key[dict | None] = Key("upload_mixed")  #: files of two GPUs read as one workload: use, gpus
RELOADED: Key[str] = Key("reloaded_upload")  #: what was uploaded before the browser reloaded (app.reload)

# --------------------------------------------------------------------------------------------------- navigation
ENTERED: Key[bool] = Key("entered")  #: the session's first page switch is done
START_PAGE: Key[Any] = Key("start_page")  #: a page (path or st.Page) to open on the next run
CURRENT_PAGE: Key[str] = Key("current_page")  #: its title (for the server log)
CURRENT_PAGE_URL: Key[str] = Key("current_page_url")  #: its url path (what a saved run reopens on)

# ------------------------------------------------------------------------------------------------- saved runs
PENDING_RUN: Key[str] = Key("open_run")  #: a share link's run id, waiting to be opened
OPENED_RUN: Key[str] = Key("opened_run")  #: the last run opened from a link
SAVED_RUN: Key[dict | None] = Key("saved_run")  #: the last run saved (id, name, project, url)
SAVE_PROJECT: Key[str] = Key("save_project_last")  #: the project last saved to

# --------------------------------------------------------------------------------------------------------- pages
MEMOS: Key[dict[str, dict]] = Key("memos")  #: app.memo.remember's results, per space
HW_FLASH: Key[str] = Key("hw_flash")  #: the Hardware page's note after adding or removing a device
HW_UPLOAD_DONE: Key[str] = Key("hw_upload_done")  #: the catalog upload already added
HW_UPLOAD_GEN: Key[int] = Key("hw_upload_gen")  #: a new number gives an empty catalog uploader
HW_PREFILL: Key[dict] = Key("hw_prefill")  #: the "add a device" form's fields to fill in (a device a file names)
#: the "add a device" form's fields that a prefill sets (widgets)
HW_FORM: dict[str, Key] = {f: Key(f"f_{f}") for f in ("id", "name", "vendor")}
WHATIF_STEPS: Key[list[dict]] = Key("whatif_steps")  #: the Planner's What-if steps, for its Scenario tab
WHATIF_VARIANT: Key[Workload] = Key("whatif_variant")  #: the What-if variant
FUSE_LAST: Key[int | None] = Key("wi_fuse_last")  #: the last launch of the chain to fuse (a widget)
SOLVER_FOR: Key[list] = Key("sv_for")  #: [device, achievable] the sharded-matmul solver's figures were filled from
SOLVER_FLOPS: Key[str] = Key("sv_flops")  #: its FLOP/s per chip, as text with a unit (a widget)
SOLVER_LINK: Key[str] = Key("sv_link")  #: its link bandwidth, as text with a unit (a widget)
COMPARE_RUNS: Key[tuple] = Key("compare_runs")  #: two runs (workload, key, label) sent from History or an upload
COMPARE_FROM: Key[str] = Key("compare_from")  #: what sent them: "saved" (History) or "upload" (the sidebar)
COMPARE_HW: Key[str] = Key("cmp_hw")  #: Compare's device (a widget; History sets it)
COMPARE_PAIRS: Key[dict[tuple, list[tuple[str, str]]]] = Key("cmp_pairs")  #: (before, after) -> kernels paired by hand
KERNEL_PAIRS: Key[dict] = Key("kernel_pairs")  #: a timeline's kernels paired with counter kernels by hand: base, pairs
HISTORY_NOTES: Key[list[str]] = Key("hist_notes")  #: History's notes for the next run (a run deleted)
HISTORY_DELETE_ERROR: Key[str] = Key("hist_delete_error")  #: why a delete failed
HISTORY_DELETE_CONFIRM: Key[bool] = Key("hist_delete_confirm")  #: the delete's confirmation (a widget)
HISTORY_PAGE: Key[int] = Key("hist_page")  #: the page of History's runs table (a widget)
HISTORY_PAGE_OF: Key[tuple] = Key("hist_page_of")  #: the (project, page size) that page number belongs to
HISTORY_KERNELS: Key[list[str]] = Key("hist_kernels")  #: the kernels History charts (a widget)


# --------------------------------------------------------------------------------------------- typed shortcuts
def workload() -> WorkloadEntry:
    """The sidebar's workload entry."""
    return WORKLOAD.read()


def hw_ids() -> list[str]:
    """The chosen device ids (none: an empty list)."""
    return list(HW_IDS.get() or [])


def achievable() -> bool:
    return bool(ACHIEVABLE.get(False))


def combine() -> bool:
    return bool(COMBINE.get(True))


def catalog() -> Catalog:
    """This session's catalog (built-in, its own devices and those the upload measured)."""
    return CATALOG.read()


def token() -> str:
    """The current analysis's token (pages run only with an analysis: see app.page.analysis)."""
    return TOKEN.read()


__all__ = [
    "ACHIEVABLE", "ANALYSIS", "AUTO_IDS", "AUTO_PICK", "BUILTIN", "CATALOG", "COMBINE", "COMPARE_FROM", "COMPARE_HW",
    "COMPARE_PAIRS", "COMPARE_RUNS", "CURRENT_PAGE", "CURRENT_PAGE_URL", "CUSTOM", "DEVICE_PENDING", "ENTERED",
    "HISTORY_DELETE_CONFIRM", "HISTORY_DELETE_ERROR", "HISTORY_KERNELS", "HISTORY_NOTES", "HISTORY_PAGE",
    "HISTORY_PAGE_OF", "HW_FLASH", "HW_FORM", "HW_IDS", "HW_PREFILL",
    "HW_UPLOAD_DONE", "HW_UPLOAD_GEN", "KERNEL_PAIRS", "LOADED_KEY", "LOAD_ERRORS", "MEMOS", "OPENED_RUN", "PENDING_RUN",
    "RELOADED", "SAVED_RUN", "SAVE_PROJECT", "SELECT_NEXT", "START_PAGE", "TOKEN", "UPLOADER_GEN", "UPLOAD_ASK", "UPLOAD_MIXED",
    "UPLOAD_SEEN", "UPLOAD_USE", "WHATIF_STEPS", "WHATIF_VARIANT", "WORKLOAD", "Key", "WorkloadEntry", "achievable", "catalog",
    "combine", "hw_ids", "token", "workload",
]
