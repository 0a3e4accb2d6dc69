"""``gradekit demo --submission PATH``: the student's own model trained on the demo's task in a process of its own,
with their own training step and decoding, shown beside the reference's output; a piece not done yet, or one that
raises, is told kindly (contract name, task, file and line; English and Chinese), and every command printed runs as
printed."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from assignments.transformer.corpus import build_task
from grader.cli import main
from tests.conftest import edited_copy

ROOT = Path(__file__).resolve().parents[2]
LM = ROOT / "assignments" / "decoder_lm"
LAUNCHER = "scripts/gradekit"
"""How the README has users start gradekit (the script sets ``GRADEKIT_PROG`` to it)."""
ROW = re.compile(
    r"^  (?P<pinyin>[a-z]+(?: [a-z]+)*)\s{2,}(?P<expected>\S+)\s+(?P<reference>\S*) [✓✗]\s+"
    r"(?P<yours>\S*) [✓✗]$"
)
"""A held-out phrase's row: pinyin, the expected characters, the reference's translation, the student's."""


@pytest.fixture(autouse=True)
def started_by_the_script(monkeypatch):
    """As ``scripts/gradekit`` starts gradekit, from the root of the clone."""
    monkeypatch.setenv("GRADEKIT_PROG", LAUNCHER)
    monkeypatch.chdir(ROOT)


def demo(capsys, *argv):
    """``gradekit demo ARGV`` in this process (the reference's side; the student's runs in a child): ``(exit code,
    stdout + stderr)``."""
    code = main(["demo", *argv])
    out, err = capsys.readouterr()
    return code, out + err


def lm_copy(dest, edit=None):
    """A copy of the LM's reference in ``dest``, with ``edit`` ``(file, find, replace)`` applied."""
    shutil.copytree(LM / "reference", dest, ignore=shutil.ignore_patterns("__pycache__"))
    if edit:
        file, find, replace = edit
        text = (dest / file).read_text()
        assert text.count(find) == 1
        (dest / file).write_text(text.replace(find, replace))
    return dest


def line_of(path, snippet):
    """The 1-based line of ``path`` holding ``snippet``."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if snippet in line)


def printed_commands(out, launcher=LAUNCHER):
    """The command lines the demo printed (each on a line of its own, indented two spaces)."""
    return [line.strip() for line in out.splitlines() if line.startswith(f"  {launcher} ")]


def test_the_reference_as_a_submission_translates_beside_the_reference(capsys):
    """The same code and seed in the student's process give the very translations of the reference's process: what
    differs in a student's run is their code."""
    code, out = demo(capsys, "--submission", "solution", "--steps", "20")
    assert code == 0, out
    assert "Traceback" not in out
    rows = {m["pinyin"]: m for m in map(ROW.match, out.splitlines()) if m}
    test = build_task().test
    assert set(rows) == {pinyin for pinyin, _ in test}, out
    assert all(rows[pinyin]["expected"] == chars for pinyin, chars in test)
    assert any(m["yours"] for m in rows.values()), out  # the student's column is filled in
    assert all(m["yours"] == m["reference"] for m in rows.values()), out
    assert re.search(r"Exact match on \d+ held-out phrases: yours (\d+)/\d+ .*, the reference \1/", out), out
    final = re.search(r"Final training loss: yours (\S+), the reference (\S+)\.", out)
    assert final and final[1] == final[2] and float(final[1]) > 0, out
    assert re.search(r"^\s+20\s+\S+\s+\S+$", out, re.M), out  # the loss table's row of the last step


def test_the_lm_reference_as_a_submission_writes_poems_beside_the_reference(capsys):
    from assignments.decoder_lm.demo import STARTS

    code, out = demo(
        capsys, "--assignment", "decoder_lm", "--submission", str(LM / "reference"), "--steps", "10", "--lang", "zh"
    )
    assert code == 0, out
    assert "Traceback" not in out
    reference = [line.split(None, 1)[1] for line in out.splitlines() if line.startswith("  参考实现 ")]
    yours = [line.split(None, 1)[1] for line in out.splitlines() if line.startswith("  你的 ")]
    assert [p[0] for p in yours] == list(STARTS) and all(len(p) > 1 for p in yours), out
    assert yours == reference, out
    assert "最终训练损失：你的" in out and "第一步的损失：你的" in out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("assignment", ["transformer", "decoder_lm"])
def test_the_skeleton_is_told_which_piece_is_not_done_yet(assignment, lang, capsys):
    skeleton = "skeleton" if assignment == "transformer" else "assignments/decoder_lm/skeleton"
    name = "Transformer" if assignment == "transformer" else "DecoderLM"
    options = ["--lang", "zh"] if lang == "zh" else []
    code, out = demo(capsys, "--assignment", assignment, "--submission", skeleton, *options)
    assert code == 1, out
    assert "Traceback" not in out
    line = line_of(ROOT / skeleton / "model.py", f"{name}.__init__ is not implemented yet")
    if lang == "en":
        assert f"The demo cannot run your code yet: {name} (task model, model.py) is not implemented yet." in out
        assert "Finish task model and check it with:" in out
    else:
        assert f"演示还不能运行你的代码：{name}（任务 model，model.py）尚未实现。" in out
        assert "完成任务 model，并用下面的命令检查：" in out
    assert f"  model.py:{line}: raise NotImplementedError(" in out
    assignment_option = [] if assignment == "transformer" else ["--assignment", "decoder_lm"]
    check, again = printed_commands(out)
    assert check.split() == [LAUNCHER, "check", skeleton, *assignment_option, "--tasks", "model", *options]
    assert again.split() == [LAUNCHER, "demo", *assignment_option, "--submission", skeleton, *options]


def test_the_printed_commands_run_as_printed(capsys, tmp_path, monkeypatch):
    """A user without ``gradekit`` on the PATH pastes each printed command into a shell, from the clone. Started
    as ``python -m grader`` here (the other tests check the ``scripts/gradekit`` form): that script would first
    bring the shared virtual environment up to date."""
    from grader.cli import invoked_as

    monkeypatch.delenv("GRADEKIT_PROG")
    code, out = demo(capsys, "--submission", "skeleton", "--lang", "zh")
    assert code == 1
    check, again = printed_commands(out, invoked_as())
    assert check.endswith(" check skeleton --tasks model --lang zh"), check
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "gradekit").exists()]
    env = {k: v for k, v in os.environ.items() if k != "GRADEKIT_PROG"}
    env.update(PATH=os.pathsep.join(path), GRADEKIT_HOME=str(tmp_path))
    ran = subprocess.run(["bash", "-c", check], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # graded: the task's checks fail
    assert "model" in ran.stdout and "Traceback" not in ran.stdout + ran.stderr
    ran = subprocess.run(["bash", "-c", again], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 1 and "Transformer（任务 model，model.py）尚未实现" in ran.stdout, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stdout + ran.stderr


def test_a_greedy_decode_that_raises_is_shown_with_its_file_and_line(capsys, tmp_path):
    raising = "    raise IndexError('row 3 is past the end')\n"
    sub = edited_copy(
        tmp_path / "sub",
        {
            "decoding.py": (
                "    src_mask = padding_mask(src, pad_idx)  # [B, 1, 1, Ls]\n",
                "    src_mask = padding_mask(src, pad_idx)  # [B, 1, 1, Ls]\n" + raising,
            )
        },
    )
    code, out = demo(capsys, "--submission", str(sub), "--steps", "5")
    assert code == 1, out
    assert "Traceback" not in out
    line = line_of(sub / "decoding.py", "row 3 is past the end")
    assert "Your greedy_decode (task greedy) raised an error:" in out
    assert f"  decoding.py:{line}: raise IndexError('row 3 is past the end')" in out
    assert "  IndexError: row 3 is past the end" in out
    assert printed_commands(out) == [f"{LAUNCHER} check {sub} --tasks greedy -v"]


def test_a_generate_that_raises_is_shown_with_its_file_and_line_in_chinese(capsys, tmp_path):
    sub = lm_copy(
        tmp_path / "lm",
        (
            "sampling.py",
            "    caches = model.new_cache()\n",
            "    caches = model.new_cache()\n    caches[len(caches)].reset()\n",
        ),
    )
    code, out = demo(capsys, "--assignment", "decoder_lm", "--submission", str(sub), "--steps", "5", "--lang", "zh")
    assert code == 1, out
    assert "Traceback" not in out
    line = line_of(sub / "sampling.py", "caches[len(caches)].reset()")
    assert "你的 generate（任务 generate）抛出了错误：" in out
    assert f"  sampling.py:{line}: caches[len(caches)].reset()" in out
    assert "  IndexError: list index out of range" in out
    assert printed_commands(out) == [f"{LAUNCHER} check {sub} --assignment decoder_lm --tasks generate --lang zh -v"]


def test_the_students_process_cannot_import_the_reference(capsys, tmp_path):
    """The loader stops ``import solution``; ``importlib.import_module`` goes around ``__import__``, and is stopped
    by the student's process's own import guard."""
    sub = edited_copy(
        tmp_path / "sub",
        {
            "decoding.py": (
                "import torch\n",
                "import importlib\n\nimport torch\n\nREF = importlib.import_module('solution.decoding')\n",
            )
        },
    )
    code, out = demo(capsys, "--submission", str(sub), "--steps", "5")
    assert code == 1, out
    assert "decoding.py cannot be imported, so it cannot take greedy_decode (task greedy) from it:" in out
    assert "ImportError: solution is the reference's code, which the process running a submission may not import" in out


def test_a_submission_that_is_no_folder_is_a_usage_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        demo(capsys, "--submission", str(tmp_path / "nowhere"))
    assert stop.value.code == 2
    assert "is not a folder; expected a folder holding attention.py" in capsys.readouterr().err


def test_a_train_step_that_never_returns_is_stopped_and_told_where_it_was(capsys, tmp_path, monkeypatch):
    """The student's run has its time (here cut to 15 s, from the reference's run beside it and at least 60 s
    otherwise); then it is stopped where it is, and the demo says where that was."""
    import grader.demo

    monkeypatch.setattr(grader.demo, "AT_LEAST_S", 15.0)
    sub = edited_copy(
        tmp_path / "sub",
        {
            "training.py": (
                "def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):\n",
                "CALLS = []\n\n\n"
                "def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):\n"
                "    CALLS.append(1)\n"
                "    while len(CALLS) > 3:  # the first step (run before the demo proper) and two more, then forever\n"
                "        pass\n",
            )
        },
    )
    code, out = demo(capsys, "--submission", str(sub), "--steps", "10")
    assert code == 1, out
    assert "Traceback" not in out
    said = re.search(
        r"Your code did not finish training and decoding in (\d+) s, where the reference took (\S+) s "
        r"for the same 10 steps, and was stopped\.",
        out,
    )
    assert said and abs(int(said[1]) - max(15, 5 * float(said[2]))) <= 1, out  # 5 times the reference's, or 15
    line = line_of(sub / "training.py", "while len(CALLS) > 3")
    assert f"It was in your train_step (task training):\n  training.py:{line}: while len(CALLS) > 3:" in out, out
    assert printed_commands(out) == [f"{LAUNCHER} check {sub} --tasks training"]
