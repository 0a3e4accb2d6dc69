"""The conceptual quiz: the questions interviewers ask about an assignment, auto-marked.

Each assignment writes its own questions (``QUESTIONS`` of the module its ``Assignment.practice`` names);
this module draws, asks and marks them. A question is multiple choice (options ``a``..``d``, the right
one named by the assignment) or numeric. Each quiz shows a question's options in an order drawn from its
seed, so neither the place nor the letter of the right option can be learnt. Every numeric answer is
computed from the assignment's reference implementation, never typed in: the question's ``answer`` gets the
reference (its contract names, loaded from ``Assignment.reference``) and the drawn values. The texts live in
the message catalogue: ``quiz.<id>.q`` (the question, with the drawn values), ``quiz.<id>.a``.. (options, as
the assignment lists them), ``quiz.<id>.why``, and ``quiz.topic.<topic>``.
"""

import math
import random
import re
import shlex
from dataclasses import dataclass, field

from grader.assignment import AssignmentError

LETTERS = "abcd"
_CHOICE = re.compile(rf"\(?([{LETTERS}])[).]?")


@dataclass(frozen=True)
class Question:
    """One question as the catalogue holds it."""

    id: str
    """Suffix of its message keys (``quiz.<id>.q``)."""
    topic: str
    """What it is about (``--topic`` picks by it; ``quiz.topic.<topic>`` names it)."""
    answer: object
    """Choice: the letter of the right option as the assignment lists them. Numeric: ``answer(ref, **params)``
    computes it from the reference, ``ref`` being the assignment's reference as a
    ``grader.submission.loader.Namespace`` (``ref.get("noam_lr")``)."""
    params: object = None
    """Numeric: ``params(rng)`` draws the values the question is asked about (a dict)."""
    rel_tol: float = 0.0
    """Numeric: accepted relative error (0: an exact integer)."""

    @property
    def kind(self):
        return "number" if callable(self.answer) else "choice"


@dataclass
class Asked:
    """A question with its values drawn and its answer computed."""

    question: Question
    """The question."""
    params: dict = field(default_factory=dict)
    """The drawn values (empty for a choice question)."""
    answer: object = None
    """The right letter as shown (see ``order``), or the number."""
    order: tuple = ()
    """Choice: the assignment's option letters in the order shown (shown ``a`` is ``order[0]``)."""


@dataclass
class Answered:
    """A question asked, the reply and the mark."""

    asked: Asked
    """The question."""
    reply: str | None
    """The reply as typed, stripped (``None`` or empty: no answer)."""
    right: bool
    """The reply is right."""


def questions(assignment):
    """``assignment``'s questions, in its order; ``AssignmentError`` when it has none."""
    module = assignment.practice_module()
    found = tuple(getattr(module, "QUESTIONS", ()))
    if not found:
        raise AssignmentError(
            f"assignment {assignment.name!r} has no quiz; expected a practice module "
            f"(Assignment.practice) defining QUESTIONS"
        )
    return found


def topics_of(questions):
    """The topics of ``questions``, each once, in the order they first come."""
    return tuple(dict.fromkeys(q.topic for q in questions))


def reference(assignment):
    """``assignment``'s reference as a ``Namespace`` of its contract names: what numeric answers are computed from.
    The quiz runs the reference only, in the student's own process: it needs no sealing."""
    from grader.submission.inprocess import reference_namespace

    return reference_namespace(assignment)


def ask(question, rng, ref):
    """``question`` with its values drawn from ``rng`` and its answer computed from ``ref`` (``reference``)."""
    if question.kind == "choice":
        order = tuple(rng.sample(LETTERS, len(LETTERS)))
        return Asked(question, {}, LETTERS[order.index(question.answer)], order)
    params = question.params(rng)
    return Asked(question, params, question.answer(ref, **params))


def draw(assignment, *, n=10, seed=None, topics=None):
    """``(seed, [Asked, ...])``: ``n`` of ``assignment``'s questions (0 or more than there are: all) on ``topics``,
    in a seeded order."""
    if n < 0:
        raise ValueError(f"--n must be 0 (all) or more, got {n}")
    every = questions(assignment)
    known = topics_of(every)
    unknown = [t for t in topics or () if t not in known]
    if unknown:
        raise ValueError(f"unknown topic(s) {', '.join(unknown)}; expected some of: {', '.join(known)}")
    if seed is None:
        seed = random.randrange(10000)
    rng = random.Random(seed)
    # A numeric answer is computed from the reference: a student kit, which holds none, asks the others only.
    pool = [q for q in every if (not topics or q.topic in topics) and (q.kind == "choice" or assignment.has_reference)]
    if not pool:
        assignment.require_reference("gradekit quiz")
    rng.shuffle(pool)
    if n:
        pool = pool[:n]
    ref = reference(assignment) if any(q.kind == "number" for q in pool) else None
    return seed, [ask(q, random.Random(f"{seed}:{q.id}"), ref) for q in pool]


def expects(asked):
    """What a reply to ``asked`` must be: ``"choice"`` (a letter), ``"whole"`` (a whole number) or ``"number"``
    (any number: the answer is checked to a relative tolerance)."""
    if asked.question.kind == "choice":
        return "choice"
    return "number" if asked.question.rel_tol else "whole"


def parse(asked, reply):
    """The reply as an answer (a letter, ``"b"`` or ``"(b)"``, or a float), or ``None`` when it is not what
    ``expects`` says: a letter out of range, words, a fraction where a whole number is asked for."""
    reply = (reply or "").strip().lower()
    if asked.question.kind == "choice":
        match = _CHOICE.fullmatch(reply)
        return match[1] if match else None
    try:
        value = float(reply.replace("_", "").replace(",", "").replace(" ", ""))
    except ValueError:
        return None
    if not math.isfinite(value) or (expects(asked) == "whole" and not value.is_integer()):
        return None
    return value


def option_text(asked, letter, lang):
    """The text of the option shown as ``letter``."""
    from grader.messages import text

    return text(f"quiz.{asked.question.id}.{asked.order[LETTERS.index(letter)]}", lang)


def check_replies(questions, replies):
    """``replies`` given in advance (``--answers``) for ``questions``: ``PracticeError`` naming the first one that
    is not what its question expects (an empty one skips its question), or more replies than questions."""
    from grader.practice.session import PracticeError

    if len(replies) > len(questions):
        raise PracticeError("quiz.error.answer_count", given=len(replies), n=len(questions))
    for i, (asked, reply) in enumerate(zip(questions, replies), start=1):
        if reply.strip() and parse(asked, reply) is None:
            raise PracticeError(f"quiz.error.answer_{expects(asked)}", i=i, reply=reply.strip())


def save(marked, *, assignment, seed, topics, lang, replay, now=None, history_path=None):
    """Record a quiz in the history (``history.History.record_quiz``; ``replay``: its ``replay_args``); returns its
    id, or ``None`` when nothing was answered: a quiz left at its first question is no result."""
    import time

    from grader.practice.history import History

    if not any(m.reply for m in marked):
        return None
    with History(history_path) as history:
        return history.record_quiz(
            taken=time.time() if now is None else now,
            assignment=assignment,
            seed=seed,
            topics=topics,
            lang=lang,
            replay=replay,
            answers=[(m.asked.question.id, m.asked.question.topic, m.reply, m.right) for m in marked],
        )


def replay_args(*, n, seed, topics=None, assignment=None):
    """The arguments that ask the same questions again (``quiz --n 10 --seed 42``), as the history keeps them:
    without the launcher and the language, which ``session.replay_line`` gives as the user runs gradekit when
    reading them."""
    words = ["quiz", "--n", str(n), "--seed", str(seed)]
    for topic in topics or ():
        words += ["--topic", topic]
    if assignment is not None:
        words += ["--assignment", assignment]
    return shlex.join(words)


def mark(asked, reply):
    """Whether ``reply`` (text) is right."""
    value = parse(asked, reply)
    if value is None:
        return False
    if asked.question.kind == "choice":
        return value == asked.answer
    if asked.question.rel_tol:
        return math.isclose(value, asked.answer, rel_tol=asked.question.rel_tol)
    return value == asked.answer


def show_answer(asked):
    """The right answer as text (``"b"``, ``"64"``, ``"0.000698"``)."""
    a = asked.answer
    if isinstance(a, str):
        return a
    if isinstance(a, float) and not a.is_integer():
        return f"{a:.3g}"
    return str(int(a))


def question_text(asked, lang, cols=100, head=""):
    from grader.messages import text
    from grader.practice.render import wrap

    qid = asked.question.id
    lines = [wrap(text(f"quiz.{qid}.q", lang, **asked.params), cols, indent="", first=head)]
    if asked.question.kind == "choice":
        lines += [
            wrap(option_text(asked, letter, lang), cols, indent="      ", first=f"  ({letter}) ") for letter in LETTERS
        ]
    lines.append(text(f"quiz.prompt_{expects(asked)}", lang))
    return "\n".join(lines)


def run(questions, *, lang="en", answers=None, stdin=None, out=None, interactive=False, replay="", cols=100):
    """Ask ``questions``, reading each reply from ``answers`` (an iterator of replies ``check_replies`` accepted)
    or ``stdin``; returns an ``Answered`` per question.

    From ``stdin``, a reply that is not what the question expects (``expects``) is named and the question asked
    again; an empty line skips it, the end of the input leaves it and the rest unanswered. ``interactive``: the
    replies are typed at a terminal (otherwise each is echoed after its prompt). ``replay`` is the command that
    asks the same questions again, as printed (``session.replay_line``); ``cols`` the width to fold the texts to.
    """
    from grader.messages import text
    from grader.practice.render import wrap

    write = out.write
    write(wrap(text("quiz.header", lang, n=len(questions), replay=replay), cols, indent="") + "\n")
    marked = []
    for i, asked in enumerate(questions, start=1):
        head = f"{i}/{len(questions)} [{text('quiz.topic.' + asked.question.topic, lang)}] "
        write("\n" + question_text(asked, lang, cols, head) + "\n")
        while True:
            if answers is not None:
                reply = next(answers, None)
                if reply is not None:
                    write(f"> {reply}\n")
                break
            write("> ")
            out.flush()
            line = stdin.readline()
            reply = line.rstrip("\n") if line else None
            if not interactive and reply is not None:
                write(reply + "\n")
            if reply is None or not reply.strip() or parse(asked, reply) is not None:
                break
            write(
                wrap(text(f"quiz.retry_{expects(asked)}", lang, reply=reply.strip()), cols, indent="  ", first="")
                + "\n"
            )
        reply = None if reply is None else reply.strip()
        right = mark(asked, reply)
        marked.append(Answered(asked, reply, right))
        if right:
            write(text("quiz.right", lang) + "\n")
        else:
            key = "quiz.wrong" if reply else "quiz.unanswered"
            write(text(key, lang, reply=reply or "", answer=show_answer(asked)) + "\n")
        why = text(f"quiz.{asked.question.id}.why", lang, answer=show_answer(asked), **asked.params)
        write(wrap(why, cols, indent="  ") + "\n")
    right = sum(a.right for a in marked)
    pct = 100.0 * right / len(questions) if questions else 0.0
    write("\n" + text("quiz.score", lang, right=right, total=len(questions), pct=f"{pct:.0f}") + "\n")
    return marked
