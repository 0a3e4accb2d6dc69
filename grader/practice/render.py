"""Text views of the practice data: the drill list, a started drill, a check, a hint, the history and its chart."""

import re
import shutil
import time

from grader.messages import CATALOGUES, text
from grader.practice.session import HINT_LEVELS, commands, replay_line, spelled_lang
from grader.safetext import columns as width
from grader.safetext import pad
from grader.views import terminal

BAR_WIDTH = 24
"""Columns of a bar that fills exactly the time limit; overtime continues in a lighter shade."""
_EIGHTHS = " ▏▎▍▌▋▊▉"
_NO_LINE_START = "，。；：）、！？"
_CJK = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef"
_TOKENS = re.compile(f"[{_CJK}]|(?:`[^`\\n]*`|[^\\s{_CJK}])+|\\s+")
"""A CJK character, a word (a quoted `command` inside it whole, spaces and all: it is copied as one line), spaces."""


def wrap(s, cols=96, indent="    ", first=None):
    """``s`` folded to ``cols`` terminal columns, lines after the first prefixed by ``indent`` (the first by
    ``first``, default ``indent``); CJK characters count two columns and may break anywhere, a `quoted command`
    nowhere."""
    lines, line = [], ""
    for token in _TOKENS.findall(s):
        if token.isspace():
            token = " "
        prefix = indent if lines else (indent if first is None else first)
        if line and width(prefix + line + token) > cols and not token.isspace() and token not in _NO_LINE_START:
            lines.append(line.rstrip())
            line = ""
        if not (token.isspace() and not line):
            line += token
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join((indent if i else (indent if first is None else first)) + ln for i, ln in enumerate(lines))


def terminal_columns():
    """The terminal's width, at most 100 columns (100 when it is not a terminal)."""
    return min(100, shutil.get_terminal_size((100, 24)).columns)


def table(rows, indent="  "):
    """Left-aligned columns, two spaces apart."""
    cols = [max(width(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(pad(cell, cols[i]) for i, cell in enumerate(r)).rstrip() for r in rows]


def clock(seconds):
    """``mm:ss`` (``h:mm:ss`` past an hour); negative values get a minus sign."""
    sign, s = ("-" if seconds < 0 else ""), int(round(abs(seconds)))
    h, rest = divmod(s, 3600)
    return f"{sign}{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{sign}{rest // 60:02d}:{rest % 60:02d}"


def when(epoch):
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def title(drill_id, lang):
    return text(f"practice.title.{drill_id}", lang)


def drill_list(drills, lang, command="gradekit", assignment=None):
    """The list of ``drills`` (an assignment's): its single tasks, then its interview sets; the commands to go on
    start with ``command`` and name the ``assignment`` as the user gave it (``session.commands``)."""
    lines = [text("practice.list.header", lang), ""]
    head = [
        text("practice.col.drill", lang),
        text("practice.col.what", lang),
        text("practice.col.level", lang),
        text("practice.col.time", lang),
    ]
    for heading, group in (
        ("practice.list.tasks", [d for d in drills if not d.is_set]),
        ("practice.list.sets", [d for d in drills if d.is_set]),
    ):
        if not group:  # an assignment may have no interview sets
            continue
        lines.append(text(heading, lang))
        rows = [head]
        for d in group:
            rows.append(
                [
                    d.id,
                    title(d.id, lang),
                    text(f"practice.level.{d.level}", lang),
                    text("practice.minutes", lang, minutes=d.minutes),
                ]
            )
        first = max(width(r[0]) for r in rows)
        for d, line in zip([None, *group], table(rows)):
            lines.append(line)
            if d is not None and d.is_set:
                lines.append("  " + " " * first + "  = " + " + ".join(d.tasks))
        lines.append("")
    lines.append(text("practice.list.usage", lang, **commands(command, lang=spelled_lang(lang), assignment=assignment)))
    return "\n".join(lines)


def started(s, lang, command="gradekit"):
    """A new drill: its task texts, its clock and the commands to go on (``session.commands``; without ``--dir``:
    run from here, they find the drill started last)."""
    d, st = s.drill, s.state
    lines = [
        text(
            "practice.start.header",
            lang,
            drill=d.id,
            title=title(d.id, lang),
            level=text(f"practice.level.{d.level}", lang),
            minutes=d.minutes,
        ),
        text("practice.start.workspace", lang, path=str(s.root)),
        wrap(
            text("practice.start.files", lang, names=", ".join(t.name for t in s.texts), files=", ".join(s.files)),
            terminal_columns(),
            indent="  ",
            first="",
        ),
        "",
    ]
    for t in s.texts:
        lines.append(f"── {t.signature}   [{t.file}]")
        lines += ["    " + line if line else "" for line in t.doc.splitlines()]
        lines.append("")
    ends = time.strftime("%H:%M", time.localtime(st.started + st.limit_s))
    lines.append(text("practice.start.clock", lang, limit=clock(st.limit_s), ends=ends))
    if st.no_hints:
        lines.append(text("practice.start.no_hints", lang))
    cmds = commands(command, lang=spelled_lang(lang, st.lang))
    lines.append(
        wrap(
            text("practice.start.next", lang, files=", ".join(s.files), **cmds),
            terminal_columns(),
            indent="  ",
            first="",
        )
    )
    return "\n".join(lines)


def _time_line(elapsed, limit_s, lang):
    if elapsed <= limit_s:
        return text(
            "practice.time.within", lang, used=clock(elapsed), limit=clock(limit_s), left=clock(limit_s - elapsed)
        )
    return text("practice.time.over", lang, used=clock(elapsed), limit=clock(limit_s), over=clock(elapsed - limit_s))


def _chosen(root, lang):
    """The line naming the workspace a command took because none was named (the one started last)."""
    return text("practice.workspace.chosen", lang, path=str(root))


def checked(c, lang, color=False, command="gradekit"):
    """A check of a drill: the grade, the time and what to do next (``session.commands``, for this workspace)."""
    cmds = commands(command, lang=spelled_lang(lang, c.state.lang), root=c.root)
    lines = [text("practice.check.header", lang, drill=c.state.drill, title=title(c.state.drill, lang))]
    if c.chosen:
        lines.append(_chosen(c.root, lang))
    lines += ["", terminal.summary(c.result, lang=lang, color=color), ""]
    lines.append(_time_line(c.elapsed, c.state.limit_s, lang))
    if c.withheld:
        lines.append(text("practice.check.withheld", lang, left=clock(c.state.limit_s - c.elapsed)))
    if c.partial:
        lines.append(text("practice.check.partial", lang, **cmds))
    elif c.already_passed:
        lines.append(text("practice.check.already_passed", lang, used=clock(c.elapsed)))
    elif c.result.passed:
        lines.append(text("practice.check.passed", lang, used=clock(c.elapsed), hints=c.state.hints_used))
        if c.new_best and c.previous_best is not None:
            lines.append(text("practice.check.new_best", lang, previous=clock(c.previous_best)))
        elif c.new_best:
            lines.append(text("practice.check.first_best", lang))
    else:
        lines.append(text("practice.check.failed", lang))
        if not c.state.no_hints or c.time_up:
            lines.append(text("practice.check.hint_tip", lang, **cmds))
    return "\n".join(lines)


def hint(h, lang, now=None, command="gradekit"):
    """A hint level, or that none is left, and the hints left for the other tasks (``session.commands``)."""
    cmds = commands(command, lang=spelled_lang(lang, h.state.lang), root=h.root)
    lines = [_chosen(h.root, lang)] if h.chosen else []
    if h.exhausted:
        lines.append(text("practice.hint.exhausted", lang, task=h.task, **cmds))
    else:
        lines += [
            text(
                "practice.hint.header", lang, task=h.task, level=h.level, levels=HINT_LEVELS, title=title(h.task, lang)
            ),
            "",
            wrap(text(h.key, lang), terminal_columns()),
            "",
        ]
    if h.others:
        lines.append(text("practice.hint.others", lang, tasks=", ".join(h.others), **cmds))
    elapsed = (time.time() if now is None else now) - h.state.started
    lines.append(_time_line(elapsed, h.state.limit_s, lang))
    return "\n".join(lines)


def bar(seconds, limit_s):
    """A horizontal bar: ``BAR_WIDTH`` columns equal the limit; overtime is drawn in ``░``."""
    cols = seconds / limit_s * BAR_WIDTH if limit_s > 0 else 0
    cols = min(cols, BAR_WIDTH * 2.5)
    inside = min(cols, BAR_WIDTH)
    full, frac = int(inside), inside - int(inside)
    s = "█" * full
    if full < BAR_WIDTH and frac >= 1 / 8:
        s += _EIGHTHS[int(frac * 8)]
    if cols > BAR_WIDTH:
        s += "░" * max(1, int(round(cols - BAR_WIDTH)))
    return s or "▏"


_MARKS = {"passed": "✓", "failed": "✗", "running": "…", "abandoned": "–"}
"""The chart's mark of an attempt, by ``history.Attempt.status``."""


def _result(a, now, lang):
    status = a.status(now)
    if status == "passed":
        return text("practice.result.passed", lang) + ("" if a.in_time else " " + text("practice.result.late", lang))
    if status == "running":
        return text("practice.result.running", lang, left=clock(a.started + a.limit_s - now))
    return text(f"practice.result.{status}", lang)


def history_view(past, lang, now=None, last=20, command="gradekit"):
    """The ``session.Past``: the drill attempts (a table of the ``last`` ones, a chart per drill, the personal
    bests), then the quizzes (the ``last`` ones, each with the command that asks it again, starting with
    ``command``, and the share right per topic, the weakest first)."""
    if not past.attempts and not past.quizzes:
        return text("practice.history.empty", lang, **commands(command, lang=spelled_lang(lang)))
    now = time.time() if now is None else now
    lines = []
    if past.attempts:
        lines += _attempts_view(past.attempts, past.bests, lang, now, last)
    if past.quizzes:
        if lines:
            lines.append("")
        lines += _quizzes_view(past.quizzes, past.topics, lang, last, command)
    return "\n".join(lines)


def _attempts_view(attempts, bests, lang, now, last):
    several = len({a.assignment for a in attempts} | {k[0] for k in bests}) > 1
    lines = [text("practice.history.header", lang, n=len(attempts)), ""]
    rows = [
        [
            text("practice.col.when", lang),
            text("practice.col.drill", lang),
            text("practice.col.result", lang),
            text("practice.col.used", lang),
            text("practice.col.score", lang),
            text("practice.col.hints", lang),
            text("practice.col.checks", lang),
        ]
    ]
    for a in attempts[-last:]:
        score = f"{a.score:g}/{a.max_score:g}" if a.checks else "–"
        rows.append(
            [
                when(a.started),
                _drill_label(a.assignment, a.drill, several),
                _result(a, now, lang),
                f"{clock(a.seconds)} / {clock(a.limit_s)}",
                score,
                str(a.hints) + (" ⊘" if a.no_hints else ""),
                str(a.checks),
            ]
        )
    lines += table(rows)
    lines += ["", text("practice.history.chart", lang, width=BAR_WIDTH)]
    by_drill = {}
    for a in attempts:
        by_drill.setdefault((a.assignment, a.drill), []).append(a)
    labels = {key: _drill_label(*key, several) for key in by_drill}
    name_w = max(width(label) for label in labels.values())
    bar_w = max(width(bar(a.seconds, a.limit_s)) for a in attempts) + 1
    for key, group in by_drill.items():
        lines.append("")
        first = max(1, len(group) - 7)
        for i, a in enumerate(group[-8:], start=first):
            label = pad(labels[key] if i == first else "", name_w)
            mark = _MARKS[a.status(now)]
            lines.append(f"  {label}  #{i:<2} {mark} {pad(bar(a.seconds, a.limit_s), bar_w)}{clock(a.seconds)}")
    if bests:
        lines += ["", text("practice.history.bests", lang)]
        rows = [
            [
                _drill_label(*key, several),
                clock(b.seconds),
                text("practice.history.best_of", lang, limit=clock(b.limit_s), when=when(b.started), hints=b.hints),
            ]
            for key, b in bests.items()
        ]
        lines += table(rows)
    return lines


def _drill_label(assignment, drill, several):
    """A drill as the history names it: its id, prefixed by its assignment's short name (``decoder_lm/model``)
    when the history holds drills of more than one assignment (their ids may be the same)."""
    return f"{assignment.rsplit('.', 1)[-1]}/{drill}" if several else drill


def _topic(topic, lang):
    """A quiz topic's name, or its id when its assignment's sentences are not loaded."""
    key = "quiz.topic." + topic
    return text(key, lang) if key in CATALOGUES["en"] else topic


def _quizzes_view(quizzes, topics, lang, last, command):
    lines = [text("practice.history.quizzes", lang, n=len(quizzes)), ""]
    rows = [
        [
            text("practice.col.taken", lang),
            text("practice.col.score", lang),
            text("practice.col.answered", lang),
            text("practice.col.again", lang),
        ]
    ]
    for q in quizzes[-last:]:
        pct = 100.0 * q.right / q.total if q.total else 0.0
        rows.append(
            [
                when(q.taken),
                f"{q.right} / {q.total} ({pct:.0f}%)",
                f"{q.answered} / {q.total}",
                replay_line(q.replay, command=command, lang=spelled_lang(lang)),
            ]
        )
    lines += table(rows)
    if topics:
        lines += ["", text("practice.history.topics", lang)]
        lines += table(
            [
                [_topic(t, lang), f"{right} / {asked}", f"{100.0 * right / asked:.0f}%"]
                for t, (right, asked) in topics.items()
            ]
        )
    return lines
