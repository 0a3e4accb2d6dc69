"""The Gradescope autograder installs everything a submission may need: the zip the kit builds is set up in a
fresh venv the way Gradescope's image step runs its ``setup.sh`` (nothing of this venv leaks in), then grades a
submission that imports NumPy (the contract allows it) and a notebook hand-in, as ``run_autograder`` does in
the container. The two install tests take long (pip installs torch and the rest): this is the corpus tier."""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from grader.batch import gradescope_build
from grader.batch.gradescope_build import build
from grader.config import _tomllib
from tests.conftest import TRANSFORMER, edited_copy
from tests.corpus.test_notebooks import _notebook, _solution_cells

ROOT = Path(__file__).resolve().parents[2]
VENV_IN_IMAGE = "/opt/gradekit"
"""Where setup.sh puts its venv in the image; the test puts it in a tmp folder instead."""
NUMPY_EDIT = {
    "embedding.py": (
        ("import math\n", "import math\n\nimport numpy as np\n"),
        ("* math.sqrt(self.d_model)", "* float(np.sqrt(self.d_model))"),
    )
}
"""The reference with TokenEmbedding's scale taken by NumPy: the same value, and a module that needs NumPy."""


def _clean_env(**extra):
    """This process's environment without what would point Python at this venv or this checkout."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONUSERBASE")
    }
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(source folder, venv python)``: the built zip extracted as Gradescope does and its ``setup.sh`` run."""
    base = tmp_path_factory.mktemp("gradescope")
    archive = build(out=base / "autograder.zip", profile="quick")
    source = base / "image" / "source"
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(source)
    # setup.sh runs as it is, with two stand-ins on PATH: apt-get (Gradescope's image step installs Python with
    # it; here it must not touch this machine's packages) does nothing, and python3 is this interpreter's base
    # Python, so that the pins made by this interpreter's packages can be met. The venv goes to a tmp folder
    # instead of /opt/gradekit. pip keeps this machine's configuration (indexes, local wheels).
    stubs = base / "bin"
    stubs.mkdir()
    (stubs / "apt-get").write_text("#!/bin/sh\nexit 0\n")
    (stubs / "apt-get").chmod(0o755)
    (stubs / "python3").symlink_to(getattr(sys, "_base_executable", sys.executable))
    venv = base / "venv"
    setup = (source / "setup.sh").read_text()
    assert VENV_IN_IMAGE in setup and "requirements.txt" in setup
    (base / "setup.sh").write_text(setup.replace(VENV_IN_IMAGE, str(venv)))
    env = _clean_env(PATH=f"{stubs}{os.pathsep}{os.environ['PATH']}", GRADEKIT_AUTOGRADER_ROOT=str(source.parent))
    env.setdefault("PIP_RETRIES", "1")  # an index this machine cannot reach is passed over, not retried for minutes
    done = subprocess.run(
        ["bash", str(base / "setup.sh")], cwd=base, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    python = venv / "bin" / "python"
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    # The grader itself comes from the zip (run_autograder's PYTHONPATH), not from an install of the kit.
    alone = subprocess.run([str(python), "-c", "import grader"], cwd=base, env=_clean_env(), capture_output=True)
    assert alone.returncode != 0
    yield source, python
    shutil.rmtree(venv, ignore_errors=True)  # about 1 GB (torch): not left for pytest's kept tmp folders


def _autograde(installed, tmp_path, files):
    """Run ``run_autograder`` in a folder standing in for ``/autograder``, with ``files`` ({name: path}) as the
    submission; ``results.json`` and its text."""
    source, python = installed
    root = tmp_path / "autograder"
    shutil.copytree(source, root / "source")
    run = root / "run_autograder"
    shutil.copy(root / "source" / "run_autograder", run)
    run.chmod(0o755)
    (root / "submission").mkdir()
    for name, path in files.items():
        shutil.copy(path, root / "submission" / name)
    env = _clean_env(GRADEKIT_AUTOGRADER_ROOT=str(root), GRADEKIT_PYTHON=str(python), HOME=str(tmp_path))
    done = subprocess.run(["bash", str(run)], cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    text = (root / "results" / "results.json").read_text(encoding="utf-8")
    return json.loads(text), text + done.stdout + done.stderr


def _checks(data):
    return {t["name"]: t for t in data["tests"] if t.get("tags") != ["copy_of_reference"]}


def test_a_submission_that_imports_numpy_is_graded(installed, tmp_path):
    sub = edited_copy(tmp_path / "sub", NUMPY_EDIT)
    data, text = _autograde(installed, tmp_path, {f.name: f for f in sub.glob("*.py")})
    assert "No module named" not in text, text[-3000:]
    checks = _checks(data)
    numpy_file = {n: t for n, t in checks.items() if n.startswith(("embedding.", "positional."))}
    assert numpy_file, sorted(checks)
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] > 0 for t in numpy_file.values()), numpy_file
    # The rest of the reference passes too (the copy of the reference is zeroed, so no total is asserted).
    assert all(t["status"] == "passed" for t in checks.values()), [
        n for n, t in checks.items() if t["status"] != "passed"
    ]


def test_a_notebook_hand_in_is_graded(installed, tmp_path):
    nb = _notebook(tmp_path / "transformer.ipynb", _solution_cells())
    data, text = _autograde(installed, tmp_path, {"transformer.ipynb": nb})
    assert "nbformat" not in text, text[-3000:]
    checks = _checks(data)
    assert checks and data["score"] > 0, data.get("output", "")[-3000:]
    # Every check of every task ran and passed (the hand-in calls two banned functions, whose tasks' points are
    # withheld: the score is below the maximum by design).
    assert {n.split(".")[0] for n in checks} == {t.id for t in TRANSFORMER.tasks}, sorted(checks)
    assert all(t["status"] == "passed" for t in checks.values()), [
        n for n, t in checks.items() if t["status"] != "passed"
    ]


# -- what requirements.txt holds (fast: nothing is installed) ---------------------------------------------------
def _name(requirement):
    return re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)


def test_requirements_are_the_kits_own_dependencies_pinned(tmp_path):
    """Every core dependency and the notebook extra's, in pyproject.toml's order, pinned to what built the zip."""
    archive = build(out=tmp_path / "autograder.zip", profile="quick", tasks=("masks",))
    with zipfile.ZipFile(archive) as zf:
        lines = zf.read("requirements.txt").decode().splitlines()
    project = _tomllib().loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["notebook"]]
    assert [line.split("==")[0] for line in lines] == list(dict.fromkeys(map(_name, declared)))
    assert {"torch", "numpy", "nbformat"} <= {line.split("==")[0] for line in lines}
    for line in lines:
        name, version = line.split("==")
        assert version == metadata.version(name).split("+", 1)[0]  # torch: no +cpu, setup.sh takes the CPU wheel


def test_requirements_come_from_the_installed_metadata_without_a_source_tree(tmp_path, monkeypatch):
    """The kit installed from a wheel has no pyproject.toml beside it: the metadata it made gives the same lists."""
    monkeypatch.setattr(gradescope_build.grader, "__file__", str(tmp_path / "site-packages" / "grader" / "__init__.py"))
    requires = [
        "torch>=2.1",
        "numpy",
        'nbformat>=5.7; extra == "notebook"',
        'dask[distributed]>=2024.1; extra == "dask"',
        'no-such-dist-for-gradekit>=1; python_version < "3.11"',
    ]
    monkeypatch.setattr(gradescope_build.metadata, "requires", lambda name: requires if name == "gradekit" else None)
    assert gradescope_build._requirements().splitlines() == [
        f"torch=={metadata.version('torch').split('+', 1)[0]}",
        f"numpy=={metadata.version('numpy')}",
        f"nbformat=={metadata.version('nbformat')}",
        'no-such-dist-for-gradekit>=1; python_version < "3.11"',
    ]
