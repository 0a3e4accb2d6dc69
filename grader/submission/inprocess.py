"""The seam for running student code: one interface, two implementations.

``InProcessRunner`` runs probes in this process (the default for a student's
self-check: breakpoints and tracebacks in their own code work).
``WorkerRunner`` (in ``worker.py``) runs them in a child process and hands
back only plain data and raw tensor buffers (``grader.submission.wire``), never a pickle.

Both answer ``run(probe, variant, **args)`` with the probe's result dict or
raise ``SubmissionError``. ``variant`` is ``"integrated"`` (the submission as
it is) or ``"isolated:<task>"`` (the submission's code for that task, the
reference's for every other contract name).
"""

import ast
import functools
import signal
import sys
import threading
import time
import types
from pathlib import Path

from grader.errors import CRASH, SubmissionError, call_timed_out, from_exception, said, time_used_up
from grader.probes import PROBES, plain_data
from grader.submission.banned import RuntimeGuard, probe_tasks
from grader.submission.loader import PARTS_ROOT, Namespace

PARTS_USED = "_reference_parts_used"
"""Key of an isolated probe's result: the reference parts the submission's code called or built."""


def reference_namespace(assignment, patches=None, label="reference"):
    """The assignment's reference (or, with ``patches``, a mutant of it) as a ``Namespace``."""
    return Namespace(assignment.reference, assignment=assignment, label=label, patches=patches, block_reference=False)


def excluded_tasks(assignment, task_id):
    """Tasks whose reference code must not be present while ``task_id`` is graded isolated: the task itself
    and every task built on it (the reference ``Transformer`` holds the reference ``MultiHeadAttention``)."""
    return {task_id} | {t for t in assignment.task_ids if task_id in assignment.all_deps(t)}


_PARTS_FROM_DISK = {}
"""``reference_parts_for``'s cache, keyed by what the parts depend on (an ``Assignment`` is not hashable)."""


def reference_parts_for(assignment, task_id):
    """``reference_parts(assignment, task_id)`` of the reference on disk, read once (a fresh dict)."""
    key = (Path(assignment.reference), assignment.tasks, task_id)
    if key not in _PARTS_FROM_DISK:
        _PARTS_FROM_DISK[key] = reference_parts(assignment, task_id)
    return dict(_PARTS_FROM_DISK[key])


def reference_parts(assignment, task_id, read=None):
    """``{file: source}``: the reference with every definition of an excluded task (``excluded_tasks``) cut out,
    and files left with no contract name dropped. This is all of the reference an 'isolated:<task_id>' run may
    hold, in this process or in a worker. ``read(file)`` gives a file's text (default: from the assignment's
    reference folder)."""
    read = read or (lambda file: (Path(assignment.reference) / file).read_text(encoding="utf-8"))
    excluded = excluded_tasks(assignment, task_id)
    banned_names = {name for name, task in assignment.name_to_task.items() if task in excluded}
    banned_names -= set(assignment.task_by_id[task_id].own_reference)
    parts = {}
    for file in assignment.contract_files:
        names = [name for name, f in assignment.name_to_file.items() if f == file]
        if all(name in banned_names for name in names):
            continue
        tree = ast.parse(read(file))
        body = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in banned_names:
                continue
            if isinstance(node, ast.ImportFrom) and node.level:
                node.names = [a for a in node.names if a.name not in banned_names]
                if not node.names:
                    continue
            body.append(node)
        tree.body = body
        parts[file] = ast.unparse(tree) + "\n"
    return parts


def parts_namespace(assignment, parts, label="reference"):
    """A ``Namespace`` of reference parts given as source text (``reference_parts``); reads no file."""
    return Namespace(PARTS_ROOT, assignment=assignment, label=label, patches=parts, block_reference=False)


def _watched(obj, name, used):
    """``obj`` (a reference function or class) that notes in ``used`` when it is called or built."""
    if isinstance(obj, type):

        def __init__(self, *args, **kwargs):
            used.add(name)
            obj.__init__(self, *args, **kwargs)

        return type(
            obj.__name__,
            (obj,),
            {
                "__init__": __init__,
                "__module__": obj.__module__,
                "__qualname__": obj.__qualname__,
                "__doc__": obj.__doc__,
            },
        )

    @functools.wraps(obj)
    def call(*args, **kwargs):
        used.add(name)
        return obj(*args, **kwargs)

    return call


def beneath_names(assignment, task_id):
    """The contract names an 'isolated:<task_id>' run takes from the reference: the tasks beneath ``task_id`` and
    the task's own ``own_reference``."""
    deps = assignment.all_deps(task_id)
    beneath = {name for name, task in assignment.name_to_task.items() if task in deps}
    return beneath | set(assignment.task_by_id[task_id].own_reference)


class StandInParts:
    """The reference parts of an 'isolated:<task>' run as stand-ins (``grader.submission.standin``): what a sealed
    worker holds in place of the reference's code. ``get(name)`` and ``module(file)`` as a ``Namespace`` of
    parts has them; ``used`` collects the names the submission's code called or built."""

    def __init__(self, assignment, standins):
        self.assignment = assignment
        self.standins = standins
        self.used = standins.used
        self._modules = {}

    def get(self, name):
        return self.standins.get(name)

    def module(self, file):
        if file not in self._modules:
            names = [n for n in self.standins.names() if self.assignment.name_to_file.get(n) == file]
            if not names:
                raise SubmissionError(kind="missing_file", file=file, detail=f"no reference part in {file}")
            module = types.ModuleType(f"reference.{file[:-3]}")
            for n in names:
                setattr(module, n, self.standins.get(n))
            self._modules[file] = module
        return self._modules[file]


_HOST_MODULES = {}
"""``host_for``'s cache of the reference parts' modules, loaded once per judge process and variant."""


def host_for(assignment, task_id):
    """A ``standin.Host`` answering the stand-ins of 'isolated:<task_id>': the reference parts that variant may
    use (``reference_parts``), loaded here, in the judge; a fresh one for each worker (it keeps that worker's
    objects)."""
    from grader.submission.standin import Host

    key = (Path(assignment.reference), assignment.tasks, task_id)
    if key not in _HOST_MODULES:
        parts = reference_parts_for(assignment, task_id)
        ns = parts_namespace(assignment, parts)
        _HOST_MODULES[key] = [ns.module(file) for file in sorted(parts)]
    beneath = beneath_names(assignment, task_id)
    return Host(_HOST_MODULES[key], beneath, hidden=set(assignment.name_to_task) - beneath)


def loopback_parts(assignment, task_id):
    """``StandInParts`` for 'isolated:<task_id>' answered by a host in this process (tests, and the in-process runner
    when asked to grade as a worker would)."""
    from grader.submission.standin import Loopback, StandIns

    host = host_for(assignment, task_id)
    return StandInParts(assignment, StandIns(Loopback(host), host.surface))


def isolated_namespace(assignment, root, task_id, parts, label="isolated"):
    """The submission's code for ``task_id`` over the reference's for the tasks beneath it. ``parts`` gives those:
    ``StandInParts`` (stand-ins, as in a sealed worker), or a ``Namespace`` of the reference parts' own code
    (``reference_parts``: the default in process). ``namespace.parts_used`` collects the names of the reference parts
    the submission's code called or built (see ``InProcessRunner``)."""
    beneath = beneath_names(assignment, task_id)
    if isinstance(parts, StandInParts):
        used = parts.used
        overrides = {name: parts.get(name) for name in assignment.name_to_file if name in beneath}
    else:
        used = set()
        overrides = {name: _watched(parts.get(name), name, used) for name in assignment.name_to_file if name in beneath}
    own_file = assignment.task_by_id[task_id].file
    fallback = {}
    for file in assignment.contract_files:
        if file == own_file:
            continue
        try:
            fallback[file] = parts.module(file)
        except SubmissionError:  # a file whose every name is excluded: the submission's own or nothing
            pass
    ns = Namespace(root, assignment=assignment, label=f"{label}:{task_id}", overrides=overrides, fallback=fallback)
    ns.parts_used = used
    return ns


class Deferred:
    """A probe call that runs when its result is asked for (in this process, so breakpoints work)."""

    def __init__(self, run, probe, variant, args):
        self._call = (run, probe, variant, args)

    def result(self, within=None):
        run, probe, variant, args = self._call
        return run(probe, variant, **args) if within is None else run(probe, variant, within=within, **args)

    def abandon(self):
        pass


class CallTimeout(BaseException):
    """Raised where the student's code is running when an in-process call's time is up (``TimeLimit``). Not an
    ``Exception``, so that an ``except Exception`` in that code does not swallow it."""


def _traced():
    """A debugger (or a tracer such as coverage) is attached: pdb, an IDE's debugger, anything using
    ``sys.settrace`` or, from Python 3.12, ``sys.monitoring``."""
    if sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(i) is not None for i in range(6))


class TimeLimit:
    """The time limit of one call into the student's code in this process (``with TimeLimit(seconds):``): when it is
    up, ``SIGALRM`` raises ``CallTimeout`` wherever that code is, so an endless loop ends the call instead of hanging
    the grader. It raises again every half second after that, in case the code swallowed it. Paused while a
    debugger or tracer is attached: a student stopped at a ``breakpoint()`` has all the time they want. Only where
    it can work without disturbing anyone: in the main thread, on a system with ``SIGALRM``, and when no other
    timer (pytest-timeout's, say) is armed; elsewhere the call has no limit, as before. A long operation in C
    (one huge matrix product) is stopped only when it returns to Python.

    ``ours(filename)``, when given, says whether a file is the student's: the exception is raised only while one of
    their frames is the one running (for at most ``PATIENCE`` more signals), not inside a library's garbage
    collection callback or ``__del__`` that happened to be running, where Python would only print it and go on."""

    REPEAT_S = 0.5
    PATIENCE = 6

    def __init__(self, seconds, ours=None):
        self.seconds = seconds
        self.ours = ours
        self.active = False
        self._done = False
        self._old = None
        self._waited = 0

    def __enter__(self):
        self.active = bool(
            self.seconds
            and self.seconds > 0
            and hasattr(signal, "SIGALRM")
            and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0
        )
        if self.active:
            self._old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds, self.REPEAT_S)
        return self

    def _fire(self, signum, frame):
        if self._done or _traced():
            return  # finishing, or a debugger is attached: the code may take its time
        if (
            self.ours is not None
            and frame is not None
            and not self.ours(frame.f_code.co_filename)
            and self._waited < self.PATIENCE
        ):
            self._waited += 1  # not in the student's code just now: the next signal, half a second on
            return
        raise CallTimeout(f"did not finish within {self.seconds:g} s")

    def __exit__(self, *exc):
        self._done = True
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._old)
        return False


class InProcessRunner:
    """Run probes on a folder of code in this process.

    Args:
        root: the submission folder.
        assignment: the ``Assignment`` graded; its probe modules are imported here (``load_probes``).
        banned: banned API names for the runtime guard (``None``: the assignment's; empty: no guard).
        namespace: the ``Namespace`` of the 'integrated' variant (default: the folder as it is).
        parts: ``task_id -> {file: source}`` (the reference parts' own code, ``reference_parts``: the default, for
            a student's self-check, where the reference is in this process anyway) or ``task_id -> StandInParts``
            (stand-ins, as a sealed worker is given them; ``loopback_parts`` answers them in this process), for
            an 'isolated:<task>' variant.
        call_timeout: seconds one ``run`` may take (``TimeLimit``; ``None``: no limit, as for the reference and
            inside a worker, whose judge keeps the time).
        total_timeout: seconds all ``run`` calls together may take; once used up, every ``run`` raises
            ``SubmissionError(kind="timeout")`` at once, as ``WorkerRunner`` does.
    """

    def __init__(
        self, root, *, assignment, banned=None, namespace=None, parts=None, call_timeout=None, total_timeout=None
    ):
        self.root = Path(root).resolve()
        self.call_timeout = call_timeout
        self.total_timeout = total_timeout
        self.used = 0.0
        """Seconds the timed calls have taken so far."""
        self.assignment = assignment
        assignment.load_probes()
        self.parts = parts or functools.partial(reference_parts_for, assignment)
        self._namespaces = {}
        if namespace is not None:
            self._namespaces["integrated"] = namespace
        banned = assignment.banned if banned is None else banned
        self.guard = RuntimeGuard(assignment, banned).install() if banned else None

    def namespace(self, variant):
        if variant not in self._namespaces:
            if variant == "integrated":
                self._namespaces[variant] = Namespace(self.root, assignment=self.assignment)
            else:
                task_id = variant.split(":", 1)[1]
                parts = self.parts(task_id)
                if not isinstance(parts, StandInParts):
                    parts = parts_namespace(self.assignment, parts)
                self._namespaces[variant] = isolated_namespace(self.assignment, self.root, task_id, parts)
        return self._namespaces[variant]

    def _limit(self, probe):
        """This call's time limit in seconds (``None``: none); ``SubmissionError`` when all the time is used up."""
        if self.total_timeout is None:
            return self.call_timeout
        left = self.total_timeout - self.used
        if left <= 0:
            raise time_used_up(self.total_timeout, probe)
        return left if self.call_timeout is None else min(self.call_timeout, left)

    def run(self, probe, variant="integrated", *, within=None, **args):
        """The probe's result dict, or ``SubmissionError``. ``within``: a shorter limit for this call, in seconds
        (``CheckContext.both``'s, relative to the reference's time on the same call)."""
        limit = self._limit(probe)
        relative = within is not None and (limit is None or within < limit)
        if relative:
            limit = within
        ns = self.namespace(variant)
        if self.guard is not None:
            self.guard.start(self.root, probe_tasks(self.assignment, probe, variant, args))
        used = getattr(ns, "parts_used", None)
        if used is not None:
            used.clear()
        start = time.monotonic()
        try:
            with TimeLimit(limit, ours=self._ours):
                result = plain_data(PROBES[probe](ns, **args))
            if used is not None and isinstance(result, dict):
                result[PARTS_USED] = sorted(used)  # which reference parts the submission's code used
            return result
        except SubmissionError:
            raise
        except CallTimeout as exc:
            raise call_timed_out(
                "your code",
                limit,
                call_timeout=self.call_timeout,
                total_timeout=self.total_timeout,
                where=from_exception(exc, self.root),
                relative=relative,
            ) from None
        except Exception as exc:  # noqa: BLE001 - anything the student's code raised
            raise from_exception(exc, self.root) from None
        except SystemExit as exc:
            error = said("say.sys_exit", call=f"sys.exit({exc.code!r})")
            raise SubmissionError(
                kind="exception", detail=error["detail"], data={**error["data"], CRASH: "exit"}
            ) from None
        finally:
            if limit is not None:
                self.used += time.monotonic() - start
            if self.guard is not None:
                self.guard.stop()

    def _ours(self, filename):
        """``filename`` is one of the submission's files (for ``TimeLimit``)."""
        try:
            return Path(filename).resolve().is_relative_to(self.root)
        except (OSError, ValueError):
            return False

    def submit(self, probe, variant="integrated", **args):
        """``run`` deferred: it runs when ``.result()`` is called (the interface of ``WorkerRunner.submit``)."""
        return Deferred(self.run, probe, variant, args)

    def banned_runtime(self):
        """Banned calls the guard saw, as ``Finding``s."""
        return list(self.guard.findings) if self.guard is not None else []

    def close(self):
        if self.guard is not None:
            self.guard.uninstall()
            self.guard = None
