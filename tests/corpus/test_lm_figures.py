"""The decoder-only LM's report pictures (``assignments/decoder_lm/figures.py``): the attention pattern and RoPE.

The data is gathered from real runners (the reference, mutants of it from the bug catalogue, a copy whose RoPE and
attention raise), then drawn by the HTML view; once in a sealed worker, once in Chromium at desktop and phone width.
The Transformer's pictures are the report tests' (tests/corpus/test_report.py, test_report_phone.py, test_views.py).
"""

import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch
from markupsafe import escape

from assignments.decoder_lm import figures
from grader import api
from grader.assignment import load
from grader.bugs.catalogue import Catalogue
from grader.messages import text
from grader.results import GradeResult
from grader.submission.inprocess import InProcessRunner, reference_namespace
from grader.views import html

LM = load("decoder_lm")
CATALOGUE = Catalogue(LM)
FIGURES = ("fig-attention", "fig-rope_scores", "fig-rope_angles")
ROPE_RAISES = (
    "        L, Dh = x.shape[-2], x.shape[-1]\n",
    "        L, Dh = x.shape[-2], x.shape[-1]\n        raise RuntimeError('rope <b>broke</b>')\n",
)
ATTENTION_RAISES = (
    "    B, H, Lq, Dh = q.shape\n",
    "    B, H, Lq, Dh = q.shape\n    raise ValueError('no attention')\n",
)


def _copy(folder, **edits):
    """A copy of the reference in ``folder`` with ``{file: (old, new)}`` edits."""
    shutil.copytree(LM.reference, folder)
    for file, (old, new) in edits.items():
        path = folder / file
        source = path.read_text(encoding="utf-8")
        assert source.count(old) == 1
        path.write_text(source.replace(old, new), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def ref():
    ns = reference_namespace(LM)
    runner = InProcessRunner(ns.root, assignment=LM, banned=(), namespace=ns)
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def folders():
    root = Path(tempfile.mkdtemp(prefix="gradekit-lm-figures-"))
    out = {
        bug.id: CATALOGUE.write_mutant(bug, root / bug.id)
        for bug in CATALOGUE.bugs
        if bug.id in ("rope.interleaved", "rope.offset_ignored", "rope.rotates_backwards", "gqa.fill_zero")
    }
    out["rope_raises"] = _copy(root / "rope_raises", **{"rope.py": ROPE_RAISES})
    out["both_raise"] = _copy(root / "both_raise", **{"rope.py": ROPE_RAISES, "attention.py": ATTENTION_RAISES})
    yield out
    shutil.rmtree(root, ignore_errors=True)


def collect(folder, ref):
    sub = InProcessRunner(folder, assignment=LM, banned=())
    try:
        return figures.collect(sub=sub, ref=ref)
    finally:
        sub.close()


def shown(key, lang="en", **params):
    """The sentence as the (autoescaped) page holds it."""
    return str(escape(text(key, lang, **params)))


def page_of(data, lang="en"):
    result = GradeResult(
        submission="sub", score=0, max_score=0, seed=None, profile="quick", duration_s=1.0, tasks=[], figures=data
    )
    return html.render(result, lang=lang)


def by_id(data):
    return {f["id"]: f for f in data["heatmaps"]}


def rope_figures(data):
    """The RoPE figures (all but the attention map)."""
    return [f for f in data["heatmaps"] if f["id"] != "attention"]


def panel_values(fig, title):
    """The values of ``fig``'s panel titled ``title`` (a message key), or ``None`` when it has none."""
    return next((p["values"] for p in fig["panels"] if p["title"] == title), None)


def toeplitz_spread(rows):
    """The largest change along one diagonal of a matrix given as rows."""
    s = torch.tensor(rows, dtype=torch.float64)
    L = s.shape[0]
    return max(float(d.max() - d.min()) for d in (torch.diagonal(s, k) for k in range(-(L - 1), L)))


def figure_html(page, fig_id):
    start = page.index(f'id="{fig_id}"')
    return page[start : page.index("</figure>", start)]


# -- the reference ---------------------------------------------------------------------------------------------------
def test_the_references_pictures_are_plain_data(ref):
    data = figures.collect(sub=ref, ref=ref)
    json.dumps(data, allow_nan=False)  # lists of numbers, strings and booleans: what crosses from a worker
    assert [f["id"] for f in data["heatmaps"]] == ["attention", "rope_scores", "rope_angles"] and set(data) == {
        "heatmaps"
    }  # the kit's generic figures only
    att = by_id(data)["attention"]
    chars = att["characters"]
    assert chars == figures.poem_line() and "".join(chars).endswith("。")
    assert att["quote"] == [{"text": "".join(chars), "lang": "zh-CN"}]
    L = len(chars)
    weights = panel_values(att, "lm.fig.attention_yours")
    assert weights == panel_values(att, "lm.fig.attention_reference")
    assert att["max_abs_diff"] == 0 and att["leaks"] == 0
    assert att["comparison"] == [{"key": "lm.fig.attention_same"}]
    assert all(abs(sum(row) - 1) < 1e-4 for row in weights)  # v = I: each output row is a row of weights
    assert all(weights[i][j] == 0 for i in range(L) for j in range(i + 1, L))
    assert all(p["row_labels"] == chars and p["blocked"] == (~figures.causal(L)).tolist() for p in att["panels"])
    peaks = [max(row) for row in weights[1:]]  # row 0 can only attend to itself
    assert 0.3 < sum(peaks) / len(peaks) < 0.9 and min(peaks) > 1.2 / L  # neither one-hot nor uniform
    scores, angles = by_id(data)["rope_scores"], by_id(data)["rope_angles"]
    assert scores["error"] is None and len(scores["panels"]) == 2
    assert scores["diagonal_spread"] < 1e-9 and scores["max_abs_diff"] == 0
    values = scores["panels"][0]["values"]
    assert len(values) == figures.ROPE_LEN and toeplitz_spread(values) < 1e-4  # 5 significant digits kept
    assert max(map(max, values)) - min(map(min, values)) > 0.1  # a pattern, not a flat picture
    assert angles["off_plane"] == 0 and angles["max_angle_diff"] == 0 and angles["panels"][0]["blocked"] is None
    first = angles["panels"][0]["values"]
    assert len(first) == len(figures.ANGLE_POSITIONS) and first[1][0] == pytest.approx(math.degrees(1.0), abs=1e-3)


def test_the_references_pictures_are_drawn_in_both_languages(ref):
    data = figures.collect(sub=ref, ref=ref)
    for lang in ("en", "zh"):
        page = page_of(data, lang)
        for fig_id in FIGURES:
            assert page.count(f'id="{fig_id}"') == 1
        assert "lm.fig." not in page and "report.attention" not in page  # every key has its sentence
        assert shown("lm.fig.axis_key", lang) in page and shown("lm.fig.axis_position", lang) in page
        assert shown("lm.fig.rope_scores_title", lang) in page and shown("lm.fig.attention_title", lang) in page
        assert shown("lm.fig.rope_diagonals_constant", lang) in page and shown("lm.fig.rope_same", lang) in page
        assert shown("lm.fig.attention_same", lang) in page
        attention = figure_html(page, "fig-attention")
        assert f'<span class="quote" lang="zh-CN">{"".join(figures.poem_line())}</span>' in attention
        assert "白 白" not in attention  # a character labels once
        assert attention.count("<title>") == 2 * len(figures.poem_line()) ** 2
        assert figure_html(page, "fig-rope_scores").count("<title>") == 2 * figures.ROPE_LEN**2
        assert figure_html(page, "fig-rope_angles").count("<title>") == 2 * len(figures.ANGLE_POSITIONS) * 8


# -- wrong RoPE ------------------------------------------------------------------------------------------------------
def test_an_ignored_offset_breaks_the_diagonals(ref, folders):
    scores = by_id(collect(folders["rope.offset_ignored"], ref))["rope_scores"]
    yours, reference = (p["values"] for p in scores["panels"])
    assert toeplitz_spread(yours) > 0.05 and toeplitz_spread(reference) < 1e-4
    assert scores["diagonal_spread"] > 0.05 and scores["max_abs_diff"] > 0.05
    # The keys rotated with offset 8 and 16 came out as those at offset 0: the columns repeat every 8.
    chunk = figures.ROPE_CHUNK
    assert all(row[n] == row[n + chunk] for row in yours for n in range(figures.ROPE_LEN - chunk))
    assert [c["key"] for c in scores["comparison"]] == ["lm.fig.rope_diagonals_broken", "lm.fig.rope_differs"]
    drawn = figure_html(page_of({"heatmaps": [scores]}), "fig-rope_scores")
    assert shown("lm.fig.rope_diagonals_broken", spread=scores["comparison"][0]["params"]["spread"]) in drawn


def test_an_interleaved_pairing_shows_in_the_angles(ref, folders):
    data = by_id(collect(folders["rope.interleaved"], ref))
    scores, angles = data["rope_scores"], data["rope_angles"]
    # Interleaved pairs are a rotation too: the scores still depend on m - n alone, but they are not the reference's.
    assert scores["diagonal_spread"] < 1e-9 and scores["max_abs_diff"] > 0.05
    assert [c["key"] for c in scores["comparison"]] == ["lm.fig.rope_diagonals_constant", "lm.fig.rope_differs"]
    yours, reference = angles["panels"]
    assert angles["off_plane"] > len(figures.ANGLE_POSITIONS) * 8 // 2
    assert sum(map(sum, yours["blocked"])) == angles["off_plane"] and reference["blocked"] is None
    assert angles["comparison"][0]["key"] == "lm.fig.rope_angles_off_plane"
    drawn = figure_html(page_of({"heatmaps": [angles]}), "fig-rope_angles")
    assert "<path" in drawn and shown("lm.fig.rope_off_plane", half=8) in drawn


def test_a_rotation_the_wrong_way_mirrors_the_scores(ref, folders):
    data = by_id(collect(folders["rope.rotates_backwards"], ref))
    yours, reference = (torch.tensor(p["values"]) for p in data["rope_scores"]["panels"])
    # <R_-m q, R_-n k> = <R_n q, R_m k>: the reference's scores of q and k at swapped positions, not its own.
    assert not torch.allclose(yours, reference, atol=1e-3) and torch.allclose(yours, reference.T, atol=1e-4)
    assert data["rope_angles"]["max_angle_diff"] > 90 and data["rope_angles"]["off_plane"] == 0


def test_weights_on_later_positions_are_counted(ref, folders):
    att = by_id(collect(folders["gqa.fill_zero"], ref))["attention"]
    L = len(att["characters"])
    assert att["leaks"] == L * (L - 1) // 2 and att["comparison"][0]["key"] == "lm.fig.attention_leaks"
    drawn = figure_html(page_of({"heatmaps": [att]}), "fig-attention")
    assert shown("lm.fig.attention_leaks", count=att["leaks"], total=att["leaks"]) in drawn


# -- code that raises ------------------------------------------------------------------------------------------------
def test_a_rope_that_raises_leaves_the_attention_and_the_reference(ref, folders):
    data = collect(folders["rope_raises"], ref)
    json.dumps(data, allow_nan=False)
    assert by_id(data)["attention"]["error"] is None and by_id(data)["attention"]["max_abs_diff"] == 0
    for fig in rope_figures(data):
        assert fig["error"]["key"] == "report.figure_failed" and "rope <b>broke</b>" in fig["error"]["params"]["detail"]
        assert [p["title"] for p in fig["panels"]] == ["lm.fig.rope_reference"] and fig["comparison"] == []
    page = page_of(data)
    assert "rope &lt;b&gt;broke&lt;/b&gt;" in page and "<b>broke" not in page
    assert figure_html(page, "fig-attention").count("<svg") == 2
    assert all(figure_html(page, f).count("<svg") == 1 for f in FIGURES[1:])


def test_everything_raising_still_makes_a_report(ref, folders):
    data = collect(folders["both_raise"], ref)
    att = by_id(data)["attention"]
    assert "ValueError: no attention" in att["error"]["params"]["detail"]
    assert panel_values(att, "lm.fig.attention_yours") is None and panel_values(att, "lm.fig.attention_reference")
    page = page_of(data, "zh")
    assert "ValueError: no attention" in page and shown("lm.fig.attention_reference", "zh") in page
    assert all(f'id="{f}"' in page for f in FIGURES)


def test_a_broken_runner_is_an_error_not_a_crash(ref):
    class Broken:
        def run(self, probe, variant="integrated", **args):
            raise RuntimeError("the worker is gone")

    data = figures.collect(sub=Broken(), ref=ref)
    assert len(data["heatmaps"]) == 3 and all(
        "the worker is gone" in f["error"]["params"]["detail"] for f in data["heatmaps"]
    )
    data = figures.collect(sub=ref, ref=Broken())  # no reference: the submission's pictures alone
    att = by_id(data)["attention"]
    assert panel_values(att, "lm.fig.attention_yours") and att["max_abs_diff"] is None
    assert all(len(f["panels"]) == 1 and f["error"] is None for f in data["heatmaps"])
    page_of(data)


def test_in_a_sealed_worker(folders):
    """``--sealed``: the probes run in the worker, only data comes back, and the errors are the same."""
    result = api.check(
        path=folders["both_raise"],
        assignment="decoder_lm",
        profile="quick",
        tasks=("rope",),
        figures=True,
        sealed=True,
        diagnose=False,
    )
    json.dumps(result.figures, allow_nan=False)
    assert "no attention" in by_id(result.figures)["attention"]["error"]["params"]["detail"]
    assert all("rope <b>broke</b>" in f["error"]["params"]["detail"] for f in rope_figures(result.figures))
    assert all(f["panels"] for f in result.figures["heatmaps"])  # the reference's, for comparison
    page = html.render(result)
    assert all(f'id="{f}"' in page for f in FIGURES) and "rope &lt;b&gt;broke&lt;/b&gt;" in page


# -- the report in a browser -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("width", [1200, 390])
def test_the_pictures_fit_the_screen(browser, ref, folders, tmp_path, width):
    path = tmp_path / "report.html"
    path.write_text(page_of(collect(folders["rope.offset_ignored"], ref)), encoding="utf-8")
    page = browser.open(path.as_uri(), width=width, height=900, mobile=width < 800)
    assert page.console_errors == [] and page.requests == [path.as_uri()]
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    for fig_id in FIGURES:
        boxes = page.evaluate(
            f"Array.from(document.querySelectorAll('#{fig_id} svg')).map(s => {{ "
            f"const r = s.getBoundingClientRect(); return [r.left, r.right, r.width, r.height]; }})"
        )
        assert len(boxes) == 2 and all(b[0] >= 0 and b[1] <= width + 0.5 and b[2] > 100 and b[3] > 100 for b in boxes)


def test_the_loss_curve_has_its_sentences_without_the_transformer():
    """The kit draws the loss curve of any check that leaves one (the LM's overfit check does): its sentences are
    the kit's, not the Transformer's, so a report of the LM alone reads them (a fresh process: no other assignment
    loaded)."""
    code = (
        "from grader.assignment import load\nload('decoder_lm')\n"
        "from grader.results import CheckResult, GradeResult, TaskResult\nfrom grader.views import html\n"
        "c = CheckResult(id='overfit.learns', task='overfit', status='passed', score=1, "
        "max_score=1, artifacts={'loss_curve': [5.0, 1.0, 0.1], 'loss_target': 0.2, 'loss_steps': 3})\n"
        "r = GradeResult(submission='s', score=1, max_score=1, seed=None, profile='quick', duration_s=1.0, "
        "tasks=[TaskResult(id='overfit', score=1, max_score=1, checks=[c])])\n"
        "print(html.render(r, lang='zh'))\n"
    )
    page = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    assert 'id="fig-loss"' in page and "report.loss" not in page
