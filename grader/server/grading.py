"""The server's grading loop: the queue's submissions, oldest first, graded one at a time by a batch judge.

This process never imports or runs a student's code. It takes a hand-in in by the batch's rules
(``sources.prepare``: the snapshot, links and special files refused, a zip extracted with its checks), sends the
judge (``runner._Judge``, ``python -m grader.batch.judge``) the batch's ``judge.Job`` for it, and renders the
student's report from the saved grading as the batch does (``outputs.publish``). Each attempt grades into a
folder of its own (``gradings/<id>/<attempt>-<ns>``: the attempt and a clock reading, as a regrade counts attempts
from one again), so that a judge left over from a stopped server never writes over the grading that counts, and
the row records which folder that is.

A judge that dies or runs past its deadline is stopped; the submission goes back to the queue, and after
``store.MAX_ATTEMPTS`` attempts it ends ``error`` with the reason. A server stopped mid-grading leaves the row
``grading``: the next start puts it back in the queue (``Store.recover``), and kills the judge it left behind.
"""

import dataclasses
import logging
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

from grader.batch import outputs, runner, sources
from grader.batch import overrides as overrides_module
from grader.batch.judge import Job
from grader.messages import text
from grader.safetext import clean_text
from grader.server.store import MAX_ATTEMPTS

log = logging.getLogger("gradekit.server")
RETRY_S = 5.0
"""Seconds the loop waits before trying a database that failed again."""
JUDGE_PID = "judge.pid"
"""The running judge's process id, in the data folder: the next start kills a judge a killed server left."""


@dataclasses.dataclass
class Plan:
    """How every submission is graded: the batch's job (its submission fields empty) and the judge's deadline."""

    job: Job
    deadline_s: float
    copy_policy: str
    output_format: str
    lang: str
    reviews: overrides_module.Overrides = dataclasses.field(default_factory=overrides_module.Overrides)
    """The instructor's reviews (``overrides.toml``), applied to every grading as the batch applies them."""


def plan(course, config_path):
    """The grading ``Plan`` of the course configuration ``course`` (read from ``config_path``), as ``gradekit
    batch --config`` would grade with it."""
    from grader import api
    from grader.engine import SETS

    settings = api.settings(config=course)
    assignment = settings.assignment
    assignment.require_reference("gradekit serve")
    held_back = course.held_back_seed()
    o = settings.options
    job = Job(
        assignment=assignment.package,
        tasks=None,  # the course's tasks: the judge reads the configuration
        profile=course.server["profile"],
        call_timeout=o.call_timeout,
        total_timeout=o.total_timeout,
        memory_mb=o.memory_mb,
        copy_policy=settings.copy_policy,
        figures=True,
        lang=o.lang,
        config=str(Path(config_path).resolve()),
        held_back=held_back,
    )
    deadline_s = o.total_timeout * (SETS if held_back is not None else 1) + 3 * o.call_timeout + 300.0
    return Plan(job, deadline_s, settings.copy_policy, settings.output_format, o.lang)


class Grader:
    """The loop, in a thread of the server process: ``start``, ``stop``; ``wake`` when a submission was queued."""

    def __init__(self, store, plan):
        self.store = store
        self.plan = plan
        self.judge = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = None

    def start(self):
        kill_leftover(self.store.data)
        back = self.store.recover()
        if back:
            log.info("%d submission(s) interrupted by a stop are queued again", back)
        self._thread = threading.Thread(target=self._loop, name="gradekit-grading", daemon=True)
        self._thread.start()

    def wake(self):
        self._wake.set()

    def stop(self):
        self._stop.set()
        self._wake.set()
        judge = self.judge
        if judge is not None:
            judge.stop(grace=2.0)
        if self._thread is not None:
            self._thread.join(timeout=10)
        (self.store.data / JUDGE_PID).unlink(missing_ok=True)

    def _loop(self):
        stuck = False  # a claimed row could not be ended (the database was away): put it back once it is here
        while not self._stop.is_set():
            try:
                if stuck:
                    self.store.recover()
                    stuck = False
                row = self.store.claim()
            except Exception:  # noqa: BLE001 - the database is away for a while: wait and try again
                log.exception("cannot read the queue")
                row = None
                self._stop.wait(RETRY_S)
            if row is None:
                self._wake.wait(1.0)
                self._wake.clear()
                continue
            try:
                self.grade(row)
            except Exception as exc:  # noqa: BLE001 - a grader bug: this submission says so, the loop goes on
                log.exception("grading submission %s failed", row.id)
                try:
                    self._end(row, None, clean_text(f"{type(exc).__name__}: {exc}")[:2000])
                except Exception:  # noqa: BLE001 - the database again: the row is put back when it answers
                    log.exception("cannot record the end of submission %s", row.id)
                    stuck = True
                    self._stop.wait(RETRY_S)

    def grade(self, row):
        """Grade the claimed submission ``row`` and record its result (or send it back to the queue)."""
        p = self.plan
        if row.attempts > MAX_ATTEMPTS:
            self.store.finish(row, status="error", reason=text("server.reason.attempts", p.lang, n=MAX_ATTEMPTS))
            return
        name = f"{row.attempts}-{time.time_ns()}"
        out = self.store.data / "gradings" / str(row.id) / name
        out.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="gradekit-server-"))
        try:
            sub = sources.Submission(row.student, self.store.source_of(row), folder=name)
            sources.prepare(sub, scratch)
            if sub.path is None:  # nothing to grade: the batch's record and report of such a submission
                record = runner._problem_record(sub, p.lang)
                runner._write_problem(out, record, sub.student, runner._problem_detail(sub, p.lang), p.job.profile)
            else:
                digest = sources.content_hash(sub.path, "", sub.refused)
                job = dataclasses.replace(p.job.for_submission(sub, digest), path=str(sub.path), out=str(out), slot=0)
                record = self._judged(job)
                if record is None or "internal_error" in record:
                    detail = (record or {}).get("internal_error") or text(
                        "dask.detail.late", p.lang, seconds=f"{p.deadline_s:g}"
                    )
                    self._end(row, None, clean_text(detail))
                    return
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        final = runner.reviews_apply(p.reviews, record, p.copy_policy, p.lang)
        outputs.publish(out, final, lang=p.lang, output_format=p.output_format)
        self.store.finish(
            row,
            status="done",
            score=float(final.get("score") or 0.0),
            max_score=float(final.get("max_score") or 0.0),
            verdict=str(final.get("status") or ""),
            reason=str(final.get("reason") or ""),
            grading=f"{row.id}/{name}",
        )
        log.info("submission %s graded: %s", row.id, final.get("status"))

    def _end(self, row, _record, detail):
        """An attempt that gave no grading: back to the queue (not counted when the server is stopping: it stopped
        the judge), or ``error`` after the last attempt."""
        if self._stop.is_set():
            self.store.finish(row, status="queued", undo=True)
        elif row.attempts < MAX_ATTEMPTS:
            self.store.finish(row, status="queued", reason=detail)
        else:
            self.store.finish(row, status="error", reason=text("batch.reason.judge", self.plan.lang, detail=detail))

    def _judged(self, job):
        """The judge's record of ``job``; ``None`` when the judge did not start, died or ran late (it is then
        stopped, and the next submission gets a new one)."""
        if self.judge is None:
            self.judge = runner._Judge(job.assignment)
            (self.store.data / JUDGE_PID).write_text(str(self.judge.proc.pid))
            hello = self.judge.receive(time.monotonic() + runner.JUDGE_START_S)
            if not hello or not hello.get("ready"):
                self._drop_judge()
                return None
        try:
            self.judge.send(job)
            record = self.judge.receive(time.monotonic() + self.plan.deadline_s)
        except OSError:
            record = None
        if record is None or "internal_error" in record:
            self._drop_judge()
        return record

    def _drop_judge(self):
        judge, self.judge = self.judge, None
        if judge is not None:
            judge.stop()
        (self.store.data / JUDGE_PID).unlink(missing_ok=True)


def kill_leftover(data):
    """Kill the judge (and its workers: its process group) that a server killed outright left behind, if it is
    still running; nothing when the recorded process is gone or is something else now."""
    path = Path(data) / JUDGE_PID
    try:
        pid = int(path.read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        path.unlink(missing_ok=True)
        return
    if b"grader.batch.judge" in cmdline:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    path.unlink(missing_ok=True)
