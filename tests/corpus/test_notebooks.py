"""Notebooks: an ``.ipynb`` graded as the contract's modules, checks from inside a running kernel, and
the starter notebook generated from ``skeleton/``.

The notebooks' code is the contract written by hand in ``tests/submissions/alt_functional`` (never the
reference), one cell per file, with what learners add around it: ``!pip`` lines, magics, a training loop.
"""

import ast
import html
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader import api
from grader.messages import text
from grader.notebook_starter import build
from grader.submission.ipynb import convert, relocate
from grader.views import terminal
from tests.conftest import ROOT, SUBMISSIONS, TRANSFORMER

ALT = SUBMISSIONS / "alt_functional"
ORDER = ("masks", "attention", "embedding", "norm", "feedforward", "layers", "model", "decoding", "training")
"""The contract files in the order a notebook defines them (what a file builds on comes first)."""
STARTER = ROOT / "notebooks" / "starter.ipynb"


def _cell_code(stem):
    """The file ``stem`` of the hand-written submission as a notebook cell holds it: no relative imports (the
    notebook's names are all in one namespace)."""
    lines = (ALT / f"{stem}.py").read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith("from ."))


def _notebook(path, cells, counts=None):
    """Write a notebook of code ``cells`` (markdown for a ``("md", text)`` entry) to ``path``; ``counts`` are the
    code cells' execution counts (``None``: never run)."""
    counts = list(counts) if counts is not None else None
    nb = new_notebook()
    for i, cell in enumerate(cells):
        if isinstance(cell, tuple):
            nb.cells.append(new_markdown_cell(cell[1], id=f"c{i}"))
        else:
            count = counts.pop(0) if counts else None
            nb.cells.append(new_code_cell(cell, execution_count=count, id=f"c{i}"))
    nbformat.write(nb, str(path))
    return path


def _solution_cells(edit=None):
    """The whole submission as notebook cells, with a ``!pip`` line, a training loop and a check cell around it;
    ``edit`` = (stem, find, replace) changes one cell's code."""
    cells = ["!pip install torch\nimport torch"]
    for stem in ORDER:
        code = _cell_code(stem)
        if edit and edit[0] == stem:
            assert edit[1] in code
            code = code.replace(edit[1], edit[2])
        cells.append(code)
    cells.append(
        "model = Transformer(11, 11, d_model=32, num_heads=4, d_ff=64, num_layers=2)\n"
        "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
        "raise RuntimeError('the demo cell ran')\n"
        "for step in range(100000):\n"
        "    loss = train_step(model, src, tgt, optimizer, pad_idx=0)\n"
        "%timeit causal_mask(8)\n"
    )
    cells.append("from grader import notebook as gk\ngk.check('mha')")
    return cells


def _module(dest, file):
    return (Path(dest) / file).read_text(encoding="utf-8")


def _top_names(source):
    return [getattr(s, "name", None) or ast.unparse(s) for s in ast.parse(source).body]


# -- conversion ------------------------------------------------------------------------------------------------
def test_magics_shell_lines_and_demo_code_are_left_out(tmp_path):
    nb = _notebook(
        tmp_path / "nb.ipynb",
        [
            "!pip install gradekit\n%load_ext autoreload\nimport torch\nimport os",
            "%%bash\ndef padding_mask(tokens, pad_idx):\n    return 'from a bash cell'",
            "PAD = 0\nUNUSED = 1\n\n"
            "def padding_mask(tokens, pad_idx=PAD):\n    return torch.ne(tokens, pad_idx)[:, None, None]",
            "print(padding_mask(torch.tensor([[1, 0]])))\nfor i in range(3):\n    os.remove('x')\nraise SystemExit(1)",
            # Lines starting with ! or % that are Python: an expression going on, a string.
            'def target_mask(tgt, pad_idx):\n    """Keep 100\n% of it\n!important"""\n    keep = (tgt\n'
            "            != pad_idx)\n    if keep.any():\n        %time keep.sum()\n    return keep\n%who",
        ],
    )
    cellmap = convert(nb, tmp_path / "out", TRANSFORMER)
    masks = _module(tmp_path / "out", "masks.py")
    assert _top_names(masks) == ["import torch", "PAD = 0", "padding_mask", "target_mask"]
    assert "\n% of it\n!important" in masks and "\n            != pad_idx)" in masks
    assert "%time" not in masks and "%who" not in masks and "        pass\n" in masks
    assert "from a bash cell" not in masks and "pip" not in masks and "os" not in masks.split()
    assert cellmap.defined["padding_mask"] == 3
    # Every contract file is written (an empty one says its names are missing, not that a file is).
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(TRANSFORMER.contract_files)
    assert _top_names(_module(tmp_path / "out", "norm.py")) == []


def test_a_demo_cell_whose_names_a_function_uses_as_locals_is_left_out(tmp_path):
    """A student tries attention at the top level with the very names its code uses inside (``q``, ``scores``):
    those are the function's locals, not the notebook's globals, so the demo is not copied into the module, where
    it would run on import (here it would raise)."""
    cells = _solution_cells()
    cells.insert(-1, "q = torch.randn(2, 3, 4)\nscores = 1 / 0\nout, weights = scaled_dot_product_attention(q, q, q)")
    nb = _notebook(tmp_path / "nb.ipynb", cells)
    cellmap = convert(nb, tmp_path / "out", TRANSFORMER)
    attention = _module(tmp_path / "out", "attention.py")
    assert "1 / 0" not in attention and "torch.randn(2, 3, 4)" not in attention
    assert not {"q", "scores", "out", "weights"} & set().union(*cellmap.helpers.values())
    result = api.check(path=nb, profile="quick", allow_banned=True, tasks=["sdpa", "mha"])
    assert result.score == result.max_score and not result.load_errors
    assert not any(c.notes for t in result.tasks for c in t.checks)


def test_a_name_defined_twice_takes_the_last_definition(tmp_path):
    first = "import torch\n\ndef causal_mask(size, device=None):\n    return 'first'"
    second = "def causal_mask(size, device=None):\n    return 'second'"
    nb = _notebook(tmp_path / "nb.ipynb", [first, "causal_mask(3)", second], counts=[4, 5, 7])
    cellmap = convert(nb, tmp_path / "out", TRANSFORMER)
    masks = _module(tmp_path / "out", "masks.py")
    assert "'second'" in masks and "'first'" not in masks
    assert cellmap.defined["causal_mask"] == 7
    line = masks.splitlines().index("    return 'second'") + 1
    assert cellmap.locate("masks.py", line) == (7, 2)
    # Run in another order, the other definition is the kernel's: the notebook's order decides.
    nb2 = _notebook(tmp_path / "nb2.ipynb", [second, first], counts=[1, 2])
    convert(nb2, tmp_path / "out2", TRANSFORMER)
    assert "'first'" in _module(tmp_path / "out2", "masks.py")


def test_helpers_constants_and_imports_go_to_the_files_that_use_them(tmp_path):
    nb = _notebook(
        tmp_path / "nb.ipynb",
        [
            "import math\nimport torch\nfrom torch import nn",
            "SCALE_EPS = 1e-9\n\ndef _scale(x):\n    return x / math.sqrt(x.size(-1) + SCALE_EPS)\n\n"
            "def _scores(q, k):\n    return _scale(q @ k.transpose(-2, -1))",
            "def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):\n"
            "    w = _scores(query, key).softmax(-1)\n    return w @ value, w",
            "class EncoderLayer(nn.Module):\n    def forward(self, x, mask=None):\n"
            "        return _scores(x, x) @ x + MultiHeadAttention(4, 2)(x, x, x) + FeedForward(4, 8)(x)",
            "class LayerNorm(nn.Module):\n    pass\n\nclass MultiHeadAttention(nn.Module):\n    pass",
        ],
    )
    convert(nb, tmp_path / "out", TRANSFORMER)
    attention = _module(tmp_path / "out", "attention.py")
    layers = _module(tmp_path / "out", "layers.py")
    norm = _module(tmp_path / "out", "norm.py")
    # A helper (and what it uses, transitively) is written into every file that uses it.
    for source in (attention, layers):
        assert {"import math", "SCALE_EPS = 1e-09", "_scale", "_scores"} <= set(_top_names(source))
    assert "_scores" not in norm and "import math" not in norm and "SCALE_EPS" not in norm
    assert _top_names(norm) == ["from torch import nn", "LayerNorm"]
    # Another contract file's name is imported from that file, as skeleton/ does.
    assert "from .attention import MultiHeadAttention" in layers
    assert "FeedForward" not in layers.split("class EncoderLayer")[0]  # no cell defines it: nothing to import
    assert "EncoderLayer" not in attention


def test_cell_numbers_are_execution_counts_when_every_cell_ran_else_positions(tmp_path):
    cells = ["import torch", "x = 1", "def padding_mask(tokens, pad_idx):\n    return tokens != pad_idx"]
    ran = convert(_notebook(tmp_path / "a.ipynb", cells, counts=[3, 8, 12]), tmp_path / "a", TRANSFORMER)
    masks = _module(tmp_path / "a", "masks.py").splitlines()
    line = masks.index("    return tokens != pad_idx") + 1
    assert ran.locate("masks.py", line) == (12, 2)
    assert ran.numbering == "execution"
    partly = convert(_notebook(tmp_path / "b.ipynb", cells, counts=[3, None]), tmp_path / "b", TRANSFORMER)
    assert partly.numbering == "position"
    assert partly.locate("masks.py", line) == (3, 2)
    assert partly.locate("masks.py", 0) is None and partly.locate("norm.py", line) is None


def test_a_cell_that_does_not_parse_is_left_out_and_said(tmp_path):
    nb = _notebook(
        tmp_path / "nb.ipynb",
        [
            "import torch\ndef padding_mask(tokens, pad_idx):\n    return tokens != pad_idx",
            "def causal_mask(size, device=None)\n    return None",
        ],
    )
    cellmap = convert(nb, tmp_path / "out", TRANSFORMER)
    assert "padding_mask" in _module(tmp_path / "out", "masks.py")
    assert [(s["cell"], s["line"]) for s in cellmap.skipped] == [(2, 1)]
    assert "causal_mask" not in cellmap.defined


def test_a_file_that_is_not_a_notebook_is_refused_with_a_sentence(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    from grader.submission.ipynb import NotebookError

    with pytest.raises(NotebookError) as info:
        convert(bad, tmp_path / "out", TRANSFORMER)
    assert "bad.ipynb" in str(info.value)


def test_which_submissions_are_notebooks(tmp_path):
    from grader.submission.ipynb import notebook_in

    (tmp_path / "only" / ".ipynb_checkpoints").mkdir(parents=True)
    nb = _notebook(tmp_path / "only" / "hw.ipynb", ["import torch"])
    _notebook(tmp_path / "only" / ".ipynb_checkpoints" / "hw-checkpoint.ipynb", ["import torch"])
    assert notebook_in(tmp_path / "only", TRANSFORMER) == nb
    assert notebook_in(nb, TRANSFORMER) == nb  # a notebook named by its path
    (tmp_path / "only" / "attention.py").write_text("import torch\n")
    assert notebook_in(tmp_path / "only", TRANSFORMER) is None  # contract files: graded from them
    (tmp_path / "two").mkdir()
    for name in ("a.ipynb", "b.ipynb"):
        _notebook(tmp_path / "two" / name, ["import torch"])
    assert notebook_in(tmp_path / "two", TRANSFORMER) is None  # which one? neither is guessed
    assert notebook_in(tmp_path / "two" / "missing.ipynb", TRANSFORMER) is None
    assert notebook_in(SUBMISSIONS / "alt_loops", TRANSFORMER) is None


# -- grading a notebook ----------------------------------------------------------------------------------------
def test_a_correct_notebook_gets_full_marks(tmp_path):
    nb = _notebook(tmp_path / "transformer.ipynb", _solution_cells())
    result = api.check(path=nb, profile="quick", allow_banned=True)  # the notebook itself, as a student gives it
    assert result.max_score == 140 and result.score == result.max_score and result.passed
    assert not result.load_errors
    assert not any(c.notes for t in result.tasks for c in t.checks)  # nothing to point at when all pass


def test_a_bug_in_a_cell_is_pointed_at_that_cell(tmp_path):
    cells = _solution_cells(edit=("attention", "return scores.softmax(-1)", "return scores.softmax(-2)"))
    (tmp_path / "hw").mkdir()
    nb = _notebook(tmp_path / "hw" / "transformer.ipynb", cells, counts=range(1, len(cells) + 1))
    result = api.check(
        path=tmp_path / "hw", profile="quick", allow_banned=True, tasks=["sdpa", "masks"], sealed=True
    )  # a folder holding the notebook, graded in a worker
    assert nb.is_file()
    attention_cell = 1 + ORDER.index("attention") + 1
    sdpa = next(t for t in result.tasks if t.id == "sdpa")
    failing = [c for c in sdpa.checks if c.status != "passed"]
    assert failing
    where = [n for c in failing for n in c.notes if n.key == "notebook.code_in.execution"]
    assert where and {n.params["cell"] for n in where} == {attention_cell}
    assert "scaled_dot_product_attention, _weights" in where[0].params["names"]
    shown = terminal.summary(result)
    assert f"cell [{attention_cell}]" in shown
    assert text("notebook.code_in.execution", "zh", **where[0].params) in terminal.summary(result, lang="zh")
    masks = next(t for t in result.tasks if t.id == "masks")
    assert all(c.status == "passed" and not c.notes for c in masks.checks)


def test_an_error_raised_in_a_cell_is_located_in_that_cell(tmp_path):
    cells = _solution_cells(
        edit=(
            "masks",
            "return tokens.ne(pad_idx)[:, None, None]",
            "width = tokens.size(1)\n    return tokens.ne(pad_idx)[:, None, None, width]",
        )
    )
    nb = _notebook(tmp_path / "transformer.ipynb", cells)  # never run: cells numbered by position
    cellmap = convert(nb, tmp_path / "sub", TRANSFORMER)
    result = relocate(api.check(path=tmp_path / "sub", profile="quick", tasks=["masks"], diagnose=False), cellmap)
    errors = [c.error for t in result.tasks for c in t.checks if c.error and c.error.get("kind") == "exception"]
    assert errors
    masks_cell = 1 + ORDER.index("masks") + 1
    err = errors[0]
    assert (err["file"], err["line"]) == (f"transformer.ipynb, cell #{masks_cell}", 6)
    assert "masks.py" not in err["trace"] and f'"transformer.ipynb, cell #{masks_cell}", line 6' in err["trace"]
    assert err["data"]["generated"]["file"] == "masks.py"
    notes = [n for t in result.tasks for c in t.checks for n in c.notes if n.key == "notebook.error_at.position"]
    assert notes and notes[0].params == {"notebook": "transformer.ipynb", "cell": masks_cell, "line": 6}


def test_the_sentences_a_student_reads_name_the_cell_not_a_generated_file(tmp_path):
    """The error's own sentence ("your code raised ... (file:line: code)", "... raised in float16 ... (file:line)")
    names the cell and its line, as the notes and the traceback do: the student has no ``masks.py``. Found trying
    the starter notebook as a new user: every other location said the cell, that sentence said ``masks.py:6``."""
    cells = _solution_cells(
        edit=(
            "masks",
            "return tokens.ne(pad_idx)[:, None, None]",
            "width = tokens.size(1)\n    return tokens.ne(pad_idx)[:, None, None, width]",
        )
    )
    nb = _notebook(tmp_path / "transformer.ipynb", cells)
    result = api.check(path=nb, profile="quick", tasks=["masks"], diagnose=False)
    masks_cell = 1 + ORDER.index("masks") + 1
    errors = [c for t in result.tasks for c in t.checks if c.error and c.error.get("kind") == "exception"]
    assert len(errors) >= 2
    for check in errors:
        sentence = text(check.message.key, "en", **check.message.params)
        assert f"(transformer.ipynb, cell #{masks_cell}:6: " in sentence and "masks.py" not in sentence, sentence
    shown = terminal.summary(result) + terminal.summary(result, lang="zh")
    assert "masks.py" not in shown and f"cell #{masks_cell}" in shown
    from grader.views import html as html_view

    assert "masks.py" not in html_view.render(result)


def test_names_no_cell_defines_are_said(tmp_path):
    nb = _notebook(tmp_path / "nb.ipynb", ["import torch\ndef padding_mask(tokens, pad_idx):\n    return 1"])
    cellmap = convert(nb, tmp_path / "sub", TRANSFORMER)
    result = relocate(api.check(path=tmp_path / "sub", profile="quick", tasks=["masks"], diagnose=False), cellmap)
    notes = [n for c in result.tasks[0].checks for n in c.notes if n.key == "notebook.not_defined"]
    assert notes and notes[0].params["names"] == "causal_mask, target_mask"
    # a check that could not run says so in the notebook's words, once, not "masks.py defines no 'causal_mask'"
    errored = [c for c in result.tasks[0].checks if c.status == "error"]
    assert errored and all(c.message.key == "notebook.not_defined" for c in errored), [c.message for c in errored]
    assert all(n.key != "notebook.not_defined" for c in errored for n in c.notes)


# -- in the kernel ---------------------------------------------------------------------------------------------
def test_check_in_a_running_kernel_shows_the_html_report(tmp_path):
    nbclient = pytest.importorskip(
        "nbclient", reason="running a notebook needs nbclient and ipykernel (the 'test' extra); not tested without"
    )
    pytest.importorskip("ipykernel", reason="running a notebook needs ipykernel (the 'test' extra)")
    NotebookClient = nbclient.NotebookClient

    good = _cell_code("masks")
    bad = good.replace(".tril_()", ".triu_()")
    nb = new_notebook(
        cells=[
            new_code_cell(src, id=f"k{i}")
            for i, src in enumerate(
                [
                    f"import sys\nsys.path.insert(0, {str(ROOT)!r})",
                    "%pip --version\n" + good,
                    "from grader import notebook as gk\ngk.check('masks')",
                    bad,
                    "gk.check('masks', lang='zh')",
                ]
            )
        ]
    )
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    passed, failed = nb.cells[2].outputs[0]["data"], nb.cells[4].outputs[0]["data"]
    assert "<iframe" in passed["text/html"] and text("ui.all_passed") in _page(passed["text/html"])
    assert text("ui.all_passed") in passed["text/plain"]
    page = _page(failed["text/html"])
    assert text("ui.all_passed", "zh") not in page and "masks.causal" in page
    assert "causal_mask" in page and "单元格 [4]" in page  # the redefinition, run as cell [4]
    assert "单元格 [4]" in failed["text/plain"]


def _page(frame):
    """The report page inside a cell's frame."""
    found = re.search(r'srcdoc="([^"]*)"', frame)
    assert found, frame[:200]
    return html.unescape(found.group(1))


# -- the starter notebook --------------------------------------------------------------------------------------
def test_the_starter_notebook_is_generated_from_the_skeleton(tmp_path):
    build(TRANSFORMER.skeleton, tmp_path / "starter.ipynb")
    assert (tmp_path / "starter.ipynb").read_bytes() == STARTER.read_bytes(), (
        "notebooks/starter.ipynb drifted from skeleton/: run python -m grader.notebook_starter"
    )


def test_the_starter_notebook_follows_a_skeleton_change(tmp_path):
    skeleton = tmp_path / "skeleton"
    shutil.copytree(TRANSFORMER.skeleton, skeleton)
    path = skeleton / "masks.py"
    path.write_text(path.read_text(encoding="utf-8").replace("Mask out padded", "Hide padded"), encoding="utf-8")
    build(skeleton, tmp_path / "starter.ipynb")
    assert (tmp_path / "starter.ipynb").read_bytes() != STARTER.read_bytes()
    assert "Hide padded" in (tmp_path / "starter.ipynb").read_text(encoding="utf-8")


def test_the_starter_notebook_has_a_stub_and_a_check_per_task_and_grades_as_todo(tmp_path):
    nb = nbformat.read(str(STARTER), as_version=4)
    nbformat.validate(nb)
    checks = [c.source for c in nb.cells if c.cell_type == "code" and "gk.check(" in c.source]
    assert checks == [f'gk.check("{t}")' for t in TRANSFORMER.task_ids]
    cellmap = convert(STARTER, tmp_path / "sub", TRANSFORMER)
    assert set(cellmap.defined) >= set(TRANSFORMER.name_to_file)
    for file in TRANSFORMER.contract_files:
        names = {n for n, f in TRANSFORMER.name_to_file.items() if f == file}
        assert names <= set(_top_names(_module(tmp_path / "sub", file)))
    result = api.check(path=tmp_path / "sub", profile="quick", tasks=["masks", "mha"], diagnose=False)
    assert all(t.not_implemented for t in result.tasks)


def test_the_starter_command_regenerates_the_file(tmp_path):
    import subprocess

    out = tmp_path / "starter.ipynb"
    subprocess.run([sys.executable, "-m", "grader.notebook_starter", "--out", str(out)], cwd=ROOT, check=True)
    assert out.read_bytes() == STARTER.read_bytes()
    assert re.search(r'"id": "[a-z_]+-check"', out.read_text(encoding="utf-8"))


def test_a_class_of_notebooks_is_graded_like_folders(tmp_path):
    """A bare ``.ipynb`` in the class folder is a student named after it; a zip holding one is too."""
    import zipfile

    from grader.batch import runner

    cls = tmp_path / "class"
    cls.mkdir()
    _notebook(cls / "李雷.ipynb", _solution_cells())
    with zipfile.ZipFile(cls / "wang.zip", "w") as zf:
        zf.write(
            _notebook(
                tmp_path / "hw.ipynb",
                _solution_cells(
                    edit=(
                        "masks",
                        "dtype=torch.bool, device=device).tril_()",
                        "dtype=torch.bool, device=device).triu_()",
                    )
                ),
            ),
            "hw1/hw.ipynb",
        )
    result = runner.batch(
        submissions=cls,
        out=tmp_path / "out",
        jobs=1,
        tasks=["masks"],
        profile="quick",
        call_timeout=10,
        total_timeout=30,
    )
    rows = {r["student"]: r for r in result.records}
    assert set(rows) == {"李雷", "wang"}
    assert rows["李雷"]["score"] == rows["李雷"]["max_score"] > 0 and rows["李雷"]["status"] == "ok"
    assert rows["wang"]["score"] < rows["wang"]["max_score"]


def test_the_report_in_a_cell_is_drawn_by_a_real_browser(tmp_path, browser):
    """The cell's HTML (the report in a frame) shows the report in Chromium, not an empty frame."""
    from grader.notebook import Report

    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "masks.py").write_text((ALT / "masks.py").read_text(encoding="utf-8"), encoding="utf-8")
    page_file = tmp_path / "cell.html"
    page_file.write_text(
        Report(api.check(path=folder, tasks=["masks"], profile="quick"))._repr_html_(), encoding="utf-8"
    )
    page = browser.open(page_file.as_uri(), width=900, height=900)
    shown = page.evaluate("document.querySelector('iframe').contentDocument?.body?.innerText || ''")
    assert "gradekit report" in shown and "masks" in shown
