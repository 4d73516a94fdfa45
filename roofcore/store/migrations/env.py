"""Alembic environment for the run database. Run only through roofcore.store.migrate, which hands over an open
connection inside a transaction (``config.attributes["connection"]``): the whole upgrade commits or none of it."""

from alembic import context

from roofcore.store.schema import Base

connection = context.config.attributes.get("connection")
if connection is None:  # e.g. `alembic upgrade` run by hand: refuse rather than guess a URL
    raise RuntimeError("run the run database's migrations with roofcore.store (they open the database themselves)")

context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                  transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
