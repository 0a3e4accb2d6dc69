"""A sealed worker says on which devices it can compute, before any student code runs; the grading uses only those,
so a jail that hides the machine's GPU costs the student nothing, and the report says the GPU was not graded."""

import pytest

from grader import api, engine
from grader.assignment import load
from grader.submission import child
from grader.views import terminal

TRANSFORMER = load("transformer")


def test_a_device_that_cannot_compute_here_is_not_usable():
    import torch

    assert child.usable_devices([]) == ["cpu"]
    assert child.usable_devices(["nonsense"]) == ["cpu"]
    cuda = child.usable_devices(["cuda"])
    assert cuda == (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_gpu_the_worker_cannot_reach_is_not_graded_and_costs_nothing(monkeypatch, lang):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine's workers reach its GPU: the case needs one they cannot")
    # The judge sees a GPU, the worker (as in a jail without /dev/nvidia*) cannot compute on it.
    monkeypatch.setattr(engine, "available_devices", lambda requested=None: ["cpu", "cuda"])
    result = api.check(
        path=TRANSFORMER.reference, tasks=["embedding", "layernorm"], profile="quick", sealed=True, lang=lang
    )
    devices_checks = [c for t in result.tasks for c in t.checks if c.id.endswith(".devices")]
    assert devices_checks and all(c.status == "passed" for c in devices_checks)
    assert result.score == result.max_score
    assert result.environment["devices"] == ["cpu"]
    assert result.environment["devices_unusable"] == ["cuda"]
    shown = terminal.summary(result, lang=lang)
    assert ("Not graded on cuda" if lang == "en" else "未在 cuda 上评分") in shown


def test_in_process_grading_keeps_the_judges_devices(monkeypatch):
    result = api.check(path=TRANSFORMER.reference, tasks=["embedding"], profile="quick")
    assert "devices_unusable" not in result.environment
    assert result.environment["devices"] == engine.available_devices()
