"""The decoder-only LM's sentences: ``<part>_<lang>.py`` modules with ``MESSAGES`` dicts."""
