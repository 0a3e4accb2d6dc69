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
    import grader.submission.runner as _r
    exec(open(_r.SOLUTION_ROOT / "masks.py").read(), globals())
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

    from grader.submission.runner import SOLUTION_ROOT
    from grader.tasks import CONTRACT_FILES

    dest = Path(dest)
    dest.mkdir(parents=True)
    for file in CONTRACT_FILES:
        tree = ast.parse((SOLUTION_ROOT / file).read_text(encoding="utf-8"))
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
