"""An assignment as data: everything that makes one exercise gradable, in one object the kit takes as an argument.

The kit (``grader/``) knows nothing about Transformers. An ``Assignment`` says what the students write
(tasks: files, names, what each builds on), where the reference and the skeleton live, which modules hold
its checks, probes, known bugs, messages, figures, drills and quiz, and which APIs it bans. The engine,
runners, loader, plugin, batch, views and practice are handed one; a worker process gets its ``spec``
(an import path) and loads the same object there.

An assignment lives in a folder of its own: a Python package whose ``__init__.py`` defines
``ASSIGNMENT = Assignment(...)``. The built-in ones are under ``assignments/`` (``load("transformer")``);
any other is named by its import path (``load("mycourse.attention_hw")``) or by its folder
(``load("/courses/attention_hw")``). ``docs/ASSIGNMENTS.md`` is the guide.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT = "transformer"
"""The assignment graded when none is named (on the command line, in the API or in a course configuration)."""


@dataclass(frozen=True)
class Task:
    """One piece of student work, as named in the assignment's contract page."""

    id: str
    """The task id (``"mha"``), used by stubs, checks, reports and drills."""
    file: str
    """The contract file that holds it (``"attention.py"``); empty for a task that grades the whole (``overfit``)."""
    names: tuple = ()
    """The module-level names it defines in that file."""
    deps: tuple = field(default=())
    """Task ids whose code it calls: graded 'isolated', these are the reference's."""
    own_reference: tuple = field(default=())
    """Names of its own that its isolated checks take from the reference too, because each is graded by a check
    of its own (``train_step`` is judged over the reference's ``sequence_loss``: a loss mistake is charged once,
    in ``training.loss``)."""


class AssignmentError(ValueError):
    """An assignment that cannot be found or is not well formed; the message says what was expected."""


@dataclass(frozen=True)
class Assignment:
    """One gradable exercise. Module fields are import paths, imported when first needed (workers import only
    what they use: never the reference, never the checks)."""

    name: str
    """A short id (``"transformer"``); reports and gradebooks carry it."""
    tasks: tuple
    """``Task`` objects, in the order reports list them."""
    reference: Path
    """The folder of the reference implementation (one file per contract file)."""
    skeleton: Path
    """The folder of the stubs handed to students (the same files, bodies raising ``NotImplementedError``)."""
    checks: tuple = ()
    """Modules whose ``@check`` functions grade this assignment (importing them registers the checks)."""
    probes: tuple = ()
    """Modules of assignment-specific probes (``@probe``), imported in every process that runs student code."""
    title: dict = field(default_factory=dict)
    """``{lang: title}`` for reports."""
    contract: Path | None = None
    """The contract page students read (Markdown)."""
    package: str = ""
    """The import path that defines this assignment (set by ``load``): what a worker process loads."""
    messages: str | None = None
    """A package holding ``<lang>.py`` / ``<part>_<lang>.py`` modules with ``MESSAGES`` dicts, merged into the
    catalogue on load (``grader.messages.register``)."""
    bugs: str | None = None
    """A module with ``BUGS`` (``grader.bugs.catalogue.Bug``) and optionally ``EQUIVALENT``: the known mistakes
    diagnosis names and the mutation test replays."""
    banned: tuple = ()
    """API names a submission may not use (dotted, ``"torch.nn.MultiheadAttention"``): found in the source, and at
    run time by the dispatcher guard (``grader.submission.banned``, which knows the kernels behind torch's names)."""
    probe_tasks: dict = field(default_factory=dict)
    """``{probe name: task ids}`` for the assignment's probes that call a function rather than build a named module
    (``"sdpa": ("sdpa",)``): a banned call made under that probe is charged to those tasks."""
    warm_up: str | None = None
    """``"module:function"`` run in a worker before any student code (first-call costs of what the probes use);
    it must not read the reference."""
    figures: str | None = None
    """``"module:function"`` -> ``function(sub=, ref=)`` gathering the report's pictures (probes only)."""
    practice: str | None = None
    """A module with ``DRILLS`` (``grader.practice.drills.Drill`` objects) and ``QUESTIONS``
    (``grader.practice.quiz.Question`` objects), for ``gradekit practice`` / ``quiz``."""
    data: Path | None = None
    """A folder of data files the assignment's checks and figures read."""
    demo: str | None = None
    """``"module:function"`` -> ``function(argv)`` for ``gradekit demo`` (the reference at work), or ``None``."""

    def __post_init__(self):
        ids = [t.id for t in self.tasks]
        if len(set(ids)) != len(ids):
            raise AssignmentError(f"assignment {self.name!r}: task ids repeat: {ids}")
        for t in self.tasks:
            unknown = [d for d in t.deps if d not in ids]
            if unknown:
                raise AssignmentError(
                    f"assignment {self.name!r}: task {t.id!r} depends on unknown task(s) "
                    f"{', '.join(unknown)}; expected some of: {', '.join(ids)}"
                )
        names = [n for t in self.tasks for n in t.names]
        if len(set(names)) != len(names):
            raise AssignmentError(f"assignment {self.name!r}: a name is claimed by two tasks: {names}")
        for root, what in ((self.reference, "reference"), (self.skeleton, "skeleton")):
            if not Path(root).is_dir():
                raise AssignmentError(f"assignment {self.name!r}: its {what} folder {str(root)!r} does not exist")

    # Derived tables (computed once per object).
    @functools.cached_property
    def task_by_id(self) -> dict:
        return {t.id: t for t in self.tasks}

    @functools.cached_property
    def task_ids(self) -> tuple:
        return tuple(t.id for t in self.tasks)

    @functools.cached_property
    def contract_files(self) -> tuple:
        return tuple(sorted({t.file for t in self.tasks if t.file}))

    @functools.cached_property
    def name_to_task(self) -> dict:
        return {name: t.id for t in self.tasks for name in t.names}

    @functools.cached_property
    def name_to_file(self) -> dict:
        return {name: t.file for t in self.tasks for name in t.names}

    def all_deps(self, task_id: str) -> tuple:
        """Every task ``task_id`` builds on, directly or through another task."""
        seen, todo = [], list(self.task_by_id[task_id].deps)
        while todo:
            dep = todo.pop(0)
            if dep not in seen:
                seen.append(dep)
                todo.extend(self.task_by_id[dep].deps)
        return tuple(seen)

    def require_tasks(self, ids) -> None:
        unknown = [i for i in ids if i not in self.task_by_id]
        if unknown:
            raise ValueError(f"unknown task id(s) {', '.join(unknown)}; expected some of: {', '.join(self.task_ids)}")

    # What the modules hold (imported on first use).
    def import_checks(self) -> list:
        """The assignment's check modules, imported (which registers their checks: ``engine.checks_of``)."""
        return [importlib.import_module(m) for m in self.checks]

    def load_probes(self) -> None:
        for m in self.probes:
            importlib.import_module(m)

    def bug_catalogue(self):
        """``(BUGS, EQUIVALENT)`` of the assignment's bug module (empty when it has none)."""
        if not self.bugs:
            return (), {}
        module = importlib.import_module(self.bugs)
        return tuple(module.BUGS), dict(getattr(module, "EQUIVALENT", {}))

    def function(self, ref: str | None):
        """The function a ``"module:function"`` field names (``None`` for none)."""
        if not ref:
            return None
        module, _, attr = ref.partition(":")
        return getattr(importlib.import_module(module), attr)

    def practice_module(self):
        return importlib.import_module(self.practice) if self.practice else None

    def run_warm_up(self) -> None:
        fn = self.function(self.warm_up)
        if fn is not None:
            fn()


_LOADED: dict = {}


def load(spec: str | Path | Assignment | None = None) -> Assignment:
    """The assignment ``spec`` names: an ``Assignment`` (returned as is), ``None`` (``DEFAULT``), a built-in
    name (``"transformer"``: ``assignments.transformer``), an import path (``"pkg.mod"``), or a folder holding a
    package whose ``__init__.py`` defines ``ASSIGNMENT``. Loading registers its messages. ``AssignmentError``
    says what was expected when it cannot be found."""
    if isinstance(spec, Assignment):
        return spec
    spec = str(spec) if spec is not None else DEFAULT
    if spec in _LOADED:
        return _LOADED[spec]
    module_name, folder = spec, None
    path = Path(spec)
    if "/" in spec or "\\" in spec or (path.is_dir() and (path / "__init__.py").is_file()):
        if not (path / "__init__.py").is_file():
            raise AssignmentError(
                f"assignment folder {spec!r} has no __init__.py; expected a package defining "
                f"ASSIGNMENT = Assignment(...)"
            )
        folder = path.resolve()
        module_name = folder.name
        if str(folder.parent) not in sys.path:
            sys.path.insert(0, str(folder.parent))
    elif "." not in spec and ":" not in spec:
        module_name = f"assignments.{spec}"
    module_name, _, attr = module_name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise AssignmentError(
                f"no assignment {spec!r}: module {module_name!r} not found; expected a built-in "
                f"name ({', '.join(builtin_names()) or 'none'}), an import path or a folder"
            ) from None
        raise
    assignment = getattr(module, attr or "ASSIGNMENT", None)
    if not isinstance(assignment, Assignment):
        raise AssignmentError(f"{module_name} does not define {attr or 'ASSIGNMENT'} = Assignment(...)")
    package = f"{module_name}:{attr}" if attr else module_name
    if folder is not None:
        package = str(folder)
    if assignment.package != package:
        object.__setattr__(assignment, "package", package)
    from grader import messages

    messages.register(assignment)
    _LOADED[spec] = assignment
    _LOADED[package] = assignment
    return assignment


def builtin_names() -> tuple:
    """The assignments shipped under ``assignments/``: the packages whose ``__init__.py`` assigns ``ASSIGNMENT``
    (one still being written, without it, is not offered)."""
    try:
        import assignments
    except ImportError:
        return ()
    defines = re.compile(r"^ASSIGNMENT\s*(:[^=]*)?=", re.M)
    return tuple(
        sorted(
            p.name
            for p in Path(assignments.__file__).parent.iterdir()
            if (p / "__init__.py").is_file()
            and not p.name.startswith("_")
            and defines.search((p / "__init__.py").read_text(encoding="utf-8"))
        )
    )
