"""What the kit does to load and build a submission is invisible to its code.

A correct submission imports, finds its own files and runs threads as it would as a plain package (``python -c
"import mypkg.attention"``): each case below is the reference with one file edited to do one such ordinary thing,
and it keeps full marks in the tasks of that file, in process and in a worker (``--sealed``; jailed at
``/submission`` when the judge runs as root). None of it reaches past the submission's own folder.
"""

import importlib
import importlib.resources
import inspect
import os
import pkgutil

import pytest

from grader import api
from grader.submission.inprocess import isolated_namespace, parts_namespace, reference_parts
from grader.submission.loader import Namespace
from tests.conftest import TRANSFORMER

MODES = [False, True]
MODE_IDS = ["in-process", "sealed"]


def _assert_full_marks(result, tasks):
    lost = {
        t.id: [(c.id, (c.error or {}).get("detail") or c.message) for c in t.checks if c.status != "passed"]
        for t in result.tasks
        if t.score != t.max_score
    }
    assert not lost and not result.load_errors, (lost, result.load_errors)
    assert [t.id for t in result.tasks] == tasks


# -- importing: the submission's package is a package like any other -------------------------------------------
PACKAGE_USE = """import importlib
import importlib.resources
import importlib.util
import inspect
import math
import os
import pkgutil
import sys

# a data file shipped beside the code, found the ways a package finds its own files
_HERE = importlib.resources.files(__package__)
_FILL = (_HERE / "fill.txt").read_text(encoding="utf-8").strip()
assert (importlib.resources.files(__name__.rpartition(".")[0]) / "fill.txt").read_text().strip() == _FILL
with importlib.resources.as_file(_HERE / "fill.txt") as _path, open(_path, encoding="utf-8") as _f:
    assert _f.read().strip() == _FILL
with open(os.path.join(os.path.dirname(__file__), "fill.txt"), encoding="utf-8") as _f:
    assert _f.read().strip() == _FILL
# the package's view of its files is the folder this file is in, nothing more and nothing less
assert sorted(p.name for p in _HERE.iterdir()) == sorted(os.listdir(os.path.dirname(__file__)))
assert (_HERE / "attention.py").read_bytes() == open(__file__, "rb").read()
# the import system knows the package and its modules
_SPEC = importlib.util.find_spec(__package__)
assert _SPEC.name == __package__ == __spec__.parent and _SPEC.submodule_search_locations
assert importlib.util.find_spec(__name__).origin == __file__
assert importlib.util.find_spec(".masks", __package__) is not None
assert importlib.import_module(".masks", __package__).causal_mask is not None
assert {"attention", "masks"} <= {m.name for m in pkgutil.iter_modules(sys.modules[__package__].__path__)}
"""

PACKAGE_USE_AFTER = """

# the code can read itself, and its objects copy and pickle by their module's name
import copy as _copy
import dataclasses as _dataclasses
import pickle as _pickle


@_dataclasses.dataclass
class _Settings:
    heads: int = 2


assert inspect.getsource(scaled_dot_product_attention).startswith("def scaled_dot_product_attention")
assert __loader__.get_source(__name__) == open(__file__, encoding="utf-8").read()
assert _pickle.loads(_pickle.dumps(_Settings(3))) == _Settings(3)
assert type(_pickle.loads(_pickle.dumps(MultiHeadAttention(4, 2)))) is MultiHeadAttention
assert type(_copy.deepcopy(MultiHeadAttention(4, 2))) is MultiHeadAttention
"""


@pytest.mark.parametrize("sealed", MODES, ids=MODE_IDS)
def test_a_submission_that_finds_its_files_through_its_package_keeps_full_marks(sealed, make_submission):
    root = make_submission({"attention.py": [("import math\n", PACKAGE_USE), ('float("-inf")', "float(_FILL)")]})
    (root / "fill.txt").write_text("-inf\n", encoding="utf-8")
    (root / "attention.py").write_text((root / "attention.py").read_text() + PACKAGE_USE_AFTER)
    tasks = ["sdpa", "mha", "encoder_layer"]  # encoder_layer: layers.py imports attention.py
    _assert_full_marks(api.check(path=root, profile="quick", tasks=tasks, sealed=sealed, diagnose=False), tasks)


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


@pytest.mark.parametrize("sealed", MODES, ids=MODE_IDS)
def test_printing_and_saving_tensors_at_import_keep_full_marks(sealed, make_submission):
    root = make_submission()
    (root / "attention.py").write_text((root / "attention.py").read_text() + EVERYDAY_TORCH)
    tasks = ["sdpa", "mha"]
    _assert_full_marks(api.check(path=root, profile="quick", tasks=tasks, sealed=sealed, diagnose=False), tasks)


# -- building: a module's __init__ may compute in a thread, keep a cache, or read a value ----------------------
TABLE = """        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # [D/2]
        angle = position / 10000.0 ** (two_i / d_model)  # [max_len, D/2]
"""
BUILDS = {
    # the frequencies made in a thread, then combined with the positions made in __init__'s own thread
    "thread": """        import threading

        made = {}
        worker = threading.Thread(target=lambda: made.update(two_i=torch.arange(0, d_model, 2, dtype=torch.float64)))
        worker.start()
        worker.join()
        angle = position / 10000.0 ** (made["two_i"] / d_model)  # [max_len, D/2]
""",
    "thread_pool": """        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2) as pool:
            two_i = pool.submit(torch.arange, 0, d_model, 2, dtype=torch.float64).result()
        angle = position / 10000.0 ** (two_i / d_model)  # [max_len, D/2]
""",
    # the angles kept between builds, in a cache of the module's own
    "cache": """        key = (max_len, d_model)
        if key not in _ANGLES:  # computed once per size
            two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # [D/2]
            _ANGLES[key] = position / 10000.0 ** (two_i / d_model)  # [max_len, D/2]
        angle = _ANGLES[key]
""",
    # both: the positions kept in a cache, the frequencies made in a thread
    "cache_and_thread": """        import threading

        key = (max_len, d_model)
        if key not in _ANGLES:  # computed once per size
            _ANGLES[key] = position
        made = {}
        worker = threading.Thread(target=lambda: made.update(two_i=torch.arange(0, d_model, 2, dtype=torch.float64)))
        worker.start()
        worker.join()
        angle = _ANGLES[key] / 10000.0 ** (made["two_i"] / d_model)  # [max_len, D/2]
""",
    # a constant read off a tensor (a Python number, as float(10000) would be)
    "value": """        base = torch.tensor(10000.0, dtype=torch.float64).item()
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # [D/2]
        angle = position / base ** (two_i / d_model)  # [max_len, D/2]
""",
}


@pytest.mark.parametrize("sealed", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("build", sorted(BUILDS))
def test_a_table_built_in_a_thread_from_a_cache_or_from_a_value_keeps_full_marks(build, sealed, make_submission):
    root = make_submission(
        {"embedding.py": [(TABLE, BUILDS[build]), ("from torch import nn\n", "from torch import nn\n\n_ANGLES = {}\n")]}
    )
    tasks = ["positional"]
    _assert_full_marks(api.check(path=root, profile="quick", tasks=tasks, sealed=sealed, diagnose=False), tasks)


INIT_LOOP = """                nn.init.xavier_uniform_(p)
"""


@pytest.mark.parametrize("sealed", MODES, ids=MODE_IDS)
def test_a_full_size_model_that_reads_its_weights_while_built_keeps_full_marks(sealed, make_submission):
    # the contract's defaults are judged on a model of full size (44 million parameters): built plainly too
    check = INIT_LOOP + '        assert all(p.isfinite().all() for p in self.parameters()), "a weight is not finite"\n'
    root = make_submission({"model.py": (INIT_LOOP, check)})
    tasks = ["model"]
    _assert_full_marks(api.check(path=root, profile="quick", tasks=tasks, sealed=sealed, diagnose=False), tasks)


# -- and nothing beyond the submission's own folder -----------------------------------------------------------
def test_a_package_shows_its_own_folder_only(make_submission):
    root = make_submission(files=["attention.py", "masks.py"])
    (root / "notes.txt").write_text("mine", encoding="utf-8")
    ns = Namespace(root, assignment=TRANSFORMER)
    files = importlib.resources.files(ns.package)
    assert sorted(p.name for p in files.iterdir()) == ["attention.py", "masks.py", "notes.txt"]
    assert (files / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert ns.module("attention.py").__spec__.parent == ns.package
    assert not hasattr(ns.module("attention.py"), "__path__")
    # no __init__.py: a namespace package, which has no file of its own (the folder's __init__.py is never run)
    package = importlib.import_module(ns.package)
    assert package.__spec__.origin is None and not hasattr(package, "__file__")
    assert package.__path__ == [str(root.resolve())]


def test_the_reference_parts_of_an_isolated_check_show_no_source_and_no_files(make_submission):
    root = make_submission(files=["attention.py", "layers.py"])
    parts = parts_namespace(TRANSFORMER, reference_parts(TRANSFORMER, "encoder_layer"))
    ns = isolated_namespace(TRANSFORMER, root, "encoder_layer", parts)
    ns.module("layers.py")
    part = parts.module("attention.py")  # the reference's attention.py, held as source text only
    assert part.__loader__.get_source(part.__name__) is None
    with pytest.raises(OSError):
        inspect.getsource(part.MultiHeadAttention)
    with pytest.raises(OSError):
        part.__loader__.get_data(part.__file__)
    reference_files = importlib.resources.files(parts.package)
    assert not reference_files.is_dir() and not (reference_files / "attention.py").is_file()
    assert pkgutil.get_data(parts.package, "attention.py") is None
    # the submission's own package still shows its own folder
    assert sorted(p.name for p in importlib.resources.files(ns.package).iterdir()) == ["attention.py", "layers.py"]


def test_the_package_spec_does_not_run_the_folders_init(make_submission):
    root = make_submission(files=["attention.py"])
    (root / "__init__.py").write_text("raise RuntimeError('the package __init__ ran')\n", encoding="utf-8")
    ns = Namespace(root, assignment=TRANSFORMER)
    assert ns.get("MultiHeadAttention").__module__ == f"{ns.package}.attention"
    package = importlib.import_module(ns.package)
    assert package.__file__ == os.path.join(str(root.resolve()), "__init__.py") == package.__spec__.origin


def test_from_a_redirected_package_import_gives_the_submissions_own_submodule(make_submission):
    root = make_submission(files=["attention.py", "masks.py"])
    (root / "helpers").mkdir()
    (root / "helpers" / "__init__.py").write_text("", encoding="utf-8")
    (root / "helpers" / "consts.py").write_text("SCALE = 2\n", encoding="utf-8")
    (root / "helpers" / "broken.py").write_text("import no_such_module_anywhere\n", encoding="utf-8")
    lines = [
        "from skeleton import masks as _masks",
        "from helpers import consts as _consts",
        "from . import masks as _own",
    ]
    (root / "attention.py").write_text((root / "attention.py").read_text() + "\n" + "\n".join(lines) + "\n")
    ns = Namespace(root, assignment=TRANSFORMER)
    module = ns.module("attention.py")
    assert module._masks is module._own is ns.module("masks.py") and module._consts.SCALE == 2
    # what is no submodule is refused as Python refuses it, and an import that fails inside one is told as it is
    globals_ = vars(module)
    with pytest.raises(ImportError, match="cannot import name 'nothing_here'"):
        exec("from skeleton import nothing_here", globals_)  # noqa: S102 - an import statement run as the file's own
    with pytest.raises(ModuleNotFoundError, match="no_such_module_anywhere"):
        exec("from helpers import broken", globals_)  # noqa: S102 - an import statement run as the file's own
