"""A student kit holds the self-check and the reference's recorded answers, never the reference.

``gradekit kit build`` writes each assignment's kit as a wheel and as a plain zip of the same files (their bank
recorded here over the reference and the skeleton in the quick profile: over the whole catalogue, as a kit is
built by default, recording takes minutes). Both pass the scan, and the scan fails a kit with a reference module
slipped in (copied under another name, or reformatted with its local names changed), compiled Python or pickled
data. Unzipped, the kit grades against its bank without being told, says so in both languages, and the doors that
need the reference say plainly that they need the instructor's full kit. Installed from its wheel into a fresh
venv (slow), ``gradekit check`` gives a copy of the reference full marks and the skeleton the full kit's score.
"""

import ast
import base64
import csv
import hashlib
import io
import json
import pickle
import py_compile
import re
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest
import torch

from grader import api, kit
from grader.assignment import KIT_BANK, KIT_MANIFEST, load
from grader.config import _tomllib
from grader.messages import text
from grader.submission.bank import Bank
from tests.corpus.test_class_similarity import _drop_docstrings
from tests.corpus.test_gradescope_install import _clean_env

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = {"transformer": load("transformer"), "decoder_lm": load("decoder_lm")}


@pytest.fixture(scope="module")
def kits(tmp_path_factory):
    """``{name: (wheel, zip)}``: the transformer's kit built by the command line, the LM's by ``kit.build``."""
    built = {}
    out = tmp_path_factory.mktemp("kit-transformer")
    a = ASSIGNMENTS["transformer"]
    made = subprocess.run(
        [sys.executable, "-m", "grader", "kit", "build", "--profile", "quick", "--out", str(out)]
        + ["--folders", str(a.reference), str(a.skeleton)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert "answer bank" in made.stdout and ".whl" in made.stdout and ".zip" in made.stdout, made.stdout
    assert "--whole-run-mb" not in made.stdout, made.stdout  # none recorded by default, and none said
    built["transformer"] = (next(out.glob("*.whl")), next(out.glob("*.zip")))
    a = ASSIGNMENTS["decoder_lm"]
    b = kit.build(a, tmp_path_factory.mktemp("kit-lm"), profiles=("quick",), folders=[a.reference, a.skeleton])
    built["decoder_lm"] = (b.wheel, b.zip)
    return built


@pytest.fixture(scope="module")
def fingerprint():
    return kit.Fingerprint.of()


@pytest.fixture(scope="module")
def unzipped(kits, tmp_path_factory):
    """The transformer's plain zip, unzipped: the folder to run ``python -m grader`` in."""
    where = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(kits["transformer"][1]) as zf:
        zf.extractall(where)
    (folder,) = where.iterdir()
    return folder


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _pyproject():
    return _tomllib().loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


# -- what a kit holds ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_the_wheel_is_a_valid_wheel_with_the_projects_entry_points_and_dependencies(kits, name):
    wheel, _ = kits[name]
    members = _members(wheel)
    (info,) = {m.split("/", 1)[0] for m in members if m.split("/", 1)[0].endswith(".dist-info")}
    dist, version = info[: -len(".dist-info")].split("-")
    assert wheel.name == f"{dist}-{version}-py3-none-any.whl"
    assert dist == "gradekit" and version.startswith(_pyproject()["version"] + "+")
    for part in ("METADATA", "WHEEL", "RECORD", "entry_points.txt"):
        assert f"{info}/{part}" in members, part
    wheel_file = members[f"{info}/WHEEL"].decode()
    assert "Wheel-Version: 1.0" in wheel_file and "Root-Is-Purelib: true" in wheel_file
    assert "Tag: py3-none-any" in wheel_file
    # RECORD: every member once, with its sha256 (urlsafe base64, no padding) and size; itself without
    rows = list(csv.reader(io.StringIO(members[f"{info}/RECORD"].decode())))
    assert sorted(r[0] for r in rows) == sorted(members)
    for path, digest, size in rows:
        if path == f"{info}/RECORD":
            assert (digest, size) == ("", "")
            continue
        data = members[path]
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == f"sha256={expected}" and int(size) == len(data), path
    # the console script and the pytest plugin, as pyproject.toml declares them
    project = _pyproject()
    points = members[f"{info}/entry_points.txt"].decode()
    for script, target in project["scripts"].items():
        assert f"[console_scripts]\n{script} = {target}\n" in points
    for group, entries in project["entry-points"].items():
        for entry, target in entries.items():
            assert f"[{group}]\n{entry} = {target}\n" in points
    # the dependencies, as pyproject.toml's, Hypothesis pinned to the version the bank was recorded with
    import hypothesis

    meta = members[f"{info}/METADATA"].decode().split("\n\n", 1)[0].splitlines()
    requires = [
        line.split(": ", 1)[1] for line in meta if line.startswith("Requires-Dist: ") and "extra ==" not in line
    ]
    expected = [
        d if not d.startswith("hypothesis") else f"hypothesis=={hypothesis.__version__}"
        for d in project["dependencies"]
    ]
    assert requires == expected
    assert f"Requires-Python: {project['requires-python']}" in meta
    assert {line.split(": ", 1)[1] for line in meta if line.startswith("Provides-Extra")} == set(
        project["optional-dependencies"]
    )


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_the_zip_holds_the_wheels_files_and_the_kit_holds_no_reference(kits, tmp_path, name):
    a = ASSIGNMENTS[name]
    wheel, plain = kits[name]
    in_wheel = {m: d for m, d in _members(wheel).items() if ".dist-info/" not in m}
    in_zip = _members(plain)
    folder = f"gradekit-{name}-kit/"
    assert all(m.startswith(folder) for m in in_zip)
    # the same files, and the zip's README.md (the wheel's description: test_the_zips_readme_is_the_wheels_description)
    assert {m[len(folder) :]: d for m, d in in_zip.items() if m != f"{folder}README.md"} == in_wheel
    files = set(in_wheel)
    package = f"assignments/{name}"
    # the grader (its templates and sentences), the assignment's package, the skeleton, the contract page
    assert {"grader/cli.py", "grader/views/templates/report.html.j2", "grader/batch/templates/pages.css"} <= files
    assert {"grader/messages/kit_en.py", "grader/messages/kit_zh.py", "assignments/__init__.py"} <= files
    for part in ("__init__.py", "probes.py", "practice.py", "figures.py", "messages/en.py", "messages/zh.py"):
        assert f"{package}/{part}" in files, part
    assert {f"{package}/checks/{t.id}.py" for t in a.tasks} <= files
    assert any(f.startswith(f"{package}/data/") for f in files)
    skeleton = a.skeleton.relative_to(ROOT).as_posix()
    assert {f"{skeleton}/{f}" for f in a.contract_files} <= files
    assert in_wheel[f"{package}/docs/{a.contract.name}"] == a.contract.read_bytes()
    # no reference, no catalogue of its edits, no other assignment, nothing compiled
    reference = a.reference.relative_to(ROOT).as_posix()
    assert not [f for f in files if f.startswith(reference + "/")]
    assert not [f for f in files if f.startswith(("solution/", "assignments/decoder_lm/reference/"))]
    assert f"{package}/bugs.py" not in files
    other = next(n for n in ASSIGNMENTS if n != name)
    assert not [f for f in files if f.startswith(f"assignments/{other}/")]
    assert not [f for f in files if f.endswith((".pyc", ".pyo")) or "__pycache__" in f]
    # the bank, in the package, and what the kit was built for
    bank = in_wheel[f"{package}/{KIT_BANK}"]
    meta = Bank.load(_write(tmp_path / "kit.bank", bank)).meta
    assert meta["profiles"] == ["quick"] and "whole_runs" not in meta  # no whole run recorded by default
    manifest = json.loads(in_wheel[f"grader/{KIT_MANIFEST}"])
    assert manifest["assignment"] == manifest["name"] == name and manifest["profiles"] == ["quick"]


def _write(path, data):
    path.write_bytes(data)
    return path


def _description(wheel):
    """The long description of a wheel: its METADATA after the headers."""
    members = _members(wheel)
    (meta,) = [m for m in members if m.endswith(".dist-info/METADATA")]
    return members[meta].decode().split("\n\n", 1)[1]


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_the_zips_readme_is_the_wheels_description(kits, name):
    """A student who unzips the kit reads first what one who installs the wheel reads on its page: how to install,
    start, check, watch and use a notebook, in English then Chinese, made from the assignment."""
    a = ASSIGNMENTS[name]
    wheel, plain = kits[name]
    page = _members(plain)[f"gradekit-{name}-kit/README.md"].decode()
    assert page == _description(wheel)
    english, chinese = page.index("the student kit"), page.index("学生工具包")
    assert english < chinese
    task = next(t.id for t in a.tasks if t.file)
    for said in (
        f"pip install {wheel.name}",
        f"unzip `{plain.name}`",
        "`python -m grader`",
        "%pip install",
        "`gradekit start my_work`",
        "`gradekit check my_work --profile quick`",
        "`gradekit watch my_work`",
        "`gradekit start my_work.ipynb --notebook`",
        "from grader import notebook as gk",
        f'gk.check("{task}")',
        "--lang zh",
        "full kit",
    ):
        assert said in page[:chinese], said
    for said in (f"pip install {wheel.name}", "`gradekit start my_work`", f'gk.check("{task}")', "完整工具包"):
        assert said in page[chinese:], said
    assert f"`{a.skeleton.relative_to(ROOT).as_posix()}/`" in page
    assert "gradekit[notebook]" not in page and "scripts/gradekit" not in page


# -- the scan, both ways -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_the_built_kits_pass_the_scan(kits, fingerprint, name):
    files, findings = fingerprint.scan_archives(kits[name])
    assert files > 200 and not findings, [f.say() for f in findings]


def test_the_fingerprint_holds_both_references(fingerprint):
    """What the scan looks for: definitions and distinctive lines of each reference, none the skeleton shares."""
    for a in ASSIGNMENTS.values():
        where = a.reference.name
        assert sum(1 for w in fingerprint.renamed.values() if w.startswith(where + "/")) >= 10, where
        assert sum(1 for w in fingerprint.lines.values() if w.startswith(where + "/")) >= 50, where
    skeleton_lines = {
        line.strip()
        for a in ASSIGNMENTS.values()
        for f in a.skeleton.glob("*.py")
        for line in f.read_text().splitlines()
    }
    assert not skeleton_lines & set(fingerprint.lines)


def _with_member(source, dest, name, data):
    """A copy of the kit ``source`` at ``dest`` with one more member."""
    shutil.copy(source, dest)
    with zipfile.ZipFile(dest, "a") as zf:
        zf.writestr(name, data)
    return dest


class _Rename(ast.NodeTransformer):
    """Every parameter and local name of a function given a suffix (attributes and globals kept)."""

    def visit_FunctionDef(self, node):  # noqa: N802
        bound = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        bound |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for sub in ast.walk(node):
            if isinstance(sub, ast.arg) and sub.arg in bound:
                sub.arg += "_x"
            elif isinstance(sub, ast.Name) and sub.id in bound:
                sub.id += "_x"
        return node


def _disguised(source):
    """``source`` with every function's local names changed, reformatted (``ast.unparse``), docstrings dropped."""
    tree = _Rename().visit(ast.parse(source))
    _drop_docstrings(tree)
    return "# helpers\n" + ast.unparse(tree) + "\n"


SLIPPED = [
    ("transformer", "solution/attention.py"),
    ("transformer", "solution/training.py"),
    ("decoder_lm", "assignments/decoder_lm/reference/attention.py"),
    ("decoder_lm", "assignments/decoder_lm/reference/optim.py"),
]


@pytest.mark.parametrize("name,file", SLIPPED, ids=[f for _, f in SLIPPED])
def test_a_reference_module_copied_under_another_name_fails_the_scan(kits, fingerprint, tmp_path, name, file):
    wheel = _with_member(kits[name][0], tmp_path / kits[name][0].name, "grader/helpers.py", (ROOT / file).read_bytes())
    findings = fingerprint.scan_archive(wheel)[1]
    kinds = {f.kind for f in findings}
    assert {"same_code", "line"} <= kinds, kinds
    assert all(f.member.endswith("!grader/helpers.py") for f in findings)
    # the other kind of kit, and the zip, too: the transformer's kit must not hold the LM's reference either
    other = next(n for n in ASSIGNMENTS if n != name)
    plain = _with_member(kits[other][1], tmp_path / kits[other][1].name, "x/util.py", (ROOT / file).read_bytes())
    assert {f.kind for f in fingerprint.scan_archive(plain)[1]} >= {"same_code", "line"}


@pytest.mark.parametrize("name,file", SLIPPED, ids=[f for _, f in SLIPPED])
def test_a_reference_module_reformatted_with_its_names_changed_fails_the_scan(kits, fingerprint, tmp_path, name, file):
    disguised = _disguised((ROOT / file).read_text(encoding="utf-8"))
    assert "_x" in disguised and disguised.strip() != (ROOT / file).read_text(encoding="utf-8").strip()
    wheel = _with_member(kits[name][0], tmp_path / kits[name][0].name, f"assignments/{name}/tools.py", disguised)
    findings = fingerprint.scan_archive(wheel)[1]
    kinds = {f.kind for f in findings}
    assert "renamed" in kinds and "same_code" not in kinds, [f.say() for f in findings]


def test_the_command_line_scan_passes_the_built_kits_and_fails_one_with_the_reference(kits, tmp_path):
    source = (ROOT / "solution" / "masks.py").read_bytes()
    tampered = _with_member(kits["transformer"][1], tmp_path / "kit.zip", "gradekit-transformer-kit/masks2.py", source)
    built = kits["transformer"][0].parent
    scan = [sys.executable, "-m", "grader", "kit", "scan", str(built), str(tampered), "--lang", "zh"]
    found = subprocess.run(scan, capture_output=True, text=True)
    assert found.returncode == 1, found.stdout + found.stderr
    clean, tampered_lines = found.stdout.split(str(tampered), 1)
    assert "没有发现参考实现" in clean and str(kits["transformer"][0]) in clean, found.stdout
    assert "masks2.py" in tampered_lines and "参考实现" in tampered_lines, found.stdout
    assert "masks2.py" not in clean


class _Tiny(torch.nn.Module):
    def forward(self, x):
        return x * 2


def _compiled(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("VALUE = 1\n")
    return Path(py_compile.compile(str(source), cfile=str(tmp_path / "mod.pyc"))).read_bytes()


def _saved(obj, **options):
    buffer = io.BytesIO()
    torch.save(obj, buffer, **options)
    return buffer.getvalue()


def _scripted():
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # deprecated in favour of torch.export, and still what a kit might carry
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(_Tiny()), buffer)
    return buffer.getvalue()


MEMBERS = {
    "a .pyc under its name": ("grader/cache.pyc", _compiled, {"suffix", "compiled"}),
    "compiled Python renamed": ("grader/cache.dat", _compiled, {"compiled"}),
    "a pickle renamed": ("assignments/notes.txt", lambda tmp: pickle.dumps({"w": [1.0, 2.0]}, protocol=4), {"pickle"}),
    "a protocol-0 pickle": ("assignments/notes.cfg", lambda tmp: pickle.dumps([1, "a"], protocol=0), {"pickle"}),
    "torch.save's zip": ("grader/weights.bin", lambda tmp: _saved({"w": torch.ones(2)}), {"suffix", "pickle"}),
    "a .pt file": ("grader/weights.pt", lambda tmp: _saved(torch.ones(2)), {"suffix"}),
    "a legacy torch.save": (
        "grader/old.dat",
        lambda tmp: _saved(torch.ones(2), _use_new_zipfile_serialization=False),
        {"pickle"},
    ),
    "TorchScript": ("grader/model.bin", lambda tmp: _scripted(), {"suffix"}),
}
"""A member a kit must not carry, how to make it, and the kinds of finding expected (``suffix``: a member inside a
saved model's archive ends in .pkl)."""


@pytest.mark.parametrize("case", sorted(MEMBERS))
def test_compiled_code_and_pickled_data_fail_the_scan(kits, fingerprint, tmp_path, case):
    name, make, kinds = MEMBERS[case]
    if case == "TorchScript" and not hasattr(torch.jit, "script"):
        pytest.skip("this torch has no TorchScript")
    wheel = _with_member(kits["transformer"][0], tmp_path / "kit.whl", name, make(tmp_path))
    findings = [f for f in fingerprint.scan_archive(wheel)[1] if f.member.split("!")[1] == name]
    assert kinds <= {f.kind for f in findings}, [f.say() for f in findings]


def test_a_kit_build_keeps_nothing_its_scan_refuses(tmp_path, monkeypatch):
    """The builder's own gate: a wheel that would hold a reference module is not kept, nor is its zip."""
    a = ASSIGNMENTS["transformer"]
    write_wheel = kit.write_wheel

    def with_reference(contents, *args, **kwargs):
        return write_wheel({**contents, "grader/leak.py": (a.reference / "norm.py").read_bytes()}, *args, **kwargs)

    monkeypatch.setattr(kit, "write_wheel", with_reference)
    bank = kit.record(a, [a.reference], profiles=("quick",), tasks=["layernorm"]).save(tmp_path / "n.bank")
    with pytest.raises(kit.KitRefused) as refused:
        kit.build(a, tmp_path / "out", bank=bank)
    assert {f.member.split("!")[1] for f in refused.value.findings} == {"grader/leak.py"}
    assert not list((tmp_path / "out").iterdir())


# -- the kit at work -----------------------------------------------------------------------------------------------


def _run(folder, *args):
    """``python -m grader ARGS`` as a student runs the unzipped kit: in its folder, nothing of this checkout."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        cwd=folder,
        env=_clean_env(HOME=str(folder.parent)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_unzipped_kit_grades_against_its_answers_and_says_so(unzipped, tmp_path):
    a = ASSIGNMENTS["transformer"]
    sub = shutil.copytree(a.reference, tmp_path / "solution_copy")
    out = _run(unzipped, "check", sub, "--profile", "quick", "--json", tmp_path / "r.json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert text("kit.banked", "en") in out.stdout and "Traceback" not in out.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["banked"] is True and data["score"] == data["max_score"]
    # in Chinese, and a student's own folder named as the reference is still no reference
    mine = shutil.copytree(a.skeleton, unzipped / "solution")
    zh = _run(unzipped, "check", "solution", "--profile", "quick", "--lang", "zh")
    assert zh.returncode == 1 and text("kit.banked", "zh") in zh.stdout, zh.stdout + zh.stderr
    assert "得分: 0 / " in zh.stdout
    shutil.rmtree(mine)
    # a profile the kit holds no answers for is refused plainly
    full = _run(unzipped, "check", sub)
    assert full.returncode == 2 and "Traceback" not in full.stderr
    assert "--profile quick" in full.stderr and "quick" in full.stderr, full.stderr


def _started_as_the_kit_holds_it(fingerprint, kit_zip, dest, name):
    """Check that ``dest`` (made by ``gradekit start``) holds exactly the kit's skeleton files and its contract page
    as ``CONTRACT.md``, and that a kit of it passes the scan: nothing a kit refuses."""
    a = ASSIGNMENTS[name]
    members = _members(kit_zip)
    folder = f"gradekit-{name}-kit/"
    skeleton = folder + a.skeleton.relative_to(ROOT).as_posix() + "/"
    expected = {m[len(skeleton) :]: d for m, d in members.items() if m.startswith(skeleton)}
    expected["CONTRACT.md"] = members[f"{folder}assignments/{name}/docs/{a.contract.name}"]
    got = {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    assert got == expected
    assert {f for f in got if f.endswith(".py")} >= set(a.contract_files)
    made = dest.parent / f"{dest.name}.zip"
    with zipfile.ZipFile(made, "w") as zf:
        for rel, data in got.items():
            zf.writestr(rel, data)
    assert not fingerprint.scan_archive(made)[1]


def test_start_in_the_unzipped_kit_gives_the_skeleton_and_commands_that_run(kits, fingerprint, unzipped, tmp_path):
    """``python -m grader start`` in the unzipped kit: the kit's stubs and contract, and the check it prints runs as
    printed there, grading the stubs as the full kit does."""
    dest = tmp_path / "my_work"
    out = _run(unzipped, "start", dest)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    _started_as_the_kit_holds_it(fingerprint, kits["transformer"][1], dest, "transformer")
    (check,) = [line.strip() for line in out.stdout.splitlines() if " check " in line]
    assert check == f"{sys.executable} -m grader check {dest} --profile quick"
    graded = subprocess.run(
        ["bash", "-c", check + f" --json {tmp_path / 'r.json'}"],
        cwd=unzipped,
        env=_clean_env(HOME=str(unzipped.parent)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert graded.returncode == 1 and text("kit.banked", "en") in graded.stdout, graded.stdout + graded.stderr
    full = api.check(path=ASSIGNMENTS["transformer"].skeleton, assignment=ASSIGNMENTS["transformer"], profile="quick")
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["score"] == full.score
    # never over a student's work
    (dest / "attention.py").write_text("# mine\n")
    again = _run(unzipped, "start", dest, "--lang", "zh")
    assert again.returncode == 2 and text("start.refused", "zh", path=dest) in again.stderr, again.stderr
    assert (dest / "attention.py").read_text() == "# mine\n"


def test_a_kit_built_for_some_tasks_grades_those(tmp_path):
    a = ASSIGNMENTS["transformer"]
    built = kit.build(a, tmp_path / "kit", profiles=("quick",), folders=[a.reference], tasks=("masks",))
    with zipfile.ZipFile(built.zip) as zf:
        zf.extractall(tmp_path / "unzipped")
    (folder,) = (tmp_path / "unzipped").iterdir()
    out = _run(folder, "check", a.reference, "--profile", "quick", "--json", tmp_path / "r.json")
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert [t["id"] for t in data["tasks"]] == ["masks"] and data["score"] == data["max_score"]


DOORS = [
    (("demo",), "gradekit demo", "en"),
    (("demo",), "gradekit demo", "zh"),
    (("demo", "--submission", "SUB"), "gradekit demo", "en"),
    (("practice", "mha"), "gradekit practice", "zh"),
    (("bank", "build", "--out", "OUT"), "gradekit bank build", "en"),
    (("kit", "build", "--out", "OUT"), "gradekit kit build", "zh"),
    (("kit", "scan", "SUB"), "gradekit kit scan", "en"),
    (("gradescope", "build", "--out", "OUT"), "gradekit gradescope build", "zh"),
    (("batch", "SUBS", "--out", "OUT"), "gradekit batch", "en"),
]
"""Commands that need the reference, the door each names and the language asked for. ``gradescope build`` has no
``--lang`` (its language is the course configuration's, which its students read): it says it in that one."""


@pytest.mark.parametrize("args,door,lang", DOORS, ids=[" ".join(a) + f" {lang}" for a, _, lang in DOORS])
def test_doors_that_need_the_reference_say_they_need_the_full_kit(unzipped, tmp_path, args, door, lang):
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    shutil.copytree(ASSIGNMENTS["transformer"].skeleton, tmp_path / "sub")
    places = {"SUB": tmp_path / "sub", "SUBS": tmp_path / "subs", "OUT": tmp_path / "out"}
    argv = [places.get(a, a) for a in args]
    config = unzipped / "gradekit.toml"
    if args[0] == "gradescope":
        config.write_text(f'lang = "{lang}"\n', encoding="utf-8")
    else:
        argv += ["--lang", lang]
    try:
        out = _run(unzipped, *argv)
    finally:
        config.unlink(missing_ok=True)
    assert out.returncode != 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    assert text("kit.needs_reference", lang, door=door) in out.stderr, out.stderr
    assert not (tmp_path / "out").exists()


def test_the_quiz_asks_only_what_needs_no_reference(unzipped):
    from grader.practice import quiz

    choices = sum(1 for q in quiz.questions(ASSIGNMENTS["transformer"]) if q.kind == "choice")
    out = _run(unzipped, "quiz", "--n", "0", "--seed", "3")
    assert "Traceback" not in out.stderr, out.stderr
    assert text("kit.quiz_choice_only", "en") in out.stdout
    assert re.search(rf"\b{choices} questions\b", out.stdout), out.stdout[:500]
    assert choices < len(quiz.questions(ASSIGNMENTS["transformer"]))


# -- installed from the wheel (slow: pip installs torch and the rest into a fresh venv) ----------------------------


@pytest.fixture(scope="module")
def installed(kits, tmp_path_factory):
    """The venv's ``bin`` folder, with the transformer's kit installed from its wheel."""
    from grader.batch.gradescope_build import _requirements

    base = tmp_path_factory.mktemp("venv")
    venv = base / "venv"
    python = getattr(sys, "_base_executable", sys.executable)
    made = subprocess.run(
        [python, "-m", "venv", str(venv)], env=_clean_env(), capture_output=True, text=True, timeout=300
    )
    if made.returncode != 0 or not (venv / "bin" / "python").exists():
        pytest.skip(f"python -m venv cannot make a venv here: {made.stderr[-500:]}")
    # the versions installed here, pinned, so that pip takes them from this machine's wheels (PIP_FIND_LINKS)
    (base / "pins.txt").write_text(_requirements())
    env = _clean_env()
    env.setdefault("PIP_RETRIES", "1")
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(kits["transformer"][0]), "-r"]
        + [str(base / "pins.txt")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    yield venv / "bin"
    shutil.rmtree(venv, ignore_errors=True)  # about 1 GB (torch): not left for pytest's kept tmp folders


def test_the_installed_wheel_grades_the_reference_full_and_the_skeleton_as_the_full_kit(installed, tmp_path):
    a = ASSIGNMENTS["transformer"]
    work = tmp_path / "outside"  # a folder outside this checkout: nothing of it can be imported from there
    work.mkdir()
    ref = shutil.copytree(a.reference, work / "my_reference")
    skel = shutil.copytree(a.skeleton, work / "my_skeleton")
    env = _clean_env(HOME=str(tmp_path))

    def gradekit(*args):
        return subprocess.run(
            [str(installed / "gradekit"), *map(str, args)], cwd=work, env=env, capture_output=True, text=True
        )

    where = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import grader, assignments.transformer as t; print(grader.__file__, t.ASSIGNMENT.reference)",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "site-packages" in where.stdout and str(ROOT) not in where.stdout, where.stdout + where.stderr
    graded = {}
    for name, sub in (("reference", ref), ("skeleton", skel)):
        out = gradekit("check", sub, "--profile", "quick", "--json", tmp_path / f"{name}.json")
        assert "Traceback" not in out.stderr, out.stderr
        assert text("kit.banked", "en") in out.stdout, out.stdout
        graded[name] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    assert graded["reference"]["score"] == graded["reference"]["max_score"] > 0
    assert all(c["status"] == "passed" for t in graded["reference"]["tasks"] for c in t["checks"])
    full = api.check(path=a.skeleton, assignment=a, profile="quick")
    assert graded["skeleton"]["score"] == full.score and graded["skeleton"]["max_score"] == full.max_score
    # the pytest plugin, from the wheel's pytest11 entry point
    plugin = subprocess.run(
        [str(installed / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--submission", str(ref)]
        + ["--gradekit-profile", "quick"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert plugin.returncode == 0, plugin.stdout[-3000:] + plugin.stderr[-2000:]
    assert text("kit.banked", "en") in plugin.stdout
    # and a door that needs the reference, installed
    demo = gradekit("demo")
    assert demo.returncode == 2 and "Traceback" not in demo.stderr
    assert text("kit.needs_reference", "en", door="gradekit demo") in demo.stderr


def test_the_installed_wheel_starts_a_folder_of_the_skeleton(kits, fingerprint, installed, tmp_path):
    """``gradekit start`` from the installed wheel: the stubs and the contract the wheel carries, copied out of
    site-packages into the student's folder, and nothing a kit refuses."""
    work = tmp_path / "outside"
    work.mkdir()
    out = subprocess.run(
        [str(installed / "gradekit"), "start", "my_work"],
        cwd=work,
        env=_clean_env(HOME=str(tmp_path)),
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    _started_as_the_kit_holds_it(fingerprint, kits["transformer"][1], work / "my_work", "transformer")
    printed = [line.strip() for line in out.stdout.splitlines() if line.startswith("    ")]
    assert printed == [
        str(installed / "gradekit") + " check my_work --profile quick",
        str(installed / "gradekit") + " watch my_work",
    ]
