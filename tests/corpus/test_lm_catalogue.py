"""The decoder-only LM's bug catalogue (``assignments/decoder_lm/bugs.py``) and its mutation test.

Fast: every bug applies to the reference exactly once and its mutant imports; every bug is explained, with a
hint, in English and Chinese. Slow (the corpus tier): each mutant, graded with the quick profile,
fails a check of its own task and that check's first diagnosis is the bug itself (as ``test_catalogue.py`` does
for the first assignment); graded whole, it loses points only in its own task or in tasks built on it.
"""

import string

import pytest

from assignments.decoder_lm.messages import bugs_en, bugs_zh
from grader import api
from grader.assignment import load
from grader.bugs.catalogue import Catalogue, apply
from grader.bugs.diagnose import make_diagnoser
from grader.submission.inprocess import InProcessRunner, reference_namespace
from grader.submission.loader import Namespace
from tests.conftest import assert_bug_caught_in_its_task_and_named_first, reached_tasks

LM = load("decoder_lm")
CATALOGUE = Catalogue(LM)
BUGS, EQUIVALENT = CATALOGUE.bugs, CATALOGUE.equivalent
IDS = [b.id for b in BUGS]


def placeholders(template):
    """The field names of a ``str.format`` template."""
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def test_catalogue_is_large_well_formed_and_spread_over_the_tasks():
    assert len(BUGS) >= 30
    assert len(set(IDS)) == len(IDS)
    for bug in BUGS:
        assert bug.task in LM.task_ids, bug.id
        assert bug.file == LM.task_by_id[bug.task].file, (bug.id, bug.file)
        source = (LM.reference / bug.file).read_text(encoding="utf-8")
        mutated = apply(bug, source)  # ValueError unless every find occurs exactly once
        assert mutated != source, bug.id
        compile(mutated, bug.file, "exec")
    assert {b.task for b in BUGS} == {t.id for t in LM.tasks if t.names}  # overfit has no code of its own
    assert not set(EQUIVALENT) & set(IDS)
    assert all(i.split(".")[0] in LM.task_ids and why for i, why in EQUIVALENT.items())


def test_every_mutant_is_written_and_imports(tmp_path):
    for bug in BUGS:
        folder = CATALOGUE.write_mutant(bug, tmp_path / bug.id)
        assert sorted(p.name for p in folder.iterdir()) == sorted(LM.contract_files), bug.id
        ns = Namespace(folder, assignment=LM, label=bug.id, block_reference=False)
        assert ns.load_errors() == {}, bug.id
        for task in LM.tasks:
            for name in task.names:
                ns.get(name)


def test_no_bug_id_is_another_assignments():
    """Message keys are one catalogue for every assignment: a shared id (``model.no_final_norm``) would make loading
    both assignments raise ``MessageClash``."""
    assert not {b.id for b in Catalogue(load("transformer")).bugs} & set(IDS)


@pytest.mark.parametrize("module", [bugs_en, bugs_zh], ids=["en", "zh"])
def test_every_bug_is_explained_with_a_hint(module):
    expected = {f"{kind}.{i}" for i in IDS for kind in ("bug", "bughint")}
    assert set(module.MESSAGES) == expected, expected ^ set(module.MESSAGES)
    for key, sentence in module.MESSAGES.items():
        assert sentence.strip() and placeholders(sentence) == placeholders(bugs_en.MESSAGES[key]), key


# -- the mutation test (slow) ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference():
    ns = reference_namespace(LM)
    runner = InProcessRunner(ns.root, assignment=LM, banned=(), namespace=ns)
    diagnoser = make_diagnoser(LM, ref=runner)
    yield runner, diagnoser
    diagnoser.close()
    runner.close()


@pytest.mark.parametrize("bug", BUGS, ids=IDS)
def test_bug_loses_points_in_its_task_and_is_diagnosed_first(bug, reference, tmp_path):
    ref, diagnoser = reference
    assert_bug_caught_in_its_task_and_named_first(LM, CATALOGUE, bug, ref, diagnoser, tmp_path)


@pytest.mark.parametrize("bug", BUGS, ids=IDS)
def test_graded_whole_the_bug_costs_points_only_in_its_task_or_above(bug, tmp_path):
    """Graded over every task its code can reach (the others cannot see a mutant of this file), the bug loses
    points in its own task and in no task beside it: tasks built on it may lose integrated credit only."""
    sub = CATALOGUE.write_mutant(bug, tmp_path / "sub")
    tasks = set(reached_tasks(LM, sub, [bug.file]))
    r = api.check(path=sub, assignment=LM, profile="quick", tasks=sorted(tasks))
    assert {t.id for t in r.tasks} == tasks
    failing = {t.id for t in r.tasks if t.score < t.max_score}
    assert bug.task in failing, f"{bug.id} loses no points in {bug.task}"
    above = {t for t in LM.task_ids if bug.task in LM.all_deps(t)}
    assert failing <= {bug.task} | above, f"{bug.id} costs points in {sorted(failing - {bug.task} - above)}"
    own = next(t for t in r.tasks if t.id == bug.task)
    named = [c.id for c in own.checks if bug.id in [d.id for d in c.diagnoses if d.kind == "bug"]]
    assert named, f"{bug.id} not named: {[(c.id, [d.id for d in c.diagnoses]) for c in own.checks if c.diagnoses]}"
