"""Student kits: the self-check handed to students without the answers.

A kit holds the ``grader`` package, one assignment's package without its reference (and without its catalogue of
known mistakes, which is made of the reference's lines), the skeleton, the contract page and an answer bank
(``submission.bank``) in the package folder (``assignment.KIT_BANK``). Where an assignment's reference folder is
absent and that bank is present, every grading uses the bank (``Assignment.kit_bank``, ``api.check``); the doors
that need the reference say so (``Assignment.require_reference``). ``build`` writes it twice: a wheel (PEP 427,
written here with ``zipfile`` and ``hashlib``: no build dependency) and a plain zip of the same files.

``record`` grades chosen submission folders in process, with every answer of the reference going through one
``ReferenceCache``, and keeps those answers as a ``Bank``; ``gradekit bank build`` records over the reference, the
skeleton and each catalogued mistake (``catalogue_folders``), in the profiles asked for.

``Fingerprint`` is what no kit may hold: every reference's functions and classes as normalised ASTs (docstrings
removed; as written, and with their local names renumbered) and its distinctive lines (stripped, at least
``MIN_LINE`` characters, found in no file a kit may carry). ``scan`` looks for them in every member of a wheel or
zip (compressed members and nested archives included) and refuses compiled Python and pickled data
(``gradekit kit scan``); ``build`` scans what it wrote and keeps nothing that fails.
"""

import ast
import base64
import csv
import dataclasses
import hashlib
import importlib.util
import io
import json
import lzma
import math
import pickletools
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import grader
from grader.assignment import KIT_BANK, KIT_DOCS, KIT_MANIFEST, builtin_names, load
from grader.submission import replay, wire
from grader.submission.bank import Bank, Prints
from grader.submission.refcache import ReferenceCache

DISTRIBUTION = "gradekit"
WHEEL_TAG = "py3-none-any"
SKIP_PARTS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
REFUSED_SUFFIXES = (".pyc", ".pyo", ".pt", ".pth", ".pt2", ".pkl", ".pickle", ".ptl")
"""Compiled Python, pickles, torch's saved models and weights, TorchScript and exported programs: never in a kit, by
name alone (inside a saved model's archive, its pickles are found by theirs)."""
MIN_LINE = 25
"""The shortest stripped line of a reference that counts as distinctive."""
MIN_NODES = 20
"""The smallest function or class (AST nodes, docstrings removed) compared: smaller ones say nothing of whose they
are (``def forward(self, x): return self.net(x)``)."""
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
"""Every member's time: the same files always give the same archives."""
NESTED_DEPTH = 3
"""How deep ``scan`` opens archives inside archives."""
PACKED_MAX = 1 << 30
"""The most bytes a compressed member is unpacked to for ``scan``."""


def record(
    assignment,
    paths=None,
    *,
    profiles=("quick", "full"),
    tasks=None,
    progress=None,
    diagnoses=True,
    mending_bytes=None,
):
    """A ``Bank`` of the answers the reference gives when each submission folder of ``paths`` is graded in each
    of ``profiles`` (in process: these are the instructor's own folders; ``None``: the reference, the skeleton and
    the catalogue's mistakes, ``catalogue_folders``, written into a temporary folder for the length of it).
    ``progress(i, n, path, profile)`` is told before each grading. With ``diagnoses``, each grading diagnoses its
    failing checks, and the bank holds the reference's answers to what those diagnoses asked and the fingerprints
    of the mutants' (``Bank.prints``: ``grader.bugs.prints``): the kit then names the mistakes it can.
    ``mending_bytes``: what the record of a whole task over one mending task's parts may add (default
    ``MENDING_BYTES``)."""
    if paths is None:
        with tempfile.TemporaryDirectory(prefix="gradekit-bank-") as work:
            return record(
                assignment,
                catalogue_folders(assignment, work),
                profiles=profiles,
                tasks=tasks,
                progress=progress,
                diagnoses=diagnoses,
                mending_bytes=mending_bytes,
            )
    from grader import api
    from grader.bugs.catalogue import Catalogue
    from grader.checks.base import forget_reference_memos

    # what earlier gradings of this process kept of the reference's answers would answer here unheard
    forget_reference_memos()
    cache = ReferenceCache(max_bytes=1 << 62)
    outline = [[b.id, b.task, b.file, len(b.spellings())] for b in Catalogue(assignment).bugs]
    prints = Prints(outline=outline) if diagnoses else None
    jobs = [(Path(p), profile) for p in paths for profile in profiles]
    for i, (path, profile) in enumerate(jobs):
        if progress is not None:
            progress(i, len(jobs), path, profile)
        api.check(
            path=path,
            assignment=assignment,
            profile=profile,
            tasks=tasks,
            diagnose=diagnoses,
            reference_cache=cache,
            prints=prints,
        )
    # The reference's own composites over its recorded parts (functions and classes): the kit grades a task over
    # those where a task beneath fails (``submission.replay``).
    # A task with no code of its own (``overfit``) is graded, where tasks beneath fail, over the parts of the task
    # that mends them (``engine._replayed_whole``): the reference's whole over each such task's parts, each kept only
    # where its record fits ``mending_bytes`` (a training run over a part records every step of it: megabytes); by
    # default none is recorded.
    log = replay.Log()
    recorded = [t for t in replay.replayable_tasks(assignment) if not tasks or t in tasks]
    passes: list[tuple[dict, list, int | None]] = [({}, recorded, None)] if recorded else []
    most = MENDING_BYTES if mending_bytes is None else mending_bytes
    for whole, menders in replay.mending_tasks(assignment).items() if most > 0 else ():
        if not tasks or whole in tasks:
            passes += [({whole: m}, [whole], most) for m in menders]
    whole_runs = []
    for profile in profiles:
        for isolate_as, only, budget in passes:
            into = log if budget is None else replay.Log()
            api.check(
                path=assignment.reference,
                assignment=assignment,
                profile=profile,
                tasks=tasks,
                only=tuple(only),
                diagnose=False,
                reference_cache=cache,
                parts_log=into,
                isolate_as=isolate_as,
            )
            if budget is not None:
                ((whole, mender),) = isolate_as.items()
                size = into.nbytes()
                kept = size <= budget
                whole_runs.append({"task": whole, "over": mender, "profile": profile, "bytes": size, "kept": kept})
                if kept:
                    log.merge(into)
    meta = {
        "assignment": assignment.name,
        "profiles": list(profiles),
        "tasks": list(tasks or ()),
        "gradings": len(jobs),
    }
    if whole_runs:  # what a limit given kept and left out (``whole_runs_said``)
        meta["whole_runs"] = {"limit": most, "runs": whole_runs}
    bank = Bank.of_cache(cache, meta, prints)
    if log.count:
        bank.answers[replay.TABLE_DIGEST] = (wire.encode(log.to_data()), 0.0)
    return bank


def whole_runs_said(meta, lang=None):
    """Lines saying which of the reference's whole runs over mending parts a bank recorded under a limit (``record``'s
    ``mending_bytes``, the commands' ``--whole-run-mb``) kept and which it left out, each with its size; none for a bank
    that recorded no such run."""
    from grader.messages import text

    found = meta.get("whole_runs") if isinstance(meta, dict) else None
    if not isinstance(found, dict):
        return []
    limit = _mb(found.get("limit"))
    lines = []
    for run in found.get("runs") or ():
        if not run.get("bytes"):  # a run that recorded nothing: neither kept nor left out
            key = "kit.cli.whole_empty"
        else:
            key = "kit.cli.whole_kept" if run.get("kept") else "kit.cli.whole_left"
        lines.append(
            text(
                key,
                lang,
                task=run.get("task"),
                over=run.get("over"),
                profile=run.get("profile"),
                size=_mb(run.get("bytes")),
                limit=limit,
                need=f"{math.ceil((run.get('bytes') or 0) / 1e5) / 10:.1f}",  # the MB that keeps it, rounded up
            )
        )
    return lines


def _mb(nbytes):
    return f"{(nbytes or 0) / 1e6:.1f}"


MENDING_BYTES = 0
"""Bytes of tensors a record of the reference's whole over one mending task's parts may add to a bank
(``kit.record``); a bigger one is left out, and the kit marks that task's checks blocked where it would need it.
None by default: each of the built-in assignments' overfitting runs records 20 to 50 MB over a part, and recording
them costs a bank half a minute."""

SPELLING = "~"
"""Between a mistake's id and a spelling's number in the name of a folder ``catalogue_folders`` writes."""


def catalogue_folders(assignment, dest):
    """Folders to record a bank over: the reference, the skeleton, each catalogued mistake, then each of its other
    spellings (``Bug.spellings``: its parts and variants, named ``<bug id>~<k>``) that writes a file unlike every
    folder's before it (written into ``dest``), in that order. A mistake is recorded in each way it is written, so
    that a kit finds the fingerprints of the spelling a student's code makes on that code's own failing examples."""
    from grader.bugs.catalogue import Catalogue, apply

    folders = [Path(assignment.reference), Path(assignment.skeleton)]
    catalogue = Catalogue(assignment)
    for bug in catalogue.bugs:
        folders.append(catalogue.write_mutant(bug, Path(dest) / bug.id))
    sources = {f: (Path(assignment.reference) / f).read_text(encoding="utf-8") for f in assignment.contract_files}
    written = {(b.file, apply(b, sources[b.file])) for b in catalogue.bugs}
    for bug in catalogue.bugs:
        for k, edits in enumerate(bug.spellings()[1:], start=1):
            try:
                text = apply(bug, sources[bug.file], edits)
            except ValueError:  # a spelling whose edits do not apply to this reference
                continue
            if (bug.file, text) in written or text == sources[bug.file]:
                continue
            written.add((bug.file, text))
            folders.append(catalogue.write_mutant(bug, Path(dest) / f"{bug.id}{SPELLING}{k}", edits))
    return folders


# -- what a kit holds ----------------------------------------------------------------------------------------------


def folder_files(base, arc, leave_out=()):
    """``{name in the kit: path}`` of every file under ``base`` as ``arc/...``: caches, hidden entries, compiled
    Python and the folders or files of ``leave_out`` left out."""
    base = Path(base).resolve()
    out = {}
    skipped = [Path(p).resolve() for p in leave_out]
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base)
        if not path.is_file() or SKIP_PARTS.intersection(rel.parts) or any(p.startswith(".") for p in rel.parts):
            continue
        if path.suffix in (".pyc", ".pyo") or any(path == s or s in path.parents for s in skipped):
            continue
        out[f"{arc}/{rel.as_posix()}" if arc else rel.as_posix()] = path
    return out


def _module_path(name):
    """The file (or, for a package, the folder) of module ``name``, found without importing it; ``None``."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    origin = Path(spec.origin).resolve()
    return origin.parent if origin.name == "__init__.py" else origin


def shipped_files(assignment):
    """``{name in the kit: path}``: what a student kit of ``assignment`` carries from this source tree (the bank and
    the kit's manifest come on top, ``build``). The ``grader`` package; the assignment's package under its import
    path, with the ``__init__.py`` of each package above it, without its reference and its catalogue of known
    mistakes (edits of the reference's lines); its skeleton and data folders where they lie outside the package,
    as top-level folders; the contract page in the package's ``KIT_DOCS`` folder."""
    spec = assignment.package.partition(":")[0]
    if not spec or Path(assignment.package).is_absolute():
        raise ValueError(
            f"assignment {assignment.name!r} was loaded from a folder ({assignment.package}); a kit is built for "
            f"an assignment importable by name (a built-in one or an import path)"
        )
    folder = assignment.folder
    parts = spec.split(".")
    arc = "/".join(parts)
    leave_out = [assignment.reference, folder / KIT_BANK]
    bugs = _module_path(assignment.bugs) if assignment.bugs else None
    if bugs is not None:
        leave_out.append(bugs)
    files = folder_files(
        Path(grader.__file__).parent, "grader", leave_out=[Path(grader.__file__).with_name(KIT_MANIFEST)]
    )
    files.update(folder_files(folder, arc, leave_out=leave_out))
    for i in range(1, len(parts)):
        init = _module_path(".".join(parts[:i]))
        if init is not None and (init / "__init__.py").is_file():
            files["/".join(parts[:i]) + "/__init__.py"] = init / "__init__.py"
    for extra in (assignment.skeleton, assignment.data):
        extra = Path(extra).resolve() if extra is not None else None
        if extra is not None and extra.is_dir() and folder not in (extra, *extra.parents):
            files.update(folder_files(extra, extra.name))
    if assignment.contract is not None and Path(assignment.contract).is_file():
        files[f"{arc}/{KIT_DOCS}/{Path(assignment.contract).name}"] = Path(assignment.contract)
    return dict(sorted(files.items()))


# -- the wheel and the zip -----------------------------------------------------------------------------------------


@dataclass
class Project:
    """What the wheel's metadata says, from the source tree's pyproject.toml (else the installed distribution's)."""

    name: str
    version: str
    summary: str = ""
    requires_python: str = ""
    license: str = ""
    dependencies: list = field(default_factory=list)
    extras: dict = field(default_factory=dict)
    entry_points: dict = field(default_factory=dict)
    """``{group: {name: "module:attr"}}``, console scripts under ``console_scripts``."""


def project():
    """The kit's own ``Project``."""
    pyproject = Path(grader.__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():
        from grader.config import _tomllib

        data = _tomllib().loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if data.get("name") == DISTRIBUTION:
            license_ = data.get("license", "")
            points = {"console_scripts": dict(data.get("scripts", {}))}
            points.update({g: dict(v) for g, v in data.get("entry-points", {}).items()})
            return Project(
                name=data["name"],
                version=data.get("version", grader.__version__),
                summary=data.get("description", ""),
                requires_python=data.get("requires-python", ""),
                license=license_.get("text", "") if isinstance(license_, dict) else str(license_),
                dependencies=list(data.get("dependencies", [])),
                extras={k: list(v) for k, v in data.get("optional-dependencies", {}).items()},
                entry_points={g: v for g, v in points.items() if v},
            )
    from importlib import metadata

    dist = metadata.distribution(DISTRIBUTION)
    meta = dist.metadata
    found = Project(
        name=DISTRIBUTION,
        version=dist.version.split("+", 1)[0],
        summary=meta["Summary"] or "",
        requires_python=meta["Requires-Python"] or "",
        license=meta["License"] or "",
    )
    for requirement in dist.requires or []:
        spec, _, marker = requirement.partition(";")
        extra = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
        if extra:
            found.extras.setdefault(extra[1], []).append(spec.strip())
        else:
            found.dependencies.append(requirement)
    for point in dist.entry_points:
        found.entry_points.setdefault(point.group, {})[point.name] = point.value
    return found


def pinned(proj):
    """``proj`` with Hypothesis pinned to the version installed here: it draws the examples, and a kit grades only
    the examples its bank was recorded on (another version may draw others)."""
    from importlib import metadata

    import hypothesis

    version = getattr(hypothesis, "__version__", None) or metadata.version("hypothesis")

    def pin(requirement):
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if name and re.sub(r"[-_.]+", "-", name[1]).lower() == "hypothesis":
            marker = requirement.partition(";")[2].strip()
            return f"hypothesis=={version}" + (f"; {marker}" if marker else "")
        return requirement

    return dataclasses.replace(proj, dependencies=[pin(r) for r in proj.dependencies])


def kit_version(version, assignment):
    """``0.1.0+decoder.lm``: the kit's version, its local label naming the assignment (PEP 440)."""
    label = re.sub(r"[^a-z0-9]+", ".", assignment.name.lower()).strip(".")
    return f"{version}+{label}" if label else version


def wheel_name(proj, version):
    """The file name of the kit's wheel (PEP 427)."""
    return f"{_distribution(proj)}-{version}-{WHEEL_TAG}.whl"


def _distribution(proj):
    return re.sub(r"[^A-Za-z0-9.]+", "_", proj.name)


def zip_folder(assignment):
    """The one folder a kit's plain zip holds everything under: ``gradekit-<assignment>-kit``."""
    return f"{DISTRIBUTION}-{assignment.name}-kit"


def readme(assignment, proj, version, files):
    """What a student reads first, in every language of the catalogue: what the kit is, how to install it, start
    (``gradekit start``), check and watch, the notebook route, and that the final grade is the full kit's. The
    wheel's description and the zip's ``README.md``. Made from the assignment: its name and title, its first
    task with a file of its own (the notebook's example), where the kit carries its skeleton (``files``:
    ``shipped_files``)."""
    from grader.messages import LANGS, text

    skeleton = Path(assignment.skeleton).resolve()
    stubs = next((n.rsplit("/", 1)[0] for n, p in files.items() if p.parent == skeleton), "")
    task = next((t.id for t in assignment.tasks if t.file), assignment.task_ids[0])
    return "\n\n".join(
        text(
            "kit.readme",
            lang,
            title=assignment.title.get(lang) or assignment.title.get("en") or assignment.name,
            assignment=assignment.name,
            version=version,
            wheel=wheel_name(proj, version),
            zip=f"{zip_folder(assignment)}.zip",
            folder=zip_folder(assignment),
            skeleton=stubs + "/",
            task=task,
        )
        for lang in LANGS
    )


def _metadata(proj, version, assignment, files):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {proj.name}",
        f"Version: {version}",
        f"Summary: {proj.summary} (a student kit: {assignment.name}, answers recorded, no reference)",
    ]
    if proj.requires_python:
        lines.append(f"Requires-Python: {proj.requires_python}")
    if proj.license:
        lines.append(f"License: {proj.license}")
    lines += [f"Requires-Dist: {d}" for d in proj.dependencies]
    for extra, requirements in proj.extras.items():
        lines.append(f"Provides-Extra: {extra}")
        for requirement in requirements:
            spec, _, marker = requirement.partition(";")
            condition = f'extra == "{extra}"'
            marker = f"({marker.strip()}) and {condition}" if marker.strip() else condition
            lines.append(f"Requires-Dist: {spec.strip()}; {marker}")
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme(assignment, proj, version, files) + "\n"


def _entry_points(proj):
    return "".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items()) + "\n"
        for group, points in proj.entry_points.items()
    )


def _member(name, data):
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o100644 << 16
    return info, data


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(contents, out_dir, proj, version, assignment, files):
    """The wheel of ``contents`` (``{name: bytes}``) in ``out_dir``: its ``Path`` (PEP 427: the files, then
    ``<name>-<version>.dist-info/`` with METADATA, WHEEL, entry_points.txt, top_level.txt and RECORD, which lists
    every file with its sha256 and size). ``files``: where the kit's files came from (``shipped_files``)."""
    info = f"{_distribution(proj)}-{version}.dist-info"
    top = sorted({member.split("/", 1)[0] for member in contents if "/" in member})
    meta = {
        f"{info}/METADATA": _metadata(proj, version, assignment, files).encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: gradekit kit build ({grader.__version__})\n"
            f"Root-Is-Purelib: true\nTag: {WHEEL_TAG}\n"
        ).encode(),
        f"{info}/top_level.txt": "".join(f"{t}\n" for t in top).encode(),
    }
    if proj.entry_points:
        meta[f"{info}/entry_points.txt"] = _entry_points(proj).encode()
    members = {**contents, **meta}
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for member, data in members.items():
        writer.writerow([member, _digest(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    members[f"{info}/RECORD"] = record.getvalue().encode()
    path = Path(out_dir) / wheel_name(proj, version)
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in members.items():
            zf.writestr(*_member(member, data))
    return path


def write_zip(contents, out_dir, assignment, readme_text=None):
    """A plain zip of ``contents`` under one folder, ``gradekit-<assignment>-kit/`` (``zip_folder``): unzipped,
    ``python -m grader`` runs from that folder. ``readme_text``: its ``README.md`` (the wheel's description,
    ``readme``), first in the zip."""
    folder = zip_folder(assignment)
    path = Path(out_dir) / f"{folder}.zip"
    members = dict(contents)
    if readme_text is not None:
        members = {"README.md": (readme_text + "\n").encode(), **members}
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in members.items():
            zf.writestr(*_member(f"{folder}/{member}", data))
    return path


@dataclass
class Built:
    """What ``build`` wrote."""

    wheel: Path
    zip: Path
    files: int
    """Files of the kit (the wheel's metadata left out)."""
    bank: Bank


class KitRefused(ValueError):
    """The scan found what a kit must not carry in what ``build`` wrote (nothing is kept): ``findings``."""

    def __init__(self, findings):
        super().__init__("; ".join(f.say("en") for f in findings[:5]))
        self.findings = findings


def build(
    assignment,
    out,
    *,
    profiles=("quick", "full"),
    bank=None,
    folders=None,
    tasks=None,
    progress=None,
    secrets=(),
    mending_bytes=None,
):
    """Write ``assignment``'s student kit into folder ``out``: a wheel and a plain zip of the same files; ``Built``.

    The answer bank: ``bank`` (a file made by ``gradekit bank build`` for this assignment, whatever its profiles),
    else recorded now over ``folders`` (default: ``catalogue_folders``) in ``profiles``, for ``tasks`` (default:
    all; the kit grades the bank's tasks unless told others); ``progress(i, n, path, profile)`` before each
    grading. What was written is scanned (``scan``): a finding
    removes it and raises ``KitRefused``; so does a member that holds one of ``secrets`` (bytes: the course secret of
    the final grade's held-back examples, ``CourseConfig.held_back_secret``, which the kit must never ship), found
    in the members before they are written. ``mending_bytes``: as for ``record``. ``KitError`` without the reference;
    ``ValueError`` for a bank of another assignment or an assignment loaded from a folder."""
    assignment = load(assignment)
    assignment.require_reference("gradekit kit build")
    files = shipped_files(assignment)
    if bank is not None:
        recorded = Bank.load(bank)
        if recorded.meta.get("assignment") != assignment.name:
            raise ValueError(
                f"{bank}: an answer bank of assignment {recorded.meta.get('assignment')!r}; expected one of "
                f"{assignment.name!r}"
            )
    else:
        recorded = record(
            assignment, folders, profiles=profiles, tasks=tasks, progress=progress, mending_bytes=mending_bytes
        )
    arc = "/".join(assignment.package.partition(":")[0].split("."))
    contents = {name: path.read_bytes() for name, path in files.items()}
    with tempfile.TemporaryDirectory(prefix="gradekit-kit-") as work:
        contents[f"{arc}/{KIT_BANK}"] = recorded.save(Path(work) / KIT_BANK, compress=False).read_bytes()
    builtin = assignment.package == f"assignments.{assignment.name}"  # named as users name it: the default
    manifest = {
        "assignment": assignment.name if builtin else assignment.package,
        "name": assignment.name,
        "profiles": recorded.meta.get("profiles"),
    }
    contents[f"grader/{KIT_MANIFEST}"] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    contents = dict(sorted(contents.items()))
    leaks = [Finding("secret", name) for name, data in contents.items() if any(s and s in data for s in secrets)]
    if leaks:
        raise KitRefused(leaks)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    proj = pinned(project())
    version = kit_version(proj.version, assignment)
    wheel = write_wheel(contents, out, proj, version, assignment, files)
    plain = write_zip(contents, out, assignment, readme(assignment, proj, version, files))
    findings = Fingerprint.of([assignment]).scan_archives([wheel, plain])[1]
    if findings:
        wheel.unlink()
        plain.unlink()
        raise KitRefused(findings)
    return Built(wheel=wheel, zip=plain, files=len(contents), bank=recorded)


# -- the scan ------------------------------------------------------------------------------------------------------

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Finding:
    """Something a kit must not carry: ``kind`` (``kit.finding.<kind>`` says it), the member (``kit.whl!a/b.py``,
    one ``!`` per archive opened) and the sentence's parameters."""

    kind: str
    member: str
    params: dict = field(default_factory=dict, hash=False)

    def say(self, lang="en"):
        from grader.messages import text

        return text(f"kit.finding.{self.kind}", lang, member=self.member, **self.params)


def _without_docstrings(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, *_DEFS)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


def _definitions(tree):
    """``(qualified name, node)`` of every function and class of ``tree``, at any depth."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFS):
                found.append((prefix + child.name, child))
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


_BINDS = {ast.Name: "id", ast.arg: "arg", ast.ExceptHandler: "name", ast.alias: "asname"}
"""The field that names what a node binds or uses (a definition's is ``name``); a keyword's ``arg`` is not one."""


def _form(node, names):
    """``node`` as text, as ``ast.dump`` writes it less the field names, each name it binds or uses that ``names``
    maps replaced by its number."""
    if isinstance(node, list):
        return "[" + ",".join(_form(n, names) for n in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    renamed = "name" if isinstance(node, _DEFS) else _BINDS.get(type(node))
    parts = []
    for field_name, value in ast.iter_fields(node):
        if field_name == renamed and isinstance(value, str):
            value = names.get(value, value)
        parts.append(_form(value, names))
    return f"{type(node).__name__}({','.join(parts)})"


def _renumbering(node):
    """``{name: number}`` of every name definition ``node`` binds (parameters, locals, loop and comprehension
    variables, nested definitions, exception and import aliases) in the order they come, the definition's own
    name as ``_``: its form with these is the same for the same code with other local names."""
    bound = {node.name: "_"}
    for sub in ast.walk(node):
        name = None
        if sub is node:
            continue
        if isinstance(sub, ast.arg):
            name = sub.arg
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            name = sub.id
        elif isinstance(sub, (ast.ExceptHandler, *_DEFS)):
            name = sub.name
        elif isinstance(sub, ast.alias):
            name = sub.asname
        if name:
            bound.setdefault(name, f"_{len(bound)}")
    return bound


def _form_digest(form):
    return hashlib.blake2b(form.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_FORMS: dict = {}
"""``digest of a source -> its forms`` (``forms``): a kit's own files are the same in every kit and among the files
the fingerprint leaves out, so a process that builds or scans several kits reads each of them once."""
FORMS_KEPT = 4096
"""Sources whose forms ``_FORMS`` keeps (the oldest goes first)."""


def forms(source):
    """``((qualified name, form as written, form renumbered, size), ...)`` of every function and class of ``source``
    (Python text), docstrings removed, each form as a digest of its text (``_form``: equal digests are equal code);
    ``SyntaxError`` when it is not Python."""
    key = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=32).digest()
    found = _FORMS.get(key)
    if found is None:
        tree = _without_docstrings(ast.parse(source))
        found = tuple(
            (
                name,
                _form_digest(_form(node, {})),
                _form_digest(_form(node, _renumbering(node))),
                sum(1 for _ in ast.walk(node)),
            )
            for name, node in _definitions(tree)
        )
        if len(_FORMS) >= FORMS_KEPT:
            del _FORMS[next(iter(_FORMS))]
        _FORMS[key] = found
    return found


def _lines(text):
    return {line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_LINE}


def _text(data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _is_pickle(data):
    """Whether ``data`` is a pickle stream: protocol 2 and later by their first bytes, 0 and 1 by being read as one
    to its STOP at the very end."""
    if len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] <= 5:
        return True
    if not data or data[0] not in b"()]}cKJMNIFLSVX" or len(data) > 1 << 24:
        return False
    try:
        last = None
        for op, _arg, pos in pickletools.genops(io.BytesIO(data)):
            last = (op.name, pos)
    except Exception:  # noqa: BLE001 - any failure to read it as a pickle means it is not one
        return False
    return last is not None and last[0] == "STOP" and last[1] == len(data.rstrip()) - 1


def _is_compiled(data):
    """Whether ``data`` is a compiled Python module (``.pyc``: a CPython 3 magic number, then ``\\r\\n``)."""
    return len(data) >= 16 and data[2:4] == b"\r\n" and 3000 <= int.from_bytes(data[:2], "little") < 4000


def _unpacked(data):
    """The contents of an xz or lzma member (an answer bank), else ``None``."""
    if not data.startswith((b"\xfd7zXZ\x00", b"\x5d\x00\x00")):
        return None
    try:
        return lzma.LZMADecompressor().decompress(data, max_length=PACKED_MAX)
    except lzma.LZMAError:
        return None


class Fingerprint:
    """What no kit may hold: the references' definitions (``same``: form as written -> where; ``renamed``: form
    renumbered -> where) and distinctive lines (line -> where), each left out where a file a kit may carry has it."""

    def __init__(self, same, renamed, lines):
        self.same = same
        self.renamed = renamed
        self.lines = lines

    @classmethod
    def of(cls, assignments=()):
        """The fingerprint of the references of ``assignments`` and of every built-in assignment (a kit carries no
        other assignment's reference either); each must hold its reference (``KitError``)."""
        scope = {}
        for a in [*assignments, *builtin_names()]:
            a = load(a)
            if a.package not in scope:
                scope[a.package] = a
        for a in scope.values():
            a.require_reference("gradekit kit scan")
        same: dict[str, str] = {}
        renamed: dict[str, str] = {}
        lines: dict[str, str] = {}
        for a in scope.values():
            root = Path(a.reference).resolve()
            for path in sorted(root.rglob("*.py")):
                if SKIP_PARTS.intersection(path.relative_to(root).parts):
                    continue
                where = f"{root.name}/{path.relative_to(root).as_posix()}"
                source = path.read_text(encoding="utf-8")
                for name, as_written, renumbered, size in forms(source):
                    if size >= MIN_NODES:
                        same.setdefault(as_written, f"{where}:{name}")
                        renamed.setdefault(renumbered, f"{where}:{name}")
                for line in _lines(source):
                    lines.setdefault(line, where)
        # What a kit may carry (any assignment's kit) is not evidence, whatever it shares with a reference.
        allowed, texts = set(), []
        for a in scope.values():
            for name, path in shipped_files(a).items():
                if name in allowed:
                    continue
                allowed.add(name)
                text = _text(path.read_bytes())
                if text is None:
                    continue
                texts.append(text)
                if path.suffix == ".py":
                    for _name, as_written, renumbered, _size in forms(text):
                        same.pop(as_written, None)
                        renamed.pop(renumbered, None)
        carried = "\n".join(texts)
        lines = {line: where for line, where in lines.items() if line not in carried}
        return cls(same, renamed, lines)

    def scan_bytes(self, member, data, depth=0):
        """The findings in one member of a kit (its name ``member``, its bytes ``data``)."""
        found = []
        suffix = Path(member.rsplit("!", 1)[-1]).suffix.lower()
        if suffix in REFUSED_SUFFIXES:
            found.append(Finding("suffix", member, {"suffix": suffix}))
        if _is_compiled(data):
            found.append(Finding("compiled", member))
        if _is_pickle(data):
            found.append(Finding("pickle", member))
        if data.startswith(b"PK\x03\x04") and depth < NESTED_DEPTH:
            try:
                with zipfile.ZipFile(io.BytesIO(data)) as inner:
                    for name in inner.namelist():
                        found += self.scan_bytes(f"{member}!{name}", inner.read(name), depth + 1)
            except zipfile.BadZipFile:
                pass
            return found
        unpacked = _unpacked(data)
        if unpacked is not None:
            for line, where in self.lines.items():
                if line.encode() in unpacked:
                    found.append(Finding("packed", member, {"ref": where, "text": line}))
            return found
        text = _text(data)
        if text is None:
            return found
        for line, where in self.lines.items():
            at = text.find(line)
            if at >= 0:
                found.append(Finding("line", member, {"line": text.count("\n", 0, at) + 1, "ref": where, "text": line}))
        if suffix == ".py":
            try:
                defined = forms(text)
            except (SyntaxError, ValueError) as exc:
                return [*found, Finding("unreadable", member, {"detail": str(exc)})]
            for name, as_written, renumbered, _size in defined:
                if as_written in self.same:
                    found.append(Finding("same_code", member, {"name": name, "ref": self.same[as_written]}))
                elif renumbered in self.renamed:
                    found.append(Finding("renamed", member, {"name": name, "ref": self.renamed[renumbered]}))
        return found

    def scan_archive(self, path):
        """``(files, findings)`` of a wheel or zip."""
        path = Path(path)
        found, files = [], 0
        with zipfile.ZipFile(path) as zf:
            for name in zf.namelist():
                if name.endswith("/"):
                    continue
                files += 1
                found += self.scan_bytes(f"{path.name}!{name}", zf.read(name))
        return files, found

    def scan_archives(self, paths):
        """``(files, findings)`` over several archives."""
        files, found = 0, []
        for path in paths:
            n, more = self.scan_archive(path)
            files += n
            found += more
        return files, found


def kits_in(path):
    """The kits ``gradekit kit scan`` looks at for ``path``: the file itself, or every .whl and .zip under a
    folder."""
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".whl", ".zip") and p.is_file())
    return [path] if path.is_file() else []


def scan(paths, assignments=()):
    """``{kit: (files, findings)}`` for every kit under ``paths`` (``kits_in``), against the references of
    ``assignments`` and of every built-in assignment."""
    fingerprint = Fingerprint.of(assignments)
    return {kit: fingerprint.scan_archive(kit) for p in paths for kit in kits_in(p)}
