"""What the run store hands out: a run's description (:class:`RunInfo`, no file contents), its files'
descriptions, and a run with its files' bytes (:class:`SavedRun`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ingest import read_many
from ..models import Workload
from .identity import Owner


@dataclass(frozen=True)
class FileInfo:
    name: str
    size: int  #: bytes as uploaded
    sha256: str


@dataclass(frozen=True)
class RunInfo:
    """A saved run's description (no file contents)."""

    id: str
    project: str
    name: str
    tags: tuple[str, ...]
    owner: Owner | None  #: None: saved without an owner (a pipeline); its ``label`` is what lists show
    visibility: str
    created_at: dt.datetime  #: UTC
    devices: tuple[str, ...]
    custom_devices: Mapping[str, str]
    options: Mapping[str, object]
    kernels: int
    formats: tuple[str, ...]
    profiled_on: str | None
    size: int
    stored: int
    files: tuple[FileInfo, ...] = ()
    protected: bool = False  #: saved with ``roofline save --protect``
    baseline_used_at: dt.datetime | None = None  #: when a ``roofline check`` last used it as its baseline

    @property
    def kept(self) -> str | None:
        """Why the app may not delete it (``None``: it may, by the :class:`Viewer` rule)."""
        if self.protected:
            return "it is protected (saved with `roofline save --protect`)"
        if self.baseline_used_at is not None:
            return (f"it is the baseline of a CI gate (`roofline check --baseline run:{self.id}` used it on "
                    f"{self.baseline_used_at:%Y-%m-%d %H:%M} UTC)")
        return None

    @property
    def link(self) -> str:
        """The query string that opens this run in the app (``?run=<id>``)."""
        return f"?run={self.id}"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "project": self.project, "name": self.name, "tags": list(self.tags),
                "owner": None if self.owner is None else {"label": self.owner.label, "issuer": self.owner.issuer,
                                                          "subject": self.owner.subject},
                "protected": self.protected, "baseline_used_at": None if self.baseline_used_at is None
                else self.baseline_used_at.isoformat(),
                "visibility": self.visibility, "created_at": self.created_at.isoformat(),
                "devices": list(self.devices), "options": dict(self.options), "kernels": self.kernels,
                "formats": list(self.formats), "profiled_on": self.profiled_on, "size": self.size,
                "stored": self.stored, "files": [f.__dict__ for f in self.files], "link": self.link}


@dataclass(frozen=True)
class SavedRun:
    """A run with its files' bytes, as uploaded (checked against their SHA-256)."""

    info: RunInfo
    files: tuple[tuple[bytes, str], ...] = field(repr=False)

    def workload(self) -> Workload:
        """The workload read again from the stored files with today's parsers (the analysis is never frozen)."""
        fmt = self.info.options.get("format")
        return read_many(self.files, fmt=fmt if isinstance(fmt, str) and fmt else None, together=True)  # as saved


__all__ = ["FileInfo", "RunInfo", "SavedRun"]
