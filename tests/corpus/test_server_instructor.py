"""The instructor on the course server, over HTTP: a real ``gradekit serve run`` on a loopback port.

The module's course has an ``overrides.toml`` beside its configuration (alice: 3 points taken off) and an hourly
limit of 3. alice hands in the reference; dave, whose roster name is HTML, races ten hand-ins at the limit. The
instructor logs in on the students' page and reads the gradebook, the class summary and the similarity page; every
instructor route is tried with a student's token and session and with none. The gradebook CSV and lms.csv are
compared with the batch's for alice's same hand-in. The last test restarts the server without the overrides file.
"""

import csv
import http.client
import io
import json
import re
import threading
import urllib.parse
import zipfile

import pytest

from tests.server_helpers import ROOT, Server, call, gradekit, login, make_course, multipart, upload


def _zipped(folder):
    """The ``.py`` files of ``folder`` as the bytes of a zip."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path in sorted(folder.glob("*.py")):
            zf.write(path, path.name)
    return buf.getvalue()


SOLUTION = _zipped(ROOT / "solution")
"""The reference, whole: enough code for the class similarity to see a copy (``masks.py`` alone is too little)."""
OVERRIDES = """[students.alice]
points = -3
note = "the report's figure was copied"
by = "Prof. Li"
why = "academic honesty, first warning"

[students.zed]
note = "not on the roster: a warning at the start"
"""
LIMIT = 3
ROUTES = [
    ("GET", "/instructor/"),
    ("GET", "/instructor/index.html"),
    ("GET", "/instructor/similarity.html"),
    ("GET", "/instructor/gradebook.csv"),
    ("GET", "/instructor/lms.csv"),
    ("GET", "/api/gradebook"),
    ("POST", "/api/regrade"),
    ("POST", "/instructor/regrade"),
    ("GET", "/instructor/review?student=alice"),
    ("POST", "/instructor/review"),
]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    c = make_course(tmp_path_factory.mktemp("course"), f"submissions_per_hour = {LIMIT}\n")
    (c.folder / "overrides.toml").write_text(OVERRIDES, encoding="utf-8")
    return c


@pytest.fixture(scope="module")
def server(course):
    with Server(course) as s:
        yield s


@pytest.fixture(scope="module")
def alice_graded(course, server):
    """alice's reference, handed in and graded: its id."""
    status, answer = upload(server, course.tokens["alice"], [("solution.zip", SOLUTION)])
    assert status == 201, answer
    view = server.wait_done(answer["id"], course.tokens["alice"])
    assert view["status"] == "done", view
    return answer["id"]


def _raced(server, token, n):
    """``n`` hand-ins of one student at once: every request's headers and all of its body but the last byte are
    sent first, on ``n`` connections, so that each can pass the server's early check (made before the body is
    read) before any is stored; then the last bytes, all together. The statuses. Whatever the order the server
    takes them in, a correct server stores exactly the limit; one that relies on the early check stores more."""
    body, ctype = multipart([("hw.zip", b"not a zip")])
    connections = []
    for _ in range(n):
        c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        c.putrequest("POST", "/api/submissions")
        for key, value in (
            ("Authorization", f"Bearer {token}"),
            ("Content-Type", ctype),
            ("Content-Length", str(len(body))),
        ):
            c.putheader(key, value)
        c.endheaders(body[:-1])
        connections.append(c)
    # Each request waits for its last byte, which every connection is given at the same moment.
    statuses = [None] * n
    go = threading.Barrier(n)

    def finish(i):
        go.wait()
        connections[i].send(body[-1:])
        answer = connections[i].getresponse()
        answer.read()
        statuses[i] = answer.status
        connections[i].close()

    threads = [threading.Thread(target=finish, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


@pytest.fixture(scope="module")
def raced(course, server):
    """dave's ten hand-ins at once (``_raced``): their statuses, once those stored are graded."""
    dave = course.tokens["dave"]
    statuses = _raced(server, dave, 10)
    for s in json.loads(call("GET", server.url + "/api/submissions", dave)[2])["submissions"]:
        server.wait_done(s["id"], dave)
    return statuses


def test_hand_ins_racing_at_the_limit_store_exactly_the_limit(course, server, raced):
    assert sorted(raced) == [201] * LIMIT + [429] * (10 - LIMIT), raced
    listed = json.loads(call("GET", server.url + "/api/submissions", course.tokens["dave"])[2])["submissions"]
    stored = [p for p in (course.data / "submissions" / "dave").iterdir() if p.name.isdigit()]
    assert len(listed) == len(stored) == LIMIT  # the refused ones left no row and no folder


def test_the_instructor_logs_in_on_the_page(course, server, alice_graded):
    status, location, cookie = login(server, course.instructor)
    assert status == 303 and location == "/instructor/?lang=en" and cookie
    assert course.instructor not in cookie
    status, headers, _ = call("GET", server.url + "/", headers={"Cookie": cookie})
    assert status == 303 and headers["Location"].startswith("/instructor/")
    for who in ({"Cookie": cookie}, {"Authorization": f"Bearer {course.instructor}"}):
        status, headers, body = call("GET", server.url + "/instructor/", headers=who)
        assert status == 200, body
        csp = headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp and headers["Cache-Control"] == "no-store"
        page = body.decode()
        row = re.search(r'<tr data-student="alice">.*?</tr>', page, re.S).group(0)
        assert "Alice Li" in row and "7 / 10" in row and f'href="/submissions/{alice_graded}/report"' in row
        assert "reviewed" in row
        assert re.search(r'<tr data-student="carol">.*?nothing graded', page, re.S)
        # the page's session can be ended from it; a token has no session to end, so its view shows no such form
        assert ('action="/logout' in page) == ("Cookie" in who) and ('action="/instructor/regrade' in page) == (
            "Cookie" in who
        )
    status, _, body = call("GET", server.url + "/instructor/?lang=zh", headers={"Cookie": cookie})
    assert status == 200 and "成绩册" in body.decode() and "已复核" in body.decode()
    status, _, report = call("GET", f"{server.url}/submissions/{alice_graded}/report", headers={"Cookie": cookie})
    assert status == 200 and b"Instructor&#39;s review" in report
    page = call("GET", server.url + "/instructor/", headers={"Cookie": cookie})[2].decode()
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
    before = len(json.loads(call("GET", server.url + "/api/submissions", course.instructor)[2])["submissions"])
    body, ctype = multipart([("masks.py", b"x = 1\n")], {"csrf": csrf})
    status, _, _ = call("POST", server.url + "/upload", body=body, content_type=ctype, headers={"Cookie": cookie})
    assert status == 403  # the instructor hands nothing in, from the page either
    assert len(json.loads(call("GET", server.url + "/api/submissions", course.instructor)[2])["submissions"]) == before
    logout = urllib.parse.urlencode({"csrf": csrf}).encode()
    status, headers, _ = call(
        "POST",
        server.url + "/logout",
        body=logout,
        content_type="application/x-www-form-urlencoded",
        headers={"Cookie": cookie},
    )
    assert status == 303 and 'gradekit_session=""' in headers["Set-Cookie"]


def test_names_from_the_roster_are_escaped(course, server, alice_graded, raced):
    who = {"Authorization": f"Bearer {course.instructor}"}
    for path in ("/instructor/", "/instructor/index.html", "/instructor/similarity.html"):
        status, _, body = call("GET", server.url + path, headers=who)
        assert status == 200, path
        page = body.decode()
        assert "<script>document.title" not in page and '<b id="markup">' not in page, path
    for path in ("/instructor/", "/instructor/index.html"):  # dave's graded hand-ins: he is on both
        page = call("GET", server.url + path, headers=who)[2].decode()
        assert "&lt;b id=&#34;markup&#34;&gt;Dave&lt;/b&gt;&lt;script&gt;" in page, path


@pytest.fixture(scope="module")
def bob_copied(course, server, alice_graded):
    """bob hands in alice's file as it is, graded: its id."""
    status, answer = upload(server, course.tokens["bob"], [("solution.zip", SOLUTION)])
    assert status == 201, answer
    assert server.wait_done(answer["id"], course.tokens["bob"])["status"] == "done"
    return answer["id"]


def test_the_class_summary_and_similarity_pages(course, server, alice_graded, bob_copied):
    who = {"Authorization": f"Bearer {course.instructor}"}
    status, headers, body = call("GET", server.url + "/instructor/index.html", headers=who)
    assert status == 200 and "script-src" not in headers["Content-Security-Policy"]
    page = body.decode()
    assert "<title>Class summary</title>" in page and '<svg class="histogram"' in page
    assert f'<a href="/submissions/{alice_graded}/report">Alice Li (alice)</a>' in page
    assert re.search(r'id="task-masks"', page)
    assert 'href="similarity.html?lang=en"' in page and 'href="./?lang=en"' in page  # the frame links all three
    status, _, body = call("GET", server.url + "/instructor/index.html?lang=zh", headers=who)
    assert status == 200 and "<title>全班汇总</title>" in body.decode()
    assert 'href="similarity.html?lang=en#cluster-1"' in page  # the copy, found among the submissions that count
    status, _, body = call("GET", server.url + "/instructor/similarity.html", headers=who)
    page = body.decode()
    assert status == 200 and "Similar code across the class" in page
    cluster = re.search(r'<div class="cluster" id="cluster-1">.*?</div>', page, re.S).group(0)
    assert "Alice Li (alice)" in cluster and "=HYPERLINK(&#34;http://x&#34;) (bob)" in cluster


def test_every_instructor_route_refuses_students_and_strangers(course, server, alice_graded):
    alice = course.tokens["alice"]
    _, _, session = login(server, alice)
    assert session
    for method, path in ROUTES:
        url = server.url + path
        assert call(method, url, alice)[0] == 403, path
        assert call(method, url, headers={"Cookie": session})[0] in (401, 403), path
        if not path.startswith("/api/"):  # a page: the student's session is refused as their token is
            assert call(method, url, headers={"Cookie": session})[0] == 403, path
        status, _, body = call(method, url)
        assert status == 401, path
        if path.endswith("/") or path.endswith(".html"):
            assert b'name="token"' in body, path  # the login form
        assert call(method, url, "not-a-token")[0] == 401, path
    forged = session.replace(":alice", ":instructor:1")
    assert call("GET", server.url + "/instructor/", headers={"Cookie": forged})[0] == 401  # the subject is signed


def test_overrides_change_the_recorded_score(course, server, alice_graded):
    alice = course.tokens["alice"]
    view = json.loads(call("GET", f"{server.url}/api/submissions/{alice_graded}", alice)[2])
    assert (view["score"], view["max_score"]) == (7, 10)
    rows = {
        r["student"]: r
        for r in json.loads(call("GET", server.url + "/api/gradebook", course.instructor)[2])["students"]
    }
    assert rows["alice"]["score"] == 7 and rows["alice"]["reviewed"] is True
    assert rows["bob"]["reviewed"] is False
    csv_text = call("GET", server.url + "/instructor/gradebook.csv", course.instructor)[2].decode("utf-8-sig")
    assert next(line for line in csv_text.splitlines() if line.startswith("alice,")).split(",")[2] == "7"
    report = call("GET", f"{server.url}/submissions/{alice_graded}/report", alice)[2].decode()
    assert "Instructor&#39;s review" in report and "academic honesty, first warning" in report
    said = server.log.read_text(errors="replace")
    assert "'zed'" in said and str(course.folder / "overrides.toml") in said  # named nobody: said, not applied


def test_a_bad_overrides_file_stops_the_start(tmp_path):
    c = make_course(tmp_path)
    bad = c.folder / "overrides.toml"
    bad.write_text('[students.alice]\nnote = "a"\npoints = \n', encoding="utf-8")
    done = gradekit("serve", "run", "--config", c.config, "--port", "9")
    assert done.returncode == 2
    assert str(bad) in done.stderr and "line 3" in done.stderr, done.stderr
    bad.write_text('[students.alice]\npoints = "two"\nby = "x"\nwhy = "y"\n', encoding="utf-8")
    done = gradekit("serve", "run", "--config", c.config, "--port", "9")
    assert done.returncode == 2
    assert str(bad) in done.stderr and 'students."alice"' in done.stderr and "points" in done.stderr, done.stderr
    assert not list(c.folder.glob("server-*.log"))


@pytest.fixture(scope="module")
def batch_out(course, tmp_path_factory):
    """The batch's output folder for alice's hand-in (the same zip), graded with the module's course configuration
    and its ``overrides.toml``, as ``gradekit batch --config`` grades it."""
    from grader.batch import runner

    base = tmp_path_factory.mktemp("batch")
    (base / "class").mkdir()
    (base / "class" / "alice.zip").write_bytes(SOLUTION)
    runner.batch(submissions=base / "class", out=base / "out", jobs=1, profile="quick", config=course.config)
    return base / "out"


def _csv_rows(text, key):
    return {r[key]: r for r in csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline=""))}


def test_the_gradebook_and_lms_files_carry_the_review_as_the_batch_does(course, server, alice_graded, batch_out):
    """alice's review shows in the server's gradebook.csv with the batch's review columns, and in its lms.csv, with
    the batch's values for the same hand-in; the gradebook page links both files."""
    from grader.batch.gradebook import REVIEW

    who = {"Authorization": f"Bearer {course.instructor}"}
    status, headers, body = call("GET", server.url + "/instructor/gradebook.csv", headers=who)
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    served = _csv_rows(body.decode("utf-8"), "student_id")
    batch = _csv_rows((batch_out / "gradebook.csv").read_text(encoding="utf-8"), "student_id")
    columns = ("total", "max", "status", "reason") + REVIEW
    assert {c: served["alice"][c] for c in columns} == {c: batch["alice"][c] for c in columns}
    review = [served["alice"][c] for c in ("total", "before_review", "adjustment", "review_note", "reviewed_by")]
    assert review == ["7", "10", "-3", "the report's figure was copied", "Prof. Li"]
    assert all(served["carol"][c] == "" for c in REVIEW) and served["carol"]["total"] == ""  # nothing graded

    status, headers, body = call("GET", server.url + "/instructor/lms.csv", headers=who)
    assert status == 200 and headers["Content-Type"].startswith("text/csv") and body.startswith("\ufeff".encode())
    assert 'filename="lms.csv"' in headers["Content-Disposition"]
    served_lines = body.decode("utf-8").removeprefix("\ufeff").splitlines()
    batch_lines = (batch_out / "lms.csv").read_text(encoding="utf-8").removeprefix("\ufeff").splitlines()
    assert served_lines[0] == batch_lines[0]  # the same headings, the course's title among them
    alice = next(line for line in served_lines if line.startswith("alice,"))
    assert alice == next(line for line in batch_lines if line.startswith("alice,")) and alice.endswith(",7")
    assert not any(line.startswith("carol,") for line in served_lines)  # nothing counts: the LMS grade left alone
    page = call("GET", server.url + "/instructor/", headers=who)[2].decode()
    assert 'href="gradebook.csv"' in page and 'href="lms.csv"' in page


def test_without_the_overrides_file_the_score_is_the_grading(course, server, alice_graded):
    """Last: the module's server is stopped, and started again with the file taken out."""
    server.stop()
    (course.folder / "overrides.toml").unlink()
    alice = course.tokens["alice"]
    with Server(course) as again:
        view = json.loads(call("GET", f"{again.url}/api/submissions/{alice_graded}", alice)[2])
        assert (view["score"], view["status"]) == (10, "done")
        rows = {
            r["student"]: r
            for r in json.loads(call("GET", again.url + "/api/gradebook", course.instructor)[2])["students"]
        }
        assert rows["alice"]["score"] == 10 and rows["alice"]["reviewed"] is False
        served = call("GET", again.url + "/instructor/gradebook.csv", course.instructor)[2].decode("utf-8")
        assert "review_note" not in served.splitlines()[0]  # as the batch's: no file, no review columns
        report = call("GET", f"{again.url}/submissions/{alice_graded}/report", alice)[2].decode()
        assert "Instructor&#39;s review" not in report and "academic honesty" not in report
