"""Student kits (``grader.kit``, ``gradekit kit``): a kit that holds the reference's answers, recorded, not the
reference."""

MESSAGES = {
    "kit.readme": "## {title}: the student kit\n\nThe self-check of the assignment {assignment} (gradekit {version}), without the reference: it grades against answers recorded from the reference, and says so in every report. Install it with pip (pip install, then this wheel's file), or unzip the plain zip and run python -m grader in its folder. Copy the stubs ({skeleton}), fill them in as the contract ({contract}) says, and grade your copy with gradekit check FOLDER. The final grade is given with the instructor's full kit, which also grades examples these answers do not hold.",
    "kit.needs_reference": "{door} needs the reference implementation, and this is a student kit: it holds the answers recorded from the reference, not the reference itself. Run {door} from the instructor's full kit.",
    "kit.profile_not_recorded": "this student kit holds the recorded answers of the {recorded} profile only, not of the {profile} profile; grade with --profile {first}.",
    "kit.banked": "Graded against the answers recorded from the reference (a student kit, which holds no reference): a check those answers cannot judge is marked not judged and its points are not counted here. The final grade is given with the instructor's full kit.",
    "kit.unjudged": "{points} of the {max_score} points are in checks this kit could not judge here (not judged): they are not counted in this score; the final grade judges them.",
    "kit.unjudged_short": "{points} points in checks not judged here (the final grade judges them)",
    "kit.answers": "answers",
    "kit.answers_banked": "recorded from the reference (a student kit)",
    "kit.quiz_choice_only": "This student kit holds no reference, so the questions whose answers are computed from it are left out.",
    "kit.cli.recording": "[{i}/{n}] recording the {profile} profile over {name}",
    "kit.cli.bank": "answer bank: {answers} answers and {prints} fingerprints of known mistakes' answers (the "
    "diagnoses the kit can make), for the profiles {profiles}",
    "kit.cli.built": "{path}: {files} files, {size} MB",
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
