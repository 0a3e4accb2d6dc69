"""``pytest --submission PATH`` runs the same checks as pytest items, marked by task id, and says what the CLI says.

Most tests run pytest in this process on a folder of its own (``pytester``): the submission is ``sub/`` there, so
node ids read ``sub::<check id>``. The first ones run it as a student does, from the clone, in a subprocess.
"""

import os
import re
import shlex
import subprocess
import sys

import pytest

from grader import api, cli
from grader.bugs.catalogue import Catalogue
from grader.engine import select_checks
from grader.messages import text
from tests.conftest import ROOT, SOLUTION_ROOT, TRANSFORMER, edited_copy

pytest_plugins = ["pytester"]

QUICK = ("--gradekit-profile", "quick")
DIAGONAL = "masks.causal_blocks_diagonal"  # a catalogued mistake of a quick task: masks.causal and masks.target fail
NO_SCALE = "sdpa.no_scale"  # beneath mha: the mha checks over the student's own sdpa fail, and are charged in sdpa


@pytest.fixture(autouse=True, scope="module")
def _graded_once_before_any_run():
    """pytest run in this process (``pytester``) forgets, when it ends, the modules imported meanwhile, and some
    cannot be imported twice in one process: the checks register themselves, and the compiler torch imports on
    first use registers an operator library. A grading here, before any run, imports them for good."""
    api.check(path=SOLUTION_ROOT, tasks=("masks",), profile="quick")


def run_pytest(*args):
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "grader.plugin", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )


def test_solution_passes_as_pytest_items():
    proc = run_pytest("--submission", "solution", *QUICK, "-m", "masks or param_count", "-v")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "solution::masks.padding PASSED" in proc.stdout
    assert "5 passed" in proc.stdout


def test_failures_explain_and_give_the_reproduce_command(make_submission):
    sub = make_submission({"masks.py": (".tril()", ".triu()")})
    proc = run_pytest("--submission", str(sub), *QUICK, "-m", "masks")
    assert proc.returncode == 1
    assert "2 failed" in proc.stdout and "2 passed" in proc.stdout
    assert "causal_mask: " in proc.stdout and "differ from the expected values" in proc.stdout
    assert f"--submission {sub} -p grader.plugin --gradekit-profile quick {sub}::masks.causal" in proc.stdout


def test_missing_submission_is_a_usage_error(tmp_path):
    proc = run_pytest("--submission", str(tmp_path / "nope"))
    assert proc.returncode == 4
    assert "does not exist" in proc.stderr


# -- in this process, on a folder of its own -------------------------------------------------------------------
def mutant(pytester, bug_id, name="sub"):
    """A submission ``name`` in the pytester folder: the reference with one catalogued mistake."""
    catalogue = Catalogue(TRANSFORMER)
    return catalogue.write_mutant(catalogue.by_id[bug_id], pytester.path / name)


def cli_output(capsys, sub, *args):
    """What ``gradekit check`` prints for the submission (in this process)."""
    capsys.readouterr()
    cli.main(["check", str(sub), "--profile", "quick", "--quiet", *args])
    return capsys.readouterr().out


def under(output, check_id):
    """The lines the CLI prints under one check (its status line left out), without indentation."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s+\S+\s+{re.escape(check_id)}\s+\(", line))
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith(" " * 12):
            break
        block.append(line.strip())
    return block


def rerun_commands(output):
    return [line.split(": ", 1)[1] for line in output.splitlines() if line.startswith("reproduce: ")]


def outcomes(result):
    """``{node id: PASSED/FAILED/...}`` from a ``-v`` run."""
    found = {}
    for line in result.stdout.lines:
        m = re.match(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED)", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def test_a_failure_shows_what_the_cli_shows_for_the_same_check(pytester, capsys):
    sub = mutant(pytester, DIAGONAL)
    cli_text = cli_output(capsys, sub, "--tasks", "masks")
    result = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks")
    out = result.stdout.str()
    result.assert_outcomes(passed=2, failed=2)
    for check_id in ("masks.causal", "masks.target"):
        said = [line for line in under(cli_text, check_id) if not line.startswith("reproduce: ")]
        assert said, cli_text
        for line in said:  # message, example in words, "Looks like" (once), hint: as the CLI prints them
            assert line in out.splitlines(), (line, out)
    assert "Looks like: the causal mask also blocks the diagonal" in out and "Hint: Keep the diagonal" in out
    assert out.count("Looks like: the causal mask also blocks the diagonal") == 1  # said once, then pointed back to
    assert "{'config'" not in out and "Minimal failing example: configuration: size=1" in out  # in words, no dict
    # the one-line reason in pytest's short summary is the check's sentence
    assert re.search(r"FAILED sub::masks.causal - causal_mask: 1 of 1 entries differ", out), out


def test_tb_line_gives_the_reason_alone(pytester):
    mutant(pytester, DIAGONAL)
    out = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks", "--tb=line").stdout.str()
    assert "sub::masks.causal: causal_mask: 1 of 1 entries differ" in out
    assert "Looks like" not in out and "reproduce:" not in out


def test_a_banned_api_fails_its_task_s_checks_and_says_where_once(pytester):
    softmax = "    weights = scores.softmax(dim=-1)"
    banned = "    torch.nn.functional.scaled_dot_product_attention(query, key, value)\n"
    edited_copy(pytester.path / "sub", {"attention.py": (softmax, banned + softmax)})
    n = len([s for s in select_checks(TRANSFORMER, profile="quick") if s.task == "sdpa"])
    result = pytester.runpytest("--submission", "sub", *QUICK, "-m", "sdpa")
    result.assert_outcomes(failed=n)
    # pytest's short summary repeats each failure's first line, cut to the terminal's width unless CI is set
    out = "\n".join(line for line in result.stdout.lines if not line.startswith("FAILED "))
    assert out.count("use --gradekit-allow-banned to ignore") == n + 1  # under each failure, and the task's line
    assert out.count("banned API torch.nn.functional.scaled_dot_product_attention at attention.py:") == 2  # + summary
    allowed = pytester.runpytest("--submission", "sub", *QUICK, "-m", "sdpa", "--gradekit-allow-banned")
    allowed.assert_outcomes(passed=n)


def test_the_language_option_gives_the_cli_s_chinese(pytester, capsys):
    sub = mutant(pytester, DIAGONAL)
    cli_text = cli_output(capsys, sub, "--tasks", "masks", "--lang", "zh")
    out = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks", "--gradekit-lang", "zh").stdout.str()
    said = [line for line in under(cli_text, "masks.causal") if not line.startswith("复现命令")]
    assert any(line.startswith("看起来像是") for line in said), cli_text
    for line in said:
        assert line in out.splitlines(), (line, out)
    score = next(line for line in cli_text.splitlines() if line.startswith("得分: ")).split("(")[0].rstrip()
    assert "Looks like" not in out and score in out


def test_with_v_the_failure_shows_the_student_s_traceback(pytester):
    edited_copy(pytester.path / "sub", {"masks.py": ("device=device).tril()", "device=device).tril(bogus=1)")})
    quiet = pytester.runpytest("--submission", "sub", *QUICK, "sub::masks.causal").stdout.str()
    assert "TypeError" in quiet and "Traceback (your files only)" not in quiet
    loud = pytester.runpytest("--submission", "sub", *QUICK, "sub::masks.causal", "-v").stdout.str()
    assert "Traceback (your files only):" in loud and "masks.py" in loud and "tril(bogus=1)" in loud


def test_a_defect_beneath_is_charged_once_and_named_as_in_the_cli(pytester, capsys):
    sub = mutant(pytester, NO_SCALE)
    cli_text = cli_output(capsys, sub, "--tasks", "sdpa,mha")
    graded = api.check(path=sub, tasks=("sdpa", "mha"), profile="quick")
    charged = {c.id for t in graded.tasks for c in t.checks if c.notes and c.status == "passed"}
    failing = {c.id for t in graded.tasks for c in t.checks if c.status != "passed"}
    assert charged and all(i.startswith("mha.") for i in charged) and failing
    result = pytester.runpytest("--submission", "sub", *QUICK, "-m", "sdpa or mha", "-v")
    seen = outcomes(result)
    assert {i.split("::")[1] for i, o in seen.items() if o == "FAILED"} == failing  # each failure once, in sdpa
    assert all(seen[f"sub::{i}"] == "PASSED" for i in charged)  # the mha checks keep their points
    out = result.stdout.str()
    assert "the defect is in sdpa" in out.replace("`", "")  # and the summary says why, as the CLI does
    assert f"Score: {graded.score:g} / {graded.max_score:g}" in out
    said = [line for line in under(cli_text, "sdpa.equivalence") if not line.startswith("reproduce: ")]
    assert any(line.startswith("Looks like: ") for line in said), cli_text  # the diagnosis, replayed as in the CLI
    for line in said:
        assert line in out.splitlines(), (line, out)


def test_the_summary_gives_points_per_task_and_the_total(pytester, capsys):
    sub = mutant(pytester, DIAGONAL)
    edited_copy(pytester.path / "good")
    cli_lines = cli_output(capsys, sub, "--tasks", "masks,param_count").splitlines()
    out = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks or param_count").stdout.str()
    section = out[out.index("gradekit") :]
    for task_line in (line for line in cli_lines if line.startswith(("✓", "✗"))):
        assert task_line.rstrip() in section.splitlines(), (task_line, section)
    score = next(line for line in cli_lines if line.startswith("Score: ")).split("(")[0].rstrip()
    assert "✗ masks" in section and "✓ param_count" in section and score in section
    good = pytester.runpytest("--submission", "good", *QUICK, "-m", "masks").stdout.str()
    assert "✓ masks" in good and "Score: 10 / 10" in good and "✗" not in good


def test_collect_only_reports_the_items_it_lists(pytester):
    edited_copy(pytester.path / "sub")
    n = len(select_checks(TRANSFORMER, profile="quick"))
    result = pytester.runpytest("--submission", "sub", *QUICK, "--collect-only", "-q")
    out = result.stdout.str()
    assert result.ret == 0 and f"{n} tests collected" in out and "no tests collected" not in out
    assert len([line for line in result.stdout.lines if line.startswith("sub::")]) == n
    some = pytester.runpytest("--submission", "sub", *QUICK, "--collect-only", "-q", "-m", "masks").stdout.str()
    assert f"4/{n} tests collected ({n - 4} deselected)" in some


def test_node_ids_run_as_printed(pytester):
    mutant(pytester, DIAGONAL)
    first = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks", "-v")
    failed = [i for i, o in outcomes(first).items() if o == "FAILED"]
    assert failed == ["sub::masks.causal", "sub::masks.target"]
    one = pytester.runpytest("--submission", "sub", *QUICK, failed[0], "-v")
    one.assert_outcomes(failed=1)
    assert "sub::masks.causal FAILED" in one.stdout.str()
    two = pytester.runpytest("--submission", "sub", *QUICK, *failed)
    two.assert_outcomes(failed=2)
    # the rerun line under a failure is a command that runs from here, as printed
    command = shlex.split(rerun_commands(first.stdout.str())[0])
    assert command[-2:] == ["-v", "sub::masks.causal"]  # -v kept: it shows the traceback
    again = pytester.runpytest(*command[command.index("--submission") :])
    again.assert_outcomes(failed=1)
    assert "sub::masks.causal FAILED" in again.stdout.str()


def test_k_x_and_markers_select_as_usual(pytester):
    mutant(pytester, DIAGONAL)
    n = len(select_checks(TRANSFORMER, profile="quick"))
    one = pytester.runpytest("--submission", "sub", *QUICK, "-k", "masks.causal")
    one.assert_outcomes(failed=1, deselected=n - 1)
    two = pytester.runpytest("--submission", "sub", *QUICK, "-k", "masks and not causal and not target")
    two.assert_outcomes(passed=2, deselected=n - 2)
    stopped = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks", "-x")
    stopped.assert_outcomes(passed=1, failed=1, deselected=n - 4)
    assert "stopping after 1 failures" in stopped.stdout.str()


def test_last_failed_and_failed_first(pytester):
    mutant(pytester, DIAGONAL)
    pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks").assert_outcomes(passed=2, failed=2)
    last = pytester.runpytest("--submission", "sub", *QUICK, "--lf", "-v")
    last.assert_outcomes(failed=2, deselected=len(select_checks(TRANSFORMER, profile="quick")) - 2)
    assert set(outcomes(last)) == {"sub::masks.causal", "sub::masks.target"}
    first = pytester.runpytest("--submission", "sub", *QUICK, "--ff", "-m", "masks", "-v")
    assert list(outcomes(first))[:2] == ["sub::masks.causal", "sub::masks.target"]


def test_a_submission_outside_the_rootdir_has_runnable_node_ids(pytester):
    mutant(pytester, DIAGONAL, name="elsewhere/sub")
    os.chdir(pytester.mkdir("course"))  # pytester goes back to its folder afterwards
    first = pytester.runpytest("--rootdir", ".", "--submission", "../elsewhere/sub", *QUICK, "-m", "masks", "-v")
    assert f"rootdir: {pytester.path / 'course'}" in first.stdout.str()
    failed = [i for i, o in outcomes(first).items() if o == "FAILED"]
    assert len(failed) == 2 and all(i.endswith(("::masks.causal", "::masks.target")) for i in failed), failed
    again = pytester.runpytest("--rootdir", ".", "--submission", "../elsewhere/sub", *QUICK, failed[0])
    again.assert_outcomes(failed=1)


def test_arguments_that_name_no_check_are_usage_errors(pytester):
    edited_copy(pytester.path / "sub")
    pytester.mkdir("tests")
    unknown = pytester.runpytest("--submission", "sub", "sub::masks.nope")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    assert "masks.nope" in unknown.stderr.str() and "--collect-only" in unknown.stderr.str()
    elsewhere = pytester.runpytest("--submission", "sub", "tests")
    assert elsewhere.ret == pytest.ExitCode.USAGE_ERROR and "sub::<check id>" in elsewhere.stderr.str()


def test_the_course_configuration_applies_as_in_the_cli(pytester, capsys):
    sub = edited_copy(pytester.path / "sub")
    course = '[points]\nmasks = 20\n\n[visibility]\n"masks.device" = "hidden"\n'
    pytester.path.joinpath("gradekit.toml").write_text(course)
    listed = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks", "--collect-only", "-q").stdout.lines
    assert [line for line in listed if line.startswith("sub::")] == [
        "sub::masks.padding",
        "sub::masks.causal",
        "sub::masks.target",
    ]
    cli_lines = [line.rstrip() for line in cli_output(capsys, sub, "--tasks", "masks").splitlines()]
    lines = [line.rstrip() for line in pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks").stdout.lines]
    said = [line for line in cli_lines if line.startswith(("✓ masks", "All public checks passed (1 hidden"))]
    assert len(said) == 2 and all(line in lines for line in said), (said, lines)  # the course's points, as the CLI
    score = next(line for line in cli_lines if line.startswith("Score: "))
    assert any(line.startswith(score.split("(")[0]) for line in lines)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_code_not_written_yet_is_reported_to_do_as_in_the_cli_and_still_fails_the_run(pytester, lang):
    edited_copy(
        pytester.path / "sub",
        {
            "masks.py": (
                "    keep = torch.ones(size, size, dtype=torch.bool, device=device).tril()  # [L, L]\n"
                "    return keep.unsqueeze(0).unsqueeze(0)  # [1, 1, L, L]\n",
                "    raise NotImplementedError\n",
            )
        },
    )
    result = pytester.runpytest("--submission", "sub", *QUICK, "-m", "masks", "-v", "--gradekit-lang", lang)
    out = result.stdout.str()
    word = text("ui.todo_word", lang)
    assert re.search(rf"sub::masks\.causal {re.escape(word.upper())}", out), out
    assert not re.search(r"sub::masks\.causal FAILED", out), out
    assert re.search(rf"\b3 {re.escape(word)}\b", out.splitlines()[-1]) and "1 passed" in out.splitlines()[-1], out
    assert result.ret == pytest.ExitCode.TESTS_FAILED
