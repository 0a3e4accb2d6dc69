"""The results object: the single source every view (terminal, JSON, JUnit, Gradescope, HTML) reads.

Messages are stored as a key into the message catalogue plus parameters, so
each view renders them in the language it was asked for.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


def _known(cls: type, data: dict) -> dict[str, Any]:
    """The entries of ``data`` that are fields of the dataclass ``cls``."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass
class Message:
    """A user-facing sentence: a catalogue key and the values it needs."""

    key: str
    """Key in ``grader/messages`` (``"fail.mismatch"``)."""
    params: dict = field(default_factory=dict)
    """Values substituted into the sentence (shapes, numbers, names; never reference values)."""

    @classmethod
    def of(cls, value):
        """``value`` as a ``Message``: itself, or one read back from its dict form (a result from JSON)."""
        return value if isinstance(value, cls) else cls(value.get("key", ""), value.get("params", {}))


@dataclass
class Diagnosis:
    """A known bug whose behaviour matches the submission's, or a hint read from the error's shape."""

    id: str
    """The bug id (``"sdpa.scale_d_model"``) or hint id (``"hint.constant_factor"``)."""
    kind: str = "bug"
    """``"bug"`` (a catalogued mutation reproduces the output) or ``"hint"`` (a pattern in the error)."""
    params: dict = field(default_factory=dict)
    """Values for the hint's sentence."""

    @classmethod
    def from_dict(cls, data: dict) -> Diagnosis:
        """A diagnosis read back from its dict form (``asdict``)."""
        return cls(**_known(cls, data))


@dataclass
class CheckResult:
    """The verdict of one check."""

    id: str
    """``"<task>.<name>"``, e.g. ``"mha.equivalence"``."""
    task: str
    """The task id."""
    status: str
    """``"passed"``, ``"failed"`` (wrong result), ``"error"`` (the code raised or could not load), ``"skipped"`` (a
    student kit could not judge it: no points earned; the final grade judges it)."""
    score: float
    """Points earned."""
    max_score: float
    """Points available."""
    message: Message | None = None
    """Why it failed (``None`` when passed)."""
    example: dict = field(default_factory=dict)
    """The minimal failing example: config, shapes, first differing position, max abs/rel error."""
    error: dict | None = None
    """A ``SubmissionError`` as a dict when student code raised or broke the contract."""
    diagnoses: list = field(default_factory=list)
    """``Diagnosis`` objects, most likely first."""
    reproduce: str = ""
    """A command that reruns exactly this check."""
    duration_s: float = 0.0
    """Wall time of the check."""
    visibility: str = "visible"
    """``"visible"``, ``"hidden"`` or ``"after_published"`` (course configuration)."""
    variant: str = "integrated"
    """``"integrated"`` (all the student's parts) or ``"isolated"`` (reference parts beneath): the check's
    ``CheckSpec.variant``."""
    artifacts: dict = field(default_factory=dict)
    """Extra plain data for pictures (loss curves, attention maps, mismatch maps)."""
    notes: list = field(default_factory=list)
    """``Message`` objects: how the check was graded when that differs from its description (your parts could
    not be isolated; the reference's missing biases were set to zero...), shown whatever the status."""
    sets: dict = field(default_factory=dict)
    """In a final grade with held-back examples: the check's status on each set of examples, ``{"kit": status,
    "held_back": status}`` (the default examples, those a student kit's answer bank answers, and the held-back
    ones; ``held_back`` absent for a check that draws no examples, whose questions are the same on both); empty
    otherwise. ``status`` passes only where both passed."""

    @classmethod
    def from_dict(cls, data: dict) -> CheckResult:
        """A check's result read back from its dict form (``asdict``, through JSON)."""
        values = _known(cls, data)
        values["message"] = Message.of(data["message"]) if data.get("message") is not None else None
        values["diagnoses"] = [Diagnosis.from_dict(d) for d in data.get("diagnoses") or ()]
        values["notes"] = [Message.of(n) for n in data.get("notes") or ()]
        return cls(**values)


@dataclass
class TaskResult:
    """All checks of one task."""

    id: str
    """The task id."""
    score: float
    """Points earned (0 when a banned API was used in this task)."""
    max_score: float
    """Points available."""
    checks: list = field(default_factory=list)
    """``CheckResult`` objects."""
    not_implemented: bool = False
    """Every failing check failed because the code raises ``NotImplementedError``."""
    blocked_by: list = field(default_factory=list)
    """Failing tasks beneath this one, when only its integrated checks fail."""
    banned: list = field(default_factory=list)
    """Banned-API findings in this task (dicts)."""

    @classmethod
    def from_dict(cls, data: dict) -> TaskResult:
        """A task's result read back from its dict form (``asdict``, through JSON)."""
        values = _known(cls, data)
        values["checks"] = [CheckResult.from_dict(c) for c in data.get("checks") or ()]
        return cls(**values)


@dataclass
class GradeResult:
    """Everything ``gradekit check`` found about one submission."""

    submission: str
    """The graded folder."""
    score: float
    """Total points earned."""
    max_score: float
    """Total points available."""
    seed: int
    """``None`` when derandomized (the default); else the ``--seed`` value."""
    profile: str
    """``"quick"`` or ``"full"``."""
    duration_s: float
    """Wall time of the whole run."""
    tasks: list = field(default_factory=list)
    """``TaskResult`` objects, in contract order."""
    banned_api: list = field(default_factory=list)
    """Every banned-API finding (dicts with name, file, line, code, task)."""
    load_errors: dict = field(default_factory=dict)
    """Contract file -> ``SubmissionError`` dict for files that failed to import."""
    environment: dict = field(default_factory=dict)
    """Python, torch, platform, devices, gradekit version, when."""
    sealed: bool = False
    """Whether student code ran in a worker process (sealed grading)."""
    jailed: bool = False
    """Whether that worker was jailed under a uid of its own, which needs the grader to run as root (docs:
    SEALED.md). A sealed grading by an ordinary user is not: the worker ran as that user."""
    banked: bool = False
    """Whether the reference's answers came from an answer bank (``--bank``, or a student kit, which holds no
    reference): checks those answers cannot judge are ``"skipped"`` (not judged, no points earned: ``unjudged``), and
    no mistake is named."""
    hidden_checks: int = 0
    """How many checks were hidden from this run by the course configuration."""
    allow_banned: bool = False
    """Whether banned APIs were allowed in this run (findings are listed, no points withheld)."""
    figures: dict = field(default_factory=dict)
    """Plain data for the report's pictures, from the assignment's ``figures``: ``{"heatmaps": [figure, ...]}``, the
    generic heat-map figures ``docs/ASSIGNMENTS.md`` (*Pictures*) describes."""
    assignment: str = ""
    """The name of the assignment graded (``"transformer"``)."""
    refused: list = field(default_factory=list)
    """Entries of the submission folder that were not graded (links, special files, files over the caps,
    names that are not UTF-8): dicts ``{path, kind, size, limit}`` from ``submission.snapshot``."""
    output_dropped: int = 0
    """Calls into the submission that printed more than the output cap: the rest of their output was dropped
    (printing costs no points; only time and memory limits do)."""
    held_back: dict | None = None
    """A final grade with held-back examples (``CheckOptions.held_back``): ``{"kit": [passed, checks], "held_back":
    [passed, checks]}``, how many checks passed on the default examples (every check) and on the held-back ones (the
    checks that draw examples); ``None``: graded on the default examples only."""
    settings: dict = field(default_factory=dict)
    """What the grading ran with, as every door resolves it (``grader.api.settings``): ``limits`` (the call and
    total time limits in seconds, the worker's memory cap in MiB), ``lang`` and ``banned``."""

    def to_dict(self):
        return asdict(self)

    @property
    def unjudged(self):
        """The points of the checks a student kit could not judge (status ``"skipped"``, none of them earned): the
        final grade judges them."""
        return round(sum(c.max_score for t in self.tasks for c in t.checks if c.status == "skipped"), 4)

    @classmethod
    def from_dict(cls, data: dict) -> GradeResult:
        """The result ``to_dict`` gave, read back (through JSON too: lists where it held tuples, which every view
        shows alike): what a batch saves of a grading and renders the student's files from."""
        values = _known(cls, data)
        values["tasks"] = [TaskResult.from_dict(t) for t in data.get("tasks") or ()]
        return cls(**values)

    @property
    def held_back_counts(self):
        """``held_back`` as a sentence's parameters (``kit``, ``kit_total``, ``held``, ``held_total``: the
        ``ui.held_back`` sentences'), or ``None`` without held-back examples."""
        counts = self.held_back
        if not counts:
            return None
        (kit, kit_total), (held, held_total) = counts["kit"], counts["held_back"]
        return {"kit": kit, "kit_total": kit_total, "held": held, "held_total": held_total}

    @property
    def passed(self):
        """Every check passed and no points were withheld (a banned API withholds them)."""
        return all(c.status == "passed" for t in self.tasks for c in t.checks) and self.score >= self.max_score
