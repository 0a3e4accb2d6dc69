"""``gradekit submit``: hand a submission in to the course server from a terminal.

A folder is taken in by the batch's rules (``intake.take_in``: regular files only, links and special files left
out, the caps) and sent as a zip of that snapshot; a ``.zip``, ``.ipynb`` or ``.py`` file is sent as it is. The
token comes from ``--token`` or ``GRADEKIT_TOKEN`` and goes only into the request's header. Only the standard
library: a student's machine needs nothing more.
"""

import json
import os
import secrets
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from grader.messages import text
from grader.safetext import for_terminal

POLL_S = 1.0


class SubmitError(Exception):
    """The hand-in could not be made; the message says why, in the user's language."""


def _multipart(files):
    """``(body, content type)`` of a ``multipart/form-data`` body with each ``(name, bytes)`` as a ``file`` field."""
    boundary = "gradekit-" + secrets.token_hex(16)
    parts = []
    for name, content in files:
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        head += "Content-Type: application/octet-stream\r\n\r\n"
        parts += [head.encode("utf-8"), content, b"\r\n"]
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _zip_folder(folder, lang="en"):
    """The bytes of a zip of ``folder``'s snapshot (``intake.take_in``'s rules)."""
    from grader.messages import PHRASE
    from grader.submission.intake import IntakeError, take_in

    scratch = Path(tempfile.mkdtemp(prefix="gradekit-submit-"))
    try:
        try:
            snap = take_in(folder, scratch / "snapshot")
        except IntakeError as exc:  # its reason in the user's language
            raise SubmitError(text(exc.why[PHRASE], lang, **exc.why["params"])) from None
        archive = scratch / "submission.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(snap.root.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    zf.write(path, path.relative_to(snap.root).as_posix())
        return archive.read_bytes()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def files_of(path, lang="en"):
    """``[(name, bytes)]`` to send for ``path``: a folder zipped, a file as it is."""
    p = Path(path)
    if p.is_dir():
        return [(f"{p.resolve().name or 'submission'}.zip", _zip_folder(p, lang))]
    if p.is_file() and p.suffix.lower() in (".zip", ".ipynb", ".py"):
        return [(p.name, p.read_bytes())]
    raise SubmitError(text("server.submit.bad_path", lang, path=path))


def request(method, url, token, *, body=None, content_type=None, lang="en"):
    """``(status, JSON answer)`` of one request with the token; ``SubmitError`` when the server cannot be reached."""
    headers = {"Authorization": f"Bearer {token}", "Accept-Language": lang, "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            data = json.loads(exc.read() or b"{}")
        except ValueError:
            data = {}
        return exc.code, data
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SubmitError(text("server.submit.unreachable", lang, url=url, error=getattr(exc, "reason", exc))) from None


def submit(path, server, token, *, wait=False, lang="en", timeout_s=3600.0, out=sys.stdout):
    """Hand ``path`` in to ``server``; the exit status (0: handed in, and graded when ``wait``; 1: graded with an
    error; 2: refused)."""
    server = server.rstrip("/")
    if not token:
        raise SubmitError(text("server.submit.no_token", lang))
    body, content_type = _multipart(files_of(path, lang))
    status, data = request("POST", f"{server}/api/submissions", token, body=body, content_type=content_type, lang=lang)
    if status != 201:
        raise SubmitError(text("server.submit.refused", lang, status=status, error=data.get("error", "")))
    sid = data["id"]
    print(text("server.submit.sent", lang, id=sid), file=out)
    if not wait:
        return 0
    ends = time.monotonic() + timeout_s
    said = None
    while True:
        status, data = request("GET", f"{server}/api/submissions/{sid}", token, lang=lang)
        if status != 200:
            raise SubmitError(text("server.submit.refused", lang, status=status, error=data.get("error", "")))
        if data["status"] in ("done", "error"):
            break
        if data["status"] != said and data["status"] in ("queued", "grading"):  # each stage said once
            said = data["status"]
            print(text(f"server.submit.{said}", lang), file=out, flush=True)
        if time.monotonic() > ends:
            raise SubmitError(text("server.submit.timeout", lang, id=sid))
        time.sleep(POLL_S)
    if data["status"] == "error":
        print(text("server.submit.failed", lang, id=sid, reason=for_terminal(data.get("reason", ""))), file=out)
        return 1
    print(text("server.submit.graded", lang, score=f"{data['score']:g}", max=f"{data['max_score']:g}"), file=out)
    print(text("server.submit.report", lang, url=f"{server}{data['report']}"), file=out)
    return 0


def token_from(arg):
    return arg or os.environ.get("GRADEKIT_TOKEN", "")
