"""A fork server: one process imports torch, the probes and the assignment once, then forks each worker.

Starting a worker from scratch costs seconds on a small machine (importing torch, then torch's lazy
meta-device kernels); a fork of a process that has done all that costs milliseconds. The server is
``python -m grader.submission.forkserver FD warm|cold ASSIGNMENT``, a child of the judge, started as early as
the judge can (``gradekit check --sealed`` starts it before importing torch itself, a batch judge before its
first job), so that its imports run on the other core while the judge imports its own. It serves the workers
of one assignment (its probes imported, its warm-up run: ``child.prepare``), and never holds the reference.

Protocol, over a ``SOCK_SEQPACKET`` Unix socket pair (one message per packet):

- the server's first packet is ``{"ready": true, "pid": N}`` once it has imported everything;
- ``{"op": "spawn", "config": {...}}`` with four file descriptors attached (the worker's request
  pipe, reply pipe, output file and a status pipe) forks a worker and answers ``{"pid": N}``;
  when that worker exits, the server writes its exit status (``<i``: the code, or minus the
  signal) to the status pipe and closes it, but does not reap it yet, so its pid, process group
  and session cannot be reused while the judge kills what it left behind;
- ``{"op": "reap", "pid": N}`` reaps it (``SIGKILL`` first if it still runs) and answers ``{}``;
- ``{"op": "connect"}`` answers ``{}`` with a new socket attached, served like the first: a second judge
  process forked from this one (``grader.shards``) asks for its workers through it; when it is closed, the
  workers spawned through it are killed and reaped;
- end of file on the first socket (the judge closed it or died): the server kills every worker's
  process group and exits.

In the forked worker (``_become_worker``): a new session, stdin from ``/dev/null``, stdout and
stderr to the output file, every other descriptor closed, the private home folder as working
directory, a fresh minimal environment, and (when the judge runs as root) the unprivileged user's
ids, dropped for good before any submission code is loaded. It then serves requests exactly as a
worker started with ``python -m grader.submission.child`` does (``child.serve``).

This module is imported by the judge before torch: it imports nothing heavy at module level.
"""

import copy
import fcntl
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader.submission.sandbox import environment

_STATUS = struct.Struct("<i")
_PACKET = 1 << 16


def supported():
    """Whether workers can be forked here: Linux with ``socket.send_fds`` (Python 3.9+)."""
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds")


# ================================================================================================
# The judge side
# ================================================================================================
class ServerGone(OSError):
    """The fork server died or did not start; the message says what it printed."""


class ForkServer:
    """The judge's handle on one fork server process.

    Args:
        assignment: the ``Assignment`` whose workers it forks (loaded there by its ``package``).
        start_timeout: seconds the server may take to import torch, the probes and the assignment.
        warm: also run the assignment's warm-up before the first fork (``Assignment.warm_up``: about 0.5-2 s),
            so that each worker starts without torch's first-call costs: worth it for a judge that forks a
            worker per submission; not for one ``check --sealed``, whose only worker pays those costs while
            the judge pays its own for the reference, on the other core.
    """

    def __init__(self, assignment, start_timeout=180.0, warm=True):
        self.start_timeout = float(start_timeout)
        self.base = tempfile.mkdtemp(prefix="gradekit-forkserver-")
        self._lock = threading.Lock()
        self.ready = False
        self.started = time.monotonic()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log = os.open(os.path.join(self.base, "server.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-B",
                    "-m",
                    "grader.submission.forkserver",
                    str(theirs.fileno()),
                    "warm" if warm else "cold",
                    assignment.package,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.base,
                env=environment(self.base, assignment),
                pass_fds=(theirs.fileno(),),
                close_fds=True,
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
            os.close(log)
        self.sock = ours
        self.pid = self.proc.pid

    def alive(self):
        """Whether the server runs. A handle ``connect``ed in a process forked from the one that started it cannot
        wait for the server (not its child: ``Popen.poll`` would say it exited), so it asks its own socket."""
        if self.owner:
            return self.proc.poll() is None
        try:
            readable = select.select([self.sock], [], [], 0)[0]
            return not readable or self.sock.recv(_PACKET, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True
        except (OSError, ValueError):
            return False

    def log_tail(self, limit=3000):
        try:
            return Path(self.base, "server.log").read_text(errors="replace")[-limit:]
        except OSError:
            return ""

    def is_ready(self):
        """Whether the server has said it is ready (without waiting)."""
        with self._lock:
            if not self.ready and select.select([self.sock], [], [], 0)[0]:
                self._wait_ready()
            return self.ready

    def wait_ready(self):
        """Block until the server has imported everything; ``ServerGone`` if it dies or takes too long."""
        with self._lock:
            self._wait_ready()

    def _wait_ready(self):
        if self.ready:
            return
        deadline = self.started + self.start_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise ServerGone(
                    f"the fork server did not start within {self.start_timeout:g} s; its output:\n{self.log_tail()}"
                )
            ready, _, _ = select.select([self.sock], [], [], min(left, 1.0))
            if ready:
                msg = self._recv()
                if msg.get("ready"):
                    self.ready = True
                    return
                raise ServerGone(f"the fork server sent {msg!r} instead of ready")
            if not self.alive():
                raise ServerGone(
                    f"the fork server exited with status {self.proc.returncode}; its output:\n{self.log_tail()}"
                )

    def _recv(self):
        try:
            data = self.sock.recv(_PACKET)
        except OSError as exc:
            raise ServerGone(f"the fork server's socket failed: {exc}") from None
        if not data:
            self.proc.poll()
            raise ServerGone(
                f"the fork server closed its socket (exit status {self.proc.returncode}); "
                f"its output:\n{self.log_tail()}"
            )
        return json.loads(data)

    def _ask(self, message, fds=()):
        try:
            socket.send_fds(self.sock, [json.dumps(message).encode()], list(fds))
        except OSError as exc:
            raise ServerGone(f"the fork server is gone ({exc}); its output:\n{self.log_tail()}") from None
        return self._recv()

    def spawn(self, config, req_r, rep_w, log_fd):
        """Fork a worker serving ``config``; ``(pid, status_fd)``: the status fd becomes readable when it exits."""
        status_r, status_w = os.pipe()
        try:
            with self._lock:
                self._wait_ready()
                reply = self._ask({"op": "spawn", "config": config}, (req_r, rep_w, log_fd, status_w))
        except BaseException:
            os.close(status_r)
            raise
        finally:
            os.close(status_w)
        if "pid" not in reply:
            os.close(status_r)
            raise ServerGone(f"the fork server could not fork: {reply.get('error', reply)}")
        return reply["pid"], status_r

    def connect(self):
        """A second handle on this server, with a socket of its own (``{"op": "connect"}``), for a judge process
        forked from this one: the two never share a socket. Closing it kills only the workers spawned through it."""
        with self._lock:
            self._wait_ready()
            try:
                socket.send_fds(self.sock, [json.dumps({"op": "connect"}).encode()], [])
                data, fds, _, _ = socket.recv_fds(self.sock, _PACKET, 1)
            except OSError as exc:
                raise ServerGone(f"the fork server is gone ({exc}); its output:\n{self.log_tail()}") from None
        if not fds:
            raise ServerGone(f"the fork server gave no socket: {data[:200]!r}")
        other = copy.copy(self)
        other.sock = socket.socket(fileno=fds[0])
        other._lock = threading.Lock()
        other.owner = False
        return other

    def reap(self, pid):
        """Let the server reap ``pid`` (after the judge has killed what it left)."""
        with self._lock:
            try:
                self._ask({"op": "reap", "pid": pid})
            except ServerGone:
                pass  # the server is gone: its children were reparented and reaped by init

    owner = True
    """Whether this handle started the server (a ``connect``ed one only closes its socket)."""

    def close(self):
        """Close the socket (the server kills its workers and exits); kill it if it lingers."""
        try:
            self.sock.close()
        except OSError:
            pass
        if not self.owner:
            return
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        import shutil

        shutil.rmtree(self.base, ignore_errors=True)


class ForkedProcess:
    """A worker forked by a ``ForkServer``, with the little of ``subprocess.Popen`` the runner needs."""

    def __init__(self, server, pid, status_fd):
        self.server, self.pid, self.status_fd = server, pid, status_fd
        self.returncode = None

    def exited(self):
        """Whether it has exited (it stays unreaped until ``wait``)."""
        if self.returncode is not None or self.status_fd < 0:
            return True
        ready, _, _ = select.select([self.status_fd], [], [], 0)
        return bool(ready)

    def wait(self, timeout=None):
        """Wait for it to exit, have the server reap it, and return its exit status (as ``Popen.returncode``)."""
        if self.returncode is not None:
            return self.returncode
        ready, _, _ = select.select([self.status_fd], [], [], timeout)
        if not ready:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        data = os.read(self.status_fd, _STATUS.size)
        # No status: the server died before the worker; the worker was killed with its process group.
        self.returncode = _STATUS.unpack(data)[0] if len(data) == _STATUS.size else -signal.SIGKILL
        os.close(self.status_fd)
        self.status_fd = -1
        self.server.reap(self.pid)
        return self.returncode


_shared = {}
"""Assignment package -> its running ``ForkServer``."""
_shared_lock = threading.Lock()


def shared(start=True, warm=True, assignment=None):
    """This process's fork server for ``assignment`` (an ``Assignment`` or a spec for ``grader.assignment.load``;
    ``None``: the default one): one per judge and assignment, for every submission it grades, started on first
    use (``warm``: see ``ForkServer``) and restarted if it died; ``None`` where forking is not supported or
    ``start`` is false and none runs."""
    if not supported():
        return None
    from grader.assignment import load

    assignment = load(assignment)
    with _shared_lock:
        server = _shared.get(assignment.package)
        if server is not None and not server.alive():
            server.close()
            del _shared[assignment.package]
            server = None
        if server is None and start:
            server = _shared[assignment.package] = ForkServer(assignment, warm=warm)
            import atexit

            atexit.register(close_shared)
        return server


def close_shared():
    """Close every fork server of this process."""
    with _shared_lock:
        servers = list(_shared.values())
        _shared.clear()
    for server in servers:
        server.close()


# ================================================================================================
# The server side
# ================================================================================================
def _exit_status(pid):
    """The exit status of the child ``pid`` if it has exited (without reaping it), else ``None``."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return -signal.SIGKILL
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _become_worker(config, fds, keep_closed):
    """In the forked child: turn into a worker for ``config`` and serve until the judge closes the pipe."""
    try:
        for fd in keep_closed:
            try:
                os.close(fd)
            except OSError:
                pass
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a freshly started Python
        os.setsid()
        # Out of the way of 0-4 first (the received descriptors may have any numbers), then into place:
        # stdin /dev/null, stdout and stderr the output file, the pipes 3 and 4; the rest is closed.
        req_r, rep_w, log_fd = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.dup2(req_r, 3, inheritable=False)
        os.dup2(rep_w, 4, inheritable=False)
        os.closerange(5, _max_fd())
        home = config["home"]
        os.chdir(home)
        os.environ.clear()
        os.environ.update(config["env"])
        tempfile.tempdir = None
        config = dict(config, req_fd=3, rep_fd=4)
        from grader.submission import child

        child.serve(config)  # it enters its jail and drops privileges before any submission code loads
    except BaseException:  # noqa: BLE001 - say why in the output file, then go
        import traceback

        try:
            os.write(2, traceback.format_exc().encode("utf-8", "replace"))
        except OSError:
            pass
    os._exit(70)


def _max_fd():
    try:
        return max(int(fd) for fd in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        return 1024


def main(argv=None):
    """``python -m grader.submission.forkserver FD warm|cold ASSIGNMENT``: the server, on socket ``FD``."""
    argv = sys.argv[1:] if argv is None else argv
    sock = socket.socket(fileno=int(argv[0]))
    from grader.assignment import load
    from grader.submission import child

    # Everything a worker needs, imported before any fork (torch, the probes, lazy kernels); never the reference.
    child.prepare(load(argv[2]), warm=argv[1] != "cold")
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    children = {}  # pid -> status write fd (-1 once reported)
    sock.send(json.dumps({"ready": True, "pid": os.getpid()}).encode())
    try:
        _serve(sock, wake_r, wake_w, children)
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    os._exit(0)


def _serve(sock, wake_r, wake_w, children):
    clients = [sock]  # the first socket, then those asked for by "connect"
    owners = {}  # pid -> the socket it was spawned through
    while True:
        ready, _, _ = select.select([*clients, wake_r], [], [], 5.0)
        if wake_r in ready:
            try:
                while os.read(wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
        for pid, fd in children.items():
            if fd >= 0:
                status = _exit_status(pid)
                if status is not None:
                    try:
                        os.write(fd, _STATUS.pack(status))
                    except OSError:
                        pass
                    os.close(fd)
                    children[pid] = -1
        for client in [c for c in clients if c in ready]:
            try:
                msg, fds, _, _ = socket.recv_fds(client, _PACKET, 8)
            except OSError:
                msg, fds = b"", []
            if not msg:
                if client is sock:
                    return
                clients.remove(client)  # a second judge is done: the workers it spawned go with it
                for pid in [p for p, c in owners.items() if c is client]:
                    _reap(pid, children)
                    del owners[pid]
                client.close()
                continue
            reply, attach = _request(json.loads(msg), fds, clients, children, wake_r, wake_w)
            if "pid" in reply:
                owners[reply["pid"]] = client
            elif reply.get("reaped") in owners:
                del owners[reply.pop("reaped")]
            reply.pop("reaped", None)
            try:
                socket.send_fds(client, [json.dumps(reply).encode()], attach)
            except OSError:
                pass
            for fd in attach:
                os.close(fd)


def _request(request, fds, clients, children, wake_r, wake_w):
    """``(reply, fds to attach)`` for one request (see the module doc)."""
    if request.get("op") == "spawn" and len(fds) == 4:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            closed = [
                *(c.fileno() for c in clients),
                wake_r,
                wake_w,
                fds[3],
                *(fd for fd in children.values() if fd >= 0),
            ]
            _become_worker(request["config"], fds[:3], closed)
        for fd in fds[:3]:
            os.close(fd)
        children[pid] = fds[3]
        return {"pid": pid}, []
    for fd in fds:
        os.close(fd)
    if request.get("op") == "reap":
        pid = request.get("pid")
        if pid in children:
            _reap(pid, children)
            return {"reaped": pid}, []
        return {}, []
    if request.get("op") == "connect":
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        clients.append(ours)
        return {}, [theirs.detach()]
    return {"error": f"unknown request {request!r}"[:500]}, []


def _reap(pid, children):
    """Kill ``pid``'s process group if it still runs (the judge is done with it), then reap it."""
    if children[pid] >= 0:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        os.close(children[pid])
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    del children[pid]


if __name__ == "__main__":
    main()
