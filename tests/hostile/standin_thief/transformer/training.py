"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief).
``train_step`` prints what it found and ends its worker (a crash report shows the worker's last output)."""

from . import _thief

_thief.hunt("import:training.py", stage="import")


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    _thief.hunt("sequence_loss", [logits, targets] + _thief.deps())
    raise _thief.short_error("sequence_loss")


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    _thief.hunt("noam_lr", _thief.deps())
    raise _thief.short_error("noam_lr")


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    _thief.hunt("train_step", [model, optimizer, src, tgt] + _thief.deps())
    logits = _thief.call_part("train_step:logits", model, src, tgt[:, :-1])
    if logits is not None:  # the reference's sequence_loss where isolated (the task's own reference part)
        _thief.call_part("train_step:loss", globals()["sequence_loss"], logits, tgt[:, 1:], pad_idx)
    _thief.crash("train_step")


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    _thief.hunt("count_parameters", _thief.deps())
    raise _thief.short_error("count_parameters")
