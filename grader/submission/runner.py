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
import importlib.util
from pathlib import Path

from grader.probes import PROBES, plain_data
from grader.submission.banned import DEFAULT_BANNED, RuntimeGuard, probe_tasks
from grader.submission.errors import SubmissionError, from_exception
from grader.submission.loader import Namespace
from grader.tasks import CONTRACT_FILES, NAME_TO_FILE, NAME_TO_TASK, TASK_BY_ID, TASK_IDS, all_deps

SOLUTION_ROOT = Path(importlib.util.find_spec("solution").origin).resolve().parent
"""The reference's folder, found without importing the package (a worker must never hold the reference)."""
PARTS_USED = "_reference_parts_used"
"""Key of an isolated probe's result: the reference parts the submission's code called or built."""
PARTS_ROOT = Path("/nonexistent-gradekit-reference-parts")
"""Where reference parts loaded from source text claim to live: no such folder, so nothing is read from disk."""


def reference_namespace(patches=None, label="reference"):
    """The reference (or, with ``patches``, a mutant of it) as a ``Namespace``."""
    return Namespace(SOLUTION_ROOT, label=label, patches=patches, block_solution=False)


def excluded_tasks(task_id):
    """Tasks whose reference code must not be present while ``task_id`` is graded isolated: the task itself
    and every task built on it (the reference ``Transformer`` holds the reference ``MultiHeadAttention``)."""
    return {task_id} | {t for t in TASK_IDS if task_id in all_deps(t)}


@functools.lru_cache(maxsize=None)
def _parts_from_disk(task_id):
    return reference_parts(task_id, read=lambda file: (SOLUTION_ROOT / file).read_text(encoding="utf-8"))


def reference_parts_for(task_id):
    """``reference_parts(task_id)`` of the installed reference (a fresh dict)."""
    return dict(_parts_from_disk(task_id))


def reference_parts(task_id, read=None):
    """``{file: source}``: the reference with every definition of an excluded task (``excluded_tasks``) cut out,
    and files left with no contract name dropped. This is all of the reference an 'isolated:<task_id>' run may
    hold, in this process or in a worker. ``read(file)`` gives a file's text (default: from ``SOLUTION_ROOT``)."""
    read = read or (lambda file: (SOLUTION_ROOT / file).read_text(encoding="utf-8"))
    banned_names = {name for name, task in NAME_TO_TASK.items() if task in excluded_tasks(task_id)}
    banned_names -= set(TASK_BY_ID[task_id].own_reference)
    parts = {}
    for file in CONTRACT_FILES:
        names = [name for name, f in NAME_TO_FILE.items() if f == file]
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


def parts_namespace(parts, label="reference"):
    """A ``Namespace`` of reference parts given as source text (``reference_parts``); reads no file."""
    return Namespace(PARTS_ROOT, label=label, patches=parts, block_solution=False)


def _watched(obj, name, used):
    """``obj`` (a reference function or class) that notes in ``used`` when it is called or built."""
    if isinstance(obj, type):
        def __init__(self, *args, **kwargs):
            used.add(name)
            obj.__init__(self, *args, **kwargs)
        return type(obj.__name__, (obj,), {"__init__": __init__, "__module__": obj.__module__,
                                           "__qualname__": obj.__qualname__, "__doc__": obj.__doc__})

    @functools.wraps(obj)
    def call(*args, **kwargs):
        used.add(name)
        return obj(*args, **kwargs)
    return call


def isolated_namespace(root, task_id, parts, label="isolated"):
    """The submission's code for ``task_id`` over the reference's for the tasks beneath it; ``parts`` is a
    ``Namespace`` of the reference parts allowed for ``task_id`` (``reference_parts``). ``namespace.parts_used``
    collects the names of the reference parts the submission's code called or built (see ``InProcessRunner``)."""
    beneath = {name for name, task in NAME_TO_TASK.items() if task in all_deps(task_id)}
    beneath |= set(TASK_BY_ID[task_id].own_reference)
    used = set()
    overrides = {name: _watched(parts.get(name), name, used) for name in NAME_TO_FILE if name in beneath}
    own_file = TASK_BY_ID[task_id].file
    fallback = {}
    for file in CONTRACT_FILES:
        if file == own_file:
            continue
        try:
            fallback[file] = parts.module(file)
        except SubmissionError:  # a file whose every name is excluded: the submission's own or nothing
            pass
    ns = Namespace(root, label=f"{label}:{task_id}", overrides=overrides, fallback=fallback)
    ns.parts_used = used
    return ns


class Deferred:
    """A probe call that runs when its result is asked for (in this process, so breakpoints work)."""

    def __init__(self, run, probe, variant, args):
        self._call = (run, probe, variant, args)

    def result(self):
        run, probe, variant, args = self._call
        return run(probe, variant, **args)

    def abandon(self):
        pass


class InProcessRunner:
    """Run probes on a folder of code in this process.

    Args:
        root: the submission folder.
        banned: banned API names for the runtime guard (empty: no guard).
        namespace: the ``Namespace`` of the 'integrated' variant (default: the folder as it is).
        parts: ``task_id -> {file: source}``, the reference parts an 'isolated:<task>' variant may use
            (default: ``reference_parts`` read from disk; a worker is given only its own variant's).
    """

    def __init__(self, root, *, banned=DEFAULT_BANNED, namespace=None, parts=None):
        self.root = Path(root).resolve()
        self.parts = parts or reference_parts_for
        self._namespaces = {}
        if namespace is not None:
            self._namespaces["integrated"] = namespace
        self.guard = RuntimeGuard(banned).install() if banned else None

    def namespace(self, variant):
        if variant not in self._namespaces:
            if variant == "integrated":
                self._namespaces[variant] = Namespace(self.root)
            else:
                task_id = variant.split(":", 1)[1]
                parts = parts_namespace(self.parts(task_id))
                self._namespaces[variant] = isolated_namespace(self.root, task_id, parts)
        return self._namespaces[variant]

    def run(self, probe, variant="integrated", **args):
        ns = self.namespace(variant)
        if self.guard is not None:
            self.guard.start(self.root, probe_tasks(probe, variant, args))
        used = getattr(ns, "parts_used", None)
        if used is not None:
            used.clear()
        try:
            result = plain_data(PROBES[probe](ns, **args))
            if used is not None and isinstance(result, dict):
                result[PARTS_USED] = sorted(used)  # which reference parts the submission's code used
            return result
        except SubmissionError:
            raise
        except Exception as exc:  # noqa: BLE001 - anything the student's code raised
            raise from_exception(exc, self.root) from None
        except SystemExit as exc:
            raise SubmissionError(kind="exception", detail=f"the code called sys.exit({exc.code!r})") from None
        finally:
            if self.guard is not None:
                self.guard.stop()

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
