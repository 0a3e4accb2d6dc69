"""The attempts and the quizzes taken, kept in an embedded SQLite database in the user's data folder.

The data folder is ``$GRADEKIT_HOME`` when set, else ``$XDG_DATA_HOME/gradekit``, else
``~/.local/share/gradekit``: ``history.sqlite`` there, and the drills' workspaces under ``practice/``.
One ``attempts`` row per drill workspace: created when the drill starts, updated by each check until one passes; a
drill is known by its assignment and its id together (an id is unique only within its assignment), so bests and
charts never mix two assignments' drills.
One ``quizzes`` row per quiz with an answer, and a ``quiz_answers`` row per question it asked.
"""

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 3
"""1: attempts. 2: quizzes and quiz_answers added. 3: ``attempts.assignment`` added. An older file gains what it lacks
when opened; its attempts get the assignment their workspace's state file names, where the workspace is still
there, else the default one (the only one drills had before version 3 could say otherwise)."""
DEFAULT_ASSIGNMENT = "assignments.transformer"
"""What an attempt recorded without an assignment drilled (``Assignment.package`` of the default)."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL DEFAULT 'assignments.transformer',
    drill TEXT NOT NULL,
    tasks TEXT NOT NULL,
    workspace TEXT NOT NULL,
    started REAL NOT NULL,
    finished REAL NOT NULL,
    seconds REAL NOT NULL,
    limit_s REAL NOT NULL,
    passed INTEGER NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    hints INTEGER NOT NULL,
    checks INTEGER NOT NULL,
    no_hints INTEGER NOT NULL,
    profile TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_drill ON attempts (drill, passed, seconds);
CREATE TABLE IF NOT EXISTS quizzes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    taken REAL NOT NULL,
    assignment TEXT NOT NULL,
    seed INTEGER NOT NULL,
    topics TEXT NOT NULL,
    lang TEXT NOT NULL,
    replay TEXT NOT NULL,
    total INTEGER NOT NULL,
    answered INTEGER NOT NULL,
    right INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS quiz_answers (
    quiz INTEGER NOT NULL REFERENCES quizzes (id),
    position INTEGER NOT NULL,
    question TEXT NOT NULL,
    topic TEXT NOT NULL,
    reply TEXT NOT NULL,
    right INTEGER NOT NULL,
    PRIMARY KEY (quiz, position)
);
"""


@dataclass
class Attempt:
    """One drill workspace's outcome so far."""

    id: int
    """Row id."""
    assignment: str
    """The assignment drilled (``Assignment.package``)."""
    drill: str
    """The drill id (unique within its assignment)."""
    tasks: str
    """Comma-separated task ids."""
    workspace: str
    """The workspace folder."""
    started: float
    """Start, seconds since the epoch."""
    finished: float
    """The last check, seconds since the epoch."""
    seconds: float
    """Time used: from the start to the last check (to the passing check once passed)."""
    limit_s: float
    """The time limit in seconds."""
    passed: bool
    """Every drilled check passed."""
    score: float
    """Points at the last check."""
    max_score: float
    """Points available."""
    hints: int
    """Hint levels shown."""
    checks: int
    """How many times ``--check`` ran."""
    no_hints: bool
    """The drill ran in no-hints mode."""
    profile: str
    """The grading profile of the last check."""

    @property
    def in_time(self):
        return self.seconds <= self.limit_s

    def status(self, now):
        """What the attempt is at ``now`` (seconds since the epoch): ``"passed"``; ``"running"`` while its time
        lasts; once it is over, ``"failed"`` when a check after the end still failed, else ``"abandoned"`` (left
        with time on the clock: it did not fail, it stopped)."""
        if self.passed:
            return "passed"
        if now < self.started + self.limit_s:
            return "running"
        return "failed" if self.checks and self.seconds >= self.limit_s else "abandoned"


@dataclass
class Quiz:
    """One quiz taken."""

    id: int
    """Row id."""
    taken: float
    """When it ended, seconds since the epoch."""
    assignment: str
    """The assignment asked about (``Assignment.package``)."""
    seed: int
    """The seed that drew the questions."""
    topics: str
    """Comma-separated topics it was limited to (empty: all)."""
    lang: str
    """The language it was asked in."""
    replay: str
    """The arguments that ask the same questions again (``quiz.replay_args``; the view puts the launcher and the
    language the user runs now in front and after: ``session.replay_line``)."""
    total: int
    """Questions asked."""
    answered: int
    """Questions answered (not skipped, not left at the end of the input)."""
    right: int
    """Questions answered right."""


@dataclass
class QuizAnswer:
    """One question of a quiz taken, and its reply."""

    quiz: int
    """The ``Quiz`` row id."""
    position: int
    """1 for the first question asked."""
    question: str
    """The question id."""
    topic: str
    """Its topic."""
    reply: str
    """The reply as typed (empty: none)."""
    right: bool
    """The reply was right."""


def data_dir():
    """The user's gradekit data folder (see the module docstring)."""
    home = os.environ.get("GRADEKIT_HOME")
    if home:
        return Path(home).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data).expanduser() / "gradekit"


def default_path():
    """Where the database lives: ``history.sqlite`` in ``data_dir()``."""
    return data_dir() / "history.sqlite"


class History:
    """The attempts database. ``History()`` opens (and creates) the default one."""

    def __init__(self, path=None):
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=10)
        self.db.row_factory = sqlite3.Row
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise RuntimeError(f"{self.path} was written by a newer gradekit (schema {version} > {SCHEMA_VERSION})")
        with self.db:
            columns = {r[1] for r in self.db.execute("PRAGMA table_info(attempts)")}
            if columns and "assignment" not in columns:  # a file written before version 3
                self.db.execute(
                    f"ALTER TABLE attempts ADD COLUMN assignment TEXT NOT NULL DEFAULT '{DEFAULT_ASSIGNMENT}'"
                )
                self._assignments_from_workspaces()
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _assignments_from_workspaces(self):
        """Give each attempt the assignment its workspace's state file names, where that file is still readable."""
        from grader.practice import workspace  # its module imports the assignments; only migrations need it

        for row in self.db.execute("SELECT id, workspace FROM attempts").fetchall():
            try:
                name = workspace.read_state(row["workspace"]).assignment
            except (OSError, ValueError, TypeError):
                continue
            if name and isinstance(name, str):
                self.db.execute("UPDATE attempts SET assignment = ? WHERE id = ?", (recorded_as(name), row["id"]))

    def close(self):
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def record(
        self,
        *,
        attempt_id=None,
        assignment=DEFAULT_ASSIGNMENT,
        drill,
        tasks,
        workspace,
        started,
        finished,
        limit_s,
        passed,
        score,
        max_score,
        hints,
        no_hints,
        profile,
        checked=True,
    ):
        """Insert the attempt (``attempt_id=None``) or update it after another check; returns its id. ``checked``:
        a check ran (counted in ``checks``); a drill just started is recorded with ``checked=False``.
        ``assignment``: the drill's (``Assignment.package``)."""
        values = dict(
            assignment=assignment,
            drill=drill,
            tasks=",".join(tasks),
            workspace=str(workspace),
            started=started,
            finished=finished,
            seconds=max(0.0, finished - started),
            limit_s=limit_s,
            passed=int(bool(passed)),
            score=score,
            max_score=max_score,
            hints=hints,
            no_hints=int(bool(no_hints)),
            profile=profile,
        )
        counted = int(bool(checked))
        with self.db:
            if attempt_id is not None and self.get(attempt_id) is not None:
                sets = ", ".join(f"{k} = :{k}" for k in values)
                self.db.execute(
                    f"UPDATE attempts SET {sets}, checks = checks + :counted WHERE id = :id",
                    {**values, "counted": counted, "id": attempt_id},
                )
                return attempt_id
            cols = ", ".join(values)
            marks = ", ".join(f":{k}" for k in values)
            cur = self.db.execute(
                f"INSERT INTO attempts ({cols}, checks) VALUES ({marks}, :counted)", {**values, "counted": counted}
            )
            return cur.lastrowid

    def workspaces(self):
        """The attempts' workspace folders, the one started last first."""
        rows = self.db.execute("SELECT workspace FROM attempts ORDER BY started DESC, id DESC")
        return [Path(folder) for folder in dict.fromkeys(r[0] for r in rows)]

    def set_hints(self, attempt_id, hints):
        """Record that ``hints`` hint levels have been shown in an attempt."""
        with self.db:
            self.db.execute("UPDATE attempts SET hints = ? WHERE id = ?", (hints, attempt_id))

    def get(self, attempt_id):
        row = self.db.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        return _attempt(row) if row else None

    def attempts(self, drill=None, *, assignment=DEFAULT_ASSIGNMENT):
        """Every attempt, oldest first (of one drill of ``assignment`` when ``drill`` is given)."""
        if drill:
            rows = self.db.execute(
                "SELECT * FROM attempts WHERE assignment = ? AND drill = ? ORDER BY started, id", (assignment, drill)
            )
        else:
            rows = self.db.execute("SELECT * FROM attempts ORDER BY started, id")
        return [_attempt(r) for r in rows]

    def bests(self):
        """``(assignment, drill id)`` -> the fastest passed ``Attempt`` of that drill (the personal best)."""
        rows = self.db.execute(
            "SELECT * FROM attempts a WHERE passed = 1 AND id = (SELECT id FROM attempts b WHERE b.drill = a.drill "
            "AND b.assignment = a.assignment AND b.passed = 1 ORDER BY b.seconds, b.id LIMIT 1) "
            "ORDER BY assignment, drill"
        )
        return {(r["assignment"], r["drill"]): _attempt(r) for r in rows}

    def record_quiz(self, *, taken, assignment, seed, topics, lang, replay, answers):
        """Save a quiz: ``answers`` is ``(question id, topic, reply or None, right)`` per question, in the order
        asked; returns its id."""
        answered = sum(1 for _, _, reply, _ in answers if reply)
        right = sum(1 for *_, ok in answers if ok)
        with self.db:
            cur = self.db.execute(
                "INSERT INTO quizzes (taken, assignment, seed, topics, lang, replay, total, answered, right) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (taken, assignment, seed, ",".join(topics or ()), lang, replay, len(answers), answered, right),
            )
            quiz_id = cur.lastrowid
            self.db.executemany(
                "INSERT INTO quiz_answers (quiz, position, question, topic, reply, right) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (quiz_id, i, qid, topic, reply or "", int(bool(ok)))
                    for i, (qid, topic, reply, ok) in enumerate(answers, start=1)
                ],
            )
        return quiz_id

    def quizzes(self):
        """Every quiz saved, oldest first."""
        return [Quiz(**dict(r)) for r in self.db.execute("SELECT * FROM quizzes ORDER BY taken, id")]

    def quiz_answers(self, quiz_id):
        """The questions of one quiz, in the order asked."""
        rows = self.db.execute("SELECT * FROM quiz_answers WHERE quiz = ? ORDER BY position", (quiz_id,))
        return [QuizAnswer(**{**dict(r), "right": bool(r["right"])}) for r in rows]

    def topic_totals(self):
        """Topic -> ``(right, asked)`` over every quiz saved, the weakest topic (lowest share right) first."""
        rows = self.db.execute("SELECT topic, SUM(right) AS r, COUNT(*) AS n FROM quiz_answers GROUP BY topic")
        totals = {row["topic"]: (row["r"], row["n"]) for row in rows}
        return dict(sorted(totals.items(), key=lambda kv: (kv[1][0] / kv[1][1], kv[0])))


def recorded_as(name):
    """An assignment as the history records it: its ``Assignment.package`` (a workspace's state file written before
    it named its assignment has the default's short name, ``transformer``). A name that no longer loads is kept."""
    from grader.assignment import AssignmentError, load

    try:
        return load(name).package
    except (AssignmentError, ImportError, OSError, ValueError):
        return name


def _attempt(row):
    data = dict(row)
    data["passed"] = bool(data["passed"])
    data["no_hints"] = bool(data["no_hints"])
    return Attempt(**data)
