"""Grading a whole class: each submission isolated, in parallel, resumable, with a gradebook and a summary page."""
