"""Grading a class: the batch run and its progress, the distributed workers (Dask), the class summary pages,
and the likeness of submissions (``classsim.*``)."""

MESSAGES = {
    "batch.reason.copy_zeroed": "flagged as a copy of the reference solution (same code once names, comments "
    "and docstrings are set aside) and scored 0 by the course's copy policy; "
    "clear the flag in the overrides file if the review finds it wrong",
    "batch.reason.copy": "flagged as a copy of the reference solution (same code once names, comments and "
    "docstrings are set aside); review before releasing the grade",
    "batch.reason.banned": "uses a banned API; the points of the tasks using it are withheld",
    "batch.reason.timeout": "a call into the code ran past its time limit and was stopped",
    "batch.reason.crashed": "the code ended the worker process (exit, crash, memory or output limit)",
    "batch.reason.load": "a contract file could not be imported",
    "batch.reason.load_cause": "{files}: {error}",
    "batch.reason.load_where": "{error} ({file}, line {line})",
    "batch.reason.load_more": "and {n} more",
    "batch.reason.unpreparable": "could not be graded: {detail}",
    "batch.reason.judge": "grading did not complete: {detail}",
    "batch.status.ok": "ok",
    "batch.status.timeout": "timeout",
    "batch.status.crashed": "crashed",
    "batch.status.banned-api": "banned API",
    "batch.status.copy": "copy",
    "batch.status.error": "error",
    "batch.page.title": "Class summary",
    "batch.page.students": "Students",
    "batch.page.mean": "mean score",
    "batch.page.histogram": "Score distribution",
    "batch.page.pass_rates": "Every check, worst first",
    "batch.page.flat": "{n} checks, {failing} of them failed by some students",
    "batch.page.tasks": "Points per task",
    "batch.page.tasks_note": "For each task: its points; the mean and median of the points the students "
    "graded in it got; how many got full marks, part of them or none; and the "
    "mistake most often diagnosed in it. Its checks are folded under it.",
    "batch.page.task": "Task",
    "batch.page.points": "Points",
    "batch.page.task_mean": "Mean",
    "batch.page.task_median": "Median",
    "batch.page.full": "Full marks",
    "batch.page.partial": "Partial",
    "batch.page.zero": "Zero",
    "batch.page.mistake": "Most common mistake",
    "batch.page.no_mistake": "none diagnosed",
    "batch.page.mistake_count": "{n} of {graded} students",
    "batch.page.task_checks": "{n} checks",
    "batch.page.task_failing": "{n} failed by some students",
    "batch.page.task_passed": "every student passed them all",
    "batch.nav.label": "Class pages",
    "batch.nav.summary": "Class summary",
    "batch.nav.similarity": "Similar code",
    "batch.page.bugs": "Most frequent diagnosed bugs",
    "batch.page.slowest": "Slowest submissions",
    "batch.page.all": "Every submission",
    "batch.page.student": "Student",
    "batch.page.score": "Score",
    "batch.page.status": "Status",
    "batch.page.check": "Check",
    "batch.page.bug": "Bug",
    "batch.page.count": "Students",
    "batch.page.seconds": "Seconds",
    "batch.page.none": "No known bug was diagnosed.",
    "batch.cli.done": "{graded} graded, {cached} unchanged (cached), {n} in all, in {seconds} s; gradebook: "
    "{gradebook}",
    "batch.cli.not_imported": "{student}: could not be imported: {causes}",
    "batch.cli.not_jailed": "warning: running as an ordinary user, the graded code runs as you, without a "
    "jail: it can read what you can read (the reference included) and signal your "
    "processes. Grade for the record as root or in a container (docs/SEALED.md).",
    "batch.cli.built": "autograder written to {path} ({size} bytes)",
    "classsim.title": "Similar code across the class",
    "classsim.private": "For the instructor only: this page shows students' code side by side. Never share "
    "it with a student.",
    "classsim.intro": "{n} submissions compared after names, comments, docstrings and layout are set aside, "
    "and after the skeleton's code and code most of the class shares are left out. A pair "
    "is listed when its shared fingerprints make at least {threshold}% of the smaller "
    "submission's, and at least {min_shared} of them, or when two submissions are {near}% "
    "the same as a whole, common code included (so a group of copies too large to count as "
    "rare is still found). Similar code is a reason to look, not a verdict.",
    "classsim.clusters": "Clusters",
    "classsim.cluster": "Cluster {n}: {size} submissions",
    "classsim.members": "Members",
    "classsim.max": "Highest score",
    "classsim.mean": "Mean score",
    "classsim.pairs": "Pairs, highest score first",
    "classsim.pair_of": "Submissions",
    "classsim.score": "Score",
    "classsim.shared": "Shared fingerprints",
    "classsim.none": "No two submissions share enough code to be listed.",
    "classsim.more": "{n} more pairs are listed above without their code; similarity.json holds all of them.",
    "classsim.unreadable": "This file could not be read.",
    "classsim.skipped": "Files not compared:",
    "classsim.why.too_large": "too large",
    "classsim.why.syntax": "does not parse",
    "classsim.why.unreadable": "cannot be read",
    "classsim.why.not_a_file": "not a regular file",
    "classsim.summary.row": "Cluster {n}: {size} submissions with similar code (up to {top}%)",
    "dask.missing": "--scheduler needs Dask, which is not installed here: pip install 'gradekit[dask]'",
    "dask.bad_scheduler": "--scheduler {value!r} is not understood; expected local:N (N worker processes on "
    "this machine, N >= 1) or a Dask scheduler's address such as tcp://host:8786",
    "dask.dashboard": "Dask dashboard (the grading tasks, by student): {link}",
    "dask.not_jailed": "warning: the Dask workers {workers} do not run as root, so the graded code ran there "
    "as their user, without a jail: it could read what that user can read, including the "
    "reference. Run the workers as root (see docs/CLUSTER.md) to grade for the record.",
    "dask.detail.no_start": "the judge process did not start on the Dask worker",
    "dask.detail.late": "the judge stopped or took more than {seconds} s",
    "dask.detail.worker_died": "the Dask workers grading it died {n} times (it was tried on {n} workers)",
    "dask.detail.task": "the grading task failed twice on the Dask workers: {error}",
    "dask.detail.other_grader": "the Dask worker {worker} grades with another gradekit or assignment "
    "({theirs}; this batch: {ours}); install the same version on every worker",
    "batch.progress.rate": "{rate}/min",
    "batch.progress.left": "{time} left",
    "batch.page.all_passed": "{n} checks every student passed",
    "batch.page.rate": "Pass rate",
    "batch.page.axis": "score, % of the maximum",
    "batch.page.similar": "Submissions much like each other",
    "batch.page.similar_note": "Groups of submissions whose code is nearly the same once names, comments and "
    "docstrings are set aside. Review them before deciding anything.",
    "batch.page.members": "Students",
    "batch.page.likeness": "Likeness",
    "batch.page.compare": "compare",
    "batch.page.skipped": "Skipped: not submissions ({n})",
    "batch.page.unjailed": "{n} submissions were graded in a worker that was not jailed (it ran as the "
    "grading user, not in a jail with a uid of its own): those grades are not proof "
    "against a hostile submission. Grade as root, or on workers that run as root, for "
    "jailed grades.",
    "batch.page.colon": ": ",
    "batch.page.all_note": "A name links to that student's report.",
    "batch.status.refused": "refused files",
    "batch.reason.refused": "not graded, expected regular files only: {entries}",
    "batch.reason.student_link": "{name} is {what}; expected a folder or a .zip",
    "batch.reason.load_files": "could not be imported: {files}",
    "batch.reason.empty": "empty submission (no .py file)",
    "batch.skipped.hidden": "hidden",
    "batch.skipped.system": "system folder",
    "batch.skipped.file": "not a folder or .zip",
    "batch.cli.skipped": "skipped {n} entries that are not submissions: {entries}",
    "batch.cli.skipped_one": "skipped 1 entry that is not a submission: {entries}",
    "batch.cli.not_graded": "{n} could not be graded: {entries}",
    "batch.cli.no_held_back": "no held-back examples were used: every check was graded only on the examples the "
    "student kit's answer bank answers, so a submission that replays the bank scores as a correct one. To add "
    'them, give the course configuration a secret: a [held_back] table with secret_file = "FILE" (a file of '
    'your own holding some text no student can guess) or secret_env = "VARIABLE".',
    "batch.detail.no_start": "the judge process did not start",
    "batch.reason.duplicate": "more than one entry (a folder, a .zip, a .ipynb) is named {name}",
}
