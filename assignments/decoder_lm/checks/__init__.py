"""The decoder-only LM's checks: one module per task id."""
