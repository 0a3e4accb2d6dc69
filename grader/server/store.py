"""The server's data: the data folder, the database, the tokens and the stored hand-ins.

The data folder (``[server] data`` of the course configuration) holds:

- ``secret.key`` (mode 0600): the key of every token's hash and of the page's session cookies; made once.
- ``gradekit.db``: the SQLite database, unless ``[server] database`` names another (any SQLAlchemy URL: a
  PostgreSQL one works as it is, the schema is SQLAlchemy Core's). Its schema is the tables below, made and
  upgraded by the revisions in ``migrations/`` when the server opens it (``grader.server.migrate``).
- ``submissions/<student>/<n>/``: each hand-in as uploaded, every file and folder synced to disk before its row is
  committed (``Store.add_submission``), so an acknowledged hand-in is on disk.
- ``gradings/<id>/<attempt>-<ns>/``: a judge's grading of submission ``<id>`` and the student's report rendered
  from it, one folder per attempt (the row names the one that counts).
- ``tokens/``: the CSV files of tokens handed to the instructor (mode 0600), one per roster import.

A token is ``secrets.token_urlsafe(24)``; the database keeps only its HMAC-SHA256 under ``secret.key``, so a
copy of the database (or of a backup) logs nobody in.
"""

import csv
import hashlib
import hmac
import io
import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from grader.batch.gradebook import text_cell
from grader.batch.sources import _ID as STUDENT_ID
from grader.messages import text
from grader.server.database import IMMEDIATE, StoreError, make_engine  # noqa: F401 - the store's names too

SECRET = "secret.key"
STATUSES = ("queued", "grading", "done", "error")
"""A submission's state: waiting, being graded, graded (``score`` set), or not gradable after every attempt."""
MAX_ATTEMPTS = 2
"""Gradings a submission may start (a judge that died or ran late, a server stopped mid-grading) before it is
marked ``error``."""

metadata = sa.MetaData()
students = sa.Table(
    "students",
    metadata,
    sa.Column("id", sa.String(128), primary_key=True),
    sa.Column("name", sa.Text, nullable=False, default=""),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created", sa.Float, nullable=False),
)
instructors = sa.Table(
    "instructors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created", sa.Float, nullable=False),
)
submissions = sa.Table(
    "submissions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("student", sa.String(128), sa.ForeignKey("students.id"), nullable=False, index=True),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(8), nullable=False),
    sa.Column("files", sa.Text, nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("submitted", sa.Float, nullable=False, index=True),
    sa.Column("late", sa.Boolean, nullable=False, default=False),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("score", sa.Float),
    sa.Column("max_score", sa.Float),
    sa.Column("verdict", sa.String(16)),
    sa.Column("reason", sa.Text, nullable=False, default=""),
    sa.Column("grading", sa.String(64)),
    sa.Column("graded", sa.Float),
    sa.UniqueConstraint("student", "number"),
)
ended_sessions = sa.Table(
    "ended_sessions",
    metadata,
    sa.Column("signature_hash", sa.String(64), primary_key=True),
    sa.Column("expires", sa.Float, nullable=False, index=True),
    sa.Column("ended", sa.Float, nullable=False),
)
"""The page sessions logged out of before they expired: the HMAC of each session cookie's signature (never the
cookie, nor the signature: a copy of the database ends or makes no session), and the cookie's expiry, after which
the cookie is refused anyway and its row is purged."""


class NotInitialised(StoreError):
    """``gradekit serve init`` has not been run for this data folder."""


class RateLimited(Exception):
    """A hand-in over the hourly limit: ``count`` submissions stored in the hour, the first at ``first`` (epoch
    seconds)."""

    def __init__(self, count, first):
        super().__init__(f"{count} submissions in the hour")
        self.count = count
        self.first = first


def new_token():
    """A fresh token: 32 URL-safe characters, never starting with ``-`` or ``_`` (so that no spreadsheet reads the
    tokens' CSV as a formula and no command line takes it for an option)."""
    while True:
        token = secrets.token_urlsafe(24)
        if token[0].isalnum():
            return token


def tokens_text(issued):
    """The tokens' CSV (without the BOM) of ``[(student, name, token)]``: names and ids through the batch
    gradebook's ``text_cell`` (no formula under any separator); a token is letters, digits, ``-`` and ``_`` that
    start with a letter or digit (``new_token``), never a formula."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(["student", "name", "token"])
    for student, name, token in issued:
        writer.writerow([text_cell(student), text_cell(name), token])
    return buf.getvalue()


def _write_private(path, data, *, exclusive=True):
    """Write ``data`` (bytes) to a new file ``path`` with mode 0600, synced."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, 0o600)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class Added:
    """What a roster import did: students added, tokens reissued, rows kept, and the bad rows' messages."""

    added: int = 0
    reissued: int = 0
    kept: int = 0
    problems: list = field(default_factory=list)
    tokens_file: Path | None = None


class Store:
    """The data folder ``data`` and the database at ``url`` (default: SQLite in the data folder)."""

    def __init__(self, data, url=None):
        self.data = Path(data)
        self.url = url or f"sqlite:///{self.data / 'gradekit.db'}"
        self._engine = None
        self._secret = None
        self.migrated = None

    # -- setting up ---------------------------------------------------------------------------------
    @property
    def initialised(self):
        return (self.data / SECRET).is_file()

    def init(self, lang="en"):
        """Make the data folder, the key and the schema; the instructor's token (shown once), or ``None`` when the
        folder was made before (its token stands; its database is brought to the newest schema, as ``migrate``
        does). ``self.migrated`` says what the migration did."""
        if self.initialised:
            self.migrate(lang)
            return None
        self.data.mkdir(parents=True, exist_ok=True)
        os.chmod(self.data, 0o700)
        for sub in ("submissions", "gradings", "tokens"):
            (self.data / sub).mkdir(exist_ok=True)
        _write_private(self.data / SECRET, secrets.token_bytes(32))
        self._secret = None
        self.migrate(lang)
        token = new_token()
        with self.engine.begin() as conn:
            conn.execute(instructors.insert().values(token_hash=self.hash(token), created=time.time()))
        return token

    def migrate(self, lang="en"):
        """Bring the database to the newest schema revision, once even when several processes open it at once; a
        database made before revisions is marked as the first, not made again; one newer than this code is refused
        (``StoreError``) and left as it is. What it did (``grader.server.migrate.Migrated``), also kept in
        ``self.migrated``."""
        from grader.server import migrate  # it reads the tables defined here

        self.migrated = migrate.upgrade(self.engine, self.url, lang)
        return self.migrated

    @property
    def engine(self):
        if self._engine is None:
            self._engine = make_engine(self.url)
        return self._engine

    @property
    def secret(self):
        if self._secret is None:
            try:
                self._secret = (self.data / SECRET).read_bytes()
            except FileNotFoundError:
                raise NotInitialised(str(self.data)) from None
        return self._secret

    def hash(self, token):
        """The stored form of ``token``: HMAC-SHA256 under the server's key, in hex."""
        return hmac.new(self.secret, token.encode("utf-8"), hashlib.sha256).hexdigest()

    def sign(self, *parts):
        """An HMAC of ``parts`` (strings) under the server's key, for cookies and forms."""
        return hmac.new(self.secret, "\0".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()

    # -- who is asking ------------------------------------------------------------------------------
    def who(self, token):
        """``("student", id)``, ``("instructor", None)`` or ``None`` for ``token``."""
        if not token or len(token) > 256:
            return None
        digest = self.hash(token)
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(students.c.id).where(students.c.token_hash == digest)).first()
            if row is not None:
                return ("student", row.id)
            if conn.execute(sa.select(instructors.c.id).where(instructors.c.token_hash == digest)).first():
                return ("instructor", None)
        return None

    def student_hash(self, student):
        with self.engine.connect() as conn:
            return conn.execute(sa.select(students.c.token_hash).where(students.c.id == student)).scalar()

    def instructor_of(self, token):
        """The id of the instructor whose token is ``token``, or ``None``."""
        if not token or len(token) > 256:
            return None
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(instructors.c.id).where(instructors.c.token_hash == self.hash(token))
            ).scalar()

    def instructor_hash(self, instructor):
        with self.engine.connect() as conn:
            return conn.execute(sa.select(instructors.c.token_hash).where(instructors.c.id == instructor)).scalar()

    # -- page sessions ended ------------------------------------------------------------------------
    def end_session(self, signature, expires):
        """End for good the page session whose cookie carries ``signature`` (its MAC) and expires at ``expires``
        (epoch seconds); the rows of sessions past their expiry are purged in the same transaction."""
        digest = self.hash(signature)
        now = time.time()
        try:
            with self.engine.begin() as conn:
                conn.execute(ended_sessions.delete().where(ended_sessions.c.expires < now))
                known = sa.select(ended_sessions.c.signature_hash).where(ended_sessions.c.signature_hash == digest)
                if conn.execute(known).first() is None:
                    conn.execute(ended_sessions.insert().values(signature_hash=digest, expires=expires, ended=now))
        except sa.exc.IntegrityError:  # the same session ended at the same moment by another request: ended
            if not self.session_ended(signature):
                raise

    def session_ended(self, signature):
        """Whether the page session whose cookie carries ``signature`` was logged out of (``end_session``)."""
        digest = self.hash(signature)
        with self.engine.connect() as conn:
            query = sa.select(ended_sessions.c.signature_hash).where(ended_sessions.c.signature_hash == digest)
            return conn.execute(query).first() is not None

    # -- the roster ---------------------------------------------------------------------------------
    def import_roster(self, path, *, reissue=False, lang="en"):
        """Add the students of the roster CSV at ``path`` (columns ``student`` and ``name``; others ignored), each
        with a new token; a student already known keeps theirs unless ``reissue``. Bad rows are said (with their
        line) in ``Added.problems`` and skipped. The new tokens go to a new CSV in ``tokens/`` (mode 0600)."""
        try:
            raw = Path(path).read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(text("server.roster.unreadable", lang, path=path, error=exc)) from None
        reader = csv.DictReader(io.StringIO(raw, newline=""))
        fields = [f.strip().lower() for f in reader.fieldnames or []]
        if "student" not in fields:
            raise StoreError(text("server.roster.no_column", lang, path=path))
        result = Added()
        issued, seen = [], set()
        with self.engine.begin() as conn:
            known = {r.id for r in conn.execute(sa.select(students.c.id))}
            for row in reader:
                line = reader.line_num
                values = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items() if isinstance(v, str)}
                student, name = values.get("student", ""), values.get("name", "")
                if not STUDENT_ID.match(student):
                    result.problems.append(text("server.roster.bad_id", lang, line=line, id=repr(student)))
                    continue
                if student in seen:
                    result.problems.append(text("server.roster.duplicate", lang, line=line, id=student))
                    continue
                seen.add(student)
                if student in known and not reissue:
                    conn.execute(students.update().where(students.c.id == student).values(name=name))
                    result.kept += 1
                    continue
                token = new_token()
                if student in known:
                    conn.execute(
                        students.update().where(students.c.id == student).values(name=name, token_hash=self.hash(token))
                    )
                    result.reissued += 1
                else:
                    conn.execute(
                        students.insert().values(
                            id=student, name=name, token_hash=self.hash(token), created=time.time()
                        )
                    )
                    result.added += 1
                issued.append((student, name, token))
            if issued:  # written before the commit: a token in the database is always one the instructor has
                result.tokens_file = self._write_tokens(issued)
        return result

    def _write_tokens(self, issued):
        folder = self.data / "tokens"
        folder.mkdir(exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        for n in range(1000):
            path = folder / (f"tokens-{stamp}.csv" if n == 0 else f"tokens-{stamp}-{n}.csv")
            if not path.exists():
                break
        _write_private(path, ("\ufeff" + tokens_text(issued)).encode("utf-8"))
        return path

    # -- hand-ins -----------------------------------------------------------------------------------
    def recent(self, student, since):
        """``(how many, the first one's time)`` of the submissions ``student`` made since ``since`` (epoch seconds;
        the time ``None`` when there are none)."""
        with self.engine.connect() as conn:
            return self._recent(conn, student, since)

    @staticmethod
    def _recent(conn, student, since):
        count, first = conn.execute(
            sa.select(sa.func.count(), sa.func.min(submissions.c.submitted)).where(
                submissions.c.student == student, submissions.c.submitted >= since
            )
        ).one()
        return count, first

    def add_submission(self, student, kind, files, *, late=False, per_hour=None):
        """Store a hand-in of ``student`` and queue it; its id. ``files``: ``[(name, bytes)]`` (names already
        checked); ``kind``: ``zip``, ``ipynb`` or ``py``. Every file and folder is synced before the row is
        committed; when either fails (``OSError``, a database error) nothing of it is left and the error is
        raised.

        ``per_hour``: the most submissions ``student`` may make in an hour; over it, ``RateLimited`` is raised and
        nothing is left. The count and the insert are one transaction that no other hand-in of the student can
        interleave with: on SQLite it begins with ``BEGIN IMMEDIATE`` (the write lock first, so two hand-ins
        count one after the other); on PostgreSQL it first locks the student's row (``SELECT ... FOR UPDATE``),
        so that a second hand-in of the same student waits for the first to commit, then counts it (each
        statement of a READ COMMITTED transaction reads what was committed before it began)."""
        base = self.data / "submissions" / student
        base.mkdir(parents=True, exist_ok=True)
        number = 1 + max((int(p.name) for p in base.iterdir() if p.name.isdigit()), default=0)
        while True:
            folder = base / str(number)
            try:
                folder.mkdir()
                break
            except FileExistsError:
                number += 1
        try:
            target = folder / "files" if kind == "py" else folder
            target.mkdir(exist_ok=True)
            for name, content in files:
                fd = os.open(target / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                try:
                    view = memoryview(content)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                finally:
                    os.close(fd)
            for path in {target, folder, base, base.parent}:
                _fsync_dir(path)
            with self.engine.connect().execution_options(**{IMMEDIATE: True}) as conn, conn.begin():
                conn.execute(sa.select(students.c.id).where(students.c.id == student).with_for_update())
                now = time.time()
                if per_hour is not None:
                    count, first = self._recent(conn, student, now - 3600)
                    if count >= per_hour:
                        raise RateLimited(count, first)
                return conn.execute(
                    submissions.insert().values(
                        student=student,
                        number=number,
                        kind=kind,
                        files=json.dumps([name for name, _ in files]),
                        size=sum(len(c) for _, c in files),
                        submitted=now,
                        late=late,
                        status="queued",
                        attempts=0,
                        reason="",
                    )
                ).inserted_primary_key[0]
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    def source_of(self, row):
        """What is graded of submission ``row``: the stored zip or notebook, or the folder of its ``.py`` files."""
        folder = self.data / "submissions" / row.student / str(row.number)
        if row.kind == "py":
            return folder / "files"
        return folder / json.loads(row.files)[0]

    def submission(self, sid):
        with self.engine.connect() as conn:
            return conn.execute(sa.select(submissions).where(submissions.c.id == sid)).first()

    def history(self, student=None):
        """Every submission (of ``student``), oldest first."""
        query = sa.select(submissions).order_by(submissions.c.id)
        if student is not None:
            query = query.where(submissions.c.student == student)
        with self.engine.connect() as conn:
            return conn.execute(query).all()

    def roster(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.select(students.c.id, students.c.name).order_by(students.c.id)).all()

    # -- the grading queue --------------------------------------------------------------------------
    def recover(self):
        """Put back in the queue what a stopped server left ``grading``; how many."""
        with self.engine.begin() as conn:
            return conn.execute(
                submissions.update().where(submissions.c.status == "grading").values(status="queued")
            ).rowcount

    def claim(self):
        """The oldest queued submission, now ``grading`` with one more attempt; ``None`` when none waits.

        Several judges claim at once: the update takes the row only if it is still queued at the attempt read, so
        of two claimers that read the same row one gets it and the other reads the queue again."""
        while True:
            with self.engine.begin() as conn:
                row = conn.execute(
                    sa.select(submissions.c.id, submissions.c.attempts)
                    .where(submissions.c.status == "queued")
                    .order_by(submissions.c.id)
                    .limit(1)
                ).first()
                if row is None:
                    return None
                taken = conn.execute(
                    submissions.update()
                    .where(
                        submissions.c.id == row.id,
                        submissions.c.status == "queued",
                        submissions.c.attempts == row.attempts,
                    )
                    .values(status="grading", attempts=row.attempts + 1)
                ).rowcount
                if taken:
                    return conn.execute(sa.select(submissions).where(submissions.c.id == row.id)).first()

    def finish(self, row, *, status, score=None, max_score=None, verdict=None, reason="", grading=None, undo=False):
        """End the attempt ``row`` (as ``claim`` gave it): ``done`` or ``error`` with its result, or ``queued`` to
        try again (``undo``: not counting this attempt, which the server's own stop cut short). Only the attempt
        that holds the submission ends it: ``False`` when it no longer did."""
        with self.engine.begin() as conn:
            return bool(
                conn.execute(
                    submissions.update()
                    .where(
                        submissions.c.id == row.id,
                        submissions.c.status == "grading",
                        submissions.c.attempts == row.attempts,
                    )
                    .values(
                        status=status,
                        score=score,
                        max_score=max_score,
                        verdict=verdict,
                        reason=reason,
                        grading=grading,
                        graded=time.time() if status in ("done", "error") else None,
                        attempts=row.attempts - 1 if undo else row.attempts,
                    )
                ).rowcount
            )

    def reviewed(self, row, score, max_score, verdict, reason):
        """Record the result of the graded submission ``row`` with the instructor's review applied; only while the
        grading it names still counts for it (a regrade may have replaced it): ``1`` when recorded, else ``0``."""
        with self.engine.begin() as conn:
            return conn.execute(
                submissions.update()
                .where(
                    submissions.c.id == row.id,
                    submissions.c.status == "done",
                    submissions.c.grading == row.grading,
                )
                .values(score=score, max_score=max_score, verdict=verdict, reason=reason)
            ).rowcount

    def requeue_all(self):
        """Queue every submission that is not waiting or being graded again (a regrade); how many."""
        with self.engine.begin() as conn:
            return conn.execute(
                submissions.update()
                .where(submissions.c.status.in_(("done", "error")))
                .values(status="queued", attempts=0)
            ).rowcount
