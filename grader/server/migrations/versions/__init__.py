"""One file per schema revision (``grader/server/migrations/__init__.py`` says how to add one)."""
