"""The class pages a batch writes: ``index.html`` rolls the checks up by task, and ``similarity.html`` shares its
frame and shows long lines whole.

One small class is graded once (two tasks, the quick profile): two identical copies of an independent solution
whose ``attention.py`` has two 300-character lines (one with spaces, one a single unbroken string), a solution
whose causal mask shows the future (partial marks, a diagnosed mistake), the unchanged skeleton (zero) and a
correct solution. The summary's per-task numbers are checked against ``gradebook.csv``; the similarity page is
opened in a real headless Chromium at 1280 and 390 px (skipped without it; screenshots in
``class-*.png`` in the screens folder, ``tests/chromium.SCREENS``).
"""

import csv
import json
import re
import shutil
import statistics
from html.parser import HTMLParser
from pathlib import Path

import markupsafe
import pytest

from grader.batch import classsim, runner, summary
from grader.messages import text
from tests.chromium import SCREENS
from tests.conftest import TRANSFORMER

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = ROOT / "tests" / "submissions"

TASKS = ["sdpa", "masks"]
WIDTHS = ((1280, 900, False), (390, 844, True))
ANCHOR = "    scale = 1.0 / math.sqrt(query.shape[-1])\n"
LONG_SPACED = ("    offsets = [" + ", ".join(str(1000 + i) for i in range(60)))[:299] + "]"
LONG_WORD = '    label = "' + "q" * (300 - len('    label = ""')) + '"'
"""Two lines of exactly 300 characters: one that wraps at its spaces, one a single token."""


def _copy(src, dest, edits=None):
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for file, (find, replace) in (edits or {}).items():
        source = (dest / file).read_text(encoding="utf-8")
        assert source.count(find) == 1, (file, find)
        (dest / file).write_text(source.replace(find, replace), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded: ``{"out", "class", "result", "rows", "columns"}``."""
    assert len(LONG_SPACED) == len(LONG_WORD) == 300
    base = tmp_path_factory.mktemp("class_pages")
    cls = base / "class"
    cls.mkdir()
    _copy(
        SUBMISSIONS / "alt_loops",
        cls / "ann",
        {"attention.py": (ANCHOR, ANCHOR + LONG_SPACED + "\n" + LONG_WORD + "\n")},
    )
    _copy(cls / "ann", cls / "ben")
    _copy(SUBMISSIONS / "alt_einsum", cls / "cat", {"masks.py": ("torch.tril(", "torch.triu(")})
    _copy(ROOT / "skeleton", cls / "dan")
    _copy(SUBMISSIONS / "alt_annotated", cls / "eve")
    out = base / "out"
    result = runner.batch(
        submissions=cls,
        out=out,
        jobs=2,
        tasks=TASKS,
        profile="quick",
        call_timeout=6.0,
        total_timeout=30.0,
        memory_mb=2048,
    )
    raw = (out / "gradebook.csv").read_text(encoding="utf-8-sig")
    reader = csv.DictReader(raw.splitlines())
    rows = list(reader)
    columns = [c for c in reader.fieldnames if c not in ("student_id", "total", "max", "status", "reason")]
    return {"out": out, "class": cls, "result": result, "rows": rows, "columns": columns}


# -- a small DOM of the page (the standard library's parser) -----------------------------------------------------
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def walk(self):
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.walk()

    def find_all(self, tag, **attrs):
        return [
            n for n in self.walk() if n.tag == tag and all(n.attrs.get(k.rstrip("_")) == v for k, v in attrs.items())
        ]

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self):
        return (self.attrs.get("class") or "").split()


class Tree(HTMLParser):
    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#root", {}, None)
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, attrs, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def _number(cell):
    return float(cell.text().strip())


def _records(graded):
    return {r["student"]: r for r in graded["result"].records}


# -- (a) the summary: a row per task, the checks under their task ------------------------------------------------
def test_the_summary_has_a_row_per_task_that_matches_the_gradebook(graded):
    page = (graded["out"] / "index.html").read_text(encoding="utf-8")
    tables = [t for t in Tree(page).root.find_all("table") if "tasks" in t.classes()]
    assert len(tables) == 1, "no per-task table (table.tasks) on the class summary"
    groups = [b for b in tables[0].find_all("tbody") if b.attrs.get("data-task")]
    assert [b.attrs["data-task"] for b in groups] == graded["columns"] == TASKS  # the gradebook's order
    records = _records(graded)
    for group in groups:
        task = group.attrs["data-task"]
        points = [float(r[task]) for r in graded["rows"] if r[task] != ""]
        full = {r["task_max"][task] for r in records.values() if task in r.get("task_max", {})}
        assert len(full) == 1 and len(points) == 5
        full = full.pop()
        cells = {td.attrs["data-col"]: td for td in group.find_all("td") if td.attrs.get("data-col")}
        assert _number(cells["points"]) == full
        assert _number(cells["mean"]) == pytest.approx(statistics.mean(points), abs=0.006)
        assert _number(cells["median"]) == pytest.approx(statistics.median(points), abs=0.006)
        assert int(_number(cells["full"])) == sum(p >= full for p in points)
        assert int(_number(cells["zero"])) == sum(p <= 0 for p in points)
        assert int(_number(cells["partial"])) == sum(0 < p < full for p in points)
        # The task's most frequent diagnosed mistake (a bug's id starts with its task's).
        named = [b for r in records.values() for b in r.get("diagnoses", []) if b.split(".")[0] == task]
        mistake = cells["mistake"].text()
        if named:
            top = max(sorted(set(named)), key=named.count)
            assert top in mistake and text("bug." + top) in mistake
        else:
            assert text("batch.page.no_mistake") in mistake
    # The numbers behind the test: masks has a full, a partial and a zero mark; sdpa none partial.
    by_task = {g.attrs["data-task"]: g for g in groups}
    masks = {
        td.attrs["data-col"]: td.text().strip() for td in by_task["masks"].find_all("td") if td.attrs.get("data-col")
    }
    assert (masks["full"], masks["partial"], masks["zero"]) == ("3", "1", "1")
    assert "masks.causal_shows_future" in masks["mistake"]


def test_each_tasks_checks_are_folded_under_it(graded):
    page = (graded["out"] / "index.html").read_text(encoding="utf-8")
    (table,) = [t for t in Tree(page).root.find_all("table") if "tasks" in t.classes()]
    checks = {c for r in graded["result"].records for c in r.get("checks", {})}
    assert checks and {c.split(".")[0] for c in checks} == set(TASKS)
    for group in (b for b in table.find_all("tbody") if b.attrs.get("data-task")):
        task = group.attrs["data-task"]
        details = group.find_all("details")
        assert len(details) == 1, task
        shown = [c.text().strip() for c in details[0].find_all("code")]
        assert sorted(shown) == sorted(c for c in checks if c.split(".")[0] == task), task
        summary_line = details[0].find_all("summary")[0].text()
        assert text("batch.page.task_checks", n=len(shown)) in summary_line


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_task_table_speaks_the_pages_language(graded, lang):
    page = summary.render(graded["result"].records, lang=lang)
    (table,) = [t for t in Tree(page).root.find_all("table") if "tasks" in t.classes()]
    heads = [th.text().strip() for th in table.find_all("th")]
    for word in ("task", "points", "task_mean", "task_median", "full", "partial", "zero", "mistake"):
        assert text(f"batch.page.{word}", lang) in heads, word
    assert text("batch.page.tasks", lang) in page
    if lang == "zh":
        assert not re.search(r"[A-Za-z]{3,}", " ".join(heads).replace("sdpa", "").replace("masks", ""))


# -- (b) one frame for both pages ------------------------------------------------------------------------------
def _frame(page):
    """The page's stylesheet block and its header (the current page's mark taken out), as written."""
    style = re.findall(r"<style>.*?</style>", page, re.S)
    header = re.findall(r"<header\b.*?</header>", page, re.S)
    assert len(style) == 1 and len(header) == 1, (len(style), len(header))
    return style[0], header[0].replace(' aria-current="page"', "")


def test_the_similarity_page_has_the_summarys_frame_and_both_link_to_each_other(graded):
    index = (graded["out"] / "index.html").read_text(encoding="utf-8")
    similarity = (graded["out"] / "similarity.html").read_text(encoding="utf-8")
    assert _frame(similarity) == _frame(index)
    assert '<html lang="en">' in index and '<html lang="en">' in similarity
    header_of = {
        name: re.search(r"<header\b.*?</header>", page, re.S).group(0)
        for name, page in (("index", index), ("similarity", similarity))
    }
    assert 'href="similarity.html"' in header_of["index"] and 'href="index.html"' in header_of["similarity"]
    assert re.search(r'<a href="index.html" aria-current="page">', header_of["index"])
    assert re.search(r'<a href="similarity.html" aria-current="page">', header_of["similarity"])


def test_the_frame_is_the_same_in_chinese(graded):
    records = graded["result"].records
    folders = {k: graded["class"] / k for k in ("ann", "ben", "cat", "dan", "eve")}
    report = classsim.compare_class(sorted(folders.items()), TRANSFORMER)
    index = summary.render(records, lang="zh")
    similarity = classsim.render(
        report,
        names={k: k for k in folders},
        sources_of=lambda k, f: (folders[k] / f).read_text(encoding="utf-8"),
        lang="zh",
    )
    assert _frame(similarity) == _frame(index)
    assert '<html lang="zh">' in index and '<html lang="zh">' in similarity
    header = _frame(index)[1]
    assert text("batch.nav.summary", "zh") in header and text("batch.nav.similarity", "zh") in header
    assert not re.search(r">[^<]*[A-Za-z]{3,}[^<]*<", header.replace(">gradekit<", "><"))


# -- (c) long lines on the similarity page, in a browser ----------------------------------------------------------
LINES = r"""(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  return Array.from(document.querySelectorAll('.code .line')).map(line => {
    const code = line.querySelector('code'), pane = line.closest('.code'), p = pane.getBoundingClientRect();
    // Where each visible character is drawn (a space that hangs past the end of a wrapped row shows nothing).
    const range = document.createRange(), rects = [];
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        if (/\s/.test(node.data[i])) continue;
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        rects.push(range.getBoundingClientRect());
      }
    }
    return {text: code.textContent, lineScroll: line.scrollWidth, lineClient: line.clientWidth,
            codeScroll: code.scrollWidth, codeClient: code.clientWidth,
            left: rects.length ? Math.min(...rects.map(r => r.left)) : null,
            right: rects.length ? Math.max(...rects.map(r => r.right)) : null,
            paneLeft: p.left + pane.clientLeft, paneRight: p.left + pane.clientLeft + pane.clientWidth,
            paneBox: [p.left, p.right], rows: new Set(rects.map(r => Math.round(r.top))).size};
  });
})()"""


@pytest.mark.parametrize("width, height, mobile", WIDTHS, ids=[str(w[0]) for w in WIDTHS])
def test_long_lines_are_shown_whole_on_the_similarity_page(graded, browser, width, height, mobile):
    path = graded["out"] / "similarity.html"
    page_text = path.read_text(encoding="utf-8")
    for line in (LONG_SPACED, LONG_WORD):
        assert str(markupsafe.escape(line)) in page_text  # the pair's excerpt holds both long lines
    page = browser.open(path.as_uri(), width=width, height=height, mobile=mobile)
    assert page.evaluate("window.innerWidth") == width
    lines = page.evaluate(LINES)
    assert {LONG_SPACED, LONG_WORD} <= {x["text"] for x in lines}
    clipped = []
    for x in lines:
        if x["right"] is None:  # an empty line
            continue
        inside = x["lineScroll"] <= x["lineClient"] + 1 and x["codeScroll"] <= x["codeClient"] + 1
        visible = x["left"] >= x["paneLeft"] - 0.5 and x["right"] <= x["paneRight"] + 0.5
        on_screen = x["paneBox"][0] >= -0.5 and x["paneBox"][1] <= width + 0.5
        if not (inside and visible and on_screen):
            clipped.append((x["text"][:40], {k: v for k, v in x.items() if k != "text"}))
    assert clipped == [], f"{len(clipped)} code lines are cut at {width} px: {clipped[:3]}"
    long_rows = [x["rows"] for x in lines if x["text"] in (LONG_SPACED, LONG_WORD)]
    assert min(long_rows) > 1  # wrapped over several rows, not shrunk or cut
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.console_errors == [] and page.requests == [path.as_uri()]
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.evaluate(
        "(() => { const c = Array.from(document.querySelectorAll('.code .line code'))"
        f".find(c => c.textContent === {json.dumps(LONG_SPACED)}); "
        "c.scrollIntoView({block: 'center'}); return true; })()"
    )
    page.screenshot(SCREENS / f"class-similarity-{width}.png", full_page=False)


@pytest.mark.parametrize("width, height, mobile", WIDTHS, ids=[str(w[0]) for w in WIDTHS])
def test_the_summary_with_its_task_table_fits_the_screen(graded, browser, width, height, mobile):
    path = graded["out"] / "index.html"
    page = browser.open(path.as_uri(), width=width, height=height, mobile=mobile)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    box = page.evaluate(
        "(() => { const t = document.querySelector('table.tasks'); if (!t) return null; "
        "const r = t.getBoundingClientRect(); return [r.left, r.right, t.parentElement.scrollWidth, "
        "t.parentElement.clientWidth]; })()"
    )
    assert box is not None and box[0] >= 0 and box[1] <= width + 0.5 and box[2] <= box[3] + 1, box
    assert page.console_errors == [] and page.requests == [path.as_uri()]
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(SCREENS / f"class-summary-{width}.png")
