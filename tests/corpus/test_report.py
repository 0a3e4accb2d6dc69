"""The reports of real gradings: HTML (opened in a headless Chromium), JUnit XML, Gradescope JSON.

Four submissions are graded once each (module-scoped): the reference, the skeleton, one with
three catalogued bugs in three files, and one whose error messages and source lines carry
HTML and script tags. The browser tests need Debian's ``chromium`` (``apt-get install -y
chromium``); without it they are skipped. Screenshots go to the screens folder (``tests/chromium.SCREENS``).
"""

import argparse
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markupsafe import escape

from grader import api, cli
from grader.bugs import catalogue
from grader.messages import text
from grader.views import gradescope, html, junit
from tests.chromium import SCREENS
from tests.conftest import CONTRACT_FILES, SOLUTION_ROOT, TRANSFORMER, figure, panel

ROOT = Path(__file__).resolve().parents[2]
BUGS = ("sdpa.weights_transposed", "positional.sin_cos_swapped", "param_count.no_biases")
"""One bug per file (attention.py, embedding.py, training.py): the pictures show the first two."""
SCRIPT = "<script>alert(1)</script><b>x</b>"
HOSTILE_MASKS = f'''"""Masks whose errors and source lines carry markup."""
import torch
from torch.nn.functional import scaled_dot_product_attention as _sdpa  # <script>alert(4)</script>


def padding_mask(tokens, pad_idx):
    raise ValueError("{SCRIPT}")


def causal_mask(size, device=None):
    raise ValueError("{SCRIPT}")


def target_mask(tgt, pad_idx):
    raise ValueError("{SCRIPT}")
'''
HOSTILE_PE = '        super().__init__()\n        raise RuntimeError("<img src=x onerror=alert(3)>")\n'


def esc(s):
    """``s`` as it appears in the autoescaped HTML."""
    return str(escape(s))


def _bug(bug_id):
    return catalogue.Catalogue(TRANSFORMER).by_id[bug_id]


# -- the graded submissions (each graded once) --------------------------------------------------------
@pytest.fixture(scope="module")
def solution():
    return api.check(path=ROOT / "solution", profile="quick", figures=True)


@pytest.fixture(scope="module")
def skeleton():
    # Every failure is NotImplementedError, which no known-bug mutant reproduces: nothing to diagnose.
    return api.check(path=ROOT / "skeleton", profile="quick", figures=True, diagnose=False)


@pytest.fixture(scope="module")
def buggy_path(tmp_path_factory):
    dest = catalogue.write_mutant(_bug(BUGS[0]), tmp_path_factory.mktemp("buggy") / "sub", TRANSFORMER)
    for bug_id in BUGS[1:]:
        bug = _bug(bug_id)
        path = dest / bug.file
        path.write_text(catalogue.apply(bug, path.read_text(encoding="utf-8")), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def buggy(buggy_path):
    # All tasks but overfit: these bugs do not stop it learning, and its 150 training steps would
    # only add ~10 s; the solution's report covers the loss curve.
    tasks = tuple(t for t in TRANSFORMER.task_ids if t != "overfit")
    return api.check(path=buggy_path, profile="quick", tasks=tasks, figures=True)


@pytest.fixture(scope="module")
def hostile_path(tmp_path_factory):
    # The folder name itself is markup too: it appears in the report's header and reproduce commands.
    dest = tmp_path_factory.mktemp("hostile") / 'sub<i>x&"q'
    dest.mkdir()
    for file in CONTRACT_FILES:
        shutil.copy(SOLUTION_ROOT / file, dest / file)
    (dest / "masks.py").write_text(HOSTILE_MASKS, encoding="utf-8")
    embedding = (dest / "embedding.py").read_text(encoding="utf-8")
    marker = "        super().__init__()\n        self.dropout = nn.Dropout(dropout)\n"
    assert embedding.count(marker) == 1
    (dest / "embedding.py").write_text(embedding.replace(marker, HOSTILE_PE + marker), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def hostile(hostile_path):
    return api.check(path=hostile_path, profile="quick", tasks=("sdpa", "masks"), figures=True)


@pytest.fixture(scope="module")
def reports(tmp_path_factory, solution, skeleton, buggy, hostile):
    """name -> (result, path of its English HTML report)."""
    out = tmp_path_factory.mktemp("reports")
    written = {}
    for name, result in (("solution", solution), ("skeleton", skeleton), ("buggy", buggy), ("hostile", hostile)):
        path = out / f"{name}.html"
        html.write(result, path, lang="en")
        written[name] = (result, path)
    return written


def _checks(result):
    return [c for t in result.tasks for c in t.checks]


# -- the HTML, as text -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["solution", "skeleton", "buggy", "hostile"])
def test_html_is_one_self_contained_file(reports, name):
    page = reports[name][1].read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # Nothing that could load anything: no external URLs, links, images, fonts or imports.
    assert re.findall(r"https?://", page.replace('xmlns="http://www.w3.org/2000/svg"', "")) == []
    assert not re.search(r"<(link|img|iframe|object|embed|audio|video|source)\b", page, re.I)
    assert not re.search(r"\b(src|href|srcset|action|poster)\s*=\s*\"(?!#)", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page  # the CSP forbids requests even if a template changes
    assert page.count("<script") == 1  # the print helper, allowed by hash


def test_html_shows_the_run_and_the_score(reports):
    result, path = reports["buggy"]
    page = path.read_text(encoding="utf-8")
    env = result.environment
    for value in (
        env["when"],
        env["torch"],
        env["python"],
        result.profile,
        text("ui.derandomized"),
        f"{result.score:g} / {result.max_score:g}",
    ):
        assert str(value) in page
    for task in result.tasks:
        assert f'data-task="{task.id}"' in page
        assert f"{task.score:g} / {task.max_score:g}" in page


def test_html_explains_each_failure(reports):
    result, path = reports["buggy"]
    page = path.read_text(encoding="utf-8")
    failing = [c for c in _checks(result) if c.status != "passed"]
    assert failing
    for c in failing:
        assert f'id="check-{c.id}"' in page
        # word by word (each a box of its own, so that a phone wraps between words)
        assert " ".join(f"<span>{esc(word)}</span>" for word in c.reproduce.split(" ")) in page
    # The diagnoses name each planted bug, with its hint.
    for bug_id in BUGS:
        assert esc(text("bug." + bug_id)) in page
        assert esc(text("bughint." + bug_id)) in page
    # Minimal failing example, mismatch picture, and the note on tasks failing only through others.
    assert text("report.example.first_index") in page and text("report.example.max_abs_error") in page
    assert 'class="mismatch"' in page
    # ... and on checks that keep their points because the defect is beneath, charged there (a defect is
    # charged once)
    noted = [n for c in _checks(result) for n in c.notes if n.key == "note.charged_beneath"]
    assert noted
    for n in noted:
        assert esc(text(n.key, **n.params)) in page


def test_html_lists_not_implemented_tasks_compactly(reports):
    result, path = reports["skeleton"]
    page = path.read_text(encoding="utf-8")
    assert all(t.not_implemented for t in result.tasks)
    assert 'id="task-' not in page and 'id="check-' not in page  # no detail sections
    assert text("report.not_implemented_tasks", tasks=", ".join(t.id for t in result.tasks)) in page
    # code not written yet is counted apart, not as errors
    waiting = sum(len(t.checks) for t in result.tasks)
    assert text("report.count.todo", count=waiting) in page and text("ui.todo", count=waiting) in page
    assert "raised an error" not in page and "did not pass" not in page


def test_html_shows_errors_and_banned_apis(reports):
    result, path = reports["hostile"]
    page = path.read_text(encoding="utf-8")
    errored = [c for c in _checks(result) if c.status == "error"]
    assert errored and all(c.error["file"] == "masks.py" for c in errored)
    assert "masks.py:" in page and text("report.trace") in page
    assert result.banned_api and text("report.banned_heading") in page
    assert "scaled_dot_product_attention" in page


def test_markup_from_the_submission_stays_text(reports):
    result, path = reports["hostile"]
    page = path.read_text(encoding="utf-8")
    assert any(SCRIPT in (c.error or {}).get("detail", "") for c in _checks(result))
    for raw in (SCRIPT, "<script>alert", "<b>x</b>", "<img src=x", "<i>x"):
        assert raw not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in page
    assert "&lt;img src=x onerror=alert(3)&gt;" in page  # the positional picture's error
    assert "sub&lt;i&gt;x&amp;&#34;q" in page  # the folder name


def test_only_generated_svg_is_marked_safe():
    # The templates may mark only the SVG strings built by grader/views/svg.py as safe.
    for template in Path(html.TEMPLATES).glob("*.j2"):
        for expression in re.findall(r"\{\{([^}]*)\|\s*safe", template.read_text(encoding="utf-8")):
            assert re.fullmatch(r"\s*[\w.]*(svg|bar)\s*", expression), (template.name, expression)


def _figure_html(page, fig_id):
    return re.search(rf'<figure class="fig" id="fig-{fig_id}">.*?</figure>', page, re.S).group(0)


def test_html_draws_the_transformers_pictures(reports):
    """Its attention map and positional table, drawn by the kit's generic heat-map figure: every sentence the
    Transformer's own, the sentence quoted (syllables and characters), blocked cells hatched, the table's
    colours on a symmetric scale."""
    for name in ("solution", "skeleton", "buggy"):
        result, path = reports[name]
        page = path.read_text(encoding="utf-8")
        assert "transformer.fig." not in page and "report.attention" not in page  # every key has its sentence
        att, pe = _figure_html(page, "attention"), _figure_html(page, "positional")
        data = figure(result.figures, "attention")
        assert esc(text("transformer.fig.attention_title")) in att
        assert esc(text("transformer.fig.attention_note")) in att
        assert f'<span class="quote italic">{" ".join(data["tokens"])}</span>' in att
        assert f'<span class="quote" lang="zh-CN">{"".join(data["characters"])}</span>' in att
        label = f"{data['tokens'][1]} {data['characters'][1]}"  # each syllable with its character
        assert f">{label}</text>" in att and esc(text("transformer.fig.axis_key")) in att
        panels = 2 if panel(data, YOURS) else 1
        assert att.count("<svg") == panels and att.count(esc(text("transformer.fig.attention_blocked"))) == panels
        assert "<path" in att  # the causal mask's hatching
        assert esc(text("transformer.fig.pe_caption", d_model=32, max_len=50)) in pe
        assert pe.count("<title>") == 50 * 32 and esc(text("transformer.fig.pe_legend")) in pe
        reference_table = esc(text("transformer.fig.pe_reference_note")) in pe
        assert reference_table == (name == "skeleton")
    solution = reports["solution"][1].read_text(encoding="utf-8")
    attention = _figure_html(solution, "attention")
    assert esc(text("transformer.fig.attention_same")) in attention
    assert ">1.00</text>" in attention  # query 0 sees key 0 only: its weight, written with two decimals


# -- the pictures' data -------------------------------------------------------------------------------
YOURS, REFERENCE = "transformer.fig.attention_yours", "transformer.fig.attention_reference"


def test_figures_are_plain_data(solution, skeleton, buggy):
    for result in (solution, skeleton, buggy):
        json.dumps(result.figures, allow_nan=False)  # lists of numbers and strings, nothing else
        assert set(result.figures) == {"heatmaps"}  # the kit's generic figures only
        assert [f["id"] for f in result.figures["heatmaps"]] == ["attention", "positional"]
    att = figure(solution.figures, "attention")
    L = len(att["tokens"])
    assert L >= 5 and att["error"] is None and att["max_abs_diff"] < 1e-9
    yours = panel(att, YOURS)["values"]
    assert len(yours) == L and all(len(row) == L for row in yours)
    assert all(isinstance(v, float) for row in yours for v in row)
    assert att["comparison"] == [{"key": "transformer.fig.attention_same"}]
    pe = figure(solution.figures, "positional")
    (table,) = (p["values"] for p in pe["panels"])
    assert pe["source"] == "submission" and len(table) == 50 and len(table[0]) == 32
    assert pe["panels"][0]["scale"] == "diverging" and pe["panels"][0]["note"] is None


def test_figures_record_what_failed(skeleton, buggy):
    att, pe = figure(skeleton.figures, "attention"), figure(skeleton.figures, "positional")
    assert [p["title"] for p in att["panels"]] == [REFERENCE] and att["error"]["kind"] == "not_implemented"
    assert pe["source"] == "reference" and pe["panels"][0]["values"] and pe["error"]["kind"] == "not_implemented"
    assert pe["panels"][0]["note"] == "transformer.fig.pe_reference_note"
    # Transposed weights under a causal mask: the submission's map is the reference's, mirrored.
    att = figure(buggy.figures, "attention")
    sub, ref = panel(att, YOURS)["values"], panel(att, REFERENCE)["values"]
    assert att["max_abs_diff"] > 0.01
    assert all(abs(sub[i][j] - ref[j][i]) < 1e-6 for i in range(len(sub)) for j in range(len(sub)))
    assert att["comparison"][-1]["key"] == "transformer.fig.attention_differs"


# -- JUnit and Gradescope ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["solution", "skeleton", "buggy", "hostile"])
def test_junit_has_one_testcase_per_check(reports, name):
    result = reports[name][0]
    root = ET.fromstring(junit.render(result, lang="en").encode("utf-8"))
    checks = _checks(result)
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [c.id for c in checks]
    assert [c.get("classname") for c in cases] == [c.task for c in checks]
    failures = [c for c in cases if c.find("failure") is not None]
    errors = [c for c in cases if c.find("error") is not None]
    assert len(failures) == sum(c.status == "failed" for c in checks) == int(root.get("failures"))
    assert len(errors) == sum(c.status == "error" for c in checks) == int(root.get("errors"))
    assert int(root.get("tests")) == len(checks)
    for suite in root.findall("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
        assert int(suite.get("errors")) == len(suite.findall("testcase/error"))
    for case in failures + errors:
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        assert problem.get("message") and problem.get("type") and problem.text


@pytest.mark.parametrize("name", ["solution", "skeleton", "buggy", "hostile"])
def test_gradescope_results_json(reports, name):
    result = reports[name][0]
    data = json.loads(gradescope.render(result, lang="en"))
    assert isinstance(data["score"], (int, float)) and isinstance(data["execution_time"], int)
    assert isinstance(data["output"], str) and isinstance(data["tests"], list)
    checks = _checks(result)
    assert len(data["tests"]) == len(checks)
    for test, c in zip(data["tests"], checks):
        assert test["name"] == c.id and test["tags"] == [c.task]
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert test["status"] == ("passed" if c.status == "passed" else "failed")
        assert test["visibility"] == c.visibility and isinstance(test["output"], str)
        assert bool(test["output"]) == (c.status != "passed")
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"]) == pytest.approx(result.score)
    assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(result.max_score)


def test_every_view_speaks_chinese(buggy):
    cjk = re.compile("[\u4e00-\u9fff]")
    page = html.render(buggy, lang="zh")
    assert '<html lang="zh-CN">' in page and text("ui.score", "zh") in page
    assert esc(text("bug.sdpa.weights_transposed", "zh")) in page
    xml = junit.render(buggy, lang="zh")
    assert cjk.search(ET.fromstring(xml.encode("utf-8")).find(".//failure").get("message"))
    data = json.loads(gradescope.render(buggy, lang="zh"))
    assert cjk.search(data["output"]) and all(cjk.search(t["output"]) for t in data["tests"] if t["output"])


def test_cli_writes_every_report(hostile_path, tmp_path, capsys):
    # Only the check command's parser: the other sub-commands belong to features of their own.
    parser = argparse.ArgumentParser(prog="gradekit")
    cli._check_parser(parser.add_subparsers(dest="command", required=True)).set_defaults(func=cli.cmd_check)
    out = {kind: tmp_path / f"report.{kind}" for kind in ("html", "junit", "gradescope", "json")}
    args = parser.parse_args(
        [
            "check",
            str(hostile_path),
            "--tasks",
            "masks",
            "--profile",
            "quick",
            "--lang",
            "zh",
            "--html",
            str(out["html"]),
            "--junit",
            str(out["junit"]),
            "--gradescope",
            str(out["gradescope"]),
            "--json",
            str(out["json"]),
        ]
    )
    assert args.func(args) == 1
    said = capsys.readouterr().out
    assert "masks" in said
    for kind, name in (("HTML", "html"), ("JUnit", "junit"), ("Gradescope", "gradescope"), ("JSON", "json")):
        assert text("ui.report_written", "zh", kind=kind, path=str(out[name].resolve())) in said.splitlines()
    page = out["html"].read_text(encoding="utf-8")
    assert text("report.figures", "zh") in page and 'id="fig-attention"' in page
    ET.fromstring(out["junit"].read_bytes())
    assert json.loads(out["gradescope"].read_text(encoding="utf-8"))["score"] == 0


def test_a_report_that_cannot_be_written_says_where_and_why_and_the_others_are_still_written(
    hostile_path, tmp_path, capsys
):
    parser = argparse.ArgumentParser(prog="gradekit")
    cli._check_parser(parser.add_subparsers(dest="command", required=True)).set_defaults(func=cli.cmd_check)
    missing = tmp_path / "no such folder" / "report.html"
    args = parser.parse_args(
        [
            "check",
            str(hostile_path),
            "--tasks",
            "masks",
            "--profile",
            "quick",
            "--html",
            str(missing),
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    assert args.func(args) == 2
    said = capsys.readouterr()
    assert f"the HTML report could not be written to {missing}: No such file or directory" in said.err
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["tasks"]


# -- in a real browser (the ``browser`` fixture is in conftest.py) --------------------------------------------


VISIBLE = """(sel) => Array.from(document.querySelectorAll(sel)).map(el => {
  const r = el.getBoundingClientRect();
  return {text: el.innerText || el.textContent, w: r.width, h: r.height,
          shown: el.checkVisibility({visibilityProperty: true, opacityProperty: true})};
})"""


def _visible(page, selector):
    return page.evaluate(f"({VISIBLE})({json.dumps(selector)})")


WIDTHS = {"desktop": (1280, 900, False), "phone": (390, 844, True)}


@pytest.mark.parametrize("name", ["solution", "skeleton", "buggy"])
@pytest.mark.parametrize("device", list(WIDTHS))
def test_report_in_chromium(browser, reports, name, device):
    result, path = reports[name]
    width, height, mobile = WIDTHS[device]
    page = browser.open(path.as_uri(), width=width, height=height, mobile=mobile)
    assert page.console_errors == []
    assert page.requests == [path.as_uri()]  # the file itself and nothing else
    assert page.dialogs == []
    # The score and every task are on screen.
    (score,) = _visible(page, "#total-score")
    assert score["text"] == f"{result.score:g} / {result.max_score:g}" and score["shown"] and score["w"] > 0
    rows = {r["text"]: r for r in _visible(page, ".task-row .task-id")}
    assert sorted(rows) == sorted(t.id for t in result.tasks)
    assert all(r["shown"] and r["w"] > 0 and r["h"] > 0 for r in rows.values())
    # The pictures are drawn: cells with a size, a line with a length.
    assert page.evaluate("document.querySelectorAll('svg rect').length") > 0
    svgs = _visible(page, "svg")
    assert svgs and all(s["w"] > 0 and s["h"] > 0 for s in svgs)
    att = figure(result.figures, "attention")
    tokens = len(att["tokens"])
    cells = page.evaluate(
        "Array.from(document.querySelectorAll('#fig-attention svg rect'))"
        ".filter(r => r.getBBox().width > 0 && r.getBBox().height > 0).length"
    )
    panels = 2 if panel(att, YOURS) else 1
    assert cells >= panels * tokens * tokens
    assert page.evaluate("document.querySelectorAll('#fig-positional svg rect').length") >= 50 * 32
    if name == "solution":
        assert page.evaluate("document.querySelectorAll('#fig-loss svg path').length") == 1
    if any(c.artifacts.get("loss_curve") for c in _checks(result)):
        assert page.evaluate("document.querySelector('#fig-loss svg path').getBBox().width") > 100
    if name == "buggy":
        assert page.evaluate("document.querySelectorAll('figure.mismatch svg rect').length") > 0
    # Nothing sticks out sideways (wide pictures scroll inside their own box).
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(SCREENS / f"{name}-{device}.png")


def test_hostile_markup_is_inert_in_chromium(browser, reports):
    result, path = reports["hostile"]
    page = browser.open(path.as_uri())
    assert page.dialogs == [] and page.console_errors == []
    assert page.requests == [path.as_uri()]
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.querySelectorAll('main b, main img, main i, header i').length") == 0
    shown = page.evaluate("document.body.innerText")
    assert SCRIPT in shown and "<img src=x onerror=alert(3)>" in shown
    page.screenshot(SCREENS / "hostile-desktop.png")
