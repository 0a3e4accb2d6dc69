"""The kit's own test suite, timed in a fresh clone of the committed HEAD, as CI runs it.

    python bench/bench_suite.py            # the whole suite: CI=true .ci/run (which is scripts/test)
    python bench/bench_suite.py --fast     # the inner loop's tier: scripts/test --fast

Clones this repository (its committed HEAD: uncommitted changes are not measured) into a temporary folder, runs the
command there (it makes its own .venv first, as on a fresh machine), streams its output, and records in the speed file
(``bench/speed.py``) pytest's summary and time, the wall time with the install, the commit, and any file the tests left
in the clone (``git status``: a test must not write into the repository). Exits with the suite's status.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import speed  # noqa: I001 - bench/speed.py, first: it notes the load average at the start

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^=+ (?P<counts>.*?) in (?P<seconds>[\d.]+)s(?: \([^)]*\))? =+$")
TARGETS = {False: 15 * 60, True: 2 * 60}
"""Seconds of pytest the whole suite and the fast tier may take on a 2-core machine."""


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def _minutes(seconds):
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fast", action="store_true", help="time scripts/test --fast instead of the whole suite")
    speed.add_argument(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gradekit-suite-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        head = _git("rev-parse", "--short", "HEAD", cwd=clone)
        command = ["scripts/test", "--fast"] if args.fast else [".ci/run"]
        print(f"commit {head}; running {' '.join(command)} in {clone}", flush=True)
        started = time.perf_counter()
        proc = subprocess.Popen(
            command,
            cwd=clone,
            env=dict(os.environ, CI="true"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        summary = None
        for line in proc.stdout:
            sys.stdout.write(line)
            found = SUMMARY.match(line.strip())
            if found:
                summary = found
        code = proc.wait()
        wall = time.perf_counter() - started
        left = _git("status", "--porcelain", cwd=clone).splitlines()
    if summary is None:
        print(f"no pytest summary in the output (exit status {code})")
        return code or 1
    seconds = float(summary["seconds"])
    target = TARGETS[args.fast]
    print(
        f"{summary['counts']} in {_minutes(seconds)} of pytest ({_minutes(wall)} with the install); files the tests "
        f"left in the clone: {len(left) or 'none'}; target < {target // 60} min"
    )
    for line in left[:20]:
        print(f"  left: {line}")
    speed.record(
        "suite.fast" if args.fast else "suite.whole",
        "the fast tier, `scripts/test --fast`, in a fresh clone"
        if args.fast
        else "the kit's whole test suite in a fresh clone (`CI=true .ci/run`, which is `scripts/test`)",
        f"{summary['counts']} in {_minutes(seconds)} of pytest ({_minutes(wall)} with the install), commit {head}; "
        f"files left in the clone: {len(left) or 'none'}",
        f"< {target // 60} min",
        seconds < target and code == 0,
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
