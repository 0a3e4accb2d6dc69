"""The conceptual quiz: the questions interviewers ask about an assignment, auto-marked.

Each assignment writes its own questions (``QUESTIONS`` of the module its ``Assignment.practice`` names);
this module draws, asks and marks them. A question is multiple choice (options ``a``..``d``, the right
letter fixed by the assignment) or numeric. Every numeric answer is computed from the assignment's
reference implementation, never typed in: the question's ``answer`` gets the reference (its contract names,
loaded from ``Assignment.reference``) and the drawn values. The texts live in the message catalogue:
``quiz.<id>.q`` (the question, with the drawn values), ``quiz.<id>.a``.. (options), ``quiz.<id>.why``, and
``quiz.topic.<topic>``.
"""

import math
import random
from dataclasses import dataclass, field

from grader.assignment import AssignmentError

LETTERS = "abcd"


@dataclass(frozen=True)
class Question:
    """One question as the catalogue holds it."""

    id: str
    """Suffix of its message keys (``quiz.<id>.q``)."""
    topic: str
    """What it is about (``--topic`` picks by it; ``quiz.topic.<topic>`` names it)."""
    answer: object
    """Choice: the right letter. Numeric: ``answer(ref, **params)`` computes it from the reference, ``ref`` being
    the assignment's reference as a ``grader.submission.loader.Namespace`` (``ref.get("noam_lr")``)."""
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
    """The right letter, or the number."""


def questions(assignment):
    """``assignment``'s questions, in its order; ``AssignmentError`` when it has none."""
    module = assignment.practice_module()
    found = tuple(getattr(module, "QUESTIONS", ()))
    if not found:
        raise AssignmentError(f"assignment {assignment.name!r} has no quiz; expected a practice module "
                              f"(Assignment.practice) defining QUESTIONS")
    return found


def topics_of(questions):
    """The topics of ``questions``, each once, in the order they first come."""
    return tuple(dict.fromkeys(q.topic for q in questions))


def reference(assignment):
    """``assignment``'s reference as a ``Namespace`` of its contract names: what numeric answers are computed from.
    The quiz runs the reference only, in the student's own process: it needs no sealing."""
    from grader.submission.runner import reference_namespace

    return reference_namespace(assignment)


def ask(question, rng, ref):
    """``question`` with its values drawn from ``rng`` and its answer computed from ``ref`` (``reference``)."""
    if question.kind == "choice":
        return Asked(question, {}, question.answer)
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
    pool = [q for q in every if not topics or q.topic in topics]
    rng.shuffle(pool)
    if n:
        pool = pool[:n]
    ref = reference(assignment) if any(q.kind == "number" for q in pool) else None
    return seed, [ask(q, random.Random(f"{seed}:{q.id}"), ref) for q in pool]


def parse(asked, reply):
    """The reply as an answer (a letter or a float), or ``None`` when it is not one."""
    reply = (reply or "").strip().lower()
    if asked.question.kind == "choice":
        return reply if len(reply) == 1 and reply in LETTERS else None
    try:
        return float(reply.replace("_", "").replace(",", "").replace(" ", ""))
    except ValueError:
        return None


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
        lines += [wrap(text(f"quiz.{qid}.{letter}", lang), cols, indent="      ", first=f"  ({letter}) ")
                  for letter in LETTERS]
        lines.append(text("quiz.prompt_choice", lang))
    else:
        lines.append(text("quiz.prompt_number_tol" if asked.question.rel_tol else "quiz.prompt_number", lang))
    return "\n".join(lines)


def run(questions, *, lang="en", answers=None, stdin=None, out=None, interactive=False, replay="", cols=100):
    """Ask ``questions``, reading each reply from ``answers`` (an iterator) or ``stdin``; returns how many were right.

    ``replay`` is the command that asks the same questions again; ``cols`` the width to fold the texts to.
    """
    from grader.messages import text
    from grader.practice.render import wrap
    write = out.write
    write(wrap(text("quiz.header", lang, n=len(questions), replay=replay), cols, indent="") + "\n")
    right = 0
    for i, asked in enumerate(questions, start=1):
        head = f"{i}/{len(questions)} [{text('quiz.topic.' + asked.question.topic, lang)}] "
        write("\n" + question_text(asked, lang, cols, head) + "\n")
        reply = None
        while True:
            if answers is not None:
                reply = next(answers, None)
                if reply is not None:
                    write(f"> {reply}\n")
            else:
                write("> ")
                out.flush()
                line = stdin.readline()
                reply = line.rstrip("\n") if line else None
                if not interactive and reply is not None:
                    write(reply + "\n")
            if reply is None or parse(asked, reply) is not None or not interactive or not reply.strip():
                break
            write(text(f"quiz.retry_{asked.question.kind}", lang) + "\n")
        qid = asked.question.id
        why = text(f"quiz.{qid}.why", lang, answer=show_answer(asked), **asked.params)
        if mark(asked, reply):
            right += 1
            write(text("quiz.right", lang) + "\n")
        else:
            shown = "" if reply is None else reply.strip()
            key = "quiz.wrong" if parse(asked, shown) is not None else "quiz.unreadable" if shown else "quiz.unanswered"
            write(text(key, lang, reply=shown, answer=show_answer(asked)) + "\n")
        write(wrap(why, cols, indent="  ") + "\n")
    pct = 100.0 * right / len(questions) if questions else 0.0
    write("\n" + text("quiz.score", lang, right=right, total=len(questions), pct=f"{pct:.0f}") + "\n")
    return right
