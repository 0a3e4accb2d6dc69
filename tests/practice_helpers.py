"""What the practice and quiz tests share: the command line and a template's fields (and, in conftest, the
``home`` fixture, a fresh history per test, which each of their modules uses for every test)."""

import argparse
import random
import re
import string

from grader.messages import CATALOGUES, text
from grader.practice import quiz, workspace
from grader.practice.cli import register


def gradekit(capsys, *argv):
    """``gradekit ARGV`` through the practice/quiz registration: ``(exit code, stdout, stderr)``."""
    parser = argparse.ArgumentParser(prog="gradekit")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def fields(template):
    """The ``{names}`` a message template fills in."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def assert_chinese_task_texts_match(assignment, drills, zh_texts):
    """Every drilled name's Chinese task text (``zh_texts``: name -> text) names what its English docstring names:
    the same ````code```` spans (names, shapes, values; a span may wrap differently), and a Hints, Args and Returns
    section exactly where the English has one."""
    code = re.compile(r"``[^`]+``")
    texts = {t.name: t for t in workspace.task_texts([d.id for d in drills if not d.is_set], assignment)}
    assert set(zh_texts) == set(texts)
    for name, t in texts.items():
        zh = zh_texts[name]
        spans = [sorted(" ".join(c.split()) for c in code.findall(doc)) for doc in (zh, t.doc)]
        assert spans[0] == spans[1], name
        assert ("Hints:" in t.doc) == (text("practice.doc.hints", "zh") in zh), name
        assert ("Args:" in t.doc) == ("参数：" in zh) and ("Returns:" in t.doc) == ("返回：" in zh), name
        assert '"""' not in zh and "\\" not in zh, name


def assert_quiz_texts_complete(questions, lang, ref, seeds=(0,)):
    """Every topic is named and every question has its text, its explanation and (multiple choice) four different
    options in ``lang``, each with the English text's fields, all of which the question's drawn values (one draw
    per seed in ``seeds``; ``ref``: the reference namespace) fill."""
    for topic in quiz.topics_of(questions):
        assert f"quiz.topic.{topic}" in CATALOGUES[lang], topic
    for q in questions:
        keys = [f"quiz.{q.id}.q", f"quiz.{q.id}.why"]
        if q.kind == "choice":
            keys += [f"quiz.{q.id}.{x}" for x in quiz.LETTERS]
        for key in keys:
            assert key in CATALOGUES[lang], key
            assert fields(CATALOGUES[lang][key]) == fields(CATALOGUES["en"][key]), key
        for seed in seeds:
            asked = quiz.ask(q, random.Random(seed), ref)
            for key in keys:
                assert fields(CATALOGUES[lang][key]) <= set(asked.params) | {"answer"}, key
        if q.kind == "choice":
            assert len({CATALOGUES[lang][f"quiz.{q.id}.{x}"] for x in quiz.LETTERS}) == 4, q.id
