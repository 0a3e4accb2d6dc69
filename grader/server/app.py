"""The server's web application (Starlette): the students' API and page, the instructor's gradebook.

Who asks is said by a token, ``Authorization: Bearer TOKEN`` (the API, ``gradekit submit``), or by the page's
session cookie, set when a student or the instructor logs in with their token on the same page (HttpOnly,
SameSite=Strict; its value is signed with the server's key and names the token it was made from, so a reissued
token ends the session; a log-out ends it on the server too, ``Store.end_session``, so that a copy of the cookie
is refused as well). A student sees only their own submissions: another's id answers 404, as an id that does
not exist, so ids tell nothing. The instructor's token reads every submission and the gradebook; it hands nothing
in. The instructor's pages (``/instructor/``: the gradebook, the batch's class summary and similarity page,
``classpages``, and each student's review page, ``/instructor/review``) answer 401 (the login form) without a
session or token and 403 to a student. A form of the page that changes something carries a CSRF token made from the
session (``csrf``); a post without it is refused. The review form writes the student's entry into the course's
overrides file, the one ``gradekit batch`` reads (``reviewfile``), and applies the file at once (``reviews``).

A hand-in (``POST /api/submissions``, or the page's form) is checked in this order: who (401, 403), the deadline
(403 when late hand-ins are refused), the hourly limit (429), the size (413), the files (400); then it is stored,
synced, and its row committed (``Store.add_submission``) before the 201 answer: a full disk or a database error
answers 503 and leaves nothing of it. The hourly limit is counted again in the transaction that inserts the row
(429, nothing left), so that hand-ins racing each other never pass it together. Every answer's words are in the
asker's language (``?lang=zh``, else ``Accept-Language``, else the course's).
"""

import asyncio
import collections
import csv
import dataclasses
import hmac
import io
import json
import logging
import math
import os
import re
import secrets
import stat
import time
import urllib.parse
from contextlib import asynccontextmanager
from datetime import datetime, timezone

import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from grader.batch import exports
from grader.batch.gradebook import REVIEW, number_cell, review_cells, text_cell
from grader.batch.overrides import FIELDS, Overrides
from grader.messages import LANGS, text
from grader.server import reviewfile
from grader.server.store import RateLimited, Store

INSTRUCTOR = "instructor:"
"""How a session cookie names the instructor: ``instructor:<id>`` (a student's id never holds a colon)."""

log = logging.getLogger("gradekit.server")
COOKIE = "gradekit_session"
SESSION_S = 12 * 3600
"""How long a page session lasts."""
MAX_FILES = 50
"""Most files one hand-in may hold (several ``.py`` files)."""
DRAIN_BYTES = 64 << 20
"""Bytes of an upload over the limit still read (and dropped) so that the client, done sending, reads the 413;
past them the answer goes at once and the connection closes."""
UPLOADS_AT_ONCE = 4
"""Hand-ins of one student read at once (each holds up to ``max_upload_mb`` in memory until stored); past that, 429."""
BODY_IDLE_S = 30.0
"""Seconds a hand-in's body may stop coming before the hand-in is dropped (408)."""
REVIEW_BYTES = 64 << 10
"""Most bytes the review form may send (its note and why)."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
"""A file name a hand-in may have: plain letters, digits, ``_ . -``; no folder, no hidden file."""
REPORT_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}
PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


def report_csp():
    """The report page's policy: no script but the report's own (its hash: nothing a submission writes can add
    one), no fetch, no frame, no form."""
    from grader.views.html import _script_hash

    return (
        "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        f"script-src '{_script_hash()}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def _iso(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds") if seconds else None


class Server:
    """The application's state: the course, its store and grading loop, and the request handlers."""

    def __init__(self, course, store, grader=None, plan=None):
        from grader.server.classpages import ClassPages

        self.course = course
        self.settings = course.server
        self.store = store
        self.grader = grader
        self.lang = course.lang or "en"
        self._plan = plan
        self._assignment = None
        self._reading: collections.Counter = collections.Counter()
        """Student -> hand-ins of theirs being read now (``receive``)."""
        self.classes = ClassPages(store, self.assignment, self.plan)

    def plan(self):
        """How the server grades (``grading.Plan``, with the reviews): the one it was started with, else the
        course's (an application made without one, in tests)."""
        if self._plan is None:
            from grader.server.grading import config_file, plan

            self._plan = plan(self.course, config_file(self.course))
        return self._plan

    def assignment(self):
        if self._assignment is None:
            from grader import api

            self._assignment = api.settings(config=self.course).assignment
        return self._assignment

    # -- helpers ------------------------------------------------------------------------------------
    def lang_of(self, request):
        asked = request.query_params.get("lang")
        if asked in LANGS:
            return asked
        for part in request.headers.get("accept-language", "").split(","):
            tag = part.split(";")[0].strip().lower()
            if tag.startswith("zh"):
                return "zh"
            if tag.startswith("en"):
                return "en"
        return self.lang

    def error(self, request, status, key, headers=None, **params):
        lang = self.lang_of(request)
        return JSONResponse({"error": text(key, lang, **params), "code": key}, status, headers=headers)

    def session_who(self, value):
        """Who a session cookie's ``value`` names, while it is valid (signed, not expired, its token not reissued,
        not logged out of): ``("student", id)``, ``("instructor", None)``, else ``None``."""
        try:
            expires, nonce, mac, subject = (value or "").split(":", 3)
            if int(expires) < time.time():
                return None
        except ValueError:
            return None
        token_hash = self._subject_hash(subject)
        if token_hash is None or not hmac.compare_digest(
            mac, self.store.sign("session", subject, expires, nonce, token_hash)
        ):
            return None
        if self.store.session_ended(mac):  # logged out of: the cookie, replayed, names nobody
            return None
        return ("instructor", None) if subject.startswith(INSTRUCTOR) else ("student", subject)

    def session_of(self, value):
        """The student a session cookie's ``value`` names, while it is valid; else ``None`` (the instructor's too)."""
        who = self.session_who(value)
        return who[1] if who is not None and who[0] == "student" else None

    def _subject_hash(self, subject):
        """The stored hash of the token a session's ``subject`` logged in with (a new token ends the session)."""
        if subject.startswith(INSTRUCTOR):
            number = subject[len(INSTRUCTOR) :]
            return self.store.instructor_hash(int(number)) if number.isdigit() else None
        return self.store.student_hash(subject)

    def new_session(self, subject):
        """A session cookie's value for ``subject`` (a student's id, or ``INSTRUCTOR`` and the instructor's id):
        ``expires:nonce:mac:subject``, the MAC signing the rest and the token's hash. The nonce makes each login's
        cookie its own, so that a log-out ends that session and no other (two logins in the same second)."""
        expires, nonce = str(int(time.time()) + SESSION_S), secrets.token_hex(8)
        mac = self.store.sign("session", subject, expires, nonce, self._subject_hash(subject))
        return f"{expires}:{nonce}:{mac}:{subject}"

    def csrf(self, cookie):
        return self.store.sign("csrf", cookie)[:32]

    def who(self, request, *, cookie=True):
        """``("student", id)``, ``("instructor", None)`` or ``None``: the bearer token, else (``cookie``) the
        session."""
        header = request.headers.get("authorization", "")
        if header[:7].lower() == "bearer ":
            return self.store.who(header[7:].strip())
        if cookie:
            return self.session_who(request.cookies.get(COOKIE))
        return None

    def view(self, row, lang):
        """A submission as the API shows it (``status_text``: its status in ``lang``)."""
        finished = row.status in ("done", "error")
        return {
            "id": row.id,
            "student": row.student,
            "number": row.number,
            "status": row.status,
            "status_text": text(f"server.status.{row.status}", lang),
            "attempts": row.attempts,
            "submitted": _iso(row.submitted),
            "late": bool(row.late),
            "score": row.score,
            "max_score": row.max_score,
            "verdict": row.verdict,
            "reason": row.reason if finished else "",
            "graded": _iso(row.graded),
            "report": f"/submissions/{row.id}/report" if row.status == "done" and row.grading else None,
        }

    def visible(self, request, sid):
        """``(row, None)`` for a submission the asker may see, else ``(None, the answer)``: 401 without a valid
        token, 404 for what does not exist or is another student's."""
        who = self.who(request)
        if who is None:
            return None, self.error(request, 401, "server.auth.missing")
        row = self.store.submission(sid) if 0 < sid < 1 << 63 else None  # past the database's integers: none such
        if row is None or (who[0] == "student" and row.student != who[1]):
            return None, self.error(request, 404, "server.submission.unknown", id=sid)
        return row, None

    # -- hand-ins -----------------------------------------------------------------------------------
    async def receive(self, request, student, check=None):
        """Check and store a hand-in of ``student`` from ``request``'s multipart body; ``(id, None)``, or
        ``(None, the error answer)``. ``check``: called with the parsed form before anything is stored, it answers
        a refusal (the page's CSRF check) or ``None``."""
        now = time.time()
        deadline = self.settings["deadline"]
        late = deadline is not None and now > deadline.timestamp()
        if late and self.settings["late"] == "refuse":
            return None, self.error(request, 403, "server.late.refused", deadline=deadline.isoformat())
        per_hour = self.settings["submissions_per_hour"]

        def limited(first):  # a place frees when the hour's first submission is an hour old
            wait = str(max(1, math.ceil(first + 3600 - time.time())))
            return self.error(request, 429, "server.rate.limited", n=per_hour, headers={"Retry-After": wait})

        # Refused early, before the body is read; the count that decides is taken again with the insert.
        recent, first = await run_in_threadpool(self.store.recent, student, now - 3600)
        if recent >= per_hour:
            return None, limited(first)
        limit = self.settings["max_upload_mb"] << 20
        too_big = self.error(request, 413, "server.upload.too_large", mb=self.settings["max_upload_mb"])
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit + DRAIN_BYTES:
            return None, too_big
        # A student's hand-ins being read at once are few (each holds up to the upload limit in memory until it is
        # stored), and a body that stops coming is dropped: one student cannot pin the server's memory.
        if self._reading[student] >= UPLOADS_AT_ONCE:
            return None, self.error(request, 429, "server.upload.busy", n=UPLOADS_AT_ONCE, headers={"Retry-After": "5"})
        self._reading[student] += 1
        try:
            body = await self._read_body(request, limit)
        except _Stalled:
            return None, self.error(request, 408, "server.upload.stalled", s=BODY_IDLE_S)
        finally:
            self._reading[student] -= 1
            if not self._reading[student]:
                del self._reading[student]
        if body is None:
            return None, too_big
        form = await _form(request, bytes(body))
        if form is None:
            return None, self.error(request, 400, "server.upload.unreadable")
        try:
            refused = check(form) if check is not None else None
            if refused is not None:
                return None, refused
            uploads = [f for f in form.getlist("file") if hasattr(f, "read")]
            if not uploads:
                return None, self.error(request, 400, "server.upload.none")
            if len(uploads) > MAX_FILES:
                return None, self.error(request, 400, "server.upload.too_many_files", n=MAX_FILES)
            files: list[tuple[str, bytes]] = []
            for upload in uploads:
                name = (upload.filename or "").replace("\\", "/").rsplit("/", 1)[-1]
                if not _NAME.match(name) or name in {n for n, _ in files}:
                    return None, self.error(request, 400, "server.upload.bad_name", name=repr(name[:100]))
                files.append((name, await upload.read()))
        finally:
            await form.close()
        suffixes = [name.lower().rsplit(".", 1)[-1] if "." in name else "" for name, _ in files]
        if len(files) == 1 and suffixes[0] in ("zip", "ipynb"):
            kind = suffixes[0]
        elif all(s == "py" for s in suffixes):
            kind = "py"
        else:
            return None, self.error(request, 400, "server.upload.kinds")
        try:
            sid = await run_in_threadpool(self.store.add_submission, student, kind, files, late=late, per_hour=per_hour)
        except RateLimited as exc:  # another hand-in took the last place while this one was read
            return None, limited(exc.first)
        except OSError as exc:
            log.error("cannot store a submission of %s: %s", student, exc.strerror or exc)
            return None, self.error(request, 503, "server.store.disk")
        except sa.exc.SQLAlchemyError as exc:
            log.error("cannot record a submission of %s: %s", student, type(exc).__name__)
            return None, self.error(request, 503, "server.store.database")
        log.info("submission %s of %s stored (%s, %d file(s))", sid, student, kind, len(files))
        if self.grader is not None:
            self.grader.wake()
        return sid, None

    @staticmethod
    async def _read_body(request, limit):
        """The request's body, read to its end (a client still sending would not read a 413); ``None`` past
        ``limit``; ``_Stalled`` when no byte came for ``BODY_IDLE_S`` seconds."""
        body, seen = bytearray(), 0
        async for chunk in _arriving(request):
            seen += len(chunk)
            if seen > limit + DRAIN_BYTES:
                return None
            if seen <= limit:
                body += chunk
        return None if seen > limit else body

    async def post_submission(self, request):
        who = self.who(request, cookie=False)
        if who is None:
            return self.error(request, 401, "server.auth.missing")
        if who[0] != "student":
            return self.error(request, 403, "server.auth.student_only")
        sid, refused = await self.receive(request, who[1])
        if refused is not None:
            return refused
        row = await run_in_threadpool(self.store.submission, sid)
        return JSONResponse(self.view(row, self.lang_of(request)), 201, headers={"Location": f"/api/submissions/{sid}"})

    def list_submissions(self, request):
        who = self.who(request)
        if who is None:
            return self.error(request, 401, "server.auth.missing")
        lang = self.lang_of(request)
        rows = self.store.history(who[1])  # the instructor (None): every student's
        return JSONResponse({"submissions": [self.view(r, lang) for r in rows]})

    def get_submission(self, request):
        row, refused = self.visible(request, request.path_params["sid"])
        return refused or JSONResponse(self.view(row, self.lang_of(request)))

    def report(self, request):
        row, refused = self.visible(request, request.path_params["sid"])
        if refused is not None:
            return refused
        path = self.store.data / "gradings" / (row.grading or "-") / "report.html"
        if row.status != "done" or not row.grading or not path.is_file():
            return self.error(request, 404, "server.report.not_ready", id=row.id)
        return HTMLResponse(
            path.read_text(encoding="utf-8"),
            headers={**REPORT_HEADERS, "Content-Security-Policy": report_csp(), "Cache-Control": "private"},
        )

    # -- the instructor -----------------------------------------------------------------------------
    def instructor(self, request, *, cookie=False):
        """``None`` when the instructor asks (by token; ``cookie``: or by the page's session), else the answer: 401
        without a valid token, 403 for a student."""
        who = self.who(request, cookie=cookie)
        if who is None:
            return self.error(request, 401, "server.auth.missing")
        if who[0] != "instructor":
            return self.error(request, 403, "server.auth.instructor_only")
        return None

    def instructor_page(self, request):
        """``None`` when the instructor asks for one of their pages, else the page that answers: the login form
        (401) without a session or token, the student's page saying it is not theirs (403) to a student."""
        who = self.who(request)
        lang = self.lang_of(request)
        if who is None:
            return self.page(request, message=text("server.page.login_first", lang), status=401)
        if who[0] != "instructor":
            return self.page(request, message=text("server.auth.instructor_only", lang), status=403)
        return None

    def instructor_home(self, request):
        refused = self.instructor_page(request)
        if refused is not None:
            return refused
        lang = self.lang_of(request)
        queued = request.query_params.get("queued", "")
        message = text("server.instructor.regraded", lang, n=int(queued)) if queued.isdigit() else ""
        reviewed = request.query_params.get("reviewed", "")
        if reviewed and reviewed in {s for s, _ in self.store.roster()}:  # a review saved: what the file says now
            has = self.plan().reviews.for_student(reviewed) is not None
            said = "server.instructor.review_saved" if has else "server.instructor.review_none"
            message = text(said, lang, student=reviewed, file=str(self.review_file()))
        return self.gradebook_page(request, message=message)

    def gradebook_page(self, request, *, message="", status=200):
        """The instructor's gradebook page, with ``message`` (a confirmation, a refusal) above it."""
        lang = self.lang_of(request)
        cookie = request.cookies.get(COOKIE)
        history: dict[str, list] = {}
        for row in reversed(self.store.history()):
            history.setdefault(row.student, []).append(self.view(row, lang))
        rows = []
        for r in self.gradebook_rows():
            counted = r["counted"] is not None
            rows.append(
                {
                    **r,
                    "score_text": f"{r['score']:g} / {r['max_score']:g}" if counted else "",
                    "status_text": text(f"batch.status.{r['status']}", lang) if counted and r["status"] else "",
                    "late_score_text": f"{r['late_score']:g}" if r["late_counted"] else "",
                    "report": f"/submissions/{r['counted']}/report" if counted else None,
                    "history": history.get(r["student"], []),
                }
            )
        from grader.server.classpages import gradebook

        body = gradebook(
            lang=lang,
            rows=rows,
            csrf=self.csrf(cookie) if self.session_who(cookie) else "",
            counts=self.settings["counts"],
            late=self.settings["late"],
            message=message,
        )
        return HTMLResponse(body, status, headers={**REPORT_HEADERS, "Content-Security-Policy": PAGE_CSP})

    def class_page(self, name):
        """The handler of the class page ``name`` (``index``: the summary; ``similarity``)."""

        async def handler(request):
            refused = await run_in_threadpool(self.instructor_page, request)
            if refused is not None:
                return refused
            rows = await run_in_threadpool(self.gradebook_rows)
            every = {r.id: r for r in await run_in_threadpool(self.store.history)}
            counted = [every[r["counted"]] for r in rows if r["counted"] is not None]
            names = {r["student"]: r["name"] for r in rows}
            body = await run_in_threadpool(self.classes.page, name, self.lang_of(request), counted, names)
            return HTMLResponse(body, headers={**REPORT_HEADERS, "Content-Security-Policy": PAGE_CSP})

        return handler

    def gradebook_rows(self):
        """Per student of the roster: the submission that counts (``[server] counts`` among the graded ones
        handed in on time; with ``late = "accept"``, among all), and the late ones."""
        policy, late_policy = self.settings["counts"], self.settings["late"]
        reviewed = self._plan.reviews if self._plan is not None else Overrides()
        by_student: dict[str, list] = {}
        for row in self.store.history():
            by_student.setdefault(row.student, []).append(row)
        out = []
        for student, name in self.store.roster():
            rows = by_student.get(student, [])
            done = [r for r in rows if r.status == "done"]
            late_done = [r for r in done if r.late]
            pool = done if late_policy == "accept" else [r for r in done if not r.late]
            counted = _pick(pool, policy)
            flagged = _pick(late_done, policy) if late_policy == "flag" else None
            out.append(
                {
                    "student": student,
                    "name": name,
                    "submissions": len(rows),
                    "pending": sum(r.status in ("queued", "grading") for r in rows),
                    "counted": counted.id if counted else None,
                    "score": counted.score if counted else None,
                    "max_score": counted.max_score if counted else None,
                    "status": counted.verdict if counted else None,
                    "submitted": _iso(counted.submitted) if counted else None,
                    "late": bool(counted and counted.late),
                    "late_submissions": sum(bool(r.late) for r in rows),
                    "late_counted": flagged.id if flagged else None,
                    "late_score": flagged.score if flagged else None,
                    "reviewed": bool(counted and reviewed.for_student(student)),
                    "reason": counted.reason if counted else "",
                }
            )
        return out

    def gradebook(self, request):
        refused = self.instructor(request)
        if refused is not None:
            return refused
        deadline = self.settings["deadline"]
        return JSONResponse(
            {
                "counts": self.settings["counts"],
                "late": self.settings["late"],
                "deadline": deadline.isoformat() if deadline else None,
                "students": self.gradebook_rows(),
            }
        )

    def counted_records(self, rows):
        """Per row of ``gradebook_rows`` with a submission that counts, its final record (the judge's record with
        the review applied, as the batch's outputs read it; ``reviews.final_record``), by student. A grading whose
        record cannot be read gives the row's recorded result, without a review."""
        from grader.server import reviews

        every = {r.id: r for r in self.store.history()}
        plan = self.plan()
        records = {}
        for r in rows:
            row = every.get(r["counted"]) if r["counted"] is not None else None
            if row is None:
                continue
            final = reviews.final_record(self.store, row, plan) if row.grading else None
            if final is None:
                final = {"student": row.student, "score": row.score, "max_score": row.max_score, "status": row.verdict}
            records[r["student"]] = final
        return records

    def gradebook_csv(self, request):
        refused = self.instructor(request, cookie=True)  # a GET that changes nothing: the page's link may ask
        if refused is not None:
            return refused
        rows = self.gradebook_rows()
        reviewed = self.course.overrides is not None  # as the batch: the columns stay while the course has a file
        if reviewed:
            finals = self.counted_records(rows)
            rows = [{**r, "review": finals.get(r["student"], {}).get("review")} for r in rows]
        return self._csv(gradebook_text(rows, reviews=reviewed), "gradebook.csv")

    def lms_csv(self, request):
        """``lms.csv``, the batch's import file for Canvas and Moodle (``exports.render_lms``), of the submissions
        that count: one row per student with one, in the roster's order, the total after the review."""
        refused = self.instructor(request, cookie=True)
        if refused is not None:
            return refused
        finals = self.counted_records(self.gradebook_rows())
        title = self.course.title or self.assignment().title or self.assignment().name
        return self._csv(exports.render_lms(list(finals.values()), title=title, lang=self.lang), exports.FILE_NAME)

    @staticmethod
    def _csv(body, name):
        """A CSV file's answer: ``body`` with the BOM (as the batch writes its CSV files), downloaded as ``name``."""
        return Response(
            "\ufeff" + body,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"', **REPORT_HEADERS},
        )

    def regrade(self, request):
        refused = self.instructor(request)
        if refused is not None:
            return refused
        return JSONResponse({"queued": self.requeue_all()})

    def requeue_all(self):
        """Queue every graded submission again (a regrade) and wake the judges; how many."""
        n = self.store.requeue_all()
        log.info("regrade: %d submission(s) queued again", n)
        if self.grader is not None:
            self.grader.wake()
        return n

    async def regrade_form(self, request):
        """The gradebook page's regrade button: the instructor's session and the form's CSRF token, else the login
        form (401), the student's page (403) or the gradebook saying the form was refused (403); then every
        graded submission queued again, and the gradebook says how many."""
        lang = self.lang_of(request)
        form = await _form(request, await _capped_body(request, 4096))
        refused = await run_in_threadpool(self.instructor_page, request)
        if refused is not None:
            return refused
        cookie = request.cookies.get(COOKIE)
        session = await run_in_threadpool(self.session_who, cookie)
        refused = await self._instructor_form_refused(request, cookie, session, form, lang)
        if refused is not None:
            return refused
        n = await run_in_threadpool(self.requeue_all)
        return RedirectResponse(f"/instructor/?lang={lang}&queued={n}", 303)

    async def _instructor_form_refused(self, request, cookie, session, form, lang):
        """The gradebook saying the form was refused (403) unless ``session`` (``cookie``'s) is the instructor's own
        and ``form`` carries its CSRF token: a bearer token's request, a student's cookie and its CSRF token beside the
        instructor's token, or a form from elsewhere; else ``None``."""
        given = str(form.get("csrf") or "") if form is not None else ""
        if session != ("instructor", None) or not given or not hmac.compare_digest(given, self.csrf(cookie)):
            message = text("server.page.csrf", lang)
            return await run_in_threadpool(lambda: self.gradebook_page(request, message=message, status=403))
        return None

    # -- reviews ------------------------------------------------------------------------------------
    def review_file(self):
        """The overrides file a review is saved in (``reviewfile.target``)."""
        from grader.server.grading import config_file

        return reviewfile.target(self.course, config_file(self.course))

    def review_home(self, request):
        """``GET /instructor/review?student=ID``: the student's review page, the form filled with their entry in the
        overrides file as it is now."""
        refused = self.instructor_page(request)
        if refused is not None:
            return refused
        return self.review_page(request, request.query_params.get("student", ""))

    def review_page(self, request, student, *, values=None, message="", status=200):
        """``student``'s review page, the form filled with ``values`` (``{field: text}``; ``None``: their entry in
        the file as it is now, else the one the server applies), with ``message`` above it; the gradebook saying
        so (404) for a student not on the roster."""
        from grader.server.classpages import review

        lang = self.lang_of(request)
        names = dict(self.store.roster())
        if student not in names:
            message = text("server.review.unknown", lang, student=student)
            return self.gradebook_page(request, message=message, status=404)
        path = self.review_file()
        if values is None:
            try:
                entry = reviewfile.current(path, lang).for_student(student)
            except reviewfile.Unusable as exc:
                entry = self.plan().reviews.for_student(student)
                message = message or text("server.review.unusable_now", lang, error=str(exc))
            values = reviewfile.form_values(entry)
        (row,) = [r for r in self.gradebook_rows() if r["student"] == student]
        if row["counted"] is None:
            score = text("server.review.nothing", lang)
        else:
            final = self.counted_records([row]).get(student, {})
            shown = f"{number_cell(final.get('score'))} / {number_cell(final.get('max_score'))}"
            done = final.get("review")
            score = (
                text("server.review.score_before", lang, score=shown, before=number_cell(done["before"]))
                if done
                else text("server.review.score", lang, score=shown)
            )
        file = text("server.review.file", lang, file=str(path))
        if not path.exists():
            file += " " + text("server.review.new_file", lang, file=str(path))
        cookie = request.cookies.get(COOKIE)
        body = review(
            lang=lang,
            student=student,
            name=names[student],
            values=values,
            csrf=self.csrf(cookie) if self.session_who(cookie) == ("instructor", None) else "",
            score=score,
            file=file,
            message=message,
        )
        return HTMLResponse(body, status, headers={**REPORT_HEADERS, "Content-Security-Policy": PAGE_CSP})

    async def review_form(self, request):
        """The review page's form: refused as the regrade form is (the login form, 401, without a session or token;
        the student's page, 403, to a student; the gradebook saying the form was refused, 403, to the instructor's
        token without the session or without the form's CSRF token); then the entry checked by the batch's rules,
        written into the overrides file and applied (``save_review``)."""
        lang = self.lang_of(request)
        body = await _capped_body(request, REVIEW_BYTES)
        too_large = not body and request.headers.get("content-length", "0") != "0"  # cut: nothing of it read
        form = await _form(request, body)
        refused = await run_in_threadpool(self.instructor_page, request)
        if refused is not None:
            return refused
        cookie = request.cookies.get(COOKIE)
        session = await run_in_threadpool(self.session_who, cookie)
        if too_large and session == ("instructor", None):
            message = text("server.review.too_large", lang, kb=REVIEW_BYTES >> 10)
            return await run_in_threadpool(lambda: self.gradebook_page(request, message=message, status=413))
        refused = await self._instructor_form_refused(request, cookie, session, form, lang)
        if refused is not None:
            return refused
        values = {key: str(form.get(key) or "").strip() for key in FIELDS}
        student = str(form.get("student") or "")
        return await run_in_threadpool(self.save_review, request, student, values)

    def save_review(self, request, student, values):
        """Write ``student``'s review (``values``, the form's text) into the overrides file (``reviewfile.save``),
        read the file again and apply it (``reviews.replace``), and send the instructor to the gradebook, which
        says what the file holds now; a bad entry, a file that cannot be used or edited, or a write that fails
        answers the review page again with the message, the form as it was sent, nothing written."""
        from grader.batch.overrides import OverrideError
        from grader.server import reviews
        from grader.server.grading import config_file

        lang = self.lang_of(request)
        roster = [s for s, _ in self.store.roster()]
        if student not in roster:
            return self.review_page(request, student)  # the gradebook, saying so
        path = self.review_file()
        try:
            mode = stat.S_IMODE(os.stat(config_file(self.course)).st_mode)
        except OSError:
            mode = 0o644
        fields = {key: value for key, value in values.items() if value}

        def again(status, key, **params):
            return self.review_page(request, student, values=values, message=text(key, lang, **params), status=status)

        try:
            saved = reviewfile.save(path, student, fields, lang=lang, mode=mode)
        except OverrideError as exc:
            return again(400, "server.review.invalid", error=str(exc))
        except reviewfile.Unusable as exc:
            return again(409, "server.review.unusable", error=str(exc))
        except reviewfile.ByHand as exc:
            why = text(exc.key, lang, **exc.params)
            return again(409, "server.review.by_hand", file=str(path), why=why, student=student)
        except OSError as exc:
            log.error("cannot write the review of %s into %s: %s", student, path, exc.strerror or exc)
            return again(503, "server.review.write_failed", file=str(path), error=exc.strerror or type(exc).__name__)
        if saved.written:
            log.info("review of %s %s %s", student, "saved in" if saved.entry else "taken out of", path)
        if self.course.overrides is None and saved.created:  # the course has a file now: as after a restart
            self.course = dataclasses.replace(self.course, overrides=path)
        try:  # the file as it is now, every entry (a hand edit saved meanwhile too)
            found, _ = reviews.load(self.course, roster, lang)
        except OverrideError as exc:  # edited by hand since, and broken: what the server applies stays
            return again(409, "server.review.unusable_now", error=str(exc))
        reviews.replace(self.store, self.plan(), found)
        where = f"/instructor/?lang={lang}&reviewed={urllib.parse.quote(student, safe='')}"
        return RedirectResponse(where, 303)

    # -- the page -----------------------------------------------------------------------------------
    def page(self, request, *, message="", status=200, student=None, cookie=None):
        from grader.server.page import render

        lang = self.lang_of(request)
        cookie = cookie or request.cookies.get(COOKIE)
        student = student or self.session_of(cookie)
        rows = self.store.history(student) if student else []
        body = render(
            lang=lang,
            student=student,
            csrf=self.csrf(cookie) if student else "",
            rows=[self.view(r, lang) for r in reversed(rows)],
            message=message,
            max_mb=self.settings["max_upload_mb"],
        )
        return HTMLResponse(body, status, headers={**REPORT_HEADERS, "Content-Security-Policy": PAGE_CSP})

    def home(self, request):
        if self.who(request) == ("instructor", None):
            return RedirectResponse(f"/instructor/?lang={self.lang_of(request)}", 303)
        received = request.query_params.get("received", "")
        message = text("server.page.received", self.lang_of(request), id=received) if received.isdigit() else ""
        return self.page(request, message=message)

    async def login(self, request):
        lang = self.lang_of(request)
        if _cross_site(request):  # a page elsewhere posting a token would log the visitor in as that token's owner
            return self.page(request, message=text("server.page.cross_site", lang), status=403)
        form = await _form(request, await _capped_body(request, 4096))
        token = str(form.get("token") or "") if form is not None else ""
        who = await run_in_threadpool(self.store.who, token)
        if who is None:
            return self.page(request, message=text("server.page.bad_token", lang), status=401)
        if who[0] == "instructor":
            subject = INSTRUCTOR + str(await run_in_threadpool(self.store.instructor_of, token))
            cookie = await run_in_threadpool(self.new_session, subject)
            response = RedirectResponse(f"/instructor/?lang={lang}", 303)
        else:
            cookie = await run_in_threadpool(self.new_session, who[1])
            response = RedirectResponse(f"/?lang={lang}", 303)
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=SESSION_S,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    def _checked_session(self, request, given):
        cookie = request.cookies.get(COOKIE)
        who = self.session_who(cookie)
        if who is None:
            return None, self.page(request, message=text("server.page.login_first", self.lang_of(request)), status=401)
        if not given or not hmac.compare_digest(str(given), self.csrf(cookie)):
            return None, self.page(request, message=text("server.page.csrf", self.lang_of(request)), status=403)
        return who, None

    async def logout(self, request):
        form = await _form(request, await _capped_body(request, 4096))
        _, refused = self._checked_session(request, form.get("csrf") if form is not None else None)
        if refused is not None:
            return refused
        expires, _, mac, _ = request.cookies[COOKIE].split(":", 3)  # a valid session's cookie: checked above
        await run_in_threadpool(self.store.end_session, mac, float(expires))
        response = RedirectResponse(f"/?lang={self.lang_of(request)}", 303)
        response.delete_cookie(COOKIE)
        return response

    async def upload(self, request):
        cookie = request.cookies.get(COOKIE)
        lang = self.lang_of(request)
        who = await run_in_threadpool(self.session_who, cookie)
        if who is None:
            return self.page(request, message=text("server.page.login_first", lang), status=401)
        if who[0] != "student":
            return self.page(request, message=text("server.auth.student_only", lang), status=403)
        student = who[1]

        def check(form):  # the CSRF token is a field of the same form: checked before anything is stored
            given = str(form.get("csrf") or "")
            if not given or not hmac.compare_digest(given, self.csrf(cookie)):
                return self.page(request, message=text("server.page.csrf", lang), status=403)
            return None

        sid, refused = await self.receive(request, student, check=check)
        if refused is None:
            return RedirectResponse(f"/?lang={lang}&received={sid}", 303)
        if isinstance(refused, JSONResponse):
            return self.page(request, message=json.loads(bytes(refused.body))["error"], status=refused.status_code)
        return refused


def gradebook_text(rows, *, reviews=False):
    """The server's gradebook CSV (without the BOM) of ``Server.gradebook_rows``: written as the batch's gradebook
    is (RFC 4180, CRLF), every text cell through its ``text_cell`` (no formula under any separator), scores by its
    ``number_cell``. ``total``, ``status`` and ``reason`` are the submission's that counts, after the review;
    ``submitted_late``: ``yes`` when it was handed in after the deadline. ``reviews``: the batch's review columns
    (``gradebook.REVIEW``, the same names and cells) follow, from each row's ``review`` (its final record's)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    head = ["student_id", "name", "total", "max", "status", "submission", "submitted", "submitted_late"]
    writer.writerow(
        head + ["late_submissions", "late_submission", "late_total", "reason"] + (list(REVIEW) if reviews else [])
    )
    for r in rows:
        graded = r["counted"] is not None
        writer.writerow(
            [
                text_cell(r["student"]),
                text_cell(r["name"]),
                number_cell(r["score"]) if graded else "",
                number_cell(r["max_score"]) if graded else "",
                text_cell(r["status"] or ""),
                r["counted"] or "",
                text_cell(r["submitted"] or ""),
                "yes" if r["late"] else "",
                r["late_submissions"],
                r["late_counted"] or "",
                number_cell(r["late_score"]) if r["late_counted"] else "",
                text_cell(r.get("reason") or ""),
            ]
            + (review_cells(r.get("review")) if reviews else [])
        )
    return buf.getvalue()


def _pick(rows, policy):
    if not rows:
        return None
    if policy == "best":
        return max(rows, key=lambda r: (r.score or 0.0, r.id))
    return max(rows, key=lambda r: r.id)


def _cross_site(request):
    """Whether a form was posted from another site: the browser says so (``Sec-Fetch-Site``: anything but our own
    origin or the user's own action), or, from a browser that does not, its ``Origin`` names another host than the
    one asked (``null``: a sandboxed or privacy-stripped origin). A request with neither is not a browser's form."""
    fetch = request.headers.get("sec-fetch-site")
    if fetch is not None:
        return fetch.strip().lower() not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return False
    host = request.headers.get("host", "")
    return origin.strip().lower() == "null" or urllib.parse.urlsplit(origin.strip()).netloc.lower() != host.lower()


class _Stalled(Exception):
    """A request's body stopped coming: no byte for ``BODY_IDLE_S`` seconds."""


async def _arriving(request):
    """The chunks of ``request``'s body as they come; ``_Stalled`` when none comes for ``BODY_IDLE_S`` seconds."""
    chunks = request.stream().__aiter__()
    while True:
        try:
            yield await asyncio.wait_for(chunks.__anext__(), BODY_IDLE_S)
        except StopAsyncIteration:
            return
        except asyncio.TimeoutError:
            raise _Stalled from None


async def _capped_body(request, limit):
    """A small form's body (the login, log-out and regrade forms); empty past ``limit`` bytes or when it stops coming
    (the form is then unreadable, and refused)."""
    body = bytearray()
    try:
        async for chunk in _arriving(request):
            body += chunk
            if len(body) > limit:
                return b""
    except _Stalled:
        return b""
    return bytes(body)


async def _form(request, body):
    """The form in ``body`` (read already), parsed as ``request``'s content type says; ``None`` when it cannot be."""
    sent = False

    async def replay():
        nonlocal sent
        if sent:
            return {"type": "http.request", "body": b"", "more_body": False}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        return await Request(request.scope, replay).form(max_files=MAX_FILES + 1, max_fields=20)
    except Exception:  # noqa: BLE001 - whatever a client sends: a malformed form is refused, never a crash
        return None


def create_app(course, *, grader=None, store=None, plan=None):
    """The application for the course configuration ``course``; ``grader``: the grading loop it starts and stops
    with it (``None``: none, the queue is only filled); ``plan``: how it grades (``grading.Plan``, the reviews
    with it; default: the course's, made when a class page first needs it)."""
    server = Server(course, store or Store(course.server["data"], course.server["database"]), grader, plan)

    @asynccontextmanager
    async def lifespan(app):
        if grader is not None:
            grader.start()
        try:
            yield
        finally:
            if grader is not None:
                await run_in_threadpool(grader.stop)

    routes = [
        Route("/", server.home, methods=["GET"]),
        Route("/favicon.ico", lambda request: Response(status_code=204), methods=["GET"]),  # none: say so quietly
        Route("/login", server.login, methods=["POST"]),
        Route("/logout", server.logout, methods=["POST"]),
        Route("/upload", server.upload, methods=["POST"]),
        Route("/api/submissions", server.post_submission, methods=["POST"]),
        Route("/api/submissions", server.list_submissions, methods=["GET"]),
        Route("/api/submissions/{sid:int}", server.get_submission, methods=["GET"]),
        Route("/submissions/{sid:int}/report", server.report, methods=["GET"]),
        Route("/api/gradebook", server.gradebook, methods=["GET"]),
        Route("/instructor/gradebook.csv", server.gradebook_csv, methods=["GET"]),
        Route("/instructor/lms.csv", server.lms_csv, methods=["GET"]),
        Route("/api/regrade", server.regrade, methods=["POST"]),
        Route("/instructor/regrade", server.regrade_form, methods=["POST"]),
        Route("/instructor/review", server.review_home, methods=["GET"]),
        Route("/instructor/review", server.review_form, methods=["POST"]),
        Route(
            "/instructor", lambda request: RedirectResponse(f"/instructor/?{request.url.query}", 308), methods=["GET"]
        ),
        Route("/instructor/", server.instructor_home, methods=["GET"]),
        Route("/instructor/index.html", server.class_page("index"), methods=["GET"]),
        Route("/instructor/similarity.html", server.class_page("similarity"), methods=["GET"]),
    ]

    def database_away(request, exc):
        log.error("database error: %s", type(exc).__name__)
        return server.error(request, 503, "server.store.unavailable")

    def no_route(request, exc):  # no such route, or not by that method: said as every error is, in JSON
        key = "server.http.method" if exc.status_code == 405 else "server.http.not_found"
        return server.error(request, exc.status_code, key, headers=getattr(exc, "headers", None))

    def failed(request, exc):  # a bug of the server's: its traceback goes to the log, the asker reads a sentence
        return server.error(request, 500, "server.http.internal")

    # Any route whose database call fails (locked past its timeout, a PostgreSQL server away) answers 503, not 500.
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={sa.exc.SQLAlchemyError: database_away, 404: no_route, 405: no_route, Exception: failed},
    )
    return _headers(app)


def _headers(app):
    """``app`` with ``X-Content-Type-Options: nosniff`` on every answer, and ``Cache-Control: no-store`` on every
    answer that sets none (a student's scores are nobody's cache's)."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)

        async def send_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                if b"x-content-type-options" not in names:
                    headers.append((b"x-content-type-options", b"nosniff"))
                if b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        return await app(scope, receive, send_headers)

    return wrapped
