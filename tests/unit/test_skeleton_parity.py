"""``skeleton/`` and ``solution/`` expose the same API, and every stub names its task id.

Same files, same public functions, classes and methods, equal signatures and docstrings (the
package ``__init__`` docstring is the one intended difference: the skeleton's tells the student
what to do). Every stub raises ``NotImplementedError`` whose message starts with its task id.
"""

import importlib
import inspect
import re
from pathlib import Path

import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(path.stem for path in (ROOT / "solution").glob("*.py"))


def contract_table(page="CONTRACT.md"):
    """(module, public name) -> task id, read from a contract page's task table (``| `id` | `Name` | file.py |``,
    the students' source of truth): an assignment's task list is checked against it, not restated here."""
    table = {}
    for line in (ROOT / "docs" / page).read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[2].endswith(".py") and cells[0].startswith("`"):
            for name in re.findall(r"`(\w+)`", cells[1]):
                table[(cells[2][:-3], name)] = cells[0].strip("`")
    return table


TASK_IDS = contract_table()


def test_assignment_tasks_match_the_contract_page():
    from tests.conftest import TRANSFORMER

    ours = {(t.file[:-3], name): t.id for t in TRANSFORMER.tasks for name in t.names}
    assert ours == TASK_IDS
    assert TASK_IDS, "no task table found in docs/CONTRACT.md"


B, L, D, H, F_, V = 2, 3, 8, 2, 16, 7


def working_model():
    from solution.model import Transformer

    return Transformer(V, V, D, H, F_, num_layers=1, max_len=16)


def plausible_arguments():
    """(positional args, keyword args) for every stub, keyed by its qualified name."""
    x = torch.randn(B, L, D)
    tokens = torch.randint(1, V, (B, L))
    model = working_model()
    heads = torch.randn(B, H, L, D // H)
    return {
        "scaled_dot_product_attention": ((heads, heads, heads), {}),
        "MultiHeadAttention.__init__": ((D, H), {}),
        "MultiHeadAttention.forward": ((x, x, x), {}),
        "TokenEmbedding.__init__": ((V, D), {}),
        "TokenEmbedding.forward": ((tokens,), {}),
        "PositionalEncoding.__init__": ((D, 16, 0.0), {}),
        "PositionalEncoding.forward": ((x,), {}),
        "LayerNorm.__init__": ((D,), {}),
        "LayerNorm.forward": ((x,), {}),
        "FeedForward.__init__": ((D, F_), {}),
        "FeedForward.forward": ((x,), {}),
        "padding_mask": ((tokens, 0), {}),
        "causal_mask": ((L,), {}),
        "target_mask": ((tokens, 0), {}),
        "EncoderLayer.__init__": ((D, H, F_), {}),
        "EncoderLayer.forward": ((x,), {}),
        "DecoderLayer.__init__": ((D, H, F_), {}),
        "DecoderLayer.forward": ((x, x), {}),
        "Encoder.__init__": ((V, D, H, F_, 1, 16), {}),
        "Encoder.forward": ((tokens,), {}),
        "Decoder.__init__": ((V, D, H, F_, 1, 16), {}),
        "Decoder.forward": ((tokens, x), {}),
        "Transformer.__init__": ((V, V, D, H, F_, 1, 16), {}),
        "Transformer.encode": ((tokens,), {}),
        "Transformer.decode": ((tokens, x), {}),
        "Transformer.forward": ((tokens, tokens), {}),
        "greedy_decode": ((model, tokens), {"max_len": 3, "bos_idx": 1, "eos_idx": 2, "pad_idx": 0}),
        "sequence_loss": ((torch.randn(B, L, V), tokens, 0), {}),
        "noam_lr": ((1, D, 4), {}),
        "train_step": ((model, tokens, tokens, torch.optim.SGD(model.parameters(), lr=0.1)), {"pad_idx": 0}),
        "count_parameters": ((V, V, D, H, F_, 1), {}),
    }


def load(package, name):
    return importlib.import_module(f"{package}.{name}" if name != "__init__" else package)


def defined(module):
    """Public functions and classes defined in ``module`` itself (not imported into it)."""
    return {
        name: obj
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module.__name__
    }


def methods(cls):
    """``__init__`` and the public methods defined in ``cls`` itself."""
    return {
        name: obj
        for name, obj in vars(cls).items()
        if inspect.isfunction(obj) and (name == "__init__" or not name.startswith("_"))
    }


def stubs():
    """(qualified name, callable kind, task id) for every stub in the skeleton."""
    found = []
    for module_name in MODULES:
        for name, obj in defined(load("skeleton", module_name)).items():
            task = TASK_IDS.get((module_name, name))
            if inspect.isclass(obj):
                found += [(module_name, f"{name}.{method}", task) for method in methods(obj)]
            else:
                found.append((module_name, name, task))
    return found


def test_same_files():
    assert sorted(path.name for path in (ROOT / "skeleton").glob("*.py")) == [f"{m}.py" for m in MODULES]


@pytest.mark.parametrize("module_name", MODULES)
def test_skeleton_imports_cleanly(module_name):
    load("skeleton", module_name)


@pytest.mark.parametrize("module_name", MODULES)
def test_same_public_names(module_name):
    solution, skeleton = defined(load("solution", module_name)), defined(load("skeleton", module_name))
    assert sorted(skeleton) == sorted(solution)
    for name, cls in solution.items():
        if inspect.isclass(cls):
            assert sorted(methods(skeleton[name])) == sorted(methods(cls)), name


def test_every_public_name_has_a_task_id():
    names = {(m, name) for m in MODULES for name in defined(load("solution", m))}
    assert names == set(TASK_IDS)


@pytest.mark.parametrize("module_name", MODULES)
def test_same_signatures_and_docstrings(module_name):
    solution, skeleton = load("solution", module_name), load("skeleton", module_name)
    if module_name != "__init__":  # the package docstrings differ on purpose
        assert inspect.getdoc(skeleton) == inspect.getdoc(solution)
    assert inspect.getdoc(solution)
    pairs = []
    theirs = defined(skeleton)
    for name, obj in defined(solution).items():  # names missing on one side: test_same_public_names
        if name not in theirs:
            continue
        other = theirs[name]
        pairs.append((name, obj, other))
        if inspect.isclass(obj):
            other_methods = methods(other)
            pairs += [(f"{name}.{m}", fn, other_methods[m]) for m, fn in methods(obj).items() if m in other_methods]
    for qualname, obj, other in pairs:
        assert inspect.signature(other) == inspect.signature(obj), qualname
        assert inspect.getdoc(other) == inspect.getdoc(obj), qualname


def test_every_stub_has_plausible_arguments():
    assert sorted(qualname for _, qualname, _ in stubs()) == sorted(plausible_arguments())


@pytest.mark.parametrize(("module_name", "qualname", "task"), stubs(), ids=lambda v: v if isinstance(v, str) else "")
def test_stub_raises_with_its_task_id(module_name, qualname, task):
    assert task is not None, f"{module_name}.{qualname} has no task id"
    args, kwargs = plausible_arguments()[qualname]
    module = load("skeleton", module_name)
    if "." in qualname:
        class_name, method = qualname.split(".")
        cls = getattr(module, class_name)
        if method == "__init__":
            call = cls
        else:
            instance = object.__new__(cls)
            nn.Module.__init__(instance)  # a bare module: the stubbed __init__ would raise first
            call = getattr(instance, method)
    else:
        call = getattr(module, qualname)

    with pytest.raises(NotImplementedError) as raised:
        call(*args, **kwargs)

    message = str(raised.value)
    assert re.match(rf"{re.escape(task)}\b", message), f"{qualname}: {message!r} does not start with {task!r}"
