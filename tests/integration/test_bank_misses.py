"""A kit never shows a pass, nor awards points, for a check its answer bank cannot judge.

Mistakes of the blind corpora that fail a check in the full kit on examples no recorded submission failed: the
float64 comparison (``checks.common.equivalent``) then asks the reference's float32 run of that example (is the
difference only the rounding of a float32 computation inside?). A bank holds that answer for every example
(``CheckContext.ref_ahead``), so the kit fails them as the full kit does. A bank recorded without it (as one recorded
before) cannot decide them: the check is not judged ("skipped", none of its points earned, a note saying the final
grade judges it), and the report says how many points are left to the final grade; a check that failed on an
example the bank holds is failed, and says that its example is the smallest the bank holds.
"""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import strategies as st

from grader import api, engine
from grader.assignment import load
from grader.checks.base import CheckContext, CheckSpec, Fail
from grader.submission.bank import NotInBank
from grader.views import html, json_view, terminal

ROOT = Path(__file__).resolve().parents[2]
LM = load("decoder_lm")
TRANSFORMER = load("transformer")

CASES = {
    # (assignment, corpus base, case file, tasks graded): the check the full kit fails and the kit passed
    "lm-m004": (LM, "blind_lm/bugs/bases/W1", "blind_lm/bugs/cases/m004/norm.py", ["rmsnorm"], "rmsnorm.equivalence"),
    "m010": (
        TRANSFORMER,
        "blind_bugs/bases/W1",
        "blind_bugs/cases/m010/attention.py",
        ["sdpa", "mha"],
        "mha.equivalence",
    ),
    "m021": (
        TRANSFORMER,
        "blind_bugs/bases/W1",
        "blind_bugs/cases/m021/norm.py",
        ["layernorm"],
        "layernorm.equivalence",
    ),
}


def _case(tmp_path_factory, name):
    a, base, file, _tasks, _check = CASES[name]
    dest = tmp_path_factory.mktemp(name) / "submission"
    shutil.copytree(ROOT / "tests" / base, dest, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "tests" / file, dest / Path(file).name)
    return dest


def _bank(a, tasks, dest, *, ahead=True):
    """A bank recorded over the reference and the skeleton (``ahead``: with the failing path's questions)."""
    from grader.kit import record

    if ahead:
        return record(a, [a.reference, a.skeleton], profiles=("quick",), tasks=tasks, diagnoses=False).save(dest)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CheckContext, "records", property(lambda self: False))
        return record(a, [a.reference, a.skeleton], profiles=("quick",), tasks=tasks, diagnoses=False).save(dest)


def _grade(a, path, tasks, **options):
    return api.check(path=path, assignment=a, profile="quick", tasks=tasks, diagnose=False, **options)


def _checks(result):
    return {c.id: c for t in result.tasks for c in t.checks}


@pytest.fixture(scope="module")
def banks(tmp_path_factory):
    """``{(assignment name, tasks, ahead): bank file}``, recorded once each."""
    made = {}

    def get(a, tasks, ahead=True):
        key = (a.name, tuple(tasks), ahead)
        if key not in made:
            made[key] = _bank(a, tasks, tmp_path_factory.mktemp("bank") / "kit.bank", ahead=ahead)
        return made[key]

    return get


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_mistake_failing_where_no_recorded_submission_failed_fails_in_the_kit_too(tmp_path_factory, banks, name):
    a, _base, _file, tasks, check_id = CASES[name]
    sub = _case(tmp_path_factory, name)
    bank = banks(a, tasks)
    full, kit = _grade(a, sub, tasks), _grade(a, sub, tasks, bank=str(bank))
    assert _checks(full)[check_id].status == "failed"
    assert _checks(kit)[check_id].status == "failed", _checks(kit)[check_id]
    assert _checks(kit)[check_id].score == 0
    for check, got in _checks(kit).items():  # no check earns in the kit what it does not earn in the full kit
        assert got.score <= _checks(full)[check].score, (check, got.status, _checks(full)[check].status)
    assert kit.unjudged == 0 and kit.score <= full.score


@pytest.mark.parametrize("a,tasks", [(LM, ["rmsnorm"]), (TRANSFORMER, ["layernorm"])], ids=["lm", "transformer"])
def test_a_correct_submission_keeps_full_marks_in_the_kit(banks, a, tasks):
    kit = _grade(a, a.reference, tasks, bank=str(banks(a, tasks)))
    assert {c.status for c in _checks(kit).values()} == {"passed"}, _checks(kit)
    assert kit.score == kit.max_score and kit.unjudged == 0


def test_a_bank_that_cannot_decide_a_check_leaves_it_to_the_final_grade_without_its_points(tmp_path_factory, banks):
    a, _base, _file, tasks, check_id = CASES["lm-m004"]
    sub = _case(tmp_path_factory, "lm-m004")
    bank = banks(a, tasks, ahead=False)
    kit = _grade(a, sub, tasks, bank=str(bank))
    got = _checks(kit)[check_id]
    assert got.status == "skipped" and got.score == 0 and got.message is None, got
    assert [n.key for n in got.notes] == ["note.not_in_bank"]
    assert kit.unjudged == got.max_score
    assert kit.score == sum(c.score for c in _checks(kit).values())  # its points are not in the score
    # the reference still keeps full marks from that bank: it never asks the failing path's questions
    ref = _grade(a, a.reference, tasks, bank=str(bank))
    assert ref.score == ref.max_score and ref.unjudged == 0
    # the views say the same: the check not judged, none of its points counted, the points left to the final grade
    for lang in ("en", "zh"):
        shown = terminal.summary(kit, lang=lang)
        from grader.messages import text

        assert text("ui.skipped", lang) in shown
        assert f"({got.score:g}/{got.max_score:g})" in shown
        assert text("kit.unjudged", lang, points=f"{got.max_score:g}", max_score=f"{kit.max_score:g}") in shown
        data = json.loads(json_view.render(kit, lang=lang))
        assert data["score"] == kit.score and data["unjudged"] == got.max_score
        check = next(c for t in data["tasks"] for c in t["checks"] if c["id"] == check_id)
        assert check["status"] == "skipped" and check["score"] == 0
        assert check["notes"] == [text("note.not_in_bank", lang, probe=got.notes[0].params["probe"])]
        page = html.render(kit, lang=lang)
        assert text("kit.unjudged_short", lang, points=f"{got.max_score:g}") in page
        assert text("ui.skipped", lang) in page


def test_a_check_that_failed_on_an_example_the_bank_holds_stays_failed_and_says_so(tmp_path_factory, banks):
    """``rmsnorm.devices`` fails m004 on its first example; shrinking passes over the smaller examples the bank does
    not hold (here it lacks their float32 runs): failed, on the smallest failing example the bank holds."""
    a, _base, _file, tasks, _check = CASES["lm-m004"]
    sub = _case(tmp_path_factory, "lm-m004")
    kit = _grade(a, sub, tasks, bank=str(banks(a, tasks, ahead=False)))
    got = _checks(kit)["rmsnorm.devices"]
    assert got.status == "failed" and got.score == 0 and got.example, got
    assert "note.failed_in_bank" in [n.key for n in got.notes]


# -- the engine, on a made-up check: which examples the bank holds decides the verdict ------------------------------


class _Bank:
    """A reference runner answering from a bank that holds the question ``("p", n)`` for each ``n`` in ``held``."""

    records = False
    last_seconds = 0.0

    def __init__(self, held):
        self.held = held

    def run(self, probe, variant="integrated", **args):
        if args["n"] not in self.held:
            raise NotInBank(probe)
        return {"n": args["n"]}


def _run(held, wrong_from=None, explicit=()):
    """The made-up check graded with the bank of ``held``: a property over ``n`` in 0..100 asking the reference about
    ``n``, failing where ``n >= wrong_from``; ``explicit`` cases run after the drawn ones."""

    def fn(ctx):
        def prop(n):
            ctx.ref("p", n=n)
            if wrong_from is not None and n >= wrong_from:
                raise Fail("fail.param_count", got=n, difference=n, example={"config": {"n": n}})

        ctx.given(st.integers(0, 100), explicit=explicit)(prop)()

    g = SimpleNamespace(
        sub=None,
        ref=_Bank(held),
        profile="quick",
        seed=None,
        devices=("cpu",),
        timed_out={},
        memo={},
        command=lambda spec: "",
        assignment=None,
    )
    spec = CheckSpec(id="made.up", task="made", fn=fn, points=3, examples=(8, 8))
    result, _calls, _drew = engine._run_set(g, spec, "integrated", None)
    return result


def test_a_check_whose_examples_the_bank_partly_holds_and_that_passes_them_is_not_judged():
    result = _run(held=set(range(0, 101, 2)))
    assert (result.status, result.score, result.message) == ("skipped", 0.0, None)
    assert [n.key for n in result.notes] == ["note.not_in_bank"]


def test_a_check_failing_on_an_example_the_bank_holds_fails_there_and_says_so():
    result = _run(held=set(range(10, 101)), wrong_from=30)
    assert (result.status, result.score, result.example) == (
        "failed",
        0.0,
        {"config": {"n": 30}},
    )  # the smallest it holds
    assert "note.failed_in_bank" in [n.key for n in result.notes]


def test_a_check_whose_every_example_the_bank_lacks_is_not_judged():
    for explicit in ((), [(7,)]):
        result = _run(held=set(), explicit=explicit)
        assert (result.status, result.score) == ("skipped", 0.0), result


def test_an_explicit_case_the_bank_lacks_leaves_a_check_unjudged_and_one_it_holds_still_fails():
    assert _run(held=set(range(101)), explicit=[(101,)]).status == "skipped"
    failed = _run(held=set(range(102)), wrong_from=101, explicit=[(101,)])
    assert (failed.status, failed.example) == ("failed", {"config": {"n": 101}})


def test_a_bank_that_holds_every_example_grades_as_the_reference_would():
    assert _run(held=set(range(101))).status == "passed"
    assert _run(held=set(range(101)), wrong_from=40).example == {"config": {"n": 40}}
