"""A Transformer written by hand: layers cloned with copy.deepcopy, weights initialised with Module.apply."""
