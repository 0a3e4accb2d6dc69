"""The checks of task ``generate`` (docs/CONTRACT_LM.md).

The isolated checks run the submission's ``generate`` over the reference's ``DecoderLM`` and ``sample_next``
(random weights); the integrated one decodes greedily with the submission's own, so that a ``sample_next`` that
draws another way than the contract's single ``torch.multinomial`` call is not charged here again.
"""

import functools
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import (
    Case,
    Fail,
    check,
    check_tensor,
    defaults_called,
    phrase,
    random_state,
    random_tokens,
    reference_memo,
    seeds,
    shown_example,
)

from .sample import global_generator

MODEL = {"vocab_size": 13, "dim": 8, "num_layers": 2, "num_heads": 2, "hidden_dim": 12, "num_kv_heads": 1}

_TABLES = reference_memo()
"""DecoderLM's constructor arguments -> the reference's parameter names and shapes (the tied weight once)."""


def model_spec(ctx, kwargs, seed):
    """``{"kwargs", "state"}``: random weights for ``DecoderLM(**kwargs)`` under the reference's parameter names
    (the tied weight once, as ``embed.weight``)."""
    key = tuple(sorted(kwargs.items()))
    if key not in _TABLES:
        found = ctx.ref("params", name="DecoderLM", kwargs=kwargs)
        _TABLES[key] = [(n, shape) for n, shape in found["params"] if n in found["values"]]
    return {"kwargs": dict(kwargs), "state": random_state(_TABLES[key], seed)}


@dataclass(frozen=True)
class DecodeCase(Case):
    """One generation: a prompt and how many tokens to add."""

    B: int
    """Batch size."""
    L0: int
    """The prompt's length."""
    n: int
    """max_new_tokens."""
    seed: int
    """Seed of the prompt, of the weights and of the generator."""


@dataclass(frozen=True)
class SeedCase(DecodeCase):
    """One generation with top-k sampling among the options."""

    k: int
    """top_k."""


@st.composite
def decode_case(draw):
    B = draw(st.integers(1, 3))
    L0 = draw(st.integers(1, 4))
    return DecodeCase(B=B, L0=L0, n=draw(st.integers(1, 5)), seed=draw(seeds()))


def _output(got, B, length, ex, what):
    if got["modified"]:
        raise Fail("fail.inplace", what=what, inputs=[1], example=ex)
    out = got["out"]
    if list(out.shape) != [B, length]:
        raise Fail("fail.shape", what=what, expected=[B, length], got=list(out.shape), example=ex)
    if out.dtype != torch.long:
        raise Fail("fail.dtype", what=what, expected="int64", got=str(out.dtype).replace("torch.", ""), example=ex)
    return out


def _forwards(got, B, L0, n, ex):
    """Exactly ``n`` forwards: the prompt with fresh caches, then each new token alone with the same caches."""
    calls = got["calls"]
    if len(calls) != n:
        raise Fail("fail.lm_gen_forwards", n=n, got=len(calls), example=ex)
    for i, call in enumerate(calls):
        expected = [B, L0] if i == 0 else [B, 1]
        if call["shape"] != expected:
            raise Fail("fail.lm_gen_forward_shape", call=i + 1, got=call["shape"], expected=expected, example=ex)
        if not call["cached"]:
            raise Fail("fail.lm_gen_no_cache", call=i + 1, example=ex)
        length = 0 if i == 0 else L0 + i - 1
        if call["length"] != length:
            raise Fail("fail.lm_gen_cache_length", call=i + 1, got=call["length"], expected=length, example=ex)
        if call["grad"]:
            raise Fail("fail.lm_gen_grad", call=i + 1, example=ex)


@check("generate", "decoding", points=4, variant="isolated", given=decode_case())
def decoding(ctx, c):
    """[B, L0 + n] long on the prompt's device, the prompt kept, exactly n forwards ([B, L0] with fresh caches,
    then [B, 1] with the same caches; none when n = 0), no gradients, the training flag left as it was."""
    model = model_spec(ctx, MODEL, c.seed)
    prompt = random_tokens([c.B, c.L0], MODEL["vocab_size"], c.seed)
    for device in ctx.devices:
        for n, train, options in ((c.n, True, {}), (c.n, False, {"top_k": 5, "temperature": 0.8}), (0, True, {})):
            ex = shown_example(dict(options, max_new_tokens=n, model_training=train, device=device), prompt=[c.B, c.L0])
            got = ctx.sub(
                "lm_generate",
                model=model,
                prompt=prompt,
                max_new_tokens=n,
                seed=c.seed,
                train=train,
                device=device,
                **options,
            )
            what = f"generate(max_new_tokens={n})"
            out = _output(got, c.B, c.L0 + n, ex, what)
            if got["device"] != device.split(":")[0]:
                raise Fail("fail.device", what=what, expected=device, got=got["device"], example=ex)
            kept = out[:, : c.L0] != prompt
            if kept.any():
                raise Fail("fail.lm_gen_prompt", index=[int(i) for i in kept.nonzero()[0]], example=ex)
            _forwards(got, c.B, c.L0, n, ex)
            if got["requires_grad"]:
                raise Fail("fail.lm_gen_output_grad", example=ex)
            if got["training_after"] != train:
                raise Fail("fail.lm_gen_training", before=train, after=got["training_after"], example=ex)


@st.composite
def seed_case(draw):
    B = draw(st.integers(1, 3))
    L0 = draw(st.integers(1, 4))
    n = draw(st.integers(1, 6))
    return SeedCase(B=B, L0=L0, n=n, k=draw(st.integers(2, 8)), seed=draw(seeds()))


@check("generate", "same_seed", points=3, variant="isolated")
def same_seed(ctx):
    """With the same seeded generator, the same tokens as the reference (temperature, top-k, top-p passed on to
    sample_next once per step, on the last position's logits); called without temperature, top_k or top_p, the
    same tokens as with the contract's defaults."""
    ctx.given(seed_case())(functools.partial(_same_seed, ctx))()
    # rows sampled over a large vocabulary: a default that filters or sharpens at all changes some token
    config = dict(MODEL, vocab_size=300)
    args = {
        "model": model_spec(ctx, config, 5),
        "prompt": random_tokens([8, 2], config["vocab_size"], 5),
        "max_new_tokens": 4,
        "seed": 5,
    }
    defaults_called(
        ctx,
        what="generate",
        probe="lm_generate",
        args=args,
        arguments=("temperature", "top_k", "top_p"),
        compare=("out",),
        example=shown_example(dict(config, max_new_tokens=4, generator_seed=5), prompt=[8, 2]),
    )
    # without a generator, torch's global one draws: the same global seed, the reference's tokens
    ref, got = ctx.both("lm_generate", **args, omit=["generator"])
    global_generator(
        "generate",
        ref["out"],
        _output(got, 8, 6, {}, "generate"),
        example=shown_example(
            dict(config, max_new_tokens=4, generator=phrase("what.default"), global_seed=6), prompt=[8, 2]
        ),
    )


def _same_seed(ctx, c):
    model = model_spec(ctx, MODEL, c.seed)
    prompt = random_tokens([c.B, c.L0], MODEL["vocab_size"], c.seed)
    for options in (
        {"temperature": 1.0},
        {"temperature": 0.7, "top_k": c.k},
        {"temperature": 1.3, "top_p": 0.8},
        {"temperature": 0.9, "top_k": c.k, "top_p": 0.9},
    ):
        ex = shown_example(dict(options, max_new_tokens=c.n, generator_seed=c.seed), prompt=[c.B, c.L0])
        ref, got = ctx.both("lm_generate", model=model, prompt=prompt, max_new_tokens=c.n, seed=c.seed, **options)
        what = phrase("what.output", name=f"generate(max_new_tokens={c.n})")
        out = _output(got, c.B, c.L0 + c.n, ex, what)
        check_tensor(out, ref["out"], what=what, example=ex)


@st.composite
def greedy_case(draw):
    B = draw(st.integers(1, 3))
    L0 = draw(st.integers(1, 4))
    return DecodeCase(B=B, L0=L0, n=draw(st.integers(1, 6)), seed=draw(seeds()))


@check("generate", "greedy", points=2, examples=(2, 10), given=greedy_case())
def greedy(ctx, c):
    """With temperature 0, on your own DecoderLM, cache and sample_next: the reference's greedy tokens."""
    model = model_spec(ctx, MODEL, c.seed)
    prompt = random_tokens([c.B, c.L0], MODEL["vocab_size"], c.seed)
    ex = shown_example({"temperature": 0, "max_new_tokens": c.n}, prompt=[c.B, c.L0])
    ref, got = ctx.both("lm_generate", model=model, prompt=prompt, max_new_tokens=c.n, temperature=0.0)
    what = phrase("what.output", name=f"generate(max_new_tokens={c.n}, temperature=0)")
    out = _output(got, c.B, c.L0 + c.n, ex, what)
    check_tensor(out, ref["out"], what=what, example=ex)
