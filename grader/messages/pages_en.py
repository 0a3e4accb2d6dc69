"""English sentences of the Gradescope output and of the class summary page's newer parts."""

MESSAGES = {
    "batch.page.all_passed": "{n} checks every student passed",
    "gradescope.rerun": "Run this check again on your computer",
    "gradescope.your_folder": "<your folder>",
    "gradescope.not_graded": "The autograder could not grade this submission. Your instructor can see why; "
                             "please tell them.",
    "gradescope.copy.name": "Likeness to the reference solution (instructors only)",
    "gradescope.copy.not_flagged": "not flagged: the code is not a copy of the reference solution",
    "gradescope.copy.share": "{share}% of the substantial contract definitions are near copies of the reference; "
                             "per definition, the likeness (1 = the same code):",
    "batch.page.rate": "Pass rate",
    "batch.page.axis": "score, % of the maximum",
    "batch.page.similar": "Submissions much like each other",
    "batch.page.similar_note": "Groups of submissions whose code is nearly the same once names, comments and "
                               "docstrings are set aside. Review them before deciding anything.",
    "batch.page.members": "Students",
    "batch.page.likeness": "Likeness",
    "batch.page.compare": "compare",
    "batch.page.skipped": "Skipped: not submissions ({n})",
    "batch.page.unsealed": "{n} submissions were graded in a worker that was not sealed (it ran as the grading "
                           "user, not in a jail with a uid of its own): those grades are not proof against a "
                           "hostile submission. Grade as root, or on workers that run as root, for sealed grades.",
    "batch.page.colon": ": ",
    "batch.page.all_note": "A name links to that student's report.",
}
