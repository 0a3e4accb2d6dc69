"""Run an assignment's checks against a submission and collect a ``GradeResult``.

``grade(grading, ...)`` takes a ``Grading``: the assignment, the two runners and the options of this run. The
probe calls each check made (what diagnosis replays) stay inside the engine: ``run_one`` returns them beside
the result, never on it.
"""

import functools
import hashlib
import platform
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

import hypothesis
import hypothesis.errors
import torch

import grader
from grader.assignment import AssignmentError
from grader.checks.base import Abort, CheckContext, CheckSpec, Fail, ReferenceFailed, specs_of
from grader.errors import SubmissionError, sentence
from grader.results import CheckResult, GradeResult, Message, TaskResult
from grader.submission.bank import NotInBank


@dataclass
class Grading:
    """What one grading run needs besides the checks: the assignment, the runners, and how to run."""

    assignment: object
    """The ``grader.assignment.Assignment`` graded."""
    sub: object
    """The runner for the submission (``InProcessRunner`` or ``WorkerRunner``)."""
    ref: object
    """The runner for the reference."""
    profile: str = "full"
    seed: int | None = None
    devices: list = field(default_factory=lambda: ["cpu"])
    reproduce: Callable[[CheckSpec], str] | None = None
    """``reproduce(spec)`` -> the command that reruns one check (or ``None``)."""
    timed_out: dict = field(default_factory=dict)
    """The submission's calls that ran out of time in this grading (``CheckContext``'s ``timed_out``)."""
    shards: int = 1
    """How many judge processes grade the checks (2: a second one forked from this, ``grader.shards``)."""
    memo: dict = field(default_factory=dict)
    """What the checks of this grading find out once about the submission and look up after (``CheckContext``'s
    ``memo``)."""
    held_back: int | None = None
    """The final grade's held-back seed (``CheckOptions.held_back``): each check that draws examples is graded again
    on examples of a seed of its own made of this one (``held_back_seed``) and keeps its points only where it passes
    on both sets (``_run_variant``); ``None``: the default examples only."""
    banked: bool = False
    """The reference's answers come from an answer bank (``submission.bank``): there are no reference parts to
    isolate a task with, so every check runs over the submission's own parts, and a check that fails while a task
    beneath fails is blocked by it (not charged: the final grade isolates it)."""

    replay: object = None
    """With ``banked``: the bank's record of the reference's parts (``submission.replay.Replay``), over which
    a check blocked by a task beneath is graded as the full kit grades it, where every call it makes is recorded."""
    isolate: frozenset = frozenset()
    """Tasks every check of which runs over the reference's parts (while a bank records them: ``kit.record``)."""
    isolate_as: dict = field(default_factory=dict)
    """``{task: task beneath}``: with ``recording``, the checks of such a task run in the other's isolated variant."""
    recording: object = None
    """With ``isolate``: the ``submission.replay.Log`` those parts record their calls in."""
    failing: set = field(default_factory=set)
    """Tasks a check of which has failed so far in this grading (checks run in ``_variant_rank`` order)."""
    replayed: set = field(default_factory=set)
    """Ids of the checks whose result came from ``replay`` (graded in their task's isolated variant)."""

    def variant(self, spec: CheckSpec) -> str:
        """The variant ``spec`` is graded in here (``variant_of``; always integrated when ``banked``)."""
        if self.banked:
            return "integrated"
        if spec.task in self.isolate_as:
            return f"isolated:{self.isolate_as[spec.task]}"
        if spec.task in self.isolate and self.assignment.all_deps(spec.task):  # type: ignore[attr-defined]
            return f"isolated:{spec.task}"
        return variant_of(self.assignment, spec)

    def command(self, spec: CheckSpec) -> str:
        return self.reproduce(spec) if self.reproduce else ""


def available_devices(requested=None):
    """``["cpu"]`` plus ``cuda`` and ``mps`` when present, or just ``requested``."""
    if requested:
        return [requested]
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def environment(devices):
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "devices": devices,
        "gradekit": grader.__version__,
        "hypothesis": hypothesis.__version__,
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def checks_of(assignment):
    """The ``CheckSpec`` of every check of ``assignment``, in task order, then in definition order."""
    specs = specs_of(assignment.import_checks())
    order = {t: i for i, t in enumerate(assignment.task_ids)}
    unknown = sorted({s.task for s in specs} - set(order))
    if unknown:
        raise AssignmentError(
            f"assignment {assignment.name!r}: checks name unknown task(s) {', '.join(unknown)}; "
            f"expected some of: {', '.join(assignment.task_ids)}"
        )
    return sorted(specs, key=lambda s: order[s.task])  # stable: definition order within a task


def select_checks(assignment, *, tasks=None, profile="full", only=None, config=None):
    """The ``CheckSpec``s of ``assignment`` to run, in task order; ``only``: check ids or task ids (a task's every
    check)."""
    return select(assignment, tasks=tasks, profile=profile, only=only, config=config)[0]


def select(assignment, *, tasks=None, profile="full", only=None, config=None):
    """``(specs, selection)``: the checks to run (as ``select_checks``) and the course's ``Selection`` they were
    taken from (``None`` without a course configuration), which weighs their points."""
    specs = [s for s in checks_of(assignment) if profile in s.profiles]
    if only:
        only = {s.id for s in specs if s.id in only or s.task in only}
    if tasks:
        specs = [s for s in specs if s.task in tasks]
    if only:  # the course weighs a check against its task's other checks: those go through its filter too
        specs = [s for s in specs if s.task in {o.task for o in specs if o.id in only}]
    selection = None
    if config is not None:
        selection = config.select(specs)
        specs = list(selection.graded)
    if only:
        specs = [s for s in specs if s.id in only]
    return specs, selection


def _charge_once(g, specs, slots, calls):
    """A check of a task's own work over the submission's parts that fails while a task beneath fails is run
    again over the reference's parts; if it passes there, the defect is beneath, charged in its own task: this
    check keeps its points and names the task beneath. Tasks are taken bottom-up, so that a task failing only
    because of one beneath it is not named in turn. (Not for time-outs and crashes, which a re-run would only
    repeat.)

    A task with no code of its own (``overfit``: the whole learning) is then graded again over the reference's parts
    of the smallest passing task beneath it that holds every task still failing (``_mending_task``): if the
    submission's whole learns with those, the defects are charged where they are, once.

    A grading of some tasks (``--tasks``, ``--only``) charges as the whole grading would: where a check fails and no
    task beneath it graded here fails, the tasks beneath that this grading left out are graded too (once each,
    unreported: ``_failing_unchecked``), and those failing count as failing here."""
    a = g.assignment
    failing = {r.task for r in slots if r.status != "passed"}
    graded = {s.task for s in specs}
    unchecked_results: dict[str, bool] = {}

    def beneath_of(task):
        here = [d for d in a.all_deps(task) if d in failing]
        if here:
            return here
        elsewhere = _failing_left_out(g, task, graded, unchecked_results)
        failing.update(elsewhere)
        return elsewhere

    for task in a.task_ids:
        if not a.task_by_id[task].names or task not in failing:
            continue
        for i, (spec, r) in enumerate(zip(specs, slots)):
            if spec.task != task or r.status == "passed" or variant_of(a, spec) != "integrated":
                continue
            if not _worth_again(r):
                continue
            beneath = beneath_of(task)
            if not beneath:
                continue
            note = Message("note.charged_beneath", {"tasks": ", ".join(beneath)})
            _keep_if_it_passes(g, spec, i, f"isolated:{task}", note, slots, calls)
        if task in graded and all(r.status == "passed" for r in slots if r.task == task):
            failing.discard(task)  # (a task left out but failing, counted above, has no check here to pass)
    for task in a.task_ids:
        if a.task_by_id[task].names or task not in failing:
            continue
        if not _fails_worth_again(task, specs, slots):
            continue
        beneath = beneath_of(task)
        mending = _mending_task(a, task, beneath, failing)
        if mending is None:
            continue
        note = _whole_note(a, beneath, mending)
        for i, (spec, r) in enumerate(zip(specs, slots)):
            if spec.task == task and r.status != "passed" and _worth_again(r):
                _keep_if_it_passes(g, spec, i, f"isolated:{mending}", note, slots, calls)


def _blocked(g, specs, slots, calls):
    """``_charge_once`` without the reference's parts (``Grading.banked``): a check that fails while a task beneath
    it is charged cannot be told apart from a check failing only because of that task, so it is blocked by it:
    marked ``"skipped"`` (not judged: no points earned here; the final grade, which has the reference, isolates it),
    and a note names the task to fix first; where the bank recorded the reference's parts beneath, the check is
    graded over that record instead (``_replayed``), as the full kit grades it. Tasks are taken bottom-up; a task
    whose failures are all blocked blocks nothing in turn. Time-outs and crashes are charged where they happen, as
    the full kit charges them."""
    a = g.assignment
    charged: set[str] = set()
    blocked: set[str] = set()
    graded = {s.task for s in specs}
    unchecked_results: dict[str, bool] = {}
    # every task after those beneath it (an assignment may list a task before one it builds on: the language
    # model's attention before its KV cache)
    for task in sorted(a.task_ids, key=lambda t: len(a.all_deps(t))):
        beneath = [d for d in a.all_deps(task) if d in charged]
        if not beneath and _fails_worth_again(task, specs, slots):
            # a grading of some tasks: those beneath it left out are graded too, as the whole grading grades them
            beneath = _failing_left_out(g, task, graded, unchecked_results)
            charged.update(beneath)
        own = a.task_by_id[task].own_reference
        # the full kit grades an isolated check of this task over the reference's own parts of it (a train step over
        # the reference's loss): where a check of the task over the submission's own code fails, it cannot be told
        # apart from one failing only because of those
        own_failing = bool(own) and any(
            s.task == task and s.variant != "isolated" and r.status in ("failed", "error") for s, r in zip(specs, slots)
        )
        for i, (spec, r) in enumerate(zip(specs, slots)):
            if spec.task != task or r.status == "passed":
                continue
            if r.status == "skipped":
                # over the submission's own parts it asked what the bank does not hold (the reference's answer with
                # the biases the submission lacks set to zero): the full kit asks nothing such over the reference's
                # parts, and the record may judge it as it does; else it stays unjudged
                unbanked = any(n.key == "note.not_in_bank" for n in r.notes) and spec.id not in g.replayed
                if (
                    unbanked
                    and variant_of(a, spec) == f"isolated:{task}"
                    and _replayed(g, spec, i, [], slots, calls) is False
                ):
                    charged.add(task)
                continue
            if spec.id in g.replayed:  # failed over the record of the parts beneath (``_over_record``): charged here
                charged.add(task)
            elif own_failing and spec.variant == "isolated" and not beneath and _worth_again(r):
                judged = _replayed(g, spec, i, [], slots, calls)  # over the record of the reference's own part
                if judged is None:
                    r.status, r.score = "skipped", 0.0
                    r.notes.append(Message("note.blocked_by_own", {"names": ", ".join(own)}))
                elif not judged:
                    charged.add(task)
            elif beneath and _worth_again(r):
                if a.task_by_id[task].names:
                    judged = _replayed(g, spec, i, beneath, slots, calls)
                else:
                    judged = _replayed_whole(g, spec, i, beneath, charged, blocked, slots, calls)
                if judged is None:
                    r.status, r.score = "skipped", 0.0
                    r.notes.append(Message("note.blocked_by", {"tasks": ", ".join(beneath)}))
                    blocked.add(task)
                elif not judged:
                    charged.add(task)
            elif variant_of(a, spec) == f"isolated:{task}" and _worth_again(r):
                # The full kit grades an isolated check over the reference's parts whether or not the submission's
                # own parts beneath pass their checks (a part may pass its own within tolerance and still move a
                # composite, or not be checked in this run at all): the record judges it as the full kit would.
                judged = _over_replay(g, spec, task)
                if judged is not None and judged[0].status == "passed":
                    _replace(i, judged[0], judged[1], slots, calls)
                    g.replayed.add(spec.id)
                elif judged is not None:
                    # failed over the record too, as in the full kit: the failure over the student's own parts stays,
                    # whose calls are those the bank's fingerprints of the catalogued mistakes were recorded over
                    charged.add(task)
                else:  # the record cannot: charged here only if nothing beneath fails
                    unchecked = [d for d in a.all_deps(task) if d not in graded]
                    failing = _failing_unchecked(g, unchecked, unchecked_results)
                    if failing:
                        r.status, r.score = "skipped", 0.0
                        r.notes.append(Message("note.blocked_by", {"tasks": ", ".join(failing)}))
                        blocked.add(task)
                    else:
                        charged.add(task)
            else:
                charged.add(task)


def _fails_worth_again(task, specs, slots):
    """Whether a check of ``task`` failed in a way a grading over other parts could change (``_worth_again``)."""
    return any(spec.task == task and r.status != "passed" and _worth_again(r) for spec, r in zip(specs, slots))


def _failing_left_out(g, task, graded, known):
    """The tasks beneath ``task`` that this grading left out (not in ``graded``) and that the whole grading would
    charge, in the assignment's order: each graded once, unreported (``_failing_unchecked``), and of those failing
    the lowest (none failing beneath them): one failing only through them passes over the reference's parts in the
    whole grading, and is not named."""
    deps = g.assignment.all_deps(task)
    raw = set(_failing_unchecked(g, [d for d in deps if d not in graded], known))
    return [d for d in deps if d in raw and not raw & set(g.assignment.all_deps(d))]


def _failing_unchecked(g, tasks, known):
    """The tasks of ``tasks`` (beneath a failing check, not selected in this grading) with a check that fails over
    the submission's own parts, in the order of ``tasks``; each graded once per grading (``known``: ``{task:
    fails}``), its results not reported: a kit tells a check failing because of a part beneath from one failing on its
    own as the full kit's ``--tasks`` would, where the record cannot judge it."""
    todo = [t for t in tasks if t not in known]
    if todo:
        failed = set()
        for spec in select_checks(g.assignment, tasks=todo, profile=g.profile):
            result, _calls = run_one(g, spec)
            if result.status in ("failed", "error"):
                failed.add(spec.task)
        known.update({t: t in failed for t in todo})
    return [t for t in tasks if known[t]]


def _replayed_whole(g, spec, i, beneath, charged, blocked, slots, calls):
    """``_replayed`` for a check of a task with no code of its own (``overfit``), graded as ``_charge_once`` grades
    it: over the reference's parts of the mending task (``_mending_task``) and the submission's own code for the
    rest. ``True`` where it passes there; ``False`` where the full kit charges it here (no mending task, or it fails
    over that one too: the failure first seen stays); ``None`` where the kit cannot tell (a task beneath whose
    verdict it could not judge, or the record does not hold the run)."""
    a = g.assignment
    unsure = [d for d in a.all_deps(spec.task) if d in blocked]
    mending = _mending_task(a, spec.task, beneath, charged | blocked)
    if mending is None:
        return None if unsure else False
    judged = _over_replay(g, spec, mending)
    if judged is None:
        return None
    again, again_calls = judged
    if again.status != "passed":
        return False
    again.notes.append(_whole_note(a, beneath, mending))
    _replace(i, again, again_calls, slots, calls)
    g.replayed.add(spec.id)
    return True


def _over_replay(g, spec, task):
    """``spec`` graded in ``task``'s isolated variant over the bank's record of the reference's parts
    (``g.replay``): ``(result, calls)`` where the record held every call the run made and the run passed or failed;
    ``None`` where the record cannot judge it (it does not hold those parts, or a call the run made)."""
    replay = g.replay
    if replay is None or not replay.covers(task):
        return None
    missed = replay.missed
    result, calls = _run_variant(g, spec, f"isolated:{task}")
    if replay.missed != missed or result.status not in ("passed", "failed"):
        return None
    return result, calls


def _whole_note(a, beneath, mending):
    """The note of a check of a task with no code of its own that passes over the reference's parts of ``mending``
    while ``beneath`` fail."""
    parts = ", ".join(d for d in a.task_ids if d in a.all_deps(mending))
    return Message("note.charged_beneath_whole", {"tasks": ", ".join(beneath), "parts": parts})


def _replayed(g, spec, i, beneath, slots, calls):
    """Grade check ``i``, failed in a kit while tasks ``beneath`` fail, over the bank's record of the reference's
    parts (``Grading.replay``), as the full kit grades it over the parts themselves: ``True`` where it passes there
    (that result replaces the failed one, as in ``_charge_once``), ``False`` where it fails there too (charged
    here: an isolated check's failure is the one shown, an integrated one's stays), ``None`` where the record
    cannot judge it (a part beneath is not recorded, or a call the record does not hold)."""
    judged = _over_replay(g, spec, spec.task)
    if judged is None:
        return None
    again, again_calls = judged
    if again.status == "passed" or spec.variant == "isolated":
        if again.status == "passed" and spec.variant != "isolated":
            again.notes.append(Message("note.charged_beneath", {"tasks": ", ".join(beneath)}))
        _replace(i, again, again_calls, slots, calls)
        g.replayed.add(spec.id)
    return again.status == "passed"


def _keep_if_it_passes(g, spec, i, variant, note, slots, calls):
    """Grade check ``i`` again in ``variant``: if it passes there, that result (with ``note``) replaces the failed."""
    again, again_calls = _run_variant(g, spec, variant)
    if again.status == "passed":
        again.notes.append(note)
        _replace(i, again, again_calls, slots, calls)


def _replace(i, again, again_calls, slots, calls):
    """Check ``i``'s result from a second run, ``again`` (and its calls), in place of the first: the time of both,
    the variant the check is declared in."""
    again.duration_s += slots[i].duration_s
    again.variant = slots[i].variant
    slots[i], calls[i] = again, again_calls


def _mending_task(a, task, beneath, failing):
    """The passing task beneath ``task`` with the fewest tasks beneath it that has every one of ``beneath`` (the
    failing tasks) beneath it: its 'isolated' variant gives the reference's parts for those (and the few passing
    ones beneath it) and the submission's own code for everything else. ``None`` where ``beneath`` is empty or no
    such task exists (a failing task directly beneath ``task``, such as ``train_step`` under ``overfit``)."""
    if not beneath:
        return None
    options = [
        t for t in a.all_deps(task) if t not in failing and a.task_by_id[t].names and set(beneath) <= set(a.all_deps(t))
    ]
    return min(options, key=lambda t: (len(a.all_deps(t)), a.task_ids.index(t))) if options else None


def _worth_again(r):
    """Whether a failed check is graded again over the reference's parts: not after a time-out or a crash."""
    return r.status != "error" or (r.error or {}).get("kind") in ("exception", "bad_output", "contract")


def consolidate_diagnoses(results):
    """A name only on evidence that holds across the task. Each failing check names the catalogued mistakes (one
    bug, or two together) whose mutant reproduced all its failing calls; within one task, an explanation is kept
    only if every check of the task that named any named it too (a check whose calls two mistakes explain alike
    is settled by the task's other failing checks), and where two or more explanations still fit equally, none is
    named (hints stay). Where the checks share no whole explanation but every one names some mistake, alone or
    paired, only those mistakes are named, each alone: a partner that only some checks pair with it is not."""

    def explanations(r):
        found = set()
        for d in r.diagnoses:
            if d.kind == "bug":
                found.add(tuple(d.params.get("compound") or (d.id,)))
        return found

    by_task: dict[str, list] = {}
    for r in results:
        found = explanations(r)
        if found:
            by_task.setdefault(r.task, []).append(found)
    for task, sets in by_task.items():
        common = set.intersection(*sets)
        # Mistakes every naming check names, alone or in a pair: where the checks agree on no whole explanation,
        # a partner only some of them pair it with is not named (a softmax over the wrong axis, with a finite
        # fill the contract allows, is reproduced on a masked check by "wrong axis + blocked scores set to 0",
        # which would name a fill mistake the code does not have). With none shared, each check keeps its own
        # (two mistakes of one task, each seen by other checks).
        shared = set.intersection(*({n for e in found for n in e} for found in sets)) if not common else set()
        for r in results:
            if r.task != task:
                continue
            found = explanations(r)
            if common:
                keep = found & common
            elif shared:
                keep = {tuple(n for n in e if n in shared) for e in found} - {()}
            else:
                keep = found
            if len(keep) > 1:
                keep = set()
            names = {n for e in keep for n in e}
            kept = []
            for d in r.diagnoses:
                if d.kind != "bug":
                    kept.append(d)
                elif (
                    d.id in names
                    and d.id not in {k.id for k in kept if k.kind == "bug"}
                    and (shared or tuple(d.params.get("compound") or (d.id,)) in keep)
                ):
                    (explanation,) = keep
                    params = {k: v for k, v in d.params.items() if k != "compound"}
                    if len(explanation) > 1:
                        params["compound"] = list(explanation)
                    kept.append(replace(d, params=params))
            r.diagnoses = kept


def variant_of(assignment, spec):
    """``"isolated:<task>"`` for an isolated check of a task that builds on others, else ``"integrated"``."""
    return f"isolated:{spec.task}" if spec.variant == "isolated" and assignment.all_deps(spec.task) else "integrated"


def _variant_rank(assignment, spec):
    variant = variant_of(assignment, spec)
    return 0 if variant == "integrated" else 1 + assignment.task_ids.index(variant.split(":", 1)[1])


def run_one(g, spec):
    """Run one check; never raises for anything the submission does.

    An isolated check whose run raised in the submission's code (it reads something of its own parts that the
    reference's do not have, say ``layer.size``) is graded again with the submission's own parts, and says so:
    the isolated variant never costs a correct submission.

    Returns ``(result, calls)``: the ``CheckResult`` and the submission's probe calls (what diagnosis replays)."""
    if g.banked:
        recorded = _over_record(g, spec)
        if recorded is not None:
            return recorded
    result, calls = _run_variant(g, spec, g.variant(spec))
    if (
        result.variant == "isolated"
        and g.variant(spec) != "integrated"
        and result.status == "error"
        and (result.error or {}).get("kind") == "exception"
    ):
        why = result.message
        again, calls = _run_variant(g, spec, "integrated")
        again.notes.append(
            Message(
                "note.not_isolated",
                {
                    "detail": why.params.get("detail", ""),
                    "file": why.params.get("file", ""),
                    "line": why.params.get("line", 0),
                },
            )
        )
        again.duration_s += result.duration_s
        return again, calls
    return result, calls


def _over_record(g, spec):
    """In a kit (``g.banked``): a check the full kit grades over the reference's parts beneath its task (an isolated
    check of a task built on others), graded over the bank's record of those parts (``g.replay``) as the full kit
    grades it; ``None`` where the record cannot (it does not hold those parts, or a call the run made), and the check
    is graded over the submission's own parts. Only where a task beneath has failed already: otherwise the check is
    graded over the submission's own parts, as quickly, and over the record only if it fails there (``_blocked``)."""
    if variant_of(g.assignment, spec) != f"isolated:{spec.task}":
        return None
    if not g.failing & set(g.assignment.all_deps(spec.task)):  # over its own parts, it is graded as fast
        return None
    judged = _over_replay(g, spec, spec.task)
    if judged is not None:
        g.replayed.add(spec.id)
    return judged


def context(g, spec, variant, fresh=None, seed=None):
    """The ``CheckContext`` of one run of ``spec`` in grading ``g`` (``fresh``: see ``CheckContext``; ``seed``: the
    examples' seed, else ``g.seed``)."""
    return CheckContext(
        spec,
        sub=g.sub,
        ref=g.ref,
        profile=g.profile,
        seed=g.seed if seed is None else seed,
        devices=g.devices,
        variant=variant,
        fresh=fresh,
        timed_out=g.timed_out,
        memo=g.memo,
    )


SETS = 2
"""The sets of examples a grading with held-back examples grades each drawing check on: the kit's and the held-back
ones (the submission is called about as often on each, so a time budget for all its calls is one per set)."""


def held_back_seed(g, spec):
    """The seed of ``spec``'s held-back examples in grading ``g``: a digest of the held-back seed and the check's id,
    so that each check draws examples of its own, the same on every run, and no example tells another's seed."""
    digest = hashlib.sha256(f"{g.held_back}/{spec.id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _run_variant(g, spec, variant):
    """Grade ``spec`` in ``variant``: ``(result, calls)``. With held-back examples (``g.held_back``), a check that
    drew examples is graded again on its held-back ones (``held_back_seed``) and passes only where it passes on
    both sets; ``result.sets`` says how it did on each. Where it fails on the default examples, that failure is the
    one shown (the student kit reproduces it); where it fails only on held-back ones, theirs is, with a note. The
    calls are those of the failure shown, so that a mistake is named once, from one set. A check that draws no
    examples asks the same questions on both sets and is graded once."""
    result, calls, drew = _run_set(g, spec, variant, g.seed)
    if g.held_back is None:
        return result, calls
    sets = {"kit": result.status}
    if drew:
        held, held_calls, _ = _run_set(g, spec, variant, held_back_seed(g, spec))
        sets["held_back"] = held.status
        if result.status == "passed" and held.status != "passed":
            held.notes.append(Message("note.held_back_failed", {}))
            held.duration_s += result.duration_s
            result, calls = held, held_calls
        else:
            result.duration_s += held.duration_s
    result.sets = sets
    return result, calls


def _run_set(g, spec, variant, seed):
    """One run of ``spec`` in ``variant`` on the examples of ``seed`` (``None``: the default ones):
    ``(result, calls, whether it drew examples)``; while a bank records the reference's parts, the calls of one
    run are kept together or not at all (``submission.replay.Log.window``)."""
    recording = getattr(g, "recording", None)
    if recording is None:
        return _run_set_now(g, spec, variant, seed)
    with recording.window():
        return _run_set_now(g, spec, variant, seed)


def _run_set_now(g, spec, variant, seed):
    ctx = context(g, spec, variant, seed=seed)
    start = time.perf_counter()
    result = CheckResult(
        id=spec.id,
        task=spec.task,
        status="passed",
        score=spec.points,
        max_score=spec.points,
        reproduce=g.command(spec),
        variant=spec.variant,
    )
    try:
        spec.fn(ctx)
        result.artifacts = dict(ctx.artifacts)
    except Fail as fail:
        _failed(result, fail)
    except SubmissionError as err:
        _errored(result, err)
    except Abort as abort:
        _errored(result, abort.error)
    except NotInBank as miss:  # a kit without the reference: this check asked what its answer bank does not hold
        if isinstance(ctx.first_failure, Fail):  # an example failed before: that failure stands
            _failed(result, ctx.first_failure)
            ctx.note("note.failed_in_bank")
        elif isinstance(ctx.first_failure, SubmissionError):
            _errored(result, ctx.first_failure)
            ctx.note("note.failed_in_bank")
        else:
            _unjudged(result, ctx, ctx.unjudged[0] if ctx.unjudged else miss.probe)
    except hypothesis.errors.Unsatisfiable as exc:
        if ctx.unjudged:  # every example drawn asked what the bank does not hold
            _unjudged(result, ctx, ctx.unjudged[0])
        else:
            result.status, result.score = "error", 0.0
            result.message = Message("error.internal", {"detail": f"{type(exc).__name__}: {exc}"[:500]})
    except ReferenceFailed as failed:  # the assignment is at fault: the check cannot judge, and says so plainly
        why = failed.error
        result.status, result.score = "error", 0.0
        result.message = Message("error.reference", {"detail": why.detail, "file": why.file, "line": why.line})
    except hypothesis.errors.FlakyFailure as group:
        inner = group.exceptions[0] if group.exceptions else group
        if isinstance(inner, Fail):
            _failed(result, inner)
        elif isinstance(inner, SubmissionError):
            _errored(result, inner)
        else:
            _errored(result, SubmissionError(kind="exception", detail=f"{type(inner).__name__}: {inner}"))
        assert result.message is not None  # set by _failed / _errored
        result.message.params["flaky"] = True
    except hypothesis.errors.Flaky as flaky:
        result.status, result.score = "failed", 0.0
        result.message = Message("fail.flaky", {"detail": str(flaky)[:300]})
    except Exception as exc:  # noqa: BLE001 - a grader bug must not sink the other checks
        result.status, result.score = "error", 0.0
        result.message = Message("error.internal", {"detail": f"{type(exc).__name__}: {exc}"[:500]})
    if ctx.unjudged and result.status == "passed":  # passed only the examples the bank holds: not judged
        _unjudged(result, ctx, ctx.unjudged[0])
    elif (ctx.unjudged or ctx.shrunk_in_bank) and result.status in ("failed", "error"):
        ctx.note("note.failed_in_bank")
    result.duration_s = time.perf_counter() - start
    result.notes.extend(Message(key, dict(params)) for key, params in ctx.notes)
    if variant == f"isolated:{spec.task}" and ctx.isolated_calls and result.status != "skipped":
        by_id = g.assignment.task_by_id
        direct = [n for d in by_id[spec.task].deps for n in by_id[d].names]
        unused = [n for n in direct if n not in ctx.parts_used]
        if unused and len(unused) == len(direct):  # nothing beneath was the reference's: say what was graded
            result.notes.append(Message("note.partly_isolated", {"task": spec.task, "names": ", ".join(unused)}))
    first = ctx.first_failing_calls or []
    return result, ctx.calls + [c for c in first if not any(c is seen for seen in ctx.calls)], ctx.drew


FRESH_EXAMPLES = 4
"""New examples a failing property check is run on to confirm a diagnosis (``fresh_calls``)."""


def fresh_calls(g, spec, variant):
    """The submission's probe calls on ``FRESH_EXAMPLES`` new examples of ``spec``'s properties, drawn from a seed of
    their own (the same every run), not shrunk, failing or not: evidence that the failing example, shrunk small,
    may not give (there two mistakes often give the same numbers). ``None`` for a check that draws no examples
    (it would only repeat its calls)."""
    seed = zlib.crc32(f"{spec.id}/{g.seed}".encode())
    ctx = context(g, spec, variant, fresh=(FRESH_EXAMPLES, seed))
    try:
        spec.fn(ctx)
    except (Exception, Abort):  # noqa: BLE001 - what was called before it stopped is still evidence
        pass
    return ctx.all_calls if ctx.drew else None


def _variant_run(g, spec, result):
    """The variant ``result`` of ``spec`` was graded in (an isolated check that could not be isolated: integrated)."""
    if any(n.key == "note.not_isolated" for n in result.notes):
        return "integrated"
    if spec.id in g.replayed:
        return f"isolated:{spec.task}"
    return g.variant(spec)


def _unjudged(result, ctx, probe):
    """A check a kit cannot judge (its answer bank does not hold what it asked): ``"skipped"``, no points earned
    here; the final grade, which has the reference, judges it."""
    result.status, result.score = "skipped", 0.0
    result.message = None
    result.artifacts = {}
    ctx.note("note.not_in_bank", probe=probe)


def _failed(result, fail):
    result.status, result.score = "failed", 0.0
    result.message = Message(fail.key, dict(fail.params))
    result.example = fail.example
    result.artifacts = fail.artifacts


def _errored(result, err):
    result.status, result.score = "error", 0.0
    result.error = err.to_dict()
    result.message = Message(*sentence(err))


def grade(
    g,
    *,
    path,
    tasks=None,
    only=None,
    config=None,
    banned_findings=(),
    allow_banned=False,
    load_errors=None,
    sealed=False,
    progress=None,
    diagnose=None,
    runtime_findings=None,
):
    """Run the selected checks of ``g.assignment`` and assemble the ``GradeResult``."""
    started = time.perf_counter()
    specs, selection = select(g.assignment, tasks=tasks, profile=g.profile, only=only, config=config)
    # Checks of one variant run together (a worker holds one variant: see WorkerRunner), the integrated ones
    # first; results, diagnoses and views keep the assignment's order, sealed or in process alike.
    order = sorted(range(len(specs)), key=lambda i: _variant_rank(g.assignment, specs[i]))
    slots: list[CheckResult] = [None] * len(specs)  # type: ignore[list-item]  # each filled below
    calls: list[list] = [[] for _ in specs]
    if g.shards > 1:
        from grader import shards

        variants = [g.variant(spec) for spec in specs]
        slots, calls = shards.run(g, specs, order, variants, run_one, progress)
    else:
        for n, i in enumerate(order):
            if progress:
                progress(n, len(specs), specs[i])
            slots[i], calls[i] = run_one(g, specs[i])
            if slots[i].status in ("failed", "error"):
                g.failing.add(specs[i].task)
    if g.banked:
        _blocked(g, specs, slots, calls)
    else:
        _charge_once(g, specs, slots, calls)
    results: list[CheckResult] = []
    for spec, r, c in zip(specs, slots, calls):
        # In a kit without the reference, a check blocked by a task beneath (or not graded) is not diagnosed: the
        # full kit grades it over the reference's parts, where it fails only if it has a mistake of its own.
        if diagnose is not None and r.status != "passed" and not (g.banked and r.status == "skipped"):
            found: dict[str, list[str]] = {}
            for x in results:
                found.setdefault(x.task, []).extend(d.id for d in x.diagnoses if d.kind == "bug")
            fresh = functools.partial(fresh_calls, g, spec, _variant_run(g, spec, r))
            r.diagnoses = diagnose(spec, c, found, fresh=fresh)
        results.append(r)
    if diagnose is not None:
        consolidate_diagnoses(results)
        settle = getattr(diagnose, "settle", None)
        if settle is not None:  # a kit's diagnoser takes back what it could not decide (``bugs.prints``)
            settle(results)
    if config is not None:
        for spec, r in zip(specs, results):
            config.apply(spec, r, selection)
    if progress:
        progress(len(specs), len(specs), None)
    findings = list(banned_findings)
    if runtime_findings is not None:
        seen = {(f.file, f.line) for f in findings}
        findings += [f for f in runtime_findings() if (f.file, f.line) not in seen]
    task_results = assemble_tasks(g.assignment, results, findings, allow_banned)
    total = sum(t.score for t in task_results)
    max_total = sum(t.max_score for t in task_results)
    held_back = None
    if g.held_back is not None:
        drawn = [r for r in results if "held_back" in r.sets]
        held_back = {
            "kit": [sum(r.sets.get("kit") == "passed" for r in results), len(results)],
            "held_back": [sum(r.sets["held_back"] == "passed" for r in drawn), len(drawn)],
        }
    return GradeResult(
        submission=str(path),
        score=round(total, 4),
        max_score=round(max_total, 4),
        seed=g.seed,
        profile=g.profile,
        duration_s=round(time.perf_counter() - started, 3),
        tasks=task_results,
        banned_api=[f.to_dict() for f in findings],
        load_errors=load_errors or {},
        environment=environment(g.devices),
        sealed=sealed,
        allow_banned=allow_banned,
        hidden_checks=len(selection.hidden) if selection is not None else 0,
        assignment=g.assignment.name,
        held_back=held_back,
    )


def assemble_tasks(assignment, results, findings, allow_banned):
    """Group check results by task; apply banned-API penalties; note failing dependencies."""
    by_task: dict[str, list] = {}
    for r in results:
        by_task.setdefault(r.task, []).append(r)
    tasks = []
    for task in assignment.tasks:
        checks = by_task.get(task.id)
        if not checks:
            continue
        score = sum(c.score for c in checks)
        max_score = sum(c.max_score for c in checks)
        banned = [f.to_dict() for f in findings if task.id in f.task.split(",")]
        if banned and not allow_banned:
            score = 0.0
        failing = [c for c in checks if c.status != "passed"]
        not_impl = bool(failing) and all((c.error or {}).get("kind") == "not_implemented" for c in failing)
        tasks.append(
            TaskResult(
                id=task.id,
                score=round(score, 4),
                max_score=max_score,
                checks=checks,
                not_implemented=not_impl,
                banned=banned,
            )
        )
    mark_blocked(assignment, tasks)
    return tasks


def mark_blocked(assignment, tasks):
    """Set ``blocked_by`` on each ``TaskResult`` whose integrated checks fail while its isolated ones pass: the
    failing tasks beneath it, among ``tasks`` (``gradekit watch`` calls it again on results of several runs)."""
    status = {t.id: all(c.status == "passed" for c in t.checks) for t in tasks}
    for t in tasks:
        iso_ok = all(c.status == "passed" for c in t.checks if c.variant == "isolated")
        integ_fail = any(c.status != "passed" for c in t.checks if c.variant == "integrated")
        t.blocked_by = [d for d in assignment.all_deps(t.id) if status.get(d) is False] if integ_fail and iso_ok else []
