"""Views of a ``GradeResult``: terminal, JSON (and, built on the same object, the report formats)."""
