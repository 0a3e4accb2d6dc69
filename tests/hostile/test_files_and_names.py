"""Links, special files and names.

The judge reads a submission only through a snapshot made once, with ``lstat`` and ``O_NOFOLLOW``:
regular files are copied; symbolic links (even to a file inside the folder), devices, FIFOs, sockets,
files over the size cap and names that are not clean UTF-8 are refused, listed in the student's
result, and the grading goes on with the rest. Every byte of a submission is data: a non-UTF-8 file
or folder name, or exception text with lone surrogates and NULs, still ends in a gradebook row, a
report and valid UTF-8 JSON.

The batch runs in a subprocess with a time limit and soft memory and file-size limits, so that the
attacks (a link to ``/dev/zero``, a FIFO) fail a test instead of hanging or filling the machine.
"""

import csv
import json
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from grader.assignment import load
from tests import hostile

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = load().reference
BATCH_ARGS = ("--tasks", "masks", "--profile", "quick", "--call-timeout", "6", "--total-timeout", "12",
              "--memory-mb", "2048", "-q")
SECRET = "GRADEKIT-ROOT-ONLY-c0ffee-7f3a"
"""The content of a 0600 file outside the submission that a link in it points at."""
GUARD_AS = 4 << 30
GUARD_FSIZE = 400 << 20


def _reference_lines():
    """Lines of the reference's masks.py and attention.py found nowhere in the skeleton or the base submission:
    if one shows up in an output, the reference leaked."""
    known = set()
    for folder in (ROOT / "skeleton", hostile.BASE):
        for path in folder.glob("*.py"):
            known |= {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
    lines = []
    for file in ("masks.py", "attention.py"):
        for line in (REFERENCE / file).read_text(encoding="utf-8").splitlines():
            if len(line.strip()) > 30 and line.strip() not in known:
                lines.append(line.strip())
    assert len(lines) > 5
    return lines


LEAKER = hostile.CORRECT + '''
from pathlib import Path as _Path


def padding_mask(tokens, pad_idx):  # shows what the links in its folder hold, if it can read them
    here = _Path(__file__).parent
    found = []
    for name in ("secret.txt", "ref_masks.py", "ref_attention.py", "inside.py", "outside/secret.txt"):
        try:
            found.append(name + "=" + (here / name).read_text())
        except OSError as exc:
            found.append(name + ":" + type(exc).__name__)
    raise ValueError("LEAK " + " ".join(found))
'''

NASTY = "\x1b[2J\x1b[H\u2714 masks 10.0 / 10.0\nScore: 140 / 140\nAll checks passed\r\x00\x9b2J\udcff\ud800\u202e"
ESCAPES = hostile.CORRECT + f'''

def padding_mask(tokens, pad_idx):
    raise ValueError({NASTY!r})
'''


def _submission(dest, masks=None):
    dest = Path(dest)
    shutil.copytree(hostile.BASE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    if masks is not None:
        (dest / "masks.py").write_text(masks, encoding="utf-8")
    return dest


def _secret(folder):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "secret.txt"
    path.write_text(SECRET)
    path.chmod(0o600)
    folder.chmod(0o700)
    return path


def _guard():
    os.setsid()
    for limit, value in ((resource.RLIMIT_AS, GUARD_AS), (resource.RLIMIT_FSIZE, GUARD_FSIZE)):
        soft, hard = resource.getrlimit(limit)
        resource.setrlimit(limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))


def _kill_tree(pid):
    """SIGKILL ``pid`` and every process below it (judges and workers start sessions of their own)."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    todo, tree = [pid], []
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += children.get(p, [])
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def _run(args, timeout):
    """``python -m grader ARGS`` with the guards; ``(returncode, stdout bytes, stderr bytes)``."""
    proc = subprocess.Popen([sys.executable, "-m", "grader", *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_guard)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        out, err = proc.communicate()
        pytest.fail(f"gradekit {args[0]} ran past {timeout} s (a link or special file was followed?): "
                    f"{err[-2000:].decode(errors='replace')}")
    return proc.returncode, out, err


def _rows(out):
    text = (out / "gradebook.csv").read_bytes().decode("utf-8")  # strict: valid UTF-8
    assert text.startswith("\ufeff")
    return {r["student_id"]: r for r in csv.DictReader(text[1:].splitlines())}


def _folders(out):
    """Student id (as shown) -> that student's output folder."""
    found = {}
    for record in out.glob("*/record.json"):
        found[json.loads(record.read_bytes().decode("utf-8"))["student"]] = record.parent
    return found


def _all_output(out):
    return b"".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())


# -- the snapshot itself --------------------------------------------------------------------------------------
def _snap(src, dest, **caps):
    from grader.submission.snapshot import safe_copy

    caps = {"max_file_bytes": 1 << 20, "max_total_bytes": 4 << 20, "max_files": 50, **caps}
    done = {}

    def run():
        done["snap"] = safe_copy(src, dest, **caps)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "safe_copy hung (it opened a FIFO or read a device?)"
    return done["snap"]


def _refused(snap):
    return {r.path: r.kind for r in snap.refused}


def test_an_odd_but_legal_layout_is_copied_whole(tmp_path):
    src = _submission(tmp_path / "odd")
    (src / "helpers").mkdir()
    (src / "helpers" / "__init__.py").write_text("X = 1\n")
    (src / "笔记.md").write_text("笔记\n", encoding="utf-8")
    (src / "empty").mkdir()
    (src / ".editorconfig").write_text("root = true\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "masks.cpython-311.pyc").write_bytes(b"\0junk")
    (src / ".git").mkdir()
    (src / ".git" / "config").write_text("[core]\n")
    snap = _snap(src, tmp_path / "copy")
    assert snap.refused == []
    assert sorted(snap.copied) == sorted([p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()
                                          and not {"__pycache__", ".git"} & set(p.relative_to(src).parts)])
    for rel in snap.copied:
        assert (snap.root / rel).read_bytes() == (src / rel).read_bytes()
        assert not (snap.root / rel).is_symlink()
    assert "笔记.md" in snap.copied and "helpers/__init__.py" in snap.copied
    assert not (snap.root / "__pycache__").exists() and not (snap.root / ".git").exists()


def test_links_and_special_files_are_refused_and_listed(tmp_path):
    secret = _secret(tmp_path / "private")
    src = _submission(tmp_path / "sub")
    (src / "secret.txt").symlink_to(secret)
    (src / "ref_attention.py").symlink_to(REFERENCE / "attention.py")
    (src / "inside.py").symlink_to(src / "masks.py")  # even a link to a file inside the folder
    (src / "outside").symlink_to(secret.parent, target_is_directory=True)
    (src / "zero.py").symlink_to("/dev/zero")
    (src / "dangling.py").symlink_to(tmp_path / "nowhere")
    os.mkfifo(src / "pipe.py")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(src / "sock"))
    snap = _snap(src, tmp_path / "copy")
    assert _refused(snap) == {"secret.txt": "symlink", "ref_attention.py": "symlink", "inside.py": "symlink",
                              "outside": "symlink", "zero.py": "symlink", "dangling.py": "symlink",
                              "pipe.py": "fifo", "sock": "socket"}
    assert "masks.py" in snap.copied and len(snap.copied) == 9
    copied = b"".join(p.read_bytes() for p in snap.root.rglob("*") if p.is_file())
    assert SECRET.encode() not in copied
    assert all(line.encode() not in copied for line in _reference_lines())
    assert not any(p.is_symlink() or not (p.is_file() or p.is_dir()) for p in snap.root.rglob("*"))


def test_a_device_node_is_refused(tmp_path):
    src = tmp_path / "sub"
    src.mkdir()
    try:
        os.mknod(src / "null.py", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    assert _refused(_snap(src, tmp_path / "copy")) == {"null.py": "device"}


def test_caps_per_file_total_and_count(tmp_path):
    src = _submission(tmp_path / "sub")
    with open(src / "big.bin", "wb") as fh:  # 50 MB: refused unread
        fh.write(b"\0" * (50 << 20))
    snap = _snap(src, tmp_path / "a", max_file_bytes=8 << 20)
    assert _refused(snap) == {"big.bin": "too_big"}
    assert next(r for r in snap.refused if r.path == "big.bin").size == 50 << 20
    assert not (snap.root / "big.bin").exists() and (snap.root / "masks.py").is_file()
    (src / "big.bin").unlink()
    for i in range(5):
        (src / f"pad{i}.txt").write_bytes(b"x" * 3000)
    snap = _snap(src, tmp_path / "b", max_total_bytes=sum(f.stat().st_size for f in src.glob("*.py")) + 4000)
    assert set(_refused(snap).values()) == {"total"} and len(snap.refused) == 1
    assert all(f in snap.copied for f in [p.name for p in src.glob("*.py")])  # code first, data after
    snap = _snap(src, tmp_path / "c", max_files=3)
    assert len(snap.copied) == 3 and set(_refused(snap).values()) == {"count"}


def test_a_name_that_is_not_utf8_is_refused_as_data(tmp_path):
    src = _submission(tmp_path / "sub")
    raw = os.fsencode(src) + b"/notes\xff.py"
    with open(raw, "wb") as fh:
        fh.write(b"x = 1\n")
    os.mkdir(os.fsencode(src) + b"/dir\xfe")
    with open(os.fsencode(src) + b"/dir\xfe/a.py", "wb") as fh:
        fh.write(b"y = 2\n")
    (src / "esc\x1b[2J.py").write_text("z = 3\n")
    snap = _snap(src, tmp_path / "copy")
    assert _refused(snap) == {"notes\\xff.py": "bad_name", "dir\\xfe": "bad_name", "esc\\x1b[2J.py": "bad_name"}
    for r in snap.refused:
        r.path.encode("utf-8")  # displayable: no surrogates
    assert "masks.py" in snap.copied


def test_the_display_name_is_escaped_and_distinct():
    from grader.submission.snapshot import display_name

    assert display_name(b"stud\xe9nt") == "stud\\xe9nt"
    assert display_name("张三") == "张三"
    assert display_name(b"\x1b[2J") == "\\x1b[2J"
    assert display_name("a\\xe9") != display_name(b"a\xe9")  # a backslash is escaped too: no two names meet


# -- the judge: check --sealed and the batch --------------------------------------------------------------
def test_check_sealed_never_follows_a_link(tmp_path):
    secret = _secret(tmp_path / "private")
    sub = _submission(tmp_path / "sub", LEAKER)
    (sub / "secret.txt").symlink_to(secret)
    (sub / "ref_masks.py").symlink_to(REFERENCE / "masks.py")
    (sub / "ref_attention.py").symlink_to(REFERENCE / "attention.py")
    (sub / "outside").symlink_to(secret.parent, target_is_directory=True)
    reports = tmp_path / "reports"
    reports.mkdir()
    code, out, err = _run(["check", sub, "--sealed", "--tasks", "masks", "--profile", "quick",
                           "--json", reports / "r.json", "--html", reports / "r.html",
                           "--gradescope", reports / "g.json", "--junit", reports / "j.xml"], timeout=240)
    assert code == 1, err[-3000:]
    everything = out + _all_output(reports)
    assert SECRET.encode() not in everything
    for line in _reference_lines():
        assert line.encode() not in everything, line
    assert b"LEAK " in everything  # the code ran, and read nothing through the links
    data = json.loads((reports / "r.json").read_bytes().decode("utf-8"))
    assert {r["path"]: r["kind"] for r in data["refused"]} == {
        "secret.txt": "symlink", "ref_masks.py": "symlink", "ref_attention.py": "symlink", "outside": "symlink"}
    assert all("regular" in r["message"] for r in data["refused"])
    text = out.decode("utf-8")
    assert "ref_masks.py" in text and "symbolic link" in text


def test_in_process_a_linked_contract_file_is_refused_as_when_sealed(tmp_path):
    from grader import api

    sub = _submission(tmp_path / "sub")
    (sub / "masks.py").unlink()
    (sub / "masks.py").symlink_to(REFERENCE / "masks.py")
    result = api.check(path=sub, tasks=["masks"], profile="quick", diagnose=False)
    assert result.score == 0 and result.refused == [{"path": "masks.py", "kind": "symlink", "size": 0, "limit": 0}]
    assert all(c.error and c.error["kind"] == "missing_file" for t in result.tasks for c in t.checks)


def test_in_process_tracebacks_still_point_at_the_students_own_files(tmp_path):
    from grader import api

    sub = _submission(tmp_path / "sub", hostile.CORRECT + "\n\ndef padding_mask(tokens, pad_idx):\n"
                                                          "    raise ValueError('mine')\n")
    result = api.check(path=sub, tasks=["masks"], profile="quick", diagnose=False)
    padding = next(c for t in result.tasks for c in t.checks if c.id == "masks.padding")
    assert padding.error["file"] == "masks.py" and str(sub / "masks.py") in padding.error["trace"]
    assert result.refused == []


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("names")
    cls = base / "class"
    cls.mkdir()
    secret = _secret(base / "private")
    # a correct submission with an odd but legal layout
    odd = _submission(cls / "odd_layout")
    (odd / "helpers").mkdir()
    (odd / "helpers" / "__init__.py").write_text("X = 1\n")
    (odd / "笔记.md").write_text("笔记\n", encoding="utf-8")
    (odd / "empty").mkdir()
    (odd / "__pycache__").mkdir()
    (odd / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (odd / ".git").mkdir()
    (odd / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    # links to a root-only file and to the reference, read by the code
    links = _submission(cls / "links", LEAKER)
    (links / "secret.txt").symlink_to(secret)
    (links / "ref_masks.py").symlink_to(REFERENCE / "masks.py")
    (links / "ref_attention.py").symlink_to(REFERENCE / "attention.py")
    (links / "inside.py").symlink_to(links / "masks.py")
    (links / "outside").symlink_to(secret.parent, target_is_directory=True)
    # a correct submission with /dev/zero, a FIFO, a socket and a 50 MB file beside it
    special = _submission(cls / "specials")
    (special / "zero.py").symlink_to("/dev/zero")
    os.mkfifo(special / "pipe.py")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(special / "sock"))
    with open(special / "big.bin", "wb") as fh:
        fh.write(b"\0" * (50 << 20))
    # names that are not UTF-8: inside a submission and as the student's folder
    names = _submission(cls / "bad_file_name")
    with open(os.fsencode(names) + b"/notes\xff.py", "wb") as fh:
        fh.write(b"x = 1\n")
    _submission(Path(os.fsdecode(os.fsencode(cls) + b"/stud\xe9nt")))
    _submission(cls / "John Doe 张三")
    # exception text with escape codes, a fake score, NUL and lone surrogates
    _submission(cls / "escapes", ESCAPES)
    # a student folder that is itself a link, and a zip whose member name is not UTF-8 though it says so
    (cls / "linked").symlink_to(odd, target_is_directory=True)
    good = base / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        for path in sorted(hostile.BASE.glob("*.py")):
            zf.write(path, path.name)
        zf.writestr("r\u00e9sum\u00e9.py", "x = 1\n")
    (cls / "badzip.zip").write_bytes(good.read_bytes().replace("r\u00e9sum\u00e9".encode(), b"r\xff\xfesum\xff\xfe"))
    out = base / "out"
    code, stdout, stderr = _run(["batch", cls, "--out", out, "-j", "2", *BATCH_ARGS], timeout=420)
    yield {"out": out, "code": code, "stderr": stderr, "rows": _rows(out) if (out / "gradebook.csv").exists()
           else None, "folders": _folders(out) if out.exists() else {}}


STUDENTS = ("odd_layout", "links", "specials", "bad_file_name", "stud\\xe9nt", "John Doe 张三", "escapes",
            "linked", "badzip")


def test_the_batch_ends_with_a_row_and_a_report_for_everyone(graded):
    assert graded["code"] == 0, graded["stderr"][-3000:]
    assert sorted(graded["rows"]) == sorted(STUDENTS)
    for student in STUDENTS:
        folder = graded["folders"][student]
        for name in ("report.html", "results.json", "gradescope.json"):
            data = (folder / name).read_bytes().decode("utf-8")  # valid UTF-8
            if name.endswith(".json"):
                json.loads(data)
    index = (graded["out"] / "index.html").read_text(encoding="utf-8")
    for student, folder in graded["folders"].items():
        assert f'href="{folder.name}/report.html"' in index, student
    assert len({f.name for f in graded["folders"].values()}) == len(STUDENTS)


def test_a_correct_submission_with_an_odd_layout_gets_full_marks(graded):
    for student in ("odd_layout", "stud\\xe9nt", "John Doe 张三"):
        row = graded["rows"][student]
        assert row["status"] == "ok" and row["total"] == row["max"] == "10", row
        data = json.loads((graded["folders"][student] / "results.json").read_text(encoding="utf-8"))
        assert data["refused"] == [] and data["student"] == student


def test_links_are_refused_and_nothing_they_point_at_appears(graded):
    row = graded["rows"]["links"]
    assert row["status"] == "refused" and "secret.txt" in row["reason"] and "symbolic link" in row["reason"], row
    everything = _all_output(graded["out"])
    assert SECRET.encode() not in everything
    for line in _reference_lines():
        assert line.encode() not in everything, line
    data = json.loads((graded["folders"]["links"] / "results.json").read_text(encoding="utf-8"))
    assert {r["path"]: r["kind"] for r in data["refused"]} == {
        "secret.txt": "symlink", "ref_masks.py": "symlink", "ref_attention.py": "symlink", "inside.py": "symlink",
        "outside": "symlink"}


def test_special_files_and_a_huge_file_are_refused_and_the_rest_is_graded(graded):
    row = graded["rows"]["specials"]
    assert row["status"] == "refused" and row["total"] == "10", row
    data = json.loads((graded["folders"]["specials"] / "results.json").read_text(encoding="utf-8"))
    assert {r["path"]: r["kind"] for r in data["refused"]} == {
        "zero.py": "symlink", "pipe.py": "fifo", "sock": "socket", "big.bin": "too_big"}
    html = (graded["folders"]["specials"] / "report.html").read_text(encoding="utf-8")
    assert "pipe.py" in html and "big.bin" in html


def test_a_file_name_that_is_not_utf8_is_listed_not_fatal(graded):
    row = graded["rows"]["bad_file_name"]
    assert row["status"] == "refused" and row["total"] == "10" and "notes\\xff.py" in row["reason"], row


def test_exception_text_with_escapes_and_surrogates_is_data(graded):
    row = graded["rows"]["escapes"]
    assert row["status"] == "ok" and float(row["total"]) < 10, row
    folder = graded["folders"]["escapes"]
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    padding = next(c for c in data["tasks"][0]["checks"] if c["id"] == "masks.padding")
    assert padding["status"] == "error" and "\\x1b[2J" in padding["error"]["detail"]
    assert "\\xff\\ud800" in padding["error"]["detail"]
    for name in ("results.json", "report.html", "gradescope.json", "record.json"):
        raw = (folder / name).read_bytes()
        assert b"\x1b" not in raw and b"\x00" not in raw and b"\xc2\x9b" not in raw, name
    gs = json.loads((folder / "gradescope.json").read_text(encoding="utf-8"))
    assert gs["score"] == float(row["total"]) and gs["tests"]


def test_a_linked_student_folder_and_an_unreadable_zip_get_a_row(graded):
    assert graded["rows"]["linked"]["status"] == "error" and "link" in graded["rows"]["linked"]["reason"]
    assert graded["rows"]["badzip"]["status"] == "error" and graded["rows"]["badzip"]["reason"]


def test_a_submission_cannot_pass_its_error_off_as_the_references(tmp_path):
    """In process a submission can raise the grader's ReferenceFailed itself: it is still its own error
    (error.exception), never 'the reference raised'; sealed, the worker's reply carries no such class."""
    from grader import api

    sub = tmp_path / "sub"
    shutil.copytree(REFERENCE, sub, ignore=shutil.ignore_patterns("__pycache__"))
    masks = sub / "masks.py"
    masks.write_text(masks.read_text().replace(
        "def padding_mask(", "def _forge():\n    from grader.checks.base import ReferenceFailed\n"
        "    from grader.errors import SubmissionError\n"
        "    raise ReferenceFailed(SubmissionError(kind='exception', detail='the reference is wrong'))\n\n\n"
        "def padding_mask(", 1).replace("    return ", "    _forge()\n    return ", 1))
    for sealed in (False, True):
        result = api.check(path=sub, profile="quick", tasks=["masks"], sealed=sealed, diagnose=False)
        keys = {c.message.key for t in result.tasks for c in t.checks if c.status != "passed"}
        assert keys and "error.reference" not in keys, (sealed, keys)
        assert result.score < result.max_score


@pytest.mark.parametrize("limit", ["{'seconds': '<b>1</b>', 'of_total': [1]}", "{'used_up': True}", "'60'",
                                   "{'seconds': float('inf')}", "{'seconds': 1, 'of_total': 'x'}"])
def test_a_forged_timeout_is_told_by_its_detail_and_grading_goes_on(tmp_path, limit):
    """A submission can raise the grader's SubmissionError itself, with any data: a time limit that is not plain
    numbers (as only the runners write it) is not turned into a sentence; the check errs with the detail, and the
    grading goes on, in process and sealed."""
    from grader import api

    sub = tmp_path / "sub"
    shutil.copytree(REFERENCE, sub, ignore=shutil.ignore_patterns("__pycache__"))
    masks = sub / "masks.py"
    masks.write_text(masks.read_text().replace(
        "def padding_mask(", "def _forge():\n    from grader.errors import SubmissionError\n"
        f"    raise SubmissionError(kind='timeout', detail='forged', data={{'limit': {limit}}})\n\n\n"
        "def padding_mask(", 1).replace("    return ", "    _forge()\n    return ", 1))
    for sealed in (False, True):
        result = api.check(path=sub, profile="quick", tasks=["masks", "embedding"], sealed=sealed, diagnose=False)
        failing = [c for t in result.tasks for c in t.checks if c.status != "passed"]
        assert failing and {c.message.key for c in failing} == {"error.timeout"}, (sealed, failing)
        assert all(c.message.params["detail"] == "forged" for c in failing)
        assert next(t for t in result.tasks if t.id == "embedding").score == 10
