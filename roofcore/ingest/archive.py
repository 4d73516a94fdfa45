"""Zip archives read as the folders they hold: a profile is often shared as ``run.zip`` (a rocprof-compute
workload folder, a job's per-rank traces, an Nsight Compute export beside its nsys summary), and a browser
uploads files, not folders.

Each member is one input named ``run.zip/path/in/it.csv``, in name order (numbers counted, as in a folder);
folders, hidden files and the ``__MACOSX`` copies a Mac adds are skipped. The archive's members together stay
within the input size limit, counted as they are inflated (a member whose header understates its size is cut at
the limit, never held whole), and an archive of more than :data:`MAX_MEMBERS` files is refused. A zip archive in
a folder is opened too, a zip inside a zip is not (it is left out, as any file that is no profile).
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib

from .. import limits
from ..errors import InputError, LimitError, RoofcoreError

ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP = b"PK\x05\x06"  #: an archive with no member at all
MAX_MEMBERS = 10_000
_HIDDEN = re.compile(r"(^|/)(\.|__MACOSX/)")
_PIECE = 1 << 22


def is_zip(data: bytes) -> bool:
    return bytes(data[:4]) in (ZIP_MAGIC, EMPTY_ZIP)


def _natural(name: str) -> list[int | str]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", name)]


def members(data: bytes, label: str, max_bytes: int) -> list[tuple[bytes, str]]:
    """The files in the zip archive ``data`` as ``(bytes, "label/member")``, in name order; an
    :class:`InputError` for a damaged or encrypted archive or one with no file, a :class:`LimitError` beyond the
    input size limit or :data:`MAX_MEMBERS`."""
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
            raise LimitError(f"{label}: the zip archive holds {len(infos):,} files, more than the {MAX_MEMBERS:,} "
                             "read from one archive. Hint: zip the profile's own files, or unzip it and name them.")
        out: list[tuple[bytes, str]] = []
        total = 0
        for info in infos:
            name = f"{label}/{info.filename}"
            try:
                with archive.open(info) as fh:
                    pieces = []
                    while piece := fh.read(_PIECE):
                        total += len(piece)
                        if total > max_bytes:
                            raise LimitError(
                                f"{label}: the zip archive's files expand beyond the input size limit of "
                                f"{max_bytes / 1e6:,.0f} MB ({limits.INPUT_MB.env}; a guard against "
                                f"decompression bombs). {limits.INPUT_MB.hint()}")
                        pieces.append(piece)
                        limits.tick()
            except RoofcoreError:  # the size limit, the parse time: as they are
                raise
            except RuntimeError as e:  # encrypted: zipfile asks for a password
                raise InputError(where=name, text=f"cannot be read from the archive ({e}).",
                                 hint="zip the files without a password.") from None
            except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, ValueError, zlib.error) as e:
                raise InputError(where=name, text=f"cannot be read from the archive ({e}).",
                                 hint="copy the archive again, or unzip it and load the files.") from None
            out.append((b"".join(pieces), name))
    return out


__all__ = ["EMPTY_ZIP", "MAX_MEMBERS", "ZIP_MAGIC", "is_zip", "members"]
