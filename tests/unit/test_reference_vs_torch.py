"""The reference (``solution/``) checked against PyTorch's own modules and closed-form formulas.

Everything runs in float64 (an autouse fixture switches the default dtype and restores it), in
``eval()`` mode or with dropout 0. Weights are copied from the reference modules into PyTorch's by
the helpers ``copy_*`` below, after the reference's parameters have been randomised so that a
swapped or misplaced weight cannot hide behind an identical initialisation.

Mask polarity: ours are keep-masks (``True`` = may attend). ``nn.MultiheadAttention`` and the
``nn.Transformer*`` modules take block-masks (``attn_mask`` ``True`` = blocked,
``key_padding_mask`` ``[B, Lk]`` ``True`` = pad), so they get ``~keep``;
``F.scaled_dot_product_attention``'s bool mask is a keep-mask like ours.
"""

import copy
import math
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from solution.attention import MultiHeadAttention, scaled_dot_product_attention
from solution.decoding import greedy_decode
from solution.embedding import PositionalEncoding, TokenEmbedding
from solution.feedforward import FeedForward
from solution.layers import DecoderLayer, EncoderLayer
from solution.masks import causal_mask, padding_mask, target_mask
from solution.model import Decoder, Encoder, Transformer
from solution.norm import LayerNorm
from solution.training import count_parameters, noam_lr, sequence_loss, train_step

ATOL, RTOL = 1e-10, 1e-9
PAD, BOS, EOS = 0, 1, 2

NORM_FIRST = pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
ACTIVATION = pytest.mark.parametrize("activation", ["relu", "gelu"])


@pytest.fixture(autouse=True)
def float64_one_thread():
    """float64 by default; one intra-op thread, because these tensors are tiny and on a busy
    machine OpenMP's thread hand-offs cost milliseconds per matmul (tens of seconds in all)."""
    dtype, threads = torch.get_default_dtype(), torch.get_num_threads()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    yield
    torch.set_default_dtype(dtype)
    torch.set_num_threads(threads)


def assert_close(actual, expected, atol=ATOL, rtol=RTOL):
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(g, *shape, scale=1.0):
    return torch.randn(*shape, generator=g) * scale


# --------------------------------------------------------------------------- weights


@torch.no_grad()
def randomise_(module, g):
    """Give every parameter distinct random values (matrices scaled by 1/sqrt(fan_in))."""
    for p in module.parameters():
        scale = p.shape[-1] ** -0.5 if p.dim() > 1 else 0.5
        p.copy_(randn(g, *p.shape, scale=scale))
    return module


@torch.no_grad()
def copy_linear(ours, theirs):
    theirs.weight.copy_(ours.weight)
    theirs.bias.copy_(ours.bias)


@torch.no_grad()
def copy_norm(ours, theirs):
    assert theirs.eps == ours.eps
    theirs.weight.copy_(ours.weight)
    theirs.bias.copy_(ours.bias)


@torch.no_grad()
def copy_attention(ours, theirs):
    """MultiHeadAttention -> nn.MultiheadAttention: q, k, v stacked into in_proj; w_o is out_proj."""
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    copy_linear(ours.w_o, theirs.out_proj)


def copy_encoder_layer(ours, theirs):
    copy_attention(ours.self_attn, theirs.self_attn)
    copy_linear(ours.ffn.linear1, theirs.linear1)
    copy_linear(ours.ffn.linear2, theirs.linear2)
    copy_norm(ours.norm1, theirs.norm1)
    copy_norm(ours.norm2, theirs.norm2)


def copy_decoder_layer(ours, theirs):
    copy_attention(ours.self_attn, theirs.self_attn)
    copy_attention(ours.cross_attn, theirs.multihead_attn)
    copy_linear(ours.ffn.linear1, theirs.linear1)
    copy_linear(ours.ffn.linear2, theirs.linear2)
    copy_norm(ours.norm1, theirs.norm1)
    copy_norm(ours.norm2, theirs.norm2)
    copy_norm(ours.norm3, theirs.norm3)


def torch_encoder(ours, num_heads, d_ff, norm_first, activation):
    """nn.TransformerEncoder holding the weights of our Encoder's layers (and final norm)."""
    D = ours.embed.embed.embedding_dim
    layer = nn.TransformerEncoderLayer(
        D, num_heads, d_ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    )
    theirs = nn.TransformerEncoder(
        layer, len(ours.layers), norm=nn.LayerNorm(D) if norm_first else None, enable_nested_tensor=False
    )
    copy_encoder(ours, theirs)
    return theirs.eval()


def copy_encoder(ours, theirs):
    """Encoder -> nn.TransformerEncoder: its layers, and the final norm (Pre-LN only)."""
    for our_layer, their_layer in zip(ours.layers, theirs.layers, strict=True):
        copy_encoder_layer(our_layer, their_layer)
    assert (theirs.norm is not None) == hasattr(ours, "norm")
    if theirs.norm is not None:
        copy_norm(ours.norm, theirs.norm)


def torch_decoder(ours, num_heads, d_ff, norm_first, activation):
    D = ours.embed.embed.embedding_dim
    layer = nn.TransformerDecoderLayer(
        D, num_heads, d_ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    )
    theirs = nn.TransformerDecoder(layer, len(ours.layers), norm=nn.LayerNorm(D) if norm_first else None)
    copy_decoder(ours, theirs)
    return theirs.eval()


def copy_decoder(ours, theirs):
    for our_layer, their_layer in zip(ours.layers, theirs.layers, strict=True):
        copy_decoder_layer(our_layer, their_layer)
    assert (theirs.norm is not None) == hasattr(ours, "norm")
    if theirs.norm is not None:
        copy_norm(ours.norm, theirs.norm)


# --------------------------------------------------------------------------- masks in both polarities


@dataclass
class Masks:
    """One mask in our form and in PyTorch's; ``None`` where absent."""

    keep: torch.Tensor | None
    """our keep-mask: 4-D ``[B or 1, 1, Lq or 1, Lk]`` or 2-D ``[Lq, Lk]``, True = may attend"""
    attn: torch.Tensor | None
    """PyTorch ``attn_mask``: ``[Lq, Lk]`` or ``[B * H, Lq, Lk]``, True = blocked"""
    key_padding: torch.Tensor | None
    """PyTorch ``key_padding_mask``: ``[B, Lk]``, True = pad"""


MASK_KINDS = ["none", "padding", "causal", "combined", "2d", "dense"]


def key_lengths(B, Lk):
    """Row 0 unpadded, later rows shorter; never empty, so no query row is fully blocked."""
    return torch.tensor([max(1, Lk - 2 * b) for b in range(B)])


def ensure_row_keeps(keep, g):
    """Random keep-mask [..., Lq, Lk] with at least one key kept in every query row."""
    Lk = keep.size(-1)
    pick = torch.randint(Lk, keep.shape[:-1], generator=g)
    return keep | F.one_hot(pick, Lk).bool()


def make_masks(kind, B, H, Lq, Lk, g):
    if kind == "none":
        return Masks(None, None, None)
    keep_keys = torch.arange(Lk) < key_lengths(B, Lk)[:, None]  # [B, Lk]
    tri = torch.ones(Lq, Lk, dtype=torch.bool).tril()  # [Lq, Lk]
    if kind == "padding":
        return Masks(keep_keys[:, None, None, :], None, ~keep_keys)
    if kind == "causal":
        return Masks(tri[None, None], ~tri, None)
    if kind == "combined":
        return Masks(keep_keys[:, None, None, :] & tri, ~tri, ~keep_keys)
    if kind == "2d":
        keep = ensure_row_keeps(torch.rand(Lq, Lk, generator=g) < 0.5, g)
        return Masks(keep, ~keep, None)
    if kind == "dense":  # a different mask per batch row and query: [B, 1, Lq, Lk]
        keep = ensure_row_keeps(torch.rand(B, Lq, Lk, generator=g) < 0.5, g)
        return Masks(keep[:, None], (~keep).repeat_interleave(H, dim=0), None)
    raise AssertionError(kind)


def padded_tokens(B, L, vocab, g, pad=PAD):
    """Token ids in [3, vocab) with rows padded (with ``pad``) to the lengths of key_lengths."""
    tokens = torch.randint(3, vocab, (B, L), generator=g)
    return tokens.masked_fill(torch.arange(L) >= key_lengths(B, L)[:, None], pad)


# --------------------------------------------------------------------------- attention


@pytest.mark.parametrize("dropout_module", [False, True], ids=["no_dropout", "eval_dropout"])
@pytest.mark.parametrize("kind", ["none", "padding", "causal", "combined", "dense"])
def test_sdpa_matches_torch(kind, dropout_module):
    g = gen(1)
    B, H, Lq, Lk, Dk, Dv = 2, 3, 4, 6, 5, 7
    q, k, v = randn(g, B, H, Lq, Dk), randn(g, B, H, Lk, Dk), randn(g, B, H, Lk, Dv)
    keep = make_masks(kind, B, H, Lq, Lk, g).keep
    dropout = nn.Dropout(0.5).eval() if dropout_module else None

    out, weights = scaled_dot_product_attention(q, k, v, keep, dropout)

    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=keep))  # bool: True = take part
    scores = q @ k.transpose(-2, -1) / math.sqrt(Dk)
    if keep is not None:
        scores = scores.masked_fill(~keep, -math.inf)
    assert_close(weights, scores.softmax(-1))
    assert_close(weights.sum(-1), torch.ones(B, H, Lq))
    if keep is not None:
        blocked = ~keep.expand(B, H, Lq, Lk)
        assert blocked.any()
        assert (weights[blocked] == 0).all()


def test_sdpa_returns_the_weights_it_used_under_dropout():
    g = gen(2)
    q, k, v = randn(g, 2, 3, 4), randn(g, 2, 5, 4), randn(g, 2, 5, 6)
    keep = torch.ones(3, 5, dtype=torch.bool).tril()
    torch.manual_seed(0)
    out, weights = scaled_dot_product_attention(q, k, v, keep, nn.Dropout(0.5).train())
    assert_close(out, weights @ v)
    plain = (q @ k.transpose(-2, -1) / 2.0).masked_fill(~keep, -math.inf).softmax(-1)
    dropped = weights == 0
    assert (dropped & keep).any()  # dropout did drop some kept weights
    assert_close(weights[~dropped], plain[~dropped] * 2.0)  # survivors rescaled by 1 / (1 - p)


@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("attention", ["self", "cross"])
def test_mha_matches_torch(attention, kind):
    g = gen(3)
    B, D, H = 3, 12, 3
    Lq, Lk = (5, 5) if attention == "self" else (4, 7)
    ours = randomise_(MultiHeadAttention(D, H, dropout=0.3), g).eval()
    theirs = nn.MultiheadAttention(D, H, dropout=0.3, batch_first=True).eval()
    copy_attention(ours, theirs)
    query = randn(g, B, Lq, D)
    key, value = (query, query) if attention == "self" else (randn(g, B, Lk, D), randn(g, B, Lk, D))
    m = make_masks(kind, B, H, Lq, Lk, g)

    expected, _ = theirs(query, key, value, key_padding_mask=m.key_padding, attn_mask=m.attn)

    assert_close(ours(query, key, value, m.keep), expected)


def test_mha_rejects_indivisible_heads():
    with pytest.raises(ValueError):
        MultiHeadAttention(10, 3)


# --------------------------------------------------------------------------- layers and stacks


@ACTIVATION
@NORM_FIRST
@pytest.mark.parametrize("kind", MASK_KINDS)
def test_encoder_layer_matches_torch(kind, norm_first, activation):
    g = gen(4)
    B, L, D, H, d_ff = 3, 6, 16, 4, 24
    ours = randomise_(EncoderLayer(D, H, d_ff, dropout=0.2, norm_first=norm_first, activation=activation), g).eval()
    theirs = nn.TransformerEncoderLayer(
        D, H, d_ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    copy_encoder_layer(ours, theirs)
    x = randn(g, B, L, D)
    m = make_masks(kind, B, H, L, L, g)

    expected = theirs(x, src_mask=m.attn, src_key_padding_mask=m.key_padding)

    assert_close(ours(x, m.keep), expected)


DECODER_MASKS = [  # (tgt kind, memory kind)
    ("none", "none"),
    ("causal", "none"),
    ("causal", "padding"),
    ("combined", "padding"),
    ("dense", "2d"),
    ("padding", "dense"),
]


@ACTIVATION
@NORM_FIRST
@pytest.mark.parametrize(("tgt_kind", "memory_kind"), DECODER_MASKS)
def test_decoder_layer_matches_torch(tgt_kind, memory_kind, norm_first, activation):
    g = gen(5)
    B, Lt, Ls, D, H, d_ff = 3, 5, 7, 16, 2, 20
    ours = randomise_(DecoderLayer(D, H, d_ff, dropout=0.2, norm_first=norm_first, activation=activation), g).eval()
    theirs = nn.TransformerDecoderLayer(
        D, H, d_ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    copy_decoder_layer(ours, theirs)
    x, memory = randn(g, B, Lt, D), randn(g, B, Ls, D)
    tm, mm = make_masks(tgt_kind, B, H, Lt, Lt, g), make_masks(memory_kind, B, H, Lt, Ls, g)

    expected = theirs(
        x,
        memory,
        tgt_mask=tm.attn,
        memory_mask=mm.attn,
        tgt_key_padding_mask=tm.key_padding,
        memory_key_padding_mask=mm.key_padding,
    )

    assert_close(ours(x, memory, tm.keep, mm.keep), expected)


@ACTIVATION
@NORM_FIRST
@pytest.mark.parametrize("kind", ["none", "padding", "combined"])
@pytest.mark.parametrize("num_layers", [2, 3])
def test_encoder_stack_matches_torch(num_layers, kind, norm_first, activation):
    g = gen(6)
    B, L, D, H, d_ff, V = 3, 6, 8, 2, 16, 11
    ours = randomise_(
        Encoder(V, D, H, d_ff, num_layers, max_len=16, dropout=0.3, norm_first=norm_first, activation=activation), g
    ).eval()
    theirs = torch_encoder(ours, H, d_ff, norm_first, activation)
    src = padded_tokens(B, L, V, g)
    m = make_masks(kind, B, H, L, L, g)

    expected = theirs(ours.pos_enc(ours.embed(src)), mask=m.attn, src_key_padding_mask=m.key_padding)

    assert_close(ours(src, m.keep), expected)


@ACTIVATION
@NORM_FIRST
@pytest.mark.parametrize(
    ("tgt_kind", "memory_kind"), [("none", "none"), ("causal", "padding"), ("combined", "padding")]
)
@pytest.mark.parametrize("num_layers", [2, 3])
def test_decoder_stack_matches_torch(num_layers, tgt_kind, memory_kind, norm_first, activation):
    g = gen(7)
    B, Lt, Ls, D, H, d_ff, V = 3, 5, 6, 8, 2, 16, 9
    ours = randomise_(
        Decoder(V, D, H, d_ff, num_layers, max_len=16, dropout=0.3, norm_first=norm_first, activation=activation), g
    ).eval()
    theirs = torch_decoder(ours, H, d_ff, norm_first, activation)
    tgt, memory = padded_tokens(B, Lt, V, g), randn(g, B, Ls, D)
    tm, mm = make_masks(tgt_kind, B, H, Lt, Lt, g), make_masks(memory_kind, B, H, Lt, Ls, g)

    expected = theirs(
        ours.pos_enc(ours.embed(tgt)),
        memory,
        tgt_mask=tm.attn,
        memory_mask=mm.attn,
        tgt_key_padding_mask=tm.key_padding,
        memory_key_padding_mask=mm.key_padding,
    )

    assert_close(ours(tgt, memory, tm.keep, mm.keep), expected)


@ACTIVATION
@NORM_FIRST
def test_transformer_matches_torch(norm_first, activation):
    """Transformer.forward: src padding mask for the encoder and as the decoder's memory mask."""
    g = gen(8)
    B, Ls, Lt, D, H, d_ff, V_src, V_tgt = 3, 6, 5, 8, 2, 16, 10, 12
    ours = randomise_(
        Transformer(
            V_src,
            V_tgt,
            D,
            H,
            d_ff,
            num_layers=2,
            max_len=16,
            dropout=0.3,
            norm_first=norm_first,
            activation=activation,
        ),
        g,
    ).eval()
    theirs = nn.Transformer(
        D,
        H,
        dim_feedforward=d_ff,
        dropout=0.0,
        batch_first=True,
        custom_encoder=torch_encoder(ours.encoder, H, d_ff, norm_first, activation),
        custom_decoder=torch_decoder(ours.decoder, H, d_ff, norm_first, activation),
    ).eval()
    copy_encoder(ours.encoder, theirs.encoder)  # again: nn.Transformer re-initialised the custom stacks
    copy_decoder(ours.decoder, theirs.decoder)
    src, tgt = padded_tokens(B, Ls, V_src, g), padded_tokens(B, Lt, V_tgt, g)
    src_pad, tgt_pad = src == PAD, tgt == PAD
    future = torch.ones(Lt, Lt, dtype=torch.bool).triu(1)

    hidden = theirs(
        ours.encoder.pos_enc(ours.encoder.embed(src)),
        ours.decoder.pos_enc(ours.decoder.embed(tgt)),
        tgt_mask=future,
        src_key_padding_mask=src_pad,
        tgt_key_padding_mask=tgt_pad,
        memory_key_padding_mask=src_pad,
    )

    src_keep = ~src_pad[:, None, None, :]
    tgt_keep = ~tgt_pad[:, None, None, :] & ~future
    assert_close(ours(src, tgt, src_keep, tgt_keep), ours.output_proj(hidden))
    memory = ours.encode(src, src_keep)
    assert_close(ours.output_proj(ours.decode(tgt, memory, tgt_keep, src_keep)), ours.output_proj(hidden))


# --------------------------------------------------------------------------- small modules


@pytest.mark.parametrize("shape", [(8,), (5, 8), (2, 3, 16), (2, 1, 3, 12)])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
@pytest.mark.parametrize("eps", [1e-5, 1e-3, 0.1, 1e-12])
def test_layer_norm_matches_torch(eps, scale, shape):
    g = gen(9)
    D = shape[-1]
    x = randn(g, *shape, scale=scale) + randn(g, *shape[:-1], 1, scale=scale)  # per-row offsets too
    ours = LayerNorm(D, eps=eps)
    assert_close(ours.weight.detach(), torch.ones(D), atol=0, rtol=0)
    assert_close(ours.bias.detach(), torch.zeros(D), atol=0, rtol=0)
    assert_close(ours(x), F.layer_norm(x, (D,), eps=eps))
    randomise_(ours, g)
    assert_close(ours(x), F.layer_norm(x, (D,), ours.weight, ours.bias, eps=eps))


@pytest.mark.parametrize("D", [8, 16])
def test_positional_table_matches_closed_form(D):
    max_len = 40
    pe_module = PositionalEncoding(D, max_len=max_len, dropout=0.5)
    assert "pe" in dict(pe_module.named_buffers())
    assert "pe" not in dict(pe_module.named_parameters())
    pe = pe_module.pe
    assert pe.shape == (1, max_len, D)
    assert pe.dtype == torch.float64
    for pos in (0, 1, 2, 7, 23, max_len - 1):
        for i in range(D // 2):
            angle = pos / 10000 ** (2 * i / D)
            assert math.isclose(pe[0, pos, 2 * i].item(), math.sin(angle), rel_tol=1e-12, abs_tol=1e-12)
            assert math.isclose(pe[0, pos, 2 * i + 1].item(), math.cos(angle), rel_tol=1e-12, abs_tol=1e-12)
    x = randn(gen(10), 2, 5, D)
    assert_close(pe_module.eval()(x), x + pe[:, :5])


@pytest.mark.parametrize("D", [8, 12])
def test_token_embedding_is_scaled_lookup(D):
    g = gen(11)
    ours = TokenEmbedding(13, D)
    tokens = torch.randint(13, (3, 5), generator=g)
    assert_close(ours(tokens), ours.embed.weight[tokens] * math.sqrt(D))


@ACTIVATION
def test_feedforward_matches_formula(activation):
    g = gen(12)
    ours = randomise_(FeedForward(8, 20, dropout=0.5, activation=activation), g).eval()
    x = randn(g, 3, 4, 8, scale=2.0)
    h = x @ ours.linear1.weight.T + ours.linear1.bias
    if activation == "relu":
        h = h.clamp_min(0)
    else:
        h = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))  # the exact GELU
    assert_close(ours(x), h @ ours.linear2.weight.T + ours.linear2.bias)


# --------------------------------------------------------------------------- masks


@pytest.mark.parametrize("pad", [0, 3])
def test_padding_mask(pad):
    tokens = torch.tensor([[5, 4, pad, pad], [1, pad, 2, pad], [7, 8, 9, 6]])
    original = tokens.clone()
    mask = padding_mask(tokens, pad)
    assert mask.dtype == torch.bool
    assert mask.shape == (3, 1, 1, 4)
    expected = torch.tensor([[1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(mask[:, 0, 0], expected)
    assert torch.equal(tokens, original)


@pytest.mark.parametrize("size", [1, 2, 5])
def test_causal_mask(size):
    mask = causal_mask(size)
    assert mask.dtype == torch.bool
    assert mask.shape == (1, 1, size, size)
    expected = [[j <= i for j in range(size)] for i in range(size)]
    assert mask[0, 0].tolist() == expected


def test_target_mask():
    tgt = torch.tensor([[1, 5, 6, 0, 0], [1, 7, 0, 8, 0]])
    mask = target_mask(tgt, 0)
    assert mask.dtype == torch.bool
    assert mask.shape == (2, 1, 5, 5)
    for b in range(2):
        for i in range(5):
            for j in range(5):
                assert mask[b, 0, i, j].item() == (j <= i and tgt[b, j].item() != 0)


def test_masks_follow_device():
    assert causal_mask(3).device.type == "cpu"
    assert causal_mask(3, device=torch.device("cpu")).device.type == "cpu"
    assert causal_mask(3, device="meta").device.type == "meta"
    tgt = torch.zeros(2, 4, dtype=torch.long, device="meta")
    assert padding_mask(tgt, 0).device.type == "meta"
    assert target_mask(tgt, 0).device.type == "meta"
    assert target_mask(tgt, 0).shape == (2, 1, 4, 4)


# --------------------------------------------------------------------------- training pieces


@pytest.mark.parametrize("pad", [0, 4])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1, 0.3])
def test_sequence_loss_matches_cross_entropy(label_smoothing, pad):
    g = gen(13)
    B, L, V = 3, 6, 7
    logits = randn(g, B, L, V, scale=3.0)
    targets = torch.randint(V, (B, L), generator=g)
    targets[0, 4:] = pad
    targets[2, 2:] = pad
    keep = targets != pad
    assert 0 < keep.sum() < keep.numel()

    logp = logits.log_softmax(-1)
    nll = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # [B, L]
    uniform = -logp.mean(-1)  # [B, L]: cross-entropy against the uniform distribution
    by_hand = ((1 - label_smoothing) * nll + label_smoothing * uniform)[keep].mean()
    loss = sequence_loss(logits, targets, pad, label_smoothing)

    assert loss.dim() == 0
    assert_close(loss, by_hand)
    assert_close(
        loss, F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=pad, label_smoothing=label_smoothing)
    )
    assert_close(
        loss,
        F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=pad, label_smoothing=label_smoothing),
    )
    scrambled = logits.masked_fill(~keep.unsqueeze(-1), 50.0)  # what sits at padded positions is ignored
    assert_close(sequence_loss(scrambled, targets, pad, label_smoothing), loss)


@pytest.mark.parametrize(("d_model", "warmup", "factor"), [(8, 4, 1.0), (512, 4000, 2.0), (16, 10, 0.5)])
def test_noam_lr(d_model, warmup, factor):
    def formula(step):
        return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)

    for step in [1, 2, 3, warmup - 1, warmup, warmup + 1, 3 * warmup, 100_000]:
        lr = noam_lr(step, d_model, warmup, factor)
        assert isinstance(lr, float)
        assert math.isclose(lr, formula(step), rel_tol=1e-12)
    assert noam_lr(0, d_model, warmup, factor) == noam_lr(1, d_model, warmup, factor)
    rates = [noam_lr(step, d_model, warmup, factor) for step in range(1, 3 * warmup)]
    assert max(range(len(rates)), key=rates.__getitem__) + 1 == warmup
    assert math.isclose(max(rates), factor * (d_model * warmup) ** -0.5, rel_tol=1e-12)


@NORM_FIRST
@pytest.mark.parametrize("num_layers", [1, 2, 3])
def test_count_parameters_matches_model(num_layers, norm_first):
    for src_vocab, tgt_vocab in [(5, 7), (11, 11), (3, 20)]:
        for d_model, num_heads, d_ff in [(8, 2, 8), (8, 4, 24), (12, 3, 16)]:
            model = Transformer(
                src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, max_len=8, norm_first=norm_first
            )
            expected = sum(p.numel() for p in model.parameters())
            count = count_parameters(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, norm_first)
            assert type(count) is int
            assert count == expected, (src_vocab, tgt_vocab, d_model, num_heads, d_ff)
            assert count_parameters(src_vocab, tgt_vocab, d_model, 1, d_ff, num_layers, norm_first) == count


@NORM_FIRST
def test_transformer_init_is_xavier_uniform(norm_first):
    torch.manual_seed(0)
    model = Transformer(11, 13, d_model=16, num_heads=4, d_ff=32, num_layers=2, max_len=8, norm_first=norm_first)
    matrices = [(name, p) for name, p in model.named_parameters() if p.dim() > 1]
    assert len(matrices) == 1 + 1 + 2 * (4 + 2) + 2 * (8 + 2) + 1
    for name, p in matrices:
        fan_out, fan_in = p.shape
        bound = math.sqrt(6 / (fan_in + fan_out))
        largest = p.detach().abs().max().item()
        assert largest <= bound * (1 + 1e-12), name
        assert largest >= 0.5 * bound, name  # spread over the whole range, not a narrower init
    for name, p in model.named_parameters():
        if name.endswith(("norm1.weight", "norm2.weight", "norm3.weight", "norm.weight")):
            assert torch.equal(p.detach(), torch.ones_like(p)), name


# --------------------------------------------------------------------------- greedy decoding


def plain_greedy(model, src, max_len):
    """Greedy decoding the slow way: the full model on the whole prefix at every step."""
    B = src.size(0)
    src_keep = (src != PAD)[:, None, None, :]
    ys = torch.full((B, 1), BOS)
    finished = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        t = ys.size(1)
        tgt_keep = (ys != PAD)[:, None, None, :] & torch.ones(t, t, dtype=torch.bool).tril()
        step = model(src, ys, src_keep, tgt_keep)[:, -1].argmax(-1)
        step = torch.where(finished, PAD, step)
        ys = torch.cat([ys, step[:, None]], dim=1)
        finished |= step == EOS
        if finished.all():
            break
    return ys


@NORM_FIRST
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_decode_matches_plain_loop(seed, norm_first):
    g = gen(100 + seed)
    torch.manual_seed(seed)
    model = Transformer(9, 5, d_model=8, num_heads=2, d_ff=16, num_layers=2, max_len=16, norm_first=norm_first).eval()
    src = padded_tokens(4, 6, 9, g)
    out = greedy_decode(model, src, max_len=7, bos_idx=BOS, eos_idx=EOS, pad_idx=PAD)
    assert out.dtype == torch.long
    assert not out.requires_grad
    assert torch.equal(out, plain_greedy(model, src, 7))


class ScriptedModel:
    """A stand-in for a Transformer whose logits spell out a fixed script per source row.

    The row is recognised by ``src[:, 0]`` (carried through ``memory``), so the script follows the
    row even if a decoder reorders or drops finished rows. Records its calls.
    """

    def __init__(self, scripts, vocab_size):
        self.scripts = scripts  # {row id: list of tokens to emit, step by step}
        self.vocab_size = vocab_size
        self.encode_calls = []
        self.decode_calls = []

    def encode(self, src, src_mask=None):
        self.encode_calls.append((src.clone(), src_mask))
        return src.unsqueeze(-1).double()  # [B, Ls, 1]: the row id sits at memory[:, 0, 0]

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        self.decode_calls.append((tgt.clone(), tgt_mask, memory_mask))
        t = tgt.size(1)
        rows = memory[:, 0, 0].long().tolist()
        emit = torch.tensor([self.scripts[r][:t] for r in rows])  # [B, t]: token emitted after each position
        return F.one_hot(emit, self.vocab_size).double()  # [B, t, V]

    def output_proj(self, hidden):
        return 3.0 * hidden - 1.0


def scripted_src(row_ids, lengths):
    src = torch.full((len(row_ids), max(lengths)), PAD)
    for b, (row, n) in enumerate(zip(row_ids, lengths)):
        src[b, :n] = torch.tensor([row] + [5] * (n - 1))
    return src


def test_greedy_decode_rows_finish_at_different_steps():
    V = 8
    scripts = {  # EOS at steps 0, 3, 1, 2; afterwards the script goes on with real tokens
        10: [EOS, 5, 6, 7, 5, 6],
        11: [4, 5, 6, EOS, 7, 7],
        12: [6, EOS, 4, 4, 4, 4],
        13: [7, 3, EOS, 6, 6, 6],
    }
    src = scripted_src([10, 11, 12, 13], [3, 2, 3, 1])
    model = ScriptedModel(scripts, V)

    out = greedy_decode(model, src, max_len=6, bos_idx=BOS, eos_idx=EOS, pad_idx=PAD)

    expected = torch.tensor(
        [
            [BOS, EOS, PAD, PAD, PAD],
            [BOS, 4, 5, 6, EOS],
            [BOS, 6, EOS, PAD, PAD],
            [BOS, 7, 3, EOS, PAD],
        ]
    )
    assert out.dtype == torch.long
    assert torch.equal(out, expected)  # T = 4 < max_len: stopped once every row had EOS
    assert len(model.encode_calls) == 1
    assert len(model.decode_calls) == 4
    src_keep = (src != PAD)[:, None, None, :]
    assert torch.equal(model.encode_calls[0][1], src_keep)
    for t, (tgt, tgt_mask, memory_mask) in enumerate(model.decode_calls, start=1):
        assert torch.equal(tgt, out[:, :t])
        assert torch.equal(tgt_mask, (tgt != PAD)[:, None, None, :] & torch.ones(t, t, dtype=torch.bool).tril())
        assert torch.equal(memory_mask, src_keep)


@pytest.mark.parametrize("max_len", [1, 3, 5])
def test_greedy_decode_stops_at_max_len(max_len):
    scripts = {20: [4, 5, EOS, 6, 6, 6, 6], 21: [3, 3, 3, 3, 3, 3, 3]}  # row 21 never ends
    src = scripted_src([20, 21], [2, 2])
    out = greedy_decode(ScriptedModel(scripts, 8), src, max_len=max_len, bos_idx=BOS, eos_idx=EOS, pad_idx=PAD)
    assert out.shape == (2, 1 + max_len)
    assert torch.equal(out[0], torch.tensor([BOS, 4, 5, EOS, PAD, PAD][: 1 + max_len]))
    assert torch.equal(out[1], torch.tensor([BOS] + [3] * max_len))


def test_greedy_decode_all_rows_end_at_once():
    scripts = {30: [EOS, 4, 4], 31: [EOS, 5, 5], 32: [EOS, 6, 6]}
    out = greedy_decode(
        ScriptedModel(scripts, 8),
        scripted_src([30, 31, 32], [1, 2, 3]),
        max_len=3,
        bos_idx=BOS,
        eos_idx=EOS,
        pad_idx=PAD,
    )
    assert torch.equal(out, torch.tensor([[BOS, EOS]] * 3))


# --------------------------------------------------------------------------- train_step


def manual_train_step(model, src, tgt, lr, label_smoothing, max_grad_norm):
    """Teacher forcing by hand: shifted targets, masks, fresh gradients, clipping, plain SGD."""
    model.train()
    dec_in, target = tgt[:, :-1], tgt[:, 1:]
    t = dec_in.size(1)
    src_keep = (src != PAD)[:, None, None, :]
    tgt_keep = (dec_in != PAD)[:, None, None, :] & torch.ones(t, t, dtype=torch.bool).tril()
    logits = model(src, dec_in, src_keep, tgt_keep)
    loss = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=PAD, label_smoothing=label_smoothing)
    params = list(model.parameters())
    grads = torch.autograd.grad(loss, params)
    total_norm = torch.sqrt(sum((grad**2).sum() for grad in grads)).item()
    scale = 1.0 if max_grad_norm is None else min(1.0, max_grad_norm / (total_norm + 1e-6))
    with torch.no_grad():
        for p, grad in zip(params, grads):
            p -= lr * scale * grad
    return loss.item(), total_norm


def training_batches(g, steps, B=3, Ls=6, Lt=6, V_src=9, V_tgt=8):
    for _ in range(steps):
        src = padded_tokens(B, Ls, V_src, g)
        body = torch.randint(3, V_tgt, (B, Lt), generator=g)
        lengths = torch.randint(1, Lt - 1, (B,), generator=g)
        pos = torch.arange(Lt)
        tgt = torch.where(pos <= lengths[:, None], body, PAD)  # BOS, then lengths[b] - 1 tokens, EOS at lengths[b]
        tgt[:, 0] = BOS
        tgt[torch.arange(B), lengths] = EOS
        yield src, tgt


@NORM_FIRST
@pytest.mark.parametrize(("label_smoothing", "max_grad_norm"), [(0.0, None), (0.1, None), (0.0, 0.05)])
def test_train_step_matches_manual_step(label_smoothing, max_grad_norm, norm_first):
    lr, steps = 0.1, 4
    torch.manual_seed(0)
    model = Transformer(
        9, 8, d_model=8, num_heads=2, d_ff=16, num_layers=2, max_len=16, dropout=0.0, norm_first=norm_first
    )
    twin = copy.deepcopy(model)
    for p in model.parameters():  # stale gradients that train_step must clear
        p.grad = torch.ones_like(p)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    norms = []
    for src, tgt in training_batches(gen(14), steps):
        loss = train_step(
            model, src, tgt, optimizer, pad_idx=PAD, label_smoothing=label_smoothing, max_grad_norm=max_grad_norm
        )
        expected, total_norm = manual_train_step(twin, src, tgt, lr, label_smoothing, max_grad_norm)
        norms.append(total_norm)
        assert isinstance(loss, float)
        assert math.isclose(loss, expected, rel_tol=RTOL, abs_tol=ATOL)
        for (name, p), q in zip(model.named_parameters(), twin.parameters(), strict=True):
            torch.testing.assert_close(p.detach(), q.detach(), atol=1e-9, rtol=1e-8, msg=name)
    if max_grad_norm is not None:
        assert min(norms) > max_grad_norm  # the clipping took effect at every step
