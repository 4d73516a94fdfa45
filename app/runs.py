"""Saved runs in the app (Streamlit side of roofcore.store): the server's store, who is asking, the sidebar's
"Save run" control, and opening a share link (``?run=<id>``) with the same workload, devices, options and page.

Nothing is saved unless a user asks; a saved run is analysed again from its files with the current catalog
whenever it is opened. Who sees what is roofcore.store.Viewer's rule: with the login off, everyone who can reach
the app sees every run.
"""

from __future__ import annotations

import importlib.util

import streamlit as st

from roofcore import RoofcoreError, Workload, read_many
from roofcore.safetext import shown

from . import state
from .device_form import parse_custom_devices
from .keys import content_key
from .login import auth_config
from .markdown import escape_markdown
from .messages import message
from .workload import BUNDLED_EXAMPLE

#: the share link's query parameter
RUN_PARAM = "run"
#: the most runs History's "Last runs" slider charts at once
HISTORY_WINDOW = 50
#: runs whose files and parsed workload the server keeps: History's whole window, with room for a few runs more
#: (Compare's two, a link opened meanwhile), so that moving the slider re-reads and re-parses no run it has seen
RUN_CACHE_ENTRIES = HISTORY_WINDOW + 14


def available() -> bool:
    """Whether the database support (the ``team`` extra) is installed."""
    return importlib.util.find_spec("sqlalchemy") is not None and importlib.util.find_spec("alembic") is not None


@st.cache_resource(show_spinner=False)
def _store(url: str):
    from roofcore.store import RunStore

    return RunStore(url)  # migrated once per server and URL; shared by every session (thread-safe)


def store():
    """The server's run database (``ROOFCORE_DB_URL``, else SQLite at ``ROOFCORE_DB_PATH`` or its default)."""
    from roofcore.store import database_url

    return _store(database_url())


def viewer():
    """Who is asking when a login is configured (the login gate has let only signed-in users through): the
    provider's issuer and the user's subject from their ID token, never the e-mail alone (roofcore.store.identity);
    else anyone. Raises :class:`roofcore.RoofcoreError` for claims that name no user."""
    from roofcore.store import Viewer

    if auth_config() is None:
        return Viewer()
    user = st.user
    if not user.get("is_logged_in"):
        st.stop()  # the login gate shows the sign-in
    claims = user.to_dict() if hasattr(user, "to_dict") else dict(user)
    v = Viewer.signed_in(claims, provider=claims.get("provider"))
    if v.email:
        _claim(store().url, v.user.issuer, v.user.subject, v.email, v)
    return v


@st.cache_resource(show_spinner=False, max_entries=4096)
def _claim(url: str, issuer: str, subject: str, email: str, _viewer) -> int:
    """Runs saved before owners were identities, under this user's verified e-mail, become theirs: once per server
    and user (a run saved since always has an owner's issuer and subject)."""
    return _store(url).claim(_viewer)


def who(owner) -> str:
    """An owner (:class:`roofcore.store.Owner` or ``None``) as the run lists show it."""
    if owner is None:
        return "(no owner)"
    return shown(owner.label) + (" (e-mail only, from an older version)" if owner.legacy else "")


def run_name(name: str) -> str:
    """A run's name, project or tag as a page shows it: bidirectional overrides and controls escaped."""
    return shown(name)


# -------------------------------------------------------------------------------------------------- opening


def remember_link() -> None:
    """Keep the share link's run id for this session (the app's first page switch drops the query string)."""
    rid = st.query_params.get(RUN_PARAM)
    if rid and rid != state.OPENED_RUN.get():
        state.PENDING_RUN.set(rid)


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES, ttl=3600)
def run_files(run_id: str, _store_obj, _viewer) -> tuple:
    """A run's description and files; a run never changes, so its id names its content (the viewer was checked
    by the call that filled the entry, and every caller checks it again with :func:`run_info` first)."""
    run = _store_obj.open(run_id, _viewer)
    return run.info, run.files


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES, ttl=3600)
def parse_files(key: str, fmt: str | None, _files: tuple) -> tuple[Workload | None, tuple[str, ...]]:
    """A saved run's files read together, cached per content (``key``), like the sidebar's uploads."""
    try:
        return read_many(_files, fmt=fmt, together=True), ()  # one run's files, as the upload read them
    except RoofcoreError as e:
        return None, (str(e),)


def load_run(run_id: str, parse=None) -> tuple[object, tuple, Workload, str]:
    """A run the viewer may see: its description, files, workload (``parse``: a cached reader, default
    :func:`parse_files`) and the workload's content key. Raises :class:`roofcore.RoofcoreError` (not found, not
    allowed, unreadable)."""
    parse = parse or parse_files
    s, v = store(), viewer()
    s.info(run_id, v)  # the permission check, on every call (the files below are cached by id)
    info, files = run_files(run_id, s, v)
    fmt = info.options.get("format") or None
    key = content_key(files, fmt)
    w, errors = parse(key, fmt, files)
    if w is None:
        raise RoofcoreError(f"saved run '{run_name(info.name)}' cannot be read any more: " + " ".join(errors))
    return info, files, w, key


def open_pending(parse, pages: list) -> None:
    """Open the run a share link named, once: its workload, devices (its own custom devices too), options and page
    replace the session's. An unknown or forbidden id leaves everything as it was, with a message."""
    rid = state.PENDING_RUN.pop()
    if not rid:
        return
    state.OPENED_RUN.set(rid)
    if not available():
        st.error("This link opens a saved run, but this server has no run database (the team extra).",
                 icon=":material/error:")
        return
    try:
        info, files, w, key = load_run(rid, parse)
        session = state.CUSTOM.read()
        for hw_id, text in info.custom_devices.items():
            for hw, overrides in parse_custom_devices(text.encode(), f"saved run {info.id}: {hw_id}",
                                                      state.BUILTIN.read(), session):
                session[hw.id] = (hw, overrides)
    except RoofcoreError as e:  # shown once, above the page; the session keeps what it had
        message("error", f"This link's run cannot be opened: {e}", icon=":material/link_off:")
        return
    state.WORKLOAD.set({"workload": w, "label": f"{run_name(info.name)} (saved run)", "key": key, "run": info.id,
                        "files": files, "format": info.options.get("format") or None})
    state.LOADED_KEY.set(None)
    if info.devices:
        state.HW_IDS.set(list(info.devices))
    for key, opt, default in ((state.COMBINE, "combine", True), (state.ACHIEVABLE, "achievable", False)):
        value = info.options.get(opt)
        if isinstance(value, bool) and (value != default or key.present()):  # a widget's default needs no setting
            key.set(value)
    page = next((p for p in pages if p.url_path == info.options.get("page")), None)
    if page is not None:
        state.START_PAGE.set(page)


# --------------------------------------------------------------------------------------------------- saving


def _current_files(uploads) -> tuple[tuple[bytes, str], ...]:
    """What the sidebar's workload was read from: the uploads, an opened run's files, or the bundled example."""
    if uploads:
        return tuple((f.getvalue(), f.name) for f in uploads)
    wl = state.workload()
    if wl.get("files"):
        return wl["files"]
    return ((BUNDLED_EXAMPLE.read_bytes(), BUNDLED_EXAMPLE.name),)


def _custom_yaml(hw_ids: list[str]) -> dict[str, str]:
    """The session's own devices among the chosen ones, as catalog YAML (a link must bring them along)."""
    from roofcore import hardware_to_yaml

    session = state.CUSTOM.get({})
    return {h: hardware_to_yaml(session[h][0]) for h in hw_ids if h in session}


def share_url(run_id: str) -> str:
    """The link to a run: this page's address with ``?run=<id>`` (just the query string where it is unknown)."""
    base = None
    try:
        base = st.context.url
    except Exception:  # no browser context (tests)
        base = None
    return f"{base.split('?')[0]}?{RUN_PARAM}={run_id}" if base else f"?{RUN_PARAM}={run_id}"


def save_control(uploads, fmt: str | None) -> None:
    """The sidebar's "Save run": name, project, tags and (with a login) who may see it."""
    st.subheader("Saved runs")
    if not available():
        st.caption("Saving runs needs the database support: `pip install 'roofcore[team]'`.")
        return
    login = auth_config() is not None
    with st.expander("Save this run", icon=":material/save:", expanded=bool(state.SAVED_RUN.get())):
        with st.form("save_run", clear_on_submit=False, border=False):
            name = st.text_input("Name", value=state.workload()["label"][:200], key="save_name", max_chars=200)
            project = st.text_input("Project", value=state.SAVE_PROJECT.get("default"), key="save_project",
                                    max_chars=100)
            tags = st.text_input("Tags", key="save_tags", placeholder="comma-separated, e.g. nightly, h100")
            visibility = st.radio("Who can open it", ["project", "private"], key="save_visibility", horizontal=True,
                                  format_func={"project": "Everyone in the app", "private": "Only me"}.__getitem__,
                                  disabled=not login)
            submitted = st.form_submit_button("Save run", icon=":material/save:")
        if not login:
            st.caption("No login on this server: every saved run is visible to everyone who can reach the app.")
        if submitted:
            _save(uploads, fmt, name, project, tags, visibility if login else "project")
        saved = state.SAVED_RUN.get()
        if saved:
            st.success(f"Saved **{escape_markdown(run_name(saved['name']))}** in project "
                       f"**{escape_markdown(run_name(saved['project']))}**. Its link (the files are read again with "
                       "the current catalog when it is opened):", icon=":material/check_circle:")
            st.code(saved["url"], language=None)


def _save(uploads, fmt: str | None, name: str, project: str, tags: str, visibility: str) -> None:
    hw_ids = state.hw_ids()
    wl = state.workload()
    fmt = fmt if uploads else wl.get("format")
    try:
        info = store().save(_current_files(uploads), name=name, project=project, tags=tags,
                            owner=viewer().user, visibility=visibility, devices=hw_ids,
                            custom_devices=_custom_yaml(hw_ids), fmt=fmt,
                            options={"combine": state.combine(), "achievable": state.achievable(),
                                     "page": state.CURRENT_PAGE_URL.get()})
    except RoofcoreError as e:
        state.SAVED_RUN.set(None)
        message("error", f"Not saved: {e}")
        return
    state.SAVE_PROJECT.set(info.project)
    state.SAVED_RUN.set({"id": info.id, "name": info.name, "project": info.project, "url": share_url(info.id)})
