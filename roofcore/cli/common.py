"""What every command shares: the catalog with --catalog, plain-text tables, and writing the result to --output
or standard output (streamed; UTF-8 bytes where the destination takes them as they are)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..catalog import Catalog


def catalog_for(args: argparse.Namespace) -> Catalog:
    from ..catalog_files import (
        load_catalogs,  # here: `roofline formats` and `examples` need no catalog (nor YAML)
    )

    return load_catalogs(args.catalog or ())


def text_table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right if right is not None else set(range(1, len(headers)))
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def short(text: object, width: int = 44) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"


def max_bytes_of(args: argparse.Namespace) -> int:
    from ..ingest import max_input_bytes  # the readers: imported by the commands that read

    return int(args.max_input_mb * 1e6) if args.max_input_mb else max_input_bytes()


def binary_ok(args: argparse.Namespace) -> bool:
    """Whether UTF-8 bytes can go to the destination as they are: a file, or a UTF-8 standard output without
    newline translation (the output layer then hands over its buffers without decoding and encoding them)."""
    if getattr(args, "output", None):
        return True
    enc = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    return hasattr(sys.stdout, "buffer") and enc == "utf8" and os.linesep == "\n"


def emit(args: argparse.Namespace, text: str | Iterable[str | bytes | memoryview]) -> None:
    """Write ``text`` (or its pieces, streamed: text, or UTF-8 bytes when :func:`_binary_ok`) to --output or
    standard output, ending with a newline."""
    pieces = [text] if isinstance(text, str) else text
    if getattr(args, "output", None):
        with open(args.output, "wb") as fh:
            _write(fh, pieces, binary=True)
    elif binary_ok(args):
        sys.stdout.flush()
        _write(sys.stdout.buffer, pieces, binary=True)
        sys.stdout.buffer.flush()
    else:
        _write(sys.stdout, pieces, binary=False)


def _write(fh: IO[Any], pieces: Iterable[str | bytes | memoryview], binary: bool) -> None:
    """``fh`` takes bytes when ``binary``, else text."""
    last: str | bytes | memoryview = ""
    for piece in pieces:
        if len(piece):
            if binary and isinstance(piece, str):
                piece = piece.encode("utf-8")
            elif not binary and not isinstance(piece, str):
                piece = str(piece, "utf-8")
            fh.write(piece)
            last = piece
    if (last[-1:] != "\n") if isinstance(last, str) else (bytes(last[-1:]) != b"\n"):
        fh.write(b"\n" if binary else "\n")

