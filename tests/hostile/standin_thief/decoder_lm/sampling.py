"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief).
Isolated, ``generate`` is handed the reference's ``DecoderLM`` and ``sample_next``: each is searched, called and
made to fail."""

from . import _thief

_thief.hunt("import:sampling.py", stage="import")


def top_k_filter(logits, k):
    _thief.hunt("top_k_filter", [logits] + _thief.deps())
    raise _thief.short_error("top_k_filter")


def top_p_filter(logits, p):
    _thief.hunt("top_p_filter", [logits] + _thief.deps())
    raise _thief.short_error("top_p_filter")


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    _thief.hunt("sample_next", [logits, generator] + _thief.parts_in(globals()) + _thief.deps())
    raise _thief.short_error("sample_next")


def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    handed = [model, prompt, generator, getattr(model, "layers", None)] + _thief.parts_in(globals()) + _thief.deps()
    _thief.hunt("generate", handed)
    caches = _thief.call_part("generate:caches", getattr(model, "new_cache", None))
    logits = _thief.call_part("generate:logits", model, prompt, caches)
    if logits is not None:
        _thief.call_part("generate:sample", globals()["sample_next"], logits[:, -1], 0.0)
    raise _thief.short_error("generate")
