"""English: the markers where a report cut the submission's text (``safetext.bound_result``)."""

MESSAGES = {
    "ui.cut": "[… {n} characters cut]",
    "ui.cut_entries": "[… {n} more entries cut]",
}
