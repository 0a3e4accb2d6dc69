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

from grader.safetext import display_name
from grader.submission.snapshot import safe_copy, safe_copy_file, unwrap

MAX_FILES = 200
"""Most members a submission zip may hold."""
MAX_BYTES = 20 << 20
"""Most bytes a submission zip may extract to."""
SKIP = {"__pycache__", "__MACOSX", ".git", ".DS_Store"}
"""Names that are never part of a hand-in (caches, an archiver's and version control's own folders)."""


class UnsafeZip(ValueError):
    """The zip cannot be extracted safely; the message says which member and why."""


class IntakeError(ValueError):
    """A hand-in that cannot be taken in (unreadable, an unsafe or broken zip): the message names it and says why."""


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
            detail = str(exc)
        elif isinstance(exc, OSError) and source.suffix.lower() != ".zip":
            detail = f"cannot be read ({exc.strerror or exc})"
        else:
            detail = f"{type(exc).__name__}: {exc}"
        raise IntakeError(f"{display_name(source.name)}: {detail}") from None


def extract(archive, dest, *, max_files=MAX_FILES, max_bytes=MAX_BYTES):
    """Extract ``archive`` into ``dest`` (readable by all, so an unprivileged worker can read it); ``dest``.
    ``UnsafeZip`` for a member that would escape ``dest``, a link, or a zip over the caps."""
    dest = Path(dest)
    fd = os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # never through a link
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeZip(f"{Path(archive).name!r} is not a regular file")
    with os.fdopen(fd, "rb") as fh, zipfile.ZipFile(fh) as zf:
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
    return dest


def _ignored(name):
    return any(part in SKIP for part in PurePosixPath(name.replace("\\", "/")).parts)
