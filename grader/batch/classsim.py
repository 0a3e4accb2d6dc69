"""Similarity across the class (MOSS/JPlag style): which submissions share code once names, comments, docstrings
and formatting are set aside. ``similarity.py`` compares each submission with the reference; this compares the
submissions with each other.

How (Schleimer, Wilkerson and Aiken, "Winnowing", SIGMOD 2003):

1. Every ``.py`` file of a snapshot is parsed and each definition (a top-level function, a method, a class's
   other statements, a module's other statements) becomes a stream of normalised tokens: the syntax node kinds,
   operators and numbers. Names the submission binds itself (arguments, variables, helpers, its own attributes
   and methods) become one class token, so renaming changes nothing; builtins, ``torch``, ``math`` and the
   attributes of the APIs it calls (``.softmax``, ``.view``) stay. Strings, docstrings, comments, annotations,
   imports and layout are gone. Operands of commutative operators are put in a fixed order, ``a > b`` is
   ``b < a``, ``x += y`` is ``x = x + y`` and keyword arguments are sorted, so those rewrites change nothing.
2. Each run of ``k`` tokens is hashed (BLAKE2b: the same in every process and run) and winnowed: the smallest
   hash of every ``window`` consecutive ones is kept, remembering its file and line span. Any code shared over
   ``k + window - 1`` tokens shares a fingerprint; definitions are hashed apart, so reordering functions or
   classes, splitting or merging files changes nothing either.
3. Base code (MOSS ``-b``): every k-gram of the assignment's skeleton does not count, so handing in the
   stubs pairs with nobody. Common code (MOSS ``-m``): a fingerprint held by more than ``common_share`` of
   the class and by at least ``common_min`` submissions is what any solution contains, and does not count.
   A ring of that many copies would fall under it too, so a second test ignores commonness: two submissions
   whose whole fingerprint sets (base code out, common code in) have a Jaccard similarity of at least ``near``
   are near-identical and flagged. Its candidates come from MinHash signatures in LSH bands (Broder 1997), so it
   too grows with the class, not with its pairs; independent solutions share their common code but stay far
   below ``near`` on the whole.
4. An inverted index (fingerprint -> submissions) counts the fingerprints each pair shares, in time that grows
   with the class, not with its pairs. A pair is flagged when ``shared / min(size_a, size_b) >= threshold``
   (``size``: the submission's counted fingerprints) and ``shared >= min_shared``, so two tiny submissions do not
   pair on a few lines. Clusters are the connected parts of the flagged pairs.

The page (``render``, ``similarity.html``) is for the instructor: it shows two students' code side by side.
Nothing of it goes into a student's folder, report or results; the caller writes it next to the class summary,
whose frame it shares (``summary.frame``: head, stylesheet and a header linking the two pages). Long lines wrap
inside their pane, so that no code is hidden beyond its edge.
"""

import ast
import builtins
import hashlib
import os
import stat
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from grader.batch.summary import PAGES, environment, frame
from grader.messages import text
from grader.safetext import clean_data, clean_text, display_name

K = 10
"""Tokens per hashed run."""
WINDOW = 6
"""Hashes per winnowing window: code shared over ``K + WINDOW - 1`` tokens is always found."""
THRESHOLD = 0.6
"""Share of the smaller submission's fingerprints (``shared / min(size)``) from which a pair is flagged."""
MIN_SHARED = 15
"""Fewest shared fingerprints for a flagged pair: below, too little code to tell a copy from a coincidence."""
COMMON_SHARE = 0.10
"""A fingerprint held by more than this share of the class is common code (``common_min`` as well)."""
COMMON_MIN = 5
"""... and by at least this many submissions."""
NEAR = 0.7
"""Jaccard similarity of two whole fingerprint sets (common code counted) from which a pair is near-identical.
Measured: disguised copies with dead code 0.78-0.79, the closest two independent implementations 0.54."""
PERMUTATIONS, BANDS = 60, 20
"""MinHash signature length and LSH bands (3 rows each): a pair at Jaccard 0.7 shares a band with probability
1 - (1 - 0.7**3)**20 > 0.9997; the candidates are then measured exactly."""
MAX_BYTES = 200_000
"""Files larger than this are not compared (said in ``Fingerprints.skipped``)."""
CONTEXT = 2
"""Lines shown around the matched ones on the page."""
MAX_DETAILS = 100
"""Pairs shown side by side on the page; the others are listed, and all of them are in ``similarity.json``."""
_KEEP = frozenset(dir(builtins)) | {"torch", "math"}
_SKIP_DIRS = {"__pycache__", "__MACOSX", ".git"}
_SORTED_OPS = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
_FLIP = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_REGISTERS = {"register_buffer", "register_parameter", "add_module", "setattr"}
"""Calls whose string argument names an attribute the submission gives itself."""


@dataclass
class Fingerprints:
    """One submission's winnowed fingerprints."""

    prints: dict = field(default_factory=dict)
    """hash -> tuple of ``(file, first line, last line)`` where it occurs."""
    files: list = field(default_factory=list)
    """The files read (relative paths, sorted)."""
    skipped: list = field(default_factory=list)
    """``(file, why)``: ``too_large``, ``syntax`` (does not parse), ``unreadable`` or ``not_a_file``."""


@dataclass
class Pair:
    """Two submissions flagged as sharing code (``a < b``)."""

    a: str
    b: str
    score: float
    """``shared / min(size_a, size_b)``; for a near-identical pair among common code, their Jaccard similarity."""
    shared: int
    ranges_a: dict
    """file -> ``[(first, last), ...]`` the matched lines of ``a``; ``ranges_b`` the same for ``b``."""
    ranges_b: dict


@dataclass
class Cluster:
    """Submissions linked by flagged pairs."""

    id: int
    members: list
    max_score: float
    mean_score: float


@dataclass
class ClassReport:
    params: dict
    sizes: dict
    """key -> counted fingerprints (after base and common code are removed)."""
    skipped: dict
    """key -> ``[(file, why), ...]`` for submissions with files not compared."""
    pairs: list
    """Flagged ``Pair`` objects, highest score first."""
    clusters: list
    """``Cluster`` objects, highest score first, numbered from 1."""
    common: int = 0
    """Fingerprints left out as common code."""


# 1. Tokens.


class _Tokens:
    """The normalised token stream of a definition, each token with its line."""

    def __init__(self, own):
        self.own = own
        self.out = []

    def emit(self, node, line):
        line = getattr(node, "lineno", line)
        method = getattr(self, "_" + type(node).__name__, None)
        if method is not None:
            return method(node, line)
        self.out.append((type(node).__name__, line))
        for child in _children(node):
            self.emit(child, line)

    def sub(self, node, line):
        """The tokens of ``node`` on their own (to order operands)."""
        saved, self.out = self.out, []
        self.emit(node, line)
        tokens, self.out = self.out, saved
        return tokens

    def ordered(self, nodes, line):
        parts = sorted((self.sub(n, line) for n in nodes), key=lambda ts: [t for t, _ in ts])
        for tokens in parts:
            self.out += tokens

    def _Name(self, node, line):
        self.out.append((node.id if node.id in _KEEP else "ID", line))

    def _Attribute(self, node, line):
        self.emit(node.value, line)
        self.out.append(("." + ("ID" if node.attr in self.own else node.attr), line))

    def _Constant(self, node, line):
        value = node.value
        self.out.append(("S" if isinstance(value, (str, bytes)) else repr(value)[:24], line))

    def _JoinedStr(self, node, line):
        self.out.append(("S", line))

    def _keyword(self, node, line):
        self.out.append(("kw" if node.arg else "**", line))
        self.emit(node.value, line)

    def _arg(self, node, line):
        self.out.append(("arg", line))

    def _Expr(self, node, line):
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, (str, type(...)))):
            self.out.append(("Expr", line))
            self.emit(node.value, line)

    def _Import(self, node, line):
        pass

    _ImportFrom = _Import

    def _BinOp(self, node, line):
        self.out.append((type(node.op).__name__, line))
        if isinstance(node.op, _SORTED_OPS):
            self.ordered((node.left, node.right), line)
        else:
            self.emit(node.left, line)
            self.emit(node.right, line)

    def _BoolOp(self, node, line):
        self.out.append((type(node.op).__name__, line))
        self.ordered(node.values, line)

    def _Compare(self, node, line):
        op = type(node.ops[0])
        if len(node.ops) == 1 and op in _FLIP:
            node = ast.Compare(node.comparators[0], [_FLIP[op]()], [node.left])
            op = type(node.ops[0])
        self.out += [("Compare", line)] + [(type(o).__name__, line) for o in node.ops]
        if len(node.ops) == 1 and op in (ast.Eq, ast.NotEq):
            self.ordered((node.left, node.comparators[0]), line)
        else:
            for child in [node.left, *node.comparators]:
                self.emit(child, line)

    def _AugAssign(self, node, line):
        self.out += [("Assign", line)]
        self.emit(node.target, line)
        self._BinOp(ast.BinOp(node.target, node.op, node.value), line)

    def _AnnAssign(self, node, line):
        if node.value is not None:
            self.out += [("Assign", line)]
            self.emit(node.target, line)
            self.emit(node.value, line)

    def _Call(self, node, line):
        self.out.append(("Call", line))
        self.emit(node.func, line)
        for a in node.args:
            self.emit(a, line)
        self.ordered(node.keywords, line)

    def _FunctionDef(self, node, line):
        self.out.append(("def", line))
        for d in node.decorator_list:
            self.emit(d, line)
        self.emit(node.args, line)
        for stmt in node.body:
            self.emit(stmt, line)

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, node, line):
        self.out.append(("class", line))
        for child in [*node.decorator_list, *node.bases, *node.keywords, *node.body]:
            self.emit(child, line)


def _children(node):
    """Child nodes in field order, without contexts (Load, Store), annotations and return types."""
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "type_comment", "ctx"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                yield item


def _own_names(trees):
    """Attribute names the submission binds itself: attributes it assigns or registers (``register_buffer("pe",
    ...)``), its functions, methods and classes."""
    own = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                own.add(node.attr)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.Call) and _called(node) in _REGISTERS:
                own.update(a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return own


def _called(call):
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _units(tree):
    """The definitions of a module, hashed apart: top-level functions, methods, each class's other statements, the
    module's other statements."""
    module = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            yield from ([m] for m in methods)
            yield [
                ast.ClassDef(
                    name=node.name,
                    bases=node.bases,
                    keywords=node.keywords,
                    decorator_list=node.decorator_list,
                    body=[n for n in node.body if n not in methods],
                    lineno=node.lineno,
                )
            ]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield [node]
        else:
            module.append(node)
    yield module


# 2. Reading a snapshot.


def _python_files(folder, max_bytes):
    """``(relative path, text)`` of every regular ``.py`` file under ``folder`` and ``(relative path, why)`` of
    those left out; links and special files are never followed."""
    found, skipped = [], []
    folder = os.fspath(folder)
    for base, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            rel = Path(os.path.relpath(path, folder)).as_posix()
            try:
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode):
                    skipped.append((rel, "not_a_file"))
                elif st.st_size > max_bytes:
                    skipped.append((rel, "too_large"))
                else:
                    found.append((rel, Path(path).read_bytes().decode("utf-8", errors="replace")))
            except OSError:
                skipped.append((rel, "unreadable"))
    return found, skipped


def _parsed(folder, max_bytes):
    """``({file: tree}, skipped)`` for the submission in ``folder``."""
    found, skipped = _python_files(folder, max_bytes)
    trees = {}
    for rel, source in found:
        try:
            trees[rel] = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            skipped.append((rel, "syntax"))
    return trees, sorted(skipped)


def _grams(trees, k):
    """``[(hashes, spans)]`` per definition: the hash of every ``k`` consecutive tokens and its
    ``(file, first, last)`` line span."""
    own = _own_names(trees.values())
    out = []
    for rel, tree in trees.items():
        for unit in _units(tree):
            stream = _Tokens(own)
            for node in unit:
                try:
                    stream.emit(node, getattr(node, "lineno", 1))
                except RecursionError:
                    continue
            tokens = stream.out
            hashes, spans = [], []
            for i in range(len(tokens) - k + 1):
                run = tokens[i : i + k]
                digest = hashlib.blake2b("\x1f".join(t for t, _ in run).encode(), digest_size=8).digest()
                hashes.append(int.from_bytes(digest, "big"))
                lines = [ln for _, ln in run]
                spans.append((rel, min(lines), max(lines)))
            if hashes:
                out.append((hashes, spans))
    return out


def _winnow(hashes, window):
    """Indices of the kept hashes: the smallest of each window of ``window`` (the rightmost on ties)."""
    kept, last = [], -1
    for start in range(max(1, len(hashes) - window + 1)):
        chunk = hashes[start : start + window]
        low = min(chunk)
        pick = start + len(chunk) - 1 - chunk[::-1].index(low)
        if pick != last:
            kept.append(pick)
            last = pick
    return kept


def fingerprint(folder, assignment=None, *, k=K, window=WINDOW, max_bytes=MAX_BYTES):
    """The ``Fingerprints`` of the submission snapshot in ``folder`` (every ``.py`` file, regular files only; file
    names as ``os`` gives them, so that the caller can open them again).
    ``assignment`` is accepted for symmetry with ``compare_class``; base code is removed there."""
    trees, skipped = _parsed(folder, max_bytes)
    prints = defaultdict(set)
    for hashes, spans in _grams(trees, k):
        for i in _winnow(hashes, window):
            prints[hashes[i]].add(spans[i])
    return Fingerprints(prints={h: tuple(sorted(s)) for h, s in prints.items()}, files=sorted(trees), skipped=skipped)


def base_hashes(folder, *, k=K, max_bytes=MAX_BYTES):
    """Every k-gram hash (not only the winnowed ones) of the base code in ``folder`` (the skeleton)."""
    trees, _ = _parsed(folder, max_bytes)
    return {h for hashes, _ in _grams(trees, k) for h in hashes}


# 3. Comparing the class.


def compare_class(
    entries,
    assignment,
    *,
    k=K,
    window=WINDOW,
    threshold=THRESHOLD,
    min_shared=MIN_SHARED,
    base=True,
    common_share=COMMON_SHARE,
    common_min=COMMON_MIN,
    max_bytes=MAX_BYTES,
):
    """The ``ClassReport`` of ``entries`` (``(key, snapshot folder)`` pairs, keys the students' folder names).
    ``base``: leave out the skeleton's code (``assignment.skeleton``)."""
    prints = {key: fingerprint(folder, assignment, k=k, window=window, max_bytes=max_bytes) for key, folder in entries}
    removed = base_hashes(assignment.skeleton, k=k, max_bytes=max_bytes) if base else set()
    return compare_fingerprints(
        prints,
        removed,
        k=k,
        window=window,
        threshold=threshold,
        min_shared=min_shared,
        common_share=common_share,
        common_min=common_min,
    )


def compare_fingerprints(
    prints,
    removed=frozenset(),
    *,
    k=K,
    window=WINDOW,
    threshold=THRESHOLD,
    min_shared=MIN_SHARED,
    common_share=COMMON_SHARE,
    common_min=COMMON_MIN,
    near=NEAR,
):
    """The ``ClassReport`` of ``prints`` (key -> ``Fingerprints``), hashes in ``removed`` (base code) left out."""
    keys = sorted(prints)
    index = defaultdict(list)
    for i, key in enumerate(keys):
        for h in prints[key].prints:
            if h not in removed:
                index[h].append(i)
    limit = max(common_share * len(keys), common_min - 1)
    common = {h for h, holders in index.items() if len(holders) > limit}
    sizes = [0] * len(keys)
    counts = defaultdict(int)
    for h, holders in index.items():
        if h in common:
            continue
        for i in holders:
            sizes[i] += 1
        for i, j in combinations(holders, 2):
            counts[i, j] += 1
    pairs = {}
    for (i, j), shared in counts.items():
        score = shared / max(1, min(sizes[i], sizes[j]))
        if shared >= min_shared and score >= threshold:
            pairs[i, j] = _pair(prints, keys[i], keys[j], score, shared, removed | common)
    whole = [frozenset(prints[key].prints.keys() - removed) for key in keys]
    for (i, j), shared, jaccard in _near_identical(whole, near, min_shared):
        if (i, j) not in pairs:  # a ring of copies: common to the class, yet the same code
            pairs[i, j] = _pair(prints, keys[i], keys[j], jaccard, shared, removed)
    pairs = sorted(pairs.values(), key=lambda p: (-p.score, p.a, p.b))
    params = {
        "k": k,
        "window": window,
        "threshold": threshold,
        "min_shared": min_shared,
        "common_share": common_share,
        "common_min": common_min,
        "near": near,
        "base": bool(removed),
    }
    return ClassReport(
        params=params,
        sizes=dict(zip(keys, sizes)),
        pairs=pairs,
        clusters=_clusters(pairs),
        skipped={k_: prints[k_].skipped for k_ in keys if prints[k_].skipped},
        common=len(common),
    )


def _near_identical(sets, near, min_shared):
    """``((i, j), shared, jaccard)`` for the pairs of ``sets`` (fingerprint sets) whose Jaccard similarity is at
    least ``near`` and that share ``min_shared`` fingerprints or more; candidates from MinHash + LSH bands."""
    import numpy as np

    rng = np.random.default_rng(0)  # fixed: the same signatures in every run
    mul = rng.integers(1, 2**63, size=PERMUTATIONS, dtype=np.uint64) | np.uint64(1)
    add = rng.integers(0, 2**63, size=PERMUTATIONS, dtype=np.uint64)
    rows = PERMUTATIONS // BANDS
    buckets = defaultdict(list)
    signatures = np.zeros((len(sets), PERMUTATIONS), dtype=np.uint64)
    for i, hashes in enumerate(sets):
        if len(hashes) < min_shared:
            continue
        values = np.fromiter(hashes, dtype=np.uint64, count=len(hashes))
        with np.errstate(over="ignore"):
            signatures[i] = (values[:, None] * mul + add).min(axis=0)  # arithmetic mod 2**64: one hash a permutation
        for band in range(BANDS):
            buckets[band, signatures[i, band * rows : (band + 1) * rows].tobytes()].append(i)
    candidates = np.array(
        sorted({pair for members in buckets.values() for pair in combinations(members, 2)}), dtype=np.int64
    ).reshape(-1, 2)
    # The share of equal signature values estimates the Jaccard similarity (standard error <= 0.065 with 60):
    # only pairs estimated within 0.2 of ``near`` are measured exactly.
    estimate = (signatures[candidates[:, 0]] == signatures[candidates[:, 1]]).mean(axis=1)
    candidates = candidates[estimate >= near - 0.2].tolist()
    found = []
    for i, j in candidates:
        shared = len(sets[i] & sets[j])
        jaccard = shared / len(sets[i] | sets[j])
        if jaccard >= near and shared >= min_shared:
            found.append(((i, j), shared, jaccard))
    return found


def _pair(prints, a, b, score, shared, left_out):
    both = (prints[a].prints.keys() & prints[b].prints.keys()) - left_out
    return Pair(
        a=a,
        b=b,
        score=round(score, 4),
        shared=shared,
        ranges_a=_ranges(prints[a].prints, both),
        ranges_b=_ranges(prints[b].prints, both),
    )


def _ranges(prints, hashes):
    """file -> merged ``(first, last)`` line ranges of the occurrences of ``hashes``."""
    spans = defaultdict(list)
    for h in hashes:
        for rel, first, last in prints[h]:
            spans[rel].append((first, last))
    out = {}
    for rel in sorted(spans):
        merged = []
        for first, last in sorted(spans[rel]):
            if merged and first <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], last))
            else:
                merged.append((first, last))
        out[rel] = merged
    return out


def _clusters(pairs):
    """Connected parts of the flagged pairs, highest score first."""
    parent = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.a)] = root(p.b)
    groups = defaultdict(list)
    for p in pairs:
        groups[root(p.a)].append(p)
    found = []
    for members_pairs in groups.values():
        members = sorted({m for p in members_pairs for m in (p.a, p.b)})
        scores = [p.score for p in members_pairs]
        found.append((-max(scores), members, sum(scores) / len(scores)))
    found.sort()
    return [
        Cluster(id=i, members=members, max_score=-top, mean_score=round(mean, 4))
        for i, (top, members, mean) in enumerate(found, 1)
    ]


# 4. Output.


def to_data(report):
    """The report as plain JSON-able values (``similarity.json``, strings cleaned); keys are the students' folder
    names."""
    return clean_data(
        {
            "params": dict(report.params),
            "sizes": dict(report.sizes),
            "common": report.common,
            "skipped": {k: [list(s) for s in v] for k, v in report.skipped.items()},
            "clusters": [
                {"id": c.id, "members": list(c.members), "max_score": c.max_score, "mean_score": c.mean_score}
                for c in report.clusters
            ],
            "pairs": [
                {
                    "a": p.a,
                    "b": p.b,
                    "score": p.score,
                    "shared": p.shared,
                    "ranges_a": {f: [list(r) for r in rs] for f, rs in p.ranges_a.items()},
                    "ranges_b": {f: [list(r) for r in rs] for f, rs in p.ranges_b.items()},
                }
                for p in report.pairs
            ],
        }
    )


def _excerpt(source, ranges, context=CONTEXT):
    """The matched lines of ``source`` with ``context`` lines around them: ``[{"n", "text", "hit"}]`` blocks,
    ``None`` between blocks that are apart."""
    lines = source.splitlines()
    hit = {n for first, last in ranges for n in range(first, last + 1)}
    shown = sorted({m for n in hit for m in range(n - context, n + context + 1) if 1 <= m <= len(lines)})
    out, previous = [], None
    for n in shown:
        if previous is not None and n != previous + 1:
            out.append(None)
        out.append({"n": n, "text": clean_text(lines[n - 1]), "hit": n in hit})
        previous = n
    return out


def _side(key, ranges, names, sources_of):
    files = []
    for rel, spans in ranges.items():
        try:
            source = sources_of(key, rel)
        except (OSError, UnicodeDecodeError):
            source = None
        files.append({"file": display_name(rel), "lines": None if source is None else _excerpt(source, spans)})
    return {"name": names.get(key, key), "files": files}


def render(report, *, names, sources_of, lang="en", max_details=MAX_DETAILS, pages=PAGES):
    """The instructor's page ``similarity.html``: clusters, then pairs by score, the first ``max_details`` of them
    with both sides' matched lines (``sources_of(key, file) -> text``); ``names``: key -> display name;
    ``pages``: the header's links (``summary.frame``)."""

    def t(key, **params):
        return text(key, lang, **params)

    def name(key):
        return names.get(key, key)

    p = report.params
    details = [
        {
            "a": _side(x.a, x.ranges_a, names, sources_of),
            "b": _side(x.b, x.ranges_b, names, sources_of),
            "score": round(100 * x.score),
            "shared": x.shared,
        }
        for x in report.pairs[:max_details]
    ]
    return (
        environment()
        .get_template("similarity.html.j2")
        .render(
            lang=lang,
            frame=frame("similarity", lang, pages),
            t={
                k: t(f"classsim.{k}")
                for k in (
                    "title",
                    "private",
                    "clusters",
                    "pairs",
                    "members",
                    "max",
                    "mean",
                    "score",
                    "shared",
                    "none",
                    "unreadable",
                    "skipped",
                    "pair_of",
                )
            },
            intro=t(
                "classsim.intro",
                threshold=round(100 * p["threshold"]),
                min_shared=p["min_shared"],
                near=round(100 * p.get("near", NEAR)),
                n=len(report.sizes),
            ),
            clusters=[
                {
                    "id": c.id,
                    "members": [name(m) for m in c.members],
                    "max": round(100 * c.max_score),
                    "mean": round(100 * c.mean_score),
                    "title": t("classsim.cluster", n=c.id, size=len(c.members)),
                }
                for c in report.clusters
            ],
            pairs=[
                {"a": name(x.a), "b": name(x.b), "score": round(100 * x.score), "shared": x.shared}
                for x in report.pairs
            ],
            details=details,
            more=t("classsim.more", n=len(report.pairs) - len(details)) if len(report.pairs) > len(details) else "",
            skipped=[
                {"name": name(k), "files": ", ".join(f"{display_name(f)} ({t('classsim.why.' + why)})" for f, why in v)}
                for k, v in report.skipped.items()
            ],
        )
    )


def summary_rows(report, names, lang="en"):
    """One plain row per cluster for the class summary page, linking to its part of ``similarity.html``."""
    return [
        {
            "cluster": c.id,
            "href": f"similarity.html#cluster-{c.id}",
            "members": [names.get(m, m) for m in c.members],
            "size": len(c.members),
            "top": round(100 * c.max_score),
            "label": text("classsim.summary.row", lang, n=c.id, size=len(c.members), top=round(100 * c.max_score)),
        }
        for c in report.clusters
    ]
