"""Every command ``gradekit practice`` and ``gradekit quiz`` print runs as printed: it starts the way the user started
gradekit (``grader.cli.invoked_as``, as ``check``'s rerun lines do) and keeps what was asked for (``--lang zh``, a
workspace's ``--dir``, an ``--assignment``). Someone who followed the README runs ``scripts/gradekit`` from the clone
and has no ``gradekit`` on the PATH; a bare ``gradekit ...`` fails for them, and one without ``--lang zh`` switches a
Chinese session back to English."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from grader.assignment import load
from grader.bugs.catalogue import Catalogue, apply
from grader.cli import invoked_as
from grader.messages import text
from grader.practice import quiz
from tests.practice_helpers import gradekit

pytestmark = pytest.mark.usefixtures("home")  # drills and quizzes are recorded: a fresh history per test

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = "scripts/gradekit"
"""How the README has users start gradekit (the script sets ``GRADEKIT_PROG`` to it)."""
COMMAND = re.compile(r"([A-Za-z0-9_./~'-]*gradekit|\S+ -m grader)\s+(?:practice|quiz)\b(?:(?! {2})[^`\n，。）()（,])*")
"""A printed command: from the word that starts gradekit (the launcher, or a bare ``gradekit``) to where the sentence
around it goes on (a closing quote or bracket, a comma, a full stop, two spaces, the end of the line)."""


@pytest.fixture(autouse=True)
def started_by_the_script(monkeypatch):
    """As ``scripts/gradekit`` starts gradekit, from the root of the clone."""
    monkeypatch.setenv("GRADEKIT_PROG", LAUNCHER)
    monkeypatch.chdir(ROOT)


def commands(out, lang, least=1):
    """The commands printed in ``out``, each checked: it starts with the launcher ``check`` uses and carries
    ``--lang zh`` exactly when the session is in Chinese; no quoted command is split over two lines."""
    found = [m.group(0).rstrip(" .") for m in COMMAND.finditer(out)]
    assert len(found) >= least, out
    for line in found:
        assert line.startswith(invoked_as() + " "), line
        assert ("--lang zh" in line) == (lang == "zh"), line
    for line in out.splitlines():
        assert line.count("`") % 2 == 0, line
    return found


def as_printed(line, home, stdin=""):
    """Run a printed command line in a shell from the root of the clone, as a user who has no ``gradekit`` on the
    PATH pastes it; ``(exit code, stdout + stderr)``."""
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "gradekit").exists()]
    env = {k: v for k, v in os.environ.items() if k != "GRADEKIT_PROG"}
    env.update(PATH=os.pathsep.join(path), GRADEKIT_HOME=str(home))
    run = subprocess.run(
        ["bash", "-c", line], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, timeout=600
    )
    return run.returncode, run.stdout + run.stderr


def run(capsys, *argv):
    """``gradekit ARGV`` in this process: ``(exit code, stdout + stderr)``."""
    code, out, err = gradekit(capsys, *argv)
    return code, out + err


def write_bug(ws):
    """The reference's masks with a catalogued mistake in the workspace ``ws``: its checks fail."""
    a = load()
    bug = Catalogue(a).by_id["masks.padding_inverted"]
    (ws / "masks.py").write_text(apply(bug, (a.reference / "masks.py").read_text()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_practice_prints_commands_that_run_as_printed(lang, tmp_path, capsys, home):
    opts = ["--lang", "zh"] if lang == "zh" else []
    code, out = run(capsys, "practice", "--check", *opts)  # nothing started yet: the error says how to start
    assert code == 2
    commands(out, lang)
    code, out = run(capsys, "practice", *opts)
    assert code == 0
    commands(out, lang, least=3)  # start, then, quiz
    code, out = run(capsys, "practice", "--history", *opts)
    assert code == 0
    commands(out, lang, least=2)  # start one, or a quiz
    code, out = run(capsys, "practice", "--only", "masks.padding", *opts)
    assert code == 2
    commands(out, lang)

    ws = tmp_path / "ws"
    code, out = run(capsys, "practice", "masks", "--minutes", "5", "--dir", str(ws), *opts)
    assert code == 0
    [check, _hint] = commands(out, lang, least=2)
    assert " --check" in check
    write_bug(ws)
    code, out = as_printed(check, home)  # the next step, as printed: grades the drill started last
    assert code == 1, out
    assert text("practice.check.failed", lang) in out

    code, out = run(capsys, "practice", "--check", "--dir", str(ws))  # in the drill's own language
    assert code == 1
    reruns = [line for line in commands(out, lang, least=2) if " --only " in line]
    assert reruns and all(f"--dir {ws}" in line for line in reruns), reruns
    only = reruns[0].split(" --only ", 1)[1].split()[0]
    code, out = run(capsys, "practice", "--check", "--dir", str(ws), "--only", only)
    assert code == 1 and text("practice.check.partial", lang)[:8] in out
    commands(out, lang, least=2)  # the rerun line, and the whole drill's check
    for _ in range(2):
        code, out = run(capsys, "practice", "--hint", "--dir", str(ws))
        assert code == 0
    code, out = run(capsys, "practice", "--hint", "--dir", str(ws))  # every level shown: check again
    assert code == 0
    [again] = commands(out, lang)
    assert f"--dir {ws}" in again

    pair = tmp_path / "pair"
    assert run(capsys, "practice", "attention20", "--dir", str(pair), *opts)[0] == 0
    code, out = run(capsys, "practice", "--hint", "--dir", str(pair))  # hints left for the other task
    assert code == 0
    [others] = commands(out, lang)
    assert f"--dir {pair}" in others and " --hint " in others


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_quiz_prints_commands_that_run_as_printed(lang, capsys, home):
    opts = ["--lang", "zh"] if lang == "zh" else []
    _, asked = quiz.draw(load(), n=3, seed=5)
    answers = [quiz.show_answer(a) for a in asked]
    code, out = run(capsys, "quiz", "--n", "3", "--seed", "5", "--answers", ",".join(answers), *opts)
    assert code == 0
    replay, history = commands(out, lang, least=2)  # the same questions again; the history
    assert " --seed 5" in replay and "--history" in history
    code, out = as_printed(replay, home, stdin="\n".join(answers) + "\n")  # the same questions, answered again
    assert code == 0, out
    assert text("quiz.score", lang, right=3, total=3, pct="100") in out
    code, out = run(capsys, "practice", "--history", *opts)
    assert code == 0
    assert all(" --seed 5" in line for line in commands(out, lang, least=2))  # each quiz's replay

    _, asked = quiz.draw(load("decoder_lm"), n=2, seed=1)
    code, out = run(
        capsys,
        "quiz",
        "--assignment",
        "decoder_lm",
        "--n",
        "2",
        "--seed",
        "1",
        "--answers",
        ",".join(quiz.show_answer(a) for a in asked),
        *opts,
    )
    assert code == 0
    [replay, _] = commands(out, lang, least=2)
    assert "--assignment decoder_lm" in replay


def test_a_quiz_saved_by_an_older_gradekit_is_replayed_as_the_user_runs_it_now(capsys):
    from grader.practice.history import History

    with History() as h:  # an older history kept the command, bare ``gradekit`` and all
        h.record_quiz(
            taken=0.0,
            assignment="assignments.transformer",
            seed=21,
            topics=(),
            lang="en",
            replay="gradekit quiz --n 4 --seed 21",
            answers=[("q", "masks", "a", True)],
        )
    code, out = run(capsys, "practice", "--history", "--lang", "zh")
    assert code == 0
    assert commands(out, "zh") == [f"{invoked_as()} quiz --n 4 --seed 21 --lang zh"]
