"""English sentences of the class-wide similarity page (``grader.batch.classsim``)."""

MESSAGES = {
    "classsim.title": "Similar code across the class",
    "classsim.private": "For the instructor only: this page shows students' code side by side. Never share it "
                        "with a student.",
    "classsim.intro": "{n} submissions compared after names, comments, docstrings and layout are set aside, and "
                      "after the skeleton's code and code most of the class shares are left out. A pair is listed "
                      "when its shared fingerprints make at least {threshold}% of the smaller submission's, and at "
                      "least {min_shared} of them, or when two submissions are {near}% the same as a whole, common code "
                      "included (so a group of copies too large to count as rare is still found). Similar code is "
                      "a reason to look, not a verdict.",
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
}
