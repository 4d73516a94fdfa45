"""Owners as (issuer, subject); protected runs and gate baselines.

A run's owner becomes the OpenID Connect pair (``owner_issuer``, ``owner_subject``); ``owner`` stays as the label
lists show. Rows saved before keep their ``owner`` text and get no identity: legacy owners, which the first user
whose provider verified that same e-mail takes over (roofcore.store.identity). ``protected`` and
``baseline_used_at`` keep a run from deletion in the app.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("owner_issuer", sa.String(500), nullable=True))
        batch.add_column(sa.Column("owner_subject", sa.String(255), nullable=True))
        batch.add_column(sa.Column("protected", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("baseline_used_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_runs_owner_identity", ["owner_issuer", "owner_subject"])


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_index("ix_runs_owner_identity")
        batch.drop_column("baseline_used_at")
        batch.drop_column("protected")
        batch.drop_column("owner_subject")
        batch.drop_column("owner_issuer")
