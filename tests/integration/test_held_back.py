"""The final grade's held-back examples: memorising a student kit's answer bank gains nothing there.

A student kit grades against its answer bank, whose questions are the same every run; a student holds the bank, so a
submission could answer from it. ``tests/hostile/replay/`` does, written from the kit's source: its
``scaled_dot_product_attention`` and ``LayerNorm`` rebuild the question the kit would ask the reference about their
very inputs (``refcache.question_key``: the probe, the variant, the arguments' wire encoding and layout), look it up
in the copy of the kit's bank it carries (``answers.bank``, read with its own code), and return the reference's
answer; where the bank has none they answer something cheap and wrong (uniform attention, a centred input) that
still satisfies the checks asking no reference. No replay can pass the float32 checks: their question is about the
float64 inputs, the submission sees them rounded. So it earns every point of ``sdpa`` and ``layernorm`` but
``sdpa.float32`` and ``layernorm.devices``, in the kit and in a final grade without a course secret alike.

With a course secret (``[held_back]`` in the course configuration), the final grade (``batch``, Gradescope) grades
each check that draws examples on the default examples and again on held-back ones drawn from a seed made of the
secret and the check's id, and a check earns its points only where it passes on both: the replay loses the two
equivalence checks it won from the bank; the reference and correct submissions written in other styles keep every
point; two runs give the same scores; the batch without a secret says once how to add one; a kit holding the
secret is refused. The class graded by ``batch`` is in ``tests/corpus/test_held_back_batch.py``; this file grades one
submission at a time, Gradescope's run and the configuration.
"""

import json
import shutil
import zipfile

import pytest

from grader import api, kit
from grader.assignment import load
from grader.batch import gradescope_build, gradescope_run
from grader.config import ConfigError, CourseConfig, held_back_seed
from grader.options import DEFAULTS
from tests.held_back import (
    HERE,
    NO_REPLAY,
    REPLAY,
    REPLAYED,
    SECRET,
    TASKS,
    A,
    course_file,
    module_fixtures,
    statuses,
)

bank, replay = module_fixtures()


# -- the replay ----------------------------------------------------------------------------------------------------


def test_the_replay_wins_its_checks_in_the_kit_by_the_bank_alone(replay, bank, tmp_path):
    got = statuses(api.check(path=replay, assignment=A, profile="quick", tasks=TASKS, bank=str(bank)))
    assert {c for c, s in got.items() if s != "passed"} == NO_REPLAY
    without = tmp_path / "replay"  # the same code without the bank beside it: its own answers fail
    shutil.copytree(replay, without)
    (without / "answers.bank").unlink()
    alone = statuses(api.check(path=without, assignment=A, profile="quick", tasks=TASKS, bank=str(bank)))
    assert {c for c, s in alone.items() if s != "passed"} == NO_REPLAY | REPLAYED


# -- the course configuration, Gradescope and the kit ---------------------------------------------------------------


def test_the_secret_is_read_from_the_file_the_variable_or_the_configuration(tmp_path, monkeypatch):
    def course(table):
        return CourseConfig.from_dict({"held_back": table}, base=tmp_path)

    (tmp_path / "s.txt").write_text(SECRET + "\n", encoding="utf-8")
    monkeypatch.setenv("COURSE_SECRET", SECRET)
    seeds = {
        course({"secret_file": "s.txt"}).held_back_seed(),
        course({"secret_env": "COURSE_SECRET"}).held_back_seed(),
        course({"secret": SECRET}).held_back_seed(),
    }
    assert seeds == {held_back_seed(SECRET.encode())}
    assert held_back_seed(b"another term") not in seeds
    assert CourseConfig.from_dict({}).held_back_seed() is None
    for table, said in (
        ({"secret": "a", "secret_env": "B"}, "expected one of them"),
        ({"seed": 3}, "unknown key"),
        ({"secret": ""}, "non-empty string"),
    ):
        with pytest.raises(ConfigError, match=said):
            course(table)
    monkeypatch.delenv("COURSE_SECRET")
    with pytest.raises(ConfigError, match="COURSE_SECRET is not set"):
        course({"secret_env": "COURSE_SECRET"}).held_back_seed()
    with pytest.raises(ConfigError, match="cannot read"):
        course({"secret_file": "missing.txt"}).held_back_seed()


def test_gradescope_grades_both_sets_from_the_seed_it_was_built_with(tmp_path, replay):
    config = course_file(tmp_path / "course", SECRET)
    zip_path = gradescope_build.build(out=tmp_path / "autograder.zip", config=config, profile="quick")
    with zipfile.ZipFile(zip_path) as zf:
        assert not [n for n in zf.namelist() if SECRET.encode() in zf.read(n)]
        zf.extractall(tmp_path / "root" / "source")
    settings = json.loads((tmp_path / "root" / "source" / "settings.json").read_text())
    assert settings["held_back"] == held_back_seed(SECRET.encode())
    shutil.copytree(replay, tmp_path / "root" / "submission")
    (tmp_path / "scratch").mkdir()
    data = gradescope_run.grade(tmp_path / "root", settings, tmp_path / "scratch", lang="en", output_format="text")
    failed = {t["name"] for t in data["tests"] if t.get("status") == "failed"}
    assert REPLAYED <= failed, failed
    assert "On the kit's examples: 7 of 9 checks passed" in data["output"]


def test_a_kit_holding_the_secret_is_refused_and_nothing_is_kept(tmp_path, monkeypatch, bank):
    shipped = kit.shipped_files

    def with_course_files(assignment):
        planted = tmp_path / "secret.txt"
        planted.write_text(SECRET + "\n", encoding="utf-8")
        return {**shipped(assignment), "assignments/transformer/secret.txt": planted}

    monkeypatch.setattr(kit, "shipped_files", with_course_files)
    with pytest.raises(kit.KitRefused) as refused:
        kit.build(A, tmp_path / "out", bank=bank, secrets=(SECRET.encode(),))
    assert [(f.kind, f.member) for f in refused.value.findings] == [("secret", "assignments/transformer/secret.txt")]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    assert "course secret" in refused.value.findings[0].say("en")


def test_kit_build_gives_the_builder_the_courses_secret(tmp_path, monkeypatch, bank):
    from grader import cli

    seen = {}

    def build(*args, **kwargs):
        seen.update(kwargs)
        raise kit.KitRefused([kit.Finding("secret", "x")])

    monkeypatch.setattr(kit, "build", build)
    config = course_file(tmp_path / "course", SECRET)
    assert cli.main(["kit", "build", "--out", str(tmp_path / "kit"), "--bank", str(bank), "--config", str(config)]) == 1
    assert seen["secrets"] == (SECRET.encode(),)


@pytest.mark.parametrize("bug", ["sdpa.no_scale", "layernorm.unbiased_variance"])
def test_a_mistake_failing_on_both_sets_is_named_once_as_without_a_secret(tmp_path, bug):
    from grader.bugs.catalogue import Catalogue

    catalogue = Catalogue(A)
    folder = catalogue.write_mutant(next(b for b in catalogue.bugs if b.id == bug), tmp_path / "mutant")

    def named(held_back):
        result = api.check(path=folder, assignment=A, profile="quick", tasks=TASKS, held_back=held_back)
        return {
            c.id: (c.status, [d.id for d in c.diagnoses if d.kind == "bug"], c.sets)
            for t in result.tasks
            for c in t.checks
        }

    plain, held = named(None), named(held_back_seed(SECRET.encode()))
    failing = {c for c, (status, _, _) in plain.items() if status != "passed"}
    assert failing and {c for c, (status, _, _) in held.items() if status != "passed"} == failing
    for c in failing:
        assert held[c][1] == plain[c][1] and len(set(held[c][1])) == len(held[c][1]), c  # the same names, once each
        assert held[c][2]["kit"] != "passed"
    assert any(bug in names for _, names, _ in held.values())


def test_each_set_of_examples_has_the_whole_time_budget(monkeypatch, tmp_path):
    budgets = []
    real = api.InProcessRunner

    def runner(*args, **kwargs):
        if "total_timeout" in kwargs:  # the submission's runner (the reference's has no budget)
            budgets.append(kwargs["total_timeout"])
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "InProcessRunner", runner)
    for held_back in (None, 7):
        api.check(path=A.reference, assignment=A, profile="quick", only=("layernorm.contract",), held_back=held_back)
    budget = DEFAULTS["total_timeout"].value
    assert budgets == [budget, 2 * budget]


def test_a_mistake_beneath_is_charged_once_where_it_is_on_both_sets(tmp_path):
    from grader.bugs.catalogue import Catalogue

    catalogue = Catalogue(A)
    folder = catalogue.write_mutant(next(b for b in catalogue.bugs if b.id == "sdpa.no_scale"), tmp_path / "mutant")

    def graded(held_back):
        result = api.check(
            path=folder, assignment=A, profile="quick", tasks=("sdpa", "mha"), held_back=held_back, diagnose=False
        )
        charged = {
            c.id for t in result.tasks for c in t.checks if any(n.key == "note.charged_beneath" for n in c.notes)
        }
        return {t.id: t.score for t in result.tasks}, charged

    plain, held = graded(None), graded(held_back_seed(SECRET.encode()))
    assert held == plain and plain[0]["mha"] == 10 and plain[0]["sdpa"] < 10 and "mha.integrated" in plain[1]


# -- checks of fixed configurations draw one of their own too ---------------------------------------------------------

FIXED = {"transformer": ("param_count.grid", "training.noam"), "decoder_lm": ("param_count.grid",)}
"""Checks over fixed configurations (a grid of sizes, fixed schedules), each with one drawn configuration after them:
the replay answers every fixed one from the bank, and only the drawn one of the kit's examples."""
REPLAY_LM = HERE / "hostile" / "replay_lm"


@pytest.fixture(scope="module", params=sorted(FIXED))
def fixed(request, tmp_path_factory):
    """``(assignment, checks, replay folder)``: the replay (``replay`` for the Transformer, ``replay_lm`` for the
    decoder-only LM, over the skeleton) with the bank of those checks, recorded over the reference as a kit's is."""
    from grader.submission.bank import Bank
    from grader.submission.refcache import ReferenceCache

    a, only = load(request.param), list(FIXED[request.param])
    cache = ReferenceCache(max_bytes=1 << 62)
    api.check(path=a.reference, assignment=a, profile="quick", only=only, reference_cache=cache, diagnose=False)
    folder = tmp_path_factory.mktemp(f"replay-{a.name}") / "replay"
    shutil.copytree(a.skeleton, folder, ignore=shutil.ignore_patterns("__pycache__"))
    ours = REPLAY if a.name == "transformer" else REPLAY_LM
    shutil.copytree(ours, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPLAY / "_replay.py", folder / "_replay.py")
    Bank.of_cache(cache, {"assignment": a.name, "profiles": ["quick"]}).save(folder / "answers.bank")
    return a, only, folder


def _fixed_grade(a, path, only, **options):
    return {
        c.id: c
        for t in api.check(path=path, assignment=a, profile="quick", only=only, **options).tasks
        for c in t.checks
    }


def test_checks_of_fixed_configurations_lose_the_replays_points_in_the_final_grade(fixed):
    a, only, replay = fixed
    kit = _fixed_grade(a, replay, only, bank=str(replay / "answers.bank"))
    assert {c: v.status for c, v in kit.items()} == dict.fromkeys(only, "passed")  # the bank alone wins them
    seed = held_back_seed(SECRET.encode())
    final = _fixed_grade(a, replay, only, held_back=seed)
    for c in only:  # its fixed configurations and the kit's drawn one pass; the held-back drawn one does not
        assert final[c].status == "failed" and final[c].score == 0, (c, final[c].status)
        assert final[c].sets == {"kit": "passed", "held_back": "failed"}
        assert "note.held_back_failed" in [n.key for n in final[c].notes]
    reference = _fixed_grade(a, a.reference, only, held_back=seed)
    for c in only:
        assert reference[c].status == "passed" and reference[c].score == reference[c].max_score
        assert reference[c].sets == {"kit": "passed", "held_back": "passed"}
