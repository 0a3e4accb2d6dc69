"""The HTML report on a phone (390 px) and what its pictures say.

Every picture and its legend fit a phone's screen with legible labels, reproduce commands can be read
and copied whole, a boolean mismatch map has a two-colour legend, the attention picture draws the
submission's own causal mask, and a loss that turns NaN or inf says so, with the step, in the check's
message and in the picture. The browser tests need Debian's ``chromium``; without it they are skipped.
Screenshots go to ``phone-*.png`` in the screens folder (``tests/chromium.py``: ``SCREENS``).
"""

import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from assignments.transformer import figures
from grader import api
from grader.bugs import catalogue
from grader.errors import SubmissionError
from grader.messages import render, text
from grader.results import CheckResult, GradeResult, Message, TaskResult
from grader.views import html, svg
from tests.chromium import SCREENS
from tests.conftest import TRANSFORMER, edited_copy, figure, panel

ROOT = Path(__file__).resolve().parents[2]
PHONE = (390, 844)
LEGIBLE_PX = 8.5
"""The smallest text a picture may show on the phone, in CSS pixels."""
STEP_LINE = "    loss = sequence_loss(logits, tgt_out, pad_idx, label_smoothing)\n"


def _loss_turns(value, at):
    """An edit of training.py: train_step's loss becomes ``value`` (a float) from its ``at``-th call on the same
    optimizer on (counted in the optimizer's own parameter group, so every check starts afresh)."""
    return (
        "training.py",
        (
            STEP_LINE,
            STEP_LINE + f"    group = optimizer.param_groups[0]\n"
            f"    group['calls'] = group.get('calls', 0) + 1\n"
            f"    if group['calls'] >= {at}:\n"
            f"        loss = loss * float('{value}')\n",
        ),
    )


# -- graded submissions (each once) ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def solution():
    return api.check(path=ROOT / "solution", profile="quick", figures=True)


@pytest.fixture(scope="module")
def wrong(tmp_path_factory):
    """A causal mask that shows the future (boolean mismatch maps, and an attention picture that must show it)
    and heads split without a transpose (mismatch maps 12 columns wide)."""
    cat = catalogue.Catalogue(TRANSFORMER)
    dest = catalogue.write_mutant(
        cat.by_id["masks.causal_shows_future"], tmp_path_factory.mktemp("wrong") / "sub", TRANSFORMER
    )
    bug = cat.by_id["mha.split_without_transpose"]
    path = dest / bug.file
    path.write_text(catalogue.apply(bug, path.read_text(encoding="utf-8")), encoding="utf-8")
    return api.check(path=dest, profile="quick", tasks=("sdpa", "mha", "masks"), figures=True)


@pytest.fixture(scope="module")
def nan_loss(tmp_path_factory):
    """train_step's loss turns NaN at its 2nd call: in training.train_step (3 SGD steps) and in overfit."""
    file, edit = _loss_turns("nan", 2)
    dest = edited_copy(tmp_path_factory.mktemp("nan") / "sub", {file: edit})
    return api.check(path=dest, profile="quick", tasks=("training", "overfit"), figures=True)


def _check(result, check_id):
    (c,) = [c for t in result.tasks for c in t.checks if c.id == check_id]
    return c


# -- the NaN loss, in the checks' messages ------------------------------------------------------------------
def test_a_nan_loss_is_named_with_its_step(nan_loss):
    overfit = _check(nan_loss, "overfit.ten_samples")
    assert overfit.message.key == "fail.overfit_nonfinite"
    assert overfit.message.params["value"] == "NaN" and overfit.message.params["step"] == 2
    sentence = render(overfit.message)
    assert "NaN at step 2 of 100" in sentence and "does not learn" not in sentence
    assert "第 2 步" in render(overfit.message, "zh") and "NaN" in render(overfit.message, "zh")
    train = _check(nan_loss, "training.train_step")
    assert train.message.key == "fail.train_loss_nonfinite"
    assert render(train.message) == text("fail.train_loss_nonfinite", value="NaN", step=2)
    assert "NaN" in render(train.message, "zh")
    # The loss picture marks the step too, and the curve keeps the finite step before it.
    page = html.render(nan_loss, lang="en")
    fig = re.search(r'<figure class="fig" id="fig-loss">.*?</figure>', page, re.S).group(0)
    assert text("report.loss_nonfinite", value="NaN", step=2) in fig
    assert ">" + text("report.loss_stop", value="NaN", step=2) + "<" in fig
    assert (
        text(
            "report.loss_summary",
            first=overfit.artifacts["loss_curve"][0],
            last=overfit.artifacts["loss_curve"][0],
            steps=1,
        )
        in fig
    )


def test_an_infinite_loss_is_named_inf(tmp_path):
    file, edit = _loss_turns("inf", 3)
    result = api.check(path=edited_copy(tmp_path / "sub", {file: edit}), profile="quick", tasks=("overfit",))
    c = _check(result, "overfit.ten_samples")
    assert c.message.key == "fail.overfit_nonfinite" and c.message.params["value"] == "inf"
    assert c.message.params["step"] == 3 and "inf at step 3 of 100" in render(c.message)


def test_a_finite_loss_that_stays_high_still_reads_does_not_learn(tmp_path):
    edits = {"training.py": ("    optimizer.step()\n", "    pass  # no update: the loss stays where it is\n")}
    result = api.check(path=edited_copy(tmp_path / "sub", edits), profile="quick", tasks=("overfit",))
    c = _check(result, "overfit.ten_samples")
    assert c.message.key == "fail.overfit_loss" and "does not learn" in render(c.message)
    assert all(math.isfinite(x) for x in c.artifacts["loss_curve"]) and len(c.artifacts["loss_curve"]) == 100


def test_the_solution_still_learns(solution):
    c = _check(solution, "overfit.ten_samples")
    assert c.status == "passed" and all(math.isfinite(x) for x in c.artifacts["loss_curve"])


# -- the loss picture (hand-built results) ----------------------------------------------------------------
def _loss_result(curve):
    c = CheckResult(
        id="overfit.ten_samples",
        task="overfit",
        status="failed",
        score=0,
        max_score=10,
        message=Message("fail.overfit_nonfinite", {"value": "NaN", "step": 1, "steps": 100}),
        artifacts={"loss_curve": curve, "loss_target": 0.05, "loss_steps": 100},
    )
    return GradeResult(
        submission="sub",
        score=0,
        max_score=10,
        seed=None,
        profile="quick",
        duration_s=1.0,
        tasks=[TaskResult(id="overfit", score=0, max_score=10, checks=[c])],
    )


@pytest.mark.parametrize(
    "curve, value, step",
    [([float("nan")], "NaN", 1), ([4.0, 3.0, float("inf")], "inf", 3), ([4.0, float("-inf")], "-inf", 2)],
)
def test_the_loss_picture_names_the_value_and_the_step(curve, value, step):
    loss = html.context(_loss_result(curve), lang="en")["figures"]["loss"]
    assert loss["nonfinite"] == text("report.loss_nonfinite", value=value, step=step)
    # Drawn even when no step had a finite loss: the picture itself says where it stopped.
    assert loss["svg"] and ">" + text("report.loss_stop", value=value, step=step) + "<" in loss["svg"]
    ET.fromstring(loss["svg"])
    zh = html.context(_loss_result(curve), lang="zh")["figures"]["loss"]
    assert zh["nonfinite"] == text("report.loss_nonfinite", "zh", value=value, step=step) and value in zh["nonfinite"]


def test_a_finite_loss_picture_has_no_stop_mark():
    loss = html.context(_loss_result([4.0, 1.0, 0.01]), lang="en")["figures"]["loss"]
    assert loss["nonfinite"] == "" and "NaN" not in loss["svg"] and "inf" not in loss["svg"]
    assert loss["summary"] == text("report.loss_summary", first=4.0, last=0.01, steps=3)


# -- legends of mismatch maps -------------------------------------------------------------------------------
def _mismatch_svg(key, grid):
    c = CheckResult(
        id="masks.causal",
        task="masks",
        status="failed",
        score=0,
        max_score=3,
        message=Message(key, {"what": "causal_mask"}),
        artifacts={"mismatch": grid},
    )
    result = GradeResult(
        submission="sub",
        score=0,
        max_score=3,
        seed=None,
        profile="quick",
        duration_s=1.0,
        tasks=[TaskResult(id="masks", score=0, max_score=3, checks=[c])],
    )
    return html.context(result, lang="en")["tasks"][0]["failing"][0]["mismatch"]["svg"]


def _legend(picture):
    return re.search(r'<g class="legend">(.*?)</g>', picture, re.S).group(1)


def test_a_boolean_mismatch_map_has_a_two_colour_legend():
    legend = _legend(_mismatch_svg("fail.values_exact", [[0.0, 1.0], [1.0, 0.0]]))
    assert ">" + text("report.legend_differs") + "<" in legend and ">" + text("report.legend_matches") + "<" in legend
    assert ">0.5<" not in legend and legend.count("<rect") == 2  # two swatches, no colour bar


def test_a_numeric_mismatch_map_keeps_its_colour_bar():
    legend = _legend(_mismatch_svg("fail.mismatch", [[0.0, 0.5], [1.0, 0.25]]))
    assert text("report.mismatch_legend") in legend and ">0.5<" in legend and ">1<" in legend
    assert text("report.legend_differs") not in legend and legend.count("<rect") > 10  # a gradient


def test_grey_cells_are_named_in_the_legend_only_when_there_are_some():
    assert text("report.legend_nonfinite") in _legend(_mismatch_svg("fail.mismatch", [[0.0, float("nan")]]))
    assert text("report.legend_nonfinite") not in _legend(_mismatch_svg("fail.mismatch", [[0.0, 1.0]]))


# -- heat maps sized for a phone ----------------------------------------------------------------------------
def _view_box_width(picture):
    return float(re.search(r'viewBox="0 0 ([\d.]+) ', picture).group(1))


def test_a_wide_short_map_wraps_its_columns_and_keeps_its_values():
    grid = [[round(0.5 + 0.37 * i + 0.61 * j, 3) for j in range(12)] for i in range(2)]
    picture = svg.heatmap(grid, x_label="last axis", y_label="second-to-last axis", scale="error", legend="|e|")
    assert _view_box_width(picture) <= svg.WIDTH
    cells = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"[^>]*><title>', picture)
    assert len(cells) == 24 and float(cells[0][2]) >= 30  # cells large enough for their values ...
    assert all(f">{svg.label_number(v)}<" in picture for row in grid for v in row)  # ... which are all written
    assert len({x for x, _, _ in cells}) == 6 and len({y for _, y, _ in cells}) == 4  # two bands of 2 x 6
    # A grid whose columns fit stays in one band.
    narrow = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)"[^>]*><title>', svg.heatmap([r[:6] for r in grid]))
    assert len({x for x, _ in narrow}) == 6 and len({y for _, y in narrow}) == 2


def test_the_positional_table_fits_a_phone_whole():
    class TableRunner:  # PositionalEncoding's buffer: a table of zeros
        def run(self, probe, variant="integrated", **args):
            return {"buffer_values": {"pe": torch.zeros(1, 50, 32)}}

    pe = figures.positional(sub=TableRunner(), ref=TableRunner())
    (picture,) = (p["svg"] for p in _view(pe)["panels"])
    assert _view_box_width(picture) <= svg.WIDTH and picture.count("<title>") == 50 * 32
    assert "min-width" not in picture  # shrinks with its box, never wider than the screen


# -- the attention picture draws the submission's own mask ----------------------------------------------------
class MaskRunner:
    """A runner whose ``causal_mask`` returns ``mask`` (or raises it) and whose sdpa is a plain softmax under
    the mask it is given (recorded), or raises ``sdpa_error``."""

    def __init__(self, mask, sdpa_error=None):
        self.mask, self.seen, self.sdpa_error = mask, [], sdpa_error

    def run(self, probe, variant="integrated", **args):
        if probe == "call":
            assert args["name"] == "causal_mask"
            if isinstance(self.mask, BaseException):
                raise self.mask
            return {"out": self.mask(args["args"][0])}
        assert probe == "sdpa"
        self.seen.append(args["mask"])
        if self.sdpa_error is not None:
            raise self.sdpa_error
        q, k = args["query"], args["key"]
        scores = (q @ k.transpose(-2, -1)).masked_fill(~args["mask"], float("-inf"))
        return {"out": args["value"], "weights": scores.softmax(-1)}


YOURS, REFERENCE = "transformer.fig.attention_yours", "transformer.fig.attention_reference"


def _view(fig, lang="en"):
    """The HTML view of one heat-map figure, as the report draws it."""
    result = GradeResult(
        submission="sub",
        score=0,
        max_score=0,
        seed=None,
        profile="quick",
        duration_s=1.0,
        tasks=[],
        figures={"heatmaps": [fig]},
    )
    (view,) = html.context(result, lang=lang)["figures"]["heatmaps"]
    return view


def _blocked(fig, title):
    """The cells a panel hatches, as a keep-mask (``True`` = may attend)."""
    return [[not b for b in row] for row in panel(fig, title)["blocked"]]


def _upper(L):
    return torch.ones(L, L, dtype=torch.bool).triu().reshape(1, 1, L, L)


def test_the_attention_picture_uses_the_submissions_causal_mask():
    sub, ref = MaskRunner(_upper), MaskRunner(lambda L: torch.ones(L, L, dtype=torch.bool).tril())
    att = figures.attention(sub=sub, ref=ref)
    L = len(att["tokens"])
    assert sub.seen[0].tolist() == torch.ones(L, L, dtype=torch.bool).triu().tolist()  # its own mask, [L, L]
    assert _blocked(att, YOURS) == sub.seen[0].tolist() and _blocked(att, REFERENCE) == figures.causal(L).tolist()
    assert att["mask_differs"] == L * L - L and att["mask_error"] is None
    weights = panel(att, YOURS)["values"]
    assert all(weights[i][j] == 0.0 for i in range(L) for j in range(i))  # it attends to the future
    json.dumps(att, allow_nan=False)
    # The report hatches each side's blocked cells and says the masks differ.
    view = _view(att)
    yours, reference = (
        re.search(r'<path d="([^"]+)" stroke="#[0-9a-f]{3}" stroke-opacity', p["svg"]).group(1) for p in view["panels"]
    )
    assert yours != reference
    assert text("transformer.fig.attention_mask_differs", size=L, count=L * L - L, total=L * L) in view["comparison"]
    assert text("transformer.fig.attention_blocked") in view["panels"][0]["svg"]


def test_a_right_mask_draws_the_same_hatching_as_the_reference():
    tril = MaskRunner(lambda L: torch.ones(L, L, dtype=torch.bool).tril().reshape(1, 1, L, L))
    att = figures.attention(sub=tril, ref=MaskRunner(lambda L: figures.causal(L)))
    assert att["mask_differs"] == 0 and att["mask_error"] is None and att["max_abs_diff"] == 0.0
    view = _view(att)
    yours, reference = (re.search(r'<path d="([^"]+)"', p["svg"]).group(1) for p in view["panels"])
    assert yours == reference and view["comparison"] == text("transformer.fig.attention_same")


@pytest.mark.parametrize(
    "mask, key",
    [
        (
            SubmissionError(kind="not_implemented", detail="NotImplementedError: Task masks"),
            "transformer.fig.mask_not_implemented",
        ),
        (
            SubmissionError(kind="exception", detail="ValueError: no", file="masks.py", line=3),
            "transformer.fig.mask_failed",
        ),
        (lambda L: torch.ones(L, L).tril(), "transformer.fig.mask_failed"),  # float, not bool
        (lambda L: torch.ones(2, 1, L, L, dtype=torch.bool), "transformer.fig.mask_failed"),  # a batch of masks
    ],
)
def test_an_unusable_mask_falls_back_to_the_references_and_says_why(mask, key):
    sub = MaskRunner(mask)
    att = figures.attention(sub=sub, ref=MaskRunner(lambda L: figures.causal(L)))
    L = len(att["tokens"])
    assert att["mask_error"]["key"] == key and panel(att, YOURS) is not None
    assert sub.seen[0].tolist() == figures.causal(L).tolist() and att["mask_differs"] == 0
    assert _blocked(att, YOURS) == figures.causal(L).tolist()  # drawn under the reference's mask
    comparison = _view(att, lang="zh")["comparison"]
    assert comparison.startswith(text(key, "zh", **att["mask_error"]["params"]))


def test_without_the_submissions_attention_its_mask_goes_unmentioned():
    todo = SubmissionError(kind="not_implemented", detail="NotImplementedError: not yet")
    att = figures.attention(sub=MaskRunner(todo, sdpa_error=todo), ref=MaskRunner(lambda L: figures.causal(L)))
    assert panel(att, YOURS) is None and att["mask_error"]["key"] == "transformer.fig.mask_not_implemented"
    view = _view(att)
    assert view["comparison"] == "" and len(view["panels"]) == 1  # the reference's, and no word on a mask
    assert view["error"] == text("report.figure_not_implemented", detail="NotImplementedError: not yet")
    assert view["error_class"] == "todo"


def test_a_wrong_causal_mask_shows_in_the_graded_report(wrong, solution):
    att = figure(wrong.figures, "attention")
    L = len(att["tokens"])
    assert att["mask_differs"] > 0 and _blocked(att, YOURS) == torch.ones(L, L).triu().bool().tolist()
    assert figure(solution.figures, "attention")["mask_differs"] == 0


# -- in a real browser, at 390 px ------------------------------------------------------------------------------
PICTURES = """(() => Array.from(document.querySelectorAll('svg[viewBox]:not(.bar)')).map(svg => {
  const r = svg.getBoundingClientRect(), box = svg.parentElement;
  const scale = r.width / svg.viewBox.baseVal.width;
  const sizes = Array.from(svg.querySelectorAll('text'))
    .map(t => parseFloat(t.getAttribute('font-size') || svg.getAttribute('font-size')));
  const legend = svg.querySelector('g.legend'), l = legend && legend.getBoundingClientRect();
  return {label: svg.getAttribute('aria-label'), left: r.left, right: r.right, boxWidth: box.clientWidth,
          boxScrollWidth: box.scrollWidth, smallestPx: Math.min(...sizes) * scale,
          heatmap: svg.querySelector('rect > title') !== null, legend: l && [l.left, l.right, l.width]};
}))()"""
COMMANDS = """(() => Array.from(document.querySelectorAll('.repro code')).map(code => {
  const range = document.createRange();
  range.selectNodeContents(code);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  const r = code.getBoundingClientRect();
  return {copied: selection.toString(), shown: code.innerText, scrollWidth: code.scrollWidth,
          clientWidth: code.clientWidth, left: r.left, right: r.right};
}))()"""


@pytest.fixture(scope="module")
def phone_pages(browser, solution, wrong, nan_loss, tmp_path_factory):
    """name -> (result, page at 390 px, English)."""
    out = tmp_path_factory.mktemp("phone")
    pages = {}
    for name, result in (("solution", solution), ("wrong", wrong), ("nan", nan_loss)):
        path = out / f"{name}.html"
        html.write(result, path, lang="zh" if name == "nan" else "en")
        page = browser.open(path.as_uri(), width=PHONE[0], height=PHONE[1], mobile=True)
        SCREENS.mkdir(parents=True, exist_ok=True)
        page.screenshot(SCREENS / f"phone-{name}.png")
        pages[name] = (result, page)
    return pages


@pytest.mark.parametrize("name", ["solution", "wrong", "nan"])
def test_every_picture_and_its_legend_fit_the_phone(phone_pages, name):
    result, page = phone_pages[name]
    width = page.evaluate("window.innerWidth")
    assert width == PHONE[0] and page.evaluate("document.documentElement.scrollWidth") <= width
    pictures = page.evaluate(PICTURES)
    assert len(pictures) >= (4 if name == "solution" else 3)
    # On the screen, whole (not cut or scrolled inside its box), and legible.
    assert [p for p in pictures if p["left"] < 0 or p["right"] > width + 0.5] == []
    assert [p for p in pictures if p["boxScrollWidth"] > p["boxWidth"] + 0.5] == []
    assert [p for p in pictures if p["smallestPx"] < LEGIBLE_PX] == []
    # A heat map's legend is on the screen too (the loss curve labels its one line in place).
    legends = [p["legend"] for p in pictures if p["heatmap"]]
    assert legends and all(x and x[2] > 0 and x[0] >= 0 and x[1] <= width + 0.5 for x in legends), pictures
    for box in page.evaluate(
        "Array.from(document.querySelectorAll('figure')).map(f => { "
        "const r = f.getBoundingClientRect(); return [r.left, r.right]; })"
    ):
        assert box[0] >= 0 and box[1] <= width + 0.5
    # Every cell of the positional table (50 positions x 32 dimensions) is on the screen.
    cells = page.evaluate(
        "Array.from(document.querySelectorAll('#fig-positional svg rect'))"
        ".filter(r => r.querySelector('title')).map(r => r.getBoundingClientRect().right)"
    )
    assert len(cells) == 50 * 32 and max(cells) <= width + 0.5


def test_twelve_column_maps_are_readable_on_the_phone(phone_pages):
    result, page = phone_pages["wrong"]
    wide = [c for t in result.tasks for c in t.checks if len((c.artifacts.get("mismatch") or [[]])[0]) == 12]
    assert wide
    pictures = {p["label"]: p for p in page.evaluate(PICTURES)}
    for c in wide:
        label = text("report.mismatch_title", what=c.message.params["what"])
        assert pictures[label]["smallestPx"] >= LEGIBLE_PX  # every label and value legible ...
        written = page.evaluate(
            f"Array.from(document.getElementById({json.dumps('check-' + c.id)})"
            f".querySelectorAll('svg text[font-size]')).map(t => t.textContent)"
        )
        grid = c.artifacts["mismatch"]
        assert sorted(written) == sorted(svg.label_number(v) for row in grid for v in row)  # ... every value


@pytest.mark.parametrize("name", ["wrong", "nan"])
def test_reproduce_commands_can_be_read_and_copied_whole(phone_pages, name):
    result, page = phone_pages[name]
    expected = [c.reproduce for t in result.tasks for c in t.checks if c.status != "passed" and c.reproduce]
    commands = page.evaluate(COMMANDS)
    assert expected and [c["copied"] for c in commands] == expected
    width = page.evaluate("window.innerWidth")
    for c in commands:
        assert c["scrollWidth"] <= c["clientWidth"] and c["right"] <= width + 0.5, c  # nothing hidden
        assert c["shown"] == c["copied"]
    # Wrapped between words: a word that fits a line ("--only", "--profile") is never split over two.
    words = page.evaluate(
        "Array.from(document.querySelectorAll('.repro code > span')).map(w => "
        "[w.textContent, w.getBoundingClientRect().width, w.getBoundingClientRect().height, "
        "w.parentElement.clientWidth])"
    )
    assert words
    one_line = min(h for _, _, h, _ in words)
    assert any(w == "--only" for w, _, _, _ in words)
    for word, w, h, room in words:
        if w < room - 20:
            assert h < 1.5 * one_line, word
