"""``gradekit start``: a student's own copy of the stubs (``grader.start``)."""

MESSAGES = {
    "start.refused": "{path} already exists and is not an empty folder: gradekit start writes only into a new or "
    "empty folder, so that it never writes over your work. Name a new folder.",
    "start.refused_file": "{path} already exists: gradekit start never writes over your work. Name a new notebook.",
    "start.no_skeleton": "the assignment {assignment} has no skeleton folder here ({path}): there are no stubs to "
    "copy.",
    "start.wrote": "Wrote {path}: the stubs of the assignment {assignment} ({files} files).",
    "start.wrote_notebook": "Wrote {path}: the starter notebook of the assignment {assignment} (the stubs of each "
    "task in a code cell, then the cell that checks it).",
    "start.wrote_contract": "The contract (the names, signatures and conventions to follow) is {path}.",
    "start.fill_in": "Next, fill in every function that raises NotImplementedError, as the contract and the "
    "docstrings say, then:",
    "start.fill_in_notebook": "Next, open it in Jupyter (or upload it to Colab), run the setup cells, write each task "
    "and run the check cell after it. Saved, the notebook is graded as a hand-in:",
    "start.next_check": "grade it (the quick profile: fast feedback):",
    "start.next_watch": "or leave it grading again on every save (Ctrl-C stops it):",
    "start.next_check_notebook": "grade the saved notebook:",
}
