"""The forms the kit scan compares (``grader.kit.forms``): the same code gives the same form whatever its local names
and docstrings, other code never does, and a source read once is not read again (its forms kept by its digest)."""

import pytest

from grader import kit

CODE = '''
def scaled(x, factor):
    """Multiply."""
    out = x * factor
    return out
'''
RENAMED = """
def times(a, k):
    b = a * k
    return b
"""
CHANGED = '''
def scaled(x, factor):
    """Multiply."""
    out = x + factor
    return out
'''


def _only(source):
    ((name, as_written, renumbered, size),) = kit.forms(source)
    return name, as_written, renumbered, size


def test_other_local_names_and_no_docstring_are_the_same_renumbered_form():
    name, written, renumbered, size = _only(CODE)
    other_name, other_written, other_renumbered, other_size = _only(RENAMED)
    assert (name, other_name) == ("scaled", "times")
    assert renumbered == other_renumbered and size == other_size
    assert written != other_written


def test_one_operator_changed_is_another_form_both_ways():
    _, written, renumbered, _ = _only(CODE)
    _, changed_written, changed_renumbered, _ = _only(CHANGED)
    assert written != changed_written and renumbered != changed_renumbered


def test_a_source_read_once_is_kept_and_a_changed_one_is_read_anew(monkeypatch):
    monkeypatch.setattr(kit, "_FORMS", {})
    first = kit.forms(CODE)
    assert kit.forms(CODE) is first and len(kit._FORMS) == 1
    assert kit.forms(CODE + "\n") is not first  # other text: read again, even where its forms are the same
    assert kit.forms(CODE + "\n") == first
    assert kit.forms(CHANGED) != first and len(kit._FORMS) == 3


def test_the_kept_forms_are_bounded(monkeypatch):
    monkeypatch.setattr(kit, "_FORMS", {})
    monkeypatch.setattr(kit, "FORMS_KEPT", 2)
    for n in range(5):
        kit.forms(f"def f{n}(x):\n    return x + {n}\n")
    assert len(kit._FORMS) == 2
    assert kit.forms("def f4(x):\n    return x + 4\n")[0][0] == "f4"


def test_text_that_is_not_python_raises_every_time(monkeypatch):
    monkeypatch.setattr(kit, "_FORMS", {})
    for _ in range(2):
        with pytest.raises(SyntaxError):
            kit.forms("def broken(:\n")
    assert kit._FORMS == {}
