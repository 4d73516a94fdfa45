"""Archives read as the folders they hold: a profile is often shared as ``run.zip`` or ``run.tar.gz`` (a
rocprof-compute workload folder, a job's per-rank traces, an Nsight Compute export beside its nsys summary), and a
browser uploads files, not folders.

Zip archives and tar archives, plain or compressed (``.tar.gz``/``.tgz``, ``.tar.bz2``, ``.tar.xz``,
``.tar.zst``: :mod:`.compression`), are known by their content, whatever their name. Each file is one input named
``run.zip/path/in/it.csv``, in name order (numbers counted, as in a folder); folders, links, hidden files and the
``__MACOSX`` copies a Mac adds are skipped. An archive inside an archive is opened too (one level: a job's per-rank
zips zipped together); one nested deeper is left out, as any file that is no profile. The files of an archive,
nested ones included, stay within the input size limit, counted as they are inflated (a member whose header
understates its size is cut at the limit, never held whole), and an archive of more than :data:`MAX_MEMBERS` files
is refused.
"""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
import zlib

from .. import limits
from ..catalog.load import printable
from ..errors import InputError, LimitError, RoofcoreError
from .compression import GZIP_MAGIC, gunzip_bounded, kind, peek, unpacked

ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP = b"PK\x05\x06"  #: an archive with no member at all
TAR_MAGIC = b"ustar"  #: at byte 257 of a tar archive (POSIX ustar, pax and GNU tar all write it)
MAX_MEMBERS = 10_000
#: archives opened inside an archive (1: run.zip holding rank0.zip is read; a zip in that one is left out)
MAX_NESTING = 1
_HIDDEN = re.compile(r"(^|/)(\.|__MACOSX/)")
_PIECE = 1 << 22


def is_zip(data: bytes) -> bool:
    return bytes(data[:4]) in (ZIP_MAGIC, EMPTY_ZIP)


def _is_tar(data: bytes) -> bool:
    return bytes(data[257:262]) == TAR_MAGIC


def is_archive(head: bytes) -> bool:
    """Whether ``head`` (a file, or its first bytes: a MB is plenty) begins a zip archive or a tar archive, plain or
    compressed (only the head of a compressed one is decompressed)."""
    if is_zip(head) or _is_tar(head):
        return True
    return kind(head) is not None and _is_tar(peek(head, 512))


def what(data: bytes) -> str:
    """``zip archive`` or ``tar archive``, as messages name it."""
    return "zip archive" if is_zip(data) else "tar archive"


def _natural(name: str) -> list[int | str]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", name)]


class _Budget:
    """The bytes an archive's files (those of the archives inside it too) inflate to, against the input limit."""

    def __init__(self, label: str, limit: int) -> None:
        self.label, self.limit, self.used = label, limit, 0

    def count(self, n: int, holder: str) -> None:
        self.used += n
        if self.used > self.limit:
            raise LimitError(f"{self.label}: the {holder}'s files expand beyond the input size limit of "
                             f"{self.limit / 1e6:,.0f} MB ({limits.INPUT_MB.env}; a guard against decompression "
                             f"bombs). {limits.INPUT_MB.hint()}")
        limits.tick()


def members(data: bytes, label: str, max_bytes: int, nesting: int = MAX_NESTING, budget: _Budget | None = None,
            failed: list[InputError] | None = None) -> list[tuple[bytes, str]]:
    """The files in the archive ``data`` (:func:`is_archive`) as ``(bytes, "label/member")``, in name order, an
    archive among them by its files (``nesting`` levels deep); an :class:`InputError` for a damaged or encrypted
    archive or one with no file, a :class:`LimitError` beyond the input size limit or :data:`MAX_MEMBERS`.

    With ``failed``, what cannot be read among readable files is left out and its error added there (a zip member
    whose data is damaged or encrypted, an archive inside that is damaged): the rest is read, and only an archive
    with nothing readable is an error."""
    budget = budget or _Budget(label, max_bytes)
    if is_zip(data):
        out = _zip_members(data, label, budget, failed)
    else:
        plain = unpacked(data, max_bytes, label)
        if kind(plain) == GZIP_MAGIC:  # left for the readers that stream it, but a tar needs its bytes
            plain = gunzip_bounded(plain, max_bytes, label)
        out = _tar_members(plain, label, budget, failed)
    nested = [nesting > 0 and is_archive(m) for m, _ in out]  # looked at once: a compressed one is peeked into
    if not any(nested):
        return out
    opened: list[tuple[bytes, str]] = []
    mine: list[InputError] = []
    for (m, name), inner in zip(out, nested, strict=True):
        try:
            opened += members(m, name, max_bytes, nesting - 1, budget, failed) if inner else [(m, name)]
        except InputError as e:  # a damaged archive inside: left out where the others are read
            if failed is None:
                raise
            mine.append(e)
        if len(opened) > MAX_MEMBERS:
            raise _too_many(budget.label, "archive, with the archives in it,", len(opened))
    return _settled(opened, mine, failed)


def _settled(out: list[tuple[bytes, str]], mine: list[InputError], failed: list[InputError] | None
             ) -> list[tuple[bytes, str]]:
    """``out``, an archive's readable files, with ``mine``, what of it could not be read, added to ``failed``; the
    first of ``mine`` raised where nothing was readable or nothing may be left out (no ``failed``)."""
    if mine and (failed is None or not out):
        raise mine[0]
    if failed is not None:
        failed.extend(mine)
    return out


#: what could not be read among files that could: (its error, what held it: "folder", "zip archive", …)
Failed = list[tuple[InputError, str]]


def unread_note(failed: Failed) -> str:
    """The warning that names what was left out unread (:func:`members`' ``failed``, a damaged archive in a folder)."""
    said = [f"{e.where} ({(e.found or e.text or 'not readable').rstrip('.')})" for e, _ in failed]
    kinds = " or ".join(sorted({k for _, k in failed}))
    return (f"Left out {len(said)} unreadable file(s) or archive(s) of the {kinds}, the rest read: " + "; ".join(said[:5])
            + (f" and {len(said) - 5} more." if len(said) > 5 else ".")
            + " Hint: copy them again, or unpack them and load the files.")


def _too_many(label: str, holder: str, n: int) -> LimitError:
    return LimitError(f"{label}: the {holder} holds {n:,} files, more than the {MAX_MEMBERS:,} read from one archive. "
                      "Hint: pack the profile's own files, or unpack it and name them.")


def _zip_members(data: bytes, label: str, budget: _Budget, failed: list[InputError] | None
                 ) -> list[tuple[bytes, str]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError) as e:
        raise InputError(where=label, text=f"not a readable zip archive ({e}: a truncated or partial copy?).",
                         hint="copy the archive again, or unzip it and load the files.") from None
    with archive:
        infos = sorted((i for i in archive.infolist() if not i.is_dir() and not _HIDDEN.search(i.filename)),
                       key=lambda i: _natural(i.filename))
        if not infos:
            raise InputError(where=label, text="the zip archive holds no files to read.",
                             hint="zip the profile's files themselves (or their folder).")
        if len(infos) > MAX_MEMBERS:
            raise _too_many(label, "zip archive", len(infos))
        out: list[tuple[bytes, str]] = []
        mine: list[InputError] = []
        for info in infos:
            name = f"{label}/{printable(info.filename)}"
            try:
                with archive.open(info) as fh:
                    pieces = []
                    while piece := fh.read(_PIECE):
                        budget.count(len(piece), "zip archive")
                        pieces.append(piece)
            except RoofcoreError:  # the size limit, the parse time: as they are
                raise
            except RuntimeError as e:  # encrypted: zipfile asks for a password
                error = InputError(where=name, text=f"cannot be read from the archive ({e}).",
                                   hint="zip the files without a password.")
            except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, ValueError, zlib.error) as e:
                error = InputError(where=name, text=f"cannot be read from the archive ({e}).",
                                   hint="copy the archive again, or unzip it and load the files.")
            else:
                out.append((b"".join(pieces), name))
                continue
            if failed is None:
                raise error
            mine.append(error)
    return _settled(out, mine, failed)


_TAR_HINT = "copy the archive again, or unpack it and load the files."


def _tar_members(data: bytes, label: str, budget: _Budget, failed: list[InputError] | None
                 ) -> list[tuple[bytes, str]]:
    """A tar archive's regular files (``data`` decompressed already, so within the limit whole). With ``failed``,
    an archive cut short gives the files before the cut, and the cut (and a file it shortened) goes there."""
    bad = "not a readable tar archive ({}: a truncated or partial copy?)."
    mine: list[InputError] = []  # this archive's: raised if it leaves nothing readable
    cut: Exception | None = None
    try:
        # a name whose bytes are not UTF-8 gets U+FFFD for each (never lone surrogates: no output takes them)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:", encoding="utf-8", errors="replace") as archive:
            infos: list[tuple[str, tarfile.TarInfo]] = []
            try:
                for info in archive:
                    name = printable(info.name.removeprefix("./"))
                    if info.isfile() and name and not _HIDDEN.search(name):
                        infos.append((name, info))
                        if len(infos) > MAX_MEMBERS:
                            raise _too_many(label, "tar archive", len(infos))
                    limits.tick()
            except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeError) as e:
                if not infos or failed is None:
                    raise
                cut = e  # the files before the cut are read; nothing readable: the archive's own message
                mine.append(InputError(where=label, text=f"the tar archive ends early ({e}): what followed "
                                       f"{infos[-1][0]} is missing (a truncated or partial copy?)."))
            if not infos:
                raise InputError(where=label, text="the tar archive holds no files to read.",
                                 hint="pack the profile's files themselves (or their folder).")
            out: list[tuple[bytes, str]] = []
            for name, info in sorted(infos, key=lambda t: _natural(t[0])):
                try:
                    fh = archive.extractfile(info)
                    body = fh.read() if fh is not None else b""
                except (tarfile.TarError, OSError, EOFError):  # its data runs past the end
                    if failed is None:
                        raise
                    body = b""
                if len(body) != info.size:
                    mine.append(InputError(where=f"{label}/{name}", text="the file ends early in the tar archive "
                                           "(a truncated or partial copy?).", hint="copy the archive again."))
                    continue
                budget.count(len(body), "tar archive")
                out.append((body, f"{label}/{name}"))
    except RoofcoreError:
        raise
    except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeError) as e:
        raise InputError(where=label, text=bad.format(e), hint=_TAR_HINT) from None
    if cut is not None and not out:
        raise InputError(where=label, text=bad.format(cut), hint=_TAR_HINT)
    return _settled(out, mine, failed)


__all__ = ["EMPTY_ZIP", "MAX_MEMBERS", "MAX_NESTING", "TAR_MAGIC", "ZIP_MAGIC", "Failed", "is_archive", "is_zip", "members",
           "unread_note", "what"]
