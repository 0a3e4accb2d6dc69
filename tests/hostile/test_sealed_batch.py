"""Sealed grading in a batch: attackers (a thief, a daemon, a litterer, a snoop) beside, before and after correct
submissions, graded by a root judge. The correct ones keep full marks, the thief passes nothing, the snoop sees no
classmate and no grade, and nothing of any worker remains on the machine afterwards (processes, files, IPC of the
workers' uids). That last test reads the whole machine, so this module runs alone (``alone``: no other test beside
it); the other sealed attacks are in ``test_sealed.py``."""

import csv
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from grader.batch import runner as batch_runner
from tests import hostile

HERE = Path(__file__).resolve().parent
THIEF = HERE / "thief"
SUBMISSIONS = HERE.parent / "submissions"
pytestmark = pytest.mark.alone  # it reads what every jail on the machine left: no other test beside it
FRESH_FLOOR = 100_000
"""Workers of a root judge run as uids drawn from here up (grader.submission.sandbox.fresh_uid)."""
OPTIONS = {"tasks": ["masks"], "profile": "quick", "call_timeout": 20.0, "total_timeout": 60.0, "memory_mb": 2048}


# -- the batch: attackers beside, before and after correct submissions -----------------------------------------
def _rows(out):
    text = (out / "gradebook.csv").read_text(encoding="utf-8")
    return {r["student_id"]: r for r in csv.DictReader(text[1:].splitlines())}


def _worker_processes():
    """Live processes of worker uids, with their command lines (a zombie is dead: it only waits to be reaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines()
                              if ":" in line)
                uid = int(status["Uid"].split()[0])
                if uid >= FRESH_FLOOR and not status["State"].strip().startswith(("Z", "X")):
                    found.append((int(entry.name), uid, (entry / "cmdline").read_bytes()[:200]))
            except (OSError, ValueError, KeyError):
                pass
    return found


def _worker_files(since):
    found = []
    for folder in ("/tmp", "/dev/shm", "/var/tmp", "/run/lock"):
        for dirpath, dirs, files in os.walk(folder):
            for name in dirs + files:
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                if st.st_uid >= FRESH_FLOOR and st.st_mtime >= since - 1:
                    found.append(os.path.join(dirpath, name))
    return found


def _worker_ipc():
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        header = lines[0].split()
        for line in lines[1:]:
            if int(line.split()[header.index("cuid")]) >= FRESH_FLOOR:
                found.append((kind, line))
    return found


SECRET = "CLASSMATE_SECRET_7f3a"


def _good(dest):
    shutil.copytree(SUBMISSIONS / "alt_loops", dest, ignore=shutil.ignore_patterns("__pycache__"))
    with open(dest / "masks.py", "a", encoding="utf-8") as f:
        f.write(f"\n# {SECRET} {dest.name}\n")
    return dest


@pytest.fixture(scope="module")
def sealed_batch(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("jails and uids of each worker's own need a root judge (docs/SEALED.md)")
    base = tmp_path_factory.mktemp("sealed")
    started = time.time()
    cls = base / "class"
    cls.mkdir()
    shutil.copytree(THIEF, cls / "a_thief")
    for name in ("daemon", "litter", "snoop"):
        hostile.build(name, cls / f"a_{name}")
    for name in ("b_good", "c_good", "z_good"):
        _good(cls / name)
    out = base / "out"
    first = batch_runner.batch(submissions=cls, out=out, jobs=2, **OPTIONS)
    rows = _rows(out)
    # a later batch, graded while whatever the first left behind would still run
    later = base / "later"
    later.mkdir()
    _good(later / "d_good")
    out2 = base / "out2"
    batch_runner.batch(submissions=later, out=out2, jobs=2, **OPTIONS)
    leftovers = {"processes": _worker_processes(), "files": _worker_files(started), "ipc": _worker_ipc()}
    yield {"rows": rows, "rows2": _rows(out2), "out": out, "first": first, "leftovers": leftovers}
    for pid, _uid, _cmd in _worker_processes():  # a failing test leaves nothing behind either
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def test_correct_submissions_beside_and_after_attackers_get_full_marks(sealed_batch):
    rows = sealed_batch["rows"]
    for name in ("b_good", "c_good", "z_good"):
        assert rows[name]["status"] == "ok" and rows[name]["total"] == "10", rows[name]
    assert sealed_batch["rows2"]["d_good"]["total"] == "10", sealed_batch["rows2"]
    # the litterer's answers are correct: its points are its own (the daemon kills its own worker too)
    assert rows["a_litter"]["total"] == "10", rows["a_litter"]
    assert rows["a_thief"]["total"] == "0", rows["a_thief"]


def test_the_thief_passes_no_check_in_a_batch(sealed_batch):
    results = json.loads((sealed_batch["out"] / "a_thief" / "results.json").read_text())
    assert all(c["status"] != "passed" for t in results["tasks"] for c in t["checks"])


def test_nothing_of_any_worker_remains(sealed_batch):
    assert sealed_batch["leftovers"] == {"processes": [], "files": [], "ipc": []}


def test_a_snoop_sees_no_classmate_and_no_grade(sealed_batch):
    out = sealed_batch["out"]
    mine = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (out / "a_snoop").rglob("*")
                   if p.is_file())
    assert SECRET not in mine
    assert "b_good" not in mine and "c_good" not in mine and "z_good" not in mine
    assert "gradebook.csv" not in mine and "record.json:" not in mine
    assert "SNOOPED" in mine  # it ran, and found nothing
