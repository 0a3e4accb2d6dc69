"""Stand-ins: an isolated worker must hold nothing of the reference, only objects with its parts' interface whose
computation happens in the judge. An earlier attack found the reference's source text inside an isolated worker
through the garbage collector and carried it out, compressed, in an exception message of the student's own report.

The submissions in ``standin_thief/`` (one per assignment) implement every contract name and, whenever any of
their code runs, search everything the worker can reach for the reference (``standin_thief/*/_thief.py`` lists
the ways) and carry what they find out, as fingerprints, through every report channel: exception messages (a
``RuntimeError``, which the kit cuts to 2000 characters, and the grader's own ``SubmissionError``, uncut), the
output that a crashed worker's report shows, and files. Each is graded sealed (``check --sealed``, quick
profile, ``--only`` every check that runs over the reference's parts: each task's isolated worker, with every
probe of those checks) with a JSON and an HTML report, and the first once more through ``batch -j 1`` (two of
its tasks). Then:

(a) the attack ran: its marker (``THIEF-LOOT`` or ``THIEF-FOUND-NOTHING``) is in every report, in the results
    of every task graded, and at least one of its blobs decodes;
(b) what it found holds nothing of the reference: no code object claiming a reference file or the kit's
    synthetic parts path (``loader.PARTS_ROOT``) or named as only the reference names, no name only the
    reference defines, no text that is a reference file or part, holds a distinctive reference line (or its
    hash), names a reference file, or was read from one;
(c) no report (terminal, JSON, HTML, every batch output) holds a distinctive reference line, in its text or
    inside the attack's compressed blobs (decoded here).

"Reference material" is decided here, from the reference files read at test time: the names the reference
defines (functions and classes at any depth) that appear nowhere public (the contract page, the skeleton, the
kit's ``grader/`` and the assignment's public modules, the attack's own files), and its distinctive lines (at
least 30 characters once stripped, found in none of those public files).

Needs a root judge (jails and a uid of each worker's own), like tests/hostile/test_sealed.py; it skips elsewhere.
The three gradings run side by side in one module-scoped fixture (about 2 minutes on 2 cores). Until the worker
holds only stand-ins, (b) and (c) fail, and (b) says what the attack found (names and counts, never source)."""

import ast
import base64
import binascii
import functools
import hashlib
import html
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from grader import engine
from grader.assignment import load

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
THIEVES = HERE / "standin_thief"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="jails and uids of each worker's own need a root judge; "
                                                         "as an ordinary user the worker runs as that user "
                                                         "(docs/SEALED.md)")
try:
    from grader.submission.loader import PARTS_ROOT
except ImportError:  # the kit may drop it with the stand-ins: the name the parts claimed before
    PARTS_ROOT = "/nonexistent-gradekit-reference-parts"
PARTS_ROOT = str(PARTS_ROOT)
ASSIGNMENTS = ("transformer", "decoder_lm")
BATCH_ASSIGNMENT = "transformer"
BATCH_TASKS = ("mha", "training")
"""The batch grades two tasks with isolated checks: one over a function part, one over a whole model beside its
own reference part; between them every way the attack reports (an error's detail, a ``RuntimeError``, a
crashed worker's output)."""
MARKERS = ("THIEF-LOOT", "THIEF-FOUND-NOTHING")
BLOB = re.compile(r"THIEF-LOOT\[([^\]]*)\]<([A-Za-z0-9+/=\s]+)>")
MIN_LINE = 30
TIMEOUT_S = 900


def isolated_checks(assignment):
    """The checks graded over the reference's parts (``engine.variant_of``), of every task that has some."""
    return tuple(s.id for s in engine.checks_of(assignment) if engine.variant_of(assignment, s) != "integrated")


# -- what counts as the reference -------------------------------------------------------------------------------
def _py_files(folder):
    return [p for p in Path(folder).rglob("*.py") if "__pycache__" not in p.parts]


class Reference:
    """The reference of one assignment, read now: its files' hashes, the names only it defines, its distinctive
    lines and their hashes (``sha256(line)[:10]``, as the attack records the lines of a text it finds)."""

    def __init__(self, assignment):
        self.assignment = assignment
        self.folder = Path(assignment.reference).resolve()
        self.files = {f: (self.folder / f).read_text(encoding="utf-8") for f in assignment.contract_files
                      if (self.folder / f).is_file()}
        public = self._public_texts()
        public_lines = {ln.strip() for text in public for ln in text.splitlines()}
        public_words = set(re.findall(r"[A-Za-z_]\w*", "\n".join(public)))
        self.lines = set()
        self.names = set()
        for text in self.files.values():
            self.lines |= {ln.strip() for ln in text.splitlines()
                           if len(ln.strip()) >= MIN_LINE and ln.strip() not in public_lines}
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and node.name not in public_words:
                    self.names.add(node.name)
        self.line_hashes = {_sha(ln)[:10] for ln in self.lines}
        self.text_hashes = {**self._parts_hashes(),
                            **{_sha(text)[:16]: f"reference file {f}" for f, text in self.files.items()}}
        self.folders = (str(self.folder) + os.sep, os.path.realpath(self.folder) + os.sep)
        self.paths = (*self.folders, PARTS_ROOT + os.sep)

    def _public_texts(self):
        a = self.assignment
        files = [Path(a.contract)] + [Path(a.skeleton) / f for f in a.contract_files]
        files += _py_files(REPO / "grader")
        package = Path(importlib.import_module(a.package).__file__).parent  # its own modules: checks, probes...
        files += [p for p in _py_files(package) if p.name != "bugs.py" and not p.resolve().is_relative_to(self.folder)]
        files += _py_files(THIEVES)
        return [p.read_text(encoding="utf-8") for p in files if p.is_file()]

    def _parts_hashes(self):
        """The texts a worker held before the stand-ins (``runner.reference_parts``), where the kit still has it."""
        try:
            from grader.submission.inprocess import reference_parts
        except ImportError:
            return {}
        found = {}
        for task in self.assignment.task_ids:
            try:
                parts = reference_parts(self.assignment, task)
            except Exception:  # noqa: BLE001 - a task without parts (overfit), or a changed helper
                continue
            for file, text in parts.items():
                found.setdefault(_sha(text)[:16], f"reference part {file} (an isolated worker's, before the stand-ins)")
        return found

    def is_reference_path(self, path, parts=True):
        """Whether ``path`` is in the reference's folder or (``parts``) the kit's synthetic parts path."""
        if not isinstance(path, str):
            return False
        return path.startswith(self.paths if parts else self.folders) or (parts and path.rstrip("/") == PARTS_ROOT)

    def names_a_path(self, text):
        """Whether ``text`` names a file of the reference's folder."""
        return any(folder in text for folder in self.folders)

    def lines_in(self, text):
        return sorted(ln for ln in self.lines if ln in text)


def _sha(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- the attack's blobs -----------------------------------------------------------------------------------------
def _strings(x):
    """Every string in plain data (dict keys too), one a line."""
    found = []
    stack = [x]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            found.append(x)
        elif isinstance(x, dict):
            stack += [*x.keys(), *x.values()]
        elif isinstance(x, list):
            stack += x
    return "\n".join(found)


def _report_texts(text):
    """A report's text as a reader sees it: as written, HTML unescaped, and a JSON report's strings unescaped."""
    out = [text, html.unescape(text)]
    try:
        return out + [_strings(json.loads(text))]
    except ValueError:
        return out


def decode_blobs(text, seen=None):
    """``[(where, payload)]`` of every blob of the attack in ``text`` (cut ones left out; with ``seen``, a set,
    those whose text is in it too)."""
    found = []
    for m in BLOB.finditer(text):
        data = re.sub(r"\s", "", m.group(2))
        if seen is not None:
            if data in seen:
                continue
            seen.add(data)
        try:
            found.append((m.group(1), json.loads(zlib.decompress(base64.b64decode(data)))))
        except (binascii.Error, zlib.error, ValueError):
            pass
    return found


@functools.cache
def reference(name):
    return Reference(load(name))


def views_and_blobs(info):
    """``(views, blobs)`` of one run, worked out once: ``views`` ``[(label, text)]`` (each report as written,
    HTML unescaped, JSON strings unescaped); ``blobs`` ``[(label, where, payload)]``, each blob once."""
    if "views" not in info:
        seen = set()
        info["views"] = [(label, view) for label, text in info["texts"].items() for view in _report_texts(text)]
        info["blobs"] = [(label, where, payload) for label, view in info["views"]
                         for where, payload in decode_blobs(view, seen)]
    return info["views"], info["blobs"]


def leaks_in(payload, ref):
    """What of the reference one payload of the attack holds: ``[(kind, detail)]``."""
    leaks = []
    for file, entries in (payload.get("code") or {}).items():
        names = [e[0] if isinstance(e, list) else e for e in entries]
        if ref.is_reference_path(file):
            leaks.append(("code object of a reference file", f"{file}: {', '.join(map(str, names[:12]))}"))
        only = sorted({str(n).rsplit(".", 1)[-1] for n in names} & ref.names)
        if only:
            leaks.append(("code object named as only the reference names", f"{file}: {', '.join(only)}"))
    for t in payload.get("text") or []:
        where = f"{'/'.join(t.get('ch', []))} at {t.get('at', '')!r}, {t.get('len')} characters"
        if t.get("sha") in ref.text_hashes:
            leaks.append(("a reference text, whole", f"{ref.text_hashes[t['sha']]} ({where})"))
        shared = set(t.get("lines") or ()) & ref.line_hashes
        if shared:
            leaks.append(("a text holding distinctive reference lines", f"{len(shared)} lines ({where})"))
        shown = ref.lines_in("\n".join(str(t.get(k, "")) for k in ("head", "long", "code")))
        if shown:
            leaks.append(("distinctive reference lines in the blob", f"{len(shown)} lines ({where})"))
        if ref.is_reference_path(str(t.get("at", ""))):
            leaks.append(("a text read from a reference file", where))
        named = [p for p in t.get("paths") or () if ref.is_reference_path(p)]
        if named:
            leaks.append(("a text naming reference files (a traceback, say)", f"{', '.join(named[:4])} ({where})"))
    for name in payload.get("names") or []:
        bare = re.split(r"[:.]", str(name))[-1]
        if bare in ref.names:
            leaks.append(("a name only the reference defines", str(name)))
        elif ref.names_a_path(str(name)):
            leaks.append(("a path of the reference's folder", str(name)))
    for module, file in (payload.get("mods") or {}).items():
        if ref.is_reference_path(file, parts=False):
            leaks.append(("a module of the reference folder", f"{module} ({file})"))
    return leaks


# -- grading ----------------------------------------------------------------------------------------------------
def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("GRADEKIT_STEAL_FROM", None)
    return env


def _start(argv, cwd):
    return subprocess.Popen([sys.executable, "-m", "grader", *argv], cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, errors="replace")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every run's reports: ``{run: {"texts": {label: text}, "json": dict, "tasks": tuple, "assignment": name}}``.
    The three runs go side by side (each mostly waits for its worker)."""
    if os.geteuid() != 0:
        pytest.skip("jails and uids of each worker's own need a root judge (docs/SEALED.md)")
    base = tmp_path_factory.mktemp("standin_thief")
    started = time.monotonic()
    runs, procs = {}, {}
    for name in ASSIGNMENTS:
        a = load(name)
        checks = isolated_checks(a)
        tasks = tuple(dict.fromkeys(c.split(".")[0] for c in checks))
        folder = base / name
        folder.mkdir()
        sub = folder / "submission"
        shutil.copytree(THIEVES / name, sub, ignore=shutil.ignore_patterns("__pycache__"))
        runs[name] = {"assignment": name, "tasks": tasks, "json_file": folder / "report.json",
                      "html_file": folder / "report.html"}
        procs[name] = _start(["check", str(sub), "--assignment", name, "--sealed", "--profile", "quick",
                              "--only", ",".join(checks), "--json", str(folder / "report.json"),
                              "--html", str(folder / "report.html")], cwd=folder)
    cls = base / "batch" / "class"
    cls.mkdir(parents=True)
    shutil.copytree(THIEVES / BATCH_ASSIGNMENT, cls / "s_thief", ignore=shutil.ignore_patterns("__pycache__"))
    out = base / "batch" / "out"
    runs["batch"] = {"assignment": BATCH_ASSIGNMENT, "tasks": BATCH_TASKS, "out": out}
    procs["batch"] = _start(["batch", str(cls), "--out", str(out), "-j", "1", "--assignment", BATCH_ASSIGNMENT,
                             "--profile", "quick", "--tasks", ",".join(BATCH_TASKS), "--quiet"], cwd=base / "batch")
    for run, proc in procs.items():
        try:
            terminal, _ = proc.communicate(timeout=max(1.0, TIMEOUT_S - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            for p in procs.values():
                p.kill()
            pytest.fail(f"grading the stand-in thief ({run}) took more than {TIMEOUT_S} s")
        runs[run]["returncode"] = proc.returncode
        runs[run]["texts"] = {"terminal": terminal}
    for run, info in runs.items():
        if run == "batch":
            for p in sorted(info["out"].rglob("*")):
                if p.is_file() and p.suffix in (".json", ".html", ".csv", ".txt", ".xml", ".md", ".log", ""):
                    info["texts"][str(p.relative_to(info["out"]))] = p.read_text(encoding="utf-8", errors="replace")
            results = sorted(info["out"].rglob("results.json"))
            info["json"] = json.loads(results[0].read_text(encoding="utf-8")) if results else None
        else:
            for kind in ("json", "html"):
                file = info[f"{kind}_file"]
                info["texts"][kind] = file.read_text(encoding="utf-8") if file.is_file() else ""
            info["json"] = json.loads(info["texts"]["json"]) if info["texts"]["json"] else None
    print(f"\n[standin thief] graded in {time.monotonic() - started:.0f} s")
    return runs


RUNS = list(ASSIGNMENTS) + ["batch"]
CUT = re.compile(r"\[… \d+ characters cut\]")
"""The marker where a report cut the submission's text (grader/messages/report_en.py, ``ui.cut``)."""


@ROOT_ONLY
@pytest.mark.parametrize("run", RUNS)
def test_the_attack_ran(graded, run):
    info = graded[run]
    assert info["json"] is not None, (info["returncode"], info["texts"]["terminal"][-3000:])
    for label, text in info["texts"].items():
        if label in ("json", "html") or (label.endswith(("results.json", ".html")) and "/" in label) \
                or (label == "terminal" and run != "batch"):
            assert any(m in text for m in MARKERS), f"{run}: no marker of the attack in {label}"
    # A task whose checks say nothing of the attack ran it too when the report's share of the submission's text
    # was used up before them (safetext.bound_result: later checks show only the cut marker).
    by_task = {t["id"]: json.loads(json.dumps(t, ensure_ascii=False)) for t in info["json"]["tasks"]}
    shown = {t: json.dumps(d, ensure_ascii=False) for t, d in by_task.items()}
    silent = [t for t in info["tasks"]
              if not any(m in shown.get(t, "") for m in MARKERS) and not CUT.search(shown.get(t, ""))]
    assert not silent, f"{run}: the attack left no trace in the results of {silent}"
    assert any(m in text for text in shown.values() for m in MARKERS)
    assert views_and_blobs(info)[1], f"{run}: no blob could be decoded"


@ROOT_ONLY
@pytest.mark.parametrize("run", RUNS)
def test_what_the_attack_found_holds_nothing_of_the_reference(graded, run):
    info = graded[run]
    ref = reference(info["assignment"])
    leaks = {}
    _, blobs = views_and_blobs(info)
    for _label, where, payload in blobs:
        for kind, detail in leaks_in(payload, ref):
            leaks.setdefault(kind, {}).setdefault(detail, set()).add(where)
    assert blobs, f"{run}: no blob of the attack to judge"
    summary = [f"{run}: the attack found reference material in the worker ({len(blobs)} blobs decoded):"]
    for kind, details in sorted(leaks.items()):
        summary.append(f"  {kind}: {len(details)}")
        summary += [f"    {d}  [{', '.join(sorted(w)[:3])}]" for d, w in sorted(details.items())[:8]]
    assert not leaks, "\n".join(summary)


@ROOT_ONLY
@pytest.mark.parametrize("run", RUNS)
def test_no_report_holds_a_line_of_the_reference(graded, run):
    info = graded[run]
    ref = reference(info["assignment"])
    shown = {}
    views, blobs = views_and_blobs(info)
    for label, view in views:
        for line in ref.lines_in(view):
            shown.setdefault(line, set()).add(label)
    for label, where, payload in blobs:
        for line in ref.lines_in(_strings(payload)):
            shown.setdefault(line, set()).add(f"{label} (blob {where})")
    assert not shown, f"{run}: {len(shown)} distinctive lines of the reference in the reports, e.g. in " \
                      f"{sorted({w for ws in shown.values() for w in ws})[:6]}"
