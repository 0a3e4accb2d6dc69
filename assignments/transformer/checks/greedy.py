"""Checks for ``greedy_decode`` (task ``greedy``)."""

import functools
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, phrase, random_tokens, ref_state, seeds, shown_example

BOS, EOS, PAD = 1, 2, 0


def _compare(ctx, args, ex):
    ref, got = ctx.both("greedy", **args)
    if got.get("modified"):
        raise Fail("fail.inplace", what="greedy_decode", inputs=[1], example=ex)
    out = got["out"]
    if out.dtype != torch.long:
        raise Fail(
            "fail.dtype", what="greedy_decode", expected="int64", got=str(out.dtype).replace("torch.", ""), example=ex
        )
    if out.dim() == 2 and out.shape[0] == ref["out"].shape[0] and out.shape[1] > args["max_len"] + 1:
        raise Fail("fail.greedy_too_long", max_len=args["max_len"], got=out.shape[1] - 1, example=ex)
    check_tensor(out, ref["out"], what=phrase("what.output", name="greedy_decode"), example=ex)


@dataclass(frozen=True)
class ScriptedCase(Case):
    """One example of greedy decoding on the scripted stand-in model."""

    B: int
    """Batch size."""
    max_len: int
    """greedy_decode's max_len."""
    stops: list
    """For each row, the step at which the stand-in model emits EOS."""
    vocab: int
    """The stand-in model's vocabulary size."""
    seed: int
    """Seed of the source tokens."""


@st.composite
def scripted_case(draw):
    B = draw(st.integers(1, 4))
    max_len = draw(st.integers(1, 7))
    stops = draw(st.lists(st.integers(1, 9), min_size=B, max_size=B))
    return ScriptedCase(B=B, max_len=max_len, stops=stops, vocab=draw(st.integers(7, 10)), seed=draw(seeds()))


EVERY_ROW_ENDS = ScriptedCase(B=3, max_len=6, stops=[1, 4, 2], vocab=8, seed=5)
"""Rows that end at different steps, all before ``max_len``: decoding must stop once the last has ended (drawn cases
often leave some row running to ``max_len``, where stopping early cannot show)."""


@check("greedy", "scripted", points=4, examples=(5, 30))
def scripted(ctx):
    """On a stand-in model whose rows end at different steps: BOS first, PAD after EOS, stop early, max_len kept,
    and the contract's masks passed to encode/decode."""
    ctx.given(scripted_case(), explicit=[(EVERY_ROW_ENDS,)])(functools.partial(_scripted, ctx))()


def _scripted(ctx, c):
    src = random_tokens([c.B, 3], c.vocab, c.seed, low=3)
    src[-1, -1] = PAD  # one padded source position: the source mask must hide it
    args = dict(
        src=src, max_len=c.max_len, bos_idx=BOS, eos_idx=EOS, pad_idx=PAD, scripted={"stops": c.stops, "vocab": c.vocab}
    )
    _compare(ctx, args, shown_example({"max_len": c.max_len, "eos_step_per_row": c.stops}, src=src))


@dataclass(frozen=True)
class ModelCase(Case):
    """One example of greedy decoding on a Transformer with random weights."""

    B: int
    """Batch size."""
    Ls: int
    """Source length."""
    max_len: int
    """greedy_decode's max_len."""
    norm_first: bool
    """Pre-LN (True) or Post-LN (False)."""
    seed: int
    """Seed of the source tokens and of the parameters."""


@st.composite
def model_case(draw):
    B = draw(st.integers(1, 4))
    Ls = draw(st.integers(1, 6))
    max_len = draw(st.integers(1, 8))
    return ModelCase(B=B, Ls=Ls, max_len=max_len, norm_first=draw(st.booleans()), seed=draw(seeds()))


def model_args(ctx, c):
    """``(args of the greedy probe, the example shown)`` of a real-model case."""
    kw = {
        "src_vocab_size": 9,
        "tgt_vocab_size": 7,
        "d_model": 8,
        "num_heads": 2,
        "d_ff": 12,
        "num_layers": 2,
        "max_len": 32,
        "dropout": 0.0,
        "norm_first": c.norm_first,
    }
    state = ref_state(ctx, "Transformer", kw, c.seed)
    # A large bias on EOS for some seeds makes rows finish at different times.
    state["output_proj.bias"] = state["output_proj.bias"].clone()
    state["output_proj.bias"][EOS] += (c.seed % 3) * 0.7
    src = random_tokens([c.B, c.Ls], 9, c.seed, low=0)
    src[:, 0] = 3  # never an all-padding source row
    args = dict(src=src, max_len=c.max_len, bos_idx=BOS, eos_idx=EOS, pad_idx=PAD, model={"kwargs": kw, "state": state})
    return args, {"config": dict(kw, max_len=c.max_len), "shapes": {"src": list(src.shape)}}


def _real_model(ctx):
    @ctx.given(model_case())
    def prop(c):
        _compare(ctx, *model_args(ctx, c))

    prop()


@check("greedy", "equivalence", points=4, variant="isolated", examples=(3, 20))
def equivalence(ctx):
    """On the reference Transformer with random weights (padded sources), the same tokens as the reference."""
    _real_model(ctx)


@check("greedy", "integrated", points=2, examples=(2, 10))
def integrated(ctx):
    """The same, on your own Transformer and masks."""
    _real_model(ctx)
