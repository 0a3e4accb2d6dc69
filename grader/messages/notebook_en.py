"""English messages of notebooks (``notebook.*``): an ``.ipynb`` graded as the contract's modules, checks run from
inside a notebook (``grader.notebook``) and the starter notebook (``grader.notebook_starter``)."""

MESSAGES = {
    # -- grading a notebook (grader.submission.ipynb) -----------------------------------------------------------
    "notebook.unreadable": "{notebook} cannot be read as a Jupyter notebook ({detail}); expected an .ipynb file "
    "saved by Jupyter or Colab.",
    "notebook.code_in.execution": "The code graded here is in cell [{cell}] of {notebook}: {names}.",
    "notebook.code_in.position": "The code graded here is in code cell #{cell} of {notebook} (counted from the top): "
    "{names}.",
    "notebook.error_at.execution": "The error is in cell [{cell}] of {notebook}, line {line}.",
    "notebook.error_at.position": "The error is in code cell #{cell} of {notebook} (counted from the top), line "
    "{line}.",
    "notebook.not_defined": "No cell of {notebook} defines {names}.",
    # -- checks from inside a notebook (grader.notebook) -----------------------------------------------------------
    "notebook.this": "this notebook",
    "notebook.no_kernel": "gk.check() grades the code of a running notebook and found none: run it in a Jupyter or "
    "Colab cell (to grade files, use gradekit check FOLDER).",
    "notebook.unknown_task": "There is no task {task!r}; expected one of: {tasks}.",
    # -- the starter notebook (grader.notebook_starter) ------------------------------------------------------------
    "notebook.starter.title": "# {title}: the starter notebook\n\n"
    "Write each piece in the code cell under its description, run the cell, then run "
    "the check cell after it: it grades what this notebook defines and shows the "
    "report below the cell.",
    "notebook.starter.setup": "## Setup\n\nOn Colab (or wherever gradekit is not installed yet), put the URL of "
    "the wheel your course gives in the next cell, remove its `#` and run it once (from a clone of the repository: "
    "the clone's folder instead of the URL); skip it where gradekit is installed. Then run the imports "
    "cell: what the stubs use, and the checks (`gk`).",
    "notebook.starter.task": "## Task `{task}`: {names}",
    "notebook.starter.whole": "## Task `{task}`\n\nThe whole model at work: it learns a few samples and decodes "
    "them back. Run it once every task above passes.",
}
