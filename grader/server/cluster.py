"""The course server's judges on a Dask cluster (``[server] scheduler``): each grading is sent to a Dask worker as
``gradekit batch --scheduler`` sends one (``grader.batch.distributed.send``: the snapshot packed, the batch's job,
the course configuration read at the start, the same deadline, the same sealed judge on the worker), and its
outcome comes back as data: the judge's record and its saved grading, which the server writes into the attempt's
own folder and renders there, as with a local judge. The server process never runs a judge then.

The connection is kept for the server's life. When the scheduler goes away, Dask's client cancels what it was
waiting for and tries to connect again for a while, then gives up; ``Cluster.client`` then connects anew on the
next call. Meanwhile the grading loop claims nothing (the submissions wait in the queue) and puts back, its
attempt not counted, what it was grading (``Away``): the grading may have been lost with the scheduler, and a
cluster away says nothing about the submission. A task that a dead or stopped server left running on a worker
sends its outcome to no one: only the future the server holds writes a grading, into that attempt's folder.
"""

import logging
import threading
from concurrent.futures import CancelledError

from grader.assignment import load
from grader.batch import distributed, runner
from grader.messages import text
from grader.safetext import clean_text

log = logging.getLogger("gradekit.server")


class Away(Exception):
    """The grading was cut off by the loss of the scheduler, not by anything of the submission's."""


class Cluster:
    """The server's Dask client for the scheduler ``address``, and how a grading is sent there and received: for
    ``plan`` (``grading.Plan``: the batch's job, the deadline), in ``lang`` (the operator's log lines)."""

    def __init__(self, address, plan, lang):
        self.address, self.plan, self.lang = address, plan, lang
        self.config = distributed.config_file(plan.job.config)
        """The course configuration's file as it was at the start, shipped with every grading: a change to it
        needs a restart, as the server's own reading of it does."""
        self.fingerprint = runner.grader_fingerprint(load(plan.job.assignment))
        self._client = None
        self._lock = threading.Lock()
        self._closed = False
        self._away = False
        self._unjailed = set()

    def client(self):
        """A connected Dask ``Client``: the one held, else a new one (the last one gave up reconnecting); ``OSError``
        while the scheduler cannot be reached (Dask's connect timeout, ``distributed.comm.timeouts.connect``)."""
        from distributed import Client

        with self._lock:
            if self._closed:
                raise OSError("the server is stopping")
            held = self._client
            if held is not None and held.status == "running":
                return held
            if held is not None and held.status == "connecting":
                raise OSError(f"connecting to {self.address} again")
            self._client = None
            if held is not None:
                _close(held)
            made = Client(self.address, set_as_default=False)
            try:
                made.register_plugin(distributed.judge_plugin())
            except BaseException:
                _close(made)
                raise
            if self._closed:  # the server stopped while this was connecting
                _close(made)
                raise OSError("the server is stopping")
            self._client = made
            return made

    def workers(self):
        """How many worker processes the scheduler has now."""
        return len(self.client().scheduler_info().get("workers", {}))

    def ready(self):
        """Whether a grading can be sent now (connecting anew if need be); the scheduler's loss and its return are
        each logged once."""
        try:
            client = self.client()
            if self._away:  # Dask's client may have found a new scheduler at the address: it needs the plugin
                client.register_plugin(distributed.judge_plugin())
        except Exception as exc:  # noqa: BLE001 - whatever keeps the scheduler away: said, and tried again later
            if not self._away:
                self._away = True
                log.warning(text("server.cluster.away", self.lang, address=self.address, error=_said(exc)))
            return False
        if self._away:
            self._away = False
            log.info(text("server.cluster.back", self.lang, address=self.address))
        return True

    def grade(self, sub, digest, key, out, stop):
        """Grade ``sub`` (prepared; its content hashed to ``digest``) on a worker, as the Dask task ``key``, and save
        its grading in ``out``: ``(record, None)``; ``(None, detail)`` when the judge failed or ran past the
        deadline, the worker grades with another grader, or the task failed for good (its workers died, or it
        raised on two); ``(None, None)`` when ``stop`` was set first. ``Away`` when the scheduler could not be
        reached or was lost meanwhile."""
        p = self.plan
        try:
            client = self.client()
        except Exception as exc:  # noqa: BLE001 - gone since the loop looked: nothing of the submission's
            raise Away() from exc
        future = distributed.send(client, sub, digest, p.job, self.config, p.deadline_s, key=key)
        try:
            outcome = self._wait(future, stop)
        finally:
            try:
                future.release()
            except Exception:  # noqa: BLE001 - a client that lost its scheduler has released it already
                pass
        if outcome is None or "failed" in outcome:
            return None, (outcome or {}).get("failed")
        if not outcome["jailed"] and outcome["worker"] not in self._unjailed:
            self._unjailed.add(outcome["worker"])
            log.warning(text("dask.not_jailed", self.lang, workers=outcome["worker"]))
        record, detail = distributed.received(outcome, self.fingerprint, self.lang)
        if record is not None:
            distributed.save(out, outcome)
        return record, detail

    def _wait(self, future, stop):
        """The outcome of ``future`` (``grade_on_worker``'s dict), or ``{"failed": why}`` when its task failed for
        good, or ``None`` when ``stop`` was set first (the future is cancelled: a task already running ends on its
        worker, its outcome dropped); ``Away`` when the scheduler was lost meanwhile."""
        while not stop.is_set():
            try:
                outcome = future.result(timeout=1.0)
            except TimeoutError:  # a second gone: look at ``stop`` again
                continue
            except CancelledError:  # only the server cancels, when it stops; else the client lost the scheduler
                if stop.is_set():
                    break
                raise Away() from None
            except Exception as exc:  # noqa: BLE001 - the task failed for good: the attempt ends, with why
                if getattr(future, "status", "error") != "error":  # not the task's error: fetching its outcome failed
                    raise Away() from exc
                return {"failed": distributed.failure(exc, self.lang)}
            return outcome
        try:
            future.cancel()
        except Exception:  # noqa: BLE001 - the client is going too: the task's outcome goes to no one anyway
            pass
        return None

    def close(self):
        """Close the connection; a slot connecting meanwhile (up to Dask's connect timeout) closes its own when it
        is done, so that a stop does not wait for it."""
        self._closed = True
        if not self._lock.acquire(timeout=1.0):
            return
        try:
            held, self._client = self._client, None
        finally:
            self._lock.release()
        if held is not None:
            _close(held)


def _close(client):
    try:
        client.close(timeout=5)
    except Exception:  # noqa: BLE001 - a client whose scheduler is gone may fail to say goodbye
        pass


def _said(exc):
    return clean_text(f"{type(exc).__name__}: {exc}")[:500]


def connect(address, plan, lang, judges):
    """The ``Cluster`` of ``[server] scheduler`` ``address``, connected, said on stdout; ``UsageError`` when Dask is
    not installed or the scheduler cannot be reached, before anything is served."""
    from grader.errors import UsageError

    try:
        import distributed as _  # noqa: F401 - only to know it is there
    except ImportError:
        raise UsageError(text("server.cli.dask_missing", lang)) from None
    cluster = Cluster(address, plan, lang)
    try:
        workers = cluster.workers()
    except Exception as exc:  # noqa: BLE001 - refused, timed out, not a scheduler: said with what Dask said
        cluster.close()
        raise UsageError(text("server.cli.no_scheduler", lang, address=address, error=_said(exc))) from None
    print(text("server.cli.cluster", lang, address=address, workers=workers, judges=judges), flush=True)
    return cluster
