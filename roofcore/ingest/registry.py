"""The registry of input formats: registration, lookup by name, detection from content, and the checks every
text format makes first (empty, binary, not UTF-8)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import filemap, limits
from ..errors import InputError
from ..models import Workload
from . import compression
from .compression import GZIP_MAGIC, gunzip_chunks
from .dialect import canonical

Parser = Callable[..., "Workload | dict[str, Any]"]  # (data: bytes, name: str, context: Mapping | None) -> Workload
Sniffer = Callable[[str, str], bool]
_P = TypeVar("_P", bound=Parser)  #: a parser as it is registered: its own signature kept


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    parse: Parser
    sniff: Sniffer
    priority: int = 0  #: higher sniffs first (specific formats before generic CSV)
    companion: bool = False  #: context for other inputs (returns a dict), not a workload
    gzip: bool = False  #: the parser reads gzip data itself (streaming); others get it decompressed
    #: the parser takes a large file as a read-only memory map (:mod:`roofcore.filemap`), not only ``bytes``
    mapped: bool = False
    #: what its workload is to a timeline + counters join (:mod:`roofcore.ingest.join`): ``"timeline"`` (real
    #: kernel times, no counters), ``"counters"`` (FLOP/byte counters of sampled or replayed launches), ``"either"``
    #: (per-dispatch rows that are a timeline unless counters were collected), ``""`` (anything else)
    role: str = ""
    #: a binary format's first bytes: such data is one of the formats with these bytes, whatever the sniffers say
    magic: bytes = b""
    #: of the formats sharing a magic, whether the data is this one (else the one of highest priority is taken)
    probe: Callable[[bytes], bool] | None = None


FORMATS: dict[str, Format] = {}


def max_input_bytes() -> int:
    """The input size limit in bytes: ``ROOFCORE_MAX_INPUT_MB`` (default 512 MB; 0 = no limit)."""
    mb = limits.INPUT_MB.value()
    return int(mb * 1e6) if mb else 1 << 62


def register_format(name: str, description: str, sniff: Sniffer, *, priority: int = 0, companion: bool = False,
                    gzip: bool = False, mapped: bool = False, role: str = "", magic: bytes = b"",
                    probe: Callable[[bytes], bool] | None = None) -> Callable[[_P], _P]:
    """Decorator registering ``parse`` under ``name``; a duplicate name is an error. ``mapped``: the parser
    reads a large file given by path from a memory map (``len``, slices, ``find``; see :mod:`roofcore.filemap`).
    ``role``: ``"timeline"``, ``"counters"`` or ``"either"`` for the timeline + counters join (``Format.role``).
    ``magic``, ``probe``: a binary format's first bytes and the check that tells it from others with the same
    (``Format.magic``, ``Format.probe``)."""
    if role not in ("", "timeline", "counters", "either"):
        raise ValueError(f"format {name!r}: role must be timeline, counters or either, not {role!r}")

    def deco(parse: _P) -> _P:
        if name in FORMATS:
            raise ValueError(f"format {name!r} is already registered")
        FORMATS[name] = Format(name, description, parse, sniff, priority, companion, gzip, mapped, role, magic,
                               probe)
        return parse

    return deco


def get_format(name: str) -> Format:
    if name in FORMATS:
        return FORMATS[name]
    close = difflib.get_close_matches(name, list(FORMATS), n=1)
    raise InputError(where="--format", expected="one of " + ", ".join(sorted(FORMATS)), found=repr(name),
                     hint=f"did you mean {close[0]!r}?" if close else "see `roofline formats`.")


_MAGIC = {b"\x89PNG": "a PNG image", b"%PDF": "a PDF document", b"PK\x03\x04": "a zip archive",
          b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image", b"\x1f\x8b": "gzip-compressed data",
          # read as a profiler's database (.sqlite_db: rocpd, nsys) where no text format is forced
          b"SQLite format 3\x00": "an SQLite database",
          # archives whose format is not read (zip and tar are: .archive)
          b"7z\xbc\xaf\x27\x1c": "a 7-Zip archive", b"Rar!\x1a\x07": "a RAR archive"}
#: what to do with such a file, where it is not "is this the right file?"
_UNREAD_ARCHIVE = "extract it, or pack the files as .zip or .tar.gz (read as their folder)."
_MAGIC_HINTS = dict.fromkeys((b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07"), _UNREAD_ARCHIVE)
#: the profilers' own binary reports, by their file name's end: the export a workload is read from
_NSYS_REPORT = ("an Nsight Systems report", "export it as SQLite: nsys export --type sqlite -o STEM.sqlite FILE, and "
                "load STEM.sqlite (every kernel launch, with its NVTX ranges).")
REPORTS = {".ncu-rep": ("an Nsight Compute report", "export it as CSV: ncu --import FILE --csv --page raw "
                        "--print-units base > STEM.csv (or --page details), and load that."),
           ".nsys-rep": _NSYS_REPORT, ".qdrep": _NSYS_REPORT,  # .qdrep: older versions' name for it
           ".xplane.pb": ("an xprof (TensorBoard profiler) trace", "open it in TensorBoard's profiler, export the "
                          "Roofline Model tool's table as CSV, and load that."),
           ".pftrace": ("a Perfetto trace", "load the profiler's own export instead (a PyTorch trace's .json, an "
                        "Nsight or rocprof CSV).")}


def _blank(data: bytes) -> bool:
    if not filemap.is_mapped(data):
        return not data or data.isspace()  # no copy of a large input
    return all(bytes(p).isspace() for p in filemap.pieces(data, 1 << 20))  # a map's pieces: bytes (no copy)


def check_binary(data: bytes, name: str) -> None:
    """Refuse empty and binary files with a clear message (``data``: bytes or a mapped file)."""
    if _blank(data):
        raise InputError(where=name, expected="a workload file (CSV or YAML)", found="an empty file",
                         hint="export again, or check that the right file was chosen.")
    found, hint = None, "is this the right file? A renamed file keeps its content."
    for magic, what in _MAGIC.items():
        if magic == GZIP_MAGIC:
            continue  # decompressed (bounded) before this check: see detect() and _parse()
        if data[:len(magic)] == magic:
            found, hint = f"binary data ({what})", _MAGIC_HINTS.get(magic, hint)
    if found is None and (b"\x00" in data[:8192] or compression.kind(data) not in (None, GZIP_MAGIC)):
        found = "binary data"
    if found is not None:
        report = next((r for end, r in REPORTS.items() if name.lower().endswith(end)), None)
        if report is not None:  # the profiler's own report: how to export what is read
            raise InputError(where=name, expected="a profiler's text export (CSV or JSON)",
                             found=f"{report[0]} (binary)", hint=_command(report[1], name))
        raise InputError(where=name, expected="a text workload file (CSV or YAML)", found=found, hint=hint)


def _command(hint: str, name: str) -> str:
    """A report's export command for the file ``name``: FILE its name, STEM its name without the report's ending
    (quoted where a shell needs it)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    stem = base[:base.rfind(".")] if "." in base else base

    def quoted(s: str) -> str:
        return s if re.fullmatch(r"[\w.+-]+", s) else "'" + s.replace("'", "") + "'"

    for end in (".csv", ".sqlite"):
        hint = hint.replace("STEM" + end, quoted(stem + end))
    return hint.replace("FILE", quoted(base))


def decode_error(data: bytes, name: str, e: UnicodeDecodeError) -> InputError:
    return InputError(where=name, expected="UTF-8 text", found=f"byte 0x{data[e.start]:02x} at offset {e.start}",
                      hint="save the file as UTF-8.")


def check_text(data: bytes, name: str) -> str:
    """Decode ``data`` as UTF-8 text (BOM stripped, newlines normalised), refusing empty and binary files."""
    check_binary(data, name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise decode_error(data, name, e) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def detect(data: bytes, name: str, max_bytes: int | None = None) -> Format:
    """The registered format whose sniffer accepts this content (the file name is only a tie-breaker).

    Gzip data is sniffed on its first decompressed piece (bounded by the input limit)."""
    if data[:2] == GZIP_MAGIC:
        data = next(gunzip_chunks(data, max_bytes or max_input_bytes(), name), b"")
    binary = sorted((f for f in FORMATS.values() if f.magic and data[:len(f.magic)] == f.magic),
                    key=lambda f: -f.priority)
    if binary:  # a binary format: known by its first bytes, then by its probe
        return next((f for f in binary if f.probe is not None and f.probe(data)), binary[0])
    data = canonical(data, name, partial=True)[0]  # a spreadsheet's or shell's re-save: its head, converted
    check_binary(data, name)
    try:
        head = data[:65536].decode("utf-8-sig", errors="strict" if len(data) <= 65536 else "ignore")
    except UnicodeDecodeError as e:
        raise decode_error(data, name, e) from None
    head = head.replace("\r\n", "\n").replace("\r", "\n")
    for fmt in sorted(FORMATS.values(), key=lambda f: -f.priority):
        if fmt.sniff(head, name):
            return fmt
    raise InputError(where=name, expected="a known format: " + ", ".join(sorted(FORMATS)),
                     found="content none of them recognises",
                     hint="see `roofline formats`; force one with --format NAME.")
