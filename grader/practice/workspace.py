"""A drill's workspace: the assignment's reference with only the drilled names replaced by its skeleton's stubs.

Each contract file is the reference file with the top-level definitions of the drilled names swapped
for the skeleton's (found by AST line ranges, decorators included), so the stubs keep the skeleton's
docstrings (the task text) and everything else works: a drill stands alone. The state of the drill
(which assignment, what, since when, how long, which hints were shown) is a JSON file in the workspace.

Two things change the text a workspace is built with. The language: a drilled stub's docstring is the
assignment's translation when it has one (``TASK_TEXTS[lang][name]`` of its practice module), the
skeleton's TODO recipes, written in English, become a plain TODO in the drill's language, and so does the
stubs' error (``practice.stub.not_implemented``, the skeleton's wording in English). No-hints mode:
no docstring keeps its hints section (``practice.doc.hints`` in any language, "Hints:") and no stub its TODO
recipe, since both say how to do what the drill asks.
"""

import ast
import inspect
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.assignment import DEFAULT
from grader.messages import CATALOGUES, LANGS, text

STATE_FILE = ".gradekit-practice.json"
IGNORE_FILE = ".gitignore"
IGNORE_TEXT = "# A gradekit practice workspace: git ignores everything in it.\n*\n"
"""Written into every workspace, so that one made inside a clone (``--dir``) never shows up in ``git status``."""
_TODO = re.compile(r"^(?P<indent>[ \t]*)# TODO\((?P<task>[^)]*)\):.*$", re.MULTILINE)


@dataclass
class State:
    """What ``gradekit practice --check`` and ``--hint`` need to know about a drill in progress."""

    drill: str
    """The drill id."""
    tasks: list
    """The task ids drilled (graded, stubbed)."""
    started: float
    """Start time, seconds since the epoch."""
    minutes: float
    """The time limit in minutes."""
    assignment: str = DEFAULT
    """The assignment drilled (``Assignment.package``, what ``grader.assignment.load`` takes); later commands
    grade and hint against it."""
    no_hints: bool = False
    """Diagnoses and hints are withheld until the time is up."""
    lang: str = "en"
    """The language chosen at start; later commands use it unless given ``--lang``."""
    hints: dict = field(default_factory=dict)
    """Task id -> the last hint level shown (0 or absent: none)."""
    attempt_id: int = None
    """The row in the history database, once the first check has recorded it."""
    passed_at: float = None
    """When a check first passed (the attempt is then closed)."""
    last_failing: list = field(default_factory=list)
    """Task ids that failed at the last check, so that ``--hint`` goes to one of them first."""

    @property
    def limit_s(self):
        return self.minutes * 60.0

    @property
    def hints_used(self):
        """How many hint levels were shown, over all tasks."""
        return sum(self.hints.values())


def write_state(root, state):
    (Path(root) / STATE_FILE).write_text(
        json.dumps(asdict(state), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def read_state(root):
    """The ``State`` of the workspace at ``root``; ``FileNotFoundError`` when it is not one."""
    data = json.loads((Path(root) / STATE_FILE).read_text(encoding="utf-8"))
    known = {f for f in State.__dataclass_fields__}
    return State(**{k: v for k, v in data.items() if k in known})


def find_workspace(start):
    """The nearest folder at or above ``start`` holding a state file, or ``None``."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / STATE_FILE).is_file():
            return folder
    return None


def _top_level(source):
    """Name -> (first line, last line), 1-based and inclusive, of each top-level def/class, decorators included."""
    spans = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans[node.name] = (first, node.end_lineno)
    return spans


def splice(reference, stubs, names):
    """``reference`` source with the top-level definitions of ``names`` taken from ``stubs`` source."""
    ref_spans, stub_spans = _top_level(reference), _top_level(stubs)
    missing = [n for n in names if n not in ref_spans or n not in stub_spans]
    if missing:
        raise ValueError(f"names {missing} are not top-level definitions in both the reference and the skeleton")
    ref_lines, stub_lines = reference.splitlines(keepends=True), stubs.splitlines(keepends=True)
    # Replace from the bottom up so that earlier line numbers stay valid.
    for name in sorted(names, key=lambda n: ref_spans[n][0], reverse=True):
        (r0, r1), (s0, s1) = ref_spans[name], stub_spans[name]
        ref_lines[r0 - 1 : r1] = stub_lines[s0 - 1 : s1]
    return "".join(ref_lines)


def drill_names(tasks, assignment):
    """File -> the drilled names it holds, in contract order."""
    by_file = {}
    for task_id in tasks:
        task = assignment.task_by_id[task_id]
        by_file.setdefault(task.file, []).extend(task.names)
    return by_file


def build(dest, tasks, assignment, *, lang="en", hints=True):
    """Write ``assignment``'s contract files into ``dest`` (which must be empty or absent), the drilled stubs' task
    text in ``lang``, hints and TODO recipes left out unless ``hints``; returns the files with stubs."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    by_file = drill_names(tasks, assignment)
    for file in assignment.contract_files:
        source = (assignment.reference / file).read_text(encoding="utf-8")
        if file in by_file:
            source = splice(source, (assignment.skeleton / file).read_text(encoding="utf-8"), by_file[file])
            docs = {name: task_doc(name, assignment, lang=lang, hints=hints) for name in by_file[file]}
        else:
            docs = {}
        if docs or not hints:
            source = _retext(source, docs, hints=hints, file=file)
        if file in by_file and lang != "en":
            source = _stub_errors(source, by_file[file], lang)
        if file in by_file and (not hints or lang != "en"):
            source = _plain_todos(source, by_file[file], lang)
        (dest / file).write_text(source, encoding="utf-8")
    return sorted(by_file)


def without_hints(doc):
    """``doc`` (a cleaned docstring) without its hints section: from a line reading ``practice.doc.hints`` in any
    language to the next line indented no deeper (the next section), or to the end."""
    headers = {text("practice.doc.hints", lang) for lang in LANGS}
    lines, kept, skipping, depth = doc.splitlines(), [], False, 0
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if skipping and line.strip() and indent <= depth:
            skipping = False
        if not skipping and line.strip() in headers:
            skipping, depth = True, indent
            while kept and not kept[-1].strip():  # the blank line before the section goes with it...
                kept.pop()
            if kept:
                kept.append("")  # ...unless another section follows: put back when one does
            continue
        if not skipping:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def task_doc(name, assignment, *, lang="en", hints=True):
    """The task text of the drilled ``name``: the assignment's translation into ``lang`` when it has one, else the
    skeleton's docstring; without its hints section unless ``hints``."""
    translated = getattr(assignment.practice_module(), "TASK_TEXTS", {}).get(lang, {})
    if name in translated:
        doc = inspect.cleandoc(translated[name])
    else:
        tree = ast.parse(
            (assignment.skeleton / assignment.task_by_id[_task_of(name, assignment)].file).read_text(encoding="utf-8")
        )
        node = next(n for n in tree.body if getattr(n, "name", None) == name)
        doc = inspect.cleandoc(ast.get_docstring(node, clean=False) or "")
    return doc if hints else without_hints(doc)


def _task_of(name, assignment):
    return next(t.id for t in assignment.tasks if name in t.names)


def _docstrings(tree):
    """``(owner, node)`` of every docstring in ``tree``: the module's and every class's and function's, at any
    depth; ``owner`` is the name of a top-level definition, else ``None``."""
    top = {id(n): n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            found.append((top.get(id(node)), first))
    return found


def _quoted(doc, indent, raw):
    """The lines of a docstring statement holding ``doc`` at ``indent``: a raw string when the original was one and
    ``doc`` can be (no closing backslash, no triple quote), else with its backslashes and quotes escaped."""
    if raw and (doc.endswith("\\") or '"""' in doc):
        raw = False
    if not raw:
        doc = doc.replace("\\", "\\\\").replace('"""', '\\"""')
    opening = 'r"""' if raw else '"""'
    lines = doc.splitlines() or [""]
    if len(lines) == 1:
        return [f'{indent}{opening}{lines[0]}"""\n']
    return (
        [f"{indent}{opening}{lines[0]}\n"]
        + [f"{indent}{line}\n" if line else "\n" for line in lines[1:]]
        + [f'{indent}"""\n']
    )


def _retext(source, docs, *, hints, file):
    """``source`` with the docstrings of the top-level definitions named in ``docs`` replaced by its texts, and,
    unless ``hints``, every other docstring without its hints section."""
    lines = source.splitlines(keepends=True)
    for owner, node in sorted(_docstrings(ast.parse(source)), key=lambda d: d[1].lineno, reverse=True):
        old = inspect.cleandoc(node.value.value)
        new = docs[owner] if owner in docs else old if hints else without_hints(old)
        if new == old:
            continue
        # The AST's columns count UTF-8 bytes.
        before = lines[node.lineno - 1].encode()[: node.col_offset].decode()
        after = lines[node.end_lineno - 1].encode()[node.end_col_offset :].decode()
        if before.strip() or after.strip():
            raise ValueError(
                f"{file}:{node.lineno}: a docstring that shares its lines with code cannot be "
                f"rewritten; put it on lines of its own"
            )
        raw = lines[node.lineno - 1][len(before) : len(before) + 1] in "rR"
        lines[node.lineno - 1 : node.end_lineno] = _quoted(new, before, raw)
    return "".join(lines)


def _stub_errors(source, names, lang):
    """``source`` with the ``NotImplementedError`` messages inside the definitions of ``names`` that read as
    ``practice.stub.not_implemented`` in English put in ``lang``."""
    english = re.escape(CATALOGUES["en"]["practice.stub.not_implemented"])  # the template, not filled in
    pattern = re.compile(
        english.replace(re.escape("{task}"), r"(?P<task>[\w.]+)").replace(re.escape("{name}"), r"(?P<name>[\w.]+)")
    )
    spans = _top_level(source)
    lines = source.splitlines(keepends=True)
    for name in names:
        first, last = spans[name]
        for i in range(first - 1, last):
            if "NotImplementedError" in lines[i]:
                lines[i] = pattern.sub(
                    lambda m: _in_quotes(text("practice.stub.not_implemented", lang, task=m["task"], name=m["name"])),
                    lines[i],
                )
    return "".join(lines)


def _in_quotes(s):
    """``s`` escaped to stand inside a string literal, whichever its quotes."""
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'")


def _plain_todos(source, names, lang):
    """``source`` with the TODO comments inside the definitions of ``names`` reduced to their task id and
    ``practice.todo`` in ``lang``."""
    spans = _top_level(source)
    lines = source.splitlines(keepends=True)
    todo = text("practice.todo", lang)
    for name in names:
        first, last = spans[name]
        for i in range(first - 1, last):
            lines[i] = _TODO.sub(lambda m: f"{m['indent']}# TODO({m['task']}): {todo}", lines[i])
    return "".join(lines)


@dataclass
class TaskText:
    """One drilled name as the student sees it: its signature and its task text."""

    name: str
    """The contract name (``"MultiHeadAttention"``)."""
    file: str
    """Its file (``"attention.py"``)."""
    signature: str
    """``"def f(a, b=1)"`` or ``"class C(a, b=1)"`` (the constructor's arguments)."""
    doc: str
    """The task text (``task_doc``): the skeleton's docstring or its translation, dedented."""


def task_texts(tasks, assignment, *, lang="en", hints=True):
    """The ``TaskText`` of every drilled name: its signature from the skeleton's source, its text from
    ``task_doc``."""
    texts = []
    for file, names in drill_names(tasks, assignment).items():
        tree = ast.parse((assignment.skeleton / file).read_text(encoding="utf-8"))
        nodes = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        for name in names:
            node = nodes[name]
            if isinstance(node, ast.ClassDef):
                init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
                args = (
                    init.args
                    if init
                    else ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
                )
                if args.args and args.args[0].arg == "self":
                    args = ast.arguments(
                        posonlyargs=args.posonlyargs,
                        args=args.args[1:],
                        vararg=args.vararg,
                        kwonlyargs=args.kwonlyargs,
                        kw_defaults=args.kw_defaults,
                        kwarg=args.kwarg,
                        defaults=args.defaults,
                    )
                signature = f"class {name}({ast.unparse(args)})"
            else:
                signature = f"def {name}({ast.unparse(node.args)})"
            texts.append(TaskText(name, file, signature, task_doc(name, assignment, lang=lang, hints=hints)))
    return texts
