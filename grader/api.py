"""The keyword-only API under the CLI: ``check(*, path, assignment=None, options=None, **options)`` grades one
submission of an assignment."""

import functools
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from grader import engine, shards
from grader.assignment import AssignmentError, command_option, load
from grader.checks.base import without_local_constants
from grader.errors import SubmissionError, UsageError  # noqa: F401 - api.UsageError, as callers name it
from grader.options import CheckOptions, Settings, resolved
from grader.safetext import bound_result, clean_result
from grader.submission import ipynb, refcache, replay
from grader.submission.bank import BankRunner, NotInBank
from grader.submission.banned import scan
from grader.submission.inprocess import InProcessRunner, loopback_parts, reference_namespace
from grader.submission.refcache import CachedRunner
from grader.submission.snapshot import Snapshot, has_code, unwrap

if TYPE_CHECKING:
    from grader.submission.worker import WorkerRunner


def resolve_assignment(spec):
    """``grader.assignment.load(spec)``, its errors as ``UsageError``."""
    try:
        return load(spec)
    except AssignmentError as exc:
        raise UsageError(str(exc)) from None


def settings(*, assignment=None, options=None, **overrides):
    """The ``Settings`` of one grading: the assignment (``assignment``, else the course configuration's, else
    ``grader.assignment.DEFAULT``) and ``options`` with ``overrides``, each setting not given taken from the
    course configuration (``config``), else from its declared default (``grader.options.DEFAULTS``). Every door
    resolves what it was told through here, and ``check`` resolves again (a no-op on resolved options)."""
    o = CheckOptions.of(options, **overrides)
    a = resolve_assignment(assignment if assignment is not None else getattr(o.config, "assignment", None))
    return Settings(a, resolved(o, a))


def validate_path(path, assignment=None):
    """The submission folder as a ``Path``; ``UsageError`` saying what is wrong otherwise."""
    files = ", ".join(resolve_assignment(assignment).contract_files)
    p = Path(path)
    try:
        p.is_dir()
    except (OSError, ValueError) as exc:  # a NUL in the name, a name too long...
        raise UsageError(
            f"submission path {str(path)!r} cannot be used ({exc}); expected a folder holding {files}"
        ) from None
    if not p.exists():
        raise UsageError(f"submission path {str(path)!r} does not exist; expected a folder holding {files}")
    if p.is_file() and p.suffix.lower() in (".ipynb", ".zip"):
        return p.resolve()  # a notebook (its cells become the contract's modules) or a zip, taken in as a batch does
    if not p.is_dir():
        raise UsageError(
            f"submission path {str(path)!r} is a file; expected a folder holding {files} (or a notebook, .ipynb, "
            f"or a .zip of the folder)"
        )
    return unwrap(p.resolve())


def reproduce_command(path, spec, *, seed=None, sealed=False, assignment=None, command="gradekit", options=()):
    """The one-line command that reruns exactly one check: ``command`` (how the user runs gradekit, already quoted
    for a shell: ``gradekit``, ``scripts/gradekit``, ``.venv/bin/python -m grader``), the submission's ``path``
    as it was given, ``--only`` the check, then ``options`` (the other options that were typed, e.g. ``--profile
    quick --lang zh``) and those that change what is run (assignment, seed, ``--sealed``)."""
    parts = ["check", str(path), "--only", spec.id, *options]
    parts += command_option(assignment)
    if seed is not None:
        parts += ["--seed", str(seed)]
    if sealed:
        parts.append("--sealed")
    return " ".join([command, *(shlex.quote(str(p)) for p in parts)])


def _kit_bank(a, o):
    """The answer bank of the student kit ``a`` is graded in: ``UsageError`` (said in ``o.lang``) where the kit has
    none, or holds no answers for ``o.profile``."""
    from grader.assignment import KitError
    from grader.messages import text
    from grader.submission.bank import Bank

    if a.kit_bank is None:
        raise UsageError(KitError("kit.needs_reference", door="gradekit check").say(o.lang))
    try:
        bank = Bank.load(a.kit_bank)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{a.kit_bank}: {exc}") from None
    recorded = [str(p) for p in bank.meta.get("profiles") or ()]
    if recorded and o.profile not in recorded:
        raise UsageError(
            text("kit.profile_not_recorded", o.lang, recorded=", ".join(recorded), profile=o.profile, first=recorded[0])
        )
    return bank


def check(
    *,
    path,
    assignment=None,
    options=None,
    reference_cache=None,
    prints=None,
    parts_log=None,
    isolate_as=None,
    **overrides,
):
    """Grade the submission at ``path`` against ``assignment``; returns a ``GradeResult``.

    Args:
        path: folder with the assignment's contract files.
        assignment: an ``Assignment``, a spec for ``grader.assignment.load`` (a built-in name, an import path, a
            folder), or ``None``: the course configuration's, else ``grader.assignment.DEFAULT``.
        options: a ``CheckOptions`` (default: its defaults); ``overrides`` set single fields of it
            (``profile="quick"``, ``sealed=True``, ...: see ``CheckOptions`` for each).
        reference_cache: a ``refcache.ReferenceCache`` every answer of the reference goes through (an answer bank
            is recorded so: ``submission.bank.record``); only for code the grader's owner trusts, since in process
            the submission runs beside it.
        prints: a ``grader.bugs.prints.Prints`` that keeps the fingerprint of every answer a catalogued mutant
            gives while this grading diagnoses (a student kit's bank is recorded so: ``kit.record``).
        parts_log: a ``submission.replay.Log`` that records the reference's parts (functions and classes) as the
            reference's own composites call them: every check of a task built on others runs over them
            (``kit.record``).
        isolate_as: with ``parts_log``, ``{task: task beneath}``: the checks of such a task run over the recorded
            parts of the other's isolated variant instead of their own (a task with no code of its own over the
            parts a kit mends it with: ``engine._replayed_whole``).

    The submission is read through a snapshot made once (``submission.snapshot.safe_copy``): regular files only;
    links, special files, files over the caps and names that are not UTF-8 are refused and listed in
    ``result.refused``. Sealed, the worker gets the snapshot and nothing reads ``path`` again. In process
    (a student's own check, where the code runs as the student anyway) the code is imported from ``path``
    itself when the snapshot refused nothing, so that tracebacks and ``breakpoint()`` show the student's own
    files; with anything refused it runs from the snapshot, as it would be graded. Every string in the result
    that came from the submission is cleaned (``safetext.clean_result``): valid UTF-8, no control characters;
    and the submission's text in it is bounded (``safetext.bound_result``, its marker in ``options.lang``): a
    report is feedback, not a way to carry data out.
    """
    resolved_settings = settings(assignment=assignment, options=options, **overrides)
    a, o = resolved_settings.assignment, resolved_settings.options
    bank = None
    if o.bank is not None:
        from grader.submission.bank import Bank

        try:
            bank = Bank.load(o.bank)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--bank {str(o.bank)!r}: {exc}; expected a file made by 'gradekit bank build'") from None
    elif not a.has_reference:  # a student kit (``grader.kit``): its answers, recorded, stand for the reference
        bank = _kit_bank(a, o)
    config = o.config
    snapshot = o.snapshot
    root = validate_path(path, a) if snapshot is None else Path(path)
    if o.profile not in ("quick", "full"):
        raise UsageError(f"--profile must be 'quick' or 'full', got {o.profile!r}")
    unknown = [x for x in o.only or () if x not in a.task_ids and x not in {s.id for s in engine.checks_of(a)}]
    if unknown:
        raise UsageError(
            f"--only {unknown[0]!r} is neither a check id (e.g. {engine.checks_of(a)[0].id}) nor a task "
            f"id ({', '.join(a.task_ids)}) of assignment {a.name!r}"
        )
    tasks = tuple(o.tasks) if o.tasks else None
    if tasks is None and bank is not None and o.bank is None and bank.meta.get("tasks"):
        tasks = tuple(bank.meta["tasks"])  # a student kit built for some tasks grades those
    if tasks:
        try:
            a.require_tasks(tasks)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    banned = o.banned
    sealed = o.sealed
    made = None
    if snapshot is None:
        from grader.submission.intake import IntakeError, take_in

        made = Path(tempfile.mkdtemp(prefix="gradekit-check-"))
        try:
            snapshot = take_in(root, made / "submission")
        except IntakeError as exc:
            shutil.rmtree(made, ignore_errors=True)
            raise UsageError(
                f"submission path {str(path)!r} cannot be taken in ({exc}); expected a folder holding "
                f"{', '.join(a.contract_files)} (or a notebook, .ipynb, or a .zip of the folder)"
            ) from None
    if not has_code(snapshot.root):
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise UsageError(
            f"submission path {str(path)!r} is an empty submission: it holds no .py file; expected a "
            f"folder holding {', '.join(a.contract_files)}"
        )
    cellmap = None
    notebook_file = ipynb.notebook_in(snapshot.root, a)
    if notebook_file is not None:  # its definitions, written as the contract's modules; results point at cells
        made = made or Path(tempfile.mkdtemp(prefix="gradekit-check-"))
        try:
            cellmap = ipynb.convert(notebook_file, made / "notebook", a)
        except (ipynb.NotebookError, ImportError) as exc:
            shutil.rmtree(made, ignore_errors=True)
            detail = (
                str(exc)
                if isinstance(exc, ipynb.NotebookError)
                else ("grading a notebook needs the nbformat package: pip install nbformat")
            )
            raise UsageError(f"submission path {str(path)!r}: {detail}") from None
        snapshot = Snapshot(root=made / "notebook", refused=snapshot.refused)
    own = made is not None and cellmap is None and root.is_dir()  # a snapshot of the student's own folder, made here
    graded = root if own and not sealed and not snapshot.refused else snapshot.root
    # The tensors graded are tiny: a second thread only adds synchronisation (10x slower under load).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    ref: InProcessRunner | CachedRunner | BankRunner
    if bank is not None:  # a kit without the reference: its answers, recorded
        ref = BankRunner(bank, a)
    else:
        reference = reference_namespace(a)
        ref = InProcessRunner(reference.root, assignment=a, banned=(), namespace=reference)
        if reference_cache is not None:
            ref = CachedRunner(ref, reference_cache, records=True)
        elif sealed:  # no submission code runs in this process: the reference's answers are shared between gradings
            ref = CachedRunner(ref, refcache.shared(a))
    sub: InProcessRunner | WorkerRunner
    judges = 1
    recorded = None
    isolate: frozenset = frozenset()
    held_back = o.held_back if bank is None else None
    # total_timeout is each set of examples' budget: held-back examples call the submission again as often
    total_timeout = o.total_timeout * (engine.SETS if held_back is not None else 1)
    if sealed:
        from grader.submission import worker  # the worker's machinery only where it is used

        sub = worker.WorkerRunner(
            graded,
            assignment=a,
            banned=banned,
            call_timeout=o.call_timeout,
            total_timeout=total_timeout,
            memory_mb=o.memory_mb,
            run_as=o.run_as,
            spin=o.spin_s,
        )
        judges = shards.wanted(sub, o.shards)
        if judges > 1 and o.spin_s is None:  # two judges and their workers share the cores: none polls
            sub.spin = 0.0
    else:
        parts = functools.partial(loopback_parts, a) if o.stand_ins else None
        if parts_log is not None:
            parts = functools.partial(replay.recording_parts, a, parts_log)
            isolate = frozenset(replay.replayable_tasks(a))
        elif bank is not None:  # a kit: the reference's parts, as its record answers them
            recorded = replay.Replay.of_bank(bank, a)
            parts = recorded.parts if recorded is not None else None
        sub = InProcessRunner(
            graded,
            assignment=a,
            banned=banned,
            call_timeout=o.call_timeout,
            total_timeout=total_timeout,
            parts=parts,
        )
    try:
        try:
            load_errors = sub.run("load_report")
        except SubmissionError as err:  # the worker itself crashed or timed out while importing
            load_errors = {"*": err.to_dict()}
        if tasks:  # a file no selected task uses, nor any task beneath one, is none of this grading's business
            used = {a.task_by_id[d].file for t in tasks for d in (t, *a.all_deps(t))}
            load_errors = {f: e for f, e in load_errors.items() if f in used or f not in a.contract_files}
        findings = scan(snapshot.root, a, banned)
        diagnoser = None
        if o.diagnose and bank is None and prints is not None:
            from grader.bugs.prints import Recorder

            diagnoser = Recorder(a, ref, prints)
        elif o.diagnose and bank is None:
            from grader.bugs.diagnose import make_diagnoser

            diagnoser = make_diagnoser(a, ref=ref)
        elif o.diagnose and bank is not None and bank.prints is not None:  # a kit: mutants' answers, fingerprinted
            from grader.bugs.prints import make_bank_diagnoser

            diagnoser = make_bank_diagnoser(a, ref=ref, prints=bank.prints)
        devices = engine.available_devices(o.device)
        # A worker says on which devices it can compute (a jail may hide the machine's GPU): only those are graded.
        unusable = [d for d in devices if d not in getattr(sub, "devices", devices)]
        devices = [d for d in devices if d not in unusable] or ["cpu"]
        g = engine.Grading(
            a,
            sub,
            ref,
            profile=o.profile,
            seed=o.seed,
            held_back=held_back,
            devices=devices,
            shards=judges,
            banked=bank is not None,
            replay=recorded,
            isolate=isolate,
            isolate_as=dict(isolate_as or {}),
            recording=parts_log,
            reproduce=lambda spec: reproduce_command(
                path, spec, seed=o.seed, sealed=sealed, assignment=a, command=o.command, options=o.rerun_options
            ),
        )
        # Every grading draws examples that do not depend on the modules loaded: the same in process, sealed, from
        # a clone, in an installed student kit and with its answer bank, and never steered by a submission's source.
        with without_local_constants():
            result = engine.grade(
                g,
                path=root,
                tasks=tasks,
                only=o.only,
                config=config,
                banned_findings=findings,
                allow_banned=o.allow_banned,
                load_errors=load_errors,
                sealed=sealed,
                progress=o.progress,
                diagnose=diagnoser,
                runtime_findings=sub.banned_runtime,
            )
        if diagnoser is not None:
            diagnoser.close()
        result.output_dropped = getattr(sub, "output_dropped", 0)
        if unusable:
            result.environment["devices_unusable"] = unusable
        result.jailed = bool(sealed and getattr(sub, "jail", False))
        result.banked = bank is not None
        collect = a.function(a.figures) if o.figures else None
        if collect is not None:  # the pictures are probe results too: drawn from what the runners return
            try:
                result.figures = collect(sub=sub, ref=ref)
            except NotInBank:  # drawn on questions the bank does not hold: no pictures
                pass
        result.refused = snapshot.refused_dicts
        result.settings = {"limits": resolved_settings.limits, "lang": o.lang, "banned": list(banned)}
        if cellmap is not None:
            ipynb.relocate(result, cellmap)
        return bound_result(clean_result(result), lang=o.lang)
    finally:
        sub.close()
        ref.close()
        torch.set_num_threads(threads)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
