"""Red-team findings against the course server, each seen from outside (a real ``gradekit serve run`` on a free
loopback port, set up as an instructor would): a student ("bob", with his token only) or someone with no token.
Each test fails against the code it was written for and says what was expected."""

import json
import socket
import time
import urllib.parse

import pytest

from tests.server_helpers import Server, call, make_course


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("redteam"), extra="max_upload_mb = 1\n")


@pytest.fixture(scope="module")
def server(course):
    with Server(course) as s:
        yield s


def _rss_mb(pid):
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_a_huge_submission_id_answers_404_json_not_500(server, course):
    """``GET /api/submissions/{id}`` and ``/submissions/{id}/report`` with an id past SQLite's 64-bit integers:
    the docs promise 404 for an id that does not exist and that every error is JSON; the server raises
    ``OverflowError`` in the database driver and answers 500 ``Internal Server Error`` (plain text, a traceback in
    the log)."""
    bob = course.tokens["bob"]
    for path in ("/api/submissions/99999999999999999999999", "/submissions/99999999999999999999999/report"):
        status, headers, body = call("GET", server.url + path, bob)
        assert status == 404, (path, status, body[:200])
        assert json.loads(body)["code"] == "server.submission.unknown"
    # no such route, or not by that method: JSON too, as the docs say of every error
    for method, path, status, code in (
        ("GET", "/submissions/-1/report", 404, "server.http.not_found"),
        ("GET", "/nothing/here", 404, "server.http.not_found"),
        ("PUT", "/login", 405, "server.http.method"),
    ):
        got, headers, body = call(method, server.url + path, bob)
        assert got == status and json.loads(body)["code"] == code, (path, got, body[:200])


def test_a_login_posted_from_another_site_sets_no_session(server, course):
    """Login CSRF: a page on another site auto-submits ``<form method=post action=http://SERVER/login>`` with bob's
    token; the victim's browser (a top-level POST navigation, which stores even a SameSite=Strict cookie) is then
    logged in as bob, and what the victim hands in on the page is stored as bob's submission (an instructor
    visiting the page loses their session the same way). ``/login`` has no CSRF token and no Origin check: the
    server answers 303 with bob's session cookie to a request whose ``Origin`` and ``Sec-Fetch-Site`` say it comes
    from another site."""
    status, headers, _ = call(
        "POST",
        server.url + "/login",
        body=urllib.parse.urlencode({"token": course.tokens["bob"]}).encode(),
        content_type="application/x-www-form-urlencoded",
        headers={"Origin": "http://evil.example", "Referer": "http://evil.example/x", "Sec-Fetch-Site": "cross-site"},
    )
    cookie = headers.get("Set-Cookie") or ""
    assert "gradekit_session=" not in cookie, (status, cookie)
    assert status in (400, 403), status
    # the other direction: the page's own form (what a browser says of it, with or without Sec-Fetch-Site) logs in
    host = server.url.split("//", 1)[1]
    for said in (
        {"Origin": server.url, "Sec-Fetch-Site": "same-origin"},
        {"Origin": server.url},
        {"Origin": "http://evil.example", "Host": "evil.example", "Sec-Fetch-Site": "cross-site"},
    ):
        status, headers, _ = call(
            "POST",
            server.url + "/login",
            body=urllib.parse.urlencode({"token": course.tokens["bob"]}).encode(),
            content_type="application/x-www-form-urlencoded",
            headers=said,
        )
        ours = said.get("Sec-Fetch-Site", "same-origin") == "same-origin" and said["Origin"].endswith(host)
        assert ("gradekit_session=" in (headers.get("Set-Cookie") or "")) == ours, (said, status)


def test_stalled_uploads_of_one_student_do_not_pin_the_servers_memory(server, course):
    """One student (bob, his token) opens 60 hand-ins at once, each sending just under ``max_upload_mb`` (1 MB) of
    its body and then nothing more. Each is past the early hourly count (nothing stored yet), and the server keeps
    every body read so far in memory, with no limit on a student's uploads in flight and no timeout on a body that
    stops coming: the server's resident memory grows by about 1.4 MB per connection (60: ~80 MB; with the default
    ``max_upload_mb = 20`` and a few hundred connections, gigabytes) and stays so while the connections are held.
    Expected: a bounded amount per student (here under 20 MB for all 60)."""
    pid = server._server_pid()
    before = _rss_mb(pid)
    size = (1 << 20) - 8192
    body = b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.py"\r\n\r\n' + b"x" * size
    socks = []
    try:
        for _ in range(60):
            s = socket.create_connection(("127.0.0.1", server.port))
            s.sendall(
                (
                    f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {course.tokens['bob']}\r\n"
                    f"Content-Type: multipart/form-data; boundary=B\r\nContent-Length: {len(body) + 100}\r\n\r\n"
                ).encode()
                + body
            )
            socks.append(s)
        time.sleep(5)
        grown = _rss_mb(pid) - before
    finally:
        for s in socks:
            s.close()
    assert grown < 20, f"the server's memory grew by {grown:.0f} MB for 60 stalled uploads of one student"


def test_a_connection_that_never_finishes_its_headers_is_closed(server):
    """Slow clients, no token: a connection that sends half a request line and headers and then nothing is kept
    open by the server (uvicorn as ``serve run`` starts it) with no time limit; each such connection holds a file
    descriptor and a task, so anyone who can reach the port (every user of the machine, on loopback, even behind
    the TLS proxy the docs ask for) can hold thousands and make the server refuse connections. Expected: closed
    within 30 s."""
    s = socket.create_connection(("127.0.0.1", server.port))
    try:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        s.settimeout(30)
        started = time.monotonic()
        try:
            data = s.recv(100)
        except TimeoutError:
            data = None
        assert data is not None, f"still open after {time.monotonic() - started:.0f} s"
    finally:
        s.close()
