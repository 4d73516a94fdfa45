"""Text the app and the CLI keep and print (run names, projects, tags, file names, owners in the run store): one
rule for what is accepted, the same on SQLite and PostgreSQL, and one way to show it. No database here: the app and
the CLI print with :func:`shown` without the ``team`` extra.

Refused, with one line naming the field: text that is not UTF-8 (bytes, or a command-line argument whose bytes
were not UTF-8: Python keeps those as lone surrogates), NUL and the other C0 and C1 control characters (PostgreSQL
refuses NUL in text itself; SQLite would keep it, so both refuse it here first). Tabs and line breaks are white
space: runs of white space become one space, as they always did.

Kept, but shown escaped (:func:`shown`): the bidirectional formatting characters (U+202A-U+202E, U+2066-U+2069,
U+200E, U+200F, U+061C), which would otherwise make a name read differently from what it is (``exe.txt`` that is
really ``txt.exe``).
"""

from __future__ import annotations

import re

from .errors import InputError

#: C0 controls but tab, line feed and carriage return (white space), DEL, and the C1 controls
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: the bidirectional formatting characters: embeddings, overrides, isolates and the directional marks
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SHOWN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                    r"\ud800-\udfff]")


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): show the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: object) -> str:
    """``text`` as it may be printed: control and bidirectional formatting characters (and bytes that were not
    UTF-8) as ``\\u202e`` / ``\\x01`` escapes, everything else as it is. ``None`` is ``""``."""
    if text is None:
        return ""
    return _SHOWN.sub(lambda m: _escape(m.group()), str(text))


def has_bidi(text: str | None) -> bool:
    """Whether ``text`` holds a bidirectional formatting character (:func:`shown` escapes them)."""
    return text is not None and _BIDI.search(text) is not None


def fit(text: object, limit: int) -> str | None:
    """Text read from a file (a device's name) as it may be stored: control characters and bytes that were not
    UTF-8 dropped, at most ``limit`` characters; ``None`` for nothing."""
    if not text:
        return None
    out = _CONTROL.sub("", re.sub(r"[\ud800-\udfff]", "", str(text))).strip()[:limit]
    return out or None


def clean(value: object, what: str, limit: int, *, required: bool = True, where: str = "save") -> str:
    """``value`` as stored: UTF-8 text without control characters, white space collapsed, at most ``limit``
    characters; ``""`` for nothing when not ``required``. Raises :class:`InputError` (``where: what: ...``)."""
    place = f"{where}: {what}"
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            value = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(where=place, expected="UTF-8 text",
                             found=f"bytes that are not UTF-8 (byte 0x{raw[e.start]:02x} at position {e.start + 1}: "
                                   f"{raw.decode('utf-8', 'backslashreplace')[:80]})") from None
    text = "" if value is None else str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: an argument or file name whose bytes were not UTF-8
        raise InputError(where=place, expected="UTF-8 text", found=f"bytes that are not UTF-8 ({shown(text)[:80]})",
                         hint="the terminal or file system gave bytes in another encoding; type the text again "
                              "in UTF-8.") from None
    bad = _CONTROL.search(text)
    if bad:
        raise InputError(where=place, expected="text without control characters",
                         found=f"U+{ord(bad.group()):04X} at character {bad.start() + 1} ({shown(text)[:80]})")
    text = " ".join(text.split())
    if required and not text:
        raise InputError(where=place, expected="some text", found="nothing")
    if len(text) > limit:
        raise InputError(where=place, expected=f"at most {limit} characters", found=f"{len(text)}")
    return text


__all__ = ["clean", "fit", "has_bidi", "shown"]
