"""A report is feedback, not a data channel: however much text a submission produces (exception messages and
types, tracebacks, long source lines, prints, forged errors), one report holds at most ``REPORT_CHARS`` of it,
in every format, graded in process, sealed and in a batch, with a visible marker where text was cut; a normal
failing submission's message and traceback are shown whole.

The flood below raises, in every function, an exception of a class with a long name whose message is a
megabyte of one of two payloads (base64-like text; Hangul and emoji, which the kit never writes), a different
part of it on each call, from a line holding a long comment of the payload; it prints a lot; one function
raises the grader's own ``SubmissionError`` with megabytes everywhere (its kind, its data); sealed, another
prints and ends its worker (the crash report carries the tail of its output). How much of each payload an
output holds is measured by the distinct payload characters found in it (the information it carries) and by
all of them (``_leaked``)."""

import contextlib
import copy
import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import api
from grader.batch import runner as batch_runner
from grader.messages import CATALOGUES
from grader.safetext import CHECK_CHARS, REPORT_CHARS
from grader.views import gradescope, html, json_view, junit, terminal
from tests import hostile

ROOT = Path(__file__).resolve().parents[2]
SKELETON = ROOT / "skeleton"

GENERATOR = """
import random as _random

SEED = 20240611
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
UNICODE = "".join(chr(c) for c in range(0xAC00, 0xD7A4)) + "".join(chr(c) for c in range(0x1F300, 0x1F5FF))


def payloads(n=1 << 20):
    r = _random.Random(SEED)
    return "".join(r.choices(ALPHABET, k=n)), "".join(r.choices(UNICODE, k=n))
"""

FLOOD = (
    GENERATOR
    + '''
import os as _os
import sys as _sys

B64, UNI = payloads()
CRASH = {crash}
_calls = [0]
_TYPES = (type(UNI[:20000], (RuntimeError,), {{}}), type(B64[:20000], (RuntimeError,), {{}}))


def boom():
    """An exception of a long-named class holding a megabyte of one payload, a different part each call."""
    _calls[0] += 1
    n = _calls[0]
    text = B64 if n % 2 else UNI
    start = (n * 7919) % len(text)
    message = text[start:] + text[:start]
    print(message[:20000])
    print(message[-20000:], file=_sys.stderr)
    return _TYPES[n % 2](message)


def crash():
    """Isolated: print and end the worker (its crash report has the output's tail); in process: ``boom``."""
    if CRASH:
        print(B64[-300000:], flush=True)
        _os._exit(3)
    return boom()


def forged():
    """The grader's own error, with megabytes in every field."""
    try:
        from grader.errors import SubmissionError
    except Exception:
        return boom()
    return SubmissionError(kind=UNI[:100000], detail=B64, file=UNI[100000:150000], line=B64[:10000], code=B64,
                           trace=UNI, data={{"output": B64, UNI[:100000]: list(range(100000)),
                                            "nested": [[B64[i:i + 1000]] for i in range(0, 300000, 1000)]}})
'''
)

NORMAL = (
    hostile.CORRECT
    + """

def _inner(tokens):
    raise ValueError("padding_mask was handed something it cannot use: this message is a normal one, about two "
                     "hundred characters long, as a student might write it in a check of their own (expected [B, L] "
                     "integers)")


def _middle(tokens):
    return _inner(tokens)


def padding_mask(tokens, pad_idx):
    return _middle(tokens)
"""
)
NORMAL_DETAIL = (
    "ValueError: padding_mask was handed something it cannot use: this message is a normal one, about "
    "two hundred characters long, as a student might write it in a check of their own (expected [B, L] "
    "integers)"
)


def _payloads():
    space = {}
    exec(GENERATOR, space)  # noqa: S102 - the test's own text, as the submission runs it
    return space["payloads"]()


B64, UNI = _payloads()
UNI_CHARS = frozenset(UNI)
K, STEP = 24, 8
_INDEX = {}


def _index(payload):
    if id(payload) not in _INDEX:
        _INDEX[id(payload)] = {payload[i : i + K]: i for i in range(0, len(payload) - K + 1, STEP)}
    return _INDEX[id(payload)]


def _leaked(out):
    """``(distinct, total)``: the payloads' characters ``out`` holds, each once (the union of the stretches of
    the payloads found in it: what it carries out) and counted each time they appear."""
    distinct = total = 0
    for payload in (B64, UNI):
        index = _index(payload)
        starts, hits = set(), 0
        for i in range(len(out) - K + 1):
            j = index.get(out[i : i + K])
            if j is not None:
                starts.add(j)
                hits += 1
        end = -1
        for j in sorted(starts):
            distinct += j + K - max(j, end)
            end = max(end, j + K)
        total += hits * STEP
    total = max(total, sum(1 for ch in out if ch in UNI_CHARS))
    return distinct, total


def _cut_marker(lang="en"):
    """The cut marker as a pattern (its count of characters cut: any number)."""
    before, _, after = CATALOGUES[lang]["ui.cut"].partition("{n}")
    return re.compile(re.escape(before) + r"\d+" + re.escape(after))


def _flood(dest, *, crash=False):
    """The skeleton whose every ``raise NotImplementedError(...)`` raises the flood, from a line holding a
    long comment of the payload."""
    shutil.copytree(SKELETON, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "flood.py").write_text(FLOOD.format(crash=crash), encoding="utf-8")
    n = 0
    for path in sorted(dest.glob("*.py")):
        if path.name in ("flood.py", "__init__.py"):
            continue
        source = path.read_text(encoding="utf-8")

        def raising(match):
            nonlocal n
            n += 1
            what = (
                "forged" if "noam_lr" in match.group(0) else "crash" if "count_parameters" in match.group(0) else "boom"
            )
            return f"raise _flood.{what}()  # {B64[n * 30000 : (n + 1) * 30000]}"

        source = re.sub(r"raise NotImplementedError\([^)]*\)", raising, source)
        path.write_text("from . import flood as _flood\n" + source, encoding="utf-8")
    return dest


def _outputs(result, lang="en"):
    """Every format of the report: terminal (verbose: with the tracebacks), JSON, HTML, JUnit, Gradescope."""
    return {
        "terminal": terminal.summary(result, lang=lang, verbose=True),
        "json": json_view.render(result, lang=lang),
        "html": html.render(result, lang=lang),
        "junit": junit.render(result, lang=lang),
        "gradescope": gradescope.render(result, lang=lang),
    }


def _assert_bounded(outputs, checks, lang="en"):
    """Each output carries at most ``REPORT_CHARS`` of the payloads, each character counted once. Shown again, a
    text costs nothing (it carries nothing new, and a normal submission failing many checks for one reason shows
    each whole): counted each time it appears, the payloads fill at most ``3 * CHECK_CHARS`` a check (a text shows
    as a sentence, as the error's field, in a trace)."""
    marker = _cut_marker(lang)
    for name, out in outputs.items():
        distinct, total = _leaked(out)
        assert distinct <= REPORT_CHARS, (name, distinct, total)
        assert total <= 3 * CHECK_CHARS * (checks + 3), (name, distinct, total)
        assert distinct > 500, (name, distinct)  # the flood is there (cut), not hidden
        assert marker.search(out), f"{name}: no cut marker"


def _checks(result):
    return [c for t in result.tasks for c in t.checks]


@pytest.fixture(scope="module")
def flood_in_process(tmp_path_factory):
    sub = _flood(tmp_path_factory.mktemp("flood") / "sub")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # its prints
        return api.check(path=sub, profile="quick", figures=True, call_timeout=20.0, total_timeout=300.0)


def test_a_flood_in_process_leaves_a_bounded_report(flood_in_process):
    result = flood_in_process
    errors = [c for c in _checks(result) if c.status == "error"]
    assert len(errors) > 20, [(c.id, c.status) for c in _checks(result)]
    _assert_bounded(_outputs(result), len(_checks(result)))


def test_the_cut_marker_is_said_in_the_reports_language(tmp_path):
    sub = _flood(tmp_path / "sub")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        result = api.check(path=sub, tasks=["masks"], profile="quick", diagnose=False, lang="zh")
    _assert_bounded(_outputs(result, lang="zh"), len(_checks(result)), lang="zh")


def test_a_forged_error_is_bounded_everywhere(flood_in_process):
    forged = [c for c in _checks(flood_in_process) if (c.error or {}).get("data")]
    assert forged, "the forged SubmissionError did not reach a check"
    for c in forged:
        size = len(json.dumps(c.error, ensure_ascii=False)) + len(c.message.key) + len(str(c.message.params))
        assert size < 3 * REPORT_CHARS, (c.id, size)


def test_a_flood_sealed_leaves_bounded_files(tmp_path):
    sub = _flood(tmp_path / "sub", crash=True)
    files = {name: tmp_path / name for name in ("report.html", "results.json", "junit.xml", "gradescope.json")}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            str(sub),
            "--sealed",
            "--profile",
            "quick",
            "--tasks",
            "masks,sdpa,param_count,training",
            "--html",
            str(files["report.html"]),
            "--json",
            str(files["results.json"]),
            "--junit",
            str(files["junit.xml"]),
            "--gradescope",
            str(files["gradescope.json"]),
            "--verbose",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert run.returncode == 1, run.stderr[-3000:]
    outputs = {"terminal": run.stdout, **{name: path.read_text(encoding="utf-8") for name, path in files.items()}}
    data = json.loads(outputs["results.json"])
    _assert_bounded(outputs, sum(len(t["checks"]) for t in data["tasks"]))
    kinds = {c["error"]["kind"] for t in data["tasks"] for c in t["checks"] if c["error"]}
    assert "crashed" in kinds, kinds  # the worker's end, with its output's tail (cut)


def test_a_flood_in_a_batch_leaves_bounded_files(tmp_path):
    cls = tmp_path / "class"
    cls.mkdir()
    _flood(cls / "flooder")
    out = tmp_path / "out"
    batch_runner.batch(
        submissions=cls,
        out=out,
        jobs=1,
        tasks=["masks", "param_count", "training"],
        profile="quick",
        call_timeout=20.0,
        total_timeout=300.0,
    )
    outputs = {p.name: p.read_text(encoding="utf-8") for p in (out / "flooder").iterdir() if p.is_file()}
    assert {"results.json", "report.html", "gradescope.json"} <= set(outputs), sorted(outputs)
    checks = sum(len(t["checks"]) for t in json.loads(outputs["results.json"])["tasks"])
    _assert_bounded({k: outputs[k] for k in ("results.json", "report.html", "gradescope.json")}, checks)
    text = (out / "gradebook.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text[1:] if text.startswith("\ufeff") else text)))
    assert _leaked(text)[1] <= 1000 and all(len(r.get("reason", "")) <= 2000 for r in rows), rows


def test_a_normal_failure_is_shown_whole(tmp_path):
    sub = hostile.build("buggy", tmp_path / "normal")
    (sub / "masks.py").write_text(NORMAL, encoding="utf-8")
    result = api.check(path=sub, tasks=["masks"], profile="quick", diagnose=False)
    failing = [c for c in _checks(result) if c.status == "error"]
    assert failing
    for c in failing:
        assert c.error["detail"] == NORMAL_DETAIL, c.error
        assert c.message.params["detail"] == NORMAL_DETAIL
        for frame in ("in padding_mask", "in _middle", "in _inner", "return _middle(tokens)", 'raise ValueError("'):
            assert frame in c.error["trace"], (frame, c.error["trace"])
    for lang in ("en", "zh"):
        for name, out in _outputs(result, lang).items():
            assert not _cut_marker(lang).search(out), name
            assert NORMAL_DETAIL in out, name


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("attention.py", "self.w_q", "self.query_projection_layer"),  # contract errors up to the Transformer's
        ("attention.py", "view(B, Lq, H, Dh)", "view(B, Lk, H, Dh)"),  # a shape error, with long traces
    ],
    ids=["renamed", "shape"],
)
def test_normal_failures_are_reported_as_before_bounding(tmp_path, monkeypatch, file, old, new):
    sub = tmp_path / "sub"
    shutil.copytree(ROOT / "solution", sub, ignore=shutil.ignore_patterns("__pycache__"))
    source = (sub / file).read_text(encoding="utf-8")
    assert old in source
    (sub / file).write_text(source.replace(old, new), encoding="utf-8")
    bound = api.bound_result
    monkeypatch.setattr(api, "bound_result", lambda result, lang="en": result)
    result = api.check(path=sub, profile="quick", diagnose=False)
    assert [c for c in _checks(result) if c.status == "error"]
    before = copy.deepcopy(result)
    assert bound(result) == before
