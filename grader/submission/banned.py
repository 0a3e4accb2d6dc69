"""Banned APIs: a static scan of the submission's source and a runtime guard.

The contract forbids PyTorch's ready-made attention, Transformer and LayerNorm
building blocks, and importing the reference. The static scan resolves import
aliases (``import torch.nn.functional as F``) and flags every use of a banned
name, with file and line; the runtime guard catches what the scan cannot see
(``getattr(F, "scaled_" + "dot_product_attention")``) by wrapping the banned
callables while student code runs and noting calls whose nearest non-torch
caller is a submission file.
"""

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from grader.tasks import NAME_TO_TASK, TASKS

DEFAULT_BANNED = (
    "torch.nn.MultiheadAttention",
    "torch.nn.Transformer",
    "torch.nn.TransformerEncoder",
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerDecoder",
    "torch.nn.TransformerDecoderLayer",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.LayerNorm",
    "torch.nn.functional.layer_norm",
    "solution",
)


@dataclass(frozen=True)
class Finding:
    """One use of a banned API."""

    name: str
    """The banned API, fully qualified (``torch.nn.LayerNorm``)."""
    file: str
    """Submission file, relative to its folder."""
    line: int
    """Line number in ``file``."""
    code: str
    """The offending source line."""
    task: str
    """The task the line belongs to ('' when it is outside every task's code)."""

    def to_dict(self):
        return {"name": self.name, "file": self.file, "line": self.line, "code": self.code, "task": self.task}


def _banned_leaves(banned):
    return {b.rsplit(".", 1)[-1] for b in banned if b.startswith("torch.")}


def _matches(dotted, banned, leaves):
    if dotted in banned:
        return dotted
    head, _, leaf = dotted.rpartition(".")
    if dotted.startswith("torch.") and leaf in leaves:
        return next(b for b in banned if b.endswith("." + leaf))
    if dotted.split(".")[0] == "solution" and "solution" in banned:
        return "solution"
    return None


def scan_file(path, root, banned=DEFAULT_BANNED):
    """Findings in one file; a file that does not parse has none (the loader reports it)."""
    try:
        source = Path(path).read_text(encoding="utf-8", errors="replace")
        tree = ast.parse(source)
    except (SyntaxError, ValueError, OSError):
        return []
    lines = source.splitlines()
    rel = str(Path(path).resolve().relative_to(Path(root).resolve()))
    file_tasks = ",".join(t.id for t in TASKS if t.file == rel)
    banned, leaves = set(banned), _banned_leaves(banned)
    aliases = {}
    findings = []

    def owner_task(node):
        for top in tree.body:
            if top.lineno <= node.lineno <= (top.end_lineno or top.lineno) and isinstance(
                    top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return NAME_TO_TASK.get(top.name, "")
        return file_tasks

    def add(name, node):
        code = lines[node.lineno - 1].strip() if 0 < node.lineno <= len(lines) else ""
        findings.append(Finding(name, rel, node.lineno, code[:200], owner_task(node)))

    def dotted(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            base = aliases.get(node.id, node.id if node.id == "torch" else None)
            if base:
                return ".".join([base] + parts[::-1])
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                hit = _matches(a.name, banned, leaves)
                if hit:
                    add(hit, node)
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                hit = _matches(full, banned, leaves) or _matches(node.module, banned, leaves)
                if hit:
                    add(hit, node)
                aliases[a.asname or a.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            full = dotted(node)
            hit = full and _matches(full, banned, leaves)
            if hit and hit != "solution":
                add(hit, node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in aliases:
            hit = _matches(aliases[node.id], banned, leaves)
            if hit and hit != "solution" and "." in aliases[node.id] and aliases[node.id].startswith("torch."):
                add(hit, node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in leaves:
            add(next(b for b in banned if b.endswith("." + node.value)), node)
    unique = {(f.name, f.line): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.file, f.line, f.name))


def scan(root, banned=DEFAULT_BANNED):
    """Findings in every ``.py`` file under ``root`` (hidden folders and caches skipped)."""
    root = Path(root)
    out = []
    for path in sorted(root.rglob("*.py")):
        rel_parts = path.relative_to(root).parts
        if any(p.startswith(".") or p == "__pycache__" for p in rel_parts):
            continue
        out.extend(scan_file(path, root, banned))
    return out


def _resolve(dotted):
    obj = sys.modules.get(dotted.split(".")[0]) or (torch if dotted.startswith("torch") else None)
    if obj is None:
        return None, None, None
    parts = dotted.split(".")[1:]
    parent = obj
    for p in parts[:-1]:
        parent = getattr(parent, p, None)
        if parent is None:
            return None, None, None
    return parent, parts[-1], getattr(parent, parts[-1], None)


class RuntimeGuard:
    """Record calls of banned callables made from inside ``root`` while active.

    Installed once per process; ``active(root)`` switches recording on. Classes
    are guarded through ``__init__``, functions by replacing the module attribute.
    """

    _torch_dir = str(Path(torch.__file__).resolve().parent)

    def __init__(self, banned=DEFAULT_BANNED):
        self.banned = tuple(b for b in banned if b.startswith("torch."))
        self.root = None
        self.findings = []
        self._undo = []

    def install(self):
        for dotted in self.banned:
            parent, attr, target = _resolve(dotted)
            if target is None:
                continue
            if isinstance(target, type):
                original = target.__init__
                target.__init__ = self._wrap(original, dotted)
                self._undo.append((target, "__init__", original))
            else:
                parent_wrapped = self._wrap(target, dotted)
                setattr(parent, attr, parent_wrapped)
                self._undo.append((parent, attr, target))
        return self

    def uninstall(self):
        for obj, attr, original in reversed(self._undo):
            setattr(obj, attr, original)
        self._undo.clear()

    def _wrap(self, fn, dotted):
        guard = self

        def guarded(*args, **kwargs):
            if guard.root is not None:
                guard._note(dotted)
            return fn(*args, **kwargs)

        guarded.__wrapped__ = fn
        guarded.__name__ = getattr(fn, "__name__", dotted.rsplit(".", 1)[-1])
        return guarded

    def _note(self, dotted):
        frame = sys._getframe(2)
        while frame is not None and (frame.f_code.co_filename.startswith(self._torch_dir)
                                     or frame.f_code.co_filename == __file__):
            frame = frame.f_back
        if frame is None:
            return
        filename = str(Path(frame.f_code.co_filename).resolve()) if not frame.f_code.co_filename.startswith("<") \
            else frame.f_code.co_filename
        if filename.startswith(self.root + "/"):
            rel = filename[len(self.root) + 1:]
            task = NAME_TO_TASK.get(frame.f_code.co_qualname.split(".")[0], "")
            line = frame.f_lineno
            try:
                code = Path(filename).read_text(encoding="utf-8").splitlines()[line - 1].strip()
            except (OSError, IndexError):
                code = ""
            finding = Finding(dotted, rel, line, code[:200], task)
            if finding not in self.findings:
                self.findings.append(finding)
