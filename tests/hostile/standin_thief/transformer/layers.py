"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief).
The contract's submodules are built from the parts the kit hands over (the reference's, where isolated), so that
``forward`` is reached and can search them too."""

from torch import nn

from . import _thief, attention, feedforward, norm

_thief.hunt("import:layers.py", stage="import")


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        _thief.hunt("EncoderLayer.__init__", _thief.deps(), stage="init")
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = feedforward.FeedForward(d_model, d_ff, dropout, activation)
        self.norm1, self.norm2 = norm.LayerNorm(d_model), norm.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        _thief.hunt("EncoderLayer.__init__:built", [self.self_attn, self.ffn, self.norm1])

    def forward(self, x, mask=None):
        _thief.hunt("EncoderLayer.forward", [self, x, mask, self.self_attn, self.ffn, self.norm1] + _thief.deps())
        for part in (self.norm1, self.ffn):  # what the parts hand back, on good input
            _thief.call_part("EncoderLayer.part-out", part, x)
        raise _thief.full_error("EncoderLayer.forward")


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        _thief.hunt("DecoderLayer.__init__", _thief.deps(), stage="init")
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = attention.MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = feedforward.FeedForward(d_model, d_ff, dropout, activation)
        self.norm1, self.norm2, self.norm3 = (norm.LayerNorm(d_model) for _ in range(3))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        _thief.hunt("DecoderLayer.forward", [self, x, memory, self.self_attn, self.cross_attn, self.ffn,
                                             self.norm1] + _thief.deps())
        _thief.call_part("DecoderLayer.part-out", self.self_attn, x, x, x, tgt_mask)
        raise _thief.full_error("DecoderLayer.forward")
