"""The pytest plugin: ``pytest --submission PATH`` grades a submission, each of the assignment's checks a pytest item.

A view of ``grader.api.check``, as the terminal summary is. The submission folder is collected as a directory of
items, one per check, so that a node id reads ``PATH::<check id>`` and runs as printed (``pytest --submission sub
sub::mha.equivalence``); each item is marked with its task id (``-m mha``). The checks left after pytest's
selection (node ids, ``-k``, ``-m``, ``--lf``, ``--deselect``) are graded together, once, as ``gradekit check``
grades the same selection: the same verdicts, the same diagnosis, a defect beneath a task charged once. Each item
then passes or fails as its check did, a failure showing the lines the terminal view prints under that check
(``views.terminal.check_lines``), and a ``gradekit`` section ends the run with the points per task and the total.
Without ``--submission`` the plugin does nothing, so it is safe to have installed.
"""

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HELP_SUBMISSION = "grade the submission folder at PATH with gradekit's checks (instead of collecting tests)"
HELP_PROFILE = "gradekit profile: quick or full (default: full)"
HELP_SEED = "gradekit Hypothesis seed (default: the same examples every run)"
HELP_ALLOW_BANNED = "do not fail checks of tasks that use banned APIs"
HELP_ASSIGNMENT = (
    "gradekit assignment: a built-in name, an import path or a folder (default: the course "
    "configuration's, else transformer)"
)
HELP_CONFIG = (
    "gradekit course configuration (gradekit.toml, or a pyproject.toml with [tool.gradekit]); default: "
    "the nearest gradekit.toml from the current folder up, as for gradekit check"
)
HELP_LANG = "language of gradekit's messages (default: the course configuration's, else en)"


@dataclass
class _State:
    """What one pytest session grades (kept in ``config.stash``)."""

    path: Path
    """The submission folder, absolute, as pytest's collection names folders."""
    shown: str
    """The folder as the commands we print name it: relative to the current folder when inside it."""
    assignment: object
    """The ``Assignment`` graded."""
    course: object
    """The course configuration (``grader.config.CourseConfig``, for a student's self-check) or ``None``."""
    settings: object = None
    """The grading's ``grader.options.Settings`` (``api.settings`` of the options and the course configuration)."""
    names: frozenset | None = None
    """The check ids that node ids on the command line name; ``None``: every check."""
    result: object = None
    """The ``GradeResult`` of the session's checks, once graded."""
    failed: str = ""
    """Why grading failed, when it did (the first item holds the traceback; the others say this)."""
    said: dict = field(default_factory=dict)
    """Shared by the failures, as by the checks of one CLI summary: a diagnosis or an error is told once."""
    notes_told: set = field(default_factory=set)
    """Notes already printed under a failure (a note the checks of a task share is said once)."""


_STATE = pytest.StashKey[_State]()


def pytest_addoption(parser):
    from grader.messages import LANGS

    group = parser.getgroup("gradekit")
    group.addoption("--submission", metavar="PATH", default=None, help=HELP_SUBMISSION)
    group.addoption("--gradekit-profile", default="full", choices=("quick", "full"), help=HELP_PROFILE)
    group.addoption("--gradekit-seed", type=int, default=None, help=HELP_SEED)
    group.addoption("--gradekit-allow-banned", action="store_true", help=HELP_ALLOW_BANNED)
    group.addoption("--gradekit-assignment", default=None, help=HELP_ASSIGNMENT)
    group.addoption("--gradekit-config", metavar="FILE", default=None, help=HELP_CONFIG)
    group.addoption("--gradekit-lang", default=None, choices=LANGS, help=HELP_LANG)


def _validate_submission(config, value, assignment):
    """The submission folder, absolute (``UsageError`` saying what is wrong otherwise)."""
    from grader.api import UsageError, validate_path

    try:
        validate_path(value, assignment)
    except UsageError as exc:
        raise pytest.UsageError(f"--submission: {exc}") from None
    return Path(os.path.abspath(config.invocation_params.dir / value))


def _course(config):
    """The course configuration ``gradekit check`` would use here, for a student's self-check, or ``None``."""
    from grader.config import course_config

    given = config.getoption("--gradekit-config")
    start = config.invocation_params.dir

    def usage(detail):
        return pytest.UsageError(f"--gradekit-config: {detail}" if given else detail)

    return course_config(given, start=start, usage_error=usage)


def _lang(config):
    """The language of the session's words: the resolved settings' (``--gradekit-lang``, else the course's)."""
    from grader.options import DEFAULTS

    state = config.stash.get(_STATE, None)
    if state is not None:
        return state.settings.options.lang
    return config.getoption("--gradekit-lang") or DEFAULTS["lang"].value


def pytest_configure(config):
    config.addinivalue_line("markers", "gradekit: a gradekit check")
    value = config.getoption("--submission", default=None)
    if not value:
        return
    if not hasattr(pytest, "Directory"):
        raise pytest.UsageError(f"--submission needs pytest 8 or later (this is pytest {pytest.__version__})")
    from grader.api import UsageError, settings
    from grader.cli import from_here

    course = _course(config)
    spec = config.getoption("--gradekit-assignment")
    try:
        resolved = settings(
            assignment=spec,
            config=course,
            profile=config.getoption("--gradekit-profile"),
            seed=config.getoption("--gradekit-seed"),
            allow_banned=config.getoption("--gradekit-allow-banned"),
            lang=config.getoption("--gradekit-lang"),
        )
    except UsageError as exc:
        raise pytest.UsageError(f"--gradekit-assignment: {exc}" if spec is not None else str(exc)) from None
    assignment = resolved.assignment
    for task in assignment.task_ids:
        config.addinivalue_line("markers", f"{task}: gradekit checks of task {task}")
    path = _validate_submission(config, value, assignment)
    state = _State(path=path, shown=from_here(path), assignment=assignment, course=course, settings=resolved)
    state.names = _selection(config, state)
    config.stash[_STATE] = state


def _checks(config, state):
    """The ``CheckSpec``s graded with this session's options, in the assignment's order."""
    from grader.engine import select_checks

    return select_checks(state.assignment, profile=config.getoption("--gradekit-profile"), config=state.course)


def _selection(config, state):
    """The check ids the command line's arguments name (``None``: every check); the arguments become the
    submission folder. pytest refuses ``::`` after a folder, and without arguments it would collect the
    configured ``testpaths``."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        names = None
    else:
        whole, named = False, set()
        for arg in config.args:
            where, sep, name = arg.partition("::")
            if not _same(Path(os.path.abspath(config.invocation_params.dir / where)), state.path):
                raise pytest.UsageError(
                    f"{arg}: with --submission, the arguments name the submission folder ({state.shown}) or its "
                    f"checks ({state.shown}::<check id>)"
                )
            whole = whole or not sep
            named.add(name)
        names = None if whole else frozenset(named)
    unknown = sorted((names or set()) - {spec.id for spec in _checks(config, state)})
    if unknown:
        profile = config.getoption("--gradekit-profile")
        listing = f"pytest --submission {shlex.quote(state.shown)}"
        listing += f" --gradekit-profile {profile}" if profile != "full" else ""
        raise pytest.UsageError(
            f"{', '.join(f'{state.shown}::{name}' for name in unknown)}: no such check in the "
            f"{profile} profile; `{listing} --collect-only -q` lists them"
        )
    config.args = [str(state.path)]
    config.args_source = pytest.Config.ArgsSource.ARGS
    return names


def _same(a, b):
    """Whether two absolute paths name one folder (through a link too)."""
    return a == b or (a.exists() and b.exists() and os.path.samefile(a, b))


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # pytest 7 has no such hook (there, --submission says so)
def pytest_collect_directory(path, parent):
    state = parent.config.stash.get(_STATE, None)
    if state is not None and path == state.path:
        return SubmissionFolder.from_parent(parent, path=path, nodeid=_nodeid(parent.config, path))
    return None


def _nodeid(config, path):
    """The submission folder's node id: relative to the rootdir as pytest's own, absolute outside it (where pytest
    would give the empty id, and ``::<check id>`` alone names no folder)."""
    try:
        return path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return path.as_posix()


def pytest_ignore_collect(collection_path, config):
    state = config.stash.get(_STATE, None)
    if state is not None and collection_path != state.path:
        return True  # only the submission is collected, and as checks, not its files
    return None


class SubmissionFolder(getattr(pytest, "Directory", pytest.Collector)):  # pytest 7 imports this module too
    """The submission folder as pytest collects it: an item per check, none of its files as tests."""

    def collect(self):
        state = self.config.stash[_STATE]
        for spec in _checks(self.config, state):
            if state.names is None or spec.id in state.names:
                item = CheckItem.from_parent(self, name=spec.id, spec=spec)
                item.add_marker(spec.task)
                item.add_marker("gradekit")
                yield item


def _grade(session):
    """Grade the session's checks, once, together: the first item to run does it, for all. Whole tasks are graded
    as ``gradekit check --tasks <them>`` grades them, some checks of a task as ``--only <them>`` does (a course
    configuration weighs a task's checks by those graded with them)."""
    state = session.config.stash[_STATE]
    if state.result is None and not state.failed:
        from grader import api

        config = session.config
        specs = [item.spec for item in session.items if isinstance(item, CheckItem)]
        tasks = tuple(dict.fromkeys(spec.task for spec in specs))
        whole = {spec.id for spec in _checks(config, state) if spec.task in tasks}
        only = None if {spec.id for spec in specs} == whole else tuple(spec.id for spec in specs)
        try:
            state.result = api.check(
                path=state.path, assignment=state.assignment, options=state.settings.options, tasks=tasks, only=only
            )
        except Exception as exc:
            state.failed = f"{type(exc).__name__}: {exc}"
            raise
        for task in state.result.tasks:
            for check in task.checks:
                check.reproduce = _rerun(config, state, check.id)
    if state.failed:
        pytest.fail(
            f"gradekit could not grade the submission ({state.failed}): see the first check's error", pytrace=False
        )


def _verdict(state, check_id):
    """``(CheckResult, TaskResult)`` of one check of the graded session."""
    for task in state.result.tasks:
        for check in task.checks:
            if check.id == check_id:
                return check, task
    raise LookupError(f"check {check_id!r} was not graded")  # every item's check is: a bug of ours


def _rerun(config, state, check_id):
    """The command that reruns one check from the current folder: how pytest was started, the gradekit options
    given (and ``-v``, which shows tracebacks), and the check's node id."""
    words = ["--submission", state.shown]
    if config.pluginmanager.get_plugin("gradekit") is None:  # not loaded as the installed plugin: by ``-p``
        words += ["-p", __name__]
    for option, default in (
        ("--gradekit-assignment", None),
        ("--gradekit-config", None),
        ("--gradekit-profile", "full"),
        ("--gradekit-seed", None),
        ("--gradekit-lang", None),
    ):
        value = config.getoption(option)
        if value != default:
            words += [option, str(value)]
    if config.getoption("--gradekit-allow-banned"):
        words.append("--gradekit-allow-banned")
    if config.option.verbose > 0:
        words.append("-v")
    words.append(f"{state.shown}::{check_id}")
    return " ".join([_program(), *(shlex.quote(word) for word in words)])


def _program():
    """How pytest was started (``grader.cli.started_as``)."""
    from grader.cli import started_as

    return started_as(("pytest", "py.test"), "pytest")


def _say(key, lang, **params):
    from grader.views.terminal import say

    return say(key, lang, **params)


def _note_lines(check, lang, told):
    """``note: ...`` for each note of ``check`` not in ``told`` (which it joins)."""
    from grader.messages import text
    from grader.results import Message

    lines = []
    for note in (Message.of(n) for n in check.notes or ()):
        said = _say(note.key, lang, **note.params)
        if said not in told:
            told.add(said)
            lines.append(f"{text('ui.note', lang)}: {said}")
    return lines


def _failure_lines(state, check, task, *, lang, verbose):
    """What pytest prints under a failing check: that its task fails only because one beneath fails, its notes, the
    lines the terminal view prints under the check, and the banned APIs that cost its task its points (where they
    are, under the task's first failure). Each is said once."""
    from grader.views.terminal import check_lines

    lines = []
    if task.blocked_by and check.status != "passed":
        blocked = _say("ui.blocked_by", lang, tasks=", ".join(task.blocked_by))
        if blocked not in state.notes_told:
            state.notes_told.add(blocked)
            lines.append(f"{_say('ui.note', lang)}: {blocked}")
    lines += _note_lines(check, lang, state.notes_told)
    if check.status != "passed":
        lines += check_lines(check, lang=lang, verbose=verbose, said=state.said)
    if task.banned and not state.result.allow_banned:
        lines.append(_say("plugin.banned_cost", lang))
        if ("banned", task.id) not in state.said:
            state.said["banned", task.id] = check.id
            lines += [_say("ui.banned", lang, **finding) for finding in task.banned]
    return lines


class CheckFailed(Exception):
    """A gradekit check did not pass, or its task's points are withheld for a banned API."""

    def __init__(self, check, task):
        super().__init__(check.id)
        self.check = check
        self.task = task


@dataclass
class _Reason:
    """The one-line reason of a failure: pytest's short summary and ``--tb=line`` print it, JUnit's ``message``."""

    where: str
    message: str

    def __str__(self):
        return f"{self.where}: {self.message}"


class CheckFailure:
    """A failing check as pytest shows it, a line each (``repr_failure``'s answer)."""

    def __init__(self, lines, reason):
        self.lines = lines
        self.reprcrash = reason

    def toterminal(self, tw):
        for line in self.lines:
            tw.line(line)

    def __str__(self):
        return "\n".join(self.lines)


class CheckItem(pytest.Item):
    """One check; passes or fails as it did in the grading of the session's checks."""

    def __init__(self, *, spec, **kwargs):
        super().__init__(**kwargs)
        self.spec = spec

    def setup(self):
        _grade(self.session)

    def runtest(self):
        state = self.config.stash[_STATE]
        check, task = _verdict(state, self.spec.id)
        if check.status != "passed" or (task.banned and not state.result.allow_banned):
            raise CheckFailed(check, task)

    def repr_failure(self, excinfo):
        if not isinstance(excinfo.value, CheckFailed):
            return super().repr_failure(excinfo)
        state = self.config.stash[_STATE]
        check, task = excinfo.value.check, excinfo.value.task
        lang = _lang(self.config)
        if check.status != "passed":  # its own sentence, even where the lines point back to an earlier check
            reason = _say(check.message.key, lang, **check.message.params) if check.message is not None else ""
        else:
            reason = _say("plugin.banned_cost", lang)
        if self.config.getoption("tbstyle", "auto") == "line":  # --tb=line: the reason alone
            return CheckFailure([], _Reason(self.nodeid, reason))
        return CheckFailure(
            _failure_lines(state, check, task, lang=lang, verbose=self.config.option.verbose > 0),
            _Reason(self.nodeid, reason),
        )

    def reportinfo(self):
        task = self.config.stash[_STATE].assignment.task_by_id[self.spec.task]
        return (self.path / task.file if task.file else self.path), None, f"gradekit {self.spec.id}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A check whose code is not written yet is marked on its report (``gradekit_todo``): reported as to do, as the
    CLI says it, not as a failure (it still fails the run, as it does the CLI's)."""
    report = yield
    if isinstance(item, CheckItem) and call.excinfo is not None and isinstance(call.excinfo.value, CheckFailed):
        from grader.views.terminal import _not_implemented

        report.gradekit_todo = _not_implemented(call.excinfo.value.check)
    return report


def pytest_report_teststatus(report, config):
    if getattr(report, "gradekit_todo", False) and report.when == "call" and report.failed:
        word = _say("ui.todo_word", _lang(config))
        return word, "T", (word.upper(), {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash.get(_STATE, None)
    if state is None or state.result is None:
        return
    terminalreporter.write_sep("=", "gradekit")
    for line, colour in _summary_lines(state.result, lang=_lang(config)):
        terminalreporter.write_line(line, **({colour: True} if colour else {}))


def _summary_lines(result, *, lang="en"):
    """``(line, colour)`` pairs: the CLI summary's lines about the whole (what was not graded, a line per task with
    its points, the notes of checks that passed, banned APIs, the score), without what each failure already said
    above in pytest's report."""
    from dataclasses import replace

    from grader.messages import text
    from grader.safetext import for_terminal, pad
    from grader.views.terminal import load_error_lines, refused_lines, score_line, status_word, task_line

    lines = [("! " + line, "yellow") for line in refused_lines(result, lang)]
    lines += [("! " + line, "yellow") for line in load_error_lines(result, lang)]
    width = max((len(t.id) for t in result.tasks), default=4)
    for task in result.tasks:
        ok = all(c.status == "passed" for c in task.checks) and task.score >= task.max_score
        if task.banned and not result.allow_banned and not task.not_implemented:  # its note names pytest's option
            line = task_line(replace(task, blocked_by=[]), width=width, lang=lang, allow_banned=True)
            line += " — " + text("plugin.banned_cost", lang)
        else:
            line = task_line(task, width=width, lang=lang, allow_banned=result.allow_banned)
        lines.append((line.rstrip(), "green" if ok else "red"))
        told = set()
        for c in task.checks:
            notes = [] if c.status != "passed" else _note_lines(c, lang, told)
            if notes:
                lines.append(
                    (f"    {pad(status_word(c, lang), 7)} {for_terminal(c.id)}  ({c.score:g}/{c.max_score:g})", None)
                )
                lines += [("            " + n, None) for n in notes]
        lines += [("    " + _say("ui.banned", lang, **f), None) for f in task.banned]
    lines.append((score_line(result, lang), None))
    if result.banked:
        lines.append((text("kit.banked", lang), None))
    if result.output_dropped:
        lines.append((_say("note.output_dropped", lang, n=result.output_dropped), None))
    if result.passed and result.hidden_checks:
        lines.append((text("ui.public_passed", lang, hidden=result.hidden_checks), None))
    return lines
