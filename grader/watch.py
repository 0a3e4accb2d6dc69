"""``gradekit watch PATH``: grade again on every save, from a process that stays warm.

A student saves a file hundreds of times per assignment; starting Python, torch and the grader for each would
cost seconds a time. The watcher stays up: it grades everything once, then polls the folder's ``.py`` files
(their size and modification time, every ``POLL_S``: no extra dependency, and it works on network and container
mounts, where file-system events often never arrive). On a change it grades the tasks whose files changed first
and redraws, then the tasks built on them (``affected``), and redraws again: one screen with a line per task,
the first failing check told in full (why, the example, what it looks like, the hint, the rerun line) and the
score. A file the student's own code imports (not a contract file) may be used by any task: all are graded.

The grading is ``api.check`` in this process, as ``gradekit check`` runs it: breakpoints and tracebacks in the
student's files work (``--sealed`` grades in a worker instead, with its time limits).
"""

import argparse
import os
import sys
import time
from datetime import datetime

from grader.errors import UsageError
from grader.messages import text
from grader.options import CheckOptions
from grader.safetext import for_terminal
from grader.views import terminal

POLL_S = 0.1
"""Seconds between two looks at the folder."""
MAX_FILES = 2000
"""Python files looked at, at most (a folder that holds more is not a submission; the first ones are watched)."""
CLEAR = "\033[H\033[2J"


def stamp(root):
    """``{relative path: (modification time, size)}`` of the ``.py`` files under ``root`` (hidden folders and
    ``__pycache__`` left out)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:  # removed between the listing and the look
                continue
            found[os.path.relpath(path, root)] = (st.st_mtime_ns, st.st_size)
            if len(found) >= MAX_FILES:
                return found
    return found


def changed(before, after):
    """The files added, removed or changed between two ``stamp``\\s."""
    return {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}


def affected(assignment, files, tasks=None):
    """``(tasks whose own file changed, tasks built on them)``, each in the assignment's order, among ``tasks``
    (default: all). A changed file that is not a contract file may be imported by any task: all are graded
    first; a task without a file of its own (the whole model's overfit) is built on every file."""
    watched = [t for t in assignment.tasks if tasks is None or t.id in tasks]
    files = set(files)
    if not files:
        return (), ()
    if files - set(assignment.contract_files):
        direct = [t.id for t in watched if t.file]
    else:
        direct = [t.id for t in watched if t.file in files]
    above = [
        t.id for t in watched if t.id not in direct and (not t.file or set(assignment.all_deps(t.id)) & set(direct))
    ]
    return tuple(direct), tuple(above)


class Watch:
    """One watched submission: the last result of each task, and the screen drawn from them.

    Args:
        path: the submission folder, as the student typed it (the rerun lines repeat it).
        assignment: an ``Assignment`` or a spec (default: the course configuration's, as ``api.settings``).
        options: ``CheckOptions`` for each grading (profile, sealed or not, the course configuration, the rerun
            command...), resolved by ``api.settings``; ``tasks`` among them limits what is watched.
        lang: the language of the screen (default: the options', resolved).
        out: where screens are written; cleared before each when it is a terminal.
        drawn: called with each screen's text after it is written (the benchmark times it).
    """

    def __init__(self, path, *, assignment=None, options=None, lang=None, out=None, drawn=None):
        from grader import api  # here, not above: every gradekit command imports this module for its parser

        settings = api.settings(assignment=assignment, options=options)
        self.assignment = settings.assignment
        self.path = path
        self.root = api.validate_path(path, self.assignment)
        self.options = settings.options
        self.tasks = tuple(self.options.tasks) if self.options.tasks else None
        if self.tasks:
            try:
                self.assignment.require_tasks(self.tasks)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        self.lang = lang or self.options.lang
        self.out = out if out is not None else sys.stdout
        self.drawn = drawn
        self.results = {}
        """Task id -> the ``TaskResult`` of its last grading."""
        self.last = None
        """The last ``GradeResult`` (its load errors and refused files are the folder's as last graded)."""
        self.problem = ""
        """Why the last grading could not run (the folder is gone...), else empty."""
        self.stamp = stamp(self.root)

    # -- grading ------------------------------------------------------------------------------------
    def grade(self, tasks):
        """Grade ``tasks`` (ids) and keep their results."""
        if not tasks:
            return
        from grader import api
        from grader.engine import mark_blocked

        try:
            result = api.check(path=self.path, assignment=self.assignment, options=self.options, tasks=tasks)
        except UsageError as exc:
            self.problem = str(exc)
            return
        self.problem = ""
        self.last = result
        for task in result.tasks:
            self.results[task.id] = task
        mark_blocked(self.assignment, [self.results[t] for t in self.task_ids if t in self.results])

    @property
    def task_ids(self):
        return tuple(t for t in self.assignment.task_ids if self.tasks is None or t in self.tasks)

    def step(self):
        """Look at the folder once; when files changed, grade what they affect (redrawing twice). Whether
        anything was graded."""
        now = stamp(self.root) if self.root.is_dir() else {}
        files = changed(self.stamp, now)
        if not files:
            return False
        self.stamp = now
        first, then = affected(self.assignment, files, self.tasks)
        self.draw(busy=first + then)
        self.grade(first)
        self.draw(busy=then)
        if then and not changed(self.stamp, stamp(self.root)):  # saved again meanwhile: start over instead
            self.grade(then)
            self.draw()
        return True

    def run(self, rounds=None, stop=None):
        """Grade everything, then watch until Ctrl-C, ``rounds`` looks at the folder, or ``stop.is_set()``."""
        self.draw(busy=self.task_ids)
        self.grade(self.task_ids)
        self.draw()
        n = 0
        while (rounds is None or n < rounds) and not (stop is not None and stop.is_set()):
            time.sleep(POLL_S)
            self.step()
            n += 1

    # -- the screen ---------------------------------------------------------------------------------
    def screen(self, busy=()):
        """The screen as text: the title, a line per task (``busy`` ones being graded), the first failing
        check in full, the score."""
        lang = self.lang
        lines = [
            text("watch.title", lang, path=for_terminal(self.path), profile=self.options.profile)
            + "   "
            + datetime.now().strftime("%H:%M:%S")
        ]
        if self.problem:
            lines.append("! " + for_terminal(self.problem))
        if self.last is not None:
            lines += ["! " + line for line in terminal.refused_lines(self.last, lang)]
            lines += ["! " + line for line in terminal.load_error_lines(self.last, lang)]
        width = max(len(t) for t in self.task_ids)
        for task_id in self.task_ids:
            task = self.results.get(task_id)
            if task_id in busy or task is None:
                lines.append(f"… {task_id:<{width}}  {text('watch.grading', lang)}")
            else:
                lines.append(terminal.task_line(task, width=width, lang=lang, allow_banned=self.options.allow_banned))
        failing = [
            c
            for t in self.task_ids
            if t in self.results and t not in busy
            for c in self.results[t].checks
            if c.status != "passed"
        ]
        first = next(
            (c for c in failing if (c.error or {}).get("kind") != "not_implemented"), failing[0] if failing else None
        )
        rule = "─" * 60
        lines.append(rule)
        if first is not None:
            lines.append(f"{terminal.status_word(first, lang)}  {first.id}  ({first.score:g}/{first.max_score:g})")
            lines += ["    " + line for line in terminal.check_lines(first, lang=lang)]
            more = sum(1 for c in failing if c is not first and (c.error or {}).get("kind") != "not_implemented")
            if more:
                lines.append(text("watch.more", lang, count=more))
        elif not busy and self.results:
            lines.append(text("ui.all_passed", lang))
        lines.append(rule)
        if self.results:
            score = sum(self.results[t].score for t in self.task_ids if t in self.results)
            total = sum(self.results[t].max_score for t in self.task_ids if t in self.results)
            lines.append(f"{text('ui.score', lang)}: {score:g} / {total:g}   {text('watch.waiting', lang)}")
            if self.last is not None and self.last.banked:
                lines.append(text("kit.banked", lang))
        else:
            lines.append(text("watch.waiting", lang))
        return "\n".join(lines)

    def draw(self, busy=()):
        shown = self.screen(busy)
        clear = CLEAR if getattr(self.out, "isatty", lambda: False)() else ""
        self.out.write(clear + shown + "\n")
        self.out.flush()
        if self.drawn is not None:
            self.drawn(shown)


# -- the command ------------------------------------------------------------------------------------
def register(sub):
    from grader.cli import HELP_ASSIGNMENT, HELP_TASKS, _task_list

    p = sub.add_parser("watch", help="grade again on every save (quick profile), from a process that stays warm")
    p.add_argument("path", help="the submission folder (a filled-in copy of skeleton/)")
    p.add_argument("--assignment", default=None, help=HELP_ASSIGNMENT)
    p.add_argument("--tasks", type=_task_list, default=None, help=HELP_TASKS)
    p.add_argument(
        "--profile",
        choices=("quick", "full"),
        default="quick",
        help="quick (default: fast feedback) or full (the final grading's examples)",
    )
    p.add_argument(
        "--sealed",
        action="store_true",
        help="sealed grading: in a worker process with time limits (breakpoints in your code then do not stop)",
    )
    p.add_argument("--isolated", dest="sealed", action="store_true", help=argparse.SUPPRESS)  # its former name
    p.add_argument(
        "--config",
        default=None,
        help="course configuration (gradekit.toml, or a pyproject.toml with [tool.gradekit]); "
        "default: the nearest gradekit.toml from the current folder up",
    )
    p.add_argument(
        "--lang",
        choices=("en", "zh"),
        default=None,
        help="language of the messages (default: the course configuration's, else en)",
    )
    p.set_defaults(func=cmd_watch)


def from_command(args):
    """The ``Watch`` that ``gradekit watch`` runs for its parsed arguments ``args``."""
    from grader.cli import invoked_as
    from grader.config import course_config

    rerun = (
        (("--profile", args.profile) if args.profile != "full" else ())
        + (("--config", args.config) if args.config else ())
        + (("--lang", args.lang) if args.lang else ())
    )
    options = CheckOptions(
        tasks=args.tasks,
        profile=args.profile,
        sealed=args.sealed,
        command=invoked_as(),
        rerun_options=rerun,
        lang=args.lang,
        config=course_config(args.config),
    )
    return Watch(args.path, assignment=args.assignment, options=options)


def cmd_watch(args):
    watch = from_command(args)
    try:
        watch.run()
    except KeyboardInterrupt:
        print()
    return 0
