"""The starter notebook: ``skeleton/`` as a notebook, one cell per task, each followed by its check cell.

``build(skeleton, path)`` writes it from the skeleton's files, so that the two never drift (a test regenerates it
and compares bytes): for each task, a markdown cell with the task's text (its file's docstring, for the file's
first task, and each name's summary), a code cell with the stubs (the skeleton's definitions, docstrings and
``NotImplementedError`` bodies as they are), and a check cell ``gk.check("<task>")``. Two setup cells come
first: one installs gradekit where it is missing (Colab), one imports what the stubs use and the checks. The
output is deterministic: no timestamps, no outputs, cell ids made from the task ids.

It is written to ``notebooks/starter.ipynb``, beside ``skeleton/`` rather than inside it: ``skeleton/`` and the
reference hold the same files (the contract says so, and a test checks it), and a folder holding both the stubs
and a notebook would be two submissions in one. Regenerate it with ``python -m grader.notebook_starter``.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
from pathlib import Path

from grader.assignment import command_option, load
from grader.messages import text

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "notebooks" / "starter.ipynb"
INSTALL = '# %pip install --quiet "<the URL of the wheel your course gives>"'
"""The cell that installs gradekit in a notebook (the Colab line in docs/STUDENTS.md): commented out, to be given the
URL of the course's student kit (gradekit is on no package index, and a name looked up on one may be anyone's)."""


def _parts(path):
    """A skeleton file's docstring, its absolute imports and ``{name: (source, docstring)}`` of its definitions."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    imports = [
        ast.get_source_segment(source, n)
        for n in tree.body
        if isinstance(n, ast.Import) or (isinstance(n, ast.ImportFrom) and not n.level)
    ]
    defs = {
        n.name: (ast.get_source_segment(source, n), ast.get_docstring(n) or "")
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    return ast.get_docstring(tree) or "", imports, defs


def _summary(doc):
    """A docstring's first paragraph, on one line."""
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())


def _task_text(task, names, file_doc, defs, lang):
    lines = [text("notebook.starter.task", lang, task=task, names=", ".join(f"`{n}`" for n in names))]
    if file_doc:
        lines += ["", file_doc]
    lines += [""] + [f"- `{n}`: {_summary(defs[n][1])}" for n in names]
    return "\n".join(lines)


def cells(skeleton, assignment=None, *, lang="en"):
    """The starter notebook's cells, as ``(id, kind, source)`` with kind ``"markdown"`` or ``"code"``."""
    a = load(assignment)
    parts = {file: _parts(Path(skeleton) / file) for file in a.contract_files}
    imports = list(dict.fromkeys(i for file in a.contract_files for i in parts[file][1]))
    out = [
        ("title", "markdown", text("notebook.starter.title", lang, title=a.title.get(lang, a.name))),
        ("setup-text", "markdown", text("notebook.starter.setup", lang)),
        ("install", "code", INSTALL),
        ("imports", "code", "\n".join([*imports, "", "from grader import notebook as gk"])),
    ]
    introduced = set()
    # a check cell names the assignment where the kit grades another by default, as a printed command does
    option = command_option(a)
    named = f", assignment={json.dumps(option[1])}" if option else ""
    for task in a.tasks:
        if not task.file:
            out.append((f"{task.id}-text", "markdown", text("notebook.starter.whole", lang, task=task.id)))
        else:
            file_doc, _, defs = parts[task.file]
            shown_doc = "" if task.file in introduced else file_doc
            introduced.add(task.file)
            out.append((f"{task.id}-text", "markdown", _task_text(task.id, task.names, shown_doc, defs, lang)))
            out.append((f"{task.id}-code", "code", "\n\n\n".join(defs[n][0] for n in task.names)))
        out.append((f"{task.id}-check", "code", f'gk.check("{task.id}"{named})'))
    return out


def build(skeleton, path=DEFAULT_OUT, assignment=None, *, lang="en"):
    """Write the starter notebook made from folder ``skeleton`` to ``path`` (the same bytes for the same
    skeleton); returns ``path``."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    made = {"markdown": new_markdown_cell, "code": new_code_cell}
    nb = new_notebook(
        cells=[made[kind](source, id=cid) for cid, kind, source in cells(skeleton, assignment, lang=lang)]
    )
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(nb)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return path


def main(argv=None):
    """``python -m grader.notebook_starter [--out PATH] [--assignment A] [--lang en|zh]``: regenerate the starter
    notebook from the assignment's skeleton."""
    p = argparse.ArgumentParser(prog="python -m grader.notebook_starter", description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(DEFAULT_OUT), help="the notebook to write (default: notebooks/starter.ipynb)")
    p.add_argument("--assignment", default=None, help="the assignment whose skeleton to use (default: transformer)")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the notebook's own text")
    args = p.parse_args(argv)
    a = load(args.assignment)
    print(build(a.skeleton, args.out, a, lang=args.lang))


if __name__ == "__main__":
    main()
