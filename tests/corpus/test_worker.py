"""``WorkerRunner``: the same results as ``InProcessRunner``, and hostile submissions contained.

The hostile submission is the reference with ``MultiHeadAttention.forward`` replaced by one whose
behaviour depends on ``d_model`` (with ``num_heads=1``), so that one folder and one runner serve
every hostile case; a case that kills the worker makes the next ``run`` start a fresh one.
"""

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

from grader.assignment import load
from grader.errors import SubmissionError
from grader.submission.banned import Finding
from grader.submission.inprocess import InProcessRunner
from grader.submission.worker import WorkerRunner

ASSIGNMENT = load()
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ASSIGNMENT.reference

MODES = {
    2: "loop",
    3: "exit",
    4: "raise",
    5: "print",
    6: "subclass",
    7: "poison",
    9: "spawn",
    10: "memory",
    11: "banned",
    12: "env",
    13: "peek",
    14: "identity",
    15: "trespass",
}
D_OF = {mode: d for d, mode in MODES.items()}

HOSTILE = """

# ---- hostile additions (tests/corpus/test_worker.py) ----
import builtins as _builtins
import os as _os
import signal as _signal
import subprocess as _sp
import torch
import torch.nn.functional as _F

_MARKERS = {markers!r}
_MODES = {modes!r}


class _Evil(torch.Tensor):
    def __reduce_ex__(self, proto):
        open(_os.path.join(_MARKERS, "subclass"), "w").close()
        return torch.Tensor.__reduce_ex__(self.as_subclass(torch.Tensor), proto)


_reference_forward = MultiHeadAttention.forward


def _hostile_forward(self, query, key, value, mask=None):
    mode = _MODES.get(self.w_q.in_features, "normal")
    if mode == "loop":
        _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
        while True:
            pass
    if mode == "exit":
        _os._exit(0)
    if mode == "raise":
        raise ValueError("hostile value error")
    if mode == "print":
        while True:
            print("x" * 1000)
    if mode == "subclass":
        return _reference_forward(self, query, key, value, mask).as_subclass(_Evil)
    if mode == "poison":  # forge a reply: a pickle that runs code when loaded, into every pipe it holds
        import pickle as _pickle
        import stat as _stat
        import struct as _struct

        code = "open(" + repr(_os.path.join(_MARKERS, "poison")) + ", 'w').close()"

        class _Payload:
            def __reduce__(self):
                return (_builtins.exec, (code,))

        torch.Tensor.__reduce_ex__ = lambda t, proto: (_builtins.exec, (code,))
        blob = _pickle.dumps({{"result": {{"out": _Payload()}}, "findings": []}})
        for fd in range(3, 256):
            try:
                if _stat.S_ISFIFO(_os.fstat(fd).st_mode):
                    _os.write(fd, _struct.pack("<Q", len(blob)) + blob)
            except OSError:
                pass
    if mode == "spawn":  # two children that sleep, one in a session of its own (forked: a jail has no programs)
        import time as _time
        pids = []
        for new_session in (False, True):
            pid = _os.fork()
            if pid == 0:
                if new_session:
                    _os.setsid()
                _time.sleep(60)
                _os._exit(0)
            pids.append(pid)
        raise RuntimeError("spawned " + " ".join(map(str, pids)))
    if mode == "memory":
        hoard = []
        while True:
            hoard.append(torch.empty(1 << 24, dtype=torch.float64))  # 128 MiB of address space each
    if mode == "banned":
        getattr(_F, "scaled_dot_" + "product_attention")(query, key, value)
    if mode == "env":
        raise RuntimeError(repr((sorted(_os.environ), _os.getcwd())))
    if mode == "peek":  # the reference's file, where the kit's own layout puts it
        import grader as _g
        kit = _os.path.dirname(_os.path.dirname(_os.path.abspath(_g.__file__)))
        return open(_os.path.join(kit, "solution", "attention.py")).read()
    if mode == "identity":
        raise RuntimeError(repr((_os.getuid(), _os.geteuid(), _os.getgid(), _os.getgroups())))
    if mode == "trespass":  # read the judge's secret, write into the judge's results: both must fail
        done = []
        try:
            done.append(open(_os.path.join(_MARKERS + "-judge", "secret")).read())
        except OSError:
            pass
        try:
            open(_os.path.join(_MARKERS + "-judge", "results.json"), "w").write("{{}}")
            done.append("wrote results.json")
        except OSError:
            pass
        if done:
            raise RuntimeError("trespassed: " + repr(done))
    return _reference_forward(self, query, key, value, mask)


MultiHeadAttention.forward = _hostile_forward
"""


# -- helpers --------------------------------------------------------------------------------------
def mha_args(d_model=8, num_heads=2, seed=0, mask=True):
    torch.manual_seed(seed)
    from solution.attention import MultiHeadAttention

    ref = MultiHeadAttention(d_model, num_heads, dropout=0.0).double()
    state = {n: p.detach().clone() for n, p in ref.named_parameters()}
    q = torch.randn(2, 5, d_model, dtype=torch.float64)
    kv = torch.randn(2, 4, d_model, dtype=torch.float64)
    m = torch.tensor([[True, True, True, False], [True, True, False, False]]).view(2, 1, 1, 4)
    return {
        "name": "MultiHeadAttention",
        "kwargs": {"d_model": d_model, "num_heads": num_heads, "dropout": 0.0},
        "state": state,
        "inputs": [q, kv, kv] + ([m] if mask else []),
    }


def hostile_args(mode):
    return mha_args(d_model=D_OF[mode], num_heads=1, mask=False)


def assert_same(a, b, path="result"):
    assert type(a) is type(b), f"{path}: {type(a)} vs {type(b)}"
    if isinstance(a, torch.Tensor):
        assert type(a) is torch.Tensor
        assert a.dtype == b.dtype and a.shape == b.shape and a.device == b.device, path
        assert a.device.type == "meta" or torch.equal(a, b), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


def gone(pid):
    """The process no longer runs (absent, or a zombie nobody has reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


# -- fixtures -------------------------------------------------------------------------------------
# Starting a worker costs a torch import (seconds): the runners of this module start theirs together,
# in the background, as soon as the first test needs any of them; the tests that kill a worker
# mostly have a runner of their own, so that they need not wait for a restart.
@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    root = base / "submission"
    # Where the hostile code leaves evidence: writable by the worker, which runs as ``nobody`` when the
    # tests run as root; beside it a folder of the judge's that the worker must not read or write.
    markers = Path(tempfile.mkdtemp(prefix="gradekit-markers-"))
    os.chmod(markers, 0o777)
    judge = Path(str(markers) + "-judge")
    judge.mkdir(mode=0o755)
    (judge / "secret").write_text("the judge's secret")
    os.chmod(judge / "secret", 0o600)
    shutil.copytree(REFERENCE, root, ignore=shutil.ignore_patterns("__pycache__"))
    source = (REFERENCE / "attention.py").read_text() + HOSTILE.format(markers=str(markers), modes=MODES)
    (root / "attention.py").write_text(source)
    yield root, markers
    shutil.rmtree(markers, ignore_errors=True)
    shutil.rmtree(judge, ignore_errors=True)


@pytest.fixture(scope="module")
def runners(hostile_root):
    root, _ = hostile_root
    os.environ["GRADEKIT_TEST_SECRET"] = "do-not-leak"
    made = {
        "reference": WorkerRunner(REFERENCE, assignment=ASSIGNMENT, call_timeout=60),
        "hostile": WorkerRunner(root, assignment=ASSIGNMENT, call_timeout=3, memory_mb=1500, output_cap=1 << 20),
        "spawner": WorkerRunner(root, assignment=ASSIGNMENT, call_timeout=20),
        "exiter": WorkerRunner(root, assignment=ASSIGNMENT, call_timeout=20),
        "poisoner": WorkerRunner(root, assignment=ASSIGNMENT, call_timeout=20),
    }
    try:
        for runner in made.values():
            runner.prestart()
    finally:
        del os.environ["GRADEKIT_TEST_SECRET"]
    yield made
    for runner in made.values():
        runner.close()


@pytest.fixture(scope="module")
def pair(runners):
    local = InProcessRunner(REFERENCE, assignment=ASSIGNMENT)
    yield runners["reference"], local
    local.close()


@pytest.fixture(scope="module")
def hostile(runners, hostile_root):
    root, markers = hostile_root
    return runners["hostile"], root, markers


# -- same results as in-process ---------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["integrated", "isolated:mha"])
def test_forward_matches_in_process(pair, variant):
    worker, local = pair
    args = mha_args()
    assert_same(worker.run("forward", variant, **args), local.run("forward", variant, **args))


def test_other_probes_match_in_process(pair):
    worker, local = pair
    tokens = torch.tensor([[5, 3, 0, 0], [7, 0, 0, 0]])
    q, k, v = (torch.randn(2, 3, 4, 6, dtype=torch.float64) for _ in range(3))
    mask = torch.rand(2, 3, 4, 4) > 0.3
    mask[..., 0] = True
    cases = [
        ("call", {"name": "padding_mask", "args": [tokens, 0]}),
        ("call", {"name": "count_parameters", "args": [11, 13, 8, 2, 16, 2]}),
        ("sdpa", {"query": q, "key": k, "value": v, "mask": mask}),
        ("params", {"name": "MultiHeadAttention", "kwargs": {"d_model": 8, "num_heads": 2}}),
        ("construct", {"name": "MultiHeadAttention", "kwargs": {"d_model": 7, "num_heads": 2}}),
    ]
    for probe, args in cases:
        assert_same(worker.run(probe, **args), local.run(probe, **args), probe)


def test_errors_match_in_process(pair):
    worker, local = pair
    args = mha_args()
    args["state"] = {k: v for k, v in args["state"].items() if k != "w_o.bias"}
    errors = []
    for runner in (worker, local):
        with pytest.raises(SubmissionError) as info:
            runner.run("forward", **args)
        errors.append(info.value)
    assert errors[0].kind == "contract"
    assert_same(errors[0].to_dict(), errors[1].to_dict())


def test_total_timeout_used_up_starts_nothing():
    runner = WorkerRunner(REFERENCE, assignment=ASSIGNMENT, total_timeout=0)
    with pytest.raises(SubmissionError) as info:
        runner.run("call", name="padding_mask", args=[torch.tensor([[1]]), 0])
    assert info.value.kind == "timeout" and runner.starts == 0
    runner.close()


# -- hostile submissions (no crash first, then the ones that kill the worker) -----------------------
def test_exception_points_at_the_line(hostile):
    runner, root, _ = hostile
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("raise"))
    err = info.value
    line = (root / "attention.py").read_text().splitlines().index('        raise ValueError("hostile value error")') + 1
    assert (err.kind, err.file, err.line) == ("exception", "attention.py", line)
    assert "ValueError: hostile value error" in err.detail


def test_minimal_environment_and_private_cwd(hostile):
    runner, root, _ = hostile
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("env"))
    names, cwd = eval(info.value.detail.split(": ", 1)[1])  # noqa: S307 - our own repr
    assert "GRADEKIT_TEST_SECRET" not in names
    assert {"PATH", "HOME", "PYTHONPATH", "OMP_NUM_THREADS", "PYTHONHASHSEED"} <= set(names)
    assert not cwd.startswith(str(root))
    # a root judge's worker sees only its jail (its home is /home there); elsewhere a private folder
    assert cwd == "/home" if os.geteuid() == 0 else "gradekit-worker-" in cwd


def test_tensor_subclass_is_refused_unread(hostile):
    runner, _, markers = hostile
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("subclass"))
    assert info.value.kind == "bad_output" and "subclass of torch.Tensor" in info.value.detail
    assert not (markers / "subclass").exists()


def test_banned_call_seen_at_runtime(hostile):
    runner, _, _ = hostile
    runner.run("forward", **hostile_args("banned"))
    found = runner.banned_runtime()
    assert all(isinstance(f, Finding) for f in found)
    assert any(
        f.name == "torch.nn.functional.scaled_dot_product_attention" and f.file == "attention.py" for f in found
    ), found


def test_unbounded_memory_is_contained(hostile):
    runner, _, _ = hostile
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("memory"))
    assert info.value.kind in ("exception", "crashed"), info.value
    assert runner.run("call", name="padding_mask", args=[torch.tensor([[1, 0]]), 0])["out"].tolist() == [
        [[[True, False]]]
    ]


def test_judge_never_imports_the_submission(hostile):
    _, root, _ = hostile
    assert not [name for name, m in list(sys.modules.items()) if str(root) in str(getattr(m, "__file__", "") or "")]


def warm(runner):
    """Make sure a worker is up, so that what a test times excludes starting one."""
    assert runner.run("call", name="padding_mask", args=[torch.tensor([[1, 0]]), 0])["modified"] == []


def test_endless_loop_times_out_and_next_run_works(hostile):
    runner, _, _ = hostile
    warm(runner)
    starts = runner.starts
    t0 = time.monotonic()
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("loop"))
    assert info.value.kind == "timeout" and "did not finish within 3 s" in info.value.detail
    assert time.monotonic() - t0 < 3 + 1.5
    result = runner.run("call", name="padding_mask", args=[torch.tensor([[4, 0]]), 0])
    assert result["out"].tolist() == [[[[True, False]]]] and runner.starts == starts + 1


@pytest.mark.parametrize("spin", [0.0, 0.05])
def test_polling_or_not_the_worker_answers_alike_and_the_time_limit_holds(hostile_root, pair, spin):
    """A batch judge's worker does not poll (spin 0), a single check's does; with a long poll the call limit still
    counts from the request, and the answers are the same."""
    root, _ = hostile_root
    _, local = pair
    runner = WorkerRunner(root, assignment=ASSIGNMENT, call_timeout=3, spin=spin)
    try:
        assert runner.spin == spin
        args = mha_args(seed=5)
        assert_same(runner.run("forward", **args), local.run("forward", **args))
        t0 = time.monotonic()
        with pytest.raises(SubmissionError) as info:
            runner.run("forward", **hostile_args("loop"))
        assert info.value.kind == "timeout" and time.monotonic() - t0 < 3 + 1.5
        assert_same(runner.run("forward", **args), local.run("forward", **args))
    finally:
        runner.close()


def test_workers_poll_only_where_there_is_a_core_for_each_side(monkeypatch):
    from grader.submission import wire, worker

    monkeypatch.setattr(worker.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert worker.default_spin() == 0.0
    monkeypatch.setattr(worker.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert worker.default_spin() == wire.SPIN_S > 0


def test_os_exit_is_a_crash(runners):
    runner = runners["exiter"]
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("exit"))
    assert info.value.kind == "crashed"
    assert "exited with code 0" in info.value.detail and "os._exit" in info.value.detail


def test_endless_printing_is_dropped_past_the_cap_and_times_out(hostile):
    """Printing is not a crime: output past the cap is dropped (the file never grows past it); only the time
    limit stops a call that never returns."""
    runner, _, _ = hostile
    warm(runner)
    worker = runner._state["worker"]
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("print"))
    assert info.value.kind == "timeout"
    assert worker.output_size() <= runner.output_cap


def test_reply_that_would_run_code_is_rejected(runners, hostile_root):
    _, markers = hostile_root
    runner = runners["poisoner"]
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("poison"))
    assert info.value.kind == "crashed" and "not plain data" in info.value.detail
    assert not (markers / "poison").exists()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see which processes live")
def test_children_die_with_close(runners, hostile_root):
    _, markers = hostile_root
    runner = runners["spawner"]
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("spawn"))
    pids = [int(p) for p in info.value.detail.split("spawned ", 1)[1].split()[:2]]
    assert not any(gone(p) for p in pids)
    runner.close()
    deadline = time.monotonic() + 5
    while not all(gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [p for p in pids if not gone(p)]
    for p in survivors:
        os.kill(p, signal.SIGKILL)
    assert not survivors


def test_reading_the_reference_solution_is_refused(hostile):
    runner, _, _ = hostile
    with pytest.raises(SubmissionError) as info:
        runner.run("forward", **hostile_args("peek"))
    # refused by the worker's audit hook; in a root judge's jail the folder does not even exist behind it
    assert "PermissionError" in info.value.detail and "reference solution" in info.value.detail


def test_who_a_worker_runs_as():
    from grader.submission import sandbox

    assert sandbox._resolve_user(None) is None
    if os.geteuid() != 0:
        assert sandbox._resolve_user("auto") is None
        with pytest.raises(ValueError, match="needs the judge to run as root"):
            sandbox._resolve_user("nobody")
    else:
        assert sandbox._resolve_user("auto") == sandbox.FRESH
        assert sandbox._resolve_user(12345) == (12345, 12345)
        uids = {sandbox.fresh_uid() for _ in range(20)}
        assert len(uids) == 20 and min(uids) >= 100_000


@pytest.mark.skipif(os.geteuid() != 0, reason="only a judge running as root switches its workers' user")
def test_worker_of_a_root_judge_runs_as_a_uid_of_its_own(hostile):
    runner, _, _ = hostile
    assert runner.spawn == "fork" or not sys.platform.startswith("linux")
    seen = set()
    for _ in range(2):
        with pytest.raises(SubmissionError) as info:
            runner.run("forward", **hostile_args("identity"))
        uid, euid, gid, groups = eval(info.value.detail.split(": ", 1)[1])  # noqa: S307 - our own repr
        assert uid == euid == gid and uid >= 100_000 and groups == []
        seen.add(uid)
        runner._discard(runner._state["worker"])  # the next worker gets another uid
    assert len(seen) == 2
    # ... and cannot read the judge's files or write its results
    assert runner.run("forward", **hostile_args("trespass"))["out"].shape == (2, 5, D_OF["trespass"])


def test_worker_started_by_exec_gives_the_same_results(pair):
    forked, local = pair
    exec_runner = WorkerRunner(REFERENCE, assignment=ASSIGNMENT, spawn="exec")
    try:
        args = mha_args(seed=3)
        assert exec_runner.spawn == "exec"
        assert_same(exec_runner.run("forward", "isolated:mha", **args), forked.run("forward", "isolated:mha", **args))
    finally:
        exec_runner.close()


def test_submit_runs_beside_the_judge_one_request_at_a_time(pair):
    worker, local = pair
    args = mha_args(seed=4)
    pending = worker.submit("forward", **args)
    with pytest.raises(RuntimeError, match="collect the result"):
        worker.submit("forward", **args)
    expected = local.run("forward", **args)  # the judge's own work while the worker computes
    assert_same(pending.result(), expected)
    starts = worker.starts
    worker.submit("forward", **args).abandon()  # its reply would answer the next request: the worker goes
    assert_same(worker.run("forward", **args), expected)
    assert worker.starts == starts + 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux only")
def test_a_killed_fork_server_is_started_again(hostile_root):
    from grader.submission import forkserver

    root, _ = hostile_root
    first = WorkerRunner(root, assignment=ASSIGNMENT, spawn="fork")
    try:
        warm(first)
        server = forkserver.shared(start=False, assignment=ASSIGNMENT)
        os.kill(server.pid, signal.SIGKILL)  # a worker running as the judge's user could do this
        server.proc.wait()
        second = WorkerRunner(root, assignment=ASSIGNMENT, spawn="fork")
        try:
            warm(second)
            assert forkserver.shared(start=False, assignment=ASSIGNMENT).pid != server.pid
        finally:
            second.close()
        # the first runner's worker lost its server: the runner stops it and starts another
        starts = first.starts
        warm(first)
        assert first.starts == starts + 1
    finally:
        first.close()


# The checks compare through ctx.both: in a worker the two sides run at once, in-process one after the other.
# Whatever the order, every check must reach the same verdict: full marks for a correct submission in another
# style, and the same lost points for catalogued bugs in the tasks that compare that way.
BOTH_TASKS = ["sdpa", "mha", "positional", "masks", "greedy", "training", "param_count"]


@pytest.mark.parametrize(
    "case",
    [
        "alt_einsum",
        "training.gradients_not_zeroed",
        "greedy.no_early_stop",
        "positional.sin_cos_swapped",
        "param_count.no_biases",
    ],
)
def test_sealed_and_in_process_verdicts_agree(tmp_path, case):
    from grader import api
    from grader.bugs.catalogue import Catalogue

    bugs = Catalogue(ASSIGNMENT)
    if case in bugs.by_id:
        root = bugs.write_mutant(bugs.by_id[case], tmp_path / "sub")
    else:
        root = Path(__file__).resolve().parents[1] / "submissions" / case
    results = [api.check(path=root, tasks=BOTH_TASKS, profile="quick", sealed=sealed) for sealed in (False, True)]
    verdicts = [{c.id: (c.status, c.score) for t in r.tasks for c in t.checks} for r in results]
    assert verdicts[0] == verdicts[1]
    scores = {t.id: (t.score, t.max_score) for t in results[1].tasks}
    if case in bugs.by_id:
        own = scores[bugs.by_id[case].task]
        assert own[0] < own[1], scores
    else:
        assert all(got == most for got, most in scores.values()), scores


def _as_nobody_when_root():
    if os.geteuid() == 0:
        import pwd

        nobody = pwd.getpwnam("nobody")
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's")
@pytest.mark.parametrize("sealed", [True, False])
def test_a_judge_cannot_be_read_by_a_process_of_its_own_user(sealed):
    """A judge holds the reference: a process of the same user (a worker graded without a user of its own) reads
    neither its memory nor its environment once it is sealed; unsealed (the control), the same read works, so the
    test can tell. Both are forks of this process that run only the standard library; as root both become nobody,
    since root may read anything."""
    from grader.submission import sandbox

    ready_r, ready_w = os.pipe()
    judge = os.fork()
    if judge == 0:  # pragma: no cover - the judge stand-in: sealed or not, then waits to be read
        try:
            _as_nobody_when_root()
            if not sealed:  # a change of user makes a process non-dumpable: as a judge started as its user is
                import ctypes

                ctypes.CDLL(None, use_errno=True).prctl(4, 1, 0, 0, 0)
            os.write(ready_w, b"1" if (not sealed or sandbox.seal_judge()) else b"0")
            time.sleep(60)
        finally:
            os._exit(0)
    try:
        assert os.read(ready_r, 1) == b"1"
        reader = os.fork()
        if reader == 0:  # pragma: no cover - its exit status says what it could read
            code = 3
            try:
                _as_nobody_when_root()
                refused = 0
                for name in ("environ", "mem"):
                    try:
                        with open(f"/proc/{judge}/{name}", "rb") as f:
                            if name == "environ":
                                f.read()
                    except OSError:
                        refused += 1
                code = refused
            finally:
                os._exit(code)
        _, status = os.waitpid(reader, 0)
        refused = os.waitstatus_to_exitcode(status)
        if sealed:
            assert refused == 2  # neither its environment nor its memory
        else:
            assert refused == 0  # the control: unsealed, a process of its own user opens both
    finally:
        os.kill(judge, signal.SIGKILL)
        os.waitpid(judge, 0)
        os.close(ready_r)
        os.close(ready_w)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_sealed_grading_seals_its_judge():
    """Every process that makes a worker runner (check --sealed, a batch's judges, Gradescope's) is sealed."""
    import ctypes

    WorkerRunner(ROOT / "solution", assignment=load("transformer"), spawn="exec").close()
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE: 0
