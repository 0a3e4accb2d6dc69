"""``CheckOptions``: how one submission is graded, as one object (``api.check`` and the batch pass it along)."""

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class CheckOptions:
    """Every setting of a grading run other than the submission and the assignment."""

    tasks: tuple | None = None
    """Task ids to grade (``None``: all of the assignment's)."""
    profile: str = "full"
    """``"quick"`` (fewer examples) or ``"full"``."""
    seed: int | None = None
    """``None`` for the same examples every run, else a Hypothesis seed."""
    device: str | None = None
    """Grade on this device only (default: cpu plus any accelerator found)."""
    only: tuple | None = None
    """Check ids to run (``"mha.equivalence"``)."""
    isolated: bool = False
    """Run student code in a worker process (sealed: see ``submission.worker``)."""
    stand_ins: bool = False
    """In process, give isolated checks stand-ins for the reference's parts, answered in this process, as a sealed
    worker gives them (``submission.standin``; the tests use it), instead of the parts themselves."""
    allow_banned: bool = False
    """List banned APIs without withholding points."""
    banned: tuple | None = None
    """The banned API names (``None``: the course configuration's, else the assignment's)."""
    config: object = None
    """A course configuration (``grader.config.CourseConfig``) or ``None``."""
    progress: object = None
    """``progress(i, n, spec)`` callback."""
    diagnose: bool = True
    """Replay failures through the assignment's known-bug catalogue."""
    call_timeout: float = 60.0
    """Isolated: seconds per probe call."""
    total_timeout: float = 900.0
    """Isolated: seconds for the whole run."""
    memory_mb: int | None = None
    """Isolated: the worker's memory cap in MiB (``None``: the worker's default)."""
    figures: bool = False
    """Also gather the data for the HTML report's pictures (``result.figures``)."""
    run_as: object = "auto"
    """Isolated: the worker's user (see ``WorkerRunner``; a batch judge gives each slot its own)."""
    spin_s: float | None = None
    """Isolated: seconds the judge and the worker poll for each other's next message before sleeping (``None``:
    ``WorkerRunner``'s default, a moment where there are two cores; a batch judge, sharing the cores, gives 0)."""
    snapshot: object = None
    """A ``submission.snapshot.Snapshot`` already made of the submission (the batch makes one per submission)."""
    command: str = "gradekit"
    """How the user runs gradekit, shell-quoted, at the front of each check's rerun command (the CLI gives the way
    it was started: ``scripts/gradekit``, ``gradekit``, ``.venv/bin/python -m grader``)."""
    rerun_options: tuple = ()
    """Options each rerun command repeats besides ``--only`` (the CLI gives those typed: ``--profile quick``...)."""
    lang: str = "en"
    """The language of the report, for the only words of the kit's that the result holds: the marker where the
    submission's text was cut (``safetext.bound_result``)."""

    @classmethod
    def of(cls, options=None, **overrides):
        """``options`` (or the defaults) with ``overrides``; ``TypeError`` naming an unknown option."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; expected some of: {', '.join(sorted(known))}")
        return replace(options or cls(), **overrides)
