"""Is a submission a copy of the reference? Compare normalised syntax trees per contract name.

Each contract function or class of the assignment (``MultiHeadAttention``, ``padding_mask``...) is parsed
from the submission and from the assignment's reference, then normalised: docstrings, comments, type annotations and
formatting are gone, and every local name (arguments, variables, helper functions) becomes a
placeholder numbered by first use. Attribute names stay: the contract fixes them. Two definitions
whose normalised trees are equal are the same code whatever the names and comments; a sequence
ratio over the dumps catches near copies (a reordered import, one added line).

A few contract names are so short that independent solutions coincide (``causal_mask`` is one
line); the verdict therefore needs most of the substantial definitions to match.
"""

import ast
import builtins
import difflib
from dataclasses import dataclass, field
from pathlib import Path

NEAR = 0.97
"""Sequence ratio of two normalised dumps from which a definition counts as a near copy."""
SHARE = 0.6
"""Fraction of the substantial definitions that must be copies to flag the submission."""
MIN_NODES = 40
"""Definitions with fewer syntax nodes than this are too short to tell a copy from a coincidence."""
_KEEP = frozenset(dir(builtins)) | {"self", "torch", "nn", "F", "math"}


@dataclass
class Verdict:
    """The comparison of one submission with the reference."""

    copy: bool
    """Whether the submission is flagged as a copy of the reference."""
    score: float
    """Fraction of the substantial contract definitions that are (near) copies."""
    matches: list = field(default_factory=list)
    """``[name, ratio]`` for each substantial definition, ratio 1.0 for identical trees."""

    def to_dict(self):
        return {"copy": self.copy, "score": round(self.score, 3), "matches": self.matches}


class _Normalise(ast.NodeTransformer):
    def __init__(self):
        self.names = {}

    def _name(self, name):
        if name in _KEEP:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def _strip_doc(self, node):
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_FunctionDef(self, node):
        node.name = self._name(node.name)
        node.returns = None
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self._strip_doc(node)
        node.args = self.visit(node.args)
        node.body = [self.visit(n) for n in node.body]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self._name(node.name)
        self._strip_doc(node)
        node.bases = [self.visit(b) for b in node.bases]
        node.body = [self.visit(n) for n in node.body]
        return node

    def visit_arg(self, node):
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node):
        node.id = self._name(node.id)
        return node

    def visit_AnnAssign(self, node):
        target = self.visit(node.target)
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign(targets=[target], value=self.visit(node.value)), node)

    def visit_Expr(self, node):  # a bare string (a comment-like docstring) in a body
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None
        return self.generic_visit(node)


def _definitions(folder, assignment):
    """Contract name -> its definition node, for every contract name of ``assignment`` the folder defines."""
    found = {}
    for file in assignment.contract_files:
        path = Path(folder) / file
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and assignment.name_to_file.get(node.name) == file
            ):
                found[node.name] = node
    return found


def normalised(node):
    """The definition's normalised dump (a string)."""
    import copy

    tree = _Normalise().visit(copy.deepcopy(node))
    ast.fix_missing_locations(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def _size(node):
    return sum(1 for _ in ast.walk(node))


def compare(folder, assignment):
    """A ``Verdict`` for the submission in ``folder`` against ``assignment``'s reference."""
    ref = _definitions(assignment.reference, assignment)
    sub = _definitions(folder, assignment)
    matches = []
    for name, ref_node in ref.items():
        if _size(ref_node) < MIN_NODES:
            continue
        node = sub.get(name)
        if node is None:
            matches.append([name, 0.0])
            continue
        a, b = normalised(node), normalised(ref_node)
        if a == b:
            ratio = 1.0
        else:
            matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
            ratio = matcher.quick_ratio()  # an upper bound, cheap; the exact ratio only when it may reach NEAR
            if ratio >= NEAR:
                ratio = matcher.ratio()
        matches.append([name, round(ratio, 3)])
    copies = sum(1 for _, r in matches if r >= NEAR)
    score = copies / len(matches) if matches else 0.0
    return Verdict(copy=bool(matches) and score >= SHARE, score=score, matches=matches)
