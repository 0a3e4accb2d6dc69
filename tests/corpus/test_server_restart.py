"""The course server loses nothing it acknowledged: SIGKILLed while a submission is being graded (by one judge, or
by two at once), then started again, every acknowledged submission ends graded, each with exactly one result, and
the judges the killed server left are killed; a judge that dies mid-grading is replaced and the submission graded
on its next attempt."""

import json
import os
import signal
import time

import pytest

from tests.server_helpers import (
    ROOT,
    Server,
    alive,
    call,
    judge_pids,
    make_course,
    process_tree,
    rows,
    upload,
    wait_until,
)

ONE = "judges = 1\n"


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
    """The process id of the server's judge, once it has started one (the only one: one submission is graded at a
    time here), and a second later (grading under way)."""
    ends = time.monotonic() + timeout
    while not judge_pids(course):
        assert time.monotonic() < ends, "no judge started"
        time.sleep(0.05)
    time.sleep(1.0)
    (pid,) = judge_pids(course).values()
    return pid


def test_sigkill_while_grading_then_restart(tmp_path):
    course = make_course(tmp_path, ONE)
    alice = course.tokens["alice"]
    server = Server(course)
    try:
        server.start()
        ids = [upload(server, alice, [("masks.py", _masks())])[1]["id"] for _ in range(3)]
        _wait_status(server, ids[0], alice, "grading")
        judge = _judge(course)
        server.kill()  # SIGKILL, mid-grading: the row stays "grading", the judge is orphaned
        assert {r.id: r.status for r in rows(course)}[ids[0]] == "grading"
        server.start()
        views = [server.wait_done(sid, alice, timeout=180) for sid in ids]
    finally:
        server.stop()
    assert not alive(judge)  # the restarted server killed the judge the killed one left
    assert [v["status"] for v in views] == ["done"] * 3
    assert all(v["score"] == v["max_score"] == 10 for v in views)
    table = {r.id: r for r in rows(course)}
    assert sorted(table) == sorted(ids)  # nothing acknowledged lost, nothing doubled
    assert table[ids[0]].attempts == 2  # the interrupted attempt, then the one that counts
    for sid in ids:
        folder = course.data / "gradings" / str(sid)
        assert table[sid].grading.startswith(f"{sid}/")
        assert (course.data / "gradings" / table[sid].grading / "report.html").is_file()
        finished = [p for p in folder.iterdir() if (p / "report.html").is_file()]
        assert [f"{sid}/{p.name}" for p in finished] == [table[sid].grading]  # exactly one result rendered


@pytest.mark.parametrize("judges", [1, 2])
def test_a_judge_that_dies_is_replaced(tmp_path, judges):
    course = make_course(tmp_path, f"judges = {judges}\n")
    alice = course.tokens["alice"]
    with Server(course) as server:
        sid = upload(server, alice, [("masks.py", _masks())])[1]["id"]
        _wait_status(server, sid, alice, "grading")
        os.killpg(_judge(course), signal.SIGKILL)
        view = server.wait_done(sid, alice, timeout=180)
    assert view["status"] == "done" and view["attempts"] == 2 and view["score"] == 10


def test_a_stop_mid_grading_costs_no_attempt(tmp_path):
    course = make_course(tmp_path, ONE)
    alice = course.tokens["alice"]
    server = Server(course)
    try:
        server.start()
        sid = upload(server, alice, [("masks.py", _masks())])[1]["id"]
        _wait_status(server, sid, alice, "grading")
        _judge(course)
        server.stop()  # SIGTERM: uvicorn shuts down, the grading loop stops its judge
        (row,) = rows(course)
        assert (row.status, row.attempts) == ("queued", 0)
        server.start()
        view = server.wait_done(sid, alice, timeout=180)
    finally:
        server.stop()
    assert view["status"] == "done" and view["attempts"] == 1


def test_sigkill_while_two_judges_grade_then_restart(tmp_path):
    """Two judges grading when the server is SIGKILLed: each judge's whole tree (its fork server, its sandbox
    worker, every process of their groups) is frozen with SIGSTOP once the worker runs, so that none can end by
    itself, and the restarted server must kill every one of them; every acknowledged submission ends with one
    result."""
    course = make_course(tmp_path, "judges = 2\n")
    tokens = [course.tokens["alice"], course.tokens["bob"]] * 3  # more than two: neither judge runs out of work
    slow = b"import time\n\ntime.sleep(2)  # loaded in the worker: it lives long enough to be seen\n" + _masks()
    server = Server(course)
    orphans, frozen = set(), set()
    try:
        server.start()
        ids = [upload(server, token, [("masks.py", slow)])[1]["id"] for token in tokens]
        by_token = dict(zip(ids, tokens))

        def freeze():
            """Freeze each judge whose worker runs (its tree: the judge, the fork server and more); whether both
            are frozen."""
            nonlocal orphans
            for judge in set(judge_pids(course).values()) - frozen:
                if len(process_tree(judge)) > 2:
                    tree = set()
                    for _ in range(3):  # again, for what was started between a reading and the stops
                        tree |= process_tree(judge)
                        for pid in tree:
                            os.kill(pid, signal.SIGSTOP)
                    orphans |= {pid for pid in tree if alive(pid)}  # less what ended before its stop
                    frozen.add(judge)
            return len(frozen) == 2

        wait_until(freeze, "both judges frozen while their workers run", log=server.log)
        # Frozen, the judges answer nothing: each holds the submission it was given until the server dies.
        wait_until(lambda: sum(r.status == "grading" for r in rows(course)) == 2, "two submissions held", 30)
        interrupted = {r.id for r in rows(course) if r.status == "grading"}
        server.kill()
        assert {r.id for r in rows(course) if r.status == "grading"} == interrupted
        assert all(alive(pid) for pid in orphans)  # stopped: only the restart can end them
        server.start()
        wait_until(lambda: not any(alive(pid) for pid in orphans), "the orphaned judges' processes gone", 60)
        views = [server.wait_done(sid, by_token[sid], timeout=300) for sid in ids]
    finally:
        server.stop()
        for pid in orphans:  # only should the test have failed: nothing of them left stopped
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert len(orphans) >= 6  # two judges, each with its fork server and a worker
    assert [v["status"] for v in views] == ["done"] * 6
    assert all(v["score"] == v["max_score"] == 10 for v in views)
    table = {r.id: r for r in rows(course)}
    assert sorted(table) == sorted(ids)
    assert {sid: table[sid].attempts for sid in ids} == {sid: 2 if sid in interrupted else 1 for sid in ids}
    for sid in ids:
        finished = [p for p in (course.data / "gradings" / str(sid)).iterdir() if (p / "report.html").is_file()]
        assert [f"{sid}/{p.name}" for p in finished] == [table[sid].grading]  # exactly one result rendered
