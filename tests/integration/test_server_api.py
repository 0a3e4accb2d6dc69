"""The course server over HTTP: a real ``gradekit serve run`` (uvicorn) on a loopback port, set up by the commands
an instructor types, handed in to by ``gradekit submit`` and by plain requests.

One server for the module (``masks``, quick examples: a grading takes seconds); the deadline test starts its own.
"""

import json
import os
import re
import stat
import urllib.parse

import pytest

from grader import api
from tests.server_helpers import (
    ROOT,
    Server,
    call,
    form_csrf,
    gradekit,
    login,
    make_course,
    multipart,
    post_form,
    upload,
)

SOLUTION = ROOT / "solution"
SKELETON = ROOT / "skeleton"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("course"), "max_upload_mb = 1\nsubmissions_per_hour = 4\n")


@pytest.fixture(scope="module")
def server(course):
    with Server(course) as s:
        yield s


@pytest.fixture(scope="module")
def graded(course, server):
    """The reference handed in by alice and the skeleton by bob, each with ``gradekit submit --wait``."""
    ref = gradekit(
        "submit",
        SOLUTION,
        "--server",
        server.url,
        "--wait",
        timeout=300,
        extra_env={"GRADEKIT_TOKEN": course.tokens["alice"]},
    )
    skel = gradekit("submit", SKELETON, "--server", server.url, "--token", course.tokens["bob"], "--wait", timeout=300)
    return ref, skel


def _id(out):
    return int(re.search(r"submission (\d+)", out).group(1))


def test_submit_reference_and_skeleton_by_the_cli(course, server, graded):
    ref, skel = graded
    assert ref.returncode == 0, ref.stdout + ref.stderr
    assert "Score: 10 / 10" in ref.stdout, ref.stdout
    assert "Being graded…" in ref.stdout or "Waiting in line" in ref.stdout  # --wait says where it stands
    assert skel.returncode == 0, skel.stdout + skel.stderr
    score, top = re.search(r"Score: ([\d.]+) / ([\d.]+)", skel.stdout).groups()
    assert float(top) == 10 and float(score) < 10
    report = re.search(r"Report: (\S+)", ref.stdout).group(1)
    status, headers, body = call("GET", report, course.tokens["alice"])
    assert status == 200
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "unsafe-eval" not in csp
    assert "script-src 'unsafe-inline'" not in csp and "form-action 'none'" in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert b"<html" in body and b"alice" in body


def test_a_failing_checks_report_on_the_server_has_no_rerun_line(course, server, graded, tmp_path):
    """The same mistake graded by a batch gets a rerun line naming the hand-in on the instructor's machine; on the
    server that line would name the server's copy, which the student has not: their report leaves it out."""
    from grader.assignment import load
    from grader.bugs.catalogue import Catalogue

    bug = Catalogue(load()).by_id["masks.causal_blocks_diagonal"]
    folder = Catalogue(load()).write_mutant(bug, tmp_path / "mutant")
    alone = api.check(path=folder, tasks=["masks"], profile="quick", sealed=True)
    failing = [c for t in alone.tasks for c in t.checks if c.status == "failed"]
    assert failing and all("--only" in c.reproduce for c in failing)  # graded elsewhere, each has its line
    dave = course.tokens["dave"]  # a student the other tests here leave alone
    status, answer = upload(server, dave, [("masks.py", (folder / "masks.py").read_bytes())])
    assert status == 201, answer
    view = server.wait_done(answer["id"], dave)
    assert view["status"] == "done" and view["score"] < view["max_score"], view
    status, _, report = call("GET", server.url + view["report"], dave)
    assert status == 200 and failing[0].id.encode() in report
    assert b"--only" not in report and b"gradekit check" not in report


def test_submit_says_it_in_chinese(course, server):
    done = gradekit("submit", SKELETON / "masks.py", "--server", server.url, "--token", "nope", "--lang", "zh")
    assert done.returncode == 2
    assert "服务器拒绝了该提交（401）" in done.stderr and "需要有效的令牌" in done.stderr


def test_each_student_sees_only_their_own(course, server, graded):
    alice, bob, teacher = course.tokens["alice"], course.tokens["bob"], course.instructor
    sid = _id(graded[0].stdout)
    for path in (f"/api/submissions/{sid}", f"/submissions/{sid}/report"):
        assert call("GET", server.url + path, alice)[0] == 200
        assert call("GET", server.url + path, bob)[0] == 404  # as an id that does not exist: ids leak nothing
        assert call("GET", server.url + path)[0] == 401
        assert call("GET", server.url + path, "not-a-token")[0] == 401
        assert call("GET", server.url + path, teacher)[0] == 200
    assert call("GET", f"{server.url}/api/submissions/999999", alice)[0] == 404
    mine = json.loads(call("GET", server.url + "/api/submissions", bob)[2])["submissions"]
    assert mine and {s["student"] for s in mine} == {"bob"}
    everyone = json.loads(call("GET", server.url + "/api/submissions", teacher)[2])["submissions"]
    assert {"alice", "bob"} <= {s["student"] for s in everyone}
    assert upload(server, teacher, [("masks.py", b"x = 1\n")])[0] == 403  # the instructor hands nothing in
    assert upload(server, None, [("masks.py", b"x = 1\n")])[0] == 401


def test_instructor_routes_refuse_students(course, server, graded):
    for method, path in (("GET", "/api/gradebook"), ("GET", "/instructor/gradebook.csv"), ("POST", "/api/regrade")):
        assert call(method, server.url + path, course.tokens["alice"])[0] == 403, path
        assert call(method, server.url + path)[0] == 401, path
    status, headers, body = call("GET", server.url + "/api/gradebook", course.instructor)
    assert status == 200 and headers["X-Content-Type-Options"] == "nosniff" and headers["Cache-Control"] == "no-store"
    rows = {r["student"]: r for r in json.loads(body)["students"]}
    assert rows["alice"]["score"] == 10 and rows["alice"]["counted"] == _id(graded[0].stdout)
    assert rows["carol"]["counted"] is None and rows["carol"]["name"] == "王芳"
    status, headers, body = call("GET", server.url + "/instructor/gradebook.csv", course.instructor)
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    text = body.decode("utf-8")
    assert text.startswith("\ufeff")
    bob = next(line for line in text.splitlines() if line.startswith("bob,"))
    assert "'=HYPERLINK" in bob  # the name a roster gave is a cell no spreadsheet runs


def test_upload_refusals(course, server):
    carol = course.tokens["carol"]
    status, answer = upload(server, carol, [("notes.txt", b"hello")])
    assert status == 400 and answer["code"] == "server.upload.kinds"
    status, answer = upload(server, carol, [("../../masks.py", b"x = 1\n")])
    assert status == 201  # a path is cut to its name: never stored outside the student's folder
    assert (course.data / "submissions" / "carol" / str(answer["number"]) / "files" / "masks.py").is_file()
    assert not list(course.data.rglob("submissions/masks.py")) and not (course.data / "masks.py").exists()
    big = b"#" * (2 << 20)
    status, answer = upload(server, carol, [("masks.py", big)])
    assert status == 413 and "1 MB" in answer["error"]
    status, answer = upload(server, carol, [("masks.py", big)], headers={"Accept-Language": "zh"})
    assert status == 413 and "上传内容过大" in answer["error"]
    for _ in range(4):
        status, answer = upload(server, carol, [("masks.py", b"x = 1\n")])
        if status == 429:
            break
        assert status == 201, answer
    assert status == 429 and "4" in answer["error"]
    body, ctype = multipart([("masks.py", b"x = 1\n")])
    _, headers, _ = call("POST", f"{server.url}/api/submissions", carol, body=body, content_type=ctype)
    assert 3000 < int(headers["Retry-After"]) <= 3600
    stored = [p for p in (course.data / "submissions" / "carol").iterdir() if p.name.isdigit()]
    listed = json.loads(call("GET", server.url + "/api/submissions", carol)[2])["submissions"]
    assert len(stored) == len(listed) <= 4  # what was refused left nothing behind


def test_csrf_and_the_page(course, server):
    alice = course.tokens["alice"]
    status, headers, _ = call(
        "POST",
        server.url + "/login",
        body=urllib.parse.urlencode({"token": alice}).encode(),
        content_type="application/x-www-form-urlencoded",
    )
    assert status == 303
    cookie_line = headers["Set-Cookie"]
    assert "HttpOnly" in cookie_line and "samesite=strict" in cookie_line.lower()
    cookie = cookie_line.split(";", 1)[0]
    assert alice not in cookie
    status, _, page = call("GET", server.url + "/?lang=zh", headers={"Cookie": cookie})
    assert status == 200 and "提交作业" in page.decode()
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.decode()).group(1)
    before = len(json.loads(call("GET", server.url + "/api/submissions", alice)[2])["submissions"])
    for fields in ({}, {"csrf": "0" * 32}):
        body, ctype = multipart([("masks.py", b"x = 1\n")], fields)
        status, _, _ = call("POST", server.url + "/upload", body=body, content_type=ctype, headers={"Cookie": cookie})
        assert status == 403
    after = len(json.loads(call("GET", server.url + "/api/submissions", alice)[2])["submissions"])
    assert after == before  # refused before anything was stored
    body, ctype = multipart([("masks.py", b"x = 1\n")], {"csrf": csrf})
    status, headers, _ = call("POST", server.url + "/upload", body=body, content_type=ctype, headers={"Cookie": cookie})
    assert status == 303 and "received=" in headers["Location"]
    assert len(json.loads(call("GET", server.url + "/api/submissions", alice)[2])["submissions"]) == before + 1
    # Without the session, the form is refused too.
    status, _, _ = call("POST", server.url + "/upload", body=body, content_type=ctype)
    assert status == 401


def test_tokens_are_never_stored_or_logged_in_clear(course, server, graded):
    secret_key = course.data / "secret.key"
    assert stat.S_IMODE(os.stat(secret_key).st_mode) == 0o600
    (tokens_file,) = (course.data / "tokens").glob("*.csv")
    assert stat.S_IMODE(os.stat(tokens_file).st_mode) == 0o600
    stored = b"".join(p.read_bytes() for p in course.data.glob("gradekit.db*"))
    logs = "".join(p.read_text(errors="replace") for p in course.folder.glob("server-*.log"))
    assert stored and logs
    for token in [course.instructor, *course.tokens.values()]:
        assert token.encode() not in stored
        assert token not in logs
    for output in course.outputs[1:]:  # the import says where the tokens are, not what they are
        assert not any(t in output for t in course.tokens.values())


def test_a_logout_ends_the_session_for_good(course, server, graded):
    """A log-out ends that session on the server: its cookie, replayed (a copy of it), is refused by the page, the
    upload, the report and the API, for a student and for the instructor; a log-out without the form's CSRF token
    ends nothing; a fresh login works."""
    sid = _id(graded[0].stdout)  # alice's
    report = f"/submissions/{sid}/report"
    status, _, cookie = login(server, course.tokens["alice"])
    assert status == 303 and cookie
    page = call("GET", server.url + "/", headers={"Cookie": cookie})[2].decode()
    assert "Logged in as alice." in page
    csrf = form_csrf(page)
    for fields in ({}, {"csrf": "0" * 32}):  # refused: the session goes on
        assert post_form(server, "/logout", cookie, fields)[0] == 403
        assert call("GET", server.url + report, headers={"Cookie": cookie})[0] == 200
    status, headers, _ = post_form(server, "/logout", cookie, {"csrf": csrf})
    assert status == 303 and 'gradekit_session=""' in headers["Set-Cookie"]

    stored = len(list((course.data / "submissions" / "alice").iterdir()))
    status, _, page = call("GET", server.url + "/", headers={"Cookie": cookie})
    assert status == 200 and b'name="token"' in page and b"alice" not in page  # the login form
    assert call("GET", server.url + report, headers={"Cookie": cookie})[0] == 401
    assert call("GET", server.url + "/api/submissions", headers={"Cookie": cookie})[0] == 401
    body, ctype = multipart([("masks.py", b"x = 1\n")], {"csrf": csrf})
    status, _, _ = call("POST", server.url + "/upload", body=body, content_type=ctype, headers={"Cookie": cookie})
    assert status == 401 and len(list((course.data / "submissions" / "alice").iterdir())) == stored
    assert post_form(server, "/logout", cookie, {"csrf": csrf})[0] == 401
    status, _, fresh = login(server, course.tokens["alice"])
    assert status == 303 and fresh != cookie
    assert call("GET", server.url + report, headers={"Cookie": fresh})[0] == 200

    status, location, teacher = login(server, course.instructor)
    assert status == 303 and location.startswith("/instructor/")
    instructor_routes = ("/instructor/", "/instructor/gradebook.csv", "/instructor/index.html", report)
    for path in instructor_routes:
        assert call("GET", server.url + path, headers={"Cookie": teacher})[0] == 200, path
    csrf = form_csrf(call("GET", server.url + "/instructor/", headers={"Cookie": teacher})[2])
    assert post_form(server, "/logout", teacher, {})[0] == 403
    assert call("GET", server.url + "/instructor/", headers={"Cookie": teacher})[0] == 200
    assert post_form(server, "/logout", teacher, {"csrf": csrf})[0] == 303
    for path in instructor_routes:
        status, _, page = call("GET", server.url + path, headers={"Cookie": teacher})
        assert status == 401, path
    assert b'name="token"' in call("GET", server.url + "/instructor/", headers={"Cookie": teacher})[2]
    assert call("GET", server.url + "/", headers={"Cookie": teacher})[0] == 200  # no longer sent to its pages
    status, _, again = login(server, course.instructor)
    assert status == 303 and call("GET", server.url + "/instructor/", headers={"Cookie": again})[0] == 200
