"""The terminal summary: a line per task, then each failing check with its reason and reproduce command."""

from grader.messages import render, text


def _status_word(check, lang):
    return text(f"ui.{check.status}", lang)


def summary(result, *, lang="en", verbose=False, color=False):
    """The summary as a string."""
    def paint(s, code):
        return f"\033[{code}m{s}\033[0m" if color else s

    lines = []
    for file, err in sorted(result.load_errors.items()):
        lines.append(paint("! ", "33") + text("ui.load_error", lang, file=file,
                                              detail=f"{err['detail']} ({err['file']}:{err['line']})"))
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
            note = " — " + text("ui.blocked_by", lang, tasks=", ".join(task.blocked_by))
        lines.append(f"{mark} {task.id:<{width}}  {task.score:5.1f} / {task.max_score:<5.1f}{note}")
        if task.not_implemented and not verbose:
            continue
        for c in task.checks:
            if c.status == "passed" and not verbose:
                continue
            lines.append(f"    {_status_word(c, lang):<7} {c.id}  ({c.score:g}/{c.max_score:g})")
            if c.status != "passed":
                lines.append(f"            {render(c.message, lang)}")
                for d in c.diagnoses[:2]:
                    lines.append(f"            {text('ui.diagnosis', lang)}: {text('bug.' + d.id, lang, **d.params)}")
                if c.diagnoses and c.diagnoses[0].kind == "bug":
                    lines.append(f"            {text('ui.hint', lang)}: {text('bughint.' + c.diagnoses[0].id, lang)}")
                if c.reproduce:
                    lines.append(f"            {text('ui.reproduce', lang)}: {c.reproduce}")
        for f in task.banned:
            lines.append("    " + text("ui.banned", lang, **f))
    failed = sum(1 for t in result.tasks for c in t.checks if c.status != "passed")
    total = sum(len(t.checks) for t in result.tasks)
    lines.append("")
    seed = result.seed if result.seed is not None else text("ui.derandomized", lang)
    lines.append(f"{text('ui.score', lang)}: {result.score:g} / {result.max_score:g}   "
                 f"({text('ui.profile', lang)} {result.profile}, {text('ui.seed', lang)} {seed}, "
                 f"{text('ui.duration', lang)} {result.duration_s:.1f}s)")
    withheld = [t.id for t in result.tasks if t.banned and not result.allow_banned]
    if failed:
        lines.append(text("ui.some_failed", lang, failed=failed, total=total))
    elif withheld:
        lines.append(text("ui.banned_withheld", lang, tasks=", ".join(withheld)))
    elif result.hidden_checks:
        lines.append(text("ui.public_passed", lang, hidden=result.hidden_checks))
    else:
        lines.append(text("ui.all_passed", lang))
    return "\n".join(lines)
