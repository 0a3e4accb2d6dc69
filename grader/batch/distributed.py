"""Grading a class on Dask workers: ``gradekit batch ... --scheduler tcp://host:8786`` or ``--scheduler local:N``.

The Dask counterpart of ``runner._run_pool``, with the same contract: ``run_pool`` yields each student's record as
it finishes, and each student's grading is in ``--out`` (``judge.SAVED``, written atomically, ``record.json`` last)
before the record is yielded, so resume, the student's files (rendered by the batch process from the grading and
the review, in the course's language and formats: ``grader.batch.outputs``), the gradebook and the summary page are
the local batch's.

The client (the ``gradekit batch`` process) ships each submission's snapshot as zip bytes, never a path: the
workers need not share a disk with it. Each Dask worker process hosts judges (``python -m grader.batch.judge``,
one per worker thread, each with its own fork server and slot), started on first use and kept for the worker's
life; a task gets the student's ``judge.Job`` as plain data, unpacks the snapshot into the worker's own scratch
folder, has a judge grade it into a scratch output folder, and returns the saved grading as bytes. Grading is the
judge's, byte for byte as in the local batch: the student's code runs jailed under it, as its own uid, when the
Dask worker runs as root; otherwise it is not jailed but runs as the Dask worker's user, and the batch says so
(``Receiver.warnings``).

A worker that dies mid-submission loses nothing: the scheduler (``allowed-failures``: ``ALLOWED_FAILURES``)
runs the task once more on another worker, then the student's row is ``error`` with the reason. A task that
raises is retried once too (``retries``). Nothing here is needed by the local batch: Dask is imported only when
a scheduler is named.
"""

import dataclasses
import fcntl
import io
import itertools
import os
import shutil
import tempfile
import threading
import time
import zipfile
from contextlib import contextmanager
from pathlib import Path

from grader.batch import runner
from grader.batch.judge import SAVED, Job, atomic_write
from grader.config import parse_scheduler
from grader.messages import text
from grader.safetext import for_terminal
from grader.submission import intake, snapshot

ALLOWED_FAILURES = 1
"""Workers that may die running one submission before it is given up (1: it is retried once elsewhere)."""
OUTPUTS = SAVED
"""The files a judge saves for a student (its grading), in the order the client writes them: ``record.json`` last,
so that a student whose record is there has a grading (``runner._complete``)."""
LOCAL_SETTINGS = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.worker-saturation": 1.0,
}
"""Dask settings of a ``local:N`` cluster (docs/CLUSTER.md gives them to a cluster too). Its event loops' watchdog,
its dashboard's sampling and its profiler took about 4% of a 2-core machine while the judges waited; these take
under 1%. A worker of one thread is sent its next submission when it finishes one (Dask's default queues two at a
worker, which can leave the other worker idle at the end of a class)."""


# -- the client side ---------------------------------------------------------------------------------------------
def batch(scheduler, **kwargs):
    """``runner.batch(**kwargs)`` with the judges on the Dask cluster ``scheduler`` (``parse_scheduler``) instead of
    this machine's; ``kwargs["jobs"]`` is unused. A scheduler that is not understood, or Dask not installed, is a
    ``UsageError`` before anything is read or graded."""
    from grader.api import UsageError

    lang = kwargs.get("lang") or "en"
    try:
        parse_scheduler(scheduler, lang)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        import distributed  # noqa: F401 - only to know it is there
    except ImportError:
        raise UsageError(text("dask.missing", lang)) from None

    def pool(todo, out, job, jobs, deadline_s, lang, bar, warnings):
        return run_pool(todo, out, job, scheduler, deadline_s, lang, bar, warnings=warnings)

    return runner.batch(pool=pool, **kwargs)


@contextmanager
def connect(scheduler, lang="en"):
    """A Dask ``Client`` for ``scheduler`` (``parse_scheduler``): ``local:N`` starts a cluster of N single-threaded
    worker processes on this machine, closed on the way out; an address connects to a running scheduler."""
    kind, value = parse_scheduler(scheduler, lang)
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        from grader.api import UsageError

        raise UsageError(text("dask.missing", lang)) from None
    if kind == "address":
        with Client(value, set_as_default=False) as client:
            yield client
        return
    # memory_limit=0: the judges cap the students' memory themselves; a Dask limit would count the worker only.
    # The workers' nannies pass the settings in force when they start on to the workers, restarted ones too.
    with (
        dask.config.set(LOCAL_SETTINGS),
        LocalCluster(
            n_workers=value,
            threads_per_worker=1,
            processes=True,
            memory_limit=0,
            scheduler_kwargs={"allowed_failures": ALLOWED_FAILURES},
            # the dashboard lists each grading by student: on this machine only (Dask's default is every interface;
            # another port where 8787 is taken)
            dashboard_address="127.0.0.1:8787",
        ) as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        yield client


def pack(folder):
    """The snapshot ``folder`` as zip bytes: its regular files under their paths relative to ``folder``, sorted (a
    snapshot holds nothing else; links would be skipped, never followed)."""
    buf = io.BytesIO()
    folder = os.fspath(folder)
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for base, dirs, names in os.walk(folder, followlinks=False):
            dirs.sort()
            for name in sorted(names):
                path = os.path.join(base, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    zf.write(path, os.path.relpath(path, folder).replace(os.sep, "/"))
    return buf.getvalue()


def task_key(sub, digest):
    """The Dask key of ``sub``'s grading, ``grade-<folder>-<digest[:8]>``: the dashboard shows it by name."""
    return f"grade-{sub.folder}-{digest[:8]}"


def run_pool(todo, out, job, scheduler, deadline_s, lang, bar, *, warnings=None):
    """Grade ``todo`` (``[(sources.Submission, digest)]``) on the Dask cluster ``scheduler``, each submission's job made
    from ``job`` (the batch's ``judge.Job``); yields each record as it finishes, its grading already in
    ``out/<folder>/``. ``warnings`` (a list, e.g. ``BatchResult.warnings``) gets the sentences for the instructor
    (workers that could not seal the graded code) once all are done."""
    if not todo:
        return
    from distributed import as_completed

    from grader.assignment import load

    receiver = Receiver(out, job.profile, runner.grader_fingerprint(load(job.assignment)), lang, bar)
    config = config_file(job.config)
    with connect(scheduler, lang) as client:
        client.register_plugin(judge_plugin())
        if "dashboard" in client.scheduler_info().get("services", {}):
            bar.note(text("dask.dashboard", lang, link=client.dashboard_link))
        futures = {}
        for sub, digest in todo:
            futures[send(client, sub, digest, job, config, deadline_s, key=task_key(sub, digest))] = sub
        for future in as_completed(list(futures), loop=client.loop):
            sub = futures.pop(future)
            if future.status == "finished":
                record = receiver.finish(sub, future.result())
            else:
                record = receiver.fail(sub, future.exception())
            bar.step(record)
            yield record
    if warnings is not None:
        warnings.extend(receiver.warnings())


def _job(sub, digest, job):
    """The judge's job for ``sub`` as the plain data shipped to a worker (``Job.to_data``), made from the batch's
    ``job`` as the local pool makes it (``Job.for_submission``), less what the worker fills in (``path``, ``out``,
    ``slot``, and ``config``: the path of its own copy of the course configuration). ``source`` is the local folder's
    path as a label only (the results name it, as in the local batch); nothing reads it."""
    return dataclasses.replace(job.for_submission(sub, digest), config=None).to_data()


def config_file(path):
    """The course configuration as ``(file name, bytes)`` to ship, or ``None``."""
    return (Path(path).name, Path(path).read_bytes()) if path else None


def send(client, sub, digest, job, config, deadline_s, *, key):
    """Send ``sub``'s grading (a prepared ``sources.Submission`` whose content hashed to ``digest``) to the cluster
    of ``client``: its snapshot packed, its job made from ``job`` (``_job``), the course configuration ``config``
    (``config_file``'s), the judge's deadline ``deadline_s``; the Dask future of ``grade_on_worker``'s outcome,
    named ``key``. The batch and the course server (``grader.server.cluster``) both send a grading this way: a
    worker that dies running it, or a task that raises, gets it tried once more on another worker."""
    return client.submit(
        grade_on_worker,
        pack(sub.path),
        sub.folder,
        _job(sub, digest, job),
        config,
        deadline_s,
        key=key,
        pure=False,
        retries=ALLOWED_FAILURES,
    )


def received(outcome, fingerprint, lang):
    """``(record, detail)`` of ``outcome`` (``grade_on_worker``'s dict): the judge's record and ``None``, or
    ``None`` and why there is none: the judge failed, or the worker grades with another grader than
    ``fingerprint`` (``runner.grader_fingerprint``), whose grading is never used."""
    record, detail = outcome["record"], outcome["detail"]
    if record is not None and outcome["grader"] != fingerprint:
        return None, text(
            "dask.detail.other_grader", lang, worker=outcome["worker"], theirs=outcome["grader"], ours=fingerprint
        )
    return record, detail


def save(folder, outcome):
    """Write the grading ``outcome`` holds (a record ``received`` took) in ``folder``, as a judge saves one: each
    file atomically, ``record.json`` last."""
    folder = Path(folder)
    folder.mkdir(exist_ok=True)
    for name in OUTPUTS:
        atomic_write(folder / name, outcome["files"][name].decode("utf-8"))


def failure(exc, lang):
    """Why a grading task failed for good with ``exc``: its workers died (``KilledWorker``), or it raised twice."""
    try:
        from distributed import KilledWorker
    except ImportError:  # pragma: no cover - a task ran, so Dask is here
        KilledWorker = ()
    if isinstance(exc, KilledWorker):
        return text("dask.detail.worker_died", lang, n=getattr(exc, "allowed_failures", ALLOWED_FAILURES) + 1)
    return text("dask.detail.task", lang, error=f"{type(exc).__name__}: {exc}")


class Receiver:
    """Turns what a worker returned for a student into that student's grading in ``out`` and the record."""

    def __init__(self, out, profile, fingerprint, lang, bar):
        self.out, self.profile, self.fingerprint, self.lang, self.bar = Path(out), profile, fingerprint, lang, bar
        self.unjailed = []
        """Names of the workers whose judge was not root (in the order first seen)."""

    def finish(self, sub, outcome):
        """Write ``outcome``'s grading (``grade_on_worker``'s dict) for ``sub`` and return the record; an error row
        when the judge failed or the worker grades with another grader than this batch's."""
        if not outcome["jailed"] and outcome["worker"] not in self.unjailed:
            self.unjailed.append(outcome["worker"])
            if self.bar is not None:
                self.bar.note(self.warnings()[-1])
        record, detail = received(outcome, self.fingerprint, self.lang)
        if record is None:
            return self._error(sub, detail)
        save(self.out / sub.folder, outcome)
        return record

    def fail(self, sub, exc):
        """The error row of ``sub`` whose task failed for good (``exc``): its workers died, or it raised twice."""
        return self._error(sub, failure(exc, self.lang))

    def _error(self, sub, detail):
        """The error row of ``sub``, saved as the local batch saves one (its files are rendered by the batch)."""
        record = runner._error_record(sub, detail, self.lang)
        runner.write_problem(self.out / sub.folder, record, sub.student, detail, self.profile)
        return record

    def warnings(self):
        """The sentences for the instructor: the workers that ran the graded code without a jail, if any."""
        if not self.unjailed:
            return []
        return [text("dask.not_jailed", self.lang, workers=", ".join(for_terminal(w) for w in self.unjailed))]


# -- the worker side ---------------------------------------------------------------------------------------------
def claim_slot(folder):
    """``(slot, fd)``: the lowest slot number that no live process of this machine holds, held (an exclusive lock on
    ``folder/slot-<n>.lock``) until ``fd`` is closed or the process dies: two judges on one machine, in one Dask
    worker or in two, never share a slot (and so ``sandbox.slot_user``'s users)."""
    folder = Path(folder)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for slot in itertools.count():
        fd = os.open(folder / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return slot, fd


SLOTS = Path(tempfile.gettempdir()) / f"gradekit-slots-{os.getuid()}"
"""Where a machine's judges claim their slots (one folder per user: another user's locks are not ours)."""


class JudgeSession:
    """A judge process kept for many submissions, on a slot of its own: started on first use (or for another
    assignment), stopped after it failed so that the next submission gets a fresh one."""

    def __init__(self, slots=SLOTS):
        self.slot, self._lock = claim_slot(slots)
        self.judge = self.assignment = None

    def grade(self, job, deadline_s, lang):
        """Have the judge grade ``job`` (a ``judge.Job``) on this session's slot: ``(record, None)``, or ``(None,
        why)`` when the judge did not start, died, ran past ``deadline_s`` or reported an internal error."""
        if self.judge is not None and self.assignment != job.assignment:
            self.stop()
        if self.judge is None:
            judge = runner.Judge(job.assignment)
            hello = judge.receive(time.monotonic() + runner.JUDGE_START_S)
            if not hello or not hello.get("ready"):
                judge.stop()
                return None, text("dask.detail.no_start", lang)
            self.judge, self.assignment = judge, job.assignment
        started = time.monotonic()
        try:
            self.judge.send(dataclasses.replace(job, slot=self.slot))
            record = self.judge.receive(started + deadline_s)
        except OSError:
            record = None
        if record is None or "internal_error" in record:
            self.stop()
            return None, (record or {}).get("internal_error") or text("dask.detail.late", lang, seconds=deadline_s)
        return record, None

    def stop(self):
        """Stop the judge (a later ``grade`` starts another)."""
        if self.judge is not None:
            self.judge.stop()
            self.judge = self.assignment = None

    def close(self):
        """Stop the judge and give the slot back."""
        self.stop()
        os.close(self._lock)


class _Host:
    """The judges of one Dask worker process: one per task running at once (a worker of N threads has N), reused
    for the worker's life."""

    def __init__(self, name, scratch):
        self.name, self.scratch = name, Path(scratch)
        self.scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._idle, self._all, self._lock = [], [], threading.Lock()

    @contextmanager
    def session(self):
        with self._lock:
            session = self._idle.pop() if self._idle else None
        if session is None:
            session = JudgeSession()
            with self._lock:
                self._all.append(session)
        try:
            yield session
        finally:
            with self._lock:
                self._idle.append(session)

    def close(self):
        with self._lock:
            sessions, self._all, self._idle = self._all, [], []
        for session in sessions:
            session.close()


_HOST = None
_HOST_LOCK = threading.Lock()


def _host():
    """This worker process's ``_Host`` (made on the first task): its scratch folder lies in the worker's own local
    directory, which Dask removes when the worker is gone, even killed."""
    global _HOST
    from distributed import get_worker

    with _HOST_LOCK:
        if _HOST is None:
            worker = get_worker()
            _HOST = _Host(str(worker.name), Path(worker.local_directory) / "gradekit")
        return _HOST


def close_host():
    """Stop this worker process's judges (a later task starts others)."""
    global _HOST
    with _HOST_LOCK:
        host, _HOST = _HOST, None
    if host is not None:
        host.close()


def judge_plugin():
    """A Dask ``WorkerPlugin`` that stops a worker's judges when the worker closes (a judge also exits on its own
    once its worker is gone: its stdin closes). Made here, not at import, so that the local batch, which uses this
    module's ``Progress``, never imports Dask."""
    from distributed import WorkerPlugin

    class JudgePlugin(WorkerPlugin):
        name = "gradekit-judges"
        # Registered once per scheduler: registering it again (another batch, a course server connecting again)
        # would first tear down the one on every worker, and its teardown stops the judges grading right then.
        idempotent = True

        def teardown(self, worker):
            close_host()

    return JudgePlugin()


def grade_on_worker(packed, folder, job, config, deadline_s):
    """Run on a Dask worker: unpack ``packed`` (``pack``'s bytes), grade it as ``job`` says (``Job.to_data``'s plain
    data) with one of this worker's judges into a scratch folder named ``folder`` (the student's output folder: the
    record names it), and return ``{"record", "detail", "files": {name: bytes} (``OUTPUTS``), "jailed", "worker",
    "grader"}``; the scratch is removed."""
    job = Job.from_data(job)
    host = _host()
    work = Path(tempfile.mkdtemp(prefix="job-", dir=host.scratch))
    try:
        archive = work / "snapshot.zip"
        archive.write_bytes(packed)
        path = intake.extract(
            archive, work / "snapshot", max_files=snapshot.MAX_FILES, max_bytes=snapshot.MAX_TOTAL_BYTES
        )
        out = work / "out" / folder
        out.mkdir(parents=True)
        mine = None
        if config is not None:
            (work / "config").mkdir()
            (work / "config" / config[0]).write_bytes(config[1])
            mine = str(work / "config" / config[0])
        job = dataclasses.replace(job, path=str(path), out=str(out), config=mine)
        with host.session() as session:
            record, detail = session.grade(job, deadline_s, job.lang)
        files = {name: (out / name).read_bytes() for name in OUTPUTS} if record is not None else {}
        return {
            "record": record,
            "detail": detail,
            "files": files,
            "jailed": os.geteuid() == 0,
            "worker": host.name,
            "grader": _fingerprint(job.assignment),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


_FINGERPRINTS = {}


def _fingerprint(assignment):
    """``runner.grader_fingerprint`` of this worker's kit and ``assignment`` (computed once per worker)."""
    if assignment not in _FINGERPRINTS:
        from grader.assignment import load

        _FINGERPRINTS[assignment] = runner.grader_fingerprint(load(assignment))
    return _FINGERPRINTS[assignment]
