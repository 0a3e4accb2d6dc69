"""``gradekit watch`` and the quick profile: how long a student waits.

    python bench/bench_watch.py [--rounds 7]

1. From saving a one-line change in ``attention.py`` (a bug, then its fix) to the redrawn verdict for ``sdpa``,
   in a warm ``Watch`` (quick profile): median and range over ``--rounds`` saves of each. Target: under 1 s.
2. The quick profile of the whole correct submission: ``gradekit check solution --profile quick`` as a command
   (a cold process) and ``api.check`` in a warm one, each against a cold ``python -c "import torch"``, alternated,
   medians of ``--repeat`` (default 5). Target: within 3x the cold ``import torch``. Also timed, for scale: a cold
   ``import torch`` that then builds one optimizer, the least any grading of the training tasks costs (torch's
   optimizers, like its meta-device kernels, import ``torch._dynamo`` and ``sympy`` on first use). Each command's
   CPU time (user + system, from ``wait4``) is given beside its wall time: on a shared machine it varies less.
Prints figures; asserts nothing (speed targets live here, not in the test suite).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import speed  # noqa: E402 - bench/speed.py

from grader import api  # noqa: E402
from grader.options import CheckOptions  # noqa: E402
from grader.watch import Watch  # noqa: E402

GOOD = 'masked_fill(~mask, float("-inf"))'
BAD = "masked_fill(~mask, 0.0)"


class Screens:
    """The watcher's screens as they are drawn, with the time of each; ``wait`` for one that matches."""

    def __init__(self):
        self.cond = threading.Condition()
        self.seen = []

    def __call__(self, screen):
        with self.cond:
            self.seen.append((time.perf_counter(), screen))
            self.cond.notify_all()

    def wait(self, after, match, timeout=60.0):
        deadline = time.perf_counter() + timeout
        with self.cond:
            while True:
                for when, screen in self.seen:
                    if when >= after and match(screen):
                        return when
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise SystemExit(f"no matching screen within {timeout:g} s; last:\n{self.seen[-1][1]}")
                self.cond.wait(left)


def sdpa_line(screen):
    return next((line for line in screen.splitlines() if line[2:].startswith("sdpa ")), "")


def watch_latency(rounds):
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp) / "sub"
        shutil.copytree(ROOT / "solution", sub, ignore=shutil.ignore_patterns("__pycache__"))
        screens = Screens()
        stop = threading.Event()
        watch = Watch(str(sub), options=CheckOptions(profile="quick"), out=open(os.devnull, "w"), drawn=screens)
        thread = threading.Thread(target=watch.run, kwargs={"stop": stop}, daemon=True)
        start = time.perf_counter()
        thread.start()
        screens.wait(start, lambda s: "grading" not in s and "Score" in s)
        print(f"first grading of everything (cold): {time.perf_counter() - start:.1f} s", flush=True)
        source = (sub / "attention.py").read_text()
        times = {"bug": [], "fix": []}
        for _ in range(rounds):
            for kind, text, mark in (("bug", source.replace(GOOD, BAD), "✗"), ("fix", source, "✓")):
                time.sleep(0.3)  # let the last grading's redraws finish, as between two real saves
                saved = time.perf_counter()
                (sub / "attention.py").write_text(text)
                shown = screens.wait(saved, lambda s, m=mark: sdpa_line(s).startswith(m))
                times[kind].append(shown - saved)
                screens.wait(shown, lambda s: "grading" not in s)  # the tasks above it too
        stop.set()
        thread.join(10)
    for kind, label in (("bug", "saving a bug"), ("fix", "saving its fix")):
        t = times[kind]
        print(
            f"save -> redrawn sdpa verdict, {label}: median {statistics.median(t):.2f} s "
            f"(min {min(t):.2f}, max {max(t):.2f}, n={len(t)})   (target < 1 s)"
        )
        speed.record(
            f"watch.{kind}",
            "`gradekit watch`: saving a one-line bug in `attention.py` to the redrawn `sdpa` verdict (quick)"
            if kind == "bug"
            else "`gradekit watch`: the same for its fix",
            f"median {statistics.median(t):.2f} s (min {min(t):.2f}, max {max(t):.2f}, n={len(t)})",
            "< 1 s",
            statistics.median(t) < 1,
        )


def timed_command(args):
    """``(wall seconds, CPU seconds)`` of running ``args`` to the end."""
    start = time.perf_counter()
    child = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=speed.users_env()
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if child.returncode != 0:  # a run that failed is no figure (the solution passes every check: exit status 0)
        raise SystemExit(f"{' '.join(args)} exited with status {child.returncode}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


OPTIMIZER = "import torch; torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)"


def quick_vs_import(repeat):
    runs = {"torch": [], "optimizer": [], "command": []}
    warm_s = []
    api.check(path=ROOT / "solution", profile="quick")  # this process warm
    for _ in range(repeat):
        runs["torch"].append(timed_command([sys.executable, "-c", "import torch"]))
        runs["optimizer"].append(timed_command([sys.executable, "-c", OPTIMIZER]))
        runs["command"].append(
            timed_command([sys.executable, "-m", "grader", "check", "solution", "--profile", "quick", "--quiet"])
        )
        start = time.perf_counter()
        api.check(path=ROOT / "solution", profile="quick")
        warm_s.append(time.perf_counter() - start)
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
    t, o, c, w = wall["torch"], wall["optimizer"], wall["command"], statistics.median(warm_s)
    print(
        f"cold `python -c 'import torch'`: {t:.2f} s; `gradekit check solution --profile quick`: {c:.2f} s "
        f"({c / t:.2f}x); quick grading in a warm process (watch, pytest): {w:.2f} s ({w / t:.1f}x)   "
        f"(target <= 3x; medians of {repeat})"
    )
    print(
        f"  for scale: a cold `import torch` building one optimizer (torch imports torch._dynamo and sympy then): "
        f"{o:.2f} s ({o / t:.1f}x)"
    )
    speed.record(
        "watch.cold_command",
        'the command `gradekit check solution --profile quick` against a cold `python -c "import torch"`',
        f"{c:.2f} s: {c / t:.2f}x (CPU time {cpu['command'] / cpu['torch']:.2f}x)",
        "<= 3x",
        c / t <= 3,
    )
    speed.record(
        "watch.warm_quick",
        "the quick profile in a warm process (watch, pytest) against a cold `import torch`",
        f"{w / t:.1f}x",
    )
    speed.record(
        "watch.optimizer_import", "a cold `import torch` that builds one optimizer, against a bare one", f"{o / t:.1f}x"
    )
    print(
        f"  CPU time (user + system): import torch {cpu['torch']:.2f} s, with an optimizer {cpu['optimizer']:.2f} s "
        f"({cpu['optimizer'] / cpu['torch']:.2f}x), the command {cpu['command']:.2f} s "
        f"({cpu['command'] / cpu['torch']:.2f}x)"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    speed.add_argument(parser)
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    watch_latency(args.rounds)
    quick_vs_import(args.repeat)
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
