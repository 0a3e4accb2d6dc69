"""The blind corpus: correct submissions written from the contract alone, by writers who never saw the
reference, the grader or these tests, each in a style of its own (tests/blind/correct/*/STYLE.md), and single
deviations of them, each a realistic departure from the contract (tests/blind/deviations/*/README.md).

Every correct one gets full marks, in-process and sealed; every deviation loses points in its own checks and
nowhere else. A deviation that also costs ``overfit`` (the whole submission must still learn) says so below.
"""

import shutil
from pathlib import Path

import pytest

from grader import api
from tests.conftest import TOTAL_POINTS, TRANSFORMER, reached_tasks

BLIND = Path(__file__).resolve().parents[1] / "blind"
CORRECT = sorted(p.name for p in (BLIND / "correct").iterdir() if p.is_dir())

EXPECTED = {
    "custom_init__no_residual_dropout": {"encoder_layer.dropout", "decoder_layer.dropout"},
    "custom_init__xavier_linear_only": {"model.init"},
    # a dropout fixed at 0.1 inside the positional encoding keeps the whole from learning 10 samples exactly, but
    # the whole learns them over the reference's parts beneath its model: charged once, in positional
    "einsum__pe_dropout_ignored": {"positional.dropout"},
    "einsum__smoothing_over_others": {"training.loss"},
    "einsum__zero_grad_after_step": {"training.train_step"},
    "extra_attributes__final_norm_always": {
        "model.contract",
        "model.equivalence",
        "model.integrated",
        "model.causal",
        "model.padding_invariance",
        "model.positions",
    },
    "extra_attributes__mha_dropout_default": {"mha.contract"},
    "finfo_fills_precomputed__fill_minus_1e9": {"sdpa.low_precision"},
    "finfo_fills_precomputed__greedy_no_pad_after_eos": {"greedy.scripted"},
    "functional__layernorm_eps_default": {"layernorm.contract"},
    "functional__mha_dropout_fixed": {"mha.dropout"},
    "fused_qkv__ffn_dropout_fixed": {"feedforward.dropout"},
    "fused_qkv__no_bias": {"mha.contract"},
    "internal_attention__loss_default_smoothing": {"training.loss"},
    "internal_attention__sdpa_returns_predropout_weights": {"sdpa.dropout"},
    "manual_loss__loss_includes_pad": {"training.loss"},
    "manual_loss__noam_step0": {"training.noam"},
    "numpy_tables__no_clipping": {"training.clipping"},
    "numpy_tables__pe_max_len_default": {"positional.buffer"},
    "per_head_loops__embedding_padding_idx": {"embedding.contract"},
    "per_head_loops__ffn_default_gelu": {"feedforward.contract"},
    # a summed loss gives 10 samples far larger steps: the whole no longer learns them within the budget; overfit
    # builds on training directly, so no variant gives it the reference's loss and the rest of the submission's own
    "per_head_loops__loss_sum": {"training.loss", "overfit.ten_samples"},
}
DEVIATIONS = sorted(p.name for p in (BLIND / "deviations").iterdir() if p.is_dir())


def _failing(result):
    return {c.id for t in result.tasks for c in t.checks if c.status != "passed"}


def test_the_corpus_is_complete():
    assert len(CORRECT) >= 8
    assert set(DEVIATIONS) == set(EXPECTED)
    for name in DEVIATIONS:
        assert name.split("__")[0] in CORRECT
        assert (BLIND / "deviations" / name / "README.md").is_file()


@pytest.mark.parametrize("name", CORRECT)
def test_correct_in_process(name):
    result = api.check(path=BLIND / "correct" / name, profile="quick", diagnose=False)
    assert _failing(result) == set() and result.score == result.max_score == TOTAL_POINTS, _failing(result)
    assert not result.banned_api


@pytest.mark.parametrize("name", CORRECT)
def test_correct_sealed(name):
    result = api.check(path=BLIND / "correct" / name, profile="quick", sealed=True, diagnose=False)
    assert _failing(result) == set() and result.score == TOTAL_POINTS, _failing(result)


@pytest.mark.parametrize("sealed", [False, True], ids=["in-process", "sealed"])
@pytest.mark.parametrize("name", DEVIATIONS)
def test_deviation_is_charged_in_its_own_checks(name, sealed, tmp_path):
    base, _ = name.split("__", 1)
    sub = tmp_path / "sub"
    shutil.copytree(BLIND / "correct" / base, sub, ignore=shutil.ignore_patterns("__pycache__"))
    files = {f.name for f in (BLIND / "deviations" / name).glob("*.py")}
    for f in files:
        shutil.copy(BLIND / "deviations" / name / f, sub / f)
    # Graded on every task the deviation's files can reach: the base keeps full marks on all of them (above), so
    # "nowhere else" holds over the whole assignment.
    tasks = reached_tasks(TRANSFORMER, sub, files)
    result = api.check(path=sub, profile="quick", sealed=sealed, diagnose=False, tasks=tasks)
    assert _failing(result) == EXPECTED[name]
    # ... and each fails with its reason, never with the grader's own error (a check once raised NameError here)
    internal = [
        c.id
        for t in result.tasks
        for c in t.checks
        if c.message and c.message.key in ("error.internal", "error.reference")
    ]
    assert not internal, internal


def test_a_part_that_cannot_be_isolated_is_graded_and_said_so():
    """An attention module of the student's own inside MultiHeadAttention: the isolated checks cannot put the
    reference's scaled_dot_product_attention beneath it, so they grade the student's own and say so; where the
    student's MultiHeadAttention calls the contract's function, nothing is said."""
    own = api.check(path=BLIND / "correct" / "internal_attention", profile="quick", tasks=["mha"], diagnose=False)
    notes = {n.key for t in own.tasks for c in t.checks for n in c.notes}
    assert "note.partly_isolated" in notes and own.score == 10
    calls = api.check(path=BLIND / "correct" / "einsum", profile="quick", tasks=["mha"], diagnose=False)
    assert not {n.key for t in calls.tasks for c in t.checks for n in c.notes}


def test_an_encoder_reading_its_own_layers_attributes_is_graded_with_its_own_parts_and_said_so():
    """extra_attributes' Encoder reads layer.size, which the reference's EncoderLayer does not have: the isolated
    model checks fall back to the student's own parts and keep their points (before: 5 points lost)."""
    result = api.check(path=BLIND / "correct" / "extra_attributes", profile="quick", tasks=["model"], diagnose=False)
    assert result.score == 10
    notes = [n for t in result.tasks for c in t.checks for n in c.notes if n.key == "note.not_isolated"]
    assert notes and "size" in notes[0].params["detail"]
