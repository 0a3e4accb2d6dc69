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
import importlib.util
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import Said

KIT_BANK = "answers.bank"
"""A student kit's answer bank, in the assignment's package folder: the reference's answers, recorded (``grader.kit``),
which the kit grades against, having no reference (``Assignment.has_reference``, ``kit_bank``)."""
KIT_DOCS = "docs"
"""The folder of the assignment's package in which a student kit carries the contract page."""
KIT_MANIFEST = "student_kit.json"
"""A file beside this module in a student kit only (``grader.kit``): ``{"assignment": spec, "name": name, ...}``,
what the kit was built for (``KIT``)."""


def _kit_manifest():
    """What a student kit was built for (its ``KIT_MANIFEST``), or ``None`` outside a student kit."""
    try:
        manifest = json.loads(Path(__file__).with_name(KIT_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("assignment"), str):
        return None
    return manifest


KIT = _kit_manifest()
"""In a student kit, its manifest: the assignment it was built for (``"assignment"``, its spec, and ``"name"``),
whose reference the kit never looks for, however a folder beside it is named; ``None`` in the instructor's kit."""
DEFAULT = KIT["assignment"] if KIT is not None else "transformer"
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


class KitError(Said, AssignmentError):
    """What a student kit cannot do: it holds the reference's answers, recorded, not the reference (``grader.kit``).
    A message key and its parameters, said in the user's language by ``say``; ``str`` is the English sentence."""


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
        if not Path(self.skeleton).is_dir():
            raise AssignmentError(
                f"assignment {self.name!r}: its skeleton folder {str(self.skeleton)!r} does not exist"
            )
        # The reference folder may be absent: a student kit holds its answers instead (``load`` checks for them).

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

    # The reference, or in a student kit its recorded answers.
    @functools.cached_property
    def folder(self) -> Path | None:
        """The folder of the package that defines this assignment (``None`` before ``load`` names it)."""
        if not self.package:
            return None
        if Path(self.package).is_absolute():  # loaded from a folder (``load`` names it by its resolved path)
            return Path(self.package)
        spec = importlib.util.find_spec(self.package.partition(":")[0])
        return Path(spec.origin).resolve().parent if spec is not None and spec.origin else None

    @property
    def has_reference(self) -> bool:
        """The reference folder is here: the instructor's full kit. A student kit has none (``kit_bank``), and never
        takes a folder of the reference's name for it (a student's own work named ``solution``): ``KIT``."""
        return Path(self.reference).is_dir() and not (KIT is not None and KIT.get("name") == self.name)

    @property
    def kit_bank(self) -> Path | None:
        """The answer bank of a student kit (``KIT_BANK`` in the package folder), which every grading uses where the
        reference folder is absent; ``None`` where the reference is here, or no bank is."""
        if self.has_reference or self.folder is None:
            return None
        path = self.folder / KIT_BANK
        return path if path.is_file() else None

    def require_reference(self, door: str) -> None:
        """``KitError`` (``kit.needs_reference``) when the reference is not here: ``door`` (``"gradekit demo"``)
        needs the instructor's full kit."""
        if not self.has_reference:
            raise KitError("kit.needs_reference", door=door)

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


def command_option(assignment) -> list:
    """``["--assignment", spec]`` where ``assignment`` is not the default one (a built-in by its short name, as a user
    types it; any other by the import path or folder it came from), else ``[]``: what a printed command adds to
    grade it."""
    if assignment is None or assignment.name == DEFAULT:
        return []
    builtin = assignment.package == f"assignments.{assignment.name}"
    return ["--assignment", assignment.name if builtin else assignment.package]


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
        assignment.__dict__.pop("folder", None)
    if not assignment.has_reference and assignment.kit_bank is None:
        raise AssignmentError(
            f"assignment {assignment.name!r}: its reference folder {str(assignment.reference)!r} does not exist, "
            f"and it holds no answer bank ({KIT_BANK} in its package folder); expected the reference (the "
            f"instructor's kit) or a student kit made by 'gradekit kit build'"
        )
    shipped = None if assignment.folder is None else assignment.folder / KIT_DOCS / Path(assignment.contract or "").name
    if assignment.contract is not None and not Path(assignment.contract).is_file() and shipped and shipped.is_file():
        object.__setattr__(assignment, "contract", shipped)  # a student kit carries the page in its package
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
