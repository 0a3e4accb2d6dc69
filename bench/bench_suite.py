"""The kit's own test suite, timed in a fresh clone of the committed HEAD, as CI runs it.

    python bench/bench_suite.py            # the whole suite: CI=true .ci/run (which is scripts/test)
    python bench/bench_suite.py --fast     # the inner loop's tier: scripts/test --fast

Clones this repository (its committed HEAD: uncommitted changes are not measured) into a temporary folder, runs the
command there (it makes its own .venv first, as on a fresh machine), streams its output, and records in the speed file
(``bench/speed.py``) pytest's summary and time, the wall time with the install, the commit, and any file the tests left
in the clone (``git status``: a test must not write into the repository). Exits with the suite's status.

Where the time goes, by test file: pytest writes a JUnit file outside the clone (``PYTEST_ADDOPTS``); the script prints
the costliest files and their share, and records them in the speed file with the seconds of every file in
``docs/suite_times.json`` (what a tier of the suite would cost). How busy the cores were: the CPU time of every
process the command started and waited for (pytest's workers, the gradings they ran in processes of their own) over
its wall time; a figure well under the number of cores says the run waits (on timeouts, servers, installs) more than
it computes.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import speed  # noqa: I001 - bench/speed.py, first: it notes the load average at the start

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^=+ (?P<counts>.*?) in (?P<seconds>[\d.]+)s(?: \([^)]*\))? =+$")
TARGETS = {False: 15 * 60, True: 2 * 60}
"""Seconds of pytest the whole suite and the fast tier may take on a 2-core machine."""


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def _minutes(seconds):
    whole = round(seconds)  # 119.6 s is 2 min 0 s, not 1 min 60 s
    return f"{whole // 60} min {whole % 60} s"


def file_times(junit, clone):
    """``{test file: seconds}`` from pytest's JUnit file ``junit`` of a run in ``clone``: each test case's time, summed
    over the file its class name comes from (``tests.hostile.test_x.TestY`` -> ``tests/hostile/test_x.py``)."""
    times = collections.Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        parts = (case.get("classname") or "").split(".")
        name = next(
            (
                "/".join(parts[:i]) + ".py"
                for i in range(len(parts), 0, -1)
                if (clone / ("/".join(parts[:i]) + ".py")).is_file()
            ),
            ".".join(parts) or "?",
        )
        times[name] += float(case.get("time") or 0.0)
    return dict(times)


def show_times(times, total):
    """Print the costliest test files, with their share of ``total`` seconds; return the five costliest as text."""
    ranked = sorted(times.items(), key=lambda kv: -kv[1])
    print(f"\nwhere the time goes ({len(ranked)} test files, {_minutes(sum(times.values()))} in tests):")
    for name, seconds in ranked[:25]:
        print(f"  {seconds:7.1f} s  {100 * seconds / max(total, 1e-9):4.1f}%  {name}")
    return ", ".join(f"{name} {seconds:.0f} s" for name, seconds in ranked[:5])


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
        cpu_before = speed.children_cpu_seconds()
        junit = Path(tmp) / "suite.xml"  # outside the clone: the tests' own files are counted by git status
        addopts = f"{os.environ.get('PYTEST_ADDOPTS', '')} --junitxml={junit}".strip()
        proc = subprocess.Popen(
            command,
            cwd=clone,
            env=dict(os.environ, CI="true", PYTEST_ADDOPTS=addopts),
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
        cpu = speed.children_cpu_seconds() - cpu_before
        left = _git("status", "--porcelain", cwd=clone).splitlines()
        times = file_times(junit, clone) if junit.exists() else {}
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
    busy = f"{cpu / max(wall, 1e-9):.2f} of {os.cpu_count()} cores busy on average ({cpu / 60:.0f} min of CPU)"
    print(f"CPU: {busy}, the install included")
    costliest = show_times(times, seconds) if times else ""
    speed.record(
        "suite.fast" if args.fast else "suite.whole",
        "the fast tier, `scripts/test --fast`, in a fresh clone"
        if args.fast
        else "the kit's whole test suite in a fresh clone (`CI=true .ci/run`, which is `scripts/test`)",
        f"{summary['counts']} in {_minutes(seconds)} of pytest ({_minutes(wall)} with the install), commit {head}; "
        f"files left in the clone: {len(left) or 'none'}; {busy}",
        f"< {target // 60} min",
        seconds < target and code == 0,
    )
    if costliest:
        tier = "fast" if args.fast else "whole"
        speed.record(
            f"suite.files.{tier}",
            f"the costliest test files of the {'fast tier' if args.fast else 'whole suite'} "
            "(every file's seconds: `docs/suite_times.json`)",
            costliest,
        )
        where = speed.data_path()
        if where is not None and "--no-record" not in sys.argv[1:]:
            kept = where.with_name("suite_times.json")
            data = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {}
            data[tier] = {"commit": head, "seconds": round(seconds, 1), "files": dict(sorted(times.items()))}
            kept.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
