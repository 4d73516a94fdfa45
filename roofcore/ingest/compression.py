"""Bounded decompression for inputs: gzip (traces are often saved as ``.json.gz``; the Kineto reader streams it),
and bzip2, xz and Zstandard, the other compressions a file is shared in (``tar cJf``, ``xz -k``, ``zstd``).

Each decompresses step by step, so a decompression bomb stops at the input size limit instead of filling memory;
damaged or truncated data is one :class:`InputError`. The stdlib's ``zlib``, ``bz2`` and ``lzma`` do the work, and
pyarrow's codec (already a dependency, for CSV reading) reads Zstandard, which Python 3.11's stdlib lacks.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import Any

from .. import limits
from ..errors import InputError, LimitError, RoofcoreError

GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: the compressions read, by their first bytes: the name a message gives, the tool that undoes it
KINDS = {GZIP_MAGIC: ("gzip", "gunzip"), BZIP2_MAGIC: ("bzip2", "bunzip2"), XZ_MAGIC: ("xz", "unxz"),
         ZSTD_MAGIC: ("Zstandard", "unzstd")}
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
                    raise _bomb(source, "gzip", mb)
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


def _bomb(source: str, what: str, mb: float) -> LimitError:
    return LimitError(f"{source}: the {what} data expands beyond the input size limit of {mb:,.0f} MB "
                      "(ROOFCORE_MAX_INPUT_MB; a guard against decompression bombs). Hint: raise it with "
                      "ROOFCORE_MAX_INPUT_MB=N or --max-input-mb (CLI) if you trust the file.")


def gunzip_bounded(data: bytes, limit: int, source: str = "input") -> bytes:
    """``data`` (gzip) decompressed in full, refusing to produce more than ``limit`` bytes (see :func:`gunzip_chunks`)."""
    out = bytearray()
    for piece in gunzip_chunks(data, limit, source):
        out += piece
    return bytes(out)


def kind(data: bytes) -> bytes | None:
    """The magic of the compression ``data`` starts with (a key of :data:`KINDS`), or None."""
    head = bytes(data[:6])
    return next((m for m in KINDS if head.startswith(m)), None)


def unpacked(data: bytes, limit: int, source: str = "input") -> bytes:
    """``data`` with a bzip2, xz or Zstandard compression undone (bounded by ``limit``); anything else, gzip
    included (its readers stream it), as it is."""
    magic = kind(data)
    if magic is None or magic == GZIP_MAGIC:
        return data
    out = bytearray()
    for piece in _chunks(data, magic, limit, source):
        out += piece
    return bytes(out)


def peek(data: bytes, n: int) -> bytes:
    """Up to the first ``n`` bytes of ``data`` once its compression (any of :data:`KINDS`) is undone; what could
    be decompressed where ``data`` is only the head of a file or damaged (its read says why)."""
    magic = kind(data)
    if magic is None:
        return bytes(data[:n])
    if magic == GZIP_MAGIC:  # one step of n bytes (gunzip_chunks' steps are large)
        try:
            return zlib.decompressobj(wbits=31).decompress(bytes(data[:1 << 20]), n)
        except zlib.error:
            return b""
    out = bytearray()
    try:
        for piece in _chunks(data[:1 << 20], magic, 1 << 62, "input", step=n):
            out += piece
            if len(out) >= n:
                break
    except (InputError, LimitError):
        pass
    return bytes(out[:n])


def _chunks(data: bytes, magic: bytes, limit: int, source: str, step: int = CHUNK) -> Iterator[bytes]:
    if magic == GZIP_MAGIC:
        return gunzip_chunks(data, limit, source)
    if magic == ZSTD_MAGIC:
        return _zstd_chunks(data, limit, source, step)
    what, tool = KINDS[magic]
    try:  # imported where used: a Python built without liblzma or libbz2 still reads everything else
        if magic == BZIP2_MAGIC:
            import bz2

            new: Callable[[], Any] = bz2.BZ2Decompressor
            errors: tuple[type[Exception], ...] = (OSError, EOFError, ValueError)
        else:
            import lzma

            def new() -> Any:
                return lzma.LZMADecompressor(lzma.FORMAT_XZ)

            errors = (OSError, EOFError, ValueError, lzma.LZMAError)
    except ImportError:
        raise InputError(where=source, text=f"this Python was built without {what} support.",
                         hint=f"run {tool} on the file and load what it writes.") from None
    return _stream_chunks(data, magic, new, errors, limit, source, step)


def _stream_chunks(data: bytes, magic: bytes, new: Callable[[], Any], errors: tuple[type[Exception], ...],
                   limit: int, source: str, step: int) -> Iterator[bytes]:
    """bzip2 or xz (``new`` makes a decompressor, ``errors`` are what it raises on bad data): every stream of
    ``data`` (``cat a.xz b.xz`` is one file), ``step`` bytes of output at a time."""
    what, tool = KINDS[magic]
    d, pending, total = new(), bytes(data), 0
    try:
        while True:
            piece = d.decompress(pending, step)
            pending = b""
            if piece:
                total += len(piece)
                if total > limit:
                    raise _bomb(source, what, limit / 1e6)
                limits.tick()
                yield piece
            if d.eof:
                rest = d.unused_data.lstrip(b"\x00")  # xz pads between streams with zero bytes
                if not rest.startswith(magic):
                    return  # what follows the last stream is not read (the tool that undoes it ignores it too)
                d, pending = new(), rest
            elif not piece and d.needs_input:
                raise InputError(where=source, text=f"the {what} data ends early (a truncated or partial download?).",
                                 hint=f"copy the file again, or run {tool} on it to see how much is readable.")
    except RoofcoreError:
        raise
    except errors as e:
        raise InputError(where=source, text=f"not readable {what} data ({e}).",
                         hint="copy the file again; a renamed file keeps its content.") from None


def _zstd_chunks(data: bytes, limit: int, source: str, step: int) -> Iterator[bytes]:
    """Zstandard, every frame, through pyarrow's codec."""
    import pyarrow as pa

    total = 0
    try:
        stream = pa.CompressedInputStream(pa.py_buffer(bytes(data)), "zstd")
        while piece := stream.read(step):
            total += len(piece)
            if total > limit:
                raise _bomb(source, "Zstandard", limit / 1e6)
            limits.tick()
            yield piece
    except RoofcoreError:
        raise
    except (OSError, ValueError, pa.ArrowException) as e:
        text = "ends early (a truncated or partial download?)" if "runcated" in str(e) else f"is not readable ({e})"
        raise InputError(where=source, text=f"the Zstandard data {text}.",
                         hint="copy the file again, or run unzstd on it to see how much is readable.") from None
