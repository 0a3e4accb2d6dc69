"""The JUnit XML view: one ``<testcase>`` per check, one ``<testsuite>`` per task, for CI dashboards.

Follows the Ant/Surefire JUnit schema that CI tools read: ``<testsuites>`` holds a
``<testsuite name=task>`` per task with ``tests``/``failures``/``errors``/``skipped``/``time``
counts and ``<properties>``; each ``<testcase name=check classname=task time=...>`` holds a
``<failure>`` (wrong result), an ``<error>`` (the submission raised or broke the contract) or a
``<skipped>``, whose ``message`` is the one-line explanation and whose text is the full
explanation (``describe``), in the report's language.
"""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from grader.messages import render as render_message
from grader.messages import text
from grader.submission.snapshot import describe as describe_refused
from grader.views.terminal import check_lines

# Characters XML 1.0 cannot carry, even escaped (a student's exception text may hold any of them).
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
ELEMENT = {"failed": "failure", "error": "error", "skipped": "skipped"}
"""The child element of a ``<testcase>`` for each non-passing status."""


def _clean(s):
    return _NOT_XML.sub("\ufffd", str(s))


def _seconds(x):
    return f"{x:.3f}"


def describe(check, lang="en"):
    """The plain-text explanation of a non-passing check: the lines the terminal prints under it, with the
    traceback of the student's own frames (``terminal.check_lines``)."""
    return "\n".join(check_lines(check, lang=lang, verbose=True))


def to_element(result, *, lang="en"):
    """The document as an ``ElementTree`` element."""
    env = result.environment or {}
    checks = [c for task in result.tasks for c in task.checks]
    root = ET.Element(
        "testsuites",
        {
            "name": "gradekit",
            "tests": str(len(checks)),
            "failures": str(sum(c.status == "failed" for c in checks)),
            "errors": str(sum(c.status == "error" for c in checks)),
            "skipped": str(sum(c.status == "skipped" for c in checks)),
            "time": _seconds(result.duration_s),
        },
    )
    properties = [
        ("submission", result.submission),
        ("score", f"{result.score:g}"),
        ("max_score", f"{result.max_score:g}"),
        ("profile", result.profile),
        ("seed", "derandomized" if result.seed is None else str(result.seed)),
        *((k, ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)) for k, v in env.items()),
    ]
    refused = getattr(result, "refused", None) or ()
    if refused:
        properties.append(("refused", "; ".join(describe_refused(r, lang) for r in refused)))
    for i, task in enumerate(result.tasks):
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": task.id,
                "id": str(i),
                "package": "gradekit",
                "tests": str(len(task.checks)),
                "failures": str(sum(c.status == "failed" for c in task.checks)),
                "errors": str(sum(c.status == "error" for c in task.checks)),
                "skipped": str(sum(c.status == "skipped" for c in task.checks)),
                "time": _seconds(sum(c.duration_s for c in task.checks)),
                "timestamp": env.get("when", "")[:19],
                "hostname": "localhost",
            },
        )
        props = ET.SubElement(suite, "properties")
        for name, value in properties + [("task_score", f"{task.score:g}"), ("task_max_score", f"{task.max_score:g}")]:
            ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
        for c in task.checks:
            case = ET.SubElement(
                suite, "testcase", {"name": c.id, "classname": task.id, "time": _seconds(c.duration_s)}
            )
            element = ELEMENT.get(c.status)
            if element is None:
                continue
            message = render_message(c.message, lang) or text(f"ui.{c.status}", lang)
            attrs = {"message": _clean(message)}
            if element != "skipped":
                attrs["type"] = c.message.key if c.message else c.status
            child = ET.SubElement(case, element, attrs)
            child.text = _clean(describe(c, lang))
        notes = []
        if task.blocked_by:
            notes.append(text("ui.blocked_by", lang, tasks=", ".join(task.blocked_by)))
        for f in task.banned:
            notes.append(text("ui.banned", lang, **f))
        ET.SubElement(suite, "system-out").text = _clean("\n".join(notes))
        ET.SubElement(suite, "system-err").text = ""
    return root


def render(result, *, lang="en"):
    """The JUnit XML document as a string."""
    root = to_element(result, lang=lang)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(result, path, *, lang="en"):
    Path(path).write_text(render(result, lang=lang), encoding="utf-8")
