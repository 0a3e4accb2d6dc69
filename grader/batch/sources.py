"""Finding the class's submissions: one sub-folder or ``.zip`` per student, named by student id.

Zips are extracted safely into a private temporary folder: members with absolute paths, ``..``
parts, links or device files are refused, and the total size and file count are capped. A zip
holding a single top folder is unwrapped.
"""

import hashlib
import os
import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_FILES = 200
"""Most members a submission zip may hold."""
MAX_BYTES = 20 << 20
"""Most bytes a submission zip may extract to."""
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
_SKIP = {"__pycache__", "__MACOSX", ".git", ".DS_Store"}


class UnsafeZip(ValueError):
    """The zip cannot be extracted safely; the message says which member and why."""


@dataclass
class Submission:
    """One student's submission."""

    student: str
    """The student id (the folder's or zip's name without ``.zip``)."""
    source: Path
    """The folder or zip as found."""
    path: Path = None
    """The folder to grade (the extracted copy for a zip); ``None`` when it could not be prepared."""
    problem: str = ""
    """Why it could not be prepared (an unsafe zip, a bad id)."""


def discover(folder):
    """The submissions in ``folder``, sorted by student id (hidden entries are ignored)."""
    folder = Path(folder)
    found = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name in _SKIP:
            continue
        if entry.is_dir() and not entry.is_symlink():
            student = entry.name
        elif entry.is_file() and entry.suffix.lower() == ".zip":
            student = entry.name[:-4]
        else:
            continue
        if student in found:
            found[student].problem = f"both a folder and a zip are named {student!r}"
            continue
        sub = Submission(student, entry)
        if not _ID.match(student):
            sub.problem = (f"the name {student!r} is not usable as a student id (expected letters, digits and "
                           f". _ @ + -, at most 128 characters)")
        found[student] = sub
    return [found[k] for k in sorted(found)]


def prepare(sub, scratch):
    """Set ``sub.path``: the folder itself, or the zip extracted under ``scratch``."""
    if sub.problem:
        return sub
    if sub.source.is_dir():
        sub.path = sub.source.resolve()
        return sub
    dest = Path(tempfile.mkdtemp(prefix=f"{sub.student}-", dir=scratch))
    try:
        sub.path = extract(sub.source, dest)
    except (UnsafeZip, zipfile.BadZipFile, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        sub.problem = f"{sub.source.name}: {exc}"
    return sub


def extract(archive, dest, *, max_files=MAX_FILES, max_bytes=MAX_BYTES):
    """Extract ``archive`` into ``dest`` (readable by all, so an unprivileged worker can read it); the folder
    to grade. ``UnsafeZip`` for a member that would escape ``dest``, a link, or a zip over the caps."""
    dest = Path(dest)
    with zipfile.ZipFile(archive) as zf:
        members = [m for m in zf.infolist() if not _ignored(m.filename)]
        if len(members) > max_files:
            raise UnsafeZip(f"{len(members)} members, more than the {max_files} allowed")
        declared = sum(m.file_size for m in members)
        if declared > max_bytes:
            raise UnsafeZip(f"{declared} bytes uncompressed, more than the {max_bytes} allowed")
        written = 0
        for m in members:
            name = m.filename.replace("\\", "/")
            parts = PurePosixPath(name).parts
            if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in parts or not parts:
                raise UnsafeZip(f"member {m.filename!r} has an absolute path or '..'; expected a relative path")
            mode = (m.external_attr >> 16) & 0o170000
            if mode and mode not in (stat.S_IFREG, stat.S_IFDIR):
                raise UnsafeZip(f"member {m.filename!r} is a link or special file; expected plain files")
            target = dest.joinpath(*parts)
            if m.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(m) as src, open(target, "wb") as out:
                while chunk := src.read(1 << 16):
                    written += len(chunk)
                    if written > max_bytes:  # the declared sizes may lie
                        raise UnsafeZip(f"more than {max_bytes} bytes once extracted")
                    out.write(chunk)
    for folder, _dirs, files in os.walk(dest):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    entries = [e for e in dest.iterdir() if e.name not in _SKIP]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return dest


def _ignored(name):
    return any(part in _SKIP for part in PurePosixPath(name.replace("\\", "/")).parts)


def content_hash(folder, salt=""):
    """SHA-256 over the submission's files (relative paths and bytes, sorted) and ``salt``."""
    h = hashlib.sha256(salt.encode("utf-8"))
    folder = Path(folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not _ignored(str(p.relative_to(folder)))):
        rel = path.relative_to(folder).as_posix()
        h.update(b"\0F" + rel.encode("utf-8") + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
