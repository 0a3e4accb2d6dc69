"""A student's own check (in process, the default) has a time limit per call: an endless loop in their code ends
that call with a timeout naming the line, instead of hanging ``gradekit check`` for ever; a debugger attached, or
somebody else's timer, turns the limit off."""

import signal
import sys
import threading
import time

import pytest

from grader import api
from grader.submission.inprocess import CallTimeout, TimeLimit
from grader.views import terminal

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="the in-process time limit needs SIGALRM")

RETURN = "    return embeddings + num_layers * (encoder_layer + decoder_layer) + final_norms + output_proj"
ENDLESS = {
    "training.py": (
        RETURN,
        "    layers, i = 0, 0\n"
        "    while i < num_layers:  # i is never incremented\n"
        "        layers += encoder_layer + decoder_layer\n"
        "    return embeddings + layers + final_norms + output_proj",
    )
}
SWALLOWING = {
    "training.py": (
        RETURN,
        "    while True:\n"
        "        try:\n"
        "            num_layers = int(num_layers)\n"
        "        except Exception:\n"
        "            pass\n"
        "    return 0",
    )
}


def _grade(path, tasks=("param_count", "masks"), **options):
    started = time.monotonic()
    result = api.check(path=path, tasks=list(tasks), profile="quick", **options)
    return result, time.monotonic() - started


def _task(result, task_id):
    return next(t for t in result.tasks if t.id == task_id)


@pytest.mark.parametrize("edits", [ENDLESS, SWALLOWING], ids=["endless_loop", "loop_swallowing_exceptions"])
def test_an_endless_loop_ends_its_call_with_a_timeout_naming_the_line(make_submission, edits):
    result, took = _grade(make_submission(edits), call_timeout=1.0)
    param_count = _task(result, "param_count")
    assert param_count.score == 0
    [first, *_] = [c for c in param_count.checks if c.status == "error"]
    assert first.error["kind"] == "timeout", first.error
    assert first.error["file"] == "training.py" and first.error["line"] > 0
    assert "your code did not finish within 1 s (it was at training.py:" in first.error["detail"]
    assert _task(result, "masks").score == _task(result, "masks").max_score  # the rest is graded as usual
    assert took < 30, took
    line = f"training.py:{first.error['line']}"
    assert f"your code did not finish within 1 s (it was at {line}: " in terminal.summary(result, lang="en")
    assert f"你的代码没有在 1 秒内完成（当时运行到 {line}：" in terminal.summary(result, lang="zh")


def test_the_total_limit_stops_every_later_call_at_once(make_submission):
    """param_count's call gets what is left of the total; overfit, graded after it, finds the total used up."""
    result, took = _grade(
        make_submission(ENDLESS), tasks=("param_count", "overfit"), call_timeout=5.0, total_timeout=1.0
    )
    [looped] = [c.error for c in _task(result, "param_count").checks if c.status == "error"]
    assert "(what was left of the 1 s for all calls together)" in looped["detail"], looped
    later = [c.error for c in _task(result, "overfit").checks]
    assert later and all(e and e["kind"] == "timeout" and "is used up" in e["detail"] for e in later), later
    assert took < 20, took
    zh = terminal.summary(result, lang="zh")
    assert "所有调用合计最多 1 秒；当时运行到 training.py:" in zh and "之前的调用已用完" in zh, zh
    assert "did not finish" not in zh and "used up" not in zh


def test_a_correct_submission_is_not_disturbed(make_submission):
    result, _ = _grade(make_submission(), call_timeout=5.0)
    assert result.score == result.max_score
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)


def _spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return "done"


def test_time_limit_raises_where_the_code_is_and_restores_everything():
    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(CallTimeout):
        with TimeLimit(0.2):
            _spin(5)
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with TimeLimit(2.0):
        assert _spin(0.1) == "done"


def test_no_limit_while_a_debugger_or_tracer_is_attached():
    """pdb, an IDE's debugger and coverage all trace: a student stopped at a breakpoint is not timed out."""

    def tracer(frame, event, arg):
        return None

    sys.settrace(tracer)
    try:
        with TimeLimit(0.2):
            assert _spin(0.8) == "done"
    finally:
        sys.settrace(None)


def test_no_limit_where_somebody_else_owns_the_alarm():
    """pytest-timeout and the like arm ``ITIMER_REAL`` themselves: their timer is left alone."""
    old = signal.signal(signal.SIGALRM, lambda *a: None)
    signal.setitimer(signal.ITIMER_REAL, 100.0)
    try:
        with TimeLimit(0.2) as limit:
            assert not limit.active
            assert _spin(0.5) == "done"
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 90  # still theirs, still running
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_no_limit_outside_the_main_thread():
    seen = {}

    def body():
        with TimeLimit(0.2) as limit:
            seen["active"] = limit.active
            seen["result"] = _spin(0.5)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(10)
    assert seen == {"active": False, "result": "done"}


def test_an_endless_loop_at_import_is_an_import_error_that_says_so(make_submission):
    """The loop runs while ``masks.py`` is imported: that file (and those importing it) could not be imported, the
    error says it did not finish and where, and a task in another file is graded as usual."""
    sub = make_submission({"masks.py": ("import torch\n", "import torch\nwhile True:\n    pass\n")})
    started = time.monotonic()
    result = api.check(path=sub, tasks=["masks", "embedding"], profile="quick", call_timeout=1.0)
    assert time.monotonic() - started < 30
    assert "did not finish within 1 s" in result.load_errors["masks.py"]["detail"]
    assert result.load_errors["masks.py"]["file"] == "masks.py"
    assert _task(result, "masks").score == 0
    assert _task(result, "embedding").score == _task(result, "embedding").max_score


def test_a_call_far_slower_than_the_reference_stops_early_and_is_not_waited_for_again(make_submission):
    """With the default 60 s per call, the endless loop is stopped after the relative floor (the reference answers
    the same call in milliseconds), and each later check of the same function says so without waiting again."""
    from grader.checks.base import RELATIVE_FLOOR

    endless = {
        "masks.py": (
            "    keep = torch.ones(size, size, dtype=torch.bool, device=device).tril()  # [L, L]\n",
            "    while size > 0:  # never ends\n        size = size + 1\n    keep = None\n",
        )
    }
    result, took = _grade(make_submission(endless), tasks=("masks",))
    status = {c.id: (c.status, c.message.key if c.message else None) for c in _task(result, "masks").checks}
    assert status == {
        "masks.padding": ("passed", None),
        "masks.causal": ("error", "error.timeout_at_slow"),
        # target_mask calls causal_mask: another function of the contract, waited for once too
        "masks.target": ("error", "error.timeout_at_slow"),
        "masks.device": ("error", "error.timeout_again"),
    }, status
    first, again = (
        next(c for c in _task(result, "masks").checks if c.id == i) for i in ("masks.causal", "masks.device")
    )
    assert first.message.params["seconds"] == f"{RELATIVE_FLOOR:g}" and first.message.params["file"] == "masks.py"
    assert float(first.message.params["reference"]) < 1.0
    assert again.message.params["check"] == "masks.causal"
    assert took < 60, took  # two floors' wait, not a minute per check (three minutes before)
    said = terminal.summary(result, lang="zh")
    assert "已在 masks.causal 中超时" in said and "参考实现在同一次调用上只用了" in said


def test_a_call_slower_than_the_reference_but_within_the_floor_passes(make_submission):
    """Relative limits must not fail slow correct code: one call that sleeps 2 s (a first-call warm-up, say) is
    still graded as correct."""
    slow = {"training.py": (RETURN, "    import time\n    time.sleep(2)\n" + RETURN)}
    result, _ = _grade(make_submission(slow), tasks=("param_count",))
    task = _task(result, "param_count")
    assert task.score == task.max_score, [(c.id, c.message) for c in task.checks if c.status != "passed"]
