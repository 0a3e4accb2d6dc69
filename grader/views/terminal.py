"""The terminal summary: a line per task, then each failing check with its reason and reproduce command.

Nothing a submission wrote reaches the terminal raw: every value put into a sentence (exception text,
file names, source lines, paths) goes through ``safetext.for_terminal`` first, which escapes control
characters, escape codes and the newline. Only our own layout breaks lines and only ``paint`` colours,
so a submission can neither clear the screen nor draw a line that looks like ours ("Score: 140 / 140").
"""

from grader.messages import text
from grader.results import Message
from grader.safetext import for_terminal


def _safe_value(value):
    if isinstance(value, (list, tuple)):
        return [_safe_value(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # the catalogue formats numbers itself
    return for_terminal(value)


def _safe(params):
    """Message parameters, each made safe to print."""
    return {key: _safe_value(value) for key, value in params.items()}


def _t(key, lang, **params):
    return text(key, lang, **_safe(params))


def _message(message, lang):
    if message is None:
        return ""
    return _t(message.key, lang, **message.params)


def _status_word(check, lang):
    return text(f"ui.{check.status}", lang)


def refused_lines(result, lang="en"):
    """One sentence per entry of the submission that was not graded (links, special files, caps)."""
    from grader.submission.snapshot import describe

    return [for_terminal(describe(entry, lang)) for entry in getattr(result, "refused", None) or ()]


def summary(result, *, lang="en", verbose=False, color=False):
    """The summary as a string."""
    def paint(s, code):
        return f"\033[{code}m{s}\033[0m" if color else s

    lines = []
    for line in refused_lines(result, lang):
        lines.append(paint("! ", "33") + line)
    for file, err in sorted(result.load_errors.items()):
        lines.append(paint("! ", "33") + _t("ui.load_error", lang, file=file,
                                            detail=f"{err.get('detail', '')} ({err.get('file', '')}:"
                                                   f"{err.get('line', 0)})"))
    width = max((len(t.id) for t in result.tasks), default=4)
    for task in result.tasks:
        ok = all(c.status == "passed" for c in task.checks) and task.score >= task.max_score
        mark = paint("✓", "32") if ok else paint("✗", "31")
        note = ""
        if task.not_implemented:
            note = " — " + text("ui.not_implemented", lang)
        elif task.banned and not result.allow_banned:
            note = " — " + text("ui.banned_cost", lang)
        elif task.blocked_by:
            note = " — " + _t("ui.blocked_by", lang, tasks=", ".join(task.blocked_by))
        lines.append(f"{mark} {for_terminal(task.id):<{width}}  {task.score:5.1f} / {task.max_score:<5.1f}{note}")
        if task.not_implemented and not verbose:
            continue
        shown = set()  # a note the task's checks share is printed once
        for c in task.checks:
            notes = [Message.of(n) for n in getattr(c, "notes", None) or []]
            notes = [n for n in notes if _message(n, lang) not in shown]
            if c.status == "passed" and not verbose and not notes:
                continue
            lines.append(f"    {_status_word(c, lang):<7} {for_terminal(c.id)}  ({c.score:g}/{c.max_score:g})")
            for n in notes:
                shown.add(_message(n, lang))
                lines.append(f"            {text('ui.note', lang)}: {_message(n, lang)}")
            if c.status != "passed":
                lines.append(f"            {_message(c.message, lang)}")
                for d in c.diagnoses[:2]:
                    lines.append(f"            {text('ui.diagnosis', lang)}: {_t('bug.' + d.id, lang, **d.params)}")
                if c.diagnoses and c.diagnoses[0].kind == "bug":
                    lines.append(f"            {text('ui.hint', lang)}: {text('bughint.' + c.diagnoses[0].id, lang)}")
                if c.reproduce:
                    lines.append(f"            {text('ui.reproduce', lang)}: {for_terminal(c.reproduce)}")
        for f in task.banned:
            lines.append("    " + _t("ui.banned", lang, **f))
    failed = sum(1 for t in result.tasks for c in t.checks if c.status != "passed")
    total = sum(len(t.checks) for t in result.tasks)
    lines.append("")
    seed = result.seed if result.seed is not None else text("ui.derandomized", lang)
    lines.append(f"{text('ui.score', lang)}: {result.score:g} / {result.max_score:g}   "
                 f"({text('ui.profile', lang)} {for_terminal(result.profile)}, {text('ui.seed', lang)} {seed}, "
                 f"{text('ui.duration', lang)} {result.duration_s:.1f}s)")
    if getattr(result, "output_dropped", 0):
        lines.append(_t("note.output_dropped", lang, n=result.output_dropped))
    withheld = [t.id for t in result.tasks if t.banned and not result.allow_banned]
    if failed:
        lines.append(text("ui.some_failed", lang, failed=failed, total=total))
    elif withheld:
        lines.append(_t("ui.banned_withheld", lang, tasks=", ".join(withheld)))
    elif result.hidden_checks:
        lines.append(text("ui.public_passed", lang, hidden=result.hidden_checks))
    else:
        lines.append(text("ui.all_passed", lang))
    return "\n".join(lines)
