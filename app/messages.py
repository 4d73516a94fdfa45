"""Messages on a page: text the app did not write (an engine error, a warning, a note) shown as an alert that reads
exactly as the text, and the guard that turns any error into a message (never a traceback)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Literal

import streamlit as st
from streamlit.logger import get_logger

from roofcore import RoofcoreError

from . import state
from .markdown import escape_message

#: the server log's logger: unexpected errors are written here with their reference
log = get_logger("roofline.app")

#: the kinds of message: Streamlit's alert functions of those names
MessageKind = Literal["error", "warning", "info", "success"]
#: the icon of each kind of message
ICONS: dict[MessageKind, str] = {"error": ":material/error:", "warning": ":material/warning:", "info": ":material/info:",
         "success": ":material/check_circle:"}


def message(kind: MessageKind, text: object, *, icon: str | None = None, where=None) -> None:
    """Show ``text`` (an engine error, a warning, a note: anything not written by the app itself) as an alert of
    ``kind`` (error, warning, info, success) that reads exactly as the text: Streamlit renders alerts as
    Markdown, so a ``$`` would start LaTeX, ``_x_`` italics, a backtick code (see escape_message). ``where``: a
    container or column (default: the page)."""
    getattr(where or st, kind)(escape_message(text), icon=icon or ICONS[kind])


def report_unexpected(e: BaseException) -> str:
    """Show a short message with a reference and write the traceback, with that reference, to the server log.

    The reference is what a user gives the host; the host finds it with ``grep`` in the log."""
    ref = uuid.uuid4().hex[:10]
    log.error("unexpected error, reference %s, page %s", ref, state.CURRENT_PAGE.get("?"), exc_info=e)
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


__all__ = ["ICONS", "guard", "message", "report_unexpected"]
