r"""The position-wise feed-forward network.

    FFN(x) = W_2 · dropout(act(W_1 x + b_1)) + b_2,    act ∈ {ReLU, GELU}

Applied to every position independently; d_ff is usually 4 · d_model.
"""

import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    """Two linear maps with a non-linearity between them.

    Args:
        d_model: D, input and output size.
        d_ff: F, the hidden size.
        dropout: dropout probability after the activation.
        activation: ``"relu"`` or ``"gelu"`` (the exact, erf-based GELU).

    Parameters ``linear1``: ``nn.Linear(D, F)``, ``linear2``: ``nn.Linear(F, D)``.
    ``forward(x [..., D])`` returns ``linear2(dropout(act(linear1(x))))``.

    Hints:
        The activation sits between the two linear maps; without it the
        network collapses to a single linear map. ``F.gelu`` is the exact
        GELU by default (``approximate="none"``).
    """

    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        # TODO(feedforward): create linear1 (D -> F), linear2 (F -> D), the dropout, and remember the activation.
        raise NotImplementedError("feedforward: FeedForward.__init__ is not implemented yet")

    def forward(self, x):
        # TODO(feedforward): linear2(dropout(act(linear1(x)))).
        raise NotImplementedError("feedforward: FeedForward.forward is not implemented yet")
