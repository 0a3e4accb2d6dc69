"""The JSON view: the results object as plain data, messages rendered in one language."""

import json
import math

from grader.messages import PHRASE, is_phrase, text
from grader.messages import render as render_message
from grader.results import Message
from grader.submission.snapshot import describe as describe_refused


def to_data(result, *, lang="en"):
    """The ``--json`` document as a dict."""

    def check_data(c):
        return {
            "id": c.id,
            "status": c.status,
            "score": c.score,
            "max_score": c.max_score,
            "message": render_message(c.message, lang),
            "message_key": c.message.key if c.message else None,
            "diagnoses": [
                {"id": d.id, "kind": d.kind, "message": text("bug." + d.id, lang, **d.params)} for d in c.diagnoses
            ],
            "example": _clean(_worded(c.example, lang)),
            "error": _clean(c.error),
            "reproduce": c.reproduce,
            "duration_s": round(c.duration_s, 4),
            "visibility": c.visibility,
            "variant": c.variant,
            "notes": check_notes(c, lang),
            "sets": dict(getattr(c, "sets", None) or {}),
            "artifacts": _clean(c.artifacts),
        }

    return {
        "submission": result.submission,
        "score": result.score,
        "max_score": result.max_score,
        "seed": result.seed,
        "profile": result.profile,
        "duration_s": result.duration_s,
        "sealed": result.sealed,
        "jailed": result.jailed,
        "banked": getattr(result, "banked", False),
        "unjudged": getattr(result, "unjudged", 0),
        "held_back": getattr(result, "held_back", None),
        "environment": result.environment,
        "hidden_checks": result.hidden_checks,
        "assignment": result.assignment,
        "settings": _clean(getattr(result, "settings", None) or {}),
        "tasks": [
            {
                "id": t.id,
                "score": t.score,
                "max_score": t.max_score,
                "not_implemented": t.not_implemented,
                "blocked_by": t.blocked_by,
                "checks": [check_data(c) for c in t.checks],
            }
            for t in result.tasks
        ],
        "banned_api": [{k: f[k] for k in ("name", "file", "line", "code", "task")} for f in result.banned_api],
        "load_errors": _clean(result.load_errors),
        "refused": [dict(_clean(r), message=describe_refused(r, lang)) for r in getattr(result, "refused", None) or ()],
    }


def check_notes(c, lang):
    """How the check was graded where it adapted (one sentence each, in ``lang``, each once): why a check was not
    judged, or what it graded instead. The JSON and HTML reports both say them."""
    out = []
    for n in getattr(c, "notes", None) or []:
        sentence = render_message(Message.of(n), lang)
        if sentence not in out:
            out.append(sentence)
    return out


def _worded(value, lang):
    """``value`` (an example) with each phrase in it (``messages.phrase``: the check's words) said in ``lang``."""
    if is_phrase(value):
        return text(value[PHRASE], lang, **value["params"])
    if isinstance(value, dict):
        return {k: _worded(v, lang) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_worded(v, lang) for v in value]
    return value


def _clean(value):
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def render(result, *, lang="en"):
    """The ``--json`` document as text."""
    return json.dumps(to_data(result, lang=lang), ensure_ascii=False, indent=2)


def write(result, path, *, lang="en"):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(render(result, lang=lang))
