"""The login gate (Streamlit's ``st.login``, OpenID Connect), on only when the host configures it: the ``[auth]``
section of ``.streamlit/secrets.toml`` (HOSTING.md)."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

import streamlit as st

from roofcore.safetext import shown

from .markdown import escape_markdown


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
        st.caption(f"Signed in as **{escape_markdown(shown(who))}**", help=_identity(user))
        st.button("Sign out", on_click=st.logout, icon=":material/logout:", key="logout")


def _identity(user) -> str:
    """Who the app takes the user to be, for the sidebar's tooltip: the provider (issuer) and the user's id there
    (subject), which own their saved runs (what `roofline save --owner ISSUER SUBJECT` takes)."""
    iss = user.get("iss") or f"streamlit-provider:{user.get('provider') or 'default'}"
    text = f"Your saved runs belong to subject `{shown(user.get('sub'))}` at `{shown(iss)}`"
    verified = user.get("email_verified") is True or str(user.get("email_verified")).lower() == "true"
    if user.get("email"):
        text += f" (e-mail {shown(user.get('email'))}: {'verified' if verified else 'not verified, so not used'})"
    return text + "."


__all__ = ["auth_config", "login_gate"]
