"""The course server with its judges on Dask workers (``[server] scheduler``), as ``gradekit batch --scheduler``
grades a class: a real ``gradekit serve run`` pointed at a ``distributed.LocalCluster`` the test starts on loopback
(two worker processes of one thread, a scheduler that tries a task on a second worker when the first dies, as
docs/CLUSTER.md asks) and stops.

The reference and the skeleton handed in by ``gradekit submit --wait`` get the scores, statuses and checks a server
with local judges gives them, graded by the workers' judges (the server starts none); a worker killed while it
grades a submission costs nothing: the submission is graded on the other one, once; a scheduler that cannot be
reached stops the start with the sentence that says so, in the course's language, and nothing is served; a
scheduler lost while a submission is graded (a scheduler and a worker of their own, ``python -m dask``) puts it back
in the queue, its attempt not counted, claims nothing while it is away, and grades every submission once it is back.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys

import pytest

pytest.importorskip(
    "distributed",
    reason="Dask is an optional extra (pip install 'gradekit[dask]'); the server's judges on Dask are not tested "
    "without it",
)

from distributed import Client, LocalCluster  # noqa: E402

from grader.batch import distributed as dask_batch  # noqa: E402
from grader.messages import text  # noqa: E402
from tests.corpus.test_dask_batch import Killer  # noqa: E402
from tests.server_helpers import (  # noqa: E402
    ROOT,
    Server,
    call,
    env,
    free_port,
    gradekit,
    judge_pids,
    make_course,
    rows,
    upload,
    wait_until,
)


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        memory_limit=0,
        dashboard_address=None,
        scheduler_kwargs={"allowed_failures": dask_batch.ALLOWED_FAILURES},
    ) as made:
        yield made


def _on(cluster):
    return f'scheduler = "{cluster.scheduler_address}"\n'


def _hosting(cluster):
    """The names of the workers whose process hosts judges (``distributed._HOST``: made by a first grading)."""
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        hosts = client.run(lambda: dask_batch._HOST is not None and bool(dask_batch._HOST._all))
    return sorted(worker for worker, hosting in hosts.items() if hosting)


def _handed_in(course, server):
    """The reference by alice and the skeleton by bob, each with ``gradekit submit --wait``: ``{student: (the
    submission's view, its record)}``."""
    found = {}
    for student, folder in (("alice", ROOT / "solution"), ("bob", ROOT / "skeleton")):
        done = gradekit(
            "submit", folder, "--server", server.url, "--token", course.tokens[student], "--wait", timeout=400
        )
        assert done.returncode == 0, done.stdout + done.stderr + server.log.read_text(errors="replace")
        sid = int(re.search(r"submission (\d+)", done.stdout).group(1))
        status, _, body = call("GET", f"{server.url}/api/submissions/{sid}", course.tokens[student])
        assert status == 200, body
        view = json.loads(body)
        record = json.loads((course.data / "gradings" / view_grading(course, sid) / "record.json").read_text())
        found[student] = (view, record)
    return found


def view_grading(course, sid):
    """The grading folder (``<id>/<attempt>-<ns>``) that counts for submission ``sid``."""
    (grading,) = [r.grading for r in rows(course) if r.id == sid]
    return grading


def _same(graded):
    """What must not depend on where the judge ran."""
    view, record = graded
    keep = ("status", "attempts", "score", "max_score", "verdict", "reason")
    return {k: view.get(k) for k in keep}, {k: record.get(k) for k in ("status", "score", "tasks", "checks", "reason")}


def test_the_workers_grade_with_the_local_judges_scores(tmp_path, cluster):
    local = make_course(tmp_path / "local")
    with Server(local) as server:
        by_local = _handed_in(local, server)
    dask = make_course(tmp_path / "dask", _on(cluster))
    with Server(dask) as server:
        by_dask = _handed_in(dask, server)
        assert judge_pids(dask) == {}  # no judge of the server's own: the gradings were the workers'
        hosts = _hosting(cluster)
        reports = {  # rendered by the server from the worker's grading
            student: call("GET", f"{server.url}/submissions/{view['id']}/report", dask.tokens[student])
            for student, (view, _) in by_dask.items()
        }
    log = server.log.read_text(errors="replace")
    assert text("server.cli.cluster", "en", address=cluster.scheduler_address, workers=2, judges=2) in log
    assert hosts, "no Dask worker hosts a judge: the server graded elsewhere"
    assert {s: _same(g) for s, g in by_dask.items()} == {s: _same(g) for s, g in by_local.items()}
    assert by_dask["alice"][0]["score"] == 10 and by_dask["alice"][0]["status"] == "done"
    assert 0 <= by_dask["bob"][0]["score"] < 10 and by_dask["bob"][0]["max_score"] == 10
    for student, (status, _, body) in reports.items():
        assert status == 200 and b"<html" in body and student.encode() in body, (student, status)


def test_a_worker_killed_while_grading_costs_nothing(tmp_path, cluster):
    course = make_course(tmp_path, _on(cluster))
    killer = Killer(cluster.scheduler_address, "alice", times=1)
    # Loaded slowly (in the graded worker): a judge already started grades the reference in about a second, which
    # the killer, polling, may miss.
    slow = b"import time\n\ntime.sleep(3)\n" + (ROOT / "solution" / "masks.py").read_bytes()
    with Server(course) as server:
        killer.start()
        try:
            status, answer = upload(server, course.tokens["alice"], [("masks.py", slow)])
            assert status == 201, answer
            view = server.wait_done(answer["id"], course.tokens["alice"], timeout=400)
        finally:
            killer.stop.set()
            killer.join()
    assert [key.startswith(f"grade-alice-{answer['id']}-1-") for _, key in killer.killed] == [True], killer.killed
    # The scheduler tried it on the other worker within the attempt: done, once, with the reference's score.
    assert (view["status"], view["attempts"], view["score"]) == ("done", 1, 10), view
    graded = [p for p in (course.data / "gradings" / str(answer["id"])).iterdir() if (p / "report.html").is_file()]
    assert [f"{answer['id']}/{p.name}" for p in graded] == [view_grading(course, answer["id"])]


def test_a_server_killed_while_its_task_runs_leaves_one_result(tmp_path, cluster):
    """The server dies (SIGKILL) while a worker grades its submission; restarted, it grades it again in a new
    attempt, and the task the dead server left running, which ends on its worker, records nothing."""
    course = make_course(tmp_path, _on(cluster))
    # Loaded slowly (in the graded worker): the dead server's task still runs when the new attempt is sent.
    slow = b"import time\n\ntime.sleep(4)\n" + (ROOT / "solution" / "masks.py").read_bytes()
    server = Server(course)
    try:
        server.start()
        status, answer = upload(server, course.tokens["alice"], [("masks.py", slow)])
        assert status == 201, answer
        wait_until(lambda: _executing(cluster, f"grade-alice-{answer['id']}-1-"), "the task running on a worker")
        server.kill()
        server.start()
        view = server.wait_done(answer["id"], course.tokens["alice"], timeout=400)
        wait_until(lambda: not _executing(cluster, "grade-alice-"), "the dead server's task ended on its worker")
    finally:
        server.stop()
    assert (view["status"], view["attempts"], view["score"]) == ("done", 2, 10), view
    # Only the server writes a grading, from the task it waits for: the first attempt's folder was never made.
    (folder,) = (course.data / "gradings" / str(answer["id"])).iterdir()
    assert folder.name.startswith("2-") and view_grading(course, answer["id"]) == f"{answer['id']}/{folder.name}"
    assert json.loads((folder / "record.json").read_text())["folder"] == folder.name  # its own task's grading


def _executing(cluster, prefix):
    """Whether a worker of ``cluster`` runs a task whose key starts with ``prefix`` (one nobody waits for any more
    is ``cancelled`` while its thread runs on)."""
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        running = client.run(
            lambda dask_worker: [
                str(k) for k, ts in dask_worker.state.tasks.items() if ts.state in ("executing", "cancelled")
            ]
        )
    return any(key.startswith(prefix) for keys in running.values() for key in keys)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_scheduler_that_cannot_be_reached_stops_the_start(tmp_path, lang):
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    course = make_course(tmp_path, f'scheduler = "{address}"\n')
    port = free_port()
    started = gradekit(
        "serve",
        "run",
        "--config",
        course.config,
        "--port",
        port,
        "--lang",
        lang,
        timeout=120,
        extra_env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"},
    )
    assert started.returncode == 2, started.stdout + started.stderr
    before, after = text("server.cli.no_scheduler", lang, address=address, error="\0").split("\0")
    said = " ".join(started.stderr.split())  # as one line, however the terminal wrapped it
    assert before in said and after in said and "Traceback" not in said, started.stderr
    assert f"127.0.0.1:{port}" not in started.stdout
    with pytest.raises(OSError):  # nothing was served
        call("GET", f"http://127.0.0.1:{port}/", timeout=2)
    assert os.path.isdir(course.data)


def _dask(*argv):
    """``python -m dask ARGV`` in a session of its own, this checkout's ``grader`` first (a worker imports it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "dask", *argv],
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _end(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def _listening(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_a_scheduler_lost_while_grading_leaves_the_submissions_queued_until_it_is_back(tmp_path, monkeypatch):
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    # The server's and the workers' environment (``env()`` copies this one): Dask's client gives up reconnecting
    # after 3 s instead of 30, and the scheduler tries a task on a second worker, as docs/CLUSTER.md asks.
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "3s")
    monkeypatch.setenv("DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES", "1")
    scheduler = ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
    worker = ["worker", address, "--nworkers", "1", "--nthreads", "1", "--memory-limit", "0", "--no-dashboard"]
    procs = [_dask(*scheduler), _dask(*worker)]
    masks = (ROOT / "solution" / "masks.py").read_bytes()
    try:
        wait_until(lambda: _listening(port), "the scheduler listening", 60)
        course = make_course(tmp_path, f'scheduler = "{address}"\n')
        with Server(course) as server:
            status, first = upload(server, course.tokens["alice"], [("masks.py", masks)])
            assert status == 201, first
            wait_until(lambda: [r.status for r in rows(course)] == ["grading"], "alice's grading sent", log=server.log)
            _end(procs[0])  # the scheduler is gone (its worker closes with it: a new one joins the next scheduler)
            wait_until(lambda: _away(server), "the scheduler said lost", 60, log=server.log)
            status, second = upload(server, course.tokens["bob"], [("masks.py", masks)])
            assert status == 201, second  # hand-ins go on while the cluster is away
            wait_until(lambda: [(r.status, r.attempts) for r in rows(course)] == [("queued", 0)] * 2, "both queued")
            _end(procs[1])
            procs = [_dask(*scheduler), _dask(*worker)]
            views = [
                server.wait_done(first["id"], course.tokens["alice"], timeout=400),
                server.wait_done(second["id"], course.tokens["bob"], timeout=400),
            ]
        log = server.log.read_text(errors="replace")
    finally:
        for proc in procs:
            _end(proc)
    assert [(v["status"], v["attempts"], v["score"]) for v in views] == [("done", 1, 10)] * 2, log
    assert text("server.cluster.lost", "en", id=first["id"]) in log
    assert text("server.cluster.back", "en", address=address) in log
    for view in views:
        graded = [p for p in (course.data / "gradings" / str(view["id"])).iterdir() if (p / "report.html").is_file()]
        assert [f"{view['id']}/{p.name}" for p in graded] == [view_grading(course, view["id"])]


def _away(server):
    before, _ = text("server.cluster.away", "en", address="\0", error="").split("\0")
    return before in server.log.read_text(errors="replace")
