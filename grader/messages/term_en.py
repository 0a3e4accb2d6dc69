"""The course term: the gradebook's overrides and the Gradescope output students read."""

MESSAGES = {
    "overrides.where.line": "{file}, line {line}",
    "overrides.where.table": "{file}, table [{table}]",
    "overrides.error.suffix": "{file}: the overrides file must be a .toml or .csv file",
    "overrides.error.read": "{file}: cannot read the overrides file ({detail})",
    "overrides.error.encoding": '{file}: not UTF-8 text; expected UTF-8 (in Excel: Save As "CSV UTF-8")',
    "overrides.error.toml": "{file}: not valid TOML: {detail}",
    "overrides.error.top": "{file}: unknown key {got} at the top of the file; expected only one table per "
    'student, [students."NAME"]',
    "overrides.error.table": '{where}: expected a table of the student\'s review ([students."NAME"]), got {got}',
    "overrides.error.unknown_key": "{where}: unknown key {got}; expected one of {expected}",
    "overrides.error.number": "{where}: {field} must be a number of points, got {got}",
    "overrides.error.negative": "{where}: {field} must be 0 or more, got {got}",
    "overrides.error.percent": "{where}: late_percent must be between 0 and 100 (percent of the maximum), got {got}",
    "overrides.error.copy": '{where}: copy must be "cleared" or "confirmed", got {got}',
    "overrides.error.text": "{where}: {field} must be text, got {got}",
    "overrides.error.reviewer": "{where}: an entry that changes the score or the copy flag must say who "
    "reviewed it and why; missing {missing}",
    "overrides.error.header": "{where}: the header has no {got} column; expected the columns {expected}",
    "overrides.error.column": "{where}: unknown column {got}; expected the columns {expected}",
    "overrides.error.column_twice": "{where}: the column {got} appears twice; expected each column once",
    "overrides.error.cells": "{where}: {got} cells, but the header has {expected}; expected one cell per "
    "column (quote a value that holds a comma)",
    "overrides.error.no_student": "{where}: the student cell is empty; expected the name shown in the "
    "gradebook's student_id column",
    "overrides.error.twice": "{where}: {student} already has an entry ({first}); expected one entry per student",
    "overrides.warning.unknown": "{where}: {student} is not in this class (no submission under that name); "
    "the review is not applied",
    "overrides.reason.confirmed_zero": "confirmed as a copy by the instructor's review; scored 0",
    "overrides.reason.confirmed_flag": "confirmed as a copy by the instructor's review; scored 0 (the "
    "course's copy policy only flags, the review decides)",
    "overrides.box.title": "Instructor's review",
    "overrides.box.score": "Score in the gradebook",
    "overrides.box.copy": "Copy flag",
    "overrides.box.late": "Late penalty",
    "overrides.box.points": "Adjustment",
    "overrides.box.note": "Note",
    "overrides.box.by": "Reviewed by",
    "overrides.box.why": "Why",
    "overrides.copy.cleared": "cleared: the review found no copy; the points are restored",
    "overrides.copy.confirmed": "confirmed: the submission scores 0",
    "overrides.late.value": "−{points} points",
    "overrides.late.fixed": "{points} points",
    "overrides.late.percent": "{percent}% of the maximum {max}",
    "overrides.late.percent_points": "{percent}% of the maximum {max} ({points} points)",
    "overrides.late.asked": "{rule} = {points} points",
    "overrides.late.taken": "{rule} = −{points} points",
    "overrides.late.capped": "{asked}, but at most the {points} points earned: −{points} points",
    "overrides.headline.before": "After the instructor's review; before it: {before} / {max}.",
    "overrides.headline.item": "{label}: {value}.",
    "overrides.headline.why": "Why ({by}): {why}",
    "overrides.headline.link": "↓ The review in full",
    "overrides.row": "{label}: {value}",
    "overrides.points.value": "{points} points",
    "gradescope.rerun": "Run this check again on your computer",
    "gradescope.your_folder": "<your folder>",
    "gradescope.not_graded": "The autograder could not grade this submission. Your instructor can see why; "
    "please tell them.",
    "gradescope.copy.name": "Likeness to the reference solution (instructors only)",
    "gradescope.copy.not_flagged": "not flagged: the code is not a copy of the reference solution",
    "gradescope.copy.share": "{share}% of the substantial contract definitions are near copies of the "
    "reference; per definition, the likeness (1 = the same code):",
    "gradescope.empty": "Your submission is empty: it holds no .py file. Upload the files the assignment "
    "asks for ({files}) and submit again.",
}
