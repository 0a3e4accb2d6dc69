"""The walls around a worker: its environment, its user, its resource limits, its jail, and what kills it.

The judge side starts a worker with ``environment`` (nothing of the judge's own environment but what finding
Python, torch and the assignment needs), as ``_resolve_user(run_as)`` says: a uid of its own (``fresh_uid``)
when the judge runs as root, then kills everything that uid started (``kill_uid``) and removes the System V
objects it left (``remove_ipc``); as an ordinary user it sweeps the worker's session and folder (``_sweep``).
The child side, once it has imported everything it needs, locks itself in before any submission code runs:
``_enter_jail`` (``chroot`` into its own folder, namespaces of its own, its uid for good), ``_seal_reference``
(an audit hook refusing every ``open`` in the reference's folder) and ``_set_limits`` (memory, CPU time, file
size, processes). Both the fork server and the worker import this module; it imports nothing of the kit.
"""

import importlib.util
import os
import pwd
import resource
import signal
import sys
import time
from pathlib import Path


# ================================================================================================
# The environment
# ================================================================================================
def pythonpath(assignment):
    """Folders a worker needs to import ``grader``, ``assignment``'s package and ``torch`` (found without
    importing them)."""
    paths = [str(Path(__file__).resolve().parents[2])]
    package = assignment.package.partition(":")[0]
    if "/" not in package and "\\" not in package:  # an import path (``load`` puts a folder's parent on sys.path)
        top = importlib.util.find_spec(package.split(".")[0])
        if top is not None:
            where = top.submodule_search_locations or ([top.origin] if top.origin else [])
            paths.extend(str(Path(p).resolve().parent) for p in where)
    paths.extend(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    torch_spec = importlib.util.find_spec("torch")
    if torch_spec is not None and torch_spec.origin:
        torch_parent = str(Path(torch_spec.origin).resolve().parent.parent)
        prefixes = {str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        if not any(torch_parent.startswith(p + os.sep) for p in prefixes):
            paths.append(torch_parent)  # e.g. a user site-packages, which HOME=<temp> would hide
    return os.pathsep.join(dict.fromkeys(paths))


def environment(home, assignment):
    """The whole environment of a worker of ``assignment`` (nothing inherited but what finding Python, torch, the
    assignment and GPUs needs)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "PYTHONPATH": pythonpath(assignment),
        "PYTHONHASHSEED": "0",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for name in ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"):  # needed to find the same torch / GPUs
        if name in os.environ:
            env[name] = os.environ[name]
    return env


# ================================================================================================
# Users and what they leave behind (the judge side)
# ================================================================================================
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
    uids = {os.getuid()} if uid is None else {os.getuid(), uid}
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


def _uids_of_processes():
    """``{pid: real uid}`` of every process (Linux ``/proc``)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"Uid:"):
                        found[int(entry.name)] = int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
    return found


def kill_uid(uid, rounds=200):
    """SIGKILL every process whose real uid is ``uid`` until none is left (a worker's uid is its own, so this
    reaches exactly what the worker started: daemons that left its session, its folder and its group too).
    Returns how many were killed. Root only; a process cannot escape it by changing session, group or folder."""
    if os.geteuid() != 0 or not os.path.isdir("/proc"):
        return 0
    killed = 0
    for _ in range(rounds):
        victims = [pid for pid, owner in _uids_of_processes().items() if owner == uid]
        alive = []
        for pid in victims:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    if f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                        continue  # dead, waiting for its parent (or the fork server) to reap it
            except (OSError, IndexError):
                continue
            alive.append(pid)
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        if not alive:
            return killed
        time.sleep(0.002)
    return killed


def remove_ipc(uid):
    """Remove System V shared memory, message queues and semaphores created by ``uid`` (they outlive their
    process; a worker in its own IPC namespace leaves none, this covers machines where that was refused)."""
    if os.geteuid() != 0:
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return
    for kind in ("shm", "msg", "sem"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        header = lines[0].split()
        try:
            id_col, uid_col = 1, header.index("cuid")
        except ValueError:
            continue
        for line in lines[1:]:
            fields = line.split()
            try:
                if int(fields[uid_col]) != uid and int(fields[header.index("uid")]) != uid:
                    continue
                ident = int(fields[id_col])
            except (ValueError, IndexError):
                continue
            if kind == "shm":
                libc.shmctl(ident, 0, None)
            elif kind == "msg":
                libc.msgctl(ident, 0, None)
            else:
                libc.semctl(ident, 0, 0)


def _mapped_uid_ranges():
    """``[(first, count)]`` of the uids this user namespace maps (``/proc/self/uid_map``)."""
    try:
        rows = [line.split() for line in Path("/proc/self/uid_map").read_text().splitlines()]
        return [(int(r[0]), int(r[2])) for r in rows if len(r) == 3]
    except (OSError, ValueError):
        return [(0, 1 << 32)]


_FRESH_FLOOR = 100_000


def fresh_uid():
    """A uid no account owns and no process uses, drawn at random from the high uids this machine maps: one per
    worker, so that no two workers (in this batch, a later one, or another batch running beside it) share one."""
    import random

    rng = random.SystemRandom()
    ranges = [(max(first, _FRESH_FLOOR), first + count - 1) for first, count in _mapped_uid_ranges()]
    ranges = [(lo, min(hi, (1 << 31) - 2)) for lo, hi in ranges if min(hi, (1 << 31) - 2) - lo > 1000]
    if not ranges:
        raise RuntimeError("no unused high uid is mapped here; give run_as a user name instead")
    busy = set(_uids_of_processes().values())
    lo, hi = max(ranges, key=lambda r: r[1] - r[0])
    for _ in range(1000):
        uid = rng.randint(lo, hi)
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        if uid not in busy:
            return uid
    raise RuntimeError("could not find an unused uid")


UNPRIVILEGED_USER = "nobody"
"""The account ``run_as="nobody"`` names; the default for a root judge is a fresh uid per worker instead."""
FRESH = "fresh"
"""``run_as`` resolved to: a uid of the worker's own, drawn for each worker (``fresh_uid``)."""


def _resolve_user(run_as, forked=True):
    """What ``run_as`` means here: ``FRESH`` (``"auto"`` when the judge is root: a uid of each worker's own, in a
    jail), ``None`` (``"auto"`` for an ordinary user, or ``None``: the judge's own user, no jail), a uid, or a user
    name as ``(uid, gid)``. Every worker, forked or exec'd, imports what it needs first and then drops to it."""
    if run_as is None or (run_as == "auto" and os.geteuid() != 0):
        return None
    if run_as == "auto":
        return FRESH
    if os.geteuid() != 0:
        raise ValueError(f"run_as={run_as!r} needs the judge to run as root (it runs as uid {os.geteuid()})")
    if isinstance(run_as, int) and not isinstance(run_as, bool):  # a uid no account needs to own
        return run_as, run_as
    try:
        entry = pwd.getpwnam(run_as)
    except KeyError:
        raise ValueError(f"run_as={run_as!r}: no such user on this machine") from None
    return entry.pw_uid, entry.pw_gid


def slot_user(slot):
    """The ``run_as`` of batch slot ``slot``'s workers: ``"auto"``: as root, every worker gets a uid of its own,
    so no slot, later submission or other batch ever shares one."""
    return "auto"


# ================================================================================================
# Locking the worker in (the child side, before any submission code runs)
# ================================================================================================
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
    if config.get("max_processes"):  # counted per uid: a jailed worker's uid is its own
        _set_limit(resource.RLIMIT_NPROC, int(config["max_processes"]))
    if hasattr(resource, "RLIMIT_MSGQUEUE"):  # POSIX message queues outlive their process: none at all
        _set_limit(resource.RLIMIT_MSGQUEUE, 0)


def _seal_reference(root, reference):
    """Refuse every later ``open`` of a file in the ``reference`` folder (an audit hook cannot be removed).

    In a jail (a root judge) the folder is not even visible; elsewhere (a judge running as an ordinary user)
    this stops ``open``, ``io.open_code`` and ``inspect.getsource`` from reading ``solution/*.py``, though not a
    child process that reads it (see docs/SEALED.md)."""
    sealed = os.path.realpath(reference)
    if os.path.realpath(root) == sealed:  # grading the reference itself (an instructor's sanity check)
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


def _enter_jail(config):
    """Where the judge runs as root: ``chroot`` into the worker's own folder (the submission's copy and a private
    home, nothing else of the machine: not the reference, not the batch's outputs, not a classmate, no ``/tmp``,
    no ``/proc``, no programs to run), then become the worker's own uid for good. Everything the worker needs
    was imported before."""
    jail, user = config.get("jail"), config.get("user")
    if jail:
        _unshare_namespaces()
        os.chroot(jail)
        os.chdir("/home")
    if user:
        os.setgroups([])
        os.setgid(user[1])
        os.setuid(user[0])
        if os.getuid() == 0 or os.geteuid() == 0:  # pragma: no cover - setuid cannot silently fail
            raise RuntimeError("the worker could not drop its privileges")


def seal_judge():
    """Make this process, a judge (it holds the reference), non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``): a process
    of the same user, such as a worker graded without a user of its own, can then neither trace it nor read its
    memory, environment or open files through ``/proc``, and no core file is written. A fork keeps it (the second
    judge); a program it starts (the fork server) does not. ``True`` where it took effect (Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        return False


def _unshare_namespaces():
    """Best effort, as root: a network namespace of its own (no network at all, no abstract sockets shared with
    another worker) and an IPC namespace of its own (System V objects and message queues die with it)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.unshare(0x40000000 | 0x08000000)  # CLONE_NEWNET | CLONE_NEWIPC; refused without CAP_SYS_ADMIN
    except (OSError, AttributeError):
        pass
