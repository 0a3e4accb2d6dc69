"""A decoder-only LM that builds its rotary helper per call, initialises through a state_dict round trip and
asks the model where it lives when generating and training."""
