"""Student kits (``grader.kit``, ``gradekit kit``): a kit that holds the reference's answers, recorded, not the
reference."""

MESSAGES = {
    "kit.readme": "## {title}: the student kit\n\n"
    "The self-check of the assignment `{assignment}` (gradekit {version}). It holds no reference implementation: it "
    "grades your code against answers recorded from the reference, and every report says so.\n\n"
    "### Install\n\n"
    "- `pip install {wheel}` (the wheel file), or `pip install` the URL of the wheel your course gives.\n"
    "- Or unzip `{zip}` and, in its folder `{folder}/`, run `python -m grader` wherever this page says `gradekit`.\n"
    "- In Jupyter or Colab: `%pip install` the URL of the wheel your course gives, in a cell.\n\n"
    "### Work\n\n"
    "1. `gradekit start my_work`: a new folder `my_work/` holding the stubs (the kit's `{skeleton}`) and the "
    "contract, `CONTRACT.md`.\n"
    "2. Fill in every function that raises `NotImplementedError`, as the contract and the docstrings say.\n"
    "3. `gradekit check my_work --profile quick`: the score and, for each failing check, why, the smallest failing "
    "example and the command that reruns just that check.\n"
    "4. `gradekit watch my_work`: the same, again on every save (Ctrl-C stops it).\n\n"
    "In a notebook: `gradekit start my_work.ipynb --notebook` writes the starter notebook, a code cell per task "
    'followed by its check cell. In any notebook, `from grader import notebook as gk`, then `gk.check("{task}")` '
    "grades that task of what the kernel has run and shows the report in the cell; `gk.check_all()` grades every "
    "task.\n\n"
    'In Chinese: add `--lang zh` to any command (`gk.check("{task}", lang="zh")` in a notebook).\n\n'
    "This is a self-check, not the grade: the final grade comes from the instructor's full kit, which also grades "
    "examples this kit does not hold; a check the kit cannot judge is marked not judged: its points are not earned here, and not lost either, since the final grade judges it.",
    "kit.needs_reference": "{door} needs the reference implementation, and this is a student kit: it holds the answers recorded from the reference, not the reference itself. Run {door} from the instructor's full kit.",
    "kit.profile_not_recorded": "this student kit holds the recorded answers of the {recorded} profile only, not of the {profile} profile; grade with --profile {first}.",
    "kit.banked": "Graded against the answers recorded from the reference (a student kit, which holds no reference): a check those answers cannot judge is marked not judged: it earns nothing in this score, and loses nothing for good. The final grade is given with the instructor's full kit.",
    "kit.unjudged": "{points} of the {max_score} points are in checks this kit could not judge here (not judged): this score gives them none, yet they are not lost: the final grade judges them.",
    "kit.unjudged_short": "{points} points in checks not judged here (the final grade judges them)",
    "kit.answers": "answers",
    "kit.answers_banked": "recorded from the reference (a student kit)",
    "kit.quiz_choice_only": "This student kit holds no reference, so the questions whose answers are computed from it are left out.",
    "kit.cli.recording": "[{i}/{n}] recording the {profile} profile over {name}",
    "kit.cli.bank": "answer bank: {answers} answers and {prints} fingerprints of known mistakes' answers (the "
    "diagnoses the kit can make), for the profiles {profiles}",
    "kit.cli.built": "{path}: {files} files, {size} MB",
    "kit.cli.whole_kept": "kept the reference's {task} run over {over}'s parts ({profile} profile): {size} MB of "
    "tensors, within --whole-run-mb {limit}",
    "kit.cli.whole_empty": "the reference's {task} run over {over}'s parts ({profile} profile) recorded no "
    "tensors: nothing to keep",
    "kit.cli.whole_left": "left out the reference's {task} run over {over}'s parts ({profile} profile): {size} MB of "
    "tensors, over --whole-run-mb {limit}; where {task} needs {over}'s parts to mend a task beneath, the kit marks it "
    "not judged (--whole-run-mb {need} keeps it)",
    "kit.cli.scan_clean": "{path}: no reference found ({files} files scanned)",
    "kit.cli.scan_found": "{path}: {n} finding(s): a kit must not carry the reference, compiled code or pickled data",
    "kit.cli.refused": "the kit was not written: its scan found what a kit must not carry (the findings are above)",
    "kit.cli.no_kits": "{path}: no kit to scan (expected a .whl or .zip file, or a folder holding them)",
    "kit.finding.same_code": "{member}: {name} is the reference's {ref}",
    "kit.finding.renamed": "{member}: {name} is the reference's {ref} with its names changed",
    "kit.finding.line": "{member}, line {line}: a line of the reference's {ref}: {text}",
    "kit.finding.packed": "{member}: a compressed member holds a line of the reference's {ref}: {text}",
    "kit.finding.compiled": "{member}: compiled Python",
    "kit.finding.pickle": "{member}: pickled data (pickle, torch.save or TorchScript)",
    "kit.finding.suffix": "{member}: a {suffix} file (compiled code, a pickle or saved weights)",
    "kit.finding.secret": "{member}: holds the course secret of the final grade's held-back examples (keep the course configuration and the secret's file out of the assignment's folder)",
    "kit.finding.unreadable": "{member}: Python that cannot be parsed, so it could not be compared with the reference ({detail})",
}
