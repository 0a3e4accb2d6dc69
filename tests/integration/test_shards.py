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


def test_variants_wait_whole_in_a_single_judges_order_the_costliest_first():
    variants = ["integrated"] * 6 + ["isolated:a"] * 3 + ["isolated:b"] * 2 + ["isolated:c"] * 1
    order = [0, 6, 1, 9, 2, 7, 3, 10, 4, 8, 5, 11]
    per_check = {"isolated:a": 1, "isolated:b": 5, "isolated:c": 5}
    integrated, isolated = shards.queue(variants, order, lambda v, ix: per_check[v] * len(ix))
    assert integrated == [0, 1, 2, 3, 4, 5]  # the first judge's, first
    assert isolated == [("isolated:b", [9, 10]), ("isolated:c", [11]), ("isolated:a", [6, 7, 8])]  # 10, 5 (ties:
    # the first met), 3; each variant whole and in the single judge's order
    again = shards.queue(variants, order, lambda v, ix: per_check[v] * len(ix))
    assert again == (integrated, isolated)  # nothing but the checks decides the queue
    assert shards.queue(["integrated"] * 3, [0, 1, 2], None) == ([0, 1, 2], [])


def test_each_variant_is_taken_by_exactly_one_judge():
    """Two processes taking from one queue at once: every variant taken once, none twice, none lost."""
    tickets = shards._Tickets(200)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - what it took comes back through the pipe
        taken = bytearray()
        while (t := tickets.take()) is not None:
            taken.append(t)
            time.sleep(0.0005)
        os.write(w, bytes(taken))
        os._exit(0)
    os.close(w)
    mine = []
    while (t := tickets.take()) is not None:
        mine.append(t)
        time.sleep(0.0005)
    os.waitpid(pid, 0)
    theirs = list(os.read(r, 4096))
    os.close(r)
    tickets.close()
    assert sorted(mine + theirs) == list(range(200))
    assert mine and theirs  # both took some
    assert mine == sorted(mine) and theirs == sorted(theirs)  # each in the queue's order


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

        tickets = shards._Tickets(1)
        second = shards._Second.start(g, ["a check"], [("isolated:x", [0])], tickets, forever)
        assert second is not None
        try:
            assert second.ready() == []
        finally:
            started = time.monotonic()
            second.close()
            tickets.close()
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


def test_isolated_variants_cost_examples_times_the_parts_beneath_them():
    """An isolated example asks its judge for every reference part beneath its task: the language model's
    generation (eleven tasks beneath) waits before its attention (three), though both have a few checks."""
    specs, _ = engine.select(LM, profile="full")
    variants = [engine.variant_of(LM, spec) for spec in specs]
    order = list(range(len(specs)))
    cost = shards.variant_cost(LM, specs, "full")
    _, isolated = shards.queue(variants, order, cost)
    names = [v for v, _ in isolated]
    assert names.index("isolated:generate") < names.index("isolated:attention")
    generate = [i for i in order if variants[i] == "isolated:generate"]
    assert cost("isolated:generate", generate) == (1 + len(LM.all_deps("generate"))) * sum(
        specs[i].examples[1] for i in generate
    )
    quick = shards.variant_cost(LM, specs, "quick")("isolated:generate", generate)
    assert quick == (1 + len(LM.all_deps("generate"))) * sum(specs[i].examples[0] for i in generate)


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


def test_a_ticket_that_is_no_variant_or_taken_again_is_passed_over():
    tickets = shards._Tickets(3)
    try:
        assert tickets.take() == 0
        w = os.open(f"/proc/self/fd/{tickets.fd}", os.O_WRONLY)  # another end of the same pipe, as /proc gives
        os.write(w, bytes([200, 0, 1]))
        os.close(w)
        assert [tickets.take(), tickets.take(), tickets.take()] == [1, 2, None]  # 200 and 0 again: passed over
    finally:
        tickets.close()
