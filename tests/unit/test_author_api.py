"""Assignments use the kit through one public module, ``grader.author``: nothing else of ``grader`` is imported by
an assignment's files (checks, probes, messages, practice, demo, figures), and every name the module offers is
there to be had."""

import ast
from pathlib import Path

import pytest

from grader import author

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "assignments").rglob("*.py"))


def kit_imports(path):
    """``(line, module)`` for each import of the kit in ``path`` other than ``grader.author``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module] if node.module != "grader" else [f"grader.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        found += [(node.lineno, m) for m in modules if m.split(".")[0] == "grader" and m != "grader.author"]
    return found


def test_assignments_import_the_kit_only_through_grader_author():
    assert FILES
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}" for path in FILES for line, module in kit_imports(path)
    ]
    assert not offenders, "\n".join(offenders)


def test_the_scan_sees_every_form_of_import(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text(
        "import grader.engine\nfrom grader import probes\nfrom grader.checks.base import check\n"
        "def f():\n    from grader.author import Fail\n    import torch\n"
    )
    assert [m for _, m in kit_imports(sample)] == ["grader.engine", "grader.probes", "grader.checks.base"]


@pytest.mark.parametrize("name", author.__all__)
def test_every_name_of_the_author_module_is_there(name):
    assert getattr(author, name) is not None
    assert name in dir(author)


def test_an_unknown_name_says_what_there_is():
    with pytest.raises(AttributeError, match="an assignment may use: .*check_tensor"):
        author.reference_solution  # noqa: B018 - the attribute access is the test
