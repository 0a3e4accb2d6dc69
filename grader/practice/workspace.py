"""A drill's workspace: the assignment's reference with only the drilled names replaced by its skeleton's stubs.

Each contract file is the reference file with the top-level definitions of the drilled names swapped
for the skeleton's (found by AST line ranges, decorators included), so the stubs keep the skeleton's
docstrings (the task text) and everything else works: a drill stands alone. The state of the drill
(which assignment, what, since when, how long, which hints were shown) is a JSON file in the workspace.
"""

import ast
import inspect
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.assignment import DEFAULT

STATE_FILE = ".gradekit-practice.json"


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
    (Path(root) / STATE_FILE).write_text(json.dumps(asdict(state), indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")


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
        ref_lines[r0 - 1:r1] = stub_lines[s0 - 1:s1]
    return "".join(ref_lines)


def drill_names(tasks, assignment):
    """File -> the drilled names it holds, in contract order."""
    by_file = {}
    for task_id in tasks:
        task = assignment.task_by_id[task_id]
        by_file.setdefault(task.file, []).extend(task.names)
    return by_file


def build(dest, tasks, assignment):
    """Write ``assignment``'s contract files into ``dest`` (which must be empty or absent); returns the files with
    stubs."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    by_file = drill_names(tasks, assignment)
    for file in assignment.contract_files:
        source = (assignment.reference / file).read_text(encoding="utf-8")
        if file in by_file:
            source = splice(source, (assignment.skeleton / file).read_text(encoding="utf-8"), by_file[file])
        (dest / file).write_text(source, encoding="utf-8")
    return sorted(by_file)


@dataclass
class TaskText:
    """One drilled name as the student sees it: its signature and the skeleton's docstring."""

    name: str
    """The contract name (``"MultiHeadAttention"``)."""
    file: str
    """Its file (``"attention.py"``)."""
    signature: str
    """``"def f(a, b=1)"`` or ``"class C(a, b=1)"`` (the constructor's arguments)."""
    doc: str
    """The docstring, dedented."""


def task_texts(tasks, assignment):
    """The ``TaskText`` of every drilled name, from the skeleton's source."""
    texts = []
    for file, names in drill_names(tasks, assignment).items():
        tree = ast.parse((assignment.skeleton / file).read_text(encoding="utf-8"))
        nodes = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        for name in names:
            node = nodes[name]
            if isinstance(node, ast.ClassDef):
                init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
                args = init.args if init else ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                            defaults=[])
                if args.args and args.args[0].arg == "self":
                    args = ast.arguments(posonlyargs=args.posonlyargs, args=args.args[1:], vararg=args.vararg,
                                         kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults,
                                         kwarg=args.kwarg, defaults=args.defaults)
                signature = f"class {name}({ast.unparse(args)})"
            else:
                signature = f"def {name}({ast.unparse(node.args)})"
            doc = inspect.cleandoc(ast.get_docstring(node, clean=False) or "")
            texts.append(TaskText(name, file, signature, doc))
    return texts
