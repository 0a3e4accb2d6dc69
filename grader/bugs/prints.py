"""Diagnoses in a student kit: what the catalogue's mutants answered, recorded as fingerprints at build time.

A kit holds neither the reference nor its mutants (``grader.kit``), so it cannot replay a failing example on them
as ``diagnose.Diagnoser`` does. While a kit's answer bank is recorded (``kit.record``), every grading also
diagnoses, through a ``Recorder``: each answer a mutant gives to a question the diagnosis asks it (the failing
examples replayed, the fresh examples that confirm) is kept as a fingerprint under the exact question
(``refcache.question_key``) and the mutant's label (``"<bug id>#<spelling>"``, or ``"<bug id>+<bug id>"`` for two
mistakes together), with whether it differs from the reference's answer (decided then, exactly). ``bank.Prints``
holds them, with the catalogue's outline (ids, tasks, files, number of spellings: no edits) and the mutants whose edits
did not apply.

A fingerprint is not the answer. A float tensor keeps its shape, its dtype, where it is NaN or infinite, and the
sums of its elements over blocks of ``BLOCK`` (or more, for a tensor of more than ``MAX_SUMS`` blocks) consecutive
elements, each element taken with a fixed random weight (``_weights``: a sign and a size); another tensor, a string
or an error (its kind and meaning, as ``diagnose.same_error`` compares them) keeps a digest; numbers stay numbers.
``same`` compares a submission's result with a fingerprint as ``diagnose.same`` compares it with the mutant's
result:

* a tensor the full kit calls equal (every element within ``ATOL + RTOL * |submission's|``) always matches: each
  block's weighted sum of the differences is then within the weighted sum of those tolerances, which is all that
  is asked of it;
* a tensor it calls different fails to match unless each block's weighted sum of the differences stays within
  that bound: one element off by more than ``3 * BLOCK`` times the largest tolerance of its block (a weight is at
  least a third of the largest) is always seen, and most off by 2 to 3 times; smaller differences, just past the
  tolerance, may pass for equal (``tests/corpus/test_kit_diagnosis.py`` measures both sides).

``BankDiagnoser`` is ``diagnose.Diagnoser`` with the mutants' answers read from ``Prints`` and the reference's from
the bank: the same candidates, the same order, the same confirmation on fresh examples. Where it needs an answer
the kit does not hold (the student's example, or a fresh example's question, was never asked while recording), it
cannot tell what the full kit would name for that check: the check names nothing and says so (the shape hints,
which need only the reference's answer, stay), and neither do the other checks of its task
(``engine.consolidate_diagnoses`` weighs every failing check of a task) nor the integrated checks above it (their
candidates include what it would have named). It never names what the full kit would not, short of a block sum
passing for equal as above.
"""

import hashlib
import math

import numpy
import torch

from grader.bugs.diagnose import ATOL, RTOL, UNEXPLAINABLE, Diagnoser, _evidence, _meaning, pattern_hints
from grader.bugs.diagnose import same as same_result
from grader.errors import SubmissionError
from grader.submission import wire
from grader.submission.bank import NotInBank
from grader.submission.refcache import question_key

BLOCK = 2
"""Consecutive elements summed into one number of a float tensor's fingerprint."""
MAX_SUMS = 4096
"""The most block sums kept per tensor: a larger tensor has longer blocks."""
_SLACK = 2.0**-20
"""Relative room for rounding: the sums are computed in float64 and kept in float32."""


class Undecided(BaseException):  # noqa: N818 - it says what happened, like NotInBank
    """The kit does not hold an answer a diagnosis needs (raised inside ``BankDiagnoser``, caught there)."""


# -- fingerprints --------------------------------------------------------------------------------------------------


def _digest(data):
    return hashlib.blake2b(data, digest_size=16).digest()


_WEIGHTS: dict[int, torch.Tensor] = {}


def _weights(n):
    """``n`` fixed weights, each a random sign times a random size in [0.5, 1.5), the same on every machine (NumPy's
    legacy generator, whose streams are frozen by policy): a difference that the signs alone would cancel in a block
    (the same offset on every element of it, half of them taken with a minus) does not cancel with the sizes."""
    if n not in _WEIGHTS:
        if len(_WEIGHTS) > 64:
            _WEIGHTS.clear()
        rng = numpy.random.RandomState(n % (1 << 32))
        signs = rng.randint(0, 2, size=n).astype(numpy.float64) * 2.0 - 1.0
        _WEIGHTS[n] = torch.from_numpy(signs * (0.5 + rng.random_sample(n)))
    return _WEIGHTS[n]


def _block(n):
    return max(BLOCK, -(-n // MAX_SUMS))


def _block_sums(values, block):
    """Sums of ``values`` (float64, flat) over consecutive blocks of ``block`` elements (the last one shorter)."""
    n = values.numel()
    pad = (-n) % block
    if pad:
        values = torch.cat([values, values.new_zeros(pad)])
    return values.view(-1, block).sum(1)


def _error_digest(err):
    if err.kind == "contract":
        data = err.data or {}
        try:
            blob = wire.encode(tuple(data.get(k) for k in ("missing", "unexpected", "wrong_shape", "shared")))
        except wire.WireError:
            blob = repr(tuple(data.get(k) for k in ("missing", "unexpected", "wrong_shape", "shared"))).encode()
        return _digest(b"c" + blob)
    return _digest(b"m" + _meaning(err.detail).encode("utf-8", "surrogatepass"))


def fingerprint(x, depth=0):
    """The fingerprint of a mutant's result ``x`` (plain data the wire format carries)."""
    if depth > 50:
        return ("?",)
    if isinstance(x, SubmissionError):
        return ("e", x.kind, _error_digest(x))
    if isinstance(x, torch.Tensor):
        shape = [int(d) for d in x.shape]
        dtype = str(x.dtype).removeprefix("torch.")
        if x.device.type == "meta":
            return ("m", shape, dtype)
        if x.layout != torch.strided:
            return ("?",)
        x = x.detach().cpu()
        if not x.is_floating_point():
            return ("h", shape, dtype, _digest(x.contiguous().numpy().tobytes()))
        flat = x.double().reshape(-1)
        n = flat.numel()
        marks = [torch.nonzero(m).reshape(-1) for m in (torch.isnan(flat), flat == math.inf, flat == -math.inf)]
        finite = torch.where(torch.isfinite(flat), flat, flat.new_zeros(()))
        block = _block(n)
        sums = _block_sums(finite * _weights(n), block).float()
        return ("f", shape, dtype, block, sums, *marks)
    if isinstance(x, dict):
        keys = list(x)
        return ("d", keys, [fingerprint(x[k], depth + 1) for k in keys])
    if isinstance(x, (list, tuple)):
        return ("l", [fingerprint(v, depth + 1) for v in x])
    if isinstance(x, float):
        return ("F", x)
    if x is None or isinstance(x, (bool, int)):
        return ("v", x)
    if isinstance(x, str):
        return ("s", _digest(x.encode("utf-8", "surrogatepass")))
    try:
        return ("w", _digest(wire.encode(x)))
    except wire.WireError:
        return ("?",)


def same(fp, got, guarded=False):
    """Whether the submission's result ``got`` is what the mutant fingerprinted as ``fp`` answered, as
    ``diagnose.same`` decides it (``guarded``: as ``diagnose.same_but_guarded_nan``); ``Undecided`` where the
    fingerprint cannot tell."""
    tag = fp[0] if isinstance(fp, (list, tuple)) and fp else "?"
    if tag == "?":
        raise Undecided()
    if tag == "e" or isinstance(got, SubmissionError):
        return tag == "e" and isinstance(got, SubmissionError) and got.kind == fp[1] and _error_digest(got) == fp[2]
    if tag in ("f", "h", "m") or isinstance(got, torch.Tensor):
        return tag in ("f", "h", "m") and isinstance(got, torch.Tensor) and _same_tensor(fp, got, guarded)
    if tag == "d":
        if not isinstance(got, dict):
            return False
        keys, prints = fp[1], fp[2]
        if got.keys() != set(keys):
            return False
        return all(same(p, got[k], guarded) for k, p in zip(keys, prints))
    if tag == "l":
        if not isinstance(got, (list, tuple)) or len(got) != len(fp[1]):
            return False
        return all(same(p, g, guarded) for p, g in zip(fp[1], got))
    if tag == "F":
        mine = fp[1]
        if isinstance(got, float):
            if guarded and math.isnan(mine) and not math.isnan(got):
                return True
            return math.isclose(mine, got, rel_tol=RTOL, abs_tol=1e-9) or (math.isnan(mine) and math.isnan(got))
        return mine == got
    if tag == "v":
        return fp[1] == got
    if tag == "s":
        return isinstance(got, str) and _digest(got.encode("utf-8", "surrogatepass")) == fp[1]
    if tag == "w":
        try:
            return _digest(wire.encode(got)) == fp[1]
        except wire.WireError:
            return False
    raise Undecided()


def _same_tensor(fp, got, guarded):
    tag, shape, dtype = fp[0], fp[1], fp[2]
    if [int(d) for d in got.shape] != list(shape):
        return False
    mine_dtype = getattr(torch, dtype, None)
    if not isinstance(mine_dtype, torch.dtype):
        raise Undecided()
    if tag == "m" or got.device.type == "meta":
        return tag == "m" and got.device.type == "meta" and got.dtype == mine_dtype
    if got.layout != torch.strided:
        raise Undecided()
    got = got.detach().cpu()
    if mine_dtype != got.dtype and (mine_dtype == torch.bool or got.dtype == torch.bool):
        return False
    if tag == "h":
        try:
            converted = got.to(mine_dtype)
        except (RuntimeError, TypeError):
            return False
        return _digest(converted.contiguous().numpy().tobytes()) == fp[3]
    block, sums, nan, pinf, ninf = fp[3], fp[4], fp[5], fp[6], fp[7]
    if got.is_complex():
        raise Undecided()
    guarded = guarded and got.is_floating_point()  # as same_but_guarded_nan: only between two float tensors
    g = got.double().reshape(-1)
    n = g.numel()
    if block != _block(n) or sums.numel() != -(-n // block):
        raise Undecided()
    mine_nan = torch.zeros(n, dtype=torch.bool)
    mine_nan[nan] = True
    mine_pinf = torch.zeros(n, dtype=torch.bool)
    mine_pinf[pinf] = True
    mine_ninf = torch.zeros(n, dtype=torch.bool)
    mine_ninf[ninf] = True
    got_nan = torch.isnan(g)
    # Where the mutant gave NaN, the submission's NaN is equal; guarded, anything is (both count as 0 there).
    if bool((got_nan & ~mine_nan).any()) or (not guarded and not torch.equal(got_nan, mine_nan)):
        return False
    rest = ~mine_nan
    if not torch.equal((g == math.inf) & rest, mine_pinf) or not torch.equal((g == -math.inf) & rest, mine_ninf):
        return False
    finite = rest & ~mine_pinf & ~mine_ninf  # where the mutant's element is a number: so is the submission's here
    values = torch.where(finite, g, g.new_zeros(()))
    weights = _weights(n)
    tolerance = torch.where(finite, (ATOL + RTOL * values.abs()) * weights.abs(), g.new_zeros(()))
    got_sums = _block_sums(values * weights, block)
    bound = _block_sums(tolerance, block)
    scale = _block_sums(values.abs() * weights.abs(), block) + sums.double().abs()
    return bool(torch.all((got_sums - sums.double()).abs() <= bound + _SLACK * scale))


# -- what a kit holds ----------------------------------------------------------------------------------------------


def label(bug, spelling=None, also=None):
    """A mutant's name in ``Prints``: ``"<bug id>#<spelling>"``, or ``"<bug id>+<bug id>"``."""
    if also is not None:
        return f"{bug.id}+{also.id}"
    return f"{bug.id}#{spelling if spelling is not None else 0}"


class Recorder(Diagnoser):
    """``Diagnoser`` on the reference's mutants that keeps, in ``prints``, the fingerprint of every answer a mutant
    gives (``kit.record`` grades with it)."""

    def __init__(self, assignment, ref, prints):
        super().__init__(assignment, ref)
        self.prints = prints
        self._labels = {}

    def mutant(self, bug, spelling=None, also=None):
        name = label(bug, spelling, also)
        try:
            runner = super().mutant(bug, spelling, also)
        except ValueError:
            self.prints.broken.add(name)
            raise
        self._labels[id(runner)] = name
        return runner

    def __call__(self, spec, calls, found=None, fresh=None):
        named = super().__call__(spec, calls, found, fresh)
        if (
            calls
            and spec.diagnose
            and not any(isinstance(got, SubmissionError) and got.kind in UNEXPLAINABLE for *_, got in calls)
        ):
            self._every_answer(spec, calls, fresh)
        return named

    def _every_answer(self, spec, calls, fresh):
        """Fingerprint what every mutant a diagnosis of ``spec`` may ask gives on these failing calls (each spelling of
        the task's mistakes and of those beneath it, each pair of the task's own in one file), and what each single
        mistake gives on the check's fresh examples (the same for every submission): a kit's diagnosis of another
        submission failing on the same example then finds every answer it asks, whichever mutants match there."""
        bugs = list(self.catalogue.bugs_for(spec.task))
        if spec.variant != "isolated":
            for dep in self.assignment.all_deps(spec.task):
                bugs += [b for b in self.catalogue.bugs_for(dep) if b not in bugs]
        singles = []
        for bug in bugs:
            for k in range(len(bug.spellings())):
                try:
                    singles.append(self.mutant(bug, k))
                except ValueError:
                    continue
        pairs = []
        own = self.catalogue.bugs_for(spec.task)
        for i, first in enumerate(own):
            for second in own[i + 1 :]:
                if first.file == second.file:
                    try:
                        pairs.append(self.mutant(first, None, also=second))
                    except ValueError:
                        continue
        for runner in singles + pairs:
            for probe, args, _got in calls:
                self._answer(runner, probe, args)
        evidence = (self._fresh(fresh) if fresh is not None else None) or []
        for runner in singles if evidence else ():
            for probe, args, got in evidence:
                if not (isinstance(got, SubmissionError) and got.kind in UNEXPLAINABLE):
                    self._answer(runner, probe, args)

    def _answer(self, runner, probe, args):
        mine = super()._answer(runner, probe, args)
        name = self._labels.get(id(runner))
        key = question_key(probe, "integrated", args)
        if name is not None and key is not None and (key, name) not in self.prints.entries:
            ref = _evidence(probe, self._run(self.ref, probe, args))
            self.prints.entries[key, name] = (fingerprint(mine), not same_result(mine, ref))
        return mine


# -- the kit's diagnosis -------------------------------------------------------------------------------------------


class _Bug:
    """A catalogued bug as the kit knows it: no edits, only how many spellings it has."""

    def __init__(self, bug_id, task, file, spellings):
        self.id, self.task, self.file, self._n = bug_id, task, file, spellings

    def spellings(self):
        return [None] * self._n


class _Outline:
    """``Catalogue``'s ``bugs``, ``by_id`` and ``bugs_for``, from ``Prints.outline``."""

    def __init__(self, outline):
        self.bugs = [_Bug(*row) for row in outline]
        self.by_id = {b.id: b for b in self.bugs}

    def bugs_for(self, task_id):
        return [b for b in self.bugs if b.task == task_id]


class _Printed:
    """A mutant the kit cannot run: its name in ``Prints``."""

    def __init__(self, name):
        self.name = name

    def close(self):
        pass


class _Answer:
    def __init__(self, fp, differs):
        self.fp, self.differs = fp, differs


def _compared(fp, got, guarded):
    """``same``, undecided where the submission's result cannot even be compared (a tensor of a kind no fingerprint
    is taken of, say): nothing a submission returns may stop its grading."""
    try:
        return same(fp, got, guarded)
    except Exception:  # noqa: BLE001 - the submission's object, whatever it does when read
        raise Undecided() from None


class BankDiagnoser(Diagnoser):
    """``Diagnoser`` reading mutants' answers from ``Prints`` and the reference's from the bank (``ref``, a
    ``BankRunner``). ``undecided``: the tasks where it could not tell what the full kit names; ``settle`` (after
    ``engine.consolidate_diagnoses``) takes every catalogued name out of them and says why on their failing
    checks."""

    def __init__(self, assignment, ref, prints):
        self.assignment = assignment
        self._outline = None
        self.ref = ref
        self.prints = prints
        self._mutants = {}
        self.undecided = set()
        self._told = set()

    @property
    def catalogue(self):  # type: ignore[override]  # what diagnosing reads of one, from the outline, once asked
        if self._outline is None:
            self._outline = _Outline(self.prints.outline)
        return self._outline

    def mutant(self, bug, spelling=None, also=None):
        name = label(bug, spelling, also)
        if name in self.prints.broken:
            raise ValueError(name)
        return self._mutants.setdefault(name, _Printed(name))

    def _answer(self, runner, probe, args):
        key = question_key(probe, "integrated", args)
        found = None if key is None else self.prints.entries.get((key, runner.name))
        if found is None:
            raise Undecided()
        return _Answer(*found)

    def _same(self, mine, got):
        return _compared(mine.fp, got, False)

    def _same_guarded(self, mine, got):
        return _compared(mine.fp, got, True)

    def _differs(self, mine, ref):
        return mine.differs

    def _reference(self, probe, args):
        try:
            return self._run(self.ref, probe, args)
        except NotInBank:
            raise Undecided() from None

    def _fresh(self, fresh):
        try:
            return fresh()
        except NotInBank:
            raise Undecided() from None

    def __call__(self, spec, calls, found=None, fresh=None):
        above = spec.variant != "isolated" and any(d in self.undecided for d in self.assignment.all_deps(spec.task))
        if not above:
            try:
                return super().__call__(spec, calls, found, fresh)
            except Undecided:
                pass
        self.undecided.add(spec.task)
        self._told.add(spec.id)
        return self._hints(calls)

    def _hints(self, calls):
        """The shape hints of the first call, where the bank holds the reference's answer to it."""
        if not calls:
            return []
        probe, args, got = calls[0]
        try:
            ref = self._run(self.ref, probe, args)
        except NotInBank:
            return []
        return pattern_hints(got, ref) if isinstance(got, dict) and isinstance(ref, dict) else []

    def settle(self, results):
        """No catalogued name in an undecided task; a note on each check whose diagnosis the kit could not make."""
        from grader.results import Message

        for r in results:
            if r.task in self.undecided:
                r.diagnoses = [d for d in r.diagnoses if d.kind != "bug"]
                if r.id in self._told:
                    r.notes.append(Message("note.undiagnosed_in_kit", {}))


def make_bank_diagnoser(assignment, *, ref, prints):
    """A ``BankDiagnoser`` (``prints``: the kit's ``Prints``)."""
    return BankDiagnoser(assignment, ref, prints)
