"""Mutation testing of the grader: every catalogued bug loses points in its own task and is diagnosed as itself.

Each bug is applied to the reference and graded on its own task's checks
(quick profile), stopping at the first failing check, whose first diagnosis
must be the bug itself.
"""

import pytest

from grader.bugs.catalogue import Catalogue, apply
from grader.bugs.diagnose import make_diagnoser
from grader.messages import CATALOGUES
from grader.submission.inprocess import InProcessRunner, reference_namespace
from tests.conftest import SOLUTION_ROOT, TRANSFORMER, assert_bug_caught_in_its_task_and_named_first

CATALOGUE = Catalogue(TRANSFORMER)
BUGS, EQUIVALENT = CATALOGUE.bugs, CATALOGUE.equivalent


@pytest.fixture(scope="module")
def reference():
    ns = reference_namespace(TRANSFORMER)
    runner = InProcessRunner(ns.root, assignment=TRANSFORMER, banned=(), namespace=ns)
    diagnoser = make_diagnoser(TRANSFORMER, ref=runner)
    yield ns, runner, diagnoser
    diagnoser.close()
    runner.close()


def test_catalogue_is_large_and_well_formed():
    assert len(BUGS) >= 40
    assert len({b.id for b in BUGS}) == len(BUGS)
    for bug in BUGS:
        source = (SOLUTION_ROOT / bug.file).read_text()
        mutated = apply(bug, source)
        assert mutated != source
        compile(mutated, bug.file, "exec")
    assert not set(EQUIVALENT) & {b.id for b in BUGS}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_bug_is_explained_with_a_hint(lang):
    for bug in BUGS:
        assert CATALOGUES[lang].get(f"bug.{bug.id}"), bug.id
        assert CATALOGUES[lang].get(f"bughint.{bug.id}"), bug.id


@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_bug_loses_points_in_its_task_and_is_diagnosed_first(bug, reference, tmp_path):
    ns, ref, diagnoser = reference
    assert_bug_caught_in_its_task_and_named_first(TRANSFORMER, CATALOGUE, bug, ref, diagnoser, tmp_path)
