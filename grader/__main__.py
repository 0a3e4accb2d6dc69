"""``python -m grader``: the same entry point as the ``gradekit`` command."""

from grader.cli import entry

entry()
