"""What a student kit names, beside what the full kit names, over the catalogue's mistakes.

    python bench/bench_kit_diagnosis.py [--assignment transformer] [--tasks sdpa,mha] [--profile quick]

Defaults: every task of the assignment, the quick profile (on a 2-core machine, about an hour for the Transformer's
whole catalogue).

Records an answer bank as ``gradekit kit build`` does (``kit.record`` over the reference, the skeleton and every
catalogued mistake), once without the mutants' fingerprints and once with them, and prints both sizes and times.
Then grades each of those folders twice, with diagnoses: by the full kit (the reference and its mutants at hand)
and from the bank (``--bank``: the fingerprints), and prints, per folder, the first mistake each names (the first
catalogued name in check order) and, in sum, how often they agree, how often the kit names what the full kit does
not on the same check (never, if it works), and how often it names nothing where the full kit names something.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import api  # noqa: E402
from grader.assignment import load  # noqa: E402
from grader.kit import catalogue_folders, record  # noqa: E402


def names(result):
    """``{check id: [catalogued names]}`` of a grading, and its first name (check order), or ``None``."""
    by_check = {c.id: [d.id for d in c.diagnoses if d.kind == "bug"] for t in result.tasks for c in t.checks}
    first = next((n[0] for n in by_check.values() if n), None)
    return by_check, first


def compare(full, kit):
    """``(same first name, names the full kit does not give on the same check, kit silent where full names)``."""
    full_by, full_first = names(full)
    kit_by, kit_first = names(kit)
    wrong = sorted({(c, n) for c, ns in kit_by.items() for n in ns if n not in full_by.get(c, [])})
    return kit_first == full_first, wrong, full_first is not None and kit_first is None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="transformer")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    parser.add_argument("--profile", default="quick")
    args = parser.parse_args()
    a = load(args.assignment)
    tasks = [t for t in args.tasks.split(",") if t] or None
    with tempfile.TemporaryDirectory(prefix="bench-kit-diag-") as work:
        work = Path(work)
        folders = catalogue_folders(a, work / "folders")
        if tasks:
            keep = {f"{t}." for t in tasks}
            folders = folders[:2] + [f for f in folders[2:] if any(f.name.startswith(k) for k in keep)]
        started = time.perf_counter()
        plain = record(a, folders, profiles=(args.profile,), tasks=tasks, diagnoses=False)
        plain_s = time.perf_counter() - started
        started = time.perf_counter()
        bank = record(a, folders, profiles=(args.profile,), tasks=tasks)
        bank_s = time.perf_counter() - started
        plain_size = plain.save(work / "plain.bank").stat().st_size
        size = bank.save(work / "kit.bank").stat().st_size
        print(f"{a.name}, tasks {','.join(tasks) if tasks else 'all'}, profile {args.profile}, {len(folders)} folders")
        print(
            f"bank without fingerprints: {plain_size / 1e6:.2f} MB, {len(plain)} answers, recorded in {plain_s:.0f} s"
        )
        print(
            f"bank with fingerprints:    {size / 1e6:.2f} MB, {len(bank)} answers, {len(bank.prints)} fingerprints, "
            f"recorded in {bank_s:.0f} s"
        )
        agree = silent = named = 0
        wrongs = []
        for folder in folders:
            full = api.check(path=folder, assignment=a, profile=args.profile, tasks=tasks)
            kit = api.check(path=folder, assignment=a, profile=args.profile, tasks=tasks, bank=str(work / "kit.bank"))
            same, wrong, quiet = compare(full, kit)
            agree += same
            silent += quiet
            named += names(full)[1] is not None
            wrongs += [(folder.name, *w) for w in wrong]
            print(
                f"  {folder.name:40s} full {names(full)[1]!s:40s} kit {names(kit)[1]!s:40s} {'' if same else 'DIFFER'}"
            )
        print(
            f"first name agrees on {agree}/{len(folders)} folders ({100 * agree / len(folders):.1f}%); the full kit "
            f"names a mistake in {named}; the kit names none there in {silent}; names the full kit does not give on "
            f"the same check: {len(wrongs)} {wrongs}"
        )


if __name__ == "__main__":
    main()
