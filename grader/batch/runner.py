"""``batch(*, submissions, out, ...)``: grade a class, in parallel, resumable, and write the outputs.

The batch process only schedules: it finds the submissions, hashes them, skips those whose result
for the same content, grader and options is in ``out`` already, and hands the rest to ``jobs``
judge processes (``grader.batch.judge``), each grading one submission at a time (a ``judge.Job``). A judge runs
the checks (Hypothesis, the reference) in its own interpreter, so the slots do not share a GIL; the
student's code runs one level further down, in the judge's worker child. Each student's grading is
saved by the judge, atomically, as soon as that student is done: stopping the batch loses no
finished result, and the next run resumes where it stopped. The files the student reads are rendered by
this process from the grading and the instructor's review, once each (``grader.batch.outputs.publish``).
"""

import dataclasses
import hashlib
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import grader
from grader.batch import outputs, sources
from grader.batch import overrides as overrides_module
from grader.batch.judge import RECORD, REPLY_PREFIX, SAVED, Job, atomic_write, save_grading
from grader.batch.progress import Progress
from grader.messages import phrase, text
from grader.safetext import clean_data, clean_text, display_name

JUDGE_START_S = 180.0
"""Seconds a judge may take to import torch and the checks (a loaded machine is slow)."""


@dataclass
class BatchResult:
    """What a batch run did."""

    out: Path
    """The output folder."""
    records: list = field(default_factory=list)
    """One record (a dict, as in ``<id>/record.json``) per student, sorted by student id."""
    graded: int = 0
    """Submissions graded in this run."""
    cached: int = 0
    """Submissions whose result was reused."""
    duration_s: float = 0.0
    """Wall time of the run."""
    lang: str = "en"
    """The language the outputs were written in (the command's, else the configuration's)."""
    warnings: list = field(default_factory=list)
    """Sentences for the instructor (an override naming nobody in the class...), in ``lang``."""
    skipped: list = field(default_factory=list)
    """``sources.Skipped`` entries of the class folder that are not submissions (hidden folders, plain files)."""
    held_back: bool = False
    """Whether the checks were graded on held-back examples too (the course has a secret); the closing lines say
    when they were not."""

    @property
    def not_graded(self):
        """The records of the submissions that could not be graded at all (nothing to grade, or the grading
        failed), each with its reason."""
        return [r for r in self.records if r.get("status") == "error" and not r.get("max_score")]


CACHES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders of caches, whose files are no part of the kit or of an assignment (nor compiled ``.pyc``/``.pyo`` files)."""


def _fingerprinted(base):
    """Every file under ``base`` that makes it what it is, sorted: all but caches (``CACHES``, compiled files)."""
    return [
        path
        for path in sorted(base.rglob("*"))
        if path.is_file()
        and path.suffix not in (".pyc", ".pyo")
        and not CACHES.intersection(path.relative_to(base).parts)
    ]


def assignment_folders(assignment):
    """The folders whose files make ``assignment`` what it is: its package (checks, probes, bugs, sentences,
    data...) and its reference, skeleton and data where they lie outside it; none inside another."""
    folders = [package_folder(assignment)]
    for extra in (assignment.reference, assignment.skeleton, assignment.data):
        if extra is not None and not any(Path(extra).resolve().is_relative_to(f) for f in folders):
            folders.append(Path(extra).resolve())
    return folders


def package_folder(assignment):
    """The folder of the package that defines ``assignment`` (``Assignment.folder``)."""
    return assignment.folder


def grader_fingerprint(assignment):
    """The grader's version and a digest of every file of the kit (the ``grader`` package: sources, templates,
    stylesheets, whatever it holds) and of the assignment's folders, caches left out: a change to any re-grades
    everything."""
    h = hashlib.sha256(grader.__version__.encode())
    root = Path(grader.__file__).resolve().parent
    for base in [root] + assignment_folders(assignment):
        for path in _fingerprinted(base):
            h.update(f"{base.name}/{path.relative_to(base).as_posix()}".encode() + b"\0" + path.read_bytes())
    return f"{grader.__version__}+{h.hexdigest()[:16]}"


def batch(
    *,
    submissions,
    out,
    jobs=None,
    tasks=None,
    profile="full",
    config=None,
    lang=None,
    call_timeout=None,
    total_timeout=None,
    memory_mb=None,
    copy_policy=None,
    figures=True,
    force=False,
    stream=None,
    assignment=None,
    overrides=None,
    pool=None,
):
    """Grade every submission in ``submissions`` into ``out``; a ``BatchResult``.

    Args:
        submissions: a folder with one sub-folder or ``.zip`` per student, named by student id.
        out: the output folder (created); also holds the cache of finished results.
        jobs: submissions graded at the same time (default: the number of CPU cores).
        tasks: task ids of the assignment (default: the course configuration's, else all).
        profile: ``"quick"`` or ``"full"``.
        config: path of a ``gradekit.toml`` (or a pyproject.toml with ``[tool.gradekit]``), or ``None``.
        lang: language of the reports and the summary page (default: the configuration's, else English).
        call_timeout, total_timeout, memory_mb: limits (default: the configuration's, else ``grader.options.DEFAULTS``).
        copy_policy: ``"zero"`` or ``"flag"`` (default: the configuration's, else ``"zero"``).
        figures: draw the pictures in each report (a few more calls into student code; default on).
        force: re-grade even what the cache holds.
        stream: where the progress bar goes (default: stderr when it is a terminal, else nothing).
        assignment: the ``Assignment`` graded, or its spec (default: the course configuration's, else
            ``grader.assignment.DEFAULT``).
        overrides: the instructor's reviews, a ``.toml`` or ``.csv`` file (``grader.batch.overrides``; default: the
            configuration's). Applied to every output after grading, never to the cached grading itself: editing
            the file re-grades nothing, and a re-run applies it again.
        pool: who grades what is not cached: ``pool(todo, out, job, jobs, deadline_s, lang, bar, warnings)``
            (``job``: the batch's ``judge.Job``, ``Job.for_submission`` makes each student's) yields each record
            once its grading is saved in ``out`` (``judge.save_grading``; default: judges on this machine,
            ``_run_pool``). ``grader.batch.distributed.batch`` passes Dask's (docs/CLUSTER.md).
    """
    from grader import api
    from grader.api import UsageError
    from grader.config import course_config

    started = time.perf_counter()
    src = Path(submissions)
    if not src.is_dir():
        raise UsageError(
            f"SUBMISSIONS {str(submissions)!r} is not a folder; expected one holding a sub-folder or .zip per student"
        )
    out = Path(out).resolve()
    if out == src.resolve() or src.resolve() in out.parents:
        raise UsageError(f"--out {str(out)!r} is inside SUBMISSIONS; expected a folder outside it")
    course = course_config(config, students=False, assignment=assignment) if config is not None else None
    settings = api.settings(
        assignment=assignment,
        config=course,
        call_timeout=call_timeout,
        total_timeout=total_timeout,
        memory_mb=memory_mb,
        lang=lang,
    )
    assignment = settings.assignment
    assignment.require_reference("gradekit batch")  # a final grade: the reference, never a kit's recorded answers
    from grader.config import ConfigError

    try:  # the course secret: each check graded on held-back examples too (engine._run_variant)
        held_back = course.held_back_seed() if course is not None else None
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if tasks:
        try:
            assignment.require_tasks(tasks)
        except ValueError as exc:
            raise UsageError(f"--tasks: {exc}") from None
    call_timeout, total_timeout = settings.options.call_timeout, settings.options.total_timeout
    memory_mb, lang = settings.options.memory_mb, settings.options.lang
    copy_policy = copy_policy or settings.copy_policy
    output_format = settings.output_format
    if profile not in ("quick", "full"):
        raise UsageError(f"--profile must be 'quick' or 'full', got {profile!r}")
    jobs = int(jobs or os.cpu_count() or 1)
    if jobs < 1:
        raise UsageError(f"-j must be at least 1, got {jobs}")
    tasks = list(tasks) if tasks else None
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o755)  # the judge (root) writes here; an unprivileged worker cannot

    options = {
        "assignment": assignment.package,
        "tasks": tasks,
        "profile": profile,
        "call_timeout": call_timeout,
        "total_timeout": total_timeout,
        "memory_mb": memory_mb,
        "copy_policy": copy_policy,
        "figures": figures,
        "lang": lang,
        "config": course.text if course else None,
        "held_back": held_back,  # the secret may live outside the file: a new one grades everything again
        "grader": grader_fingerprint(assignment),
    }
    salt = json.dumps(options, sort_keys=True)
    # The snapshots: read by this process and the judges (same user) only; each worker gets its own copy.
    scratch = Path(tempfile.mkdtemp(prefix="gradekit-batch-"))
    result = BatchResult(out=out, lang=lang, held_back=held_back is not None)
    try:
        found = sources.discover(src, result.skipped)
        overrides = overrides or (course.overrides if course else None)
        reviews = _load_reviews(overrides, found, lang, result)
        finals = {}

        def publish(record):
            """The student's final record (the review applied), their files rendered from it and their grading."""
            final = reviews_apply(reviews, record, copy_policy, lang)
            if final.get("folder"):
                outputs.publish(out / final["folder"], final, lang=lang, output_format=output_format)
            finals[final["student"]] = final

        todo, known = [], []
        for sub in found:
            sources.prepare(sub, scratch)  # the snapshot: nothing reads sub.source after this
            folder = out / sub.folder
            if sub.path is None:
                known.append(problem_record(sub, lang))
                write_problem(folder, known[-1], display_name(sub.source.name), problem_detail(sub, lang), profile)
                continue
            digest = sources.content_hash(sub.path, salt, sub.refused)
            cached = _read_record(folder / RECORD)
            if not force and cached and cached.get("hash") == digest and _complete(folder):
                known.append(cached)
                result.cached += 1
                continue
            todo.append((sub, digest))
        job = Job(
            assignment=assignment.package,
            tasks=tuple(tasks) if tasks else None,
            profile=profile,
            call_timeout=call_timeout,
            total_timeout=total_timeout,
            memory_mb=memory_mb,
            copy_policy=copy_policy,
            figures=figures,
            lang=lang,
            config=str(Path(config).resolve()) if config else None,
            held_back=held_back,
        )
        from grader.engine import SETS  # a judge's time: each set of examples has the whole budget (api.check)

        deadline_s = total_timeout * (SETS if held_back is not None else 1) + 3 * call_timeout + 300.0
        bar = Progress(len(todo), stream if stream is not None else (sys.stderr if sys.stderr.isatty() else None), lang)
        for record in (pool or _run_pool)(todo, out, job, jobs, deadline_s, lang, bar, result.warnings):
            publish(record)  # as each arrives: a stopped batch leaves the finished students' files
            result.graded += 1
        bar.close()
        for record in known:  # every student, reviewed or not: a review taken out leaves the files too
            publish(record)
        result.records = [finals[k] for k in sorted(finals)]
        similar = _similarity(found, out, assignment, lang)
        from grader.batch import exports, gradebook, summary

        gradebook.write(
            result.records,
            out / "gradebook.csv",
            assignment,
            headings=course.columns if course else None,
            reviews=overrides is not None,
            held_back=held_back is not None,
        )
        summary.write(
            result.records,
            out / "index.html",
            lang=lang,
            similar=[{"members": r["members"], "score": r["top"] / 100, "link": r["href"]} for r in similar],
            skipped=[{"name": s.name, "why": text(f"batch.skipped.{s.why}", lang)} for s in result.skipped],
        )
        exports.write_lms(
            result.records,
            out,
            title=(course.title if course else None) or assignment.title or assignment.name,
            lang=lang,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result.duration_s = round(time.perf_counter() - started, 2)
    return result


def _similarity(found, out, assignment, lang):
    """Compare every submission with every other (``classsim``: fingerprints, not pairwise diffs) and write the
    instructor's ``similarity.html`` and ``similarity.json``; the summary page's rows. Nothing of it goes into a
    student's folder. ``found``'s snapshots must still exist."""
    from grader.batch import classsim

    paths = {s.folder: s.path for s in found if s.path is not None}
    names = {s.folder: s.student for s in found}
    report = classsim.compare_class(sorted(paths.items()), assignment)

    def source(key, file):
        try:
            return (paths[key] / file).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    atomic_write(out / "similarity.json", json.dumps(classsim.to_data(report), ensure_ascii=False, indent=2) + "\n")
    atomic_write(out / "similarity.html", classsim.render(report, names=names, sources_of=source, lang=lang))
    return classsim.summary_rows(report, names, lang)


def _load_reviews(path, found, lang, result):
    """The instructor's reviews (an empty ``Overrides`` without a file); ``UsageError`` for a file that cannot be
    used, before anything is graded; entries naming nobody in the class go to ``result.warnings``."""
    from grader.api import UsageError

    if path is None:
        return overrides_module.Overrides()
    try:
        reviews = overrides_module.load(path, students=[s.student for s in found], lang=lang)
    except overrides_module.OverrideError as exc:
        raise UsageError(str(exc)) from None
    result.warnings += reviews.messages(lang)
    return reviews


def reviews_apply(reviews, record, copy_policy, lang):
    """The record as every output shows it: the judge's, with the instructor's review of that student applied."""
    return overrides_module.apply(record, reviews.for_student(record["student"]), copy_policy=copy_policy, lang=lang)


def _read_record(path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _complete(folder):
    """Whether ``folder`` holds a saved grading (what its files are rendered from)."""
    return all((folder / name).is_file() for name in SAVED)


def problem_detail(sub, lang):
    """Why ``sub`` (a prepared ``sources.Submission`` with nothing to grade) could not be graded, in ``lang``."""
    if not sub.problem_key:
        return sub.problem
    params = dict(sub.problem_params)
    params["what"] = phrase(f"snapshot.kind.{params.get('kind', 'special')}")  # said in the sentence's language
    return text(sub.problem_key, lang, **params)


def problem_record(sub, lang):
    """The record (as in ``<id>/record.json``) of ``sub``, which could not be graded: an error scoring nothing."""
    detail = problem_detail(sub, lang)
    return clean_data(
        {
            "student": sub.student,
            "folder": sub.folder,
            "hash": "",
            "status": "error",
            "reason": text("batch.reason.unpreparable", lang, detail=detail),
            "detail": detail,
            "score": 0.0,
            "max_score": 0.0,
            "raw_score": 0.0,
            "tasks": {},
            "task_max": {},
            "checks": {},
            "diagnoses": [],
            "flags": {},
            "duration_s": 0.0,
        }
    )


def _error_record(sub, detail, lang):
    record = problem_record(sources.Submission(sub.student, sub.source, folder=sub.folder), lang)
    record.update(
        hash="", reason=text("batch.reason.judge", lang, detail=clean_text(detail)), detail=clean_text(detail)
    )
    return record


def write_problem(folder, record, name, detail, profile):
    """Save the grading of a student whose submission could not be graded: ``record``, and a result saying why
    (``name`` could not be imported: ``detail``), which their files are rendered from as any other's."""
    from grader.results import GradeResult

    error = {"kind": "error", "detail": clean_text(detail), "file": "", "line": 0, "code": "", "trace": ""}
    result = GradeResult(
        submission=record["student"],
        score=0.0,
        max_score=0.0,
        seed=None,
        profile=profile,
        duration_s=0.0,
        load_errors={clean_text(name): error},
    )
    save_grading(folder, result, record)


# -- the pool of judges ------------------------------------------------------------------------------
class Judge:
    """One ``python -m grader.batch.judge ASSIGNMENT`` process (``ASSIGNMENT``: the spec its workers load)."""

    def __init__(self, assignment):
        env = dict(os.environ)
        root = str(Path(grader.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env.setdefault("OMP_NUM_THREADS", "1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader.batch.judge", assignment],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self.buf = b""
        self.ready = False

    def send(self, job):
        """Send ``job`` (a ``judge.Job``) as one line of JSON."""
        self.proc.stdin.write((json.dumps(job.to_data()) + "\n").encode())
        self.proc.stdin.flush()

    def receive(self, deadline):
        """The next reply (a dict) before ``deadline`` (monotonic); ``None`` if the judge died or ran late."""
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                text_line = line.decode("utf-8", "replace")
                if text_line.startswith(REPLY_PREFIX):
                    return json.loads(text_line[len(REPLY_PREFIX) :])
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None
                self.buf += chunk

    def stop(self, grace=5.0):
        """SIGTERM (the judge kills its worker on the way out), then SIGKILL its group."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=grace)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.proc.stdout.close()


def _run_pool(todo, out, job, jobs, deadline_s, lang, bar, warnings):
    """Grade ``todo`` with ``jobs`` judges, each submission's job made from ``job`` (the batch's ``judge.Job``);
    yields each record as it finishes (in finishing order). ``warnings`` gets nothing here: whether this machine
    seals the graded code is said by ``gradekit batch`` at the start."""
    pending = queue.Queue()
    for item in todo:
        pending.put(item)
    done = queue.Queue()

    def slot(index):
        judge = None
        try:
            while True:
                try:
                    sub, digest = pending.get_nowait()
                except queue.Empty:
                    return
                if judge is None:
                    judge = Judge(job.assignment)
                    hello = judge.receive(time.monotonic() + JUDGE_START_S)
                    if not hello or not hello.get("ready"):
                        judge.stop()
                        judge = None
                        detail = text("batch.detail.no_start", lang)
                        record = _error_record(sub, detail, lang)
                        write_problem(out / sub.folder, record, sub.student, detail, job.profile)
                        done.put(record)
                        continue
                mine = dataclasses.replace(
                    job.for_submission(sub, digest), path=str(sub.path), out=str(out / sub.folder), slot=index
                )
                started = time.monotonic()
                try:
                    judge.send(mine)
                    record = judge.receive(started + deadline_s)
                except OSError:
                    record = None
                if record is None or "internal_error" in record:
                    detail = (record or {}).get("internal_error") or text(
                        "dask.detail.late", lang, seconds=f"{deadline_s:g}"
                    )
                    judge.stop()
                    judge = None
                    record = _error_record(sub, detail, lang)
                    write_problem(out / sub.folder, record, sub.student, detail, job.profile)
                done.put(record)
        finally:
            if judge is not None:
                judge.stop()

    threads = [threading.Thread(target=slot, args=(i,), daemon=True) for i in range(min(jobs, len(todo)))]
    for t in threads:
        t.start()
    for _ in todo:
        record = done.get()
        bar.step(record)
        yield record
    for t in threads:
        t.join()
