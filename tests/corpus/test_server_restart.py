"""The course server loses nothing it acknowledged: SIGKILLed while a submission is being graded, then started
again, every acknowledged submission ends graded, each with exactly one result; a judge that dies mid-grading is
replaced and the submission graded on its next attempt."""

import json
import os
import signal
import time
from pathlib import Path

import sqlalchemy as sa

from tests.server_helpers import ROOT, Server, call, make_course, upload


def _masks():
    return (ROOT / "solution" / "masks.py").read_bytes()


def _wait_status(server, sid, token, wanted, timeout=120.0):
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        view = json.loads(call("GET", f"{server.url}/api/submissions/{sid}", token)[2])
        if view["status"] == wanted:
            return view
        time.sleep(0.05)
    raise AssertionError(f"submission {sid} never {wanted}: {server.log.read_text(errors='replace')}")


def _judge(course, timeout=60.0):
    """The process id of the server's judge, once it has started one, and a second later (grading under way)."""
    path = course.data / "judge.pid"
    ends = time.monotonic() + timeout
    while not path.is_file():
        assert time.monotonic() < ends, "no judge started"
        time.sleep(0.05)
    time.sleep(1.0)
    return int(path.read_text())


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _rows(course):
    engine = sa.create_engine(f"sqlite:///{course.data / 'gradekit.db'}")
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT id, status, attempts, score, grading FROM submissions")).all()
    finally:
        engine.dispose()


def test_sigkill_while_grading_then_restart(tmp_path):
    course = make_course(tmp_path)
    alice = course.tokens["alice"]
    server = Server(course)
    try:
        server.start()
        ids = [upload(server, alice, [("masks.py", _masks())])[1]["id"] for _ in range(3)]
        _wait_status(server, ids[0], alice, "grading")
        judge = _judge(course)
        server.kill()  # SIGKILL, mid-grading: the row stays "grading", the judge is orphaned
        assert {r.id: r.status for r in _rows(course)}[ids[0]] == "grading"
        server.start()
        views = [server.wait_done(sid, alice, timeout=180) for sid in ids]
    finally:
        server.stop()
    assert not _alive(judge)  # the restarted server killed the judge the killed one left
    assert [v["status"] for v in views] == ["done"] * 3
    assert all(v["score"] == v["max_score"] == 10 for v in views)
    rows = {r.id: r for r in _rows(course)}
    assert sorted(rows) == sorted(ids)  # nothing acknowledged lost, nothing doubled
    assert rows[ids[0]].attempts == 2  # the interrupted attempt, then the one that counts
    for sid in ids:
        folder = course.data / "gradings" / str(sid)
        assert rows[sid].grading.startswith(f"{sid}/")
        assert (course.data / "gradings" / rows[sid].grading / "report.html").is_file()
        finished = [p for p in folder.iterdir() if (p / "report.html").is_file()]
        assert [f"{sid}/{p.name}" for p in finished] == [rows[sid].grading]  # exactly one result rendered


def test_a_judge_that_dies_is_replaced(tmp_path):
    course = make_course(tmp_path)
    alice = course.tokens["alice"]
    with Server(course) as server:
        sid = upload(server, alice, [("masks.py", _masks())])[1]["id"]
        _wait_status(server, sid, alice, "grading")
        os.killpg(_judge(course), signal.SIGKILL)
        view = server.wait_done(sid, alice, timeout=180)
    assert view["status"] == "done" and view["attempts"] == 2 and view["score"] == 10


def test_a_stop_mid_grading_costs_no_attempt(tmp_path):
    course = make_course(tmp_path)
    alice = course.tokens["alice"]
    server = Server(course)
    try:
        server.start()
        sid = upload(server, alice, [("masks.py", _masks())])[1]["id"]
        _wait_status(server, sid, alice, "grading")
        _judge(course)
        server.stop()  # SIGTERM: uvicorn shuts down, the grading loop stops its judge
        (row,) = _rows(course)
        assert (row.status, row.attempts) == ("queued", 0)
        server.start()
        view = server.wait_done(sid, alice, timeout=180)
    finally:
        server.stop()
    assert view["status"] == "done" and view["attempts"] == 1
