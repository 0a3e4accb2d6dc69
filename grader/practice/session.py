"""The keyword-only engine under ``gradekit practice``: start a drill, check it, give hints, read the history.

Every function returns plain data (dataclasses) and raises ``PracticeError`` (a message key and its
parameters) for anything the user should fix; ``render`` and ``cli`` turn both into text. A drill is one
of an assignment's (``assignment``: an ``Assignment``, a spec for ``grader.assignment.load``, or ``None``
for the default); a workspace remembers its assignment, so checks and hints need only the folder.
"""

import random
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.assignment import AssignmentError, load
from grader.practice import drills, workspace
from grader.practice.history import History, data_dir, recorded_as

HINT_LEVELS = 2
"""Level 1: the shape flow. Level 2: the key operation. There is no level that gives the answer."""


class PracticeError(Exception):
    """Something the user should fix: a ``practice.*`` message key and its parameters."""

    def __init__(self, key, **params):
        super().__init__(key)
        self.key = key
        self.params = params


@dataclass
class Started:
    """A new drill workspace."""

    drill: drills.Drill
    """The drill."""
    root: Path
    """The workspace folder."""
    state: workspace.State
    """Its state, as written."""
    files: list
    """The files holding stubs."""
    texts: list
    """``workspace.TaskText`` of each drilled name."""


@dataclass
class Checked:
    """One ``--check``: the grade and what it did to the attempt."""

    root: Path
    """The workspace folder."""
    state: workspace.State
    """The state after the check."""
    result: object
    """The ``GradeResult``."""
    elapsed: float
    """Seconds from the start to this check (to the first passing check once passed)."""
    time_up: bool
    """The time limit has passed."""
    withheld: bool
    """Diagnoses were withheld (no-hints mode, time not up)."""
    attempt: object = None
    """The ``history.Attempt`` as recorded (``None`` when the attempt had already passed)."""
    new_best: bool = False
    """This pass is the fastest passed attempt of the drill."""
    previous_best: float = None
    """The best time before this one, seconds (``None`` when there was none)."""
    already_passed: bool = False
    """The attempt had passed at an earlier check; nothing new was recorded."""
    partial: bool = False
    """Only some checks ran (``only``): a rerun, not recorded."""
    chosen: bool = False
    """No folder was named and the current one is not a workspace: this is the one started last."""


@dataclass
class Hint:
    """What ``--hint`` shows."""

    task: str
    """The task id the hint is about."""
    level: int
    """The level shown now (0 when nothing was shown)."""
    key: str = ""
    """The message key of the hint (empty when nothing was shown)."""
    exhausted: bool = False
    """Every level of this task had been shown already."""
    others: list = field(default_factory=list)
    """Other drilled tasks that still have hints."""
    state: workspace.State = None
    """The drill's state after the hint."""
    root: Path = None
    """The workspace folder."""
    chosen: bool = False
    """No folder was named and the current one is not a workspace: this is the one started last."""


@dataclass
class Past:
    """What ``--history`` shows."""

    attempts: list
    """Every ``history.Attempt``, oldest first."""
    bests: dict
    """``(assignment, drill id)`` -> its fastest passed ``Attempt``."""
    quizzes: list
    """Every ``history.Quiz``, oldest first."""
    topics: dict
    """Quiz topic -> ``(right, asked)`` over every quiz, the weakest first."""


def _now(now):
    return time.time() if now is None else now


def list_drills(*, assignment=None):
    """The assignment's drills, in the order the list shows them."""
    return drills.of(load(assignment))


def resolve_drill(drill_id, *, assignment=None):
    a = load(assignment)
    try:
        return drills.get(a, drill_id)
    except KeyError:
        raise PracticeError(
            "practice.error.unknown_drill", drill=drill_id, drills=", ".join(d.id for d in drills.of(a))
        ) from None


def pick_random(seed=None, *, assignment=None):
    """A random drill of the assignment (``seed`` makes the choice repeatable)."""
    return random.Random(seed).choice(list_drills(assignment=assignment))


def default_dir(drill_id, now=None):
    """A new workspace's folder: ``practice/<drill>-<date>-<time>`` in the user's data folder (``GRADEKIT_HOME``,
    see ``history``), not the current folder: a workspace made inside a clone would show up in its ``git
    status``. The first free name (``-2``, ``-3``... after it when two start in the same second)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(_now(now)))
    base = data_dir() / "practice" / f"{drill_id}-{stamp}"
    root, n = base, 1
    while root.exists():
        n += 1
        root = base.with_name(f"{base.name}-{n}")
    return root


def start(*, drill, assignment=None, minutes=None, dest=None, no_hints=False, lang="en", now=None, history_path=None):
    """Build the workspace of ``drill`` (an id of the assignment's) in ``dest`` (default: ``default_dir``), start its
    clock and record the attempt; returns ``Started``."""
    a = load(assignment)
    d = resolve_drill(drill, assignment=a)
    a.require_reference("gradekit practice")  # a drill's workspace is the reference with the drilled names as stubs
    if minutes is None:
        minutes = d.minutes
    if not minutes > 0:
        raise PracticeError("practice.error.minutes", minutes=minutes)
    now = _now(now)
    root = Path(dest) if dest else default_dir(d.id, now)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise PracticeError("practice.error.not_empty", path=str(root))
    files = workspace.build(root, d.tasks, a, lang=lang, hints=not no_hints)
    (root / workspace.IGNORE_FILE).write_text(workspace.IGNORE_TEXT, encoding="utf-8")
    root = root.resolve()
    state = workspace.State(
        drill=d.id,
        tasks=list(d.tasks),
        started=now,
        minutes=minutes,
        assignment=a.package,
        no_hints=bool(no_hints),
        lang=lang,
    )
    with History(history_path) as history:  # recorded now, so that an attempt never checked is still seen
        state.attempt_id = history.record(
            assignment=a.package,
            drill=d.id,
            tasks=d.tasks,
            workspace=root,
            started=now,
            finished=now,
            limit_s=state.limit_s,
            passed=False,
            score=0,
            max_score=0,
            hints=0,
            no_hints=state.no_hints,
            profile="quick",
            checked=False,
        )
    workspace.write_state(root, state)
    return Started(d, root, state, files, workspace.task_texts(d.tasks, a, lang=lang, hints=not no_hints))


def open_workspace(path=None, *, history_path=None):
    """``(folder, State, chosen)`` of a workspace: ``path`` or the current folder or one above it; with neither
    (``path`` ``None``, the current folder in no workspace), the workspace started last (``chosen``)."""
    root = workspace.find_workspace(path or Path.cwd())
    chosen = False
    if root is None and path is None:
        with History(history_path) as history:
            root = next((w for w in history.workspaces() if (w / workspace.STATE_FILE).is_file()), None)
        if root is None:
            raise PracticeError("practice.error.no_workspace_yet", path=str(Path.cwd().resolve()))
        chosen = True
    if root is None:
        raise PracticeError("practice.error.no_workspace", path=str(Path(path).resolve()))
    try:
        return root, workspace.read_state(root), chosen
    except (ValueError, TypeError) as exc:
        raise PracticeError(
            "practice.error.bad_state", path=str(root / workspace.STATE_FILE), detail=str(exc)
        ) from None


def command_line(command, *parts):
    """A command for the user to run: ``command`` (how they run gradekit, already quoted for a shell:
    ``grader.cli.invoked_as``, as ``check``'s rerun lines begin) and ``parts``, each quoted."""
    return " ".join([command, *(shlex.quote(str(p)) for p in parts)])


def replay_line(replay, *, command="gradekit", lang=None):
    """The command that asks a quiz's questions again: its ``replay_args`` (a history written before kept them after
    a bare ``gradekit``) after ``command``, how the user runs gradekit (``session.command_line``), and ``--lang``."""
    try:
        words = shlex.split(replay)
    except ValueError:
        words = replay.split()
    if words[:1] == ["gradekit"]:
        words = words[1:]
    return command_line(command, *words, *(["--lang", lang] if lang else []))


def spelled_lang(lang, drill_lang="en"):
    """The ``--lang`` a printed command carries (``None``: none): the language shown, unless it is English and
    English is what the command gives anyway (``drill_lang``: a workspace's commands default to its drill's)."""
    shown = lang or drill_lang or "en"
    return shown if shown != "en" or shown != (drill_lang or "en") else None


def commands(command="gradekit", *, lang=None, assignment=None, root=None, cwd=None):
    """The commands the practice and quiz texts name (``{practice}``, ``{check}``... in their messages), written to
    run as printed and to show the same again: ``command_line`` with ``--lang lang`` (``spelled_lang``), the
    ``assignment`` as the user gave it, and ``--dir`` of the workspace ``root`` unless run from inside it.
    ``practice`` and ``quiz`` are the start of a command (a drill id may follow); ``hint`` ends with ``--hint``,
    so that a task id may follow."""
    langs = ["--lang", lang] if lang else []
    chosen = ["--assignment", assignment] if assignment else []
    where = _dir_option(Path(root).resolve(), cwd) if root is not None else []
    return {
        "practice": command_line(command, "practice", *langs, *chosen),
        "quiz": command_line(command, "quiz", *langs, *chosen),
        "check": command_line(command, "practice", "--check", *where, *langs),
        "hint": command_line(command, "practice", *where, *langs, "--hint"),
        "history": command_line(command, "practice", "--history", *langs),
    }


def _dir_option(root, cwd=None):
    """``--dir root`` where a command run from ``cwd`` (default: the current folder) would not find the workspace
    ``root`` by itself: anywhere outside it."""
    here = Path(cwd or Path.cwd()).resolve()
    return [] if here == root or root in here.parents else ["--dir", str(root)]


def rerun_command(root, check_id, *, profile="quick", lang=None, cwd=None, command="gradekit"):
    """The command that grades one check of the workspace ``root`` again, as ``gradekit practice --check`` does
    (so that in no-hints mode the diagnosis stays withheld): ``command`` (how the user runs gradekit, shell-quoted:
    ``grader.cli.invoked_as``), ``--dir`` unless run from inside ``root``, ``--profile`` when it is not the drill's
    default and ``--lang lang`` (``spelled_lang``)."""
    parts = ["practice", "--check", "--only", check_id, *_dir_option(root, cwd)]
    if profile != "quick":
        parts += ["--profile", profile]
    if lang:
        parts += ["--lang", lang]
    return command_line(command, *parts)


def check(
    *, path=None, profile="quick", only=None, lang=None, now=None, history_path=None, progress=None, command="gradekit"
):
    """Grade the drill's tasks in the workspace and record the attempt; returns ``Checked``. ``only``: grade just
    these check ids (a rerun: nothing is recorded). ``lang``: the language the user asked for, if any (each
    failing check's rerun command carries the language shown: ``spelled_lang``). ``command``: how the user runs
    gradekit (``rerun_command``)."""
    root, state, chosen = open_workspace(path, history_path=history_path)
    if only:
        from grader.engine import select_checks

        known = [s.id for s in select_checks(load(state.assignment), tasks=state.tasks, profile=profile)]
        unknown = [c for c in only if c not in known]
        if unknown:
            raise PracticeError("practice.error.only", checks=", ".join(unknown), known=", ".join(known))
    now = _now(now)
    elapsed = now - state.started
    time_up = elapsed >= state.limit_s
    withheld = state.no_hints and not time_up
    from grader import api  # here, not above: every gradekit command imports this module for its parser

    result = api.check(
        path=root,
        assignment=state.assignment,
        tasks=state.tasks,
        profile=profile,
        only=tuple(only) if only else None,
        diagnose=not withheld,
        progress=progress,
        lang=lang or state.lang,
    )
    rerun_lang = spelled_lang(lang, state.lang)
    for task in result.tasks:
        for c in task.checks:
            if c.reproduce:
                c.reproduce = rerun_command(root, c.id, profile=profile, lang=rerun_lang, command=command)
    out = Checked(
        root=root,
        state=state,
        result=result,
        elapsed=elapsed,
        time_up=time_up,
        withheld=withheld,
        partial=bool(only),
        chosen=chosen,
    )
    if only:
        return out
    if state.passed_at is not None:
        out.already_passed = True
        out.elapsed = state.passed_at - state.started
        return out
    passed = result.passed
    state.last_failing = [
        t.id for t in result.tasks if not (all(c.status == "passed" for c in t.checks) and t.score >= t.max_score)
    ]
    assignment = recorded_as(state.assignment)
    with History(history_path) as history:
        before = history.bests().get((assignment, state.drill))
        state.attempt_id = history.record(
            attempt_id=state.attempt_id,
            assignment=assignment,
            drill=state.drill,
            tasks=state.tasks,
            workspace=root,
            started=state.started,
            finished=now,
            limit_s=state.limit_s,
            passed=passed,
            score=result.score,
            max_score=result.max_score,
            hints=state.hints_used,
            no_hints=state.no_hints,
            profile=profile,
        )
        out.attempt = history.get(state.attempt_id)
    if passed:
        state.passed_at = now
        out.previous_best = before.seconds if before else None
        out.new_best = before is None or out.attempt.seconds < before.seconds
    workspace.write_state(root, state)
    return out


def hint(*, path=None, task=None, now=None, history_path=None):
    """Show the next hint level for ``task`` (default: a failing drilled task with hints left); returns ``Hint``."""
    root, state, chosen = open_workspace(path, history_path=history_path)
    if task is not None and task not in state.tasks:
        raise PracticeError("practice.error.hint_task", task=task, tasks=", ".join(state.tasks))
    if state.no_hints and _now(now) - state.started < state.limit_s:
        raise PracticeError("practice.error.no_hints_mode")
    left = [t for t in state.tasks if state.hints.get(t, 0) < HINT_LEVELS]
    if task is None:
        failing_left = [t for t in state.last_failing if t in left]
        task = (failing_left or left or state.tasks)[0]
    level = state.hints.get(task, 0)
    if level >= HINT_LEVELS:
        return Hint(
            task=task,
            level=0,
            exhausted=True,
            others=[t for t in left if t != task],
            state=state,
            root=root,
            chosen=chosen,
        )
    level += 1
    state.hints[task] = level
    workspace.write_state(root, state)
    if state.attempt_id is not None and state.passed_at is None:
        with History(history_path) as history:
            history.set_hints(state.attempt_id, state.hints_used)
    others = [t for t in state.tasks if t != task and state.hints.get(t, 0) < HINT_LEVELS]
    return Hint(
        task=task,
        level=level,
        key=hint_key(task, level, load(state.assignment)),
        others=others,
        state=state,
        root=root,
        chosen=chosen,
    )


def hint_key(task, level, assignment):
    """The message key of an ``assignment`` task's hint at a level (``practice.hint.mha.1``): its practice
    messages hold one per drilled task and level."""
    if task not in assignment.task_by_id or not 1 <= level <= HINT_LEVELS:
        raise ValueError(f"no hint for task={task!r} at level={level!r}; levels are 1..{HINT_LEVELS}")
    return f"practice.hint.{task}.{level}"


def history(*, history_path=None):
    """The drill attempts and the quizzes taken, as ``Past``."""
    with History(history_path) as h:
        past = Past(attempts=h.attempts(), bests=h.bests(), quizzes=h.quizzes(), topics=h.topic_totals())
    for package in {q.assignment for q in past.quizzes}:  # their topics' names are the assignments' sentences
        try:
            load(package)
        except AssignmentError:  # gone since: its topics show by id
            pass
    return past
