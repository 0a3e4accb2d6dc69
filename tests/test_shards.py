"""Two judges for one sealed grading (``grader.shards``): the same results as one judge, nothing lost if the second
fails, and the fork server's second socket serves and cleans up after the second judge alone."""

import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader import api, engine, shards
from grader.assignment import load
from grader.bugs.catalogue import Catalogue
from grader.submission import forkserver
from grader.submission.worker import WorkerRunner

pytestmark = pytest.mark.skipif(not forkserver.supported(), reason="a second judge needs the fork server (Linux)")

TRANSFORMER = load("transformer")
LM = load("decoder_lm")


def test_variants_are_dealt_whole_in_a_single_judges_order():
    variants = ["integrated"] * 6 + ["isolated:a"] * 3 + ["isolated:b"] * 2 + ["isolated:c"] * 1
    order = [0, 6, 1, 9, 2, 7, 3, 10, 4, 8, 5, 11]
    mine, theirs = shards.split(variants, order)  # two judges by default
    assert sorted(mine + theirs) == sorted(order)
    for part in (mine, theirs):
        assert part == [i for i in order if i in part]  # each keeps the single judge's order
    sides = {}
    for i in order:
        sides.setdefault(variants[i], set()).add(i in mine)
    assert all(len(s) == 1 for s in sides.values())  # no variant split between the judges
    assert all(i in mine for i in range(6))  # the integrated checks stay with the first judge
    assert theirs  # 6 integrated vs 24 of isolated work: some goes to the second
    assert shards.split(variants, order) == [mine, theirs]  # nothing but the checks decides
    assert shards.split(["integrated"] * 3, [0, 1, 2]) == [[0, 1, 2], []]
    three = shards.split(variants, order, 3)
    assert three == [[0, 1, 2, 3, 4, 5, 11], [6, 7, 8], [9, 10]]  # costs 6; a 12, b 8, then c 4 to the least busy
    assert shards.split(variants, order, 1) == [order]


def test_two_judges_only_where_workers_are_forked():
    class Runner:
        spawn = "exec"

        def twin(self):
            pass

    assert shards.wanted(Runner()) == 1
    assert shards.wanted(Runner(), 2) == 2
    assert shards.wanted(object()) == 1
    Runner.spawn = "fork"
    assert shards.wanted(Runner(), 1) == 1
    assert shards.wanted(Runner()) == (2 if len(os.sched_getaffinity(0)) >= 2 else 1)


def _verdicts(result):
    return [
        (
            c.id,
            c.variant,
            c.status,
            c.score,
            c.message.key if c.message else None,
            json.dumps(c.message.params, sort_keys=True, default=str) if c.message else None,
            [d.id for d in c.diagnoses],
            [n.key for n in c.notes],
            json.dumps(c.example, sort_keys=True, default=str),
        )
        for t in result.tasks
        for c in t.checks
    ]


CASES = {
    "transformer": (
        TRANSFORMER,
        "mha.scale_d_model",
        ["sdpa", "mha", "layernorm", "feedforward", "encoder_layer", "decoder_layer"],
    ),
    "decoder_lm": (LM, "rmsnorm.no_weight", ["rmsnorm", "rope", "swiglu", "gqa", "attention", "block"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_judges_grade_as_one(tmp_path, case):
    assignment, bug, tasks = CASES[case]  # a bug in a task that others build on: isolated checks, notes, names
    root = Catalogue(assignment).write_mutant(Catalogue(assignment).by_id[bug], tmp_path / "sub")
    results = [
        api.check(path=root, assignment=assignment.name, tasks=tasks, profile="quick", sealed=True, shards=n)
        for n in (1, 2)
    ]
    assert _verdicts(results[0]) == _verdicts(results[1])
    assert results[0].score < results[0].max_score  # a case with failures, diagnoses and notes to compare
    assert any(c.variant == "isolated" for t in results[1].tasks for c in t.checks)


def test_a_second_judge_that_dies_loses_nothing(tmp_path, monkeypatch):
    root = Catalogue(TRANSFORMER).write_mutant(Catalogue(TRANSFORMER).by_id["mha.scale_d_model"], tmp_path / "sub")
    tasks = ["sdpa", "mha", "encoder_layer"]
    alone = api.check(path=root, tasks=tasks, profile="quick", sealed=True, shards=1)
    first, run_one, ran = os.getpid(), engine.run_one, []

    def dies_in_the_second_judge(g, spec):
        ran.append(spec.id)
        if os.getpid() != first and len(ran) == 2:
            os._exit(3)  # after one result reported
        return run_one(g, spec)

    monkeypatch.setattr(engine, "run_one", dies_in_the_second_judge)
    both = api.check(path=root, tasks=tasks, profile="quick", sealed=True, shards=2)
    assert _verdicts(both) == _verdicts(alone)


def test_a_second_judge_that_runs_on_is_stopped(tmp_path):
    runner = WorkerRunner(TRANSFORMER.reference, assignment=TRANSFORMER, spawn="fork")
    try:
        runner.run("load_report")
        g = engine.Grading(TRANSFORMER, runner, None)

        def forever(g, spec):
            time.sleep(3600)

        before = set(Path(tempfile.gettempdir()).glob("gradekit-shard-*"))

        second = shards._Second.start(g, ["a check"], [0], forever)
        assert second is not None
        try:
            assert second.ready() == []
        finally:
            started = time.monotonic()
            second.close()
        assert time.monotonic() - started < 10
        with pytest.raises(ChildProcessError):
            os.waitpid(second.pid, os.WNOHANG)  # reaped
        assert set(Path(tempfile.gettempdir()).glob("gradekit-shard-*")) == before  # nothing in the file system
        assert runner.run("load_report") is not None  # the first judge's worker is untouched
    finally:
        runner.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_second_socket_spawns_and_its_close_kills_only_its_workers(monkeypatch):
    first = WorkerRunner(TRANSFORMER.reference, assignment=TRANSFORMER, spawn="fork")
    try:
        first.run("load_report")
        server = forkserver.shared(start=False, assignment=TRANSFORMER)
        connection = server.connect()
        assert connection.pid == server.pid and connection.sock.fileno() != server.sock.fileno()
        monkeypatch.setitem(forkserver._shared, TRANSFORMER.package, connection)
        second = WorkerRunner(TRANSFORMER.reference, assignment=TRANSFORMER, spawn="fork")
        second.run("load_report")
        pid = second._state["worker"].proc.pid
        assert Path(f"/proc/{pid}").exists()
        second._state["worker"] = None  # forgotten by its runner: only the socket's close may stop it
        connection.close()
        end = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists()  # killed and reaped by the server
        monkeypatch.setitem(forkserver._shared, TRANSFORMER.package, server)
        assert server.alive()
        assert first.run("load_report") is not None  # the first socket's worker lives on
        second.close()
    finally:
        first.close()


def test_the_judges_spend_one_budget():
    """A second judge's runner spends the same total time as the first's (the budget is shared, each judge writing
    its own slot): with two judges a slow submission does not get two budgets."""
    from grader.submission.worker import _Budget

    alone = _Budget()
    alone.spend(3.0)
    assert alone.used == 3.0 and alone.second(1).used == 0.0  # unshared: each its own
    first = _Budget()
    first.spend(2.0)
    first.share()
    pid = os.fork()
    if pid == 0:  # the second judge
        second = first.second(1)
        second.spend(5.0)
        second.spend(1.5)
        os._exit(0 if second.used == 8.5 else 1)
    assert os.waitpid(pid, 0)[1] == 0
    first.spend(0.5)
    assert first.used == 9.0


def test_isolated_variants_are_dealt_by_the_parts_beneath_them():
    """An isolated check costs its judge one stand-in answer per reference part beneath its task: the model's
    variant (eight parts) weighs more than the attention's (one), and the dealing follows."""
    cost = shards.isolated_cost(TRANSFORMER)
    assert cost("isolated:mha") == 2 and cost("isolated:model") == 1 + len(TRANSFORMER.all_deps("model"))
    variants = ["integrated"] * 10 + ["isolated:mha"] * 5 + ["isolated:model"] * 2
    order = list(range(len(variants)))
    mine, theirs = shards.split(variants, order, 2, cost)
    assert theirs == [15, 16] and mine == list(range(15))  # model 18 > integrated 10: mha 10 joins the lighter
    assert shards.split(variants, order) == [list(range(10)) + [15, 16], list(range(10, 15))]  # by count alone


def test_a_second_judge_keeps_the_first_judges_settings():
    """A twin runner polls (spins) exactly as the first was told to: two judges on two cores do not poll."""
    first = WorkerRunner(TRANSFORMER.reference, assignment=TRANSFORMER, spawn="fork")
    first.spin = 0.0
    twin = first.twin(slot=1)
    try:
        assert twin.spin == 0.0
        assert first.twin(slot=1, spin=0.001).spin == 0.001
    finally:
        twin.close()
        first.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_a_forked_judge_uses_the_first_judges_fork_server():
    """In a process forked from the one that started the server (the second judge), the handle it was given is
    alive (it cannot wait for a server that is not its child, which ``Popen.poll`` takes for an exit) and is the one
    it uses: no second server is started, which cost a second judge the whole import of torch; once the server is
    gone, the handle says so."""
    server = forkserver.ForkServer(TRANSFORMER)
    try:
        server.wait_ready()
        connection = server.connect()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - its exit status is the assertion
            ok = False
            try:
                server.sock.close()
                forkserver._shared[TRANSFORMER.package] = connection
                ok = connection.alive() and forkserver.shared(start=False, assignment=TRANSFORMER) is connection
            finally:
                os._exit(0 if ok else 1)
        assert os.waitpid(pid, 0)[1] == 0
        os.kill(server.pid, signal.SIGKILL)
        server.proc.wait(timeout=10)
        assert not connection.alive()
    finally:
        server.close()
