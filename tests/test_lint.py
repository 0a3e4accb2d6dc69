"""The tree passes ``ruff check`` and ``ruff format --check`` (the stubs excepted, as pyproject.toml says), and the
kit ``mypy`` (with the exceptions pyproject.toml lists): the steps of ``scripts/lint``; ``scripts/test`` installs the
pinned tools, the ``dev`` extra. Also: the slow-test list names tests that exist."""

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from tests.conftest import is_slow, slow_prefixes

ROOT = Path(__file__).resolve().parent.parent


def _lint():
    spec = importlib.util.spec_from_file_location("gradekit_lint", ROOT / "scripts" / "lint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lint = _lint()


@pytest.mark.parametrize("step", ["ruff-check", "ruff-format", "mypy"])
def test_lint(step):
    files, _missing = lint.present_files()  # a listed file not written yet is skipped (scripts/lint says so)
    assert files, "none of the paths scripts/lint checks exists"
    tool = step.split("-")[0]
    assert importlib.util.find_spec(tool) is not None, (
        f"{tool} is not installed in {sys.prefix}: scripts/test installs the 'dev' extra (pip install -e '.[dev]')"
    )
    code, output = lint.run(step, files)
    assert code == 0, f"{step} failed on {' '.join(files)} (scripts/lint {step} reruns it):\n{output}"


def test_slow_list_names_tests_that_exist():
    """Each line of tests/slow_tests.txt names a test file, or a test function in one: a renamed test would
    otherwise quietly move to the fast subset."""
    stale = []
    for prefix in slow_prefixes():
        path, _, rest = prefix.partition("::")
        file = ROOT / path
        if not file.exists():
            stale.append(f"{prefix}: no such file")
            continue
        if rest:
            name = rest.split("::")[0].split("[")[0]
            defined = {
                node.name
                for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            }
            if name not in defined:
                stale.append(f"{prefix}: {path} defines no {name}")
    assert not stale, "tests/slow_tests.txt names tests that do not exist:\n  " + "\n  ".join(stale)


def test_slow_prefix_matching():
    prefixes = ["tests/a.py::t", "tests/b.py", "tests/blind/"]
    assert is_slow("tests/a.py::t", prefixes)
    assert is_slow("tests/a.py::t[x-1]", prefixes)
    assert not is_slow("tests/a.py::t_other", prefixes)
    assert is_slow("tests/b.py::anything[1]", prefixes)
    assert not is_slow("tests/b.pyx::t", prefixes)
    assert is_slow("tests/blind/test_x.py::t", prefixes)
