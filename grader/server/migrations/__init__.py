"""The course server database's schema revisions, run by Alembic (``grader.server.migrate``).

``versions/`` holds one file per revision, oldest first by its number; the server upgrades its database to the
newest when it opens it. A change to the tables in ``grader/server/store.py`` needs a revision here, else the
database the server made and the tables the code expects differ (``tests/unit/test_server_migrations.py`` compares
them): edit the tables, then run ``python -m grader.server.migrate revision "why the schema changes"``, which writes
the next revision from the difference for you to read and correct (Alembic's autogenerate misses renames, and
guesses server defaults and types only where it can). A revision that has been released is never edited: the next
change is a new one.

Revisions run in batch mode (``env.py``): SQLite changes a column by copying its table. The server's connections
enforce foreign keys, so copying a table others reference (``students``) fails while they are on, and SQLite turns
them off only outside a transaction: a revision that needs it needs ``migrate.upgrade`` to turn them off before its
transaction begins (and to check them after). No revision copies such a table yet.
"""
