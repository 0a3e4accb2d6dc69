"""Every failure a check reports carries its evidence: the audit ``tests/conftest.py`` runs on each failed check
graded in any test of the suite (the catalogues, the blind corpora, the near misses, the peers' defaults).

A check that cannot show the difference it saw has not seen one. A failure is flagged when its sentence lacks a
language, when a field its sentence shows is missing or blank, when every one of its lists of differences is empty,
when "e.g." leads to nothing, or when it counts zero differences."""

import re
import string

from grader.messages import CATALOGUES, render

EMPTY_EXAMPLE = re.compile(r"(e\.g\.|例如)[\s:：,，]*($|[.。;；)）])")
ZERO_DIFFER = re.compile(r"(?<![\d.])0 [a-z][a-z ,]* differ|(?<![\d.])0 ?(个|处)[^，。]*不同")


def _fields(template):
    return {field.split(".")[0].split("[")[0] for _, field, _, _ in string.Formatter().parse(template) if field}


def evidence_gaps(message):
    """What the failure ``message`` (a ``results.Message``) lacks, as sentences (empty: it shows its evidence)."""
    gaps = []
    for lang in ("en", "zh"):
        template = CATALOGUES[lang].get(message.key)
        if not template:
            gaps.append(f"{message.key!r} has no {lang} sentence")
            continue
        fields = sorted(_fields(template))
        for field in fields:
            value = message.params.get(field)
            if field not in message.params:
                gaps.append(f"{message.key!r} ({lang}) shows {{{field}}}, which the check did not give")
            elif isinstance(value, str) and not value.strip():
                gaps.append(f"{message.key!r} ({lang}) shows {{{field}}} empty")
        lists = [f for f in fields if isinstance(message.params.get(f), (list, tuple)) and f != "index"]
        if len(lists) > 1 and not any(message.params[f] for f in lists):  # one empty list can be the evidence
            gaps.append(f"{message.key!r} lists {', '.join(lists)}, and every one is empty")
        said = render(message, lang)
        for pattern in (EMPTY_EXAMPLE, ZERO_DIFFER):
            found = pattern.search(said)
            if found:
                gaps.append(f"{message.key!r} ({lang}) says {said[max(0, found.start() - 60) : found.end() + 20]!r}")
    return gaps
