"""Every message exists in every language, with the same ``{placeholders}``.

Checked: the kit's own catalogue (``grader/messages/``, read on disk: what other tests register at run time,
such as made-up assignments, is theirs), and each assignment's own sentences found on disk:
``assignments/<name>/messages/`` with the same layout as ``grader/messages/`` (``<lang>.py`` and
``<part>_<lang>.py`` modules, each with a ``MESSAGES`` dict). A key missing in one language falls back to English
at run time, so nothing crashes; the Chinese reader just gets English (and a placeholder missing in one language
silently loses a number).
"""

import importlib.util
import re
import string
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "zh")
_MODULE = re.compile(r"^(?:(?P<part>\w+)_)?(?P<lang>en|zh)$")


def placeholders(template):
    """The field names of a ``str.format`` template (``{what}``, ``{value:.3g}`` -> ``what``, ``value``)."""
    return {
        field.split(".")[0].split("[")[0] for _, field, _, _ in string.Formatter().parse(template) if field is not None
    }


def problems(catalogues, where=None):
    """Sentences of ``catalogues`` ({lang: {key: template}}) that do not line up across languages, one line
    each; ``where`` ({(lang, key): file}) names the file that defines a key."""
    where = where or {}
    found = []
    all_keys = set().union(*(catalogues[lang] for lang in LANGS))
    for key in sorted(all_keys):
        have = [lang for lang in LANGS if key in catalogues[lang]]
        if len(have) < len(LANGS):
            missing = [lang for lang in LANGS if lang not in have]
            source = where.get((have[0], key))
            found.append(f"{key}: missing in {', '.join(missing)}" + (f" (defined in {source})" if source else ""))
            continue
        fields = {}
        for lang in LANGS:
            template = catalogues[lang][key]
            if not isinstance(template, str):
                found.append(f"{key}: the {lang} sentence is a {type(template).__name__}, not a str")
                break
            try:
                fields[lang] = placeholders(template)
            except ValueError as exc:
                found.append(f"{key}: the {lang} sentence is not a valid format string ({exc})")
                break
        else:
            if len({frozenset(f) for f in fields.values()}) > 1:
                found.append(
                    f"{key}: placeholders differ: " + "; ".join(f"{lang} {sorted(fields[lang])}" for lang in LANGS)
                )
    return found


def _load(path):
    """The ``MESSAGES`` of a module file, imported by path (its package's ``__init__`` is not run)."""
    name = "_messages_" + "_".join(path.relative_to(ROOT).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MESSAGES


def catalogues_on_disk(folder):
    """({lang: {key: template}}, {(lang, key): file}) from a ``messages`` folder's ``<lang>.py`` and
    ``<part>_<lang>.py`` modules, merged as ``grader.messages`` merges them (name order)."""
    catalogues = {lang: {} for lang in LANGS}
    where = {}
    for path in sorted(folder.glob("*.py")):
        match = _MODULE.match(path.stem)
        if not match:
            continue
        lang = match["lang"]
        for key, template in _load(path).items():
            catalogues[lang][key] = template
            where[(lang, key)] = path.relative_to(ROOT).as_posix()
    return catalogues, where


def _assignment_message_folders():
    return sorted(p for p in (ROOT / "assignments").glob("*/messages") if p.is_dir())


def test_kit_catalogue_is_complete_in_every_language():
    from grader.messages import LANGS as LOADED

    assert set(LANGS) <= set(LOADED), f"languages of the kit: {sorted(LOADED)}"
    found = problems(*catalogues_on_disk(ROOT / "grader" / "messages"))
    assert not found, f"{len(found)} message(s) not the same in {' and '.join(LANGS)}:\n  " + "\n  ".join(found)


@pytest.mark.parametrize("folder", _assignment_message_folders(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_assignment_messages_are_complete_in_every_language(folder):
    catalogues, where = catalogues_on_disk(folder)
    assert any(catalogues.values()), f"{folder} holds no <lang>.py or <part>_<lang>.py module with MESSAGES"
    found = problems(catalogues, where)
    assert not found, f"{len(found)} message(s) not the same in {' and '.join(LANGS)}:\n  " + "\n  ".join(found)


def test_problems_names_missing_keys_and_placeholders():
    """The comparison itself, on a made-up catalogue."""
    found = problems(
        {
            "en": {"a": "{x} and {y:.2f}", "b": "only en", "c": "{n}"},
            "zh": {"a": "{y:.3g} 和 {x}", "c": "{m}", "d": "只有中文"},
        },
        {("en", "b"): "grader/messages/b_en.py"},
    )
    assert found == [
        "b: missing in zh (defined in grader/messages/b_en.py)",
        "c: placeholders differ: en ['n']; zh ['m']",
        "d: missing in en",
    ]
