"""The message catalogue: every user-facing sentence, in English and Chinese.

Check code raises ``Fail("fail.mismatch", what=..., ...)``; views call
``render(message, lang)``. Missing parameters render as ``?`` rather than
failing, so a view never crashes on a message.
"""

import importlib
import importlib.util
import string

LANGS = ("en", "zh")
# The core messages (en.py, zh.py) plus one pair of modules per feature: <part>_en.py, <part>_zh.py.
PARTS = ("bugs", "practice", "batch", "snapshot", "fairness")


def _catalogue(lang):
    messages = dict(importlib.import_module(f"grader.messages.{lang}").MESSAGES)
    for part in PARTS:
        name = f"grader.messages.{part}_{lang}"
        if importlib.util.find_spec(name) is not None:
            messages.update(importlib.import_module(name).MESSAGES)
    return messages


CATALOGUES = {lang: _catalogue(lang) for lang in LANGS}


class _Params(dict):
    def __missing__(self, key):
        return "?"


def _fmt(value):
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def text(key, lang="en", **params):
    """The sentence for ``key`` in ``lang`` (English when the language lacks it), filled in."""
    catalogue = CATALOGUES.get(lang, CATALOGUES["en"])
    template = catalogue.get(key) or CATALOGUES["en"].get(key) or key
    return string.Formatter().vformat(template, (), _Params({k: _fmt(v) for k, v in params.items()}))


def render(message, lang="en"):
    """Render a ``results.Message`` (or ``None``) in ``lang``."""
    if message is None:
        return ""
    return text(message.key, lang, **message.params)
