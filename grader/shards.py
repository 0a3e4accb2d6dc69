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
  earlier ones of its variant (a call that ran out of time is not waited for twice) is the same, whichever
  judge grades it. The first judge grades the integrated checks; the isolated variants wait in a queue, the
  costliest first (``queue``, ``variant_cost``: decided by the checks alone), and each judge takes the next one
  whenever it is free (``_Tickets``), so a variant that costs more than its estimate does not leave the other judge
  idle. Which judge takes which variant may vary from run to run; what each check grades, and how, does not.
  Each check draws its examples from its own seed. The results come back in the assignment's order, and
  everything after the checks (a defect charged once, diagnosis, the course configuration) runs in the first
  judge, as before.
- **The reference never runs where student code runs.** The second judge is a fork of the first: it runs no
  student code; its workers, like the first's, hold only stand-ins. Its workers start from the same fork
  server, through a socket of their own (``forkserver.ForkServer.connect``).
- **One time budget.** The submission's total time is spent by both judges' workers from one budget
  (``WorkerRunner.share_budget``): two judges never give it two.
- **Nothing is lost.** If the second judge fails (it dies, or is far past its time), the first grades the
  checks it did not report, itself. Ctrl-C stops both.

The second judge sends each result to the first over a socket pair made before the fork, which only the two
judges hold: nothing in the file system, where a worker running as the judge's own user (unjailed grading) could
plant or swap a file, and no descriptor a worker has (they come from the fork server, started before). Each
message is framed by its length and pickled by the second judge, this kit's own process, which runs no submission
code and reads the workers' replies only through ``grader.submission.wire``; the first reads them between its own
checks, never waiting past its deadline.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import select
import signal
import socket
import struct
import time

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


def variant_cost(assignment, specs, profile):
    """``cost(variant, indexes)``: what grading those checks of one isolated variant asks of its judge, in examples
    times parts: each example asks the judge for every reference part beneath the task (one plus the number of
    tasks beneath it), so the language model's generation (60 examples over eleven parts) comes before its
    sampling (31 over two). Only the assignment and the checks decide it, never a timing."""

    def cost(variant, indexes):
        parts = 1 + len(assignment.all_deps(variant.split(":", 1)[1]))
        return parts * sum(specs[i].examples[0 if profile == "quick" else 1] for i in indexes)

    return cost


def queue(variants, order, cost):
    """``(integrated, [(variant, indexes)])``: the integrated checks (this judge grades them first), and the
    isolated variants with their checks, the costliest first (ties: the first met in ``order``), in the order the
    judges take them. Each variant's checks keep ``order``'s order."""
    groups: dict[str, list[int]] = {}
    for i in order:
        groups.setdefault(variants[i], []).append(i)
    integrated = groups.pop("integrated", [])
    rank = {v: n for n, v in enumerate(groups)}
    return integrated, sorted(groups.items(), key=lambda item: (-cost(*item), rank[item[0]]))


MAX_VARIANTS = 255
"""Isolated variants one grading deals through ``_Tickets`` (one byte each); past that, one judge grades all."""


class _Tickets:
    """The isolated variants not yet taken, one byte each in a pipe every judge reads: a read of one byte takes
    exactly one, so no two judges take the same variant and no judge idles while one is left. Made before the
    second judges are forked, and held by the judges alone (the workers come from the fork server, started
    before)."""

    def __init__(self, count):
        self.count, self.taken = count, set()
        self.fd, w = os.pipe()
        try:
            os.write(w, bytes(range(count)))
        finally:
            os.close(w)  # empty, the pipe reads as its end: every judge stops taking

    def take(self):
        """The next variant's number, or ``None`` when none is left. A number that is no variant's, or one this judge
        took before, is passed over: only the judges hold the pipe, but a judge does not rest its grading on that."""
        while True:
            try:
                got = os.read(self.fd, 1)
            except OSError:
                return None
            if not got:
                return None
            if got[0] < self.count and got[0] not in self.taken:
                self.taken.add(got[0])
                return got[0]

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass


def run(g, specs, order, variants, run_one, progress=None):
    """Grade ``specs`` (in ``order``) with ``g.shards`` judges; ``(slots, calls)`` as a single judge's loop makes
    them."""
    slots = [None] * len(specs)
    calls: list[list] = [[] for _ in specs]
    integrated, isolated = queue(variants, order, variant_cost(g.assignment, specs, g.profile))
    judges = min(g.shards, 1 + len(isolated)) if len(isolated) <= MAX_VARIANTS else 1
    done = 0

    def record(i, result):
        nonlocal done
        if progress:
            progress(done, len(specs), specs[i])
        slots[i], calls[i] = result
        done += 1

    others = []
    tickets = _Tickets(len(isolated)) if judges > 1 else None
    share = getattr(g.sub, "share_budget", None)
    if share is not None and judges > 1:
        share()
    try:
        for k in range(1, judges):
            other = _Second.start(g, specs, isolated, tickets, run_one, k)
            if other is not None:
                others.append(other)
        mine = iter(integrated)
        while True:
            i = next(mine, None)
            if i is None:
                taken = tickets.take() if tickets is not None else None
                if taken is None:
                    break
                mine = iter(isolated[taken][1])
                continue
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
        if tickets is not None:
            tickets.close()
    for i in order:  # whatever no other judge reported (one failed, or none started): graded here
        if slots[i] is None:
            if progress:
                progress(done, len(specs), specs[i])
            slots[i], calls[i] = run_one(g, specs[i])
            done += 1
    return slots, calls


_HEAD = struct.Struct("<Q")
"""A message's length, before it."""


class _Second:
    """The second judge: a fork of this process grading the isolated variants it takes."""

    def __init__(self, pid, channel, deadline):
        self.pid, self.channel, self.deadline = pid, channel, deadline
        self.counts = {}
        self.stand_ins = {}
        self._buffer = bytearray()
        self._finished = False
        self._reaped = False

    @classmethod
    def start(cls, g, specs, isolated, tickets, run_one, k=1):
        """Fork it; ``None`` where it cannot start (the checks are then graded here)."""
        from grader.submission import forkserver

        try:
            server = forkserver.shared(start=False, assignment=g.assignment)
            connection = server.connect() if server is not None else None
        except (forkserver.ServerGone, OSError):
            connection = None
        if connection is None:
            return None
        mine, theirs_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the second judge (its results are what the tests compare)
            mine.close()
            _serve(g, specs, isolated, tickets, run_one, connection, server, theirs_end, k)
        theirs_end.close()
        connection.sock.close()
        mine.setblocking(False)
        deadline = time.monotonic() + getattr(g.sub, "total_timeout", 900.0) + GRACE_S
        return cls(pid, mine, deadline)

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
            select.select([self.channel], [], [], min(left, 1.0))
            out += self._read()
            if not self._finished and self._exited():
                out += self._read()
                break
        return out

    def _read(self):
        out = []
        try:
            while True:
                chunk = self.channel.recv(1 << 20)
                if not chunk:
                    self._finished = True
                    break
                self._buffer += chunk
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._finished = True
        while len(self._buffer) >= _HEAD.size:
            (n,) = _HEAD.unpack_from(self._buffer)
            if len(self._buffer) < _HEAD.size + n:
                break
            blob = bytes(self._buffer[_HEAD.size : _HEAD.size + n])
            del self._buffer[: _HEAD.size + n]
            kind, *data = pickle.loads(blob)
            if kind == "done":
                self.counts, self.stand_ins = data
                self._finished = True
            else:
                out.append((data[0], data[1]))
        return out

    def _exited(self):
        if not self._reaped:
            try:
                self._reaped = os.waitpid(self.pid, os.WNOHANG)[0] != 0
            except ChildProcessError:
                self._reaped = True
        return self._reaped

    def close(self):
        """Stop it if it still runs (Ctrl-C here, or it is past its time)."""
        self.channel.close()
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


def _serve(g, specs, isolated, tickets, run_one, connection, server, channel, k):  # pragma: no cover - see start
    """In the forked second judge: grade the variants it takes from ``tickets`` (of ``isolated``) with a runner of
    its own, report each check, then exit."""
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
        sub = g.sub.twin(slot=k)
        mine = dataclasses.replace(g, sub=sub)
        while (taken := tickets.take()) is not None:
            for i in isolated[taken][1]:
                _send(channel, ("result", i, run_one(mine, specs[i])))
        _send(channel, ("done", sub.counts(), {k: standin.STATS[k] - before[k] for k in before}))
        code = 0
    except BaseException:  # noqa: BLE001 - whatever happens here, the first judge grades what is missing
        pass
    finally:
        try:
            if sub is not None:
                sub.close()
        finally:
            os._exit(code)


def _send(channel, message):
    blob = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    channel.sendall(_HEAD.pack(len(blob)) + blob)


def _terminate(*_):
    raise SystemExit(1)


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
