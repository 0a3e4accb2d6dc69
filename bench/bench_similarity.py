"""Benchmark the class-wide similarity check (``grader.batch.classsim``) on a synthetic class.

    python bench/bench_similarity.py [--n 1000] [--planted 20] [--seed 0] [--common-share 0.1]

Builds ``--n`` submissions in a temporary folder. Each is a mix of the 14 independently written correct
implementations (tests/blind/correct/*, tests/submissions/alt_*): every contract definition (function or class)
comes from one of them at random, with that implementation's helpers, so sizes are realistic and two submissions
share about one definition in fourteen. ``--planted`` of them are disguised copies of another (renamed, reordered,
comments rewritten, reformatted, dead code, statements and operands swapped, files merged: the disguises
of tests/corpus/test_class_similarity.py). Times ``fingerprint`` of every submission and the comparison, and prints
how many planted pairs were found and how many other pairs were flagged.
"""

import argparse
import ast
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import speed  # noqa: E402 - bench/speed.py

from grader.assignment import load  # noqa: E402
from grader.batch import classsim  # noqa: E402
from tests.corpus.test_class_similarity import BASES, DISGUISES, _sources, _write  # noqa: E402

ASSIGNMENT = load()
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _pieces():
    """file -> contract name -> [(base, source of the definition)], and (base, file) -> its helpers' source."""
    contract, helpers = {}, {}
    for base in BASES:
        for file, text in _sources(base).items():
            tree = ast.parse(text)
            for node in tree.body:
                segment = ast.get_source_segment(text, node, padded=True)
                if not isinstance(node, _DEFS):
                    continue
                if ASSIGNMENT.name_to_file.get(node.name) == file:
                    contract.setdefault(file, {}).setdefault(node.name, []).append((base.name, segment))
                else:
                    helpers.setdefault((base.name, file), []).append(segment)
    return contract, helpers


def _mixed(contract, helpers, rng, origin):
    """{file: source}: every contract definition from a base chosen at random, with those bases' helpers;
    ``origin`` gets {name: (base, lines)}."""
    files = {}
    for file, names in sorted(contract.items()):
        parts, used = [], []
        for name in sorted(names):
            base, segment = rng.choice(names[name])
            origin[name] = (base, segment.count("\n") + 1)
            parts.append(segment)
            if base not in used:
                used.append(base)
        extra = [h for base in used for h in helpers.get((base, file), [])]
        files[file] = "import math\nimport torch\nfrom torch import nn\n\n\n" + "\n\n\n".join(extra + parts) + "\n"
    return files


def make_class(root, n, planted, seed):
    """``(entries, planted pairs, origins)``: ``n`` submissions under ``root``, the last ``planted`` copies of
    others; ``origins``: key -> {contract name: (base it came from, lines)} for the mixed ones."""
    rng = random.Random(seed)
    contract, helpers = _pieces()
    entries, pairs, origins = [], [], {}
    for i in range(n - planted):
        key = f"s{i:04d}"
        origins[key] = {}
        entries.append((key, _write(root / key, _mixed(contract, helpers, rng, origins[key]))))
    kinds = sorted(DISGUISES)
    for j, (source, folder) in enumerate(rng.sample(entries, planted)):
        key = f"s{n - planted + j:04d}"
        kind = kinds[j % len(kinds)]
        entries.append((key, _write(root / key, DISGUISES[kind](_sources(folder), random.Random(j)))))
        pairs.append((min(source, key), max(source, key), kind))
    return entries, pairs, origins


def verbatim_share(one, two):
    """The share of the contract definitions' lines (of the smaller of two mixed submissions) that both took from
    the same implementation, word for word."""
    same = sum(min(lines, two[name][1]) for name, (base, lines) in one.items() if two[name][0] == base)
    return same / min(sum(v[1] for v in one.values()), sum(v[1] for v in two.values()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--planted", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--common-share", type=float, default=classsim.COMMON_SHARE)
    speed.add_argument(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as tmp:
        t0 = time.perf_counter()
        entries, planted, origins = make_class(Path(tmp), args.n, args.planted, args.seed)
        lines = sum(len(p.read_text().splitlines()) for _, f in entries for p in Path(f).glob("*.py"))
        t1 = time.perf_counter()
        prints = {key: classsim.fingerprint(folder, ASSIGNMENT) for key, folder in entries}
        removed = classsim.base_hashes(ASSIGNMENT.skeleton)
        t2 = time.perf_counter()
        report = classsim.compare_fingerprints(prints, removed, common_share=args.common_share)
        t3 = time.perf_counter()
    flagged = {(p.a, p.b): p.score for p in report.pairs}
    found = [(a, b, kind, flagged.get((a, b))) for a, b, kind in planted]
    others = sorted(set(flagged) - {(a, b) for a, b, _ in planted})
    mean_prints = sum(len(p.prints) for p in prints.values()) / len(prints)
    print(
        f"submissions {len(entries)} ({lines} lines of Python, {lines / len(entries):.0f} per submission, "
        f"{mean_prints:.0f} fingerprints each); load average {os.getloadavg()[0]:.2f}"
    )
    print(f"building the class {t1 - t0:.1f} s (not counted)")
    print(f"fingerprint all     {t2 - t1:.1f} s ({1000 * (t2 - t1) / len(entries):.1f} ms per submission)")
    print(f"compare the class   {t3 - t2:.1f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"total               {t3 - t1:.1f} s; peak memory {peak} MB")
    print(
        f"planted pairs found {sum(1 for *_, s in found if s is not None)}/{len(found)}; "
        f"lowest planted score {min((s for *_, s in found if s is not None), default=0):.3f}"
    )
    for a, b, kind, score in found:
        if score is None:
            print(f"  missed: {a} {b} ({kind})")
    print(
        f"other flagged pairs {len(others)}; clusters {len(report.clusters)}; "
        f"common fingerprints left out {report.common}"
    )
    mixed = sorted(origins)
    rng = random.Random(1)
    sample = [tuple(rng.sample(mixed, 2)) for _ in range(2000)]
    shares = sorted(verbatim_share(origins[a], origins[b]) for a, b in sample)
    flagged_shares = sorted(verbatim_share(origins[a], origins[b]) for a, b in others if a in origins and b in origins)
    if flagged_shares:
        print(
            f"  (mixtures share code word for word by construction: a flagged pair shares "
            f"{flagged_shares[len(flagged_shares) // 2]:.0%} of its contract lines (median; lowest "
            f"{flagged_shares[0]:.0%}), a random pair {shares[len(shares) // 2]:.0%} (median; 99th percentile "
            f"{shares[int(0.99 * len(shares))]:.0%}))"
        )
    caught = sum(1 for *_, s in found if s is not None)
    speed.record(
        "similarity.class",
        f"class-wide similarity of {len(entries):,} submissions ({lines / len(entries):.0f} lines each, "
        f"{len(found)} disguised copies planted)",
        f"{t3 - t1:.1f} s (fingerprints {t2 - t1:.1f} s, comparison {t3 - t2:.1f} s; peak memory {peak} MB); "
        f"{caught}/{len(found)} planted copies found",
        "< 60 s, every planted copy found",
        t3 - t1 < 60 and caught == len(found),
    )
    return 0 if all(s is not None for *_, s in found) else 1


if __name__ == "__main__":
    sys.exit(main())
