"""``safetext.bound_result``: a report holds little of a submission's text, and all of the kit's own.

Results are built here as the engine builds them (a ``SubmissionError`` dict under ``error``, an ``error.*``
message with its detail, notes, artifacts, figures); the hostile tests (``tests/hostile/test_bounds.py``) grade
real floods in every mode."""

import copy
import json
import random
import string

from grader.errors import SubmissionError
from grader.messages import CATALOGUES, render
from grader.results import CheckResult, GradeResult, Message, TaskResult
from grader.safetext import (
    CHECK_CHARS,
    ENTRIES,
    ITEM_CHARS,
    LISTED,
    NAME_CHARS,
    NUMBERS,
    REPORT_CHARS,
    bound_result,
)
from grader.views import json_view, terminal
from tests.strings import strings

ALPHABET = string.ascii_letters + string.digits + "+/"


def _payload(n, seed=0):
    r = random.Random(seed)
    return "".join(r.choices(ALPHABET, k=n))


def _errored(check_id, err, task="mha"):
    """A check that errored, as ``engine._errored`` makes it."""
    params = {"detail": err.detail, "file": err.file, "line": err.line, "code": err.code}
    return CheckResult(
        id=check_id,
        task=task,
        status="error",
        score=0.0,
        max_score=1.0,
        error=err.to_dict(),
        message=Message(f"error.{err.kind}", params),
    )


def _result(checks, **fields):
    tasks = {}
    for c in checks:
        tasks.setdefault(c.task, []).append(c)
    return GradeResult(
        submission="sub",
        score=0.0,
        max_score=float(len(checks)),
        seed=None,
        profile="quick",
        duration_s=1.0,
        tasks=[TaskResult(id=t, score=0.0, max_score=len(cs), checks=cs) for t, cs in tasks.items()],
        **fields,
    )


def _marker(lang="en"):
    return CATALOGUES[lang]["ui.cut"].partition("{n}")[0]


_INDEX = {}


def _payload_chars(value, payload, k=16):
    """How many characters of ``payload`` the strings of ``value`` hold, each distinct stretch once."""
    if payload not in _INDEX:
        _INDEX.clear()
        _INDEX[payload] = {payload[i : i + k]: i for i in range(0, len(payload) - k + 1, 4)}
    index = _INDEX[payload]
    covered = set()
    for s in set(strings(value)):
        for i in range(len(s) - k + 1):
            j = index.get(s[i : i + k])
            if j is not None:
                covered.update(range(j, j + k))
    return len(covered)


def test_every_check_raising_a_megabyte_leaves_a_bounded_report():
    payload = _payload(1 << 20)
    checks = []
    for n in range(60):
        piece = payload[n * 15000 :] + payload[: n * 15000]
        err = SubmissionError(
            kind="exception",
            detail="RuntimeError: " + piece,
            file="attention.py",
            line=3,
            code=piece[:300],
            trace=piece[::-1][:4000] + piece,
        )
        checks.append(_errored(f"mha.c{n}", err))
    result = bound_result(_result(checks))
    assert _payload_chars(result, payload) <= REPORT_CHARS
    for c in result.tasks[0].checks:
        assert _payload_chars(c, payload) <= CHECK_CHARS
        for s in strings(c):
            assert len(s) <= ITEM_CHARS + 40, len(s)
        assert c.error["kind"] == "exception" and c.message.key == "error.exception"
    first, last = result.tasks[0].checks[0], result.tasks[0].checks[-1]
    assert first.error["detail"].startswith("RuntimeError: ") and _marker() in first.error["detail"]
    assert first.message.params["detail"] == first.error["detail"]  # one text, said twice, cut alike
    assert first.error["trace"].startswith(_marker()) and first.error["trace"].endswith(payload[-100:])
    assert last.error["detail"].startswith(_marker())  # nothing left: it says its text was cut
    assert json.loads(json_view.render(result))  # still a report every view writes


def test_a_text_seen_before_costs_nothing():
    """A normal submission failing many checks for one reason shows each whole."""
    detail = "ValueError: " + _payload(900)
    trace = "".join(f'  File "attention.py", line {n}, in f{n}\n    return f{n + 1}(x)\n' for n in range(10))
    checks = [
        _errored(
            f"mha.c{n}",
            SubmissionError(
                kind="exception", detail=detail, file="attention.py", line=9, code="return f(x)", trace=trace
            ),
        )
        for n in range(80)
    ]
    before = copy.deepcopy(checks)
    result = bound_result(_result(checks))
    assert [c.error for c in result.tasks[0].checks] == [c.error for c in before]
    assert [c.message for c in result.tasks[0].checks] == [c.message for c in before]


def test_a_normal_result_is_unchanged():
    err = SubmissionError(
        kind="contract",
        detail="the parameters of MultiHeadAttention do not match the contract",
        data={
            "expected": [[f"layers.{i}.w_{c}.weight", [32, 32]] for i in range(12) for c in "qkvo"],
            "found": [[f"layers.{i}.w_{c}.weight", [32, 32]] for i in range(12) for c in "qkv"],
            "missing": [f"layers.{i}.w_o.weight" for i in range(12)],
            "unexpected": [],
            "wrong_shape": [],
            "shared": [],
        },
    )
    contract = _errored("mha.contract", err)
    contract.message = Message("error.contract", {**contract.message.params, **err.data})
    mismatch = CheckResult(
        id="mha.equivalence",
        task="mha",
        status="failed",
        score=0.0,
        max_score=5.0,
        message=Message(
            "fail.mismatch",
            {
                "what": "MultiHeadAttention(d_model=32, num_heads=4)",
                "count": 3,
                "total": 64,
                "index": [0, 1, 2],
                "max_abs": 0.5,
                "max_rel": 0.25,
            },
        ),
        example={"config": {"d_model": 32}, "shapes": {"query": [2, 5, 32]}},
        artifacts={"mismatch": [[0.0, 0.5] * 16] * 32},
        notes=[
            Message(
                "note.not_isolated",
                {
                    "detail": "AttributeError: 'Linear' object has no attribute 'size'",
                    "file": "attention.py",
                    "line": 4,
                },
            )
        ],
    )
    timeout = _errored("mha.slow", SubmissionError(kind="timeout", detail="call did not finish within 60 s"))
    timeout.message = Message(
        "error.timeout_in_total", {"detail": "", "file": "", "line": 0, "code": "", "seconds": "12.5", "total": "900"}
    )
    figures = {
        "heatmaps": [
            {
                "id": "attention",
                "quote": [{"text": "wo ai ni", "italic": True}],
                "panels": [{"values": [[0.5, 0.5], [1.0, None]], "blocked": [[False, True], [False, False]]}],
                "error": None,
                "comparison": [
                    {"key": "transformer.fig.mask_failed", "params": {"detail": "it returned dtype int64, not bool"}}
                ],
            }
        ]
    }
    result = _result(
        [contract, mismatch, timeout],
        figures=figures,
        load_errors={
            "norm.py": SubmissionError(
                kind="import_error", detail="SyntaxError: invalid syntax", file="norm.py", line=3
            ).to_dict()
        },
        banned_api=[
            {
                "name": "torch.nn.LayerNorm",
                "file": "norm.py",
                "line": 7,
                "code": "self.ln = nn.LayerNorm(d)",
                "task": "layernorm",
            }
        ],
    )
    before = copy.deepcopy(result)
    assert bound_result(result) == before


def test_the_kits_own_words_and_numbers_stay_when_the_share_is_spent():
    payload = _payload(1 << 20)
    flood = [_errored(f"mha.c{n}", SubmissionError(kind="exception", detail=payload[n * 9000 :])) for n in range(30)]
    mismatch = CheckResult(
        id="mha.equivalence",
        task="mha",
        status="failed",
        score=0.0,
        max_score=5.0,
        message=Message(
            "fail.mismatch",
            {
                "what": "MultiHeadAttention(d_model=32, num_heads=4)",
                "count": 3,
                "total": 64,
                "index": [0, 1, 2],
                "max_abs": 0.5,
                "max_rel": 0.25,
            },
        ),
        example={"shapes": {"query": [2, 5, 32]}},
        artifacts={"mismatch": [[0.5] * 32] * 32},
    )
    timeout = _errored("mha.slow", SubmissionError(kind="timeout", detail=payload))
    timeout.message = Message("error.timeout_in_total", {"detail": payload, "seconds": "12.5", "total": "900"})
    figures = {"heatmaps": [{"id": "attention", "quote": ["wo ai ni"], "panels": [{"values": [[0.5] * 8] * 8}]}]}
    kit = copy.deepcopy((mismatch, figures))
    result = bound_result(_result([*flood, mismatch, timeout], figures=figures))
    checks = {c.id: c for c in result.tasks[0].checks}
    assert (checks["mha.equivalence"], result.figures) == kit
    assert (
        checks["mha.slow"].message.params["seconds"] == "12.5" and checks["mha.slow"].message.params["total"] == "900"
    )
    assert checks["mha.slow"].error["kind"] == "timeout"
    assert render(checks["mha.slow"].message).startswith("your code did not finish within the 12.5 s left of the 900 s")


def test_a_forged_error_is_bounded_in_every_field():
    """A submission may raise the grader's own ``SubmissionError``: any kind, any data."""
    payload = _payload(1 << 20)
    err = SubmissionError(
        kind=payload[:100000],
        detail=payload,
        file=payload[:5000],
        line=payload[:5000],
        code=payload,
        trace=payload,
        data={
            payload[:50000]: list(range(100000)),
            "deep": [[payload[i : i + 500]] for i in range(0, 500000, 500)],
            "big": 7**5000,
            **{f"k{i}": i for i in range(10000)},
        },
    )
    check = _errored("mha.forged", err)
    check.message = Message(f"error.{err.kind}", {**check.message.params, **err.data})
    check.notes = [{"key": "note.not_isolated", "params": {"detail": payload, "file": payload, "line": 1}}]
    result = bound_result(_result([check]))
    c = result.tasks[0].checks[0]
    size = len(json.dumps([c.error, c.message.key, c.message.params, c.notes], ensure_ascii=False, default=str))
    assert size <= 4 * CHECK_CHARS, size  # the error's data is said twice: its field and the message's parameters
    assert _payload_chars(c, payload) <= CHECK_CHARS
    assert set(c.error) == {"kind", "detail", "file", "line", "code", "trace", "data"}
    assert isinstance(c.notes[0], dict) and c.notes[0]["key"] == "note.not_isolated"
    assert _marker() in terminal.summary(result, verbose=True)


def test_long_lists_are_cut_with_a_count():
    names = [f"{_payload(40, seed=n)}" for n in range(20000)]
    err = SubmissionError(kind="contract", detail="the parameters do not match", data={"found": names})
    check = _errored("mha.contract", err)
    check.artifacts = {"curve": list(range(10 * ENTRIES))}
    said = _errored("mha.said", SubmissionError(kind="contract", detail="the parameters do not match"))
    said.message = Message("error.contract", {**said.message.params, "unexpected": names})
    c, s = bound_result(_result([check, said])).tasks[0].checks
    entries = CATALOGUES["en"]["ui.cut_entries"].partition("{n}")[0]
    assert c.error["data"]["found"][-1].startswith(entries) and len(c.error["data"]["found"]) <= CHECK_CHARS // 40 + 1
    assert len(c.artifacts["curve"]) == ENTRIES + 1 and c.artifacts["curve"][:3] == [0, 1, 2]
    # names said in the first check cost nothing again: a share of new ones, and those
    assert (
        s.message.params["unexpected"][-1].startswith(entries)
        and len(s.message.params["unexpected"]) <= 2 * CHECK_CHARS // 40 + 1
    )


def test_banned_findings_refused_names_and_load_errors_are_bounded():
    payload = _payload(1 << 20)
    findings = [
        {
            "name": "torch.nn.functional.softmax",
            "file": f"f{n % 7}.py",
            "line": n,
            "code": payload[n * 200 : (n + 1) * 200],
            "task": "sdpa" if n < 5000 else "mha",
        }
        for n in range(10000)
    ]
    loads = {
        f"{payload[n * 3000 : (n + 1) * 3000]}.py": SubmissionError(kind="import_error", detail=payload).to_dict()
        for n in range(50)
    }
    refused = [
        {"path": payload[n * 4000 : (n + 1) * 4000], "kind": "too_big", "size": 9 << 20, "limit": 8 << 20}
        for n in range(100)
    ]
    check = CheckResult(id="sdpa.x", task="sdpa", status="passed", score=1.0, max_score=1.0)
    result = _result([check], banned_api=findings, load_errors=loads, refused=refused)
    result.tasks[0].banned = list(findings)
    bound_result(result)
    assert _payload_chars(result, payload) <= REPORT_CHARS
    assert len(result.banned_api) <= LISTED + 1 and set(result.banned_api[-1]["task"].split(",")) == {"sdpa", "mha"}
    assert len(result.refused) == 100 and all(r["kind"] == "too_big" for r in result.refused)
    assert len(result.load_errors) < 50 and all(
        e["kind"] in ("import_error", "error") for e in result.load_errors.values()
    )
    assert terminal.summary(result)  # every view still reads it


def test_a_short_name_in_the_kits_sentence_stays_whole():
    payload = _payload(1 << 20)
    flood = [_errored(f"mha.c{n}", SubmissionError(kind="exception", detail=payload[n * 9000 :])) for n in range(30)]
    names = ["w_q.weight", "a" * (NAME_CHARS + 500)]
    shared = CheckResult(
        id="mha.shared",
        task="mha",
        status="failed",
        score=0.0,
        max_score=1.0,
        message=Message("fail.shared_params", {"what": "MultiHeadAttention", "groups": [names]}),
    )
    c = bound_result(_result([*flood, shared])).tasks[0].checks[-1]
    kept, cut = c.message.params["groups"][0]
    assert (
        kept == "w_q.weight"
        and cut.startswith("a" * NAME_CHARS + _marker())
        and c.message.params["what"] == "MultiHeadAttention"
    )


def test_the_marker_is_in_the_reports_language():
    err = SubmissionError(kind="exception", detail=_payload(5000))
    c = bound_result(_result([_errored("mha.c", err)]), lang="zh").tasks[0].checks[0]
    assert _marker("zh") in c.error["detail"] and _marker("en") not in c.error["detail"]


def test_numbers_of_the_kits_data_are_free_in_a_bounded_count():
    check = CheckResult(
        id="mha.x",
        task="mha",
        status="failed",
        score=0.0,
        max_score=1.0,
        message=Message("fail.mismatch", {"what": "x"}),
        artifacts={"grid": [[0.5] * 4096] * 4096, "mask": [[None] * 4096] * 4096},
    )
    c = bound_result(_result([check])).tasks[0].checks[0]
    rows = c.artifacts["grid"] + c.artifacts.get("mask", [])
    numbers = sum(1 for row in rows if isinstance(row, list) for v in row if not isinstance(v, str))
    assert numbers == NUMBERS and len(rows) < 20, (numbers, len(rows))
    assert c.artifacts["grid"][0] == [0.5] * 4096  # whole rows first
