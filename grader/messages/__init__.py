"""The message catalogue: every user-facing sentence, in English and Chinese.

Check code raises ``Fail("fail.mismatch", what=..., ...)``; views call
``render(message, lang)``. Missing parameters render as ``?`` rather than
failing, so a view never crashes on a message.
"""

import importlib
import pkgutil
import string

LANGS = ("en", "zh")


def _modules(package, lang):
    """``<package>.<lang>`` and every ``<package>.<part>_<lang>`` module, in name order."""
    pkg = importlib.import_module(package)
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name == lang or m.name.endswith(f"_{lang}"))
    return [importlib.import_module(f"{package}.{name}") for name in names]


def _catalogue(package, lang):
    messages = {}
    for module in _modules(package, lang):
        messages.update(module.MESSAGES)
    return messages


CATALOGUES = {lang: _catalogue("grader.messages", lang) for lang in LANGS}
"""The kit's sentences (``grader/messages``), then each loaded assignment's (``register``)."""
_REGISTERED = set()


class MessageClash(ValueError):
    """An assignment defines a key the kit or another assignment already defines differently."""


def register(assignment):
    """Merge ``assignment``'s sentences (its ``messages`` package) into the catalogue, once. A key may not be
    redefined with another text: ``MessageClash`` names it."""
    package = assignment.messages
    if not package or package in _REGISTERED:
        return
    adding = {lang: _catalogue(package, lang) for lang in LANGS}
    for lang, messages in adding.items():
        for key, value in messages.items():
            if CATALOGUES[lang].get(key, value) != value:
                raise MessageClash(f"assignment {assignment.name!r} redefines message {key!r} ({lang}); "
                                   f"expected a key of its own")
    for lang, messages in adding.items():
        CATALOGUES[lang].update(messages)
    _REGISTERED.add(package)


def quiz_messages(quiz):
    """``{id: (question, [options], why)}`` or ``{id: (question, why)}`` (a numeric answer) -> the quiz's message
    keys ``quiz.<id>.q``, ``.why`` and ``.a``-``.d``: how an assignment writes its quiz in each language."""
    out = {}
    for qid, entry in quiz.items():
        out[f"quiz.{qid}.q"] = entry[0]
        out[f"quiz.{qid}.why"] = entry[-1]
        if len(entry) == 3:
            for letter, option in zip("abcd", entry[1]):
                out[f"quiz.{qid}.{letter}"] = option
    return out


class _Params(dict):
    def __missing__(self, key):
        return "?"


NOTHING = {"en": "none", "zh": "无"}
"""An empty list in a sentence ("Missing: none."), not ``[]``."""


def _fmt(value, lang="en"):
    if isinstance(value, (list, tuple)):
        if not value:
            return NOTHING.get(lang, NOTHING["en"])
        return "[" + ", ".join(_fmt(v, lang) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def has_text(key):
    """Whether ``key`` has a sentence (in English, which every key has)."""
    return key in CATALOGUES["en"]


def text(key, lang="en", **params):
    """The sentence for ``key`` in ``lang`` (English when the language lacks it), filled in."""
    catalogue = CATALOGUES.get(lang, CATALOGUES["en"])
    template = catalogue.get(key) or CATALOGUES["en"].get(key) or key
    return string.Formatter().vformat(template, (), _Params({k: _fmt(v, lang) for k, v in params.items()}))


def render(message, lang="en"):
    """Render a ``results.Message`` (or ``None``) in ``lang``."""
    if message is None:
        return ""
    return text(message.key, lang, **message.params)
