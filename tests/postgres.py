"""A PostgreSQL database for the tests that need one (the course server's store, its schema revisions, a server run
on PostgreSQL): the fixture ``postgres_url``, the ``postgresql+psycopg://`` URL of an empty database of the test's
own.

- ``GRADEKIT_TEST_POSTGRES`` set: the database it names (empty), as before; the tests take it one at a time (a lock
  file, across pytest-xdist's workers) and the server's tables are dropped after each.
- Otherwise a PostgreSQL server of the test session's own (``postgres_cluster``, one per xdist worker): ``initdb``
  in a temporary folder, started by ``pg_ctl`` on 127.0.0.1 only, on a free port, its unix socket in that folder;
  each test gets a database made for it and dropped after it. At the session's end the server is stopped
  (``pg_ctl stop -m immediate``) and the folder deleted, whatever the tests did; should the test process die
  first, a watchdog process it started does both. PostgreSQL refuses to run as root: as root its commands run as
  PostgreSQL's own account (``postgres``, which its packages make) where there is one, else as ``nobody``.
- Without psycopg, or without ``initdb``, ``pg_ctl`` and ``postgres`` (on ``PATH``, in ``/usr/local/bin`` or
  ``/usr/lib/postgresql/<version>/bin``), the test skips saying which is missing and how to get it.
"""

import glob
import hashlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

ENV = "GRADEKIT_TEST_POSTGRES"
BINARIES = ("initdb", "pg_ctl", "postgres")
USER = "gradekit"
"""The superuser ``initdb`` makes (trusted on loopback: the server takes no password)."""
START_S = 60
"""Seconds ``pg_ctl`` waits for the server to accept connections, and for it to stop."""
NO_DRIVER = (
    "psycopg (PostgreSQL's driver, psycopg 3) is not installed: pip install -e '.[server]' "
    "(scripts/test installs it with the test extra)"
)
NO_SERVER = (
    "PostgreSQL is not installed: no folder on PATH, /usr/local/bin or /usr/lib/postgresql/*/bin holds initdb, "
    "pg_ctl and postgres (Debian: apt-get install postgresql); or set GRADEKIT_TEST_POSTGRES to the "
    "postgresql+psycopg:// URL of an empty database"
)
WATCHDOG = """
import os, shutil, subprocess, sys, time
parent, folder, uid, gid, stop = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
while os.getppid() == parent:  # the test process lives
    time.sleep(1)
account = {"user": uid, "group": gid, "extra_groups": []} if uid >= 0 else {}
subprocess.run(stop, capture_output=True, timeout=120, **account)
shutil.rmtree(folder, ignore_errors=True)
"""
"""The watchdog: once the process that started it is gone (it is then another's child), it stops the server and
deletes its folder. The test session's own teardown ends it first."""


def find_binaries():
    """The first folder holding ``initdb``, ``pg_ctl`` and ``postgres``: of ``PATH``, ``/usr/local/bin``, then
    ``/usr/lib/postgresql/<version>/bin`` (Debian's, the newest version first); ``None`` when none does."""

    def version(folder):
        return [int(n) for n in re.findall(r"\d+", Path(folder).parent.name)]

    folders = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p] + ["/usr/local/bin"]
    folders += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)
    for folder in folders:
        paths = [os.path.join(folder, b) for b in BINARIES]
        if all(os.path.isfile(p) and os.access(p, os.X_OK) for p in paths):
            return Path(folder)
    return None


def server_account():
    """``(uid, gid)`` of the account PostgreSQL's commands run as: ``None`` (this process's own) unless this is
    root, which PostgreSQL refuses; then ``postgres`` where there is one, else ``nobody``."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if entry.pw_uid != 0:
            return entry.pw_uid, entry.pw_gid
    pytest.skip("the tests run as root, which PostgreSQL refuses, and no postgres or nobody account is there to run it")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A PostgreSQL server in a temporary folder of its own: ``start`` it, ``create`` and ``drop`` databases,
    ``stop`` it (the folder goes with it)."""

    def __init__(self, binaries, account=None):
        self.binaries = Path(binaries)
        self.account = account
        self.folder = Path(tempfile.mkdtemp(prefix="gradekit-postgres-"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = None
        self.watchdog = None
        if account:
            os.chown(self.folder, *account)

    def _as(self):
        return {"user": self.account[0], "group": self.account[1], "extra_groups": []} if self.account else {}

    def _env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}  # no PGDATA, PGPORT... of the caller's
        return {**env, "LC_ALL": "C", "HOME": str(self.folder)}

    def _run(self, command, *args):
        """PostgreSQL's ``command`` with ``args``, as its account: the ``CompletedProcess`` (text)."""
        return self._exec([str(self.binaries / command), *map(str, args)])

    def _exec(self, argv):
        return subprocess.run(
            argv,
            cwd=self.folder,
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=START_S * 2,
            **self._as(),
        )

    def _stop_command(self):
        pg_ctl = str(self.binaries / "pg_ctl")
        return [pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "-t", str(START_S), "stop"]

    def start(self):
        """``initdb``, then ``pg_ctl start`` on a free loopback port (another if that one was taken meanwhile);
        ``RuntimeError`` with what PostgreSQL said when it cannot start."""
        made = self._run("initdb", "-D", self.data, "-U", USER, "-A", "trust", "-E", "UTF8", "--locale=C", "-N")
        if made.returncode != 0:
            raise RuntimeError(f"initdb failed in {self.folder}:\n{made.stdout}{made.stderr}")
        sockets = str(self.folder) if len(str(self.folder)) < 80 else ""  # a socket's path has at most 107 bytes
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                "\n# gradekit's tests: loopback only, a socket in the test's folder; speed over durability\n"
                "listen_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{sockets.replace(chr(39), chr(39) * 2)}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\n"
            )
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG, str(os.getpid()), str(self.folder)]
            + [str(n) for n in (self.account or (-1, -1))]
            + self._stop_command(),
            env=self._env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # an interrupt of the tests' process group leaves it to do its work
        )
        for _ in range(5):
            port = free_port()
            started = self._run("pg_ctl", "-D", self.data, "-l", self.log, "-wt", START_S, "-o", f"-p {port}", "start")
            if started.returncode == 0:
                self.port = port
                return self
            said = started.stdout + started.stderr + (self.log.read_text(errors="replace") if self.log.exists() else "")
            if "already in use" not in said:
                break
        raise RuntimeError(f"PostgreSQL did not start in {self.folder}:\n{said}")

    def stop(self):
        """Stop the server (``pg_ctl stop -m immediate``), end the watchdog, delete the folder."""
        try:
            if self.port is not None:
                stopped = self._exec(self._stop_command())
                assert stopped.returncode == 0, f"pg_ctl stop failed: {stopped.stdout}{stopped.stderr}"
                self.port = None
        finally:
            if self.watchdog is not None:
                self.watchdog.kill()
                self.watchdog.wait()
            shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database):
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{database}"

    def _admin(self):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname="postgres", autocommit=True)

    def create(self):
        """A new empty database: its name."""
        name = f"test_{uuid.uuid4().hex[:16]}"
        with self._admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop(self, name):
        """Drop database ``name``, ending any connection a test left to it."""
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_cluster():
    """A PostgreSQL server of this test session's own (``Cluster``), stopped and deleted at its end; skips, saying
    what is missing, without psycopg or PostgreSQL's binaries."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip(NO_DRIVER)
    binaries = find_binaries()
    if binaries is None:
        pytest.skip(NO_SERVER)
    cluster = Cluster(binaries, server_account())
    try:
        try:
            cluster.start()
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            pytest.fail(f"PostgreSQL's binaries are in {binaries} but no server started: {exc}", pytrace=False)
        yield cluster
    finally:
        cluster.stop()


@contextmanager
def _one_at_a_time(url):
    """Hold the database ``url`` names against every other test process of this machine (a lock file)."""
    import fcntl

    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"gradekit-postgres-{key}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _empty(url):
    """Drop the course server's tables and Alembic's revision table from the database ``url`` names."""
    import sqlalchemy as sa

    from grader.server import store

    engine = sa.create_engine(url)
    try:
        store.metadata.drop_all(engine)
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE IF EXISTS alembic_version")
    finally:
        engine.dispose()


@pytest.fixture
def postgres_url(request):
    """The ``postgresql+psycopg://`` URL of an empty database for this test alone: made in ``postgres_cluster``
    and dropped after the test, or the one ``GRADEKIT_TEST_POSTGRES`` names, emptied after it."""
    named = os.environ.get(ENV)
    if named:
        with _one_at_a_time(named):
            try:
                yield named
            finally:
                _empty(named)
        return
    cluster = request.getfixturevalue("postgres_cluster")
    name = cluster.create()
    try:
        yield cluster.url(name)
    finally:
        cluster.drop(name)
