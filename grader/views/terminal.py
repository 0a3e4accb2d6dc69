"""The terminal summary: a line per task, then each failing check with its reason and reproduce command.

Nothing a submission wrote reaches the terminal raw: every value put into a sentence (exception text,
file names, source lines, paths) goes through ``safetext.for_terminal`` first, which escapes control
characters, escape codes and the newline. Only our own layout breaks lines and only ``paint`` colours,
so a submission can neither clear the screen nor draw a line that looks like ours ("Score: 140 / 140").
"""

from grader.errors import located, words
from grader.messages import PHRASE, has_text, is_phrase, map_data, text
from grader.results import Message
from grader.safetext import for_terminal, pad


def _safe_datum(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # the catalogue formats numbers itself
    return for_terminal(value)


def _safe_value(value):
    return map_data(value, _safe_datum)  # a phrase's words are the kit's; its data is escaped


def _safe(params):
    """Message parameters, each made safe to print."""
    return {key: _safe_value(value) for key, value in params.items()}


def say(key, lang="en", **params):
    """The sentence for ``key`` with every value made safe to print (it may come from the submission)."""
    return text(key, lang, **_safe(params))


def _message(message, lang):
    if message is None:
        return ""
    return say(message.key, lang, **message.params)


def status_word(check, lang):
    if check.status != "passed" and _not_implemented(check):
        return text("ui.todo_word", lang)
    return text(f"ui.{check.status}", lang)


def refused_lines(result, lang="en"):
    """One sentence per entry of the submission that was not graded (links, special files, caps)."""
    from grader.submission.snapshot import describe

    return [for_terminal(describe(entry, lang)) for entry in getattr(result, "refused", None) or ()]


SAID_IN_MESSAGE = ("first_index", "max_abs_error", "max_rel_error", "mismatched", "total")
"""Keys of a check's example that its failure sentence already states (said once, there)."""


def _value(v, lang="en"):
    """A value of an example as it reads; a phrase (words of the check's, ``messages.phrase``) in ``lang``."""
    if is_phrase(v):
        return text(v[PHRASE], lang, **v["params"])
    if isinstance(v, dict):
        return ", ".join(f"{k}={_value(x, lang)}" for k, x in v.items())
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, lang) for x in v) + "]"
    return str(v)


def example_text(example, lang="en"):
    """The minimal failing example in one line: its configuration, input shapes, device... (what the failure
    sentence does not already say)."""
    parts = []
    for key, value in example.items():
        if key in SAID_IN_MESSAGE or value in (None, {}, []):
            continue
        label_key = f"report.example.{key}"
        label = text(label_key, lang) if has_text(label_key) else key
        if key == "shapes" and isinstance(value, dict):
            shown = ", ".join(
                f"{name} {_value(shape, lang) if shape is not None else '-'}" for name, shape in value.items()
            )
        else:
            shown = _value(value, lang)
        parts.append(f"{label}: {for_terminal(shown)}")
    return "; ".join(parts)


def _not_implemented(check):
    return (check.error or {}).get("kind") == "not_implemented"


def check_lines(check, *, lang="en", verbose=False, said=None):
    """What is printed under one check that did not pass, a line each: why (the failure sentence), the minimal
    failing example, with ``verbose`` the traceback of the student's own frames, what it looks like (the known
    mistake the diagnosis replayed) with its hint, and the command that reruns the check. ``said`` (``{bug id:
    check id}``, shared by the checks of one summary) keeps a diagnosis, and an error, told once: later checks point
    back to the first.
    The pytest plugin prints the same lines."""
    lines = []
    sentence = _message(check.message, lang) if check.message is not None else ""
    if check.status == "error" and said is not None and ("error", sentence) in said:
        lines.append(say("ui.same_error", lang, check=said["error", sentence]))  # its trace and rerun line are above
        return lines
    if check.status == "error" and said is not None:
        said["error", sentence] = check.id
    if sentence:
        lines.append(sentence)
    if check.example and not _not_implemented(check):
        shown = example_text(check.example, lang)
        if shown:
            lines.append(f"{text('ui.example', lang)}: {shown}")
    trace = (check.error or {}).get("trace") or ""
    if verbose and trace:
        lines.append(f"{text('report.trace', lang)}:")
        # Each line of it quoted: the text is the submission's (file names, source lines) and must not pass for ours.
        lines += ["  │ " + for_terminal(line) for line in trace.rstrip().splitlines()]
    for i, d in enumerate(check.diagnoses[:2]):
        first = said.get(d.id) if said is not None else None
        if first is not None and first != check.id:
            lines.append(f"{text('ui.diagnosis', lang)}: {say('ui.same_mistake', lang, check=first)}")
            continue
        if said is not None:
            said[d.id] = check.id
        lines.append(f"{text('ui.diagnosis', lang)}: {say('bug.' + d.id, lang, **d.params)}")
        if i == 0 and d.kind == "bug" and has_text("bughint." + d.id):
            lines.append(f"{text('ui.hint', lang)}: {say('bughint.' + d.id, lang, **d.params)}")
    if check.reproduce:
        lines.append(f"{text('ui.reproduce', lang)}: {for_terminal(check.reproduce)}")
    return lines


def load_error_lines(result, lang="en"):
    """A sentence per contract file that could not be imported."""
    return [
        say("ui.load_error", lang, file=file, detail=located(words(err, lang), err.get("file"), err.get("line")))
        for file, err in sorted(result.load_errors.items())
    ]


def score_line(result, lang="en"):
    """``Score: 122 / 140   (profile quick, the same examples every run, time 4.1 s)``."""
    examples = text("ui.derandomized", lang) if result.seed is None else f"{text('ui.seed', lang)} {result.seed}"
    return (
        f"{text('ui.score', lang)}: {result.score:g} / {result.max_score:g}   "
        f"({text('ui.profile', lang)} {for_terminal(result.profile)}, {examples}, "
        f"{text('ui.duration', lang)} {result.duration_s:.1f} s)"
    )


def task_line(task, *, width, lang="en", paint=lambda s, code: s, allow_banned=False):
    """A task's line: its mark, id, points and, where it applies, why (not written yet, banned, blocked)."""
    ok = all(c.status == "passed" for c in task.checks) and task.score >= task.max_score
    mark = paint("✓", "32") if ok else paint("✗", "31")
    note = ""
    if task.not_implemented:
        note = " — " + text("ui.not_implemented", lang)
    elif task.banned and not allow_banned:
        note = " — " + text("ui.banned_cost", lang)
    elif task.blocked_by:
        note = " — " + say("ui.blocked_by", lang, tasks=", ".join(task.blocked_by))
    return f"{mark} {for_terminal(task.id):<{width}}  {task.score:5.1f} / {task.max_score:<5.1f}{note}"


def summary(result, *, lang="en", verbose=False, color=False):
    """The summary as a string."""

    def paint(s, code):
        return f"\033[{code}m{s}\033[0m" if color else s

    lines = []
    said = {}  # a diagnosis is told under the first check it explains
    for line in refused_lines(result, lang):
        lines.append(paint("! ", "33") + line)
    lines += [paint("! ", "33") + line for line in load_error_lines(result, lang)]
    width = max((len(t.id) for t in result.tasks), default=4)
    for task in result.tasks:
        lines.append(task_line(task, width=width, lang=lang, paint=paint, allow_banned=result.allow_banned))
        if task.not_implemented and not verbose:
            continue
        shown = set()  # a note the task's checks share is printed once
        for c in task.checks:
            notes = [Message.of(n) for n in getattr(c, "notes", None) or []]
            notes = [n for n in notes if _message(n, lang) not in shown]
            if c.status == "passed" and not verbose and not notes:
                continue
            lines.append(f"    {pad(status_word(c, lang), 7)} {for_terminal(c.id)}  ({c.score:g}/{c.max_score:g})")
            for n in notes:
                shown.add(_message(n, lang))
                lines.append(f"            {text('ui.note', lang)}: {_message(n, lang)}")
            if c.status != "passed":
                lines += ["            " + line for line in check_lines(c, lang=lang, verbose=verbose, said=said)]
        for f in task.banned:
            lines.append("    " + say("ui.banned", lang, **f))
    checks = [c for t in result.tasks for c in t.checks]
    todo = sum(1 for c in checks if c.status != "passed" and _not_implemented(c))
    failed = sum(1 for c in checks if c.status != "passed") - todo
    total = len(checks)
    lines.append("")
    lines.append(score_line(result, lang))
    counts = getattr(result, "held_back_counts", None)
    if counts:
        lines.append(text("ui.held_back", lang, **counts))
    if getattr(result, "banked", False):
        lines.append(text("kit.banked", lang))
        if getattr(result, "unjudged", 0):
            lines.append(text("kit.unjudged", lang, points=f"{result.unjudged:g}", max_score=f"{result.max_score:g}"))
    if getattr(result, "output_dropped", 0):
        lines.append(say("note.output_dropped", lang, n=result.output_dropped))
    unusable = (getattr(result, "environment", None) or {}).get("devices_unusable")
    if unusable:
        lines.append(say("note.devices_unusable", lang, devices=", ".join(map(str, unusable))))
    withheld = [t.id for t in result.tasks if t.banned and not result.allow_banned]
    if failed or todo:
        if failed:
            lines.append(text("ui.some_failed", lang, failed=failed, total=total))
        if todo:
            lines.append(text("ui.todo", lang, count=todo))
    elif withheld:
        lines.append(say("ui.banned_withheld", lang, tasks=", ".join(withheld)))
    elif result.hidden_checks:
        lines.append(text("ui.public_passed", lang, hidden=result.hidden_checks))
    else:
        lines.append(text("ui.all_passed", lang))
    return "\n".join(lines)
