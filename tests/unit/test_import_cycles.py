"""No import cycles inside the kit (``grader/``) or the assignments (``assignments/``, when it exists).

The graph is built statically with ``ast`` from every import statement in a module: at module level and
inside functions alike. A lazy import (inside a function) that closes a cycle still ties the two modules
together in the design; it only hides the cycle from the interpreter. Only imports under
``if TYPE_CHECKING:`` are left out: they never run.

Two graphs are checked:

* modules: ``a.py`` imports ``b.py``, which imports ``a.py`` (at commit 7f7e198: ``submission/worker.py``
  imported ``submission/forkserver.py`` at module level, which imported ``worker`` inside two functions).
  Importing ``p.q.m`` runs the ``__init__.py`` of ``p.q`` as well, so such an import is an edge to that
  package too (unless the importer lies inside it: its package is already running).
* units: every module belongs to the top-level unit it lives in (``grader.submission`` for
  ``grader/submission/inprocess.py``, ``grader.probes`` for ``grader/probes.py``,
  ``assignments.transformer.checks`` for ``assignments/transformer/checks/mha.py``). A module of one unit that
  imports a second unit, some module of which imports the first unit back, is a cycle between the two,
  although no module imports itself back (at commit 7f7e198: ``submission/runner.py`` -> ``probes.py`` ->
  ``submission/errors.py``; ``compare.py`` -> ``checks/base.py``, ``checks/common.py`` -> ``compare.py``).

Each cycle is reported as a chain ``a -> b -> a`` with the file and line of each import.
"""

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Top-level package -> how many dotted parts name one unit (grader.<unit>, assignments.<name>.<unit>).
PACKAGES = {"grader": 2, "assignments": 3}


def _modules():
    """{dotted module name: path} for every ``.py`` file of the packages that exist."""
    found = {}
    for package in PACKAGES:
        base = ROOT / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            if any(not p.isidentifier() for p in parts):
                continue  # data or template folders that merely hold .py files
            found[".".join(parts)] = path
    return found


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree):
    """Every import statement that can run, with ``if TYPE_CHECKING:`` blocks skipped."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            stack.append(child)


def _targets(node, module, is_package, modules):
    """The in-scope modules that ``node`` (an import statement in ``module``) makes Python run."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module
        # ``from p import name``: name is a submodule of p or a name p's __init__ defines.
        names = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in modules else prefix for alias in node.names]
    own = module.split(".") if is_package else module.split(".")[:-1]
    targets = set()
    for name in names:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            target = ".".join(parts[:i])
            if target not in modules:
                continue
            # The importer's own packages are already being imported when it runs: an edge only when the
            # statement names that package itself (it reads names from the package's __init__).
            if parts[:i] == own[:i] and i < len(parts):
                continue
            if target != module:
                targets.add(target)
    return targets


def import_graph():
    """{module: {imported module: [(file, line), ...]}} over the in-scope modules."""
    modules = _modules()
    graph = defaultdict(lambda: defaultdict(list))
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree):
            for target in _targets(node, module, is_package, modules):
                graph[module][target].append((path.relative_to(ROOT).as_posix(), node.lineno))
        graph[module]  # every module is a node, importing something or not
    return graph


def unit(module):
    parts = module.split(".")
    return ".".join(parts[: PACKAGES[parts[0]]])


def unit_graph(graph):
    """The module graph collapsed onto units; each edge keeps the module-level imports that make it."""
    units = defaultdict(lambda: defaultdict(list))
    for source, edges in graph.items():
        units[unit(source)]
        for target, sites in edges.items():
            if unit(source) != unit(target):
                units[unit(source)][unit(target)].extend((source, target, file, line) for file, line in sites)
    return units


def _components(graph):
    """Strongly connected components with more than one node (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))
    return result


def _shortest_path(graph, start, goal, allowed):
    """A shortest path start -> ... -> goal inside ``allowed`` (breadth first, sorted for stable output)."""
    previous = {start: None}
    queue = [start]
    for node in queue:
        for child in sorted(graph[node]):
            if child in allowed and child not in previous:
                previous[child] = node
                if child == goal:
                    path = [goal]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return path[::-1]
                queue.append(child)
    return None


def cycles(graph):
    """Cycles covering every edge inside each strongly connected component, each a list of nodes whose last
    element is its first: for each such edge a -> b, a shortest way back b -> ... -> a; duplicates dropped."""
    found = []
    for component in _components(graph):
        members = set(component)
        seen = set()
        for source in component:
            for target in sorted(graph[source]):
                if target not in members:
                    continue
                back = _shortest_path(graph, target, source, members)
                cycle = [source] + back
                # The same cycle read from another starting point is the same cycle.
                start = cycle.index(min(cycle[:-1]))
                key = tuple(cycle[start:-1] + cycle[:start])
                if key not in seen:
                    seen.add(key)
                    found.append(list(key) + [key[0]])
    return sorted(found)


def _site(sites):
    return ", ".join(f"{file}:{line}" for file, line in sorted(set(sites)))


def describe_module_cycle(graph, cycle):
    steps = [f"{a} -> {b}  ({_site(graph[a][b])})" for a, b in zip(cycle, cycle[1:])]
    return " -> ".join(cycle) + "\n" + "\n".join("      " + step for step in steps)


def describe_unit_cycle(units, cycle):
    steps = []
    for a, b in zip(cycle, cycle[1:]):
        # One statement importing p.q.m is an edge to p.q and to p.q.m: name the module, not both.
        deepest = {}
        for source, target, file, line in units[a][b]:
            site = (source, file, line)
            if site not in deepest or len(target) > len(deepest[site]):
                deepest[site] = target
        by_pair = defaultdict(list)
        for (source, file, line), target in sorted(deepest.items(), key=lambda item: (item[0][0], item[0][2])):
            by_pair[(source, target)].append((file, line))
        steps.append(
            f"{a} -> {b}  via "
            + "; ".join(f"{source} -> {target} ({_site(sites)})" for (source, target), sites in sorted(by_pair.items()))
        )
    return " -> ".join(cycle) + "\n" + "\n".join("      " + step for step in steps)


def test_no_import_cycles_between_modules():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles between modules (an import inside a function counts too):\n" + "\n".join(
        "  " + describe_module_cycle(graph, cycle) for cycle in found
    )


def test_no_import_cycles_between_units():
    units = unit_graph(import_graph())
    found = cycles(units)
    assert not found, (
        "import cycles between units (a unit is a top-level module or subpackage, e.g. "
        "grader.probes, grader.submission):\n" + "\n".join("  " + describe_unit_cycle(units, cycle) for cycle in found)
    )


def test_the_graph_sees_lazy_imports_and_package_inits(tmp_path, monkeypatch):
    """The rules above, on a made-up package: a lazy import counts; ``from p.m import x`` runs ``p/__init__``."""
    pkg = tmp_path / "grader"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from grader.sub.a import A\n")
    (pkg / "sub" / "a.py").write_text("A = 1\nfrom grader.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from grader.sub.a import A\n")
    (pkg / "top.py").write_text("from grader.sub.b import f\n")
    (pkg / "other.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import grader.top\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = import_graph()
    assert dict(graph["grader.top"]) == {"grader.sub": [("grader/top.py", 1)], "grader.sub.b": [("grader/top.py", 1)]}
    assert dict(graph["grader.other"]) == {}
    assert cycles(graph) == [["grader.sub.a", "grader.sub.b", "grader.sub.a"]]
    # The package __init__ imports a, but a's import of its own package is no edge (it is already running).
    assert "grader.sub" not in graph["grader.sub.a"]
