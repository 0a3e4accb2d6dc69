"""Alembic's environment for the server's database: the migrations run on the connection that
``grader.server.migrate`` holds, inside its transaction and its lock (``config.attributes["connection"]``), so that
a revision is applied, and recorded, together or not at all."""

from alembic import context

from grader.server.store import metadata

connection = context.config.attributes["connection"]
# Batch mode: SQLite alters a table by copying it, which Alembic does only when asked.
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():  # inside the caller's transaction: Alembic begins and commits none of its own
    context.run_migrations()
