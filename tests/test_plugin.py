"""``pytest --submission PATH`` runs the same checks as pytest items, marked by task id."""

import os
import subprocess
import sys

from tests.conftest import ROOT


def run_pytest(*args):
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "grader.plugin", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


def test_solution_passes_as_pytest_items():
    proc = run_pytest("--submission", "solution", "--gradekit-profile", "quick", "-m", "masks or param_count", "-v")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "masks.padding PASSED" in proc.stdout.replace("::", " ") or "masks.padding" in proc.stdout
    assert "5 passed" in proc.stdout


def test_failures_explain_and_give_the_reproduce_command(make_submission):
    sub = make_submission({"masks.py": (".tril()", ".triu()")})
    proc = run_pytest("--submission", str(sub), "--gradekit-profile", "quick", "-m", "masks")
    assert proc.returncode == 1
    assert "2 failed" in proc.stdout and "2 passed" in proc.stdout
    assert "causal_mask differs at" in proc.stdout
    assert f"gradekit check {sub} --only masks.causal" in proc.stdout


def test_missing_submission_is_a_usage_error(tmp_path):
    proc = run_pytest("--submission", str(tmp_path / "nope"))
    assert proc.returncode == 4
    assert "does not exist" in proc.stderr
