"""``gradekit practice``: drills, workspaces with stubs only for the drill, checks recorded in the history, hints.

The whole sessions run through the ``practice`` sub-command (registered on a bare parser, as ``grader.cli``
registers it) with ``GRADEKIT_HOME`` in ``tmp_path``; they drill the Transformer's ``masks``, the fastest task
to grade. The last tests drill a made-up assignment: the machinery knows no Transformer.
"""

import ast
import json
import sqlite3
import textwrap
import time
from pathlib import Path

import pytest

from grader.assignment import DEFAULT, load
from grader.bugs.catalogue import Catalogue, apply
from grader.messages import text
from grader.practice import drills, quiz, render, session, workspace
from grader.practice import history as history_module
from grader.practice.history import History, default_path
from grader.practice.workspace import STATE_FILE
from tests.practice_helpers import assert_chinese_task_texts_match, gradekit

pytestmark = pytest.mark.usefixtures("home")  # drills and quizzes are recorded: a fresh history per test

A = load()
DRILLS = drills.of(A)


def definitions(source):
    """Top-level name -> its source text."""
    lines = source.splitlines(keepends=True)
    return {name: "".join(lines[a - 1 : b]) for name, (a, b) in workspace._top_level(source).items()}


def solve(root, tasks, assignment=None):
    """Fill the drilled stubs in ``root`` with the reference's definitions, as a student who knows them would."""
    a = load(assignment) if assignment else A
    for file, names in workspace.drill_names(tasks, a).items():
        path = root / file
        path.write_text(workspace.splice(path.read_text(), (a.reference / file).read_text(), names))


# -- drills and workspaces -----------------------------------------------------------------------------------------


def test_every_task_but_overfit_is_a_drill_and_sets_are_well_formed():
    assert {d.id for d in DRILLS if not d.is_set} == set(A.task_ids) - {"overfit"}
    assert {"classic45", "attention20", "decoder30"} <= {d.id for d in DRILLS if d.is_set}
    assert drills.get(A, "classic45").tasks == ("sdpa", "mha", "positional", "layernorm", "masks")
    assert drills.get(A, "classic45").minutes == 45
    for d in DRILLS:
        assert d.level in drills.LEVELS and d.minutes > 0
        assert set(d.tasks) <= set(A.task_ids) - {"overfit"}
        assert d.is_set == (len(d.tasks) > 1)


@pytest.mark.parametrize("drill", [d.id for d in DRILLS])
def test_workspace_has_stubs_for_the_drill_only(tmp_path, drill):
    d = drills.get(A, drill)
    workspace.build(tmp_path, d.tasks, A)
    drilled = {name for t in d.tasks for name in A.task_by_id[t].names}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(A.contract_files)
    for file in A.contract_files:
        got = (tmp_path / file).read_text()
        ref = (A.reference / file).read_text()
        stub = (A.skeleton / file).read_text()
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

    texts = {t.name: t for t in workspace.task_texts(["mha", "greedy"], A)}
    assert texts["MultiHeadAttention"].signature == "class MultiHeadAttention(d_model, num_heads, dropout=0.1)"
    assert texts["greedy_decode"].signature.startswith("def greedy_decode(model, src, *, max_len")
    assert texts["MultiHeadAttention"].doc == ast.get_docstring(
        ast.parse(open(skeleton.attention.__file__).read()).body[-1]
    )
    assert texts["greedy_decode"].file == "decoding.py"
    assert "Hints:" in texts["greedy_decode"].doc


def test_list_shows_every_drill_in_both_languages(capsys):
    for lang in ("en", "zh"):
        code, out, _ = gradekit(capsys, "practice", "--lang", lang)
        assert code == 0
        for d in DRILLS:
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
    code, _, err = gradekit(capsys, "practice", "masks", "--assignment", "nosuch", "--dir", str(tmp_path / "x"))
    assert code == 2 and "no assignment 'nosuch'" in err
    assert not (tmp_path / "x").exists()


def test_start_in_the_data_folder_and_random(tmp_path, monkeypatch, capsys, home):
    monkeypatch.chdir(tmp_path)
    code, out, _ = gradekit(capsys, "practice", "--random", "--seed", "3", "--lang", "zh")
    assert code == 0
    [ws] = (home / "practice").iterdir()
    state = workspace.read_state(ws)
    assert state.drill == session.pick_random(3).id and ws.name.startswith(f"{state.drill}-")
    assert state.lang == "zh" and "工作区" in out
    assert state.assignment == A.package and load(state.assignment) is A


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
    assert state["assignment"] == "assignments.transformer"
    # A workspace started before drills belonged to an assignment is the default assignment's.
    del state["assignment"]
    (ws / workspace.STATE_FILE).write_text(json.dumps(state))
    assert workspace.read_state(ws).assignment == DEFAULT

    monkeypatch.chdir(ws)  # the default --dir is the current folder
    code, out, _ = gradekit(capsys, "practice", "--check")
    assert code == 1
    assert text("ui.not_implemented", "en") in out and "Not yet" in out and "of 10:00" in out

    code, out, _ = gradekit(capsys, "practice", "--hint")
    # the hint is wrapped to the terminal's width: read as one line
    assert code == 0 and "Hint 1/2 for masks" in out and "[B, 1, 1, L]" in " ".join(out.split())
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
    bug = Catalogue(A).by_id["masks.padding_inverted"]
    # Write the reference's masks with the catalogued mistake: a wrong answer to every drilled stub.
    (ws / "masks.py").write_text(apply(bug, (A.reference / "masks.py").read_text()))
    diagnosis = text("bug." + bug.id, "en")

    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(ws))
    assert code == 1
    assert "masks.padding" in out and "masks.target" in out  # what failed is always shown
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
    common = dict(
        tasks=["sdpa"], workspace=tmp_path, limit_s=600, max_score=10, hints=0, no_hints=False, profile="quick"
    )
    with History() as h:
        h.record(drill="sdpa", started=0, finished=500, passed=True, score=10, **common)
        first = h.record(drill="sdpa", started=1000, finished=1300, passed=False, score=4, **common)
        h.record(attempt_id=first, drill="sdpa", started=1000, finished=1400, passed=True, score=10, **common)
        h.record(drill="sdpa", started=2000, finished=2900, passed=True, score=10, **common)
        h.record(drill="mha", started=3000, finished=3100, passed=False, score=0, **{**common, "tasks": ["mha"]})
        attempts, bests = h.attempts(), h.bests()
        assert [a.seconds for a in h.attempts("sdpa")] == [500, 400, 900]
        assert h.get(first).checks == 2
    assert set(bests) == {("assignments.transformer", "sdpa")}
    assert bests["assignments.transformer", "sdpa"].seconds == 400
    view = render.history_view(session.Past(attempts, bests, [], {}), "en")
    assert "06:40" in view and "15:00 / 10:00" in view and "(late)" in view
    rows = [line for line in view.splitlines() if "#" in line]
    assert len(rows) == 4
    assert render.bar(600, 600) == "█" * render.BAR_WIDTH
    assert render.bar(900, 600) == "█" * render.BAR_WIDTH + "░" * (render.BAR_WIDTH // 2)
    assert render.bar(300, 600) == "█" * (render.BAR_WIDTH // 2)
    assert render.history_view(session.Past([], {}, [], {}), "zh") == text(
        "practice.history.empty", "zh", **session.commands(lang="zh")
    )
    columns = [r[1] for r in sqlite3.connect(default_path()).execute("PRAGMA table_info(attempts)")]
    assert {"drill", "started", "finished", "seconds", "limit_s", "passed", "score", "max_score", "hints"} <= set(
        columns
    )


def test_drills_of_two_assignments_with_one_id_are_kept_apart(tmp_path):
    """Both assignments have a drill ``model``: a fast pass of one is not the other's personal best, and the
    history names each with its assignment."""
    common = dict(
        drill="model",
        tasks=["model"],
        workspace=tmp_path,
        limit_s=1800,
        max_score=10,
        hints=0,
        no_hints=False,
        profile="quick",
        passed=True,
        score=10,
    )
    with History() as h:
        h.record(assignment="assignments.transformer", started=0, finished=1500, **common)
        h.record(assignment="assignments.decoder_lm", started=2000, finished=2100, **common)
        bests = h.bests()
        assert {k: b.seconds for k, b in bests.items()} == {
            ("assignments.transformer", "model"): 1500,
            ("assignments.decoder_lm", "model"): 100,
        }
        assert [a.seconds for a in h.attempts("model")] == [1500]
        assert [a.seconds for a in h.attempts("model", assignment="assignments.decoder_lm")] == [100]
        view = render.history_view(session.Past(h.attempts(), bests, [], {}), "en")
    assert "transformer/model" in view and "decoder_lm/model" in view
    best_lines = view.split("Personal bests")[1].splitlines()
    assert any("transformer/model" in line and "25:00" in line for line in best_lines)
    assert any("decoder_lm/model" in line and "01:40" in line for line in best_lines)


def test_a_check_compares_with_the_best_of_its_own_assignment(tmp_path):
    """The first pass of the LM's drill ``rmsnorm`` is a personal best even after a faster pass of a drill of that id
    in another assignment (recorded here as the Transformer's)."""
    with History() as h:
        h.record(
            assignment="assignments.transformer",
            drill="rmsnorm",
            tasks=["rmsnorm"],
            workspace=tmp_path,
            started=0,
            finished=1,
            limit_s=1800,
            passed=True,
            score=10,
            max_score=10,
            hints=0,
            no_hints=False,
            profile="quick",
        )
    started = session.start(drill="rmsnorm", assignment="decoder_lm", dest=tmp_path / "ws", now=1000.0)
    solve(started.root, list(started.drill.tasks), assignment="decoder_lm")
    checked = session.check(path=started.root, now=1500.0)
    assert checked.result.passed and checked.new_best and checked.previous_best is None
    assert checked.attempt.assignment == "assignments.decoder_lm"


def test_an_older_history_file_gains_the_assignment_of_each_attempt(tmp_path):
    """A version-2 file (no ``attempts.assignment``) opens: each attempt takes the assignment its workspace's state
    file names, or the default one where the workspace is gone; its rows and quizzes stay."""
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    old_schema = history_module.SCHEMA.replace("    assignment TEXT NOT NULL DEFAULT 'assignments.transformer',\n", "")
    assert "assignment TEXT NOT NULL DEFAULT" not in old_schema.split("CREATE TABLE IF NOT EXISTS quizzes")[0]
    db.executescript(old_schema)
    db.execute("PRAGMA user_version = 2")
    lm_ws, gone = tmp_path / "lm_ws", tmp_path / "gone"
    lm_ws.mkdir()
    (lm_ws / STATE_FILE).write_text(
        json.dumps(
            {"drill": "model", "tasks": ["model"], "started": 0, "minutes": 30, "assignment": "assignments.decoder_lm"}
        ),
        encoding="utf-8",
    )
    row = (
        "(drill, tasks, workspace, started, finished, seconds, limit_s, passed, score, max_score, hints, checks, "
        "no_hints, profile) VALUES (?, ?, ?, 0, 60, 60, 1800, 1, 10, 10, 0, 1, 0, 'quick')"
    )
    db.execute(f"INSERT INTO attempts {row}", ("model", "model", str(lm_ws)))
    db.execute(f"INSERT INTO attempts {row}", ("model", "model", str(gone)))
    db.commit()
    db.close()
    with History(path) as h:
        assert [a.assignment for a in h.attempts()] == ["assignments.decoder_lm", "assignments.transformer"]
        assert set(h.bests()) == {("assignments.decoder_lm", "model"), ("assignments.transformer", "model")}
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == history_module.SCHEMA_VERSION


# -- messages ----------------------------------------------------------------------------------------------------


def test_every_task_has_two_hint_levels_in_both_languages():
    from grader.messages import CATALOGUES

    for lang in ("en", "zh"):
        for d in DRILLS:
            if not d.is_set:
                for level in (1, 2):
                    assert session.hint_key(d.id, level, A) in CATALOGUES[lang], (lang, d.id, level)
            assert f"practice.title.{d.id}" in CATALOGUES[lang]
    with pytest.raises(ValueError, match="levels are 1..2"):
        session.hint_key("mha", 3, A)
    with pytest.raises(ValueError, match="no hint for task='nosuch'"):
        session.hint_key("nosuch", 1, A)


def test_practice_messages_exist_in_both_languages_with_the_same_fields():
    import string

    from assignments.transformer.messages import practice_en as a_en
    from assignments.transformer.messages import practice_zh as a_zh
    from grader.messages import practice_en as k_en
    from grader.messages import practice_zh as k_zh

    for practice_en, practice_zh in ((k_en, k_zh), (a_en, a_zh)):  # the kit's screens, the assignment's texts
        assert set(practice_en.MESSAGES) == set(practice_zh.MESSAGES)
        assert all(k.startswith(("practice.", "quiz.")) for k in practice_en.MESSAGES)
        for key, en in practice_en.MESSAGES.items():
            fields = {f for _, f, _, _ in string.Formatter().parse(en) if f}
            assert fields == {f for _, f, _, _ in string.Formatter().parse(practice_zh.MESSAGES[key]) if f}, key


def test_without_hints_keeps_every_other_section():
    doc = "Summary.\n\nArgs:\n    x: one.\n\nHints:\n    Do this.\n\n    And that.\n\nReturns:\n    y."
    assert workspace.without_hints(doc) == "Summary.\n\nArgs:\n    x: one.\n\nReturns:\n    y."
    assert workspace.without_hints("概要。\n\n提示：\n    这样做。") == "概要。"
    assert workspace.without_hints("Summary.\n\nArgs:\n    hints: a name, not a section.") == (
        "Summary.\n\nArgs:\n    hints: a name, not a section."
    )


# -- another assignment --------------------------------------------------------------------------------------------

TOY = {
    "__init__.py": """
        from pathlib import Path

        from grader.assignment import Assignment, Task

        HERE = Path(__file__).resolve().parent
        ASSIGNMENT = Assignment(name="toy",
                                tasks=(Task("add", "arith.py", ("add",)), Task("mul", "arith.py", ("mul",))),
                                reference=HERE / "ref", skeleton=HERE / "stubs",
                                practice=f"{__name__}.practice", messages=f"{__name__}.messages")
    """,
    "practice.py": """
        from grader.practice.drills import Drill
        from grader.practice.quiz import Question

        DRILLS = (Drill("add", ("add",), 3, "easy"), Drill("arith5", ("add", "mul"), 5, "medium"))
        QUESTIONS = (Question("toy_sum", "arith", lambda ref, a, b: ref.get("add")(a, b),
                              lambda rng: dict(a=rng.randint(1, 9), b=rng.randint(1, 9))),)
    """,
    "messages/__init__.py": "",
    "messages/practice_en.py": """
        MESSAGES = {"practice.title.add": "Addition", "practice.title.arith5": "Both operations",
                    "quiz.toy_sum.q": "{a} + {b}?", "quiz.toy_sum.why": "It is {answer}.", "quiz.topic.arith": "sums"}
    """,
    "ref/arith.py": '''
        def add(a, b):
            """Return a + b."""
            return a + b


        def mul(a, b):
            """Return a * b."""
            return a * b
    ''',
    "stubs/arith.py": '''
        def add(a, b):
            """Return a + b.

            Hints:
                Python's + adds (a ≥ 0 or not)."""
            # TODO(add): return the sum of a and b with the + operator.
            raise NotImplementedError


        def mul(a, b):
            """Return a * b."""
            raise NotImplementedError
    ''',
}


def test_another_assignment_has_its_own_drills_and_quiz(tmp_path, capsys):
    folder = tmp_path / "toy_practice_hw"
    for name, source in TOY.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(source).lstrip())
    toy = str(folder)
    code, out, _ = gradekit(capsys, "practice", "--assignment", toy)
    assert code == 0 and "Addition" in out and "arith5" in out and "add + mul" in out and "classic45" not in out

    ws = tmp_path / "ws"
    code, out, _ = gradekit(capsys, "practice", "add", "--assignment", toy, "--dir", str(ws))
    assert code == 0 and "def add(a, b)" in out and "Return a + b." in out
    assert sorted(p.name for p in ws.glob("*.py")) == ["arith.py"]
    assert definitions((ws / "arith.py").read_text()) == {
        "add": definitions((folder / "stubs" / "arith.py").read_text())["add"],
        "mul": definitions((folder / "ref" / "arith.py").read_text())["mul"],
    }
    assert load(workspace.read_state(ws).assignment).name == "toy"
    code, _, err = gradekit(capsys, "practice", "masks", "--assignment", toy, "--dir", str(tmp_path / "other"))
    assert code == 2 and "unknown drill 'masks'" in err and "arith5" in err
    # No hints: the section goes, closing quotes and all, and the TODO keeps only its task id; no translation
    # exists, so the Chinese drill keeps the skeleton's text.
    code, out, _ = gradekit(
        capsys, "practice", "add", "--assignment", toy, "--dir", str(tmp_path / "bare"), "--no-hints", "--lang", "zh"
    )
    bare = (tmp_path / "bare" / "arith.py").read_text()
    assert code == 0 and "Hints:" not in out + bare and "≥" not in out + bare and "+ operator" not in bare
    assert definitions(bare)["add"] == (
        'def add(a, b):\n    """Return a + b."""\n    # TODO(add): '
        + text("practice.todo", "zh")
        + "\n    raise NotImplementedError\n"
    )
    assert definitions(bare)["mul"] == definitions((folder / "ref" / "arith.py").read_text())["mul"]

    # The quiz computes the answer from this assignment's reference.
    _, [asked] = quiz.draw(load(toy), n=0, seed=3)
    assert asked.answer == asked.params["a"] + asked.params["b"]
    code, out, _ = gradekit(capsys, "quiz", "--assignment", toy, "--seed", "3", "--answers", str(asked.answer))
    assert code == 0 and "Score: 1 / 1" in out and "[sums]" in out
    code, _, err = gradekit(capsys, "quiz", "--assignment", toy, "--topic", "attention")
    assert code == 2 and "unknown topic(s) attention; expected some of: arith" in err


# -- no hint leaks, honest history, saved quizzes, Chinese task text, workspaces outside the clone -----


def gradekit_line(capsys, line):
    """Run a printed command line (``gradekit ...``) through the whole CLI; ``(exit code, stdout, stderr)``."""
    import shlex

    from grader.cli import main

    argv = shlex.split(line)
    assert argv[0] == "gradekit", line
    code = main(argv[1:])
    out, err = capsys.readouterr()
    return code, out, err


def reproduce_lines(out):
    label = text("ui.reproduce", "en") + ": "
    return [line.split(label, 1)[1] for line in out.splitlines() if label in line]


def write_bug(ws, bug_id="masks.padding_inverted"):
    """Write the reference's masks with a catalogued mistake; returns the diagnosis sentence."""
    bug = Catalogue(A).by_id[bug_id]
    (ws / "masks.py").write_text(apply(bug, (A.reference / "masks.py").read_text()))
    return text("bug." + bug.id, "en")


def test_no_hints_mode_leaks_no_hint_through_the_task_text_the_files_or_the_rerun_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GRADEKIT_PROG", "gradekit")  # as if started by that name: the rerun lines begin with it
    ws = tmp_path / "ws"
    code, out, _ = gradekit(capsys, "practice", "masks", "--no-hints", "--minutes", "5", "--dir", str(ws))
    assert code == 0
    assert "Mask out padded *keys*." in out and "bool ``[B, 1, 1, L]``" in out  # the task itself is all there
    assert "Hints:" not in out and "Padding hides keys (the last axis), not queries." not in out
    for path in sorted(ws.glob("*.py")):
        source = path.read_text()
        compile(source, path.name, "exec")
        assert "Hints:" not in source, path.name
    masks = (ws / "masks.py").read_text()
    assert "Mask out padded *keys*." in masks and "Returns:" in masks
    assert "TODO(masks)" in masks and "lower-triangular" not in masks  # the stub's recipe is a hint too

    diagnosis = write_bug(ws)
    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(ws))
    assert code == 1 and diagnosis not in out and "withheld" in out
    lines = reproduce_lines(out)
    assert lines and all(line.startswith("gradekit practice --check --only masks.") for line in lines), lines
    code, out, _ = gradekit_line(capsys, lines[0])  # following the rerun line keeps the diagnosis withheld
    assert code == 1 and diagnosis not in out and "withheld" in out
    assert text("practice.check.partial", "en", **session.commands(root=ws)) in out  # a rerun is not an attempt
    with History() as h:
        [attempt] = h.attempts()
    assert attempt.checks == 1

    state = workspace.read_state(ws)
    state.started -= 5 * 60 + 1  # the time is up: the same rerun line now shows the diagnosis
    workspace.write_state(ws, state)
    code, out, _ = gradekit_line(capsys, lines[0])
    assert code == 1 and diagnosis in out and "withheld" not in out


def test_with_hints_the_workspace_keeps_them_and_the_rerun_line_diagnoses(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GRADEKIT_PROG", "gradekit")  # as if started by that name: the rerun lines begin with it
    ws = tmp_path / "ws"
    code, out, _ = gradekit(capsys, "practice", "masks", "--minutes", "5", "--dir", str(ws))
    assert code == 0 and "Hints:" in out and "Padding hides keys (the last axis), not queries." in out
    assert (ws / "masks.py").read_text().count("Hints:") == 2
    assert "lower-triangular" in (ws / "masks.py").read_text()
    diagnosis = write_bug(ws)
    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(ws), "--profile", "full")
    assert code == 1 and diagnosis in out
    [line, *_] = reproduce_lines(out)
    assert line == f"gradekit practice --check --only masks.padding --dir {ws} --profile full"
    code, out, _ = gradekit_line(capsys, line)
    assert code == 1 and diagnosis in out and "masks.padding" in out and "masks.target" not in out
    code, _, err = gradekit(capsys, "practice", "--check", "--dir", str(ws), "--only", "mha.equivalence")
    assert code == 2 and "mha.equivalence" in err and "masks.padding" in err


def _shift(ws, seconds):
    """Move a workspace's attempt ``seconds`` into the past, in its state and in the history."""
    state = workspace.read_state(ws)
    state.started -= seconds
    workspace.write_state(ws, state)
    with History() as h:
        with h.db:
            h.db.execute(
                "UPDATE attempts SET started = started - ?, finished = finished - ? WHERE workspace = ?",
                (seconds, seconds, str(ws.resolve())),
            )


def test_history_tells_in_progress_and_abandoned_attempts_from_failed_ones(tmp_path, capsys):
    running, left, late, fresh = (tmp_path / n for n in ("running", "left", "late", "fresh"))
    for ws in (running, left, late):
        assert gradekit(capsys, "practice", "masks", "--minutes", "45", "--dir", str(ws))[0] == 0
        write_bug(ws)
    _shift(late, 46 * 60)  # checked after its time ran out, still wrong: failed
    for ws in (running, left, late):
        assert gradekit(capsys, "practice", "--check", "--dir", str(ws))[0] == 1
    _shift(left, 2 * 3600)  # checked with 45 minutes left, then never again: abandoned, not failed
    assert gradekit(capsys, "practice", "sdpa", "--dir", str(fresh))[0] == 0  # started, never checked

    code, out, _ = gradekit(capsys, "practice", "--history")
    assert code == 0
    with History() as h:
        by_ws = {Path(a.workspace).name: a for a in h.attempts()}
    assert sorted(by_ws) == ["fresh", "late", "left", "running"]
    assert out.count(text("practice.result.failed", "en")) == 1
    assert out.count(text("practice.result.running", "en").split(" (")[0]) == 2  # running and fresh
    assert out.count(text("practice.result.abandoned", "en")) == 1
    now = time.time()
    assert by_ws["running"].status(now) == "running" and by_ws["fresh"].status(now) == "running"
    assert by_ws["left"].status(now) == "abandoned" and by_ws["late"].status(now) == "failed"
    assert by_ws["fresh"].checks == 0
    code, out, _ = gradekit(capsys, "practice", "--history", "--lang", "zh")
    assert text("practice.result.running", "zh").split("（")[0] in out
    assert text("practice.result.abandoned", "zh") in out


def test_quiz_results_are_saved_and_shown_in_the_history(capsys, monkeypatch):
    monkeypatch.setenv("GRADEKIT_PROG", "gradekit")  # as if started by that name: the printed commands begin with it
    _, asked = quiz.draw(A, n=4, seed=21)
    answers = [quiz.show_answer(a) for a in asked[:3]] + [""]
    code, out, _ = gradekit(capsys, "quiz", "--n", "4", "--seed", "21", "--answers", ",".join(answers))
    assert code == 1 and "Score: 3 / 4" in out and text("quiz.saved", "en", **session.commands()) in out
    with History() as h:
        [taken] = h.quizzes()
        rows = h.quiz_answers(taken.id)
    assert (taken.right, taken.total, taken.seed, taken.answered) == (3, 4, 21, 3)
    assert [r.question for r in rows] == [a.question.id for a in asked]
    assert [r.right for r in rows] == [True, True, True, False] and rows[3].reply == ""
    code, out, _ = gradekit(capsys, "practice", "--history")
    assert code == 0 and text("practice.history.quizzes", "en", n=1) in out and "3 / 4 (75%)" in out
    assert "gradekit quiz --n 4 --seed 21" in out  # how to take the same questions again
    code, out, _ = gradekit(capsys, "practice", "--history", "--lang", "zh")
    assert text("practice.history.quizzes", "zh", n=1) in out
    # A quiz with nothing answered is not a result.
    gradekit(capsys, "quiz", "--n", "2", "--seed", "3", "--answers", ",")
    with History() as h:
        assert len(h.quizzes()) == 1


def test_drill_texts_come_in_chinese(tmp_path, capsys):
    from assignments.transformer.practice import TASK_TEXTS

    for d in DRILLS:
        ws = tmp_path / d.id
        code, out, _ = gradekit(capsys, "practice", d.id, "--lang", "zh", "--dir", str(ws))
        assert code == 0
        for t in workspace.task_texts(d.tasks, A):
            english = t.doc.splitlines()[0]
            assert english not in out, (d.id, t.name)
            assert TASK_TEXTS["zh"][t.name].splitlines()[0] in out, (d.id, t.name)
            source = (ws / t.file).read_text()
            compile(source, t.file, "exec")
            assert english not in source and TASK_TEXTS["zh"][t.name].splitlines()[0] in source, (d.id, t.name)
            assert "is not implemented yet" not in source and "TODO(" in source, (d.id, t.file)
        # no English sentence of the kit either: every line is the task's code, names, or Chinese
        assert "Write:" not in out and "Clock:" not in out
    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(tmp_path / "masks"))
    assert code == 1 and text("ui.not_implemented", "zh") in out  # the stubs still read as not written


def test_chinese_task_texts_name_everything_the_english_ones_do():
    from assignments.transformer.practice import TASK_TEXTS

    assert_chinese_task_texts_match(A, DRILLS, TASK_TEXTS["zh"])


def test_workspaces_live_outside_the_clone_and_ignore_themselves(tmp_path, monkeypatch, capsys, home):
    clone = tmp_path / "clone"
    clone.mkdir()
    monkeypatch.chdir(clone)
    code, out, _ = gradekit(capsys, "practice", "masks")
    assert code == 0 and not any(clone.iterdir())  # nothing written where the command ran
    [ws] = (home / "practice").iterdir()
    assert ws.name.startswith("masks-") and str(ws) in out
    assert (ws / ".gitignore").read_text().splitlines()[-1] == "*"
    # From anywhere, --check and --hint take the workspace started last.
    code, out, _ = gradekit(capsys, "practice", "--check")
    assert code == 1 and str(ws) in out
    assert gradekit(capsys, "practice", "--hint")[0] == 0 and workspace.read_state(ws).hints == {"masks": 1}
    # A workspace put inside a clone with --dir ignores itself too.
    code, _, _ = gradekit(capsys, "practice", "sdpa", "--dir", str(clone / "mine"))
    assert code == 0 and (clone / "mine" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_the_repository_ignores_what_practice_may_leave_in_a_clone():
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = Path(__file__).resolve().parents[2]
    for path in (
        "practice-mha-20240101-120000/attention.py",
        "sub/practice-masks-20240101-120000/masks.py",
        "my-drill/.gradekit-practice.json",
    ):
        got = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=root)
        assert got.returncode == 0, path
    for path in ("practice_notes.md", "grader/practice/session.py"):
        got = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=root)
        assert got.returncode == 1, path
