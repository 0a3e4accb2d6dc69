"""``gradekit batch`` and ``gradekit gradescope build``: registered by ``grader.cli`` (``FEATURE_COMMANDS``)."""

import argparse
import json
import os
import sys
import zipfile

from grader.assignment import DEFAULT

HELP_TASKS = "comma-separated task ids to grade (default: the course configuration's, else all of the assignment's)"
HELP_ASSIGNMENT = (
    f"the assignment: a built-in name, an import path or a folder (default: the course configuration's, else {DEFAULT})"
)
HELP_CONFIG = (
    "course configuration (gradekit.toml or a pyproject.toml with [tool.gradekit]); default: the nearest "
    "one found from the current folder up"
)


def _task_list(text):
    """``"mha, masks"`` -> ``("mha", "masks")``; the ids are checked against the assignment by the command."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def register(subparsers):
    b = subparsers.add_parser("batch", help="grade a whole class: one sub-folder or .zip per student")
    b.add_argument("submissions", help="folder with one sub-folder or .zip per student, named by student id")
    b.add_argument("--out", required=True, help="output folder: reports, gradebook.csv, index.html (and the cache)")
    b.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        help=f"submissions graded at once (default: the number of CPU cores, {os.cpu_count()})",
    )
    b.add_argument("--assignment", default=None, help=HELP_ASSIGNMENT)
    b.add_argument("--tasks", type=_task_list, default=None, help=HELP_TASKS)
    b.add_argument("--profile", choices=("quick", "full"), default="full", help="quick or full (default) examples")
    b.add_argument("--config", default=None, help=HELP_CONFIG)
    _limit_arguments(b)
    b.add_argument(
        "--copy-policy",
        choices=("zero", "flag"),
        default=None,
        help="a copy of the reference scores 0 (zero, default) or is only flagged (flag)",
    )
    b.add_argument(
        "--figures",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="draw the pictures in each report (default; --no-figures: a little faster)",
    )
    b.add_argument(
        "--overrides",
        default=None,
        metavar="FILE",
        help="the instructor's reviews, a .toml or .csv (default: the course configuration's, or "
        "overrides.toml / overrides.csv beside it)",
    )
    b.add_argument("--force", action="store_true", help="re-grade unchanged submissions too")
    b.add_argument(
        "--lang",
        choices=("en", "zh"),
        default=None,
        help="language of the reports and summary (default: the course configuration's, else en)",
    )
    b.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="grade on a Dask cluster: local:N (N worker processes here) or a scheduler's address, "
        "tcp://host:8786 (pip install 'gradekit[dask]'; docs/CLUSTER.md)",
    )
    b.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    b.set_defaults(func=cmd_batch)

    g = subparsers.add_parser("gradescope", help="Gradescope autograder tools")
    gs = g.add_subparsers(dest="gradescope_command", required=True)
    build = gs.add_parser("build", help="write the autograder zip to upload to Gradescope")
    build.add_argument("--out", default="autograder.zip", help="the zip to write (default: autograder.zip)")
    build.add_argument("--config", default=None, help=HELP_CONFIG)
    build.add_argument("--assignment", default=None, help=HELP_ASSIGNMENT)
    _limit_arguments(build)
    build.add_argument("--tasks", type=_task_list, default=None, help=HELP_TASKS)
    build.add_argument("--profile", choices=("quick", "full"), default="full", help="quick or full (default)")
    build.set_defaults(func=cmd_gradescope_build)


def _limit_arguments(parser):
    """The limits a course configuration's ``[limits]`` sets, as options that override it (defaults: its, else
    ``grader.options.DEFAULTS``)."""
    from grader.options import DEFAULTS

    for flag, name, kind in (
        ("--call-timeout", "call_timeout", float),
        ("--total-timeout", "total_timeout", float),
        ("--memory-mb", "memory_mb", int),
    ):
        default = DEFAULTS[name]
        parser.add_argument(
            flag,
            type=kind,
            default=None,
            help=f"{default.about} (default: the course configuration's, else {default.value})",
        )


def _config_path(arg, assignment):
    """The course configuration's file: ``--config``, else the nearest one found from here (``config.course_config``);
    ``None`` when there is none."""
    if arg:
        return arg
    from grader.config import course_config

    found = course_config(None, students=False, assignment=assignment)
    return found.source.split(" [", 1)[0] if found is not None else None


def cmd_batch(args):
    from grader.batch.runner import batch
    from grader.messages import text

    stream = None if args.quiet or not sys.stderr.isatty() else sys.stderr
    if os.geteuid() != 0 and args.scheduler is None:  # on Dask, the workers' users count: the batch says after
        print(text("batch.cli.not_jailed", args.lang or "en"), file=sys.stderr)
    kwargs = dict(
        submissions=args.submissions,
        out=args.out,
        jobs=args.jobs,
        tasks=args.tasks,
        profile=args.profile,
        config=_config_path(args.config, args.assignment),
        lang=args.lang,
        call_timeout=args.call_timeout,
        total_timeout=args.total_timeout,
        memory_mb=args.memory_mb,
        copy_policy=args.copy_policy,
        figures=args.figures,
        force=args.force,
        stream=stream,
        assignment=args.assignment,
        overrides=args.overrides,
    )
    if args.scheduler is not None:
        from grader.batch import distributed

        result = distributed.batch(args.scheduler, **kwargs)
    else:
        result = batch(**kwargs)
    for line in closing_lines(result, result.lang):
        print(line)
    return 0


def closing_lines(result, lang):
    """What the batch says when done: the entries skipped, the counts, that no held-back examples were used (a
    course without a secret), a line per submission with files that could not be imported, each with its error
    (graded, but its row alone would not say why), and last every submission that could not be graded with its
    reason (all on the last line, so that it is the line a log tail shows)."""
    from grader.messages import text
    from grader.safetext import for_terminal

    lines = [for_terminal(w) for w in result.warnings]
    if result.skipped:
        key = "batch.cli.skipped_one" if len(result.skipped) == 1 else "batch.cli.skipped"
        lines.append(
            text(
                key,
                lang,
                n=len(result.skipped),
                entries="; ".join(
                    f"{for_terminal(s.name)} ({text('batch.skipped.' + s.why, lang)})" for s in result.skipped
                ),
            )
        )
    lines.append(
        text(
            "batch.cli.done",
            lang,
            graded=result.graded,
            cached=result.cached,
            n=len(result.records),
            seconds=result.duration_s,
            gradebook=for_terminal(result.out / "gradebook.csv"),
        )
    )
    if not result.held_back:  # said once: a replay of the student kit's answer bank would pass
        lines.append(text("batch.cli.no_held_back", lang))
    lines += [
        text("batch.cli.not_imported", lang, student=for_terminal(r["student"]), causes=for_terminal(r["load_causes"]))
        for r in result.records
        if r.get("load_causes")
    ]
    failed = result.not_graded
    if failed:
        lines.append(
            text(
                "batch.cli.not_graded",
                lang,
                n=len(failed),
                entries="; ".join(
                    f"{for_terminal(r['student'])}: {for_terminal(r.get('detail') or r.get('reason', ''))}"
                    for r in failed
                ),
            )
        )
    return lines


def cmd_gradescope_build(args):
    from grader.api import UsageError
    from grader.assignment import KitError
    from grader.batch.gradescope_build import build
    from grader.messages import text

    config = _config_path(args.config, args.assignment)
    try:
        path = build(
            out=args.out,
            config=config,
            tasks=args.tasks,
            profile=args.profile,
            assignment=args.assignment,
            call_timeout=args.call_timeout,
            total_timeout=args.total_timeout,
            memory_mb=args.memory_mb,
        )
    except KitError:  # a student kit: said in the user's language by the command line
        raise
    except ValueError as exc:  # the configuration (ConfigError), the assignment (AssignmentError), a task id
        raise UsageError(str(exc)) from None
    print(text("batch.cli.built", "en", path=path, size=path.stat().st_size))
    settings = json.loads(zipfile.ZipFile(path).read("settings.json"))
    if settings.get("held_back") is None:  # said once, as the batch says it
        print(text("batch.cli.no_held_back", "en"), file=sys.stderr)
    return 0
