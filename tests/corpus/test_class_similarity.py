"""Similarity across the class (``grader.batch.classsim``), both directions.

Copies disguised by renaming, reordering, rewritten comments and docstrings, reformatting, dead code and a
changed line, all at once, and further disguises (statements swapped, operands swapped, temporaries, files merged)
are paired with their source, whichever of the 14 independently written correct implementations
(tests/blind/correct/*, tests/submissions/alt_*) they start from. Those 14 are never paired with each other, the
unchanged skeleton pairs with nobody, and every blind deviation (a real near-copy written by someone else) pairs
with its base. The instructor's page escapes every name and every line of code, and the report does not depend on
the order of the entries.
"""

import ast
import builtins
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.batch import classsim
from tests.conftest import ROOT, TRANSFORMER

TESTS = Path(__file__).resolve().parents[1]
BASES = sorted(
    [p for p in (TESTS / "blind" / "correct").iterdir() if p.is_dir()]
    + [p for p in (TESTS / "submissions").iterdir() if p.is_dir() and p.name.startswith("alt_")]
)
DEVIATIONS = sorted(p for p in (TESTS / "blind" / "deviations").iterdir() if p.is_dir())
CONTRACT_NAMES = frozenset(TRANSFORMER.name_to_file)
KEEP = frozenset(dir(builtins)) | {"forward"}
WORDS = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "zeta", "theta", "lam", "rho", "tau")


# Disguises: each takes {file: source} and returns {file: source}.


class _Names(ast.NodeVisitor):
    """The names a submission binds itself: arguments, local variables, helper functions, assigned attributes."""

    def __init__(self):
        self.names, self.attrs = set(), set()

    def visit_arg(self, node):
        self.names.add(node.arg)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self.names.add(node.id)

    def visit_Attribute(self, node):
        if isinstance(node.ctx, ast.Store):
            self.attrs.add(node.attr)
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        if node.name not in CONTRACT_NAMES and not node.name.startswith("__"):
            self.names.add(node.name)
            self.attrs.add(node.name)  # a method is reached as an attribute
        self.generic_visit(node)


class _Rename(ast.NodeTransformer):
    """Names (and keywords naming arguments) through ``names``; attributes the submission assigns or defines (its
    methods) through ``attrs``; the API's attributes (``x.size``) stay."""

    def __init__(self, names, attrs):
        self.names, self.attrs = names, attrs

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_keyword(self, node):
        node.arg = node.arg and self.names.get(node.arg, node.arg)
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        node.attr = self.attrs.get(node.attr, node.attr)
        return self.generic_visit(node)

    def visit_FunctionDef(self, node):
        node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)

    def visit_alias(self, node):
        node.name = self.names.get(node.name, node.name)
        return node


def _trees(files):
    return {f: ast.parse(src) for f, src in files.items()}


def rename(files, rng):
    collect = _Names()
    trees = _trees(files)
    for tree in trees.values():
        collect.visit(tree)
    own = sorted((collect.names | collect.attrs) - KEEP - CONTRACT_NAMES)
    mapping = {name: f"{rng.choice(WORDS)}_{i}" for i, name in enumerate(own)}
    names = {n: new for n, new in mapping.items() if n in collect.names}
    attrs = {n: new for n, new in mapping.items() if n in collect.attrs}
    return {f: ast.unparse(_Rename(names, attrs).visit(t)) for f, t in trees.items()}


def reorder(files, rng):
    out = {}
    for f, tree in _trees(files).items():
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        rest = [s for s in tree.body if s not in imports][::-1]
        for node in rest:
            if isinstance(node, ast.ClassDef):
                node.body = node.body[::-1]
        tree.body = imports + rest
        out[f] = ast.unparse(tree)
    return out


def _drop_docstrings(tree):
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]


def comments(files, rng):
    out = {}
    for f, tree in _trees(files).items():
        _drop_docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                node.body.insert(0, ast.Expr(ast.Constant(f"My own {rng.choice(WORDS)} code, written at night.")))
        lines = ast.unparse(tree).splitlines()
        out[f] = "\n".join(
            line + "  # " + rng.choice(WORDS) if i % 3 == 0 and line.strip() else line for i, line in enumerate(lines)
        )
    return out


def reformat(files, rng):
    """``ast.unparse`` (its own line breaks and parentheses), indented by two spaces and with blank lines added."""
    out = {}
    for f, tree in _trees(files).items():
        lines = ast.unparse(tree).splitlines()
        two = [re.sub(r"^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), line) for line in lines]
        out[f] = "\n\n".join(two)
    return out


class _Dead(ast.NodeTransformer):
    """A dead statement at the top of every other function, and the first float constant changed."""

    def __init__(self):
        self.count, self.changed = 0, False

    def visit_FunctionDef(self, node):
        self.count += 1
        if self.count % 2:
            node.body.insert(0, ast.parse("if False:\n    print('debug', len([]))").body[0])
        return self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, float) and not self.changed:
            self.changed = True
            return ast.Constant(node.value * 2 + 1)
        return node


def dead(files, rng):
    out = {}
    dead_code = _Dead()
    for f, tree in _trees(files).items():
        out[f] = ast.unparse(dead_code.visit(tree))
    return out


class _Swaps(ast.NodeTransformer):
    """Operands of + and * swapped, ``a < b`` written ``b > a``, ``x += y`` as ``x = x + y``, a returned call
    through a temporary, and neighbouring assignments that do not depend on each other swapped."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.Add, ast.Mult)):
            node.left, node.right = node.right, node.left
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        flip = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
        if len(node.ops) == 1 and type(node.ops[0]) in flip:
            return ast.Compare(node.comparators[0], [flip[type(node.ops[0])]()], [node.left])
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        load = ast.parse(ast.unparse(node.target), mode="eval").body
        return ast.copy_location(ast.Assign([node.target], ast.BinOp(load, node.op, node.value)), node)

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                setattr(node, field, self._statements(body))
        return node

    @staticmethod
    def _statements(body):
        out = []
        for stmt in body:
            if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
                out += ast.parse(f"tmp_result = {ast.unparse(stmt.value)}\nreturn tmp_result").body
            else:
                out.append(stmt)
        for i in range(0, len(out) - 1, 2):
            a, b = out[i], out[i + 1]
            if isinstance(a, ast.Assign) and isinstance(b, ast.Assign) and not _depends(a, b):
                out[i], out[i + 1] = b, a
        return out


def _depends(a, b):
    def names(node):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
        }

    return bool(names(a) & names(b) - {"self", "torch", "nn", "math", "F"})


def extra(files, rng):
    """Statements and operands swapped, temporaries, and the files merged into one."""
    merged = "\n\n".join(ast.unparse(ast.fix_missing_locations(_Swaps().visit(t))) for t in _trees(files).values())
    return {"everything.py": merged}


def all_at_once(files, rng):
    for step in (rename, reorder, comments, reformat):
        files = step(files, rng)
    return files


def all_and_dead(files, rng):
    return dead(all_at_once(files, rng), rng)


DISGUISES = {
    "rename": rename,
    "reorder": reorder,
    "comments": comments,
    "reformat": reformat,
    "all": all_at_once,
    "dead": all_and_dead,
    "extra": lambda f, r: extra(all_at_once(f, r), r),
}


def _sources(folder):
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(folder).glob("*.py"))}


def _write(folder, files):
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _flagged(report):
    return {(p.a, p.b) for p in report.pairs}


def _pair(report, a, b):
    a, b = sorted((a, b))
    return next((p for p in report.pairs if (p.a, p.b) == (a, b)), None)


def _cluster_of(report, key):
    return next((c for c in report.clusters if key in c.members), None)


def _copies_class(root, kind):
    """The 14 originals and a copy of each, disguised by ``kind``: entries and {copy key: its source key}."""
    entries, source = [], {}
    for i, base in enumerate(BASES):
        entries.append((base.name, base))
        key = f"copy_{base.name}"
        entries.append((key, _write(root / key, DISGUISES[kind](_sources(base), random.Random(i)))))
        source[key] = base.name
    return entries, source


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """{kind: (report, {copy: source}, report with every pair scored)} for each disguise."""
    out = {}
    for kind in DISGUISES:
        entries, source = _copies_class(tmp_path_factory.mktemp(kind), kind)
        out[kind] = (
            classsim.compare_class(entries, TRANSFORMER),
            source,
            classsim.compare_class(entries, TRANSFORMER, threshold=0.0, min_shared=0),
        )
    return out


def test_the_corpus_has_fourteen_independent_implementations():
    assert len(BASES) == 14


@pytest.mark.parametrize("kind", DISGUISES)
def test_disguised_copies_are_paired_with_their_source(copies, kind):
    report, source, _ = copies[kind]
    for copy, base in source.items():
        pair = _pair(report, copy, base)
        assert pair is not None, f"{kind}: {copy} not paired with {base}"
        assert base in _cluster_of(report, copy).members
    origin = {**{b.name: b.name for b in BASES}, **source}
    wrong = [(a, b) for a, b in _flagged(report) if origin[a] != origin[b]]
    assert not wrong, f"{kind}: copies of different implementations paired: {wrong}"


def test_independent_implementations_are_never_paired():
    """With and without base code removal. (Common code removal is part of the method: without it, what the
    contract makes everyone write lifts the closest independent pair above the threshold.)"""
    entries = [(b.name, b) for b in BASES]
    for base in (True, False):
        report = classsim.compare_class(entries, TRANSFORMER, base=base)
        assert report.pairs == [] and report.clusters == [], (base, report.pairs)


def test_margin_between_copies_and_independent_code(copies):
    """The lowest score of a disguised copy with its source is above the threshold, the highest score of two
    independent implementations below it (every pair scored, none filtered)."""
    copy_scores = []
    for kind, (_, source, scored) in copies.items():
        copy_scores += [(_pair(scored, c, b).score, kind, c) for c, b in source.items()]
    independent = classsim.compare_class([(b.name, b) for b in BASES], TRANSFORMER, threshold=0.0, min_shared=0)
    worst_copy = min(copy_scores)
    best_independent = max((p.score for p in independent.pairs), default=0.0)
    print(
        f"\nlowest copy score {worst_copy}, highest independent score {best_independent:.3f}, "
        f"threshold {classsim.THRESHOLD}"
    )
    assert worst_copy[0] >= classsim.THRESHOLD > best_independent


def test_blind_deviations_pair_with_their_base(tmp_path):
    """Each deviation (its base with its own files over it) pairs with its base, never with another base."""
    entries = [(b.name, b) for b in BASES if b.parent.name == "correct"]
    for dev in DEVIATIONS:
        folder = tmp_path / dev.name
        shutil.copytree(TESTS / "blind" / "correct" / dev.name.split("__")[0], folder)
        for f in dev.glob("*.py"):
            shutil.copy(f, folder / f.name)
        entries.append((dev.name, folder))
    report = classsim.compare_class(entries, TRANSFORMER)
    for dev in DEVIATIONS:
        base = dev.name.split("__")[0]
        assert _pair(report, dev.name, base) is not None, dev.name
        assert base in _cluster_of(report, dev.name).members
    wrong = [(a, b) for a, b in _flagged(report) if a.split("__")[0] != b.split("__")[0]]
    assert not wrong


def test_the_skeleton_pairs_with_nobody(tmp_path):
    """Students who hand in the unchanged skeleton share everything, all of it base code: with base code removed
    they pair with nobody (no cluster of everyone who did nothing). Kept, they would pair with each other."""
    entries = [(b.name, b) for b in BASES]
    for i in range(3):
        entries.append((f"stub{i}", shutil.copytree(TRANSFORMER.skeleton, tmp_path / f"stub{i}")))
    report = classsim.compare_class(entries, TRANSFORMER)
    assert not [p for p in report.pairs if p.a.startswith("stub") or p.b.startswith("stub")]
    assert all(report.sizes[f"stub{i}"] == 0 for i in range(3))
    kept = classsim.compare_class(entries, TRANSFORMER, base=False, min_shared=1)
    assert kept.sizes["stub0"] > 0 and _pair(kept, "stub0", "stub1").score == 1.0


def test_partial_copy_on_the_skeleton_pairs_with_its_source(tmp_path):
    """A student who only did two files, both copied: the skeleton's remainder does not dilute the score."""
    base = BASES[0]
    folder = shutil.copytree(TRANSFORMER.skeleton, tmp_path / "partial")
    for f in ("attention.py", "model.py"):
        (folder / f).write_text(rename({f: (base / f).read_text()}, random.Random(0))[f])
    entries = [(b.name, b) for b in BASES] + [("partial", folder)]
    report = classsim.compare_class(entries, TRANSFORMER)
    assert _pair(report, "partial", base.name) is not None
    assert [p for p in report.pairs if "partial" in (p.a, p.b)] == [_pair(report, "partial", base.name)]


def test_the_report_does_not_depend_on_the_order(copies, tmp_path):
    entries, _ = _copies_class(tmp_path, "all")
    shuffled = list(entries)
    random.Random(3).shuffle(shuffled)
    one = classsim.to_data(classsim.compare_class(entries, TRANSFORMER))
    two = classsim.to_data(classsim.compare_class(shuffled, TRANSFORMER))
    assert one == two and one["pairs"]


def test_fingerprints_are_the_same_in_another_process():
    """Hashes never come from Python's ``hash()`` (randomised per process)."""
    code = (
        "import sys; from grader.batch import classsim; from grader.assignment import load; "
        "print(sorted(classsim.fingerprint(sys.argv[1], load('transformer')).prints))"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(BASES[0])],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            check=True,
        ).stdout
        for seed in ("1", "2")
    ]
    here = sorted(classsim.fingerprint(BASES[0], TRANSFORMER).prints)
    assert here and runs[0] == runs[1] == f"{here}\n"


def test_files_that_cannot_be_compared_are_said(tmp_path):
    folder = shutil.copytree(BASES[0], tmp_path / "s")
    (folder / "broken.py").write_text("def f(:\n    pass\n")
    (folder / "huge.py").write_text("x = 1\n" * 50_000)
    (folder / "link.py").symlink_to(folder / "masks.py")
    prints = classsim.fingerprint(folder, TRANSFORMER)
    assert dict(prints.skipped) == {"broken.py": "syntax", "huge.py": "too_large", "link.py": "not_a_file"}
    assert "masks.py" in prints.files and prints.prints


def test_matched_lines_point_at_the_copied_code(tmp_path):
    """A copy reordered only, two submissions (no common code): every matched line lies within the file, and the
    source's matched lines cover its code."""
    base = TESTS / "blind" / "correct" / "einsum"
    copy = _write(tmp_path / "copy", reorder(_sources(base), random.Random(0)))
    pair = _pair(classsim.compare_class([("einsum", base), ("copy", copy)], TRANSFORMER), "copy", "einsum")
    ranges = pair.ranges_b if pair.b == "einsum" else pair.ranges_a
    attention = (base / "attention.py").read_text().splitlines()
    hit = {n for first, last in ranges["attention.py"] for n in range(first, last + 1)}
    assert hit <= set(range(1, len(attention) + 1))
    code = {i + 1 for i, line in enumerate(attention) if line.strip().startswith(("scores", "weights", "self.w_"))}
    assert len(code & hit) >= 0.8 * len(code)


def _page_class(tmp_path):
    src = _sources(BASES[0])
    src["attention.py"] = src["attention.py"].replace(
        "def scaled_dot_product_attention(",
        "def evil(n):\n    s = '<script>alert(2)</script>'\n    total = 0\n    for i in range(n):\n"
        "        total = total + len(s) * i - 3\n    return s * total\n\n\ndef scaled_dot_product_attention(",
    )
    a = _write(tmp_path / "a", src)
    b = _write(tmp_path / "b", reorder(src, random.Random(0)))
    entries = [("a", a), ("b", b)] + [(x.name, x) for x in BASES[1:]]
    return entries, dict(entries)


def test_the_page_escapes_names_and_code_and_highlights_matches(tmp_path):
    entries, folders = _page_class(tmp_path)
    report = classsim.compare_class(entries, TRANSFORMER)
    assert _pair(report, "a", "b") is not None
    names = {k: f"<script>alert('{k}')</script>" for k, _ in entries}
    html = classsim.render(report, names=names, sources_of=lambda k, f: (folders[k] / f).read_text(), lang="en")
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(&#39;a&#39;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert 'http-equiv="Content-Security-Policy"' in html and "default-src 'none'" in html
    assert 'id="cluster-1"' in html and "<details" in html
    pair = _pair(report, "a", "b")
    first, last = pair.ranges_a["attention.py"][0]
    line = (folders["a"] / "attention.py").read_text().splitlines()[first - 1]
    hits = re.findall(r'<div class="line hit"><span class="n">(\d+)</span><code>(.*?)</code></div>', html)
    assert (str(first), jinja_escape(line)) in hits
    assert '<div class="line"><span class="n">' in html  # context lines, not highlighted
    zh = classsim.render(report, names=names, sources_of=lambda k, f: (folders[k] / f).read_text(), lang="zh")
    assert "<script" not in zh.lower() and zh != html


def jinja_escape(s):
    import markupsafe

    return str(markupsafe.escape(s))


def test_the_page_says_when_nothing_is_similar():
    report = classsim.compare_class([(b.name, b) for b in BASES], TRANSFORMER)
    html = classsim.render(report, names={}, sources_of=lambda k, f: "", lang="en")
    assert "<details" not in html and classsim.text("classsim.none", "en") in html


def test_summary_rows_link_to_the_clusters(tmp_path):
    entries, _ = _page_class(tmp_path)
    report = classsim.compare_class(entries, TRANSFORMER)
    names = {"a": "Ann <b>", "b": "Bob"}
    rows = classsim.summary_rows(report, names, "en")
    assert rows == [
        {
            "cluster": 1,
            "href": "similarity.html#cluster-1",
            "members": ["Ann <b>", "Bob"],
            "size": 2,
            "top": round(100 * report.clusters[0].max_score),
            "label": classsim.text(
                "classsim.summary.row", "en", n=1, size=2, top=round(100 * report.clusters[0].max_score)
            ),
        }
    ]


def test_to_data_is_plain_json(copies):
    import json

    report, _, _ = copies["rename"]
    data = classsim.to_data(report)
    assert json.loads(json.dumps(data)) == data
    assert data["params"]["threshold"] == classsim.THRESHOLD and data["clusters"][0]["id"] == 1


def test_a_ring_of_copies_too_big_to_be_rare_is_still_one_cluster(tmp_path):
    """Seven disguised copies of one solution in a class of 21: their code is held by a third of the class, so
    it counts as common code, yet the eight are near-identical and form one cluster; nobody else joins it."""
    source = BASES[0]
    entries = [(b.name, b) for b in BASES]
    ring = [f"ring_{i}" for i in range(7)]
    for i, key in enumerate(ring):
        entries.append((key, _write(tmp_path / key, DISGUISES["dead"](_sources(source), random.Random(100 + i)))))
    report = classsim.compare_class(entries, TRANSFORMER)
    assert report.common > 0  # the ring's code is common to the class...
    cluster = _cluster_of(report, ring[0])
    assert cluster is not None and set(cluster.members) == set(ring) | {source.name}  # ...and still paired
    assert all(p.a in cluster.members and p.b in cluster.members for p in report.pairs)
