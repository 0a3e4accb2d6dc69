"""The course server with several judges (``[server] judges = 2``): two submissions are graded at the same time,
each by its own judge, and each ends with exactly one result; stopping the server stops every judge, and what
they were grading goes back to the queue without costing an attempt."""

from tests.server_helpers import (
    ROOT,
    Server,
    alive,
    judge_pids,
    make_course,
    process_tree,
    rows,
    upload,
    wait_until,
)

TWO = "judges = 2\n"


def _masks():
    return (ROOT / "solution" / "masks.py").read_bytes()


def _hand_in_two(course, server, content=None):
    """The reference (or ``content``) handed in by alice and by bob: ``{id: token}``."""
    handed = {}
    for student in ("alice", "bob"):
        status, answer = upload(server, course.tokens[student], [("masks.py", content or _masks())])
        assert status == 201, answer
        handed[answer["id"]] = course.tokens[student]
    return handed


def _both_grading(course, tree=1):
    """Whether both submissions are being graded at this moment, by two judges that run (each with at least
    ``tree`` processes: itself, its fork server, its worker)."""
    grading = [r.id for r in rows(course) if r.status == "grading"]
    judges = judge_pids(course)
    return (
        len(grading) == 2
        and len(set(judges.values())) == 2
        and all(alive(p) and len(process_tree(p)) >= tree for p in judges.values())
    )


def _one_result_each(course, handed):
    table = {r.id: r for r in rows(course)}
    assert sorted(table) == sorted(handed)
    for sid in handed:
        finished = [p for p in (course.data / "gradings" / str(sid)).iterdir() if (p / "report.html").is_file()]
        assert [f"{sid}/{p.name}" for p in finished] == [table[sid].grading]


def test_two_submissions_graded_at_once(tmp_path):
    course = make_course(tmp_path, TWO)
    with Server(course) as server:
        handed = _hand_in_two(course, server)
        # With one judge the second waits in line until the first is done: both "grading" never holds.
        wait_until(lambda: _both_grading(course), "both submissions grading at once", log=server.log)
        views = [server.wait_done(sid, token, timeout=300) for sid, token in handed.items()]
    assert [(v["status"], v["attempts"], v["score"]) for v in views] == [("done", 1, 10)] * 2
    _one_result_each(course, handed)


def test_a_stop_stops_every_judge(tmp_path):
    course = make_course(tmp_path, TWO)
    server = Server(course)
    try:
        server.start()
        # Loaded slowly (in the worker): the gradings last seconds past the moment both are seen running.
        handed = _hand_in_two(course, server, b"import time\n\ntime.sleep(2)\n" + _masks())
        wait_until(lambda: _both_grading(course, tree=2), "both graded at once, fork servers up", log=server.log)
        judges = judge_pids(course)
        trees = set().union(*(process_tree(pid) for pid in judges.values()))
        server.stop()  # SIGTERM: uvicorn shuts down, the grading loop stops both judges
        wait_until(lambda: not any(alive(pid) for pid in trees), "every judge and its workers gone", 60)
        assert judge_pids(course) == {}
        assert {(r.status, r.attempts) for r in rows(course)} == {("queued", 0)}
        server.start()
        views = [server.wait_done(sid, token, timeout=300) for sid, token in handed.items()]
    finally:
        server.stop()
    assert [(v["status"], v["attempts"]) for v in views] == [("done", 1)] * 2
    _one_result_each(course, handed)
