"""The course configuration: one ``gradekit.toml`` (or ``[tool.gradekit]`` in ``pyproject.toml``).

```toml
assignment = "transformer"                # a built-in name, an import path or a folder (relative to this file);
                                          # default: grader.assignment.DEFAULT
tasks = ["sdpa", "mha", "masks"]          # tasks included (default: all of the assignment's)
banned = ["torch.nn.MultiheadAttention"]  # replaces the assignment's banned list
copy_policy = "zero"                      # a copy of the reference scores 0 ("zero") or is only flagged ("flag")
title = "HW2 Transformer"                 # the assignment's name in exports (default: the assignment's name)
lang = "zh"                               # language of every door's messages and reports (en, zh); --lang wins
overrides = "overrides.toml"              # the instructor's reviews (a .toml or .csv; default: overrides.toml
                                          # or overrides.csv beside this file, when there is one)

[columns]                                 # a task's column heading in the gradebook and exports (default: its id)
sdpa = "Q1 attention"

[gradescope]
output_format = "md"                      # how Gradescope renders the output: text, md (default) or html

[points]                                  # a task's checks are scaled to add up to the task's points
sdpa = 20
"mha.equivalence" = 8                     # or one check's points (applied before the task's scaling)

[limits]
call_timeout = 60                         # seconds one call into student code may take
total_timeout = 900                       # seconds all calls of one submission may take together
memory_mb = 4096                          # the worker's memory cap

[visibility]                              # visible | hidden | after_due_date | after_published
"*" = "visible"
"overfit" = "after_published"             # a task id, a check id or a glob ("mha.*")
"*.low_precision" = "hidden"

[held_back]                               # the course secret: the final grade's held-back examples
secret_file = "secret.txt"                # a file holding it (relative to this file); or secret_env = "NAME"
                                          # (an environment variable), or secret = "..." (here, in the file)

[server]                                  # the course server (`gradekit serve`, docs/SERVER.md)
data = "server-data"                      # its data folder (relative to this file): database, uploads, gradings
database = "postgresql://db/gradekit"     # an SQLAlchemy URL (default: sqlite:///<data>/gradekit.db)
host = "127.0.0.1"                        # where it listens (default: loopback only)
port = 8000
max_upload_mb = 20                        # the largest upload accepted
submissions_per_hour = 20                 # per student
deadline = "2026-12-01T23:59:00+08:00"    # ISO 8601 with its offset (default: none)
late = "refuse"                           # after the deadline: refuse, accept (it counts) or flag (graded, and
                                          # shown beside the submission that counts, which stays an on-time one)
counts = "last"                           # which submission counts: the last one, or the best
profile = "full"                          # the examples graded: quick or full
judges = 2                                # submissions graded at the same time, each by a judge process
scheduler = "tcp://head:8786"             # a Dask scheduler: the judges run on its workers (default: none,
                                          # judges on this machine); judges is then how many at once there
```

The held-back secret is read only by the final grade's doors (``batch``, ``gradescope build``) through
``held_back_seed()``; a student's self-check never reads it, and a student kit never ships it (``grader.kit``).

Task ids (in ``tasks``, ``[points]`` and ``[visibility]``) are validated against the assignment the file names,
or against the one the caller grades (``load(path, assignment=...)``). The engine calls ``select(specs)`` and
passes the ``Selection`` it returns to ``apply(spec, result, selection)``. ``for_students=True`` (a student's
self-check) drops the checks that are not visible.
"""

import fnmatch
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.assignment import DEFAULT, AssignmentError
from grader.assignment import load as load_assignment

FILE_NAME = "gradekit.toml"
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
TOP_KEYS = (
    "assignment",
    "tasks",
    "banned",
    "points",
    "limits",
    "visibility",
    "copy_policy",
    "title",
    "lang",
    "overrides",
    "columns",
    "gradescope",
    "held_back",
    "server",
)
HELD_BACK_KEYS = ("secret", "secret_file", "secret_env")
"""Where the course secret is: in the file itself, in a file of its own, or in an environment variable (one)."""
LIMIT_KEYS = ("call_timeout", "total_timeout", "memory_mb")
COPY_POLICIES = ("zero", "flag")
LANGS = ("en", "zh")
OUTPUT_FORMATS = ("text", "md", "html")
OVERRIDES_NAMES = ("overrides.toml", "overrides.csv")
SERVER_DEFAULTS = {
    "data": "server-data",
    "database": None,
    "host": "127.0.0.1",
    "port": 8000,
    "max_upload_mb": 20,
    "submissions_per_hour": 20,
    "deadline": None,
    "late": "refuse",
    "counts": "last",
    "profile": "full",
    "judges": 2,
    "scheduler": None,
}
"""``[server]``'s keys and their defaults (``database`` ``None``: SQLite in the data folder; ``deadline`` ``None``:
none; ``scheduler`` ``None``: the judges run on the server's machine)."""
LATE_POLICIES = ("refuse", "accept", "flag")
COUNTS = ("last", "best")
"""Files beside the configuration read as the instructor's reviews when ``overrides`` is not given."""


@dataclass(frozen=True)
class Selection:
    """What a course grades of the checks asked for (``CourseConfig.select``)."""

    graded: tuple = ()
    """The ``CheckSpec``s run and shown."""
    hidden: tuple = ()
    """Those a student's self-check neither runs nor shows (their points still weigh the task's others)."""


class ConfigError(ValueError):
    """The configuration is invalid; the message says where, what was expected and what came."""


def _tomllib():
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    try:
        import tomli
    except ImportError:
        raise ConfigError(
            "reading gradekit.toml on Python < 3.11 needs the 'tomli' package: "
            "pip install tomli (or use Python 3.11 or later)"
        ) from None
    return tomli


@dataclass
class CourseConfig:
    """A validated course configuration."""

    assignment: str | None = None
    """The assignment it names (a spec for ``grader.assignment.load``; a folder made absolute), or ``None``."""
    tasks: tuple = ()
    """Task ids included (empty: all)."""
    banned: tuple = ()
    """Banned API names (empty: the assignment's list)."""
    task_points: dict = field(default_factory=dict)
    """Task id -> total points of its checks."""
    check_points: dict = field(default_factory=dict)
    """Check id -> points, before the task's scaling."""
    limits: dict = field(default_factory=dict)
    """``call_timeout``, ``total_timeout`` (seconds), ``memory_mb``."""
    visibility: dict = field(default_factory=dict)
    """Pattern (task id, check id or glob) -> visibility; the most specific pattern wins."""
    copy_policy: str = "zero"
    """``"zero"``: a copy of the reference scores 0 in the gradebook; ``"flag"``: it is only flagged."""
    title: str | None = None
    """The assignment's name in exports (``None``: the assignment's own name)."""
    lang: str | None = None
    """The language of every door's messages and reports unless the command names one (``None``: the default,
    ``grader.options.DEFAULTS``)."""
    overrides: Path | None = None
    """The instructor's reviews (``overrides.toml`` or ``.csv``), an absolute path; ``None`` when there are none."""
    columns: dict = field(default_factory=dict)
    """Task id -> its column heading in the gradebook and exports."""
    gradescope_format: str = "md"
    """Gradescope's ``output_format``: ``text``, ``md`` or ``html``."""
    source: str = ""
    """Where it was read from."""
    for_students: bool = False
    """A student's self-check: checks that are not ``visible`` are neither run nor shown."""
    text: str = ""
    """The file's text (part of a batch's cache key)."""
    held_back: dict = field(default_factory=dict)
    """``[held_back]``: one of ``HELD_BACK_KEYS`` and its value (a ``secret_file`` made absolute); empty: no secret.
    Resolved only when asked (``held_back_seed``), so that a configuration naming a file or a variable this
    machine lacks loads anywhere (a Gradescope container gets the seed from its settings instead)."""
    server: dict = field(default_factory=dict)
    """``[server]`` validated, every key of ``SERVER_DEFAULTS`` present: ``data`` an absolute path, ``deadline`` an
    aware ``datetime`` or ``None``, ``database`` the URL given or ``None``."""

    # -- loading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, path, *, assignment=None):
        """Read ``gradekit.toml`` or a ``pyproject.toml``'s ``[tool.gradekit]``; ``ConfigError`` if invalid.

        ``assignment`` (an ``Assignment`` or a spec): validate the task ids against it rather than against the
        assignment the file names (the one a caller grades; inside the Gradescope container, the one shipped);
        ``grader.assignment.AssignmentError`` if it cannot be loaded."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the course configuration ({exc.strerror})") from None
        toml = _tomllib()
        try:
            data = toml.loads(raw.decode("utf-8"))
        except (toml.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        where = str(path)
        if path.name == "pyproject.toml":
            data = data.get("tool", {}).get("gradekit")
            if data is None:
                raise ConfigError(f"{path}: no [tool.gradekit] table; expected the course configuration there")
            where += " [tool.gradekit]"
        return cls.from_dict(
            data, source=where, text=raw.decode("utf-8"), base=path.resolve().parent, assignment=assignment
        )

    @classmethod
    def discover(cls, start_dir=".", *, assignment=None):
        """The nearest ``gradekit.toml`` (or ``pyproject.toml`` with ``[tool.gradekit]``) in ``start_dir`` or
        above it, loaded (``assignment``: as in ``load``); ``None`` if there is none."""
        start = Path(start_dir).resolve()
        for folder in (start, *start.parents):
            candidate = folder / FILE_NAME
            if candidate.is_file():
                return cls.load(candidate, assignment=assignment)
            pyproject = folder / "pyproject.toml"
            if pyproject.is_file():
                try:
                    data = _tomllib().loads(pyproject.read_text(encoding="utf-8"))
                except Exception:  # noqa: BLE001 - somebody else's pyproject; not ours to judge
                    continue
                if "gradekit" in data.get("tool", {}):
                    return cls.load(pyproject, assignment=assignment)
        return None

    @classmethod
    def from_dict(cls, data, *, source="<dict>", text="", base=None, assignment=None):
        """Validate ``data`` (the table); ``base``: the folder a relative assignment folder is found in (the
        file's; default: the current folder); ``assignment``: as in ``load``."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a table, got {type(data).__name__}")
        unknown = [k for k in data if k not in TOP_KEYS]
        if unknown:
            raise ConfigError(f"{source}: unknown key {unknown[0]!r}; expected one of {', '.join(TOP_KEYS)}")
        spec = _assignment_spec(data.get("assignment"), source, Path(base or "."))
        if assignment is None:
            try:
                assignment = load_assignment(spec)
            except AssignmentError as exc:
                raise ConfigError(f"{source}: assignment: {exc}") from None
        task_ids = load_assignment(assignment).task_ids
        tasks = data.get("tasks", [])
        if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
            raise ConfigError(f"{source}: 'tasks' must be a list of task ids, got {tasks!r}")
        for t in tasks:
            _task_id(t, f"{source}: tasks", task_ids)
        banned = data.get("banned", [])
        if not isinstance(banned, list) or not all(isinstance(b, str) and b for b in banned):
            raise ConfigError(
                f"{source}: 'banned' must be a list of dotted names "
                f'(e.g. "torch.nn.MultiheadAttention"), got {banned!r}'
            )
        task_points, check_points = {}, {}
        points = _table(data, "points", source)
        for key, value in points.items():
            where = f"{source}: points.{key}"
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}: expected a number of points, got {value!r}")
            if value < 0:
                raise ConfigError(f"{where}: expected points >= 0, got {value!r}")
            if "." in key:
                _task_id(key.split(".", 1)[0], where, task_ids)
                check_points[key] = float(value)
            else:
                _task_id(key, where, task_ids)
                task_points[key] = float(value)
        limits = _table(data, "limits", source)
        for key, value in limits.items():
            where = f"{source}: limits.{key}"
            if key not in LIMIT_KEYS:
                raise ConfigError(f"{where}: unknown limit; expected one of {', '.join(LIMIT_KEYS)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"{where}: expected a positive number, got {value!r}")
        visibility = _table(data, "visibility", source)
        for key, value in visibility.items():
            where = f"{source}: visibility.{key}"
            if value not in VISIBILITIES:
                raise ConfigError(f"{where}: expected one of {', '.join(VISIBILITIES)}, got {value!r}")
            if not any(ch in key for ch in "*?[") and key.split(".", 1)[0] not in task_ids:
                raise ConfigError(
                    f"{where}: unknown task id {key.split('.', 1)[0]!r}; expected a task id "
                    f"({', '.join(task_ids)}), a check id or a glob pattern"
                )
        policy = data.get("copy_policy", "zero")
        if policy not in COPY_POLICIES:
            raise ConfigError(f"{source}: copy_policy must be one of {', '.join(COPY_POLICIES)}, got {policy!r}")
        title = data.get("title")
        if title is not None and (not isinstance(title, str) or not title.strip()):
            raise ConfigError(f"{source}: 'title' must be a non-empty string, got {title!r}")
        lang = data.get("lang")
        if lang is not None and lang not in LANGS:
            raise ConfigError(f"{source}: lang must be one of {', '.join(LANGS)}, got {lang!r}")
        columns = _table(data, "columns", source)
        for key, value in columns.items():
            _task_id(key, f"{source}: columns.{key}", task_ids)
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{source}: columns.{key}: expected a column heading (a string), got {value!r}")
        gradescope = _table(data, "gradescope", source)
        for key in gradescope:
            if key != "output_format":
                raise ConfigError(f"{source}: gradescope.{key}: unknown key; expected output_format")
        output_format = gradescope.get("output_format", "md")
        if output_format not in OUTPUT_FORMATS:
            raise ConfigError(
                f"{source}: gradescope.output_format must be one of {', '.join(OUTPUT_FORMATS)}, got {output_format!r}"
            )
        held_back = _held_back(_table(data, "held_back", source), source, base)
        server = _server(_table(data, "server", source), source, base)
        return cls(
            assignment=spec,
            tasks=tuple(tasks),
            banned=tuple(banned),
            task_points=task_points,
            check_points=check_points,
            limits=dict(limits),
            visibility=dict(visibility),
            copy_policy=policy,
            source=source,
            text=text,
            title=title,
            lang=lang,
            overrides=_overrides_path(data.get("overrides"), source, base),
            columns={k: v.strip() for k, v in columns.items()},
            gradescope_format=output_format,
            held_back=held_back,
            server=server,
        )

    def students(self):
        """This configuration for a student's self-check: hidden checks are not run."""
        return replace(self, for_students=True)

    # -- the engine's hooks ---------------------------------------------------------------------
    def visibility_of(self, spec):
        """The visibility of a check: the most specific matching pattern (exact id, task id, then the longest
        glob) wins; ``visible`` when nothing matches."""
        if spec.id in self.visibility:
            return self.visibility[spec.id]
        if spec.task in self.visibility:
            return self.visibility[spec.task]
        globs = [
            p
            for p in self.visibility
            if any(ch in p for ch in "*?[") and (fnmatch.fnmatchcase(spec.id, p) or fnmatch.fnmatchcase(spec.task, p))
        ]
        if globs:
            return self.visibility[max(globs, key=lambda p: (len(p.replace("*", "")), p))]
        return "visible"

    def select(self, specs):
        """The checks this course grades among ``specs`` (and, for a student, may see): a ``Selection``, which
        ``points_of`` and ``apply`` are then given."""
        specs = [s for s in specs if not self.tasks or s.task in self.tasks]
        hidden = [s for s in specs if self.visibility_of(s) != "visible"] if self.for_students else []
        graded = [s for s in specs if s not in hidden]
        return Selection(tuple(graded), tuple(hidden))

    def points_of(self, spec, selection=None):
        """The points of one check: the course's check points, scaled so that the task's checks in
        ``selection`` add up to the task's points (hidden checks included, so a self-check shows the real
        weights; without a selection, the check alone)."""
        base = self.check_points.get(spec.id, float(spec.points))
        if spec.task not in self.task_points:
            return base
        pool = list(selection.graded) + list(selection.hidden) if selection is not None else [spec]
        siblings = {s.id: s for s in pool if s.task == spec.task}
        siblings.setdefault(spec.id, spec)
        total = sum(self.check_points.get(s.id, float(s.points)) for s in siblings.values())
        return round(base * self.task_points[spec.task] / total, 4) if total else 0.0

    def apply(self, spec, result, selection=None):
        """Set the check's points (keeping pass/fail; ``selection``: as in ``points_of``) and its visibility."""
        points = self.points_of(spec, selection)
        earned = result.score / result.max_score if result.max_score else (1.0 if result.status == "passed" else 0.0)
        result.max_score = points
        result.score = round(points * earned, 4)
        result.visibility = self.visibility_of(spec)

    # -- the final grade's held-back examples --------------------------------------------------------
    def held_back_secret(self):
        """The course secret's bytes (``[held_back]``), ``None`` without one; ``ConfigError`` saying where when the
        file or the environment variable it names cannot be read or holds nothing."""
        if not self.held_back:
            return None
        ((key, value),) = self.held_back.items()
        where = f"{self.source}: held_back.{key}"
        if key == "secret":
            secret = value.encode("utf-8")
        elif key == "secret_env":
            found = os.environ.get(value)
            if found is None:
                raise ConfigError(f"{where}: the environment variable {value} is not set; expected the course secret")
            secret = found.encode("utf-8")
        else:
            try:
                secret = Path(value).read_bytes()
            except OSError as exc:
                raise ConfigError(
                    f"{where}: cannot read {value} ({exc.strerror}); expected the course secret"
                ) from None
        secret = secret.strip()
        if not secret:
            raise ConfigError(f"{where}: the course secret is empty; expected some text no student can guess")
        return secret

    def held_back_seed(self):
        """The seed of the final grade's held-back examples, made of the course secret (``held_back_secret``);
        ``None`` without a secret. Only a digest of the secret: the secret itself goes nowhere."""
        secret = self.held_back_secret()
        return None if secret is None else held_back_seed(secret)

    @property
    def call_timeout(self):
        return self.limits.get("call_timeout")

    @property
    def total_timeout(self):
        return self.limits.get("total_timeout")

    @property
    def memory_mb(self):
        return self.limits.get("memory_mb")


def course_config(given=None, *, start=".", students=True, assignment=None, usage_error=None):
    """The course configuration a door grades with: the file ``given`` (``--config``), else the nearest
    ``gradekit.toml`` (or ``pyproject.toml`` with ``[tool.gradekit]``) from ``start`` up, else ``None``; as a
    student's self-check (its hidden checks not run) unless ``students`` is false (an instructor's ``--all-checks``,
    a batch, Gradescope). A configuration that cannot be read raises ``usage_error`` (default
    ``grader.api.UsageError``) saying where and what is wrong."""
    try:
        found = (
            CourseConfig.load(given, assignment=assignment)
            if given
            else CourseConfig.discover(start, assignment=assignment)
        )
    except (ConfigError, AssignmentError) as exc:
        if usage_error is None:
            from grader.api import UsageError as usage_error
        raise usage_error(str(exc)) from None
    return found.students() if found is not None and students else found


def held_back_seed(secret):
    """The held-back seed of a course secret (bytes): a 63-bit digest, the same on every machine."""
    digest = hashlib.sha256(b"gradekit held-back examples\0" + bytes(secret)).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _held_back(table, source, base):
    """``[held_back]`` validated: ``{key: value}`` with one of ``HELD_BACK_KEYS`` (a ``secret_file`` made absolute,
    relative to the configuration's folder), or ``{}``."""
    unknown = [k for k in table if k not in HELD_BACK_KEYS]
    if unknown:
        raise ConfigError(f"{source}: held_back.{unknown[0]}: unknown key; expected one of {', '.join(HELD_BACK_KEYS)}")
    if len(table) > 1:
        raise ConfigError(f"{source}: [held_back] gives {' and '.join(table)}; expected one of them")
    if not table:
        return {}
    ((key, value),) = table.items()
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{source}: held_back.{key}: expected a non-empty string, got {value!r}")
    if key == "secret_file":
        value = str((Path(base or ".") / value).resolve())
    return {key: value}


def _server(table, source, base):
    """``[server]`` validated (``SERVER_DEFAULTS`` for what it leaves out); ``ConfigError`` naming the key."""
    from datetime import datetime

    unknown = [k for k in table if k not in SERVER_DEFAULTS]
    if unknown:
        raise ConfigError(f"{source}: server.{unknown[0]}: unknown key; expected one of {', '.join(SERVER_DEFAULTS)}")
    out = {**SERVER_DEFAULTS, **table}
    for key in ("data", "host"):
        if not isinstance(out[key], str) or not out[key].strip():
            raise ConfigError(f"{source}: server.{key}: expected a non-empty string, got {out[key]!r}")
    if out["database"] is not None and (not isinstance(out["database"], str) or "://" not in out["database"]):
        raise ConfigError(
            f"{source}: server.database: expected a database URL (sqlite:///path, postgresql://...), "
            f"got {out['database']!r}"
        )
    scheduler = out["scheduler"]
    if scheduler is not None and not _scheduler_address(scheduler):
        raise ConfigError(
            f"{source}: server.scheduler: expected a Dask scheduler's address such as tcp://host:8786, got "
            f"{scheduler!r}"
        )
    for key, low, high in (
        ("port", 1, 65535),
        ("max_upload_mb", 1, 1024),
        ("submissions_per_hour", 1, 100_000),
        ("judges", 1, 256),
    ):
        value = out[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ConfigError(f"{source}: server.{key}: expected a whole number from {low} to {high}, got {value!r}")
    for key, allowed in (("late", LATE_POLICIES), ("counts", COUNTS), ("profile", ("quick", "full"))):
        if out[key] not in allowed:
            raise ConfigError(f"{source}: server.{key} must be one of {', '.join(allowed)}, got {out[key]!r}")
    deadline = out["deadline"]
    if deadline is not None:
        try:
            parsed = datetime.fromisoformat(deadline) if isinstance(deadline, str) else deadline
        except ValueError:
            parsed = None
        if not isinstance(parsed, datetime) or parsed.tzinfo is None:
            raise ConfigError(
                f"{source}: server.deadline: expected a date and time with its offset, "
                f'"2026-12-01T23:59:00+08:00", got {deadline!r}'
            )
        out["deadline"] = parsed
    out["data"] = str((Path(base or ".") / out["data"]).resolve())
    return out


_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+]*://\S+|[^\s:/]+:\d+)$")
"""A Dask scheduler's address: ``tcp://host:8786``, ``tls://...``, or ``host:port``."""


def parse_scheduler(value, lang="en"):
    """``"local:N"`` -> ``("local", N)``; an address (``tcp://host:8786``, ``host:8786``) -> ``("address", value)``;
    ``ValueError`` with a sentence saying what is expected otherwise."""
    value = str(value).strip()
    kind, _, count = value.partition(":")
    if kind == "local":
        if count.isdigit() and int(count) >= 1:
            return "local", int(count)
    elif _ADDRESS.match(value):
        return "address", value
    from grader.messages import text
    from grader.safetext import for_terminal

    raise ValueError(text("dask.bad_scheduler", lang, value=for_terminal(value)))


def _scheduler_address(value):
    """Whether ``value`` is a Dask scheduler's address as ``gradekit batch --scheduler`` takes one (not ``local:N``:
    the server's judges on this machine are ``judges`` without a scheduler)."""
    try:
        return isinstance(value, str) and parse_scheduler(value)[0] == "address"
    except ValueError:
        return False


def _table(data, key, source):
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [{key}] must be a table, got {value!r}")
    return value


def _overrides_path(value, source, base):
    """The overrides file: ``value`` relative to the configuration's folder, else one of ``OVERRIDES_NAMES``
    beside it when it exists (``None`` without a folder: a configuration built from a dict)."""
    if value is None:
        if base is None:
            return None
        found = [Path(base) / name for name in OVERRIDES_NAMES if (Path(base) / name).is_file()]
        return found[0].resolve() if found else None
    if not isinstance(value, str) or not value.strip().lower().endswith((".toml", ".csv")):
        raise ConfigError(f"{source}: 'overrides' must name a .toml or .csv file, got {value!r}")
    return (Path(base or ".") / value).resolve()


def _assignment_spec(value, source, base):
    """The ``assignment`` key as a spec ``load`` finds from anywhere: a folder (a path, or a package folder
    beside the file) made absolute; a built-in name or an import path as written; ``None`` when absent."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{source}: 'assignment' must be an assignment's name, import path or folder "
            f'(e.g. "{DEFAULT}"), got {value!r}'
        )
    folder = base / value
    if "/" in value or "\\" in value or (folder / "__init__.py").is_file():
        return str(folder.resolve())
    return value


def _task_id(task, where, task_ids):
    if task not in task_ids:
        raise ConfigError(f"{where}: unknown task id {task!r}; expected one of {', '.join(task_ids)}")
