"""English sentences of the batch command, the class summary page and the Gradescope build."""

MESSAGES = {
    "batch.reason.copy_zeroed": "flagged as a copy of the reference solution (same code once names, comments and "
                                "docstrings are set aside) and scored 0 by the course's copy policy; clear the "
                                "flag in the overrides file if the review finds it wrong",
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
    "batch.page.pass_rates": "Pass rate per check",
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
    "batch.cli.done": "{graded} graded, {cached} unchanged (cached), {n} in all, in {seconds} s; gradebook: {gradebook}",
    "batch.cli.not_imported": "{student}: could not be imported: {causes}",
    "batch.cli.not_sealed": "warning: running as an ordinary user, the graded code runs as you, without a jail: it "
                            "can read what you can read (the reference included) and signal your processes. Grade "
                            "for the record as root or in a container (README, isolation).",
    "batch.cli.built": "autograder written to {path} ({size} bytes)",
}
