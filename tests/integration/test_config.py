"""The course configuration: loading, discovery, validation messages, points, visibility; and the
Gradescope autograder zip, run in a folder that stands in for ``/autograder``."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import api
from grader.assignment import AssignmentError, load
from grader.config import ConfigError, CourseConfig
from grader.engine import checks_of
from tests.conftest import TRANSFORMER

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"
TINY = Path(__file__).resolve().parents[1] / "data" / "tiny_assignment"
"""A second assignment (tasks softmax and attend)."""

TOML = """
tasks = ["masks", "sdpa"]
banned = ["torch.nn.functional.scaled_dot_product_attention"]

[points]
masks = 20
"masks.device" = 4

[limits]
call_timeout = 30
memory_mb = 2048

[visibility]
"masks.device" = "hidden"
"sdpa.*" = "after_published"
"sdpa.equivalence" = "visible"
"""


def _config(tmp_path, text=TOML, name="gradekit.toml"):
    path = tmp_path / name
    path.write_text(text)
    return CourseConfig.load(path)


def test_load_and_discover(tmp_path):
    config = _config(tmp_path)
    assert config.tasks == ("masks", "sdpa") and config.limits["memory_mb"] == 2048
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert CourseConfig.discover(tmp_path / "a" / "b").tasks == ("masks", "sdpa")
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.gradekit]\ntasks = ["mha"]\n')
    assert CourseConfig.discover(other).tasks == ("mha",)


@pytest.mark.parametrize(
    "text, says",
    [
        ('tasks = ["attention"]', "unknown task id 'attention'"),
        ("colour = 1", "unknown key 'colour'"),
        ("[points]\nmasks = -1", "points.masks: expected points >= 0, got -1"),
        ('[visibility]\nmasks = "secret"', "expected one of visible, hidden, after_due_date, after_published"),
        ("[limits]\ncall_timeout = 0", "limits.call_timeout: expected a positive number, got 0"),
        ("[limits]\nwall = 3", "limits.wall: unknown limit"),
        ("tasks = [", "not valid TOML"),
        ('assignment = "nope"', "assignment: no assignment 'nope'"),
        ("assignment = 3", "'assignment' must be an assignment's name, import path or folder"),
        ('assignment = "no/such/folder"', "has no __init__.py"),
        ('lang = "fr"', "lang must be one of en, zh, got 'fr'"),
        ("title = ''", "'title' must be a non-empty string"),
        ('[columns]\nattention = "Q1"', "columns.attention: unknown task id 'attention'"),
        ("[columns]\nsdpa = 1", "columns.sdpa: expected a column heading (a string), got 1"),
        ('[gradescope]\noutput_format = "pdf"', "gradescope.output_format must be one of text, md, html"),
        ('[gradescope]\nformat = "md"', "gradescope.format: unknown key; expected output_format"),
        ('overrides = "reviews.xlsx"', "'overrides' must name a .toml or .csv file"),
    ],
)
def test_validation_says_where_what_was_expected_and_what_came(tmp_path, text, says):
    with pytest.raises(ConfigError, match="gradekit.toml") as info:
        _config(tmp_path, text)
    assert says in str(info.value)


def test_the_term_keys_title_lang_columns_output_format_and_overrides(tmp_path):
    bare = _config(tmp_path, "")
    assert (bare.title, bare.lang, bare.columns, bare.gradescope_format, bare.overrides) == (None, None, {}, "md", None)
    (tmp_path / "overrides.csv").write_text("student,points\n")
    assert _config(tmp_path, "").overrides == (tmp_path / "overrides.csv").resolve()  # found beside it
    config = _config(
        tmp_path,
        'title = "HW2"\nlang = "zh"\noverrides = "term/reviews.toml"\n'
        '[columns]\nsdpa = " Q1 attention "\n[gradescope]\noutput_format = "html"\n',
    )
    assert (config.title, config.lang, config.columns, config.gradescope_format) == (
        "HW2",
        "zh",
        {"sdpa": "Q1 attention"},
        "html",
    )
    assert config.overrides == (tmp_path / "term" / "reviews.toml").resolve()  # named: need not exist yet


def test_points_scale_to_the_task_and_visibility_patterns(tmp_path):
    config = _config(tmp_path)
    selection = config.select([s for s in checks_of(TRANSFORMER) if "quick" in s.profiles])
    specs = selection.graded
    masks = [s for s in specs if s.task == "masks"]
    assert {s.task for s in specs} == {"masks", "sdpa"}
    assert sum(config.points_of(s, selection) for s in masks) == pytest.approx(20)
    by_id = {s.id: s for s in specs}
    assert config.points_of(by_id["masks.device"], selection) == pytest.approx(20 * 4 / 13, abs=1e-4)
    assert config.visibility_of(by_id["masks.device"]) == "hidden"
    assert config.visibility_of(by_id["sdpa.weights"]) == "after_published"
    assert config.visibility_of(by_id["sdpa.equivalence"]) == "visible"
    assert config.visibility_of(by_id["masks.padding"]) == "visible"
    # The selection is a value handed to the calls that weigh points, not state left on the configuration: a
    # student's selection weighs its hidden checks too, and selecting again does not change an earlier answer.
    student = config.students()
    theirs = student.select([s for s in checks_of(TRANSFORMER) if "quick" in s.profiles])
    assert "masks.device" not in {s.id for s in theirs.graded} and "masks.device" in {s.id for s in theirs.hidden}
    shown = [s for s in theirs.graded if s.task == "masks"]
    assert sum(student.points_of(s, theirs) for s in shown) == pytest.approx(20 - 20 * 4 / 13, abs=1e-3)
    student.select([s for s in checks_of(TRANSFORMER) if s.task == "masks" and s.id != "masks.padding"])
    assert sum(student.points_of(s, theirs) for s in shown) == pytest.approx(20 - 20 * 4 / 13, abs=1e-3)


def test_the_assignment_it_names_is_the_one_task_ids_are_checked_against(tmp_path):
    assert _config(tmp_path, 'tasks = ["mha"]').assignment is None  # the default, transformer
    assert _config(tmp_path, 'assignment = "transformer"\ntasks = ["mha"]').assignment == "transformer"
    # A folder, relative to the file: made absolute, so that any process can load it.
    relative = os.path.relpath(TINY, tmp_path)
    config = _config(tmp_path, f'assignment = "{relative}"\ntasks = ["softmax"]\n[points]\nattend = 5\n')
    assert config.assignment == str(TINY) and load(config.assignment).task_ids == ("softmax", "attend")
    with pytest.raises(
        ConfigError, match="gradekit.toml: tasks: unknown task id 'mha'; expected one of softmax, attend"
    ):
        _config(tmp_path, f'assignment = "{relative}"\ntasks = ["mha"]\n')
    # The assignment a caller grades wins over the one the file names (whose folder need not exist there).
    path = tmp_path / "gradekit.toml"
    path.write_text('assignment = "elsewhere/hw"\ntasks = ["attend"]\n')
    assert CourseConfig.load(path, assignment=load(TINY)).tasks == ("attend",)
    with pytest.raises(ConfigError, match="unknown task id 'attend'"):
        CourseConfig.load(path, assignment="transformer")
    with pytest.raises(AssignmentError):
        CourseConfig.load(path, assignment="nope")


def test_a_student_self_check_neither_runs_nor_shows_hidden_checks(tmp_path):
    config = _config(tmp_path, '[visibility]\n"masks.device" = "hidden"\n').students()
    result = api.check(path=SUBMISSIONS / "alt_loops", tasks=["masks"], profile="quick", config=config, diagnose=False)
    ids = [c.id for t in result.tasks for c in t.checks]
    assert "masks.device" not in ids and "masks.padding" in ids
    assert result.hidden_checks == 1
    from grader.messages import text
    from grader.views import terminal

    summary = terminal.summary(result, lang="en")
    assert text("ui.public_passed", "en", hidden=1) in summary and text("ui.all_passed", "en") not in summary


def test_a_rerun_of_one_check_has_its_points_in_the_course_not_the_whole_task(tmp_path):
    config = _config(tmp_path).students()
    whole = api.check(path=SUBMISSIONS / "alt_loops", tasks=["masks"], profile="quick", config=config, diagnose=False)
    by_id = {c.id: c for t in whole.tasks for c in t.checks}
    one = api.check(
        path=SUBMISSIONS / "alt_loops", only=["masks.padding"], profile="quick", config=config, diagnose=False
    )
    (check,) = [c for t in one.tasks for c in t.checks]
    assert check.max_score == pytest.approx(by_id["masks.padding"].max_score) and check.max_score < 20
    assert one.hidden_checks == whole.hidden_checks == 1


def _run_autograder(archive, submission, tmp_path):
    """Run the zip as Gradescope does, in a folder standing in for ``/autograder``, on the ``.py`` files of
    ``submission``; ``(names in the zip, settings.json, results.json)``."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        settings = json.loads(zf.read("settings.json"))
        zf.extractall(root / "source")
    run = root / "run_autograder"
    run.write_bytes((root / "source" / "run_autograder").read_bytes())
    run.chmod(0o755)
    (root / "submission").mkdir()
    for f in Path(submission).glob("*.py"):
        (root / "submission" / f.name).write_bytes(f.read_bytes())
    env = {
        "PATH": os.environ["PATH"],
        "GRADEKIT_AUTOGRADER_ROOT": str(root),
        "GRADEKIT_PYTHON": sys.executable,
        "HOME": str(tmp_path),
    }
    done = subprocess.run(["bash", str(run)], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return names, settings, json.loads((root / "results" / "results.json").read_text())


def test_gradescope_autograder_zip_runs_like_in_the_container(tmp_path):
    from grader.batch.gradescope_build import build

    config = tmp_path / "gradekit.toml"
    config.write_text('tasks = ["masks"]\n[limits]\ncall_timeout = 20\n\n[visibility]\n"masks.device" = "hidden"\n')
    archive = build(out=tmp_path / "autograder.zip", config=config, profile="quick")
    names, settings, data = _run_autograder(archive, SUBMISSIONS / "alt_loops", tmp_path)
    assert {
        "setup.sh",
        "run_autograder",
        "requirements.txt",
        "src/grader/api.py",
        "src/solution/masks.py",
        "src/skeleton/masks.py",
        "src/assignments/__init__.py",
        "src/assignments/transformer/__init__.py",
        "src/assignments/transformer/checks/masks.py",
        "src/assignments/transformer/data/pinyin_pairs.tsv",
    } <= names
    assert settings["assignment"] == "assignments.transformer"
    assert data["score"] == 10 and isinstance(data["execution_time"], int)
    (copy,) = [t for t in data["tests"] if t["tags"] == ["copy_of_reference"]]  # the instructor's, hidden
    tests = {t["name"]: t for t in data["tests"] if t is not copy}
    assert set(tests) == {"masks.padding", "masks.causal", "masks.target", "masks.device"}
    assert tests["masks.device"]["visibility"] == "hidden" and tests["masks.padding"]["visibility"] == "visible"
    assert all(set(t) >= {"name", "score", "max_score", "status", "output", "visibility"} for t in tests.values())
    assert copy["visibility"] == "hidden" and copy["status"] == "passed"
    assert set(data["extra_data"]) == {"gradekit"}  # nothing of the verdict where a student's JSON may carry it


def test_gradescope_zip_of_an_assignment_in_a_folder_of_its_own(tmp_path):
    from grader.batch.gradescope_build import build

    with pytest.raises(ValueError, match="unknown task id"):
        build(out=tmp_path / "other.zip", assignment=str(TINY), tasks=("mha",))
    archive = build(out=tmp_path / "autograder.zip", assignment=str(TINY), tasks=("softmax",), profile="quick")
    # The reference itself: every check passes, and the copy of the reference scores 0.
    names, settings, data = _run_autograder(archive, TINY / "reference", tmp_path)
    assert {
        "src/grader/api.py",
        "src/tiny_assignment/__init__.py",
        "src/tiny_assignment/reference/ops.py",
        "src/tiny_assignment/skeleton/ops.py",
    } <= names
    assert not any(n.startswith(("src/solution/", "src/assignments/")) for n in names)
    assert settings["assignment"] == "src/tiny_assignment" and settings["tasks"] == ["softmax"]
    (copy,) = [t for t in data["tests"] if t["tags"] == ["copy_of_reference"]]  # the instructor's, hidden
    checks = [t for t in data["tests"] if t is not copy]
    assert checks and all(t["name"].startswith("softmax.") and t["status"] == "passed" for t in checks)
    assert copy["visibility"] == "hidden" and copy["status"] == "failed" and data["score"] == 0
