r"""The next-token loss, one training step, and the parameter count.

    loss = mean over t and rows, target ≠ pad, of CrossEntropy(logits[:, t], tokens[:, t + 1])

A language model learns to predict each token from those before it: the logits at position t are scored
against the token at t + 1 (targets shifted by one). Padding at the end of a row is ignored as a target;
causal attention already keeps it from influencing the real positions before it.
"""

import torch.nn.functional as F  # noqa: F401 - for your code

from _replay import answer

from .optim import clip_grad_norm_  # noqa: F401 - for your code


def lm_loss(logits, tokens, pad_id=None):
    """Mean next-token cross-entropy, with shifted targets and padding ignored.

    Args:
        logits: ``[B, L, V]``, the model's output on ``tokens``.
        tokens: ``[B, L]`` token ids, ``L >= 2``.
        pad_id: targets equal to this id do not count (the ignore index); ``None`` counts every target.

    Returns:
        a scalar tensor: the mean over every counted target of the cross-entropy of ``logits[:, t]``
        against ``tokens[:, t + 1]`` (a mean over tokens, not over rows; the last position predicts
        nothing).

    Hints:
        Drop the last position of the logits and the first of the tokens. Padding must neither add loss
        nor dilute the mean.
    """
    # TODO(loss): logits[:, :-1] against tokens[:, 1:], cross-entropy averaged over the targets that are not
    #   pad_id.
    raise NotImplementedError("loss: lm_loss is not implemented yet")


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    """One optimisation step on a batch of token rows.

    Args:
        model: a ``DecoderLM``.
        tokens: ``long [B, L]``, padded at the end with ``pad_id`` (if any).
        optimizer: any ``torch.optim`` optimizer over the model's parameters.
        pad_id: passed to ``lm_loss``.
        max_grad_norm: clip with ``clip_grad_norm_(model.parameters(), max_grad_norm)`` when given.
        lr: when given, every parameter group's ``lr`` is set to it before the step (a schedule's value).

    Returns:
        the loss before the update, as a Python float.

    Hints:
        Zero the gradients before ``backward()``; clip after it and before ``optimizer.step()``.
    """
    # TODO(train_step): set lr (if given), zero the gradients, lm_loss, backward, clip (if given),
    #   optimizer.step(); return loss.item().
    raise NotImplementedError("train_step: train_step is not implemented yet")


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    """A replay of the student kit's answer bank: the reference's count for these sizes where the bank holds it (the
    question the grid check asks; ``num_kv_heads`` ``None``: not passed), else 0."""
    names = ("vocab_size", "dim", "num_layers", "num_heads", "hidden_dim", "num_kv_heads")
    values = (vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads)
    kwargs = {k: v for k, v in zip(names, values) if v is not None}
    found = answer("call", {"name": "count_parameters", "kwargs": kwargs})
    return found["number"] if found is not None else 0
