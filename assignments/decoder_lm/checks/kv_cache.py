"""Checks for ``KVCache`` (task ``kv_cache``). Every expectation is a concatenation of the given tensors, computed
here; no reference is needed."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, distinct_ints, phrase, randn, seeds, shown_example


@dataclass(frozen=True)
class CacheCase(Case):
    """A run of updates of one KVCache."""

    B: int
    """Batch size."""
    Hkv: int
    """Number of key/value heads."""
    Dh: int
    """Head dimension."""
    lengths: list
    """The length of each update's keys and values, in order."""
    seed: int
    """Seed of the keys and values."""

    def example(self):
        """The example a report shows."""
        return shown_example(
            {"batch": self.B, "kv_heads": self.Hkv, "head_dim": self.Dh, "update_lengths": self.lengths}
        )


@st.composite
def cache_case(draw):
    B, Hkv, Dh = draw(distinct_ints(3, min_value=1, max_value=5))
    first = draw(st.integers(2, 5))
    later = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    return CacheCase(B=B, Hkv=Hkv, Dh=Dh, lengths=[first, 1] + later, seed=draw(seeds()))


def updates_of(c):
    return [
        [randn([c.B, c.Hkv, L, c.Dh], c.seed + 2 * i), randn([c.B, c.Hkv, L, c.Dh], c.seed + 2 * i + 1)]
        for i, L in enumerate(c.lengths)
    ]


@check("kv_cache", "empty", points=1, examples=(1, 1))
def empty(ctx):
    """A new KVCache() has keys and values None and length 0 (an int)."""
    got = ctx.sub("lm_cache_ops", updates=[])["empty"]
    if not (got["keys_none"] and got["values_none"]):
        raise Fail("fail.lm_cache_not_empty", example={"config": {}})
    if got["length"] != 0:
        raise Fail("fail.lm_cache_length", step=0, got=got["length"], expected=0, example={"config": {}})


def _expect(got, c, ex, dtype=torch.float64):
    updates = updates_of(c)
    if got["modified"]:
        raise Fail("fail.inplace", what="KVCache.update", inputs=got["modified"], example=ex)
    total = 0
    for i, (step, given) in enumerate(zip(got["steps"], updates)):
        total += given[0].shape[2]
        keys = torch.cat([u[0] for u in updates[: i + 1]], dim=2)
        values = torch.cat([u[1] for u in updates[: i + 1]], dim=2)
        exi = dict(ex, update=i + 1)
        for label, tensors in (("returned", step["returned"]), ("held", step["held"])):
            for j, (name, t, expected) in enumerate((("keys", tensors[0], keys), ("values", tensors[1], values))):
                what = f"KVCache.update(...)[{j}]" if label == "returned" else f"KVCache.{name}"
                if t is None:
                    raise Fail("fail.lm_cache_none", what=what, update=i + 1, example=exi)
                what_i = phrase("what.update", what=what, update=i + 1)
                if t.device.type == "meta":
                    _meta_shape(t, expected, what_i, exi)
                else:
                    check_tensor(t, expected.to(dtype), what=what_i, example=exi)
        if step["length"] != total:
            raise Fail("fail.lm_cache_length", step=i + 1, got=step["length"], expected=total, example=exi)


def _meta_shape(t, expected, what, example):
    if list(t.shape) != list(expected.shape):
        raise Fail("fail.shape", what=what, expected=list(expected.shape), got=list(t.shape), example=example)


@check("kv_cache", "update", points=5, examples=(4, 30), given=cache_case())
def update(ctx, c):
    """Each update appends along dim 2 (the sequence axis) and returns the whole cache; keys, values and length
    read the same afterwards; the given tensors are not modified."""
    got = ctx.sub("lm_cache_ops", updates=updates_of(c))
    _expect(got, c, c.example())


@check("kv_cache", "devices", points=1, examples=(1, 3), given=cache_case())
def devices(ctx, c):
    """Updates in float16 and bfloat16 keep their dtype; on the meta device the cache grows there (no buffer made
    on the CPU)."""
    for dtype in ("float16", "bfloat16"):
        got = ctx.sub("lm_cache_ops", updates=updates_of(c), dtype=dtype)
        _expect(got, c, dict(c.example(), dtype=dtype), getattr(torch, dtype))
    got = ctx.sub("lm_cache_ops", updates=updates_of(c), device="meta")
    for i, step in enumerate(got["steps"]):
        for t in step["returned"] + [x for x in step["held"] if x is not None]:
            if t.device.type != "meta":
                raise Fail(
                    "fail.device",
                    what="KVCache.update",
                    expected="meta",
                    got=t.device.type,
                    example=dict(c.example(), update=i + 1),
                )
    _expect(got, c, dict(c.example(), device="meta"))
