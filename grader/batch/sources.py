"""Finding the class's submissions: one sub-folder or ``.zip`` per student, named by student id.

Each is taken in as every door takes a hand-in (``submission.intake.take_in``: a zip extracted with its checks, a
folder or zip holding a single folder and nothing else unwrapped one level), and one without any ``.py`` file is
an empty submission, said once.

Every submission, folder or zip, is then copied once into a snapshot (``submission.snapshot.safe_copy``:
regular files only, links and special files refused and listed); the batch hashes, the judge grades
and compares that snapshot, and nothing opens the original again. The class folder itself is read
with ``lstat``: a student entry that is a link or a special file gets a row that says so.

A folder's name is data: ``Submission.student`` is its display form (bytes that are not UTF-8 and
control characters as backslash escapes) and ``Submission.folder`` the name of the student's output
folder, the id itself when it is a plain id (``_ID``), else a name made from it that no plain id and
no other name can take.
"""

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from grader.safetext import display_name
from grader.submission.intake import SKIP as _SKIP
from grader.submission.intake import IntakeError, take_in
from grader.submission.snapshot import has_code

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
_RESERVED = {"index.html", "gradebook.csv", "lms.csv", "similarity.html", "similarity.json"}
"""Names in ``--out`` that are not a student's folder."""


@dataclass
class Submission:
    """One student's submission."""

    student: str
    """The student id as shown (the folder's or zip's name without ``.zip``; see ``display_name``)."""
    source: Path
    """The folder or zip as found."""
    path: Path = None
    """The snapshot to grade (regular files only); ``None`` when it could not be prepared."""
    problem: str = ""
    """Why it could not be prepared (an unsafe zip, a link), a sentence in English for logs; ``problem_key`` says it
    in the page's language."""
    folder: str = ""
    """The name of the student's output folder (``student_folder``)."""
    problem_key: str = ""
    """The problem as a message key (``problem_params`` fill it in), when it has one."""
    problem_params: dict = field(default_factory=dict)
    refused: list = field(default_factory=list)
    """``snapshot.Refused`` entries of the submission: not graded, listed in the student's results."""

    def __post_init__(self):
        self.folder = self.folder or student_folder(self.student)


def student_folder(name):
    """The output folder's name for a student folder or zip named ``name`` (a ``str`` from ``os``, non-UTF-8
    bytes as surrogates): ``name`` itself when it is a plain id, else ``_<letters>-<digest of the raw bytes>``,
    which starts with ``_`` (never a plain id) and differs for every other name."""
    if _ID.match(name) and name not in _RESERVED:
        return name
    raw = name.encode("utf-8", "surrogatepass")  # one to one, whatever the name holds
    slug = re.sub(r"[^A-Za-z0-9._@+-]+", "_", display_name(name)).strip("._-+@")[:40] or "student"
    return f"_{slug}-{hashlib.sha256(raw).hexdigest()[:16]}"


@dataclass
class Skipped:
    """An entry of the class folder that is not a submission, and why (``batch.skipped.<why>``)."""

    name: str
    """The entry's name as shown (``display_name``)."""
    why: str
    """``hidden`` (a name starting with a dot), ``system`` (``__MACOSX``...) or ``file`` (not a folder or .zip)."""


def discover(folder, skipped=None):
    """The submissions in ``folder`` (folders, ``.zip`` and ``.ipynb`` files), sorted by student id; each entry
    that is not one is appended to ``skipped`` (a list, when given) as a ``Skipped``: hidden entries, ``__MACOSX``
    and the like, other plain files.

    Entries are looked at with ``lstat``: a folder is a submission, a regular ``.zip`` file too; a link or a
    special file in their place gets a ``problem`` (and so a gradebook row), never followed."""
    folder = Path(folder)
    found = {}
    skipped = [] if skipped is None else skipped
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: os.fsencode(e.name))
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name in _SKIP:
            skipped.append(Skipped(display_name(name), "hidden" if name.startswith(".") else "system"))
            continue
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        is_zip = name.lower().endswith(".zip") and len(name) > 4
        is_notebook = name.lower().endswith(".ipynb") and len(name) > 6  # a notebook handed in as it is
        if stat.S_ISREG(mode) and not (is_zip or is_notebook):
            skipped.append(Skipped(display_name(name), "file"))  # a README, a roster: not a submission
            continue
        stem = name[:-4] if is_zip else name[:-6] if is_notebook else name
        student = display_name(stem)
        if student in found:
            found[student].problem = f"more than one entry (a folder, a .zip, a .ipynb) is named {student!r}"
            found[student].problem_key = "batch.reason.duplicate"
            found[student].problem_params = {"name": repr(student)}
            continue
        sub = Submission(student, Path(entry.path), folder=student_folder(stem))
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            kind = (
                "symlink"
                if stat.S_ISLNK(mode)
                else "fifo"
                if stat.S_ISFIFO(mode)
                else "socket"
                if stat.S_ISSOCK(mode)
                else "device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "special"
            )
            sub.problem = f"{display_name(name)} is a link or special file ({kind}); expected a folder or a .zip"
            sub.problem_key, sub.problem_params = (
                "batch.reason.student_link",
                {"name": display_name(name), "kind": kind},
            )
        found[student] = sub
    subs = [found[k] for k in sorted(found)]
    seen = {}
    for sub in subs:  # folders whose names differ only by case would meet on a case-insensitive disk
        if sub.folder.lower() in seen:
            sub.folder = "_" + sub.folder + "-" + hashlib.sha256(os.fsencode(sub.source.name)).hexdigest()[:16]
        seen[sub.folder.lower()] = sub
    return subs


def prepare(sub, scratch):
    """Set ``sub.path`` to a snapshot under ``scratch`` (of the folder, or of the zip once extracted) and
    ``sub.refused``; or ``sub.problem`` when it cannot be prepared."""
    if sub.problem:
        return sub
    try:
        snap = take_in(sub.source, Path(scratch) / sub.folder)
    except IntakeError as exc:  # its reason said in the page's language
        sub.problem, sub.problem_key, sub.problem_params = str(exc), exc.why["phrase"], dict(exc.why["params"])
        return sub
    sub.path, sub.refused = snap.root, snap.refused
    if not has_code(sub.path):
        sub.path = None
        sub.problem, sub.problem_key, sub.problem_params = "empty submission (no .py file)", "batch.reason.empty", {}
    return sub


def content_hash(folder, salt="", refused=()):
    """SHA-256 over the submission's files (relative paths and bytes, sorted), its refused entries and ``salt``.
    ``folder`` is a snapshot (regular files only); anything else in it is skipped, never followed."""
    h = hashlib.sha256(salt.encode("utf-8"))
    folder = os.fspath(folder)
    files = []
    for base, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIP]
        for name in names:
            path = os.path.join(base, name)
            if name not in _SKIP and stat.S_ISREG(os.lstat(path).st_mode):
                files.append((os.fsencode(os.path.relpath(path, folder)), path))
    for rel, path in sorted(files):
        h.update(b"\0F" + rel + b"\0")
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 16):
                digest.update(chunk)
        h.update(digest.digest())
    for r in refused:
        d = r.to_dict() if hasattr(r, "to_dict") else dict(r)
        h.update(b"\0R" + f"{d['path']}\0{d['kind']}\0{d.get('size', 0)}".encode("utf-8", "backslashreplace"))
    return h.hexdigest()
