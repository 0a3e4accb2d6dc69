"""The keyword-only API under the CLI: ``check(*, path, ...)`` grades one submission."""

import shlex
import shutil
import tempfile
from pathlib import Path

import torch

from grader import engine
from grader.submission.banned import DEFAULT_BANNED, scan
from grader.safetext import clean_result
from grader.submission.errors import SubmissionError
from grader.submission.snapshot import safe_copy
from grader.submission.runner import InProcessRunner, reference_namespace
from grader.tasks import CONTRACT_FILES, TASK_IDS


class UsageError(ValueError):
    """Bad arguments: the CLI prints the message and exits with status 2."""


def validate_path(path):
    """The submission folder as a ``Path``; ``UsageError`` saying what is wrong otherwise."""
    p = Path(path)
    try:
        p.is_dir()
    except (OSError, ValueError) as exc:  # a NUL in the name, a name too long...
        raise UsageError(f"submission path {str(path)!r} cannot be used ({exc}); expected a folder holding "
                         f"{', '.join(CONTRACT_FILES)}") from None
    if not p.exists():
        raise UsageError(f"submission path {str(path)!r} does not exist; expected a folder holding "
                         f"{', '.join(CONTRACT_FILES)}")
    if not p.is_dir():
        raise UsageError(f"submission path {str(path)!r} is a file; expected a folder holding "
                         f"{', '.join(CONTRACT_FILES)}")
    return p.resolve()


def reproduce_command(path, spec, *, seed=None, isolated=False):
    """The one-line command that reruns exactly one check."""
    parts = ["gradekit", "check", str(path), "--only", spec.id]
    if seed is not None:
        parts += ["--seed", str(seed)]
    if isolated:
        parts.append("--isolated")
    return " ".join(shlex.quote(p) for p in parts)


def check(*, path, tasks=None, profile="full", seed=None, device=None, only=None, isolated=False,
          allow_banned=False, banned=DEFAULT_BANNED, config=None, progress=None, diagnose=True,
          call_timeout=60.0, total_timeout=900.0, memory_mb=None, figures=False, run_as="auto", snapshot=None):
    """Grade the submission at ``path``; returns a ``GradeResult``.

    Args:
        path: folder with the contract's files.
        tasks: task ids to grade (default: all).
        profile: ``"quick"`` (fewer examples) or ``"full"``.
        seed: ``None`` for the same examples every run, else a Hypothesis seed.
        device: grade on this device only (default: cpu plus any GPU found).
        only: check ids to run (``"mha.equivalence"``).
        isolated: run student code in a worker process with time limits.
        allow_banned: do not withhold points for banned APIs.
        banned: the banned API names.
        config: a course configuration (``grader.config.CourseConfig``) or ``None``.
        progress: ``progress(i, n, spec)`` callback.
        diagnose: replay failures through the known-bug catalogue.
        call_timeout, total_timeout: with ``isolated``, seconds per probe call and for the whole run.
        memory_mb: with ``isolated``, the worker's memory cap in MiB (``None``: the worker's default).
        figures: also gather the data for the HTML report's pictures (``result.figures``).
        run_as: with ``isolated``, the worker's user (see ``WorkerRunner``; a batch judge gives each slot its own).
        snapshot: a ``submission.snapshot.Snapshot`` already made of the submission (the batch makes one per
            submission): graded as it is, and ``path`` only names the submission in the results.

    The submission is read through a snapshot made once (``submission.snapshot.safe_copy``): regular files only;
    links, special files, files over the caps and names that are not UTF-8 are refused and listed in
    ``result.refused``. Isolated, the worker gets the snapshot and nothing reads ``path`` again. In process
    (a student's own check, where the code runs as the student anyway) the code is imported from ``path``
    itself when the snapshot refused nothing, so that tracebacks and ``breakpoint()`` show the student's own
    files; with anything refused it runs from the snapshot, as it would be graded. Every string in the result
    that came from the submission is cleaned (``safetext.clean_result``): valid UTF-8, no control characters.
    """
    root = validate_path(path) if snapshot is None else Path(path)
    if profile not in ("quick", "full"):
        raise UsageError(f"--profile must be 'quick' or 'full', got {profile!r}")
    tasks = tuple(tasks) if tasks else None
    if tasks:
        unknown = [t for t in tasks if t not in TASK_IDS]
        if unknown:
            raise UsageError(f"unknown task id(s) {', '.join(unknown)}; expected some of: {', '.join(TASK_IDS)}")
    if config is not None:
        banned = config.banned or banned
    made = None
    if snapshot is None:
        made = Path(tempfile.mkdtemp(prefix="gradekit-check-"))
        try:
            snapshot = safe_copy(root, made / "submission")
        except OSError as exc:
            shutil.rmtree(made, ignore_errors=True)
            raise UsageError(f"submission path {str(path)!r} cannot be read ({exc}); expected a folder holding "
                             f"{', '.join(CONTRACT_FILES)}") from None
    graded = root if made is not None and not isolated and not snapshot.refused else snapshot.root
    # The tensors graded are tiny: a second thread only adds synchronisation (10x slower under load).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    reference = reference_namespace()
    ref = InProcessRunner(reference.root, banned=(), namespace=reference)
    if isolated:
        from grader.submission.worker import WorkerRunner
        sub = WorkerRunner(graded, banned=banned, call_timeout=call_timeout, total_timeout=total_timeout,
                           memory_mb=memory_mb, run_as=run_as)
    else:
        sub = InProcessRunner(graded, banned=banned)
    try:
        try:
            load_errors = sub.run("load_report")
        except SubmissionError as err:  # the worker itself crashed or timed out while importing
            load_errors = {"*": err.to_dict()}
        findings = scan(snapshot.root, banned)
        diagnoser = None
        if diagnose:
            from grader.bugs.diagnose import make_diagnoser
            diagnoser = make_diagnoser(ref=ref)
        result = engine.grade(
            path=root, sub=sub, ref=ref, tasks=tasks, profile=profile, seed=seed, devices=device, only=only,
            config=config, banned_findings=findings, allow_banned=allow_banned, load_errors=load_errors,
            isolated=isolated, progress=progress,
            reproduce=lambda spec: reproduce_command(path, spec, seed=seed, isolated=isolated),
            diagnose=diagnoser, runtime_findings=sub.banned_runtime,
        )
        if diagnoser is not None:
            diagnoser.close()
        result.output_dropped = getattr(sub, "output_dropped", 0)
        if figures:
            from grader.views.figures import collect
            result.figures = collect(sub=sub, ref=ref)
        result.refused = snapshot.refused_dicts
        return clean_result(result)
    finally:
        sub.close()
        ref.close()
        torch.set_num_threads(threads)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
