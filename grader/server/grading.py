"""The server's grading loop: the queue's submissions, oldest first, graded by ``[server] judges`` batch judges at
once, each one submission at a time (``Store.claim`` gives a submission to one judge only).

This process never imports or runs a student's code. It takes a hand-in in by the batch's rules
(``sources.prepare``: the snapshot, links and special files refused, a zip extracted with its checks), sends the
judge (``runner.Judge``, ``python -m grader.batch.judge``) the batch's ``judge.Job`` for it, and renders the
student's report from the saved grading as the batch does (``outputs.publish``). Each attempt grades into a
folder of its own (``gradings/<id>/<attempt>-<ns>``: the attempt and a clock reading, as a regrade counts attempts
from one again), so that a judge left over from a stopped server never writes over the grading that counts, and
the row records which folder that is.

A judge that dies or runs past its deadline is stopped; the submission goes back to the queue, and after
``store.MAX_ATTEMPTS`` attempts it ends ``error`` with the reason. A server stopped mid-grading leaves the row
``grading``: the next start puts it back in the queue (``Store.recover``), and kills the judges it left behind,
found by the process ids in ``judge-<slot>.pid`` (``kill_leftover``).

With ``[server] scheduler`` a slot has no judge of its own: it sends each grading to a Dask worker, as ``gradekit
batch --scheduler`` sends one, and writes the grading that comes back into the attempt's folder
(``grader.server.cluster``); the rest (the claim, the attempts, the review, the report, the end) is the same.
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
from grader.server.cluster import Away
from grader.server.store import MAX_ATTEMPTS

log = logging.getLogger("gradekit.server")
RETRY_S = 5.0
"""Seconds the loop waits before trying a database that failed again."""
JUDGE_PID = "judge-{slot}.pid"
"""Each slot's running judge's process id, in the data folder: the next start kills the judges a killed server
left."""


@dataclasses.dataclass
class Plan:
    """How every submission is graded: the batch's job (its submission fields empty) and the judge's deadline."""

    job: Job
    deadline_s: float
    copy_policy: str
    output_format: str
    lang: str
    reviews: overrides_module.Overrides = dataclasses.field(default_factory=overrides_module.Overrides)
    """The instructor's reviews (``overrides.toml``), applied to every grading as the batch applies them; replaced
    when the instructor saves a review from the gradebook page (``reviews.replace``)."""
    lock: threading.RLock = dataclasses.field(default_factory=threading.RLock, init=False, repr=False, compare=False)
    """Held while a grading's review is applied, its files rendered and its result recorded, and while the reviews
    are replaced and applied again: a grading finished meanwhile never keeps the reviews of before, and files are
    rendered one folder at a time."""


def config_file(course):
    """The course configuration's file (its ``source`` without the section it names)."""
    return course.source.split(" [", 1)[0]


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
        rerun_lines=False,  # a line naming the server's copy of a hand-in runs for nobody who reads the report
    )
    deadline_s = o.total_timeout * (SETS if held_back is not None else 1) + 3 * o.call_timeout + 300.0
    return Plan(job, deadline_s, settings.copy_policy, settings.output_format, o.lang)


class Slot:
    """One judge slot of the loop: its index (the judge's ``Job.slot``), its thread, the judge it runs (started at
    its first submission, kept for the next ones), and its wake-up."""

    def __init__(self, index):
        self.index = index
        self.judge = None
        self.thread = None
        self.wake = threading.Event()


class Grader:
    """The loop: ``judges`` slots, each a thread of the server process grading one claimed submission at a time
    with a judge of its own, or on a Dask worker (``cluster``); ``start``, ``stop``; ``wake`` when a submission was
    queued."""

    def __init__(self, store, plan, judges=1, cluster=None):
        if judges < 1:
            raise ValueError(f"judges must be at least 1, got {judges}")
        self.store = store
        self.plan = plan
        self.cluster = cluster
        """``grader.server.cluster.Cluster``: each slot sends its gradings to a Dask worker instead of a judge of
        its own; ``None``: local judges."""
        self.slots = [Slot(i) for i in range(judges)]
        self._stop = threading.Event()
        self._judges = threading.Lock()
        """Held to start a judge and by ``stop`` to collect them: a slot starts no judge once ``stop`` has begun."""

    def start(self):
        kill_leftover(self.store.data)
        back = self.store.recover()
        if back:
            log.info("%d submission(s) interrupted by a stop are queued again", back)
        for slot in self.slots:
            slot.thread = threading.Thread(
                target=self._loop, args=(slot,), name=f"gradekit-judge-{slot.index}", daemon=True
            )
            slot.thread.start()

    def wake(self):
        for slot in self.slots:
            slot.wake.set()

    def stop(self):
        """Stop every judge (together: each may take its grace) and every slot; what they were grading goes back to
        the queue, the attempt not counted."""
        with self._judges:
            self._stop.set()
            judges = [slot.judge for slot in self.slots if slot.judge is not None]
        self.wake()
        stoppers = [threading.Thread(target=judge.stop, kwargs={"grace": 2.0}, daemon=True) for judge in judges]
        for t in stoppers:
            t.start()
        ends = time.monotonic() + 10
        for t in stoppers + [slot.thread for slot in self.slots if slot.thread is not None]:
            t.join(timeout=max(0.0, ends - time.monotonic()))
        for slot in self.slots:
            pid_file(self.store.data, slot.index).unlink(missing_ok=True)
        if self.cluster is not None:
            self.cluster.close()

    def _loop(self, slot):
        stuck: tuple | None = None  # (row, detail): an attempt whose end could not be recorded (the database away)
        while not self._stop.is_set():
            if stuck is not None:  # only this slot's row goes back: the others' are being graded
                row, detail = stuck
                try:
                    self._end(row, detail)
                    stuck = None
                except Exception:  # noqa: BLE001 - still away: wait and try again
                    log.exception("cannot record the end of submission %s", row.id)
                    self._stop.wait(RETRY_S)
                continue
            if self.cluster is not None and not self.cluster.ready():  # nothing claimed: the queue waits for it
                self._stop.wait(RETRY_S)
                continue
            try:
                row = self.store.claim()
            except Exception:  # noqa: BLE001 - the database is away for a while: wait and try again
                log.exception("cannot read the queue")
                row = None
                self._stop.wait(RETRY_S)
            if row is None:
                slot.wake.wait(1.0)
                slot.wake.clear()
                continue
            try:
                self.grade(row, slot)
            except Exception as exc:  # noqa: BLE001 - a grader bug: this submission says so, the loop goes on
                log.exception("grading submission %s failed", row.id)
                detail = clean_text(f"{type(exc).__name__}: {exc}")[:2000]
                try:
                    self._end(row, detail)
                except Exception:  # noqa: BLE001 - the database again: the row is ended when it answers
                    log.exception("cannot record the end of submission %s", row.id)
                    stuck = (row, detail)
                    self._stop.wait(RETRY_S)

    def grade(self, row, slot):
        """Grade the claimed submission ``row`` with ``slot``'s judge and record its result (or send it back to the
        queue)."""
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
                record = runner.problem_record(sub, p.lang)
                runner.write_problem(out, record, sub.student, runner.problem_detail(sub, p.lang), p.job.profile)
            else:
                digest = sources.content_hash(sub.path, "", sub.refused)
                if self.cluster is None:
                    job = dataclasses.replace(
                        p.job.for_submission(sub, digest), path=str(sub.path), out=str(out), slot=slot.index
                    )
                    record, detail = self._judged(job, slot), None
                else:
                    try:
                        record, detail = self.cluster.grade(
                            sub, digest, f"grade-{row.student}-{row.id}-{name}", out, self._stop
                        )
                    except Away:  # nothing of the submission's: back to the queue, the attempt not counted
                        log.warning(text("server.cluster.lost", p.lang, id=row.id))
                        self.store.finish(row, status="queued", undo=True)
                        return
                if record is None or "internal_error" in record:
                    detail = (
                        detail
                        or (record or {}).get("internal_error")
                        or text("dask.detail.late", p.lang, seconds=f"{p.deadline_s:g}")
                    )
                    self._end(row, clean_text(detail))
                    return
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        # The batch renders reports from one thread only: the slots take turns to render theirs (a fraction of a
        # second, next to a grading's seconds), and a review saved meanwhile waits for the result to be recorded.
        with p.lock:
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

    def _end(self, row, detail):
        """An attempt that gave no grading: back to the queue (not counted when the server is stopping: it stopped
        the judge), or ``error`` after the last attempt."""
        if self._stop.is_set():
            self.store.finish(row, status="queued", undo=True)
        elif row.attempts < MAX_ATTEMPTS:
            self.store.finish(row, status="queued", reason=detail)
        else:
            self.store.finish(row, status="error", reason=text("batch.reason.judge", self.plan.lang, detail=detail))

    def _judged(self, job, slot):
        """``slot``'s judge's record of ``job``; ``None`` when the judge did not start, died or ran late (it is then
        stopped, and the slot's next submission gets a new one) or the server is stopping."""
        if slot.judge is None:
            with self._judges:
                if self._stop.is_set():
                    return None
                slot.judge = runner.Judge(job.assignment)
                pid_file(self.store.data, slot.index).write_text(str(slot.judge.proc.pid))
            hello = slot.judge.receive(time.monotonic() + runner.JUDGE_START_S)
            if not hello or not hello.get("ready"):
                self._drop_judge(slot)
                return None
        try:
            slot.judge.send(job)
            record = slot.judge.receive(time.monotonic() + self.plan.deadline_s)
        except OSError:
            record = None
        if record is None or "internal_error" in record:
            self._drop_judge(slot)
        return record

    def _drop_judge(self, slot):
        judge, slot.judge = slot.judge, None
        if judge is not None:
            judge.stop()
        pid_file(self.store.data, slot.index).unlink(missing_ok=True)


def pid_file(data, slot):
    """Where slot ``slot``'s running judge's process id is kept, in the data folder ``data``."""
    return Path(data) / JUDGE_PID.format(slot=slot)


def kill_leftover(data):
    """Kill the judges (and everything each started: ``kill_tree``) that a server killed outright left behind, those
    still running; nothing for a recorded process that is gone or is something else now."""
    for path in sorted(Path(data).glob(JUDGE_PID.format(slot="*"))):
        try:
            pid = int(path.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            cmdline = b""
        if b"grader.batch.judge" in cmdline:
            log.info("killing the judge %s a stopped server left running", pid)
            kill_tree(pid)
        path.unlink(missing_ok=True)


def _processes():
    """``{pid: (parent, process group, session)}`` of every process ``/proc`` shows."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rsplit(")", 1)[1].split()  # after the command's name, which may hold anything
        found[int(entry.name)] = (int(fields[1]), int(fields[2]), int(fields[3]))
    return found


def kill_tree(root):
    """SIGKILL process ``root``, its descendants, and every process in their process groups and sessions: a judge's
    fork server and workers each run in a session of their own, so the judge's group alone would leave them (and a
    worker may be running a submission's code). What is found is stopped (SIGSTOP) first and the tree read again,
    so that nothing starts another process unseen, then everything is killed."""
    ours = (os.getpgrp(), os.getsid(0))
    found: set[int] = set()
    for _ in range(10):  # a process may fork between a reading and its stop: read until nothing new
        procs = _processes()
        tree, parents = set(), {root} if root in procs else set()
        while parents:
            tree |= parents
            parents = {pid for pid, (parent, _, _) in procs.items() if parent in parents} - tree
        leaders = {procs[pid][1] for pid in tree} | {procs[pid][2] for pid in tree}  # their groups and sessions
        leaders -= {0, 1, *ours}
        members = tree | {pid for pid, (_, group, session) in procs.items() if {group, session} & leaders}
        new = members - found - {1, os.getpid()}
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        found |= new
    for pid in found:
        _signal(pid, signal.SIGKILL)


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
