"""Two judges for one sealed grading: the checks of one submission shared between this process and a fork of it.

In a sealed grading the judge and its worker take turns: while the worker runs the student's code, the judge
waits, and while the judge computes a reference part for the worker's stand-ins (an isolated check), the worker
waits. A pair keeps about one core busy. Where the machine has a second core and nothing else to run
(``gradekit check --sealed``; not a batch, whose judges fill the cores), a second judge, forked from the first
once it has loaded everything, grades some of the checks with workers of its own, and the grading takes about
half the time.

What stays as it was:

- **The same results.** Checks are dealt by variant: every check of one variant (``integrated``, or
  ``isolated:<task>``) is graded by one judge, in the order of a single judge, so what a check learns from the
  earlier ones of its variant (a call that ran out of time is not waited for twice) is the same. How the
  variants are dealt depends only on the checks chosen (``split``), never on timing. Each check draws its
  examples from its own seed. The results come back in the assignment's order, and everything after the checks
  (a defect charged once, diagnosis, the course configuration) runs in the first judge, as before.
- **The reference never runs where student code runs.** The second judge is a fork of the first: it runs no
  student code; its workers, like the first's, hold only stand-ins. Its workers start from the same fork
  server, through a socket of their own (``forkserver.ForkServer.connect``).
- **Nothing is lost.** If the second judge fails (it dies, or is far past its time), the first grades the
  checks it did not report, itself. Ctrl-C stops both.

The second judge writes each result to a file in a private folder (``pickle``: it is this kit's own process, which
runs no submission code and reads the worker's replies only through ``grader.submission.wire``) and a line on a
pipe saying which check is done; the first reads them between its own checks.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import select
import shutil
import signal
import tempfile
import time
from pathlib import Path

ISOLATED_COST = 4
"""An isolated check's cost in integrated checks (it asks its judge for every reference part it uses), to deal
the variants evenly."""
GRACE_S = 120.0
"""Seconds past the runner's total time a second judge may take before the first gives up on it."""


def wanted(runner, shards=None):
    """How many judges grade a submission: ``shards`` when given, else two where ``runner`` forks its workers from
    a fork server and this process may run on two cores or more, else one."""
    if shards is not None:
        return max(1, int(shards))
    if getattr(runner, "spawn", None) != "fork" or not hasattr(runner, "twin"):
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1


def split(variants, order, judges=2):
    """The indexes of ``order`` (checks in a single judge's order) dealt by variant to ``judges`` judges: a list per
    judge, this one first.

    ``variants[i]`` is check ``i``'s variant. The integrated checks stay in this judge; the isolated variants, the
    costliest first, go to the judge with least to do (ties: the first). Each list keeps ``order``'s order."""
    groups: dict[str, list[int]] = {}
    for i in order:
        groups.setdefault(variants[i], []).append(i)

    def cost(v):
        return len(groups[v]) * (1 if v == "integrated" else ISOLATED_COST)

    load = [0] * max(1, judges)
    load[0] = cost("integrated") if "integrated" in groups else 0
    side = {"integrated": 0}
    for v in sorted((v for v in groups if v != "integrated"), key=lambda v: (-cost(v), order.index(groups[v][0]))):
        side[v] = load.index(min(load))
        load[side[v]] += cost(v)
    return [[i for i in order if side[variants[i]] == k] for k in range(len(load))]


def run(g, specs, order, variants, run_one, progress=None):
    """Grade ``specs`` (in ``order``) with ``g.shards`` judges; ``(slots, calls)`` as a single judge's loop makes
    them."""
    slots = [None] * len(specs)
    calls: list[list] = [[] for _ in specs]
    mine, *theirs = split(variants, order, g.shards)
    done = 0

    def record(i, result):
        nonlocal done
        if progress:
            progress(done, len(specs), specs[i])
        slots[i], calls[i] = result
        done += 1

    others = []
    try:
        for part in theirs:
            other = _Second.start(g, specs, part, run_one) if part else None
            if other is not None:
                others.append(other)
        for i in mine:
            if progress:
                progress(done, len(specs), specs[i])
            slots[i], calls[i] = run_one(g, specs[i])
            done += 1
            for other in others:
                for j, result in other.ready():
                    record(j, result)
        for other in others:
            for j, result in other.rest():
                record(j, result)
            g.sub.absorb(other.counts)
            if other.stand_ins:
                from grader.submission import standin

                standin.STATS["messages"] += other.stand_ins["messages"]
                standin.STATS["seconds"] += other.stand_ins["seconds"]
    finally:
        for other in others:
            other.close()
    for i in order:  # whatever another judge did not report (it failed): graded here
        if slots[i] is None:
            if progress:
                progress(done, len(specs), specs[i])
            slots[i], calls[i] = run_one(g, specs[i])
            done += 1
    return slots, calls


class _Second:
    """The second judge: a fork of this process grading ``theirs``."""

    def __init__(self, pid, notices, folder, deadline):
        self.pid, self.notices, self.folder, self.deadline = pid, notices, folder, deadline
        self.counts = {}
        self.stand_ins = {}
        self._buffer = b""
        self._finished = False
        self._reaped = False

    @classmethod
    def start(cls, g, specs, theirs, run_one):
        """Fork it; ``None`` where it cannot start (the checks are then graded here)."""
        from grader.submission import forkserver

        try:
            server = forkserver.shared(start=False, assignment=g.assignment)
            connection = server.connect() if server is not None else None
        except (forkserver.ServerGone, OSError):
            connection = None
        if connection is None:
            return None
        folder = tempfile.mkdtemp(prefix="gradekit-shard-")
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the second judge (its results are what the tests compare)
            os.close(read)
            _serve(g, specs, theirs, run_one, connection, server, folder, write)
        os.close(write)
        connection.sock.close()
        os.set_blocking(read, False)
        deadline = time.monotonic() + getattr(g.sub, "total_timeout", 900.0) + GRACE_S
        return cls(pid, read, folder, deadline)

    def ready(self):
        """The results reported so far, not waiting: ``[(i, (result, calls))]``."""
        return self._read()

    def rest(self):
        """The remaining results, waiting until the second judge is done, has died, or is past its deadline."""
        out = []
        while not self._finished:
            left = self.deadline - time.monotonic()
            if left <= 0:
                break
            select.select([self.notices], [], [], min(left, 1.0))
            out += self._read()
            if not self._finished and self._exited():
                out += self._read()
                break
        return out

    def _read(self):
        out = []
        try:
            while True:
                chunk = os.read(self.notices, 4096)
                if not chunk:
                    self._finished = True
                    break
                self._buffer += chunk
        except BlockingIOError:
            pass
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            name = line.decode()
            try:
                with open(Path(self.folder, name), "rb") as f:
                    data = pickle.load(f)
            except (OSError, pickle.UnpicklingError, EOFError):
                continue
            if name == "done":
                self.counts, self.stand_ins = data
                self._finished = True
            else:
                out.append((int(name), data))
        return out

    def _exited(self):
        if not self._reaped:
            try:
                self._reaped = os.waitpid(self.pid, os.WNOHANG)[0] != 0
            except ChildProcessError:
                self._reaped = True
        return self._reaped

    def close(self):
        """Stop it if it still runs (Ctrl-C here, or it is past its time) and remove its folder."""
        os.close(self.notices)
        if not self._exited():
            _signal(self.pid, signal.SIGTERM)  # it closes its runner: its workers and their folders go with it
            end = time.monotonic() + 5.0
            while not self._exited() and time.monotonic() < end:
                time.sleep(0.02)
            if not self._exited():
                _signal(self.pid, signal.SIGKILL)
        if not self._reaped:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)


def _serve(g, specs, theirs, run_one, connection, server, folder, notices):  # pragma: no cover - see _Second.start
    """In the forked second judge: grade ``theirs`` with a runner of its own, report each, then exit."""
    from grader.submission import forkserver

    code = 1
    sub = None
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the first judge stops this one
        signal.signal(signal.SIGTERM, _terminate)
        server.sock.close()  # the first judge's socket: never used from here
        g.sub.disown()  # nor its worker
        forkserver._shared[g.assignment.package] = connection
        from grader.submission import standin

        before = dict(standin.STATS)  # the first judge's, copied by the fork: only what is answered here is sent
        sub = g.sub.twin()
        mine = dataclasses.replace(g, sub=sub)
        for i in theirs:
            _write(folder, notices, str(i), run_one(mine, specs[i]))
        _write(folder, notices, "done", (sub.counts(), {k: standin.STATS[k] - before[k] for k in before}))
        code = 0
    except BaseException:  # noqa: BLE001 - whatever happens here, the first judge grades what is missing
        pass
    finally:
        try:
            if sub is not None:
                sub.close()
        finally:
            os._exit(code)


def _write(folder, notices, name, data):
    path = Path(folder, name)
    with open(path.with_suffix(".part"), "wb") as f:
        pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(path.with_suffix(".part"), path)
    os.write(notices, name.encode() + b"\n")


def _terminate(*_):
    raise SystemExit(1)


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
