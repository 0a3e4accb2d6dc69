"""The judge: grades one submission at a time, as asked on stdin, and saves that student's grading.

``python -m grader.batch.judge ASSIGNMENT`` is started by the batch (one per parallel slot, kept for many
submissions so torch and the assignment's checks are imported once; ``ASSIGNMENT`` is the spec of the
assignment graded, ``Assignment.package``). It reads one ``Job`` per line (``Job.to_data`` as JSON), grades with
``api.check(sealed=True)`` (the student's code runs in a ``WorkerRunner`` child, never here), compares the code
with the assignment's reference, saves ``<out>/<id>/grading.json`` (the ``GradeResult`` as plain data) and
finally ``record.json`` (``save_grading``: each atomically, a temporary file, then ``os.replace``), and answers
one line ``@@gradekit {record}``. What the student reads (``report.html``, ``results.json``, ``gradescope.json``)
is rendered from the grading by the batch once the instructor's review is known (``grader.batch.outputs``).
Nothing the student's code prints reaches this process's stdout: it goes to the worker's capped log.
"""

import dataclasses
import json
import os
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grader.errors import crash_of
from grader.safetext import clean_data

REPLY_PREFIX = "@@gradekit "
REASON_ENTRIES = 5
"""Refused entries named in a gradebook reason (the report lists them all)."""
CAUSE_CHARS = 160
"""The most characters of one import error in a gradebook reason: enough for a type, a message and where (the
report has the error whole, with its source line and traceback)."""
STATUSES = ("ok", "refused", "timeout", "crashed", "banned-api", "copy", "error")
"""A gradebook row's status, most serious last but ``error`` (grading did not complete). ``refused``: the
submission held links, special files or files over the caps, which were not graded (the rest was)."""
GRADING = "grading.json"
"""A student's grading in the output folder: ``{"result": GradeResult.to_dict()}``, what every output is rendered
from."""
RECORD = "record.json"
"""The judge's record of a student (the gradebook's numbers before any review, and the cache's ``hash``)."""
SAVED = (GRADING, RECORD)
"""The files of a grading, in the order they are written: the record last, so that a student whose record is there
has a grading."""


@dataclass(frozen=True)
class Job:
    """What a judge is asked to do: grade one submission, how, and where to save it.

    The batch makes one with its settings (the submission's fields left empty) and each pool makes a student's job
    from it with ``for_submission``, then says where it is graded (``path``, ``out``, ``slot``; on Dask, the worker
    says ``config`` too, ``dataclasses.replace``). It crosses processes as plain data: ``to_data`` (a JSON line to a
    local judge, a dict shipped to a Dask worker) and ``from_data``."""

    assignment: str
    """The assignment graded, as ``grader.assignment.load`` takes it (``Assignment.package``)."""
    tasks: tuple | None
    """The task ids graded; ``None``: all of the assignment's."""
    profile: str
    """``"quick"`` or ``"full"`` examples."""
    call_timeout: float
    """Seconds one call into the student's code may take."""
    total_timeout: float
    """Seconds all calls into the student's code may take together."""
    memory_mb: int
    """The memory cap (MiB) of the process running the student's code."""
    copy_policy: str
    """What a copy of the reference scores: ``"zero"`` (0) or ``"flag"`` (its points, flagged)."""
    figures: bool
    """Whether the grading gathers the data of the report's pictures (a few more calls into the student's code)."""
    lang: str
    """The language of the grading's texts: the reasons in the record, the marker of cut text."""
    config: str | None
    """The course configuration's file on the machine that grades (``None``: none); read for the points, the
    banned APIs and the checks' visibility."""
    held_back: int | None = None
    """The held-back seed, made of the course secret (``CourseConfig.held_back_seed``): the final grade's examples
    that no student kit holds; ``None``: the default examples only."""
    rerun_lines: bool = True
    """Whether each failing check's rerun line is kept: a batch's name the hand-in on the instructor's machine; the
    course server's students could not run a line naming the server's copy, so theirs are left out."""
    student: str = ""
    """The student's id, as the gradebook shows it."""
    hash: str = ""
    """The digest of the submission's content and the batch's options: the cache's key, kept in the record."""
    source: str | None = None
    """The submission as the batch found it (its folder, notebook or zip): a label the results name (the rerun lines),
    never read."""
    refused: tuple = ()
    """What the snapshot left out (links, special files, files over the caps): ``Refused.to_dict()`` dicts."""
    path: str = ""
    """The snapshot graded, a folder on the machine that grades (regular files only)."""
    out: str = ""
    """The student's output folder there, where the grading is saved."""
    slot: int | None = None
    """The judge's slot on its machine: which worker users its student's code runs as (``sandbox.slot_user``)."""

    def for_submission(self, sub, digest):
        """This batch's job for ``sub`` (a prepared ``sources.Submission``) whose content hashed to ``digest``; where
        it is graded is left to the pool."""
        # What the reports' rerun lines name: the submission as handed in (a folder, a notebook, a zip: gradekit
        # check takes each), never the snapshot, a scratch folder gone when the batch ends.
        source = os.path.abspath(sub.source)
        return dataclasses.replace(
            self, student=sub.student, hash=digest, source=source, refused=tuple(r.to_dict() for r in sub.refused)
        )

    def to_data(self):
        """The job as plain data (JSON's types: lists for tuples)."""
        data = dataclasses.asdict(self)
        data["tasks"] = list(self.tasks) if self.tasks is not None else None
        data["refused"] = [dict(r) for r in self.refused]
        return data

    @classmethod
    def from_data(cls, data):
        """The job ``to_data`` gave; ``ValueError`` for a field this kit does not know (a batch of another
        version)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"a job with fields this judge does not know: {', '.join(unknown)}")
        values = dict(data)
        if values.get("tasks") is not None:
            values["tasks"] = tuple(values["tasks"])
        values["refused"] = tuple(values.get("refused") or ())
        return cls(**values)


def save_grading(folder, result, record):
    """Save a student's grading in ``folder`` (made if missing): ``result`` (a ``GradeResult``) as ``GRADING``, then
    ``record`` (the judge's record) as ``RECORD``; each cleaned (``clean_data``) and written atomically."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # Plain data: what is not JSON's already (none of the kit's results holds such a value) is saved as its text.
    atomic_write(
        folder / GRADING,
        json.dumps({"result": clean_data(result.to_dict())}, ensure_ascii=False, separators=(",", ":"), default=str)
        + "\n",
    )
    atomic_write(folder / RECORD, json.dumps(clean_data(record), ensure_ascii=False, indent=2) + "\n")


def load_grading(folder):
    """The ``GradeResult`` saved in ``folder`` (``save_grading``), or ``None`` when there is none to read."""
    from grader.results import GradeResult

    try:
        data = json.loads((Path(folder) / GRADING).read_text(encoding="utf-8"))
        return GradeResult.from_dict(data["result"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def atomic_write(path, text):
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def problems_of(result, copy, policy="zero"):
    """Every problem of the submission as ``[(status, reason key)]``, most serious first: a copy does not hide a
    banned API or a file that does not import. Empty when all is well."""
    errors = [c.error for t in result.tasks for c in t.checks if c.error]
    kinds = [e.get("kind") for e in errors]
    load = result.load_errors or {}
    kinds += [e.get("kind") for e in load.values() if isinstance(e, dict)]
    found = []
    if copy:
        found.append(("copy", "batch.reason.copy_zeroed" if policy == "zero" else "batch.reason.copy"))
    graded = {t.id for t in result.tasks}
    banned = [f for f in result.banned_api if graded & set(str(f.get("task", "")).split(","))]
    if banned and not result.allow_banned:
        found.append(("banned-api", "batch.reason.banned"))
    if "timeout" in kinds:
        found.append(("timeout", "batch.reason.timeout"))
    if any(crash_of(e) for e in errors):  # the error's kind and data as the engine records them, not its words
        found.append(("crashed", "batch.reason.crashed"))
    if getattr(result, "refused", None):  # before a load error: a refused contract file does not import
        found.append(("refused", "batch.reason.refused"))
    if load:
        found.append(("error", "batch.reason.load_files"))
    return found


def load_causes(load_errors, lang="en"):
    """The files that did not import, each with its error, on one line: ``masks.py, decoding.py: SyntaxError:
    expected ':' (masks.py, line 28)``, so the gradebook says why without opening the report. Files that failed
    on the same error (one imports the other) share it, the file at fault first, so each cause is said once; at
    most ``REASON_ENTRIES`` causes, each cut at ``CAUSE_CHARS``. ``load_errors``: the grading's own
    (``GradeResult.load_errors``, cleaned and bounded by ``api.check``), not a parse of the files."""
    from grader.errors import words
    from grader.messages import text

    groups = {}
    for name, error in sorted((load_errors or {}).items()):
        error = error if isinstance(error, dict) else {"detail": str(error)}
        key = (str(words(error, lang) or error.get("kind") or ""), str(error.get("file") or ""), error.get("line") or 0)
        groups.setdefault(key, []).append(str(name))
    causes = []
    for (detail, where, line), names in sorted(groups.items(), key=lambda g: (g[0][1] or g[1][0], g[1][0])):
        if where and line:
            own = f" ({where}, line {line})"  # a SyntaxError's message ends with where it is: said once, in lang
            detail = detail[: -len(own)] if detail.endswith(own) else detail
        detail = " ".join(detail.split())
        if len(detail) > CAUSE_CHARS:
            detail = detail[: CAUSE_CHARS - 1].rstrip() + "…"
        if where and line:
            detail = text("batch.reason.load_where", lang, error=detail, file=where, line=line)
        files = ", ".join(sorted(names, key=lambda n: (n != where, n)))
        causes.append(text("batch.reason.load_cause", lang, files=files, error=detail))
    if len(causes) > REASON_ENTRIES:
        causes[REASON_ENTRIES:] = [text("batch.reason.load_more", lang, n=len(causes) - REASON_ENTRIES)]
    return " ".join("; ".join(causes).split())  # one line, whatever the file names hold


def status_of(result, copy, policy="zero"):
    """``(status, reason key)`` for the gradebook: the most serious of ``problems_of``, else ``("ok", "")``."""
    found = problems_of(result, copy, policy)
    return found[0] if found else ("ok", "")


def grade(job):
    """Grade ``job`` (a ``Job``), save the student's grading in ``job.out``; the record (a dict)."""
    from grader import api
    from grader.assignment import load
    from grader.batch.similarity import compare
    from grader.messages import text
    from grader.submission.snapshot import Refused, Snapshot, short

    assignment = load(job.assignment)
    config = None
    if job.config:
        from grader.config import CourseConfig

        config = CourseConfig.load(job.config, assignment=assignment)
    lang = job.lang
    out = Path(job.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    from grader.submission.sandbox import slot_user

    # job.path is the batch's snapshot of the submission (regular files only); the original is never read.
    snapshot = Snapshot(root=Path(job.path), refused=[Refused.from_dict(d) for d in job.refused])
    result = api.check(
        path=job.source or job.path,
        assignment=assignment,
        tasks=list(job.tasks) if job.tasks else None,
        profile=job.profile,
        sealed=True,
        config=config,
        call_timeout=job.call_timeout,
        total_timeout=job.total_timeout,
        memory_mb=job.memory_mb,
        figures=job.figures,
        run_as=slot_user(job.slot),
        snapshot=snapshot,
        spin_s=0.0,
        shards=1,
        lang=lang,
        held_back=job.held_back,
    )  # the batch's judges fill the cores: none polls, none forks
    verdict = compare(job.path, assignment)
    copy = verdict.copy
    result.submission = job.student  # not the temporary folder a zip was extracted to
    if not job.rerun_lines:
        for task in result.tasks:
            for c in task.checks:
                c.reproduce = ""
    policy = job.copy_policy
    problems = problems_of(result, copy, policy)
    status = problems[0][0] if problems else "ok"
    zeroed = copy and policy == "zero"
    tasks = {t.id: (0.0 if zeroed else t.score) for t in result.tasks}
    entries = [short(r, lang) for r in result.refused[:REASON_ENTRIES]]
    if len(result.refused) > REASON_ENTRIES:
        entries.append("…")
    causes = load_causes(result.load_errors, lang)
    reasons = [text(key, lang, entries=", ".join(entries), files=causes) for _, key in problems]
    record = {
        "student": job.student,
        "folder": out.name,
        "hash": job.hash,
        "status": status,
        "reason": "; ".join(reasons),
        "problems": [{"status": st, "reason": r} for (st, _), r in zip(problems, reasons)],
        "score": 0.0 if zeroed else result.score,
        "max_score": result.max_score,
        "raw_score": result.score,
        "tasks": tasks,
        "raw_tasks": {t.id: t.score for t in result.tasks},
        "task_max": {t.id: t.max_score for t in result.tasks},
        "checks": {c.id: c.status for t in result.tasks for c in t.checks},
        "held_back": result.held_back,
        "diagnoses": sorted({d.id for t in result.tasks for c in t.checks for d in c.diagnoses if d.kind == "bug"}),
        "flags": {"copy_of_reference": verdict.to_dict()},
        "refused": list(result.refused),
        "load_causes": causes,
        "jailed": result.jailed,
        "duration_s": round(time.perf_counter() - started, 2),
    }
    record = clean_data(record)  # the student id and reason come from outside too
    save_grading(out, result, record)
    return record


def main(argv=None):
    """Answer jobs from stdin until it closes; ``argv``: ``[ASSIGNMENT]`` (default: ``sys.argv[1:]``)."""
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # runs the runners' finalizers: workers die too
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # stray prints of the grader's dependencies must not corrupt the replies
    from grader.assignment import load
    from grader.submission import forkserver

    assignment = load(argv[0] if argv else None)
    # One fork server for every submission this judge grades, importing beside us.
    forkserver.shared(assignment=assignment)
    from grader import engine  # import torch, then the assignment's checks, before saying ready

    engine.checks_of(assignment)

    reply.write(REPLY_PREFIX + json.dumps({"ready": True}) + "\n")
    reply.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        data = json.loads(line)
        try:
            record = grade(Job.from_data(data))
        except Exception as exc:  # noqa: BLE001 - a grader bug: this student's row says so, the batch goes on
            record = {"student": data.get("student"), "internal_error": f"{type(exc).__name__}: {exc}"[:2000]}
        reply.write(REPLY_PREFIX + json.dumps(clean_data(record), ensure_ascii=False) + "\n")
        reply.flush()


if __name__ == "__main__":
    main()
