"""A decoder-only LM that passes its parts everything by keyword and leans on the cache's length."""
