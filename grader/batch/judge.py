"""The judge: grades one submission at a time, as asked on stdin, and writes that student's files.

``python -m grader.batch.judge ASSIGNMENT`` is started by the batch (one per parallel slot, kept for many
submissions so torch and the assignment's checks are imported once; ``ASSIGNMENT`` is the spec of the
assignment graded, ``Assignment.package``). It reads one JSON job per line, grades with
``api.check(isolated=True)`` (the student's code runs in a ``WorkerRunner`` child, never here),
compares the code with the assignment's reference, writes ``<out>/<id>/results.json``, ``report.html``,
``gradescope.json`` and finally ``record.json`` (each atomically: a temporary file, then
``os.replace``), and answers one line ``@@gradekit {record}``. Nothing the student's code prints
reaches this process's stdout: it goes to the worker's capped log.
"""

import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

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
    kinds = [(c.error or {}).get("kind") for t in result.tasks for c in t.checks]
    details = [(c.error or {}).get("detail", "") for t in result.tasks for c in t.checks]
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
    if "crashed" in kinds or any(d.startswith(("the code called sys.exit", "MemoryError")) for d in details):
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
    from grader.messages import text

    groups = {}
    for name, error in sorted((load_errors or {}).items()):
        error = error if isinstance(error, dict) else {"detail": str(error)}
        key = (str(error.get("detail") or error.get("kind") or ""), str(error.get("file") or ""),
               error.get("line") or 0)
        groups.setdefault(key, []).append(str(name))
    causes = []
    for (detail, where, line), names in sorted(groups.items(), key=lambda g: (g[0][1] or g[1][0], g[1][0])):
        if where and line:
            own = f" ({where}, line {line})"  # a SyntaxError's message ends with where it is: said once, in lang
            detail = detail[:-len(own)] if detail.endswith(own) else detail
        detail = " ".join(detail.split())
        if len(detail) > CAUSE_CHARS:
            detail = detail[:CAUSE_CHARS - 1].rstrip() + "…"
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
    """Grade one job (a dict from the batch); write the student's files; the record (a dict)."""
    from grader import api
    from grader.assignment import load
    from grader.batch.similarity import compare
    from grader.messages import text
    from grader.submission.snapshot import Refused, Snapshot, short
    from grader.views import gradescope, html, json_view

    assignment = load(job.get("assignment"))
    config = None
    if job.get("config"):
        from grader.config import CourseConfig
        config = CourseConfig.load(job["config"], assignment=assignment)
    lang = job.get("lang", "en")
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    from grader.submission.sandbox import slot_user

    # job["path"] is the batch's snapshot of the submission (regular files only); the original is never read.
    snapshot = Snapshot(root=Path(job["path"]), refused=[Refused.from_dict(d) for d in job.get("refused", [])])
    result = api.check(path=job.get("source") or job["path"], assignment=assignment, tasks=job.get("tasks"),
                       profile=job.get("profile", "full"), isolated=True, config=config,
                       call_timeout=job["call_timeout"], total_timeout=job["total_timeout"],
                       memory_mb=job.get("memory_mb"), figures=job.get("figures", False),
                       run_as=slot_user(job.get("slot")), snapshot=snapshot,
                       spin_s=0.0, lang=lang)  # the batch's judges fill the cores: none polls while it waits
    verdict = compare(job["path"], assignment)
    copy = verdict.copy
    result.submission = job["student"]  # not the temporary folder a zip was extracted to
    policy = job.get("copy_policy", "zero")
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
        "student": job["student"], "folder": out.name, "hash": job["hash"], "status": status,
        "reason": "; ".join(reasons),
        "problems": [{"status": st, "reason": r} for (st, _), r in zip(problems, reasons)],
        "score": 0.0 if zeroed else result.score, "max_score": result.max_score,
        "raw_score": result.score, "tasks": tasks,
        "raw_tasks": {t.id: t.score for t in result.tasks}, "task_max": {t.id: t.max_score for t in result.tasks},
        "checks": {c.id: c.status for t in result.tasks for c in t.checks},
        "diagnoses": sorted({d.id for t in result.tasks for c in t.checks for d in c.diagnoses if d.kind == "bug"}),
        "flags": {"copy_of_reference": verdict.to_dict()},
        "refused": list(result.refused),
        "load_causes": causes,
        "sealed": result.sealed,
        "duration_s": round(time.perf_counter() - started, 2),
    }
    data = json_view.to_data(result, lang=lang)
    data.update(student=job["student"], status=status, reason=record["reason"], flags=record["flags"],
                gradebook_score=record["score"])
    data, record = clean_data(data), clean_data(record)  # the student id and reason come from outside too
    atomic_write(out / "results.json", json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    atomic_write(out / "report.html", html.render(result, lang=lang))
    atomic_write(out / "gradescope.json", gradescope.render(result, lang=lang,
                                                            output_format=job.get("output_format", "md")))
    atomic_write(out / "record.json", json.dumps(record, ensure_ascii=False, indent=2) + "\n")
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
        job = json.loads(line)
        try:
            record = grade(job)
        except Exception as exc:  # noqa: BLE001 - a grader bug: this student's row says so, the batch goes on
            record = {"student": job.get("student"), "internal_error": f"{type(exc).__name__}: {exc}"[:2000]}
        reply.write(REPLY_PREFIX + json.dumps(clean_data(record), ensure_ascii=False) + "\n")
        reply.flush()


if __name__ == "__main__":
    main()
