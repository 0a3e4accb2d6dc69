"""A submission that replays a student kit's answer bank (``tests/test_held_back.py``): ``attention.py`` and
``norm.py`` answer from the copy of the bank a test puts beside them (``_replay.py``); every other file is the
skeleton's."""
