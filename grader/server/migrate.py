"""The server database's schema revisions: Alembic's migrations in ``grader/server/migrations``, configured here (no
``alembic.ini``), run when the server opens its database (``Store.migrate``: ``gradekit serve init``, ``serve
roster import`` and ``serve run``) and said by ``gradekit serve db status``.

Opening a database, in one transaction under one lock (``upgrade``):

- no revision and none of the server's tables: a new database, made by the migrations from the first revision;
- no revision and every table of the first revision: a database made before the server kept revisions (its code
  made the tables with ``metadata.create_all``, which is the first revision's schema): marked as the first revision,
  nothing in it made again, then upgraded like any other;
- a revision this code knows: upgraded to the newest, if it is not there already;
- a revision this code does not know (a newer gradekit migrated it) or only some of the tables: refused with a
  ``StoreError`` that says what was found, and nothing is changed.

The lock: on SQLite the transaction begins with ``BEGIN IMMEDIATE`` (the database's write lock); on PostgreSQL it
first takes a transaction-level advisory lock (its tables are made in the transaction, which PostgreSQL's DDL
allows). A second process opening the database at once waits, then reads the revision the first recorded. Other
databases get the transaction without the lock.

``python -m grader.server.migrate revision "MESSAGE"`` (for developers) writes the next revision from the difference
between the tables in ``store.py`` and a database at the newest revision.
"""

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from grader.messages import text
from grader.server.database import IMMEDIATE, StoreError, make_engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
FIRST = "0001"
"""The first revision: the schema the server made before it kept revisions."""
FIRST_TABLES = ("students", "instructors", "submissions")
"""The tables of the first revision, which a database made before revisions has."""
LOCK_KEY = 0x6772616465  # "grade": PostgreSQL's advisory locks are named by a number; any fixed one will do


class SchemaTooNew(StoreError):
    """The database is at a revision this gradekit does not know: a newer one migrated it."""


def said_url(url):
    """The database URL without its password, for saying."""
    return sa.engine.make_url(url).render_as_string(hide_password=True)


def config(connection=None):
    """Alembic's configuration of the server's migrations, built here rather than read from an ``alembic.ini``;
    ``connection``: the one ``migrations/env.py`` runs them on."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))  # the value is interpolated
    cfg.set_main_option("path_separator", "os")  # version_locations split as the system splits paths
    cfg.attributes["connection"] = connection
    return cfg


def scripts():
    return ScriptDirectory.from_config(config())


def head():
    """The newest revision this gradekit knows."""
    return scripts().get_current_head()


@dataclass(frozen=True)
class State:
    """What a database holds: ``found``, the revisions it records (none before its first migration); ``tables``,
    which of the first revision's tables it has; ``head``, the newest revision this gradekit knows; ``unknown``,
    the revisions found that it does not know."""

    found: tuple
    tables: tuple
    head: str
    unknown: tuple

    @property
    def legacy(self):
        """Made before the server kept revisions: no revision, and every table the first revision makes."""
        return not self.found and set(self.tables) == set(FIRST_TABLES)

    @property
    def partial(self):
        """No revision and only some of the first revision's tables: not a database this server made."""
        return not self.found and bool(self.tables) and not self.legacy

    @property
    def current(self):
        return not self.unknown and self.found == (self.head,)


def _state(conn):
    """The ``State`` of the database ``conn`` is connected to."""
    script = scripts()
    found = tuple(sorted(MigrationContext.configure(conn).get_current_heads()))
    names = set(sa.inspect(conn).get_table_names())
    known = {rev.revision for rev in script.walk_revisions()}
    return State(
        found=found,
        tables=tuple(t for t in FIRST_TABLES if t in names),
        head=script.get_current_head(),
        unknown=tuple(r for r in found if r not in known),
    )


def refusal(state, url, lang):
    """The error for a database this code cannot use, or ``None``."""
    if state.unknown:
        return SchemaTooNew(
            text("server.db.too_new", lang, database=said_url(url), found=", ".join(state.found), head=state.head)
        )
    if state.partial:
        missing = [t for t in FIRST_TABLES if t not in state.tables]
        return StoreError(
            text(
                "server.db.partial",
                lang,
                database=said_url(url),
                found=", ".join(state.tables),
                missing=", ".join(missing),
            )
        )
    return None


@dataclass(frozen=True)
class Migrated:
    """What opening a database did: the revisions it was at (``found``; none for a new or a legacy one), whether it
    was a legacy one marked as the first revision (``stamped``), and the revision it is at now (``now``)."""

    found: tuple
    stamped: bool
    now: str

    @property
    def start(self):
        """The revisions the database was at before its upgrade: none for a new one, the first for a legacy one."""
        return self.found or ((FIRST,) if self.stamped else ())

    @property
    def upgraded(self):
        """Whether an existing database's schema changed (a new one's making is not an upgrade)."""
        return bool(self.start) and self.start != (self.now,)


def upgrade(engine, url, lang="en"):
    """Bring the database of ``engine`` (at ``url``, for saying) to the newest revision, under the lock; what it did
    (``Migrated``). ``StoreError`` (``SchemaTooNew`` for a newer database), changing nothing, when it cannot."""
    try:
        return _upgrade(engine, url, lang)
    except sa.exc.SQLAlchemyError as exc:  # the database away, or locked past the wait: said, not a traceback
        raise StoreError(text("server.db.unreachable", lang, database=said_url(url), error=exc)) from exc


def _upgrade(engine, url, lang):
    with engine.connect().execution_options(**{IMMEDIATE: True}) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
        state = _state(conn)
        refused = refusal(state, url, lang)
        if refused is not None:
            raise refused
        cfg = config(conn)
        if state.legacy:
            command.stamp(cfg, FIRST)
        if not state.current:
            command.upgrade(cfg, "head")
        return Migrated(found=state.found, stamped=state.legacy, now=state.head)


def status(url, lang="en"):
    """The ``State`` of the database at ``url``, read without changing it (a SQLite file that does not exist is not
    made); ``StoreError`` when it cannot be read."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and not Path(parsed.database).exists():
        return State(found=(), tables=(), head=head(), unknown=())
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return _state(conn)
    except sa.exc.SQLAlchemyError as exc:
        raise StoreError(text("server.db.unreachable", lang, database=said_url(url), error=exc)) from exc
    finally:
        engine.dispose()


def new_revision(message, into=None):
    """Write the next revision, numbered after the newest, with the operations Alembic's autogenerate finds between
    the tables in ``store.py`` and a database at the newest revision (made in a scratch folder); its path. It goes
    to ``migrations/versions``, or to the folder ``into``."""
    cfg = config()
    if into is not None:
        locations = os.pathsep.join([str(MIGRATIONS / "versions"), str(into)])
        cfg.set_main_option("version_locations", locations.replace("%", "%%"))
    number = f"{int(head()) + 1:04d}"
    with tempfile.TemporaryDirectory() as scratch:
        url = f"sqlite:///{Path(scratch) / 'scratch.db'}"
        engine = make_engine(url)
        try:
            upgrade(engine, url)
            with engine.connect() as conn:
                cfg.attributes["connection"] = conn
                script = command.revision(
                    cfg, message=message, autogenerate=True, rev_id=number, version_path=into and str(into)
                )
        finally:
            engine.dispose()
    if script is None or isinstance(script, list):  # one linear history: one revision is written
        raise RuntimeError(f"Alembic wrote no single revision: {script!r}")
    return Path(script.path)


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m grader.server.migrate", description="the course server database's schema revisions"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rev = sub.add_parser("revision", help="write the next revision from the tables in grader/server/store.py")
    rev.add_argument("message", help="why the schema changes (the revision's first line)")
    args = parser.parse_args(argv)
    print(new_revision(args.message))
    return 0


if __name__ == "__main__":
    sys.exit(main())
