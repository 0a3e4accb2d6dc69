"""Wall time of ``gradekit check``: quick and full profiles, in-process and --isolated, and diagnosis cost.

Run: ``scripts/gradekit-python bench/bench_check.py`` or ``python bench/bench_check.py`` in the venv.
Prints figures; asserts nothing (speed targets live here, not in the test suite).

Targets on a 2-core machine: full <= 30 s, quick <= 8 s, --isolated within 1.3x of in-process,
a submission with three bugs within 1.5x of the solution (diagnosis runs only on failures).
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

from grader import api
from grader.bugs.catalogue import BUG_BY_ID, apply
from grader.submission.runner import SOLUTION_ROOT
from grader.tasks import CONTRACT_FILES

THREE_BUGS = ("sdpa.fill_zero", "layernorm.unbiased_variance", "greedy.reads_first_position")


def three_bug_submission(dest):
    dest.mkdir(parents=True, exist_ok=True)
    for file in CONTRACT_FILES:
        source = (SOLUTION_ROOT / file).read_text()
        for bug_id in THREE_BUGS:
            if BUG_BY_ID[bug_id].file == file:
                source = apply(BUG_BY_ID[bug_id], source)
        (dest / file).write_text(source)
    return dest


def timed(label, **kwargs):
    start = time.perf_counter()
    result = api.check(**kwargs)
    seconds = time.perf_counter() - start
    print(f"{label:<44} {seconds:6.1f} s   score {result.score:g}/{result.max_score:g}", flush=True)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-isolated", action="store_true")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} at start")
    timed("warm-up (imports, first meta-device use)", path=SOLUTION_ROOT, profile="quick", tasks=["sdpa"])
    quick = timed("check solution --profile quick", path=SOLUTION_ROOT, profile="quick")
    full = timed("check solution --profile full", path=SOLUTION_ROOT, profile="full")
    with tempfile.TemporaryDirectory() as tmp:
        buggy = three_bug_submission(Path(tmp) / "three_bugs")
        bugs_full = timed("check three-bug submission --profile full", path=buggy, profile="full")
    print(f"three bugs / solution (full): {bugs_full / full:.2f}x   (target <= 1.5x)")
    if not args.skip_isolated:
        iso = timed("check solution --profile full --isolated", path=SOLUTION_ROOT, profile="full", isolated=True)
        print(f"isolated / in-process (full): {iso / full:.2f}x   (target <= 1.3x)")
    print(f"targets: quick {quick:.1f} s (<= 8 s), full {full:.1f} s (<= 30 s); "
          f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
