"""The run database's tables (SQLAlchemy 2 declarative models). The schema itself is created and changed only by
the Alembic migrations in ``migrations/versions`` (run by :func:`roofcore.store.migrate.upgrade`); these models
must match the latest one (``tests/test_store.py`` checks it)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

#: who may see a run: its owner only, or everyone in the app (see ``Viewer``)
VISIBILITIES = ("private", "project")


class Base(DeclarativeBase):
    pass


class RunRow(Base):
    """One saved run: what was uploaded (``files``), how it was looked at (devices, options) and by whom."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  #: secrets.token_urlsafe: unguessable
    project: Mapped[str] = mapped_column(String(100))
    name: Mapped[str] = mapped_column(String(200))
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    #: what lists show for the owner (None: saved without one, e.g. by a pipeline). Never used for access: the
    #: owner is (owner_issuer, owner_subject); a label without them is a legacy owner (see roofcore.store.identity)
    owner: Mapped[str | None] = mapped_column(String(320), nullable=True)
    owner_issuer: Mapped[str | None] = mapped_column(String(500), nullable=True)  #: the ID token's iss
    owner_subject: Mapped[str | None] = mapped_column(String(255), nullable=True)  #: the ID token's sub
    #: kept from deletion in the app (``roofline save --protect``)
    protected: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: when ``roofline check --baseline run:ID`` last used it as its baseline: kept from deletion in the app too
    baseline_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    visibility: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))  #: UTC
    devices: Mapped[list[str]] = mapped_column(JSON, default=list)  #: catalog ids, in the order chosen
    custom_devices: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)  #: id -> catalog YAML (session devices)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  #: format, combine, achievable, page
    kernels: Mapped[int] = mapped_column(Integer)  #: rows read when saved (the analysis is recomputed on open)
    formats: Mapped[list[str]] = mapped_column(JSON, default=list)
    profiled_on: Mapped[str | None] = mapped_column(String(200), nullable=True)  #: the device the profile names
    size: Mapped[int] = mapped_column(BigInteger)  #: bytes of the files as uploaded
    stored: Mapped[int] = mapped_column(BigInteger)  #: bytes of the files as stored (compressed)

    files: Mapped[list[FileRow]] = relationship(back_populates="run", order_by="FileRow.position",
                                                cascade="all, delete-orphan", passive_deletes=True)

    __table_args__ = (
        CheckConstraint("visibility IN ('private', 'project')", name="ck_runs_visibility"),
        Index("ix_runs_project_created", "project", "created_at"),
        Index("ix_runs_owner", "owner"),
        Index("ix_runs_owner_identity", "owner_issuer", "owner_subject"),
    )


class FileRow(Base):
    """One uploaded file of a run, gzip-compressed (unless it already was), with the SHA-256 of its bytes."""

    __tablename__ = "run_files"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), ForeignKey("runs.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(500))
    size: Mapped[int] = mapped_column(BigInteger)  #: bytes as uploaded
    sha256: Mapped[str] = mapped_column(String(64))  #: of the bytes as uploaded
    encoding: Mapped[str] = mapped_column(String(16))  #: "gzip" (compressed here) or "identity"
    data: Mapped[bytes] = mapped_column(LargeBinary)

    run: Mapped[RunRow] = relationship(back_populates="files")

    __table_args__ = (Index("ux_run_files_run_position", "run_id", "position", unique=True),)
