"""A student kit installed from its wheel in a fresh venv, beside the full kit: verdicts, first names, size, time.

    python bench/bench_kit.py [--assignment transformer,decoder_lm] [--profile quick] [--tasks rmsnorm,swiglu]
        [--limit N] [--cases a,b] [--jobs 1] [--no-diagnoses] [--no-record]

For each assignment: builds its student kit (``kit.build``: the bank recorded over the reference, the skeleton and
the catalogued mistakes of ``--tasks``, in ``--profile`` only, with the mutants' fingerprints unless
``--no-diagnoses``), makes a fresh venv holding only that wheel and its dependencies (pinned to the versions
installed here: ``make_venv``), then grades every case of every corpus twice, each in its own process on a copy of
the case outside this checkout: with the kit's own ``gradekit check`` (its working folder and environment point
at nothing of this checkout, so it cannot import the reference) and with this checkout's (``python -m grader
check``: the full kit). Both write ``--json``; per check they are compared on the verdict (status and score) and,
per case, on the first catalogued name in check order (``bench_kit_diagnosis.compare``).

The corpora: the reference, the skeleton, the blind corpora (transformer: tests/blind/correct, tests/blind/
deviations, tests/blind_bugs; decoder_lm: tests/blind_lm/correct with the bug corpus's bases, tests/blind_lm/bugs)
and the catalogued mistakes. A case of one file (a deviation, a blind mistake, a catalogued mistake) is graded on
the tasks of that file and those built on them (``tasks_of``); the others on every task; both within ``--tasks``.
``--limit N`` takes N cases of each corpus, evenly spread over its sorted list (the same N every run); ``--cases``
grades the cases of those names only and records nothing (a rerun of the cases that differed).

Prints per corpus and in total: checks compared, same verdict (%), each differing check (case, check, both
verdicts), cases the full kit names a mistake in, same first name there (%), names the kit gives that the full kit
does not give on the same check (the target is none), the wheel's size and the median time of a check per case
(each side's process, start to end). Targets: >= 99% same verdict, >= 95% same first name, no name the full kit
does not give, a wheel of <= 25 MB, a kit check no slower than the full kit's.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import speed  # noqa: E402 - bench/speed.py
from bench_kit_diagnosis import compare, names  # noqa: E402

from grader import kit  # noqa: E402
from grader.assignment import load  # noqa: E402
from grader.kit import catalogue_folders, record  # noqa: E402

TESTS = ROOT / "tests"
VERDICT_TARGET = 0.99
NAME_TARGET = 0.95
SIZE_TARGET_MB = 25.0
IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache")


class VenvError(RuntimeError):
    """A venv could not be made, or pip could not install the wheel into it. ``unavailable``: for want of something
    this machine lacks (the venv module, the network, a dependency's wheel), not for a fault of the kit's wheel."""

    def __init__(self, message, unavailable):
        super().__init__(message)
        self.unavailable = unavailable


UNAVAILABLE = ("No matching distribution", "Could not find a version", "NewConnectionError", "Network is unreachable")
"""What pip says when what it needs cannot be had here."""


def clean_env(**extra):
    """This process's environment without what would point Python at this venv or this checkout."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONUSERBASE")
    env = {k: v for k, v in speed.users_env().items() if k not in drop}
    env.update(extra)
    return env


def make_venv(wheel, dest):
    """A fresh venv at ``dest`` holding only ``wheel`` and its dependencies, each pinned to the version installed
    here (torch without its local label: pip takes this machine's CPU wheel, ``PIP_FIND_LINKS``): its ``bin``
    folder. ``VenvError`` when the venv cannot be made or pip fails."""
    from grader.batch.gradescope_build import _requirements

    dest = Path(dest)
    python = getattr(sys, "_base_executable", sys.executable)
    made = subprocess.run([python, "-m", "venv", str(dest)], env=clean_env(), capture_output=True, text=True)
    if made.returncode != 0 or not (dest / "bin" / "python").exists():
        raise VenvError(f"python -m venv cannot make a venv here: {made.stderr[-500:]}", True)
    pins = dest / "pins.txt"
    pins.write_text(_requirements(), encoding="utf-8")
    env = clean_env()
    env.setdefault("PIP_RETRIES", "1")
    done = subprocess.run(
        [str(dest / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel), "-r", str(pins)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        said = done.stdout + done.stderr
        raise VenvError(
            f"pip cannot install the kit's wheel and its dependencies: {said[-2000:]}",
            any(u in said for u in UNAVAILABLE),
        )
    return dest / "bin"


# -- the cases -----------------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One submission to grade: ``base`` copied, ``files`` copied over it; graded on ``tasks``."""

    corpus: str
    name: str
    base: Path
    files: list = field(default_factory=list)
    tasks: list = field(default_factory=list)

    def write(self, dest):
        dest = Path(dest)
        shutil.copytree(self.base, dest, ignore=IGNORE)
        for f in self.files:
            shutil.copy(f, dest / Path(f).name)
        return dest


def tasks_of(a, file, tasks):
    """The tasks of ``a`` in ``file`` and those built on them, among ``tasks`` (``None``: all), in task order."""
    own = {t.id for t in a.tasks if t.file == file}
    keep = [t.id for t in a.tasks if t.id in own or own & set(a.all_deps(t.id))]
    return [t for t in keep if tasks is None or t in tasks]


def spread(items, limit):
    """``limit`` items of ``items`` evenly spread over it (all of them without a limit)."""
    if not limit or len(items) <= limit:
        return list(items)
    return [items[i * len(items) // limit] for i in range(limit)]


def corpora(a, mutants, tasks=None, limit=None):
    """``{corpus: [Case]}`` for assignment ``a``: ``mutants`` are the catalogued mistakes' folders
    (``catalogue_folders`` without the reference and the skeleton)."""
    every = [t.id for t in a.tasks if tasks is None or t.id in tasks]
    out = {
        "reference": [Case("reference", "reference", Path(a.reference), tasks=every)],
        "skeleton": [Case("skeleton", "skeleton", Path(a.skeleton), tasks=every)],
    }

    def one_file(corpus, name, base, file):
        return Case(corpus, name, base, [file], tasks_of(a, file.name, tasks))

    if a.name == "transformer":
        blind = TESTS / "blind"
        out["blind/correct"] = [
            Case("blind/correct", p.name, p, tasks=every) for p in sorted((blind / "correct").iterdir()) if p.is_dir()
        ]
        deviations = []
        for p in sorted((blind / "deviations").iterdir()):
            files = sorted(p.glob("*.py"))
            if p.is_dir() and files:
                own = [t for f in files for t in tasks_of(a, f.name, tasks)]
                base = blind / "correct" / p.name.split("__", 1)[0]
                deviations.append(Case("blind/deviations", p.name, base, files, [t for t in every if t in own]))
        out["blind/deviations"] = deviations
        labels = json.loads((TESTS / "blind_bugs" / "labels.json").read_text(encoding="utf-8"))
        out["blind_bugs"] = [
            one_file(
                "blind_bugs",
                c["key"],
                TESTS / "blind_bugs" / "bases" / c["base"],
                TESTS / "blind_bugs" / "cases" / c["key"] / c["file"],
            )
            for c in labels
        ]
    elif a.name == "decoder_lm":
        lm = TESTS / "blind_lm"
        correct = [p for p in sorted((lm / "correct").iterdir()) if p.is_dir()]
        correct += [p for p in sorted((lm / "bugs" / "bases").iterdir()) if p.is_dir()]
        out["blind_lm/correct"] = [Case("blind_lm/correct", p.name, p, tasks=every) for p in correct]
        cases = json.loads((lm / "bugs" / "cases.json").read_text(encoding="utf-8"))
        out["blind_lm/bugs"] = [
            one_file(
                "blind_lm/bugs",
                c["key"],
                lm / "bugs" / "bases" / c["base"],
                lm / "bugs" / "cases" / c["key"] / c["file"],
            )
            for c in cases
        ]
    from grader.bugs.catalogue import Catalogue

    by_id = {b.id: b for b in Catalogue(a).bugs}
    out["catalogue"] = [
        Case("catalogue", m.name, m, tasks=tasks_of(a, by_id[m.name].file, tasks)) for m in mutants if m.name in by_id
    ]
    return {k: spread([c for c in v if c.tasks], limit) for k, v in out.items()}


# -- grading a case both ways --------------------------------------------------------------------------------------


def _graded(command, cwd, env, out_json):
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if not out_json.is_file():
        raise RuntimeError(f"{' '.join(map(str, command))} wrote no JSON: {done.stdout[-1500:]}{done.stderr[-3000:]}")
    data = json.loads(out_json.read_text(encoding="utf-8"), object_hook=lambda d: SimpleNamespace(**d))
    return data, seconds


def grade_both(case, assignment, kit_bin, work, profile):
    """``(full, kit, full seconds, kit seconds)``: ``case`` graded by this checkout's ``gradekit check`` and by the
    kit's, each on its own copy of it in ``work`` (outside this checkout), their ``--json`` read back as objects."""
    work = Path(work)
    slug = f"{case.corpus.replace('/', '-')}-{case.name}"
    args = ["--profile", profile, "--tasks", ",".join(case.tasks), "-q"]
    full_sub = case.write(work / f"{slug}-full" / "submission")
    full_json = work / f"{slug}-full.json"
    full = _graded(
        [sys.executable, "-m", "grader", "check", str(full_sub), "--assignment", assignment, *args]
        + ["--json", str(full_json)],
        full_sub.parent,  # no course configuration of this checkout's on the way up, as for the kit
        clean_env(PYTHONPATH=str(ROOT), HOME=str(work)),
        full_json,
    )
    outside = work / f"{slug}-kit"
    kit_sub = case.write(outside / "submission")
    kit_json = work / f"{slug}-kit.json"
    got = _graded(
        [str(kit_bin / "gradekit"), "check", str(kit_sub), *args, "--json", str(kit_json)],
        outside,
        clean_env(HOME=str(outside)),
        kit_json,
    )
    if not got[0].banked:
        raise RuntimeError(f"{case.corpus}/{case.name}: the kit did not grade from its bank")
    return full[0], got[0], full[1], got[1]


def verdicts(result):
    """``{check id: (status, score)}``."""
    return {c.id: (c.status, c.score) for t in result.tasks for c in t.checks}


@dataclass
class Tally:
    """One corpus's figures (or all of them together, ``add``)."""

    cases: int = 0
    checks: int = 0
    same_verdict: int = 0
    differing: list = field(default_factory=list)
    """``(case, check id, full verdict, kit verdict)``."""
    named: int = 0
    same_first: int = 0
    first_differs: list = field(default_factory=list)
    """``(case, full's first name, kit's first name)`` among the cases the full kit names a mistake in."""
    wrong_names: list = field(default_factory=list)
    """``(case, check id, name)`` the kit gives that the full kit does not give on that check."""
    full_s: list = field(default_factory=list)
    kit_s: list = field(default_factory=list)

    def take(self, case, full, got, full_s, kit_s):
        self.cases += 1
        mine, theirs = verdicts(full), verdicts(got)
        for check in sorted(set(mine) | set(theirs)):
            self.checks += 1
            if mine.get(check) == theirs.get(check):
                self.same_verdict += 1
            else:
                self.differing.append((case.name, check, mine.get(check), theirs.get(check)))
        same, wrong, _silent = compare(full, got)
        full_first, kit_first = names(full)[1], names(got)[1]
        if full_first is not None:
            self.named += 1
            self.same_first += same
            if not same:
                self.first_differs.append((case.name, full_first, kit_first))
        elif kit_first is not None:
            self.first_differs.append((case.name, full_first, kit_first))
        self.wrong_names += [(case.name, *w) for w in wrong]
        self.full_s.append(full_s)
        self.kit_s.append(kit_s)

    def add(self, other):
        for f in ("cases", "checks", "same_verdict", "named", "same_first"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        for f in ("differing", "first_differs", "wrong_names", "full_s", "kit_s"):
            getattr(self, f).extend(getattr(other, f))

    @property
    def score_differs(self):
        """The differing checks whose score differs too (the rest differ in status alone, e.g. skipped)."""
        return sum(1 for _c, _k, full, got in self.differing if (full or (None, None))[1] != (got or (None, None))[1])

    @property
    def verdict_share(self):
        return self.same_verdict / self.checks if self.checks else 1.0

    @property
    def name_share(self):
        return self.same_first / self.named if self.named else 1.0

    def line(self):
        full = statistics.median(self.full_s) if self.full_s else 0.0
        mine = statistics.median(self.kit_s) if self.kit_s else 0.0
        return (
            f"{self.cases} cases, {self.checks} checks: same verdict {self.same_verdict}/{self.checks} "
            f"({100 * self.verdict_share:.1f}%; of the others, {self.score_differs} by score); "
            f"named by the full kit {self.named}, same first name {self.same_first}/{self.named} "
            f"({100 * self.name_share:.1f}%); names the full kit does not give: {len(self.wrong_names)}; "
            f"median check {mine:.1f} s kit, {full:.1f} s full"
        )


def agreement(
    a, work, *, profile="quick", tasks=None, limit=None, jobs=1, diagnoses=True, only=None, picked=None, say=print
):
    """Build ``a``'s kit in ``work``, install it into a fresh venv there and grade every case both ways:
    ``(wheel, {corpus: Tally})``. ``only``: the corpora to grade (default all); ``picked``: the cases' names
    (default all); ``say`` is told each case's line. ``VenvError`` when the venv cannot be made."""
    a = load(a)
    work = Path(work)
    tasks = list(tasks) if tasks else None
    folders = catalogue_folders(a, work / "mutants")
    if tasks:
        keep = {f"{t}." for t in tasks}
        folders = folders[:2] + [f for f in folders[2:] if any(f.name.startswith(k) for k in keep)]
    started = time.perf_counter()
    bank = record(a, folders, profiles=(profile,), tasks=tasks, diagnoses=diagnoses).save(work / "kit.bank")
    built = kit.build(a, work / "kit", bank=bank)
    say(f"{a.name}: kit built ({len(folders)} folders recorded, {profile}) in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    kit_bin = make_venv(built.wheel, work / "venv")
    say(f"{a.name}: fresh venv with the wheel in {time.perf_counter() - started:.0f} s")
    chosen = corpora(a, folders[2:], tasks, limit)
    cases = [
        c
        for name, cs in chosen.items()
        if only is None or name in only
        for c in cs
        if picked is None or c.name in picked
    ]
    tallies = {name: Tally() for name in chosen if only is None or name in only}

    def one(i_case):
        i, case = i_case
        return case, grade_both(case, a.name, kit_bin, work / "cases" / str(i), profile)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for case, (full, got, full_s, kit_s) in pool.map(one, enumerate(cases)):
            tallies[case.corpus].take(case, full, got, full_s, kit_s)
            differ = [c for c, v in verdicts(full).items() if verdicts(got).get(c) != v]
            say(
                f"  {case.corpus:18s} {case.name:40s} full {names(full)[1]!s:32s} kit {names(got)[1]!s:32s} "
                f"{full_s:5.1f} s / {kit_s:5.1f} s" + (f"  VERDICTS DIFFER: {', '.join(differ)}" if differ else "")
            )
    return built.wheel, tallies


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="transformer,decoder_lm", help="comma-separated (default both)")
    parser.add_argument("--profile", default="quick", choices=("quick", "full"))
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    parser.add_argument("--limit", type=int, default=None, help="cases per corpus, evenly spread (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="cases graded at once (each: two processes in turn)")
    parser.add_argument("--no-diagnoses", action="store_true", help="a bank without the mutants' fingerprints")
    parser.add_argument(
        "--cases", default="", help="comma-separated case names only (a rerun of some; its figures are not recorded)"
    )
    speed.add_argument(parser)
    args = parser.parse_args(argv)
    picked = {c for c in args.cases.split(",") if c} or None
    tasks = [t for t in args.tasks.split(",") if t] or None
    for name in [n for n in args.assignment.split(",") if n]:
        a = load(name)
        mine = [t for t in tasks if t in a.task_ids] if tasks else None
        with tempfile.TemporaryDirectory(prefix="bench-kit-") as work:
            wheel, tallies = agreement(
                a,
                work,
                profile=args.profile,
                tasks=mine,
                limit=args.limit,
                jobs=args.jobs,
                diagnoses=not args.no_diagnoses,
                picked=picked,
            )
            size = wheel.stat().st_size / 1e6
        total = Tally()
        print(f"\n{a.name}, profile {args.profile}, tasks {','.join(mine) if mine else 'all'}", end="")
        print(f", {args.limit} cases per corpus" if args.limit else ", every case")
        for corpus, tally in tallies.items():
            total.add(tally)
            print(f"  {corpus:18s} {tally.line()}")
        print(f"  {'total':18s} {total.line()}")
        for case, check, full, got in total.differing:
            print(f"  differs: {case} {check}: full {full}, kit {got}")
        for case, full, got in total.first_differs:
            print(f"  first name differs: {case}: full {full}, kit {got}")
        for case, check, n in total.wrong_names:
            print(f"  NAME THE FULL KIT DOES NOT GIVE: {case} {check}: {n}")
        print(f"  wheel: {size:.2f} MB")
        scope = f"{args.profile}, tasks {','.join(mine) if mine else 'all'}, " + (
            f"{args.limit} cases per corpus" if args.limit else "every case"
        )
        if picked:  # some cases again: no figure of the whole
            continue
        verdict_ok = total.verdict_share >= VERDICT_TARGET
        name_ok = total.name_share >= NAME_TARGET and not total.wrong_names
        full_med, kit_med = statistics.median(total.full_s), statistics.median(total.kit_s)
        speed.record(
            f"kit.verdicts.{a.name}",
            f"student kit ({a.name}) in a fresh venv vs the full kit: same verdict per check ({scope})",
            f"{total.same_verdict}/{total.checks} checks ({100 * total.verdict_share:.1f}%), {total.cases} cases",
            ">= 99%",
            verdict_ok,
        )
        if not args.no_diagnoses:
            speed.record(
                f"kit.first_name.{a.name}",
                f"the same cases ({a.name}): same first diagnosis where the full kit names one; names it does not "
                "give on the same check",
                f"{total.same_first}/{total.named} ({100 * total.name_share:.1f}%), "
                f"{len(total.wrong_names)} names the full kit does not give",
                ">= 95%, none",
                name_ok,
            )
        speed.record(
            f"kit.size.{a.name}",
            f"student kit wheel ({a.name}, bank {scope})",
            f"{size:.1f} MB",
            "<= 25 MB",
            size <= SIZE_TARGET_MB,
        )
        speed.record(
            f"kit.check_time.{a.name}",
            f"median time of one check process per case, kit vs full kit ({a.name}, {scope}, {args.jobs} at once)",
            f"{kit_med:.1f} s kit, {full_med:.1f} s full",
            "kit <= full",
            kit_med <= full_med,
        )


if __name__ == "__main__":
    main()
