"""Grading a whole class: each submission sealed, in parallel, resumable, with a gradebook and a summary page."""
