"""``WorkerRunner``: run probes on a submission in a child process (the judge's side).

The judge (the process that grades) never imports the submission and never
unpickles anything the child produced:

- the child (``grader.submission.child``) is forked from a fork server
  (``forkserver``) or started as ``python -m grader.submission.child``, in its
  own session and process group, with a private temporary working directory,
  a minimal environment, resource limits (address space, CPU time, file size,
  no core files) and one intra-op thread (``sandbox``);
- the judge sends requests ``(probe, variant, args)`` over a pipe, and the child
  answers over a second pipe, both in the format of ``grader.submission.wire``:
  plain data (dict/list/tuple/str/int/float/bool/None) and raw tensor buffers,
  which the judge decodes without ever unpickling, checking every length,
  dtype and shape: a reply that is not plain data is rejected, never run;
- the student's prints go to a capped file, not to the pipes.

Anything that goes wrong in the child (an endless loop, ``os._exit``, a
segfault, running out of memory or CPU time, printing without end) becomes a
``SubmissionError`` of kind ``timeout`` or ``crashed`` in the judge, and the
next ``run`` starts a fresh child.

Wire format, both ways: an 8-byte little-endian length, then the payload.
The child's first message is ``{"ready": True, "pid": ...}``; each reply is
``{"result": dict, "findings": [...]}`` or ``{"error": dict, "findings": [...]}``.
"""

import fcntl
import json
import mmap
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

import torch

from grader.errors import SubmissionError, call_timed_out, said, time_used_up
from grader.messages import PHRASE, is_phrase, phrase, text
from grader.options import DEFAULTS
from grader.submission import forkserver, wire
from grader.submission.banned import Finding
from grader.submission.sandbox import (
    FRESH,
    _kill_group,
    _resolve_user,
    _sweep,
    environment,
    fresh_uid,
    kill_uid,
    remove_ipc,
    seal_judge,
)

_POLL_S = 0.05
TAIL_BYTES = 64 << 10
"""How much of the child's output the judge reads back, at most."""
REPLY_CAP = 64 << 20
"""The largest reply (bytes) the judge accepts."""
_FINDING_FIELDS = ("name", "file", "line", "code", "task")
_SIGNAL_HINTS = ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGFPE", "SIGKILL", "SIGXCPU", "SIGXFSZ")
"""Signals whose crash says what they usually mean (``say.signal.<name>``)."""


# ================================================================================================
# The judge side
# ================================================================================================
class _Timeout(Exception):
    pass


class _Dead(Exception):
    pass


class _BadReply(Exception):
    """A reply the protocol does not allow; ``why`` says how: a phrase (``messages.phrase``), said in the report's
    language (where the wire format could not decode it, the wire format's own words are its data)."""

    def __init__(self, why):
        self.why = why
        super().__init__(text(why[PHRASE], "en", **why["params"]) if is_phrase(why) else why)


class _Worker:
    """One child process and what belongs to it (plain state, no reference to the runner)."""

    def __init__(self, proc, req_w, rep_r, log_fd, wdir, uid=None, variant="integrated", own_uid=False):
        self.proc, self.req_w, self.rep_r, self.log_fd, self.wdir = proc, req_w, rep_r, log_fd, wdir
        self.uid = os.getuid() if uid is None else uid
        self.variant = variant
        self.own_uid = own_uid
        """Whether ``uid`` belongs to this worker alone (then everything of that uid dies with it)."""
        self.returncode = None
        self.ready = False
        self.started = time.monotonic()
        self.host = None
        """The ``standin.Host`` answering this worker's stand-ins (an isolated variant's), or ``None``."""

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        """Whether the child still runs (a dead one is not reaped yet, so its pid stays ours)."""
        return self.returncode is None and not self.proc.exited()

    def output_size(self):
        try:
            return os.fstat(self.log_fd).st_size
        except OSError:
            return 0

    def output_tail(self, limit=TAIL_BYTES):
        try:
            size = os.fstat(self.log_fd).st_size
            data = os.pread(self.log_fd, limit, max(0, size - limit))
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace")

    def trim_output(self):
        """Keep only the last ``TAIL_BYTES`` of output, so that the cap counts one call's output."""
        if self.output_size() > 2 * TAIL_BYTES:
            tail = os.pread(self.log_fd, TAIL_BYTES, self.output_size() - TAIL_BYTES)
            os.ftruncate(self.log_fd, 0)
            os.write(self.log_fd, tail)  # O_APPEND: lands at the (new) end

    def kill(self):
        """SIGKILL the child's process group and what else it started, and reap it."""
        pid = self.pid
        if self.returncode is None:
            # Until it is reaped, the dead child keeps its pid, so its group and session ids
            # cannot name anybody else's processes: kill everything first, reap last.
            _kill_group(pid)
            if self.own_uid:
                kill_uid(self.uid)
            else:
                _sweep(pid, self.wdir, self.uid)
            try:
                self.returncode = self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
                self.returncode = -signal.SIGKILL

    def close(self):
        """Kill (if needed) and close the pipes and the output file; remove what its uid left."""
        self.kill()
        if self.own_uid:
            kill_uid(self.uid)  # what it started while it was being reaped
            remove_ipc(self.uid)
        for fd in (self.req_w, self.rep_r, self.log_fd):
            if fd < 0:
                continue
            try:
                os.close(fd)
            except OSError:
                pass
        self.req_w = self.rep_r = self.log_fd = -1


class _ExecProcess:
    """A worker started with ``python -m grader.submission.child`` (the judge's own child)."""

    def __init__(self, popen):
        self.popen, self.pid = popen, popen.pid

    def exited(self):
        """Whether it has exited, without reaping it."""
        if self.popen.returncode is not None:
            return True
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def wait(self, timeout=None):
        return self.popen.wait(timeout=timeout)


def _cleanup(state):
    """Kill the current child and remove the runner's temporary folder (also run at exit / GC)."""
    worker = state.get("worker")
    if worker is not None:
        worker.close()
        state["worker"] = None
    base = state.get("base")
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)
        state["base"] = None


DEFAULT_MEMORY_MB = DEFAULTS["memory_mb"].value
"""The child's memory cap when ``memory_mb`` is not given (``grader.options.DEFAULTS``)."""


def _available(device):
    if device == "cuda":
        return torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None)
    return mps is not None and mps.is_available()


def default_spin():
    """``wire.SPIN_S`` where this process may run on two cores or more (the judge's and its worker's), else 0."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return wire.SPIN_S if cores >= 2 else 0.0


def default_spawn():
    """How workers start here by default: ``"fork"`` on Linux without CUDA, else ``"exec"``."""
    return "fork" if forkserver.supported() and not torch.cuda.is_available() else "exec"


def _same_device(a, b):
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def _signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _as_finding(d):
    if not isinstance(d, dict) or any(k not in d for k in _FINDING_FIELDS):
        return None
    name, file, line, code, task = (d[k] for k in _FINDING_FIELDS)
    if not (
        isinstance(name, str)
        and isinstance(file, str)
        and type(line) is int
        and isinstance(code, str)
        and isinstance(task, str)
    ):
        return None
    return Finding(name, file, line, code, task)


class WorkerRunner:
    """Run probes on a folder of code in a child process; same interface as ``InProcessRunner``.

    Args:
        root: the submission folder.
        assignment: the ``Assignment`` graded (loaded by its ``package`` in the child: one ``load`` made).
        banned: banned API names for the runtime guard in the child (``None``: the assignment's; empty: no guard).
        call_timeout: seconds one ``run`` may take.
        total_timeout: seconds all ``run`` calls together may take (worker start-up not counted);
            once used up, every ``run`` raises ``SubmissionError(kind="timeout")`` at once.
        memory_mb: the child's memory limit in MiB (``None``: ``DEFAULT_MEMORY_MB``; ``0``: no limit).
        output_cap: bytes of output (prints) one call may produce; the rest is dropped (and counted in
            ``output_dropped``), never punished.
        cpu_seconds: CPU seconds one child may spend after start-up (default: ``total_timeout`` + 30).
        memory_kind: ``"as"`` (``RLIMIT_AS``, address space), ``"data"`` (``RLIMIT_DATA``) or
            ``"auto"``: ``"data"`` where CUDA is available (CUDA reserves far more address space
            than it uses), else ``"as"``.
        start_timeout: seconds a child may take to start (import torch, the probes and the assignment).
        restart_early: after a timeout or crash, start the next child at once, in the background
            (it imports torch while the judge does other work), instead of at the next ``run``.
        run_as: ``"auto"`` (when the judge runs as root: each worker in a jail of its own, as a uid of its own;
            else the judge's user), ``None`` (the judge's user, no jail), a uid or a user name (in a jail).
        jail: with a root judge, ``chroot`` each worker into its own folder (default: whenever the judge is root).
        spawn: ``"fork"`` (fork each child from this process's fork server: milliseconds, see
            ``forkserver``), ``"exec"`` (start ``python -m grader.submission.child``: seconds) or
            ``"auto"``: fork on Linux without CUDA, else exec (a process must not fork once it has
            initialised CUDA, and the server's warm-up asks ``torch.cuda.is_available()``; a fork server
            for GPU machines would have to avoid every CUDA call, to be tried on a GPU).
        spin: seconds the judge and the child poll for each other's next message before they sleep
            (``None``: ``wire.SPIN_S`` where this process may use two cores or more, else 0). A judge that
            shares the machine with other judges (a batch) passes 0: its polling would take their time.
    """

    def __init__(
        self,
        root,
        *,
        assignment,
        banned=None,
        call_timeout=DEFAULTS["call_timeout"].value,
        total_timeout=DEFAULTS["total_timeout"].value,
        memory_mb=None,
        output_cap=8 << 20,
        cpu_seconds=None,
        memory_kind="auto",
        start_timeout=120.0,
        restart_early=True,
        run_as="auto",
        spawn="auto",
        jail=None,
        reply_cap=REPLY_CAP,
        spin=None,
    ):
        self._given = {k: v for k, v in locals().items() if k not in ("self", "root")}
        if not assignment.package:
            raise ValueError(
                f"assignment {assignment.name!r} has no package: a worker loads it by that import "
                f"path; get it from grader.assignment.load"
            )
        self.root = Path(root).resolve()
        self.assignment = assignment
        seal_judge()  # this process holds the reference: no worker of its user may read its memory
        if spawn == "auto":
            spawn = default_spawn()
        if spawn not in ("fork", "exec"):
            raise ValueError(f"spawn must be 'auto', 'fork' or 'exec', not {spawn!r}")
        if spawn == "fork" and not forkserver.supported():
            raise ValueError("spawn='fork' needs Linux and Python 3.9+")
        self.spawn = spawn
        self.run_as = _resolve_user(run_as, forked=spawn == "fork")
        """``FRESH`` (a uid of each worker's own), ``(uid, gid)``, or ``None`` (the judge's own user)."""
        self.jail = (os.geteuid() == 0 and self.run_as is not None) if jail is None else bool(jail)
        if self.jail and os.geteuid() != 0:
            raise ValueError("jail=True needs the judge to run as root")
        self._copy = None
        self.banned = tuple(assignment.banned if banned is None else banned)
        self.call_timeout = float(call_timeout)
        self.total_timeout = float(total_timeout)
        self.memory_mb = DEFAULT_MEMORY_MB if memory_mb is None else memory_mb
        self.output_cap = int(output_cap)
        self.reply_cap = int(reply_cap)
        self.cpu_seconds = int(cpu_seconds if cpu_seconds is not None else self.total_timeout + 30)
        if memory_kind == "auto":
            memory_kind = "data" if torch.cuda.is_available() else "as"
        if memory_kind not in ("as", "data"):
            raise ValueError(f"memory_kind must be 'auto', 'as' or 'data', not {memory_kind!r}")
        self.memory_kind = memory_kind
        self.start_timeout = float(start_timeout)
        self.spin = float(default_spin() if spin is None else spin)
        self.restart_early = restart_early
        self._budget = _Budget()
        self.starts = 0
        """How many children were started."""
        self.start_times = []
        """Seconds each child took to start."""
        self._findings = []
        self._pending = None
        self._variant = "integrated"
        self.output_dropped = 0
        """How many calls printed more than ``output_cap`` (the rest of their output was dropped)."""
        self.accelerators = [d for d in ("cuda", "mps") if _available(d)]
        """The accelerators this process sees: each worker says which of them it can compute on."""
        self.devices = ["cpu"]
        """The devices the last worker said it can compute on (``child.usable_devices``, asked before any student
        code ran): a jail may hide a GPU the judge sees."""
        self.standin_calls = 0
        """Messages of the workers' stand-ins answered (computations of the reference's parts for isolated checks)."""
        self.standin_seconds = 0.0
        """Seconds the judge spent computing them."""
        self._closed = False
        self._state = {"worker": None, "base": None}
        self._finalizer = weakref.finalize(self, _cleanup, self._state)

    # -- the runner interface -------------------------------------------------------------------
    def run(self, probe, variant="integrated", **args):
        """Run ``probe`` on ``variant`` in the child; the result dict, or ``SubmissionError``."""
        return self.submit(probe, variant, **args).result()

    def submit(self, probe, variant="integrated", **args):
        """Send the request and return at once: ``.result()`` of what comes back waits for the reply (the
        judge computes the reference's side meanwhile, on the other core). One request at a time."""
        if self._closed:
            raise RuntimeError("this WorkerRunner is closed")
        if self._pending is not None:
            raise RuntimeError("collect the result of the last request before sending another")
        left = self.total_timeout - self.used
        if left <= 0:
            raise time_used_up(self.total_timeout, probe)
        request = wire.encode((probe, variant, args))
        worker = self._ensure_worker(variant)
        limit = min(self.call_timeout, left)
        worker.trim_output()
        _drain(worker.rep_r)
        pending = _Pending(self, worker, probe, limit)
        try:
            _send(worker, request, pending.start + limit)
        except (_Timeout, _Dead) as exc:
            pending.failed = exc
        except BaseException:  # Ctrl-C while sending: the worker's state is unknown
            self._budget.spend(time.monotonic() - pending.start)
            self._discard(worker)
            raise
        pending.sent = time.monotonic()
        self._pending = pending
        return pending

    def _collect(self, pending):
        """The reply to ``pending`` (see ``_Pending.result``)."""
        self._pending = None
        worker, probe, limit, start = pending.worker, pending.probe, pending.limit, pending.start
        # The time the judge spent on its own work before asking is not the worker's: it is credited.
        deadline = start + limit + max(0.0, time.monotonic() - pending.sent)
        try:
            if pending.failed is not None:
                raise pending.failed
            while True:
                blob = _receive(worker, deadline, self.reply_cap, self.spin)
                reply = _parse_reply(blob)
                if "standin" not in reply:
                    break
                self._answer(worker, reply["standin"], deadline)
            if worker.output_size() >= self.output_cap:
                self.output_dropped += 1
        except (_Timeout, _Dead, _BadReply) as exc:
            self._budget.spend(time.monotonic() - start)
            error = self._failure(worker, exc, probe, limit, relative=pending.relative)
            if self.restart_early:
                self._prestart(worker.variant)
            raise error from None
        except BaseException:  # Ctrl-C while waiting: the reply would answer the next request
            self._budget.spend(time.monotonic() - start)
            self._discard(worker)
            raise
        self._budget.spend(time.monotonic() - start)
        for d in reply.get("findings") or []:
            finding = _as_finding(d)
            if finding is not None and finding not in self._findings:
                self._findings.append(finding)
        if "error" in reply:
            raise _error_from(reply["error"])
        return reply["result"]

    def _answer(self, worker, message, deadline):
        """Answer one message of the worker's stand-ins (a reference part's computation), within the call's time."""
        if worker.host is None:
            raise _BadReply(phrase("say.reply_standin_unserved"))
        self.standin_calls += 1
        start = time.perf_counter()
        answer = worker.host.answer(message)
        self.standin_seconds += time.perf_counter() - start
        try:
            blob = wire.encode({"answer": answer})
        except wire.WireError as exc:  # the reference made something the wire cannot carry: the grader's own fault
            blob = wire.encode({"answer": {"error": {"type": "RuntimeError", "message": str(exc)[:200]}}})
        if len(blob) > self.reply_cap:
            blob = wire.encode(
                {
                    "answer": {
                        "error": {
                            "type": "StandInError",
                            "message": f"an answer of {len(blob)} bytes, more than grading ever needs",
                        }
                    }
                }
            )
        _send(worker, blob, deadline)

    def _abandon(self, pending):
        """Forget ``pending`` without its reply: the worker is stopped (a fresh one answers the next request)."""
        if self._pending is pending:
            self._pending = None
            self._budget.spend(time.monotonic() - pending.start)
            self._discard(pending.worker)

    def prestart(self, variant="integrated"):
        """Start the child for ``variant`` now, without waiting for it (``run`` otherwise starts it when needed)."""
        if self._closed:
            raise RuntimeError("this WorkerRunner is closed")
        self._prestart(variant)

    @property
    def used(self):
        """Seconds of ``total_timeout`` used so far (by this runner and its twin, once ``share_budget`` is called)."""
        return self._budget.used

    def share_budget(self):
        """Before forking a second judge: make this runner's total time one that its ``twin`` spends too."""
        self._budget.share()

    def twin(self, slot=1, **changes):
        """A new runner of the same submission with the same settings (``changes`` aside): the runner of a second
        judge process (``grader.shards``), which starts workers of its own and spends the same total time (after
        ``share_budget``; ``slot``: the judge's number, 1 to ``_Budget.SLOTS - 1``): two judges never give a
        submission two budgets."""
        runner = WorkerRunner(self.root, **{**self._given, "spin": self.spin, **changes})
        runner._budget = self._budget.second(slot)
        return runner

    def absorb(self, counts):
        """Add what a twin counted (``shards``: its ``counts()``) to this runner's figures."""
        for finding in counts.get("findings", ()):
            if finding not in self._findings:
                self._findings.append(finding)
        self.output_dropped += counts.get("output_dropped", 0)
        self.standin_calls += counts.get("standin_calls", 0)
        self.standin_seconds += counts.get("standin_seconds", 0.0)
        self.starts += counts.get("starts", 0)
        self.start_times += counts.get("start_times", [])

    def counts(self):
        """What ``absorb`` adds up."""
        return {
            "findings": list(self._findings),
            "output_dropped": self.output_dropped,
            "standin_calls": self.standin_calls,
            "standin_seconds": self.standin_seconds,
            "starts": self.starts,
            "start_times": list(self.start_times),
        }

    def disown(self):
        """In a process forked from the one that made this runner: close the descriptors of its worker, which
        stays the first process's (not killed, not waited for: the fork holds no way to it)."""
        worker = self._state["worker"]
        self._state = {"worker": None, "base": None}
        self._finalizer.detach()
        self._closed = True
        if worker is None:
            return
        status = getattr(worker.proc, "status_fd", -1)
        for fd in (worker.req_w, worker.rep_r, worker.log_fd, status):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def banned_runtime(self):
        """Banned calls the child's guard saw (over every child so far), as ``Finding``s."""
        return list(self._findings)

    def output(self):
        """The last output (prints) of the current child, at most ``TAIL_BYTES``."""
        worker = self._state["worker"]
        return worker.output_tail() if worker is not None else ""

    def close(self):
        """Kill the child and everything it started; remove the temporary folder."""
        self._closed = True
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- machinery ------------------------------------------------------------------------------
    def _ensure_worker(self, variant):
        """The child for ``variant``, ready for a request: started (or restarted) if needed.

        Each variant has a worker of its own (an 'isolated:<task>' one holds stand-ins for the parts beneath the
        task), and only one worker of a runner lives at a time: before the next starts, everything of the last
        one's uid is killed and its folder removed (``_discard``). A second judge (``grader.shards``) has a runner
        and workers of its own."""
        worker = self._state["worker"]
        if worker is not None and (not worker.alive() or worker.variant != variant):
            self._discard(worker)  # died between calls (a thread of the student's), or another variant's
            worker = None
        if worker is None:
            worker = self._spawn(variant)
        if not worker.ready:
            self._handshake(worker)
        return worker

    def _prestart(self, variant):
        """Start the next child now (it imports torch while the judge does other work)."""
        if not self._closed and self.used < self.total_timeout and self._state["worker"] is None:
            try:
                self._spawn(variant)
            except OSError:
                pass  # the next run tries again and reports

    def _discard(self, worker):
        worker.close()
        if self._state["worker"] is worker:
            self._state["worker"] = None
        shutil.rmtree(worker.wdir, ignore_errors=True)

    def _submission_copy(self):
        """One safe copy of the submission for every worker: regular files only (no links, devices or FIFOs),
        owned by the judge, readable and not writable by the worker."""
        if self._copy is None:
            from grader.submission.snapshot import safe_copy

            dest = Path(self._state["base"]) / "submission"
            safe_copy(self.root, dest)
            for folder, _dirs, files in os.walk(dest):
                os.chmod(folder, 0o755)
                for name in files:
                    os.chmod(os.path.join(folder, name), 0o644)
            self._copy = dest
        return self._copy

    def _spawn(self, variant):
        if self._state["base"] is None:
            self._state["base"] = tempfile.mkdtemp(prefix="gradekit-worker-")
            os.chmod(self._state["base"], 0o711 if self.jail else 0o700)
        self.starts += 1
        wdir = Path(self._state["base"]) / f"w{self.starts}"
        wdir.mkdir()
        uid, gid, own_uid = None, None, False
        if self.run_as == FRESH:
            uid = gid = fresh_uid()
            own_uid = True
        elif self.run_as is not None:
            uid, gid = self.run_as
        if self.jail:
            # wdir/jail is the worker's whole file system: a read-only copy of the submission and its home.
            jail = wdir / "jail"
            jail.mkdir()
            os.chmod(wdir, 0o711)
            os.chmod(jail, 0o755)
            shutil.copytree(
                self._submission_copy(),
                jail / "submission",
                copy_function=os.link if _same_device(wdir, self._submission_copy()) else shutil.copy2,
            )
            home, inside_home, root = jail / "home", "/home", "/submission"
        else:
            jail, home, root = None, wdir / "home", str(self.root)
            inside_home = str(home)
        home.mkdir()
        if uid is not None:
            os.chown(home, uid, gid)
        os.chmod(home, 0o700)
        log_fd = os.open(wdir / "output.log", os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        host = None
        if variant != "integrated":  # the reference's parts beneath the task, computed here for the worker's stand-ins
            from grader.submission.inprocess import host_for

            host = host_for(self.assignment, variant.split(":", 1)[1])
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        _widen(req_w)
        _widen(rep_w)
        config = {
            "assignment": self.assignment.package,
            "root": root,
            "banned": list(self.banned),
            "variant": variant,
            "req_fd": req_r,
            "rep_fd": rep_w,
            "surface": host.surface if host is not None else None,
            "jail": str(jail) if jail else None,
            "user": [uid, gid] if uid is not None else None,
            "home": str(home),
            "memory_mb": self.memory_mb,
            "memory_kind": self.memory_kind,
            "cpu_seconds": self.cpu_seconds,
            "file_size": self.output_cap,
            "max_processes": 128 if own_uid else None,
            "reply_cap": self.reply_cap,
            "spin": self.spin,
            "devices": list(self.accelerators),
        }
        t0 = time.monotonic()
        try:
            proc = self._start_child(config, home, inside_home, req_r, rep_w, log_fd)
        except BaseException:
            for fd in (req_r, req_w, rep_r, rep_w, log_fd):
                os.close(fd)
            raise
        os.close(req_r)
        os.close(rep_w)
        os.set_blocking(req_w, False)
        worker = _Worker(proc, req_w, rep_r, log_fd, wdir, uid=uid, variant=variant, own_uid=own_uid)
        worker.started = t0
        worker.host = host
        self._state["worker"] = worker
        return worker

    def _start_child(self, config, home, inside_home, req_r, rep_w, log_fd):
        """The child process (``_ExecProcess`` or ``forkserver.ForkedProcess``), given its pipes and output file."""
        env = environment(inside_home, self.assignment)
        if self.spawn == "fork":
            config = dict(config, env=env)
            for attempt in (1, 2):  # a server that died (a submission may kill it) is started again, once
                server = forkserver.shared(assignment=self.assignment)
                try:
                    pid, status_fd = server.spawn(config, req_r, rep_w, log_fd)
                    return forkserver.ForkedProcess(server, pid, status_fd)
                except forkserver.ServerGone:
                    if attempt == 2 or server.alive():
                        raise
        # Started as the judge's user: it imports what it needs, then enters its jail and drops to its own.
        popen = subprocess.Popen(
            [sys.executable, "-B", "-m", "grader.submission.child", json.dumps(config)],
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            cwd=home,
            env=env,
            pass_fds=(req_r, rep_w),
            close_fds=True,
            start_new_session=True,
        )
        return _ExecProcess(popen)

    def _handshake(self, worker):
        try:
            hello = _parse_reply(_receive(worker, worker.started + self.start_timeout, self.reply_cap))
            if not hello.get("ready"):
                raise _BadReply(phrase("say.reply_not_ready"))
        except (_Timeout, _Dead, _BadReply) as exc:
            worker.kill()
            tail = worker.output_tail(4000)
            self._discard(worker)
            raise RuntimeError(
                f"the grading worker did not start ({type(exc).__name__.strip('_')}, "
                f"exit status {worker.returncode}); its output:\n{tail}"
            ) from None
        worker.ready = True
        devices = hello.get("devices")
        self.devices = (
            [d for d in devices if d in ("cpu", *self.accelerators)] if isinstance(devices, list) else ["cpu"]
        )
        self.start_times.append(time.monotonic() - worker.started)

    def _failure(self, worker, exc, probe, limit, relative=False):
        """Kill ``worker`` after ``exc`` and say what happened as a ``SubmissionError`` (``relative``: the limit was
        the check's, relative to the reference's time)."""
        worker.kill()
        rc = worker.returncode
        tail = worker.output_tail(4000)
        self._discard(worker)
        data = {"output": tail, "returncode": rc}
        if isinstance(exc, _Timeout):
            return call_timed_out(
                repr(probe),
                limit,
                call_timeout=self.call_timeout,
                total_timeout=self.total_timeout,
                data=data,
                relative=relative,
            )
        if isinstance(exc, _BadReply):
            error = said("say.worker_bad_reply", probe=repr(probe), why=exc.why)
            return SubmissionError(kind="crashed", detail=error["detail"], data={**data, **error["data"]})
        if rc is None or rc >= 0:
            os_exit = "[gradekit] the code called os._exit" in tail
            how = phrase("say.exited_os_exit" if os_exit else "say.exited", code=rc)
        else:
            name = _signal_name(-rc)
            how = phrase("say.killed", signal=name)
            if name in _SIGNAL_HINTS:
                hint = phrase(f"say.signal.{name}", seconds=self.cpu_seconds)
                how = phrase("say.killed_hint", signal=name, hint=hint)
        if tail.strip():
            error = said("say.worker_ended_output", how=how, probe=repr(probe), output=tail[-1500:])
        else:
            error = said("say.worker_ended", how=how, probe=repr(probe))
        return SubmissionError(kind="crashed", detail=error["detail"], data={**data, **error["data"]})


class _Pending:
    """A request sent to a worker whose reply has not been read yet."""

    def __init__(self, runner, worker, probe, limit):
        self.runner, self.worker, self.probe, self.limit = runner, worker, probe, limit
        self.start = self.sent = time.monotonic()
        self.failed = None
        self.relative = False

    def result(self, within=None):
        """The probe's result dict, or ``SubmissionError`` (as ``WorkerRunner.run``); ``within``: a shorter limit,
        in seconds, counted as the whole limit is."""
        if within is not None and within < self.limit:
            self.limit, self.relative = within, True
        return self.runner._collect(self)

    def abandon(self):
        self.runner._abandon(self)


class _Budget:
    """The seconds of a runner's ``total_timeout`` used. ``share`` puts them on a page of memory shared with the
    processes forked after it, with a slot per judge (each writes its own; ``used`` is the sum), so that a second
    judge's runner (``second``) spends from the same budget."""

    SLOTS = 8

    def __init__(self):
        self._mine = 0.0
        self._page = None
        self._slot = 0

    def spend(self, seconds):
        self._mine += seconds
        if self._page is not None:
            struct.pack_into("<d", self._page, 8 * self._slot, self._mine)

    @property
    def used(self):
        if self._page is None:
            return self._mine
        return sum(struct.unpack_from(f"<{self.SLOTS}d", self._page))

    def share(self):
        if self._page is None:
            self._page = mmap.mmap(-1, 8 * self.SLOTS)  # anonymous, shared: what a fork of this process writes, it sees
            struct.pack_into("<d", self._page, 0, self._mine)

    def second(self, slot):
        """The budget of another judge's runner: the same page, slot ``slot`` (or a budget of its own, unshared)."""
        other = _Budget()
        if self._page is not None:
            other._page, other._slot = self._page, min(max(int(slot), 1), self.SLOTS - 1)
            struct.pack_into("<d", self._page, 8 * other._slot, 0.0)
        return other


def _drain(fd):
    """Discard bytes left in the reply pipe (written outside the protocol)."""
    while True:
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            return
        try:
            if not os.read(fd, 1 << 16):
                return
        except BlockingIOError:
            return


PIPE_BYTES = 1 << 20
"""What each pipe between the judge and a worker holds (Linux's default is 64 KiB): most messages fit whole, so a
side writes one in one call and goes on, instead of waking the other once per 64 KiB."""


def _widen(fd):
    """Give pipe ``fd`` ``PIPE_BYTES`` where the system allows it; the default otherwise."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (AttributeError, OSError):
        pass


def _send(worker, payload, deadline):
    data = memoryview(wire.frame(payload))
    while data:
        now = time.monotonic()
        if now >= deadline:
            raise _Timeout
        _, ready, _ = select.select([], [worker.req_w], [], min(_POLL_S, deadline - now))
        if ready:
            try:
                n = os.write(worker.req_w, data[:PIPE_BYTES])
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _Dead from None
            data = data[n:]
        elif not worker.alive():
            raise _Dead


def _receive(worker, deadline, reply_cap, spin=0.0):
    """One framed message from the child, watching the deadline, its output and whether it lives."""
    header = wire.HEADER
    buf = bytearray()
    length = None
    if spin:
        wire.poll_briefly(worker.rep_r, min(spin, max(0.0, deadline - time.monotonic())))
    while True:
        now = time.monotonic()
        if now >= deadline:
            raise _Timeout
        ready, _, _ = select.select([worker.rep_r], [], [], min(_POLL_S, deadline - now))
        if ready:
            want = (header.size - len(buf)) if length is None else (header.size + length - len(buf))
            chunk = os.read(worker.rep_r, min(want, 1 << 20))
            if not chunk:
                raise _Dead
            buf += chunk
            if length is None and len(buf) >= header.size:
                (length,) = header.unpack_from(buf)
                if length > reply_cap:
                    raise _BadReply(phrase("say.reply_too_large", size=length, cap=reply_cap))
            if length is not None and len(buf) >= header.size + length:
                return bytes(buf[header.size :])
            continue
        if not worker.alive():
            ready, _, _ = select.select([worker.rep_r], [], [], 0)
            if not ready:  # nothing more will come (a grandchild may still hold the pipe open)
                raise _Dead


def _parse_reply(blob):
    try:
        reply = wire.decode(blob)
    except wire.WireError as exc:
        raise _BadReply(phrase("say.reply_undecodable", error=str(exc)[:500])) from None
    if not isinstance(reply, dict):
        raise _BadReply(phrase("say.reply_not_dict", type=type(reply).__name__))
    if reply.get("ready"):
        return reply
    if "standin" in reply:
        if not isinstance(reply["standin"], dict):
            raise _BadReply(phrase("say.reply_standin_not_dict"))
        return reply
    if not isinstance(reply.get("findings", []), list):
        raise _BadReply(phrase("say.reply_findings_not_list"))
    if "error" in reply:
        if not isinstance(reply["error"], dict):
            raise _BadReply(phrase("say.reply_error_not_dict"))
    elif not isinstance(reply.get("result"), dict):
        raise _BadReply(phrase("say.reply_empty"))
    return reply


def _error_from(d):
    """A ``SubmissionError`` from the child's dict, each field forced to its type."""
    fields = {}
    for name, kind, default in (
        ("kind", str, "exception"),
        ("detail", str, ""),
        ("file", str, ""),
        ("line", int, 0),
        ("code", str, ""),
        ("trace", str, ""),
        ("data", dict, {}),
    ):
        value = d.get(name, default)
        fields[name] = value if isinstance(value, kind) and not isinstance(value, bool) else default
    return SubmissionError.from_dict(fields)
