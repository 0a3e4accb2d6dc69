"""``gradekit practice``: drills, workspaces with stubs only for the drill, checks recorded in the history, hints.

The whole sessions run through the ``practice`` sub-command (registered on a bare parser, as ``grader.cli``
registers it) with ``GRADEKIT_HOME`` in ``tmp_path``; they drill ``masks``, the fastest task to grade.
"""

import argparse
import ast
import json
import sqlite3

import pytest

from grader.bugs.catalogue import BUG_BY_ID, apply
from grader.messages import text
from grader.practice import drills, render, session, workspace
from grader.practice.cli import register
from grader.practice.history import History, default_path
from grader.tasks import CONTRACT_FILES, TASK_BY_ID, TASK_IDS


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADEKIT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def gradekit(capsys, *argv):
    """Run ``gradekit ARGV`` through the practice/quiz registration; ``(exit code, stdout, stderr)``."""
    parser = argparse.ArgumentParser(prog="gradekit")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def definitions(source):
    """Top-level name -> its source text."""
    lines = source.splitlines(keepends=True)
    return {name: "".join(lines[a - 1:b]) for name, (a, b) in workspace._top_level(source).items()}


def solve(root, tasks):
    """Fill the drilled stubs in ``root`` with the reference's definitions, as a student who knows them would."""
    for file, names in workspace.drill_names(tasks).items():
        path = root / file
        path.write_text(workspace.splice(path.read_text(), (workspace.SOLUTION_ROOT / file).read_text(), names))


# -- drills and workspaces -----------------------------------------------------------------------------------------

def test_every_task_but_overfit_is_a_drill_and_sets_are_well_formed():
    assert {d.id for d in drills.TASK_DRILLS} == set(TASK_IDS) - {"overfit"}
    assert {"classic45", "attention20", "decoder30"} <= {d.id for d in drills.SET_DRILLS}
    assert drills.get("classic45").tasks == ("sdpa", "mha", "positional", "layernorm", "masks")
    assert drills.get("classic45").minutes == 45
    for d in drills.DRILLS:
        assert d.level in drills.LEVELS and d.minutes > 0
        assert set(d.tasks) <= set(TASK_IDS) - {"overfit"}
        assert d.is_set == (len(d.tasks) > 1)


@pytest.mark.parametrize("drill", [d.id for d in drills.DRILLS])
def test_workspace_has_stubs_for_the_drill_only(tmp_path, drill):
    d = drills.get(drill)
    workspace.build(tmp_path, d.tasks)
    drilled = {name for t in d.tasks for name in TASK_BY_ID[t].names}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(CONTRACT_FILES)
    for file in CONTRACT_FILES:
        got = (tmp_path / file).read_text()
        ref = (workspace.SOLUTION_ROOT / file).read_text()
        stub = (workspace.SKELETON_ROOT / file).read_text()
        compile(got, file, "exec")
        if not drilled & set(definitions(ref)):
            assert got == ref, file
            continue
        mine, theirs, stubs = definitions(got), definitions(ref), definitions(stub)
        assert set(mine) == set(theirs)
        for name, source in mine.items():
            assert source == (stubs[name] if name in drilled else theirs[name]), (file, name)
            assert ("NotImplementedError" in source) == (name in drilled), (file, name)


def test_task_text_is_the_skeletons_docstring_and_signature():
    import skeleton.attention
    import skeleton.decoding
    texts = {t.name: t for t in workspace.task_texts(["mha", "greedy"])}
    assert texts["MultiHeadAttention"].signature == "class MultiHeadAttention(d_model, num_heads, dropout=0.1)"
    assert texts["greedy_decode"].signature.startswith("def greedy_decode(model, src, *, max_len")
    assert texts["MultiHeadAttention"].doc == ast.get_docstring(
        ast.parse(open(skeleton.attention.__file__).read()).body[-1])
    assert texts["greedy_decode"].file == "decoding.py"
    assert "Hints:" in texts["greedy_decode"].doc


def test_list_shows_every_drill_in_both_languages(capsys):
    for lang in ("en", "zh"):
        code, out, _ = gradekit(capsys, "practice", "--lang", lang)
        assert code == 0
        for d in drills.DRILLS:
            assert d.id in out and text(f"practice.title.{d.id}", lang) in out
    assert "classic45" in out and "sdpa + mha + positional + layernorm + masks" in out


def test_start_refuses_a_non_empty_folder_and_bad_input(tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    code, _, err = gradekit(capsys, "practice", "masks", "--dir", str(tmp_path / "taken"))
    assert code == 2 and "already exists and is not empty" in err
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "taken" / "masks.py").exists()
    code, _, err = gradekit(capsys, "practice", "transformers", "--dir", str(tmp_path / "x"))
    assert code == 2 and "unknown drill 'transformers'" in err and "classic45" in err
    code, _, err = gradekit(capsys, "practice", "masks", "--minutes", "0", "--dir", str(tmp_path / "x"))
    assert code == 2 and "--minutes" in err
    code, _, err = gradekit(capsys, "practice", "--check", "--dir", str(tmp_path))
    assert code == 2 and "not a practice workspace" in err
    code, _, err = gradekit(capsys, "practice", "--check", "--history")
    assert code == 2 and "one thing to do" in err


def test_start_in_the_current_folder_and_random(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, _ = gradekit(capsys, "practice", "--random", "--seed", "3", "--lang", "zh")
    assert code == 0
    [ws] = tmp_path.glob("practice-*")
    state = workspace.read_state(ws)
    assert state.drill == session.pick_random(3).id and ws.name.startswith(f"practice-{state.drill}-")
    assert state.lang == "zh" and "工作区" in out


# -- whole sessions --------------------------------------------------------------------------------------------

def test_session_stub_then_hints_then_correct_answer_is_recorded_as_passed(tmp_path, monkeypatch, capsys, home):
    ws = tmp_path / "ws"
    code, out, _ = gradekit(capsys, "practice", "masks", "--minutes", "10", "--dir", str(ws))
    assert code == 0
    assert "def padding_mask(tokens, pad_idx)" in out and "Mask out padded *keys*." in out
    assert "Clock: 10:00" in out
    state = json.loads((ws / workspace.STATE_FILE).read_text())
    assert state["drill"] == "masks" and state["tasks"] == ["masks"] and state["minutes"] == 10
    assert state["no_hints"] is False and state["lang"] == "en" and state["started"] > 0

    monkeypatch.chdir(ws)  # the default --dir is the current folder
    code, out, _ = gradekit(capsys, "practice", "--check")
    assert code == 1
    assert text("ui.not_implemented", "en") in out and "Not yet" in out and "of 10:00" in out

    code, out, _ = gradekit(capsys, "practice", "--hint")
    assert code == 0 and "Hint 1/2 for masks" in out and "[B, 1, 1, L]" in out
    code, out, _ = gradekit(capsys, "practice", "--hint", "--lang", "zh")
    assert code == 0 and "第 2/2 级提示" in out
    code, out, _ = gradekit(capsys, "practice", "--hint")
    assert code == 0 and "All hint levels for masks have been shown" in out
    code, _, err = gradekit(capsys, "practice", "--hint", "mha")
    assert code == 2 and "not part of this drill" in err

    solve(ws, ["masks"])
    code, out, _ = gradekit(capsys, "practice", "--check")
    assert code == 0, out
    assert "Passed in" in out and "with 2 hint level(s)" in out and "personal best" in out

    with History() as h:
        [attempt] = h.attempts()
        assert h.path == home / "history.sqlite"
    assert attempt.drill == "masks" and attempt.passed and attempt.checks == 2 and attempt.hints == 2
    assert attempt.score == attempt.max_score > 0 and attempt.limit_s == 600 and attempt.in_time

    code, out, _ = gradekit(capsys, "practice", "--history")
    assert code == 0
    assert "masks" in out and "✓ passed" in out and "#1  ✓" in out and "Personal bests" in out
    assert f"{render.clock(attempt.seconds)} / 10:00" in out


def test_wrong_answer_is_diagnosed_but_withheld_in_no_hints_mode_until_time_is_up(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert gradekit(capsys, "practice", "masks", "--no-hints", "--minutes", "5", "--dir", str(ws))[0] == 0
    bug = BUG_BY_ID["masks.padding_inverted"]
    # Write the reference's masks with the catalogued mistake: a wrong answer to every drilled stub.
    (ws / "masks.py").write_text(apply(bug, (workspace.SOLUTION_ROOT / "masks.py").read_text()))
    diagnosis = text("bug." + bug.id, "en")

    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(ws))
    assert code == 1
    assert "masks.padding" in out and "differs" in out  # what failed is always shown
    assert diagnosis not in out and "diagnoses are withheld" in out
    code, _, err = gradekit(capsys, "practice", "--hint", "--dir", str(ws))
    assert code == 2 and "no-hints mode" in err

    state = workspace.read_state(ws)
    state.started -= 5 * 60 + 1  # the time is up
    workspace.write_state(ws, state)
    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(ws))
    assert code == 1
    assert diagnosis in out and "withheld" not in out and "over by" in out
    assert gradekit(capsys, "practice", "--hint", "--dir", str(ws))[0] == 0

    with History() as h:
        [attempt] = h.attempts()
    assert not attempt.passed and attempt.checks == 2 and attempt.no_hints and attempt.hints == 1
    code, out, _ = gradekit(capsys, "practice", "--history", "--lang", "zh")
    assert "✗ 未通过" in out and "⊘" in out and "░" in out  # overtime drawn lighter


# -- history -------------------------------------------------------------------------------------------------

def test_history_location_follows_the_environment(tmp_path, monkeypatch):
    assert default_path() == tmp_path / "home" / "history.sqlite"
    monkeypatch.delenv("GRADEKIT_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "gradekit" / "history.sqlite"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert default_path() == tmp_path / "user" / ".local" / "share" / "gradekit" / "history.sqlite"


def test_personal_bests_and_chart(tmp_path):
    common = dict(tasks=["sdpa"], workspace=tmp_path, limit_s=600, max_score=10, hints=0, no_hints=False,
                  profile="quick")
    with History() as h:
        h.record(drill="sdpa", started=0, finished=500, passed=True, score=10, **common)
        first = h.record(drill="sdpa", started=1000, finished=1300, passed=False, score=4, **common)
        h.record(attempt_id=first, drill="sdpa", started=1000, finished=1400, passed=True, score=10, **common)
        h.record(drill="sdpa", started=2000, finished=2900, passed=True, score=10, **common)
        h.record(drill="mha", started=3000, finished=3100, passed=False, score=0, **{**common, "tasks": ["mha"]})
        attempts, bests = h.attempts(), h.bests()
        assert [a.seconds for a in h.attempts("sdpa")] == [500, 400, 900]
        assert h.get(first).checks == 2
    assert set(bests) == {"sdpa"} and bests["sdpa"].seconds == 400
    view = render.history_view(attempts, bests, "en")
    assert "06:40" in view and "15:00 / 10:00" in view and "(late)" in view
    rows = [line for line in view.splitlines() if "#" in line]
    assert len(rows) == 4
    assert render.bar(600, 600) == "█" * render.BAR_WIDTH
    assert render.bar(900, 600) == "█" * render.BAR_WIDTH + "░" * (render.BAR_WIDTH // 2)
    assert render.bar(300, 600) == "█" * (render.BAR_WIDTH // 2)
    assert render.history_view([], {}, "zh") == text("practice.history.empty", "zh")
    columns = [r[1] for r in sqlite3.connect(default_path()).execute("PRAGMA table_info(attempts)")]
    assert {"drill", "started", "finished", "seconds", "limit_s", "passed", "score", "max_score", "hints"} <= set(
        columns)


# -- messages ----------------------------------------------------------------------------------------------------

def test_every_task_has_two_hint_levels_in_both_languages():
    from grader.messages import CATALOGUES
    for lang in ("en", "zh"):
        for d in drills.TASK_DRILLS:
            for level in (1, 2):
                assert session.hint_key(d.id, level) in CATALOGUES[lang], (lang, d.id, level)
        for d in drills.DRILLS:
            assert f"practice.title.{d.id}" in CATALOGUES[lang]
    with pytest.raises(ValueError, match="levels are 1..2"):
        session.hint_key("mha", 3)


def test_practice_messages_exist_in_both_languages_with_the_same_fields():
    import string

    from grader.messages import practice_en, practice_zh
    assert set(practice_en.MESSAGES) == set(practice_zh.MESSAGES)
    assert all(k.startswith(("practice.", "quiz.")) for k in practice_en.MESSAGES)
    for key, en in practice_en.MESSAGES.items():
        fields = {f for _, f, _, _ in string.Formatter().parse(en) if f}
        assert fields == {f for _, f, _, _ in string.Formatter().parse(practice_zh.MESSAGES[key]) if f}, key
