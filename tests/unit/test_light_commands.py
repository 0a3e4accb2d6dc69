"""Commands that grade nothing start without torch: ``gradekit --help``, each feature's ``--help`` and the course
server's database commands answer in a fraction of a second, not after the second or so torch takes to import.

Each runs in a fresh interpreter (torch, once imported, stays), which then says whether torch was imported."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import contextlib, io, json, sys
from grader import cli
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
    try:
        code = cli.main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "torch": "torch" in sys.modules, "said": out.getvalue()}))
"""


def _run(*argv):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["batch", "--help"], ["serve", "--help"], ["practice", "--help"]])
def test_help_imports_no_torch(argv):
    said = _run(*argv)
    assert said["code"] in (0, None) and "usage: gradekit" in said["said"], said
    assert not said["torch"], said


def test_the_servers_database_status_imports_no_torch(tmp_path):
    (tmp_path / "gradekit.toml").write_text('assignment = "transformer"\n\n[server]\n', encoding="utf-8")
    said = _run("serve", "db", "status", "--config", str(tmp_path))
    assert said["code"] == 0 and "schema revision: none" in said["said"], said
    assert not said["torch"], said


def test_a_grading_command_still_grades():
    """The other direction: ``check`` imports what it grades with (the test above would pass for a CLI that
    imported nothing at all)."""
    said = _run("check", str(ROOT / "solution"), "--tasks", "masks", "--profile", "quick", "--quiet")
    assert said["code"] == 0 and said["torch"], said


class _Started(Exception):
    pass


def _fork_servers_asked(monkeypatch, *argv):
    """The assignments ``gradekit ARGV`` asks a fork server for before it grades (the first ask stops the command:
    ``"started"``), and the command's status otherwise."""
    from grader import cli
    from grader.submission import forkserver

    asked = []

    def shared(**kwargs):
        asked.append(kwargs["assignment"].package)
        raise _Started

    monkeypatch.setattr(forkserver, "shared", shared)
    try:
        code = cli.main(list(argv))
    except _Started:
        code = "started"
    return code, asked


@pytest.mark.parametrize("argv", [["nowhere", "--sealed"], ["--sealed", "--help"], ["--isolated", "--bad-option"]])
def test_a_sealed_check_that_grades_nothing_starts_no_fork_server(monkeypatch, capsys, argv):
    """A mistyped path, ``--help`` or a bad option is answered at once: no fork server (a process importing torch)
    is started for a grading that will not happen."""
    code, asked = _fork_servers_asked(monkeypatch, "check", *argv)
    assert code in (0, 2) and asked == [], (code, asked)
    if argv[0] == "nowhere":
        assert "'nowhere' does not exist" in capsys.readouterr().err


def test_a_sealed_check_of_a_submission_starts_its_fork_server_first(monkeypatch):
    """The other direction: a sealed check of a folder that is there starts its assignment's fork server before it
    grades (its imports overlap the judge's)."""
    code, asked = _fork_servers_asked(monkeypatch, "check", str(ROOT / "solution"), "--sealed")
    assert code == "started" and asked == ["assignments.transformer"], (code, asked)
    code, asked = _fork_servers_asked(
        monkeypatch,
        "check",
        str(ROOT / "assignments" / "decoder_lm" / "reference"),
        "--assignment",
        "decoder_lm",
        "--isolated",
    )
    assert code == "started" and asked == ["assignments.decoder_lm"], (code, asked)


def test_a_sealed_check_starts_the_fork_server_of_the_courses_assignment(monkeypatch, tmp_path, capsys):
    """Without ``--assignment``, the fork server started first is that of the assignment the course configuration
    names (the one the check grades), not the default's; a configuration that cannot be read starts none, and the
    command says what is wrong with it."""
    monkeypatch.chdir(tmp_path)
    lm = str(ROOT / "assignments" / "decoder_lm" / "reference")
    (tmp_path / "gradekit.toml").write_text('assignment = "decoder_lm"\n', encoding="utf-8")
    assert _fork_servers_asked(monkeypatch, "check", lm, "--sealed") == ("started", ["assignments.decoder_lm"])
    (tmp_path / "gradekit.toml").write_text('assignment = "no_such_assignment"\n', encoding="utf-8")
    code, asked = _fork_servers_asked(monkeypatch, "check", lm, "--sealed")
    assert code == 2 and asked == [], (code, asked)
    assert "no_such_assignment" in capsys.readouterr().err
