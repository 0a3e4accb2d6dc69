"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief).
Isolated, ``model`` is the reference's ``Transformer`` (or the kit's scripted model) and the masks are the
reference's: each is searched, called and made to fail."""

from . import _thief

_thief.hunt("import:decoding.py", stage="import")


def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    handed = [model, src, getattr(model, "encoder", None), getattr(model, "decoder", None)] + _thief.deps()
    _thief.hunt("greedy_decode", handed)
    _thief.call_part("greedy_decode:memory", getattr(model, "encode", None), src)
    raise _thief.short_error("greedy_decode")
