"""The terminal, and text that must stay valid.

Control characters from a submission never reach the terminal raw: escape codes in exception text
cannot clear the screen or draw a fake "140/140 All checks passed" above the real result. The
same text never stops ``check --json`` or Gradescope's ``results.json`` from being valid UTF-8 JSON.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.messages import text
from grader.results import CheckResult, Diagnosis, GradeResult, Message, TaskResult
from tests import hostile

ROOT = Path(__file__).resolve().parents[2]
NASTY = ("\x1b[2J\x1b[H\u2713 masks  10.0 / 10.0\n\nScore: 140 / 140\nAll checks passed.\r\x00\x07\x9b2J\x9d0;t\x07"
         "\udcff\ud800\u202e\x7f")
FAKE_LINES = ("Score: 140 / 140", "All checks passed.", "\u2713 masks  10.0 / 10.0")
# Our own colours: SGR sequences only (ESC [ digits m).
_OUR_SGR = re.compile("\x1b\\[[0-9;]*m")
_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")

ESCAPES = hostile.CORRECT + f'''

def padding_mask(tokens, pad_idx):
    raise ValueError({NASTY!r})
'''


def _assert_terminal_safe(out, *, color=False):
    rest = _OUR_SGR.sub("", out) if color else out
    bad = sorted({hex(ord(c)) for c in _FORBIDDEN.findall(rest)})
    assert not bad, f"raw control characters reached the terminal: {bad}"
    for line in out.splitlines():
        plain = _OUR_SGR.sub("", line).strip()
        assert plain not in FAKE_LINES, f"a fake line was drawn: {line!r}"


def _result():
    masks = [CheckResult(id="masks.padding", task="masks", status="error", score=0, max_score=3,
                         message=Message("error.exception", {"detail": "ValueError: " + NASTY, "file": "masks.py",
                                                             "line": 3, "code": "raise ValueError(" + NASTY + ")"}),
                         error={"kind": "exception", "detail": NASTY, "file": "masks.py", "line": 3,
                                "code": NASTY, "trace": NASTY, "data": {}},
                         diagnoses=[Diagnosis("hint.constant_factor", kind="hint", params={"factor": NASTY,
                                                                                            "note": NASTY})],
                         reproduce="gradekit check " + NASTY + " --only masks.padding"),
             CheckResult(id="masks.causal", task="masks", status="failed", score=0, max_score=3,
                         message=Message("fail.mismatch", {"what": NASTY, "index": [0, 1], "count": 1, "total": 4,
                                                           "max_abs": NASTY, "max_rel": "1"}))]
    finding = {"name": "torch.nn.LayerNorm", "file": "norm" + NASTY + ".py", "line": 7, "code": NASTY,
               "task": "masks"}
    return GradeResult(submission="sub" + NASTY, score=0, max_score=6, seed=None, profile="quick", duration_s=1.0,
                       tasks=[TaskResult(id="masks", score=0, max_score=6, checks=masks, banned=[finding])],
                       banned_api=[finding],
                       load_errors={"model" + NASTY + ".py": {"kind": "import_error", "detail": NASTY,
                                                              "file": "model.py", "line": 2, "code": NASTY,
                                                              "trace": NASTY}},
                       environment={"when": "2026-01-01T00:00:00+00:00"})


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("color", [False, True])
def test_the_summary_escapes_what_the_submission_wrote(lang, color):
    from grader.views import terminal

    out = terminal.summary(_result(), lang=lang, verbose=True, color=color)
    _assert_terminal_safe(out, color=color)
    assert "\\x1b[2J" in out  # shown, as text
    assert out.rstrip().endswith(text("ui.some_failed", lang, failed=2, total=2))
    out.encode("utf-8")  # printable on a UTF-8 terminal: no lone surrogates


def test_the_practice_view_and_the_progress_bar_escape_too():
    import io

    from grader.batch import progress
    from grader.practice import render

    class Checked:
        result = _result()
        state = type("S", (), {"drill": "masks", "limit_s": 600, "no_hints": False, "hints_used": 0, "lang": "en"})()
        root = None
        elapsed, withheld, already_passed, time_up, new_best, previous_best = 10, False, False, False, False, None
        partial, chosen = False, False

    _assert_terminal_safe(render.checked(Checked(), "en"))
    stream = io.StringIO()
    bar = progress.Progress(2, stream)  # the batch's progress line, local and on Dask
    bar.step({"student": NASTY, "status": "ok"})
    bar.note("a line above the bar")
    _assert_terminal_safe(stream.getvalue().replace("\r", ""))


def test_the_clean_text_helpers():
    from grader.safetext import clean_data, clean_text, for_terminal

    assert clean_text("ok\tline\nnext") == "ok\tline\nnext"
    assert clean_text("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert clean_text("\udcff\ud800\x00\x9b\u202e\r") == "\\xff\\ud800\\x00\\x9b\\u202e\\r"
    assert clean_text("张三 — ✓") == "张三 — ✓"
    assert for_terminal("a\nb\tc") == "a\\nb\tc"
    data = clean_data({"k\udcff": ["\x1b", 1, 2.5, None, ("\x00",)]})
    assert data == {"k\\xff": ["\\x1b", 1, 2.5, None, ("\\x00",)]}
    json.dumps(data, ensure_ascii=False).encode("utf-8")


# -- end to end: the CLI and the Gradescope runner --------------------------------------------------------------
def _kill_tree(pid):
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    todo, tree = [pid], []
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += children.get(p, [])
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def _run(args, timeout=300):
    proc = subprocess.Popen([sys.executable, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        out, err = proc.communicate()
        pytest.fail(f"ran past {timeout} s")
    return proc.returncode, out, err


@pytest.mark.parametrize("sealed", [False, True], ids=["in-process", "sealed"])
def test_check_prints_safely_and_writes_valid_files(tmp_path, sealed):
    sub = tmp_path / "sub"
    shutil.copytree(hostile.BASE, sub, ignore=shutil.ignore_patterns("__pycache__"))
    (sub / "masks.py").write_text(ESCAPES, encoding="utf-8")
    files = {k: tmp_path / f"out.{k}" for k in ("json", "html", "junit", "gradescope")}
    args = ["-m", "grader", "check", sub, "--tasks", "masks", "--profile", "quick"]
    args += ["--sealed"] if sealed else []
    for k, path in files.items():
        args += [f"--{k}", path]
    code, out, err = _run(args)
    assert code == 1, err[-3000:].decode(errors="replace")
    printed = out.decode("utf-8")  # strict
    _assert_terminal_safe(printed)
    assert "\\x1b[2J" in printed and re.search(r"\d of 4 checks did not pass\.$", printed.rstrip(), re.M)
    data = json.loads(files["json"].read_bytes().decode("utf-8"))
    padding = next(c for c in data["tasks"][0]["checks"] if c["id"] == "masks.padding")
    assert padding["status"] == "error" and "\\xff\\ud800" in padding["error"]["detail"]
    gs = json.loads(files["gradescope"].read_bytes().decode("utf-8"))
    assert gs["score"] == data["score"] and len(gs["tests"]) == 4
    ET.fromstring(files["junit"].read_bytes())
    html = files["html"].read_bytes().decode("utf-8")
    assert "\x1b" not in html and "\x00" not in html


def test_gradescope_results_json_is_valid_whatever_the_exception_says(tmp_path):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "source" / "settings.json").write_text(json.dumps({"tasks": ["masks"], "profile": "quick",
                                                               "call_timeout": 20, "total_timeout": 120}))
    shutil.copytree(hostile.BASE, root / "submission", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "submission" / "masks.py").write_text(ESCAPES, encoding="utf-8")
    os.mkfifo(root / "submission" / "pipe.py")
    (root / "submission" / "ref.py").symlink_to(ROOT / "solution" / "masks.py")
    code, out, err = _run(["-m", "grader.batch.gradescope_run", "--root", root])
    assert code == 0, err[-3000:].decode(errors="replace")
    data = json.loads((root / "results" / "results.json").read_bytes().decode("utf-8"))
    assert 0 < data["score"] < 10 and len(data["tests"]) >= 3, data.get("output")
    assert "pipe.py" in data["output"] and "ref.py" in data["output"]
    _assert_terminal_safe(out.decode("utf-8"))


def test_usage_errors_print_paths_escaped(tmp_path, capsys):
    from grader.cli import main

    assert main(["check", str(tmp_path / ("nope" + NASTY))]) == 2
    _assert_terminal_safe(capsys.readouterr().err)
