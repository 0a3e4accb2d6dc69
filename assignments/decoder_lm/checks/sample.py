"""The checks of task ``sample`` (``sample_next``, docs/CONTRACT_LM.md).

How the credit is shared. ``distribution`` (the most points) is a statistical test of what is drawn, whatever the
drawing scheme: a correct sampler that draws another way (a ``torch.multinomial`` call per row, Gumbel noise,
``torch.distributions``) passes it. ``same_seed`` asks for the contract's single ``torch.multinomial(probs,
num_samples=1, generator=generator)`` call on the ``[B, V]`` probabilities, which is what makes a seed reproduce
the reference's tokens; another scheme loses these points only, and its message says it breaks that rule of the
contract. ``greedy`` is temperature 0. ``generate``'s checks draw through the reference's ``sample_next`` or
greedily, so a drawing scheme is never charged twice.
"""

import functools
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, Fail, check, defaults_called, phrase, randn, seeds, shown_example

from .top_k import quarter_logits
from .top_p import safe_p

ALPHA = 1e-6
"""The false-alarm rate of ``distribution`` as a whole: a correct sampler fails it once in a million runs at most
(each of its row tests runs at ``ALPHA / number of tests``, Bonferroni)."""

DRAWS = 10_000
"""Draws per row in ``distribution``: a shift of 0.05 in one token's probability gives a chi-square near 100,
against a threshold of 29 to 42 (1 to 5 degrees of freedom, at ``ALPHA / 12``)."""

BASE = [[0.34, 0.22, 0.16, 0.12, 0.09, 0.07], [0.05, 0.1, 0.45, 0.05, 0.3, 0.05]]
"""Two rows (so that rows mixed up show) whose probabilities make every known mistake move the distribution."""

SCENARIOS = (
    (1.0, None, None),  # plain sampling
    (0.6, None, None),  # temperature ignored, applied after the softmax or multiplied: a sharper row expected
    (1.7, 3, None),  # temperature with top-k
    (1.7, None, 0.6),  # top-p on the tempered probabilities, not the raw ones
    (1.0, 2, 0.55),  # top-p after top-k (renormalised): one token survives, not two
    (0.6, 4, 0.7),  # all three
)
"""``(temperature, top_k, top_p)``; every ``top_p`` is at least 0.008 from the partial sums it meets."""


def _config(temperature, top_k, top_p):
    return {"temperature": temperature, "top_k": top_k, "top_p": top_p}


def tokens_of(got, B, what, ex):
    """The ``long [B]`` tensor ``sample_next`` returned (else a failure)."""
    out = got["out"]
    if list(out.shape) != [B]:
        raise Fail("fail.shape", what=what, expected=[B], got=list(out.shape), example=ex)
    if out.dtype != torch.long:
        raise Fail("fail.dtype", what=what, expected="int64", got=str(out.dtype).replace("torch.", ""), example=ex)
    return out


def intended(ctx, logits, temperature, top_k, top_p):
    """softmax(top_p(top_k(logits / temperature))) by the reference's filters, float64."""
    x = logits.to(torch.float64) / temperature
    if top_k is not None:
        x = ctx.ref("call", name="top_k_filter", args=[x, top_k])["out"]
    if top_p is not None:
        x = ctx.ref("call", name="top_p_filter", args=[x, top_p])["out"]
    return x.softmax(dim=-1)


def chi_square(counts, probs):
    """``(statistic, degrees of freedom, p-value, most off token)`` of counts against probabilities (over the
    tokens of positive probability)."""
    n = float(counts.sum())
    support = probs > 0
    expected = probs[support] * n
    observed = counts[support].to(torch.float64)
    terms = (observed - expected) ** 2 / expected
    stat = float(terms.sum())
    df = int(support.sum()) - 1
    if df == 0:
        return stat, 0, 1.0, 0
    pvalue = float(
        torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64))
    )
    worst = int(support.nonzero()[int(terms.argmax())])
    return stat, df, pvalue, worst


@check("sample", "distribution", points=5, variant="isolated", examples=(1, 1))
def distribution(ctx):
    """The frequencies of 10,000 draws per row match softmax(top_p(top_k(logits / temperature))) (a chi-square
    test per row, false-alarm rate 1e-6 for the whole check), and no filtered-out token is ever drawn; whatever
    the drawing scheme."""
    logits = torch.tensor(BASE, dtype=torch.float64).log()
    tests = len(SCENARIOS) * logits.shape[0]
    base_seed = 1234 if ctx.seed is None else ctx.seed
    for i, (temperature, top_k, top_p) in enumerate(SCENARIOS):
        cfg = _config(temperature, top_k, top_p)
        ex = shown_example(dict(cfg, draws_per_row=DRAWS, probabilities=BASE))
        got = ctx.sub(
            "lm_sample_counts",
            logits=logits,
            repeats=DRAWS,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            seed=base_seed + i,
        )
        if "bad_output" in got:
            bad = got["bad_output"]
            what = phrase("what.sample_on", name="sample_next", shape=[logits.shape[0] * DRAWS, logits.shape[1]])
            if bad["dtype"] != "int64":
                raise Fail("fail.dtype", what=what, expected="int64", got=bad["dtype"], example=ex)
            raise Fail("fail.shape", what=what, expected=[logits.shape[0] * DRAWS], got=bad["shape"], example=ex)
        probs = intended(ctx, logits, temperature, top_k, top_p)
        counts = got["counts"]
        if got["outside"]:
            raise Fail("fail.lm_sample_range", count=got["outside"], V=logits.shape[1], example=ex)
        for row in range(logits.shape[0]):
            banned = (probs[row] == 0) & (counts[row] > 0)
            if banned.any():
                token = int(banned.nonzero()[0])
                raise Fail(
                    "fail.lm_sample_outside",
                    token=token,
                    row=row,
                    count=int(counts[row, token]),
                    n=DRAWS,
                    example=ex,
                    **cfg,
                )
            stat, df, pvalue, worst = chi_square(counts[row], probs[row])
            if pvalue < ALPHA / tests:
                raise Fail(
                    "fail.lm_sample_distribution",
                    row=row,
                    n=DRAWS,
                    stat=f"{stat:.1f}",
                    df=df,
                    pvalue=f"{pvalue:.2g}",
                    token=worst,
                    observed=int(counts[row, worst]),
                    expected=f"{float(probs[row, worst]) * DRAWS:.0f}",
                    alpha=ALPHA,
                    example=ex,
                    **cfg,
                )


@dataclass(frozen=True)
class DrawCase(Case):
    """One draw of sample_next over random logits."""

    B: int
    """Number of rows."""
    V: int
    """Vocabulary size."""
    temperature: float
    """The temperature."""
    k: int
    """top_k, where used."""
    u: float
    """Where between two cumulative probabilities a safe top_p is put (see ``safe_p``)."""
    pick: int
    """Which gap between cumulative probabilities a safe top_p is put in (see ``safe_p``)."""
    seed: int
    """Seed of the logits and of the generator."""


@st.composite
def draw_case(draw):
    B = draw(st.integers(1, 4))
    V = draw(st.integers(2, 10))
    temperature = draw(st.sampled_from([0.5, 1.0, 1.7]))
    k = draw(st.integers(1, V))
    u = draw(st.floats(0.0, 1.0))
    return DrawCase(B=B, V=V, temperature=temperature, k=k, u=u, pick=draw(st.integers(0, 20)), seed=draw(seeds()))


def _safe_top_p(ctx, logits, temperature, top_k, u, pick):
    x = logits.to(torch.float64) / temperature
    if top_k is not None:
        x = ctx.ref("call", name="top_k_filter", args=[x, top_k])["out"]
    return safe_p(x, u, pick) or 0.5


@check("sample", "same_seed", points=3, variant="isolated")
def same_seed(ctx):
    """With the same seeded generator, the same tokens as the reference: temperature, top-k, top-p, softmax, then
    exactly one torch.multinomial(probs, num_samples=1, generator=generator) on [B, V]; called without temperature,
    top_k or top_p, the same tokens as with the contract's defaults."""
    ctx.given(draw_case())(functools.partial(_same_seed, ctx))()
    # many rows over a large vocabulary: a default that filters or sharpens at all changes some row's token
    logits = randn([32, 300], 5, scale=2.0)
    defaults_called(
        ctx,
        what="sample_next",
        probe="lm_sample_draw",
        args={"logits": logits, "seed": 5},
        arguments=("temperature", "top_k", "top_p"),
        compare=("out",),
        example={"shapes": {"logits": [32, 300]}, "config": {"generator_seed": 5}},
    )
    # without a generator, torch's global one draws: the same global seed, the reference's tokens
    ref, got = ctx.both("lm_sample_draw", logits=logits, seed=5, use_generator=False)
    global_generator(
        "sample_next",
        ref["out"],
        got["out"],
        example={"shapes": {"logits": [32, 300]}, "config": {"generator": phrase("what.default"), "global_seed": 6}},
    )


def global_generator(what, expected, got, *, example):
    """Fail unless ``got`` (tokens drawn without a generator, the global one seeded) is ``expected``."""
    if got.shape != expected.shape or not torch.equal(got, expected):
        bad = (got != expected).nonzero() if got.shape == expected.shape else None
        where = [int(i) for i in bad[0]] if bad is not None and len(bad) else []
        raise Fail("fail.lm_global_generator", what=what, index=where, example=example)


def _same_seed(ctx, c):
    logits = randn([c.B, c.V], c.seed, scale=2.0)
    T = c.temperature
    for top_k, use_p in ((c.k, True), (None, False), (c.k, False), (None, True)):  # the filters used first
        top_p = _safe_top_p(ctx, logits, T, top_k, c.u, c.pick) if use_p else None
        cfg = _config(T, top_k, top_p)
        ex = shown_example(dict(cfg, generator_seed=c.seed), logits=[c.B, c.V])
        args = dict(logits=logits, temperature=T, top_k=top_k, top_p=top_p, seed=c.seed)
        ref, got = ctx.both("lm_sample_draw", **args)
        if got["modified"]:
            raise Fail("fail.inplace", what="sample_next", inputs=[0], example=ex)
        out = tokens_of(got, c.B, "sample_next", ex)
        calls = got["multinomial"]
        if len(calls) != 1 or calls[0]["shape"] != [c.B, c.V] or calls[0]["num_samples"] != 1:
            raise Fail(
                "fail.lm_multinomial",
                calls=len(calls),
                shapes=[f"{x['shape']}, num_samples={x['num_samples']}" for x in calls[:4]],
                expected=[c.B, c.V],
                example=ex,
            )
        if not got["generator_used"]:
            raise Fail("fail.lm_no_generator", example=ex)
        bad = out != ref["out"]
        if bad.any():
            row = int(bad.nonzero()[0])
            wanted = ref["multinomial"][0]["probs"]
            given = calls[0]["probs"]
            diff = float((given - wanted).abs().max())
            raise Fail(
                "fail.lm_same_seed",
                row=row,
                count=int(bad.sum()),
                total=c.B,
                max_abs=f"{diff:.3g}",
                dtype=calls[0]["dtype"],
                expected_dtype=ref["multinomial"][0]["dtype"],
                example=ex,
            )


@dataclass(frozen=True)
class GreedyCase(Case):
    """Random logits sampled at temperature 0."""

    B: int
    """Number of rows."""
    V: int
    """Vocabulary size."""
    k: int
    """top_k, where used."""
    seed: int
    """Seed of the logits and of the generator."""


@st.composite
def greedy_case(draw):
    B = draw(st.integers(1, 4))
    V = draw(st.integers(2, 10))
    return GreedyCase(B=B, V=V, k=draw(st.integers(1, 3)), seed=draw(seeds()))


@check("sample", "greedy", points=2, given=greedy_case())
def greedy(ctx, c):
    """temperature=0: the argmax of each row (the lowest index among equal maxima: row 0 has a tie), with or
    without filters, and no random number drawn (neither the generator given nor the global one)."""
    logits = quarter_logits([c.B, c.V], c.seed, 1)  # row 0: its two largest are equal
    for top_k, top_p, use_generator in ((None, None, True), (c.k, 0.5, True), (None, None, False)):
        cfg = _config(0, top_k, top_p)
        ex = shown_example(dict(cfg, generator="given" if use_generator else "None"), logits=[c.B, c.V])
        ref, got = ctx.both(
            "lm_sample_draw",
            logits=logits,
            temperature=0.0,
            top_k=top_k,
            top_p=top_p,
            seed=c.seed,
            use_generator=use_generator,
            dtype="float64",
        )
        if got["modified"]:
            raise Fail("fail.inplace", what="sample_next", inputs=[0], example=ex)
        out = tokens_of(got, c.B, "sample_next(temperature=0)", ex)
        bad = out != ref["out"]
        if bad.any():
            row = int(bad.nonzero()[0])
            raise Fail("fail.lm_greedy", row=row, got=int(out[row]), example=ex)
        for used, which in ((got["generator_used"], "generator"), (got["global_used"], "torch.default_generator")):
            if used:
                raise Fail("fail.lm_greedy_rng", which=which, example=ex)
