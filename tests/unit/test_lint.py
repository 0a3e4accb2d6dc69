"""The tree passes ``ruff check`` and ``ruff format --check`` (the stubs excepted, as pyproject.toml says): two of the
steps of ``scripts/lint``; ``scripts/test`` installs the pinned tools, the ``dev`` extra. The third, ``mypy`` over the
kit, takes most of a minute cold: it runs in the corpus tier (``tests/corpus/test_types.py``), not in the inner loop.
Also: every test file lives in a tier's folder."""

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.conftest import TIERS, pytest_collection_modifyitems, tier_of

ROOT = Path(__file__).resolve().parents[2]


def _lint():
    spec = importlib.util.spec_from_file_location("gradekit_lint", ROOT / "scripts" / "lint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lint = _lint()


def check_step(step):
    """Run ``scripts/lint``'s ``step`` over the files it checks; fail with its output."""
    files, _missing = lint.present_files()  # a listed file not written yet is skipped (scripts/lint says so)
    assert files, "none of the paths scripts/lint checks exists"
    tool = step.split("-")[0]
    assert importlib.util.find_spec(tool) is not None, (
        f"{tool} is not installed in {sys.prefix}: scripts/test installs the 'dev' extra (pip install -e '.[dev]')"
    )
    code, output = lint.run(step, files)
    assert code == 0, f"{step} failed on {' '.join(files)} (scripts/lint {step} reruns it):\n{output}"


@pytest.mark.parametrize("step", ["ruff-check", "ruff-format"])
def test_lint(step):
    check_step(step)


def test_every_test_file_is_in_a_tier_folder():
    """No test file directly under tests/: each is in tests/unit, tests/integration or a corpus folder, so that its
    tier is where it lives, not a list someone keeps."""
    loose = sorted(p.name for p in (ROOT / "tests").glob("test_*.py"))
    assert not loose, f"test files outside the tier folders: {loose}"
    for tier in (*TIERS, "corpus"):
        assert list((ROOT / "tests" / tier).glob("test_*.py")), tier


def test_a_test_files_tier_is_its_folders():
    tests = ROOT / "tests"
    assert tier_of(tests / "unit" / "test_x.py") == "unit"
    assert tier_of(tests / "integration" / "test_x.py") == "integration"
    assert tier_of(tests / "corpus" / "test_x.py") == "corpus"
    assert tier_of(tests / "hostile" / "test_x.py") == "corpus"
    assert tier_of(tests / "unit" / "data" / "test_x.py") == "unit"
    assert tier_of(ROOT / "skeleton" / "test_x.py") is None  # a submission's checks, as the plugin collects them


def test_a_test_that_starts_a_postgresql_or_is_marked_corpus_is_in_the_corpus_tier_wherever_its_file_is():
    class Item:
        def __init__(self, path, fixtures, marked=()):
            self.path, self.fixturenames, self.marks, self.marked = path, fixtures, [], list(marked)

        def add_marker(self, mark):
            self.marks.append(mark.name)

        def get_closest_marker(self, name):
            return name if name in self.marked else None

    tests = ROOT / "tests"
    items = [
        Item(tests / "unit" / "test_x.py", ["tmp_path", "postgres_url"]),
        Item(tests / "unit" / "test_x.py", ["tmp_path"]),
        Item(tests / "integration" / "test_x.py", ["postgres_url"]),
        Item(tests / "integration" / "test_x.py", ["tmp_path"], marked=["corpus"]),  # a case marked so itself
        Item(tests / "integration" / "test_x.py", ["tmp_path"], marked=["browser"]),
    ]
    pytest_collection_modifyitems(None, items)
    assert [item.marks for item in items] == [["corpus"], ["unit"], ["corpus"], ["corpus"], ["integration"]]
