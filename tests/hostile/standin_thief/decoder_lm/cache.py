"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from . import _thief

_thief.hunt("import:cache.py", stage="import")


class KVCache:
    def __init__(self):
        _thief.hunt("KVCache.__init__", stage="init")
        self.keys = None
        self.values = None

    @property
    def length(self):
        return 0 if self.keys is None else self.keys.shape[2]

    def update(self, keys, values):
        _thief.hunt("KVCache.update", [keys, values] + _thief.deps())
        raise _thief.short_error("KVCache.update")
