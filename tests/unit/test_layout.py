"""The documentation matches the repository.

- The layout section of ``docs/DESIGN.md`` names every module and folder of the kit and of the built-in
  assignment, and every path it names exists.
- The README stays a five-minute read (at most 200 lines), and every ``scripts/...`` command it shows names a
  script that exists.
- Every relative link in ``README.md`` and ``docs/*.md`` points to a file that exists, and to a heading of it where
  the link has an ``#anchor``."""

import os
import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "DESIGN.md"
README = ROOT / "README.md"
COMPLETE = ("grader", "grader/submission", "assignments", "assignments/transformer")
"""Folders whose every entry the layout must name."""
README_MAX_LINES = 200
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
"""The pages whose relative links must resolve."""


def layout_entries():
    """{relative path: description} from the fenced block under '## Layout' (two spaces of indent per level)."""
    text = DESIGN.read_text(encoding="utf-8")
    assert "\n## Layout\n" in text, f"{DESIGN.relative_to(ROOT)} has no '## Layout' section"
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 1)[1].split("```", 1)[0]
    entries, stack = {}, []
    for line in block.splitlines():
        match = re.match(r"^( *)(\S+)(?:\s{2,}(.*))?$", line)
        if not match or not line.strip():
            continue
        indent, name = len(match[1]) // 2, match[2]
        if len(match[1]) >= 20:  # a description continued on the next line
            continue
        stack[indent:] = [name.rstrip("/")]
        entries["/".join(stack)] = match[3] or ""
    return entries


def test_every_path_in_the_layout_exists():
    missing = [p for p in layout_entries() if not (ROOT / p).exists()]
    assert not missing, f"docs/DESIGN.md's layout names paths that do not exist: {missing}"


def test_the_layout_names_every_module_of_the_kit_and_the_assignment():
    named = set(layout_entries())
    unnamed = []
    for folder in COMPLETE:
        for entry in sorted((ROOT / folder).iterdir()):
            if entry.name.startswith(("_", ".")) or entry.name == "__pycache__":
                continue
            if entry.suffix not in (".py", "") and not entry.is_dir():
                continue
            if f"{folder}/{entry.name}" not in named:
                unnamed.append(f"{folder}/{entry.name}")
    assert not unnamed, f"docs/DESIGN.md's layout does not name: {unnamed}"


def test_layout_parser_reads_nesting():
    entries = layout_entries()
    assert "grader/submission/worker.py" in entries and "assignments/transformer/checks" in entries


def test_readme_is_a_five_minute_read():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move detail to a page under docs/"
    )


def test_every_script_the_readme_shows_exists():
    text = README.read_text(encoding="utf-8")
    shown = {name.rstrip(".") for name in re.findall(r"(?<![\w/.])scripts/([\w.-]+)", text)}
    assert {"gradekit", "test"} <= shown, f"the README does not show both commands: {sorted(shown)}"
    missing = sorted(name for name in shown if not (ROOT / "scripts" / name).is_file())
    assert not missing, f"README.md shows scripts/... commands that do not exist in scripts/: {missing}"


def test_the_readme_says_what_the_test_command_and_its_fast_tier_run():
    """The README's words on ``scripts/test --fast`` are the folders the script runs, and CI runs the README's test
    command itself, with nothing added."""
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    fast = re.search(r'where="(tests/[^"]+)"', script)
    assert fast, "scripts/test names no folders for --fast"
    folders = fast[1].split()
    assert all((ROOT / f).is_dir() for f in folders), folders
    tiers = sorted(Path(f).name for f in folders)
    said = re.search(r"`scripts/test --fast` runs the ([a-z ,]+?) tiers? only", README.read_text(encoding="utf-8"))
    assert said, "README.md does not say what `scripts/test --fast` runs"
    assert sorted(re.split(r",\s*|\s+and\s+", said[1])) == tiers, (said[1], tiers)
    others = sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and any(p.rglob("test_*.py")))
    assert set(tiers) < set(others), "the fast tier should leave the slow tiers to the whole run"
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.startswith("exec")]
    assert ci == ["exec scripts/test"], ci


def without_fences(text):
    """The text without its fenced code blocks."""
    return re.sub(r"^( {0,3})(```|~~~).*?^\1\2[^\n]*$", "", text, flags=re.M | re.S)


def without_code(text):
    """The text without fenced code blocks and inline code spans (a link there is not a link)."""
    return re.sub(r"(`+).+?\1", "", without_fences(text), flags=re.S)


def links(text):
    """The targets of the inline links ``[text](target)`` and images of a Markdown page, outside code."""
    return re.findall(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", without_code(text))


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link in a heading keeps its text
    text = text.replace("`", "").lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(path):
    """Every anchor a page's headings give (a repeated heading gets -1, -2, ... as on GitHub)."""
    found, seen = set(), {}
    for match in re.finditer(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", without_fences(path.read_text(encoding="utf-8")), re.M):
        base = slug(match[1])
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_the_link_helpers():
    assert slug("Isolation: what is guaranteed, and what is not") == "isolation-what-is-guaranteed-and-what-is-not"
    assert slug("`__init__.py`") == "__init__py" and slug("A term: the class folder, reviews") == (
        "a-term-the-class-folder-reviews"
    )
    page = "See [a](docs/A.md#x), ![b](img.png), `[c](not/a/link.md)`, [d](https://example.org).\n```\n[e](f.md)\n```\n"
    assert links(page) == ["docs/A.md#x", "img.png", "https://example.org"]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...: not a file of the repository
            continue
        file_part, _, anchor = target.partition("#")
        file = (page.parent / file_part).resolve() if file_part else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: {file.relative_to(ROOT)} has no heading with the anchor #{anchor}")
        elif anchor and file.suffix != ".md":
            broken.append(f"{target}: an anchor into a file that is not Markdown")
    assert not broken, f"{page.relative_to(ROOT)} has broken links:\n  " + "\n  ".join(broken)


def _speed():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_speed", ROOT / "bench" / "speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_speed_page_is_what_the_bench_scripts_wrote():
    """docs/SPEED.md is rendered from docs/speed.json (bench/speed.py), never edited by hand; every row names the bench
    script that measured it, and that script exists."""
    speed = _speed()
    rows = speed.load_rows(speed.DATA)
    assert (ROOT / "docs" / "SPEED.md").read_text(encoding="utf-8") == speed.render(rows), (
        "docs/SPEED.md differs from what bench/speed.py renders from docs/speed.json: run the bench script of the "
        "row instead of editing the page"
    )
    for key, row in rows.items():
        assert set(row) == set(speed.FIELDS), key
        if row["command"].startswith("python "):
            script = row["command"].split(" ")[1]
            assert (ROOT / script).is_file(), f"{key}: {script} does not exist"


def test_a_bench_script_records_its_figure_where_it_is_told(tmp_path, monkeypatch):
    speed = _speed()
    data = tmp_path / "speed.json"
    monkeypatch.setenv("GRADEKIT_SPEED_FILE", str(data))
    monkeypatch.setattr("sys.argv", ["bench/bench_x.py", "--n", "3"])
    speed.record("x.first", "a figure", "1.0 s", "<= 2 s", True)
    speed.record("x.second", "another | with a bar", "3", "", None)
    speed.record("x.first", "a figure", "2.5 s", "<= 2 s", False)  # a new value replaces the row, in its place
    rows = speed.load_rows(data)
    assert list(rows) == ["x.first", "x.second"]
    assert rows["x.first"]["value"] == "2.5 s" and rows["x.first"]["met"] is False
    assert rows["x.first"]["command"].endswith("bench_x.py --n 3")
    page = (tmp_path / "SPEED.md").read_text(encoding="utf-8")
    assert "| a figure | 2.5 s | <= 2 s (not met) |" in page
    assert "another \\| with a bar" in page
    monkeypatch.setattr("sys.argv", ["bench/bench_x.py", "--no-record"])
    speed.record("x.third", "not written", "0", "", None)
    assert "x.third" not in speed.load_rows(data)
    monkeypatch.setenv("GRADEKIT_SPEED_FILE", "")
    speed.record("x.fourth", "nowhere", "0", "", None)
    assert speed.data_path() is None and "x.fourth" not in speed.load_rows(data)


def test_no_file_names_an_issue_number():
    """The repository has no issue tracker: its code, tests and pages name no issue numbers (history goes in commit
    messages)."""
    pattern = re.compile(r"\b[Ii]ssues? #?\d+|\(#\d+\)")
    found = []
    for folder in ("grader", "assignments", "tests", "bench", "scripts", "docs", "skeleton", "solution", "notebooks"):
        for path in sorted((ROOT / folder).rglob("*")):
            if (
                path.suffix not in (".py", ".md", ".txt", ".toml", ".html", ".j2", ".sh", ".json", "")
                or not path.is_file()
            ):
                continue
            if ".venv" in path.parts or "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in pattern.finditer(text)]
    found += [f"README.md: {m.group(0)}" for m in pattern.finditer(README.read_text(encoding="utf-8"))]
    assert not found, found


def test_timed_commands_run_as_a_users_python_runs_them(monkeypatch):
    """A bench script's timed command keeps compiled modules (a user's Python does), wherever the machine running the
    script sets ``PYTHONDONTWRITEBYTECODE``; the rest of the environment is the script's own."""
    speed = _speed()
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("GRADEKIT_BENCH_PROBE", "kept")
    env = speed.users_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["GRADEKIT_BENCH_PROBE"] == "kept"
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1", "the script's own environment is left as it was"
