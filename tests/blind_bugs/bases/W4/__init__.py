"""My hand-written Transformer."""
