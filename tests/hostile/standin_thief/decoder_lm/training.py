"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief).
``train_step`` prints what it found and ends its worker (a crash report shows the worker's last output)."""

from . import _thief

_thief.hunt("import:training.py", stage="import")


def lm_loss(logits, tokens, pad_id=None):
    _thief.hunt("lm_loss", [logits, tokens] + _thief.deps())
    raise _thief.short_error("lm_loss")


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    handed = [model, tokens, optimizer] + _thief.parts_in(globals()) + _thief.deps()
    _thief.hunt("train_step", handed)
    from . import optim

    logits = _thief.call_part("train_step:logits", model, tokens)
    if logits is not None:  # the reference's lm_loss and clip_grad_norm_ where isolated
        loss = _thief.call_part("train_step:loss", globals()["lm_loss"], logits, tokens, pad_id)
        if loss is not None and _thief.call_part("train_step:backward", loss.backward) is None:
            _thief.call_part("train_step:clip", optim.clip_grad_norm_, list(model.parameters()), 1.0)
    _thief.crash("train_step")


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    _thief.hunt("count_parameters", _thief.deps())
    raise _thief.short_error("count_parameters")
