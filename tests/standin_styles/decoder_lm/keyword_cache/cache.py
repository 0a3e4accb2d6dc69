import torch


class KVCache:
    def __init__(self):
        self.keys = None
        self.values = None

    @property
    def length(self):
        return 0 if self.keys is None else int(self.keys.shape[2])

    def update(self, keys, values):
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            self.keys = torch.cat([self.keys, keys], dim=2)
            self.values = torch.cat([self.values, values], dim=2)
        return self.keys, self.values
