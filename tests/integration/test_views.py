"""The report views on hand-built results (no grading): SVG drawing, HTML, JUnit, Gradescope, figures."""

import base64
import hashlib
import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import torch
from markupsafe import escape

from assignments.transformer import figures
from grader import figure_data
from grader.assignment import load
from grader.errors import SubmissionError
from grader.messages import CATALOGUES, text
from grader.results import CheckResult, Diagnosis, GradeResult, Message, TaskResult
from grader.views import gradescope, html, json_view, junit, svg, terminal
from tests.conftest import ROOT, figure
from tests.unit.test_message_keys import catalogues_on_disk

VIEWS = Path(html.__file__).resolve().parent


def kit_catalogue(lang):
    """The kit's own sentences in ``lang``, read on disk (``grader/messages``; no assignment's)."""
    return catalogues_on_disk(ROOT / "grader" / "messages")[0][lang]


NASTY = "<b>bold</b> \x00\x1b[31m & 'q\""
TINY = Path(__file__).resolve().parents[1] / "data" / "tiny_assignment"
"""A second assignment: two tasks, no pictures."""


def _result():
    """Three tasks: one partly failing (hidden check, hint, mismatch map), one erroring with a nasty
    message, one passing but with a banned API (points withheld), and an overfit curve that turns NaN."""
    sdpa = [
        CheckResult(id="sdpa.equivalence", task="sdpa", status="passed", score=5, max_score=5),
        CheckResult(
            id="sdpa.weights",
            task="sdpa",
            status="failed",
            score=0,
            max_score=2,
            message=Message(
                "fail.mismatch",
                {"what": "weights", "index": [0, 1], "count": 3, "total": 4, "max_abs": "0.5", "max_rel": "1"},
            ),
            example={
                "config": {"scale": 0.5},
                "shapes": {"query": [1, 2, 4]},
                "first_index": [0, 1],
                "max_abs_error": 0.5,
                "extra_field": None,
            },
            diagnoses=[
                Diagnosis("sdpa.no_scale"),
                Diagnosis("hint.constant_factor", kind="hint", params={"factor": "2", "note": ""}),
            ],
            reproduce="gradekit check sub --only sdpa.weights",
            visibility="hidden",
            artifacts={"mismatch": [[0.0, float("nan")], [0.25, 0.5]]},
        ),
    ]
    masks = [
        CheckResult(
            id="masks.padding",
            task="masks",
            status="error",
            score=0,
            max_score=3,
            message=Message(
                "error.exception", {"detail": NASTY, "file": "masks.py", "line": 3, "code": "raise ValueError(...)"}
            ),
            error={
                "kind": "exception",
                "detail": NASTY,
                "file": "masks.py",
                "line": 3,
                "code": "raise ValueError(...)",
                "trace": "  File masks.py, line 3\n",
                "data": {},
            },
        )
    ]
    norm = [CheckResult(id="layernorm.contract", task="layernorm", status="passed", score=4, max_score=4)]
    curve = [3.0, 1.0, 0.3, float("nan"), float("nan")]
    overfit = [
        CheckResult(
            id="overfit.ten_samples",
            task="overfit",
            status="failed",
            score=0,
            max_score=10,
            message=Message("fail.overfit_loss", {"steps": 5, "last": "nan", "target": 0.05}),
            artifacts={"loss_curve": curve},
        )
    ]
    finding = {
        "name": "torch.nn.LayerNorm",
        "file": "norm.py",
        "line": 7,
        "code": "nn.LayerNorm(d)  # <i>",
        "task": "layernorm",
    }
    tasks = [
        TaskResult(id="sdpa", score=5, max_score=7, checks=sdpa),
        TaskResult(id="masks", score=0, max_score=3, checks=masks),
        TaskResult(id="layernorm", score=0, max_score=4, checks=norm, banned=[finding]),
        TaskResult(id="overfit", score=0, max_score=10, checks=overfit, blocked_by=["masks"]),
    ]
    return GradeResult(
        submission="sub",
        score=5,
        max_score=24,
        seed=7,
        profile="quick",
        duration_s=1.25,
        tasks=tasks,
        banned_api=[finding],
        load_errors={
            "model.py": {
                "kind": "import_error",
                "detail": "SyntaxError: <x>",
                "file": "model.py",
                "line": 2,
                "code": "def (",
                "trace": "",
            }
        },
        environment={
            "python": "3.11",
            "torch": "2",
            "devices": ["cpu"],
            "gradekit": "0.1.0",
            "when": "2026-01-01T00:00:00+00:00",
        },
        figures={
            "heatmaps": [
                {
                    "id": "weights",
                    "title": "transformer.fig.attention_title",
                    "note": None,
                    "quote": [
                        {"text": "ni hao", "italic": True},
                        {"text": "你好", "lang": "zh-CN"},
                        {"text": NASTY, "lang": '"><script>'},
                    ],
                    "panels": [
                        {
                            "title": "transformer.fig.attention_reference",
                            "values": [[1.0, 0.0], [0.4, 0.6]],
                            "decimals": 2,
                            "blocked": [[False, True], [False, False]],
                            "blocked_label": "transformer.fig.attention_blocked",
                        }
                    ],
                    "error": {"key": "report.figure_failed", "params": {"detail": NASTY}, "kind": "exception"},
                },
                {
                    "id": "table",
                    "title": "transformer.fig.pe_title",
                    "panels": [
                        {
                            "values": [[0.0, 1.0], [0.84, 0.54]],
                            "scale": "diverging",
                            "note": "transformer.fig.pe_reference_note",
                        }
                    ],
                },
            ]
        },
    )


# -- svg ---------------------------------------------------------------------------------------------
def test_svg_is_well_formed_and_escapes_labels():
    picture = svg.heatmap(
        [[0.1, 0.2]],
        row_labels=["<script>"],
        col_labels=["a&b", '"q"'],
        x_label="<x>",
        y_label="y",
        legend="<l>",
        label="<t>",
    )
    ET.fromstring(picture)
    assert "<script>" not in picture and "&lt;script&gt;" in picture and "a&amp;b" in picture
    for chart in (
        svg.line_chart([1.0, 0.5], x_label="<s>", y_label="<l>", reference_line=0.1, reference_label="<r>"),
        svg.bar(3, 4, label="<b>"),
    ):
        ET.fromstring(chart)
        assert "&lt;" in chart and not any(raw in chart for raw in ("<s>", "<l>", "<r>", "<b>"))


def test_heatmap_draws_every_cell_and_greys_what_is_missing():
    values = [[0.0, None, 1.0], [float("nan"), float("inf"), 0.5]]
    root = ET.fromstring(svg.heatmap(values))
    ns = "{http://www.w3.org/2000/svg}"
    cells = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(cells) == 6
    assert sum(r.get("fill") == svg.MISSING for r in cells) == 3
    ET.fromstring(svg.heatmap([[2.0, 2.0]]))  # a constant grid has a colour range too
    ET.fromstring(svg.heatmap([[0.0, 1.0]], scale="diverging", show_values=True, value_format="{:.1f}".format))


def test_heatmap_puts_a_long_axis_title_above_a_small_grid():
    picture = svg.heatmap([[1.0]], y_label="a rather long axis title", x_label="x")
    assert "rotate(-90" not in picture and "↓ a rather long axis title" in picture
    assert "rotate(-90" in svg.heatmap([[1.0]] * 10, y_label="rows")


def test_line_chart_breaks_at_missing_values_and_uses_a_log_axis_for_decades():
    picture = svg.line_chart([5.0, 2.0, float("nan"), 0.5, 0.01])
    d = re.search(r'<path d="([^"]+)"', picture).group(1)
    assert d.count("M") == 2
    assert ">0.01<" in picture and ">10<" in picture  # decade ticks
    assert "<path" not in svg.line_chart([float("nan")] * 3)


def test_bar_fills_the_earned_fraction():
    assert 'width="75"' in svg.bar(3, 4) and svg.bar(0, 4).count("<rect") == 1
    assert svg.bar(9, 4).count('width="100"') == 2 and svg.bar(1, 0).count("<rect") == 1


def test_colour_scales_run_from_end_to_end():
    assert svg.colour(0, svg.SEQUENTIAL) == "#440154" and svg.colour(1, svg.SEQUENTIAL) == "#fde725"
    assert svg.colour(-3, svg.ERROR) == svg.colour(0, svg.ERROR) and svg.colour(0.5, svg.DIVERGING) == "#f7f7f7"


# -- html ----------------------------------------------------------------------------------------------
def test_html_of_a_hand_built_result():
    page = html.render(_result(), lang="en")
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page and "<i>" not in page
    assert text("report.visibility.hidden") in page
    assert text("bug.hint.constant_factor", factor="2", note="") in page
    assert text("bughint.sdpa.no_scale") in page
    assert (
        text("report.loss_nonfinite", value="NaN", step=4) in page and text("report.loss_target", target=0.05) in page
    )
    assert text("ui.banned_cost") in page and "norm.py:7" in page
    assert text("ui.load_error", file="model.py", detail="SyntaxError: &lt;x&gt;") in page
    assert 'class="mismatch"' in page and text("report.example.extra_field") not in page and "extra_field" in page
    for block in re.findall(r"<svg\b.*?</svg>", page, re.S):
        ET.fromstring(block)
    zh_page = html.render(_result(), lang="zh")
    assert text("report.figures", "zh") in zh_page and '<html lang="zh-CN">' in zh_page


def test_html_draws_what_a_heatmap_figure_carries():
    """Quoted text (escaped; a language tag only when it is one), panel notes, values to fixed decimals,
    hatching and a diverging scale symmetric around 0."""
    page = html.render(_result(), lang="en")
    weights = re.search(r'<figure class="fig" id="fig-weights">.*?</figure>', page, re.S).group(0)
    assert '<span class="quote italic">ni hao</span> <span class="quote" lang="zh-CN">你好</span>' in weights
    assert '<span class="quote">&lt;b&gt;bold&lt;/b&gt;' in weights and "<script>" not in weights
    assert ">0.40</text>" in weights and ">1.00</text>" in weights and "<path" in weights
    assert text("transformer.fig.attention_blocked") in weights
    assert f'<p class="fig-error bad">{escape(text("report.figure_failed", detail=NASTY))}</p>' in weights
    table = re.search(r'<figure class="fig" id="fig-table">.*?</figure>', page, re.S).group(0)
    assert f'<p class="fig-note">{escape(text("transformer.fig.pe_reference_note"))}</p>' in table
    view = html.context(_result())["figures"]["heatmaps"][1]["panels"][0]["svg"]
    assert view == svg.heatmap(
        [[0.0, 1.0], [0.84, 0.54]],
        scale="diverging",
        label=text("transformer.fig.pe_title"),
        missing_label=text("report.legend_nonfinite"),
    )


def test_html_csp_allows_exactly_the_print_script():
    page = html.render(_result())
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    digest = "sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src '{digest}'" in page


def test_every_interface_key_the_views_use_exists_in_both_languages():
    # The kit's own sentences (grader/messages): the views draw every assignment's pictures with its own keys.
    sources = [p.read_text(encoding="utf-8") for p in VIEWS.glob("*.py")]
    sources += [p.read_text(encoding="utf-8") for p in (VIEWS / "templates").glob("*")]
    used = {k for s in sources for k in re.findall(r"""['"]((?:ui|report)\.[\w.]*\w)['"]""", s)}
    used -= {p.name for p in (VIEWS / "templates").glob("*")}  # "report.css", "report.html.j2"
    assert len(used) > 40
    for lang in ("en", "zh"):
        assert sorted(used - set(kit_catalogue(lang))) == []
    assert sorted(k for k in CATALOGUES["en"] if k.startswith("report.")) == sorted(
        k for k in CATALOGUES["zh"] if k.startswith("report.")
    )


def test_a_result_without_pictures_renders_cleanly():
    """A second assignment's result: other task ids, no ``figures``, no loss curve; every view renders it."""
    tiny = load(TINY)
    checks = [
        CheckResult(id="softmax.equivalence", task="softmax", status="passed", score=2, max_score=2),
        CheckResult(
            id="attend.equivalence",
            task="attend",
            status="failed",
            score=0,
            max_score=3,
            variant="isolated",
            message=Message("fail.mismatch", {"what": "Attend"}),
        ),
    ]
    result = GradeResult(
        submission="sub",
        score=2,
        max_score=5,
        seed=None,
        profile="quick",
        duration_s=0.5,
        tasks=[TaskResult(id=c.task, score=c.score, max_score=c.max_score, checks=[c]) for c in checks],
        assignment=tiny.name,
    )
    assert [t.id for t in result.tasks] == list(tiny.task_ids)
    page = html.render(result, lang="en")
    assert 'id="figures"' not in page and "<svg" in page  # score bars, no pictures
    for block in re.findall(r"<svg\b.*?</svg>", page, re.S):
        ET.fromstring(block)
    assert {'data-task="softmax"', 'data-task="attend"', 'id="check-attend.equivalence"'} <= set(
        re.findall(r'(?:data-task|id)="[^"]*"', page)
    )
    data = json.loads(json_view.render(result))
    assert [c["variant"] for t in data["tasks"] for c in t["checks"]] == ["integrated", "isolated"]
    ET.fromstring(junit.render(result).encode("utf-8"))
    assert gradescope.to_data(result)["score"] == 2
    assert "attend" in terminal.summary(result, lang="zh")


def test_the_views_run_no_student_code():
    """Rendering imports nothing that calls into a submission or the reference: no runner, no probe, no
    figure-gathering, no corpus, not even torch. The pictures are plain data, gathered by ``api.check``."""
    views = ", ".join(f"grader.views.{m}" for m in ("html", "terminal", "junit", "json_view", "gradescope"))
    code = f"import sys, {views}; print('\\n'.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    forbidden = [
        m
        for m in loaded
        if m == "torch"
        or m.startswith(("assignments", "grader.probes", "grader.checks"))
        or m in ("grader.submission.inprocess", "grader.submission.worker", "grader.submission.loader")
    ]
    assert forbidden == []


# -- junit and gradescope --------------------------------------------------------------------------------
def test_junit_survives_control_characters_and_counts_right():
    root = ET.fromstring(junit.render(_result(), lang="en").encode("utf-8"))
    assert root.get("tests") == "5" and root.get("failures") == "2" and root.get("errors") == "1"
    error = root.find(".//testcase[@name='masks.padding']/error")
    assert error.get("type") == "error.exception" and "<b>bold</b>" in error.get("message")
    assert "\ufffd" in error.get("message")  # NUL and ESC replaced
    assert "norm.py:7" in root.find("testsuite[@name='layernorm']/system-out").text


def test_gradescope_withholds_banned_points_and_keeps_visibility():
    data = gradescope.to_data(_result(), lang="en")
    by_name = {t["name"]: t for t in data["tests"]}
    assert by_name["layernorm.contract"]["score"] == 0 and by_name["layernorm.contract"]["status"] == "passed"
    assert text("ui.banned_cost") in by_name["layernorm.contract"]["output"]
    assert by_name["sdpa.weights"]["visibility"] == "hidden"
    assert by_name["masks.padding"]["status"] == "failed"
    assert sum(t["score"] for t in data["tests"]) == data["score"] == 5
    assert data["execution_time"] == 1 and "torch.nn.LayerNorm" in data["output"]
    json.loads(gradescope.render(_result()))


# -- figures ---------------------------------------------------------------------------------------------
class FakeRunner:
    """Answers ``sdpa`` and ``params`` with what it was given, or raises it."""

    def __init__(self, sdpa=None, params=None):
        self.answers = {"sdpa": sdpa, "params": params}

    def run(self, probe, variant="integrated", **args):
        answer = self.answers[probe]
        if isinstance(answer, BaseException):
            raise answer
        return answer(args) if callable(answer) else answer


def _good_sdpa(args):
    L = args["query"].shape[1]
    w = torch.full((1, L, L), 1.0 / L, dtype=torch.float64)
    return {"out": args["value"], "weights": w}


def _good_params(args):
    return {"buffer_values": {"pe": torch.zeros(1, 50, 32)}}


def test_figures_record_errors_instead_of_raising():
    good = FakeRunner(_good_sdpa, _good_params)
    bad = FakeRunner(
        SubmissionError(kind="exception", detail="ValueError: no", file="attention.py", line=3),
        RuntimeError("grader bug"),
    )
    data = figures.collect(sub=bad, ref=good)
    att, pe = figure(data, "attention"), figure(data, "positional")
    assert att["error"] == {
        "key": "report.figure_failed",
        "kind": "exception",
        "params": {"detail": "ValueError: no (attention.py:3)"},
    }
    assert [p["title"] for p in att["panels"]] == ["transformer.fig.attention_reference"]
    assert pe["source"] == "reference" and pe["panels"][0]["note"] == "transformer.fig.pe_reference_note"
    assert "grader bug" in pe["error"]["params"]["detail"]
    wrong = FakeRunner(lambda a: {"weights": torch.zeros(2, 2)}, lambda a: {"buffer_values": {}})
    data = figures.collect(sub=wrong, ref=good)
    assert figure(data, "attention")["error"]["key"] == "report.figure_shape"
    assert figure(data, "positional")["error"]["key"] == "transformer.fig.no_pe"
    json.dumps(data, allow_nan=False)


def test_figure_inputs_are_seeded_and_causal():
    syllables, chars = figures.sentence()
    assert len(syllables) == len(chars) >= 5
    q1, k1, v1 = figures.attention_inputs(syllables)
    q2, _, _ = figures.attention_inputs(syllables)
    assert torch.equal(q1, q2) and q1.shape == (1, len(syllables), figures.D_ATTENTION)
    mask = figures.causal(3)
    assert mask.tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    nan_rows = figure_data.rows(torch.tensor([[1.0, math.nan], [math.inf, 0.123456789]]))
    assert nan_rows == [[1.0, None], [None, 0.12346]]


def test_the_chinese_status_words_keep_the_check_ids_in_one_column():
    """A CJK character takes two terminal columns: the status words are padded by columns, not characters, so the
    check ids after 通过, 未通过 and 出错 start in the same column."""
    from grader.safetext import columns

    said = terminal.summary(_result(), lang="zh", verbose=True, color=False)
    starts = {}
    for line in said.splitlines():
        for check in ("sdpa.equivalence", "sdpa.weights", "masks.padding"):
            if (
                line.lstrip().startswith(tuple(text(f"ui.{s}", "zh") for s in ("passed", "failed", "error")))
                and check in line
            ):
                starts[check] = columns(line[: line.index(check)])
    assert len(starts) >= 2 and len(set(starts.values())) == 1, starts


def test_where_an_import_failed_is_said_once_and_a_missing_file_has_no_line():
    from grader.errors import located

    syntax = "SyntaxError: expected ':' (attention.py, line 17)"
    assert located(syntax, "attention.py", 17) == syntax
    assert (
        located("NameError: name 'x' is not defined", "masks.py", 3)
        == "NameError: name 'x' is not defined (masks.py:3)"
    )
    assert located("no file decoding.py in sub", "decoding.py", 0) == "no file decoding.py in sub"
    assert (
        located("ImportError: cannot import name 'f'", "model.py", 0)
        == "ImportError: cannot import name 'f' (model.py)"
    )
    assert located("boom", None, None) == "boom"
    result = _result()
    result.load_errors = {
        "attention.py": {"kind": "import_error", "detail": syntax, "file": "attention.py", "line": 17},
        "decoding.py": {
            "kind": "missing_file",
            "detail": "no file decoding.py in sub",
            "file": "decoding.py",
            "line": 0,
        },
    }
    for lang in ("en", "zh"):
        said = terminal.summary(result, lang=lang, color=False)
        assert said.count("attention.py, line 17") == 1 and "attention.py:17" not in said and ":0" not in said
        assert located(syntax, "attention.py", 17) in gradescope.render(result, lang=lang)
