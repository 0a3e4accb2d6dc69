"""Interview practice: drills against the clock (``gradekit practice``) and the conceptual quiz (``gradekit quiz``).

What is drilled and asked belongs to the assignment: its practice module (``Assignment.practice``) lists the
drills (``DRILLS``) and the questions (``QUESTIONS``); this package is the machinery, handed the assignment.
``drills`` defines a drill and reads an assignment's, ``workspace`` builds a folder where only the drilled
names are stubs, ``history`` keeps the attempts in SQLite, ``session`` is the keyword-only engine under the
CLI, ``render`` turns its results into text, ``quiz`` draws the questions and marks answers, ``cli`` parses
and prints.
"""
