"""Bounded gzip decompression for inputs (traces are often saved as ``.json.gz``).

Incremental ``zlib.decompressobj`` so a decompression bomb stops at the limit instead of filling memory.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from ..errors import InputError, LimitError

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 24  # decompression step, bytes of output


def gunzip_chunks(data: bytes, limit: int, source: str = "input") -> Iterator[bytes]:
    """The decompressed bytes of ``data`` (one or more gzip members), piece by piece, at most ``limit`` in all.

    Incremental ``zlib.decompressobj`` so a decompression bomb stops at the limit instead of filling memory:
    :class:`LimitError` names the limit; corrupt or truncated gzip data is an :class:`InputError`.
    """
    total = 0
    pending = data
    d = zlib.decompressobj(wbits=31)
    mb = limit / 1e6
    try:
        while True:
            piece = d.decompress(pending, CHUNK)
            pending = d.unconsumed_tail
            if piece:
                total += len(piece)
                if total > limit:
                    raise LimitError(
                        f"{source}: the gzip data expands beyond the input size limit of {mb:,.0f} MB "
                        "(ROOFCORE_MAX_INPUT_MB; a guard against decompression bombs). Hint: raise it with "
                        "ROOFCORE_MAX_INPUT_MB=N or --max-input-mb (CLI) if you trust the file.")
                yield piece
            if d.eof:
                rest = d.unused_data
                if rest[:2] == GZIP_MAGIC:  # a further gzip member (concatenated .gz files)
                    d = zlib.decompressobj(wbits=31)
                    pending = rest
                    continue
                return
            if not piece and not pending:
                raise InputError(where=source, text="the gzip data ends early (a truncated or partial download?).",
                                 hint="copy the .gz file again, or gunzip it to see how much is readable.")
    except zlib.error as e:
        raise InputError(where=source, text=f"not readable gzip data ({e}).",
                         hint="copy the file again; a renamed file keeps its content.") from None


def gunzip_bounded(data: bytes, limit: int, source: str = "input") -> bytes:
    """``data`` (gzip) decompressed in full, refusing to produce more than ``limit`` bytes (see :func:`gunzip_chunks`)."""
    out = bytearray()
    for piece in gunzip_chunks(data, limit, source):
        out += piece
    return bytes(out)
