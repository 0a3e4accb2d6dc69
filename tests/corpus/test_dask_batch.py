"""``gradekit batch --scheduler``: the same class graded on Dask workers gives the local batch's gradebook.

A module-scoped class of 20 (correct folders and a zip, catalogued bugs, hostile cases from ``tests/hostile``,
an unsafe zip and an empty folder) is graded once by the local batch (``-j 2``) and once on a local Dask cluster
of two worker processes, ``distributed.batch`` (``distributed.run_pool`` in place of ``runner._run_pool``).
While the Dask batch runs, the worker grading ``hang`` is killed (SIGKILL, mid-submission):
the submission is retried on the other worker and the gradebook is still the local one. A second, small batch
kills the worker twice: that student's row is ``error`` with the reason, the others are untouched, and a re-run
grades only that student again.
"""

import io
import json
import os
import shutil
import signal
import sys
import threading
import time
import types
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip(
    "distributed",
    reason="Dask is an optional extra (pip install 'gradekit[dask]'); the Dask batch is not tested without it",
)

from distributed import Client, LocalCluster  # noqa: E402

from grader.assignment import load  # noqa: E402
from grader.batch import distributed as dask_batch  # noqa: E402
from grader.batch import progress, runner, sources  # noqa: E402
from grader.bugs.catalogue import Catalogue  # noqa: E402
from grader.messages import text  # noqa: E402
from grader.submission import intake  # noqa: E402
from tests import hostile  # noqa: E402
from tests.corpus.test_batch import OPTIONS, SUBMISSIONS, _processes, _rows, _zip_folder  # noqa: E402

SLEEP = "987.656"
"""The argument of the process the tamper case leaves behind (another than test_batch's)."""


def _build_class(cls, base):
    """20 submissions: 5 correct, 5 buggy, 10 hostile or broken."""
    cls.mkdir()
    for alt in ("alt_annotated", "alt_einsum", "alt_functional", "alt_loops"):
        shutil.copytree(SUBMISSIONS / alt, cls / f"ok_{alt}")
    _zip_folder(SUBMISSIONS / "alt_einsum", cls / "ok_zip.zip", top="my-submission")
    catalogue = Catalogue(load())
    for bug in [b for b in catalogue.bugs if b.task == "masks"][:4]:
        catalogue.write_mutant(bug, cls / f"bug_{bug.id.split('.')[1]}")
    hostile.build("buggy", cls / "bug_hostile")
    hostile.build("tamper", cls / "tamper", guess=str(base / "guess"), marker=str(base / "unpickled"), sleep=SLEEP)
    for name in ("peeker", "exits", "hang", "spammer", "banned", "syntax"):
        hostile.build(name, cls / name)
    hostile.near_copy(cls / "nearcopy")
    with zipfile.ZipFile(cls / "unsafe.zip", "w") as zf:
        zf.writestr("../escape.py", "print('out')")
    (cls / "empty").mkdir()
    (cls / "empty" / "notes.txt").write_text("nothing here")


class Killer(threading.Thread):
    """SIGKILLs the Dask worker process executing the task of ``student`` (a key ``grade-<student>-...``), each
    time that task runs again, ``times`` times."""

    def __init__(self, address, student, times):
        super().__init__(daemon=True)
        self.address, self.prefix, self.times = address, f"grade-{student}-", times
        self.killed = []
        """``(worker address, key)`` of each kill."""
        self.stop = threading.Event()

    def run(self):
        with Client(self.address, set_as_default=False) as client:
            while len(self.killed) < self.times and not self.stop.is_set():
                running = client.run(
                    lambda dask_worker: [
                        str(k) for k, ts in dask_worker.state.tasks.items() if ts.state == "executing"
                    ],
                    on_error="return",
                )
                for worker, keys in running.items():
                    mine = [k for k in keys if isinstance(keys, list) and k.startswith(self.prefix)]
                    if mine and not any(w == worker for w, _ in self.killed):
                        time.sleep(1.0)  # well inside the grading: the judge has the job
                        pid = client.run(os.getpid, workers=[worker])[worker]
                        os.kill(pid, signal.SIGKILL)
                        self.killed.append((worker, mine[0]))
                        break
                self.stop.wait(0.2)


FIXED = "fixed"
"""The grader's fingerprint in these batches, on the client and on the workers alike (as test_batch.py does): other
work in the same checkout changes the kit's files while the test runs, which a worker rightly refuses to mix."""
PRELOAD = f"""
def dask_setup(worker):
    from grader.batch import runner
    runner.grader_fingerprint = lambda assignment: {FIXED!r}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # Two worker processes of one thread each, a scheduler that retries a task once after its worker died
    # (docs/CLUSTER.md asks the same of a cluster's scheduler); the nannies restart a killed worker.
    preload = tmp_path_factory.mktemp("preload") / "fixed_fingerprint.py"
    preload.write_text(PRELOAD)
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        memory_limit=0,
        dashboard_address=None,
        scheduler_kwargs={"allowed_failures": dask_batch.ALLOWED_FAILURES},
        preload=[str(preload)],
    ) as made:
        yield made


def _dask_batch(monkeypatch, address, **kwargs):
    """``distributed.batch(address, ...)`` (``gradekit batch --scheduler``); its result and the warnings it
    gathered."""
    with monkeypatch.context() as m:
        m.setattr(runner, "grader_fingerprint", lambda assignment: FIXED)
        result = dask_batch.batch(address, **kwargs)
    return result, result.warnings


@pytest.fixture(scope="module")
def graded(tmp_path_factory, cluster):
    base = tmp_path_factory.mktemp("dask")
    cls = base / "class"
    _build_class(cls, base)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(runner, "grader_fingerprint", lambda assignment: FIXED)
        local = runner.batch(submissions=cls, out=base / "local", jobs=2, **OPTIONS)
    killer = Killer(cluster.scheduler_address, "hang", times=1)
    killer.start()
    with pytest.MonkeyPatch.context() as monkeypatch:
        result, warnings = _dask_batch(
            monkeypatch, cluster.scheduler_address, submissions=cls, out=base / "dask", **OPTIONS
        )
    killer.stop.set()
    killer.join()
    yield {"base": base, "class": cls, "local": local, "dask": result, "warnings": warnings, "killed": killer.killed}
    for pid in _processes(SLEEP):
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def test_a_killed_worker_loses_nothing_and_the_gradebook_is_the_local_one(graded):
    assert len(graded["killed"]) == 1 and graded["killed"][0][1].startswith("grade-hang-"), graded["killed"]
    local, dask = _rows(graded["base"] / "local"), _rows(graded["base"] / "dask")
    assert len(local) == 20
    assert dask == local  # no timing column in a gradebook: every cell must agree
    assert dask["hang"]["status"] == "timeout" and dask["ok_alt_loops"]["total"] == "10"
    assert (graded["dask"].graded, graded["dask"].cached) == (18, 0)  # unsafe.zip and empty: nothing to grade


def test_every_student_has_the_same_record_and_files(graded):
    base = graded["base"]
    for record in graded["local"].records:
        folder = record["folder"]
        theirs = json.loads((base / "dask" / folder / "record.json").read_text())
        for field in ("status", "score", "max_score", "tasks", "checks", "diagnoses", "hash", "reason", "refused"):
            assert theirs.get(field) == record.get(field), (folder, field)
        for name in ("results.json", "report.html", "gradescope.json"):
            assert (base / "dask" / folder / name).is_file(), (folder, name)
    assert not list((base / "dask").rglob(".*.json.*"))  # no temporary file left behind
    assert graded["warnings"] == []  # the workers run as root here: jailed
    assert not (base / "unpickled").exists() and "999" not in (base / "dask" / "gradebook.csv").read_text()


def test_workers_dying_twice_make_an_error_row_with_the_reason_and_a_rerun_grades_it(graded, cluster, monkeypatch):
    cls = graded["base"] / "class2"
    cls.mkdir()
    shutil.copytree(graded["class"] / "hang", cls / "hang")
    shutil.copytree(graded["class"] / "ok_alt_loops", cls / "fine")
    out = graded["base"] / "dask2"
    killer = Killer(cluster.scheduler_address, "hang", times=2)
    killer.start()
    first, _ = _dask_batch(monkeypatch, cluster.scheduler_address, submissions=cls, out=out, **OPTIONS)
    killer.stop.set()
    killer.join()
    assert len(killer.killed) == 2 and killer.killed[0][0] != killer.killed[1][0], killer.killed  # another worker
    rows = _rows(out)
    assert rows["hang"]["status"] == "error"
    assert text("dask.detail.worker_died", "en", n=2) in rows["hang"]["reason"]
    assert rows["fine"]["status"] == "ok" and rows["fine"]["total"] == "10"
    assert first.graded == 2
    again, _ = _dask_batch(monkeypatch, cluster.scheduler_address, submissions=cls, out=out, **OPTIONS)
    assert (again.graded, again.cached) == (1, 1)
    assert _rows(out)["hang"] == _rows(graded["base"] / "local")["hang"]


# -- the parts, without a cluster ------------------------------------------------------------------------------
def test_a_packed_snapshot_unpacks_to_the_same_content(tmp_path):
    sub = sources.prepare(sources.Submission("s", SUBMISSIONS / "alt_loops"), tmp_path / "scratch")
    (sub.path / "deep" / "er").mkdir(parents=True)
    (sub.path / "deep" / "er" / "data.bin").write_bytes(bytes(range(256)))
    packed = dask_batch.pack(sub.path)
    names = zipfile.ZipFile(io.BytesIO(packed)).namelist()
    assert "deep/er/data.bin" in names and not any(n.startswith(("/", "..")) or str(tmp_path) in n for n in names)
    (tmp_path / "a.zip").write_bytes(packed)
    back = intake.extract(tmp_path / "a.zip", tmp_path / "back")
    assert sources.content_hash(back, "salt") == sources.content_hash(sub.path, "salt")
    (back / "masks.py").write_text("# changed\n")
    assert sources.content_hash(back, "salt") != sources.content_hash(sub.path, "salt")


@pytest.mark.parametrize(
    "value, parsed",
    [
        ("local:2", ("local", 2)),
        ("local:1", ("local", 1)),
        ("tcp://10.0.0.5:8786", ("address", "tcp://10.0.0.5:8786")),
        ("tls://sched.example.org:8786", ("address", "tls://sched.example.org:8786")),
    ],
)
def test_scheduler_values_are_understood(value, parsed):
    assert dask_batch.parse_scheduler(value) == parsed


@pytest.mark.parametrize("value", ["local:0", "local:x", "local:", "", "8786", "local:-1"])
def test_bad_scheduler_values_say_what_is_expected(value):
    with pytest.raises(ValueError, match="local:N") as info:
        dask_batch.parse_scheduler(value, "en")
    assert "tcp://" in str(info.value)
    with pytest.raises(ValueError, match="local:N"):
        dask_batch.parse_scheduler(value, "zh")


def test_the_command_refuses_a_bad_scheduler_before_grading_anything(tmp_path, capsys):
    from grader.cli import main

    (tmp_path / "class" / "s1").mkdir(parents=True)
    code = main(["batch", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--scheduler", "local:0"])
    err = capsys.readouterr().err
    assert code == 2 and "local:N" in err and "tcp://" in err
    assert not (tmp_path / "out" / "gradebook.csv").exists()


def test_without_dask_the_command_says_how_to_install_it_before_grading_anything(tmp_path, capsys, monkeypatch):
    """Dask is an optional extra: where it is missing (simulated: importing it raises ImportError), ``--scheduler``
    says to ``pip install 'gradekit[dask]'`` and exits 2, with no traceback and nothing graded or written."""
    from grader.cli import main

    for name in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    shutil.copytree(SUBMISSIONS / "alt_loops", tmp_path / "class" / "s1")
    (tmp_path / "class" / "empty").mkdir()
    code = main(
        [
            "batch",
            str(tmp_path / "class"),
            "--out",
            str(tmp_path / "out"),
            "--scheduler",
            "local:2",
            "--tasks",
            "masks",
            "--profile",
            "quick",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and text("dask.missing", "en") in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_local_n_starts_n_single_threaded_worker_processes_and_closes_them():
    with dask_batch.connect("local:2") as client:
        workers = client.scheduler_info()["workers"].values()
        assert sorted(w["nthreads"] for w in workers) == [1, 1]
        assert len(set(client.run(os.getpid).values()) | {os.getpid()}) == 3  # processes of their own
        assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures) == 1
        import dask

        settings = client.run(lambda: {k: dask.config.get(k) for k in dask_batch.LOCAL_SETTINGS})
        assert list(settings.values()) == [dask_batch.LOCAL_SETTINGS] * 2  # the workers' settings
        assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.WORKER_SATURATION) == 1.0
        # the scheduler and its dashboard (which names every student's grading) listen on this machine only
        assert client.scheduler.address.startswith("tcp://127.0.0.1:"), client.scheduler.address
        assert urlsplit(client.dashboard_link).hostname == "127.0.0.1", client.dashboard_link
        bound = client.run_on_scheduler(
            lambda dask_scheduler: sorted({s.getsockname()[0] for s in dask_scheduler.http_server._sockets.values()})
        )
        assert bound == ["127.0.0.1"], bound
    assert client.status == "closed"


def _outcome(**changes):
    """What ``grade_on_worker`` returns for a finished submission (its saved grading as bytes)."""
    record = {"student": "s1", "folder": "s1", "hash": "h", "status": "ok", "score": 1.0, "max_score": 1.0}
    files = {"grading.json": b"grading.json body", "record.json": json.dumps(record).encode()}
    outcome = {"record": record, "detail": None, "files": files, "jailed": True, "worker": "w1", "grader": "g"}
    outcome.update(changes)
    return outcome


def test_a_result_is_written_atomically_record_last_and_a_jailed_worker_warns_nothing(tmp_path, monkeypatch):
    sub = sources.Submission("s1", tmp_path / "s1")
    written = []
    real = dask_batch.atomic_write
    monkeypatch.setattr(
        dask_batch, "atomic_write", lambda path, body: (written.append(Path(path).name), real(path, body))
    )
    receiver = dask_batch.Receiver(tmp_path, "quick", "g", "en", bar=None)
    record = receiver.finish(sub, _outcome())
    assert record["status"] == "ok" and written == list(dask_batch.OUTPUTS) and written[-1] == "record.json"
    assert (tmp_path / "s1" / "grading.json").read_bytes() == b"grading.json body"
    assert receiver.warnings() == []


def test_an_unjailed_worker_is_reported_by_name(tmp_path):
    receiver = dask_batch.Receiver(tmp_path, "quick", "g", "zh", bar=None)
    receiver.finish(sources.Submission("s1", tmp_path / "s1"), _outcome(jailed=False, worker="node-7"))
    receiver.finish(sources.Submission("s2", tmp_path / "s2"), _outcome(worker="node-8"))
    [warning] = receiver.warnings()
    assert warning == text("dask.not_jailed", "zh", workers="node-7")


def test_a_worker_with_another_grader_or_a_judge_failure_gives_an_error_row(tmp_path):
    receiver = dask_batch.Receiver(tmp_path, "quick", "mine", "en", bar=None)
    other = receiver.finish(sources.Submission("s1", tmp_path / "s1"), _outcome(grader="theirs"))
    assert other["status"] == "error" and "theirs" in other["reason"] and other["hash"] == ""
    assert json.loads((tmp_path / "s1" / "record.json").read_text())["status"] == "error"
    failed = receiver.finish(
        sources.Submission("s2", tmp_path / "s2"), _outcome(grader="mine", record=None, detail="the judge stopped")
    )
    assert failed["status"] == "error" and "the judge stopped" in failed["reason"]
    assert (tmp_path / "s2" / "grading.json").is_file()  # what the batch renders the student's files from


def test_the_progress_line_shows_done_total_rate_and_time_left(monkeypatch):
    # The progress module's own clock, not time.monotonic itself: the module-scoped cluster's event loop runs in
    # a thread of this process and reads time.monotonic too.
    clock = iter([100.0, 130.0, 160.0])
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: next(clock)))
    stream = io.StringIO()
    bar = progress.Progress(4, stream, "en")
    bar.step({"student": "s1", "status": "ok"})
    line = stream.getvalue().rsplit("\r", 1)[1]
    assert "1/4" in line and "ok 1" in line and "2.0/min" in line and "1:30 left" in line and "s1" in line
    bar.step({"student": "\x1b[31mevil", "status": "timeout"})
    line = stream.getvalue().rsplit("\r", 1)[1]
    assert "2/4" in line and "timeout 1" in line and "1:00 left" in line and "\x1b" not in line
    bar.close()
    assert stream.getvalue().endswith("\n")
    zh = io.StringIO()
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=iter([0.0, 60.0]).__next__))
    progress.Progress(2, zh, "zh").step({"student": "s1", "status": "ok"})
    assert text("batch.progress.rate", "zh", rate="1.0") in zh.getvalue()


def test_no_stream_no_progress_output():
    bar = progress.Progress(3, None, "en")
    bar.step({"student": "s1", "status": "ok"})
    bar.note("a line")
    bar.close()  # nothing to write to, nothing raised


def test_the_task_key_names_the_student_for_the_dashboard(tmp_path):
    sub = sources.Submission("s_007", tmp_path / "s_007")
    assert dask_batch.task_key(sub, "0123456789abcdef") == "grade-s_007-01234567"


def test_judges_on_one_machine_claim_different_slots_until_released(tmp_path):
    first, fd1 = dask_batch.claim_slot(tmp_path / "slots")
    second, fd2 = dask_batch.claim_slot(tmp_path / "slots")
    assert (first, second) == (0, 1)
    os.close(fd1)
    again, fd3 = dask_batch.claim_slot(tmp_path / "slots")
    assert again == 0
    for fd in (fd2, fd3):
        os.close(fd)


def test_a_task_that_failed_for_good_gives_an_error_row_with_its_reason(tmp_path):
    receiver = dask_batch.Receiver(tmp_path, "quick", "g", "en", bar=None)
    record = receiver.fail(sources.Submission("s1", tmp_path / "s1"), OSError("No space left on device"))
    assert record["status"] == "error" and "No space left on device" in record["reason"]
    assert json.loads((tmp_path / "s1" / "record.json").read_text())["reason"] == record["reason"]


def test_the_worker_plugin_stops_the_judges_of_its_worker(monkeypatch):
    closed = []

    class Host:
        def close(self):
            closed.append(True)

    monkeypatch.setattr(dask_batch, "_HOST", Host())
    plugin = dask_batch.judge_plugin()
    assert plugin.name == "gradekit-judges"
    plugin.teardown(worker=None)
    assert closed == [True] and dask_batch._HOST is None
    plugin.teardown(worker=None)  # nothing left to stop
    assert closed == [True]


def test_the_dask_extra_brings_the_dashboard(tmp_path):
    """``gradekit[dask]`` asks for Dask's ``diagnostics`` extra (Bokeh): without it Dask serves no dashboard and the
    batch prints no link. With it (the test extra has it too), a ``local:1`` batch prints the dashboard's link
    above its progress line."""
    import importlib.metadata
    import re

    import tomllib

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra in ("dask", "test"):
        [req] = [r for r in extras[extra] if r.startswith("dask[")]
        assert "diagnostics" in re.match(r"dask\[([^\]]*)\]", req).group(1).split(","), extra
    assert any(r.startswith("bokeh") and 'extra == "diagnostics"' in r for r in importlib.metadata.requires("dask"))
    pytest.importorskip("bokeh", reason="the dashboard needs Bokeh (gradekit[dask] installs it)")
    cls = tmp_path / "class"
    cls.mkdir()
    shutil.copytree(SUBMISSIONS / "alt_loops", cls / "fine")
    stream = io.StringIO()
    result = dask_batch.batch("local:1", submissions=cls, out=tmp_path / "out", stream=stream, **OPTIONS)
    assert result.graded == 1 and _rows(tmp_path / "out")["fine"]["status"] == "ok"
    [line] = [x for x in stream.getvalue().replace("\r", "\n").splitlines() if x.startswith("Dask dashboard")]
    assert line == text("dask.dashboard", "en", link=line.split(": ", 1)[1]) and "/status" in line
