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

from pathlib import Path

import solution
from grader.probes import PROBES
from grader.submission.banned import DEFAULT_BANNED, RuntimeGuard
from grader.submission.errors import SubmissionError, from_exception
from grader.submission.loader import Namespace
from grader.tasks import CONTRACT_FILES, NAME_TO_FILE, TASK_BY_ID

SOLUTION_ROOT = Path(solution.__file__).resolve().parent


def reference_namespace(patches=None, label="reference"):
    """The reference (or, with ``patches``, a mutant of it) as a ``Namespace``."""
    return Namespace(SOLUTION_ROOT, label=label, patches=patches, block_solution=False)


def isolated_namespace(root, task_id, reference, label="isolated"):
    """The submission's code for ``task_id``; the reference's for every other contract name."""
    own = set(TASK_BY_ID[task_id].names)
    overrides = {name: reference.get(name) for name in NAME_TO_FILE if name not in own}
    own_file = TASK_BY_ID[task_id].file
    fallback = {f: reference.module(f) for f in CONTRACT_FILES if f != own_file}
    return Namespace(root, label=f"{label}:{task_id}", overrides=overrides, fallback=fallback)


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
        reference: the reference ``Namespace`` used to build isolated variants.
    """

    def __init__(self, root, *, banned=DEFAULT_BANNED, reference=None, namespace=None):
        self.root = Path(root).resolve()
        self.reference = reference or reference_namespace()
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
                self._namespaces[variant] = isolated_namespace(self.root, task_id, self.reference)
        return self._namespaces[variant]

    def run(self, probe, variant="integrated", **args):
        ns = self.namespace(variant)
        if self.guard is not None:
            self.guard.root = str(self.root)
        try:
            return PROBES[probe](ns, **args)
        except SubmissionError:
            raise
        except Exception as exc:  # noqa: BLE001 - anything the student's code raised
            raise from_exception(exc, self.root) from None
        except SystemExit as exc:
            raise SubmissionError(kind="exception", detail=f"the code called sys.exit({exc.code!r})") from None
        finally:
            if self.guard is not None:
                self.guard.root = None

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
