"""``gradekit quiz``: the Transformer's questions well-formed in both languages, answers computed from the
reference, marking."""

import io
import math
import random

import pytest
import torch

from grader.assignment import load
from grader.messages import CATALOGUES, text
from grader.practice import quiz
from grader.practice.render import width
from tests.practice_helpers import assert_quiz_texts_complete, gradekit

pytestmark = pytest.mark.usefixtures("home")  # drills and quizzes are recorded: a fresh history per test

A = load()
QUESTIONS = quiz.questions(A)
BY_ID = {q.id: q for q in QUESTIONS}
SEEDS = range(6)


@pytest.fixture(scope="module")
def ref():
    return quiz.reference(A)


def test_at_least_25_questions_over_every_topic():
    assert len(QUESTIONS) >= 25
    assert len(BY_ID) == len(QUESTIONS)
    assert quiz.topics_of(QUESTIONS) == ("attention", "positions", "norm", "masks", "training", "decoding", "sizes")
    kinds = {q.kind for q in QUESTIONS}
    assert kinds == {"choice", "number"}
    for q in QUESTIONS:
        if q.kind == "choice":
            assert q.answer in quiz.LETTERS and q.params is None
        else:
            assert callable(q.params)
    # The right letters are spread out, so that "always c" does not pass.
    letters = [q.answer for q in QUESTIONS if q.kind == "choice"]
    assert all(letters.count(x) >= 3 for x in quiz.LETTERS)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_question_has_all_its_texts_and_fields(lang, ref):
    assert_quiz_texts_complete(QUESTIONS, lang, ref, seeds=SEEDS)


def _brute_target(length, pads):
    keep = [j < length - pads for j in range(length)]
    return sum(1 for i in range(length) for j in range(length) if j <= i and keep[j])


def expected(qid, p):
    """The answers worked out independently: from built reference modules and from the formulas."""
    from solution.model import Transformer
    from solution.training import count_parameters, noam_lr

    if qid == "params_total":
        model = Transformer(
            p["src_vocab"],
            p["tgt_vocab"],
            p["d_model"],
            p["num_heads"],
            p["d_ff"],
            p["num_layers"],
            max_len=16,
            norm_first=p["norm_first"],
        )
        built = sum(t.numel() for t in model.parameters())
        assert built == count_parameters(
            p["src_vocab"],
            p["tgt_vocab"],
            p["d_model"],
            p["num_heads"],
            p["d_ff"],
            p["num_layers"],
            norm_first=p["norm_first"],
        )
        return built
    D = p.get("d_model")
    return {
        "params_mha": lambda: 4 * (D * D + D),
        "params_ffn": lambda: 2 * D * p.get("d_ff", 0) + p.get("d_ff", 0) + D,
        "params_layernorm": lambda: 2 * D,
        "head_dim": lambda: D // p["num_heads"],
        "scale_value": lambda: math.sqrt(D // p["num_heads"]),
        "score_entries": lambda: p["batch"] * p["heads"] * p["length"] ** 2,
        "cross_shape": lambda: p["ls"],
        "score_growth": lambda: 4,
        "causal_true": lambda: p["length"] * (p["length"] + 1) // 2,
        "target_true": lambda: _brute_target(p["length"], p["pads"]),
        "noam_peak": lambda: p["warmup"],
        "noam_value": lambda: noam_lr(p["step"], D, p["warmup"]),
        "smoothed_true": lambda: 1 - p["eps"] + p["eps"] / p["vocab"],
        "embed_scale": lambda: math.sqrt(D),
    }[qid]()


@pytest.mark.parametrize("seed", SEEDS)
def test_computed_answers_match_the_reference(seed):
    torch.manual_seed(0)
    _, asked = quiz.draw(A, n=0, seed=seed)
    numeric = [a for a in asked if a.question.kind == "number"]
    assert numeric
    for a in numeric:
        want = expected(a.question.id, a.params)
        assert math.isclose(a.answer, want, rel_tol=1e-9), (a.question.id, a.params, a.answer, want)
        if not a.question.rel_tol:
            assert float(a.answer).is_integer(), a.question.id
        assert quiz.mark(a, quiz.show_answer(a)), (a.question.id, quiz.show_answer(a))


def test_noam_value_follows_the_formula_not_a_typed_number(ref):
    a = quiz.ask(BY_ID["noam_value"], random.Random(0), ref)
    s, d, w = a.params["step"], a.params["d_model"], a.params["warmup"]
    assert a.answer == pytest.approx(d**-0.5 * min(s**-0.5, s * w**-1.5))


def test_marking_right_wrong_and_unreadable(ref):
    _, asked = quiz.draw(A, n=0, seed=1)
    for a in asked:
        right = quiz.show_answer(a)
        assert quiz.mark(a, right) and quiz.mark(a, f"  {right.upper()} ")
        if a.question.kind == "choice":
            wrong = next(x for x in quiz.LETTERS if x != a.answer)
            assert not quiz.mark(a, wrong)
            assert not quiz.mark(a, "e") and not quiz.mark(a, "ab")
        else:
            assert not quiz.mark(a, str(a.answer * 2 + 1))
            assert not quiz.mark(a, "about ten")
        assert not quiz.mark(a, "") and not quiz.mark(a, None)
    params = quiz.ask(BY_ID["params_mha"], random.Random(0), ref)
    assert quiz.mark(params, f"{params.answer:_}") and quiz.mark(params, f"{params.answer:,}")
    assert not quiz.mark(params, str(params.answer + 1))  # integers are exact
    noam = quiz.ask(BY_ID["noam_value"], random.Random(0), ref)
    assert quiz.mark(noam, f"{noam.answer * 1.004:.3e}") and not quiz.mark(noam, f"{noam.answer * 1.05}")


def test_draw_is_repeatable_and_filters_topics():
    s1, a1 = quiz.draw(A, n=5, seed=7)
    s2, a2 = quiz.draw(A, n=5, seed=7)
    assert s1 == s2 == 7 and [(a.question.id, a.params) for a in a1] == [(a.question.id, a.params) for a in a2]
    _, masks = quiz.draw(A, n=0, seed=7, topics=["masks"])
    assert masks and {a.question.topic for a in masks} == {"masks"}
    assert len(quiz.draw(A, n=0, seed=1)[1]) == len(QUESTIONS)
    with pytest.raises(ValueError, match="--n"):
        quiz.draw(A, n=-1)
    with pytest.raises(ValueError, match="unknown topic.s. shapes; expected some of: attention, positions"):
        quiz.draw(A, topics=["masks", "shapes"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_quiz_command_with_answers_all_right(capsys, lang):
    _, asked = quiz.draw(A, n=8, seed=11)
    answers = ",".join(quiz.show_answer(a) for a in asked)
    code, out, _ = gradekit(capsys, "quiz", "--n", "8", "--seed", "11", "--answers", answers, "--lang", lang)
    assert code == 0
    assert ("Score: 8 / 8" if lang == "en" else "得分：8 / 8") in out
    assert out.count("✓") == 8
    for a in asked:  # every explanation is shown after its answer
        assert CATALOGUES[lang][f"quiz.{a.question.id}.why"].split("{")[0][:20] in out


def test_quiz_reads_piped_stdin_and_asks_again_after_a_reply_of_the_wrong_type(capsys, monkeypatch):
    _, asked = quiz.draw(A, n=4, seed=5, topics=["sizes", "attention"])
    kinds = [a.question.kind for a in asked]
    assert "choice" in kinds and "number" in kinds
    bad = {"choice": ["e", "zzz"], "number": ["about ten", "b"]}
    replies = []
    for a in asked[:3]:  # each of the first three: two replies of the wrong type, then the right answer
        replies += bad[a.question.kind] + [quiz.show_answer(a)]
    replies.append("")  # the last one skipped
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(replies) + "\n"))
    code, out, _ = gradekit(capsys, "quiz", "--n", "4", "--seed", "5", "--topic", "sizes", "--topic", "attention")
    assert code == 1
    assert "Score: 3 / 4 (75%)" in out and out.count("✓ Right.") == 3 and "No answer" in out
    flat = " ".join(out.split())
    for a in asked[:3]:
        for reply in bad[a.question.kind]:  # each named, with what is expected
            assert text(f"quiz.retry_{quiz.expects(a)}", "en", reply=reply) in flat, (a.question.id, reply)


def test_what_a_reply_must_be():
    _, asked = quiz.draw(A, n=0, seed=4)
    by_kind = {}
    for a in asked:
        by_kind.setdefault(quiz.expects(a), a)
    assert set(by_kind) == {"choice", "whole", "number"}
    choice, whole, number = by_kind["choice"], by_kind["whole"], by_kind["number"]
    for reply in ("b", "B", " (b) ", "b)", "b."):
        assert quiz.parse(choice, reply) == "b", reply
    for reply in ("e", "ab", "1", "bb"):
        assert quiz.parse(choice, reply) is None, reply
    assert quiz.parse(whole, "2_048") == 2048 and quiz.parse(whole, "2048.0") == 2048
    assert quiz.parse(whole, "64.5") is None and quiz.parse(whole, "b") is None  # a whole number is asked for
    assert quiz.parse(number, "6.98e-4") == pytest.approx(6.98e-4) and quiz.parse(number, "lr") is None


def test_answers_option_of_the_wrong_type_is_refused_before_asking(capsys):
    _, asked = quiz.draw(A, n=3, seed=8)
    answers = [quiz.show_answer(a) for a in asked]
    wrong = {"choice": "e", "whole": "b", "number": "b"}[quiz.expects(asked[1])]
    code, out, err = gradekit(
        capsys, "quiz", "--n", "3", "--seed", "8", "--answers", ",".join([answers[0], wrong, answers[2]])
    )
    assert code == 2 and out == ""
    assert text(f"quiz.error.answer_{quiz.expects(asked[1])}", "en", i=2, reply=wrong) in err
    code, _, err = gradekit(capsys, "quiz", "--n", "3", "--seed", "8", "--answers", ",".join(answers + ["a"]))
    assert code == 2 and "4 answers for 3 questions" in err


def test_quiz_stops_asking_at_end_of_input(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, _ = gradekit(capsys, "quiz", "--n", "3", "--seed", "2")
    assert code == 1 and "Score: 0 / 3" in out and out.count("No answer") == 3


# -- options that give nothing away ---------------------------------------------------------------------------

CHOICE = [q for q in QUESTIONS if q.kind == "choice"]
N_OPTIONS = len(quiz.LETTERS)
FAIR = 1 / N_OPTIONS + 0.1
"""The most questions (a share) whose right option may be the longest, or the shortest: a fair share, and a little."""


def _lengths(q, lang):
    """The right option's length and the others', in the columns a terminal draws (a Chinese character takes two)."""
    options = {x: CATALOGUES[lang][f"quiz.{q.id}.{x}"] for x in quiz.LETTERS}
    return width(options[q.answer]), [width(t) for x, t in options.items() if x != q.answer]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_right_option_cannot_be_told_by_its_length(lang):
    longest = shortest = 0
    ratios = []
    for q in CHOICE:
        right, others = _lengths(q, lang)
        longest += right >= max(others)
        shortest += right <= min(others)
        ratios.append(right / (sum(others) / len(others)))
    n = len(CHOICE)
    assert longest <= FAIR * n, f"{lang}: the right option is the longest in {longest} of {n} questions"
    assert shortest <= FAIR * n, f"{lang}: the right option is the shortest in {shortest} of {n} questions"
    mean = sum(ratios) / n
    assert 0.85 <= mean <= 1.15, f"{lang}: the right option is on average {mean:.2f} times as long as the others"


def test_the_right_option_cannot_be_told_by_its_place():
    letters = [q.answer for q in CHOICE]
    assert all(abs(letters.count(x) / len(letters) - 1 / N_OPTIONS) <= 0.1 for x in quiz.LETTERS), letters
    # Each quiz shows the options in an order of its own, the same again for the same seed.
    shown = {x: 0 for x in quiz.LETTERS}
    orders = set()
    for seed in range(200):
        _, asked = quiz.draw(A, n=0, seed=seed, topics=["attention"])
        for a in asked:
            if a.question.kind != "choice":
                continue
            shown[a.answer] += 1
            orders.add(a.order)
            right_text = CATALOGUES["en"][f"quiz.{a.question.id}.{a.question.answer}"]
            assert quiz.option_text(a, a.answer, "en") == right_text
            assert quiz.mark(a, a.answer) and not quiz.mark(a, next(x for x in quiz.LETTERS if x != a.answer))
    total = sum(shown.values())
    assert all(abs(count / total - 1 / N_OPTIONS) <= 0.05 for count in shown.values()), shown
    assert len(orders) > 12
    _, again = quiz.draw(A, n=0, seed=7)
    assert [a.order for a in again] == [a.order for a in quiz.draw(A, n=0, seed=7)[1]]
