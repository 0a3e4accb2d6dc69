"""The course database's schema revisions (``grader.server.migrate``, Alembic): a new database made by them equals
the tables the code defines; a database made before revisions is marked as the first, its rows kept; one at the
first revision upgraded to the newest, its rows kept; one from a newer gradekit is refused, and the server does not
start; two processes opening a new database at once migrate it once; ``serve db status`` in English and Chinese;
the developer's next revision written from a table edit. The same on PostgreSQL (``tests/postgres.py``: a server of
the tests' own, or the database ``GRADEKIT_TEST_POSTGRES`` names)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("sqlalchemy", reason="the server's packages are not installed: pip install -e '.[server]'")
pytest.importorskip("alembic", reason="the server's packages are not installed: pip install -e '.[server]'")

import sqlalchemy as sa  # noqa: E402
from alembic import command  # noqa: E402
from alembic.autogenerate import compare_metadata  # noqa: E402
from alembic.runtime.migration import MigrationContext  # noqa: E402

from grader.server import migrate  # noqa: E402
from grader.server import store as store_module  # noqa: E402
from grader.server.store import Store, StoreError  # noqa: E402
from tests.server_helpers import ROOT, env, gradekit  # noqa: E402


def _differences(engine, metadata=None):
    """What Alembic's autogenerate finds between the database and the tables (``store.metadata``): ``[]`` when
    they agree."""
    with engine.connect() as conn:
        return compare_metadata(MigrationContext.configure(conn), metadata or store_module.metadata)


def _revisions(engine):
    with engine.connect() as conn:
        return conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()


def _ddl(engine):
    """SQLite's own text of every table and index but Alembic's, by name."""
    with engine.connect() as conn:
        return conn.exec_driver_sql(
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name != 'alembic_version' ORDER BY name"
        ).all()


BEFORE = sa.MetaData()
"""The tables as the server defined them before it kept revisions, copied from its ``store.py`` then: a database of
that time is their ``create_all``, whatever the tables become."""
sa.Table(
    "students",
    BEFORE,
    sa.Column("id", sa.String(128), primary_key=True),
    sa.Column("name", sa.Text, nullable=False, default=""),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created", sa.Float, nullable=False),
)
sa.Table(
    "instructors",
    BEFORE,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created", sa.Float, nullable=False),
)
sa.Table(
    "submissions",
    BEFORE,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("student", sa.String(128), sa.ForeignKey("students.id"), nullable=False, index=True),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(8), nullable=False),
    sa.Column("files", sa.Text, nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("submitted", sa.Float, nullable=False, index=True),
    sa.Column("late", sa.Boolean, nullable=False, default=False),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("score", sa.Float),
    sa.Column("max_score", sa.Float),
    sa.Column("verdict", sa.String(16)),
    sa.Column("reason", sa.Text, nullable=False, default=""),
    sa.Column("grading", sa.String(64)),
    sa.Column("graded", sa.Float),
    sa.UniqueConstraint("student", "number"),
)


def _pre_migration(engine):
    """A database as the server made it before it kept revisions (``create_all`` of its tables then) with a student
    and a submission in it."""
    BEFORE.create_all(engine)
    _first_rows(engine)


def _first_rows(engine):
    """A student and a submission, in a database of the first revision's schema."""
    students, submissions = BEFORE.tables["students"], BEFORE.tables["submissions"]
    with engine.begin() as conn:
        conn.execute(students.insert().values(id="alice", name="Alice", token_hash="h" * 64, created=1.0))
        conn.execute(
            submissions.insert().values(
                student="alice",
                number=1,
                kind="py",
                files='["masks.py"]',
                size=6,
                submitted=2.0,
                late=False,
                status="done",
                attempts=1,
                score=7.5,
                reason="",
            )
        )


def _kept(engine):
    with engine.connect() as conn:
        students = conn.execute(sa.select(store_module.students.c.id, store_module.students.c.name)).all()
        subs = conn.execute(sa.select(store_module.submissions.c.student, store_module.submissions.c.score)).all()
    return students, subs


@pytest.fixture
def new(tmp_path):
    """The store of a data folder whose database does not exist yet."""
    s = Store(tmp_path / "data")
    s.data.mkdir()
    yield s
    s.engine.dispose()


def test_a_new_database_is_made_by_the_revisions_as_the_tables_define_it(new):
    done = new.migrate()
    assert (done.found, done.stamped, done.now, done.upgraded) == ((), False, migrate.head(), False)
    assert _revisions(new.engine) == [migrate.head()]
    assert _differences(new.engine) == []
    again = new.migrate()  # opened again: nothing to do
    assert (again.found, again.upgraded) == ((migrate.head(),), False)
    assert _revisions(new.engine) == [migrate.head()]


def test_a_table_edit_without_a_revision_differs_and_the_next_revision_is_written_from_it(new, tmp_path, monkeypatch):
    """The comparison above catches a change of the tables that no revision makes; the developer's
    ``python -m grader.server.migrate revision`` writes the revision that makes it."""
    edited = sa.MetaData()
    for table in store_module.metadata.tables.values():
        table.to_metadata(edited)
    sa.Table("submissions", edited, sa.Column("note", sa.Text), extend_existing=True)
    new.migrate()
    (difference,) = _differences(new.engine, edited)
    assert difference[0] == "add_column" and difference[3].name == "note"

    monkeypatch.setattr(store_module, "metadata", edited)  # what migrations/env.py compares with
    versions = tmp_path / "versions"
    versions.mkdir()
    path = migrate.new_revision("a note on each submission", into=versions)
    assert path.parent == versions and path.name.startswith(f"{int(migrate.head()) + 1:04d}_")
    written = path.read_text()
    assert "add_column" in written and "'note'" in written and f"down_revision = {migrate.head()!r}" in written

    cfg = migrate.config()
    cfg.set_main_option("version_locations", os.pathsep.join([str(migrate.MIGRATIONS / "versions"), str(versions)]))
    with new.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    assert _differences(new.engine, edited) == []


def test_the_first_revision_makes_what_the_code_before_revisions_made(new, tmp_path):
    cfg = migrate.config()
    with new.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, migrate.FIRST)
    before = sa.create_engine(f"sqlite:///{tmp_path / 'before.db'}")
    try:
        _pre_migration(before)
        assert _ddl(new.engine) == _ddl(before)
        assert [name for _, name, _ in _ddl(before) if name.startswith("ix_")] == [
            "ix_submissions_status",
            "ix_submissions_student",
            "ix_submissions_submitted",
        ]
    finally:
        before.dispose()
    with new.engine.begin() as conn:  # and its downgrade takes all of it away
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "base")
    assert sa.inspect(new.engine).get_table_names() == ["alembic_version"]


def test_a_database_made_before_revisions_is_marked_not_made_again(new):
    _pre_migration(new.engine)
    assert migrate.status(new.url).legacy
    done = new.migrate()
    assert done.stamped and done.found == () and done.now == migrate.head()
    assert _revisions(new.engine) == [migrate.head()]
    assert _kept(new.engine) == ([("alice", "Alice")], [("alice", 7.5)])
    assert _differences(new.engine) == []


def test_a_database_at_the_first_revision_is_upgraded_its_rows_kept(new):
    """A database a server of the first revision made and used (a student, a submission) upgrades to the newest:
    the ended sessions' table made, every row kept, the schema the tables' own; the downgrade to the first takes
    that table away again and leaves the rows."""
    cfg = migrate.config()
    with new.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, migrate.FIRST)
    _first_rows(new.engine)
    assert "ended_sessions" not in sa.inspect(new.engine).get_table_names()
    done = new.migrate()
    assert (done.found, done.stamped, done.now, done.upgraded) == ((migrate.FIRST,), False, migrate.head(), True)
    assert _revisions(new.engine) == [migrate.head()] and _differences(new.engine) == []
    assert _kept(new.engine) == ([("alice", "Alice")], [("alice", 7.5)])
    assert "ix_ended_sessions_expires" in {name for _, name, _ in _ddl(new.engine)}
    with new.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, migrate.FIRST)
    assert "ended_sessions" not in sa.inspect(new.engine).get_table_names()
    assert _kept(new.engine) == ([("alice", "Alice")], [("alice", 7.5)])


def test_a_database_from_a_newer_gradekit_is_refused_and_left_as_it_is(new):
    new.migrate()
    with new.engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(migrate.SchemaTooNew) as refused:
        new.migrate()
    said = str(refused.value)
    assert "9999" in said and f"the newest it knows is {migrate.head()}" in said and "gradekit.db" in said
    assert _revisions(new.engine) == ["9999"]
    with pytest.raises(migrate.SchemaTooNew) as refused:
        new.migrate("zh")
    assert "9999" in str(refused.value) and "本 gradekit 不认识该版本" in str(refused.value)


def test_a_database_with_only_some_of_the_tables_is_refused(new):
    with new.engine.begin() as conn:
        store_module.students.create(conn)
    with pytest.raises(StoreError) as refused:
        new.migrate()
    assert "(students) but not instructors, submissions" in str(refused.value)
    assert sa.inspect(new.engine).get_table_names() == ["students"]


def test_a_database_that_cannot_be_opened_is_said(tmp_path):
    s = Store(tmp_path / "data", f"sqlite:///{tmp_path / 'no-such-folder' / 'gradekit.db'}")
    try:
        with pytest.raises(StoreError) as unreachable:
            s.migrate("zh")
    finally:
        s.engine.dispose()
    assert str(unreachable.value).startswith("无法打开数据库 sqlite:///") and "unable to open database file" in str(
        unreachable.value
    )


RACER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path

    from grader.server import migrate
    from grader.server.store import Store

    here, me, other, url = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] or None
    read = migrate._state

    def held(conn):
        # Between reading the revision and migrating, wait for the other process to have read it too: without the
        # lock both read an empty database and both make it; with it, the other cannot read until this one commits,
        # so this one goes on alone after the wait.
        state = read(conn)
        (here / me).touch()
        ends = time.monotonic() + 5
        while not (here / other).exists() and time.monotonic() < ends:
            time.sleep(0.01)
        return state

    migrate._state = held
    while not (here / "go").exists():
        time.sleep(0.01)
    store = Store(here / "data", url)
    done = store.migrate()
    store.engine.dispose()
    print(json.dumps({"found": list(done.found), "now": done.now}))
    """
)


def _race(folder, url=""):
    """Two processes opening the database (new) at once: what each says it found, and the revisions recorded."""
    (folder / "data").mkdir(parents=True)
    script = folder / "racer.py"
    script.write_text(RACER, encoding="utf-8")
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(folder), me, other, url],
            cwd=ROOT,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me, other in (("a", "b"), ("b", "a"))
    ]
    (folder / "go").touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outputs]
    return sorted(tuple(json.loads(out)["found"]) for out, _ in outputs)


def test_two_processes_opening_a_new_database_at_once_migrate_it_once(tmp_path):
    assert _race(tmp_path) == [(), (migrate.head(),)]
    s = Store(tmp_path / "data")
    try:
        assert _revisions(s.engine) == [migrate.head()] and _differences(s.engine) == []
    finally:
        s.engine.dispose()


def test_serve_db_status_and_what_the_commands_say(tmp_path):
    (tmp_path / "gradekit.toml").write_text('assignment = "transformer"\n\n[server]\n', encoding="utf-8")
    db = tmp_path / "server-data" / "gradekit.db"
    status = gradekit("serve", "db", "status", "--config", tmp_path)
    assert status.returncode == 0 and "Its schema revision: none: no tables yet" in status.stdout
    assert not db.exists()  # reading the status makes nothing

    db.parent.mkdir()
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        _pre_migration(engine)  # a data folder's database from before revisions
        status = gradekit("serve", "db", "status", "--config", tmp_path, "--lang", "zh")
        assert status.returncode == 0 and "其结构版本：无：建于 gradekit 记录版本之前" in status.stdout
        init = gradekit("serve", "init", "--config", tmp_path)
        assert init.returncode == 0 and f"marked as revision {migrate.FIRST}" in init.stdout
        assert _revisions(engine) == [migrate.head()] and _kept(engine)[0] == [("alice", "Alice")]
        status = gradekit("serve", "db", "status", "--config", tmp_path)
        assert status.returncode == 0, status.stderr
        assert f"Its schema revision: {migrate.head()}\n" in status.stdout and "Up to date." in status.stdout
        assert f"The newest this gradekit knows: {migrate.head()}" in status.stdout

        with engine.begin() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
        status = gradekit("serve", "db", "status", "--config", tmp_path)
        assert status.returncode == 1 and "Its schema revision: 9999" in status.stdout
        assert "is at schema revision 9999, which this gradekit does not know" in status.stderr
        for lang, said in (("en", "which this gradekit does not know"), ("zh", "本 gradekit 不认识该版本")):
            run = gradekit("serve", "run", "--config", tmp_path, "--port", "9", "--lang", lang)
            assert run.returncode != 0 and said in run.stderr and "9999" in run.stderr
            assert "Serving" not in run.stdout and "正在服务" not in run.stdout
        assert _revisions(engine) == ["9999"]
    finally:
        engine.dispose()


@pytest.fixture
def postgres(postgres_url):
    """An empty PostgreSQL database of the test's own (``tests/postgres.py``): its URL and an engine on it."""
    engine = sa.create_engine(postgres_url)
    yield postgres_url, engine
    engine.dispose()


def test_the_same_on_postgresql(postgres, tmp_path):
    url, engine = postgres
    s = Store(tmp_path / "data", url)
    try:
        assert s.migrate().found == () and _revisions(engine) == [migrate.head()]
        assert _differences(engine) == []
        with engine.begin() as conn:
            # every table, whatever revisions came after the first: a database made before revisions had none
            conn.exec_driver_sql(f"DROP TABLE {', '.join(sa.inspect(conn).get_table_names())}")
        _pre_migration(engine)
        done = s.migrate()
        assert done.stamped and _revisions(engine) == [migrate.head()]
        assert _kept(engine) == ([("alice", "Alice")], [("alice", 7.5)]) and _differences(engine) == []
        with engine.begin() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
        with pytest.raises(migrate.SchemaTooNew, match="9999"):
            s.migrate()
    finally:
        s.engine.dispose()


def test_two_processes_opening_a_new_postgresql_database_at_once_migrate_it_once(postgres, tmp_path):
    url, engine = postgres
    assert _race(tmp_path, url) == [(), (migrate.head(),)]
    assert _revisions(engine) == [migrate.head()] and _differences(engine) == []
