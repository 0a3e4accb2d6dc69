"""``gradekit start DEST`` in the full kit: a student's folder holding exactly the assignment's skeleton files and
the contract page (``CONTRACT.md``), or the starter notebook; never over a student's work; and the commands it prints
run as printed, started the way gradekit was (``scripts/gradekit``, as the README has users start it), grading the
copy as the skeleton is graded. The student kits (unzipped, installed): tests/corpus/test_kit_build.py."""

import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from grader import api
from grader.assignment import load
from grader.cli import main
from grader.messages import text
from grader.notebook_starter import cells

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = "scripts/gradekit"
ASSIGNMENTS = ("transformer", pytest.param("decoder_lm", marks=pytest.mark.corpus))
"""Both assignments; the second's commands run as printed in the corpus tier, the first's in the inner loop."""
SCORE = re.compile(r"^(?:Score|得分): (\S+) / (\S+)", re.M)


@pytest.fixture(autouse=True)
def started_by_the_script(monkeypatch):
    """As ``scripts/gradekit`` starts gradekit, from the root of the clone."""
    monkeypatch.setenv("GRADEKIT_PROG", LAUNCHER)
    monkeypatch.chdir(ROOT)


def start(capsys, *argv):
    """``gradekit start ARGV`` in this process: ``(exit code, stdout, stderr)``."""
    code = main(["start", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def printed(out):
    """The commands ``start`` printed: its lines indented by four spaces."""
    return [line[4:] for line in out.splitlines() if line.startswith("    ") and not line.startswith("     ")]


def shell(line, **kwargs):
    """Run a printed command line in a shell from the root of the clone, as a user pastes it."""
    env = {k: v for k, v in os.environ.items() if k != "GRADEKIT_PROG"}
    return subprocess.run(["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, **kwargs)


def _as_in_a_terminal():
    """Ctrl-C stops a command a user started in a terminal. A test run started in the background of a shell without
    job control has SIGINT ignored, and its children inherit that (Python then installs no handler for it): restore
    the default, so the watch is stopped as a user stops it whatever started the tests."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def skeleton_files(a):
    """``{relative path: bytes}`` of the assignment's skeleton folder (caches left out)."""
    base = Path(a.skeleton)
    return {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in base.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def folder_files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}


def option(name):
    return [] if name == "transformer" else ["--assignment", name]


def score(out):
    found = SCORE.search(out)
    assert found, out
    return float(found[1]), float(found[2])


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_start_writes_the_skeleton_and_the_contract_and_its_commands_run_as_printed(name, tmp_path, capsys):
    a = load(name)
    dest = tmp_path / "my_work"
    code, out, err = start(capsys, dest, *option(name))
    assert code == 0, out + err
    assert folder_files(dest) == {**skeleton_files(a), "CONTRACT.md": Path(a.contract).read_bytes()}
    assert set(a.contract_files) <= set(folder_files(dest))
    check, watch = printed(out)
    extra = "".join(f" {w}" for w in option(name))
    assert check == f"{LAUNCHER} check {dest} --profile quick{extra}"
    assert watch == f"{LAUNCHER} watch {dest}{extra}"
    # the check, as printed: the score the skeleton gets
    expected = api.check(path=a.skeleton, assignment=a, profile="quick")
    graded = shell(check, timeout=600)
    assert graded.returncode == 1 and "Traceback" not in graded.stderr, graded.stdout + graded.stderr
    assert score(graded.stdout) == (expected.score, expected.max_score)
    # the watch, as printed: it grades the folder once, then waits for a save until Ctrl-C
    env = {k: v for k, v in os.environ.items() if k != "GRADEKIT_PROG"}
    proc = subprocess.Popen(
        ["bash", "-c", "exec " + watch],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_as_in_a_terminal,
    )
    try:
        seen = ""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not SCORE.search(seen):
            line = proc.stdout.readline()
            if not line:
                break
            seen += line
        assert score(seen) == (expected.score, expected.max_score), seen
        os.killpg(proc.pid, signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0 and "Traceback" not in rest, seen + rest


def test_start_says_the_commands_in_the_language_asked_for(tmp_path, capsys):
    dest = tmp_path / "我的 作业"
    code, out, err = start(capsys, dest, "--assignment", "decoder_lm", "--lang", "zh")
    assert code == 0, out + err
    assert text("start.fill_in", "zh") in out and text("start.next_watch", "zh") in out
    quoted = shlex.quote(str(dest))  # a folder name with a space, quoted for the shell
    assert printed(out) == [
        f"{LAUNCHER} check {quoted} --profile quick --assignment decoder_lm --lang zh",
        f"{LAUNCHER} watch {quoted} --assignment decoder_lm --lang zh",
    ]
    assert shlex.split(printed(out)[0])[2] == str(dest)


def test_an_empty_folder_is_started_and_a_folder_with_work_is_refused_untouched(tmp_path, capsys):
    a = load("transformer")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert start(capsys, empty)[0] == 0
    assert set(folder_files(empty)) == {*skeleton_files(a), "CONTRACT.md"}
    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "attention.py").write_text("# my own attention\n")
    (work / "notes" / "todo.txt").write_text("masks\n")
    before = folder_files(work)
    for lang in ("en", "zh"):
        code, out, err = start(capsys, work, "--lang", lang)
        assert code == 2 and text("start.refused", lang, path=work) in err and not out, out + err
        assert folder_files(work) == before
    # a file in the way, or a notebook that exists, is refused too
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    hw = tmp_path / "hw.ipynb"
    hw.write_text("{}\n")
    assert start(capsys, taken)[0] == 2 and taken.read_text() == "mine\n"
    code, _, err = start(capsys, hw, "--notebook")
    assert code == 2 and text("start.refused_file", "en", path=hw) in err and hw.read_text() == "{}\n"


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_start_notebook_writes_the_starter_notebook_and_its_check_runs_as_printed(name, tmp_path, capsys):
    a = load(name)
    target = tmp_path / "hw.ipynb"
    code, out, err = start(capsys, target, "--notebook", *option(name))
    assert code == 0, out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CONTRACT.md", "hw.ipynb"]
    assert (tmp_path / "CONTRACT.md").read_bytes() == Path(a.contract).read_bytes()
    nb = nbformat.read(target, as_version=4)
    nbformat.validate(nb)
    assert [(c.id, c.cell_type, c.source) for c in nb.cells] == cells(a.skeleton, a)
    if name != "transformer":  # its check cells grade this assignment, not the default one
        assert f'gk.check("{a.task_ids[0]}", assignment="{name}")' in [c.source for c in nb.cells]
    (check,) = printed(out)
    graded = shell(check, timeout=600)
    assert "Traceback" not in graded.stderr, graded.stdout + graded.stderr
    expected = api.check(path=a.skeleton, assignment=a, profile="quick")
    assert score(graded.stdout) == (expected.score, expected.max_score)


def test_a_notebook_file_gets_the_contract_beside_it_and_nothing_is_written_over(tmp_path, capsys):
    a = load("transformer")
    contract = Path(a.contract).read_bytes()
    code, out, err = start(capsys, tmp_path / "one.ipynb", "--notebook")
    assert code == 0 and text("start.wrote_contract", "en", path=tmp_path / "CONTRACT.md") in out, out + err
    # the same contract there already: it is the one named, and it is left as it is
    code, out, err = start(capsys, tmp_path / "two.ipynb", "--notebook")
    assert code == 0 and text("start.wrote_contract", "en", path=tmp_path / "CONTRACT.md") in out, out + err
    # a CONTRACT.md of the student's own (another course, notes): left as it is, the contract goes beside the notebook
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "CONTRACT.md").write_text("my notes\n")
    code, out, err = start(capsys, mine / "hw.ipynb", "--notebook")
    assert code == 0 and text("start.wrote_contract", "en", path=mine / "hw.CONTRACT.md") in out, out + err
    assert (mine / "CONTRACT.md").read_text() == "my notes\n" and (mine / "hw.CONTRACT.md").read_bytes() == contract
    # both names taken by other text: nothing is written over, and no contract is named
    (mine / "hw2.CONTRACT.md").write_text("more notes\n")
    code, out, err = start(capsys, mine / "hw2.ipynb", "--notebook")
    assert code == 0 and "CONTRACT" not in out, out + err
    assert (mine / "hw2.CONTRACT.md").read_text() == "more notes\n"
    assert sorted(p.name for p in mine.iterdir()) == [
        "CONTRACT.md",
        "hw.CONTRACT.md",
        "hw.ipynb",
        "hw2.CONTRACT.md",
        "hw2.ipynb",
    ]


def test_start_notebook_into_a_folder_puts_the_contract_beside_it(tmp_path, capsys):
    a = load("decoder_lm")
    dest = tmp_path / "lm"
    code, out, err = start(capsys, dest, "--notebook", "--assignment", "decoder_lm", "--lang", "zh")
    assert code == 0, out + err
    assert sorted(folder_files(dest)) == ["CONTRACT.md", "decoder_lm.ipynb"]
    assert (dest / "CONTRACT.md").read_bytes() == Path(a.contract).read_bytes()
    nb = nbformat.read(dest / "decoder_lm.ipynb", as_version=4)
    assert [(c.id, c.cell_type, c.source) for c in nb.cells] == cells(a.skeleton, a, lang="zh")
    assert printed(out) == [
        f"{LAUNCHER} check {dest / 'decoder_lm.ipynb'} --profile quick --assignment decoder_lm --lang zh"
    ]
