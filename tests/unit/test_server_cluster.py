"""The course server's judges on Dask (``[server] scheduler``) without a cluster: the ``[server] scheduler`` key;
the grading loop with a stand-in for the cluster (a grading cut off by the scheduler's loss goes back to the queue,
its attempt not counted, and nothing is claimed while the scheduler is away; a grading past its deadline is tried
again, then ends ``error`` with the reason); and how ``Cluster`` reads a grading's future (a lost scheduler, a
server stopping, workers that died)."""

import threading
import time
from types import SimpleNamespace

import pytest

pytest.importorskip("sqlalchemy", reason="the server's packages are not installed: pip install -e '.[server]'")

from grader.batch.judge import Job  # noqa: E402
from grader.config import ConfigError, CourseConfig  # noqa: E402
from grader.messages import text  # noqa: E402
from grader.server import grading  # noqa: E402
from grader.server.cluster import Away, Cluster  # noqa: E402
from grader.server.store import MAX_ATTEMPTS, Store  # noqa: E402


def _config(tmp_path, server_toml):
    path = tmp_path / "gradekit.toml"
    path.write_text(f'assignment = "transformer"\n\n[server]\n{server_toml}', encoding="utf-8")
    return CourseConfig.load(path)


def test_the_scheduler_key_takes_an_address_and_defaults_to_local_judges(tmp_path):
    assert _config(tmp_path, "").server["scheduler"] is None
    for address in ("tcp://10.0.0.5:8786", "tls://sched.example.org:8786", "head:8786"):
        assert _config(tmp_path, f'scheduler = "{address}"\n').server["scheduler"] == address


@pytest.mark.parametrize("value", ['"local:2"', '""', "8786", '"tcp://"', "true"])
def test_a_scheduler_that_is_not_an_address_is_refused_by_name(tmp_path, value):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, f"scheduler = {value}\n")
    assert "server.scheduler: expected a Dask scheduler's address such as tcp://host:8786" in str(err.value)
    assert "gradekit.toml" in str(err.value)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "data")
    s.init()
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name\nalice,Alice\n", encoding="utf-8")
    s.import_roster(roster)
    return s


class StandIn:
    """What the grading loop asks of a ``Cluster``, answering each grading from ``answers`` in turn (``Away``:
    the scheduler is lost meanwhile); ``up`` says whether the scheduler can be reached."""

    def __init__(self, answers):
        self.answers, self.keys, self.up, self.closed = list(answers), [], threading.Event(), False
        self.up.set()

    def ready(self):
        return self.up.is_set()

    def grade(self, sub, digest, key, out, stop):
        self.keys.append(key)
        answer = self.answers.pop(0)
        if answer is Away:
            self.up.clear()  # the scheduler is gone until the test brings it back
            raise Away()
        return answer

    def close(self):
        self.closed = True


def _plan():
    job = Job("transformer", None, "quick", 6.0, 12.0, 2048, "flag", False, "en", None)
    return SimpleNamespace(job=job, lang="en", deadline_s=42.0)


def _until(condition, what, timeout=60.0):
    ends = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < ends, what()
        time.sleep(0.05)


def test_a_lost_scheduler_puts_the_grading_back_uncounted_and_a_late_one_ends_in_error(store, monkeypatch):
    monkeypatch.setattr(grading, "RETRY_S", 0.1)
    late = text("dask.detail.late", "en", seconds="42")
    cluster = StandIn([Away, (None, late), (None, late)])
    loop = grading.Grader(store, _plan(), judges=1, cluster=cluster)
    sid = store.add_submission("alice", "py", [("masks.py", b"x = 1\n")])
    loop.start()
    try:
        _until(lambda: not cluster.up.is_set(), lambda: store.history())
        time.sleep(0.5)  # several turns of the loop while the scheduler is away: nothing is claimed
        row = store.submission(sid)
        assert (row.status, row.attempts, len(cluster.keys)) == ("queued", 0, 1), row
        cluster.up.set()
        _until(lambda: store.submission(sid).status == "error", lambda: store.history())
    finally:
        loop.stop()
    row = store.submission(sid)
    assert row.attempts == MAX_ATTEMPTS and late in row.reason, row
    assert len(cluster.keys) == 1 + MAX_ATTEMPTS and cluster.closed
    assert cluster.keys[0].startswith(f"grade-alice-{sid}-1-") and cluster.keys[-1].startswith(f"grade-alice-{sid}-2-")


class Future:
    """A Dask future that raises ``error`` (``None``: never answers); ``status`` as Dask's says its task's."""

    def __init__(self, error=None, status="error"):
        self.error, self.cancelled, self.status = error, False, status

    def result(self, timeout=None):
        if self.error is None:
            time.sleep(min(timeout or 0.05, 0.05))
            raise TimeoutError()
        raise self.error

    def cancel(self):
        self.cancelled = True


def _cluster():
    cluster = Cluster.__new__(Cluster)  # no scheduler, no fingerprint: only its reading of futures
    cluster.lang = "en"
    return cluster


def test_a_future_cancelled_by_the_lost_connection_is_away_and_a_stop_cancels_it():
    from concurrent.futures import CancelledError

    with pytest.raises(Away):
        _cluster()._wait(Future(CancelledError()), threading.Event())
    stop, waiting = threading.Event(), Future()
    threading.Timer(0.3, stop.set).start()
    assert _cluster()._wait(waiting, stop) is None and waiting.cancelled


def test_workers_that_died_end_the_attempt_with_the_batchs_reason():
    distributed = pytest.importorskip("distributed", reason="Dask is an optional extra")
    died = distributed.KilledWorker("grade-alice-1-1-0", SimpleNamespace(address="tcp://w"), 1)
    outcome = _cluster()._wait(Future(died), threading.Event())
    assert outcome == {"failed": text("dask.detail.worker_died", "en", n=2)}


def test_an_outcome_that_cannot_be_fetched_is_away_but_a_task_that_raised_ends_the_attempt():
    with pytest.raises(Away):  # the task finished: its outcome was lost on the way, nothing of the submission's
        _cluster()._wait(Future(OSError("connection reset"), status="finished"), threading.Event())
    outcome = _cluster()._wait(Future(OSError("No space left on device")), threading.Event())
    assert outcome == {"failed": text("dask.detail.task", "en", error="OSError: No space left on device")}


def test_without_dask_the_start_says_how_to_install_it(monkeypatch):
    """Where Dask is missing (simulated: importing it raises ImportError), a server with a scheduler says to
    ``pip install 'gradekit[dask]'`` before anything is served."""
    import sys

    from grader.api import UsageError
    from grader.server import cluster

    for name in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    for lang in ("en", "zh"):
        with pytest.raises(UsageError) as err:
            cluster.connect("tcp://127.0.0.1:8786", _plan(), lang, judges=2)
        assert str(err.value) == text("server.cli.dask_missing", lang)
