"""Bad input: every kind gets a clear verdict, only the tasks that need the broken code fail, the run completes."""

import os
import subprocess
import sys
import zipfile

import pytest

from grader import api
from grader.cli import main
from tests.conftest import ROOT


def by_task(result):
    return {t.id: t for t in result.tasks}


def failing_tasks(result):
    return {t.id for t in result.tasks if t.score < t.max_score}


def test_missing_path_is_a_usage_error(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "attention.py" in err


def test_a_file_instead_of_a_folder_is_a_usage_error(tmp_path, capsys):
    f = tmp_path / "attention.py"
    f.write_text("x = 1\n")
    assert main(["check", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err


def test_unknown_task_is_a_usage_error(capsys):
    assert main(["check", str(ROOT / "solution"), "--tasks", "mha,attention"]) == 2
    assert "unknown task id(s) attention" in capsys.readouterr().err


def test_empty_folder_is_said_to_be_empty_once(tmp_path):
    """No .py file at all: one sentence, not a missing-file error per contract file and per check."""
    (tmp_path / "notes.txt").write_text("not python")
    (tmp_path / "data.bin").write_bytes(b"\x00\xff")
    with pytest.raises(api.UsageError, match="is an empty submission: it holds no .py file"):
        api.check(path=tmp_path, profile="quick", tasks=["sdpa", "masks", "model"])


def test_a_folder_missing_some_files_fails_those_tasks_with_missing_files(make_submission):
    sub = make_submission(files=["masks.py"])
    result = api.check(path=sub, profile="quick", tasks=["sdpa", "model"])
    assert result.score == 0 and "attention.py" in result.load_errors and "masks.py" not in result.load_errors
    for task in result.tasks:
        for c in task.checks:
            assert c.status == "error" and c.error["kind"] == "missing_file", (c.id, c.error)


def test_import_error_fails_only_the_tasks_that_need_the_file(make_submission):
    sub = make_submission({"norm.py": "import torch\nraise RuntimeError('boom at import')\n"})
    result = api.check(path=sub, profile="quick", tasks=["sdpa", "masks", "layernorm", "encoder_layer"])
    assert failing_tasks(result) == {"layernorm", "encoder_layer"}
    err = result.load_errors["norm.py"]
    assert err["kind"] == "import_error" and err["file"] == "norm.py" and err["line"] == 2
    assert "boom at import" in err["detail"]
    # The isolated variant: the encoder layer over the reference's LayerNorm still earns its isolated points.
    enc = by_task(result)["encoder_layer"]
    assert enc.score > 0 and any(c.status == "passed" and c.variant == "isolated" for c in enc.checks)


def test_syntax_error_names_file_and_line(make_submission):
    sub = make_submission({"masks.py": "import torch\n\ndef padding_mask(tokens, pad_idx)\n    return 1\n"})
    result = api.check(path=sub, profile="quick", tasks=["masks", "sdpa"])
    assert failing_tasks(result) == {"masks"}
    err = result.load_errors["masks.py"]
    assert err["kind"] == "import_error" and err["file"] == "masks.py" and err["line"] == 3


def test_missing_name_is_reported(make_submission):
    sub = make_submission({"feedforward.py": ("class FeedForward(", "class FeedForwardNet(")})
    result = api.check(path=sub, profile="quick", tasks=["feedforward"])
    c = by_task(result)["feedforward"].checks[0]
    assert c.error["kind"] == "missing_name" and "FeedForward" in c.error["detail"]


RETURNS = {
    "tuple": "return self.w_o(out), None",
    "none": "return None",
    "numpy": "return self.w_o(out).detach().numpy()",
}


@pytest.mark.parametrize("kind", sorted(RETURNS))
def test_forward_returning_the_wrong_type(kind, make_submission):
    sub = make_submission({"attention.py": ("return self.w_o(out)", RETURNS[kind])})
    result = api.check(path=sub, profile="quick", tasks=["mha"])
    eq = next(c for c in by_task(result)["mha"].checks if c.id == "mha.equivalence")
    assert eq.status == "error" and eq.error["kind"] == "bad_output"
    assert "expected a torch.Tensor" in eq.error["detail"]
    assert {"tuple": "a tuple of 2", "none": "None", "numpy": "numpy.ndarray"}[kind] in eq.error["detail"]


def test_nan_outputs_are_a_clear_failure(make_submission):
    sub = make_submission({"norm.py": ("return (x - mean)", "return float('nan') * (x - mean)")})
    result = api.check(path=sub, profile="quick", tasks=["layernorm"])
    eq = next(c for c in by_task(result)["layernorm"].checks if c.id == "layernorm.equivalence")
    assert eq.status == "failed" and eq.message.key == "fail.nonfinite"


def test_contract_violation_lists_expected_and_found_parameters(make_submission):
    sub = make_submission(
        {"attention.py": ("self.w_o = nn.Linear(d_model, d_model)", "self.out = nn.Linear(d_model, d_model)")}
    )
    sub.joinpath("attention.py").write_text(
        sub.joinpath("attention.py").read_text().replace("return self.w_o(out)", "return self.out(out)")
    )
    result = api.check(path=sub, profile="quick", tasks=["mha"])
    contract = by_task(result)["mha"].checks[0]
    assert contract.message.key == "fail.param_names"
    assert contract.message.params["missing"] == ["w_o.bias [12]", "w_o.weight [12, 12]"]
    assert contract.message.params["unexpected"] == ["out.bias [12]", "out.weight [12, 12]"]


def test_infinite_loop_sealed_times_out_and_the_run_completes(make_submission):
    sub = make_submission(
        {
            "masks.py": (
                "    return (tokens != pad_idx)",
                "    while True:\n        pass\n    return (tokens != pad_idx)",
            )
        }
    )
    result = api.check(path=sub, profile="quick", tasks=["masks", "sdpa"], sealed=True, call_timeout=3)
    tasks = by_task(result)
    assert tasks["sdpa"].score == tasks["sdpa"].max_score
    padding = next(c for c in tasks["masks"].checks if c.id == "masks.padding")
    assert padding.status == "error" and padding.error["kind"] == "timeout"
    causal = next(c for c in tasks["masks"].checks if c.id == "masks.causal")
    assert causal.status == "passed"


def test_folder_named_like_installed_modules_grades_its_own_code(tmp_path):
    from tests.conftest import edited_copy

    for name in ("builtins", "skeleton", "solution", "torch"):
        sub = edited_copy(tmp_path / name, {"masks.py": (".tril()", ".triu()")})
        result = api.check(path=sub, profile="quick", tasks=["masks"])
        assert by_task(result)["masks"].score < 10, name


def test_absolute_skeleton_imports_resolve_to_the_submission(make_submission):
    sub = make_submission(
        {
            "layers.py": [
                ("from .attention import MultiHeadAttention", "from skeleton.attention import MultiHeadAttention"),
                ("from .norm import LayerNorm", "import norm\nLayerNorm = norm.LayerNorm"),
            ],
            "norm.py": ("var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)", "var = x.var(dim=-1, keepdim=True)"),
        }
    )
    result = api.check(path=sub, profile="quick", tasks=["layernorm", "encoder_layer"])
    enc = by_task(result)["encoder_layer"]
    integrated = next(c for c in enc.checks if c.id == "encoder_layer.integrated")
    isolated = next(c for c in enc.checks if c.id == "encoder_layer.equivalence")
    # the submission's own (buggy) LayerNorm was used: the integrated check failed with it, and passes over the
    # reference's, so it keeps its points and names layernorm (charged there)
    assert [(n.key, n.params) for n in integrated.notes] == [("note.charged_beneath", {"tasks": "layernorm"})]
    assert isolated.status == "passed"


def test_importing_the_reference_is_blocked(make_submission):
    sub = make_submission({"masks.py": "from solution.masks import padding_mask, causal_mask, target_mask\n"})
    result = api.check(path=sub, profile="quick", tasks=["masks"])
    assert result.score == 0
    assert any(f["name"] == "solution" for f in result.banned_api)
    assert "not allowed" in result.load_errors["masks.py"]["detail"]


def test_exit_codes_and_json(tmp_path):
    out = tmp_path / "r.json"
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            str(ROOT / "solution"),
            "--tasks",
            "masks",
            "--profile",
            "quick",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert ok.returncode == 0, ok.stderr
    import json

    data = json.loads(out.read_text())
    assert data["score"] == data["max_score"] == 10
    assert {"submission", "score", "max_score", "seed", "duration_s", "tasks", "banned_api"} <= set(data)
    check = data["tasks"][0]["checks"][0]
    assert {"id", "status", "score", "max_score", "message", "diagnoses"} <= set(check)
    bad = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(ROOT / "skeleton"), "--tasks", "masks", "--profile", "quick"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 1 and "not implemented" in bad.stdout


def test_the_command_exits_quickly_but_says_everything_and_leaves_nothing(tmp_path):
    """``gradekit`` skips the interpreter's teardown (``cli.entry``): what it printed to a pipe and the files it
    wrote are complete, and the ``atexit`` work is done: the fork server of ``--sealed`` and its folder are gone."""
    out = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe's buffer, as users have it
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            str(ROOT / "solution"),
            "--tasks",
            "masks",
            "--profile",
            "quick",
            "--sealed",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout.rstrip().splitlines()
    assert said[-2:] == ["All checks passed.", f"JSON report written to {out}"] and "10 / 10" in done.stdout
    import json

    assert json.loads(out.read_text())["score"] == 10
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("gradekit")] == []  # no fork server's or worker's
    bad = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert bad.returncode == 2 and "does not exist" in bad.stderr


def test_demo_takes_its_own_options(capsys):
    assert main(["demo", "--quiet", "--steps", "3"]) == 0
    assert "held-out phrases" in capsys.readouterr().out


def test_check_takes_a_zip_as_the_batch_does(tmp_path):
    """One intake for every door: a zip handed to ``check`` is taken in as ``batch`` takes it (a zip of one folder is
    that folder; an unsafe one is refused, saying which member and why, and nothing is extracted outside)."""
    from grader.submission.intake import take_in
    from tests.corpus.test_batch import _zip_folder

    good = tmp_path / "hw.zip"
    _zip_folder(ROOT / "solution", good, top="my submission")
    for path in (good,):
        result = api.check(path=path, tasks=["masks"], profile="quick")
        assert result.score == result.max_score == 10, [(c.id, c.message) for t in result.tasks for c in t.checks]
    done = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(good), "--tasks", "masks", "--profile", "quick"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0 and "10 / 10" in done.stdout, done.stdout + done.stderr
    unsafe = tmp_path / "unsafe.zip"
    with zipfile.ZipFile(unsafe, "w") as zf:
        zf.writestr("../escape.py", "print('out')")
    bad = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(unsafe), "--tasks", "masks"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "unsafe.zip" in bad.stderr and "../escape.py" in bad.stderr, bad.stderr
    assert not (tmp_path.parent / "escape.py").exists() and not (ROOT / "escape.py").exists()
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(api.UsageError, match="broken.zip: BadZipFile"):
        api.check(path=broken, tasks=["masks"], profile="quick")
    assert take_in(good, tmp_path / "again" / "s").root.name == "my submission"
