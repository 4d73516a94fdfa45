"""Text from outside the app (kernel names, file names, the engine's messages) as Markdown that shows it literally:
Streamlit renders text as Markdown, with LaTeX, emoji and colour directives besides."""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&])|:(?=\S)")
#: what makes Markdown (and Streamlit's LaTeX, emoji and colour directives) of plain text: emphasis, code, math,
#: links and HTML, strike-through, tables, entities, and a colon before a word (``ns::a::b`` would show 🅰️)
_MSG_SPECIAL = re.compile(r"[\\`*\[\]<>~|$&#]|:(?=\S)|_+")
_LINE_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))", re.M)  # a list item, a setext underline, "1." at a line start


def escape_markdown(text: str) -> str:
    """User text (kernel names, file names, profiler messages) shown literally in Streamlit markdown, on one line."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), " ".join(str(text).split()))


def escape_message(text: object) -> str:
    """A message from the engine (an error, a warning, a note) as Markdown that renders exactly as the text:
    ``$…$`` is not math, ``*``, ``_`` and backticks are not emphasis or code, ``ns::a::b`` is not an emoji.
    Line breaks are kept (as hard breaks). Fewer characters are escaped than :func:`escape_markdown` does, so
    the Markdown source stays close to the text: an underscore between two letters or digits (``ERR_NVGPUCTRPERM``,
    ``dram__bytes``) cannot start emphasis and stays as it is."""
    text = str(text).strip()

    def esc(m: re.Match) -> str:
        a, b = m.start(), m.end()
        if m.group(0)[0] == "_" and a > 0 and b < len(text) and text[a - 1].isalnum() and text[b].isalnum():
            return m.group(0)  # between two letters or digits: inert
        return "".join("\\" + c for c in m.group(0))

    out = _MSG_SPECIAL.sub(esc, text)
    out = _LINE_START.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else
                                                  "\\" + m.group(2)), out)
    return "  \n".join(line.rstrip() for line in out.splitlines())


def unescape_markdown(text: str) -> str:
    """The text an :func:`escape_message` or :func:`escape_markdown` string shows (for tests and logs)."""
    return re.sub(r"\\(.)", r"\1", text.replace("  \n", "\n"))
