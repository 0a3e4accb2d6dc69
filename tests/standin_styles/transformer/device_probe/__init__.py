"""A Transformer whose decoding and training ask the model where it lives (next(model.parameters()))."""
