"""The attempts, kept in an embedded SQLite database in the user's data folder.

``$GRADEKIT_HOME/history.sqlite`` when ``GRADEKIT_HOME`` is set, else
``$XDG_DATA_HOME/gradekit/history.sqlite``, else ``~/.local/share/gradekit/history.sqlite``.
One row per drill workspace: created by its first check, updated by each later check until one passes.
"""

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
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
"""


@dataclass
class Attempt:
    """One drill workspace's outcome so far."""

    id: int
    """Row id."""
    drill: str
    """The drill id."""
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


def default_path():
    """Where the database lives (see the module docstring)."""
    home = os.environ.get("GRADEKIT_HOME")
    if home:
        return Path(home).expanduser() / "history.sqlite"
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data).expanduser() / "gradekit" / "history.sqlite"


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
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self):
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def record(self, *, attempt_id=None, drill, tasks, workspace, started, finished, limit_s, passed, score,
               max_score, hints, no_hints, profile):
        """Insert the attempt (``attempt_id=None``) or update it after another check; returns its id."""
        values = dict(drill=drill, tasks=",".join(tasks), workspace=str(workspace), started=started,
                      finished=finished, seconds=max(0.0, finished - started), limit_s=limit_s,
                      passed=int(bool(passed)), score=score, max_score=max_score, hints=hints,
                      no_hints=int(bool(no_hints)), profile=profile)
        with self.db:
            if attempt_id is not None and self.get(attempt_id) is not None:
                sets = ", ".join(f"{k} = :{k}" for k in values)
                self.db.execute(f"UPDATE attempts SET {sets}, checks = checks + 1 WHERE id = :id",
                                {**values, "id": attempt_id})
                return attempt_id
            cols = ", ".join(values)
            marks = ", ".join(f":{k}" for k in values)
            cur = self.db.execute(f"INSERT INTO attempts ({cols}, checks) VALUES ({marks}, 1)", values)
            return cur.lastrowid

    def set_hints(self, attempt_id, hints):
        """Record that ``hints`` hint levels have been shown in an attempt."""
        with self.db:
            self.db.execute("UPDATE attempts SET hints = ? WHERE id = ?", (hints, attempt_id))

    def get(self, attempt_id):
        row = self.db.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        return _attempt(row) if row else None

    def attempts(self, drill=None):
        """Every attempt, oldest first (of one drill when given)."""
        if drill:
            rows = self.db.execute("SELECT * FROM attempts WHERE drill = ? ORDER BY started, id", (drill,))
        else:
            rows = self.db.execute("SELECT * FROM attempts ORDER BY started, id")
        return [_attempt(r) for r in rows]

    def bests(self):
        """Drill id -> the fastest passed ``Attempt`` (the personal best)."""
        rows = self.db.execute(
            "SELECT * FROM attempts a WHERE passed = 1 AND id = (SELECT id FROM attempts b WHERE b.drill = a.drill "
            "AND b.passed = 1 ORDER BY b.seconds, b.id LIMIT 1) ORDER BY drill")
        return {r["drill"]: _attempt(r) for r in rows}


def _attempt(row):
    data = dict(row)
    data["passed"] = bool(data["passed"])
    data["no_hints"] = bool(data["no_hints"])
    return Attempt(**data)
