"""A name that stands for several mistakes no check can tell apart states the effect they share and lists the usual
causes, in every language: a student whose gradients are clipped after ``optimizer.step()`` is not told that
``max_grad_norm`` is never used.

The catalogue keeps such mistakes in ``EQUIVALENT`` (each says which entry of ``BUGS`` it behaves like) and the
entries of ``BUGS`` that stand for them in ``SAME_EFFECT``."""

import importlib
import re

import pytest

from grader.assignment import load
from grader.messages import text

ASSIGNMENTS = ("transformer", "decoder_lm")
CAUSES = {"en": "Usual causes:", "zh": "常见原因："}


def _catalogue(name):
    module = importlib.import_module(f"assignments.{name}.bugs")
    load(name)  # registers the assignment's messages
    return {b.id for b in module.BUGS}, module.EQUIVALENT, getattr(module, "SAME_EFFECT", {})


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_every_equivalent_mistake_is_listed_under_the_entry_it_behaves_like(name):
    ids, equivalent, same_effect = _catalogue(name)
    for mistake, why in equivalent.items():
        named = [i for i in ids if re.search(rf"\b{re.escape(i)}\b", why)]
        for target in named:
            assert mistake in same_effect.get(target, ()), f"{mistake} behaves like {target}: list it in SAME_EFFECT"
    for target, mistakes in same_effect.items():
        assert target in ids
        assert mistakes and all(m in equivalent for m in mistakes)


@pytest.mark.parametrize("lang", sorted(CAUSES))
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_an_entry_standing_for_several_mistakes_says_the_effect_and_the_causes(name, lang):
    _ids, _equivalent, same_effect = _catalogue(name)
    for target, mistakes in same_effect.items():
        sentence = text(f"bug.{target}", lang)
        assert CAUSES[lang] in sentence, f"bug.{target} ({lang}) names one cause: {sentence}"
        effect, causes = sentence.split(CAUSES[lang], 1)
        assert effect.strip() and causes.strip()
        # one cause for the entry itself and one for each mistake it stands for
        separators = causes.count(";") + causes.count("；") + causes.count(", or ") + causes.count("或")
        assert separators >= len(mistakes), f"bug.{target} ({lang}) lists fewer causes than it stands for"
