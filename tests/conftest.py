"""Shared fixtures: submissions made from the reference with edits, and fast single-threaded torch."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

from grader.assignment import load
from tests.postgres import postgres_cluster, postgres_url  # noqa: F401 - the PostgreSQL tests' fixtures
from tests.reach import reached_tasks  # noqa: F401 - the corpus tests take it from here

try:
    import fcntl
except ImportError:  # not a POSIX system: the tests run on one worker there
    fcntl = None  # type: ignore[assignment]

TRANSFORMER = load("transformer")
"""The first assignment, which most of the kit's tests grade."""
TOTAL_POINTS = 140
"""The Transformer's points in all: pinned here, once, so that a change of points is a deliberate one."""
SOLUTION_ROOT = TRANSFORMER.reference
CONTRACT_FILES = TRANSFORMER.contract_files

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    # Tiny tensors: a second thread only adds synchronisation cost (and 10x slowdowns under load).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _failures_show_evidence(monkeypatch):
    """Every check that fails in any test says what it saw (``tests/evidence.py``): the audit runs on each failure
    and contract error the engine records, in this process, and fails the test that produced one with a gap."""
    from grader import engine
    from tests.evidence import evidence_gaps

    gaps = []
    failed, errored = engine._failed, engine._errored

    def audited_failed(result, fail):
        failed(result, fail)
        gaps.extend(f"{result.id}: {gap}" for gap in evidence_gaps(result.message))

    def audited_errored(result, err):
        errored(result, err)
        if err.kind == "contract":
            gaps.extend(f"{result.id}: {gap}" for gap in evidence_gaps(result.message))

    monkeypatch.setattr(engine, "_failed", audited_failed)
    monkeypatch.setattr(engine, "_errored", audited_errored)
    yield
    assert not gaps, "failures without their evidence:\n" + "\n".join(dict.fromkeys(gaps))


def edited_copy(dest, edits=None, *, files=None):
    """A copy of the reference in ``dest`` with ``edits`` ({file: (find, replace) or text}) applied."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for file in files or CONTRACT_FILES:
        shutil.copy(SOLUTION_ROOT / file, dest / file)
    for file, edit in (edits or {}).items():
        if isinstance(edit, str):
            (dest / file).write_text(edit)
            continue
        text = (dest / file).read_text()
        for find, replace in edit if isinstance(edit[0], tuple) else [edit]:
            assert text.count(find) == 1, f"{find!r} not found exactly once in {file}"
            text = text.replace(find, replace)
        (dest / file).write_text(text)
    return dest


def figure(figures, fig_id):
    """The heat-map figure ``fig_id`` of a result's ``figures`` (``{"heatmaps": [...]}``), or ``None``."""
    return next((f for f in (figures or {}).get("heatmaps") or () if f.get("id") == fig_id), None)


def panel(fig, title):
    """The panel of ``fig`` whose title (a message key) is ``title``, or ``None``."""
    return next((p for p in fig["panels"] if p.get("title") == title), None)


@pytest.fixture
def make_submission(tmp_path):
    """``make_submission(edits, name="sub")`` -> a folder: the reference with edits applied."""

    def make(edits=None, name="sub", files=None):
        return edited_copy(tmp_path / name, edits, files=files)

    return make


def assert_bug_caught_in_its_task_and_named_first(assignment, catalogue, bug, ref, diagnoser, tmp_path):
    """The mutation test of one catalogued bug: the reference with ``bug`` applied fails some quick check of the
    bug's own task, and the diagnosis of the first such check, confirmed on fresh examples as a grading confirms
    it, names ``bug`` first. The checks draw the examples a grading draws (``without_local_constants``)."""
    import functools

    from grader.checks.base import without_local_constants
    from grader.engine import Grading, fresh_calls, run_one, select_checks, variant_of
    from grader.submission.inprocess import InProcessRunner

    sub = InProcessRunner(catalogue.write_mutant(bug, tmp_path / "sub"), assignment=assignment, banned=())
    try:
        g = Grading(assignment, sub, ref, profile="quick", devices=["cpu"])
        with without_local_constants():
            for spec in select_checks(assignment, tasks=[bug.task], profile="quick"):
                result, calls = run_one(g, spec)
                if result.status != "passed":
                    fresh = functools.partial(fresh_calls, g, spec, variant_of(assignment, spec))
                    diagnoses = diagnoser(spec, calls, fresh=fresh)
                    assert diagnoses and diagnoses[0].id == bug.id, (spec.id, [d.id for d in diagnoses])
                    return
        pytest.fail(f"no check of task {bug.task} fails with {bug.id}: the grader cannot see this bug")
    finally:
        sub.close()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh gradekit data folder (``GRADEKIT_HOME``: the practice history, the drills' workspaces) per test, under
    ``tmp_path / "home"``; the practice and quiz tests use it for every test (their ``pytestmark``)."""
    monkeypatch.setenv("GRADEKIT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (``tests/chromium.py``) for the report tests; they skip, saying why, without one."""
    from tests import chromium

    if chromium.find() is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); the CI script installs it")
    profile = tempfile.mkdtemp(prefix="gradekit-chromium-")
    try:
        with chromium.Chromium.launch(profile) as b:
            yield b
    finally:
        shutil.rmtree(profile, ignore_errors=True)


# -- tests that read the whole machine: none runs beside another test -------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def _machine(request):
    """With tests on several workers (pytest-xdist: ``scripts/test``), a module marked ``alone`` (it reads what every
    process of the machine left: processes, files and IPC of the jails' uids) holds the machine to itself while it
    runs: an exclusive lock on a file of this test run, which every other module holds shared."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or fcntl is None:
        yield
        return
    alone = request.node.get_closest_marker("alone") is not None
    with open(Path(tempfile.gettempdir()) / f"gradekit-tests-{run}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# -- tiers: by folder ---------------------------------------------------------------------------------------------
TESTS = Path(__file__).resolve().parent
TIERS = ("unit", "integration")
"""``tests/unit``: no grading of a whole submission; ``tests/integration``: one grading of each kind, each door, each
output (``scripts/test --fast`` runs these two). Every other folder (``tests/corpus``, ``tests/hostile``) is the
``corpus`` tier: the catalogues, the blind corpora, batches, Dask, notebooks in a real kernel, the browser, attacks."""
FIXTURE_MARKS = {"browser": "browser"}
"""A test that uses one of these fixtures is marked so too (``-m "not browser"``)."""
CORPUS_FIXTURES = ("postgres_url",)
"""A test that uses one of these is in the corpus tier wherever its file is: it starts a PostgreSQL server of its own
(``tests/postgres.py``: seconds), which the inner loop's tiers do not spend."""


def tier_of(path):
    """The tier of the test file at ``path``: its folder's, ``corpus`` outside ``TIERS``; ``None`` for a file not
    under ``tests/`` (the checks the pytest plugin collects from a submission)."""
    try:
        parts = Path(path).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else "corpus"


def pytest_collection_modifyitems(config, items):
    for item in items:
        tier = tier_of(item.path)
        if tier is not None and any(f in getattr(item, "fixturenames", ()) for f in CORPUS_FIXTURES):
            tier = "corpus"
        if tier is not None and hasattr(item, "get_closest_marker") and item.get_closest_marker("corpus") is not None:
            tier = "corpus"  # a case marked so itself (the second assignment's run of a door the first's covers)
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))
        for fixture, mark in FIXTURE_MARKS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(getattr(pytest.mark, mark))
