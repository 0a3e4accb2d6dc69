"""``gradekit batch``: a class of ordinary and hostile submissions graded in sealed workers.

One module-scoped batch grades every hostile case (``tests/hostile``) on the ``masks`` task with
the quick profile and short limits; each test reads its verdict from the gradebook and the
student's files. A second, smaller batch (other ids, so another order, and ``-j 1``) checks that
scores do not depend on order or parallelism, and that a re-run only re-grades what changed.
"""

import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.assignment import load
from grader.batch import gradebook, runner
from grader.submission import intake
from tests import hostile

SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"
OPTIONS = {"tasks": ["masks"], "profile": "quick", "call_timeout": 6.0, "total_timeout": 12.0, "memory_mb": 2048}
SLEEP = "987.654"
"""The argument of the process the tamper case leaves behind (to find it in /proc)."""


def _zip_folder(folder, archive, top=None):
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(Path(folder).rglob("*.py")):
            rel = path.relative_to(folder).as_posix()
            zf.write(path, f"{top}/{rel}" if top else rel)


def _rows(out):
    text = (out / "gradebook.csv").read_text(encoding="utf-8")
    assert text.startswith("\ufeff")
    return {r["student_id"]: r for r in csv.DictReader(text[1:].splitlines())}


def _processes(arg):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if arg in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("batch")
    cls = base / "class"
    cls.mkdir()
    guess = base / "guess"
    marker = base / "unpickled"
    hostile.build("tamper", cls / "tamper", guess=str(guess), marker=str(marker), sleep=SLEEP)
    for name in ("peeker", "exits", "hang", "hog", "spammer", "banned", "syntax", "buggy"):
        hostile.build(name, cls / name)
    hostile.near_copy(cls / "nearcopy")
    _zip_folder(SUBMISSIONS / "alt_functional", cls / "good.zip", top="my-submission")
    hostile.build("buggy", base / "buggyzip")
    _zip_folder(base / "buggyzip", cls / "buggyzip.zip")
    with zipfile.ZipFile(cls / "unsafe.zip", "w") as zf:
        zf.writestr("../escape.py", "print('out')")
    out = base / "out"
    result = runner.batch(submissions=cls, out=out, jobs=2, **OPTIONS)
    yield {
        "result": result,
        "out": out,
        "rows": _rows(out),
        "guess": guess,
        "marker": marker,
        "class": cls,
        "base": base,
    }
    for pid in _processes(SLEEP):  # a failing test must not leave it behind either
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def _record(graded, student):
    return json.loads((graded["out"] / student / "record.json").read_text())


def test_every_submission_has_a_row_and_the_outputs(graded):
    rows = graded["rows"]
    assert sorted(rows) == sorted(
        [
            "tamper",
            "peeker",
            "exits",
            "hang",
            "hog",
            "spammer",
            "banned",
            "syntax",
            "buggy",
            "nearcopy",
            "good",
            "buggyzip",
            "unsafe",
        ]
    )
    assert list(next(iter(rows.values()))) == ["student_id", "total", "max", "status", "masks", "reason"]
    for student in rows:
        if student == "unsafe":
            continue
        for name in ("report.html", "results.json", "gradescope.json"):
            assert (graded["out"] / student / name).is_file(), (student, name)
    index = (graded["out"] / "index.html").read_text()
    assert 'href="good/report.html"' in index and "<script" not in index and "http" not in index.split("<body>")[1]


def test_a_zips_rerun_lines_name_the_zip_and_run_as_printed(graded):
    """A failing check's rerun line names the submission as handed in (the zip), not the batch's snapshot (a scratch
    folder gone when the batch ends); run as printed, it fails the same check."""
    zipped = graded["class"] / "buggyzip.zip"
    results = json.loads((graded["out"] / "buggyzip" / "results.json").read_text(encoding="utf-8"))
    lines = [c["reproduce"] for t in results["tasks"] for c in t["checks"] if c["status"] == "failed"]
    assert lines and all(shlex.split(line)[2] == str(zipped) for line in lines), lines
    words = shlex.split(lines[0])
    done = subprocess.run(
        [sys.executable, "-m", "grader", *words[1:]], capture_output=True, text=True, timeout=300, cwd=graded["base"]
    )
    only = words[words.index("--only") + 1]
    assert done.returncode == 1 and only in done.stdout and "1 of 1 checks did not pass." in done.stdout, done.stdout


def test_a_correct_zip_with_a_top_folder_gets_full_marks(graded):
    assert graded["rows"]["good"]["status"] == "ok"
    assert graded["rows"]["good"]["total"] == graded["rows"]["good"]["max"] == "10"


def test_an_unsafe_zip_is_refused_and_nothing_escapes(graded):
    row = graded["rows"]["unsafe"]
    assert row["status"] == "error" and "'..'" in row["reason"]
    assert not (graded["class"].parent / "escape.py").exists()


def test_tampering_earns_nothing_and_leaves_nothing(graded):
    row = graded["rows"]["tamper"]
    assert row["status"] == "ok"
    assert float(row["total"]) < 10  # the wrong padding_mask fails whatever torch.allclose says
    checks = {
        c["id"]: c["status"]
        for c in json.loads((graded["out"] / "tamper" / "results.json").read_text())["tasks"][0]["checks"]
    }
    # its causal_mask returns a tensor subclass (refused unread) after starting a program (none in a jail)
    assert checks["masks.padding"] != "passed" and checks["masks.causal"] != "passed"
    assert _record(graded, "tamper")["score"] == float(row["total"])
    assert "999" not in (graded["out"] / "gradebook.csv").read_text()
    assert not graded["marker"].exists()  # the subclass's __reduce_ex__ never ran in the judge
    assert not _processes(SLEEP)  # the process it started was killed with its worker


def test_reading_the_reference_is_blocked(graded):
    checks = {
        c["id"]: c["status"]
        for c in json.loads((graded["out"] / "peeker" / "results.json").read_text())["tasks"][0]["checks"]
    }
    assert checks["masks.padding"] != "passed"
    assert graded["rows"]["peeker"]["status"] == "ok"


@pytest.mark.parametrize(
    "student, status",
    [
        ("exits", "crashed"),
        ("hang", "timeout"),
        ("hog", "crashed|timeout"),
        ("spammer", "timeout"),
        ("banned", "banned-api"),
        ("nearcopy", "copy"),
        ("syntax", "error"),
    ],
)
def test_hostile_submissions_get_a_status_and_no_unearned_credit(graded, student, status):
    row = graded["rows"][student]
    assert row["status"] in status.split("|"), row
    assert row["reason"]
    if student != "banned":
        assert float(row["masks"]) <= 7, row  # padding (3) and target (3) need padding_mask


def test_the_copy_flag_is_in_the_results(graded):
    data = json.loads((graded["out"] / "nearcopy" / "results.json").read_text())
    assert data["flags"]["copy_of_reference"]["copy"] is True
    assert data["status"] == "copy" and data["gradebook_score"] == 0


def test_the_summary_lists_diagnosed_bugs(graded):
    assert "masks.causal" in (graded["out"] / "index.html").read_text()
    assert graded["rows"]["buggy"]["status"] == "ok" and float(graded["rows"]["buggy"]["total"]) < 10


def test_same_scores_in_another_order_and_parallelism_and_resume(graded, monkeypatch):
    monkeypatch.setattr(runner, "grader_fingerprint", lambda assignment: "fixed")
    cls = graded["base"] / "class2"
    cls.mkdir()
    # Other ids: sorted (and so dispatched) in the opposite order; one job instead of two.
    pairs = {"z1_good": "good", "y2_buggy": "buggy"}
    shutil.copytree(graded["class"] / "buggy", cls / "y2_buggy")
    shutil.copy(graded["class"] / "good.zip", cls / "z1_good.zip")
    out = graded["base"] / "out2"
    runner.batch(submissions=cls, out=out, jobs=1, **OPTIONS)
    rows = _rows(out)
    for new, old in pairs.items():
        mine = {k: v for k, v in rows[new].items() if k != "student_id"}
        theirs = {k: v for k, v in graded["rows"][old].items() if k != "student_id"}
        assert mine == theirs, (new, old)
        assert _record(graded, old)["checks"] == json.loads((out / new / "record.json").read_text())["checks"]
    # A re-run re-grades only what changed.
    (cls / "y2_buggy" / "masks.py").write_text(hostile.TEXTS["buggy"].replace("(cols < rows)", "(cols <= rows)"))
    again = runner.batch(submissions=cls, out=out, jobs=1, **OPTIONS)
    assert (again.graded, again.cached) == (1, 1)
    assert _rows(out)["y2_buggy"]["total"] == "10"


@pytest.mark.skipif(
    os.geteuid() != 0,
    reason="kill(-1) by a worker of the judge's own user would kill the tests; "
    "only a root judge gives workers users of their own",
)
def test_a_submission_that_signals_everyone_cannot_touch_the_other_slot(tmp_path):
    from grader.submission.sandbox import FRESH, _resolve_user, slot_user

    assert _resolve_user(slot_user(0)) == _resolve_user(slot_user(1)) == FRESH  # a uid of each worker's own
    cls = tmp_path / "class"
    hostile.build("killer", cls / "a_killer")
    shutil.copytree(SUBMISSIONS / "alt_loops", cls / "b_good")
    out = tmp_path / "out"
    runner.batch(submissions=cls, out=out, jobs=2, **OPTIONS)
    rows = _rows(out)
    assert rows["b_good"]["status"] == "ok" and rows["b_good"]["total"] == "10", rows["b_good"]
    assert rows["a_killer"]["status"] in ("ok", "timeout"), rows["a_killer"]
    # its kills lasted the other's whole grading: the judge log of b_good shows no crash either
    checks = json.loads((out / "b_good" / "results.json").read_text())["tasks"][0]["checks"]
    assert all(c["status"] == "passed" for c in checks), checks


def test_zip_extraction_refuses_links_and_caps(tmp_path):
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as zf:
        info = zipfile.ZipInfo("masks.py")
        info.external_attr = (0o120777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(intake.UnsafeZip, match="link"):
        intake.extract(link, tmp_path / "a")
    big = tmp_path / "big.zip"
    with zipfile.ZipFile(big, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("masks.py", "0" * 5000)
    with pytest.raises(intake.UnsafeZip, match="bytes"):
        intake.extract(big, tmp_path / "b", max_bytes=1000)
    with pytest.raises(intake.UnsafeZip, match="members"):
        intake.extract(big, tmp_path / "c", max_files=0)


def test_gradebook_quotes_and_defuses_formulas():
    records = [
        {
            "student": "s1",
            "score": 2.5,
            "max_score": 10,
            "status": "ok",
            "tasks": {"masks": 2.5},
            "reason": '=HYPERLINK("x"), and "quotes"\nnewline',
        }
    ]
    text = gradebook.render(records, load())
    row = next(csv.DictReader(text.splitlines()))
    assert row["reason"].startswith("'=HYPERLINK") and text.endswith("\r\n")
    assert row["total"] == "2.5"


def test_gradebook_columns_follow_the_assignment():
    tiny = load(Path(__file__).resolve().parents[1] / "data" / "tiny_assignment")
    records = [
        {"student": "s1", "score": 1, "max_score": 5, "status": "ok", "tasks": {"attend": 0, "softmax": 1}},
        {"student": "s2", "score": 0, "max_score": 0, "status": "error", "tasks": {}},
    ]
    head = next(csv.reader(gradebook.render(records, tiny).splitlines()))
    assert head == ["student_id", "total", "max", "status", "softmax", "attend", "reason"]


def test_the_fingerprint_covers_the_assignment_folder(tmp_path):
    # A copy under a name of its own (a module name not imported yet), changed file by file.
    folder = tmp_path / "fingerprinted_hw"
    shutil.copytree(
        Path(__file__).resolve().parents[1] / "data" / "tiny_assignment",
        folder,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    assignment = load(folder)
    before = runner.grader_fingerprint(assignment)
    assert runner.grader_fingerprint(assignment) == before
    for changed in ("bugs.py", "reference/ops.py", "messages/en.py"):
        with open(folder / changed, "a", encoding="utf-8") as fh:
            fh.write("\n# changed\n")
        after = runner.grader_fingerprint(assignment)
        assert after != before, changed
        before = after
    assert runner.grader_fingerprint(load()) != before


def test_similarity_tells_alternatives_from_copies(tmp_path):
    from grader.batch.similarity import compare

    assignment = load()
    assert compare(assignment.reference, assignment).copy
    for alt in ("alt_annotated", "alt_einsum", "alt_functional", "alt_loops"):
        assert not compare(SUBMISSIONS / alt, assignment).copy, alt
