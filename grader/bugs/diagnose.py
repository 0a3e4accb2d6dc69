"""Diagnosis: which known bug, or which pattern, explains a failing check.

When a check fails, the submission's probe calls for the minimal failing
example are replayed on mutants of the reference (one per catalogued bug of
the task, plus bugs of failing tasks beneath it for integrated checks). A
mutant whose results match the submission's on every call, while the
reference's do not, is a candidate. A candidate is named only once confirmed
on fresh evidence: the check run again on new examples, larger and not shrunk
(``engine.fresh_calls``), where the mutant must again give what the submission
gives on every call, passing or failing. A shrunk example is small, and small
examples make mistakes coincide (a padding mask taken one position off and no
padding mask at all give the same loss on rows with one pad); the fresh ones
tell them apart. Where no mutant matches, hints are read from the shape of the
error (a constant factor, a transpose, rows not summing to 1, only some
positions, heads or rows wrong).
"""

import math
import re

import torch

from grader.bugs.catalogue import Catalogue, apply
from grader.errors import SubmissionError
from grader.probes import seed_rng
from grader.results import Diagnosis
from grader.submission.inprocess import InProcessRunner, reference_namespace

ATOL, RTOL = 1e-5, 1e-5
UNEXPLAINABLE = frozenset({"not_implemented", "missing_file", "missing_name", "import_error", "timeout", "crashed"})


def same_error(a, b):
    """Two errors agree in kind and meaning: a contract error by what is missing, unexpected, misshapen or
    shared; any other by the exception's type and its whole message, wherever it was raised (never by a prefix:
    every parameter mismatch is not the same mistake)."""
    if a.kind != b.kind:
        return False
    if a.kind == "contract":
        keys = ("missing", "unexpected", "wrong_shape", "shared")
        return all((a.data or {}).get(k) == (b.data or {}).get(k) for k in keys)
    return _meaning(a.detail) == _meaning(b.detail)


def _meaning(detail):
    """An error's first line without where it happened (file paths, line numbers, object addresses)."""
    line = (detail or "").split("\n", 1)[0]
    line = re.sub(r"\([^()]*\.py:\d+[^()]*\)", "", line)
    line = re.sub(r"0x[0-9a-fA-F]+", "0x", line)
    return " ".join(line.split())


def _evidence(probe, result):
    """What of a probe's result a diagnosis compares: for a constructor, which exception it raised (its message is
    the student's own words)."""
    if probe == "construct" and isinstance(result, dict):
        return {"raised": result.get("raised")}
    return result


def same(a, b):
    """Whether two probe results (or errors) agree: tensors within tolerance, everything else equal."""
    if isinstance(a, SubmissionError) or isinstance(b, SubmissionError):
        return isinstance(a, SubmissionError) and isinstance(b, SubmissionError) and same_error(a, b)
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
            return False
        if a.device.type == "meta" or b.device.type == "meta":
            return a.device.type == b.device.type and a.dtype == b.dtype
        if a.dtype != b.dtype and (a.dtype == torch.bool or b.dtype == torch.bool):
            return False
        if not a.is_floating_point():
            return torch.equal(a, b.to(a.dtype))
        return bool(torch.allclose(a.double(), b.double(), atol=ATOL, rtol=RTOL, equal_nan=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    return a == b


def same_but_guarded_nan(mine, got):
    """``same``, except where the mutant's result ``mine`` is NaN and the submission's is a number: code that guards
    against NaN (zeroing a row whose every key is blocked) has the mistake all the same. (An infinity is a result
    like any other: a filter's -inf says which tokens it dropped.)"""
    if (
        isinstance(mine, torch.Tensor)
        and isinstance(got, torch.Tensor)
        and mine.is_floating_point()
        and got.is_floating_point()
        and mine.shape == got.shape
        and mine.device.type != "meta"
        and got.device.type != "meta"
    ):
        guarded = torch.isnan(mine) & ~torch.isnan(got)
        if guarded.any():
            mine, got = mine.masked_fill(guarded, 0.0), got.masked_fill(guarded, 0.0)
        return same(mine, got)
    if isinstance(mine, float) and isinstance(got, float) and math.isnan(mine) and not math.isnan(got):
        return True
    if isinstance(mine, dict) and isinstance(got, dict):
        return mine.keys() == got.keys() and all(same_but_guarded_nan(mine[k], got[k]) for k in mine)
    if isinstance(mine, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(mine) == len(got) and all(same_but_guarded_nan(x, y) for x, y in zip(mine, got))
    return same(mine, got)


class Diagnoser:
    """Replays failing examples on the catalogue's mutants; call it as ``diagnoser(spec, calls, failing_tasks)``."""

    def __init__(self, assignment, ref):
        self.assignment = assignment
        self.catalogue = Catalogue(assignment)
        self.ref = ref
        self._mutants = {}

    def mutant(self, bug, spelling=None, also=None):
        """A runner on the reference with ``bug`` (one of its ``spellings``; ``also``: a second bug of the same
        task, for a compound mistake)."""
        key = (bug.id, spelling, also.id if also is not None else None)
        if key not in self._mutants:
            patches = {}
            for b, edits in ((bug, bug.spellings()[spelling] if spelling is not None else None), (also, None)):
                if b is None:
                    continue
                source = patches.get(b.file) or (self.ref.root / b.file).read_text(encoding="utf-8")
                patches[b.file] = apply(b, source, edits)
            ns = reference_namespace(self.assignment, patches=patches, label="+".join(k for k in key[::2] if k))
            self._mutants[key] = InProcessRunner(ns.root, assignment=self.assignment, banned=(), namespace=ns)
        return self._mutants[key]

    def _reproduces(self, runner, calls):
        """Whether the mutant gives what the submission gave on every call (fresh evidence: passing calls too)."""
        for probe, args, got in calls:
            if isinstance(got, SubmissionError) and got.kind in UNEXPLAINABLE:
                continue  # a time limit or a crash says nothing about which mistake it is
            if not self._same_guarded(self._answer(runner, probe, args), _evidence(probe, got)):
                return False
        return True

    def _confirmed(self, diagnosis, runner, calls, refs, evidence):
        """Whether the mistake of ``diagnosis`` (found by ``runner``) reproduces the fresh ``evidence``: in the spelling
        that matched, or in another of its spellings that explains the failing calls too (one mistake written two
        ways: a mask left unexpanded or expanded to the batch)."""
        if diagnosis.params.get("compound"):
            # Two mistakes together are named only where every failing check of the task agrees, and a partner
            # that only some checks pair with is dropped there (``engine.consolidate_diagnoses``): fresh calls
            # of one check would drop the pair before that rule could keep the mistake the checks share.
            return True
        if self._reproduces(runner, evidence):
            return True
        bug = self.catalogue.by_id[diagnosis.id]
        for k in range(len(bug.spellings())):
            try:
                other = self.mutant(bug, k)
            except ValueError:
                continue
            if other is not runner and self._explains(other, calls, refs) and self._reproduces(other, evidence):
                return True
        return False

    def _explains(self, runner, calls, refs):
        """Whether the mutant reproduces every call of the submission while the reference does not."""
        differs_from_ref = False
        for (probe, args, got), ref in zip(calls, refs):
            mine = self._answer(runner, probe, args)
            if not self._same(mine, _evidence(probe, got)):
                return False
            differs_from_ref = differs_from_ref or self._differs(mine, _evidence(probe, ref))
        return differs_from_ref

    # What a mutant answers and how it is compared: a subclass answers from recorded fingerprints instead
    # (``grader.bugs.prints``), each step in the same order, so that it is asked exactly what this one computes.

    def _answer(self, runner, probe, args):
        """What of the mutant's result for one call a diagnosis compares."""
        return _evidence(probe, self._run(runner, probe, args))

    def _same(self, mine, got):
        return same(mine, got)

    def _same_guarded(self, mine, got):
        return same_but_guarded_nan(mine, got)

    def _differs(self, mine, ref):
        return not same(mine, ref)

    def _reference(self, probe, args):
        """The reference's result for one call."""
        return self._run(self.ref, probe, args)

    def _fresh(self, fresh):
        """The fresh evidence ``fresh()`` gives."""
        return fresh()

    @staticmethod
    def _run(runner, probe, args):
        seed_rng(0)
        try:
            return runner.run(probe, "integrated", **args)
        except SubmissionError as err:
            return err
        except Exception as exc:  # noqa: BLE001 - a mutant may fail in ways the reference does not
            return SubmissionError(kind="exception", detail=f"{type(exc).__name__}: {exc}")

    def candidates(self, spec, found):
        """The task's own bugs; for an integrated check also the bugs already diagnosed beneath it."""
        bugs = self.catalogue.bugs_for(spec.task)
        if spec.variant != "isolated":
            by_id = self.catalogue.by_id
            for dep in self.assignment.all_deps(spec.task):
                bugs += [by_id[i] for i in found.get(dep, ()) if by_id[i] not in bugs]
        return bugs

    def __call__(self, spec, calls, found=None, fresh=None):
        """Diagnoses for a failed check, most likely first.

        ``calls`` are the submission's probe calls of the failing examples;
        ``found`` maps task ids to the bug ids already diagnosed in them;
        ``fresh()`` gives the submission's calls on fresh examples (``None`` where the check draws none), asked
        only when some mutant matches: a candidate is kept only if it reproduces them too.
        """
        if not calls or not spec.diagnose:
            return []
        if any(isinstance(got, SubmissionError) and got.kind in UNEXPLAINABLE for _, _, got in calls):
            return []  # no mutant of the reference raises NotImplementedError or fails to import
        refs = [self._reference(probe, args) for probe, args, _ in calls]
        matches, variants = [], []
        for bug in self.candidates(spec, found or {}):
            for k in range(len(bug.spellings())):
                try:
                    runner = self.mutant(bug, k)
                except ValueError:  # a spelling whose edits do not apply to this reference
                    continue
                if self._explains(runner, calls, refs):
                    (matches if k == 0 else variants).append((Diagnosis(id=bug.id, kind="bug"), runner))
                    break
        matches += variants  # the catalogued spelling first, then the other spellings
        if not matches:
            matches = self._compounds(spec, calls, refs)
        if matches and fresh is not None:
            evidence = self._fresh(fresh)
            if evidence:
                matches = [(d, runner) for d, runner in matches if self._confirmed(d, runner, calls, refs, evidence)]
        if matches:
            return [d for d, _runner in matches]
        probe, args, got = calls[0]
        ref = refs[0]
        if isinstance(got, dict) and isinstance(ref, dict):
            return pattern_hints(got, ref)
        return []

    def _compounds(self, spec, calls, refs):
        """Two catalogued mistakes of the task in one file, named together when together they explain the calls."""
        own = list(self.catalogue.bugs_for(spec.task))
        for i, first in enumerate(own):
            for second in own[i + 1 :]:
                if first.file != second.file:
                    continue
                try:
                    runner = self.mutant(first, None, also=second)
                except ValueError:  # the two edit the same text
                    continue
                if self._explains(runner, calls, refs):
                    pair = [first.id, second.id]
                    return [
                        (Diagnosis(id=first.id, kind="bug", params={"compound": pair}), runner),
                        (Diagnosis(id=second.id, kind="bug", params={"compound": pair}), runner),
                    ]
        return []

    def close(self):
        for runner in self._mutants.values():
            runner.close()


def pattern_hints(got, ref):
    """Hints read from how the submission's main output differs from the reference's."""
    hints = []
    if "weights" in got and isinstance(got["weights"], torch.Tensor) and got["weights"].is_floating_point():
        sums = got["weights"].double().sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-6):
            hints.append(Diagnosis(id="hint.rows_not_normalised", kind="hint"))
    key = "out" if "out" in got else None
    if key is None or not isinstance(got[key], torch.Tensor) or not isinstance(ref.get(key), torch.Tensor):
        return hints
    g, r = got[key], ref[key]
    if g.device.type == "meta" or not g.is_floating_point() or not r.is_floating_point():
        return hints
    g, r = g.double(), r.double()
    close = lambda a, b: a.shape == b.shape and bool(torch.allclose(a, b, atol=ATOL, rtol=RTOL))  # noqa: E731
    if g.dim() >= 2 and not close(g, r) and close(g.transpose(-2, -1), r):
        return hints + [Diagnosis(id="hint.transposed", kind="hint")]
    if g.shape != r.shape:
        return hints
    if torch.all(g == 0) and not torch.all(r == 0):
        return hints + [Diagnosis(id="hint.zero", kind="hint")]
    if close(-g, r):
        return hints + [Diagnosis(id="hint.sign", kind="hint")]
    nz = r.abs() > 1e-6
    if nz.sum() >= 2:
        ratio = g[nz] / r[nz]
        mean = float(ratio.mean())
        if abs(mean) > 1e-9 and float(ratio.std()) < 1e-4 * abs(mean) and not math.isclose(mean, 1.0, rel_tol=1e-4):
            for d in range(2, 4097):
                if math.isclose(mean, math.sqrt(d), rel_tol=1e-4) or math.isclose(mean, 1 / math.sqrt(d), rel_tol=1e-4):
                    return hints + [
                        Diagnosis(id="hint.sqrt_factor", kind="hint", params={"d": d, "factor": f"{mean:.4g}"})
                    ]
            return hints + [
                Diagnosis(id="hint.constant_factor", kind="hint", params={"factor": f"{mean:.4g}", "note": ""})
            ]
    if g.dim() >= 3:
        pos_ok = [close(g[..., i, :], r[..., i, :]) for i in range(g.shape[-2])]
        if len(pos_ok) >= 2 and pos_ok[-1] and not any(pos_ok[:-1]):
            hints.append(Diagnosis(id="hint.only_last_position", kind="hint"))
        elif 0 < sum(pos_ok) < len(pos_ok) and pos_ok[: sum(pos_ok)] == [True] * sum(pos_ok):
            hints.append(Diagnosis(id="hint.first_positions_only", kind="hint", params={"n": sum(pos_ok)}))
        rows_bad = [b for b in range(g.shape[0]) if not close(g[b], r[b])]
        if 0 < len(rows_bad) < g.shape[0]:
            hints.append(Diagnosis(id="hint.batch_row", kind="hint", params={"rows": rows_bad}))
    if g.dim() == 4 and g.shape[1] > 1:
        heads_ok = [h for h in range(g.shape[1]) if close(g[:, h], r[:, h])]
        if 0 < len(heads_ok) < g.shape[1]:
            hints.append(Diagnosis(id="hint.some_heads", kind="hint", params={"heads": heads_ok}))
    return hints


def make_diagnoser(assignment, *, ref):
    """A ``Diagnoser`` replaying on mutants of ``assignment``'s reference (``ref`` runs it)."""
    return Diagnoser(assignment, ref)
