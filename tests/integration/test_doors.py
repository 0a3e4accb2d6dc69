"""Every door grades alike: one submission and one course configuration (which sets the assignment, the limits,
hidden checks, points and the language), graded through ``gradekit check``, ``gradekit watch``, the pytest plugin,
the notebook API, ``gradekit batch`` and a Gradescope autograder built with ``gradekit gradescope build``. Each
door resolves its options through ``grader.api.settings``; what each graded (the assignment, the checks, their
points and verdicts, the limits, the language, the banned list) is compared.

The student's doors leave out the check the course hides from students; the instructor's (``check
--all-checks``, the batch, Gradescope) grade it; everything else is the same for all."""

import json
import os
import shutil
import zipfile

import pytest

from grader import api, cli, notebook, watch
from grader.assignment import load
from grader.batch import gradescope_build, gradescope_run
from grader.batch.runner import batch
from grader.bugs.catalogue import Catalogue
from grader.views import json_view

pytest_plugins = ["pytester"]

ASSIGNMENT = load("decoder_lm")
BUG = "rmsnorm.no_weight"  # one check of the two tasks fails, so that verdicts are compared too
HIDDEN = "rmsnorm.devices"
COURSE = f"""
assignment = "decoder_lm"
tasks = ["rmsnorm", "swiglu"]
lang = "zh"
banned = ["torch.nn.functional.rms_norm", "torch.nn.RMSNorm"]

[limits]
call_timeout = 41
total_timeout = 333
memory_mb = 3000

[points]
rmsnorm = 20
"swiglu.equivalence" = 10

[visibility]
"{HIDDEN}" = "hidden"
"""
LIMITS = {"call_timeout": 41.0, "total_timeout": 333.0, "memory_mb": 3000}


@pytest.fixture(autouse=True, scope="module")
def _graded_once_before_any_run():
    """The plugin's door runs pytest in this process (``pytester``), which forgets, when it ends, the modules
    imported meanwhile; some cannot be imported twice in one process (the checks register themselves, and the
    compiler torch imports on first use registers an operator library), and a later grading in this process then
    loses points. A grading of each assignment here, before any run, imports them for good (as
    ``tests/integration/test_plugin.py`` does)."""
    api.check(path=load("transformer").reference, tasks=("masks",), profile="quick")
    api.check(path=ASSIGNMENT.reference, assignment=ASSIGNMENT, tasks=("rmsnorm",), profile="quick")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder: its ``gradekit.toml`` and one student's submission ``sub/`` (the reference with a bug)."""
    root = tmp_path_factory.mktemp("course")
    (root / "gradekit.toml").write_text(COURSE)
    catalogue = Catalogue(ASSIGNMENT)
    catalogue.write_mutant(catalogue.by_id[BUG], root / "class" / "student1")
    shutil.copytree(root / "class" / "student1", root / "sub")
    return root


@pytest.fixture
def graded(monkeypatch, course):
    """Every ``GradeResult`` that ``api.check`` returns in this process while the test runs, from the course's
    folder (where each door finds the configuration)."""
    results = []
    check = api.check

    def recording(**kwargs):
        result = check(**kwargs)
        results.append(result)
        return result

    monkeypatch.setattr(api, "check", recording)
    monkeypatch.chdir(course)
    return results


def seen(data):
    """What a grading graded, from its JSON document: assignment, settings, and each check's points and verdict."""
    checks = {c["id"]: (c["max_score"], c["status"]) for t in data["tasks"] for c in t["checks"]}
    return {
        "assignment": data["assignment"],
        "profile": data["profile"],
        "settings": data["settings"],
        "checks": checks,
    }


def of(result):
    return seen(json_view.to_data(result, lang="en"))


def expected_settings():
    return {"limits": LIMITS, "lang": "zh", "banned": ["torch.nn.functional.rms_norm", "torch.nn.RMSNorm"]}


def test_every_door_grades_the_same_settings_checks_and_points(course, graded, pytester, tmp_path):
    os.chdir(course)  # pytester moved to its own folder; each door finds the configuration from the course's
    # gradekit check, as a student and as the instructor
    assert cli.main(["check", "sub", "--profile", "quick", "--json", str(tmp_path / "s.json")]) == 1
    student = seen(json.loads((tmp_path / "s.json").read_text()))
    assert cli.main(["check", "sub", "--profile", "quick", "--all-checks", "--json", str(tmp_path / "i.json")]) == 1
    instructor = seen(json.loads((tmp_path / "i.json").read_text()))

    assert student["assignment"] == "decoder_lm" and student["settings"] == expected_settings()
    ids = {c.id for c in api.engine.select_checks(ASSIGNMENT, tasks=("rmsnorm", "swiglu"), profile="quick")}
    assert set(instructor["checks"]) == ids and set(student["checks"]) == ids - {HIDDEN}
    assert {k: v for k, v in instructor["checks"].items() if k != HIDDEN} == student["checks"]
    rmsnorm = [v[0] for k, v in instructor["checks"].items() if k.startswith("rmsnorm.")]
    assert sum(rmsnorm) == pytest.approx(20, abs=1e-3)  # the course's points, the hidden check's included
    assert instructor["checks"]["swiglu.equivalence"][0] == 10
    failed = {k for k, v in student["checks"].items() if v[1] != "passed"}
    assert failed and all(k.startswith("rmsnorm.") for k in failed)

    doors = {}
    # gradekit watch (its first grading, as the command builds it)
    graded.clear()
    w = watch.from_command(cli.build_parser().parse_args(["watch", "sub"]))
    w.grade(w.task_ids)
    doors["watch"] = of(w.last)

    # the notebook API: the kernel's cells are the submission's files
    cells = [""] + [(course / "sub" / f).read_text() for f in ASSIGNMENT.contract_files]

    class Shell:
        class history_manager:  # noqa: N801 - IPython's attribute
            input_hist_raw = cells

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(notebook, "_kernel", lambda lang: Shell)
    try:
        doors["notebook"] = of(notebook.check_all().result)
    finally:
        monkeypatch.undo()

    # the pytest plugin, run in this process from the course's folder
    graded.clear()
    (pytester.path / "gradekit.toml").write_text(COURSE)
    shutil.copytree(course / "sub", pytester.path / "sub")
    pytester.chdir()
    run = pytester.runpytest_inprocess("--submission", "sub", "--gradekit-profile", "quick", "-p", "no:cacheprovider")
    assert run.ret == 1, run.stdout.str()[-2000:]
    assert len(graded) == 1
    doors["plugin"] = of(graded[0])
    for door, what in doors.items():
        assert what == student, f"{door} graded otherwise than gradekit check"

    # the instructor's doors: a batch (judges in their own processes: their results.json), and Gradescope
    out = tmp_path / "batch"
    batch(
        submissions=course / "class", out=out, jobs=1, profile="quick", config=course / "gradekit.toml", figures=False
    )
    by_door = {"batch": seen(json.loads((out / "student1" / "results.json").read_text()))}
    zip_path = gradescope_build.build(out=tmp_path / "autograder.zip", config=course / "gradekit.toml", profile="quick")
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
    settings = json.loads((root / "source" / "settings.json").read_text())
    assert {k: settings[k] for k in LIMITS} == LIMITS and settings["lang"] == "zh"
    shutil.copytree(course / "sub", root / "submission")
    graded.clear()
    (tmp_path / "scratch").mkdir()
    gradescope_run.grade(
        root, settings, tmp_path / "scratch", lang=settings["lang"], output_format=settings["output_format"]
    )
    by_door["gradescope"] = of(graded[0])
    for door, what in by_door.items():
        # sealed in a worker, graded alike
        assert what == instructor, f"{door} graded otherwise than gradekit check --all-checks"


def test_an_explicit_option_wins_over_the_course_and_the_course_over_the_defaults(course, graded):
    from grader.config import CourseConfig
    from grader.options import DEFAULTS

    config = CourseConfig.load(course / "gradekit.toml")
    s = api.settings(config=config, call_timeout=7, lang="en")
    assert s.assignment.name == "decoder_lm"
    assert s.limits == {"call_timeout": 7.0, "total_timeout": 333.0, "memory_mb": 3000}
    assert s.options.lang == "en" and s.options.banned == tuple(config.banned)
    bare = api.settings()
    assert bare.assignment.name == "transformer" and bare.options.banned == load("transformer").banned
    assert bare.limits == {k: DEFAULTS[k].value for k in LIMITS} and bare.options.lang == DEFAULTS["lang"].value
    assert (bare.copy_policy, bare.output_format) == (DEFAULTS["copy_policy"].value, DEFAULTS["output_format"].value)
    assert api.settings(assignment="transformer", config=config).assignment.name == "transformer"


def test_sealed_is_the_one_word_of_every_door_and_isolated_its_hidden_former_name(monkeypatch):
    """``--sealed`` (a worker process) is what ``check`` and ``watch`` offer and every printed command says;
    ``--isolated``, its former name (now the word of a check's variant only), still parses to it, unlisted, and
    ``isolated=`` still grades sealed through ``api.settings``/``api.check`` (``CheckOptions.of``) and the
    notebook API, so that commands and notebooks written before the rename keep working."""
    from grader.options import CheckOptions

    parser = cli.build_parser()
    for command in (["check", "sub"], ["watch", "sub"]):
        assert parser.parse_args(command + ["--sealed"]).sealed is True
        assert parser.parse_args(command + ["--isolated"]).sealed is True
        assert parser.parse_args(command).sealed is False
        assert not hasattr(parser.parse_args(command), "isolated")
        usage = parser._subparsers._group_actions[0].choices[command[0]].format_help()  # its --help
        assert "--sealed" in usage and "sealed grading" in usage and "--isolated" not in usage
    reference = str(load("transformer").reference)
    assert watch.from_command(parser.parse_args(["watch", reference, "--isolated"])).options.sealed is True

    assert CheckOptions.of(isolated=True).sealed is True and CheckOptions.of(sealed=True).sealed is True
    assert CheckOptions.of(sealed=True, isolated=False).sealed is True  # the new name wins where both are given
    assert not any(f == "isolated" for f in CheckOptions.__dataclass_fields__)
    assert api.settings(isolated=True).options.sealed is True

    spec = api.engine.checks_of(load("transformer"))[0]
    line = api.reproduce_command("sub", spec, sealed=True)
    assert line.endswith("--sealed") and "--isolated" not in line

    asked = []
    monkeypatch.setattr(notebook, "_grade", lambda tasks, **kw: asked.append(kw["sealed"]))
    notebook.check("masks", sealed=True)
    notebook.check("masks", isolated=True)
    notebook.check_all(isolated=True)
    notebook.check("masks")
    assert asked == [True, True, True, False]
