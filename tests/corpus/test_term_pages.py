"""The instructor's term pages: the Gradescope output students read, and the class summary page.

Gradescope: a failing check shows a rerun line the student can type on their own computer (no path of the
grading machine, no ``--sealed``); the copy-of-the-reference verdict is in a hidden test only (instructors
see hidden tests, students do not), never in ``extra_data`` nor in anything visible; the course's ``lang``
and ``[gradescope] output_format`` choose the language and the format (md fences untrusted text, html
escapes it). The summary page: pass rates worst first, with their task; a histogram and tables that fit a
390 px phone (in Chromium; skipped without it; screenshots ``summary-*.png`` in ``tests/chromium.SCREENS``).
"""

import json
import re
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grader.batch import summary
from grader.batch.gradescope_build import build
from grader.messages import text
from grader.results import CheckResult, GradeResult, Message, TaskResult
from grader.views import gradescope
from tests.chromium import SCREENS
from tests.conftest import SOLUTION_ROOT
from tests.integration.test_config import _run_autograder

ROOT = Path(__file__).resolve().parents[2]
PHONE = (390, 844)
LEGIBLE_PX = 8.5
"""The smallest text the histogram may show on the phone, in CSS pixels (as the report's pictures)."""
CJK = re.compile("[\u4e00-\u9fff]")
HOSTILE = "bad ````` fence ``` <script>alert(1)</script> **bold** [x](http://e.test)"
"""What the failing submission raises: a run of five backticks, markup and Markdown."""
ALT = Path(__file__).resolve().parents[1] / "submissions" / "alt_loops"
"""A submission of its own (not a copy of the reference)."""


# -- Gradescope, run as in the container (the autograder zip, built from a course configuration) --------------
def _autograde(tmp_path_factory, name, submission, toml):
    folder = tmp_path_factory.mktemp(name)
    config = folder / "gradekit.toml"
    config.write_text('tasks = ["masks"]\n' + toml, encoding="utf-8")
    archive = build(out=folder / "autograder.zip", config=config, profile="quick")
    return _run_autograder(archive, submission, folder)[2]


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    """``alt_loops`` whose ``padding_mask`` raises ``HOSTILE``."""
    dest = tmp_path_factory.mktemp("failing") / "sub"
    shutil.copytree(ALT, dest)
    masks = dest / "masks.py"
    line = "    return tokens.ne(pad_idx).reshape(b, 1, 1, length)\n"
    assert masks.read_text(encoding="utf-8").count(line) == 1
    masks.write_text(
        masks.read_text(encoding="utf-8").replace(line, f"    raise ValueError({HOSTILE!r})\n"), encoding="utf-8"
    )
    return dest


@pytest.fixture(scope="module")
def md_en(tmp_path_factory, failing):
    """The failing submission, the course's defaults (English, md)."""
    return _autograde(tmp_path_factory, "md_en", failing, "")


@pytest.fixture(scope="module")
def html_zh(tmp_path_factory, failing):
    return _autograde(tmp_path_factory, "html_zh", failing, 'lang = "zh"\n[gradescope]\noutput_format = "html"\n')


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    """The reference itself, handed in: a copy (scored 0 by the default policy), in plain text."""
    return _autograde(tmp_path_factory, "copied", SOLUTION_ROOT, '[gradescope]\noutput_format = "text"\n')


def _tests(data):
    return {t["name"]: t for t in data["tests"]}


def _visible(data):
    """Everything of ``data`` a student can see: the whole document less the hidden tests."""
    return json.dumps({**data, "tests": [t for t in data["tests"] if t["visibility"] != "hidden"]}, ensure_ascii=False)


def _rerun(check_id, lang="en"):
    command = f"gradekit check {text('gradescope.your_folder', lang)} --only {check_id} --profile quick"
    return command + (f" --lang {lang}" if lang != "en" else "")


def test_a_failing_check_shows_no_path_of_the_grading_machine_and_a_rerun_line_for_the_student(md_en):
    raw = json.dumps(md_en, ensure_ascii=False)
    assert "/autograder" not in raw and "gradekit-gradescope-" not in raw and tempfile.gettempdir() + "/" not in raw
    assert "--sealed" not in raw
    tests = _tests(md_en)
    failed = [t for t in tests.values() if t["status"] == "failed" and t["visibility"] != "hidden"]
    assert {t["name"] for t in failed} == {"masks.padding", "masks.target", "masks.device"}
    for t in failed:
        assert _rerun(t["name"]) in t["output"] and text("gradescope.rerun") in t["output"]
        assert "bad" in t["output"] and "masks.py" in t["output"]  # the reason is still told
    assert tests["masks.causal"]["output"] == ""


def test_the_copy_verdict_is_in_a_hidden_test_and_nowhere_a_student_looks(copied, md_en):
    name = text("gradescope.copy.name")
    hidden = [t for t in copied["tests"] if t["visibility"] == "hidden"]
    assert [t["name"] for t in hidden] == [name]
    (verdict,) = hidden
    assert verdict["status"] == "failed" and verdict["score"] == verdict["max_score"] == 0
    assert text("batch.reason.copy_zeroed") in verdict["output"]
    assert copied["score"] == 0  # the course's policy: a copy scores 0
    assert sum(t["max_score"] for t in copied["tests"] if t["visibility"] != "hidden") == 10
    # Not flagged: the hidden test says so, passed; and in neither case does a student see any of it.
    (clean,) = [t for t in md_en["tests"] if t["visibility"] == "hidden"]
    assert clean["name"] == name and clean["status"] == "passed"
    assert text("gradescope.copy.not_flagged") in clean["output"]
    for data in (copied, md_en):
        seen = _visible(data).lower()
        assert "copy" not in seen and "similar" not in seen and name.lower() not in seen
        assert set(data.get("extra_data", {})) <= {"gradekit"}


def test_the_course_lang_speaks_chinese_to_the_student(html_zh):
    assert CJK.search(html_zh["output"]) and text("ui.score", "zh") in html_zh["output"]
    tests = _tests(html_zh)
    failed = [t for t in tests.values() if t["status"] == "failed" and t["visibility"] != "hidden"]
    assert failed
    for t in failed:
        assert CJK.search(t["output"]) and text("gradescope.rerun", "zh") in t["output"]
        assert _escaped(_rerun(t["name"], "zh")) in t["output"]
    (hidden,) = [t for t in html_zh["tests"] if t["visibility"] == "hidden"]
    assert hidden["name"] == text("gradescope.copy.name", "zh")


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


def _escaped(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_html_output_escapes_what_the_student_wrote(html_zh):
    assert html_zh["output_format"] == "html"
    assert all(t["output_format"] == "html" for t in html_zh["tests"])
    padding = _tests(html_zh)["masks.padding"]["output"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in padding
    for t in html_zh["tests"] + [{"output": html_zh["output"]}]:
        parser = _Tags()
        parser.feed(t["output"])
        assert {tag for tag, _ in parser.tags} <= {"p", "pre", "code", "strong"}
        assert all(attrs == [] for _, attrs in parser.tags)


def _markdown_blocks(md):
    """``[(kind, text)]``: each fenced code block (CommonMark: an opening run of 3+ backticks, closed by a line
    of at least as many) as ``("code", its content)``, each other line as ``("line", line)``. ``AssertionError``
    for a fence left open."""
    blocks, fence, body = [], None, []
    for line in md.split("\n"):
        if fence is None:
            opening = re.match(r" {0,3}(`{3,})[^`]*$", line)
            if opening:
                fence, body = len(opening.group(1)), []
            elif line.strip():
                blocks.append(("line", line))
        elif re.fullmatch(" {0,3}" + "`" * fence + r"`*\s*", line):
            blocks.append(("code", "\n".join(body)))
            fence = None
        else:
            body.append(line)
    assert fence is None, f"a fence left open in {md!r}"
    return blocks


def test_markdown_output_keeps_the_students_text_inside_code_blocks(md_en):
    assert md_en["output_format"] == "md" and all(t["output_format"] == "md" for t in md_en["tests"])
    padding = _tests(md_en)["masks.padding"]["output"]
    blocks = _markdown_blocks(padding)
    code = [b for kind, b in blocks if kind == "code"]
    lines = [b for kind, b in blocks if kind == "line"]
    assert any("`````" in c and "<script>" in c and "**bold**" in c for c in code)  # whole, not broken out of
    assert _rerun("masks.padding") in code
    assert lines and not any(s in line for line in lines for s in ("`", "<", "script", "bold", "http"))
    for t in md_en["tests"] + [{"output": md_en["output"]}]:
        _markdown_blocks(t["output"])


def _hand_built(path):
    """A result with a refused file of the student's named ``path`` and a check whose error text is markup."""
    nasty = "<script>x</script> ````"
    check = CheckResult(
        id="masks.padding",
        task="masks",
        status="error",
        score=0,
        max_score=3,
        message=Message(
            "error.exception", {"detail": nasty, "file": "masks.py", "line": 3, "code": "raise ValueError(...)"}
        ),
        error={"kind": "exception", "detail": nasty, "file": "masks.py", "line": 3, "trace": ""},
        reproduce="gradekit check /tmp/gradekit-check-x/submission --only masks.padding --sealed",
    )
    return GradeResult(
        submission="/autograder/submission",
        score=0,
        max_score=3,
        seed=None,
        profile="full",
        duration_s=0.5,
        tasks=[TaskResult(id="masks", score=0, max_score=3, checks=[check])],
        refused=[{"path": path, "kind": "symlink", "size": 0, "limit": 0}],
    )


@pytest.mark.parametrize("output_format", ["text", "md", "html"])
def test_each_format_shows_a_students_file_name_and_error_safely(output_format):
    name = "<script>alert(1)</script>```.py"
    data = gradescope.to_data(_hand_built(name), lang="en", output_format=output_format)
    check = data["tests"][0]["output"]
    raw = json.dumps(data)
    assert "/tmp/" not in raw and "--sealed" not in raw and "/autograder" not in raw
    assert data["output_format"] == data["tests"][0]["output_format"] == output_format
    if output_format == "text":
        assert name in data["output"] and "<script>x</script>" in check
        assert "gradekit check <your folder> --only masks.padding" in check
    elif output_format == "md":
        assert any(name in b for kind, b in _markdown_blocks(data["output"]) if kind == "code")
        assert any("<script>x</script> ````" in b for kind, b in _markdown_blocks(check) if kind == "code")
    else:
        assert "<script>" not in data["output"] + check
        assert _escaped(name) in data["output"] and "&lt;script&gt;x&lt;/script&gt;" in check


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="text, md, html"):
        gradescope.to_data(_hand_built("x.py"), output_format="pdf")


def test_the_build_carries_the_course_lang_and_format(tmp_path):
    config = tmp_path / "gradekit.toml"
    config.write_text('lang = "zh"\n[gradescope]\noutput_format = "html"\n', encoding="utf-8")
    import zipfile

    with zipfile.ZipFile(build(out=tmp_path / "a.zip", config=config)) as zf:
        settings = json.loads(zf.read("settings.json"))
    assert (settings["lang"], settings["output_format"]) == ("zh", "html")
    with zipfile.ZipFile(build(out=tmp_path / "b.zip")) as zf:
        settings = json.loads(zf.read("settings.json"))
    assert (settings["lang"], settings["output_format"]) == ("en", "md")


# -- the class summary page ----------------------------------------------------------------------------------
CHECKS = {"sdpa.equivalence": 3, "masks.padding": 1, "mha.shapes": 1, "layernorm.contract": 4, "masks.causal": 2}
"""Check id -> how many of the four students of ``_records`` pass it."""


def _records(n=4, long_names=False, lang="en"):
    """``n`` gradebook records (as ``batch.runner`` writes them), their reasons in ``lang``."""
    records = []
    for i in range(n):
        name = ("x" * 70 + str(i)) if long_names and i % 3 == 0 else f"<b>student {i}</b>"
        records.append(
            {
                "student": name,
                "folder": f"s{i}",
                "hash": "h",
                "status": ("ok", "banned-api", "copy", "timeout")[i % 4],
                "reason": text(("", "batch.reason.banned", "batch.reason.copy", "batch.reason.timeout")[i % 4], lang)
                if i % 4
                else "",
                "score": (i * 37) % 141,
                "max_score": 140,
                "duration_s": 1.5 * i,
                "checks": {cid: "passed" if i % 4 < passed else "failed" for cid, passed in CHECKS.items()},
                "diagnoses": ["sdpa.no_scale"] if i % 2 else [],
            }
        )
    return records


def test_pass_rates_are_worst_first_with_their_task():
    rates = summary.context(_records())["pass_rates"]
    assert [(c["id"], c["task"], c["rate"]) for c in rates] == [
        ("masks.padding", "masks", 25),
        ("mha.shapes", "mha", 25),
        ("masks.causal", "masks", 50),
        ("sdpa.equivalence", "sdpa", 75),
        ("layernorm.contract", "layernorm", 100),
    ]
    page = summary.render(_records())
    section = page.split(text("batch.page.pass_rates"), 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<code>([^<]+)</code>", section.replace("<wbr>", "")) == [c["id"] for c in rates[:-1]]
    folded = page.split(text("batch.page.all_passed", n=1), 1)[1].split("</details>", 1)[0]  # all passed: folded
    assert re.findall(r"<code>([^<]+)</code>", folded.replace("<wbr>", "")) == ["layernorm.contract"]


def test_similar_submissions_and_skipped_entries_are_shown_only_when_there_are_some():
    similar = [{"members": ["<b>A</b>", "Bo"], "score": 0.93, "link": "similar/a-b.html"}]
    skipped = [{"name": "<i>notes.txt</i>", "why": "no Python file"}]
    page = summary.render(_records(), similar=similar, skipped=skipped)
    assert text("batch.page.similar") in page and "&lt;b&gt;A&lt;/b&gt;" in page and "93%" in page
    assert 'href="similar/a-b.html"' in page
    assert "&lt;i&gt;notes.txt&lt;/i&gt;" in page and "no Python file" in page and "<i>" not in page
    bare = summary.render(_records())
    assert text("batch.page.similar") not in bare and text("batch.page.skipped", n=1) not in bare


def test_the_chinese_page_says_every_word_in_chinese():
    page = summary.render(
        _records(lang="zh"),
        lang="zh",
        skipped=[{"name": "n", "why": "w"}],
        similar=[{"members": ["a", "b"], "score": 0.9, "link": "x.html"}],
    )
    shown = re.sub(r"<[^>]+>|<style>.*?</style>", " ", page.split("<body>", 1)[1], flags=re.S)
    for word in ("banned-api", "timeout", "copy", "Students", "Score", "Pass rate", "Similar"):
        assert word not in shown, word
    assert text("batch.status.banned-api", "zh") in page and text("batch.page.similar", "zh") in page


ALLOWED_LATIN = {"API", "README", "root", "overrides"}
"""Latin words a Chinese sentence of the batch pages may keep: names of things that are written so."""


@pytest.mark.parametrize("prefix", ["batch.", "gradescope."])
def test_the_chinese_batch_sentences_use_no_english_word(prefix):
    from grader.messages import CATALOGUES

    messages = {key: value for key, value in CATALOGUES["zh"].items() if key.startswith(prefix)}
    assert messages, prefix
    for key, value in messages.items():
        # Placeholders, options, a command, paths (docs/SEALED.md), extensions (.zip) and the course configuration's
        # own syntax (a [table], a key = ...) are data, not words.
        data = (
            r"\{[^}]*\}|--?[a-z][a-z-]+|gradekit check|[\w.-]*(?:/[\w.-]+)*\.(?:md|toml|csv|zip|py|ipynb|json)\b"
            r"|\[[a-z_]+\]|\b[a-z_]+(?= = )"
        )
        words = set(re.findall(r"[A-Za-z][A-Za-z_-]+", re.sub(data, "", value)))
        assert words <= ALLOWED_LATIN, (key, value)
        assert "合同" not in value, key


# -- the summary page in a real browser ------------------------------------------------------------------------
HISTOGRAM = """(() => {
  const svg = document.querySelector('svg.histogram'), r = svg.getBoundingClientRect();
  const scale = r.width / svg.viewBox.baseVal.width;
  const labels = Array.from(svg.querySelectorAll('text')).map(t => {
    const b = t.getBoundingClientRect();
    return {text: t.textContent, left: b.left, right: b.right, top: b.top, bottom: b.bottom,
            px: parseFloat(getComputedStyle(t).fontSize) * scale};
  });
  return {left: r.left, right: r.right, labels: labels};
})()"""
TABLES = (
    "Array.from(document.querySelectorAll('table')).map(t => { const b = t.parentElement.getBoundingClientRect();"
    " return [b.left, b.right]; })"
)


def _overlap(a, b):
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [PHONE[0], 1280])
def test_the_summary_page_fits_a_phone_and_a_desktop(browser, tmp_path, lang, width):
    similar = [{"members": ["x" * 60, "student 2", "student 3"], "score": 0.97, "link": "similar/1.html"}]
    skipped = [{"name": "y" * 60, "why": text("batch.reason.unpreparable", lang, detail="z" * 50)}]
    path = tmp_path / "index.html"
    summary.write(_records(61, long_names=True, lang=lang), path, lang=lang, similar=similar, skipped=skipped)
    page = browser.open(path.as_uri(), width=width, height=PHONE[1], mobile=width == PHONE[0])
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(SCREENS / f"summary-{lang}-{width}.png")
    assert page.evaluate("window.innerWidth") == width
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    histogram = page.evaluate(HISTOGRAM)
    assert histogram["left"] >= 0 and histogram["right"] <= width + 0.5
    labels = histogram["labels"]
    assert len(labels) >= 10 and all(lb["left"] >= 0 and lb["right"] <= width + 0.5 for lb in labels)
    assert min(lb["px"] for lb in labels) >= LEGIBLE_PX
    clashes = [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1 :] if _overlap(a, b)]
    assert clashes == []
    assert all(left >= 0 and right <= width + 0.5 for left, right in page.evaluate(TABLES))
    assert page.console_errors == [] and page.requests == [path.as_uri()]
