"""The message catalogue: every user-facing sentence, in English and Chinese.

Check code raises ``Fail("fail.mismatch", what=..., ...)``; views call
``render(message, lang)``. Missing parameters render as ``?`` rather than
failing, so a view never crashes on a message.

A parameter is data (a name, a shape, a number, a path, the student's own text) or a phrase: words a reader
reads, made with ``phrase(key, **params)`` and rendered in the sentence's language when the sentence is, so a
Chinese sentence never carries an English phrase ("causal_attention output" is ``phrase("what.output",
name="causal_attention")``). A phrase is plain data (a dict), so it crosses processes and JSON unchanged.
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
                raise MessageClash(
                    f"assignment {assignment.name!r} redefines message {key!r} ({lang}); expected a key of its own"
                )
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


PHRASE = "phrase"
"""The key that marks a parameter as a phrase: ``{"phrase": key, "params": {...}}``."""


def phrase(key, **params):
    """A translatable phrase to pass as a message parameter: the sentence for ``key`` (a catalogue key, usually
    ``what.*``) with ``params``, rendered in the language the enclosing sentence is rendered in. Its own
    parameters may be phrases too."""
    return {PHRASE: key, "params": params}


def is_phrase(value):
    """Whether ``value`` is a phrase made by ``phrase`` (or its copy read back from JSON)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get(PHRASE), str)
        and isinstance(value.get("params"), dict)
        and len(value) == 2
    )


def map_data(value, change):
    """``value`` (a parameter) with ``change`` applied to each piece of data in it: inside lists and a phrase's
    parameters, never to the phrase's key (how a view escapes what it prints)."""
    if is_phrase(value):
        return phrase(value[PHRASE], **{k: map_data(v, change) for k, v in value["params"].items()})
    if isinstance(value, (list, tuple)):
        return [map_data(v, change) for v in value]
    return change(value)


def _fmt(value, lang="en"):
    if is_phrase(value):
        return text(value[PHRASE], lang, **value["params"])
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
