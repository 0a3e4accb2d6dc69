"""A student kit installed from its wheel into a fresh venv grades as the full kit does (slow).

The acceptance condition of student kits, on a small fixed slice (``bench/bench_kit.py`` measures the whole
corpora): the decoder-only LM's kit for two tasks (``TASKS``: its bank recorded over the reference, the skeleton
and those tasks' catalogued mistakes, quick profile, with the mutants' fingerprints), installed with only its
dependencies into a fresh venv; then the reference, the skeleton and ``LIMIT`` cases of each other corpus (blind
correct code, blind mistakes, catalogued mistakes), each graded by the kit's own ``gradekit check`` outside this
checkout and by the full kit. Same verdict (status and score) on at least 99% of the checks, the same first
diagnosis on at least 95% of the cases the full kit names a mistake in, no name the full kit does not give on the
same check, a wheel of at most 25 MB. Without the venv module, the network or a dependency's wheel, it skips.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_kit import NAME_TARGET, SIZE_TARGET_MB, VERDICT_TARGET, Tally, VenvError  # noqa: E402

ASSIGNMENT = "decoder_lm"
TASKS = ["rmsnorm", "swiglu"]
LIMIT = 3
"""Cases of each corpus (evenly spread over it): the catalogue's among the 8 mistakes of ``TASKS``."""
KNOWN: set[tuple[str, str]] = set()
"""``(case, check)`` graded otherwise by the kit than by the full kit and accepted, each saying why: none. Every
grading draws its examples without the literals Hypothesis finds in the modules loaded
(``checks.base.without_local_constants``), so the kit asks its bank the questions the full kit asks the reference."""


_AGREEMENT = """
import dataclasses, json, shutil, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench_kit import VenvError, agreement
work = Path(sys.argv[2])
try:
    wheel, tallies = agreement(sys.argv[3], work, tasks=sys.argv[4].split(","), limit=int(sys.argv[5]), jobs=2)
except VenvError as exc:
    print(json.dumps({"venv": str(exc), "unavailable": bool(exc.unavailable)}))
    sys.exit(0)
finally:
    shutil.rmtree(work / "venv", ignore_errors=True)  # about 1 GB (torch): not left for pytest's kept folders
out = {"wheel": wheel.stat().st_size, "tallies": {k: dataclasses.asdict(t) for k, t in tallies.items()}}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """``(wheel size in MB, {corpus: Tally}, their total)``. The kit is built and graded in a process of its own, as
    ``gradekit kit build`` is: what earlier tests left in this one (the suite's) is not the instructor's."""
    work = tmp_path_factory.mktemp("kit-agreement")
    done = subprocess.run(
        [sys.executable, "-c", _AGREEMENT, str(ROOT / "bench"), str(work), ASSIGNMENT, ",".join(TASKS), str(LIMIT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout.strip().splitlines()[-1])
    if "venv" in data:
        if data["unavailable"]:
            pytest.skip(data["venv"])
        raise VenvError(data["venv"], False)
    tallies = {k: Tally(**v) for k, v in data["tallies"].items()}
    total = Tally()
    for tally in tallies.values():
        total.add(tally)
    return data["wheel"] / 1e6, tallies, total


def test_the_installed_kit_gives_the_full_kits_verdicts_and_names(graded):
    size, tallies, total = graded
    print(f"\nwheel {size:.2f} MB")
    for corpus, tally in tallies.items():
        print(f"  {corpus:18s} {tally.line()}")
    # every corpus was graded, and the slice holds mistakes the full kit names (else the names prove nothing)
    assert set(tallies) == {"reference", "skeleton", "blind_lm/correct", "blind_lm/bugs", "catalogue"}
    assert all(t.cases for t in tallies.values()) and total.named >= 3, tallies
    unmet = []  # every condition, so that one run says all that is wrong
    # on this fixed slice, every check the kit grades otherwise is a known one (stricter than VERDICT_TARGET's 99%)
    differing = {(case, check) for case, check, *_ in total.differing}
    if differing != KNOWN:
        unmet.append(
            f"graded otherwise than by the full kit: {total.differing} (known: {sorted(KNOWN)}); same verdict on "
            f"{100 * total.verdict_share:.1f}% of the checks (target {100 * VERDICT_TARGET:g}%)"
        )
    if total.wrong_names:
        unmet.append(f"names the full kit does not give: {total.wrong_names}")
    if total.name_share < NAME_TARGET:
        unmet.append(f"same first name on {100 * total.name_share:.1f}% of the named cases: {total.first_differs}")
    if size > SIZE_TARGET_MB:
        unmet.append(f"a wheel of {size:.1f} MB")
    assert not unmet, unmet
