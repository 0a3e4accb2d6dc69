"""``gradekit gradescope build``: the autograder zip Gradescope runs, one container per submission.

Per Gradescope's autograder specification, the zip holds ``setup.sh`` and ``run_autograder`` at its
root; Gradescope extracts it to ``/autograder/source``, runs ``setup.sh`` once (as root) while
building the image, copies ``run_autograder`` to ``/autograder/run_autograder`` and, for each
submission, runs it with the student's files in ``/autograder/submission``; it must leave
``/autograder/results/results.json``.

The zip carries this very grader and the assignment it grades, copied from the build machine so the
container grades with the same checks, same examples and same points: ``src/grader``, the assignment's
package under its import path (``src/assignments/transformer``, with the parent packages'
``__init__.py``) and its reference, skeleton and data folders that lie outside that package as
``src/<folder name>`` (``src/solution``, ``src/skeleton``: the built-in assignment finds them as
top-level packages). With them come ``requirements.txt``: the kit's own dependencies as pyproject.toml lists
them (the core list and the ``notebook`` extra: all a submission or a notebook hand-in may need, NumPy included),
each pinned to the version that built it; ``settings.json`` (the assignment's spec, tasks, profile, limits, and
the language and Gradescope ``output_format`` of what students read, and the held-back seed, a digest of the course
secret where the configuration names one: the container never reads the secret's file or variable) and the course
configuration (``gradekit.toml``: points, banned APIs, per-check visibility). ``run_autograder`` runs
``python3 -m grader.batch.gradescope_run``, which grades with ``api.check(sealed=True)`` and writes the
Gradescope view.

``GRADEKIT_AUTOGRADER_ROOT`` relocates ``/autograder`` (for testing the zip on any machine).
"""

import importlib
import json
import re
import stat
import zipfile
from importlib import metadata
from pathlib import Path

import grader

SETUP_SH = """#!/usr/bin/env bash
# Runs once, as root, when Gradescope builds the autograder image.
set -euo pipefail
SOURCE="${GRADEKIT_AUTOGRADER_ROOT:-/autograder}/source"
apt-get install -y --no-install-recommends python3 python3-pip python3-venv >/dev/null || true
python3 -m venv /opt/gradekit
/opt/gradekit/bin/python -m pip install --upgrade pip
# CPU wheels of torch: the autograder containers have no GPU.
/opt/gradekit/bin/python -m pip install --extra-index-url https://download.pytorch.org/whl/cpu \\
    -r "$SOURCE/requirements.txt"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission (as /autograder/run_autograder, in /autograder).
set -u
ROOT="${GRADEKIT_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${GRADEKIT_PYTHON:-/opt/gradekit/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
export PYTHONPATH="$ROOT/source/src${PYTHONPATH:+:$PYTHONPATH}"
exec "$PYTHON" -m grader.batch.gradescope_run --root "$ROOT"
"""

SKIP_PARTS = {"__pycache__", ".pytest_cache"}
DISTRIBUTION = "gradekit"
EXTRA = "notebook"
"""The extra of the notebook intake: read too, so that whatever it lists ships (nbformat is a core dependency, so
it lists nothing, and stays for the install lines that name it)."""


def _requirements():
    """``requirements.txt``: derived from the kit's own dependency lists, not a list of its own that could drift
    from them, each pinned to the version installed here so that the container grades as this machine does.
    Torch's local label (``+cpu``) is dropped: setup.sh takes the CPU wheel of that version."""
    lines = []
    for requirement in _dependencies():
        spec, _, marker = requirement.partition(";")
        name, extras = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?", spec).groups()
        try:
            spec = f"{name}{extras or ''}=={metadata.version(name).split('+', 1)[0]}"
        except metadata.PackageNotFoundError:  # a dependency for another platform or Python: pip decides there
            spec = spec.strip()
        lines.append(spec + (f"; {marker.strip()}" if marker.strip() else ""))
    return "".join(line + "\n" for line in dict.fromkeys(lines))


def _dependencies():
    """The core dependencies and those of the ``notebook`` extra (the notebook intake), from the pyproject.toml
    of the source tree the zip's grader comes from, else (the kit installed from a wheel) from the installed
    distribution's metadata, which that same file made."""
    from grader.config import ConfigError, _tomllib

    pyproject = Path(grader.__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = _tomllib().loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except ConfigError:  # Python 3.10 without tomli: the metadata says the same
            project = {}
        if project.get("name") == DISTRIBUTION:
            return [*project.get("dependencies", []), *project.get("optional-dependencies", {}).get(EXTRA, [])]
    found = []
    for requirement in metadata.requires(DISTRIBUTION) or []:
        spec, _, marker = requirement.partition(";")
        if "extra" not in marker:
            found.append(requirement)
        elif re.fullmatch(rf"""\s*extra\s*==\s*['"]{EXTRA}['"]\s*""", marker):
            found.append(spec)
    return found


def build(
    *,
    out="autograder.zip",
    config=None,
    tasks=None,
    profile="full",
    call_timeout=None,
    total_timeout=None,
    memory_mb=None,
    assignment=None,
):
    """Write the autograder zip to ``out``; its ``Path``. ``assignment``: the ``Assignment`` or its spec (default:
    the course configuration's, else ``grader.assignment.DEFAULT``); the limits: the configuration's, else
    ``grader.options.DEFAULTS``. A ``ValueError`` (``ConfigError``, ``AssignmentError``, ``UsageError``) says what
    is wrong with the configuration, the assignment or the task ids."""
    from grader import api
    from grader.config import CourseConfig

    # Validated now, not in the container; the settings are resolved here, once, as every door resolves them.
    course = CourseConfig.load(config, assignment=assignment) if config else None
    resolved = api.settings(
        assignment=assignment,
        config=course,
        call_timeout=call_timeout,
        total_timeout=total_timeout,
        memory_mb=memory_mb,
    )
    assignment = resolved.assignment
    assignment.require_reference("gradekit gradescope build")  # the container grades with the reference
    # The course secret is resolved here, where its file or variable is; the container gets only its digest.
    held_back = course.held_back_seed() if course is not None else None
    if tasks:
        assignment.require_tasks(tasks)
    spec, shipped = _assignment_files(assignment)
    out = Path(out)
    if out.parent != Path(""):
        out.parent.mkdir(parents=True, exist_ok=True)
    settings = {
        "assignment": spec,
        "tasks": list(tasks) if tasks else None,
        "profile": profile,
        **resolved.limits,
        "lang": resolved.options.lang,
        "output_format": resolved.output_format,
        "held_back": held_back,
        "gradekit": grader.__version__,
    }
    package = Path(grader.__file__).resolve().parent
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        _add(zf, "setup.sh", SETUP_SH, executable=True)
        _add(zf, "run_autograder", RUN_AUTOGRADER, executable=True)
        _add(zf, "requirements.txt", _requirements())
        _add(zf, "settings.json", json.dumps(settings, indent=2) + "\n")
        if course is not None:
            _add(zf, "gradekit.toml", course.text)
        for path, name in _tree(package, "src/grader") + shipped:
            zf.write(path, name)
    return out


def _tree(base, name):
    """``(path, name in the zip)`` of every file under ``base``, caches left out."""
    return [
        (path, f"{name}/{path.relative_to(base).as_posix()}")
        for path in sorted(base.rglob("*"))
        if path.is_file() and not SKIP_PARTS.intersection(path.parts) and path.suffix != ".pyc"
    ]


def _assignment_files(assignment):
    """``(spec, files)``: the spec that loads ``assignment`` in the container (``settings.json``) and the files
    that carry it there, ``(path, name in the zip)``. A package is shipped under its import path, with the
    ``__init__.py`` of each package above it, and keeps its spec; one loaded from a folder is shipped as
    ``src/<folder name>`` and named by that folder, relative to the source folder (a spec with a ``/``)."""
    from grader.batch.runner import assignment_folders

    package, *others = assignment_folders(assignment)
    if Path(assignment.package).is_absolute():
        spec = f"src/{package.name}"
        files = _tree(package, spec)
    else:
        spec = assignment.package
        parts = spec.partition(":")[0].split(".")
        files = _tree(package, "src/" + "/".join(parts))
        for i in range(1, len(parts)):
            init = importlib.import_module(".".join(parts[:i])).__file__
            if init:  # a namespace package has none, and needs none
                files.append((Path(init), "src/" + "/".join(parts[:i]) + "/__init__.py"))
    for folder in others:
        files += _tree(folder, f"src/{folder.name}")
    return spec, files


def _add(zf, name, text, executable=False):
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    zf.writestr(info, text)
