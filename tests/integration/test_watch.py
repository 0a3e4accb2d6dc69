"""``gradekit watch``: what a save makes it grade, and the screen it redraws."""

import io
import subprocess
import sys

import pytest

from grader.options import CheckOptions
from grader.watch import Watch, affected, changed, stamp
from tests.conftest import ROOT, TRANSFORMER

GOOD = 'masked_fill(~mask, float("-inf"))'
BAD = "masked_fill(~mask, 0.0)"


def test_a_save_grades_its_tasks_first_then_those_built_on_them():
    first, then = affected(TRANSFORMER, {"attention.py"})
    assert first == ("sdpa", "mha")
    assert {"encoder_layer", "decoder_layer", "model", "greedy", "overfit"} <= set(then)
    assert "layernorm" not in then and "masks" not in then and not set(first) & set(then)
    first, then = affected(TRANSFORMER, {"norm.py"})
    assert first == ("layernorm",) and "sdpa" not in then and "encoder_layer" in then
    # a helper module of the student's own may be imported by any task
    first, _ = affected(TRANSFORMER, {"my_helpers.py"})
    assert set(first) == {t.id for t in TRANSFORMER.tasks if t.file}
    assert affected(TRANSFORMER, set()) == ((), ())
    assert affected(TRANSFORMER, {"attention.py"}, tasks=("sdpa", "masks")) == (("sdpa",), ())


def test_the_folder_is_looked_at_by_size_and_time(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_text("")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "b.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    before = stamp(tmp_path)
    assert set(before) == {"a.py"}
    assert changed(before, stamp(tmp_path)) == set()
    (tmp_path / "a.py").write_text("x = 12\n")
    (tmp_path / "c.py").write_text("")
    after = stamp(tmp_path)
    assert changed(before, after) == {"a.py", "c.py"}
    (tmp_path / "c.py").unlink()
    assert changed(after, stamp(tmp_path)) == {"c.py"}


@pytest.fixture
def watched(make_submission):
    sub = make_submission()
    screens = []
    watch = Watch(
        str(sub),
        options=CheckOptions(profile="quick", tasks=("sdpa", "mha", "masks")),
        out=io.StringIO(),
        drawn=screens.append,
    )
    watch.draw(busy=watch.task_ids)
    watch.grade(watch.task_ids)
    watch.draw()
    return sub, watch, screens


def test_a_saved_bug_is_shown_in_full_and_its_fix_clears_it(watched):
    sub, watch, screens = watched
    assert "All checks passed." in screens[-1] and "grading" not in screens[-1]
    assert not watch.step()  # nothing saved: nothing graded, nothing drawn
    n = len(screens)
    source = (sub / "attention.py").read_text()
    (sub / "attention.py").write_text(source.replace(GOOD, BAD))
    assert watch.step()
    # redrawn: the saved tasks being graded, then their verdict (masks, in another file, keeps its result)
    assert "… sdpa" in screens[n] and "✓ masks" in screens[n]
    shown = screens[-1]
    assert "✗ sdpa" in shown and "✓ masks" in shown and "grading" not in shown
    assert "Looks like: blocked scores are set to 0" in shown and "Hint:" in shown
    assert "Minimal failing example:" in shown and f"check {sub} --only sdpa." in shown
    assert shown.count("failed  ") == 1  # the first failing check in full, the others counted
    (sub / "attention.py").write_text(source)
    assert watch.step()
    assert "All checks passed." in screens[-1] and "✓ sdpa" in screens[-1]


def test_a_file_that_cannot_be_imported_is_said_and_watching_goes_on(watched):
    sub, watch, screens = watched
    source = (sub / "masks.py").read_text()
    (sub / "masks.py").write_text(source + "\ndef broken(:\n")
    assert watch.step()
    assert "! masks.py could not be imported" in screens[-1] and "✗ masks" in screens[-1]
    (sub / "masks.py").write_text(source)
    assert watch.step()
    assert "could not be imported" not in screens[-1] and "All checks passed." in screens[-1]


def test_the_screen_comes_in_chinese(make_submission):
    watch = Watch(
        str(make_submission()), options=CheckOptions(profile="quick", tasks=("masks",)), lang="zh", out=io.StringIO()
    )
    watch.grade(watch.task_ids)
    screen = watch.screen()
    assert "全部检查通过" in screen and "保存即重新评分" in screen


@pytest.mark.parametrize("args, says", [(["nowhere"], "does not exist"), (["solution", "--tasks", "nope"], "nope")])
def test_bad_input_is_a_usage_error(args, says):
    done = subprocess.run(
        [sys.executable, "-m", "grader", "watch", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 2 and says in done.stderr
