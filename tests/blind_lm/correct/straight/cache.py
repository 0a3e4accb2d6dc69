import torch


class KVCache:
    def __init__(self):
        self.keys = None
        self.values = None

    @property
    def length(self):
        if self.keys is None:
            return 0
        return self.keys.shape[2]

    def update(self, keys, values):
        if self.keys is None:
            self.keys = keys
            self.values = values
        else:
            self.keys = torch.cat([self.keys, keys], dim=2)
            self.values = torch.cat([self.values, values], dim=2)
        return self.keys, self.values
