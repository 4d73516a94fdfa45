"""What every page of the app does first, and the app's guards (Streamlit only: the engine, roofcore, never
imports Streamlit): the page guard, the login gate, and turning errors into messages."""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import uuid
from collections.abc import Iterator, Mapping

import streamlit as st
from streamlit.logger import get_logger

from roofcore import Analysis, RoofcoreError
from roofcore.app_support import escape_message

#: the server log's logger: unexpected errors are written here with their reference
log = get_logger("roofline.app")

# Everything imported so far (Streamlit, pandas, the engine, the catalog) lives as long as the server: move it out
# of the garbage collector's sight, so the full collections that large uploads trigger do not scan it each time
# (about 65 ms per 100,000-kernel upload otherwise). Once per process: this module is imported once.
gc.freeze()


def start(page: str, title: str) -> None:
    """Title the page; a deep link on a fresh server runs a page without the app, so start the app first."""
    if "catalog" not in st.session_state:
        st.session_state["start_page"] = page
        st.switch_page("streamlit_app.py")
    st.title(title)


def analysis() -> Analysis:
    """The sidebar's analysis, or stop the page: no device chosen, or the analysis failed (its error is shown)."""
    a = st.session_state.get("analysis")
    if a is None:
        if not st.session_state.get("hw_ids"):
            st.info("Select at least one device in the sidebar.", icon=":material/memory:")
        st.stop()
    return a


# ----------------------------------------------------------------------------------------- shared results


@st.cache_resource(show_spinner=False, max_entries=256, ttl=3600)
def _shared(kind: str, token: str, arg: object, _compute) -> object:
    return _compute()


def shared(kind: str, arg: object, compute):
    """``compute()`` for this page's analysis, computed once per server for every session with the same
    analysis (its token names the content, see streamlit_app.analysis_for) and kept an hour at most. The
    result is shared, never copied: callers must not modify it."""
    return _shared(kind, st.session_state["analysis_token"], arg, compute)


# ---------------------------------------------------------------------------------------------------- errors

#: the icon of each kind of message
ICONS = {"error": ":material/error:", "warning": ":material/warning:", "info": ":material/info:",
         "success": ":material/check_circle:"}


def message(kind: str, text: object, *, icon: str | None = None, where=None) -> None:
    """Show ``text`` (an engine error, a warning, a note: anything not written by the app itself) as an alert of
    ``kind`` (error, warning, info, success) that reads exactly as the text: Streamlit renders alerts as
    Markdown, so a ``$`` would start LaTeX, ``_x_`` italics, a backtick code (see escape_message). ``where``: a
    container or column (default: the page)."""
    getattr(where or st, kind)(escape_message(text), icon=icon or ICONS[kind])



def report_unexpected(e: BaseException) -> str:
    """Show a short message with a reference and write the traceback, with that reference, to the server log.

    The reference is what a user gives the host; the host finds it with ``grep`` in the log."""
    ref = uuid.uuid4().hex[:10]
    log.error("unexpected error, reference %s, page %s", ref, st.session_state.get("current_page", "?"), exc_info=e)
    st.error(f"Something went wrong on our side (reference `{ref}`). The rest of the app keeps working; if it "
             "happens again, give this reference to whoever runs the app: the details are in the server's log.",
             icon=":material/bug_report:")
    return ref


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """A :class:`RoofcoreError` (bad input, a limit) becomes its message; anything else a message with a
    reference (:func:`report_unexpected`). Streamlit's own control flow (``st.stop``, reruns, page switches)
    derives from ``BaseException`` and passes through."""
    try:
        yield
    except RoofcoreError as e:
        message("error", e)
    except Exception as e:  # the point: no traceback for users
        report_unexpected(e)


# ----------------------------------------------------------------------------------------------------- login


def auth_config() -> dict | None:
    """The ``[auth]`` section of the host's ``.streamlit/secrets.toml``, or ``None`` (no login configured)."""
    try:
        if st.secrets.load_if_toml_exists() and "auth" in st.secrets:
            return dict(st.secrets["auth"])
    except Exception:  # an unreadable secrets file: Streamlit logs it; no login
        return None
    return None


def login_gate(pages: list) -> None:
    """With ``[auth]`` configured, only signed-in users get past this (``st.login``, OpenID Connect); without
    it, nothing happens (a laptop or an intranet host that does its own access control). Fails closed: a
    configured login that cannot work stops the app with what to install. ``pages``: the app's pages, hidden
    from the sidebar while nobody is signed in."""
    auth = auth_config()
    if auth is None:
        return
    if importlib.util.find_spec("authlib") is None:
        st.error("This server is configured to require a login ([auth] in .streamlit/secrets.toml) but the "
                 "login support is not installed. Host: `pip install \"streamlit[auth]\"` and restart.",
                 icon=":material/lock:")
        st.stop()
    user = st.user
    if not user.get("is_logged_in"):
        st.navigation(pages, position="hidden")  # no page list to click through before signing in
        st.title("Roofline")
        st.markdown("This Roofline app is shared by a team: **sign in** to upload profiles and see reports. "
                    "Your uploads stay in your own session.")
        providers = [k for k, v in auth.items() if isinstance(v, Mapping)]
        for p in providers or [None]:
            label = f"Sign in with {p.replace('_', ' ').title()}" if p else "Sign in"
            st.button(label, on_click=st.login, args=(p,) if p else (), icon=":material/login:",
                      key=f"login_{p or 'default'}", type="primary")
        st.stop()
    with st.sidebar:
        who = user.get("name") or user.get("email") or "signed in"
        st.caption(f"Signed in as **{who}**")
        st.button("Sign out", on_click=st.logout, icon=":material/logout:", key="logout")
