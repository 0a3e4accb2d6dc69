"""``gradekit``: parses arguments, calls ``grader.api``, prints. Exit status: 0 all passed, 1 something failed,
2 usage error."""

import argparse
import atexit
import importlib
import importlib.util
import os
import shlex
import shutil
import sys

from grader.assignment import DEFAULT, KitError
from grader.errors import UsageError
from grader.messages import text

HELP_TASKS = "comma-separated task ids to grade (default: all of the assignment's)"
HELP_ASSIGNMENT = (
    f"the assignment: a built-in name, an import path or a folder (default: the course configuration's, else {DEFAULT})"
)


def _task_list(text):
    """``"mha, masks"`` -> ``("mha", "masks")``; the ids are checked against the assignment by ``api.check``."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _check_parser(sub):
    p = sub.add_parser("check", help="grade one submission folder")
    p.add_argument("path", help="the submission folder (a filled-in copy of skeleton/)")
    p.add_argument("--assignment", default=None, help=HELP_ASSIGNMENT)
    p.add_argument("--tasks", type=_task_list, default=None, help=HELP_TASKS)
    p.add_argument("--only", default=None, help="comma-separated check ids, e.g. mha.equivalence")
    p.add_argument(
        "--profile",
        choices=("quick", "full"),
        default="full",
        help="quick: fewer examples for fast feedback; full: final grading (default)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="explore other examples with this seed (default: the same examples every run)",
    )
    p.add_argument("--device", default=None, help="run the device checks on this device only (cpu, cuda, mps)")
    p.add_argument(
        "--sealed", action="store_true", help="sealed grading: run the submission in a worker process with time limits"
    )
    p.add_argument("--isolated", dest="sealed", action="store_true", help=argparse.SUPPRESS)  # its former name
    p.add_argument("--allow-banned", action="store_true", help="do not withhold points for banned APIs")
    p.add_argument(
        "--bank",
        metavar="FILE",
        default=None,
        help="grade against this answer bank instead of the reference (a kit that holds no reference)",
    )
    p.add_argument(
        "--config",
        default=None,
        help="course configuration (gradekit.toml, or a pyproject.toml with [tool.gradekit]); "
        "default: the nearest gradekit.toml from the current folder up",
    )
    p.add_argument(
        "--all-checks",
        action="store_true",
        help="instructors: also run the checks the course configuration hides from students",
    )
    p.add_argument(
        "--lang",
        choices=("en", "zh"),
        default=None,
        help="language of the messages (default: the course configuration's, else en)",
    )
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report (with pictures)")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML: one testcase per check")
    p.add_argument("--gradescope", metavar="FILE", help="also write Gradescope's results.json")
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="list passed checks too, and show the traceback (your files' frames) of code that raised",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    return p


def _progress(stream):
    def show(i, n, spec):
        if spec is None:
            stream.write("\r" + " " * 70 + "\r")
        else:
            stream.write(f"\r[{i + 1}/{n}] {spec.id:<40}")
        stream.flush()

    return show


def cmd_check(args):
    from grader import api

    only = tuple(s.strip() for s in args.only.split(",")) if args.only else None
    progress = None if args.quiet or not sys.stderr.isatty() else _progress(sys.stderr)
    from grader.config import course_config

    config = course_config(args.config, students=not args.all_checks)
    settings = api.settings(
        assignment=args.assignment,
        tasks=args.tasks,
        profile=args.profile,
        seed=args.seed,
        device=args.device,
        only=only,
        sealed=args.sealed,
        allow_banned=args.allow_banned,
        bank=args.bank,
        progress=progress,
        config=config,
        figures=bool(args.html),
        command=invoked_as(),
        rerun_options=rerun_options(args),
        lang=args.lang,
    )
    lang = settings.options.lang  # the course's language where the command names none
    result = api.check(path=args.path, assignment=settings.assignment, options=settings.options)
    from grader.views import terminal

    print(terminal.summary(result, lang=lang, verbose=args.verbose, color=sys.stdout.isatty()))
    # Each report's module only where it is asked for: the HTML, JUnit and Gradescope views (and Jinja2) take
    # 0.1-0.2 s to import, a tenth of a quick check's own work.
    wrote = True
    for view, kind, target in (
        ("json_view", "JSON", args.json),
        ("html", "HTML", args.html),
        ("junit", "JUnit", args.junit),
        ("gradescope", "Gradescope", args.gradescope),
    ):
        if target:
            try:
                importlib.import_module(f"grader.views.{view}").write(result, target, lang=lang)
            except OSError as err:
                wrote = False
                print(
                    text("ui.report_not_written", lang, kind=kind, path=target, detail=err.strerror or str(err)),
                    file=sys.stderr,
                )
                continue
            print(text("ui.report_written", lang, kind=kind, path=os.path.abspath(target)))
    return 2 if not wrote else 0 if result.passed else 1


def invoked_as():
    """How the user started gradekit, as a shell word or two, for the commands we print them to run: what
    ``scripts/gradekit`` says it was called as (``GRADEKIT_PROG``), else as ``started_as`` finds it."""
    prog = os.environ.get("GRADEKIT_PROG")
    return shlex.quote(prog) if prog else started_as(("gradekit",), "grader")


def started_as(names, module):
    """How this program was started, as a shell word or two: its name where one of ``names`` on the PATH is the
    program that runs, else the program's path, else this interpreter with ``-m module``."""
    argv0 = sys.argv[0] if sys.argv else ""
    name = os.path.basename(argv0)
    if name in names:
        found = shutil.which(name)
        if found and os.path.realpath(found) == os.path.realpath(argv0):
            return name
        return shlex.quote(from_here(argv0))
    return f"{shlex.quote(from_here(sys.executable))} -m {module}"


def from_here(path):
    """``path`` relative to the current folder when it lies inside it (``.venv/bin/python``), else absolute: what
    a command we print names it by, to run from here."""
    path = os.path.abspath(path)
    here = os.getcwd()
    return os.path.relpath(path, here) if path.startswith(here + os.sep) else path


def rerun_options(args):
    """The options of ``gradekit check`` that a rerun of one check must repeat to show the same thing (the
    assignment, seed and ``--sealed`` are added by ``api.reproduce_command``)."""
    options = []
    for flag, value, default in (
        ("--profile", args.profile, "full"),
        ("--device", args.device, None),
        ("--bank", args.bank, None),
        ("--config", args.config, None),
        ("--lang", args.lang, None),
    ):
        if value != default:
            options += [flag, value]
    for flag, on in (
        ("--allow-banned", args.allow_banned),
        ("--all-checks", args.all_checks),
        ("--verbose", args.verbose),
    ):
        if on:
            options.append(flag)
    return tuple(options)


def run_demo(argv):
    """``gradekit demo [--assignment SPEC] ...``: the assignment's own demo, given the other arguments."""
    from grader import api

    spec, argv = _take_option(argv, "--assignment")
    assignment = api.resolve_assignment(spec)
    if assignment.demo:
        assignment.require_reference("gradekit demo")
    demo = assignment.function(assignment.demo)
    if demo is None:
        raise api.UsageError(f"assignment {assignment.name!r} has no demo")
    return demo(argv)


def cmd_demo(args):
    return run_demo(args.rest)


def _folders_argument(parser):
    """``--folders``: what ``bank build`` and ``kit build`` record over instead of ``kit.catalogue_folders``."""
    parser.add_argument(
        "--folders",
        nargs="*",
        default=None,
        metavar="FOLDER",
        help="record over these submission folders instead of the reference, the skeleton and the catalogue",
    )


def _whole_runs_argument(parser):
    """``--whole-run-mb``: how much of the reference's whole runs over mending parts a bank keeps
    (``kit.record``'s ``mending_bytes``)."""
    parser.add_argument(
        "--whole-run-mb",
        type=float,
        default=None,
        metavar="MB",
        help="record the reference's overfitting run over the parts that mend a broken task beneath it, and keep "
        "each record up to MB megabytes of tensors (default: none recorded; about 30 lets a kit grade such a run "
        "as the final grade does, for a bigger kit)",
    )


def _mending_bytes(args):
    return None if args.whole_run_mb is None else int(args.whole_run_mb * 1e6)


def _bank_parser(sub):
    p = sub.add_parser(
        "bank",
        help="answer banks: the reference's answers, recorded, for a kit that holds no reference",
    )
    actions = p.add_subparsers(dest="action", required=True)
    b = actions.add_parser(
        "build",
        help="grade the reference, the skeleton and every catalogued mistake, and keep the reference's answers",
    )
    b.add_argument("--assignment", default=None, help=HELP_ASSIGNMENT)
    b.add_argument("--out", required=True, metavar="FILE", help="the bank file to write")
    b.add_argument("--tasks", type=_task_list, default=None, help=HELP_TASKS)
    b.add_argument(
        "--profile",
        choices=("quick", "full", "both"),
        default="both",
        help="the profiles whose questions the bank answers (default: both)",
    )
    _folders_argument(b)
    _whole_runs_argument(b)
    b.add_argument("--lang", choices=("en", "zh"), default=None, help="language of what it says (default en)")
    return p


def cmd_bank(args):
    from grader import api
    from grader import kit as bank

    assignment = api.resolve_assignment(args.assignment)
    assignment.require_reference("gradekit bank build")
    profiles = ("quick", "full") if args.profile == "both" else (args.profile,)

    def progress(i, n, path, profile):
        print(f"[{i + 1}/{n}] {profile:<5} {path.name}", file=sys.stderr, flush=True)

    recorded = bank.record(
        assignment,
        args.folders,
        profiles=profiles,
        tasks=args.tasks,
        progress=progress,
        mending_bytes=_mending_bytes(args),
    )
    written = recorded.save(args.out)
    prints = len(recorded.prints) if recorded.prints is not None else 0
    size = written.stat().st_size / 1e6
    print(f"{os.path.abspath(written)}: {len(recorded)} answers, {prints} mistakes' fingerprints ({size:.1f} MB)")
    for line in bank.whole_runs_said(recorded.meta, args.lang):
        print(line)
    return 0


def _kit_parser(sub):
    p = sub.add_parser(
        "kit",
        help="student kits: the self-check without the reference, grading against the reference's recorded answers",
    )
    actions = p.add_subparsers(dest="action", required=True)
    b = actions.add_parser(
        "build",
        help="write a student kit of one assignment (a wheel and a plain zip of the same files): no reference, "
        "its answers recorded over the reference, the skeleton and every catalogued mistake",
    )
    b.add_argument("--assignment", default=None, help=HELP_ASSIGNMENT)
    b.add_argument("--out", required=True, metavar="DIR", help="the folder to write the kit into")
    b.add_argument(
        "--profile",
        choices=("quick", "full", "both"),
        default="both",
        help="the profiles students can grade in with the kit (default: both)",
    )
    b.add_argument("--tasks", type=_task_list, default=None, help=HELP_TASKS)
    source = b.add_mutually_exclusive_group()
    source.add_argument(
        "--bank", metavar="FILE", default=None, help="use this answer bank (gradekit bank build) instead of recording"
    )
    _folders_argument(source)
    _whole_runs_argument(b)
    b.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="the course configuration whose held-back secret no kit may hold (default: the nearest gradekit.toml)",
    )
    b.add_argument("--lang", choices=("en", "zh"), default=None, help="language of what it says (default en)")
    s = actions.add_parser(
        "scan",
        help="look for any reference's code, compiled Python or pickled data in kits (exit 1 when found)",
    )
    s.add_argument("paths", nargs="+", metavar="PATH", help="a .whl or .zip kit, or a folder holding kits")
    s.add_argument(
        "--assignment", default=None, help="also this assignment's reference (every built-in one is looked for)"
    )
    s.add_argument("--lang", choices=("en", "zh"), default=None, help="language of what it says (default en)")
    return p


def _megabytes(path):
    return f"{path.stat().st_size / 1e6:.2f}"


def cmd_kit(args):
    from grader import api, kit

    lang = args.lang or "en"
    if args.action == "scan":
        extra = [api.resolve_assignment(args.assignment)] if args.assignment else []
        fingerprint = kit.Fingerprint.of(extra)
        status = 0
        for given in args.paths:
            kits = kit.kits_in(given)
            if not kits:
                print(text("kit.cli.no_kits", lang, path=given), file=sys.stderr)
                status = max(status, 2)
            for path in kits:
                files, findings = fingerprint.scan_archive(path)
                if findings:
                    status = max(status, 1)
                    print(text("kit.cli.scan_found", lang, path=path, n=len(findings)))
                    for finding in findings:
                        print("  " + finding.say(lang))
                else:
                    print(text("kit.cli.scan_clean", lang, path=path, files=files))
        return status
    assignment = api.resolve_assignment(args.assignment)
    profiles = ("quick", "full") if args.profile == "both" else (args.profile,)

    def progress(i, n, path, profile):
        print(text("kit.cli.recording", lang, i=i + 1, n=n, profile=profile, name=path.name), file=sys.stderr)

    from grader.config import ConfigError, course_config

    course = course_config(args.config, students=False, assignment=assignment)
    try:  # the course secret of the final grade's held-back examples: a kit holding it is refused
        secret = course.held_back_secret() if course is not None else None
    except ConfigError as exc:
        raise api.UsageError(str(exc)) from None
    try:
        built = kit.build(
            assignment,
            args.out,
            profiles=profiles,
            bank=args.bank,
            folders=args.folders,
            tasks=args.tasks,
            progress=progress,
            secrets=(secret,) if secret else (),
            mending_bytes=_mending_bytes(args),
        )
    except kit.KitRefused as exc:
        for finding in exc.findings:
            print("  " + finding.say(lang), file=sys.stderr)
        print("gradekit: " + text("kit.cli.refused", lang), file=sys.stderr)
        return 1
    except KitError:
        raise
    except ValueError as exc:  # a bank of another assignment, an assignment loaded from a folder
        raise api.UsageError(str(exc)) from None
    recorded = ", ".join(built.bank.meta.get("profiles") or ())
    prints = len(built.bank.prints) if built.bank.prints is not None else 0
    print(text("kit.cli.bank", lang, answers=len(built.bank), prints=prints, profiles=recorded))
    for line in kit.whole_runs_said(built.bank.meta, lang):
        print(line)
    for path in (built.wheel, built.zip):
        print(text("kit.cli.built", lang, path=os.path.abspath(path), files=built.files, size=_megabytes(path)))
    return 0


def _start_parser(sub):
    p = sub.add_parser(
        "start",
        help="students: copy the assignment's stubs into a new folder, with the contract beside them, to fill in",
    )
    p.add_argument("dest", metavar="DEST", help="the new (or empty) folder to write; it is never written over")
    p.add_argument("--assignment", default=None, help=HELP_ASSIGNMENT)
    p.add_argument(
        "--notebook",
        action="store_true",
        help="write the starter notebook instead (a code cell per task, then its check cell): DEST itself where it "
        "ends in .ipynb, else into the folder DEST",
    )
    p.add_argument(
        "--lang",
        choices=("en", "zh"),
        default=None,
        help="language of the messages and of the notebook's text (default: the course configuration's, else en)",
    )
    return p


def cmd_start(args):
    from grader import api
    from grader.config import course_config
    from grader.start import StartRefused, next_commands, start

    settings = api.settings(assignment=args.assignment, config=course_config(None), lang=args.lang)
    assignment, lang = settings.assignment, settings.options.lang
    try:
        started = start(args.dest, assignment, notebook=args.notebook, lang=lang)
    except StartRefused as exc:
        print(f"gradekit: error: {exc.say(lang)}", file=sys.stderr)
        return 2
    if started.notebook is not None:
        print(text("start.wrote_notebook", lang, path=started.notebook, assignment=assignment.name))
    else:
        print(text("start.wrote", lang, path=started.dest, assignment=assignment.name, files=len(started.files)))
    if started.contract is not None:
        print(text("start.wrote_contract", lang, path=started.contract))
    print()
    print(text("start.fill_in_notebook" if started.notebook is not None else "start.fill_in", lang))
    options = ("--lang", args.lang) if args.lang else ()
    for key, command in next_commands(started, assignment, command=invoked_as(), options=options):
        print(f"  {text(key, lang)}")
        print(f"    {command}")
    return 0


# Sub-commands that live with their feature; each module has ``register(subparsers)`` setting ``func``.
FEATURE_COMMANDS = ("grader.practice.cli", "grader.batch.cli", "grader.watch", "grader.server.cli")


def build_parser(command=None):
    """The ``gradekit`` parser. With ``command="check"`` (the command line's first word), the other features'
    sub-commands are left out: ``check`` parses, helps and errs the same, and does not import the practice,
    batch and watch modules it never uses."""
    parser = argparse.ArgumentParser(
        prog="gradekit", description="Grade students' hand-written implementations (built in: a Transformer)."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _check_parser(sub).set_defaults(func=cmd_check)
    d = sub.add_parser(
        "demo",
        help="the assignment's reference at work (the Transformer: trained on the pinyin "
        "task, printing its translations); --submission PATH trains your own code the same "
        "way and shows it beside the reference; --assignment SPEC chooses",
        add_help=False,
    )
    d.add_argument("rest", nargs=argparse.REMAINDER)
    d.set_defaults(func=cmd_demo)
    _bank_parser(sub).set_defaults(func=cmd_bank)
    _kit_parser(sub).set_defaults(func=cmd_kit)
    _start_parser(sub).set_defaults(func=cmd_start)
    for name in FEATURE_COMMANDS if command != "check" else ():
        if importlib.util.find_spec(name.rsplit(".", 1)[0]) is not None and importlib.util.find_spec(name):
            importlib.import_module(name).register(sub)
    return parser


def _take_option(argv, name):
    """``(value, the other arguments)`` for ``name VALUE`` or ``name=VALUE`` in ``argv`` (value ``None`` when
    absent), before parsing."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1], argv[:i] + argv[i + 2 :]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1], argv[:i] + argv[i + 1 :]
    return None, list(argv)


def entry():
    """The ``gradekit`` command (and ``python -m grader``): ``main``, then an exit without the interpreter's
    teardown. Everything the command wrote is flushed and every ``atexit`` handler has run (the fork server is
    closed, temporary folders removed); what is skipped is freeing each of torch's and Hypothesis's objects one
    by one: 0.4-0.8 s of a 10 s check, measured."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``gradekit ... | head``): nothing more can be said
            pass
    atexit._run_exitfuncs()
    os._exit(code if isinstance(code, int) else 1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["demo"]:  # the demo parses its own options (argparse's REMAINDER drops leading ones)
        try:
            return run_demo(argv[1:])
        except UsageError as exc:
            print(f"gradekit: error: {exc}", file=sys.stderr)
            return 2
        except KitError as exc:
            return _kit_error(exc, _take_option(argv, "--lang")[0])
    parser = build_parser(argv[0] if argv else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code not in (0, None) else 0
    if argv[:1] == ["check"] and args.sealed and os.path.exists(args.path):
        # Not for a path that is not there: the command only says so, at once.
        _start_fork_server(args)
    try:
        return args.func(args)
    except UsageError as exc:
        from grader.safetext import for_terminal

        print(f"gradekit: error: {for_terminal(exc)}", file=sys.stderr)
        return 2
    except KitError as exc:
        return _kit_error(exc, getattr(args, "lang", None))


def _start_fork_server(args):
    """Start the fork server of a sealed check's workers now, so that it imports torch on the other core while this
    process imports its own, and pay torch's lazy imports and the assignment's first-call costs here meanwhile (the
    reference's training needs them too; a second judge forked from this one has them). The assignment is the one
    the check grades: ``--assignment``, else the course configuration's, else the default."""
    from grader.assignment import load
    from grader.submission import forkserver

    try:
        name = args.assignment
        if name is None:
            from grader.config import course_config

            name = getattr(course_config(args.config), "assignment", None)
        assignment = load(name)
    except ValueError:  # an unknown assignment, a configuration that cannot be read: the command says so
        return
    # Warm (the assignment's first-call costs paid before its first fork): a sealed check forks a worker for each
    # variant, and each would pay them again.
    server = forkserver.shared(warm=True, assignment=assignment)
    if not server.is_ready():
        from grader.probes import warm_up

        warm_up()
        assignment.run_warm_up()


def _kit_error(exc, lang):
    """Say what a student kit cannot do (``KitError``), in ``lang``, else the course configuration's; status 2."""
    if lang not in ("en", "zh"):
        lang = None
        try:
            from grader.config import course_config

            lang = getattr(course_config(None), "lang", None)
        except ValueError:  # an unreadable course configuration: the message in English still says it all
            pass
    print(f"gradekit: error: {exc.say(lang or 'en')}", file=sys.stderr)
    return 2
