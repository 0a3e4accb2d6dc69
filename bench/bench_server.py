"""Benchmark ``gradekit serve`` under a class handing in at once, against ``gradekit batch`` grading the same.

    python bench/bench_server.py [--clients 50] [--each 4] [--judges 2]

Defaults: 50 students, each handing in 4 times, 2 judges: 200 gradings of the ``masks`` task with quick examples
and short limits (the server tests' course), about a minute on a 2-core machine (server and batch).

Sets up a course as an instructor does (``gradekit serve init``, ``gradekit serve roster import`` of ``--clients``
students) in a temporary folder and runs ``gradekit serve run`` on a free loopback port with ``judges =
--judges``. Then ``--clients`` threads, one per student, each hand in ``--each`` times over the HTTP API, one after
the other, and wait for their submissions to be graded as ``gradekit submit --wait`` does (polling every second).
The hand-ins cycle through the reference, the skeleton and the reference with a catalogued ``masks`` bug applied,
each zipped as ``gradekit submit`` zips a folder. Prints whether all were graded, the time to report (from the
hand-in's acknowledgement to its grading, median and 95th percentile) and the throughput (from the first
acknowledgement to the last grading); then grades the same zips with ``gradekit batch -j JUDGES`` and prints the
server's throughput as a share of the batch's. The batch's time is its whole command (its start, the snapshots,
the class's similarity and summary pages); the server's runs from the first acknowledgement to the last grading,
the server already up (its judges start with the first submissions). The server is stopped, and the temporary
folder removed, however the script ends.
"""

import argparse
import csv
import json
import math
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import speed  # noqa: E402 - bench/speed.py

from grader.assignment import load  # noqa: E402
from grader.bugs.catalogue import Catalogue  # noqa: E402

TASK = "masks"
TOML = f"""assignment = "transformer"
tasks = ["{TASK}"]
copy_policy = "flag"

[limits]
call_timeout = 6
total_timeout = 12
memory_mb = 2048

[server]
profile = "quick"
judges = {{judges}}
submissions_per_hour = {{per_hour}}
"""
"""The course: the server tests' (one task, quick examples, short limits; ``flag``, as the reference is handed in)."""
START_S = 120.0
"""Seconds the server may take to answer its first request."""
POLL_S = 1.0
"""Seconds between a waiting client's looks at its submissions (as ``gradekit submit --wait``)."""


def env():
    """The commands' environment: this checkout's ``grader`` first, no student token."""
    e = speed.users_env()
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p])
    e.pop("GRADEKIT_TOKEN", None)
    return e


def gradekit(*argv, timeout=600):
    """``gradekit ARGV``, its output captured; fails with that output when it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "grader", *map(str, argv)], env=env(), capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise SystemExit(f"gradekit {' '.join(map(str, argv))} failed:\n{done.stdout}{done.stderr}")
    return done


def batch(folder, out, jobs, config, limit):
    """``gradekit batch FOLDER -j JOBS`` for the course at ``config``; stopped as a user's Ctrl-C stops it (SIGINT,
    then SIGKILL) if this script is interrupted or it runs past ``limit`` seconds."""
    argv = ["batch", folder, "--out", out, "-j", jobs, "--config", config, "--profile", "quick", "--quiet"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", *map(str, argv)],
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # a Ctrl-C reaches this script only, which stops the batch below
    )
    try:
        output, _ = proc.communicate(timeout=limit)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if proc.returncode != 0:
        raise SystemExit(f"gradekit batch failed:\n{output.decode(errors='replace')}")


def payloads(work):
    """The three kinds of hand-in, each as ``gradekit submit`` sends a folder: ``[(kind, [(name, bytes)])]``."""
    from grader.server.client import files_of

    assignment = load()
    bugs = Catalogue(assignment).bugs_for(TASK)
    mutant = Catalogue(assignment).write_mutant(bugs[0], work / "mutant")
    return [
        ("reference", files_of(assignment.reference)),
        ("skeleton", files_of(assignment.skeleton)),
        (f"bug {bugs[0].id}", files_of(mutant)),
    ]


def multipart(files):
    boundary = "bench-" + secrets.token_hex(16)
    parts = []
    for name, content in files:
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        parts += [(head + "Content-Type: application/octet-stream\r\n\r\n").encode(), content, b"\r\n"]
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def call(method, url, token, body=None, content_type=None):
    """``(status, JSON answer)`` of one request; an error status is returned, not raised."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


class Server:
    """``gradekit serve run`` for the course at ``config`` on a free loopback port, in a session of its own."""

    def __init__(self, config, data, log):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.config, self.data, self.log = config, data, log
        self.proc = None

    def start(self):
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "grader",
                    "serve",
                    "run",
                    "--config",
                    str(self.config),
                    "--port",
                    str(self.port),
                ],
                env=env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        ends = time.monotonic() + START_S
        while time.monotonic() < ends:
            if self.proc.poll() is not None:
                raise SystemExit(f"the server stopped:\n{self.log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"the server did not answer in {START_S:g} s:\n{self.log.read_text(errors='replace')}")

    def stop(self):
        """SIGTERM (the server stops its judges), then SIGKILL of its group, and of any judge it left."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        from grader.server.grading import kill_leftover

        kill_leftover(self.data)  # the judges run in sessions of their own: a server killed outright leaves them


def client(server, token, hand_ins, acks, failures):
    """One student: hand in each of ``hand_ins`` (``[(kind, files)]``) one after the other, recording each
    acknowledgement's ``(id, kind, time)`` in ``acks``; then wait until every one is graded."""
    mine = set()
    for kind, files in hand_ins:
        body, ctype = multipart(files)
        try:
            status, answer = call("POST", f"{server.url}/api/submissions", token, body, ctype)
        except OSError as exc:
            failures.append(f"hand-in: {exc}")
            continue
        if status != 201:
            failures.append(f"hand-in answered {status}: {answer.get('error', answer)}")
            continue
        acks.append((answer["id"], kind, time.time()))
        mine.add(answer["id"])
    while mine:
        time.sleep(POLL_S)
        try:
            status, answer = call("GET", f"{server.url}/api/submissions", token)
        except OSError as exc:
            failures.append(f"poll: {exc}")
            continue
        if status == 200:
            mine -= {s["id"] for s in answer["submissions"] if s["status"] in ("done", "error")}


def percentile(values, q):
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def load_average():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50, help="students handing in at once (default 50)")
    parser.add_argument("--each", type=int, default=4, help="hand-ins per student (default 4)")
    parser.add_argument("--judges", type=int, default=2, help="the server's judges, and the batch's -j (default 2)")
    parser.add_argument("--limit", type=float, default=7200.0, help="seconds to wait for every grading at most")
    speed.add_argument(parser)
    args = parser.parse_args(argv)
    if min(args.clients, args.each, args.judges) < 1:
        parser.error("--clients, --each and --judges must be at least 1")
    total = args.clients * args.each
    work = Path(tempfile.mkdtemp(prefix="gradekit-bench-server-"))
    server = None
    try:
        course = work / "course"
        course.mkdir()
        config = course / "gradekit.toml"
        config.write_text(TOML.format(judges=args.judges, per_hour=max(20, args.each)), encoding="utf-8")
        students = [f"s{i:03d}" for i in range(args.clients)]
        with open(course / "roster.csv", "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["student", "name"])
            writer.writerows((s, f"Student {s}") for s in students)
        gradekit("serve", "init", "--config", config)
        gradekit("serve", "roster", "import", course / "roster.csv", "--config", config)
        (tokens_file,) = (course / "server-data" / "tokens").glob("tokens-*.csv")
        with open(tokens_file, encoding="utf-8-sig", newline="") as fh:
            tokens = {r["student"]: r["token"] for r in csv.DictReader(fh)}
        kinds = payloads(work)
        plan = {s: [kinds[(c * args.each + k) % len(kinds)] for k in range(args.each)] for c, s in enumerate(students)}
        print(
            f"{args.clients} clients x {args.each} hand-ins = {total} submissions ({', '.join(k for k, _ in kinds)}), "
            f"task {TASK}, quick; {args.judges} judges; {os.cpu_count()} cores; {load_average()}"
        )

        server = Server(config, course / "server-data", work / "server.log")
        server.start()
        acks, failures = [], []
        threads = [
            threading.Thread(target=client, args=(server, tokens[s], plan[s], acks, failures), daemon=True)
            for s in students
        ]
        for t in threads:
            t.start()
        ends = time.monotonic() + args.limit
        for t in threads:
            t.join(timeout=max(0.0, ends - time.monotonic()))
        waiting = sum(t.is_alive() for t in threads)
        from grader.server.store import Store

        rows = {r.id: r for r in Store(course / "server-data").history()}
        server.stop()
        server = None

        graded = [rows[sid] for sid, _, _ in acks if rows[sid].status in ("done", "error")]
        errors = [r for r in graded if r.status == "error"]
        to_report = [rows[sid].graded - acked for sid, _, acked in acks if rows[sid].graded]
        first_ack = min(acked for _, _, acked in acks) if acks else 0.0
        last_graded = max((r.graded for r in graded), default=first_ack)
        span = max(last_graded - first_ack, 1e-9)
        throughput = 60 * len(graded) / span
        scores = {}
        for sid, kind, _ in acks:
            scores.setdefault(kind, []).append(rows[sid].score)
        print(
            f"server: {len(graded)} of {total} graded, {len(errors)} ended error, {len(failures)} client failures"
            + (f", {waiting} clients still waiting after {args.limit:g} s" if waiting else "")
            + "; scores "
            + ", ".join(f"{kind} {sorted(set(v))}" for kind, v in scores.items())
        )
        for failure in failures[:5]:
            print(f"  {failure}")
        for row in errors[:5]:
            print(f"  submission {row.id}: {row.reason[:200]}")
        if not to_report:
            raise SystemExit("nothing was graded: no figures")
        median, p95 = statistics.median(to_report), percentile(to_report, 0.95)
        print(
            f"server: time to report median {median:.1f} s, p95 {p95:.1f} s; {throughput:.1f} submissions/min "
            f"({len(graded)} in {span:.1f} s); {load_average()}"
        )

        # The same zips, one per submission, graded by the batch with as many judges.
        folder = work / "class"
        folder.mkdir()
        for s in students:
            for k, (_, files) in enumerate(plan[s]):
                ((_, content),) = files
                (folder / f"{s}-{k + 1}.zip").write_bytes(content)
        started = time.perf_counter()
        batch(folder, work / "out", args.judges, config, args.limit)
        batch_s = time.perf_counter() - started
        batch_throughput = 60 * total / batch_s
        ratio = throughput / batch_throughput
        print(
            f"batch -j {args.judges}: {total} in {batch_s:.1f} s, {batch_throughput:.1f} submissions/min; "
            f"server/batch throughput {ratio:.0%} (target >= 90%); {load_average()}"
        )
        what = f"{args.clients} clients x {args.each} hand-ins, {TASK}, quick, {args.judges} judges"
        complete = len(graded) == total and not errors and not failures
        speed.record(
            "server.graded",
            f"server, {what}: submissions graded, each once, none ended error",
            f"{len(graded)} of {total}, {len(errors)} errors, {len(failures)} client failures",
            f"all {total}",
            complete,
        )
        speed.record(
            "server.time_to_report",
            f"server, {what}: time from a hand-in's acknowledgement to its grading",
            f"median {median:.1f} s, p95 {p95:.1f} s",
        )
        speed.record(
            "server.throughput",
            f"server, {what}: submissions graded per minute, first acknowledgement to last grading, against "
            f"`gradekit batch -j {args.judges}` on the same submissions",
            f"{throughput:.1f}/min vs {batch_throughput:.1f}/min: {ratio:.0%}",
            ">= 90%",
            ratio >= 0.9,
        )
        return 0 if complete else 1
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
