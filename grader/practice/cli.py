"""``gradekit practice`` and ``gradekit quiz``: parse, call ``session``/``quiz``, print with ``render``.

What can be drilled and asked is the assignment's (``--assignment``), so the parsers cannot list it: drill
ids, task ids and topics are checked when the command runs, and a wrong one is a usage error (status 2).
"""

import sys

from grader.assignment import DEFAULT, AssignmentError, KitError, load
from grader.messages import text
from grader.practice import render, session

HELP_ASSIGNMENT = f"the assignment: a built-in name, an import path or a folder (default: {DEFAULT})"
HELP_LANG = "language of the texts: en or zh (default: the drill's, else en)"
HELP_DIR = (
    "the workspace folder (a new drill: default practice/<drill>-<time> in your gradekit data folder, "
    "$GRADEKIT_HOME or ~/.local/share/gradekit; otherwise: the current folder, else the drill started last)"
)


def _lang(args, state=None):
    return args.lang or (state.lang if state is not None else None) or "en"


def _commands(args, lang, root=None):
    """The commands a text of this run names (``session.commands``): started the way the user started gradekit
    (``grader.cli.invoked_as``, as ``check``'s rerun lines are) and keeping the language and the assignment."""
    from grader.cli import invoked_as

    return session.commands(invoked_as(), lang=session.spelled_lang(lang), assignment=args.assignment, root=root)


def _error(exc, lang, cmds):
    from grader.safetext import for_terminal

    params = {k: for_terminal(v) for k, v in exc.params.items()}
    print(
        "gradekit: " + text("practice.error", lang) + ": " + text(exc.key, lang, **{**cmds, **params}), file=sys.stderr
    )
    return 2


def cmd_practice(args):
    from grader.cli import invoked_as

    command = invoked_as()  # how the user started gradekit: every command it prints starts with it
    actions = [a for a in ("check", "hint", "history") if getattr(args, a) not in (None, False)]
    lang = _lang(args)
    try:
        if len(actions) > 1 or (actions and (args.drill or args.random)) or (args.drill and args.random):
            raise session.PracticeError("practice.error.one_action")
        if args.only is not None and not args.check:
            raise session.PracticeError("practice.error.only_needs_check")
        if args.check:
            state = session.open_workspace(args.dir)[1]
            lang = _lang(args, state)
            progress = None
            if sys.stderr.isatty():
                from grader.cli import _progress

                progress = _progress(sys.stderr)
            only = tuple(c.strip() for c in args.only.split(",") if c.strip()) if args.only else None
            out = session.check(
                path=args.dir, profile=args.profile, only=only, lang=args.lang, progress=progress, command=command
            )
            print(render.checked(out, lang, color=sys.stdout.isatty(), command=command))
            return 0 if out.result.passed else 1
        if args.hint is not None:
            state = session.open_workspace(args.dir)[1]
            lang = _lang(args, state)
            out = session.hint(path=args.dir, task=args.hint or None)
            print(render.hint(out, lang, command=command))
            return 0
        if args.history:
            print(render.history_view(session.history(), lang, command=command))
            return 0
        if args.drill or args.random:
            drill = args.drill or session.pick_random(args.seed, assignment=args.assignment).id
            out = session.start(
                drill=drill,
                assignment=args.assignment,
                minutes=args.minutes,
                dest=args.dir,
                no_hints=args.no_hints,
                lang=lang,
            )
            print(render.started(out, lang, command=command))
            return 0
        print(
            render.drill_list(
                session.list_drills(assignment=args.assignment), lang, command=command, assignment=args.assignment
            )
        )
        return 0
    except session.PracticeError as exc:
        return _error(exc, lang, _commands(args, lang, root=args.dir))
    except KitError as exc:
        print("gradekit: " + text("practice.error", lang) + ": " + exc.say(lang), file=sys.stderr)
        return 2
    except AssignmentError as exc:
        print(f"gradekit: {exc}", file=sys.stderr)
        return 2


def _practice_parser(sub):
    p = sub.add_parser(
        "practice",
        help="interview drills against the clock (list them with no arguments)",
        description="Write one module against the clock in a fresh workspace where only the drilled "
        "names are stubs; check it, ask for hints, see your history.",
    )
    p.add_argument(
        "drill",
        nargs="?",
        default=None,
        help="the drill to start: a task id or an interview set (list them with no arguments)",
    )
    p.add_argument(
        "--assignment",
        default=None,
        metavar="SPEC",
        help=HELP_ASSIGNMENT + "; a workspace's checks and hints use the one it was started with",
    )
    p.add_argument("--minutes", type=float, default=None, help="time limit (default: the drill's typical time)")
    p.add_argument("--dir", default=None, help=HELP_DIR)
    p.add_argument(
        "--no-hints", action="store_true", help="withhold diagnoses and hints until the time is up, as in an interview"
    )
    p.add_argument("--random", action="store_true", help="start a random drill")
    p.add_argument("--seed", type=int, default=None, help="with --random: make the choice repeatable")
    p.add_argument("--check", action="store_true", help="grade the drill in the workspace and record the attempt")
    p.add_argument(
        "--only",
        default=None,
        metavar="CHECKS",
        help="with --check: grade only these checks (comma-separated ids, as each failure's rerun line "
        "gives them); a rerun, not recorded",
    )
    p.add_argument(
        "--hint",
        nargs="?",
        const="",
        default=None,
        metavar="TASK",
        help="show the next hint level (for TASK, in a set of several tasks)",
    )
    p.add_argument("--history", action="store_true", help="your attempts, a chart of the times and your bests")
    p.add_argument(
        "--profile",
        choices=("quick", "full"),
        default="quick",
        help="with --check: quick (fewer examples, the default while practising) or full",
    )
    p.add_argument("--lang", choices=("en", "zh"), default=None, help=HELP_LANG)
    p.set_defaults(func=cmd_practice)
    return p


def cmd_quiz(args):
    from grader.cli import invoked_as
    from grader.practice import quiz

    lang = args.lang or "en"
    try:
        assignment = load(args.assignment)
        seed, questions = quiz.draw(assignment, n=args.n, seed=args.seed, topics=args.topic)
    except KitError as exc:
        print("gradekit: " + exc.say(lang), file=sys.stderr)
        return 2
    except ValueError as exc:  # AssignmentError included
        print(f"gradekit: {exc}", file=sys.stderr)
        return 2
    if not assignment.has_reference:  # a student kit: the questions its answers need the reference for are left out
        print(text("kit.quiz_choice_only", lang))
    answers = None
    if args.answers is not None:
        replies = [a.strip() for a in args.answers.split(",")]
        try:
            quiz.check_replies(questions, replies)
        except session.PracticeError as exc:
            return _error(exc, lang, _commands(args, lang))
        answers = iter(replies)
    again = quiz.replay_args(n=args.n, seed=seed, topics=args.topic, assignment=args.assignment)
    replay = session.replay_line(again, command=invoked_as(), lang=session.spelled_lang(lang))
    marked = quiz.run(
        questions,
        lang=lang,
        answers=answers,
        stdin=sys.stdin,
        out=sys.stdout,
        interactive=answers is None and sys.stdin.isatty(),
        replay=replay,
        cols=render.terminal_columns(),
    )
    if quiz.save(marked, assignment=assignment.package, seed=seed, topics=args.topic, lang=lang, replay=again):
        print(text("quiz.saved", lang, **_commands(args, lang)))
    return 0 if all(m.right for m in marked) else 1


def _quiz_parser(sub):
    p = sub.add_parser(
        "quiz",
        help="the conceptual questions interviewers ask, auto-marked with explanations",
        description="Answer with the option letter (a, b, c, d) or a number. Reads the answers from "
        "standard input, one per line (a reply of the wrong kind is asked again; an "
        "empty line skips), or from --answers. Each quiz with an answer is saved in your "
        "history (gradekit practice --history).",
    )
    p.add_argument("--n", type=int, default=10, help="how many questions (default 10; 0 for all)")
    p.add_argument("--seed", type=int, default=None, help="the same questions in the same order (default: random)")
    p.add_argument(
        "--topic",
        action="append",
        default=None,
        help="only questions on this topic (repeat for several; an unknown one lists them)",
    )
    p.add_argument("--assignment", default=None, metavar="SPEC", help=HELP_ASSIGNMENT)
    p.add_argument(
        "--answers",
        default=None,
        metavar="A,B,...",
        help='answers in order, comma-separated ("b,64,a"; an empty one skips its question): no prompts',
    )
    p.add_argument("--lang", choices=("en", "zh"), default=None, help="language of the questions (default en)")
    p.set_defaults(func=cmd_quiz)
    return p


def register(subparsers):
    """Add ``practice`` and ``quiz`` to ``gradekit``'s sub-commands."""
    _practice_parser(subparsers)
    _quiz_parser(subparsers)
