"""A Transformer that calls .forward() directly, reads its parts' contract attributes and initialises through
a state_dict round trip."""
