"""Inside Gradescope's container: grade ``<root>/submission``, write ``<root>/results/results.json``.

Run by the autograder zip's ``run_autograder`` (see ``gradescope_build``), with the assignment the zip
carries (``settings.json`` names it: an import path, or a folder relative to the source folder). The per-check
visibility comes from the course configuration; a verdict that the code is a copy of the
reference goes to ``extra_data`` (for the instructor), not to the student's output. Whatever
happens, a ``results.json`` is written, valid UTF-8 JSON: a failure of the grading itself scores 0 and
says why. The submission is read once, into a snapshot of its regular files (links, special files and
files over the caps are refused and listed in the output); everything after reads the snapshot.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from grader.safetext import clean_data, for_terminal


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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gradescope_run")
    parser.add_argument("--root", default="/autograder")
    args = parser.parse_args(argv)
    root = Path(args.root)
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    target = results / "results.json"
    scratch = Path(tempfile.mkdtemp(prefix="gradekit-gradescope-"))
    try:
        from grader.assignment import load
        from grader.submission import forkserver

        source = root / "source"
        settings = json.loads((source / "settings.json").read_text(encoding="utf-8"))
        spec = settings.get("assignment")
        assignment = load(source / spec if spec and "/" in spec else spec)
        forkserver.shared(assignment=assignment, warm=False)  # the worker's imports run beside this process's own
        from grader import api
        from grader.batch.similarity import compare
        from grader.config import CourseConfig
        from grader.submission.snapshot import Snapshot, safe_copy
        from grader.views import gradescope

        config = None
        if (source / "gradekit.toml").is_file():
            config = CourseConfig.load(source / "gradekit.toml", assignment=assignment)
        snap = safe_copy(root / "submission", scratch / "submission")
        submission = find_submission(snap.root, assignment)
        result = api.check(path=submission, assignment=assignment, tasks=settings.get("tasks"),
                           profile=settings.get("profile", "full"), isolated=True, config=config,
                           call_timeout=settings["call_timeout"], total_timeout=settings["total_timeout"],
                           snapshot=Snapshot(root=submission, refused=snap.refused))
        data = gradescope.to_data(result)
        verdict = compare(submission, assignment)
        data["extra_data"] = {"copy_of_reference": verdict.to_dict(), "gradekit": settings.get("gradekit")}
        if verdict.copy and (config is None or config.copy_policy == "zero"):
            data["score"] = 0
    except Exception as exc:  # noqa: BLE001 - Gradescope must get a results.json whatever happened
        traceback.print_exc()
        data = {"score": 0, "output": f"The autograder could not grade this submission: "
                                      f"{type(exc).__name__}: {exc}", "tests": []}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = json.dumps(clean_data(data), ensure_ascii=False, indent=2) + "\n"
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)  # never an empty or half-written results.json
    print(for_terminal(f"score {data['score']}; results written to {target}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
