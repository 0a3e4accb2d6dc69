"""English sentences of the instructor's term: what a batch skipped, what it could not grade."""

MESSAGES = {
    "gradescope.empty": "Your submission is empty: it holds no .py file. Upload the files the assignment asks for "
                        "({files}) and submit again.",
    "batch.reason.load_files": "could not be imported: {files}",
    "batch.reason.empty": "empty submission (no .py file)",
    "batch.skipped.hidden": "hidden",
    "batch.skipped.system": "system folder",
    "batch.skipped.file": "not a folder or .zip",
    "batch.cli.skipped": "skipped {n} entries that are not submissions: {entries}",
    "batch.cli.skipped_one": "skipped 1 entry that is not a submission: {entries}",
    "batch.cli.not_graded": "{n} could not be graded: {entries}",
}
