"""The check registry and the context a check runs in.

A check is a function ``fn(ctx)`` registered with ``@check(task, name, ...)``.
It asks ``ctx.ref(...)`` and ``ctx.sub(...)`` to run probes, compares what
comes back, and raises ``Fail`` with a message key when the submission is
wrong. Property checks wrap an inner function with ``ctx.given(strategy)``:
Hypothesis draws the examples (derandomized unless a seed is given), shrinks
a failure to its minimal example, and the ``Fail`` of that minimal example is
what the student sees.
"""

import functools
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed

from grader.submission.errors import SubmissionError
from grader.submission.runner import PARTS_USED, Deferred


@dataclass(frozen=True)
class CheckSpec:
    """A registered check."""

    id: str
    """``"<task>.<name>"``."""
    task: str
    """The task id."""
    fn: object
    """``fn(ctx) -> None``; raises ``Fail``."""
    points: float
    """Points for passing."""
    weight: str = "integrated"
    """``"isolated"``: run on the submission's code for this task over the reference's parts."""
    examples: tuple = (4, 30)
    """Hypothesis examples in the quick and full profiles."""
    profiles: tuple = ("quick", "full")
    """Profiles that run this check."""
    doc: str = field(default="", compare=False)
    """What the check verifies (first line of the function's docstring)."""
    diagnose: bool = True
    """Replay failures on the known-bug mutants (off where one replay costs a training run)."""


REGISTRY = []


def check(task, name, *, points, weight="integrated", examples=(4, 30), profiles=("quick", "full"), diagnose=True):
    """Register ``fn`` as check ``<task>.<name>`` worth ``points``."""

    def register(fn):
        spec = CheckSpec(f"{task}.{name}", task, fn, points, weight, examples, profiles,
                         (fn.__doc__ or "").strip().split("\n")[0], diagnose)
        REGISTRY.append(spec)
        return fn

    return register


class Fail(Exception):
    """The submission is wrong: ``key`` names the sentence, ``params`` fill it in.

    ``example`` holds the minimal failing example for the report (config,
    shapes, first differing position, error figures), ``artifacts`` plain data
    for pictures.
    """

    def __init__(self, key, *, example=None, artifacts=None, **params):
        super().__init__(key)
        self.key = key
        self.params = params
        self.example = dict(example or {})
        self.artifacts = dict(artifacts or {})


# Failures that no other example would change: stop at once instead of shrinking.
ABORT_KINDS = frozenset({"timeout", "crashed", "not_implemented", "missing_file", "missing_name", "import_error"})


class Abort(BaseException):
    """Stop a property at once (a timeout, a crash, missing code): no shrinking, no more examples.

    A ``BaseException`` so that Hypothesis lets it through instead of shrinking.
    """

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class _Raise:
    """A submitted call that failed before it was sent: raises when its result is asked for."""

    def __init__(self, err):
        self.err = err

    def result(self):
        raise self.err

    def abandon(self):
        pass


class CheckContext:
    """What a running check can use: the two runners, the profile, the seed.

    Args:
        spec: the check being run.
        sub: runner for the submission.
        ref: runner for the reference.
        profile: ``"quick"`` or ``"full"``.
        seed: ``None`` for derandomized examples, else the Hypothesis seed.
        devices: devices to exercise besides ``meta`` (``["cpu"]``, plus ``"cuda"`` where present).
        variant: ``"integrated"`` or ``"isolated:<task>"`` for this run of the check.
    """

    def __init__(self, spec, *, sub, ref, profile="full", seed=None, devices=("cpu",), variant="integrated"):
        self.spec = spec
        self.sub_runner = sub
        self.ref_runner = ref
        self.profile = profile
        self.seed = seed
        self.devices = tuple(devices)
        self.variant = variant
        self.calls = []
        """The submission's probe calls of the last example run: ``(probe, args, result or SubmissionError)``."""
        self.artifacts = {}
        """Plain data for the report's pictures that a passing check wants to show (a loss curve)."""
        self.first_failing_calls = None
        """The calls of the first failing example, before Hypothesis shrank it."""
        self.parts_used = set()
        """Reference parts the submission's code used in this check's isolated calls."""
        self.isolated_calls = 0
        self.notes = []
        """``(message key, params)`` pairs the check wants shown with its verdict (how it adapted)."""

    def note(self, key, **params):
        """Record, once, how this check was graded where it adapted to the submission."""
        if (key, params) not in self.notes:
            self.notes.append((key, params))

    @property
    def max_examples(self):
        return self.spec.examples[0 if self.profile == "quick" else 1]

    def sub(self, probe, **args):
        """Run ``probe`` on the submission (this check's variant)."""
        return self._finish(probe, args, self._submit(probe, args))

    def ref(self, probe, **args):
        """Run ``probe`` on the reference."""
        return self.ref_runner.run(probe, "integrated", **args)

    def both(self, probe, *, ref_args=None, **args):
        """``(reference result, submission result)`` of ``probe`` with ``args`` (the reference's with
        ``ref_args`` when given). In a worker, the submission's side runs while this process computes
        the reference's; in-process, the reference's runs first, then the submission's."""
        pending = self._submit(probe, args)
        try:
            ref = self.ref(probe, **(args if ref_args is None else ref_args))
        except BaseException:
            pending.abandon()
            raise
        return ref, self._finish(probe, args, pending)

    def _submit(self, probe, args):
        submit = getattr(self.sub_runner, "submit", None)
        try:
            if submit is not None:
                return submit(probe, self.variant, **args)
            return Deferred(self.sub_runner.run, probe, self.variant, args)
        except SubmissionError as err:  # e.g. the time for all calls is used up: raised when collected
            return _Raise(err)

    def _finish(self, probe, args, pending):
        try:
            result = pending.result()
        except SubmissionError as err:
            self.calls.append((probe, args, err))
            if err.kind in ABORT_KINDS:
                raise Abort(err) from None
            raise
        if isinstance(result, dict) and PARTS_USED in result:
            self.parts_used.update(result.pop(PARTS_USED))
            self.isolated_calls += 1
        self.calls.append((probe, args, result))
        return result

    def given(self, *strategies):
        """Decorate an inner property; calling the result runs it over drawn examples."""

        def wrap(fn):
            @functools.wraps(fn)
            def one_example(*args, **kwargs):
                self.calls = []  # keep only the calls of the example being run (the minimal one, last)
                try:
                    return fn(*args, **kwargs)
                except BaseException:
                    if self.first_failing_calls is None:
                        self.first_failing_calls = list(self.calls)  # before shrinking: larger, more telling
                    raise

            test = given(*strategies)(one_example)
            test = settings(
                max_examples=self.max_examples,
                derandomize=self.seed is None,
                database=None,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                phases=(Phase.explicit, Phase.generate, Phase.shrink),
                report_multiple_bugs=False,
                print_blob=False,
                verbosity=Verbosity.quiet,
            )(test)
            if self.seed is not None:
                test = hypothesis_seed(self.seed)(test)
            return test

        return wrap
