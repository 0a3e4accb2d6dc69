"""Known bugs: an assignment's classic mistakes, each a small edit of its reference (the list: ``Assignment.bugs``).

A ``Bug`` names its task and a list of exact text replacements in one
reference file. Applying them gives a mutant of the reference that behaves
the way a student's code with that mistake behaves. The catalogue serves two
purposes: the kit's mutation test (every bug must lose points in its own
task) and diagnosis (a failing submission whose outputs match a mutant's is
told which mistake it most likely made). Explanations and hints live in the
message catalogue under ``bug.<id>`` and ``bughint.<id>``.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    """One known mistake."""

    id: str
    """``"<task>.<name>"``."""
    task: str
    """The task whose code it lives in."""
    file: str
    """The reference file it edits."""
    edits: tuple
    """``((find, replace), ...)``: each ``find`` occurs exactly once in the file."""
    variants: tuple = ()
    """Other spellings of the same mistake, each a tuple of edits like ``edits`` (a causal mask that blocks the
    diagonal but keeps position 0 visible is still "the diagonal is blocked"). Where ``edits`` has several
    edits, every non-empty part of them is a spelling too (attention biases left out, but not the FFN's)."""

    def spellings(self):
        """Every edit set that shows this mistake: the catalogued one, its parts, then the variants."""
        import itertools

        parts = [tuple(c) for k in range(len(self.edits) - 1, 0, -1) for c in itertools.combinations(self.edits, k)]
        return [self.edits, *parts, *self.variants]


def bug(bug_id, file, *edits, variants=()):
    return Bug(bug_id, bug_id.split(".")[0], file, tuple(edits), tuple(tuple(v) for v in variants))


def apply(bug, source, edits=None):
    """``source`` (the reference file's text) with ``bug``'s edits (or the spelling ``edits``); ``ValueError`` if a
    find is not unique."""
    for find, replace in bug.edits if edits is None else edits:
        n = source.count(find)
        if n != 1:
            raise ValueError(f"bug {bug.id}: expected the text {find!r} exactly once in {bug.file}, found it {n} times")
        source = source.replace(find, replace)
    return source


class Catalogue:
    """An assignment's known bugs (its ``bugs`` module): ``bugs``, ``by_id``, ``equivalent``."""

    def __init__(self, assignment):
        self.assignment = assignment
        self.bugs, self.equivalent = assignment.bug_catalogue()
        self.by_id = {b.id: b for b in self.bugs}

    def bugs_for(self, task_id):
        """The catalogued bugs of one task, in catalogue order."""
        return [b for b in self.bugs if b.task == task_id]

    def write_mutant(self, bug, dest, edits=None):
        """Write the reference with ``bug`` applied into folder ``dest`` (a submission with exactly that mistake);
        ``edits``: one of its other spellings (``Bug.spellings``)."""
        return write_mutant(bug, dest, self.assignment, edits)


def write_mutant(bug, dest, assignment, edits=None):
    """Write ``assignment``'s reference with ``bug`` (or its spelling ``edits``) applied into folder ``dest``."""
    from pathlib import Path

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for file in assignment.contract_files:
        source = (assignment.reference / file).read_text(encoding="utf-8")
        (dest / file).write_text(apply(bug, source, edits) if file == bug.file else source, encoding="utf-8")
    return dest
