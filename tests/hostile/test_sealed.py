"""Sealed grading: a sealed grade is earned by the submission's own code, and no submission can
reach another. Each attack here scored, leaked or lingered on the code before the fix; the ones that need a
root judge (jails, uids of each worker's own) skip elsewhere with the reason. The batch of attackers beside correct
submissions, whose test reads what every jail on the machine left, is ``test_sealed_batch.py``: it runs alone."""

import ast
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import api
from grader.assignment import load
from grader.messages import render
from grader.submission.inprocess import excluded_tasks, reference_parts
from tests import hostile

HERE = Path(__file__).resolve().parent
THIEF = HERE / "thief"
SUBMISSIONS = HERE.parent / "submissions"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="jails and uids of each worker's own need a root judge; "
                                                         "as an ordinary user the worker runs as that user "
                                                         "(docs/SEALED.md)")
ASSIGNMENT = load()


# -- what a worker may hold -------------------------------------------------------------------------------------
@pytest.mark.parametrize("task", [t for t in ASSIGNMENT.task_ids if t != "overfit"])
def test_reference_parts_hold_nothing_of_the_task_or_above(task):
    parts = reference_parts(ASSIGNMENT, task)
    defined = set()
    for source in parts.values():
        for node in ast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
    own_reference = set(ASSIGNMENT.task_by_id[task].own_reference)
    for name in defined - own_reference:
        assert ASSIGNMENT.name_to_task.get(name) not in excluded_tasks(ASSIGNMENT, task), (task, name)
    assert task in excluded_tasks(ASSIGNMENT, task)
    # and everything beneath the task is there, so that isolated checks can run
    for dep in ASSIGNMENT.all_deps(task):
        assert set(ASSIGNMENT.task_by_id[dep].names) <= defined, (task, dep)


def test_the_fork_server_never_holds_the_reference():
    """What every worker inherits: torch and the grader, warmed up, and not one object of the reference."""
    code = f"""
import gc, linecache, sys, types
from grader.assignment import load
from grader.submission import child
child.prepare(load(), warm=True)
root = {str(ASSIGNMENT.reference)!r}
names = ('MultiHeadAttention', 'scaled_dot_product_attention', 'greedy_decode', 'train_step', 'LayerNorm')
mods = [m for m in sys.modules if m == 'solution' or m.startswith(('solution.', '_gradekit_sub'))]
code, named = [], []
for o in gc.get_objects():
    if isinstance(o, types.FunctionType) and o.__code__.co_filename.startswith(root):
        code.append(o)
    if isinstance(o, (type, types.FunctionType)) and o.__name__ in names and not o.__module__.startswith('torch'):
        named.append(o)
lines = [f for f in linecache.cache if f.startswith(root)]
print(len(mods), len(code), len(named), len(lines), mods[:3], named[:3])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=HERE.parent.parent)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[:4] == ["0", "0", "0", "0"], out.stdout


# -- a submission that implements nothing ----------------------------------------------------------------------
@ROOT_ONLY
def test_a_submission_that_implements_nothing_scores_nothing_sealed():
    result = api.check(path=THIEF, sealed=True, profile="quick", diagnose=False)
    passed = [c.id for t in result.tasks for c in t.checks if c.status == "passed"]
    assert passed == [], passed
    assert result.score == 0


# -- sizes and output -----------------------------------------------------------------------------------------
def test_a_huge_reply_is_refused_and_the_judge_stays_small(tmp_path):
    sub = hostile.build("huge", tmp_path / "huge")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = api.check(path=sub, sealed=True, tasks=["masks"], profile="quick", diagnose=False, memory_mb=4096)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 300, grown_mb
    checks = {c.id: c for t in result.tasks for c in t.checks}
    failed = [c for c in checks.values() if c.status != "passed"]
    assert failed and any("bytes" in render(c.message, "en") for c in failed), \
        [(c.id, c.message.params) for c in failed]


def test_printing_is_not_a_crime(tmp_path):
    sub = hostile.build("printer", tmp_path / "printer")
    result = api.check(path=sub, sealed=True, tasks=["masks"], profile="quick", diagnose=False)
    assert result.score == result.max_score == 10, [(c.id, c.status, c.message) for t in result.tasks
                                                     for c in t.checks]
    assert result.output_dropped > 0


# -- comparisons take plain tensors only, in every mode --------------------------------------------------------
AGREEABLE = '''

import sys as _sys


class _Sly(torch.Tensor):
    """Computes nothing; when the grader detaches it, hands back the reference's answer from the grader's frames."""

    def detach(self):
        frame = _sys._getframe(1)
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if isinstance(value, dict):
                    for v in value.values():
                        if type(v) is torch.Tensor and v.shape == self.shape and v is not self:
                            return v.clone()
            frame = frame.f_back
        return torch.zeros(self.shape)

    def as_subclass(self, cls):
        return self.detach()


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    out = torch.zeros(query.shape[:-1] + (value.shape[-1],), dtype=query.dtype)
    weights = torch.zeros(query.shape[:-1] + (key.shape[-2],), dtype=query.dtype)
    return out.as_subclass(_Sly), weights.as_subclass(_Sly)
'''


@pytest.mark.parametrize("sealed", [False, True], ids=["in-process", "sealed"])
def test_a_tensor_subclass_that_agrees_with_everything_earns_nothing(tmp_path, sealed):
    sub = tmp_path / "sly"
    shutil.copytree(SUBMISSIONS / "alt_loops", sub, ignore=shutil.ignore_patterns("__pycache__"))
    with open(sub / "attention.py", "a", encoding="utf-8") as f:
        f.write(AGREEABLE)
    result = api.check(path=sub, sealed=sealed, tasks=["sdpa"], profile="quick", diagnose=False)
    assert result.score == 0, [(c.id, c.status) for t in result.tasks for c in t.checks]
    said = " ".join(render(c.message, "en") for t in result.tasks for c in t.checks)  # the kit's words, in English
    assert "subclass of torch.Tensor" in said
