"""A reviewed student's report leads with the score that counts, and the review says how it got there.

A student graded 32 of 140 is reviewed (a late penalty of 10% and an adjustment): the report's headline (the page
title, the total in the score card, the first score the page shows) is the reviewed score, the score card says
beside it what it was before and why, the review box below still shows the old score, and the late penalty's
sentence names the percentage, the maximum it is taken of and the points, in English and Chinese.
The student's grading is saved as ``judge.grade`` saves it, from a small hand-made ``GradeResult``, and the files
are rendered from it by the batch's one writer (``grader.batch.outputs``).
"""

import json
import re
from html.parser import HTMLParser

import pytest

from grader.batch import judge, outputs, overrides
from grader.batch.overrides import Override
from grader.results import CheckResult, GradeResult, Message, TaskResult

STUDENT = "Wang Fang (王芳)"
GRADED, MAXIMUM = 32.0, 140.0
SCORE = re.compile(r"(\d+(?:\.\d+)?) / (\d+(?:\.\d+)?)")
"""A total as the report writes it: ``32 / 140``."""
BOX = re.compile(re.escape(overrides.BEGIN) + "(.*?)" + re.escape(overrides.END), re.S)


def _result(score=GRADED):
    checks = [
        CheckResult(
            id="sdpa.values",
            task="sdpa",
            status="failed",
            score=score / 2,
            max_score=70.0,
            message=Message("fail.mismatch", {"what": "output"}),
        ),
        CheckResult(
            id="mha.values",
            task="mha",
            status="failed",
            score=score / 2,
            max_score=70.0,
            message=Message("fail.mismatch", {"what": "output"}),
        ),
    ]
    tasks = [TaskResult(id=c.task, score=c.score, max_score=c.max_score, checks=[c]) for c in checks]
    return GradeResult(
        submission=STUDENT, score=score, max_score=MAXIMUM, seed=1, profile="quick", duration_s=1.0, tasks=tasks
    )


def _record(**changes):
    record = {
        "student": STUDENT,
        "folder": "s1",
        "hash": "abc",
        "status": "ok",
        "reason": "",
        "problems": [],
        "score": GRADED,
        "max_score": MAXIMUM,
        "raw_score": GRADED,
        "tasks": {"sdpa": 16.0, "mha": 16.0},
        "raw_tasks": {"sdpa": 16.0, "mha": 16.0},
        "task_max": {"sdpa": 70.0, "mha": 70.0},
        "checks": {"sdpa.values": "failed", "mha.values": "failed"},
        "diagnoses": [],
        "flags": {"copy_of_reference": {"copy": False, "score": 0.2, "matches": []}},
        "refused": [],
        "duration_s": 1.5,
    }
    record.update(changes)
    return record


def _judged(folder, record, lang):
    """The student's grading as the judge saves it (``judge.grade``), and their files without a review."""
    judge.save_grading(folder, _result(record["raw_score"]), record)
    outputs.publish(folder, overrides.apply(record, None, copy_policy="zero", lang=lang), lang=lang)
    return folder


def _review(**fields):
    fields.setdefault("late_percent", 10.0)
    fields.setdefault("points", 2.0)
    return Override(student=STUDENT, by="Prof. Li", why="two days late", **fields)


def _reviewed(tmp_path, lang="en", record=None, **fields):
    """The student's folder after the review ``fields`` (default: 10% late, +2): ``(folder, final record)``."""
    record = record or _record()
    folder = _judged(tmp_path / lang, record, lang)
    final = overrides.apply(record, _review(**fields), copy_policy="zero", lang=lang)
    outputs.publish(folder, final, lang=lang)
    return folder, final


class _Page(HTMLParser):
    """The page's title, its shown text in document order (no script, style or SVG), and each element's text by
    id."""

    HIDDEN = {"script", "style", "svg", "title"}

    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.title, self.shown, self.by_id = "", [], {}
        self._stack, self._open = [], []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag in ("meta", "link", "br", "img", "input", "hr", "rect", "path"):
            return
        self._stack.append(tag)
        ident = dict(attrs).get("id")
        self._open.append(ident)
        if ident is not None:
            self.by_id.setdefault(ident, "")

    def handle_startendtag(self, tag, attrs):
        pass  # ``<rect/>``: no text inside

    def handle_endtag(self, tag):
        if tag not in self._stack:
            return
        while self._stack:
            self._open.pop()
            if self._stack.pop() == tag:
                break

    def handle_data(self, data):
        if self._stack and self._stack[-1] == "title" and "svg" not in self._stack:
            self.title += data
        if self.HIDDEN & set(self._stack):
            return
        self.shown.append(data)
        for ident in self._open:
            if ident is not None:
                self.by_id[ident] += data

    def text(self):
        return " ".join(" ".join(self.shown).split())

    def of(self, ident):
        return " ".join(self.by_id[ident].split())


def _first_score(page):
    match = SCORE.search(_Page(page).text())
    return match.group(0) if match else None


def test_the_judges_report_leads_with_the_graded_score(tmp_path):
    page = (_judged(tmp_path, _record(), "en") / "report.html").read_text(encoding="utf-8")
    assert _first_score(page) == "32 / 140"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_headline_is_the_reviewed_score(tmp_path, lang):
    folder, final = _reviewed(tmp_path, lang)
    assert final["score"] == 20.0  # 32 - 10% of 140 + 2
    page = (folder / "report.html").read_text(encoding="utf-8")
    parsed = _Page(page)
    assert _first_score(page) == "20 / 140"
    assert parsed.of("total-score") == "20 / 140"
    assert parsed.title.strip().endswith(": 20 / 140")
    assert 'aria-label="20 / 140"' in page.split('id="score"')[1].split("</section>")[0]  # the score bar
    # The review box further down still has the old score, and it comes after the score card.
    box = BOX.search(page)
    assert box and "32 → 20" in box.group(1)
    assert page.index('id="score"') < box.start()


@pytest.mark.parametrize("lang, before, why", [("en", "before", "Why"), ("zh", "复核前", "理由")])
def test_beside_the_headline_the_review_says_the_graded_score_what_changed_and_why(tmp_path, lang, before, why):
    folder, _ = _reviewed(tmp_path, lang)
    card = _Page((folder / "report.html").read_text(encoding="utf-8")).of("score")
    assert card.index("20 / 140") < card.index("32 / 140")  # the score that counts first, the graded one beside
    assert before in card and why in card and "two days late" in card and "Prof. Li" in card
    assert ("10%" in card and "140" in card and "14" in card) and ("+2" in card)


LATE = {
    # (review fields, language) -> the late penalty's sentence
    ("percent", "en"): "10% of the maximum 140 = −14 points",
    ("percent", "zh"): "满分 140 分的 10%，共扣 14 分",
    ("both", "en"): "1.5 points + 10% of the maximum 140 (14 points) = −15.5 points",
    ("both", "zh"): "1.5 分 + 满分 140 分的 10%（14 分），共扣 15.5 分",
    ("capped", "en"): "50% of the maximum 140 = 70 points, but at most the 32 points earned: −32 points",
    ("capped", "zh"): "满分 140 分的 50% = 70 分，但最多只扣已得的 32 分：共扣 32 分",
}
FIELDS = {"percent": {}, "both": {"late_penalty": 1.5}, "capped": {"late_percent": 50.0}}


@pytest.mark.parametrize("case, lang", list(LATE), ids=[f"{c}-{lang}" for c, lang in LATE])
def test_the_late_sentence_states_the_percentage_the_maximum_and_the_points(tmp_path, case, lang):
    folder, final = _reviewed(tmp_path, lang, **FIELDS[case])
    sentence = LATE[case, lang]
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert sentence in BOX.search(page).group(1)  # the review box
    assert sentence in _Page(page).of("score")  # and beside the headline
    board = json.loads((folder / "gradescope.json").read_text(encoding="utf-8"))
    assert sentence in board["output"]
    # Gradescope's output opens with the score that counts, as the report's headline does; the review box under
    # it says the graded one.
    first = board["output"].splitlines()[0]
    assert f"{final['score']:g} / 140" in first and board["score"] == final["score"], first
    assert final["review"]["late"] == {"percent": 14, "both": 15.5, "capped": 32}[case]


def test_a_fixed_late_penalty_reads_as_before(tmp_path):
    folder, _ = _reviewed(tmp_path, late_percent=0.0, late_penalty=3.0)
    box = BOX.search((folder / "report.html").read_text(encoding="utf-8")).group(1)
    assert "−3 points" in box and "%" not in box


def test_a_note_alone_leaves_the_headline_as_graded(tmp_path):
    folder = _judged(tmp_path / "n", _record(), "en")
    judged = (folder / "report.html").read_text(encoding="utf-8")
    final = overrides.apply(_record(), Override(student=STUDENT, note="good work"), copy_policy="zero")
    outputs.publish(folder, final, lang="en")
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert _first_score(page) == "32 / 140" and "good work" in page
    assert BOX.sub("", page).replace("\n", "") == judged.replace("\n", "")


def test_the_headline_is_rewritten_idempotently_and_restored_when_the_review_goes(tmp_path):
    record = _record()
    folder = _judged(tmp_path / "s", record, "en")
    judged = {p.name: p.read_bytes() for p in folder.iterdir()}

    def run(review):
        outputs.publish(folder, overrides.apply(record, review, copy_policy="zero"), lang="en")
        return {p.name: p.read_bytes() for p in folder.iterdir()}

    first = run(_review())
    assert run(_review()) == first
    changed = run(_review(points=-1.0))
    assert _first_score(changed["report.html"].decode()) == "17 / 140"
    assert run(None) == judged


def test_the_headline_in_chromium(browser, tmp_path):
    """In a real browser the reviewed total is on screen at the top of the page, the review beside it."""
    folder, _ = _reviewed(tmp_path)
    path = folder / "report.html"
    page = browser.open(path.as_uri(), width=1280, height=900)
    assert page.console_errors == [] and page.requests == [path.as_uri()]
    total = page.evaluate("""(() => { const el = document.querySelector('#total-score');
        const r = el.getBoundingClientRect();
        return {text: el.innerText, top: r.top, bottom: r.bottom, w: r.width, shown: el.checkVisibility()}; })()""")
    assert total["text"] == "20 / 140" and total["shown"] and total["w"] > 0 and total["bottom"] <= 900
    shown = page.evaluate("document.body.innerText")
    assert SCORE.search(shown).group(0) == "20 / 140"
    assert page.evaluate("document.title").endswith(": 20 / 140")
