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
