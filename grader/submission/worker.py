"""``WorkerRunner``: run probes on a submission in a child process.

The judge (the process that grades) never imports the submission and never
unpickles anything the child produced:

- the child is ``python -m grader.submission.worker`` in its own session and
  process group, with a private temporary working directory, a minimal
  environment, resource limits (address space, CPU time, file size, no core
  files) and one intra-op thread;
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

import json
import os
import pwd
import resource
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

from grader.submission import forkserver, wire
from grader.submission.banned import DEFAULT_BANNED, Finding
from grader.submission.errors import SubmissionError

_HEADER = struct.Struct("<Q")
_POLL_S = 0.05
TAIL_BYTES = 64 << 10
"""How much of the child's output the judge reads back, at most."""
REPLY_CAP = 1 << 30
"""The largest reply (bytes) the judge accepts."""
_FINDING_FIELDS = ("name", "file", "line", "code", "task")
_SIGNAL_HINTS = {
    "SIGSEGV": "a segmentation fault",
    "SIGBUS": "a bus error",
    "SIGABRT": "the process aborted",
    "SIGFPE": "a floating-point exception",
    "SIGKILL": "killed, possibly for using too much memory",
    "SIGXCPU": "the CPU time limit was reached",
    "SIGXFSZ": "the file size limit was reached",
}


# ================================================================================================
# The judge side
# ================================================================================================
class _Timeout(Exception):
    pass


class _Dead(Exception):
    pass


class _Overflow(Exception):
    pass


class _BadReply(Exception):
    pass


class _Worker:
    """One child process and what belongs to it (plain state, no reference to the runner)."""

    def __init__(self, proc, req_w, rep_r, log_fd, wdir, uid=None):
        self.proc, self.req_w, self.rep_r, self.log_fd, self.wdir = proc, req_w, rep_r, log_fd, wdir
        self.uid = os.getuid() if uid is None else uid
        self.returncode = None
        self.ready = False
        self.started = time.monotonic()

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
            _sweep(pid, self.wdir, self.uid)
            try:
                self.returncode = self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
                self.returncode = -signal.SIGKILL

    def close(self):
        """Kill (if needed) and close the pipes and the output file."""
        self.kill()
        for fd in (self.req_w, self.rep_r, self.log_fd):
            if fd < 0:
                continue
            try:
                os.close(fd)
            except OSError:
                pass
        self.req_w = self.rep_r = self.log_fd = -1


class _ExecProcess:
    """A worker started with ``python -m grader.submission.worker`` (the judge's own child)."""

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


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _sweep(sid, wdir, uid=None):
    """SIGKILL leftovers: processes in the child's session (they may have left its process group)
    and processes whose working directory is inside the child's private folder (they may have
    left its session). Linux only; best effort."""
    proc = Path("/proc")
    if not proc.is_dir():
        return
    me, prefix = os.getpid(), str(Path(wdir).resolve()) + os.sep
    uids = {os.getuid()} if uid is None else {os.getuid(), uid, _nobody_ids()[0]}  # nobody: a fallback user
    for _ in range(5):
        victims = []
        for entry in proc.iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                if entry.stat().st_uid not in uids:
                    continue
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] in ("Z", "X"):  # dead already (the worker itself, until it is reaped)
                    continue
                session = int(fields[3])
                if session == sid:
                    victims.append(int(entry.name))
                    continue
                cwd = os.readlink(entry / "cwd")
                if (cwd + os.sep).startswith(prefix):
                    victims.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


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


DEFAULT_MEMORY_MB = 4096
"""The child's memory cap when ``memory_mb`` is not given (a batch judge sets it from the course configuration)."""
UNPRIVILEGED_USER = "nobody"
"""The account a child runs as when the judge runs as root."""


def _resolve_user(run_as, forked):
    """``(uid, gid)`` for ``run_as``: ``"auto"`` (``nobody`` when the judge is root, else nobody to switch to),
    ``None`` (never switch) or a user name. A ``forked`` worker drops to that user after the fork server has
    imported Python's and torch's files; a worker started by ``exec`` must be able to read them itself."""
    if run_as is None or (run_as == "auto" and os.geteuid() != 0):
        return None
    if isinstance(run_as, int) and not isinstance(run_as, bool):  # a uid no account needs to own
        if os.geteuid() != 0:
            raise ValueError(f"run_as={run_as!r} needs the judge to run as root (it runs as uid {os.geteuid()})")
        if not forked:
            raise ValueError(f"run_as={run_as!r}: a numeric user needs workers forked from the fork server")
        return run_as, _nobody_ids()[1]
    name = UNPRIVILEGED_USER if run_as == "auto" else run_as
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        if run_as == "auto":
            return None
        raise ValueError(f"run_as={run_as!r}: no such user on this machine") from None
    if os.geteuid() != 0:
        raise ValueError(f"run_as={run_as!r} needs the judge to run as root (it runs as uid {os.geteuid()})")
    blocked = [] if forked else [p for p in _needed_paths() if not _open_to_others(p)]
    if blocked:
        if run_as == "auto":  # e.g. Python installed under /root: the child could not even start
            return None
        raise ValueError(f"run_as={run_as!r}: that user cannot read {blocked[0]} (every folder above the Python "
                         f"interpreter, torch and gradekit must be readable by others)")
    return entry.pw_uid, entry.pw_gid


SLOT_UID_BASE = 61000
"""Batch slot ``k`` runs its workers as uid ``SLOT_UID_BASE + k`` (or ``+ 1000``, ``+ 2000``... if an account has it)."""


def _nobody_ids():
    try:
        entry = pwd.getpwnam(UNPRIVILEGED_USER)
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 65534, 65534


def slot_user(slot):
    """The ``run_as`` of batch slot ``slot``'s workers: a uid of their own when the judge is root and workers are
    forked, so that one student's code cannot signal another slot's worker (``kill(-1)`` reaches every process
    of one's own uid); ``"auto"`` otherwise (``nobody``, or the judge's user)."""
    if slot is None or os.geteuid() != 0 or default_spawn() != "fork":
        return "auto"
    uid = SLOT_UID_BASE + int(slot) % 1000
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1000


def default_spawn():
    """How workers start here by default: ``"fork"`` on Linux without CUDA, else ``"exec"``."""
    return "fork" if forkserver.supported() and not torch.cuda.is_available() else "exec"


def _needed_paths():
    """What an unprivileged child must reach: the interpreter, torch, the grader (and reference)."""
    return [Path(os.path.realpath(sys.executable)), Path(torch.__file__).resolve(), Path(__file__).resolve()]


def _open_to_others(path):
    """Whether a user with no rights of its own can read ``path`` and enter every folder above it."""
    try:
        for folder in path.parents:
            if not folder.stat().st_mode & 0o001:
                return False
        return bool(path.stat().st_mode & 0o004)
    except OSError:
        return False


def _readable_copy(src, dest):
    """Copy the submission folder to ``dest``: owned by the judge, readable (not writable) by everyone."""
    shutil.copytree(src, dest, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", ".git"),
                    ignore_dangling_symlinks=True)
    for folder, dirs, files in os.walk(dest):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return dest


def _signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _as_finding(d):
    if not isinstance(d, dict) or any(k not in d for k in _FINDING_FIELDS):
        return None
    name, file, line, code, task = (d[k] for k in _FINDING_FIELDS)
    if not (isinstance(name, str) and isinstance(file, str) and type(line) is int
            and isinstance(code, str) and isinstance(task, str)):
        return None
    return Finding(name, file, line, code, task)


class WorkerRunner:
    """Run probes on a folder of code in a child process; same interface as ``InProcessRunner``.

    Args:
        root: the submission folder.
        banned: banned API names for the runtime guard in the child (empty: no guard).
        call_timeout: seconds one ``run`` may take.
        total_timeout: seconds all ``run`` calls together may take (worker start-up not counted);
            once used up, every ``run`` raises ``SubmissionError(kind="timeout")`` at once.
        memory_mb: the child's memory limit in MiB (``None``: ``DEFAULT_MEMORY_MB``; ``0``: no limit).
        output_cap: bytes of output (prints) one call may produce before the child is killed.
        cpu_seconds: CPU seconds one child may spend after start-up (default: ``total_timeout`` + 30).
        memory_kind: ``"as"`` (``RLIMIT_AS``, address space), ``"data"`` (``RLIMIT_DATA``) or
            ``"auto"``: ``"data"`` where CUDA is available (CUDA reserves far more address space
            than it uses), else ``"as"``.
        start_timeout: seconds a child may take to start (import torch and the reference).
        restart_early: after a timeout or crash, start the next child at once, in the background
            (it imports torch while the judge does other work), instead of at the next ``run``.
        run_as: ``"auto"`` (the user ``nobody`` when the judge runs as root), ``None`` or a user name.
        spawn: ``"fork"`` (fork each child from this process's fork server: milliseconds, see
            ``forkserver``), ``"exec"`` (start ``python -m grader.submission.worker``: seconds) or
            ``"auto"``: fork on Linux without CUDA, else exec (a process must not fork once it has
            initialised CUDA, and the server's warm-up asks ``torch.cuda.is_available()``; a fork server
            for GPU machines would have to avoid every CUDA call, to be tried on a GPU).
    """

    def __init__(self, root, *, banned=DEFAULT_BANNED, call_timeout=60.0, total_timeout=600.0,
                 memory_mb=None, output_cap=8 << 20, cpu_seconds=None, memory_kind="auto",
                 start_timeout=120.0, restart_early=True, run_as="auto", spawn="auto"):
        self.root = Path(root).resolve()
        if spawn == "auto":
            spawn = default_spawn()
        if spawn not in ("fork", "exec"):
            raise ValueError(f"spawn must be 'auto', 'fork' or 'exec', not {spawn!r}")
        if spawn == "fork" and not forkserver.supported():
            raise ValueError("spawn='fork' needs Linux and Python 3.9+")
        self.spawn = spawn
        self.run_as = _resolve_user(run_as, forked=spawn == "fork")
        """``(uid, gid)`` the child runs as, or ``None`` (the judge's own user)."""
        self._child_root = self.root
        self.banned = tuple(banned or ())
        self.call_timeout = float(call_timeout)
        self.total_timeout = float(total_timeout)
        self.memory_mb = DEFAULT_MEMORY_MB if memory_mb is None else memory_mb
        self.output_cap = int(output_cap)
        self.cpu_seconds = int(cpu_seconds if cpu_seconds is not None else self.total_timeout + 30)
        if memory_kind == "auto":
            memory_kind = "data" if torch.cuda.is_available() else "as"
        if memory_kind not in ("as", "data"):
            raise ValueError(f"memory_kind must be 'auto', 'as' or 'data', not {memory_kind!r}")
        self.memory_kind = memory_kind
        self.start_timeout = float(start_timeout)
        self.restart_early = restart_early
        self.used = 0.0
        """Seconds of ``total_timeout`` used so far."""
        self.starts = 0
        """How many children were started."""
        self.start_times = []
        """Seconds each child took to start."""
        self._findings = []
        self._pending = None
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
            raise SubmissionError(kind="timeout", detail=f"the time limit of {self.total_timeout:g} s for "
                                                         f"all calls together is used up; {probe!r} was not run")
        request = wire.encode((probe, variant, args))
        worker = self._ensure_worker()
        limit = min(self.call_timeout, left)
        worker.trim_output()
        _drain(worker.rep_r)
        pending = _Pending(self, worker, probe, limit)
        try:
            _send(worker, request, pending.start + limit)
        except (_Timeout, _Dead) as exc:
            pending.failed = exc
        except BaseException:  # Ctrl-C while sending: the worker's state is unknown
            self.used += time.monotonic() - pending.start
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
            blob = _receive(worker, deadline, self.output_cap)
            if worker.output_size() > self.output_cap:
                raise _Overflow
            reply = _parse_reply(blob)
        except (_Timeout, _Overflow, _Dead, _BadReply) as exc:
            self.used += time.monotonic() - start
            error = self._failure(worker, exc, probe, limit)
            if self.restart_early:
                self._prestart()
            raise error from None
        except BaseException:  # Ctrl-C while waiting: the reply would answer the next request
            self.used += time.monotonic() - start
            self._discard(worker)
            raise
        self.used += time.monotonic() - start
        for d in reply.get("findings") or []:
            finding = _as_finding(d)
            if finding is not None and finding not in self._findings:
                self._findings.append(finding)
        if "error" in reply:
            raise _error_from(reply["error"])
        return reply["result"]

    def _abandon(self, pending):
        """Forget ``pending`` without its reply: the worker is stopped (a fresh one answers the next request)."""
        if self._pending is pending:
            self._pending = None
            self.used += time.monotonic() - pending.start
            self._discard(pending.worker)

    def prestart(self):
        """Start the child now, without waiting for it (``run`` otherwise starts it when first needed)."""
        if self._closed:
            raise RuntimeError("this WorkerRunner is closed")
        self._prestart()

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
    def _ensure_worker(self):
        """The current child, ready for a request: started (or restarted) if needed."""
        worker = self._state["worker"]
        if worker is not None and not worker.alive():  # died between calls (a thread of the student's)
            self._discard(worker)
            worker = None
        if worker is None:
            worker = self._spawn()
        if not worker.ready:
            self._handshake(worker)
        return worker

    def _prestart(self):
        """Start the next child now (it imports torch while the judge does other work)."""
        if not self._closed and self.used < self.total_timeout and self._state["worker"] is None:
            try:
                self._spawn()
            except OSError:
                pass  # the next run tries again and reports

    def _discard(self, worker):
        worker.close()
        if self._state["worker"] is worker:
            self._state["worker"] = None
        shutil.rmtree(worker.wdir, ignore_errors=True)

    def _spawn(self):
        if self._state["base"] is None:
            self._state["base"] = tempfile.mkdtemp(prefix="gradekit-worker-")
            if self.run_as is not None:
                # The unprivileged child reads a root-owned copy it cannot change (the original may sit
                # in a folder only root can enter, such as a fresh mkdtemp).
                os.chmod(self._state["base"], 0o755)
                self._child_root = _readable_copy(self.root, Path(self._state["base"]) / "submission")
        self.starts += 1
        wdir = Path(self._state["base"]) / f"w{self.starts}"
        home = wdir / "home"
        home.mkdir(parents=True)
        if self.run_as is not None:
            for d in (wdir, home):
                os.chown(d, *self.run_as)
                os.chmod(d, 0o700)
        log_fd = os.open(wdir / "output.log", os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        config = {
            "root": str(self._child_root), "banned": list(self.banned), "req_fd": req_r, "rep_fd": rep_w,
            "memory_mb": self.memory_mb, "memory_kind": self.memory_kind, "cpu_seconds": self.cpu_seconds,
            "file_size": 2 * self.output_cap + (1 << 20),
        }
        t0 = time.monotonic()
        try:
            proc = self._start_child(config, home, req_r, rep_w, log_fd)
        except BaseException:
            for fd in (req_r, req_w, rep_r, rep_w, log_fd):
                os.close(fd)
            raise
        os.close(req_r)
        os.close(rep_w)
        os.set_blocking(req_w, False)
        worker = _Worker(proc, req_w, rep_r, log_fd, wdir, uid=None if self.run_as is None else self.run_as[0])
        worker.started = t0
        self._state["worker"] = worker
        return worker

    def _start_child(self, config, home, req_r, rep_w, log_fd):
        """The child process (``_ExecProcess`` or ``forkserver.ForkedProcess``), given its pipes and output file."""
        if self.spawn == "fork":
            config = dict(config, home=str(home), env=forkserver.environment(home),
                          user=list(self.run_as) if self.run_as is not None else None,
                          fallback_user=list(_nobody_ids()))
            for attempt in (1, 2):  # a server that died (a submission may kill it) is started again, once
                server = forkserver.shared()
                try:
                    pid, status_fd = server.spawn(config, req_r, rep_w, log_fd)
                    return forkserver.ForkedProcess(server, pid, status_fd)
                except forkserver.ServerGone:
                    if attempt == 2 or server.alive():
                        raise
        user = {} if self.run_as is None else {"user": self.run_as[0], "group": self.run_as[1],
                                                "extra_groups": []}
        popen = subprocess.Popen(
            [sys.executable, "-B", "-m", "grader.submission.worker", json.dumps(config)],
            stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd, cwd=home,
            env=forkserver.environment(home), pass_fds=(req_r, rep_w), close_fds=True, start_new_session=True,
            **user)
        return _ExecProcess(popen)

    def _handshake(self, worker):
        try:
            hello = _parse_reply(_receive(worker, worker.started + self.start_timeout, self.output_cap))
            if not hello.get("ready"):
                raise _BadReply("no ready message")
        except (_Timeout, _Dead, _Overflow, _BadReply) as exc:
            worker.kill()
            tail = worker.output_tail(4000)
            self._discard(worker)
            raise RuntimeError(f"the grading worker did not start ({type(exc).__name__.strip('_')}, "
                               f"exit status {worker.returncode}); its output:\n{tail}") from None
        worker.ready = True
        self.start_times.append(time.monotonic() - worker.started)

    def _failure(self, worker, exc, probe, limit):
        """Kill ``worker`` after ``exc`` and say what happened as a ``SubmissionError``."""
        worker.kill()
        rc = worker.returncode
        tail = worker.output_tail(4000)
        overflow = worker.output_size() > self.output_cap
        self._discard(worker)
        data = {"output": tail, "returncode": rc}
        if isinstance(exc, _Timeout):
            detail = f"{probe!r} did not finish within {limit:g} s"
            if limit < self.call_timeout:
                detail += f" (what was left of the {self.total_timeout:g} s for all calls together)"
            return SubmissionError(kind="timeout", detail=detail, data=data)
        if overflow or isinstance(exc, _Overflow):
            return SubmissionError(kind="crashed", detail=f"the output (prints) of the code exceeded the cap "
                                                          f"of {self.output_cap} bytes while running {probe!r}; "
                                                          f"the worker was stopped. Last output:\n{tail[-300:]}",
                                   data=data)
        if isinstance(exc, _BadReply):
            return SubmissionError(kind="crashed", detail=f"the worker sent back a reply that is not plain "
                                                          f"data while running {probe!r}: {exc}", data=data)
        if rc is None or rc >= 0:
            how = f"exited with code {rc}"
            if "[gradekit] the code called os._exit" in tail:
                how += " (the code called os._exit)"
        else:
            name = _signal_name(-rc)
            how = f"was killed by {name}"
            if name in _SIGNAL_HINTS:
                hint = _SIGNAL_HINTS[name]
                if name == "SIGXCPU":
                    hint += f" ({self.cpu_seconds} s)"
                how += f" ({hint})"
        detail = f"the worker process running the code {how} while running {probe!r}"
        if tail.strip():
            detail += f"; its last output:\n{tail[-1500:]}"
        return SubmissionError(kind="crashed", detail=detail, data=data)


class _Pending:
    """A request sent to a worker whose reply has not been read yet."""

    def __init__(self, runner, worker, probe, limit):
        self.runner, self.worker, self.probe, self.limit = runner, worker, probe, limit
        self.start = self.sent = time.monotonic()
        self.failed = None

    def result(self):
        """The probe's result dict, or ``SubmissionError`` (as ``WorkerRunner.run``)."""
        return self.runner._collect(self)

    def abandon(self):
        self.runner._abandon(self)


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


def _send(worker, payload, deadline):
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        now = time.monotonic()
        if now >= deadline:
            raise _Timeout
        _, ready, _ = select.select([], [worker.req_w], [], min(_POLL_S, deadline - now))
        if ready:
            try:
                n = os.write(worker.req_w, data[:1 << 16])
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _Dead from None
            data = data[n:]
        elif not worker.alive():
            raise _Dead


def _receive(worker, deadline, output_cap):
    """One framed message from the child, watching the deadline, its output and whether it lives."""
    buf = bytearray()
    length = None
    while True:
        now = time.monotonic()
        if now >= deadline:
            raise _Timeout
        ready, _, _ = select.select([worker.rep_r], [], [], min(_POLL_S, deadline - now))
        if ready:
            want = (_HEADER.size - len(buf)) if length is None else (_HEADER.size + length - len(buf))
            chunk = os.read(worker.rep_r, min(want, 1 << 20))
            if not chunk:
                raise _Dead
            buf += chunk
            if length is None and len(buf) >= _HEADER.size:
                (length,) = _HEADER.unpack_from(buf)
                if length > REPLY_CAP:
                    raise _BadReply(f"a reply of {length} bytes (more than {REPLY_CAP})")
            if length is not None and len(buf) >= _HEADER.size + length:
                return bytes(buf[_HEADER.size:])
            continue
        if worker.output_size() > output_cap:
            raise _Overflow
        if not worker.alive():
            ready, _, _ = select.select([worker.rep_r], [], [], 0)
            if not ready:  # nothing more will come (a grandchild may still hold the pipe open)
                raise _Dead


def _parse_reply(blob):
    try:
        reply = wire.decode(blob)
    except wire.WireError as exc:
        raise _BadReply(str(exc)[:500]) from None
    if not isinstance(reply, dict):
        raise _BadReply(f"a {type(reply).__name__} instead of a dict")
    if reply.get("ready"):
        return reply
    if not isinstance(reply.get("findings", []), list):
        raise _BadReply("findings is not a list")
    if "error" in reply:
        if not isinstance(reply["error"], dict):
            raise _BadReply("the error is not a dict")
    elif not isinstance(reply.get("result"), dict):
        raise _BadReply("neither a result nor an error")
    return reply


def _error_from(d):
    """A ``SubmissionError`` from the child's dict, each field forced to its type."""
    fields = {}
    for name, kind, default in (("kind", str, "exception"), ("detail", str, ""), ("file", str, ""),
                                ("line", int, 0), ("code", str, ""), ("trace", str, ""), ("data", dict, {})):
        value = d.get(name, default)
        fields[name] = value if isinstance(value, kind) and not isinstance(value, bool) else default
    return SubmissionError.from_dict(fields)


# ================================================================================================
# The child side
# ================================================================================================
def _read_exact(fd, n):
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _set_limit(which, value):
    soft, hard = resource.getrlimit(which)
    hard_value = value[1] if isinstance(value, tuple) else value
    soft_value = value[0] if isinstance(value, tuple) else value
    if hard != resource.RLIM_INFINITY:
        hard_value = min(hard_value, hard)
        soft_value = min(soft_value, hard_value)
    resource.setrlimit(which, (soft_value, hard_value))


def _set_limits(config):
    _set_limit(resource.RLIMIT_CORE, 0)
    if config.get("memory_mb"):
        kind = resource.RLIMIT_DATA if config.get("memory_kind") == "data" else resource.RLIMIT_AS
        _set_limit(kind, int(config["memory_mb"]) << 20)
    if config.get("cpu_seconds"):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(usage.ru_utime + usage.ru_stime) + 1  # start-up (importing torch) is not counted
        cpu = spent + int(config["cpu_seconds"])
        _set_limit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # SIGXCPU at the soft limit, SIGKILL at the hard
    if config.get("file_size"):
        _set_limit(resource.RLIMIT_FSIZE, int(config["file_size"]))


def _seal_reference(runner):
    """Load the reference now, then refuse every later ``open`` of a file in its folder.

    Student code runs only after this; an audit hook cannot be removed, so reading
    ``solution/*.py`` (``open``, ``io.open_code``, ``inspect.getsource``...) raises ``PermissionError``.
    """
    from grader.submission.runner import SOLUTION_ROOT
    from grader.tasks import CONTRACT_FILES

    for file in CONTRACT_FILES:
        runner.reference.module(file)
    sealed = os.path.realpath(SOLUTION_ROOT)
    if os.path.realpath(runner.root) == sealed:  # grading the reference itself (an instructor's sanity check)
        return
    realpath, fspath, sep = os.path.realpath, os.fspath, os.sep

    def hook(event, args):
        if event != "open" or not args:
            return
        path = args[0]
        if isinstance(path, int):
            return
        try:
            where = realpath(fspath(path))
        except (TypeError, ValueError, OSError):
            return
        if isinstance(where, bytes):
            where = where.decode("utf-8", "replace")
        if where == sealed or where.startswith(sealed + sep):
            raise PermissionError(f"reading the reference solution is not allowed: {path!r}")

    sys.addaudithook(hook)


def _wrap_exit():
    """Leave a note in the output when the code calls ``os._exit`` (the judge reports it)."""
    real_exit = os._exit
    write = os.write

    def _exit(status):
        try:
            frame = sys._getframe(1)
            where = f" at {frame.f_code.co_filename}:{frame.f_lineno}"
        except ValueError:
            where = ""
        try:
            write(2, f"\n[gradekit] the code called os._exit({status!r}){where}\n".encode())
        except OSError:
            pass
        real_exit(status)

    os._exit = _exit
    return real_exit


def _child_plain(x, depth=0):
    """``x`` rebuilt from exact plain types; ``SubmissionError(bad_output)`` for anything else."""
    from grader.probes import plain

    if depth > 100:
        raise SubmissionError(kind="bad_output", detail="the result is nested too deeply")
    if x is None or type(x) is bool:
        return x
    if isinstance(x, torch.Tensor):
        t = plain(x)
        if type(t) is not torch.Tensor:
            raise SubmissionError(kind="bad_output", detail="a tensor could not be made a plain torch.Tensor")
        return t
    if isinstance(x, bool):  # pragma: no cover - bool cannot be subclassed
        return bool(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, dict):
        return {_child_plain(k, depth + 1): _child_plain(v, depth + 1) for k, v in dict.items(x)}
    if isinstance(x, list):
        return [_child_plain(v, depth + 1) for v in list.__iter__(x)]
    if isinstance(x, tuple):
        return tuple(_child_plain(v, depth + 1) for v in tuple.__iter__(x))
    raise SubmissionError(kind="bad_output", detail=f"the result holds a {type(x).__module__}."
                                                    f"{type(x).__qualname__}, which is not plain data",
                          data={"type": f"{type(x).__module__}.{type(x).__qualname__}"})


def _error_dict(err):
    d = err.to_dict()
    try:
        return _child_plain(d)
    except Exception:  # noqa: BLE001 - keep what is plain, describe the rest
        return {k: (v if type(v) in (str, int) else repr(v)[:2000]) for k, v in d.items() if k != "data"}


def prepare(warm=True):
    """Everything a worker does before it knows its submission: import torch, the probes and the reference,
    and pay torch's lazy imports; with ``warm``, also run every probe once on the reference (its first-call
    costs). Returns the reference ``Namespace`` (the fork server calls this once)."""
    import faulthandler

    faulthandler.enable()
    torch.set_num_threads(1)
    import grader.submission.errors  # noqa: F401 - what serve() needs, imported before any fork
    from grader.probes import warm_up, warm_up_reference
    from grader.submission.runner import reference_namespace
    from grader.tasks import CONTRACT_FILES

    reference = reference_namespace()
    for file in CONTRACT_FILES:
        reference.module(file)
    warm_up()  # torch's lazy imports are not the submission's time
    if warm:
        warm_up_reference(reference)  # nor are its first-call costs (the reference pays them in-process too)
    return reference


def serve(config, reference):
    """Load the submission at ``config["root"]``, lock the process down, say ready, then answer requests
    until the judge closes the pipe; never returns."""
    from grader.submission.errors import from_exception
    from grader.submission.runner import InProcessRunner

    req_fd, rep_fd = config["req_fd"], config["rep_fd"]
    root = config["root"]
    runner = InProcessRunner(root, banned=tuple(config["banned"]), reference=reference)
    encode, decode = wire.encode, wire.decode  # as they are before any student code runs
    _seal_reference(runner)
    _set_limits(config)
    real_exit = _wrap_exit()
    _write_all(rep_fd, _frame(encode({"ready": True, "pid": os.getpid()})))

    while True:
        header = _read_exact(req_fd, _HEADER.size)
        if header is None:
            break
        payload = _read_exact(req_fd, _HEADER.unpack(header)[0])
        if payload is None:
            break
        probe, variant, args = decode(payload)
        try:
            reply = {"result": _child_plain(runner.run(probe, variant, **args))}
        except SubmissionError as err:
            reply = {"error": _error_dict(err)}
        except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt, a student's BaseException ...
            reply = {"error": _error_dict(from_exception(exc, root))}
        try:
            findings = [_child_plain(f.to_dict()) for f in runner.banned_runtime()]
        except BaseException:  # noqa: BLE001
            findings = []
        reply["findings"] = findings
        try:
            blob = encode(reply)
        except BaseException as exc:  # noqa: BLE001 - a tensor the wire format cannot carry
            err = SubmissionError(kind="bad_output", detail=f"the result could not be sent back: "
                                                            f"{type(exc).__name__}: {str(exc)[:500]}")
            blob = encode({"error": _error_dict(err), "findings": findings})
        _write_all(rep_fd, _frame(blob))
    sys.stdout.flush()
    real_exit(0)


def main(argv=None):
    """``python -m grader.submission.worker CONFIG_JSON``: a worker started by exec."""
    argv = sys.argv[1:] if argv is None else argv
    serve(json.loads(argv[0]), prepare(warm=False))  # one worker per process: it warms up beside the judge


def _frame(blob):
    return _HEADER.pack(len(blob)) + blob


if __name__ == "__main__":
    main()
