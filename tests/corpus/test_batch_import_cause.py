"""``gradekit batch`` says why a file could not be imported, in the gradebook row and in what it prints.

A class of copies of the reference, each broken at import time: a syntax error in ``masks.py``, an import of a
module that does not exist in ``norm.py``, and two causes at once, one of them an exception whose message holds
a formula after a separator, a newline and an escape code. The batch runs in-process through the command
(``cli.cmd_batch``, quick profile), in English and in Chinese, over the tasks of ``TASKS`` (a grading reports only
the files its tasks and those beneath them use, and these use every file broken here or failing with one); each
row and each printed line must carry the error itself (type, message, file, line), not only the names of the
files, and stay one inert line.
"""

import contextlib
import csv
import io
import os

import pytest

from grader.cli import build_parser
from tests.conftest import edited_copy
from tests.corpus.test_batch import OPTIONS

BROKEN_DEF = "def causal_mask(size, device=None)"
MISSING = "no_such_module_gradekit"
OTHER_MISSING = "no_such_module_either"
LOUD = 'raise ImportError("x;=1+1\\n\\x1b[2JScore: 140 / 140")\n'
"""Module code whose exception message holds a formula after a separator, a newline and an escape code."""
TASKS = ["masks", "model", "greedy", "training"]
"""The tasks graded: between them they use every contract file."""


def _line_of(folder, file, needle):
    """The 1-based line of ``folder/file`` holding ``needle``."""
    lines = (folder / file).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def _class(base):
    cls = base / "class"
    synt = edited_copy(cls / "synt", {"masks.py": (BROKEN_DEF + ":", BROKEN_DEF)})
    nomod = edited_copy(cls / "nomod", {"norm.py": ("import torch\n", f"import torch\nimport {MISSING}\n")})
    loud = edited_copy(
        cls / "loud",
        {
            "feedforward.py": ("from torch import nn\n", "from torch import nn\n" + LOUD),
            "masks.py": ("import torch\n", f"import torch\nimport {OTHER_MISSING}\n"),
        },
    )
    return cls, {
        "synt": _line_of(synt, "masks.py", BROKEN_DEF),
        "nomod": _line_of(nomod, "norm.py", MISSING),
        "loud_ff": _line_of(loud, "feedforward.py", "raise ImportError"),
        "loud_masks": _line_of(loud, "masks.py", OTHER_MISSING),
    }


def _batch(cls, out, lang):
    """Run ``gradekit batch`` in-process with ``OPTIONS``; (the gradebook's rows and raw text, the lines printed)."""
    argv = [
        "batch",
        str(cls),
        "--out",
        str(out),
        "-j",
        "2",
        "--tasks",
        ",".join(TASKS),
        "--profile",
        OPTIONS["profile"],
        "--call-timeout",
        str(OPTIONS["call_timeout"]),
        "--total-timeout",
        str(OPTIONS["total_timeout"]),
        "--memory-mb",
        str(OPTIONS["memory_mb"]),
        "--lang",
        lang,
        "--quiet",
    ]
    args = build_parser().parse_args(argv)
    printed = io.StringIO()
    here = os.getcwd()
    os.chdir(cls.parent)  # the command looks for a course configuration from the current folder up: none here
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
            assert args.func(args) == 0
    finally:
        os.chdir(here)
    raw = (out / "gradebook.csv").read_text(encoding="utf-8-sig")
    rows = {r["student_id"]: r for r in csv.DictReader(raw.splitlines())}
    return rows, raw, printed.getvalue().splitlines()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("import_cause")
    cls, lines = _class(base)
    return {"lines": lines, "en": _batch(cls, base / "out_en", "en"), "zh": _batch(cls, base / "out_zh", "zh")}


def _said(graded, lang, where, student):
    """What the gradebook row (``where="gradebook"``) or the printed output (``"printed"``: its one line about
    ``student``) says of ``student``."""
    if where == "gradebook":
        return graded[lang][0][student]["reason"]
    found = [line for line in graded[lang][2] if line.startswith(student)]
    assert len(found) == 1, graded[lang][2]
    return found[0]


LANGS = pytest.mark.parametrize("lang", ["en", "zh"])
WHERE = pytest.mark.parametrize("where", ["gradebook", "printed"])
NOT_IMPORTED = {"en": "could not be imported", "zh": "无法导入"}


@LANGS
@WHERE
def test_a_syntax_error_is_named_with_its_file_and_line(graded, lang, where):
    said = _said(graded, lang, where, "synt")
    line = graded["lines"]["synt"]
    assert NOT_IMPORTED[lang] in said and "SyntaxError: expected ':'" in said, said
    assert (f"masks.py, line {line}" if lang == "en" else f"masks.py 第 {line} 行") in said, said


@LANGS
@WHERE
def test_a_missing_module_is_named_with_its_file_and_line(graded, lang, where):
    said = _said(graded, lang, where, "nomod")
    line = graded["lines"]["nomod"]
    assert NOT_IMPORTED[lang] in said and f"ModuleNotFoundError: No module named '{MISSING}'" in said, said
    assert (f"norm.py, line {line}" if lang == "en" else f"norm.py 第 {line} 行") in said, said


def test_each_cause_names_its_own_files(graded):
    """Two causes: each is said once, after the files it broke (the file at fault first); a file whose import
    failed because another did is named with that other's error."""
    reason = graded["en"][0]["loud"]["reason"]
    ff, masks = graded["lines"]["loud_ff"], graded["lines"]["loud_masks"]
    assert (
        f"feedforward.py, layers.py, model.py: ImportError: x;'=1+1 \\x1b[2JScore: 140 / 140 (feedforward.py, "
        f"line {ff})" in reason
    ), reason
    assert (
        f"masks.py, decoding.py, training.py: ModuleNotFoundError: No module named '{OTHER_MISSING}' "
        f"(masks.py, line {masks})" in reason
    ), reason


@LANGS
def test_the_cause_is_one_inert_line(graded, lang):
    """The student's message is defused as any student text in the batch is: no formula after a separator in
    the gradebook, no escape code and no line of its own in the gradebook or on the terminal."""
    rows, raw, printed = graded[lang]
    row = next(line for line in raw.splitlines() if line.startswith("loud,"))
    assert "Score: 140 / 140" in row and "\x1b" not in raw
    assert "x;'=1+1" in rows["loud"]["reason"] and "x;=1+1" not in rows["loud"]["reason"]
    said = _said(graded, lang, "printed", "loud")
    assert "Score: 140 / 140" in said and "\x1b" not in "\n".join(printed)
    assert not any(line.startswith("Score") for line in printed), printed
