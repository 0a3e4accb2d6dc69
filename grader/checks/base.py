"""The check registry and the context a check runs in.

A check is a function ``fn(ctx)`` registered with ``@check(task, name, ...)``
in one of an assignment's check modules (``Assignment.checks``). It asks
``ctx.ref(...)`` and ``ctx.sub(...)`` to run probes, compares what comes back,
and raises ``Fail`` with a message key when the submission is wrong. A property
check names its strategy: ``@check(task, name, given=strategy)`` on
``fn(ctx, case)``; Hypothesis draws the cases (from a seed made of the check's id
and the property's name unless ``--seed`` gives one: the examples stay the same
when the check's text is reformatted or reworded), shrinks a failure to its minimal example, and the ``Fail`` of that
minimal example is what the student sees. (``ctx.given(strategy)`` does the
same for a property that needs the context to build its strategy.)
"""

import contextlib
import functools
import hashlib
import math
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, currently_in_test_context, given, reject, settings
from hypothesis import seed as hypothesis_seed

from grader.checks.fail import Fail
from grader.errors import SubmissionError, said
from grader.submission.bank import BankRunner, NotInBank
from grader.submission.inprocess import PARTS_USED, Deferred

__all__ = ["ABORT_KINDS", "Abort", "CheckContext", "CheckSpec", "Fail", "ReferenceFailed", "check", "specs_of"]


_REFERENCE_MEMOS: list[dict] = []
"""Every dict ``reference_memo`` has handed out."""


def reference_memo() -> dict:
    """A new dict, kept for the life of the process, for what the reference answered that every later grading may
    reuse (a module's parameter names and shapes): later gradings then do not ask the reference again.

    A check keeps such answers only in a dict made here: ``forget_reference_memos`` empties every one, so that a
    recording of the reference's answers (``kit.record``) hears every question a grading asks, whatever this
    process graded before."""
    memo: dict = {}
    _REFERENCE_MEMOS.append(memo)
    return memo


def forget_reference_memos():
    """Empty every dict of ``reference_memo``: the next grading asks the reference all it needs."""
    for memo in _REFERENCE_MEMOS:
        memo.clear()


class _PassedOver(BaseException):  # noqa: N818 - what happened to the case, as NotInBank says what happened
    """An explicit case (``CheckContext.explicit``) whose answers a kit's bank does not hold: no evidence either
    way, passed over as Hypothesis passes over a drawn example it rejects."""


@contextlib.contextmanager
def without_local_constants():
    """While open, Hypothesis draws no constants from the source of local modules.

    Now and then Hypothesis draws a literal it found in a loaded module that lies outside site-packages: which
    modules are loaded (the kit from a clone or installed, the submission's own files) then changes the examples.
    An answer bank (``submission.bank``) is recorded and read on examples that must be the same in a clone, in an
    installed student kit and with any submission, so its gradings run inside this. It replaces Hypothesis's own
    (private) hook for those constants; a Hypothesis without that hook draws none anyway."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis laid out otherwise has no such hook to replace
        providers = None
    hook = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if hook is None or cache is None:
        yield
        return
    none = providers.Constants()
    providers._get_local_constants = lambda: none
    cache.clear()  # the pools made with the local constants
    try:
        yield
    finally:
        providers._get_local_constants = hook
        cache.clear()


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
    variant: str = "integrated"
    """``"integrated"``: the submission's code throughout; ``"isolated"``: the submission's code for this task over
    the reference's parts for everything it builds on (graded once per variant; see ``engine.variant_of``)."""
    examples: tuple = (4, 30)
    """Hypothesis examples in the quick and full profiles."""
    profiles: tuple = ("quick", "full")
    """Profiles that run this check."""
    doc: str = field(default="", compare=False)
    """What the check verifies (first line of the function's docstring)."""
    diagnose: bool = True
    """Replay failures on the known-bug mutants (off where one replay costs a training run)."""


REGISTRY = []
"""Every check registered so far, of every assignment loaded; ``specs_of(modules)`` picks an assignment's."""


def check(
    task, name, *, points, variant="integrated", examples=(4, 30), profiles=("quick", "full"), diagnose=True, given=None
):
    """Register ``fn`` as check ``<task>.<name>`` worth ``points``.

    With ``given`` (a Hypothesis strategy, or a tuple of them) ``fn(ctx, *case)`` is a property: it runs once per
    drawn case, as ``ctx.given`` runs it. Without, ``fn(ctx)`` runs once."""
    if variant not in ("integrated", "isolated"):
        raise ValueError(f"check {task}.{name}: variant must be 'integrated' or 'isolated', got {variant!r}")
    strategies = () if given is None else tuple(given) if isinstance(given, (tuple, list)) else (given,)

    def register(fn):
        run = fn
        if strategies:

            @functools.wraps(fn)
            def run(ctx):
                ctx.given(*strategies)(functools.partial(fn, ctx))()

        spec = CheckSpec(
            f"{task}.{name}",
            task,
            run,
            points,
            variant,
            examples,
            profiles,
            (fn.__doc__ or "").strip().split("\n")[0],
            diagnose,
        )
        REGISTRY.append(spec)
        return fn

    return register


def specs_of(modules):
    """The checks registered by ``modules`` (imported modules), in registration order."""
    names = {m.__name__ for m in modules}
    return [s for s in REGISTRY if s.fn.__module__ in names]


# Failures that no other example would change: stop at once instead of shrinking.
ABORT_KINDS = frozenset({"timeout", "crashed", "not_implemented", "missing_file", "missing_name", "import_error"})

SLOWER_THAN_REFERENCE = 50.0
"""A call of the submission's that ``CheckContext.both`` pairs with the reference's is stopped once it has taken this
many times the reference's time on the same call (``RELATIVE_FLOOR`` at least): an endless loop costs seconds, not
the whole call limit, while code 50 times slower than the reference on these small inputs still finishes."""
RELATIVE_FLOOR = 10.0
"""Seconds a paired call may always take, however fast the reference was (a first call imports and warms up)."""


class Abort(BaseException):
    """Stop a property at once (a timeout, a crash, missing code): no shrinking, no more examples.

    A ``BaseException`` so that Hypothesis lets it through instead of shrinking.
    """

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class ReferenceFailed(BaseException):
    """The reference raised on a probe: the assignment (its reference or this check) is at fault, not the student.

    A ``BaseException`` like ``Abort``, so that Hypothesis neither shrinks it nor reports it as the submission's."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class _Raise:
    """A submitted call that failed before it was sent: raises when its result is asked for."""

    def __init__(self, err):
        self.err = err

    def result(self, within=None):
        raise self.err

    def abandon(self):
        pass


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _runners_limit(limit):
    """Whether ``limit`` (a timeout's ``data["limit"]``) is a per-call limit as the runners write it: plain finite
    seconds. A submission can raise the grader's ``SubmissionError`` itself, with any data; what is not plainly a
    runner's is not remembered as a call that ran out of time."""
    return (
        isinstance(limit, dict)
        and "again" not in limit
        and _number(limit.get("seconds"))
        and (limit.get("of_total") is None or _number(limit.get("of_total")))
    )


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
        fresh: ``None`` to grade; else ``(examples, seed)``: run the check's properties on that many new examples
            drawn from that seed, none shrunk, and keep every call of every example in ``all_calls`` (the fresh
            evidence a diagnosis is confirmed on; see ``grader.bugs.diagnose``).
        timed_out: ``{(variant, probe, contract name): (check id, seconds)}``, shared by the checks of one grading
            (``engine.Grading.timed_out``): the calls that ran out of time, so that later checks do not wait again.
        memo: a dict shared by the checks of one grading (``engine.Grading.memo``): what they find out once about
            the submission (the biases its modules lack...), each under keys of its own. State lives here, not on
            the runners.
    """

    def __init__(
        self,
        spec,
        *,
        sub,
        ref,
        profile="full",
        seed=None,
        devices=("cpu",),
        variant="integrated",
        fresh=None,
        timed_out=None,
        memo=None,
    ):
        self.spec = spec
        self.sub_runner = sub
        self.ref_runner = ref
        self.profile = profile
        self.seed = seed
        self.devices = tuple(devices)
        self.variant = variant
        self.fresh = fresh
        self.timed_out = {} if timed_out is None else timed_out
        self.memo = {} if memo is None else memo
        self.calls = []
        """The submission's probe calls of the last example run: ``(probe, args, result or SubmissionError)``."""
        self.all_calls = []
        """With ``fresh``: every probe call of the submission, in order."""
        self.drew = False
        """Whether a property drew examples (a check without one makes the same calls every run)."""
        self.artifacts = {}
        """Plain data for the report's pictures that a passing check wants to show (a loss curve)."""
        self.first_failing_calls = None
        """The calls of the first failing example, before Hypothesis shrank it."""
        self.first_failure = None
        """The first example's failure (``Fail`` or ``SubmissionError``), before Hypothesis shrank it."""
        self.unjudged = []
        """In a kit without the reference: the probes of the drawn examples, before any failed, that asked what the
        answer bank does not hold (``given``); a check passing every other example is not judged (``engine``)."""
        self.shrunk_in_bank = False
        """Whether shrinking passed over examples whose answers the bank does not hold (the smallest failing
        example shown is then the smallest the bank holds)."""
        self.parts_used = set()
        """Reference parts the submission's code used in this check's isolated calls."""
        self.isolated_calls = 0
        self.notes = []
        """``(message key, params)`` pairs the check wants shown with its verdict (how it adapted)."""
        self._properties = {}
        """How many properties of each name this context has made (``given``): each draws from a seed of its own."""

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
        """Run ``probe`` on the reference; ``ReferenceFailed`` if the reference raises."""
        try:
            return self.ref_runner.run(probe, "integrated", **args)
        except SubmissionError as err:
            raise ReferenceFailed(err) from None

    def ref_ahead(self, probe, **args):
        """Where this grading records an answer bank: ask the reference ``probe`` now, its answer unused. For a
        question a check asks only on a failing path (what the reference answers once a submission's output
        differs): the bank then holds it for every example, not only for those a recorded submission failed, and a
        kit decides any submission's failing path as the full kit does. Elsewhere it asks nothing."""
        if self.records:
            self.ref(probe, **args)

    @property
    def kit(self):
        """Whether this run grades against a student kit's answer bank: there are no reference parts, and a check
        declared isolated runs over the submission's own (``engine.Grading.banked``)."""
        return isinstance(self.ref_runner, BankRunner)

    @property
    def records(self):
        """Whether this grading records an answer bank (``ref_ahead``)."""
        return bool(getattr(self.ref_runner, "records", False))

    def both(self, probe, *, ref_args=None, **args):
        """``(reference result, submission result)`` of ``probe`` with ``args`` (the reference's with
        ``ref_args`` when given). In a worker, the submission's side runs while this process computes
        the reference's; in-process, the reference's runs first, then the submission's."""
        pending = self._submit(probe, args)
        started = time.monotonic()
        try:
            ref = self.ref(probe, **(args if ref_args is None else ref_args))
        except BaseException:
            pending.abandon()
            raise
        took = time.monotonic() - started
        took = getattr(self.ref_runner, "last_seconds", None) or took  # a remembered answer: the time it took then
        within = max(RELATIVE_FLOOR, SLOWER_THAN_REFERENCE * took)
        return ref, self._finish(probe, args, pending, within=within, reference_s=took)

    def _submit(self, probe, args):
        earlier = self.timed_out.get((self.variant, probe, args.get("name")))
        if earlier is not None:  # the same code ran out of time in an earlier check: not waited for again
            check, seconds = earlier
            error = said("say.timeout_again", probe=repr(probe), check=check)
            return _Raise(
                SubmissionError(
                    kind="timeout",
                    detail=error["detail"],
                    data={**error["data"], "limit": {"again": check, "seconds": seconds}},
                )
            )
        submit = getattr(self.sub_runner, "submit", None)
        try:
            if submit is not None:
                return submit(probe, self.variant, **args)
            return Deferred(self.sub_runner.run, probe, self.variant, args)
        except SubmissionError as err:  # e.g. the time for all calls is used up: raised when collected
            return _Raise(err)

    def _finish(self, probe, args, pending, *, within=None, reference_s=None):
        try:
            try:
                result = pending.result() if within is None else pending.result(within=within)
            except ReferenceFailed as forged:  # raised on the submission's side: its own code, not the reference
                raise SubmissionError(kind="exception", **said("say.reference_failed", error=str(forged))) from None
        except SubmissionError as err:
            limit = err.data.get("limit") if err.kind == "timeout" and isinstance(err.data, dict) else None
            if _runners_limit(limit):
                if limit.get("relative"):
                    limit["reference"] = reference_s
                self.timed_out[self.variant, probe, args.get("name")] = (self.spec.id, limit["seconds"])
            self.calls.append((probe, args, err))
            if self.fresh is not None:
                self.all_calls.append((probe, args, err))
            if err.kind in ABORT_KINDS:
                raise Abort(err) from None
            raise
        if isinstance(result, dict) and PARTS_USED in result:
            self.parts_used.update(result.pop(PARTS_USED))
            self.isolated_calls += 1
        self.calls.append((probe, args, result))
        if self.fresh is not None:
            self.all_calls.append((probe, args, result))
        return result

    def given(self, *strategies, explicit=()):
        """Decorate an inner property; calling the result runs it over drawn examples, then on each case of
        ``explicit`` (a tuple of arguments for each: cases the strategies draw too rarely to rely on, such as equal
        lengths where they usually differ on purpose). The explicit cases run after Hypothesis, not through it, so
        the drawn examples are the same with or without them; a failing one is shown as it is, not shrunk."""

        def wrap(fn):
            @functools.wraps(fn)
            def one_example(*args, **kwargs):
                self.calls = []  # keep only the calls of the example being run (the minimal one, last)
                try:
                    return fn(*args, **kwargs)
                except NotInBank as miss:
                    # A kit without the reference: an example whose answers the bank does not hold is no evidence
                    # either way. Shrinking passes over it (the smallest failing example shown is the smallest the
                    # bank holds); before any failure the others are still drawn, up to max_examples such examples.
                    if self.fresh is not None:
                        raise
                    if self.first_failing_calls is not None:
                        self.shrunk_in_bank = True
                    else:
                        self.unjudged.append(miss.probe)
                        if len(self.unjudged) >= self.max_examples:
                            raise
                    if not currently_in_test_context():  # an explicit case (``explicit``): passed over there
                        raise _PassedOver() from None
                    reject()
                except BaseException as exc:
                    if self.fresh is not None and isinstance(exc, (Fail, SubmissionError)):
                        return None  # fresh evidence: every example's calls, failing or not
                    if self.first_failing_calls is None:
                        self.first_failing_calls = list(self.calls)  # before shrinking: larger, more telling
                        if isinstance(exc, (Fail, SubmissionError)):
                            self.first_failure = exc
                    raise

            self.drew = True
            if self.fresh is not None:  # new examples from a seed of their own, none shrunk
                examples, seed = self.fresh
                drawing = {"max_examples": examples, "derandomize": False, "phases": (Phase.generate,)}
            else:
                seed = self.seed if self.seed is not None else self._property_seed(fn)
                drawing = {
                    "max_examples": self.max_examples,
                    "derandomize": False,
                    "phases": (Phase.explicit, Phase.generate, Phase.shrink),
                }
            test = settings(
                **drawing,
                database=None,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                report_multiple_bugs=False,
                print_blob=False,
                verbosity=Verbosity.quiet,
            )(given(*strategies)(one_example))
            test = hypothesis_seed(seed)(test)
            if not explicit:
                return test

            def drawn_then_explicit():
                test()
                self.explicit(test, *explicit)

            return drawn_then_explicit

        return wrap

    def _property_seed(self, fn):
        """The seed of a property's examples when no ``--seed`` is given: made of the check's id, the property's
        name and how many of that name this check made before, never of its source text (which Hypothesis's own
        derandomizing hashes: reformatting a check would change what every submission is graded on)."""
        name = getattr(getattr(fn, "func", fn), "__name__", "property")
        k = self._properties.get(name, 0)
        self._properties[name] = k + 1
        digest = hashlib.sha256(f"{self.spec.id}/{name}/{k}".encode()).digest()
        return int.from_bytes(digest[:8], "big")

    def explicit(self, prop, *cases):
        """Run the property ``prop`` (made by ``given``) on each of ``cases`` (tuples of its arguments), after its
        drawn examples: not through Hypothesis, so that the examples it draws stay the same; skipped when gathering
        fresh evidence."""
        if self.fresh is not None:
            return
        for case in cases:
            try:
                prop.hypothesis.inner_test(*case)
            except _PassedOver:  # its answers are not in the kit's bank (``unjudged``)
                continue
