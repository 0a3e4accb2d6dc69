"""What the course server's tests share: a course folder set up by the commands an instructor types, a real
server (``gradekit serve run``, uvicorn, in a process of its own on a free loopback port, always stopped), and
plain HTTP calls.

The server's grading is kept to seconds: the ``masks`` task, quick examples, short limits, and the copy policy
``flag`` (the reference itself is handed in and must get its points)."""

import csv
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOML = """assignment = "transformer"
tasks = ["masks"]
copy_policy = "flag"

[limits]
call_timeout = 6
total_timeout = 12
memory_mb = 2048

[server]
profile = "quick"
"""
ROSTER = [
    ("alice", "Alice Li"),
    ("bob", '=HYPERLINK("http://x")'),
    ("carol", "王芳"),
    ("dave", '<b id="markup">Dave</b><script>document.title="ran"</script>'),
]
START_S = 60.0
"""Seconds a server may take to answer its first request."""
HARD_LIMIT_S = 900
"""Seconds a test's server may live at all: it runs under ``timeout``, so that it dies even when the test process
was killed before its teardown ran."""

pytest.importorskip("starlette", reason="the server's packages are not installed: pip install -e '.[server]'")
pytest.importorskip("sqlalchemy", reason="the server's packages are not installed: pip install -e '.[server]'")
pytest.importorskip("uvicorn", reason="the server's packages are not installed: pip install -e '.[server]'")


def env():
    """The environment of the commands: this checkout's ``grader`` first."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p])
    e.pop("GRADEKIT_TOKEN", None)
    return e


def gradekit(*argv, cwd=None, timeout=120, extra_env=None):
    """``gradekit ARGV`` in a process of its own: the ``CompletedProcess`` (text)."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, argv)],
        cwd=cwd,
        env={**env(), **(extra_env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass
class Course:
    """A course folder set up for the server: its configuration, data folder, and every token."""

    folder: Path
    instructor: str
    tokens: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)
    """The output of every command run to set it up (to look for tokens in)."""

    @property
    def config(self):
        return self.folder / "gradekit.toml"

    @property
    def data(self):
        return self.folder / "server-data"


def make_course(folder, extra=""):
    """A course in ``folder``: ``gradekit.toml`` (``TOML`` with ``extra`` lines added to ``[server]``), then
    ``gradekit serve init`` and ``gradekit serve roster import`` of ``ROSTER``; the tokens read from the tokens file
    the import wrote."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gradekit.toml").write_text(TOML + extra, encoding="utf-8")
    with open(folder / "roster.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["student", "name", "email"])
        writer.writerows([(s, n, f"{s}@example.org") for s, n in ROSTER])
    init = gradekit("serve", "init", "--config", folder)
    assert init.returncode == 0, init.stderr
    instructor = init.stdout.strip().splitlines()[-1].strip()
    imported = gradekit("serve", "roster", "import", folder / "roster.csv", "--config", folder / "gradekit.toml")
    assert imported.returncode == 0, imported.stderr
    (tokens_file,) = (folder / "server-data" / "tokens").glob("tokens-*.csv")
    with open(tokens_file, encoding="utf-8-sig", newline="") as fh:
        tokens = {r["student"]: r["token"] for r in csv.DictReader(fh)}
    return Course(folder, instructor, tokens, [init.stdout + init.stderr, imported.stdout + imported.stderr])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``gradekit serve run`` for ``course`` on a free loopback port; a context manager that waits for it to answer
    and stops it on the way out (SIGTERM, then SIGKILL of its process group), whatever the test did."""

    def __init__(self, course):
        self.course = course
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = course.folder / f"server-{uuid.uuid4().hex[:8]}.log"
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def start(self):
        self._log = open(self.log, "wb")
        self.proc = subprocess.Popen(
            ["timeout", "--signal=KILL", str(HARD_LIMIT_S), sys.executable, "-m", "grader", "serve", "run"]
            + ["--config", str(self.course.config), "--port", str(self.port)],
            env=env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        ends = time.monotonic() + START_S
        while time.monotonic() < ends:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server stopped: {self.log.read_text(errors='replace')}")
            try:
                if call("GET", self.url + "/")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"the server did not answer in {START_S} s: {self.log.read_text(errors='replace')}")

    def _server_pid(self):
        """The server's own process (``timeout``'s child)."""
        (child,) = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        return int(child)

    def kill(self):
        """SIGKILL the server process alone (its judge is left running, as after a crash)."""
        os.kill(self._server_pid(), signal.SIGKILL)
        self.proc.wait(timeout=10)  # ``timeout`` ends with the server
        self._log.close()

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:  # one SIGTERM, to the server alone: uvicorn shuts down gracefully (a second would force it)
                os.kill(self._server_pid(), signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (ValueError, OSError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(timeout=10)
        if not self._log.closed:
            self._log.close()

    def __exit__(self, *exc):
        self.stop()

    def wait_done(self, sid, token, timeout=120.0):
        """Submission ``sid``'s view once it is ``done`` or ``error``."""
        ends = time.monotonic() + timeout
        while time.monotonic() < ends:
            status, _, body = call("GET", f"{self.url}/api/submissions/{sid}", token)
            assert status == 200, body
            view = json.loads(body)
            if view["status"] in ("done", "error"):
                return view
            time.sleep(0.3)
        raise AssertionError(f"submission {sid} not graded in {timeout} s: {self.log.read_text(errors='replace')}")


def rows(course, url=None):
    """The server's submissions, read from its database (``url``; default: the SQLite one in its data folder):
    ``(id, status, attempts, score, grading)`` each."""
    import sqlalchemy as sa

    engine = sa.create_engine(url or f"sqlite:///{course.data / 'gradekit.db'}")
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT id, status, attempts, score, grading FROM submissions")).all()
    finally:
        engine.dispose()


def judge_pids(course):
    """``{slot: pid}`` of the judges the server says are running (its ``judge-<slot>.pid`` files)."""
    found = {}
    for path in course.data.glob("judge-*.pid"):
        try:
            found[int(path.stem.split("-", 1)[1])] = int(path.read_text())
        except (OSError, ValueError):
            pass  # being written or removed
    return found


def alive(pid):
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in "ZX"


def _processes():
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return found


def process_tree(pid):
    """Process ``pid``, its descendants, and every process of their process groups (a judge's fork server and
    sandbox workers run in groups of their own)."""
    procs = _processes()
    tree, parents = set(), {pid} & set(procs)
    while parents:
        tree |= parents
        parents = {p for p, (parent, _) in procs.items() if parent in parents} - tree
    groups = {procs[p][1] for p in tree}
    return tree | {p for p, (_, group) in procs.items() if group in groups}


def wait_until(condition, what, timeout=180.0, log=None):
    """Wait for ``condition()`` to hold; fail saying ``what`` (and the server's ``log``) if it never does."""
    ends = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > ends:
            raise AssertionError(f"never {what}" + (f": {log.read_text(errors='replace')}" if log else ""))
        time.sleep(0.05)


def multipart(files, fields=None):
    """``(body, content type)``: ``files`` (``[(name, bytes)]``) as ``file`` fields, ``fields`` as plain ones."""
    boundary = "b" + uuid.uuid4().hex
    parts = []
    for key, value in (fields or {}).items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode())
    for name, content in files:
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        parts += [(head + "Content-Type: application/octet-stream\r\n\r\n").encode(), content, b"\r\n"]
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def call(method, url, token=None, *, body=None, content_type=None, headers=None, timeout=30):
    """One request: ``(status, headers, body bytes)``; an error status is returned, not raised."""
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"Bearer {token}"
    if content_type:
        h["Content-Type"] = content_type
    req = urllib.request.Request(url, data=body, method=method, headers=h)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=timeout) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def login(server, token, lang="en"):
    """Log in on the page with ``token``: ``(status, Location, the cookie header's value)``."""
    status, headers, _ = call(
        "POST",
        f"{server.url}/login?lang={lang}",
        body=urllib.parse.urlencode({"token": token}).encode(),
        content_type="application/x-www-form-urlencoded",
    )
    return status, headers.get("Location"), (headers.get("Set-Cookie") or "").split(";", 1)[0]


def form_csrf(page):
    """The CSRF token in the forms of ``page`` (bytes or text)."""
    page = page.decode() if isinstance(page, bytes) else page
    return re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)


def post_form(server, path, cookie, fields):
    """``POST path`` of the url-encoded ``fields`` with the session ``cookie``: ``(status, headers, body)``."""
    return call(
        "POST",
        server.url + path,
        body=urllib.parse.urlencode(fields).encode(),
        content_type="application/x-www-form-urlencoded",
        headers={"Cookie": cookie} if cookie else None,
    )


def upload(server, token, files, **kw):
    """``POST /api/submissions`` of ``files``: ``(status, JSON answer)``."""
    body, ctype = multipart(files)
    status, _, answer = call("POST", f"{server.url}/api/submissions", token, body=body, content_type=ctype, **kw)
    return status, json.loads(answer or b"{}")
