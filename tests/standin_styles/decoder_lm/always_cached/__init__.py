"""A decoder-only LM that always runs through KV caches (fresh ones when none are given), with a chunked cache
and keyword calls everywhere."""
