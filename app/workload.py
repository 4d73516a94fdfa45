"""The app's workload and analysis, each computed once per content for every session: the built-in catalog, the
bundled example, uploads read together, and the analysis of a workload on a set of devices."""

from __future__ import annotations

import streamlit as st

import roofcore
from roofcore.resources import data_dir
from roofcore.views import combine_launches

from .keys import analysis_token

#: the workload shown before anything is uploaded
BUNDLED_EXAMPLE = data_dir("examples") / "transformer_block.yaml"
BUNDLED_NAME = "examples/transformer_block.yaml"
#: the device chosen until the user chooses
DEFAULT_DEVICE = "h100-sxm"
#: the uploaders' file types: any file. Inputs are read by their content, whatever their name (a `.tsv`, an export
#: saved as `.dat`, a `.tar.zst`), and what is not read gets its reason from the reader (an `.ncu-rep` the command
#: that exports it); a list of endings would make the browser refuse such files with no reason (and the browser's
#: file picker drops endings with a hyphen, `.ncu-rep`, from any list)
UPLOAD_TYPES = None


@st.cache_resource(show_spinner=False)
def base_catalog() -> roofcore.Catalog:
    """The built-in catalogs (and ROOFCORE_CATALOG_PATH), loaded once per server."""
    return roofcore.load_catalogs()


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)
def parse_uploads(key: str, fmt: str | None, _files: tuple[tuple[bytes, str], ...],
                  pairs: tuple[tuple[str, str], ...] = ()) -> tuple[roofcore.Workload | None, tuple[str, ...]]:
    """The uploaded files read together (companions such as sysinfo.csv give context; a time-only nsys
    profile joins the inventories), a file that cannot be read reported and left out. Cached per content
    (``key``: the SHA-256 of the files' names and bytes, and the format override). ``pairs``: timeline kernels paired
    with counter kernels by hand (timeline name, counter name), for a timeline read with counters.

    A resource cache, not a data cache: the workload is never modified, so it is shared rather than pickled
    on every store and load (pickling a 100,000-kernel workload costs as much as parsing it). Only a session
    holding the very same bytes reaches an entry, and then it gets what it would have computed itself: the
    same file uploaded again (another round, another colleague) is not parsed again."""
    errors: list[str] = []
    try:
        w = roofcore.read_many(_files, fmt=fmt, on_error=lambda name, e: errors.append(str(e)), pairs=dict(pairs) or None,
                               together=True)  # a run's files dropped together: its API traces noted, not errors
    except roofcore.RoofcoreError as e:  # nothing readable: the per-file messages say why, else this one does
        return None, tuple(errors) or (str(e),)
    return w, tuple(errors)


@st.cache_data(show_spinner=False)
def bundled_workload() -> roofcore.Workload:
    return roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME)


@st.cache_resource(show_spinner=False, max_entries=32, ttl=3600)
def _analysis(token: str, _workload: roofcore.Workload, _hws: tuple[roofcore.Hardware, ...], combine: bool,
              achievable: bool) -> roofcore.Analysis:
    """One analysis per content (``token``), shared by the sessions that ask for the same one (never modified)."""
    return roofcore.analyze(combine_launches(_workload) if combine else _workload, list(_hws), achievable=achievable)


@st.cache_resource(show_spinner=False, max_entries=8, ttl=3600)
def launch_analysis(token: str, _workload: roofcore.Workload, _hws: tuple[roofcore.Hardware, ...],
                    achievable: bool) -> roofcore.Analysis:
    """The workload's launches, not combined, on the analysis's devices (``token`` names that analysis): what the
    Overview checks for launches above their roof that combining hides. Only drawn where launches are combined."""
    return roofcore.analyze(_workload, list(_hws), achievable=achievable)


def analysis_for(workload: roofcore.Workload, wkey: str, hws: list[roofcore.Hardware], combine: bool,
                 achievable: bool) -> tuple[str, roofcore.Analysis]:
    """The analysis for these choices and a token naming it: the workload's content key, the options and each
    device's content (a custom device by its figures, not its id), so the same choices give the same token in
    every session. Pages key their memos on the token; a rerun or a page change costs nothing."""
    token = analysis_token(wkey, hws, combine, achievable)
    return token, _analysis(token, workload, tuple(hws), combine, achievable)


__all__ = ["BUNDLED_EXAMPLE", "BUNDLED_NAME", "DEFAULT_DEVICE", "analysis_for", "base_catalog", "bundled_workload",
           "launch_analysis", "parse_uploads"]
