"""A decoder-only LM submission that replays a student kit's answer bank (``tests/integration/test_held_back.py``):
``training.py``'s ``count_parameters`` answers from the copy of the bank a test puts beside it, read by
``tests/hostile/replay/_replay.py``; every other file is the skeleton's."""
