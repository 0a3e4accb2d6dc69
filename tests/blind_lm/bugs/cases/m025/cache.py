import torch


class KVCache:
    def __init__(self):
        self.keys = None
        self.values = None

    @property
    def length(self):
        return 0 if self.keys is None else self.keys.size(-2)

    def update(self, keys, values):
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            self.keys = torch.concat((self.keys, keys), dim=-2)
            self.values = torch.concat((self.values, values), dim=-2)
        return keys, values
