"""``ReferenceCache``: the reference's answers remembered by exact question, and grades unchanged by it."""

import pytest
import torch

from grader import api
from grader.submission import refcache
from grader.submission.refcache import CachedRunner, ReferenceCache
from tests.conftest import SOLUTION_ROOT, TRANSFORMER


class Counting:
    """A runner that answers with its inputs summed, counting the calls it really ran."""

    def __init__(self):
        self.calls = 0
        self.root = "somewhere"

    def run(self, probe, variant="integrated", **args):
        self.calls += 1
        if probe == "fail":
            raise ValueError("the reference raised")
        x = args.get("x")
        if isinstance(x, torch.Tensor):
            x = x * 1.0 if probe == "whole" else (x * 1.0).sum(-1)
        return {"out": x, "probe": probe}


def test_the_same_question_is_computed_once_and_a_changed_answer_does_not_leak():
    runner = Counting()
    cached = CachedRunner(runner, ReferenceCache())
    x = torch.arange(6, dtype=torch.float64).view(2, 3)
    first = cached.run("p", x=x)
    first["out"].add_(100.0)  # a check that changes what it got
    first["probe"] = "changed"
    again = cached.run("p", x=x.clone())
    assert runner.calls == 1 and cached.cache.hits == 1
    assert again["out"].tolist() == [3.0, 12.0] and again["probe"] == "p"
    assert cached.root == "somewhere"  # everything else is the runner's


@pytest.mark.parametrize(
    "other",
    [
        lambda x: x.to(torch.float32),  # another dtype
        lambda x: x.t().contiguous().t(),  # the same elements with other strides
        lambda x: torch.nextafter(x, torch.full_like(x, 100.0)),  # one ulp up
        lambda x: x.requires_grad_(True),
    ],
)
def test_any_difference_in_the_question_is_another_question(other):
    runner = Counting()
    cache = ReferenceCache()
    x = torch.arange(6, dtype=torch.float64).view(2, 3)
    cache.run(runner, "p", "integrated", {"x": x.clone()})
    cache.run(runner, "p", "integrated", {"x": other(x.clone())})
    assert runner.calls == 2 and cache.hits == 0
    cache.run(runner, "p", "isolated:mha", {"x": x.clone()})  # another variant
    cache.run(runner, "q", "integrated", {"x": x.clone()})  # another probe
    assert runner.calls == 4


def test_what_raises_or_cannot_be_encoded_is_not_remembered():
    runner = Counting()
    cache = ReferenceCache()
    for _ in range(2):
        with pytest.raises(ValueError):
            cache.run(runner, "fail", "integrated", {})
    assert runner.calls == 2
    for _ in range(2):  # a function is not plain data: run each time, no error of the cache's own
        assert cache.run(runner, "p", "integrated", {"x": len})[0]["out"] is len
    assert runner.calls == 4 and cache.hits == 0


def test_the_least_recently_used_answers_go_first_past_the_size_limit():
    runner = Counting()
    cache = ReferenceCache(max_bytes=3000)
    questions = [torch.full((2, 40), float(i), dtype=torch.float64) for i in range(6)]  # answers of 700 bytes
    for x in questions:
        cache.run(runner, "whole", "integrated", {"x": x})
    assert 0 < cache.size <= 3000 and runner.calls == 6
    cache.run(runner, "whole", "integrated", {"x": questions[-1]})
    assert runner.calls == 6  # the newest is kept
    cache.run(runner, "whole", "integrated", {"x": questions[0]})
    assert runner.calls == 7  # the oldest was dropped


def _verdicts(result):
    return [
        (
            c.id,
            c.variant,
            c.status,
            c.score,
            c.message.key if c.message else None,
            repr(c.example),
            [d.id for d in c.diagnoses],
        )
        for t in result.tasks
        for c in t.checks
    ]


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setattr(refcache, "_SHARED", {})
    return lambda: refcache.shared(TRANSFORMER)


def test_sealed_grades_are_the_same_with_remembered_answers(fresh_cache, make_submission):
    """A correct submission after a buggy one, and a buggy one after a correct one, are graded as with no cache."""
    buggy = make_submission(
        {"attention.py": ('masked_fill(~mask, float("-inf"))', "masked_fill(~mask, 0.0)")}, name="buggy"
    )
    tasks, cold = ["sdpa", "mha"], {}
    for name, path in (("buggy", buggy), ("solution", SOLUTION_ROOT)):
        refcache._SHARED.clear()
        cold[name] = _verdicts(api.check(path=path, tasks=tasks, profile="quick", sealed=True))
    assert cold["solution"] != cold["buggy"]
    refcache._SHARED.clear()
    for name, path in (("solution", SOLUTION_ROOT), ("buggy", buggy), ("solution", SOLUTION_ROOT)):
        assert _verdicts(api.check(path=path, tasks=tasks, profile="quick", sealed=True)) == cold[name], name
    assert fresh_cache().hits > 0


def test_a_grading_in_process_neither_reads_nor_fills_it(fresh_cache):
    cache = fresh_cache()
    api.check(path=SOLUTION_ROOT, tasks=["masks"], profile="quick")
    assert (cache.hits, cache.misses, cache.size) == (0, 0, 0)
