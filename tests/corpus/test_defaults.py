"""Defaults are part of the contract: a function, method or constructor called without an argument that has a
contract default behaves as when that default is passed, and only then.

Two kinds of cases. Our own edits of the references, small and targeted (fast). And cases written from the
contracts alone by someone who had not read the checks (``tests/defaults_cases/``, see its README): wrong defaults
that must lose points in their own check, and other spellings of the right defaults that must keep them."""

import json
import shutil
from pathlib import Path

import pytest

from grader import api
from grader.assignment import load
from tests.conftest import reached_tasks

HERE = Path(__file__).resolve().parents[1]
CASES = HERE / "defaults_cases" / "cases.json"
BASES = {"transformer": HERE / "blind" / "correct", "decoder_lm": HERE / "blind_lm" / "correct"}


def _edited(tmp_path, root, edits):
    dest = tmp_path / "sub"
    shutil.copytree(root, dest)
    for file, old, new in edits:
        path = dest / file
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{file}: {old!r} is not in the base exactly once"
        path.write_text(text.replace(old, new), encoding="utf-8")
    return dest


def _failed(result):
    return {c.id: c for t in result.tasks for c in t.checks if c.status != "passed"}


TRANSFORMER_CASES = [
    # (id, file, old, new, task, the check that must fail or None, the message key)
    (
        "train_step_smoothing_default",
        "training.py",
        "label_smoothing=0.0, max_grad_norm=None):",
        "label_smoothing=0.1, max_grad_norm=None):",
        "training",
        "training.train_step",
        "fail.default_left_out",
    ),
    (
        "train_step_clip_default",
        "training.py",
        "label_smoothing=0.0, max_grad_norm=None):",
        "label_smoothing=0.0, max_grad_norm=5.0):",
        "training",
        "training.train_step",
        "fail.default_left_out",
    ),
    (
        "train_step_smoothing_int_zero",
        "training.py",
        "label_smoothing=0.0, max_grad_norm=None):",
        "label_smoothing=0, max_grad_norm=None):",
        "training",
        None,
        None,
    ),
    (
        "mha_mask_required",
        "attention.py",
        "def forward(self, query, key, value, mask=None):",
        "def forward(self, query, key, value, mask):",
        "mha",
        "mha.contract",
        "fail.default_left_out_raised",
    ),
    # the order a module registers its children in is its own: the contract check compares by name
    (
        "model_registers_head_first",
        "model.py",
        "        self.encoder = Encoder(\n",
        "        self.output_proj = nn.Linear(d_model, tgt_vocab_size)\n        self.encoder = Encoder(\n",
        "model",
        None,
        None,
    ),
]


@pytest.mark.parametrize("case", TRANSFORMER_CASES, ids=[c[0] for c in TRANSFORMER_CASES])
def test_transformer_defaults(tmp_path, case):
    _id, file, old, new, task, failing, key = case
    sub = _edited(tmp_path, load("transformer").reference, [(file, old, new)])
    failed = _failed(api.check(path=sub, profile="quick", tasks=[task], diagnose=False))
    if failing is None:
        assert not failed, {k: (c.message and c.message.key) for k, c in failed.items()}
    else:
        assert set(failed) == {failing}
        assert failed[failing].message.key == key


LM_CASES = [
    (
        "generate_peer_defaults",
        "sampling.py",
        "max_new_tokens, temperature=1.0, top_k=None, top_p=None,",
        "max_new_tokens, temperature=0.6, top_k=None, top_p=0.9,",
        ["generate"],
        "generate.same_seed",
    ),
    (
        "sample_top_k_default",
        "sampling.py",
        "def sample_next(logits, temperature=1.0, top_k=None,",
        "def sample_next(logits, temperature=1.0, top_k=50,",
        ["sample"],
        "sample.same_seed",
    ),
    (
        "train_step_pad_default",
        "training.py",
        "def train_step(model, tokens, optimizer, pad_id=None,",
        "def train_step(model, tokens, optimizer, pad_id=0,",
        ["train_step"],
        "train_step.step",
    ),
    (
        "train_step_pad_required",
        "training.py",
        "def train_step(model, tokens, optimizer, pad_id=None,",
        "def train_step(model, tokens, optimizer, pad_id,",
        ["train_step"],
        "train_step.step",
    ),
    (
        "sample_temperature_int",
        "sampling.py",
        "def sample_next(logits, temperature=1.0, top_k=None,",
        "def sample_next(logits, temperature=1, top_k=None,",
        ["sample"],
        None,
    ),
]


@pytest.mark.parametrize("sealed", [False, True], ids=["in_process", "sealed"])
@pytest.mark.parametrize("case", LM_CASES, ids=[c[0] for c in LM_CASES])
def test_lm_defaults(tmp_path, case, sealed):
    _id, file, old, new, tasks, failing = case
    sub = _edited(tmp_path, load("decoder_lm").reference, [(file, old, new)])
    failed = _failed(
        api.check(path=sub, assignment="decoder_lm", profile="quick", tasks=tasks, diagnose=False, sealed=sealed)
    )
    if failing is None:
        assert not failed, {k: (c.message and c.message.key) for k, c in failed.items()}
    else:
        assert set(failed) == {failing}
        assert failed[failing].message.key in ("fail.default_left_out", "fail.default_left_out_raised")


def _blind_cases():
    return json.loads(CASES.read_text(encoding="utf-8")) if CASES.exists() else []


@pytest.mark.parametrize("case", _blind_cases(), ids=lambda c: c["id"])
def test_written_from_the_contract(tmp_path, case):
    """A wrong default loses points (in the checks ``checks`` names, where given); a right one in another spelling
    keeps full marks."""
    edits = case.get("edits") or [{"file": case["file"], "old": case["old"], "new": case["new"]}]
    sub = _edited(tmp_path, BASES[case["assignment"]] / case["base"], [(e["file"], e["old"], e["new"]) for e in edits])
    # The tasks whose code can run the edited files (the base earns full marks on every task: tests/corpus/
    # test_blind_corpus.py and test_lm_blind_corpus.py).
    tasks = reached_tasks(load(case["assignment"]), sub, {e["file"] for e in edits})
    result = api.check(path=sub, assignment=case["assignment"], profile="quick", tasks=tasks, diagnose=False)
    failed = _failed(result)
    if case["expect"] == "pass":
        assert not failed, {k: (c.message and c.message.key) for k, c in failed.items()}
    else:
        assert failed, f"{case['id']}: a wrong default of {case['callable']} kept every point"
        if case.get("checks"):  # where we read the case and know which checks its mistake belongs to
            assert set(failed) == set(case["checks"]), sorted(failed)
