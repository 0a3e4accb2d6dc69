"""The cache's fingerprint (``runner.grader_fingerprint``) covers the whole kit: every file of the ``grader`` package
(sources, templates, stylesheets, scripts, whatever the kit holds), caches left out.

The kit is a temporary copy of the package (``grader.__file__`` pointed at it for the test), changed file by file;
the repository is never written.
"""

import shutil
from pathlib import Path

import pytest

import grader
from grader.assignment import load
from grader.batch import runner

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny_assignment"
CHANGED = (
    "figure_data.py",
    "views/templates/report.html.j2",
    "views/templates/report.css",
    "views/templates/print.js",
    "batch/templates/index.html.j2",
    "batch/templates/pages.css",
    "views/svg.py",
    "demo.py",
    "notebook.py",
    "practice/__init__.py",
    "__main__.py",
)
"""Files of the kit, each changed in turn: the pictures, the views and the class pages among them."""


@pytest.fixture
def kit(tmp_path, monkeypatch):
    """A copy of the ``grader`` package, which ``grader_fingerprint`` fingerprints in place of the real one."""
    real = Path(grader.__file__).resolve().parent
    copy = tmp_path / "kit" / "grader"
    shutil.copytree(real, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    monkeypatch.setattr(grader, "__file__", str(copy / "__init__.py"))
    return copy


def test_a_change_to_any_file_of_the_kit_changes_the_fingerprint(kit):
    assignment = load(TINY)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(grader, "__file__", str(Path(runner.__file__).resolve().parent.parent / "__init__.py"))
        real = runner.grader_fingerprint(assignment)
    before = runner.grader_fingerprint(assignment)
    assert before == real  # the copy is the kit
    for name in CHANGED:
        path = kit / name
        assert path.is_file(), name
        path.write_bytes(path.read_bytes() + b"\n")
        after = runner.grader_fingerprint(assignment)
        assert after != before, name
        before = after
    (kit / "views" / "templates" / "extra.html.j2").write_text("{# a new template #}\n", encoding="utf-8")
    after = runner.grader_fingerprint(assignment)
    assert after != before, "a file added to the kit"


def test_caches_do_not_change_the_fingerprint(kit):
    assignment = load(TINY)
    before = runner.grader_fingerprint(assignment)
    for folder in (kit, kit / "views", kit / "batch" / "templates"):
        (folder / "__pycache__").mkdir(exist_ok=True)
        (folder / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"\x00compiled")
    (kit / "views" / "stray.pyc").write_bytes(b"\x00compiled")
    assert runner.grader_fingerprint(assignment) == before
