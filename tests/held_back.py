"""What the held-back tests share (``tests/integration/test_held_back.py``: the kit and the configuration;
``tests/corpus/test_held_back_batch.py``: a class graded by ``batch``): the assignment and tasks, the replay and its
bank, the correct submissions, the course secret and a course configuration holding it."""

import json
import shutil
from pathlib import Path

import pytest

from grader import kit
from grader.assignment import load

HERE = Path(__file__).resolve().parent
"""The tests folder."""
REPLAY = HERE / "hostile" / "replay"
A = load("transformer")
TASKS = ("sdpa", "layernorm")
REPLAYED = {"sdpa.equivalence", "layernorm.equivalence"}
"""The checks the replay passes only by the bank: they compare with the reference's answer to its very inputs."""
NO_REPLAY = {"sdpa.float32", "layernorm.devices"}
"""The checks no replay passes: the reference is asked about float64 inputs, the submission is given float32."""
CORRECT = {
    "reference": A.reference,
    "einsum": HERE / "submissions" / "alt_einsum",
    "blind": HERE / "blind" / "correct" / "per_head_loops",
}
SECRET = "correct horse battery staple, term 2026"


def statuses(result):
    return {c.id: c.status for t in result.tasks for c in t.checks}


def checks_of(grading):
    return {c["id"]: c for t in grading["tasks"] for c in t["checks"]}


def record_bank(tmp_path_factory):
    """The bank a student kit of these tasks holds (recorded over the reference, as ``kit build`` records it)."""
    path = tmp_path_factory.mktemp("bank") / "answers.bank"
    return kit.record(A, [A.reference], profiles=("quick",), tasks=TASKS).save(path)


def replay_beside(tmp_path_factory, bank):
    """The replay with the kit's bank beside it: its own files over the assignment's skeleton (the files it leaves
    as handed out are not kept twice)."""
    folder = tmp_path_factory.mktemp("replay") / "replay"
    shutil.copytree(A.skeleton, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPLAY, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(bank, folder / "answers.bank")
    return folder


def course_file(folder, secret):
    """A course configuration grading ``TASKS``; with ``secret``, held in a file of its own beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"tasks = {json.dumps(list(TASKS))}"]
    if secret is not None:
        (folder / "secret.txt").write_text(secret + "\n", encoding="utf-8")
        lines += ["[held_back]", 'secret_file = "secret.txt"']
    (folder / "gradekit.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "gradekit.toml"


def module_fixtures():
    """``(bank, replay)``: ``record_bank`` and ``replay_beside`` as module-scoped fixtures, made once per test file
    that takes them (``bank, replay = module_fixtures()`` at its top)."""

    @pytest.fixture(scope="module")
    def bank(tmp_path_factory):
        return record_bank(tmp_path_factory)

    @pytest.fixture(scope="module")
    def replay(tmp_path_factory, bank):
        return replay_beside(tmp_path_factory, bank)

    return bank, replay
