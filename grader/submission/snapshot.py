"""A safe snapshot of a submission folder: the only copy the judge ever reads, copies, hashes or runs.

``safe_copy(src, dest)`` walks ``src`` by file descriptors (``lstat``, then ``os.open`` with
``O_NOFOLLOW | O_NONBLOCK`` and ``fstat`` to check it is still the same entry) and copies regular files
and folders only. Everything else is refused, never opened, and listed with a reason:

- symbolic links, even ones that point inside the folder (a link is never followed, so a link to a
  root-only file, to the reference or to ``/dev/zero`` yields nothing);
- FIFOs, sockets and device files (opening a FIFO would wait forever, reading a device never ends);
- a file over ``max_file_bytes`` (left unread), and everything after the first file that would pass
  ``max_total_bytes`` or ``max_files`` (the walk stops there);
- a name that is not valid UTF-8 or holds control characters (listed by an escaped display name).

A hard link is a regular file and is copied: it names a file its maker could already read (Linux's
``fs.protected_hardlinks``, on by default, forbids linking files one cannot read and write).
``__pycache__``, ``.git``, ``__MACOSX`` and ``.DS_Store`` are skipped without a word. Within a folder the
walk takes ``.py`` files first, then other files, then sub-folders, each in name order, so a cap never
pushes out the contract's files for the sake of data. ``Snapshot.refused`` goes into the student's
result (``GradeResult.refused``), worded by ``describe`` in the report's language.
"""

import errno
import itertools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from grader.safetext import display_name, is_clean_name

MAX_FILE_BYTES = 8 << 20
"""Most bytes one file of a submission may hold."""
MAX_TOTAL_BYTES = 20 << 20
"""Most bytes a whole submission may hold (as for a zip)."""
MAX_FILES = 200
"""Most files a submission may hold (as for a zip)."""
MAX_DEPTH = 16
"""Most levels of folders below the submission folder."""
MAX_ENTRIES = 20_000
"""Most folder entries examined in all (empty files and folders cost time too)."""
MAX_LISTED = 100
"""Refused entries listed one by one; the rest are counted in one last entry of kind ``more``."""
SKIP = frozenset({"__pycache__", ".git", "__MACOSX", ".DS_Store"})
KINDS = (
    "symlink",
    "fifo",
    "socket",
    "device",
    "special",
    "too_big",
    "total",
    "count",
    "entries",
    "bad_name",
    "deep",
    "unreadable",
    "changed",
    "more",
)
"""Why an entry was refused (message keys ``snapshot.kind.<kind>``)."""

_O_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_O_DIR = _O_FILE | os.O_DIRECTORY
_CHUNK = 1 << 16


@dataclass
class Refused:
    """One entry of the submission that was not copied."""

    path: str
    """Its path relative to the submission folder, as text (bytes that are not UTF-8 as ``\\xNN``)."""
    kind: str
    """Why (one of ``KINDS``)."""
    size: int = 0
    """Its size in bytes (``too_big``), or how many more entries were refused (``more``)."""
    limit: int = 0
    """The cap it passed (``too_big``, ``total``, ``count``, ``entries``, ``deep``)."""

    def to_dict(self):
        return {"path": self.path, "kind": self.kind, "size": self.size, "limit": self.limit}

    @classmethod
    def from_dict(cls, d):
        return cls(
            path=str(d.get("path", "")),
            kind=str(d.get("kind", "special")),
            size=int(d.get("size") or 0),
            limit=int(d.get("limit") or 0),
        )


@dataclass
class Snapshot:
    """What ``safe_copy`` made."""

    root: Path
    """The copy: a folder of regular files and folders only."""
    copied: list = field(default_factory=list)
    """Relative paths (``/``-separated) of the files copied, in walk order (their names are clean UTF-8)."""
    refused: list = field(default_factory=list)
    """``Refused`` entries, in walk order."""

    @property
    def refused_dicts(self):
        return [r.to_dict() for r in self.refused]


class _Walk:
    def __init__(self, dest, max_file_bytes, max_total_bytes, max_files):
        self.dest = Path(dest)
        self.max_file, self.max_total, self.max_files = max_file_bytes, max_total_bytes, max_files
        self.total = 0
        self.entries = 0
        self.stopped = False
        self.snap = Snapshot(root=self.dest)
        self.unlisted = 0

    def refuse(self, path, kind, size=0, limit=0):
        if len(self.snap.refused) < MAX_LISTED:
            self.snap.refused.append(Refused(path, kind, size, limit))
        else:
            self.unlisted += 1

    def folder(self, dir_fd, rel, real, depth):
        """Copy the folder open at ``dir_fd``; ``rel`` and ``real`` are its path as shown and as named, with a
        trailing ``/`` (``''`` for the top)."""
        with os.scandir(dir_fd) as it:
            entries = list(itertools.islice(it, MAX_ENTRIES - self.entries + 1))
        found = []
        for entry in entries:
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                self.refuse(rel + display_name(entry.name), "entries", limit=MAX_ENTRIES)
                self.stopped = True
                break
            if entry.name in SKIP:
                continue
            try:
                st = os.stat(entry.name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                self.refuse(rel + display_name(entry.name), "unreadable")
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            order = (is_dir, not (stat.S_ISREG(st.st_mode) and entry.name.endswith(".py")), os.fsencode(entry.name))
            found.append((order, entry.name, st))
        for _order, name, st in sorted(found, key=lambda x: x[0]):
            if self.stopped:
                return
            shown, named = rel + display_name(name), real + name
            mode = st.st_mode
            if not is_clean_name(name):
                self.refuse(shown, "bad_name")
            elif stat.S_ISLNK(mode):
                self.refuse(shown, "symlink")
            elif stat.S_ISDIR(mode):
                self.subfolder(dir_fd, name, st, shown, named, depth)
            elif stat.S_ISREG(mode):
                self.file(dir_fd, name, st, shown, named)
            elif stat.S_ISFIFO(mode):
                self.refuse(shown, "fifo")
            elif stat.S_ISSOCK(mode):
                self.refuse(shown, "socket")
            elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                self.refuse(shown, "device")
            else:
                self.refuse(shown, "special")

    def subfolder(self, dir_fd, name, st, shown, named, depth):
        if depth >= MAX_DEPTH:
            self.refuse(shown, "deep", limit=MAX_DEPTH)
            return
        try:
            fd = os.open(name, _O_DIR, dir_fd=dir_fd)
        except OSError as exc:
            self.refuse(
                shown,
                "symlink"
                if exc.errno == errno.ELOOP
                else "changed"
                if exc.errno in (errno.ENOTDIR, errno.ENOENT)
                else "unreadable",
            )
            return
        try:
            now = os.fstat(fd)
            if not stat.S_ISDIR(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                self.refuse(shown, "changed")
                return
            (self.dest / named).mkdir(mode=0o755)
            self.folder(fd, shown + "/", named + "/", depth + 1)
        finally:
            os.close(fd)

    def file(self, dir_fd, name, st, shown, named):
        if st.st_size > self.max_file:
            self.refuse(shown, "too_big", size=st.st_size, limit=self.max_file)
            return
        if len(self.snap.copied) >= self.max_files:
            self.refuse(shown, "count", limit=self.max_files)
            self.stopped = True
            return
        if self.total + st.st_size > self.max_total:
            self.refuse(shown, "total", limit=self.max_total)
            self.stopped = True
            return
        try:
            fd = os.open(name, _O_FILE, dir_fd=dir_fd)
        except OSError as exc:
            self.refuse(
                shown,
                "symlink" if exc.errno == errno.ELOOP else "changed" if exc.errno == errno.ENOENT else "unreadable",
            )
            return
        target = self.dest / named
        try:
            now = os.fstat(fd)
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                self.refuse(shown, "changed")
                return
            budget = min(self.max_file, self.max_total - self.total)
            written = 0
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            try:
                while chunk := os.read(fd, _CHUNK):
                    written += len(chunk)
                    if written > budget:  # it grew while we read it
                        break
                    while chunk:
                        chunk = chunk[os.write(out, chunk) :]
            finally:
                os.close(out)
            if written > budget:
                os.unlink(target)
                self.refuse(shown, "changed")
                return
        except OSError:
            try:
                os.unlink(target)
            except OSError:
                pass
            self.refuse(shown, "unreadable")
            return
        finally:
            os.close(fd)
        self.total += written
        self.snap.copied.append(named)


def safe_copy(
    src, dest, *, max_file_bytes=MAX_FILE_BYTES, max_total_bytes=MAX_TOTAL_BYTES, max_files=MAX_FILES, top_link=True
):
    """Copy the submission folder ``src`` into ``dest`` (created, private to this user); a ``Snapshot``.

    Only regular files and folders are copied (see the module's docstring); nothing inside ``src`` is
    followed. ``src`` itself may be a link to a folder when ``top_link`` (a path the user typed), not
    otherwise (a student's entry in a class folder). ``NotADirectoryError`` when ``src`` is not a folder,
    ``OSError`` (``ELOOP`` for a link) when it cannot be opened.
    """
    fd = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (0 if top_link else os.O_NOFOLLOW))
    try:
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        os.chmod(dest, 0o700)
        walk = _Walk(dest, max_file_bytes, max_total_bytes, max_files)
        walk.folder(fd, "", "", 0)
    finally:
        os.close(fd)
    if walk.unlisted:
        walk.snap.refused.append(Refused("…", "more", size=walk.unlisted))
    return walk.snap


def unwrap(folder):
    """The folder to grade in ``folder``: ``folder`` itself, or its only sub-folder when that is all it holds
    (``ivan/my_transformer/*.py``: a zip's top folder, an LMS download, a folder dragged into a folder). One level,
    the same for a folder, a zip and a self-check; hidden entries and ``SKIP`` names do not count; a link is
    never a folder here."""
    folder = Path(folder)
    try:
        entries = [e for e in os.scandir(folder) if not e.name.startswith(".") and e.name not in SKIP]
    except OSError:
        return folder
    if len(entries) == 1 and entries[0].is_dir(follow_symlinks=False):
        return Path(entries[0].path)
    return folder


CODE_SUFFIXES = (".py", ".ipynb")
"""What a submission's code comes in: modules, or a notebook (``submission.ipynb``)."""


def has_code(folder):
    """Whether ``folder`` (a snapshot: no links) holds a ``.py`` file or a notebook anywhere: a submission without
    one is empty."""
    return any(name.endswith(CODE_SUFFIXES) for _base, _dirs, names in os.walk(folder) for name in names)


class FileRefused(OSError):
    """A file handed in that breaks a rule of ``safe_copy_file``: ``why`` (a phrase, ``messages.phrase``) says which,
    in the reader's language; its ``strerror`` is the English."""

    def __init__(self, code, why, path):
        from grader.messages import PHRASE, text

        super().__init__(code, text(why[PHRASE], "en", **why["params"]), path)
        self.why = why


def safe_copy_file(src, dest, *, max_file_bytes=MAX_FILE_BYTES):
    """A snapshot in the new folder ``dest`` of the one file ``src`` (a notebook handed in as a file): the file
    opened without following a link, checked to be a regular file within ``max_file_bytes``, then copied;
    ``FileRefused`` (an ``OSError``) saying which rule it broke otherwise."""
    from grader.messages import phrase

    fd = os.open(src, _O_FILE)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(errno.EINVAL, phrase("intake.not_regular"), str(src))
        if st.st_size > max_file_bytes:
            raise FileRefused(errno.EFBIG, phrase("intake.too_large", limit=max_file_bytes), str(src))
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        os.chmod(dest, 0o700)
        name = Path(src).name
        with open(dest / name, "wb") as out:
            while chunk := os.read(fd, _CHUNK):
                out.write(chunk)
        os.chmod(dest / name, 0o644)
    finally:
        os.close(fd)
    return Snapshot(root=dest, copied=[name])


def describe(entry, lang="en"):
    """The sentence for one refused entry (a ``Refused`` or its dict), in ``lang``."""
    from grader.messages import text

    r = entry if isinstance(entry, Refused) else Refused.from_dict(entry)
    if r.kind == "more":
        return text("snapshot.more", lang, count=r.size)
    what = text(f"snapshot.kind.{r.kind}", lang, size=r.size, limit=r.limit)
    return text("snapshot.refused", lang, path=r.path, what=what)


def short(entry, lang="en"):
    """``path (what)`` for one refused entry, in a few words (for the gradebook)."""
    from grader.messages import text

    r = entry if isinstance(entry, Refused) else Refused.from_dict(entry)
    if r.kind == "more":
        return text("snapshot.more", lang, count=r.size)
    return f"{r.path} ({text(f'snapshot.short.{r.kind}', lang)})"
