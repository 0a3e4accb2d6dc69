import torch


class KVCache:
    def __init__(self):
        self.keys = None
        self.values = None

    @property
    def length(self):
        return 0 if self.keys is None else int(self.keys.size(2))

    def update(self, keys, values):
        self.keys = keys if self.keys is None else torch.cat((self.keys, keys), 2)
        self.values = values if self.values is None else torch.cat((self.values, values), 2)
        return self.keys, self.values
