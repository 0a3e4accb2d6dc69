"""The command line every assignment's demo shares: ``gradekit demo [--assignment A] [--steps N] [--seed S] [--quiet]
[--threads T] [--submission PATH [--lang L]]``. An assignment's demo module gives its own name, default step count
and ``run_demo``; this parses, sets torch's threads and runs it.

``--submission PATH`` trains the student's own pieces the same way and shows what they produce beside the
reference's. The kit's rule is that the reference's code never runs in a process that runs student code, so the
student's run is a child process (``python -m grader.demo``, ``child`` below) that loads only the student's folder
(an import finder there refuses every file of the reference's folder) and answers in JSON lines of plain data; this
process runs the reference meanwhile, and prints both.

A demo module that offers ``--submission`` passes ``assignment=`` to ``main`` and has ``PIECES`` (the contract names
it runs), ``run_demo(steps=, seed=, log=, pieces=)`` (``pieces``: ``{name: object}``, ``None`` for the reference's)
returning a dataclass of plain data with ``final_loss``, ``seconds`` and ``losses``, and ``side_by_side(reference,
yours, lang=)``, the lines that compare the two results.
"""

import argparse
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import json
import math
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

TIMES_THE_REFERENCE = 5
"""The student's run may take this many times the reference's time on the same steps (the reference runs beside it,
on the same machine)..."""
AT_LEAST_S = 60.0
"""...and at least this long; its first step (and the interpreter's start) has this long too."""
GRACE_S = 10.0
"""How long a stopped child has to say where it was before it is killed."""
OUTPUT_KEPT = 4000
"""The bytes kept of what the student's code printed (its end, shown if the process dies)."""


def lazy_reference(module_name, where):
    """A module-level ``__getattr__`` for an assignment's demo module ``module_name``: each name of ``where``
    (``{name: module path}``, the reference's pieces) imported on first use and kept, so that importing the demo
    module (as the student's demo process does) loads no reference code."""

    def __getattr__(name):
        if name not in where:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__


def pieces_of(module_name, names, pieces=None):
    """``{name: object}`` of ``names``: from ``pieces`` (a student's), else the demo module ``module_name``'s own
    (the reference's, imported on first use, or what a test put in their place)."""
    module = sys.modules[module_name]
    return {name: pieces[name] if pieces is not None else getattr(module, name) for name in names}


def main(argv, *, prog, description, steps, quiet_help, run_demo, quiet_lines, assignment=None):
    """Parse ``argv`` and train: ``run_demo(steps=, seed=)`` prints as it goes; with ``--quiet`` it runs with
    ``log=None`` and ``quiet_lines(result)`` are printed instead. ``assignment`` (an assignment spec) enables
    ``--submission``. Returns the exit status."""
    import torch

    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--steps", type=int, default=steps, help="optimizer steps (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help=quiet_help)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default: %(default)s; a model this small trains fastest on one)",
    )
    parser.add_argument(
        "--submission",
        metavar="PATH",
        default=None,
        help="also train YOUR code (a folder: your filled-in copy of the skeleton) the same way, in a "
        "process of its own, and show what it produces beside the reference",
    )
    parser.add_argument(
        "--lang",
        choices=("en", "zh"),
        default="en",
        help="language of the messages with --submission (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    torch.set_num_threads(max(1, args.threads))
    if args.submission is not None:
        if assignment is None:
            parser.error("this assignment's demo cannot run a submission")
        return _beside(parser, args, assignment=assignment, default_steps=steps)
    if args.quiet:
        for line in quiet_lines(run_demo(steps=args.steps, seed=args.seed, log=None)):
            print(line)
    else:
        run_demo(steps=args.steps, seed=args.seed)
    return 0


# -- this process: the reference, and what the student's process said ------------------------------------------------


class _Commands:
    """The commands the demo prints, each to run as printed: started the way gradekit was, with the assignment, the
    submission as it was typed and the language."""

    def __init__(self, assignment, args, default_steps):
        from grader.assignment import DEFAULT, builtin_names
        from grader.cli import invoked_as

        self.launcher = invoked_as()
        spec = assignment.name if assignment.name in builtin_names() else assignment.package
        self.assignment = [] if assignment.name == DEFAULT else ["--assignment", spec]
        self.lang = ["--lang", "zh"] if args.lang == "zh" else []
        self.path = args.submission
        self.demo_options = (["--steps", str(args.steps)] if args.steps != default_steps else []) + (
            ["--seed", str(args.seed)] if args.seed != 0 else []
        )

    def _line(self, *words):
        return " ".join([self.launcher, *(shlex.quote(w) for w in words)])

    def check(self, task=None, verbose=False):
        tasks = ["--tasks", task] if task else []
        return self._line("check", self.path, *self.assignment, *tasks, *self.lang, *(["-v"] if verbose else []))

    def demo(self):
        return self._line("demo", *self.assignment, "--submission", self.path, *self.demo_options, *self.lang)


def _beside(parser, args, *, assignment, default_steps):
    """``--submission``: the reference here, the student's pieces in a child process; both results side by side.
    Returns the exit status: 0 when the student's code trained and produced its output, 1 when it could not."""
    from grader.assignment import load
    from grader.messages import text

    a = load(assignment)
    module = importlib.import_module(a.demo.partition(":")[0])
    root = Path(args.submission)
    if not root.is_dir():
        parser.error(
            f"--submission {args.submission!r} is not a folder; expected a folder holding "
            f"{', '.join(a.contract_files)} (your filled-in copy of the skeleton)"
        )
    lang = args.lang
    commands = _Commands(a, args, default_steps)
    child = _Child(a, root.resolve(), args)
    try:
        module.run_demo(steps=1, seed=args.seed, log=None)  # the first-call costs, as the child's first step has them
        event = child.first(AT_LEAST_S)
        if "ready" not in event:
            _report(event, a, module, commands, args, lang, reference_seconds=None, limit=AT_LEAST_S)
            return 1
        if not args.quiet:
            print(text("demo.training", lang, path=args.submission, steps=args.steps, seed=args.seed), flush=True)
        progress = _Progress(child, lang)
        reference = module.run_demo(steps=args.steps, seed=args.seed, log=progress.reference)
        limit = max(AT_LEAST_S, TIMES_THE_REFERENCE * reference.seconds)
        event = child.answer(limit, progress)
        progress.done()
    except KeyboardInterrupt:
        child.close()
        return 130
    finally:
        child.close()
    if "result" not in event:
        _report(event, a, module, commands, args, lang, reference_seconds=reference.seconds, limit=limit)
        return 1
    try:
        yours = _result(module, event["result"])
        lines = module.side_by_side(reference, yours, lang=lang)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:  # a forged or broken answer
        _report({"unreadable": f"{type(exc).__name__}: {exc}"}, a, module, commands, args, lang, None, limit)
        return 1
    out = []
    if not args.quiet:
        out += _loss_table(reference.losses, yours.losses, lang) + [""]
    out += lines + [""]
    out.append(text("demo.final_loss", lang, yours=_number(yours.final_loss), reference=_number(reference.final_loss)))
    out.append(text("demo.seconds", lang, yours=f"{float(yours.seconds):.1f}", reference=f"{reference.seconds:.1f}"))
    if _learns_less(float(yours.final_loss), reference.final_loss):
        out += [text("demo.learns_less", lang), f"  {commands.check()}"]
    print("\n".join(out))
    return 0


def _result(module, data):
    """The student's result as the demo module's ``DemoResult``, its numbers checked to be numbers."""
    result = module.DemoResult(**data)
    for name in ("final_loss", "seconds"):
        float(getattr(result, name))
    result.losses = [(int(step), float(loss)) for step, loss in result.losses]
    return result


def _number(x):
    return f"{float(x):.3f}"


def _learns_less(yours, reference):
    """Whether the student's final loss is so far above the reference's that a piece is likely wrong (a loss a tenth
    higher is noise of the initialisation; half again as high is not)."""
    return not math.isfinite(yours) or yours > 1.5 * reference + 0.2


def _loss_table(reference, yours, lang):
    """The logged losses of both runs, one row per logged step."""
    from grader.messages import text
    from grader.safetext import columns, pad

    heads = [text("demo.step", lang), text("demo.yours", lang), text("demo.reference", lang)]
    mine = dict(yours)
    rows = [(str(step), _number(mine[step]) if step in mine else "", _number(loss)) for step, loss in reference]
    widths = [max([columns(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    lines = [text("demo.losses", lang), "  " + "  ".join(pad("", w - columns(h)) + h for h, w in zip(heads, widths))]
    lines += ["  " + "  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    return lines


class _Progress:
    """A line on a terminal's stderr saying how far each run has got (nothing when stderr is no terminal)."""

    def __init__(self, child, lang):
        self.child, self.lang = child, lang
        self.on = sys.stderr.isatty()
        self.last_reference = ""

    def reference(self, line):
        if str(line).strip().startswith("step"):
            self.last_reference = str(line).strip()
        self.show()

    def show(self):
        if not self.on:
            return
        from grader.messages import text
        from grader.safetext import for_terminal

        self.child.drain()
        line = text(
            "demo.progress",
            self.lang,
            reference=self.last_reference or "…",
            yours=for_terminal(self.child.last_log) or "…",
        )
        sys.stderr.write("\r\033[K" + line[:150])
        sys.stderr.flush()

    def done(self):
        if self.on:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


class _Child:
    """The student's process: started at once; its JSON lines read by a thread into a queue."""

    def __init__(self, assignment, root, args):
        kit = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([kit] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader.demo",
                "--assignment",
                assignment.package,
                "--submission",
                str(root),
                "--steps",
                str(args.steps),
                "--seed",
                str(args.seed),
                "--threads",
                str(max(1, args.threads)),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.started = time.monotonic()
        self.events = queue.Queue()
        self.last_log = ""
        self.tail = b""
        self.readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_output, daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict):
                self.events.put(event)
        self.events.put(None)  # the end of its answer

    def _read_output(self):
        """What the student's code printed: only the end is kept (it is shown when the process dies), however much."""
        for chunk in iter(lambda: self.proc.stderr.read1(1 << 16), b""):
            self.tail = (self.tail + chunk)[-OUTPUT_KEPT:]

    def drain(self):
        """Take in the progress lines said so far; the first other event, if any, is put back."""
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if event is not None and "log" in event:
                self._progress(event["log"])
                continue
            self.events.put(event)
            return

    def _next(self, deadline, progress=None):
        """The next event other than a progress line, ``{"ended": ...}`` when the process ended without one, or
        ``{"timeout": True}`` at ``deadline``."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"timeout": True}
            try:
                event = self.events.get(timeout=min(left, 0.5))
            except queue.Empty:
                if progress is not None:
                    progress.show()
                continue
            if event is None:
                return self._ended()
            if "log" in event:
                self._progress(event["log"])
                continue
            return event

    def _progress(self, line):
        """Keep ``line`` when it is a step's progress line (the demos' other lines say what is trained)."""
        line = str(line).strip()
        if line.startswith("step"):
            self.last_log = line

    def first(self, limit):
        """The child's first word: ``{"ready": True}`` once the student's pieces are loaded and ran one step, or why
        not."""
        return self._stopped_if_late(self._next(self.started + limit), first=True)

    def answer(self, limit, progress):
        """The student's result, or why there is none, waiting until ``limit`` s after the start."""
        return self._stopped_if_late(self._next(self.started + limit, progress), first=False)

    def _stopped_if_late(self, event, *, first):
        if "timeout" not in event:
            return event
        usr1 = getattr(signal, "SIGUSR1", None)
        if usr1 is not None and self.proc.poll() is None:
            self.proc.send_signal(usr1)  # the child raises where the student's code is, and says where
            said = self._next(time.monotonic() + GRACE_S)
            if said.get("error", {}).get("kind") == "timeout":
                said["error"]["first"] = first
                said["error"]["last_log"] = self.last_log
                return said
        self.close()
        return {"error": {"kind": "timeout", "first": first, "last_log": self.last_log}}

    def _ended(self):
        code = self.proc.wait()
        self.readers[1].join(timeout=GRACE_S)
        return {"ended": code, "output": self.tail.decode("utf-8", "replace").splitlines()[-8:]}

    def close(self):
        """Stop the child if it still runs (this process started it) and free what belongs to it."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        for reader in self.readers:
            reader.join(timeout=GRACE_S)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def _report(event, a, module, commands, args, lang, reference_seconds, limit):
    """Print, kindly and without a traceback, why the student's run gave no result."""
    from grader.messages import text
    from grader.safetext import for_terminal

    out = []
    error = event.get("error")
    if "unreadable" in event:
        out.append(text("demo.unreadable", lang, detail=for_terminal(event["unreadable"])))
    elif "ended" in event or not isinstance(error, dict):
        code = event.get("ended")
        if isinstance(code, int) and code < 0:
            try:
                how = text("demo.signal", lang, signal=signal.Signals(-code).name)
            except ValueError:
                how = text("demo.signal", lang, signal=-code)
        else:
            how = text("demo.exit_code", lang, code=code)
        out.append(text("demo.crashed", lang, how=how))
        tail = [for_terminal(line) for line in event.get("output") or [] if str(line).strip()]
        if tail:
            out += [text("demo.crashed_output", lang)] + [f"  {line}" for line in tail]
    else:
        out += _explain(error, a, module, commands, args, lang, reference_seconds, limit)
    print("\n".join(out))


def _explain(error, a, module, commands, args, lang, reference_seconds, limit):
    """The lines for an error the student's process described (``_describe``)."""
    from grader.messages import text
    from grader.safetext import for_terminal

    clean = {k: for_terminal(v) if isinstance(v, str) else v for k, v in error.items()}
    kind = clean.get("kind", "exception")
    name = clean.get("name") or ""
    task = a.name_to_task.get(name, "")
    file = a.name_to_file.get(name, clean.get("file", ""))
    where = []
    if clean.get("file") and clean.get("line"):
        where.append(f"  {clean['file']}:{clean['line']}: {clean.get('code', '')}".rstrip())
    detail = [f"  {clean['detail']}"] if clean.get("detail") else []
    how_to = [
        text("demo.check_task", lang, task=task),
        f"  {commands.check(task)}",
        text("demo.run_again", lang),
        f"  {commands.demo()}",
    ]
    comma = "、" if lang == "zh" else ", "
    needs = text(
        "demo.needs",
        lang,
        names=comma.join(module.PIECES),
        tasks=comma.join(dict.fromkeys(a.name_to_task[n] for n in module.PIECES)),
    )
    if kind == "not_implemented":
        return [text("demo.not_implemented", lang, name=name, task=task, file=file), *where, needs, *how_to]
    if kind == "missing_name":
        return [text("demo.missing_name", lang, name=name, task=task, file=file), needs, *how_to]
    if kind == "missing_file":
        return [text("demo.missing_file", lang, name=name, task=task, file=file, path=args.submission), needs, *how_to]
    if kind == "import_error":
        return [
            text("demo.import_error", lang, name=name, task=task, file=clean.get("file") or file),
            *where,
            *detail,
            needs,
            *how_to,
        ]
    if kind == "timeout":
        if clean.get("first") or reference_seconds is None:
            out = [text("demo.timeout_first", lang, limit=f"{limit:.0f}")]
        else:
            out = [
                text("demo.timeout", lang, limit=f"{limit:.0f}", reference=f"{reference_seconds:.1f}", steps=args.steps)
            ]
        if name and where:
            out += [text("demo.timeout_at", lang, name=name, task=task), *where]
        if clean.get("last_log"):
            out.append(text("demo.timeout_progress", lang, line=clean["last_log"]))
        return out + [text("demo.timeout_hint", lang), f"  {commands.check(task or None)}"]
    piece = clean.get("piece") or name
    if kind == "bad_output":
        head = text("demo.bad_output", lang, name=name, task=task)
    elif piece and piece != name:
        head = text("demo.raised_while", lang, name=name, task=task, piece=piece)
    else:
        head = text("demo.raised", lang, name=name, task=task)
    return [head, *where, *detail, text("demo.check_verbose", lang), f"  {commands.check(task or None, verbose=True)}"]


# -- the student's process -------------------------------------------------------------------------------------------


class _Stopped(BaseException):
    """Raised in the student's process when its time is up, wherever its code is (a ``BaseException``: an ``except
    Exception`` in the student's code does not swallow it)."""


class _NoReference(importlib.abc.MetaPathFinder):
    """Refuses every import that would load a file of the reference's folder: in the process that runs the student's
    code, nothing of the reference may run, whichever way it is imported (``importlib.import_module`` too)."""

    def __init__(self, folder):
        self.folder = Path(folder).resolve()

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("_gradekit_sub"):  # the submission's own files (grader.submission.loader)
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        places = ([spec.origin] if spec.origin else []) + list(spec.submodule_search_locations or [])
        if any(self.holds(place) for place in places):
            raise ImportError(
                f"{fullname} is the reference's code, which the process running a submission may not import"
            )
        return None

    def holds(self, place):
        try:
            resolved = Path(place).resolve()
        except (OSError, ValueError):
            return False
        return resolved == self.folder or self.folder in resolved.parents


class _Calls:
    """Wraps the student's pieces to know which one was running when something raised, and which returned last."""

    def __init__(self):
        self.raised_in = None
        self.last = None

    def wrap(self, name, obj):
        if not callable(obj):
            return obj

        def call(*args, **kwargs):
            try:
                result = obj(*args, **kwargs)
            except BaseException:
                if self.raised_in is None:  # the innermost piece: the first to see it
                    self.raised_in = name
                raise
            self.last = name
            return result

        return call


def _contract_name(exc, root, assignment):
    """The contract name whose code raised ``exc``: the innermost frame of the student's folder that is a contract
    name's function or method (``MultiHeadAttention.__init__`` -> ``MultiHeadAttention``); ``None`` if none is."""
    for frame, _line in reversed(list(traceback.walk_tb(exc.__traceback__))):
        try:
            file = Path(frame.f_code.co_filename).resolve()
        except (OSError, ValueError):
            continue
        if root not in file.parents:
            continue
        rel = file.relative_to(root).as_posix()
        owner = frame.f_locals.get("self")
        candidates = [getattr(frame.f_code, "co_qualname", frame.f_code.co_name).split(".")[0], frame.f_code.co_name]
        if owner is not None:
            candidates += [klass.__name__ for klass in type(owner).__mro__]
        for name in candidates:
            if assignment.name_to_file.get(name) == rel:
                return name
    return None


def _describe(exc, root, assignment, calls):
    """An exception from the student's run as plain data: what kind, which contract name, where."""
    from grader.errors import from_exception

    err = from_exception(exc, root)
    name = _contract_name(exc, root, assignment)
    kind = "timeout" if isinstance(exc, _Stopped) else err.kind
    if name is None and not err.file and kind != "timeout":  # raised in the demo's code, on what a piece returned
        name, kind = calls.raised_in or calls.last, "bad_output" if calls.raised_in is None else kind
    name = name or calls.raised_in or ""
    detail = "" if kind == "timeout" else err.detail
    return {
        "kind": kind,
        "name": name,
        "piece": calls.raised_in or "",
        "file": err.file,
        "line": err.line,
        "code": err.code,
        "detail": detail,
    }


def child(argv=None):
    """The student's side of ``--submission`` (``python -m grader.demo``): load the assignment and, with the
    reference's folder made unimportable, only the student's pieces; run one step (so that a piece not done yet is
    told at once), say ``ready``, run the demo, and answer with its result, or with what went wrong, as JSON lines on
    stdout. What the student's code prints goes to stderr."""
    parser = argparse.ArgumentParser(prog="python -m grader.demo")
    parser.add_argument("--assignment", required=True)
    parser.add_argument("--submission", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever the student's code prints goes to stderr, never into the answer

    def say(**event):
        answer.write(json.dumps(event) + "\n")
        answer.flush()

    def stop(_signum, _frame):
        raise _Stopped()

    if hasattr(signal, "SIGUSR1"):
        signal.signal(signal.SIGUSR1, stop)
    from grader.assignment import load

    a = load(args.assignment)
    guard = _NoReference(a.reference)
    loaded = [m for m in list(sys.modules.values()) if guard.holds(getattr(m, "__file__", None) or "/")]
    if loaded:
        raise RuntimeError(f"the reference is loaded in the submission's process: {loaded}")
    import torch  # before the guard: no need to vet each of its thousand modules

    torch.set_num_threads(max(1, args.threads))
    sys.meta_path.insert(0, guard)
    from grader.errors import SubmissionError
    from grader.submission.loader import Namespace

    module = importlib.import_module(a.demo.partition(":")[0])
    root = Path(args.submission).resolve()
    ns = Namespace(root, assignment=a, label="submission")
    calls = _Calls()
    pieces = {}
    try:
        for name in module.PIECES:
            try:
                pieces[name] = calls.wrap(name, ns.get(name))
            except SubmissionError as err:  # the loader turned whatever a file raised on import into this
                stopped = err.detail.startswith(_Stopped.__name__)
                say(
                    error={
                        "kind": "timeout" if stopped else err.kind,
                        "name": name,
                        "piece": name,
                        "file": err.file,
                        "line": err.line,
                        "code": err.code,
                        "detail": "" if stopped else err.detail,
                    }
                )
                return 1
        try:
            module.run_demo(steps=1, seed=args.seed, log=None, pieces=pieces)
            say(ready=True)
            calls.raised_in = calls.last = None
            result = module.run_demo(
                steps=args.steps, seed=args.seed, log=lambda line: say(log=str(line)), pieces=pieces
            )
        except KeyboardInterrupt:
            return 130
        except BaseException as exc:  # noqa: BLE001 - the student's code may raise anything; each is told kindly
            say(error=_describe(exc, root, a, calls))
            return 1
        say(result=dataclasses.asdict(result))
        return 0
    except _Stopped:  # the time was up outside the student's code (between two pieces)
        say(error={"kind": "timeout", "name": "", "piece": "", "file": "", "line": 0, "code": "", "detail": ""})
        return 1


if __name__ == "__main__":
    sys.exit(child())
