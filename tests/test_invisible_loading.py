"""What the kit does to load and build a submission is invisible to its code.

A correct submission imports, finds its own files and runs threads as it would as a plain package (``python -c
"import mypkg.attention"``): each case below is the reference with one file edited to do one such ordinary thing,
and it keeps full marks in the tasks of that file, in process and in a worker (``--isolated``; jailed at
``/submission`` when the judge runs as root). None of it reaches past the submission's own folder.
"""

import pytest

from grader import api

MODES = [False, True]
MODE_IDS = ["in-process", "isolated"]


def _assert_full_marks(result, tasks):
    lost = {
        t.id: [(c.id, (c.error or {}).get("detail") or c.message) for c in t.checks if c.status != "passed"]
        for t in result.tasks
        if t.score != t.max_score
    }
    assert not lost and not result.load_errors, (lost, result.load_errors)
    assert [t.id for t in result.tasks] == tasks


# -- what the worker holds: the ordinary lazy imports a jailed worker could not read later ---------------------
EVERYDAY_TORCH = """

# printing a tensor, pickling and saving a module: each imports parts of torch the first time
import io as _io
import pickle as _pickle

_SHOWN = repr(torch.ones(2)) + str(torch.zeros(1, dtype=torch.bfloat16))
assert type(_pickle.loads(_pickle.dumps(MultiHeadAttention(4, 2)))) is MultiHeadAttention
_BUFFER = _io.BytesIO()
torch.save(MultiHeadAttention(4, 2).state_dict(), _BUFFER)
_BUFFER.seek(0)
MultiHeadAttention(4, 2).load_state_dict(torch.load(_BUFFER))
"""


@pytest.mark.parametrize("isolated", MODES, ids=MODE_IDS)
def test_printing_and_saving_tensors_at_import_keep_full_marks(isolated, make_submission):
    root = make_submission()
    (root / "attention.py").write_text((root / "attention.py").read_text() + EVERYDAY_TORCH)
    tasks = ["sdpa", "mha"]
    _assert_full_marks(api.check(path=root, profile="quick", tasks=tasks, isolated=isolated, diagnose=False), tasks)
