"""``gradekit serve init|roster import|run|db status`` and ``gradekit submit``: registered by ``grader.cli``
(``FEATURE_COMMANDS``). The server's own packages (Starlette, uvicorn, SQLAlchemy, Alembic: ``pip install
'gradekit[server]'``) are imported only when a command needs them."""

import sys
from pathlib import Path

from grader.messages import text

HELP_CONFIG = "course configuration (gradekit.toml, or its folder) with a [server] section (docs/SERVER.md)"
HELP_LANG = "language of the messages (default: the course configuration's, else en)"


def register(subparsers):
    s = subparsers.add_parser("serve", help="the course server: students hand in over HTTP (docs/SERVER.md)")
    ss = s.add_subparsers(dest="serve_command", required=True)
    init = ss.add_parser("init", help="make the data folder and the database; prints the instructor's token once")
    init.add_argument("--config", default=None, help=HELP_CONFIG)
    init.add_argument("--lang", choices=("en", "zh"), default=None, help=HELP_LANG)
    init.set_defaults(func=cmd_init)
    roster = ss.add_parser("roster", help="the class list")
    rs = roster.add_subparsers(dest="roster_command", required=True)
    imp = rs.add_parser("import", help="add students from a CSV (columns student, name) and write their tokens")
    imp.add_argument("csv", help="the roster: a CSV with the columns student (the id) and name; others are ignored")
    imp.add_argument("--config", default=None, help=HELP_CONFIG)
    imp.add_argument("--reissue", action="store_true", help="new tokens for students already known too")
    imp.add_argument("--lang", choices=("en", "zh"), default=None, help=HELP_LANG)
    imp.set_defaults(func=cmd_roster_import)
    run = ss.add_parser("run", help="serve the pages and the API, and grade what is handed in")
    run.add_argument("--config", default=None, help=HELP_CONFIG)
    run.add_argument("--host", default=None, help="address to listen on (default: the configuration's, 127.0.0.1)")
    run.add_argument("--port", type=int, default=None, help="port (default: the configuration's, 8000)")
    run.add_argument("--lang", choices=("en", "zh"), default=None, help=HELP_LANG)
    run.set_defaults(func=cmd_run)
    db = ss.add_parser("db", help="the database's schema")
    ds = db.add_subparsers(dest="db_command", required=True)
    st = ds.add_parser("status", help="the database's schema revision and the newest this gradekit knows")
    st.add_argument("--config", default=None, help=HELP_CONFIG)
    st.add_argument("--lang", choices=("en", "zh"), default=None, help=HELP_LANG)
    st.set_defaults(func=cmd_db_status)

    sub = subparsers.add_parser("submit", help="hand a submission in to the course server")
    sub.add_argument("path", help="the submission: a folder (sent zipped), a .zip, a .ipynb or a .py file")
    sub.add_argument("--server", required=True, help="the server's address, e.g. http://127.0.0.1:8000")
    sub.add_argument("--token", default=None, help="your token (default: the environment variable GRADEKIT_TOKEN)")
    sub.add_argument("--wait", action="store_true", help="wait for the grade and print it with the report's address")
    sub.add_argument("--timeout", type=float, default=3600.0, help="seconds --wait waits at most (default: 3600)")
    sub.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the messages (default: en)")
    sub.set_defaults(func=cmd_submit)


def _course(arg, lang=None):
    """The course configuration (``--config``: the file or its folder; default: the nearest one from here)."""
    from grader.config import FILE_NAME, course_config

    if arg and Path(arg).is_dir():
        arg = str(Path(arg) / FILE_NAME)
    course = course_config(arg, students=False)
    if course is None:
        from grader.errors import UsageError

        raise UsageError(text("server.cli.no_config", lang or "en", name=FILE_NAME))
    return course


def _store(course, lang):
    from grader.server.store import Store

    try:
        store = Store(course.server["data"], course.server["database"])
    except ImportError as exc:
        raise _missing(exc, lang) from None
    return store


def _missing(exc, lang):
    from grader.errors import UsageError

    return UsageError(text("server.cli.missing_packages", lang, name=getattr(exc, "name", exc)))


def _imports(lang):
    try:
        import alembic  # noqa: F401
        import sqlalchemy  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise _missing(exc, lang) from None


def _migrated(store, lang):
    """Say what opening the database changed in its schema, if anything (a new database's making is not said)."""
    from grader.server.migrate import FIRST

    done = store.migrated
    if done is not None and done.stamped:
        print(text("server.cli.stamped", lang, revision=FIRST))
    if done is not None and done.upgraded:
        print(text("server.cli.migrated", lang, found=", ".join(done.start), now=done.now))


def cmd_init(args):
    from grader.errors import UsageError
    from grader.server.store import StoreError

    course = _course(args.config, args.lang)
    lang = args.lang or course.lang or "en"
    _imports(lang)
    store = _store(course, lang)
    try:
        token = store.init(lang)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    _migrated(store, lang)
    if token is None:
        print(text("server.cli.init_again", lang, data=store.data))
        return 0
    print(text("server.cli.init_done", lang, data=store.data, database=_safe_url(store.url)))
    print(text("server.cli.instructor_token", lang))
    print(f"  {token}")
    return 0


def _safe_url(url):
    """The database URL without its password, for saying."""
    from grader.server.migrate import said_url

    return said_url(url)


def cmd_roster_import(args):
    from grader.errors import UsageError
    from grader.server.store import NotInitialised, StoreError

    course = _course(args.config, args.lang)
    lang = args.lang or course.lang or "en"
    _imports(lang)
    store = _store(course, lang)
    try:
        if not store.initialised:
            raise NotInitialised(str(store.data))
        store.migrate(lang)
        _migrated(store, lang)
        done = store.import_roster(args.csv, reissue=args.reissue, lang=lang)
    except NotInitialised:
        raise UsageError(text("server.cli.not_initialised", lang, data=store.data)) from None
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    for problem in done.problems:
        print(problem, file=sys.stderr)
    print(text("server.cli.roster_done", lang, added=done.added, reissued=done.reissued, kept=done.kept))
    if done.tokens_file is not None:
        print(text("server.cli.tokens_file", lang, path=done.tokens_file))
    return 1 if done.problems else 0


def cmd_run(args):
    import dataclasses
    import logging

    from grader.errors import UsageError

    course = _course(args.config, args.lang)
    lang = args.lang or course.lang or "en"
    _imports(lang)
    import uvicorn

    from grader.server.app import create_app
    from grader.server.grading import Grader, config_file, plan
    from grader.server.store import StoreError

    store = _store(course, lang)
    if not store.initialised:
        raise UsageError(text("server.cli.not_initialised", lang, data=store.data))
    try:  # a database this code cannot use (a newer gradekit's) stops the start before anything is served
        store.migrate(lang)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    _migrated(store, lang)
    host = args.host or course.server["host"]
    port = args.port or course.server["port"]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from grader.config import ConfigError

    try:
        grading = plan(course, config_file(course))
    except ConfigError as exc:  # the course secret's file or variable missing: said before serving anything
        raise UsageError(str(exc)) from None
    from grader.batch.overrides import OverrideError
    from grader.server import reviews

    try:  # a file that cannot be used is said (file, line or table) before serving anything, as the batch does
        found, warnings = reviews.load(course, [s for s, _ in store.roster()], lang)
    except OverrideError as exc:
        raise UsageError(str(exc)) from None
    for warning in warnings:
        print(warning, file=sys.stderr)
    grading = dataclasses.replace(grading, reviews=found)
    reviews.apply_all(store, grading)  # the file as it is now, on what was graded before this start
    cluster = None
    if course.server["scheduler"]:  # judges on Dask workers: a scheduler that cannot be reached stops the start
        from grader.server.cluster import connect

        cluster = connect(course.server["scheduler"], grading, lang, course.server["judges"])
    judges = Grader(store, grading, course.server["judges"], cluster=cluster)
    app = create_app(course, grader=judges, store=store, plan=grading)
    print(text("server.cli.running", lang, url=f"http://{host}:{port}/", data=store.data), flush=True)
    # No access log: a line per request is not needed, and no request's header or query ever reaches a log.
    # A request's head must come within seconds (``deadline``: uvicorn itself waits for it without end).
    from grader.server.deadline import HeadDeadline

    uvicorn.run(app, host=host, port=port, access_log=False, log_level="info", server_header=False, http=HeadDeadline)
    return 0


def cmd_db_status(args):
    """Print the database's schema revision and the newest this gradekit knows; 1 when the server could not open
    it (a newer gradekit's, or not one this server made)."""
    from grader.server import migrate

    course = _course(args.config, args.lang)
    lang = args.lang or course.lang or "en"
    _imports(lang)
    from grader.errors import UsageError
    from grader.server.store import StoreError

    store = _store(course, lang)
    try:
        state = migrate.status(store.url, lang)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    print(text("server.db.database", lang, database=_safe_url(store.url)))
    if state.found:
        found = ", ".join(state.found)
    elif state.legacy:
        found = text("server.db.legacy", lang, first=migrate.FIRST)
    elif state.tables:
        found = text("server.db.none", lang)
    else:
        found = text("server.db.empty", lang)
    print(text("server.db.current", lang, revision=found))
    print(text("server.db.head", lang, revision=state.head))
    refused = migrate.refusal(state, store.url, lang)
    if refused is not None:
        print(str(refused), file=sys.stderr)
        return 1
    if state.found or state.tables:  # an empty database's line said already that the server makes its tables
        print(text("server.db.up_to_date" if state.current else "server.db.behind", lang))
    return 0


def cmd_submit(args):
    from grader.errors import UsageError
    from grader.server.client import SubmitError, submit, token_from

    try:
        return submit(
            args.path, args.server, token_from(args.token), wait=args.wait, lang=args.lang, timeout_s=args.timeout
        )
    except SubmitError as exc:
        raise UsageError(str(exc)) from None
