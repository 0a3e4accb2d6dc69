"""A Jupyter notebook as a submission: its code cells turned into the contract's modules, and back.

Learners often write the assignment in a notebook, one cell per piece. ``convert`` reads the notebook with
nbformat and keeps, from every code cell, what a module of the package would hold: the imports, the ``def`` and
``class`` statements, and the constants (simple assignments) they use. Shell and magic lines (``!pip``,
``%timeit``) are replaced by ``pass`` where Python cannot parse them, and a ``%%`` cell magic drops its whole
cell; every other top-level statement (a training loop, a plot, a call) is left out without running. A name
defined twice takes the last definition, as the kernel would after running the cells in order.

Each definition goes to the contract file of its name (``assignment.name_to_file``). A helper that is not a
contract name (a function, a class, a constant, an import) is copied into every file whose definitions use it,
directly or through another helper: a module of its own would have to import contract names back from the
files that import it (a cycle), and a copy keeps every generated module importable on its own. A contract name
of another file is imported from that file (``from .attention import MultiHeadAttention``), as ``skeleton/``'s
files import each other.

``convert`` returns a ``CellMap``: where each generated line came from. ``relocate`` rewrites a grading result's
locations (errors, load errors, banned-API findings, tracebacks) from generated lines to cells, and adds to each
check that did not pass a note naming the cells that hold the code it graded.
"""

from __future__ import annotations

import ast
import re
import symtable
from dataclasses import dataclass, field
from pathlib import Path

from grader.assignment import load
from grader.messages import text
from grader.results import Message

MAGIC = ("!", "%")
"""A line starting with one of these (after indentation) where a statement starts is a shell or magic line."""


class NotebookError(ValueError):
    """A notebook that cannot be read; ``key`` and ``params`` render the sentence in any language."""

    def __init__(self, key, **params):
        self.key, self.params = key, params
        super().__init__(text(key, "en", **params))


@dataclass(frozen=True)
class _Stmt:
    """One kept top-level statement of a cell."""

    source: str
    """Its text (one line for an import, rebuilt with a single name)."""
    binds: frozenset
    """The names it defines (empty for ``from x import *``)."""
    uses: frozenset
    """Every name it mentions (a superset of what it needs: a helper is copied once too often, never missed)."""
    cell: int
    """The cell's number as Jupyter shows it."""
    line: int
    """Its first line in the cell (1-based)."""
    order: tuple
    """(cell position, line): where it comes in the notebook."""
    kind: str
    """``"import"``, ``"def"`` or ``"const"``."""


@dataclass(frozen=True)
class _Span:
    file: str
    start: int
    length: int
    cell: int
    cell_line: int


@dataclass
class CellMap:
    """Where the generated modules' lines come from: the notebook's cells."""

    notebook: str
    """The notebook's name, as reports show it (``transformer.ipynb``)."""
    numbering: str
    """``"execution"``: cells are numbered by their execution count, as Jupyter shows them (``[5]``); every cell
    ran, each with its own count. ``"position"``: by their 1-based place among the code cells (some cell never
    ran, or two share a count, so counts would not tell the cells apart)."""
    spans: list = field(default_factory=list)
    defined: dict = field(default_factory=dict)
    """Contract and helper name -> the cell of its last definition (imports excepted)."""
    helpers: dict = field(default_factory=dict)
    """Contract name -> the helper names its definition uses, directly or not (imports excepted)."""
    task_names: dict = field(default_factory=dict)
    """Task id -> its contract names (from the assignment)."""
    skipped: list = field(default_factory=list)
    """Cells left out because they are not Python: ``{"cell", "line", "detail", "code"}`` each."""

    def locate(self, file, line):
        """``(cell_number, line_in_cell)`` of line ``line`` of generated file ``file``, or ``None`` (a line
        ``convert`` wrote itself, such as an import of another contract file)."""
        for s in self.spans:
            if s.file == file and s.start <= line < s.start + s.length:
                return s.cell, s.cell_line + line - s.start
        return None

    def label(self, cell):
        """The cell as a location, in the notation of a file name (``transformer.ipynb, cell [5]``; ``..., cell
        #3`` when numbered by position), for the ``file`` field of errors and tracebacks."""
        mark = f"[{cell}]" if self.numbering == "execution" else f"#{cell}"
        return f"{self.notebook}, cell {mark}"

    @property
    def files(self):
        return {s.file for s in self.spans}


# -- which submissions are notebooks ----------------------------------------------------------------------------
def notebook_in(path, assignment=None):
    """The notebook to grade at ``path``, or ``None`` for a submission of ``.py`` files: ``path`` itself when it is
    an ``.ipynb`` file; the one ``.ipynb`` of a folder (a snapshot, unwrapped) that holds exactly one and none of
    the contract's ``.py`` files (Jupyter's hidden ``.ipynb_checkpoints`` copies do not count). A folder with
    contract files is graded from them, whatever notebooks it also holds."""
    path = Path(path)
    if path.suffix.lower() == ".ipynb" and path.is_file():
        return path
    if not path.is_dir():
        return None
    a = load(assignment)
    if any((path / file).is_file() for file in a.contract_files):
        return None
    found = [p for p in path.iterdir() if p.suffix.lower() == ".ipynb" and p.is_file() and not p.name.startswith(".")]
    return found[0] if len(found) == 1 else None


# -- reading ---------------------------------------------------------------------------------------------------
def _read(ipynb):
    """The notebook (an ``nbformat`` node, or read from a path) and its name."""
    import nbformat

    if isinstance(ipynb, dict):
        return ipynb, "notebook.ipynb"
    path = Path(ipynb)
    try:
        return nbformat.read(str(path), as_version=4), path.name
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as exc:  # NotJSONError is a ValueError
        raise NotebookError("notebook.unreadable", notebook=path.name, detail=f"{type(exc).__name__}: {exc}") from None


def _code_cells(nb):
    """``(position, number, source)`` of each code cell, and the numbering used."""
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    sources = [c.get("source", "") for c in cells]
    sources = ["".join(s) if isinstance(s, list) else str(s) for s in sources]
    counts = [c.get("execution_count") for c in cells]
    ran = [n for n, s in zip(counts, sources) if s.strip()]
    by_count = bool(ran) and None not in ran and len(set(ran)) == len(ran)
    numbers = [n if by_count and n is not None else i for i, n in enumerate(counts, start=1)]
    return list(zip(range(len(cells)), numbers, sources)), ("execution" if by_count else "position")


def _parse(source):
    """A cell's syntax tree and lines (``None`` under a ``%%`` cell magic, which is not Python as a whole); a shell
    or magic line where a statement starts (``!pip``, ``%timeit``) is replaced by ``pass`` (so that lines keep
    their numbers and a block its body). Only lines Python cannot parse are replaced: a line that goes on an
    expression (``    != pad_idx)``) or sits in a string is Python's. Raises ``SyntaxError`` for anything else."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if next((line.strip() for line in lines if line.strip()), "").startswith("%%"):
        return None
    while True:
        try:
            return ast.parse("\n".join(lines)), lines
        except SyntaxError as exc:
            i = (exc.lineno or 0) - 1
            body = lines[i].lstrip() if 0 <= i < len(lines) else ""
            if not body.startswith(MAGIC):
                raise
            lines[i] = lines[i][: len(lines[i]) - len(body)] + "pass"


# -- what a cell defines ---------------------------------------------------------------------------------------
def _names_used(node):
    """The names a top-level statement reads from the notebook's globals: at its own level, and in every function,
    class and comprehension inside it the names not bound there. A method's local ``q`` is not the notebook's
    ``q``: a demo cell's ``q = torch.randn(...)`` must not be copied into a module (and run there) because a
    method happens to use the same name for a local (``symtable``, Python's own scope analysis)."""
    try:
        top = symtable.symtable(ast.unparse(node), "<cell>", "exec")
    except SyntaxError:  # not expected for a parsed statement; every name then, as before
        return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    used, todo = set(), [top]
    while todo:
        table = todo.pop()
        todo += table.get_children()
        for sym in table.get_symbols():
            if sym.is_referenced() and (table.get_type() == "module" or sym.is_global()):
                used.add(sym.get_name())
    return frozenset(used)


def _cut(line, start=0, end=None):
    """``line[start:end]`` in the UTF-8 byte offsets ``ast`` gives (a Chinese comment shifts characters)."""
    return line.encode("utf-8")[start:end].decode("utf-8", errors="replace")


def _segment(lines, node):
    """The exact text of a top-level statement (decorators included) and its first line."""
    first = node.decorator_list[0] if getattr(node, "decorator_list", None) else node
    start, end = first.lineno, node.end_lineno
    chunk = lines[start - 1 : end]
    chunk[-1] = _cut(chunk[-1], 0, node.end_col_offset)
    chunk[0] = _cut(chunk[0], first.col_offset)
    return "\n".join(chunk), start


def _targets(node):
    """The names a simple assignment binds, or ``None`` when it is not one (an attribute, a subscript...)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = []
    for t in targets:
        parts = t.elts if isinstance(t, ast.Tuple) else [t]
        if not all(isinstance(p, ast.Name) for p in parts):
            return None
        names += [p.id for p in parts]
    return names


def _imports(node, cell, position):
    """One statement per imported name (each file takes the names it uses)."""
    if isinstance(node, ast.ImportFrom) and node.level:
        return []  # a relative import: a notebook is no package (its names are all defined in its cells)
    out = []
    for alias in node.names:
        single = type(node)(**{**{f: getattr(node, f) for f in node._fields}, "names": [alias]})
        bound = alias.asname or alias.name.split(".")[0]
        binds = frozenset() if alias.name == "*" else frozenset({bound})
        out.append(_Stmt(ast.unparse(single), binds, frozenset(), cell, node.lineno, (position, node.lineno), "import"))
    return out


def _statements(tree, lines, cell, position):
    """The kept statements of one cell."""
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out += _imports(node, cell, position)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds, kind = [node.name], "def"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _targets(node):
            binds, kind = _targets(node), "const"
        else:
            continue  # demo code: loops, calls, prints, plots
        segment, start = _segment(lines, node)
        out.append(_Stmt(segment, frozenset(binds), _names_used(node), cell, start, (position, start), kind))
    return out


def _collect(nb):
    """Every kept statement in notebook order, the numbering, and the cells that could not be parsed."""
    cells, numbering = _code_cells(nb)
    stmts, skipped = [], []
    for position, number, source in cells:
        try:
            parsed = _parse(source)
        except SyntaxError as exc:
            skipped.append(
                {
                    "cell": number,
                    "line": exc.lineno or 0,
                    "detail": f"SyntaxError: {exc.msg}",
                    "code": (exc.text or "").strip(),
                }
            )
            continue
        if parsed is not None:
            stmts += _statements(*parsed, number, position)
    return stmts, numbering, skipped


# -- writing the modules ---------------------------------------------------------------------------------------
def _needed(roots, final, contract):
    """The helper names (non-contract, defined in the notebook) that ``roots`` use, transitively, and the
    contract names they use."""
    helpers, used, todo = set(), set(), list(roots)
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for u in final[name].uses if name in final else ():
            if u in contract:
                used.add(u)
            elif u in final and u not in helpers:
                helpers.add(u)
                todo.append(u)
    return helpers, used


def _module(file, final, stars, a):
    """The statements of contract file ``file`` (notebook order, imports first) and its imports of other files'
    contract names."""
    contract = a.name_to_file
    own = [n for n in final if contract.get(n) == file]
    helpers, used = _needed(own, final, contract)
    chosen = list({id(final[n]): final[n] for n in [*own, *helpers]}.values())
    if any(s.kind != "import" for s in chosen):
        chosen += stars  # what a star import binds is unknown: every module with code gets it
    chosen.sort(key=lambda s: (s.kind != "import", "__future__" not in s.source, s.order))
    cross = sorted((contract[n][:-3], n) for n in used if contract[n] != file and n in final)
    return chosen, [f"from .{stem} import {name}" for stem, name in cross]


def _write(path, file, stmts, cross, cellmap):
    """Write one module and record its spans."""
    lines = []
    imports = [s for s in stmts if s.kind == "import"]
    for s in imports:
        cellmap.spans.append(_Span(file, len(lines) + 1, 1, s.cell, s.line))
        lines.append(s.source)
    lines += cross
    for s in stmts[len(imports) :]:
        lines += ["", ""]
        body = s.source.split("\n")
        cellmap.spans.append(_Span(file, len(lines) + 1, len(body), s.cell, s.line))
        lines += body
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def convert(ipynb, dest, assignment=None, *, name=None) -> CellMap:
    """Write the contract's modules defined by notebook ``ipynb`` (a path or an ``nbformat`` node) into folder
    ``dest``; returns the ``CellMap`` of their lines. ``name`` is how reports call the notebook (default: its file
    name). Every contract file is written, empty where no cell defines its names (the report then says which
    names are missing). Raises ``NotebookError`` when the file is not a notebook."""
    a = load(assignment)
    nb, default_name = _read(ipynb)
    stmts, numbering, skipped = _collect(nb)
    final = {}
    for s in stmts:
        for n in s.binds:
            final[n] = s
    stars = [s for s in stmts if s.kind == "import" and not s.binds]
    cellmap = CellMap(
        notebook=name or default_name,
        numbering=numbering,
        skipped=skipped,
        task_names={t.id: t.names for t in a.tasks if t.names},
    )
    cellmap.defined = {n: s.cell for n, s in final.items() if s.kind != "import"}
    for n in final:
        if n in a.name_to_file:
            helpers, _ = _needed([n], final, a.name_to_file)
            cellmap.helpers[n] = tuple(sorted(h for h in helpers if final[h].kind != "import"))
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for file in a.contract_files:
        chosen, cross = _module(file, final, stars, a)
        _write(dest / file, file, chosen, cross, cellmap)
    return cellmap


# -- results back to cells -------------------------------------------------------------------------------------
_TRACE_FILE = re.compile(r'File "(?P<path>[^"\n]*)", line (?P<line>\d+)')


def _relocated(d, cellmap):
    """Point dict ``d`` (an error or a finding with ``file`` and ``line``) at its cell; the cell and line, or
    ``None`` when its line is not a cell's."""
    file = Path(str(d.get("file") or "")).name
    where = cellmap.locate(file, int(d.get("line") or 0)) if file in cellmap.files else None
    if where is None:
        return None
    d.setdefault("data", {})["generated"] = {"file": file, "line": d.get("line")}
    d["file"], d["line"] = cellmap.label(where[0]), where[1]
    return where


def _trace(trace, cellmap):
    def swap(m):
        where = cellmap.locate(Path(m["path"]).name, int(m["line"]))
        return m[0] if where is None else f'File "{cellmap.label(where[0])}", line {where[1]}'

    return _TRACE_FILE.sub(swap, trace)


def _add_note(check, message):
    notes = check.notes
    if all(Message.of(n) != message for n in notes):
        notes.append(message)


def _code_notes(task_id, cellmap):
    """Notes naming the cells that hold a task's code (its names and their helpers), and the names no cell
    defines."""
    names = cellmap.task_names.get(task_id, ())
    missing = [n for n in names if n not in cellmap.defined]
    by_cell = {}
    for n in names:
        for part in (n, *cellmap.helpers.get(n, ())) if n in cellmap.defined else ():
            by_cell.setdefault(cellmap.defined[part], []).append(part)
    notes = [
        Message(
            f"notebook.code_in.{cellmap.numbering}",
            {"notebook": cellmap.notebook, "cell": cell, "names": ", ".join(dict.fromkeys(parts))},
        )
        for cell, parts in sorted(by_cell.items())
    ]
    if missing:
        notes.append(Message("notebook.not_defined", {"notebook": cellmap.notebook, "names": ", ".join(missing)}))
    return notes


def _relocate_error(err, cellmap):
    """An error dict and its traceback pointed at cells; the cell and line, or ``None``."""
    where = _relocated(err, cellmap)
    if err.get("trace"):
        err["trace"] = _trace(err["trace"], cellmap)
    return where


def _relocate_message(message, cellmap):
    """A sentence's ``file`` and ``line`` (``error.exception``'s "(masks.py:6: ...)", ``fail.half_overflow``'s)
    pointed at the cell, as the error itself is: the student has no generated file."""
    if message is None:
        return
    params = message.get("params") if isinstance(message, dict) else message.params
    if isinstance(params, dict) and "file" in params and "line" in params:
        had_data = "data" in params
        _relocated(params, cellmap)
        if not had_data:
            params.pop("data", None)  # _relocated's record of the generated line: not a parameter of the sentence


def _relocate_check(check, cellmap):
    for message in (check.message, *check.notes):
        _relocate_message(message, cellmap)
    where = _relocate_error(check.error, cellmap) if check.error else None
    if check.status == "passed":
        return
    if where is not None:
        _add_note(
            check,
            Message(
                f"notebook.error_at.{cellmap.numbering}",
                {"notebook": cellmap.notebook, "cell": where[0], "line": where[1]},
            ),
        )
    notes = _code_notes(check.task, cellmap)
    missing = [n for n in notes if n.key == "notebook.not_defined"]
    if missing and check.status == "error" and (check.error or {}).get("kind") in ("missing_name", "missing_file"):
        # "attention.py defines no 'MultiHeadAttention'" names a file the student does not have: the notebook's
        # own sentence says it instead, once
        check.message = missing[0]
        notes = [n for n in notes if n is not missing[0]]
    for note in notes:
        _add_note(check, note)


def _dedupe(findings):
    """Findings made once per generated file for one helper's line, said once (they are one line of a cell)."""
    seen, out = set(), []
    for f in findings:
        key = (f.get("name"), f.get("file"), f.get("line"))
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def relocate(result, cellmap):
    """Rewrite ``result`` (a ``GradeResult`` of the folder ``convert`` wrote) in place to point at the notebook's
    cells instead of generated lines; returns it. Errors, load errors, banned-API findings and tracebacks get the
    cell (``file``: ``transformer.ipynb, cell [5]``; ``line``: the line in the cell; ``data.generated``: the
    generated file and line); each check that did not pass gets notes naming the cells of its task's code; a cell
    that is not Python is listed among the load errors. Safe to call twice."""
    for task in result.tasks:
        for check in task.checks:
            _relocate_check(check, cellmap)
    for err in result.load_errors.values():
        _relocate_error(err, cellmap)
    for finding in result.banned_api:
        _relocated(finding, cellmap)
    result.banned_api = _dedupe(result.banned_api)
    for task in result.tasks:
        for finding in task.banned:
            _relocated(finding, cellmap)
        task.banned = _dedupe(task.banned)
    for s in cellmap.skipped:
        label = cellmap.label(s["cell"])
        result.load_errors[label] = {
            "kind": "import_error",
            "detail": s["detail"],
            "file": label,
            "line": s["line"],
            "code": s["code"],
            "trace": "",
            "data": {},
        }
    return result
