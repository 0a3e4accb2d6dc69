"""An answer bank grades as the reference does, both ways: the verdicts a kit without the reference gives from its
bank are the full kit's on what the bank was recorded over; on code it was not recorded over, the kit never
crashes, never takes points the full kit would not and never awards points the full kit would not award (a check it
cannot judge is skipped, none of its points earned, and says why); and the bank holds answers, not the reference."""

import ast
import lzma
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import api
from grader.assignment import load
from grader.bugs.catalogue import Catalogue, apply
from grader.kit import record
from grader.submission import wire
from grader.submission.bank import MAGIC, Bank, Prints

TASKS = ["sdpa", "mha"]
RECORDED = ["sdpa.no_scale", "mha.merge_without_transpose"]
"""Mistakes the test bank is recorded over (besides the reference)."""
UNRECORDED = ["sdpa.scale_not_sqrt", "mha.key_uses_query_projection", "mha.no_output_projection"]

ROOT = Path(__file__).resolve().parents[2]
TRANSFORMER = load("transformer")
CATALOGUE = Catalogue(TRANSFORMER)


def _mutant(tmp_path_factory, bug_id):
    return CATALOGUE.write_mutant(CATALOGUE.by_id[bug_id], tmp_path_factory.mktemp(bug_id))


@pytest.fixture(scope="module")
def bank_file(tmp_path_factory):
    folders = [TRANSFORMER.reference] + [_mutant(tmp_path_factory, b) for b in RECORDED]
    bank = record(TRANSFORMER, folders, profiles=("quick",), tasks=TASKS)
    assert len(bank) > 10
    return bank.save(tmp_path_factory.mktemp("bank") / "transformer.bank")


def _grade(path, **options):
    return api.check(path=path, assignment=TRANSFORMER, profile="quick", tasks=TASKS, diagnose=False, **options)


def _statuses(result):
    return {c.id: c.status for t in result.tasks for c in t.checks}


def _notes(result):
    return {c.id: [n.key for n in c.notes] for t in result.tasks for c in t.checks}


def test_the_reference_keeps_full_marks_from_its_bank(bank_file):
    result = _grade(TRANSFORMER.reference, bank=str(bank_file))
    assert set(_statuses(result).values()) == {"passed"}, _statuses(result)
    assert result.score == result.max_score


def test_a_recorded_mistake_in_the_task_itself_gets_the_full_kits_verdicts(tmp_path_factory, bank_file):
    sub = _mutant(tmp_path_factory, "mha.merge_without_transpose")
    full, kit = _grade(sub), _grade(sub, bank=str(bank_file))
    assert _statuses(kit) == _statuses(full)
    assert "passed" in _statuses(kit).values() and "failed" in _statuses(kit).values()
    assert kit.score == full.score
    failed = [c for t in kit.tasks for c in t.checks if c.status == "failed"]
    assert all(c.message is not None and c.example for c in failed)  # a failure shows its example, as in full


def test_a_mistake_in_a_function_beneath_is_charged_there_as_in_the_full_kit(tmp_path_factory, bank_file):
    """The checks above are graded over the bank's record of the reference's function (``submission.replay``)."""
    sub = _mutant(tmp_path_factory, "sdpa.no_scale")
    full, kit = _grade(sub), _grade(sub, bank=str(bank_file))
    assert _statuses(kit) == _statuses(full)
    assert {k for k, s in _statuses(kit).items() if s != "passed"} == {"sdpa.equivalence", "sdpa.float32"}
    assert _notes(kit)["mha.integrated"] == _notes(full)["mha.integrated"] == ["note.charged_beneath"]
    assert kit.score == full.score and not kit.unjudged


def test_a_mistake_beneath_blocks_the_checks_above_without_their_points(tmp_path_factory, bank_file):
    """Without the record of the function beneath (a bank made before it, or a part the record cannot answer)."""
    from grader.submission.replay import TABLE_DIGEST

    bank = Bank.load(bank_file)
    del bank.answers[TABLE_DIGEST]
    bank_file = bank.save(tmp_path_factory.mktemp("unrecorded") / "transformer.bank")
    sub = _mutant(tmp_path_factory, "sdpa.no_scale")
    full, kit = _grade(sub), _grade(sub, bank=str(bank_file))
    full_s, kit_s = _statuses(full), _statuses(kit)
    assert {k for k, s in kit_s.items() if s == "failed"} == {k for k, s in full_s.items() if s == "failed"}
    blocked = [k for k, s in kit_s.items() if s == "skipped"]
    assert blocked and all(k.startswith("mha.") for k in blocked)
    assert all("note.blocked_by" in _notes(kit)[k] for k in blocked)
    scores = {c.id: c.score for t in kit.tasks for c in t.checks}
    assert all(scores[k] == 0 for k in blocked)  # not judged here: the final grade isolates them
    assert kit.score == full.score - sum(c.score for t in full.tasks for c in t.checks if c.id in blocked)
    assert kit.unjudged == sum(c.max_score for t in kit.tasks for c in t.checks if c.id in blocked)


@pytest.mark.parametrize("bug_id", UNRECORDED)
def test_code_the_bank_never_saw_is_charged_and_credited_as_the_full_kit_does(tmp_path_factory, bank_file, bug_id):
    sub = _mutant(tmp_path_factory, bug_id)
    full, kit = _grade(sub), _grade(sub, bank=str(bank_file))
    full_s, kit_s = _statuses(full), _statuses(kit)
    for check_id, status in kit_s.items():
        if status in ("failed", "error"):
            assert full_s[check_id] in ("failed", "error"), (check_id, status, full_s[check_id])
        elif status == "skipped":
            assert {"note.blocked_by", "note.not_in_bank"} & set(_notes(kit)[check_id]), check_id
        else:
            assert status == "passed" and full_s[check_id] == "passed", (check_id, full_s[check_id])
    scores = {c.id: (c.score, c.status) for t in full.tasks for c in t.checks}
    for check in (c for t in kit.tasks for c in t.checks):
        assert check.score <= scores[check.id][0], (check.id, check.status, scores[check.id])
    charged = {k for k, s in kit_s.items() if s in ("failed", "error")}
    assert charged, f"{bug_id}: the kit charged nothing; its task's checks: {kit_s}"


def test_the_bank_holds_answers_not_the_reference(bank_file):
    data = lzma.decompress(bank_file.read_bytes())
    assert data.startswith(MAGIC)
    lines = set()
    for file in TRANSFORMER.contract_files:
        for line in (TRANSFORMER.reference / file).read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if len(line) >= 24 and not line.startswith(("#", '"', "'")):
                lines.add(line.encode())
    assert lines
    found = [line for line in lines if line in data]
    assert not found, found[:5]
    for marker in (b"def ", b"\x80\x04\x95", b"torch.nn.modules", b"co_code"):  # code, a pickle, a module
        assert marker not in data, marker


def test_a_file_that_is_not_a_bank_is_refused_plainly(tmp_path):
    junk = tmp_path / "junk.bank"
    junk.write_bytes(b"not a bank at all")
    with pytest.raises(ValueError, match="not a gradekit answer bank"):
        Bank.load(junk)
    cut = tmp_path / "cut.bank"
    cut.write_bytes(lzma.compress(MAGIC + b'{"count": 3, "meta": {}}\n'))
    with pytest.raises(ValueError, match="cut short"):
        Bank.load(cut)
    with pytest.raises(api.UsageError, match="expected a file made by 'gradekit bank build'"):
        _grade(TRANSFORMER.reference, bank=str(junk))


def test_a_bank_reads_the_same_written_compressed_or_as_it_is(bank_file, tmp_path):
    bank = Bank.load(bank_file)
    plain = bank.save(tmp_path / "plain.bank", compress=False)
    assert plain.read_bytes().startswith(MAGIC)  # a kit's: its wheel compresses it
    back = Bank.load(plain)
    assert back.answers == bank.answers and back.meta == bank.meta
    assert back.prints.encode() == bank.prints.encode() and len(back.prints) == len(bank.prints) > 0
    cut = tmp_path / "cut_plain.bank"
    cut.write_bytes(plain.read_bytes()[: len(plain.read_bytes()) // 2])
    with pytest.raises(ValueError, match="cut short|not a gradekit answer bank"):
        Bank.load(cut)


def test_fingerprints_are_read_question_by_question_and_a_damaged_one_reads_as_none():
    first, second = b"\x01" * 32, b"\x02" * 32
    prints = Prints(
        {(first, "a.bug"): ([1.0, 2.0], True), (second, "b.bug"): ([3.0], False)}, (), [["a.bug", "a", "a.py", 1]]
    )
    data = wire.decode(prints.encode())
    assert [bytes(k) for k, _rows in data["entries"]] == [first, second]  # one blob a question
    back = Prints.decode(prints.encode())
    assert back.entries.get((first, "a.bug")) == ([1.0, 2.0], True)
    assert back.entries.get((first, "b.bug")) is None and (second, "b.bug") in back.entries
    data["entries"][1][1] = b"\xff damaged"
    damaged = Prints.decode(wire.encode(data))
    assert damaged.entries.get((second, "b.bug")) is None  # the kit cannot decide there, and says so
    assert damaged.entries.get((first, "a.bug")) == ([1.0, 2.0], True)


def test_the_command_line_builds_a_bank_and_checks_against_it(tmp_path):
    out = tmp_path / "sdpa.bank"
    build = [sys.executable, "-m", "grader", "bank", "build", "--tasks", "sdpa", "--profile", "quick"]
    made = subprocess.run(
        [*build, "--out", str(out), "--folders", str(TRANSFORMER.reference)], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    assert out.is_file() and "answers" in made.stdout
    checked = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(TRANSFORMER.skeleton), "--tasks", "sdpa"]
        + ["--profile", "quick", "--bank", str(out), "-q"],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr  # the skeleton fails, from the bank
    assert "Traceback" not in checked.stderr


def test_questions_the_bank_never_heard_leave_the_check_unjudged_and_say_so(bank_file):
    """The bank answers the quick profile's questions; the full profile's examples are others."""
    kit = api.check(
        path=TRANSFORMER.reference, assignment=TRANSFORMER, profile="full", tasks=["sdpa"], bank=str(bank_file)
    )
    statuses, notes = _statuses(kit), _notes(kit)
    missed = [k for k, s in statuses.items() if s == "skipped"]
    assert missed and set(statuses.values()) == {"passed", "skipped"}, statuses
    assert all(notes[k] == ["note.not_in_bank"] for k in missed)
    assert kit.score == kit.max_score - kit.unjudged and kit.unjudged > 0  # none of their points earned here
    # the skeleton's own failures come before any question to the reference: charged, as in the full kit
    kit = api.check(
        path=TRANSFORMER.skeleton, assignment=TRANSFORMER, profile="full", tasks=["sdpa"], bank=str(bank_file)
    )
    assert kit.score == 0 and "passed" not in _statuses(kit).values()


def test_a_bank_answers_a_grading_in_another_process_with_other_modules_loaded(tmp_path):
    """Hypothesis draws, now and then, a literal it finds in any local module loaded: a bank recorded while the
    checks of another task are loaded answers every question of a fresh process that grades one task of a
    submission whose own files hold other literals (its examples are those the bank was recorded on)."""
    bank = record(TRANSFORMER, [TRANSFORMER.reference], profiles=("quick",), tasks=["masks", "encoder_layer"])
    path = bank.save(tmp_path / "masks.bank")
    sub = tmp_path / "sub"
    shutil.copytree(TRANSFORMER.reference, sub)
    with open(sub / "masks.py", "a", encoding="utf-8") as f:
        f.write("\n\nLITERALS = (2, 3, 5, 7, 11, 1, 0, 4, 6, 8, 9, 10, 12)\n")
    checked = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(sub), "--tasks", "masks", "--profile", "quick"]
        + ["--bank", str(path), "-q"],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "not graded in this kit" not in checked.stdout, checked.stdout


def test_a_bank_recorded_after_a_grading_in_the_same_process_holds_every_question(tmp_path):
    """Checks keep some answers of the reference for every later grading of the process (a module's parameter
    table, ``reference_memo``): a recording after an in-process grading still hears every question, as a recording
    in a fresh process does."""
    lm = load("decoder_lm")
    fresh = tmp_path / "fresh.bank"
    build = [sys.executable, "-m", "grader", "bank", "build", "--assignment", "decoder_lm", "--tasks", "rmsnorm"]
    made = subprocess.run(
        [*build, "--profile", "quick", "--out", str(fresh), "--folders", str(lm.reference)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    graded = api.check(path=lm.reference, assignment=lm, profile="quick", tasks=["rmsnorm"], diagnose=False)
    assert graded.score == graded.max_score
    after, before = record(lm, [lm.reference], profiles=("quick",), tasks=["rmsnorm"]), Bank.load(fresh)
    assert set(after.answers) == set(before.answers), f"{len(after)} answers after a grading, {len(before)} fresh"


CHECK_MODULES = sorted((ROOT / "grader" / "checks").glob("*.py")) + sorted(ROOT.glob("assignments/*/checks/*.py"))
KEPT = {("grader/checks/base.py", "REGISTRY"), ("grader/checks/base.py", "_REFERENCE_MEMOS")}
"""Module-level containers of the checks that keep no answer of the reference."""


def _empty_container(node):
    """Whether ``node`` makes an empty dict, list or set (a literal, or a call of its type without arguments)."""
    if isinstance(node, ast.Dict):
        return not node.keys
    if isinstance(node, ast.List):
        return not node.elts
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("dict", "list", "set", "OrderedDict", "defaultdict")
        and not node.args
        and not node.keywords
    )


def test_what_checks_keep_between_gradings_is_forgotten_before_a_recording():
    """A check keeps nothing between gradings in a module-level container of its own, only in a
    ``reference_memo``, which ``kit.record`` empties before it records."""
    found = []
    for path in CHECK_MODULES:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            else:
                continue
            if isinstance(target, ast.Name) and _empty_container(value) and (rel, target.id) not in KEPT:
                found.append(f"{rel}: {target.id}")
    assert CHECK_MODULES and not found, found


# -- checks the full kit grades over the reference's own parts --------------------------------------------------
OVER_PARTS = ("layernorm", "encoder_layer", "training")


@pytest.fixture(scope="module")
def parts_bank(tmp_path_factory):
    bank = record(TRANSFORMER, [TRANSFORMER.reference], profiles=("quick",), tasks=OVER_PARTS, diagnoses=False)
    return bank.save(tmp_path_factory.mktemp("parts") / "transformer.bank")


def _both_over_parts(path, bank):
    grade = lambda **kw: api.check(  # noqa: E731
        path=path, assignment=TRANSFORMER, profile="quick", tasks=OVER_PARTS, diagnose=False, **kw
    )
    return _statuses(grade()), _grade_notes(grade(bank=str(bank)))


def _grade_notes(result):
    return {c.id: (c.status, [n.key for n in c.notes]) for t in result.tasks for c in t.checks}


def test_a_layer_dropping_no_residual_fails_its_dropout_check_in_the_kit_too(tmp_path_factory, parts_bank):
    """The full kit checks the residual dropout only over the reference's sublayers; the kit, over the student's,
    where every sublayer's output is dropped whole: it must not pass what the final grade fails."""
    full, kit = _both_over_parts(_mutant(tmp_path_factory, "encoder_layer.no_attention_residual"), parts_bank)
    assert full["encoder_layer.dropout"] == kit["encoder_layer.dropout"][0] == "failed"
    full, kit = _both_over_parts(TRANSFORMER.reference, parts_bank)
    assert full["encoder_layer.dropout"] == kit["encoder_layer.dropout"][0] == "passed"


def test_a_train_step_over_a_wrong_loss_of_its_own_task_is_judged_over_the_record_of_the_reference_loss(
    tmp_path_factory, parts_bank
):
    """The full kit grades train_step over the reference's sequence_loss (the training task's own reference part):
    the kit grades it over the record of that loss, and a correct step over a wrong loss passes in both."""
    full, kit = _both_over_parts(_mutant(tmp_path_factory, "training.loss_counts_padding"), parts_bank)
    assert full["training.train_step"] == "passed"
    assert kit["training.train_step"][0] == "passed"
    assert full["training.loss"] == kit["training.loss"][0] == "failed"


@pytest.mark.parametrize("step_bug", ["training.gradients_not_zeroed", "training.returns_tensor"])
def test_a_wrong_train_step_over_a_wrong_loss_never_passes_in_the_kit(tmp_path_factory, parts_bank, step_bug):
    """Both mistakes of the task at once: over the record the step fails as in the full kit, or, where the record
    cannot answer its calls, it is left unjudged (blocked by its own loss); never passed."""
    folder = _mutant(tmp_path_factory, "training.loss_counts_padding")
    bug = CATALOGUE.by_id[step_bug]
    (folder / bug.file).write_text(apply(bug, (folder / bug.file).read_text()))
    full, kit = _both_over_parts(folder, parts_bank)
    assert full["training.train_step"] in ("failed", "error")
    status, notes = kit["training.train_step"]
    assert status == full["training.train_step"] or (status == "skipped" and "note.blocked_by_own" in notes), (
        status,
        notes,
    )


def test_a_task_listed_before_one_it_builds_on_is_graded_over_it_as_the_full_kit_grades_it(tmp_path):
    """The language model lists attention before the KV cache beneath it: a broken cache is charged first, so that
    attention's cache checks are graded over the record of the reference's cache and pass, as the full kit (over the
    reference's cache) passes them; never failed."""
    lm = load("decoder_lm")
    assert lm.task_ids.index("attention") < lm.task_ids.index("kv_cache")
    tasks = ("gqa", "rope", "kv_cache", "attention")
    bank = record(lm, [lm.reference], profiles=("quick",), tasks=tasks, diagnoses=False).save(tmp_path / "lm.bank")
    catalogue = Catalogue(lm)
    sub = catalogue.write_mutant(catalogue.by_id["kv_cache.not_kept"], tmp_path / "mutant")
    grade = lambda **kw: api.check(path=sub, assignment=lm, profile="quick", tasks=tasks, diagnose=False, **kw)  # noqa: E731
    full, kit = _statuses(grade()), _grade_notes(grade(bank=str(bank)))
    assert full["attention.cache"] == "passed"
    assert kit["attention.cache"][0] == "passed"
    assert {k for k, s in full.items() if s == "failed"} == {k for k, (s, _) in kit.items() if s == "failed"}
