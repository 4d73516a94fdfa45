"""Runs and their files.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("project", sa.String(100), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("owner", sa.String(320), nullable=True),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("devices", sa.JSON(), nullable=False),
        sa.Column("custom_devices", sa.JSON(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("kernels", sa.Integer(), nullable=False),
        sa.Column("formats", sa.JSON(), nullable=False),
        sa.Column("profiled_on", sa.String(200), nullable=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("stored", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("visibility IN ('private', 'project')", name="ck_runs_visibility"),
    )
    op.create_index("ix_runs_project_created", "runs", ["project", "created_at"])
    op.create_index("ix_runs_owner", "runs", ["owner"])
    op.create_table(
        "run_files",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("encoding", sa.String(16), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ux_run_files_run_position", "run_files", ["run_id", "position"], unique=True)


def downgrade() -> None:
    op.drop_index("ux_run_files_run_position", table_name="run_files")
    op.drop_table("run_files")
    op.drop_index("ix_runs_owner", table_name="runs")
    op.drop_index("ix_runs_project_created", table_name="runs")
    op.drop_table("runs")
