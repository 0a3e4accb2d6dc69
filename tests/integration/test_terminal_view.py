"""What a student reads in the terminal: runnable rerun lines, the example, their own traceback, each thing once."""

import os
import shlex
import subprocess
import sys

import pytest

from grader import api
from grader.views import terminal
from tests.conftest import ROOT, SOLUTION_ROOT

FILL_ZERO = {"attention.py": ('masked_fill(~mask, float("-inf"))', "masked_fill(~mask, 0.0)")}
RAISES = {"norm.py": ("return (x - mean) / torch.sqrt", "return (x.mean(bogus=1) - mean) / torch.sqrt")}


def _run(args, env=None, cwd=ROOT):
    env = dict(os.environ if env is None else env)
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env)


def _rerun_lines(stdout):
    return [line.split(": ", 1)[1] for line in stdout.splitlines() if line.strip().startswith("reproduce: ")]


def test_the_rerun_line_runs_as_printed_and_keeps_the_options_given(make_submission, tmp_path):
    sub = make_submission(FILL_ZERO)
    env = dict(os.environ, GRADEKIT_PROG="scripts/gradekit")  # what scripts/gradekit sets: the way it was called
    done = _run([sys.executable, "-m", "grader", "check", str(sub), "--tasks", "sdpa", "--profile", "quick"], env)
    lines = _rerun_lines(done.stdout)
    assert lines and all(line.startswith("scripts/gradekit check ") for line in lines), done.stdout
    assert all("--profile quick" in line and "--lang" not in line for line in lines)
    # as printed, from where the student stands: it reruns that one check, with the same verdict
    first = shlex.split(lines[0])
    assert first[:3] == ["scripts/gradekit", "check", str(sub)]
    again = _run([str(ROOT / "scripts" / "gradekit"), *first[1:]], env)
    only = first[first.index("--only") + 1]
    assert again.returncode == 1 and only in again.stdout and "1 of 1 checks did not pass." in again.stdout
    zh = _run([sys.executable, "-m", "grader", "check", str(sub), "--tasks", "sdpa", "--lang", "zh"])
    assert all(
        "--lang zh" in line and "--profile" not in line
        for line in (ln.split(": ", 1)[1] for ln in zh.stdout.splitlines() if "复现命令" in ln)
    )


def test_without_the_wrapper_the_rerun_line_names_this_interpreter(make_submission):
    sub = make_submission(FILL_ZERO)
    env = {k: v for k, v in os.environ.items() if k != "GRADEKIT_PROG"}
    done = _run(
        [sys.executable, "-m", "grader", "check", str(sub), "--only", "sdpa.weights", "--profile", "quick"], env
    )
    line = _rerun_lines(done.stdout)[0]
    words = shlex.split(line)
    assert os.path.realpath(os.path.join(ROOT, words[0])) == os.path.realpath(sys.executable)
    assert words[1:3] == ["-m", "grader"]


def test_a_failure_shows_its_example_and_a_diagnosis_once(make_submission):
    result = api.check(path=make_submission(FILL_ZERO), tasks=["sdpa"], profile="quick")
    out = terminal.summary(result)
    assert "input shapes: query [" in out and "configuration: mask=" in out
    assert "lead=" not in out  # jargon: the leading dimensions show in the shapes
    assert out.count("Looks like: blocked scores are set to 0") == 1
    assert out.count("Hint:") == 1
    failing = [c.id for t in result.tasks for c in t.checks if c.status != "passed"]
    assert len(failing) >= 2 and out.count(f"the same mistake as under {failing[0]} above.") == len(failing) - 1
    assert "differs" not in out and "entries differ from the expected values" in out


def test_a_runtime_error_is_told_once_and_its_traceback_is_the_students_own(make_submission):
    result = api.check(path=make_submission(RAISES), tasks=["layernorm"], profile="quick")
    quiet, verbose = terminal.summary(result), terminal.summary(result, verbose=True)
    assert "Traceback" not in quiet and "norm.py" in quiet  # the line that raised, in the sentence
    assert "Traceback (your files only):" in verbose and 'norm.py", line' in verbose
    assert "grader/" not in verbose and "probes.py" not in verbose  # none of the grader's frames
    errors = [c.id for t in result.tasks for c in t.checks if c.status == "error"]
    assert len(errors) >= 2
    assert verbose.count("Traceback") == 1 and quiet.count("your code raised") == 1
    assert quiet.count(f"the same error as under {errors[0]} above.") == len(errors) - 1


def test_code_not_written_yet_is_not_an_error():
    result = api.check(path=ROOT / "skeleton", tasks=["sdpa", "masks"], profile="quick")
    out = terminal.summary(result)
    assert "did not pass" not in out and "raised" not in out
    assert "Checks waiting for code not written yet:" in out
    assert "the same examples every run" in out and "derandomized" not in out
    zh = terminal.summary(result, lang="zh")
    assert "等待尚未编写的代码的检查" in zh


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_correct_submission_reads_all_passed(lang):
    out = terminal.summary(api.check(path=SOLUTION_ROOT, tasks=["masks"], profile="quick"), lang=lang)
    assert ("All checks passed." if lang == "en" else "全部") in out
    assert "reproduce" not in out and "Looks like" not in out
