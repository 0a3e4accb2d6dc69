"""Interview practice: drills against the clock (``gradekit practice``) and the conceptual quiz (``gradekit quiz``).

``drills`` names what can be drilled, ``workspace`` builds a folder where only the drilled names are stubs,
``history`` keeps the attempts in SQLite, ``session`` is the keyword-only engine under the CLI, ``render``
turns its results into text, ``quiz`` holds the questions and marks answers, ``cli`` parses and prints.
"""
