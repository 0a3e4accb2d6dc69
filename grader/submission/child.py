"""The worker process: it imports what it needs, locks itself in, then answers the judge's requests.

``python -m grader.submission.child CONFIG_JSON`` is a worker started by exec (``main``); a fork server's worker
is forked from a process that ran ``prepare`` and calls ``serve`` (``forkserver``). Either way the worker loads
the assignment named by ``config["assignment"]`` (``grader.assignment.load`` of the judge's ``package``),
holds the submission at ``config["root"]`` for one variant and, before any submission code runs, enters its
jail and limits (``sandbox``). It then reads framed requests ``(probe, variant, args)`` from one pipe and writes
framed replies to another, in the format of ``grader.submission.wire``: ``{"ready": True, "pid": ...}`` first,
then ``{"result": dict, "findings": [...]}`` or ``{"error": dict, "findings": [...]}`` per request. The
student's prints go to a capped output file, never to the pipes. Only the worker side imports this module.
"""

import faulthandler
import importlib
import io
import json
import os
import signal
import sys

import torch

from grader.assignment import load
from grader.errors import SubmissionError, from_exception, said
from grader.probes import plain_data, warm_up
from grader.submission import wire
from grader.submission.inprocess import InProcessRunner
from grader.submission.sandbox import _enter_jail, _seal_reference, _set_limits

PRELOAD = (
    "math",
    "cmath",
    "random",
    "typing",
    "dataclasses",
    "functools",
    "itertools",
    "collections",
    "collections.abc",
    "copy",
    "numbers",
    "operator",
    "enum",
    "abc",
    "contextlib",
    "warnings",
    "inspect",
    "string",
    "textwrap",
    "re",
    "time",
    "traceback",
    "linecache",
    "types",
    "weakref",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.parameter",
    "torch.nn.utils",
    "torch.nn.utils.rnn",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.utils.checkpoint",
    "numpy",
)
"""Modules a submission may import, imported by ``prepare`` (in a fork server: once, for every worker) so that
workers have them already: a worker running as an unprivileged user may be unable to read the Python
installation (on this kind of machine it lives under ``/root``), and a jailed one sees none of it."""


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


class _PipeLink:
    """The stand-ins' way to the judge's ``standin.Host`` while a request is being answered: a message down the reply
    pipe (``{"standin": message}``), its answer up the request pipe (``{"answer": reply}``)."""

    def __init__(self, req_fd, rep_fd):
        self.req_fd, self.rep_fd = req_fd, rep_fd
        self.encode, self.decode, self.frame, self.header = wire.encode, wire.decode, wire.frame, wire.HEADER

    def ask(self, message):
        _write_all(self.rep_fd, self.frame(self.encode({"standin": message})))
        header = _read_exact(self.req_fd, self.header.size)
        payload = None if header is None else _read_exact(self.req_fd, self.header.unpack(header)[0])
        if payload is None:
            raise SystemExit(0)  # the judge is gone
        reply = self.decode(payload)
        return reply.get("answer") if isinstance(reply, dict) else None


def _stand_ins(config, assignment):
    """The reference parts this worker's variant may use, as stand-ins (``runner.StandInParts``): the judge sent
    their interface (names only, ``config["surface"]``); their every computation is asked of the judge."""
    from grader.submission.inprocess import StandInParts
    from grader.submission.standin import StandIns

    surface = config.get("surface")
    if not surface:
        return None
    return StandInParts(assignment, StandIns(_PipeLink(config["req_fd"], config["rep_fd"]), surface))


class _CappedOutput(io.RawIOBase):
    """The worker's ``sys.stdout``/``sys.stderr``: writes to the output file until it reaches its size limit
    (``RLIMIT_FSIZE``), then drops the rest instead of failing: printing is never a crime."""

    def __init__(self, fd):
        super().__init__()
        self.fd = fd

    def writable(self):
        return True

    def write(self, data):
        try:
            os.write(self.fd, data)
        except OSError:  # EFBIG past the cap (SIGXFSZ is ignored): dropped; the judge says so
            pass
        return len(data)


def usable_devices(accelerators):
    """``["cpu"]`` and each of ``accelerators`` (``"cuda"``, ``"mps"``) on which this process can compute: a jail
    may hide a GPU that the machine has (no device files inside it), and a check must not charge the student
    for that."""
    usable = ["cpu"]
    for device in accelerators:
        if device not in ("cuda", "mps"):
            continue
        try:
            if float((torch.ones(1, device=device) + 1).cpu()) == 2.0:
                usable.append(device)
        except Exception:  # noqa: BLE001 - any failure to compute there: the device is not used
            pass
    return usable


def _capped_stdio():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = io.TextIOWrapper(
            io.BufferedWriter(_CappedOutput(fd)),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
            write_through=True,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


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


def _tensor_bytes(x, depth=0):
    """Bytes of tensor data in a plain reply (what encoding it would copy)."""
    if depth > 100:
        return 0
    if isinstance(x, torch.Tensor):
        return 0 if x.device.type == "meta" else x.numel() * x.element_size()
    if isinstance(x, dict):
        return sum(_tensor_bytes(v, depth + 1) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(_tensor_bytes(v, depth + 1) for v in x)
    return 0


def _error_dict(err):
    d = err.to_dict()
    try:
        return plain_data(d)
    except Exception:  # noqa: BLE001 - keep what is plain, describe the rest
        return {k: (v if type(v) in (str, int) else repr(v)[:2000]) for k, v in d.items() if k != "data"}


def prepare(assignment, warm=True):
    """Everything a worker of ``assignment`` does before it knows its submission: import torch, the probes (the
    kit's and the assignment's) and every module a submission may import (a jailed worker cannot read files),
    and pay torch's lazy imports; with ``warm``, also run the assignment's warm-up (``Assignment.warm_up``: the
    first-call costs of the operators its checks use). Never the reference: a worker forked from this process
    must not hold any of it (the fork server calls this once)."""
    faulthandler.enable()
    torch.set_num_threads(1)
    assignment.load_probes()
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - optional (numpy), or absent on this platform
            pass
    warm_up()  # torch's lazy imports are not the submission's time
    if warm:
        assignment.run_warm_up()  # nor are its first-call costs (in-process, the reference pays them first)


def serve(config):
    """Load the submission at ``config["root"]`` for the one variant ``config["variant"]`` of the assignment
    ``config["assignment"]``, lock the process down, say ready, then answer requests until the judge closes the
    pipe; never returns."""
    assignment = load(config["assignment"])
    req_fd, rep_fd = config["req_fd"], config["rep_fd"]
    reply_cap = int(config["reply_cap"])
    variant = config.get("variant", "integrated")
    parts = _stand_ins(config, assignment)
    _enter_jail(config)
    root = config["root"]

    def allowed_parts(task_id):
        if variant != f"isolated:{task_id}" or parts is None:
            raise SubmissionError(kind="exception", **said("say.worker_serves", variant=repr(variant)))
        return parts

    runner = InProcessRunner(root, assignment=assignment, banned=tuple(config["banned"]), parts=allowed_parts)
    encode, decode, frame = wire.encode, wire.decode, wire.frame  # as they are before any student code runs
    _seal_reference(root, assignment.reference)
    _set_limits(config)
    _capped_stdio()
    real_exit = _wrap_exit()
    devices = usable_devices(config.get("devices") or ())  # before any student code: what the judge may trust
    _write_all(rep_fd, frame(encode({"ready": True, "pid": os.getpid(), "devices": devices})))

    spin, poll_briefly = float(config.get("spin") or 0.0), wire.poll_briefly
    while True:
        if spin:
            poll_briefly(req_fd, spin)  # the judge's next request usually comes within a millisecond
        header = _read_exact(req_fd, wire.HEADER.size)
        if header is None:
            break
        payload = _read_exact(req_fd, wire.HEADER.unpack(header)[0])
        if payload is None:
            break
        probe, asked, args = decode(payload)
        try:
            if asked != variant:
                raise SubmissionError(
                    kind="exception", **said("say.worker_serves_not", variant=repr(variant), asked=repr(asked))
                )
            reply = {"result": runner.run(probe, variant, **args)}
        except SubmissionError as err:
            reply = {"error": _error_dict(err)}
        except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt, a student's BaseException ...
            reply = {"error": _error_dict(from_exception(exc, root))}
        try:
            findings = [plain_data(f.to_dict()) for f in runner.banned_runtime()]
        except BaseException:  # noqa: BLE001
            findings = []
        reply["findings"] = findings
        size = _tensor_bytes(reply)
        if size > reply_cap:  # refused here, before encoding copies it: the judge never holds it either
            err = SubmissionError(kind="bad_output", **said("say.reply_tensors", size=size, cap=reply_cap))
            reply = {"error": _error_dict(err), "findings": findings}
        try:
            blob = encode(reply)
        except BaseException as exc:  # noqa: BLE001 - a tensor the wire format cannot carry
            err = SubmissionError(kind="bad_output", **said("say.reply_unsendable", error=wire.reason(exc)))
            blob = encode({"error": _error_dict(err), "findings": findings})
        _write_all(rep_fd, frame(blob))
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    real_exit(0)


def main(argv=None):
    """``python -m grader.submission.child CONFIG_JSON``: a worker started by exec."""
    argv = sys.argv[1:] if argv is None else argv
    config = json.loads(argv[0])
    prepare(load(config["assignment"]), warm=False)  # one worker per process: it warms up beside the judge
    serve(config)


if __name__ == "__main__":
    main()
