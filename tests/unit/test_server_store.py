"""The course server's parts without a server: ``[server]`` in the course configuration, the store (tokens kept as
HMACs, a hand-in stored whole or not at all, the queue's attempts), and the application's 503 when storing fails,
driven in-process through ASGI."""

import asyncio
import errno
import json
import os
import stat
import time

import pytest

pytest.importorskip("sqlalchemy", reason="the server's packages are not installed: pip install -e '.[server]'")
pytest.importorskip("starlette", reason="the server's packages are not installed: pip install -e '.[server]'")

import sqlalchemy as sa  # noqa: E402

from grader.config import ConfigError, CourseConfig  # noqa: E402
from grader.server import store as store_module  # noqa: E402
from grader.server.store import Store  # noqa: E402


def _config(tmp_path, server_toml):
    path = tmp_path / "gradekit.toml"
    path.write_text(f'assignment = "transformer"\n\n[server]\n{server_toml}', encoding="utf-8")
    return CourseConfig.load(path)


def test_server_section_defaults_and_paths(tmp_path):
    server = _config(tmp_path, "").server
    assert server["data"] == str((tmp_path / "server-data").resolve())
    assert (server["host"], server["port"], server["late"], server["counts"]) == ("127.0.0.1", 8000, "refuse", "last")
    assert server["deadline"] is None and server["database"] is None
    assert server["judges"] == 2 and _config(tmp_path, "judges = 5\n").server["judges"] == 5
    dated = _config(tmp_path, "deadline = 2026-12-01T23:59:00+08:00\n").server["deadline"]
    assert dated.utcoffset().total_seconds() == 8 * 3600
    assert _config(tmp_path, 'deadline = "2026-12-01T23:59:00Z"\n').server["deadline"].tzinfo is not None


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ("colour = 1\n", "server.colour: unknown key; expected one of data, database"),
        ('late = "maybe"\n', "server.late must be one of refuse, accept, flag"),
        ('counts = "first"\n', "server.counts must be one of last, best"),
        ('deadline = "2026-12-01T23:59:00"\n', "server.deadline: expected a date and time with its offset"),
        ("port = 0\n", "server.port: expected a whole number from 1 to 65535"),
        ('database = "gradekit.db"\n', "server.database: expected a database URL"),
        ("judges = 0\n", "server.judges: expected a whole number from 1 to 256, got 0"),
        ('judges = "2"\n', "server.judges: expected a whole number from 1 to 256, got '2'"),
        ("judges = 1.5\n", "server.judges: expected a whole number from 1 to 256, got 1.5"),
        ("judges = true\n", "server.judges: expected a whole number from 1 to 256, got True"),
    ],
)
def test_server_section_errors_say_where(tmp_path, toml, said):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, toml)
    assert said in str(err.value) and "gradekit.toml" in str(err.value)


def _made(tmp_path, url=None):
    s = Store(tmp_path / "data", url)
    s.instructor = s.init()
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name\nalice,Alice\nbob,Bob\n", encoding="utf-8")
    s.import_roster(roster)
    return s


@pytest.fixture
def store(tmp_path):
    return _made(tmp_path)


def test_tokens_are_kept_as_hmacs(store, tmp_path):
    assert stat.S_IMODE(os.stat(store.data / "secret.key").st_mode) == 0o600
    assert store.who(store.instructor) == ("instructor", None)
    assert store.init() is None  # a second init keeps the token
    (tokens,) = (store.data / "tokens").glob("*.csv")
    rows = dict(line.split(",")[::2] for line in tokens.read_text(encoding="utf-8-sig").splitlines()[1:])
    assert store.who(rows["alice"]) == ("student", "alice") and store.who("x" + rows["alice"]) is None
    with store.engine.connect() as conn:
        hashes = dict(conn.execute(sa.text("SELECT id, token_hash FROM students")).all())
    assert hashes["alice"] == store.hash(rows["alice"]) != rows["alice"]
    again = store.import_roster(tmp_path / "roster.csv")
    assert (again.added, again.kept, again.tokens_file) == (0, 2, None)
    assert store.who(rows["alice"]) == ("student", "alice")
    reissued = store.import_roster(tmp_path / "roster.csv", reissue=True)
    assert reissued.reissued == 2 and store.who(rows["alice"]) is None


def test_roster_bad_rows_are_said_with_their_line(store, tmp_path):
    roster = tmp_path / "more.csv"
    roster.write_text("name,student\nCarol,carol\nNo one,\nBad,a b\nCarol again,carol\n", encoding="utf-8")
    done = store.import_roster(roster, lang="zh")
    assert done.added == 1
    assert [p.split("：")[0] for p in done.problems] == ["名单第 3 行", "名单第 4 行", "名单第 5 行"]


def test_a_hand_in_is_stored_whole_or_not_at_all(store, monkeypatch):
    sid = store.add_submission("alice", "py", [("masks.py", b"x = 1\n"), ("attention.py", b"y = 2\n")])
    row = store.submission(sid)
    assert (row.status, row.number) == ("queued", 1)
    assert (store.source_of(row) / "attention.py").read_bytes() == b"y = 2\n"
    folder = store.data / "submissions" / "alice"

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(store_module.os, "fsync", full)
        with pytest.raises(OSError):
            store.add_submission("alice", "zip", [("hw.zip", b"PK")])
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE submissions"))
    with pytest.raises(sa.exc.SQLAlchemyError):
        store.add_submission("alice", "zip", [("hw.zip", b"PK")])
    assert sorted(p.name for p in folder.iterdir()) == ["1"]  # neither failure left a folder


def test_each_attempt_ends_once(store):
    sid = store.add_submission("alice", "py", [("masks.py", b"x = 1\n")])
    first = store.claim()
    assert (first.id, first.status, first.attempts) == (sid, "grading", 1)
    assert store.claim() is None
    assert store.recover() == 1  # a server stopped mid-grading: back in the queue
    second = store.claim()
    assert second.attempts == 2
    assert not store.finish(first, status="done", score=1.0, max_score=1.0)  # the stale attempt cannot end it
    assert store.finish(second, status="done", score=2.0, max_score=2.0)
    assert not store.finish(second, status="done", score=3.0, max_score=3.0)
    assert store.submission(sid).score == 2.0


def test_two_claimers_racing_never_take_the_same_submission(store):
    """Two claimers (each with its own engine, as two judges' loops) both read the oldest queued row before either
    updates it, held at a barrier: one takes it, and the other's claim takes the next instead; every row is taken
    once."""
    _claimers_race(store)


def test_two_claimers_racing_on_postgresql_never_take_the_same_submission(tmp_path, postgres_url):
    """The same on PostgreSQL (``tests/postgres.py``)."""
    store = _made(tmp_path, postgres_url)
    try:
        _claimers_race(store)
    finally:
        store.engine.dispose()


def _claimers_race(store):
    import threading

    ids = [store.add_submission("alice", "py", [("masks.py", b"x = 1\n")]) for _ in range(8)]
    barrier = threading.Barrier(2, timeout=60)
    claimers = [Store(store.data, store.url) for _ in range(2)]
    got, failures = [[], []], []

    def hold_first_update(claimer):
        held = []

        @sa.event.listens_for(claimer.engine, "before_cursor_execute")
        def meet(conn, cursor, statement, *args):
            if statement.lstrip().upper().startswith("UPDATE") and not held:
                held.append(True)
                barrier.wait()  # both have read the queue: the race is on

    def claim_all(n):
        try:
            first = claimers[n].claim()
            got[n].append(first and first.id)
            barrier.wait()  # the winner takes no more before the loser's claim has returned
            while (row := claimers[n].claim()) is not None:
                got[n].append(row.id)
        except Exception as exc:  # noqa: BLE001 - said by the assertion below
            failures.append(exc)

    for claimer in claimers:
        hold_first_update(claimer)
    threads = [threading.Thread(target=claim_all, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures
    assert {got[0][0], got[1][0]} == {ids[0], ids[1]}  # the loser of the race took the next one, not nothing
    assert sorted(got[0] + got[1]) == ids  # each taken exactly once
    assert {(r.status, r.attempts) for r in store.history()} == {("grading", 1)}
    for claimer in claimers:
        claimer.engine.dispose()


def _asgi(app, method, path, headers, body):
    """One request to ``app`` in-process: ``(status, body)``."""
    sent = []

    async def run():
        async def receive():
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message):
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80),
        }
        await app(scope, receive, send)

    asyncio.run(run())
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


@pytest.mark.parametrize("failure", ["disk", "database"])
def test_a_store_that_fails_answers_503(store, tmp_path, monkeypatch, failure):
    from grader.server.app import create_app
    from tests.server_helpers import multipart

    course = _config(tmp_path, f'data = "{store.data}"\n')
    (tokens,) = (store.data / "tokens").glob("*.csv")
    token = tokens.read_text(encoding="utf-8-sig").splitlines()[1].split(",")[2]

    def fail(*args, **kwargs):
        if failure == "disk":
            raise OSError(errno.ENOSPC, "No space left on device")
        raise sa.exc.OperationalError("INSERT", {}, Exception("database is locked"))

    monkeypatch.setattr(store, "add_submission", fail)
    app = create_app(course, store=store)
    body, ctype = multipart([("masks.py", b"x = 1\n")])
    status, answer = _asgi(
        app, "POST", "/api/submissions", {"Authorization": f"Bearer {token}", "Content-Type": ctype}, body
    )
    assert status == 503
    assert json.loads(answer)["code"] == f"server.store.{failure}" and "nothing was kept" in json.loads(answer)["error"]


def _graded(store, student, score, *, late=False):
    sid = store.add_submission(student, "py", [("masks.py", b"x = 1\n")], late=late)
    row = store.claim()
    assert row.id == sid
    store.finish(row, status="done", score=score, max_score=10.0, verdict="ok")
    return sid


@pytest.mark.parametrize(
    ("counts", "late", "alice", "late_counted"),
    [
        ("last", "refuse", "second", None),
        ("best", "refuse", "first", None),
        ("last", "accept", "late", None),
        ("best", "accept", "late", None),
        ("last", "flag", "second", "late"),
        ("best", "flag", "first", "late"),
    ],
)
def test_the_submission_that_counts(store, tmp_path, counts, late, alice, late_counted):
    from grader.server.app import Server

    course = _config(tmp_path, f'data = "{store.data}"\ncounts = "{counts}"\nlate = "{late}"\n')
    ids = {"first": _graded(store, "alice", 8.0), "second": _graded(store, "alice", 6.0)}
    ids["late"] = _graded(store, "alice", 9.0, late=True)
    store.add_submission("bob", "py", [("masks.py", b"x = 1\n")])  # queued: nothing counts yet
    rows = {r["student"]: r for r in Server(course, store).gradebook_rows()}
    assert rows["alice"]["counted"] == ids[alice]
    assert rows["alice"]["late"] == (alice == "late") and rows["alice"]["late_submissions"] == 1
    assert rows["alice"]["late_counted"] == (ids[late_counted] if late_counted else None)
    assert rows["bob"]["counted"] is None and rows["bob"]["pending"] == 1


def test_a_database_away_answers_503(store, tmp_path, monkeypatch):
    from grader.server.app import create_app

    course = _config(tmp_path, f'data = "{store.data}"\n')

    def away(*args, **kwargs):
        raise sa.exc.OperationalError("SELECT", {}, Exception("database is locked"))

    monkeypatch.setattr(store, "history", away)
    status, answer = _asgi(
        create_app(course, store=store),
        "GET",
        "/api/gradebook",
        {"Authorization": f"Bearer {store.instructor}", "Accept-Language": "zh"},
        b"",
    )
    assert status == 503 and json.loads(answer)["code"] == "server.store.unavailable"


def test_the_grading_loop_outlives_a_bug_and_a_database_away(store, monkeypatch):
    import time

    from grader.server import grading

    monkeypatch.setattr(grading, "RETRY_S", 0.1)
    loop = grading.Grader(store, plan=None)
    attempts = []

    def grade(row, _slot):  # the first attempt hits a grader bug, the second grades
        attempts.append(row.attempts)
        if len(attempts) == 1:
            raise RuntimeError("a bug")
        store.finish(row, status="done", score=1.0, max_score=1.0)

    real_finish, failures = store.finish, [True]

    def finish(row, **kwargs):  # and recording the bug's end fails once: the database is away
        if failures:
            failures.pop()
            raise sa.exc.OperationalError("UPDATE", {}, Exception("database is locked"))
        return real_finish(row, **kwargs)

    monkeypatch.setattr(loop, "grade", grade)
    monkeypatch.setattr(store, "finish", finish)
    sid = store.add_submission("alice", "py", [("masks.py", b"x = 1\n")])
    loop.start()
    try:
        ends = time.monotonic() + 30
        while store.submission(sid).status != "done":
            assert time.monotonic() < ends, store.submission(sid)
            time.sleep(0.1)
    finally:
        loop.stop()
    assert attempts == [1, 2] and store.submission(sid).score == 1.0


def test_two_judges_try_each_submission_until_its_last_attempt(store):
    """Two judges and a grader bug on every attempt: each submission is tried ``MAX_ATTEMPTS`` times, once per
    attempt whichever judge takes it, then ends ``error`` with the reason."""
    import time
    from types import SimpleNamespace

    from grader.server import grading

    loop = grading.Grader(store, plan=SimpleNamespace(lang="en"), judges=2)
    tried = []

    def grade(row, _slot):
        tried.append((row.id, row.attempts))
        raise RuntimeError("the judge broke")

    loop.grade = grade
    ids = [store.add_submission(s, "py", [("masks.py", b"x = 1\n")]) for s in ("alice", "bob", "alice", "bob")]
    loop.start()
    try:
        ends = time.monotonic() + 60
        while {r.status for r in store.history()} != {"error"}:
            assert time.monotonic() < ends, store.history()
            time.sleep(0.05)
    finally:
        loop.stop()
    assert sorted(tried) == [(sid, n) for sid in ids for n in range(1, store_module.MAX_ATTEMPTS + 1)]
    assert all("the judge broke" in r.reason and r.attempts == store_module.MAX_ATTEMPTS for r in store.history())


def test_a_judge_whose_end_fails_puts_back_only_its_own_submission(store, monkeypatch):
    """Two judges: one grades a submission slowly, the other hits a grader bug whose end the database cannot record
    at first. Once it can, that submission alone goes back to the queue: the one being graded is not taken again."""
    import threading
    import time

    from grader.server import grading

    monkeypatch.setattr(grading, "RETRY_S", 0.1)
    loop = grading.Grader(store, plan=None, judges=2)
    slow = store.add_submission("alice", "py", [("masks.py", b"x = 1\n")])
    buggy = store.add_submission("bob", "py", [("masks.py", b"x = 2\n")])
    graded, slots, release = [], set(), threading.Event()
    real_finish, failures = store.finish, [True]

    def grade(row, slot):
        graded.append((row.id, row.attempts))
        slots.add(slot.index)
        if row.id == slow:
            release.wait(120)  # held until the other is done
        elif row.attempts == 1:
            raise RuntimeError("a bug")
        real_finish(row, status="done", score=1.0, max_score=1.0)
        if row.id == buggy:
            release.set()

    def finish(row, **kwargs):
        if kwargs["status"] == "queued" and failures:  # recording the bug's end fails once
            failures.pop()
            raise sa.exc.OperationalError("UPDATE", {}, Exception("database is locked"))
        return real_finish(row, **kwargs)

    monkeypatch.setattr(loop, "grade", grade)
    monkeypatch.setattr(store, "finish", finish)
    loop.start()
    try:
        ends = time.monotonic() + 60
        while {store.submission(sid).status for sid in (slow, buggy)} != {"done"}:
            assert time.monotonic() < ends, (graded, store.history())
            time.sleep(0.1)
    finally:
        release.set()
        loop.stop()
    assert sorted(graded) == [(slow, 1), (buggy, 1), (buggy, 2)] and slots == {0, 1}
    assert not failures


def _sleeper():
    """A Python process that sleeps."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)


def _gone(pid, timeout=30.0):
    """Whether process ``pid`` is gone (or a zombie) within ``timeout`` seconds."""
    import time

    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        try:
            if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] in "ZX":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_leftover_judges_of_every_slot_are_killed_with_what_they_started(tmp_path):
    """``kill_leftover`` reads every slot's pid file: a judge is killed with a process it started in a session of
    its own (as a judge starts its fork server and workers); a recorded pid that is no judge now is left alone."""
    import subprocess
    import sys

    from grader.server import grading

    script = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    judge = subprocess.Popen(
        [sys.executable, "-c", script, "grader.batch.judge"], stdout=subprocess.PIPE, start_new_session=True
    )
    worker = int(judge.stdout.readline())
    other = _sleeper()
    try:
        grading.pid_file(tmp_path, 0).write_text(str(other.pid))
        grading.pid_file(tmp_path, 1).write_text(str(judge.pid))
        grading.kill_leftover(tmp_path)
        judge.wait(timeout=30)
        assert _gone(worker)  # in a session of its own: killing the judge's group alone leaves it
        assert other.poll() is None  # its cmdline names no judge: a reused pid is not killed
        assert not list(tmp_path.glob("judge-*.pid"))
    finally:
        for proc in (judge, other):
            proc.kill()
            proc.wait()
        try:
            os.kill(worker, 9)
        except ProcessLookupError:
            pass


def test_late_submissions_refused_after_the_deadline(store, tmp_path):
    from grader.server.app import create_app
    from tests.server_helpers import multipart

    course = _config(tmp_path, f'data = "{store.data}"\ndeadline = "2020-01-01T00:00:00+08:00"\nlate = "refuse"\n')
    (tokens,) = (store.data / "tokens").glob("*.csv")
    token = tokens.read_text(encoding="utf-8-sig").splitlines()[1].split(",")[2]
    app = create_app(course, store=store)
    body, ctype = multipart([("masks.py", b"x = 1\n")])
    for lang, said in (("en", "the deadline (2020-01-01T00:00:00+08:00) has passed"), ("zh-CN", "截止时间")):
        headers = {"Authorization": f"Bearer {token}", "Content-Type": ctype, "Accept-Language": lang}
        status, answer = _asgi(app, "POST", "/api/submissions", headers, body)
        assert status == 403 and said in json.loads(answer)["error"]
    assert store.history() == [] and not list((store.data / "submissions").iterdir())


def test_sqlite_is_in_wal_mode_with_full_sync(store):
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_a_reissued_token_ends_the_page_session(store, tmp_path):
    from grader.server.app import Server

    course = _config(tmp_path, f'data = "{store.data}"\n')
    server = Server(course, store)
    cookie = server.new_session("alice")
    assert server.session_of(cookie) == "alice"
    assert server.session_of(cookie.replace(":alice", ":bob")) is None  # the name is signed
    expires, rest = cookie.split(":", 1)
    assert server.session_of(f"{int(expires) + 1}:{rest}") is None  # so is the expiry
    store.import_roster(tmp_path / "roster.csv", reissue=True)
    assert server.session_of(cookie) is None


def test_a_session_logged_out_of_stays_ended_and_expired_ones_are_purged(store, tmp_path, monkeypatch):
    """``end_session`` ends that cookie's session for good and no other (a second login of the same student, in
    the same second, goes on); the table keeps an HMAC of the signature, never the cookie or the signature; a
    log-out purges the rows of sessions past their expiry."""
    from grader.server.app import Server

    server = Server(_config(tmp_path, f'data = "{store.data}"\n'), store)
    first, second, teacher = (
        server.new_session("alice"),
        server.new_session("alice"),
        server.new_session("instructor:1"),
    )
    assert first != second and server.session_of(first) == server.session_of(second) == "alice"
    signature = lambda cookie: cookie.split(":", 3)[2]  # noqa: E731
    store.end_session(signature(first), float(first.split(":", 1)[0]))
    assert server.session_who(first) is None and server.session_of(second) == "alice"
    assert server.session_who(teacher) == ("instructor", None)
    store.end_session(signature(first), float(first.split(":", 1)[0]))  # ended twice: still ended, no error
    assert server.session_who(first) is None
    with store.engine.connect() as conn:
        kept = conn.execute(sa.select(store_module.ended_sessions)).all()
    assert [r.signature_hash for r in kept] == [store.hash(signature(first))]
    nonce, mac = first.split(":")[1:3]
    assert nonce not in str(kept) and mac not in str(kept)  # the row's expiry is the cookie's, nothing else of it

    now = time.time()
    monkeypatch.setattr(store_module.time, "time", lambda: now + 13 * 3600)  # past every cookie above
    store.end_session(signature(teacher), now + 25 * 3600)  # a later log-out: the expired row goes
    with store.engine.connect() as conn:
        kept = conn.execute(sa.select(store_module.ended_sessions.c.signature_hash)).scalars().all()
    assert kept == [store.hash(signature(teacher))]


def test_every_sentence_the_server_says_exists_in_both_languages():
    import re
    from pathlib import Path

    from grader.messages import CATALOGUES

    folder = Path(store_module.__file__).parent
    used = {k for p in folder.glob("*.py") for k in re.findall(r"""['"](server\.[\w.]*\w)['"]""", p.read_text())}
    used |= {f"server.status.{s}" for s in store_module.STATUSES}  # said by status
    used |= {"server.submit.queued", "server.submit.grading"}  # said by the stage --wait reached
    assert len(used) > 50
    for lang in ("en", "zh"):
        assert sorted(used - set(CATALOGUES[lang])) == []
    assert {k for k in CATALOGUES["en"] if k.startswith("server.")} == used  # and none is left unsaid


def _race(store, racers=8, per_hour=3, taken=False):
    """``racers`` hand-ins of alice at once (threads released together) with one place of ``per_hour`` taken
    already (``taken``: by the caller): exactly the free places stored, the others refused and leaving no row or
    folder."""
    import threading

    from grader.server.store import RateLimited

    if not taken:
        store.add_submission("alice", "py", [("masks.py", b"x = 1\n")], per_hour=per_hour)
    start = threading.Barrier(racers)
    outcomes = []

    def hand_in():
        start.wait()
        try:
            outcomes.append(store.add_submission("alice", "py", [("masks.py", b"x = 2\n")], per_hour=per_hour))
        except RateLimited as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=hand_in) for _ in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = [o for o in outcomes if isinstance(o, int)]
    assert len(stored) == per_hour - 1 and len(outcomes) == racers
    assert all(isinstance(o, RateLimited) and o.count == per_hour for o in outcomes if not isinstance(o, int))
    assert len(store.history("alice")) == per_hour
    folders = sorted(int(p.name) for p in (store.data / "submissions" / "alice").iterdir())
    assert folders == sorted(r.number for r in store.history("alice"))  # the refused ones left no folder


def test_hand_ins_racing_at_the_hourly_limit_store_exactly_the_limit(store):
    _race(store)


def _held_after_counting(store, racers):
    """Hold each hand-in of the race between its count and its insert until every other racer has counted too or
    waits for a lock (PostgreSQL's ``pg_stat_activity``): without the row lock all of them then count the same
    submissions, whatever the threads' timing; with it the others wait on the lock, and each goes on at once. The
    hand-ins held in vain (30 s) are listed in the list returned."""
    import threading
    import time

    count, counted, lock, stuck = store._recent, [], threading.Lock(), []

    def waiting():
        with store.engine.begin() as conn:  # a transaction of its own each time: one reads a single snapshot
            return conn.exec_driver_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).scalar()

    def held(conn, student, since):
        got = count(conn, student, since)
        with lock:
            counted.append(student)
        ends = time.monotonic() + 30
        while len(counted) + waiting() < racers:
            if time.monotonic() > ends:
                stuck.append(f"{len(counted)} counted, {waiting()} waiting for a lock")
                break
            time.sleep(0.01)
        return got

    store._recent = held
    return stuck


def test_hand_ins_racing_at_the_hourly_limit_on_postgresql(tmp_path, postgres_url):
    """The same race on PostgreSQL (the student's row locked), in an empty database of the test's own
    (``tests/postgres.py``), each hand-in held after its count until every other has counted or waits."""
    s = Store(tmp_path / "data", postgres_url)
    try:
        s.init()
        roster = tmp_path / "roster.csv"
        roster.write_text("student,name\nalice,Alice\n", encoding="utf-8")
        s.import_roster(roster)
        s.add_submission("alice", "py", [("masks.py", b"x = 0\n")])  # the race's first place taken before the hold
        stuck = _held_after_counting(s, racers=8)
        _race(s, taken=True)
        assert stuck == []  # no hand-in waited for the others in vain
    finally:
        s.engine.dispose()
