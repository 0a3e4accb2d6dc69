"""Run the registered checks against a submission and collect a ``GradeResult``."""

import platform
import time
from datetime import datetime, timezone

import hypothesis
import hypothesis.errors
import torch

import grader
from grader.checks import load_checks
from grader.checks.base import Abort, CheckContext, Fail
from grader.results import CheckResult, GradeResult, Message, TaskResult
from grader.submission.errors import SubmissionError
from grader.tasks import TASK_BY_ID, TASK_IDS, TASKS, all_deps


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
    return {"python": platform.python_version(), "torch": torch.__version__, "platform": platform.platform(),
            "devices": devices, "gradekit": grader.__version__,
            "hypothesis": hypothesis.__version__,
            "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def select_checks(*, tasks=None, profile="full", only=None, config=None):
    """The ``CheckSpec``s to run, in registry order."""
    specs = [s for s in load_checks() if profile in s.profiles]
    if tasks:
        specs = [s for s in specs if s.task in tasks]
    if only:
        specs = [s for s in specs if s.id in only]
    if config is not None:
        specs = config.filter_checks(specs)
    return specs


def _charge_once(specs, slots, *, sub, ref, profile, seed, devices, reproduce):
    """A check of a task's own work over the submission's parts that fails while a task beneath fails is run
    again over the reference's parts; if it passes there, the defect is beneath, charged in its own task: this
    check keeps its points and names the task beneath. Tasks are taken bottom-up, so that a task failing only
    because of one beneath it is not named in turn. (Not for ``overfit``, which has no work of its own but the
    whole; not for time-outs and crashes, which a re-run would only repeat.)"""
    failing = {r.task for r in slots if r.status != "passed"}
    for task in TASK_IDS:
        if not TASK_BY_ID[task].names or task not in failing:
            continue
        for i, (spec, r) in enumerate(zip(specs, slots)):
            beneath = [d for d in all_deps(task) if d in failing]
            if spec.task != task or r.status == "passed" or not beneath or variant_of(spec) != "integrated":
                continue
            if r.status == "error" and (r.error or {}).get("kind") not in ("exception", "bad_output", "contract"):
                continue
            again = _run_variant(spec, f"isolated:{task}", sub=sub, ref=ref, profile=profile, seed=seed,
                                 devices=devices, reproduce=reproduce(spec) if reproduce else "")
            if again.status == "passed":
                again.notes.append(Message("note.charged_beneath", {"tasks": ", ".join(beneath)}))
                again.duration_s += r.duration_s
                again.weight = r.weight
                slots[i] = again
        if all(r.status == "passed" for r in slots if r.task == task):
            failing.discard(task)


def consolidate_diagnoses(results):
    """A name only on evidence that holds across the task. Each failing check names the catalogued mistakes (one
    bug, or two together) whose mutant reproduced all its failing calls; within one task, an explanation is kept
    only if every check of the task that named any named it too (a check whose calls two mistakes explain alike
    is settled by the task's other failing checks), and where two or more explanations still fit equally, none is
    named (hints stay)."""
    def explanations(r):
        found = set()
        for d in r.diagnoses:
            if d.kind == "bug":
                found.add(tuple(d.params.get("compound") or (d.id,)))
        return found

    by_task = {}
    for r in results:
        found = explanations(r)
        if found:
            by_task.setdefault(r.task, []).append(found)
    for task, sets in by_task.items():
        common = set.intersection(*sets)
        for r in results:
            if r.task != task:
                continue
            found = explanations(r)
            keep = found & common if common else found
            if len(keep) > 1:
                keep = set()
            names = {n for e in keep for n in e}
            r.diagnoses = [d for d in r.diagnoses if d.kind != "bug" or (d.id in names and
                                                                        tuple(d.params.get("compound") or (d.id,))
                                                                        in keep)]


def variant_of(spec):
    """``"isolated:<task>"`` for an isolated check of a task that builds on others, else ``"integrated"``."""
    return f"isolated:{spec.task}" if spec.weight == "isolated" and all_deps(spec.task) else "integrated"


def _variant_rank(spec):
    variant = variant_of(spec)
    return 0 if variant == "integrated" else 1 + TASK_IDS.index(variant.split(":", 1)[1])


def run_one(spec, *, sub, ref, profile, seed, devices, reproduce=""):
    """Run one check; never raises for anything the submission does.

    An isolated check whose run raised in the submission's code (it reads something of its own parts that the
    reference's do not have, say ``layer.size``) is graded again with the submission's own parts, and says so:
    isolation never costs a correct submission."""
    result = _run_variant(spec, variant_of(spec), sub=sub, ref=ref, profile=profile, seed=seed, devices=devices,
                          reproduce=reproduce)
    if result.weight == "isolated" and variant_of(spec) != "integrated" and result.status == "error" \
            and (result.error or {}).get("kind") == "exception":
        why = result.message
        again = _run_variant(spec, "integrated", sub=sub, ref=ref, profile=profile, seed=seed, devices=devices,
                             reproduce=reproduce)
        again.notes.append(Message("note.not_isolated", {"detail": why.params.get("detail", ""),
                                                        "file": why.params.get("file", ""),
                                                        "line": why.params.get("line", 0)}))
        again.duration_s += result.duration_s
        return again
    return result


def _run_variant(spec, variant, *, sub, ref, profile, seed, devices, reproduce=""):
    ctx = CheckContext(spec, sub=sub, ref=ref, profile=profile, seed=seed, devices=devices, variant=variant)
    start = time.perf_counter()
    result = CheckResult(id=spec.id, task=spec.task, status="passed", score=spec.points, max_score=spec.points,
                         reproduce=reproduce, weight=spec.weight)
    try:
        spec.fn(ctx)
        result.artifacts = dict(ctx.artifacts)
    except Fail as fail:
        _failed(result, fail)
    except SubmissionError as err:
        _errored(result, err)
    except Abort as abort:
        _errored(result, abort.error)
    except hypothesis.errors.FlakyFailure as group:
        inner = group.exceptions[0] if group.exceptions else group
        if isinstance(inner, Fail):
            _failed(result, inner)
        elif isinstance(inner, SubmissionError):
            _errored(result, inner)
        else:
            _errored(result, SubmissionError(kind="exception", detail=f"{type(inner).__name__}: {inner}"))
        result.message.params["flaky"] = True
    except hypothesis.errors.Flaky as flaky:
        result.status, result.score = "failed", 0.0
        result.message = Message("fail.flaky", {"detail": str(flaky)[:300]})
    except Exception as exc:  # noqa: BLE001 - a grader bug must not sink the other checks
        result.status, result.score = "error", 0.0
        result.message = Message("error.internal", {"detail": f"{type(exc).__name__}: {exc}"[:500]})
    result.duration_s = time.perf_counter() - start
    result.notes.extend(Message(key, dict(params)) for key, params in ctx.notes)
    if variant != "integrated" and ctx.isolated_calls and result.status != "skipped":
        direct = [n for d in TASK_BY_ID[spec.task].deps for n in TASK_BY_ID[d].names]
        unused = [n for n in direct if n not in ctx.parts_used]
        if unused and len(unused) == len(direct):  # nothing beneath was the reference's: say what was graded
            result.notes.append(Message("note.partly_isolated", {"task": spec.task, "names": ", ".join(unused)}))
    first = ctx.first_failing_calls or []
    result._calls = ctx.calls + [c for c in first if not any(c is seen for seen in ctx.calls)]
    return result


def _failed(result, fail):
    result.status, result.score = "failed", 0.0
    result.message = Message(fail.key, dict(fail.params))
    result.example = fail.example
    result.artifacts = fail.artifacts


def _errored(result, err):
    result.status, result.score = "error", 0.0
    result.error = err.to_dict()
    params = {"detail": err.detail, "file": err.file, "line": err.line, "code": err.code}
    if err.kind == "contract":
        params.update(err.data)
    result.message = Message(f"error.{err.kind}", params)


def grade(*, path, sub, ref, tasks=None, profile="full", seed=None, devices=None, only=None, config=None,
          banned_findings=(), allow_banned=False, load_errors=None, isolated=False, progress=None,
          reproduce=None, diagnose=None, runtime_findings=None):
    """Run the selected checks and assemble the ``GradeResult``."""
    started = time.perf_counter()
    devices = available_devices(devices)
    specs = select_checks(tasks=tasks, profile=profile, only=only, config=config)
    # Checks of one variant run together (a worker holds one variant: see WorkerRunner), the integrated ones
    # first; results, diagnoses and views keep the registry's order, in every mode alike.
    order = sorted(range(len(specs)), key=lambda i: _variant_rank(specs[i]))
    slots = [None] * len(specs)
    for n, i in enumerate(order):
        if progress:
            progress(n, len(specs), specs[i])
        slots[i] = run_one(specs[i], sub=sub, ref=ref, profile=profile, seed=seed, devices=devices,
                           reproduce=reproduce(specs[i]) if reproduce else "")
    _charge_once(specs, slots, sub=sub, ref=ref, profile=profile, seed=seed, devices=devices, reproduce=reproduce)
    results = []
    for spec, r in zip(specs, slots):
        if diagnose is not None and r.status != "passed":
            found = {}
            for x in results:
                found.setdefault(x.task, []).extend(d.id for d in x.diagnoses if d.kind == "bug")
            r.diagnoses = diagnose(spec, r._calls, found)
        results.append(r)
    if diagnose is not None:
        consolidate_diagnoses(results)
    if config is not None:
        for spec, r in zip(specs, results):
            config.apply(spec, r)
    if progress:
        progress(len(specs), len(specs), None)
    findings = list(banned_findings)
    if runtime_findings is not None:
        seen = {(f.file, f.line) for f in findings}
        findings += [f for f in runtime_findings() if (f.file, f.line) not in seen]
    task_results = assemble_tasks(results, findings, allow_banned)
    total = sum(t.score for t in task_results)
    max_total = sum(t.max_score for t in task_results)
    for r in results:
        r.__dict__.pop("_calls", None)
    return GradeResult(
        submission=str(path), score=round(total, 4), max_score=round(max_total, 4), seed=seed, profile=profile,
        duration_s=round(time.perf_counter() - started, 3), tasks=task_results,
        banned_api=[f.to_dict() for f in findings], load_errors=load_errors or {},
        environment=environment(devices), isolated=isolated, allow_banned=allow_banned,
        hidden_checks=config.hidden_count(specs) if config is not None else 0,
    )


def assemble_tasks(results, findings, allow_banned):
    """Group check results by task; apply banned-API penalties; note failing dependencies."""
    by_task = {}
    for r in results:
        by_task.setdefault(r.task, []).append(r)
    tasks = []
    for task in TASKS:
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
        tasks.append(TaskResult(id=task.id, score=round(score, 4), max_score=max_score, checks=checks,
                                not_implemented=not_impl, banned=banned))
    status = {t.id: all(c.status == "passed" for c in t.checks) for t in tasks}
    for t in tasks:
        iso_ok = all(c.status == "passed" for c in t.checks if c.weight == "isolated")
        integ_fail = any(c.status != "passed" for c in t.checks if c.weight == "integrated")
        if integ_fail and iso_ok:
            t.blocked_by = [d for d in all_deps(t.id) if status.get(d) is False]
    return tasks

