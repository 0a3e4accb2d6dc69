"""The lint and type checks: ``ruff check`` and ``ruff format --check`` over the whole tree (pyproject.toml's
``[tool.ruff]`` says what is left out: the fixtures that stand for students' code, and, per file, the stubs), and
``mypy`` over pyproject.toml's ``[tool.mypy] files`` (the whole kit; the modules whose errors are not fixed yet are
listed there as exceptions).

``python scripts/lint.py [STEP ...]`` runs the three (or the named steps: ruff-check, ruff-format, mypy) with
this interpreter's ruff and mypy, and exits non-zero if any fails.
``scripts/lint`` installs them first (the ``dev`` extra); ``tests/unit/test_lint.py`` and
``.pre-commit-config.yaml`` run the same steps.
"""

import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: mypy brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


CHECKED = ["."]
"""What ``ruff check`` runs over."""
FORMATTED = ["."]
"""What ``ruff format --check`` runs over."""


def configured_files():
    """What mypy checks, as listed in pyproject.toml's ``[tool.mypy] files`` (relative paths, in order)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["mypy"]["files"])


def present_files():
    """(files and folders that exist, those listed but not there yet), over every step's lists."""
    files = list(dict.fromkeys(CHECKED + FORMATTED + configured_files()))
    return [f for f in files if (ROOT / f).exists()], [f for f in files if not (ROOT / f).exists()]


def steps(files, python=sys.executable):
    """{step name: command}, each over those of its paths that are among ``files``."""

    def among(paths):
        return [f for f in paths if f in files]

    return {
        "ruff-check": [python, "-m", "ruff", "check", "--no-fix", *among(CHECKED)],
        "ruff-format": [python, "-m", "ruff", "format", "--check", "--diff", *among(FORMATTED)],
        # The paths named here replace [tool.mypy] files (which may name one not written yet).
        "mypy": [python, "-m", "mypy", *among(configured_files())],
    }


def run(step, files, python=sys.executable):
    """(exit status, output) of one step, run from the repository root."""
    proc = subprocess.run(
        steps(files, python)[step], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    return proc.returncode, proc.stdout


def main(argv):
    files, missing = present_files()
    for name in missing:
        print(f"lint: {name} is listed in [tool.mypy] files but does not exist; skipped", file=sys.stderr)
    if not files:
        print("lint: no files to check", file=sys.stderr)
        return 0
    wanted = argv or list(steps(files))
    unknown = [s for s in wanted if s not in steps(files)]
    if unknown:
        print(f"lint: unknown step(s) {', '.join(unknown)}; expected {', '.join(steps(files))}", file=sys.stderr)
        return 2
    failed = []
    for step in wanted:
        code, output = run(step, files)
        print(f"== {step}: {'ok' if code == 0 else f'FAILED (exit {code})'}")
        if output.strip():
            print(output.rstrip())
        if code:
            failed.append(step)
    if failed:
        print(f"lint: failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
