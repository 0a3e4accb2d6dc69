"""Hostile submissions against a sealed grading's two judges (``grader/shards.py``) and the devices a worker reports.

Each folder in ``independent_judges/`` is a submission written from the contract alone (``honest``) or derived from
it, with a README line saying what it tries and what a correct grader must do. Each is graded sealed, in a process
of its own with a time limit, and the test asserts that the grader held: the grading finishes, no reference source
reaches the report or the grader's output, no code of the submission ran in a judge, and the score is no higher
than the same code earns without the attack.

The ``unjailed_*`` attacks are graded with ``run_as=None`` (a worker as the judge's own user, no jail: what every
grading by an ordinary user is, and what docs/SEALED.md says ``--sealed`` still protects from forged replies and
hangs). Their daemon only touches the shard folder of the grading that started it (the one made just before its
first judge forked the second) and leaves when that judge is gone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.batch.sources import content_hash

HERE = Path(__file__).resolve().parent / "independent_judges"
KIT = Path(__file__).resolve().parents[2]
FORGE = Path("/tmp/gk-ij-forge")
"""Where the ``unjailed_*`` attacks keep their FIFOs, and what their code in a judge would leave (a marker, the
reference copied)."""

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the jail (a worker of its own uid, no /tmp) needs root")

DRIVER = r"""
import json, sys
from grader import api
from grader.views import json_view
path, out, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
result = api.check(path=path, sealed=True, **options)
json_view.write(result, out)
print("SCORE", result.score, result.max_score)
"""


class Graded:
    def __init__(self, result, output, seconds, finished):
        self.result, self.output, self.seconds, self.finished = result, output, seconds, finished

    @property
    def score(self):
        return self.result["score"]

    def text(self):
        return json.dumps(self.result, ensure_ascii=False) + "\n" + self.output

    def checks(self):
        return {c["id"]: c for t in self.result["tasks"] for c in t["checks"]}


def grade(folder, out_dir, name, *, timeout=600, **options):
    """Grade ``folder`` sealed in a process of its own (killed with its group past ``timeout`` seconds)."""
    out = Path(out_dir) / f"{name}.json"
    env = dict(os.environ, PYTHONPATH=str(KIT))
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(folder), str(out), json.dumps(options)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        env=env,
        cwd=out_dir,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
        finished = proc.returncode == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        finished = False
    seconds = time.monotonic() - start
    result = json.loads(out.read_text()) if finished and out.exists() else None
    return Graded(result, output, seconds, finished)


def _lines(folder, min_len):
    found = set()
    for path in Path(folder).rglob("*.py"):
        for line in path.read_text(errors="replace").splitlines():
            line = line.strip()
            if len(line) >= min_len:
                found.add(line)
    return found


def reference_lines(min_len=40):
    """Lines of the reference's source (long enough to mean something) that are not also public: in the skeleton
    (the same names, signatures and docstrings) or in one of these submissions."""
    secret = set()
    for folder in (KIT / "solution", KIT / "assignments" / "decoder_lm" / "reference"):
        if folder.is_dir():
            secret |= _lines(folder, min_len)
    public = _lines(KIT / "skeleton", min_len) | _lines(HERE, min_len)
    return sorted(secret - public)


def leaked(graded):
    """The reference's lines found in the report or the grading's output."""
    text = graded.text()
    return [line for line in reference_lines() if line in text]


def assert_no_reference(graded):
    found = leaked(graded)
    assert not found, f"reference source in the report or output: {len(found)} lines"


def assert_held(**problems):
    """Every attack's verdict in one message: each named problem that is true is a way the grader broke."""
    broke = {name: value for name, value in problems.items() if value}
    assert not broke, broke


def without(folder, tmp_path, helper):
    """A copy of ``folder`` whose ``helper`` module is empty: the same code without the attack."""
    copy = Path(tmp_path) / f"{Path(folder).name}-baseline"
    shutil.copytree(folder, copy)
    (copy / helper).write_text("")
    return copy


_BASELINES: dict = {}
"""``(the code's digest, options) -> Graded``: each baseline graded once per session (``baseline_of``)."""


def baseline_of(folder, tmp_path, helper, **options):
    """``folder``'s code without its attack (``without``), graded sealed with ``options``: once per session for each
    code and options, as a grading is the same on every run. Two attacks whose code is the same but for their helper
    (the two ``unjailed_*``) share it. The copy has no ``README.md`` (it says what the attack tries; no code reads it),
    so that the code's digest (``content_hash``, as a batch keys a submission) is the code's alone."""
    copy = without(folder, tmp_path, helper)
    (copy / "README.md").unlink(missing_ok=True)
    key = (content_hash(copy), json.dumps(options, sort_keys=True))
    if key not in _BASELINES:
        _BASELINES[key] = grade(copy, tmp_path, "baseline", timeout=400, **options)
    return _BASELINES[key]


@pytest.fixture
def forge_dir():
    shutil.rmtree(FORGE, ignore_errors=True)
    yield FORGE
    shutil.rmtree(FORGE / "leak", ignore_errors=True)  # what a judge may have copied there: never kept
    time.sleep(1.0)  # the attack's daemon leaves within milliseconds of its judge
    shutil.rmtree(FORGE, ignore_errors=True)


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    return grade(HERE / "honest", tmp_path_factory.mktemp("honest"), "honest")


def test_honest_earns_full_marks(honest):
    assert honest.finished, honest.output[-3000:]
    assert honest.score == honest.result["max_score"], [c for c in honest.checks().values() if c["status"] != "passed"]
    assert_no_reference(honest)


def test_unjailed_forged_shard(tmp_path, forge_dir):
    """A worker as the judge's user replaces the second judge's pickled results through FIFOs it planted."""
    folder = HERE / "unjailed_forged_shard"
    attacked = grade(folder, tmp_path, "attack", timeout=400, run_as=None)
    ran_in_judge = (forge_dir / "judge_exec.jsonl").exists()
    copied = (forge_dir / "leak").exists()
    baseline = baseline_of(folder, tmp_path, "_shard_forge.py", run_as=None)
    assert baseline.finished, baseline.output[-3000:]
    assert attacked.finished, attacked.output[-3000:]
    assert_held(
        code_ran_in_first_judge=ran_in_judge,
        reference_copied_by_that_code=copied,
        score_above_baseline=attacked.score > baseline.score and (attacked.score, baseline.score),
        reference_lines_in_report=len(leaked(attacked)),
    )


def test_unjailed_shard_hang(tmp_path, forge_dir):
    """The first judge opens a result that is a FIFO nobody writes: the grading must still finish."""
    folder = HERE / "unjailed_shard_hang"
    attacked = grade(folder, tmp_path, "attack", timeout=300, run_as=None)
    assert attacked.finished, f"no result after {attacked.seconds:.0f} s (killed): {attacked.output[-2000:]}"
    baseline = baseline_of(folder, tmp_path, "_shard_forge.py", run_as=None)
    assert_held(
        score_above_baseline=attacked.score > baseline.score and (attacked.score, baseline.score),
        reference_lines_in_report=len(leaked(attacked)),
    )


def test_time_budget_twice(tmp_path):
    """Two judges must not give a slow submission two total budgets: the same score as one judge."""
    folder = HERE / "time_budget_twice"
    # Seven variants, each a worker whose first call sleeps 8 s: 56 s of sleep alone, past one judge's 45 s budget
    # however fast the machine grades the rest (a budget above the sleep left the premise to the machine's speed).
    limits = {"call_timeout": 30.0, "total_timeout": 45.0}
    # The two gradings at once: each spends most of its time asleep in its workers. Sharing the cores can only make
    # the second grading slower, which cannot hide a second budget (it would score higher, not lower).
    with ThreadPoolExecutor(2) as pool:
        one_job = pool.submit(grade, folder, tmp_path, "one", shards=1, **limits)
        two = grade(folder, tmp_path, "two", **limits)
        one = one_job.result()
    assert one.finished and two.finished, (one.output[-2000:], two.output[-2000:])
    used_up = [i for i, c in one.checks().items() if (c.get("error") or {}).get("kind") == "timeout"]
    assert used_up, "one judge did not run out of time: the attack no longer tests a second budget"
    assert_held(
        score_above_one_judge=two.score > one.score
        and {
            "two judges": two.score,
            "one judge": one.score,
            "timed out with one judge": used_up,
            "with two": {i: c["status"] for i, c in two.checks().items() if i in used_up},
        },
        reference_lines_in_report=len(leaked(two)),
    )


@needs_root
def test_fd_spray(tmp_path, honest):
    """Notice lines and pickles written into every descriptor and any shard folder a jailed worker can see."""
    attacked = grade(HERE / "fd_spray", tmp_path, "attack", timeout=600)
    assert attacked.finished, attacked.output[-3000:]
    assert attacked.score <= honest.score
    assert_no_reference(attacked)


def test_standin_error_leak(tmp_path, honest):
    """Everything the stand-ins answer to wrong calls, printed and raised: no reference source in the report."""
    attacked = grade(HERE / "standin_error_leak", tmp_path, "attack", timeout=600)
    assert attacked.finished, attacked.output[-3000:]
    assert attacked.score <= honest.score
    assert_no_reference(attacked)


def test_banned_in_second_judge(tmp_path):
    """A banned call made only in checks the second judge grades still costs its task's points."""
    folder = HERE / "banned_in_second_judge"
    one = grade(folder, tmp_path, "one", shards=1)
    two = grade(folder, tmp_path, "two")
    assert one.finished and two.finished, (one.output[-2000:], two.output[-2000:])
    assert one.result["banned_api"], "the runtime watch saw no banned call with one judge"
    assert_held(
        score_above_one_judge=two.score > one.score and (two.score, one.score),
        banned_call_lost=not two.result["banned_api"],
        reference_lines_in_report=len(leaked(two)),
    )
