import torch


class KVCache:
    """keys and values as slots; length derived from them."""

    __slots__ = ("keys", "values")

    def __init__(self):
        self.keys = None
        self.values = None

    @property
    def length(self):
        return self.keys.size(2) if self.keys is not None else 0

    def update(self, keys, values):
        self.keys = keys if self.keys is None else torch.cat((self.keys, keys), dim=2)
        self.values = values if self.values is None else torch.cat((self.values, values), dim=2)
        return self.keys, self.values
