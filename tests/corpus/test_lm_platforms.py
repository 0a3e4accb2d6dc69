"""The second assignment through every door the first one has: the CLI (named with --assignment or by the course
configuration), batch, the Gradescope autograder and the pytest plugin, unchanged (batch, Gradescope
build, the plugin and the report work as for the first). Submissions are the blind corpus's (written elsewhere), so
that the batch does not flag a copy of the reference."""

import csv
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from grader.batch import runner
from tests.integration.test_config import _run_autograder

ROOT = Path(__file__).resolve().parents[2]
STRAIGHT = ROOT / "tests" / "blind_lm" / "correct" / "straight"
EINSUM = ROOT / "tests" / "blind_lm" / "correct" / "einsum"
TASKS = '["rmsnorm", "swiglu"]'


def gradekit(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def mean_subtracted(folder):
    """``folder`` with its RMSNorm centring the input first (rmsnorm.mean_subtracted)."""
    source = (folder / "norm.py").read_text(encoding="utf-8")
    head = "    def forward(self, x):\n"
    assert source.count(head) == 1
    (folder / "norm.py").write_text(
        source.replace(head, head + "        x = x - x.mean(-1, keepdim=True)\n"), encoding="utf-8"
    )
    return folder


def test_cli_grades_it_by_name_and_by_the_course_configuration(tmp_path):
    by_name = gradekit(
        "check", str(STRAIGHT), "--assignment", "decoder_lm", "--profile", "quick", "--tasks", "rmsnorm,swiglu"
    )
    assert by_name.returncode == 0, by_name.stdout[-2000:] + by_name.stderr[-2000:]
    assert "rmsnorm" in by_name.stdout and "Score: 15 / 15" in by_name.stdout
    (tmp_path / "gradekit.toml").write_text(f'assignment = "decoder_lm"\ntasks = {TASKS}\n', encoding="utf-8")
    sub = mean_subtracted(Path(shutil.copytree(STRAIGHT, tmp_path / "sub")))
    by_config = gradekit("check", str(sub), "--config", str(tmp_path / "gradekit.toml"), "--profile", "quick")
    assert by_config.returncode == 1, by_config.stdout[-2000:] + by_config.stderr[-2000:]
    assert "✗ rmsnorm" in by_config.stdout and "✓ swiglu" in by_config.stdout and "Looks like" in by_config.stdout
    # The rerun line names the assignment as a user types it, and runs as printed: that one check fails again.
    line = next(
        x.split("reproduce: ", 1)[1] for x in by_config.stdout.splitlines() if "--only rmsnorm.equivalence" in x
    )
    assert "--assignment assignments." not in line
    again = subprocess.run(shlex.split(line), capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert again.returncode == 1 and "rmsnorm.equivalence" in again.stdout and "swiglu" not in again.stdout


def test_batch_gradebook_has_the_assignments_tasks(tmp_path):
    cls = tmp_path / "class"
    shutil.copytree(STRAIGHT, cls / "ada")
    mean_subtracted(Path(shutil.copytree(EINSUM, cls / "bo")))
    config = tmp_path / "gradekit.toml"
    config.write_text(f'assignment = "decoder_lm"\ntasks = {TASKS}\n', encoding="utf-8")
    out = tmp_path / "out"
    runner.batch(submissions=cls, out=out, jobs=1, profile="quick", config=config)
    text = (out / "gradebook.csv").read_text(encoding="utf-8")
    rows = {r["student_id"]: r for r in csv.DictReader(text.lstrip("\ufeff").splitlines())}
    assert list(rows["ada"])[:6] == ["student_id", "total", "max", "status", "rmsnorm", "swiglu"]
    assert rows["ada"]["total"] == rows["ada"]["max"] == "15" and rows["ada"]["status"] == "ok"
    assert float(rows["bo"]["rmsnorm"]) < 9 and rows["bo"]["swiglu"] == "6"
    assert (out / "bo" / "report.html").is_file() and (out / "index.html").is_file()


def test_gradescope_autograder_of_the_second_assignment(tmp_path):
    from grader.batch.gradescope_build import build

    archive = build(out=tmp_path / "autograder.zip", assignment="decoder_lm", tasks=("rmsnorm",), profile="quick")
    names, settings, data = _run_autograder(archive, STRAIGHT, tmp_path)
    assert {
        "src/assignments/decoder_lm/__init__.py",
        "src/assignments/decoder_lm/reference/norm.py",
        "src/assignments/decoder_lm/checks/rmsnorm.py",
    } <= names
    assert settings["assignment"] == "assignments.decoder_lm" and settings["tasks"] == ["rmsnorm"]
    assert data["score"] == 9
    checks = [t for t in data["tests"] if t["tags"] != ["copy_of_reference"]]
    assert checks and all(t["name"].startswith("rmsnorm.") and t["status"] == "passed" for t in checks)


def test_the_pytest_plugin_grades_it(tmp_path):
    sub = mean_subtracted(Path(shutil.copytree(STRAIGHT, tmp_path / "sub")))
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "grader.plugin",
            "-p",
            "no:cacheprovider",
            "--submission",
            str(sub),
            "--gradekit-assignment",
            "decoder_lm",
            "--gradekit-profile",
            "quick",
            "-m",
            "rmsnorm or swiglu",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert (
        "sub::rmsnorm.equivalence" in proc.stdout
        and "sub::swiglu.equivalence" not in proc.stdout.split("short test summary")[-1]
    )
    assert "Looks like" in proc.stdout
