"""The README's layout section matches the repository: every path it names exists, and every module and
folder of the kit and of the built-in assignment is named."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPLETE = ("grader", "grader/submission", "assignments", "assignments/transformer")
"""Folders whose every entry the layout must name."""


def layout_entries():
    """{relative path: description} from the fenced block under '## Layout' (two spaces of indent per level)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
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
    assert not missing, f"README layout names paths that do not exist: {missing}"


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
    assert not unnamed, f"README layout does not name: {unnamed}"


def test_layout_parser_reads_nesting():
    entries = layout_entries()
    assert "grader/submission/worker.py" in entries and "assignments/transformer/checks" in entries
