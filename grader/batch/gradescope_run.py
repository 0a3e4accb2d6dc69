"""Inside Gradescope's container: grade ``<root>/submission``, write ``<root>/results/results.json``.

Run by the autograder zip's ``run_autograder`` (see ``gradescope_build``), with the assignment the zip
carries (``settings.json`` names it: an import path, or a folder relative to the source folder, and gives the
course's ``lang`` and ``output_format``). The per-check visibility comes from the course configuration.
Students read the output: no path of this machine reaches it (a failing check's rerun line is the one a
student types on their own computer, and any path of the grading folders left in a text is replaced), and the
verdict that the code is a copy of the reference is a hidden test (instructors see hidden tests, students do
not), not ``extra_data``. Whatever happens, a ``results.json`` is written, valid UTF-8 JSON: a failure of the
grading itself scores 0 and tells the student, in the course's language, to ask the instructor, who finds the
traceback in the autograder's output (``stdout_visibility`` hidden). The submission is read once, into a
snapshot of its regular files (links, special files and files over the caps are refused and listed in the
output); everything after reads the snapshot.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from grader.messages import text
from grader.options import DEFAULTS
from grader.safetext import clean_data, for_terminal
from grader.views import gradescope


def find_submission(folder, assignment):
    """The folder holding ``assignment``'s contract files: ``folder`` itself or the one sub-folder that holds
    them (``folder`` is a snapshot: no links in it)."""
    folder = Path(folder)
    files = assignment.contract_files
    best, best_n = folder, sum((folder / f).is_file() for f in files)
    for path in sorted(p for p in folder.rglob("*") if p.is_dir() and not p.is_symlink() and "__MACOSX" not in p.parts):
        n = sum((path / f).is_file() for f in files)
        if n > best_n:
            best, best_n = path, n
    return best


def grade(root, settings, scratch, *, lang="en", output_format="md"):
    """The ``results.json`` document for the submission in ``root / "submission"``, graded in ``scratch``."""
    from grader.assignment import load
    from grader.submission import forkserver
    from grader.submission.snapshot import Snapshot, has_code, safe_copy, unwrap

    source = root / "source"
    spec = settings.get("assignment")
    assignment = load(source / spec if spec and "/" in spec else spec)
    snap = safe_copy(root / "submission", scratch / "submission")
    if not has_code(snap.root):  # said once, plainly: nothing to grade
        output = gradescope.render_blocks(
            [gradescope.Block("sentence", text("gradescope.empty", lang, files=", ".join(assignment.contract_files)))],
            output_format,
        )
        return {"score": 0, "output": output, "output_format": output_format, "tests": []}
    forkserver.shared(assignment=assignment)  # its imports and warm-up run beside this process's own: each
    # variant's worker is forked warm
    from grader import api
    from grader.batch.similarity import compare
    from grader.config import CourseConfig

    config = None
    if (source / "gradekit.toml").is_file():
        config = CourseConfig.load(source / "gradekit.toml", assignment=assignment)
    submission = unwrap(find_submission(snap.root, assignment))  # a notebook in a folder, like a folder of files
    result = api.check(
        path=submission,
        assignment=assignment,
        tasks=settings.get("tasks"),
        profile=settings.get("profile", "full"),
        sealed=True,
        config=config,
        call_timeout=settings["call_timeout"],
        total_timeout=settings["total_timeout"],
        memory_mb=settings.get("memory_mb"),
        snapshot=Snapshot(root=submission, refused=snap.refused),
        lang=lang,
        held_back=settings.get("held_back"),
    )
    data = gradescope.to_data(result, lang=lang, output_format=output_format)
    verdict = compare(submission, assignment)
    zeroed = verdict.copy and (config is None or config.copy_policy == "zero")
    data["tests"].append(gradescope.copy_test(verdict.to_dict(), zeroed=zeroed, lang=lang, output_format=output_format))
    data["extra_data"] = {"gradekit": settings.get("gradekit")}
    if zeroed:
        data["score"] = 0
    return data


def scrub(value, folders, placeholder):
    """``value`` (the document) with each of ``folders`` (paths of this machine as strings, longest first)
    replaced by ``placeholder`` in every string: the student's own text may hold one (a path it printed)."""
    if isinstance(value, str):
        for folder in folders:
            value = value.replace(folder, placeholder)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, folders, placeholder) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, folders, placeholder) for v in value]
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gradescope_run")
    parser.add_argument("--root", default="/autograder")
    args = parser.parse_args(argv)
    root = Path(args.root).absolute()
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    target = results / "results.json"
    scratch = Path(tempfile.mkdtemp(prefix="gradekit-gradescope-"))
    lang, output_format = DEFAULTS["lang"].value, DEFAULTS["output_format"].value
    try:
        settings = json.loads((root / "source" / "settings.json").read_text(encoding="utf-8"))
        lang, output_format = settings.get("lang") or lang, settings.get("output_format") or output_format
        data = grade(root, settings, scratch, lang=lang, output_format=output_format)
    except Exception:  # noqa: BLE001 - Gradescope must get a results.json whatever happened
        traceback.print_exc()  # for the instructor: the autograder's output, hidden from students
        output = gradescope.render_blocks(
            [gradescope.Block("sentence", text("gradescope.not_graded", lang))], output_format
        )
        data = {"score": 0, "output": output, "output_format": output_format, "tests": []}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    data["stdout_visibility"] = "hidden"
    folders = {str(p) for base in (scratch, root) for p in (base / "submission", base)}
    folders |= {str(Path(p).resolve()) for p in folders}
    data = scrub(data, sorted(folders, key=len, reverse=True), text("gradescope.your_folder", lang))
    document = json.dumps(clean_data(data), ensure_ascii=False, indent=2) + "\n"
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(document, encoding="utf-8")
    os.replace(tmp, target)  # never an empty or half-written results.json
    print(for_terminal(f"score {data['score']}; results written to {target}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
