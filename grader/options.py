"""How one submission is graded, as one object: ``CheckOptions``, each default declared once (``DEFAULTS``), and the
``Settings`` that ``grader.api.settings`` resolves from a door's explicit options and the course configuration.

Every door (``gradekit check``, ``watch``, the pytest plugin, ``batch`` local or on Dask, the Gradescope build and
its run, the notebook API, practice) turns what it was told into a grading through ``api.settings``: an option
given explicitly wins, else the course configuration's value, else the default declared here."""

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Default:
    """A setting's value when neither the command nor the course configuration gives one."""

    value: object
    about: str


DEFAULTS = {
    "call_timeout": Default(60.0, "seconds one call into student code may take (sealed grading)"),
    "total_timeout": Default(900.0, "seconds all calls of one submission may take together (sealed grading)"),
    "memory_mb": Default(4096, "the worker's memory cap in MiB (sealed grading)"),
    "lang": Default("en", "the language of messages and reports (en, zh)"),
    "copy_policy": Default("zero", "a copy of the reference scores 0 (zero) or is only flagged (flag)"),
    "output_format": Default("md", "how Gradescope renders a result's output (text, md, html)"),
}
"""Setting name -> its declared default; the course configuration's keys of the same names override them."""


@dataclass(frozen=True)
class CheckOptions:
    """Every setting of a grading run other than the submission and the assignment."""

    tasks: tuple | None = None
    """Task ids to grade (``None``: all of the assignment's)."""
    profile: str = "full"
    """``"quick"`` (fewer examples) or ``"full"``."""
    seed: int | None = None
    """``None`` for the same examples every run, else a Hypothesis seed."""
    held_back: int | None = None
    """The final grade's held-back seed (``CourseConfig.held_back_seed``, made of the course secret): every check
    that draws examples is graded on the default examples (those a student kit's answer bank answers) and again on
    examples drawn from a seed made of this one and the check's id, and earns its points only where it passes on
    both (``engine.run_one``). ``None``: the default examples only. Not with an answer bank (it holds no answers
    to those examples)."""
    device: str | None = None
    """Grade on this device only (default: cpu plus any accelerator found)."""
    only: tuple | None = None
    """Check ids to run (``"mha.equivalence"``)."""
    sealed: bool = False
    """Run student code in a worker process (sealed grading: see ``submission.worker``; ``CheckOptions.of``
    also takes it under its former name, ``isolated``)."""
    stand_ins: bool = False
    """In process, give isolated checks stand-ins for the reference's parts, answered in this process, as a sealed
    worker gives them (``submission.standin``; the tests use it), instead of the parts themselves."""
    allow_banned: bool = False
    """List banned APIs without withholding points."""
    banned: tuple | None = None
    """The banned API names (``None``: the course configuration's when it lists any, else the assignment's)."""
    config: object = None
    """A course configuration (``grader.config.CourseConfig``) or ``None``."""
    progress: object = None
    """``progress(i, n, spec)`` callback."""
    diagnose: bool = True
    """Replay failures through the assignment's known-bug catalogue."""
    bank: str | None = None
    """An answer bank file (``submission.bank``) to grade against instead of the reference: a kit that holds no
    reference. Every check runs over the submission's own parts; a check failing while a task beneath fails is
    blocked, not charged; a check asking what the bank does not hold is skipped and says so."""
    call_timeout: float | None = None
    """Sealed: seconds per probe call (``None``: the course configuration's, else ``DEFAULTS``)."""
    total_timeout: float | None = None
    """Sealed: seconds for the whole run (``None``: the course configuration's, else ``DEFAULTS``)."""
    memory_mb: int | None = None
    """Sealed: the worker's memory cap in MiB (``None``: the course configuration's, else ``DEFAULTS``)."""
    figures: bool = False
    """Also gather the data for the HTML report's pictures (``result.figures``)."""
    run_as: object = "auto"
    """Sealed: the worker's user (see ``WorkerRunner``; a batch judge gives each slot its own)."""
    spin_s: float | None = None
    """Sealed: seconds the judge and the worker poll for each other's next message before sleeping (``None``:
    ``WorkerRunner``'s default, a moment where there are two cores; a batch judge, sharing the cores, gives 0)."""
    shards: int | None = None
    """Sealed: how many judge processes share the checks (``None``: two where the workers are forked and there
    are two cores or more, see ``grader.shards``; a batch judge, sharing the cores, gives 1)."""
    snapshot: object = None
    """A ``submission.snapshot.Snapshot`` already made of the submission (the batch makes one per submission)."""
    command: str = "gradekit"
    """How the user runs gradekit, shell-quoted, at the front of each check's rerun command (the CLI gives the way
    it was started: ``scripts/gradekit``, ``gradekit``, ``.venv/bin/python -m grader``)."""
    rerun_options: tuple = ()
    """Options each rerun command repeats besides ``--only`` (the CLI gives those typed: ``--profile quick``...)."""
    lang: str | None = None
    """The language of the report (``None``: the course configuration's, else ``DEFAULTS``); in the result, the
    kit's only words are the marker where the submission's text was cut (``safetext.bound_result``)."""

    @classmethod
    def of(cls, options=None, **overrides):
        """``options`` (or the defaults) with ``overrides``; ``TypeError`` naming an unknown option. ``isolated``
        is taken as ``sealed`` (its former name; ``sealed`` wins where both are given), so that callers written
        before the rename still grade sealed."""
        if "isolated" in overrides:
            overrides.setdefault("sealed", overrides.pop("isolated"))
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; expected some of: {', '.join(sorted(known))}")
        return replace(options or cls(), **overrides)


@dataclass(frozen=True)
class Settings:
    """What one grading runs with, resolved (``grader.api.settings``): the assignment, and options whose every
    setting that a course configuration may give is filled in."""

    assignment: object
    """The ``grader.assignment.Assignment`` graded."""
    options: CheckOptions
    """``call_timeout``, ``total_timeout``, ``memory_mb``, ``lang`` and ``banned`` are never ``None`` here."""

    def _course(self, name, attribute):
        value = getattr(self.options.config, attribute, None)
        return value if value is not None else DEFAULTS[name].value

    @property
    def copy_policy(self):
        """The course's copy policy, else the default (a batch's, a Gradescope run's)."""
        return self._course("copy_policy", "copy_policy")

    @property
    def output_format(self):
        """How Gradescope renders the output: the course's ``[gradescope] output_format``, else the default."""
        return self._course("output_format", "gradescope_format")

    @property
    def limits(self):
        """``{"call_timeout": s, "total_timeout": s, "memory_mb": MiB}`` as graded."""
        return {k: getattr(self.options, k) for k in ("call_timeout", "total_timeout", "memory_mb")}


def resolved(options, assignment):
    """``options`` with each setting left ``None`` taken from its course configuration (``options.config``), else
    from ``DEFAULTS``; ``banned`` from the course, else ``assignment``'s list."""
    config = options.config
    limits = getattr(config, "limits", None) or {}

    def pick(name, course):
        given = getattr(options, name)
        return given if given is not None else course if course is not None else DEFAULTS[name].value

    banned = options.banned if options.banned is not None else (getattr(config, "banned", None) or assignment.banned)
    return replace(
        options,
        call_timeout=float(pick("call_timeout", limits.get("call_timeout"))),
        total_timeout=float(pick("total_timeout", limits.get("total_timeout"))),
        memory_mb=int(pick("memory_mb", limits.get("memory_mb"))),
        lang=pick("lang", getattr(config, "lang", None)),
        banned=tuple(banned),
    )
