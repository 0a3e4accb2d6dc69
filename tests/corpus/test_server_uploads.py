"""The course server grading what students really hand in, over HTTP against a real ``gradekit serve run``: a
notebook, a broken zip and a zip whose member escapes its folder (graded as not gradable, the server unharmed),
and the instructor's regrade of everything. The corpus tier: each grades several submissions."""

import io
import json
import zipfile

import pytest

from tests.server_helpers import ROOT, Server, call, make_course, upload


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def server(course):
    with Server(course) as s:
        yield s


def test_a_broken_or_hostile_zip_is_graded_as_not_gradable(course, server):
    bob = course.tokens["bob"]
    escaping = io.BytesIO()
    with zipfile.ZipFile(escaping, "w") as zf:
        zf.writestr("../../evil.py", "import os\n")
    views = []
    for name, content in (("broken.zip", b"PK\x03\x04 not a zip"), ("escaping.zip", escaping.getvalue())):
        status, answer = upload(server, bob, [(name, content)])
        assert status == 201, answer
        views.append(server.wait_done(answer["id"], bob))
    for view in views:
        assert (view["status"], view["score"], view["verdict"]) == ("done", 0, "error"), view
        assert view["reason"] and call("GET", server.url + view["report"], bob)[0] == 200
    assert not list(course.folder.rglob("evil.py"))
    assert call("GET", server.url + "/", bob)[0] == 200  # the server is still there


def test_a_notebook_is_graded(course, server):
    alice = course.tokens["alice"]
    status, answer = upload(server, alice, [("starter.ipynb", (ROOT / "notebooks" / "starter.ipynb").read_bytes())])
    assert status == 201, answer
    view = server.wait_done(answer["id"], alice)
    assert view["status"] == "done" and view["max_score"] == 10 and view["score"] < 10


def test_regrade_grades_everything_again(course, server):
    teacher = course.instructor
    masks = (ROOT / "solution" / "masks.py").read_bytes()
    status, answer = upload(server, course.tokens["alice"], [("masks.py", masks)])
    assert status == 201, answer
    mine = answer["id"]
    everyone = json.loads(call("GET", server.url + "/api/submissions", teacher)[2])["submissions"]
    for s in everyone:  # what the other tests handed in is graded first
        server.wait_done(s["id"], teacher)
    status, _, body = call("POST", server.url + "/api/regrade", teacher)
    assert status == 200 and json.loads(body)["queued"] == len(everyone)
    again = {s["id"]: server.wait_done(s["id"], teacher) for s in everyone}
    ref = again[mine]
    assert (ref["status"], ref["score"], ref["attempts"]) == ("done", 10, 1)
    assert [s["id"] for s in everyone] == sorted(again)
