"""The course server grading what students really hand in, over HTTP against a real ``gradekit serve run``: a
notebook, a broken zip and a zip whose member escapes its folder (graded as not gradable, the server unharmed),
and the instructor's regrade of everything, by the API and by the gradebook page's form. The corpus tier: each
grades several submissions."""

import io
import json
import urllib.parse
import zipfile

import pytest

from tests.server_helpers import ROOT, Server, call, form_csrf, login, make_course, post_form, rows, upload


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


def test_the_gradebook_page_regrades_with_its_form(course, server):
    """The gradebook page's regrade form: refused without a session (401, the login form), to a student's session
    or token (403), to the instructor's token without a session and to the instructor's session without the form's
    CSRF token (403), each queueing nothing; with both, every graded submission queued again, the page saying how
    many in English and Chinese, and each graded again."""
    teacher = course.instructor
    everyone = json.loads(call("GET", server.url + "/api/submissions", teacher)[2])["submissions"]
    for s in everyone:
        server.wait_done(s["id"], teacher)
    before = {r.id: r for r in rows(course)}
    _, _, cookie = login(server, teacher)
    page = call("GET", server.url + "/instructor/", headers={"Cookie": cookie})[2].decode()
    assert 'action="/instructor/regrade?lang=en"' in page
    csrf = form_csrf(page)
    _, _, student = login(server, course.tokens["alice"])
    url = server.url + "/instructor/regrade"
    form = urllib.parse.urlencode({"csrf": csrf}).encode()
    plain = "application/x-www-form-urlencoded"
    student_csrf = form_csrf(call("GET", server.url + "/", headers={"Cookie": student})[2])
    refused = [
        post_form(server, "/instructor/regrade", None, {"csrf": csrf}),  # no session
        post_form(server, "/instructor/regrade", student, {"csrf": student_csrf}),  # a student's session
        call("POST", url, course.tokens["alice"], body=form, content_type=plain),  # a student's token
        call("POST", url, teacher, body=form, content_type=plain),  # the instructor's token, no session
        post_form(server, "/instructor/regrade", cookie, {}),  # the instructor's session, no CSRF token
        post_form(server, "/instructor/regrade", cookie, {"csrf": "0" * 32}),  # another
        # the instructor's token beside a student's session and that session's own CSRF token
        call(
            "POST",
            url,
            teacher,
            body=urllib.parse.urlencode({"csrf": student_csrf}).encode(),
            content_type=plain,
            headers={"Cookie": student},
        ),
    ]
    assert [status for status, _, _ in refused] == [401, 403, 403, 403, 403, 403, 403]
    assert b'name="token"' in refused[0][2]  # the login form
    assert "reload the page and try again" in refused[-2][2].decode() and "data-student" in refused[-2][2].decode()
    assert {r.id: (r.status, r.grading) for r in rows(course)} == {i: (r.status, r.grading) for i, r in before.items()}

    status, headers, _ = post_form(server, "/instructor/regrade?lang=zh", cookie, {"csrf": csrf})
    assert status == 303 and headers["Location"] == f"/instructor/?lang=zh&queued={len(everyone)}"
    page = call("GET", server.url + headers["Location"], headers={"Cookie": cookie})[2].decode()
    assert f"已将 {len(everyone)} 份提交重新排队评分" in page
    page = call("GET", f"{server.url}/instructor/?queued={len(everyone)}", headers={"Cookie": cookie})[2].decode()
    assert f"{len(everyone)} submission(s) queued to be graded again" in page
    again = {s["id"]: server.wait_done(s["id"], teacher) for s in everyone}
    after = {r.id: r for r in rows(course)}
    assert all(after[i].grading != before[i].grading for i in before)  # each graded again, in a new attempt
    assert {i: v["score"] for i, v in again.items()} == {i: r.score for i, r in before.items()}
