"""Sealed grading: a sealed grade is earned by the submission's own code, and no submission can
reach another. Each attack here scored, leaked or lingered on the code before the fix; the ones that need a
root judge (jails, uids of each worker's own) skip elsewhere with the reason."""

import ast
import csv
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import api
from grader.assignment import load
from grader.batch import runner as batch_runner
from grader.messages import render
from grader.submission.inprocess import excluded_tasks, reference_parts
from tests import hostile

HERE = Path(__file__).resolve().parent
THIEF = HERE / "thief"
SUBMISSIONS = HERE.parent / "submissions"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="jails and uids of each worker's own need a root judge; "
                                                         "as an ordinary user the worker runs as that user "
                                                         "(docs/SEALED.md)")
pytestmark = pytest.mark.alone  # it reads what every jail on the machine left: no other test beside it
FRESH_FLOOR = 100_000
"""Workers of a root judge run as uids drawn from here up (grader.submission.sandbox.fresh_uid)."""
OPTIONS = {"tasks": ["masks"], "profile": "quick", "call_timeout": 20.0, "total_timeout": 60.0, "memory_mb": 2048}
ASSIGNMENT = load()


# -- what a worker may hold -------------------------------------------------------------------------------------
@pytest.mark.parametrize("task", [t for t in ASSIGNMENT.task_ids if t != "overfit"])
def test_reference_parts_hold_nothing_of_the_task_or_above(task):
    parts = reference_parts(ASSIGNMENT, task)
    defined = set()
    for source in parts.values():
        for node in ast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
    own_reference = set(ASSIGNMENT.task_by_id[task].own_reference)
    for name in defined - own_reference:
        assert ASSIGNMENT.name_to_task.get(name) not in excluded_tasks(ASSIGNMENT, task), (task, name)
    assert task in excluded_tasks(ASSIGNMENT, task)
    # and everything beneath the task is there, so that isolated checks can run
    for dep in ASSIGNMENT.all_deps(task):
        assert set(ASSIGNMENT.task_by_id[dep].names) <= defined, (task, dep)


def test_the_fork_server_never_holds_the_reference():
    """What every worker inherits: torch and the grader, warmed up, and not one object of the reference."""
    code = f"""
import gc, linecache, sys, types
from grader.assignment import load
from grader.submission import child
child.prepare(load(), warm=True)
root = {str(ASSIGNMENT.reference)!r}
names = ('MultiHeadAttention', 'scaled_dot_product_attention', 'greedy_decode', 'train_step', 'LayerNorm')
mods = [m for m in sys.modules if m == 'solution' or m.startswith(('solution.', '_gradekit_sub'))]
code, named = [], []
for o in gc.get_objects():
    if isinstance(o, types.FunctionType) and o.__code__.co_filename.startswith(root):
        code.append(o)
    if isinstance(o, (type, types.FunctionType)) and o.__name__ in names and not o.__module__.startswith('torch'):
        named.append(o)
lines = [f for f in linecache.cache if f.startswith(root)]
print(len(mods), len(code), len(named), len(lines), mods[:3], named[:3])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=HERE.parent.parent)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[:4] == ["0", "0", "0", "0"], out.stdout


# -- a submission that implements nothing ----------------------------------------------------------------------
@ROOT_ONLY
def test_a_submission_that_implements_nothing_scores_nothing_sealed():
    result = api.check(path=THIEF, sealed=True, profile="quick", diagnose=False)
    passed = [c.id for t in result.tasks for c in t.checks if c.status == "passed"]
    assert passed == [], passed
    assert result.score == 0


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


# -- sizes and output -----------------------------------------------------------------------------------------
def test_a_huge_reply_is_refused_and_the_judge_stays_small(tmp_path):
    sub = hostile.build("huge", tmp_path / "huge")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = api.check(path=sub, sealed=True, tasks=["masks"], profile="quick", diagnose=False, memory_mb=4096)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 300, grown_mb
    checks = {c.id: c for t in result.tasks for c in t.checks}
    failed = [c for c in checks.values() if c.status != "passed"]
    assert failed and any("bytes" in render(c.message, "en") for c in failed), \
        [(c.id, c.message.params) for c in failed]


def test_printing_is_not_a_crime(tmp_path):
    sub = hostile.build("printer", tmp_path / "printer")
    result = api.check(path=sub, sealed=True, tasks=["masks"], profile="quick", diagnose=False)
    assert result.score == result.max_score == 10, [(c.id, c.status, c.message) for t in result.tasks
                                                     for c in t.checks]
    assert result.output_dropped > 0


# -- comparisons take plain tensors only, in every mode --------------------------------------------------------
AGREEABLE = '''

import sys as _sys


class _Sly(torch.Tensor):
    """Computes nothing; when the grader detaches it, hands back the reference's answer from the grader's frames."""

    def detach(self):
        frame = _sys._getframe(1)
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if isinstance(value, dict):
                    for v in value.values():
                        if type(v) is torch.Tensor and v.shape == self.shape and v is not self:
                            return v.clone()
            frame = frame.f_back
        return torch.zeros(self.shape)

    def as_subclass(self, cls):
        return self.detach()


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    out = torch.zeros(query.shape[:-1] + (value.shape[-1],), dtype=query.dtype)
    weights = torch.zeros(query.shape[:-1] + (key.shape[-2],), dtype=query.dtype)
    return out.as_subclass(_Sly), weights.as_subclass(_Sly)
'''


@pytest.mark.parametrize("sealed", [False, True], ids=["in-process", "sealed"])
def test_a_tensor_subclass_that_agrees_with_everything_earns_nothing(tmp_path, sealed):
    sub = tmp_path / "sly"
    shutil.copytree(SUBMISSIONS / "alt_loops", sub, ignore=shutil.ignore_patterns("__pycache__"))
    with open(sub / "attention.py", "a", encoding="utf-8") as f:
        f.write(AGREEABLE)
    result = api.check(path=sub, sealed=sealed, tasks=["sdpa"], profile="quick", diagnose=False)
    assert result.score == 0, [(c.id, c.status) for t in result.tasks for c in t.checks]
    said = " ".join(render(c.message, "en") for t in result.tasks for c in t.checks)  # the kit's words, in English
    assert "subclass of torch.Tensor" in said
