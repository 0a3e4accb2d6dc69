"""The course server on PostgreSQL, the whole path: ``[server] database`` names an empty PostgreSQL database
(``tests/postgres.py``: a server of the tests' own, or the one ``GRADEKIT_TEST_POSTGRES`` names); ``gradekit serve
init`` and ``serve roster import`` make the schema and the roster in it, a real ``gradekit serve run`` on a loopback
port takes alice's hand-in from ``gradekit submit --wait``, a judge grades it, and the report, the gradebook and
the submission's row in PostgreSQL have it; no SQLite database is made beside."""

import json
import re

from tests.server_helpers import ROOT, Server, call, gradekit, make_course, rows


def test_a_hand_in_is_graded_and_counted_on_postgresql(tmp_path, postgres_url):
    course = make_course(tmp_path / "course", f'database = "{postgres_url}"\njudges = 1\n')
    alice = course.tokens["alice"]
    with Server(course) as server:
        done = gradekit("submit", ROOT / "solution", "--server", server.url, "--token", alice, "--wait", timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Score: 10 / 10" in done.stdout, done.stdout
        sid = int(re.search(r"submission (\d+)", done.stdout).group(1))
        report = re.search(r"Report: (\S+)", done.stdout).group(1)
        status, _, page = call("GET", report, alice)
        assert status == 200 and b"<html" in page and b"alice" in page
        status, _, body = call("GET", server.url + "/api/gradebook", course.instructor)
        assert status == 200, body
    gradebook = {r["student"]: r for r in json.loads(body)["students"]}
    assert gradebook["alice"]["score"] == 10 and gradebook["alice"]["counted"] == sid
    assert gradebook["carol"]["name"] == "王芳" and gradebook["carol"]["counted"] is None  # UTF-8 both ways
    ((row_id, state, attempts, score, grading),) = rows(course, postgres_url)
    assert (row_id, state, attempts, score) == (sid, "done", 1, 10.0) and grading
    assert (course.data / "gradings" / str(sid)).is_dir()
    assert not (course.data / "gradekit.db").exists()  # the server kept nothing in SQLite
