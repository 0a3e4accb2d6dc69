"""The server's database connection, below both the store and the schema's revisions (``grader.server.migrate``):
the engine of a URL, the lock a transaction may take at once, and the error a store or a revision raises."""

import sqlalchemy as sa


class StoreError(Exception):
    """The data folder or the database cannot be used; the message says which and why."""


IMMEDIATE = "gradekit_immediate"
"""An execution option: on SQLite, the transaction of a connection that has it set begins with ``BEGIN IMMEDIATE``
(it takes the database's write lock at once), so that what it reads cannot change before it writes."""


def make_engine(url):
    """The SQLAlchemy engine of ``url``; SQLite in write-ahead-log mode, each commit synced (``synchronous=FULL``),
    waiting for a lock rather than failing. A connection with the ``IMMEDIATE`` option begins its transaction
    with ``BEGIN IMMEDIATE``; any other is begun by the driver, at its first write (a read before it takes no
    lock and fails no later write)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(conn, _record):
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @sa.event.listens_for(engine, "begin")
        def _begin(conn):
            if conn.get_execution_options().get(IMMEDIATE):  # the driver then sees a transaction and begins none
                conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return sa.create_engine(url, pool_pre_ping=True)
