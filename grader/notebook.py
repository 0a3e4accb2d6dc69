"""Checks from inside a notebook: ``from grader import notebook as gk; gk.check("mha")``.

``check(task)`` grades what the running kernel defines and returns a ``Report``: Jupyter (and Colab, VS Code)
shows it as the HTML report of that task (``grader.views.html``, the same Jinja2 page as ``gradekit check
--html``), and ``repr`` gives the terminal summary. ``check_all()`` grades every task.

What is graded is the code of the cells the kernel ran, read from IPython's input history (``In``), in the order
they ran, each cell numbered by its execution count as Jupyter shows it. The history is turned into the
contract's modules by ``grader.submission.ipynb.convert``, as a saved ``.ipynb`` is: the same rules (the last
definition wins, magics and demo code are left out), and errors point at cells (``cell [5]``). The history rather
than ``inspect.getsource`` of the objects in ``__main__``: the history has the helpers, imports and constants a
definition uses, which no object's source shows; it is what the kernel actually ran, in that order (cells run out
of order, or run again after an edit, are graded as they stand in the kernel); and ``getsource`` cannot find a
class defined in a notebook cell before Python 3.13. A cell that does not parse defined nothing in the kernel
either, and is passed over silently.

Graded in this process by default (the student's own code, as the kernel runs it anyway); ``sealed=True``
grades the exported code in a worker process instead (``isolated=True``, its former name, still does).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import jinja2

from grader import api
from grader.messages import text
from grader.submission.ipynb import convert, relocate
from grader.views import html, terminal

FRAME = (
    '<iframe srcdoc="{{ page }}" sandbox="allow-same-origin" style="width: 100%; height: {{ height }}px; '
    'resize: vertical; border: 1px solid #ccc; border-radius: 4px"></iframe>'
)
"""The report inside a cell: in a frame of its own, so that its style sheet and security policy stay in it and do
not restyle the notebook (the page is escaped into ``srcdoc`` by Jinja2's autoescape). ``sandbox`` runs no script
in it; ``allow-same-origin`` is needed for Chromium to draw it at all (a bare ``sandbox`` left the frame blank in
a real browser, tests/corpus/test_notebooks.py), and grants nothing without scripts."""


@functools.cache
def _frame():
    return jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(FRAME)


class Report:
    """A grading shown in a notebook: ``_repr_html_`` is the HTML report, ``repr`` the terminal summary."""

    def __init__(self, result, lang="en"):
        self.result = result
        """The ``GradeResult``, its locations pointing at the kernel's cells."""
        self.lang = lang

    @property
    def passed(self):
        return self.result.passed

    def _repr_html_(self):
        failing = sum(1 for t in self.result.tasks for c in t.checks if c.status != "passed")
        height = min(1400, 420 + 60 * len(self.result.tasks) + 220 * failing)
        return _frame().render(page=html.render(self.result, lang=self.lang), height=height)

    def __repr__(self):
        return terminal.summary(self.result, lang=self.lang)


def _kernel(lang):
    """The running IPython shell; ``RuntimeError`` outside one."""
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is None or not hasattr(shell, "history_manager"):
        raise RuntimeError(text("notebook.no_kernel", lang))
    return shell


def _history(shell):
    """The cells the kernel ran, as a notebook: ``In[n]`` is the cell whose execution count is ``n``."""
    from nbformat.v4 import new_code_cell, new_notebook

    raw = shell.history_manager.input_hist_raw
    return new_notebook(
        cells=[new_code_cell(source, execution_count=n) for n, source in enumerate(raw) if n and source.strip()]
    )


def _grade(tasks, *, sealed, lang, profile, assignment):
    from grader.config import course_config

    settings = api.settings(assignment=assignment, config=course_config(), sealed=sealed, lang=lang, profile=profile)
    a, lang = settings.assignment, settings.options.lang
    shell = _kernel(lang)
    unknown = [t for t in tasks or () if t not in a.task_ids]
    if unknown:
        raise ValueError(text("notebook.unknown_task", lang, task=unknown[0], tasks=", ".join(a.task_ids)))
    with tempfile.TemporaryDirectory(prefix="gradekit-notebook-") as tmp:
        cellmap = convert(_history(shell), Path(tmp) / "notebook", a, name=text("notebook.this", lang))
        cellmap.skipped.clear()  # the kernel rejected those cells too: they defined nothing
        result = api.check(path=Path(tmp) / "notebook", assignment=a, options=settings.options, tasks=tasks)
    result.submission = cellmap.notebook
    for check in (c for t in result.tasks for c in t.checks):
        check.reproduce = ""  # the folder is gone; running the check cell again is the rerun
    return Report(relocate(result, cellmap), lang)


def check(task, *, sealed=False, lang=None, profile="quick", assignment=None, isolated=False):
    """Grade task ``task`` (``"mha"``) of what this notebook's kernel defines; returns a ``Report`` (shown as the
    HTML report of that task). ``sealed``: grade in a worker process (``isolated``: its former name); ``lang``:
    ``"en"`` or ``"zh"``; ``profile``: ``"quick"`` or ``"full"``; ``assignment``: default the course
    configuration's (the nearest ``gradekit.toml`` from the kernel's folder up, as ``gradekit check`` finds it),
    else ``transformer``; ``lang`` likewise."""
    return _grade((task,), sealed=sealed or isolated, lang=lang, profile=profile, assignment=assignment)


def check_all(*, sealed=False, lang=None, profile="quick", assignment=None, isolated=False):
    """Grade every task of what this notebook's kernel defines; returns a ``Report``."""
    return _grade(None, sealed=sealed or isolated, lang=lang, profile=profile, assignment=assignment)
