"""The second assignment's skeleton and reference expose the same API, as ``docs/CONTRACT_LM.md`` lists it.

Same files; the same public functions, classes, methods and properties; equal signatures and docstrings (the
package docstrings differ on purpose: the skeleton's tells the student what to do). Every stub only raises
``NotImplementedError`` whose message starts with its task id, read from the contract page's task table.
"""

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from torch import nn

from tests.unit.test_skeleton_parity import contract_table

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "assignments" / "decoder_lm"
REFERENCE, SKELETON = "assignments.decoder_lm.reference", "assignments.decoder_lm.skeleton"
FILES = sorted(path.stem for path in (HERE / "reference").glob("*.py") if path.stem != "__init__")


TASKS = contract_table("CONTRACT_LM.md")


def module(package, stem):
    return importlib.import_module(f"{package}.{stem}")


def defined(mod):
    """Public functions and classes defined in ``mod`` itself (not imported into it)."""
    return {
        name: obj
        for name, obj in vars(mod).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == mod.__name__
    }


def members(cls):
    """``__init__``, the public methods and the properties defined in ``cls`` itself."""
    return {
        name: obj
        for name, obj in vars(cls).items()
        if (inspect.isfunction(obj) and (name == "__init__" or not name.startswith("_"))) or isinstance(obj, property)
    }


def stubs():
    """(module, qualified name, task id) for every stub of the skeleton."""
    found = []
    for stem in FILES:
        for name, obj in defined(module(SKELETON, stem)).items():
            task = TASKS.get((stem, name))
            qualnames = [f"{name}.{m}" for m in members(obj)] if inspect.isclass(obj) else [name]
            found += [(stem, q, task) for q in qualnames]
    return found


def test_same_files_and_the_contract_lists_every_name():
    assert sorted(p.name for p in (HERE / "skeleton").glob("*.py")) == sorted(
        p.name for p in (HERE / "reference").glob("*.py")
    )
    assert TASKS, "no task table found in docs/CONTRACT_LM.md"
    assert {(stem, name) for stem in FILES for name in defined(module(REFERENCE, stem))} == set(TASKS)


@pytest.mark.parametrize("stem", FILES)
def test_same_names_signatures_and_docstrings(stem):
    ref, skel = module(REFERENCE, stem), module(SKELETON, stem)
    assert inspect.getdoc(skel) == inspect.getdoc(ref) and inspect.getdoc(ref)
    ours, theirs = defined(ref), defined(skel)
    assert sorted(theirs) == sorted(ours)
    for name, obj in ours.items():
        assert inspect.signature(theirs[name]) == inspect.signature(obj), name
        assert inspect.getdoc(theirs[name]) == inspect.getdoc(obj), name
        if inspect.isclass(obj):
            assert theirs[name].__bases__ == obj.__bases__, name
            mine, stubbed = members(obj), members(theirs[name])
            assert sorted(stubbed) == sorted(mine), name
            for member, fn in mine.items():
                if isinstance(fn, property):
                    assert isinstance(stubbed[member], property), f"{name}.{member}"
                else:
                    assert inspect.signature(stubbed[member]) == inspect.signature(fn), f"{name}.{member}"


def bare_instance(cls):
    """An instance whose stubbed ``__init__`` never ran (it would raise first); a module is still a module."""
    instance = object.__new__(cls)
    if isinstance(instance, nn.Module):
        nn.Module.__init__(instance)
    return instance


@pytest.mark.parametrize(("stem", "qualname", "task"), stubs(), ids=lambda v: v if isinstance(v, str) else "")
def test_stub_raises_with_its_task_id(stem, qualname, task):
    assert task is not None, f"{stem}.{qualname} is not in the contract's task table"
    mod = module(SKELETON, stem)
    owner, _, member = qualname.partition(".")
    target = getattr(mod, owner)
    with pytest.raises(NotImplementedError) as raised:
        if member in ("", "__init__"):  # a function, or a class called
            target(*[None] * len(inspect.signature(target).parameters))
        elif isinstance(vars(target)[member], property):
            getattr(bare_instance(target), member)
        else:
            method = getattr(bare_instance(target), member)
            method(*[None] * len(inspect.signature(method).parameters))
    assert str(raised.value).startswith(f"{task}: "), str(raised.value)


def stub_bodies(tree):
    """(qualified name, statements after the docstring) of every function in a parsed skeleton file."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}.{item.name}", item.body
        elif isinstance(node, ast.FunctionDef) and node.col_offset == 0:
            yield node.name, node.body


@pytest.mark.parametrize("stem", FILES)
def test_stubs_hold_no_reference_code(stem):
    """Each stub is its docstring, at most ``super().__init__()``, and the raise: nothing of the solution."""
    tree = ast.parse((HERE / "skeleton" / f"{stem}.py").read_text(encoding="utf-8"))
    for qualname, body in stub_bodies(tree):
        statements = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        *before, last = statements
        assert isinstance(last, ast.Raise), qualname
        assert [ast.unparse(s) for s in before] in ([], ["super().__init__()"]), qualname
