"""Text in an East Asian double-byte code page: the "CSV" a spreadsheet saves on a Chinese, Japanese or Korean
Windows (GBK, Shift_JIS, Unified Hangul Code, Big5), told from the single-byte pages of :mod:`.dialect` and from
damaged UTF-8 by how its bytes stand, never by a guess that would turn Western or Cyrillic letters into ideographs.

A character of these pages is a lead byte 0x81-0xFE and a trail byte 0x40-0xFE. Text is read in one of them only
where all of these hold (the thresholds leave a margin on both sides of sentences in each language):

- it decodes strictly in that page, and every character outside ASCII is in that script's blocks (ideographs,
  kana, Hangul, CJK punctuation, full-width forms); a Western word ending in an accent before a space or a comma
  (``café,``) or a Cyrillic word of odd length has a high byte before one below 0x40, which no page allows;
- at least :data:`MIN_PAIRS` distinct characters, and at least half of them in runs of two or more: words of these
  scripts are, while an accent paired with the ASCII letter after it (``über``, ``Größe``) stands alone in its word;
- at most three pairs in ten (half in Shift_JIS, whose katakana trail there) end in an ASCII lower-case letter: an
  accent is followed by one (``élève``, ``µs``) while these pages' trail bytes spread over 0x40-0xFE;
- at least a tenth of the high bytes are 0x80-0xBF: lead and trail bytes of every page fall there often, Cyrillic
  letters (0xC0-0xFF in Windows-1251) almost never;
- less than half of the high bytes form UTF-8 characters: UTF-8 text with a damaged byte is left for its message.

Which page: leads 0x81-0x9F on three pairs in ten or more are Shift_JIS's (kana and most kanji; Big5 and GB2312
never lead there); trails 0x40-0x7E on 15% of pairs are Big5's (GB2312's common characters never trail there); all
leads within 0xB0-0xC8, on :data:`KOREAN_PAIRS` pairs or more, are Hangul syllables (Chinese text leads beyond 0xC8
about a third of the time; on fewer pairs the two cannot be told apart and the text is refused as before); else GBK.
"""

from __future__ import annotations

import re

MIN_PAIRS = 4
KOREAN_PAIRS = 8
STATS_BYTES = 1 << 22  #: the bytes the counts look at (the decoding checks the whole)
#: the pages, as Python names them, with how a warning names them
PAGES = {"gbk": "GBK (Simplified Chinese)", "cp932": "Shift_JIS (Japanese)", "cp949": "Unified Hangul Code (Korean)",
         "big5": "Big5 (Traditional Chinese)"}
_PAIR = re.compile(rb"[\x81-\xfe][\x40-\xfe]")
_RUN = re.compile(rb"(?:[\x81-\xfe][\x40-\xfe]){2,}")  #: two characters or more in a row: a word
_HIGH = re.compile(rb"[\x80-\xff]")
_LOW_HIGH = re.compile(rb"[\x80-\xbf]")
#: characters a page's text holds outside ASCII: CJK punctuation, kana, Hangul, ideographs, full-width forms
_SCRIPT = re.compile(r"[^\x00-\x7f\u1100-\u11ff\u2010-\u206f\u2160-\u217f\u2460-\u24ff\u2500-\u257f\u25a0-\u25ff"
                     r"\u3000-\u30ff\u3130-\u318f\u3200-\u32ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                     r"\uff00-\uffef]")


#: :func:`double_byte`'s answer for text in one of the pages when which one cannot be told
UNTOLD = ("", "")


def double_byte(raw: bytes, partial: bool = False) -> tuple[str, str] | None:
    """``(text, the page's name)`` where ``raw`` is text in one of :data:`PAGES` (see the module's notes),
    :data:`UNTOLD` where it is but which one cannot be told; else None. ``partial``: ``raw`` is a head cut anywhere
    (a character cut at its end is dropped)."""
    head = raw[:STATS_BYTES]
    pairs = _PAIR.findall(head)
    if len(set(pairs)) < MIN_PAIRS or sum(len(r) for r in _RUN.findall(head)) < len(pairs):  # 2 bytes a pair
        return None
    high = len(_HIGH.findall(head))
    if len(_LOW_HIGH.findall(head)) * 10 < high or _utf8_bytes(head) * 2 >= high:
        return None
    page = _page(pairs)
    if page is None:  # too few to tell Korean from Chinese: refused, never a guess (nor a single-byte page)
        return UNTOLD
    lower = sum(0x61 <= p[1] <= 0x7A for p in pairs) / len(pairs)
    if lower > (0.5 if page == "cp932" else 0.3):  # accents before lower-case letters (katakana trail there too)
        return None
    try:
        text = raw.decode(page)
    except UnicodeDecodeError as e:
        if not (partial and e.start >= len(raw) - 1):
            return None
        text = raw[:e.start].decode(page, errors="strict")
    if _SCRIPT.search(text):
        return None
    return text, PAGES[page]


def _page(pairs: list[bytes]) -> str | None:
    n = len(pairs)
    if sum(0x81 <= p[0] <= 0x9F for p in pairs) * 10 >= 3 * n:
        return "cp932"
    if sum(0x40 <= p[1] <= 0x7E for p in pairs) * 100 >= 15 * n:
        return "big5"
    if all(0xB0 <= p[0] <= 0xC8 for p in pairs):  # Hangul, or a few Chinese characters that happen to lead there
        return "cp949" if n >= KOREAN_PAIRS else None
    return "gbk"


_UTF8 = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _utf8_bytes(raw: bytes) -> int:
    """How many bytes outside ASCII stand in UTF-8 characters (by their shape)."""
    return sum(map(len, _UTF8.findall(raw)))


__all__ = ["KOREAN_PAIRS", "MIN_PAIRS", "PAGES", "STATS_BYTES", "UNTOLD", "double_byte"]
