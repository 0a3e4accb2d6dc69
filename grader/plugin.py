"""pytest plugin (filled in with the grader)."""
