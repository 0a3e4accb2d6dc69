"""W3's hand-written Transformer."""
