"""Taking a hand-in in: one way for every door (``check``, ``batch``, the Gradescope run, a Dask worker).

A hand-in is a folder, a notebook (``.ipynb``) or a zip. It is copied once into a snapshot (``snapshot.safe_copy``:
regular files only, links and special files refused); a zip is first extracted with checks of its own
(``extract``: no member outside the destination, no link, caps on members and bytes that the declared sizes
cannot get round)."""

import os
import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path, PurePosixPath

from grader.messages import PHRASE, phrase, text
from grader.safetext import display_name
from grader.submission.snapshot import FileRefused, safe_copy, safe_copy_file, unwrap

MAX_FILES = 200
"""Most members a submission zip may hold."""
MAX_BYTES = 20 << 20
"""Most bytes a submission zip may extract to."""
SKIP = {"__pycache__", "__MACOSX", ".git", ".DS_Store"}
"""Names that are never part of a hand-in (caches, an archiver's and version control's own folders)."""


class _Worded(ValueError):
    """An error whose reason is a phrase (``messages.phrase``): ``why``, said in the reader's language where a
    report or a page shows it; ``str`` is its English, for logs."""

    def __init__(self, why):
        self.why = why
        super().__init__(text(why[PHRASE], "en", **why["params"]))


class UnsafeZip(_Worded):
    """The zip cannot be extracted safely; ``why`` says which member and why."""


class IntakeError(_Worded):
    """A hand-in that cannot be taken in (unreadable, an unsafe or broken zip): ``why`` names it and says why."""


def take_in(source, dest):
    """The one intake of every door (``check``, ``batch``, the Gradescope run): a snapshot at ``dest`` of the folder,
    the notebook (``.ipynb``) or the zip (extracted with ``extract``'s checks) at ``source``, as a ``Snapshot`` whose
    root is unwrapped (``snapshot.unwrap``: a zip of one folder is that folder). ``IntakeError`` when it cannot be."""
    source, dest = Path(source), Path(dest)
    try:
        if source.suffix.lower() == ".ipynb":
            return safe_copy_file(source, dest)
        if source.is_dir() and not source.is_symlink():
            snap = safe_copy(source, dest, top_link=False)
            return replace(snap, root=unwrap(snap.root))
        dest.parent.mkdir(parents=True, exist_ok=True)
        unpacked = Path(tempfile.mkdtemp(prefix=".zip-", dir=dest.parent))  # hidden: no student folder is
        try:
            snap = safe_copy(extract(source, unpacked), dest)
        finally:
            shutil.rmtree(unpacked, ignore_errors=True)
        return replace(snap, root=unwrap(snap.root))
    except (UnsafeZip, zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        if isinstance(exc, UnsafeZip):
            why = exc.why
        elif isinstance(exc, OSError) and source.suffix.lower() != ".zip":
            why = phrase("intake.unreadable", error=_os_words(exc))
        else:
            why = phrase("intake.broken", error=f"{type(exc).__name__}: {exc}")
        raise IntakeError(phrase("intake.refused", name=display_name(source.name), why=why)) from None


def _os_words(exc):
    """What an ``OSError`` says: the kit's own reason where ``snapshot.safe_copy_file`` gave one (a phrase), else
    the system's words (data)."""
    return exc.why if isinstance(exc, FileRefused) else (exc.strerror or str(exc))


def extract(archive, dest, *, max_files=MAX_FILES, max_bytes=MAX_BYTES):
    """Extract ``archive`` into ``dest`` (readable by all, so an unprivileged worker can read it); ``dest``.
    ``UnsafeZip`` for a member that would escape ``dest``, a link, or a zip over the caps."""
    dest = Path(dest)
    fd = os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # never through a link
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeZip(phrase("intake.zip_not_regular", name=repr(Path(archive).name)))
    with os.fdopen(fd, "rb") as fh, zipfile.ZipFile(fh) as zf:
        members = [m for m in zf.infolist() if not _ignored(m.filename)]
        if len(members) > max_files:
            raise UnsafeZip(phrase("intake.zip_members", count=len(members), limit=max_files))
        declared = sum(m.file_size for m in members)
        if declared > max_bytes:
            raise UnsafeZip(phrase("intake.zip_declared", size=declared, limit=max_bytes))
        written = 0
        for m in members:
            name = m.filename.replace("\\", "/")
            parts = PurePosixPath(name).parts
            if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in parts or not parts:
                raise UnsafeZip(phrase("intake.zip_path", member=repr(m.filename)))
            mode = (m.external_attr >> 16) & 0o170000
            if mode and mode not in (stat.S_IFREG, stat.S_IFDIR):
                raise UnsafeZip(phrase("intake.zip_link", member=repr(m.filename)))
            target = dest.joinpath(*parts)
            if m.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(m) as src, open(target, "wb") as out:
                while chunk := src.read(1 << 16):
                    written += len(chunk)
                    if written > max_bytes:  # the declared sizes may lie
                        raise UnsafeZip(phrase("intake.zip_extracted", limit=max_bytes))
                    out.write(chunk)
    for folder, _dirs, files in os.walk(dest):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return dest


def _ignored(name):
    return any(part in SKIP for part in PurePosixPath(name.replace("\\", "/")).parts)
