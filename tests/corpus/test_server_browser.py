"""The course server's page in a real headless Chromium: a student logs in with their token, hands in the
reference's ``masks.py`` through the form, waits for the grade in the history, and opens the report, which shows
under the server's Content-Security-Policy with no violation (the report's own script allowed by its hash)."""

import time

import pytest

from tests.server_helpers import ROOT, Server, make_course

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
