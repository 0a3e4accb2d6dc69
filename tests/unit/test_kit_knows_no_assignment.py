"""The kit's views and sentences know no assignment: ``grader/views/`` (code, templates, CSS) and
``grader/messages/`` name no task or check id of a built-in assignment and no kind of picture one of them draws, and
every message key the views use is the kit's own (``grader/messages``), none an assignment's.

An assignment brings its pictures as the kit's generic heat-map figures (``docs/ASSIGNMENTS.md``, *Pictures*), with
its own sentences; a view that special-cases a task (``task.id == "overfit"``), a check (``overfit.ten_samples``) or
a picture (``figures["attention"]``, ``_attention``, ``report.attention_title``) works for one assignment only.

A grep over the source, not an import of it. A check id (``task.check``, distinctive) is caught anywhere, comments and
docstrings included. A task id is caught as a string literal equal to it (``"sdpa"``, ``id="fig-positional"``) or a
name in a template's expressions (``figures.attention``). A picture's kind (the figure ids and keys an assignment's
``figures`` function returns) is caught as a part of any literal, identifier or message key (``_attention``,
``report.attention_title``). Prose is left alone (docstrings, comments, the sentences themselves): "attention
weights" and "the model" are ordinary words.
"""

import ast
import re
from pathlib import Path

import pytest

from grader import engine
from grader.assignment import load
from tests.unit.test_message_keys import catalogues_on_disk

ROOT = Path(__file__).resolve().parents[2]
KIT = (ROOT / "grader" / "views", ROOT / "grader" / "messages")
"""The folders that must know no assignment."""
ASSIGNMENTS = ("transformer", "decoder_lm")
KIT_WORDS = {"loss"}
"""Task ids that are also the kit's own words: the loss curve any training check may leave (``loss_curve``), which
the views draw as ``figures.loss`` / ``#fig-loss``; the LM happens to have a task named ``loss``."""
KIT_NAMESPACES = ("report.", "ui.")
"""Message keys of the views: an assignment defines none of these (its keys are its own, ``lm.fig.*``)."""


class _Silent:
    """A runner that answers every probe by raising: ``collect`` records an error per figure and returns them all."""

    def run(self, probe, variant="integrated", **args):
        raise RuntimeError("no runner in this test")


def _assignment_names():
    """``(task ids, check ids, figure kinds)`` of the built-in assignments."""
    tasks, checks, kinds = set(), set(), set()
    for name in ASSIGNMENTS:
        a = load(name)
        tasks |= set(a.task_ids)
        checks |= {s.id for s in engine.checks_of(a)}
        if a.figures:
            data = a.function(a.figures)(sub=_Silent(), ref=_Silent())
            kinds |= {k for k in data if k != "heatmaps"}  # a picture of its own kind, drawn by name
            kinds |= {str(f.get("id")) for f in data.get("heatmaps") or () if f.get("id")}
    return tasks - KIT_WORDS, checks, kinds


TASKS, CHECKS, KINDS = _assignment_names()


def _kit_files():
    return sorted(p for folder in KIT for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _parts(word):
    """``_attention`` -> ``{"attention"}``; ``report.pe_title`` -> ``{"report", "pe", "title", "pe_title", ...}``:
    every run of lower-case segments joined by ``_``, so that a kind with an underscore (``rope_scores``) is one."""
    segments = [s for s in re.split(r"[^a-z0-9]+", word.lower()) if s]
    out = set()
    for token in re.findall(r"[a-z0-9]+(?:_[a-z0-9]+)*", word.lower()):
        pieces = token.split("_")
        out |= {"_".join(pieces[i:j]) for i in range(len(pieces)) for j in range(i + 1, len(pieces) + 1)}
    return out | set(segments)


def _python_names(source):
    """``(string literals, identifiers)`` of a Python file, docstrings and message sentences left out."""
    tree = ast.parse(source)
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings, bare strings
    sentences = set()
    for node in ast.walk(tree):  # MESSAGES = {key: sentence}: the keys count, the sentences are prose
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MESSAGES" for t in node.targets):
            if isinstance(node.value, ast.Dict):
                sentences |= {id(n) for v in node.value.values for n in ast.walk(v)}
    literals, names = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in prose and id(node) not in sentences:
                literals.append(node.value)
        elif isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.arg):
            names.append(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            names.append(node.arg)
    return literals, names


def _template_names(source):
    """``(string literals, identifiers)`` of a Jinja template's expressions and statements, and its HTML ids."""
    code = " ".join(a or b for a, b in re.findall(r"\{\{(.*?)\}\}|\{%(.*?)%\}", source, re.S))
    literals = re.findall(r"""'([^']*)'|"([^"]*)\"""", code)
    literals = [a or b for a, b in literals] + re.findall(r'\bid="([^"{]*)', source)
    names = re.findall(r"[A-Za-z_]\w*", re.sub(r"""'[^']*'|"[^"]*\"""", " ", code))
    return literals, names


def _named(path):
    """What ``path`` names: ``[(what, which, where)]``."""
    source = path.read_text(encoding="utf-8")
    found = []
    for check_id in CHECKS:  # distinctive (task.check): anywhere, prose included
        if re.search(rf"(?<![\w.]){re.escape(check_id)}(?![\w])", source):
            found.append(("check id", check_id, "text"))
    if path.suffix == ".py":
        literals, names = _python_names(source)
    elif path.suffix == ".j2":
        literals, names = _template_names(source)
    else:  # CSS, JS: class names and selectors
        literals, names = [], re.findall(r"[A-Za-z_][\w-]*", re.sub(r"/\*.*?\*/", " ", source, flags=re.S))
    for value in literals:
        stripped = value.strip().removeprefix("fig-")
        if stripped in TASKS:
            found.append(("task id", stripped, repr(value)))
        found += [("figure kind", k, repr(value)) for k in sorted(_parts(value) & KINDS)]
    for name in names:
        if name in TASKS and path.suffix == ".j2":
            found.append(("task id", name, name))
        found += [("figure kind", k, name) for k in sorted(_parts(name) & KINDS)]
    return sorted(set(found))


def test_the_assignments_have_the_names_this_test_looks_for():
    assert {"sdpa", "overfit", "rope", "gqa"} <= TASKS and "loss" not in TASKS
    assert {"overfit.ten_samples", "sdpa.equivalence", "overfit.ten_poems"} <= CHECKS
    assert {"attention", "positional", "rope_scores", "rope_angles"} <= KINDS
    read = {p.relative_to(ROOT).as_posix() for p in _kit_files()}
    assert {
        "grader/views/html.py",
        "grader/views/terminal.py",
        "grader/messages/report_en.py",
        "grader/messages/checks_zh.py",
    } <= read and len(read) > 20  # every view and message file is read


@pytest.mark.parametrize("path", _kit_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_kit_names_no_task_check_or_picture_of_an_assignment(path):
    found = _named(path)
    assert not found, f"{path.relative_to(ROOT)} names " + "; ".join(
        f"the {what} {which!r} ({where})" for what, which, where in found
    )


def test_the_views_use_only_the_kits_own_sentences():
    """Every ``report.*`` / ``ui.*`` key the views name is defined by ``grader/messages``, and no assignment defines
    a key in those namespaces: a picture's sentences are its assignment's own keys, passed as data."""
    kit = catalogues_on_disk(ROOT / "grader" / "messages")[0]
    views = ROOT / "grader" / "views"
    sources = [p.read_text(encoding="utf-8") for p in views.rglob("*") if p.is_file() and p.suffix in (".py", ".j2")]
    used = {k for s in sources for k in re.findall(r"""['"]((?:ui|report)\.[\w.]*\w)['"]""", s)}
    used -= {p.name for p in (views / "templates").glob("*")}  # "report.css", "report.html.j2"
    assert len(used) > 40
    for lang in ("en", "zh"):
        assert sorted(used - set(kit[lang])) == [], lang
    # A prefix the views complete at run time (f"report.attention_{role}") is a key family the kit must own too.
    prefixes = {p for s in sources for p in re.findall(r"""f['"]((?:ui|report)\.[\w.]*)\{""", s)}
    assert all(any(k.startswith(p) for k in kit["en"]) for p in prefixes), prefixes
    for folder in sorted((ROOT / "assignments").glob("*/messages")):
        catalogues, where = catalogues_on_disk(folder)
        theirs = sorted({k for lang in catalogues for k in catalogues[lang] if k.startswith(KIT_NAMESPACES)})
        assert theirs == [], f"{folder.relative_to(ROOT)} defines the kit's keys {theirs}: give them its own prefix"


def test_the_grep_finds_what_it_looks_for(tmp_path):
    """The search itself, on made-up kit files."""
    view = tmp_path / "view.py"
    view.write_text(
        '"""Draws the attention weights of the model."""\n'
        "def _attention(att):\n    return figs.get('positional'), task.id == 'sdpa'\n"
        "# overfit.ten_samples's curve\n"
        "MESSAGES = {'report.rope_scores_title': 'attention, model and sdpa in a sentence'}\n",
        encoding="utf-8",
    )
    found = {(what, which) for what, which, _ in _named(view)}
    assert found == {
        ("figure kind", "attention"),
        ("figure kind", "positional"),
        ("task id", "positional"),
        ("task id", "sdpa"),
        ("check id", "overfit.ten_samples"),
        ("figure kind", "rope_scores"),
    }
    template = tmp_path / "page.html.j2"
    template.write_text(
        '<p>attention weights</p>{% if figures.attention %}<figure id="fig-positional">'
        "{{ t('report.loss_title') }}{% if task.id == 'overfit' %}{% endif %}{% endif %}",
        encoding="utf-8",
    )
    found = {(what, which) for what, which, _ in _named(template)}
    assert found == {
        ("figure kind", "attention"),
        ("task id", "attention"),
        ("figure kind", "positional"),
        ("task id", "positional"),
        ("task id", "overfit"),
    }
