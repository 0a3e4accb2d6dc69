"""A second assignment, built from docs/ASSIGNMENTS.md alone (tests/data/tiny_assignment), graded end to end.

It proves that the kit grades an assignment described as data: full marks for its reference, 0 for its skeleton,
each known bug charged to its own task and named, another correct style accepted, banned APIs withheld, the
sealed worker agreeing, and the Transformer assignment untouched by loading it.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from grader import api
from grader.assignment import load
from grader.bugs.catalogue import Catalogue
from grader.engine import checks_of

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "tiny_assignment"
SPEC = str(TINY)

ALT_STYLE = """
import torch
from torch import nn


def stable_softmax(x):
    m = torch.amax(x, dim=-1, keepdim=True)
    z = torch.exp(x - m)
    return z / torch.sum(z, dim=-1, keepdim=True)


class Attend(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q = self.proj(x)
        scores = torch.einsum("...id,...jd->...ij", q, x)
        return torch.einsum("...ij,...jd->...id", stable_softmax(scores), x)
"""

BANNED_SOFTMAX = """
import torch
import torch.nn.functional as F
from torch import nn


def stable_softmax(x):
    return F.softmax(x, dim=-1)


class Attend(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return stable_softmax(self.proj(x) @ x.transpose(-2, -1)) @ x
"""

BANNED_METHOD = BANNED_SOFTMAX.replace("return F.softmax(x, dim=-1)", "return x.softmax(dim=-1)")


def grade(path, **overrides):
    return api.check(path=str(path), assignment=SPEC, profile="quick", **overrides)


def write(tmp_path, source, name="sub"):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "ops.py").write_text(source, encoding="utf-8")
    return folder


def task(result, task_id):
    return next(t for t in result.tasks if t.id == task_id)


def full_marks(result):
    return result.score == result.max_score and all(t.score == t.max_score for t in result.tasks)


def test_reference_gets_full_marks():
    r = grade(TINY / "reference")
    assert r.max_score == 8
    assert [t.id for t in r.tasks] == ["softmax", "attend"]
    assert full_marks(r), [(c.id, c.status, c.message) for t in r.tasks for c in t.checks if c.score < c.max_score]


def test_skeleton_gets_zero_every_task_not_implemented():
    r = grade(TINY / "skeleton")
    assert r.score == 0
    assert all(t.not_implemented for t in r.tasks), [(t.id, t.not_implemented) for t in r.tasks]


@pytest.mark.parametrize("bug_id", [b.id for b in Catalogue(load(SPEC)).bugs])
def test_known_bug_loses_points_in_its_own_task_and_is_named(bug_id, tmp_path):
    catalogue = Catalogue(load(SPEC))
    bug = catalogue.by_id[bug_id]
    r = grade(catalogue.write_mutant(bug, tmp_path / "mutant"))
    own = task(r, bug.task)
    assert own.score < own.max_score, f"{bug_id} loses no points in {bug.task}"
    for other in r.tasks:
        if other.id != bug.task:
            assert other.score == other.max_score, f"{bug_id} costs points in {other.id} too"
    failed = [c for c in own.checks if c.score < c.max_score]
    named = [c.id for c in failed if bug_id in [d.id for d in c.diagnoses if d.kind == "bug"]]
    assert named, f"{bug_id} not diagnosed as itself: {[(c.id, c.diagnoses) for c in failed]}"


def test_another_correct_style_gets_full_marks(tmp_path):
    r = grade(write(tmp_path, ALT_STYLE))
    assert full_marks(r), [(c.id, c.status, c.message) for t in r.tasks for c in t.checks if c.score < c.max_score]


@pytest.mark.parametrize("source", [BANNED_SOFTMAX, BANNED_METHOD], ids=["F.softmax", "Tensor.softmax"])
def test_banned_api_withholds_that_tasks_points(source, tmp_path):
    r = grade(write(tmp_path, source))
    assert task(r, "softmax").score == 0, r.banned_api
    assert task(r, "softmax").banned
    assert task(r, "attend").score == task(r, "attend").max_score


def test_sealed_worker_gives_reference_full_marks():
    r = grade(TINY / "reference", sealed=True)
    assert r.sealed
    assert full_marks(r), [
        (c.id, c.status, c.message, c.error) for t in r.tasks for c in t.checks if c.score < c.max_score
    ]


def test_cli_grades_reference_and_skeleton(tmp_path):
    def run(folder):
        out = tmp_path / f"{folder.name}.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "check",
                str(folder),
                "--assignment",
                SPEC,
                "--profile",
                "quick",
                "--quiet",
                "--json",
                str(out),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return proc, out

    proc, out = run(TINY / "reference")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "8 / 8" in proc.stdout
    assert out.is_file()
    proc, _ = run(TINY / "skeleton")
    assert proc.returncode != 0
    assert "0 / 8" in proc.stdout


def test_loading_it_leaves_the_transformer_alone():
    before_ids = load("transformer").task_ids
    before = {s.id for s in checks_of(load("transformer"))}
    tiny = load(SPEC)
    tiny_specs = {(s.fn.__module__, s.id) for s in checks_of(tiny)}
    assert load("transformer").task_ids == before_ids
    after = checks_of(load("transformer"))
    assert {s.id for s in after} == before
    assert not {s.fn.__module__ for s in after} & {m for m, _ in tiny_specs}
    assert {i for _, i in tiny_specs} == {
        "softmax.equivalence",
        "softmax.rows_sum_to_one",
        "softmax.shift_invariant",
        "attend.parameters",
        "attend.equivalence",
    }


def test_its_messages_are_complete_in_both_languages():
    import string

    load(SPEC)  # puts tests/data on sys.path
    from tiny_assignment.messages import en, zh

    def fields(sentence):
        return sorted({name for _, name, _, _ in string.Formatter().parse(sentence) if name})

    assert en.MESSAGES.keys() == zh.MESSAGES.keys()
    for key, sentence in en.MESSAGES.items():
        assert fields(sentence) == fields(zh.MESSAGES[key]), key
    for b in Catalogue(load(SPEC)).bugs:
        assert {f"bug.{b.id}", f"bughint.{b.id}"} <= en.MESSAGES.keys(), b.id


def test_a_reference_that_raises_is_reported_as_the_assignments_fault(tmp_path):
    """An assignment author's broken reference is not blamed on the student: the check errs with
    error.reference, naming the reference's line."""
    import shutil

    broken = tmp_path / "broken_hw"
    shutil.copytree(TINY, broken, ignore=shutil.ignore_patterns("__pycache__"))
    ops = broken / "reference" / "ops.py"
    source = ops.read_text()
    head = "def stable_softmax(x: torch.Tensor) -> torch.Tensor:"
    assert source.count(head) == 1
    ops.write_text(source.replace(head, head + "\n    undefined_name"))
    result = api.check(path=TINY / "reference", assignment=broken, profile="quick", tasks=["softmax"])
    seen = {c.id: (c.status, c.message.key if c.message else None) for t in result.tasks for c in t.checks}
    assert seen["softmax.equivalence"] == ("error", "error.reference"), seen
    # the checks that never ask the reference still judge the submission; none is charged as its mistake
    assert all(v in (("passed", None), ("error", "error.reference")) for v in seen.values()), seen
