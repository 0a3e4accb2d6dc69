import torch


class KVCache:
    def __init__(self):
        self.keys = None
        self.values = None

    @property
    def length(self):
        if self.keys is None:
            return 0
        return int(self.keys.shape[2])

    def update(self, keys, values):
        if self.keys is not None:
            keys = torch.cat([self.keys, keys], dim=2)
            values = torch.cat([self.values, values], dim=2)
        self.keys, self.values = keys, values
        return keys, values
