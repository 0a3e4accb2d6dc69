"""The course server's pages in a real headless Chromium: a student logs in with their token, hands in the
reference's ``masks.py`` through the form, waits for the grade in the history, and opens the report, which shows
under the server's Content-Security-Policy with no violation (the report's own script allowed by its hash); the
instructor logs in on the same page and reads the gradebook, the class pages and a report, with no violation, and
regrades everything with the gradebook page's button."""

import time

import pytest

from tests.server_helpers import ROOT, Server, make_course, rows, upload, wait_until

pytestmark = pytest.mark.browser


def _after(page, action):
    """Run the JavaScript ``action`` (a form submission) and wait for the page it leads to."""
    before = len(page._events("Page.loadEventFired"))
    page.evaluate(action)
    ends = time.monotonic() + 30
    while len(page._events("Page.loadEventFired")) == before:
        assert time.monotonic() < ends, f"no page after {action}"
        page.browser.pump(0.05)
    page.browser.pump(0.2)


def _alice_hands_in_masks(server, course):
    """alice hands in the reference's ``masks.py`` over the API, and it is graded: the submission's API answer."""
    status, answer = upload(
        server, course.tokens["alice"], [("masks.py", (ROOT / "solution" / "masks.py").read_bytes())]
    )
    assert status == 201, answer
    assert server.wait_done(answer["id"], course.tokens["alice"])["status"] == "done"
    return answer


def _instructor_page(browser, server, course):
    """The home page in English, where the instructor logs in with their token: the page it leads to."""
    page = browser.open(f"{server.url}/?lang=en")
    _after(
        page, f"document.querySelector('input[name=token]').value = {course.instructor!r}; document.forms[0].submit()"
    )
    return page


def test_hand_in_through_the_page_and_read_the_report(browser, tmp_path):
    course = make_course(tmp_path)
    with Server(course) as server:
        page = browser.open(f"{server.url}/?lang=zh")
        assert page.evaluate("document.title") == "提交作业"
        token = course.tokens["alice"]
        _after(page, f"document.querySelector('input[name=token]').value = {token!r}; document.forms[0].submit()")
        assert "alice" in page.evaluate("document.body.innerText")
        assert page.evaluate("document.cookie") == ""  # the session cookie is HttpOnly
        document = page.send("DOM.getDocument")["root"]["nodeId"]
        node = page.send("DOM.querySelector", {"nodeId": document, "selector": "input[type=file]"})["nodeId"]
        page.send("DOM.setFileInputFiles", {"nodeId": node, "files": [str(ROOT / "solution" / "masks.py")]})
        _after(page, "document.querySelector('form[action^=\"/upload\"]').submit()")
        assert "已收到提交" in page.evaluate("document.body.innerText")
        ends = time.monotonic() + 180
        while not page.evaluate("document.querySelectorAll('a[href$=\"/report\"]').length"):
            assert time.monotonic() < ends, page.evaluate("document.body.innerText")
            time.sleep(1.0)
            page.navigate(f"{server.url}/?lang=zh")
        assert "10 / 10" in page.evaluate("document.body.innerText")
        report = page.evaluate("document.querySelector('a[href$=\"/report\"]').href")
        assert page.console_errors == []
        page = browser.open(report)  # a tab of its own: only the report's console and requests
        assert page.console_errors == []  # no Content-Security-Policy violation: the report's script is allowed
        assert page.evaluate("document.scripts.length") == 1
        assert page.evaluate("document.querySelector('#total-score').textContent") == "10 / 10"
        assert set(page.requests) <= {report, f"{server.url}/favicon.ico"}


def test_the_instructor_reads_the_gradebook_and_the_class_pages(browser, tmp_path):
    """The instructor logs in on the same page with their token and reads the gradebook (dave's roster name is HTML
    and a script: shown as text, run never), the class summary and the similarity page, and a report, each with no
    Content-Security-Policy violation and no request but the page's own."""
    course = make_course(tmp_path)
    with Server(course) as server:
        answer = _alice_hands_in_masks(server, course)
        page = _instructor_page(browser, server, course)
        assert page.evaluate("location.pathname") == "/instructor/"
        assert page.evaluate("document.title") == "Gradebook"  # dave's script did not set it
        assert page.evaluate("document.querySelector('#markup')") is None
        text = page.evaluate("document.body.innerText")
        assert '<b id="markup">Dave</b>' in text and "10 / 10" in text and "Alice Li" in text
        assert page.evaluate("document.cookie") == ""
        assert page.console_errors == []
        links = page.evaluate("Array.from(document.querySelectorAll('header.frame a')).map(a => a.href)")
        assert links == [f"{server.url}/instructor/{p}?lang=en" for p in ("", "index.html", "similarity.html")]
        report = page.evaluate(f"document.querySelector('a[href=\"/submissions/{answer['id']}/report\"]').href")
        for url, title in ((links[1], "Class summary"), (links[2], "Similar code across the class")):
            tab = browser.open(url)  # a tab of its own: only this page's console and requests
            assert tab.evaluate("document.title") == title
            assert tab.console_errors == []
            assert set(tab.requests) <= {url, f"{server.url}/favicon.ico"}
        summary = browser.open(links[1])
        assert (
            summary.evaluate(f"document.querySelector('a[href=\"/submissions/{answer['id']}/report\"]').textContent")
            == "Alice Li (alice)"
        )
        tab = browser.open(report)
        assert (
            tab.console_errors == [] and tab.evaluate("document.querySelector('#total-score').textContent") == "10 / 10"
        )


def test_the_instructor_regrades_from_the_gradebook_page(browser, tmp_path):
    """The instructor clicks the gradebook page's regrade button: the page says how many were queued and shows them
    waiting (three hand-ins, two judges: one at least still waits), then, reloaded, the grades back, each from a new
    grading; no Content-Security-Policy violation (the form posts to the page's own origin)."""
    course = make_course(tmp_path)
    masks = (ROOT / "solution" / "masks.py").read_bytes()
    with Server(course) as server:
        handed = {}
        for student in ("alice", "bob", "carol"):
            status, answer = upload(server, course.tokens[student], [("masks.py", masks)])
            assert status == 201, answer
            handed[answer["id"]] = student
        for sid, student in handed.items():
            assert server.wait_done(sid, course.tokens[student])["status"] == "done"
        before = {r.id: r.grading for r in rows(course)}
        page = _instructor_page(browser, server, course)
        assert page.evaluate("location.pathname") == "/instructor/"
        assert "waiting or being graded" not in page.evaluate("document.body.innerText")
        _after(page, "document.querySelector('form[action^=\"/instructor/regrade\"] button').click()")
        assert page.evaluate("location.pathname + location.search") == "/instructor/?lang=en&queued=3"
        text = page.evaluate("document.body.innerText")
        assert "3 submission(s) queued to be graded again" in text
        assert "waiting or being graded" in text  # the queue refilled
        wait_until(lambda: all(r.status == "done" and r.grading != before[r.id] for r in rows(course)), "regraded")
        page.navigate(f"{server.url}/instructor/?lang=en")
        text = page.evaluate("document.body.innerText")
        assert "waiting or being graded" not in text
        scores = "Array.from(document.querySelectorAll('td[data-col=score]')).map(td => td.textContent.trim())"
        assert sorted(page.evaluate(scores)) == ["", "10 / 10", "10 / 10", "10 / 10"]  # dave handed nothing in
        assert page.console_errors == []


def test_the_instructor_reviews_a_student_from_the_gradebook_page(browser, tmp_path):
    """The instructor follows alice's review link on the gradebook page, fills the form (points taken off, who and
    why, a note of markup and script) and saves: the gradebook says the review was saved and shows the new total;
    the course, which had no overrides file, has an ``overrides.toml`` beside its configuration holding alice's
    table; the review page shows the note as text; no Content-Security-Policy violation on any page."""
    course = make_course(tmp_path)
    note = '<img src=x id="markup"><script>document.title="ran"</script>'
    with Server(course) as server:
        _alice_hands_in_masks(server, course)
        page = _instructor_page(browser, server, course)
        _after(page, "document.querySelector('a[data-review=alice]').click()")
        assert page.evaluate("location.pathname + location.search") == "/instructor/review?student=alice&lang=en"
        assert page.evaluate("document.title") == "Review of Alice Li (alice)"
        fill = {"points": "-2", "note": note, "by": "Prof. Li", "why": "the figure was copied"}
        script = "; ".join(f"document.querySelector('#review-{k}').value = {v!r}" for k, v in fill.items())
        _after(page, script + "; document.querySelector('form.review button').click()")
        assert page.evaluate("location.pathname + location.search") == "/instructor/?lang=en&reviewed=alice"
        assert "The review of alice is saved in" in page.evaluate("document.body.innerText")
        score = "document.querySelector('tr[data-student=alice] td[data-col=score]').textContent.trim()"
        assert page.evaluate(score) == "8 / 10"
        assert (course.folder / "overrides.toml").read_text(encoding="utf-8") == (
            '[students.alice]\npoints = -2\nnote = "<img src=x id=\\"markup\\"><script>document.title=\\"ran\\"'
            '</script>"\nby = "Prof. Li"\nwhy = "the figure was copied"\n'
        )
        _after(page, "document.querySelector('a[data-review=alice]').click()")
        assert page.evaluate("document.querySelector('#review-note').value") == note
        assert page.evaluate("document.querySelector('#markup')") is None
        assert page.evaluate("document.title") == "Review of Alice Li (alice)"
        assert page.console_errors == []
