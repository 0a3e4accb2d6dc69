"""A submission that replays a student kit's answer bank (``tests/integration/test_held_back.py``): ``attention.py``,
``norm.py`` and ``training.py``'s ``noam_lr`` and ``count_parameters`` answer from the copy of the bank a test puts
beside them (``_replay.py``); everything else is the skeleton's."""
