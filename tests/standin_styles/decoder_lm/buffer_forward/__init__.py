"""A decoder-only LM with a preallocated KV cache, one rotary call for queries and keys together, and direct
.forward() calls."""
